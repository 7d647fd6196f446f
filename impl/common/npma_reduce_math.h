/* npma_reduce_math.h - the per-element math of the numpy_ma profile's
 * reductions, shared by the CPU reference (impl/cpu/npma_reduce.c, its
 * host plan: dims, numpy's dtypes and errors, outputs, and the input
 * elements of each output in row-major order) and the CUDA kernels
 * (impl/cuda/npma_reduce.cu): the parameters of one call (mt_npr_par) and
 * one output element (mt_npr_out: sum mean prod amin amax all argmin argmax
 * var std, switched on the op), which visits its inputs in the CPU's order,
 * so every sum has numpy.ma's order. The rules (NPMA-4, -5, -7, -12, -13,
 * -14, -17) are npma_reduce.c's header. */
#ifndef MT_NPMA_REDUCE_MATH_H
#define MT_NPMA_REDUCE_MATH_H

#include <math.h>

#include "common/mt_hd.h"
#include "common/npma_math.h"

/* the family's ops (impl/cpu/npma_ops.def's lines of npma_reduce.c): the
 * CUDA table's slots */
#define NPMA_REDUCE_OPS(X) \
  X(sum) X(mean) X(prod) X(amin) X(amax) X(all) X(argmin) X(argmax) X(var) X(std)

/* One call, planned on the host (npma_reduce.c). */
typedef struct mt_npr_par {
  mt_op op;       /* the base op: sum mean prod amin amax all argmin argmax var std */
  mt_dtype in;    /* the input data's dtype */
  mt_dtype rt;    /* the result dtype */
  int all;        /* an all-reduce: one 0-d output */
  int arg_dense;  /* argmin/argmax over a dim: a plain int64 output, no mask */
  int rdim;       /* argmin/argmax over a dim: the reduced dim */
  int ndim;       /* the input's shape */
  int64_t shape[MT_MAX_DIMS];
  double ddof;    /* var/std: NPMA-17's count - ddof (numpy takes a float: 0.5) */
} mt_npr_par;

/* Stores an element: integers from an exact int64 (wrapping), floats from
 * a double (npma_util.h's npma_st). */
MT_HD void mt_npr_st(void *buf, mt_dtype d, int64_t i, double v, int64_t vi, int is_int) {
  if (is_int)
    mt_hd_sti(buf, d, i, vi);
  else
    mt_hd_set_f64(buf, d, i, v);
}

/* min/max of two values as numpy's minimum/maximum: NaN propagates. */
MT_HD double mt_npr_pick_f(mt_op op, double a, double x) {
  if (isnan(a) || isnan(x)) return NAN;
  return op == MT_OP_amin ? (x < a ? x : a) : (x > a ? x : a);
}

/* The filled value argmin (top) / argmax (bottom) gives masked elements. */
MT_HD int64_t mt_npr_fill_i(mt_dtype d, int top) {
  switch (d) {
  case MT_bool: return top ? 1 : 0;
  case MT_uint8: return top ? 255 : 0;
  case MT_int8: return top ? INT8_MAX : INT8_MIN;
  case MT_int32: return top ? INT32_MAX : INT32_MIN;
  default: return top ? INT64_MAX : INT64_MIN;
  }
}

/* Coordinate k of linear index i of the input. */
MT_HD int64_t mt_npr_coord_of(const mt_npr_par *p, int64_t i, int k) {
  for (int j = p->ndim - 1; j > k; j--) i = p->shape[j] ? i / p->shape[j] : 0;
  return p->shape[k] ? i % p->shape[k] : 0;
}

/* sum mean prod amin amax: output o from its inputs idx[off[o] .. off[o + 1] - 1] */
MT_HD void mt_npr_red_out(const mt_npr_par *p, const void *x, const uint8_t *mask,
                          const int64_t *off, const int64_t *idx, void *out, uint8_t *mask_out,
                          int64_t o) {
  mt_op op = p->op;
  mt_dtype rt = p->rt;
  int in_int = !mt_hd_is_float(p->in), out_int = !mt_hd_is_float(rt);
  double cf = 0.0;
  int64_t ci = 0, cn = 0, seen = 0;
  /* numpy.ma reduces the filled data in row-major order (sum and mean from
   * +0.0, prod from the first element); min/max only see the specified ones
   * (their fill never wins where anything is specified) */
  for (int64_t t = off[o]; t < off[o + 1]; t++) {
    int64_t i = idx[t];
    int spec = mask[i] != 0;
    cn += spec;
    if (op == MT_OP_amin || op == MT_OP_amax) {
      if (!spec) continue;
      if (in_int) {
        int64_t v = mt_hd_ldi(x, p->in, i);
        if (cn == 1 || (op == MT_OP_amin ? v < ci : v > ci)) ci = v;
      } else {
        double v = mt_hd_get_f64(x, p->in, i);
        cf = cn == 1 ? v : mt_npr_pick_f(op, cf, v);
      }
      continue;
    }
    if (op == MT_OP_prod) {
      if (in_int) {
        int64_t v = spec ? mt_hd_ldi(x, p->in, i) : 1;
        ci = seen ? (int64_t)((uint64_t)ci * (uint64_t)v) : v;
      } else {
        double v = spec ? mt_hd_get_f64(x, p->in, i) : 1.0;
        cf = seen ? cf * v : v;
      }
    } else if (in_int && op == MT_OP_sum) {
      int64_t v = spec ? mt_hd_ldi(x, p->in, i) : 0;
      ci = seen ? (int64_t)((uint64_t)ci + (uint64_t)v) : v;
    } else {
      double v = spec ? mt_hd_get_f64(x, p->in, i) : 0.0;
      cf = (seen ? cf : 0.0) + v;
    }
    seen++;
  }
  int spec = cn > 0;
  mask_out[o] = (uint8_t)spec;
  if (!spec) { /* NPMA-7: numpy.ma's data under a masked-out result */
    if (p->all)
      mt_hd_set_f64(out, rt, o, 0.0); /* np.ma.masked */
    else if (op == MT_OP_prod)
      mt_npr_st(out, rt, o, 1.0, 1, out_int);
    else if (op == MT_OP_amin || op == MT_OP_amax)
      mt_np_store_fill_value(out, rt, o);
    else
      mt_npr_st(out, rt, o, 0.0, 0, out_int);
    return;
  }
  if (op == MT_OP_mean) {
    /* numpy.ma: dsum * 1. / count, dsum in float32 for float16 and float32
     * data, in float64 otherwise */
    double s = cf;
    if (p->in == MT_float16 || p->in == MT_float32) s = (double)(float)s;
    mt_hd_set_f64(out, rt, o, s / (double)cn);
    return;
  }
  mt_npr_st(out, rt, o, cf, ci, out_int);
}

/* all argmin argmax var std: output o as mt_npr_red_out's (mask_out NULL:
 * argmin/argmax over a dim, a plain int64 output) */
MT_HD void mt_npr_red2_out(const mt_npr_par *p, const void *x, const uint8_t *mask,
                           const int64_t *off, const int64_t *idx, void *out, uint8_t *mask_out,
                           int64_t o) {
  mt_op op = p->op;
  mt_dtype rt = p->rt;
  int is_arg = op == MT_OP_argmin || op == MT_OP_argmax;
  int is_var = op == MT_OP_var || op == MT_OP_std;
  int in_int = !mt_hd_is_float(p->in), half = p->in == MT_float16;
  int top = op == MT_OP_argmin;
  double best = 0.0, sum = 0.0, sq = 0.0, mean = 0.0;
  int64_t bi = 0, bidx = 0, cn = 0, seen = 0;
  int all = 1;
  for (int64_t t = off[o]; t < off[o + 1]; t++) {
    int64_t i = idx[t];
    int spec = mask[i] != 0;
    cn += spec;
    if (op == MT_OP_all) {
      if (spec && mt_hd_get_f64(x, p->in, i) == 0.0) all = 0;
    } else if (is_arg) {
      int64_t ix = p->all ? i : mt_npr_coord_of(p, i, p->rdim);
      int first = seen++ == 0;
      if (in_int) {
        int64_t v = spec ? mt_hd_ldi(x, p->in, i) : mt_npr_fill_i(p->in, top);
        if (first || (top ? v < bi : v > bi)) bi = v, bidx = ix;
      } else {
        double v = spec ? mt_hd_get_f64(x, p->in, i) : (top ? INFINITY : -INFINITY);
        int take = first || (!isnan(best) && (isnan(v) || (top ? v < best : v > best)));
        if (take) best = v, bidx = ix;
      }
    } else if (spec) {
      sum += mt_hd_get_f64(x, p->in, i);
    }
  }
  if (is_var) { /* the mean, then the squared deviations */
    double s = (half || p->in == MT_float32) ? (double)(float)sum : sum;
    mean = cn ? s / (double)cn : 0.0;
    if (half) mean = mt_hd_round(MT_float16, mean);
    for (int64_t t = off[o]; t < off[o + 1]; t++) {
      int64_t i = idx[t];
      if (!mask[i]) continue;
      double d = mt_hd_get_f64(x, p->in, i) - mean;
      if (half) d = mt_hd_round(MT_float16, d);
      d = half ? mt_hd_round(MT_float16, (double)((float)d * (float)d)) : d * d;
      sq += d;
    }
  }
  if (is_arg) { /* over a dim: plain int64; an all-reduce: numpy's int64 scalar, specified */
    mt_hd_sti(out, MT_int64, o, bidx);
    if (mask_out) mask_out[o] = 1;
    return;
  }
  int spec = cn > 0;
  if (op == MT_OP_all) {
    mt_hd_sti(out, rt, o, p->all && !spec ? 0 : all); /* np.ma.masked: 0 */
    mask_out[o] = (uint8_t)spec;
    return;
  }
  if (half) sq = mt_hd_round(MT_float16, sq);
  double cnt = (double)cn - p->ddof; /* NPMA-17: numpy's count - ddof */
  double v = spec ? sq / cnt : 0.0;
  if (p->all) { /* numpy scalars: np.ma.masked only where np.ma.divide masks
                 * (cnt = 0, a non-finite variance); cnt < 0 is a number <= 0 */
    if (!isfinite(v)) spec = 0, v = 0.0;
  } else if (spec && cnt <= 0) {
    spec = 0; /* NPMA-17: mask_or(all masked, cnt <= 0), over np.ma.divide's data:
               * sum / cnt (cnt < 0), the sum where it masked (cnt = 0), a
               * masked mean's 0 */
    v = isfinite(mean) ? (isfinite(v) ? v : sq) : 0.0;
  } else if (spec && !isfinite(mean)) {
    v = 0.0; /* the mean was masked (np.ma.true_divide): so are the
              * deviations, their sum is a masked 0, and var's own mask
              * (the input mask's all) takes over */
  } else if (spec && !isfinite(v)) {
    v = sq; /* np.ma.divide masks it (data 0 + the sum); var's mask wins */
  }
  if (spec && op == MT_OP_std) {
    if (isfinite(v) && v >= 0.0) /* sqrt(-0.0) = -0.0, specified */
      v = sqrt(v);
    else if (p->all)
      spec = 0, v = 0.0; /* np.ma.sqrt's domain: np.ma.masked */
    else
      spec = 0; /* np.ma.sqrt masks it, keeping its input */
  }
  mt_hd_set_f64(out, rt, o, v);
  mask_out[o] = (uint8_t)spec;
}

/* Output o of the call (its inputs idx[off[o] .. off[o + 1] - 1]). */
MT_HD void mt_npr_out(const mt_npr_par *p, const void *x, const uint8_t *mask,
                      const int64_t *off, const int64_t *idx, void *out, uint8_t *mask_out,
                      int64_t o) {
  switch (p->op) {
  case MT_OP_sum:
  case MT_OP_mean:
  case MT_OP_prod:
  case MT_OP_amin:
  case MT_OP_amax: mt_npr_red_out(p, x, mask, off, idx, out, mask_out, o); break;
  default: mt_npr_red2_out(p, x, mask, off, idx, out, mask_out, o); break;
  }
}

#endif /* MT_NPMA_REDUCE_MATH_H */

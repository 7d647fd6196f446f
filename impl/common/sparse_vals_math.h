/* sparse_vals_math.h - the per-element math of the plain sparse kernels
 * (binary_sparse.c: add/sub/mul/div of COO and compressed operands;
 * reduce_sparse.c: sum and norm of plain sparse inputs), shared by the CPU
 * reference (impl/cpu/exec.c's loop) and the CUDA kernel
 * (impl/cuda/sparse_vals.cu).
 *
 * The host plans every index: output value o reads element ia[o] of the
 * operand a (-1: none) and folds the terms ib[off[o] .. off[o + 1] - 1],
 * elements of the operand b, in that order (the CPU reference's order:
 * stored order of the entries, duplicates included). Every value of a
 * result is computed here, one output value per thread. */
#ifndef MT_SPARSE_VALS_MATH_H
#define MT_SPARSE_VALS_MATH_H

#include "common/mt_hd.h"

typedef enum {
  SPV_CAST,      /* out = a[ia] converted (floats rounded once, integers exact) */
  SPV_MUL,       /* out = a[ia] * b[first term], in the compute type of ot */
  SPV_DIV,       /* out = a[ia] / b[first term] */
  SPV_MUL_ACC,   /* sum of a[ia] * each term, from 0 in torch's accumulate type (no term: 0) */
  SPV_COO_ADD,   /* torch's COO merge: a alone, alpha * b alone, fma(alpha, b, a) */
  SPV_CMP_ADD,   /* compressed union: a + round(alpha * b) */
  SPV_DENSE_COO, /* dense a (cast to ot) += alpha * each term (b cast to ot), stored each step */
  SPV_DENSE_CSR, /* dense a (cast to ot) + round(alpha * b) per term */
  SPV_SUM,       /* the terms' sum in double (float ot) or int64 (wrapping), rounded once */
  SPV_NORM,      /* the terms' vector p-norm, |b| in double */
  SPV_CONVERT    /* out = a[ia] converted as torch's copy_/to() (sps_convert) */
} mt_spv_op;

/* One call, planned on the host. */
typedef struct mt_spv_par {
  int op;                /* mt_spv_op */
  mt_dtype at, bt, ot;   /* dtypes of a, b and the result */
  int64_t n_out, na, nb; /* result values; elements of a and b (uploaded) */
  int64_t n_terms;       /* off[n_out] */
  double alpha;          /* add's alpha as given (SPV_COO_ADD: 1 or not) */
  double m;              /* alpha in the op's compute type */
  int64_t alpha_i;       /* (int64_t)alpha: integer SPV_DENSE_CSR */
  int fused;             /* SPV_DENSE_COO: one fused multiply-add per term */
  double p;              /* SPV_NORM's p */
} mt_spv_par;

/* v in the compute type of result dtype rt: float for float32 and the half
 * types, double for float64 */
MT_HD double mt_spv_ct(mt_dtype rt, double v) { return rt == MT_float64 ? v : (double)(float)v; }

/* out[i] = in[j] converted to ot (binary_sparse.c's cast of an operand) */
MT_HD void mt_spv_cast(void *out, mt_dtype ot, int64_t i, const void *in, mt_dtype it, int64_t j) {
  if (mt_hd_is_float(ot))
    mt_hd_set_f64(out, ot, i, mt_hd_get_f64(in, it, j));
  else
    mt_hd_sti(out, ot, i, mt_hd_ldi(in, it, j));
}

/* in[j] converted to ot, read back as double */
MT_HD double mt_spv_ldc(const void *in, mt_dtype it, int64_t j, mt_dtype ot) {
  mt_hd_slot slot;
  mt_spv_cast(&slot, ot, 0, in, it, j);
  return mt_hd_get_f64(&slot, ot, 0);
}

/* out[i] = a[ia] * b[ib] (or /) in result dtype rt: floats in the compute
 * type, bool as and, integers wrap */
MT_HD void mt_spv_put(void *out, mt_dtype rt, int64_t i, int div, const void *a, mt_dtype at,
                      int64_t ia, const void *b, mt_dtype bt, int64_t ib) {
  if (mt_hd_is_float(rt)) {
    double x = mt_spv_ct(rt, mt_hd_get_f64(a, at, ia)), y = mt_spv_ct(rt, mt_hd_get_f64(b, bt, ib));
    mt_hd_set_f64(out, rt, i, mt_spv_ct(rt, div ? x / y : x * y));
  } else if (rt == MT_bool) {
    mt_hd_sti(out, rt, i, mt_hd_ldi(a, at, ia) && mt_hd_ldi(b, bt, ib));
  } else {
    uint64_t x = (uint64_t)mt_hd_ldi(a, at, ia), y = (uint64_t)mt_hd_ldi(b, bt, ib);
    mt_hd_sti(out, rt, i, (int64_t)(x * y));
  }
}

/* out[i] = in[j] converted as torch's copy_ / to(): to bool by != 0,
 * float to integer toward zero (NaN 0, saturating: mt_hd_f64_to_i64, where
 * torch's cast is undefined), integers exactly, one dtype bytewise,
 * floats rounded once (structure_sparse.c's copy_, sps_util.h's
 * sps_convert) */
MT_HD void mt_spv_convert(void *out, mt_dtype ot, int64_t i, const void *in, mt_dtype it,
                          int64_t j) {
  if (ot == MT_bool) {
    ((uint8_t *)out)[i] = mt_hd_is_float(it) ? mt_hd_get_f64(in, it, j) != 0.0
                                             : mt_hd_ldi(in, it, j) != 0;
  } else if (ot == MT_int64 || ot == MT_int32 || ot == MT_int8 || ot == MT_uint8) {
    mt_hd_sti(out, ot, i,
              mt_hd_is_float(it) ? mt_hd_f64_to_i64(mt_hd_get_f64(in, it, j)) : mt_hd_ldi(in, it, j));
  } else if (it == ot) {
    int es = ot == MT_float64 ? 8 : ot == MT_float32 ? 4 : 2;
    for (int b = 0; b < es; b++)
      ((unsigned char *)out)[i * es + b] = ((const unsigned char *)in)[j * es + b];
  } else {
    mt_hd_set_f64(out, ot, i,
                  mt_hd_is_float(it) ? mt_hd_get_f64(in, it, j) : (double)mt_hd_ldi(in, it, j));
  }
}

/* Result value o. */
MT_HD void mt_spv_out(const mt_spv_par *p, const void *a, const void *b, const int64_t *ia,
                      const int64_t *off, const int64_t *ib, void *out, int64_t o) {
  mt_dtype ot = p->ot;
  switch (p->op) {
  case SPV_CAST: mt_spv_cast(out, ot, o, a, p->at, ia[o]); break;
  case SPV_CONVERT: mt_spv_convert(out, ot, o, a, p->at, ia[o]); break;
  case SPV_MUL:
  case SPV_DIV:
    mt_spv_put(out, ot, o, p->op == SPV_DIV, a, p->at, ia[o], b, p->bt, ib[off[o]]);
    break;
  case SPV_MUL_ACC: {
    /* torch's intersection kernel with accumulated matches: the products
     * a * b_t summed from 0 in torch's CPU accumulate type, in b's order,
     * then rounded to ot: double for float32 and float64 (a float32
     * product is exact there, a float64 one rounded), float for the half
     * types (a product of two halves is exact in float; every addition
     * rounds to float), int64 wrapping for the integers, or for bool.
     * Starting from +0.0, a lone product -0.0 gives +0.0. */
    if (mt_hd_is_float(ot)) {
      double av = mt_hd_get_f64(a, p->at, ia[o]), acc = 0.0;
      int narrow = ot == MT_float16 || ot == MT_bfloat16;
      for (int64_t t = off[o]; t < off[o + 1]; t++) {
        acc += av * mt_hd_get_f64(b, p->bt, ib[t]);
        if (narrow) acc = (double)(float)acc;
      }
      mt_hd_set_f64(out, ot, o, acc);
    } else {
      uint64_t av = (uint64_t)mt_hd_ldi(a, p->at, ia[o]), acc = 0;
      for (int64_t t = off[o]; t < off[o + 1]; t++) {
        uint64_t prod = av * (uint64_t)mt_hd_ldi(b, p->bt, ib[t]);
        acc = ot == MT_bool ? (uint64_t)(acc || prod) : acc + prod;
      }
      mt_hd_sti(out, ot, o, (int64_t)acc);
    }
    break;
  }
  case SPV_COO_ADD:
  case SPV_CMP_ADD: {
    int ta = ia[o] >= 0, tb = off[o + 1] > off[o];
    double va = ta ? mt_hd_get_f64(a, p->at, ia[o]) : 0.0;
    double vb = tb ? mt_hd_get_f64(b, p->bt, ib[off[o]]) : 0.0;
    double v;
    if (p->op == SPV_COO_ADD)
      v = !tb ? va : !ta ? (p->alpha == 1.0 ? vb : vb * p->m) : fma(p->m, vb, va);
    else {
      vb = tb ? mt_spv_ct(ot, p->m * vb) : 0.0;
      v = !tb ? va : !ta ? vb : va + vb;
    }
    mt_hd_set_f64(out, ot, o, v);
    break;
  }
  case SPV_DENSE_COO:
  case SPV_DENSE_CSR: {
    mt_spv_cast(out, ot, o, a, p->at, ia[o]);
    for (int64_t t = off[o]; t < off[o + 1]; t++) {
      if (p->op == SPV_DENSE_COO) {
        double v = mt_spv_ldc(b, p->bt, ib[t], ot), r = mt_hd_get_f64(out, ot, o);
        mt_hd_set_f64(out, ot, o, p->fused ? fma(p->m, v, r) : r + mt_hd_round(ot, p->m * v));
      } else if (mt_hd_is_float(ot)) {
        double v = mt_spv_ldc(b, p->bt, ib[t], ot);
        mt_hd_set_f64(out, ot, o,
                      mt_spv_ct(ot, mt_hd_get_f64(out, ot, o) + mt_spv_ct(ot, p->m * v)));
      } else {
        mt_hd_slot slot;
        mt_spv_cast(&slot, ot, 0, b, p->bt, ib[t]);
        mt_hd_sti(out, ot, o, mt_hd_ldi(out, ot, o) + p->alpha_i * mt_hd_ldi(&slot, ot, 0));
      }
    }
    break;
  }
  case SPV_SUM: {
    int bf = mt_hd_is_float(p->bt);
    if (mt_hd_is_float(ot)) {
      double f = 0.0;
      for (int64_t t = off[o]; t < off[o + 1]; t++)
        f += bf ? mt_hd_get_f64(b, p->bt, ib[t]) : (double)mt_hd_ldi(b, p->bt, ib[t]);
      mt_hd_set_f64(out, ot, o, f);
    } else { /* wraps modulo 2^64, as torch's integer sums do (no signed overflow) */
      uint64_t s = 0;
      for (int64_t t = off[o]; t < off[o + 1]; t++)
        s += (uint64_t)(bf ? mt_hd_f64_to_i64(mt_hd_get_f64(b, p->bt, ib[t]))
                           : mt_hd_ldi(b, p->bt, ib[t]));
      mt_hd_sti(out, ot, o, (int64_t)s);
    }
    break;
  }
  case SPV_NORM: {
    double q = p->p, acc = isinf(q) && q < 0 ? INFINITY : 0.0;
    for (int64_t t = off[o]; t < off[o + 1]; t++) {
      double v = fabs(mt_hd_get_f64(b, p->bt, ib[t]));
      if (isinf(q))
        acc = q > 0 ? (v > acc || isnan(v) ? v : acc) : (v < acc || isnan(v) ? v : acc);
      else if (q == 0)
        acc += v != 0.0;
      else if (q == 1)
        acc += v;
      else if (q == 2)
        acc += v * v;
      else
        acc += pow(v, q);
    }
    if (!isinf(q) && q != 0 && q != 1) acc = q == 2 ? sqrt(acc) : pow(acc, 1.0 / q);
    mt_hd_set_f64(out, ot, o, acc);
    break;
  }
  default: break;
  }
}

#endif /* MT_SPARSE_VALS_MATH_H */

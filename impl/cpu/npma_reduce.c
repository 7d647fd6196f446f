/* npma_reduce.c - the numpy_ma profile's reductions: sum mean prod amin
 * amax (m.sum, m.mean, m.prod, m.min, m.max with axis= and keepdims=).
 *
 * NPMA-5: an output element is specified where any element it reduces is
 *   (numpy: masked where all are); over no element at all (a zero-size
 *   slice) it is masked. An all-reduce returns a 0-d masked output: specified
 *   with the value, or masked out with data 0 where numpy.ma returns
 *   np.ma.masked (every element masked, or none at all). min/max over an
 *   empty slice are numpy's ValueError -> INVALID_ARGUMENT; an axis out of
 *   range is numpy's AxisError -> INDEX_OUT_OF_RANGE; a repeated axis a
 *   ValueError -> INVALID_ARGUMENT.
 * NPMA-4: sum/prod of integers and bool are int64 (uint8 would be uint64:
 *   NOT_SUPPORTED), mean is float64 except for float16 (float16, summed in
 *   float32), float32's mean is float64 (numpy.ma divides a float32 sum by
 *   an int64 count); amin/amax keep the dtype.
 * numpy.ma reduces the filled data (sum: masked = 0, prod: 1, min: the
 *   dtype's top, max: its bottom); numpy's float sum starts at +0.0, so a
 *   sum of only -0.0 is +0.0.
 * NPMA-7 (strict): the data of a masked-out output element is 0 (sum, mean),
 *   1 (prod), numpy.ma's fill_value (amin, amax: 1e20 for floats, inf in
 *   float16, 999999 wrapped to the integer width, True); 0 for an
 *   all-reduce's np.ma.masked. */
#include "npma_util.h"

typedef struct {
  int reduce[MT_MAX_DIMS]; /* 1 = the dim is reduced */
  int keepdim, all;
  int out_ndim;
  int64_t out_shape[MT_MAX_DIMS];
} red_plan;

static mt_status plan_dims(const mt_call *call, const char *name, const mt_tensor *t, red_plan *p,
                           mt_error *err) {
  memset(p, 0, sizeof *p);
  const mt_kwarg *d = mt_kw_find(call->kw, "dim");
  p->keepdim = (int)mt_kw_int(call->kw, "keepdim", 0);
  int n = d ? (d->type == MT_KW_INTS ? d->n : 1) : 0;
  p->all = n == 0;
  if (p->all && p->keepdim && t->ndim > 0) p->all = 0; /* keepdims=True: a MaskedArray of ones */
  for (int k = 0; k < n; k++) {
    int64_t v;
    mt_status st = npma_axis(name, d->type == MT_KW_INTS ? d->ints[k] : d->i, t->ndim, &v, err);
    if (st != MT_OK) return st;
    if (t->ndim == 0) continue;
    if (p->reduce[v])
      return mt_err(err, MT_INVALID_ARGUMENT, "%s: duplicate value in 'axis' (%lld)", name,
                    (long long)v);
    p->reduce[v] = 1;
  }
  for (int k = 0; k < t->ndim; k++) {
    if (p->all || n == 0) p->reduce[k] = 1;
    if (!p->reduce[k])
      p->out_shape[p->out_ndim++] = t->shape[k];
    else if (p->keepdim && !p->all)
      p->out_shape[p->out_ndim++] = 1;
  }
  return MT_OK;
}

/* Linear index of input element i's output element. */
static int64_t out_index(const mt_tensor *t, const red_plan *p, int64_t i) {
  int64_t o = 0, rest = i;
  int64_t coord[MT_MAX_DIMS];
  for (int k = t->ndim - 1; k >= 0; k--) {
    coord[k] = t->shape[k] ? rest % t->shape[k] : 0;
    rest = t->shape[k] ? rest / t->shape[k] : 0;
  }
  for (int k = 0; k < t->ndim; k++)
    if (!p->reduce[k]) o = o * t->shape[k] + coord[k];
  return o;
}

/* The result dtype (NPMA-4); -1: no mtcs dtype. */
static int result_dtype(mt_op op, mt_dtype d, mt_dtype *rt) {
  int is_int = npma_kind(d) != 'f';
  switch (op) {
  case MT_OP_sum:
  case MT_OP_prod:
    if (d == MT_uint8) return -1;
    *rt = is_int ? MT_int64 : d;
    return 0;
  case MT_OP_mean: *rt = d == MT_float16 ? MT_float16 : MT_float64; return 0;
  default: *rt = d; return 0;
  }
}

typedef struct {
  double f;  /* float accumulator */
  int64_t i; /* integer accumulator */
  int64_t n; /* specified elements */
  int64_t seen; /* elements (filled) */
} acc;

/* min/max of two values as numpy's minimum/maximum: NaN propagates. */
static double pick_f(mt_op op, double a, double x) {
  if (isnan(a) || isnan(x)) return NAN;
  return op == MT_OP_amin ? (x < a ? x : a) : (x > a ? x : a);
}

mt_status mt__npma_reduce(mt_call *call, mt_op op, const char *name, const npma_arg *a_,
                          mt_error *err) {
  const npma_arg a = *a_;
  acc *acc_ = NULL;
  void *od = NULL;
  uint8_t *om = NULL;
  red_plan p;
  mt_status st;

  const mt_tensor *t = a.t;
  if ((st = plan_dims(call, name, t, &p, err)) != MT_OK) goto out;
  mt_dtype rt;
  if (result_dtype(op, a.dt, &rt) != 0) {
    st = mt_err(err, MT_NOT_SUPPORTED, "%s: numpy sums %s into uint64, which mtcs has no name for",
                name, mt_dtype_name(a.dt));
    goto out;
  }
  int64_t n = mt_numel(t), n_out = mt_shape_numel(p.out_ndim, p.out_shape);
  int64_t per = n_out ? n / n_out : 0; /* elements per output */
  if (p.all) per = n;
  if ((op == MT_OP_amin || op == MT_OP_amax) && (p.all ? n == 0 : (per == 0 && n_out > 0))) {
    st = mt_err(err, MT_INVALID_ARGUMENT,
                "%s: zero-size array to reduction operation %s which has no identity", name,
                op == MT_OP_amin ? "minimum" : "maximum");
    goto out;
  }
  if (!p.all && n_out == 0) per = 0;
  int in_int = npma_kind(a.dt) != 'f';
  int out_int = npma_kind(rt) != 'f';
  acc_ = calloc((size_t)(n_out ? n_out : 1), sizeof *acc_);
  if (!acc_) {
    st = mt_err(err, MT_OUT_OF_MEMORY, "%s: out of memory", name);
    goto out;
  }
  /* numpy.ma reduces the filled data in row-major order (sum and mean from
   * +0.0, prod from the first element); min/max only see the specified ones
   * (their fill never wins where anything is specified) */
  for (int64_t i = 0; i < n; i++) {
    int64_t o = p.all ? 0 : out_index(t, &p, i);
    acc *c = &acc_[o];
    int spec = a.mask[i];
    c->n += spec;
    if (op == MT_OP_amin || op == MT_OP_amax) {
      if (!spec) continue;
      if (in_int) {
        int64_t x = npma_ldi(&a, i);
        if (c->n == 1 || (op == MT_OP_amin ? x < c->i : x > c->i)) c->i = x;
      } else {
        double x = npma_ld(&a, i);
        c->f = c->n == 1 ? x : pick_f(op, c->f, x);
      }
      continue;
    }
    if (op == MT_OP_prod) {
      if (in_int) {
        int64_t x = spec ? npma_ldi(&a, i) : 1;
        c->i = c->seen ? (int64_t)((uint64_t)c->i * (uint64_t)x) : x;
      } else {
        double x = spec ? npma_ld(&a, i) : 1.0;
        c->f = c->seen ? c->f * x : x;
      }
    } else if (in_int && op == MT_OP_sum) {
      int64_t x = spec ? npma_ldi(&a, i) : 0;
      c->i = c->seen ? (int64_t)((uint64_t)c->i + (uint64_t)x) : x;
    } else {
      double x = spec ? npma_ld(&a, i) : 0.0;
      c->f = (c->seen ? c->f : 0.0) + x;
    }
    c->seen++;
  }
  if ((st = npma_new_out(call, rt, p.all ? 0 : p.out_ndim, p.out_shape, &od, &om, err)) != MT_OK)
    goto out;
  (void)per;
  for (int64_t o = 0; o < (p.all ? 1 : n_out); o++) {
    acc *c = &acc_[o];
    int spec = c->n > 0;
    om[o] = (uint8_t)spec;
    if (!spec) { /* NPMA-7: numpy.ma's data under a masked-out result */
      if (p.all)
        mt__cpu_st(od, rt, o, 0.0); /* np.ma.masked */
      else if (op == MT_OP_prod)
        npma_st(od, rt, o, 1.0, 1, out_int);
      else if (op == MT_OP_amin || op == MT_OP_amax)
        npma_store_fill_value(od, rt, o);
      else
        npma_st(od, rt, o, 0.0, 0, out_int);
      continue;
    }
    switch (op) {
    case MT_OP_mean: {
      /* numpy.ma: dsum * 1. / count, dsum in float32 for float16 and
       * float32 data, in float64 otherwise */
      double s = c->f;
      if (a.dt == MT_float16 || a.dt == MT_float32) s = (double)(float)s;
      mt__cpu_st(od, rt, o, s / (double)c->n);
      break;
    }
    case MT_OP_amin:
    case MT_OP_amax:
      npma_st(od, rt, o, c->f, c->i, out_int);
      break;
    default:
      npma_st(od, rt, o, c->f, c->i, out_int);
      break;
    }
  }
out:
  if (st != MT_OK) mt__cpu_drop_outputs(call);
  free(acc_);
  return st;
}

/* A reduction of the profile's own op: input 0 a masked tensor. */
static mt_status npma_reduce(mt_call *call, mt_op op, mt_error *err) {
  const char *name = mt_op_name(op);
  npma_arg a = {0};
  mt_status st;
  if ((st = npma_begin(call, op, err)) != MT_OK) return st;
  if ((st = npma_arg_open(call, 0, name, &a, err)) != MT_OK) goto out;
  if (!a.is_masked) {
    st = mt_err(err, MT_NOT_SUPPORTED, "%s: inputs/0 must be a masked tensor", name);
    goto out;
  }
  if (op == MT_OP_all || op == MT_OP_argmin || op == MT_OP_argmax || op == MT_OP_var ||
      op == MT_OP_std)
    st = mt__npma_reduce2(call, op, name, &a, 0, err);
  else
    st = mt__npma_reduce(call, op, name, &a, err);
out:
  npma_arg_close(&a);
  return st;
}

mt_status mt_npma_sum(mt_call *call, mt_error *err) { return npma_reduce(call, MT_OP_sum, err); }
mt_status mt_npma_mean(mt_call *call, mt_error *err) { return npma_reduce(call, MT_OP_mean, err); }
mt_status mt_npma_prod(mt_call *call, mt_error *err) { return npma_reduce(call, MT_OP_prod, err); }
mt_status mt_npma_amin(mt_call *call, mt_error *err) { return npma_reduce(call, MT_OP_amin, err); }
mt_status mt_npma_amax(mt_call *call, mt_error *err) { return npma_reduce(call, MT_OP_amax, err); }

/* ---- all, argmin, argmax, var, std ------------------------------------------
 *
 * NPMA-12: m.all(axis) is the filled(True) data's all (NaN and -2 true,
 *   -0.0 false), bool; an output is specified where any reduced element is,
 *   masked-out outputs hold True (a zero-size slice too); an all-reduce with
 *   nothing specified is np.ma.masked.
 * NPMA-13: m.argmin/argmax(axis) are plain int64 indices (a dense tensor; an
 *   all-reduce a specified 0-d int64 flat index) of the data filled with the
 *   dtype's top for argmin (inf, the integer maximum, True) and its bottom
 *   for argmax: the first of equal values wins, a masked element included
 *   (a fully masked slice gives 0); a specified NaN wins. No element at all
 *   is numpy's ValueError -> INVALID_ARGUMENT.
 * NPMA-14: m.var/std(axis) (ddof 0) are float64 for every dtype: mean as
 *   numpy.ma's (the float16/float32 sum in float; float16's mean rounded to
 *   float16), the deviations and squares in float16 for float16 data (the
 *   sum of squares rounded to float16), else in float64, divided by the
 *   count. Non-finite values: over dims, a slice whose mean is not finite
 *   has variance 0 (numpy.ma masks the mean, then the deviations), a
 *   non-finite variance stays specified holding the sum of squares (var's
 *   mask is the input mask's all, overriding np.ma.divide's); std masks it
 *   (np.ma.sqrt); an all-reduce with a non-finite variance is np.ma.masked.
 *   Masked-out outputs hold 0. */

/* The filled value argmin (top) / argmax (bottom) gives masked elements. */
static int64_t fill_i(mt_dtype d, int top) {
  switch (d) {
  case MT_bool: return top ? 1 : 0;
  case MT_uint8: return top ? 255 : 0;
  case MT_int8: return top ? INT8_MAX : INT8_MIN;
  case MT_int32: return top ? INT32_MAX : INT32_MIN;
  default: return top ? INT64_MAX : INT64_MIN;
  }
}

/* Coordinate k of linear index i of t. */
static int64_t coord_of(const mt_tensor *t, int64_t i, int k) {
  for (int j = t->ndim - 1; j > k; j--) i = t->shape[j] ? i / t->shape[j] : 0;
  return t->shape[k] ? i % t->shape[k] : 0;
}

typedef struct {
  double f, best;
  int64_t bi, bidx; /* argmin/argmax: best integer value, its index */
  int64_t n, seen;
  double sum, sq;
  int all;
} acc2;

mt_status mt__npma_reduce2(mt_call *call, mt_op op, const char *name, const npma_arg *a_,
                           int64_t ddof, mt_error *err) {
  const npma_arg a = *a_;
  acc2 *acc_ = NULL;
  void *od = NULL;
  uint8_t *om = NULL;
  red_plan p;
  mt_status st;
  int is_arg = op == MT_OP_argmin || op == MT_OP_argmax;
  int is_var = op == MT_OP_var || op == MT_OP_std;

  const mt_tensor *t = a.t;
  if ((st = plan_dims(call, name, t, &p, err)) != MT_OK) goto out;
  int64_t n = mt_numel(t), n_out = p.all ? 1 : mt_shape_numel(p.out_ndim, p.out_shape);
  int rdim = -1; /* argmin/argmax: the reduced dim */
  for (int k = 0; k < t->ndim && !p.all; k++)
    if (p.reduce[k]) rdim = k;
  if (is_arg && (p.all ? n == 0 : (n_out > 0 && n == 0))) {
    st = mt_err(err, MT_INVALID_ARGUMENT, "%s: attempt to get %s of an empty sequence", name,
                name);
    goto out;
  }
  int in_int = npma_kind(a.dt) != 'f';
  int half = a.dt == MT_float16;
  acc_ = calloc((size_t)(n_out ? n_out : 1), sizeof *acc_);
  if (!acc_) {
    st = mt_err(err, MT_OUT_OF_MEMORY, "%s: out of memory", name);
    goto out;
  }
  for (int64_t o = 0; o < n_out; o++) acc_[o].all = 1;
  int top = op == MT_OP_argmin;
  for (int64_t i = 0; i < n; i++) {
    acc2 *c = &acc_[p.all ? 0 : out_index(t, &p, i)];
    int spec = a.mask[i];
    c->n += spec;
    if (op == MT_OP_all) {
      if (spec && npma_ld(&a, i) == 0.0) c->all = 0;
    } else if (is_arg) {
      int64_t idx = p.all ? i : coord_of(t, i, rdim);
      int first = c->seen++ == 0;
      if (in_int) {
        int64_t x = spec ? npma_ldi(&a, i) : fill_i(a.dt, top);
        if (first || (top ? x < c->bi : x > c->bi)) c->bi = x, c->bidx = idx;
      } else {
        double x = spec ? npma_ld(&a, i) : (top ? INFINITY : -INFINITY);
        int take = first || (!isnan(c->best) && (isnan(x) || (top ? x < c->best : x > c->best)));
        if (take) c->best = x, c->bidx = idx;
      }
    } else if (spec) {
      c->sum += npma_ld(&a, i);
    }
  }
  if (is_var) { /* the mean, then the squared deviations */
    for (int64_t o = 0; o < n_out; o++) {
      acc2 *c = &acc_[o];
      double s = (half || a.dt == MT_float32) ? (double)(float)c->sum : c->sum;
      c->f = c->n ? s / (double)c->n : 0.0;
      if (half) c->f = mt__cpu_round(MT_float16, c->f);
    }
    for (int64_t i = 0; i < n; i++) {
      if (!a.mask[i]) continue;
      acc2 *c = &acc_[p.all ? 0 : out_index(t, &p, i)];
      double d = npma_ld(&a, i) - c->f;
      if (half) d = mt__cpu_round(MT_float16, d);
      d = half ? mt__cpu_round(MT_float16, (double)((float)d * (float)d)) : d * d;
      c->sq += d;
    }
  }
  if (is_arg && !p.all) {
    mt_tensor *o = NULL;
    if ((st = mt__cpu_host(call)->dense_new(MT_int64, p.out_ndim, p.out_shape, &o, err)) != MT_OK)
      goto out;
    call->out[0] = o;
    call->n_out = 1;
    for (int64_t k = 0; k < n_out; k++) mt__cpu_sti(o->values, MT_int64, k, acc_[k].bidx);
    goto out;
  }
  mt_dtype rt = is_arg ? MT_int64 : op == MT_OP_all ? MT_bool : MT_float64;
  if ((st = npma_new_out(call, rt, p.all ? 0 : p.out_ndim, p.out_shape, &od, &om, err)) != MT_OK)
    goto out;
  for (int64_t o = 0; o < n_out; o++) {
    acc2 *c = &acc_[o];
    int spec = c->n > 0;
    if (is_arg) { /* an all-reduce: numpy's int64 scalar, specified */
      mt__cpu_sti(od, rt, o, c->bidx);
      om[o] = 1;
      continue;
    }
    if (op == MT_OP_all) {
      mt__cpu_sti(od, rt, o, p.all && !spec ? 0 : c->all); /* np.ma.masked: 0 */
      om[o] = (uint8_t)spec;
      continue;
    }
    double sq = half ? mt__cpu_round(MT_float16, c->sq) : c->sq;
    int64_t cnt = c->n - ddof; /* NPMA-17: numpy's count - ddof */
    double v = spec ? sq / (double)cnt : 0.0;
    if (p.all) { /* numpy scalars: a non-finite variance is np.ma.masked */
      if (!isfinite(v) || cnt <= 0) spec = 0, v = 0.0;
    } else if (spec && cnt <= 0) {
      spec = 0; /* NPMA-17: mask_or(all masked, cnt <= 0); np.ma.divide's 0 + the sum */
      v = isfinite(c->f) ? sq : 0.0;
    } else if (spec && !isfinite(c->f)) {
      v = 0.0; /* the mean was masked (np.ma.true_divide): so are the
                * deviations, their sum is a masked 0, and var's own mask
                * (the input mask's all) takes over */
    } else if (spec && !isfinite(v)) {
      v = sq; /* np.ma.divide masks it (data 0 + the sum); var's mask wins */
    }
    if (spec && op == MT_OP_std) {
      if (isfinite(v))
        v = sqrt(v);
      else
        spec = 0; /* np.ma.sqrt masks it, keeping its input */
    }
    mt__cpu_st(od, rt, o, v);
    om[o] = (uint8_t)spec;
  }
out:
  if (st != MT_OK) mt__cpu_drop_outputs(call);
  free(acc_);
  return st;
}

mt_status mt_npma_all(mt_call *call, mt_error *err) { return npma_reduce(call, MT_OP_all, err); }
mt_status mt_npma_argmin(mt_call *call, mt_error *err) {
  return npma_reduce(call, MT_OP_argmin, err);
}
mt_status mt_npma_argmax(mt_call *call, mt_error *err) {
  return npma_reduce(call, MT_OP_argmax, err);
}
mt_status mt_npma_var(mt_call *call, mt_error *err) { return npma_reduce(call, MT_OP_var, err); }
mt_status mt_npma_std(mt_call *call, mt_error *err) { return npma_reduce(call, MT_OP_std, err); }

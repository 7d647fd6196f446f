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
    int64_t v = d->type == MT_KW_INTS ? d->ints[k] : d->i;
    int64_t nd = t->ndim ? t->ndim : 1;
    if (v < -nd || v >= nd)
      return mt_err(err, MT_INDEX_OUT_OF_RANGE,
                    "%s: axis %lld is out of bounds for array of dimension %d (numpy's AxisError)",
                    name, (long long)v, t->ndim);
    if (v < 0) v += nd;
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

static mt_status npma_reduce(mt_call *call, mt_op op, mt_error *err) {
  const char *name = mt_op_name(op);
  npma_arg a = {0};
  acc *acc_ = NULL;
  void *od = NULL;
  uint8_t *om = NULL;
  red_plan p;
  mt_status st;

  if ((st = npma_begin(call, op, err)) != MT_OK) return st;
  if ((st = npma_arg_open(call, 0, name, &a, err)) != MT_OK) goto out;
  if (!a.is_masked) {
    st = mt_err(err, MT_NOT_SUPPORTED, "%s: inputs/0 must be a masked tensor", name);
    goto out;
  }
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
  npma_arg_close(&a);
  return st;
}

mt_status mt_npma_sum(mt_call *call, mt_error *err) { return npma_reduce(call, MT_OP_sum, err); }
mt_status mt_npma_mean(mt_call *call, mt_error *err) { return npma_reduce(call, MT_OP_mean, err); }
mt_status mt_npma_prod(mt_call *call, mt_error *err) { return npma_reduce(call, MT_OP_prod, err); }
mt_status mt_npma_amin(mt_call *call, mt_error *err) { return npma_reduce(call, MT_OP_amin, err); }
mt_status mt_npma_amax(mt_call *call, mt_error *err) { return npma_reduce(call, MT_OP_amax, err); }

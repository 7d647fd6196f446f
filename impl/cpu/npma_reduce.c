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
#include "common/exec.h"
#include "common/npma_reduce_math.h"
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

/* The outputs' values on ex: n_grp output elements, each from its input
 * elements in row-major order (off/idx: the host's bookkeeping); mask_out
 * NULL: a plain output. */
static mt_status run_groups(const mt_exec *ex, const char *name, mt_npr_par *pp,
                            const npma_arg *a, const red_plan *p, int64_t n_grp, void *od,
                            uint8_t *om, mt_error *err) {
  const mt_tensor *t = a->t;
  int64_t n = mt_numel(t);
  mt_status st = MT_OK;
  if (!ex->npma_reduce)
    return mt_err(err, MT_NOT_SUPPORTED, "%s: the %s backend has no numpy_ma reduce kernels",
                  name, ex->name);
  if (n_grp == 0) return MT_OK;
  pp->all = p->all;
  pp->ndim = t->ndim;
  for (int k = 0; k < t->ndim; k++) pp->shape[k] = t->shape[k];
  int64_t *off = calloc((size_t)n_grp + 1, sizeof *off);
  int64_t *idx = malloc(sizeof *idx * (size_t)(n ? n : 1));
  int64_t *pos = malloc(sizeof *pos * (size_t)n_grp);
  if (!off || !idx || !pos) {
    st = mt_err(err, MT_OUT_OF_MEMORY, "%s: out of memory", name);
    goto out;
  }
  for (int64_t i = 0; i < n; i++) off[(p->all ? 0 : out_index(t, p, i)) + 1]++;
  for (int64_t o = 0; o < n_grp; o++) off[o + 1] += off[o];
  for (int64_t o = 0; o < n_grp; o++) pos[o] = off[o];
  for (int64_t i = 0; i < n; i++) idx[pos[p->all ? 0 : out_index(t, p, i)]++] = i;
  st = ex->npma_reduce(pp, a->data, a->mask, n, off, idx, n_grp, od, om, err);
out:
  free(off);
  free(idx);
  free(pos);
  return st;
}

mt_status mt__npma_reduce(mt_call *call, mt_op op, const char *name, const npma_arg *a_,
                          const mt_exec *ex, mt_error *err) {
  const npma_arg a = *a_;
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
  if ((st = npma_new_out(call, rt, p.all ? 0 : p.out_ndim, p.out_shape, &od, &om, err)) != MT_OK)
    goto out;
  (void)per;
  mt_npr_par pp = {.op = op, .in = a.dt, .rt = rt};
  st = run_groups(ex, name, &pp, &a, &p, p.all ? 1 : n_out, od, om, err);
out:
  if (st != MT_OK) mt__cpu_drop_outputs(call);
  return st;
}

/* A reduction of the profile's own op: input 0 a masked tensor. */
static mt_status npma_reduce(mt_call *call, mt_op op, const mt_exec *ex, mt_error *err) {
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
    st = mt__npma_reduce2(call, op, name, &a, 0, ex, err);
  else
    st = mt__npma_reduce(call, op, name, &a, ex, err);
out:
  npma_arg_close(&a);
  return st;
}

mt_status mt_npma_sum(mt_call *call, mt_error *err) { return mt__npma_reduce_run(call, MT_OP_sum, &mt_cpu_exec, err); }
mt_status mt_npma_mean(mt_call *call, mt_error *err) { return mt__npma_reduce_run(call, MT_OP_mean, &mt_cpu_exec, err); }
mt_status mt_npma_prod(mt_call *call, mt_error *err) { return mt__npma_reduce_run(call, MT_OP_prod, &mt_cpu_exec, err); }
mt_status mt_npma_amin(mt_call *call, mt_error *err) { return mt__npma_reduce_run(call, MT_OP_amin, &mt_cpu_exec, err); }
mt_status mt_npma_amax(mt_call *call, mt_error *err) { return mt__npma_reduce_run(call, MT_OP_amax, &mt_cpu_exec, err); }

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

mt_status mt__npma_reduce2(mt_call *call, mt_op op, const char *name, const npma_arg *a_,
                           double ddof, const mt_exec *ex, mt_error *err) {
  const npma_arg a = *a_;
  void *od = NULL;
  uint8_t *om = NULL;
  red_plan p;
  mt_status st;
  int is_arg = op == MT_OP_argmin || op == MT_OP_argmax;

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
  mt_npr_par pp = {.op = op, .in = a.dt, .rdim = rdim, .ddof = ddof};
  if (is_arg && !p.all) {
    mt_tensor *o = NULL;
    if ((st = mt__cpu_host(call)->dense_new(MT_int64, p.out_ndim, p.out_shape, &o, err)) != MT_OK)
      goto out;
    call->out[0] = o;
    call->n_out = 1;
    pp.rt = MT_int64;
    pp.arg_dense = 1;
    st = run_groups(ex, name, &pp, &a, &p, n_out, o->values, NULL, err);
    goto out;
  }
  mt_dtype rt = is_arg ? MT_int64 : op == MT_OP_all ? MT_bool : MT_float64;
  if ((st = npma_new_out(call, rt, p.all ? 0 : p.out_ndim, p.out_shape, &od, &om, err)) != MT_OK)
    goto out;
  pp.rt = rt;
  st = run_groups(ex, name, &pp, &a, &p, n_out, od, om, err);
out:
  if (st != MT_OK) mt__cpu_drop_outputs(call);
  return st;
}

mt_status mt_npma_all(mt_call *call, mt_error *err) { return mt__npma_reduce_run(call, MT_OP_all, &mt_cpu_exec, err); }
mt_status mt_npma_argmin(mt_call *call, mt_error *err) {
  return mt__npma_reduce_run(call, MT_OP_argmin, &mt_cpu_exec, err);
}
mt_status mt_npma_argmax(mt_call *call, mt_error *err) {
  return mt__npma_reduce_run(call, MT_OP_argmax, &mt_cpu_exec, err);
}
mt_status mt_npma_var(mt_call *call, mt_error *err) { return mt__npma_reduce_run(call, MT_OP_var, &mt_cpu_exec, err); }
mt_status mt_npma_std(mt_call *call, mt_error *err) { return mt__npma_reduce_run(call, MT_OP_std, &mt_cpu_exec, err); }

/* ---- the family's entry (common/exec.h) ----------------------------------- */

mt_status mt__npma_reduce_run(mt_call *call, mt_op op, const mt_exec *ex, mt_error *err) {
  switch (op) {
#define X(name) case MT_OP_##name:
    NPMA_REDUCE_OPS(X)
#undef X
    return npma_reduce(call, op, ex, err);
  default: return mt_err(err, MT_NOT_SUPPORTED, "%s: not a numpy_ma reduction", mt_op_name(op));
  }
}

/* grad_masked.c - CPU backward kernels of MaskedTensor ops (golden format
 * 3's gradient cases; spec/SEMANTICS.md GRAD-*; mt_impl.backward).
 *
 * A backward kernel gets the forward inputs (call->in), kwargs and the
 * upstream gradients (call->grad_out, one per forward output, of the
 * output's kind and mask) and returns one gradient per input (NULL where
 * torch gives none). torch computes a MaskedTensor's gradient with its
 * derivative formulas applied to MaskedTensors, so the gradient carries
 * the mask those ops give (GRAD-1): the input's for elementwise ops and
 * reductions. Data under a false mask is unspecified (semantic level);
 * these kernels leave it 0. */
#include "cpu_util.h"

/* ---- shared plumbing ------------------------------------------------------------ */

/* Upstream gradient j of the call (a backward call has one per output). */
static mt_status grad_out(const mt_call *call, int j, const char *op, const mt_tensor **g,
                          mt_error *err) {
  *g = NULL;
  if (!call->grad_out || call->n_grad_out <= j || !call->grad_out[j])
    return mt_err(err, MT_INVALID_ARGUMENT, "%s backward: expected %d upstream gradients, got %d",
                  op, j + 1, call->n_grad_out);
  *g = call->grad_out[j];
  return mt_tensor_validate(*g, "grad_outputs", err);
}

/* A dense-storage masked float tensor (the only storage these kernels
 * take; NOT_SUPPORTED otherwise). */
static mt_status masked_dense(const mt_tensor *t, const char *what, const char *op,
                              mt_error *err) {
  if (t->kind != MT_KIND_MASKED || t->data->kind != MT_KIND_DENSE)
    return mt_err(err, MT_NOT_SUPPORTED,
                  "%s backward: %s is %s%s%s; the CPU backend implements it on dense-storage "
                  "masked tensors", op, what, mt_kind_name(t->kind),
                  t->kind == MT_KIND_MASKED ? " of " : "",
                  t->kind == MT_KIND_MASKED ? mt_kind_name(t->data->kind) : "");
  return mt__cpu_require_float(t, what, op, err);
}

/* A new masked gradient shaped like masked input x, with x's mask
 * (GRAD-1); *data points at its zero-filled data. */
static mt_status grad_like_input(const mt_host *h, const mt_tensor *x, mt_dtype dt,
                                 mt_tensor **out, mt_tensor **data, mt_error *err) {
  mt_tensor *mask;
  mt_status st = mt__cpu_new_masked_dense(h, dt, x->ndim, x->shape, out, data, &mask, err);
  if (st != MT_OK) return st;
  int64_t n = mt_numel(x);
  const mt_tensor *xm = x->kind == MT_KIND_MASKED ? x->mask : NULL;
  for (int64_t i = 0; i < n; i++)
    mt__cpu_st(mask->values, MT_bool, i,
               xm ? mt__cpu_ldb(xm->values, mt_dense_offset(xm, i)) : 1.0);
  return MT_OK;
}

/* Element i (row-major) of a dense tensor or a masked tensor's data. */
static double at(const mt_tensor *t, int64_t i) {
  const mt_tensor *d = t->kind == MT_KIND_MASKED ? t->data : t;
  return mt__cpu_ld(d->values, d->dtype, d->kind == MT_KIND_DENSE ? mt_dense_offset(d, i) : 0);
}

/* ---- sum (full reduction): every element's gradient is the upstream one -------- */

mt_status mt_cpu_grad_sum(mt_call *call, mt_error *err) {
  const mt_tensor *x, *g;
  mt_tensor *data;
  mt_status st;
  mt__cpu_begin(call);
  if ((st = mt__kw_check(MT_OP_sum, call->kw, err)) != MT_OK) return st;
  if ((st = mt__cpu_input(call, 0, "sum", &x, err)) != MT_OK) return st;
  if ((st = masked_dense(x, "inputs/0", "sum", err)) != MT_OK) return st;
  if ((st = grad_out(call, 0, "sum", &g, err)) != MT_OK) return st;
  if (mt_kw_find(call->kw, "dim"))
    return mt_err(err, MT_NOT_SUPPORTED, "sum backward: dim= is not implemented by the CPU "
                                         "backend");
  if (mt_numel(g) != 1)
    return mt_err(err, MT_SHAPE_MISMATCH, "sum backward: the upstream gradient of a full sum "
                                          "has one element, this one %lld",
                  (long long)mt_numel(g));
  if ((st = grad_like_input(mt__cpu_host(call), x, x->data->dtype, &call->out[0], &data, err)) !=
      MT_OK)
    return st;
  double v = at(g, 0);
  for (int64_t i = 0, n = mt_numel(x); i < n; i++) mt__cpu_st(data->values, data->dtype, i, v);
  call->n_out = 1;
  return MT_OK;
}

/* ---- view: the upstream gradient in the input's shape ------------------------------ */

mt_status mt_cpu_grad_view(mt_call *call, mt_error *err) {
  const mt_tensor *x, *g;
  mt_tensor *data;
  mt_status st;
  mt__cpu_begin(call);
  if ((st = mt__kw_check(MT_OP_view, call->kw, err)) != MT_OK) return st;
  if ((st = mt__cpu_input(call, 0, "view", &x, err)) != MT_OK) return st;
  if ((st = masked_dense(x, "inputs/0", "view", err)) != MT_OK) return st;
  if ((st = grad_out(call, 0, "view", &g, err)) != MT_OK) return st;
  if ((st = masked_dense(g, "grad_outputs/0", "view", err)) != MT_OK) return st;
  if (mt_numel(g) != mt_numel(x))
    return mt_err(err, MT_SHAPE_MISMATCH, "view backward: the upstream gradient has %lld "
                                          "elements, the input %lld",
                  (long long)mt_numel(g), (long long)mt_numel(x));
  if ((st = grad_like_input(mt__cpu_host(call), x, x->data->dtype, &call->out[0], &data, err)) !=
      MT_OK)
    return st;
  for (int64_t i = 0, n = mt_numel(x); i < n; i++)
    mt__cpu_st(data->values, data->dtype, i, at(g, i));
  call->n_out = 1;
  return MT_OK;
}

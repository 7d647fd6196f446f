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
#include "grad_util.h"

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

/* ---- mul: d(a*b) = (g*b, g*a), same shapes ---------------------------------------- */

mt_status mt_cpu_grad_mul(mt_call *call, mt_error *err) {
  const mt_tensor *in[2], *g;
  mt_status st;
  mt__cpu_begin(call);
  if ((st = mt__kw_check(MT_OP_mul, call->kw, err)) != MT_OK) return st;
  for (int k = 0; k < 2; k++)
    if ((st = mt__cpu_input(call, k, "mul", &in[k], err)) != MT_OK) return st;
  if ((st = grad_out(call, 0, "mul", &g, err)) != MT_OK) return st;
  if ((st = masked_dense(g, "grad_outputs/0", "mul", err)) != MT_OK) return st;
  for (int k = 0; k < 2; k++) {
    const mt_tensor *t = in[k];
    if (t->kind != MT_KIND_MASKED && t->kind != MT_KIND_DENSE)
      return mt_err(err, MT_NOT_SUPPORTED, "mul backward: inputs/%d is %s", k,
                    mt_kind_name(t->kind));
    if (t->ndim != g->ndim || memcmp(t->shape, g->shape, sizeof(int64_t) * (size_t)t->ndim))
      return mt_err(err, MT_NOT_SUPPORTED, "mul backward: broadcast inputs are not "
                                           "implemented by the CPU backend");
  }
  /* both gradients carry the upstream gradient's mask (GRAD-1, GRAD-4) */
  for (int k = 0; k < 2; k++) {
    mt_tensor *data;
    const mt_tensor *other = in[1 - k];
    if (in[k]->kind == MT_KIND_DENSE && !mt_dtype_is_float(in[k]->dtype)) continue;
    if ((st = grad_like_input(mt__cpu_host(call), g, g->data->dtype, &call->out[k], &data,
                              err)) != MT_OK)
      goto fail;
    for (int64_t i = 0, n = mt_numel(g); i < n; i++)
      mt__cpu_st(data->values, data->dtype, i,
                 mt__cpu_round(data->dtype, at(g, i) * at(other, i)));
  }
  call->n_out = 2;
  return MT_OK;
fail:
  mt__cpu_drop_outputs(call);
  return st;
}

/* ---- to_tensor(m, value): the upstream gradient under m's mask ------------------- */

/* m.to_tensor(v) is m.get_data().masked_fill(~mask, v): masked_fill's
 * derivative keeps the upstream gradient where the mask holds, and
 * get_data's backward wraps it with m's mask (GRAD-1); the fill value, a
 * Python number, gets none. */
mt_status mt_cpu_grad_to_tensor(mt_call *call, mt_error *err) {
  const mt_tensor *x, *g;
  mt_tensor *data;
  mt_status st;
  char a[96];
  mt__cpu_begin(call);
  if ((st = mt__kw_check(MT_OP_to_tensor, call->kw, err)) != MT_OK) return st;
  if ((st = mt__cpu_input(call, 0, "to_tensor", &x, err)) != MT_OK) return st;
  if ((st = mt__grad_masked_dense(x, "inputs/0", "to_tensor", err)) != MT_OK) return st;
  if ((st = mt_tensor_validate(x, "inputs/0", err)) != MT_OK) return st;
  if ((st = mt__grad_out(call, 0, "to_tensor", &g, err)) != MT_OK) return st;
  if (g->kind != MT_KIND_DENSE || g->ndim != x->ndim ||
      (x->ndim && memcmp(g->shape, x->shape, sizeof(int64_t) * (size_t)x->ndim)))
    return mt_err(err, MT_SHAPE_MISMATCH, "to_tensor backward: the upstream gradient must be a "
                  "dense tensor of the input's shape %s",
                  mt_shape_str(x->ndim, x->shape, a, sizeof a));
  if ((st = mt__grad_like_input(mt__cpu_host(call), x, x->data->dtype, &call->out[0], &data,
                                err)) != MT_OK)
    return st;
  for (int64_t i = 0, n = mt_numel(x); i < n; i++)
    mt__cpu_st(data->values, data->dtype, i, mt__grad_spec(x, i) ? mt__grad_at(g, i) : 0.0);
  return mt__grad_done(call);
}

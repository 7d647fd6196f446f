/* grad_masked.c - CPU backward kernels of the masked family's ops
 * (golden format 3's gradient cases; spec/SEMANTICS.md GRAD-*;
 * mt_impl.backward): to_tensor. masked_tensor(data, mask) has none: torch
 * builds a new leaf whose result does not require grad
 * (spec/no-gradient-masked.tsv). */
#include "grad_util.h"

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

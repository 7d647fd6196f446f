/* grad_masked.c - CPU backward kernels of the masked family's ops
 * (golden format 3's gradient cases; spec/SEMANTICS.md GRAD-*;
 * mt_impl.backward): to_tensor. masked_tensor(data, mask) has none: torch
 * builds a new leaf whose result does not require grad
 * (spec/no-gradient-masked.tsv). */
#include "common/exec.h"
#include "common/grad_structure_math.h"
#include "grad_util.h"

/* ---- to_tensor(m, value): the upstream gradient under m's mask ------------------- */

/* m.to_tensor(v) is m.get_data().masked_fill(~mask, v): masked_fill's
 * derivative keeps the upstream gradient where the mask holds, and
 * get_data's backward wraps it with m's mask (GRAD-1); the fill value, a
 * Python number, gets none. */
static mt_status to_tensor_backward(mt_call *call, const mt_exec *ex, mt_error *err) {
  const mt_tensor *x, *g;
  mt_tensor *out = NULL, *data, *mask;
  int64_t *off = NULL, *src = NULL;
  double *vals = NULL;
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
  if (!ex->grad_scatter)
    return mt_err(err, MT_NOT_SUPPORTED, "to_tensor backward: the %s backend has no kernels for "
                  "it yet", ex->name);
  /* element i takes the upstream element i where x's mask holds (a gather) */
  int64_t n = mt_numel(x);
  off = calloc((size_t)n + 1, sizeof(int64_t));
  src = malloc((size_t)(n ? n : 1) * sizeof(int64_t));
  if ((st = mt__grad_doubles(n, "to_tensor", &vals, err)) != MT_OK) goto out;
  if (!off || !src) {
    st = mt_err(err, MT_OUT_OF_MEMORY, "to_tensor backward: no memory for %lld indices",
                (long long)n);
    goto out;
  }
  for (int64_t i = 0; i < n; i++) {
    int spec = mt__grad_spec(x, i);
    vals[i] = mt__grad_at(g, i);
    if (spec) src[off[i]] = i;
    off[i + 1] = off[i] + spec;
  }
  if ((st = mt__cpu_new_masked_dense(mt__cpu_host(call), x->data->dtype, x->ndim, x->shape, &out,
                                     &data, &mask, err)) != MT_OK)
    goto out;
  call->out[0] = out;
  mt_gsc_par p = {n, n, x->data->dtype, 0};
  if ((st = ex->grad_scatter(&p, vals, off, src, data->values, mask->values, err)) != MT_OK) {
    mt_err_prefix(err, "to_tensor backward");
    goto out;
  }
  mt__grad_done(call);
out:
  free(off);
  free(src);
  free(vals);
  if (st != MT_OK) mt__cpu_drop_outputs(call);
  return st;
}

mt_status mt__grad_to_tensor_run(mt_call *call, const mt_exec *ex, mt_error *err) {
  return to_tensor_backward(call, ex, err);
}

mt_status mt_cpu_grad_to_tensor(mt_call *call, mt_error *err) {
  return to_tensor_backward(call, &mt_cpu_exec, err);
}

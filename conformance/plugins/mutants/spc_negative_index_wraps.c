/* spc_negative_index_wraps.c - breaks SPC-9: sparse_coo_tensor reads a
 * negative index Python-style (-1 is the last row), where torch's
 * check_invariants refuses it ("found negative index -1 for dim 0"). */
#include "mutant.h"

static mt_status mutant_sparse_coo_tensor(mt_call *call, mt_error *err) {
  const mt_tensor *ind = call->n_in > 1 ? call->in[0] : NULL;
  const mt_kwarg *size = mt_kw_find(call->kw, "size");
  if (!ind || ind->kind != MT_KIND_DENSE || ind->dtype != MT_int64 || ind->ndim != 2 ||
      !mt_is_contiguous(ind) || !size || size->type != MT_KW_INTS || size->n < ind->shape[0])
    return mt_cpu_sparse_coo_tensor(call, err);
  mt_tensor *w = NULL;
  mt_status st = mt_tensor_clone(ind, &w, err);
  if (st != MT_OK) return st;
  int64_t *v = w->values, nnz = w->shape[1];
  for (int64_t d = 0; d < w->shape[0]; d++)
    for (int64_t k = 0; k < nnz; k++)
      if (v[d * nnz + k] < 0) v[d * nnz + k] += size->ints[d];
  st = mt__mutant_call_in(call, err, mt_cpu_sparse_coo_tensor, 0, w);
  mt_tensor_free(w);
  return st;
}

static const mt_kernel_fn kernels[MT_OP__END] = {
#include "cpu_slots.h"
    [MT_OP_sparse_coo_tensor] = mutant_sparse_coo_tensor,
};
MT_MUTANT_ENTRY("spc_negative_index_wraps", kernels)

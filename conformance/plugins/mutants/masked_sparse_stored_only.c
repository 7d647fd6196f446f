/* masked_sparse_stored_only.c - breaks MFN-9: masked.amax of a sparse COO
 * input reduces only the elements that are both stored and masked in
 * (the intersection of the two index sets), dropping the masked-in
 * elements the input does not store, which torch's _sparse_coo_where keeps
 * as explicit zeros: a row whose masked-in stored values are all negative
 * gets their max instead of 0, and a row with no stored masked-in element
 * gets no entry. The shortcut a sparse library takes when it treats
 * "unspecified" as "masked out". */
#include "mutant.h"

static mt_status mutant_amax(mt_call *call, mt_error *err) {
  const mt_tensor *x = call->n_in > 0 ? call->in[0] : NULL;
  const mt_tensor *m = call->n_in > 1 ? call->in[1] : NULL;
  if (!x || !m || x->kind != MT_KIND_COO || m->kind != MT_KIND_DENSE || !mt_is_contiguous(m) ||
      m->dtype != MT_bool || x->dense_dim != 0)
    return mt_cpu_masked_amax(call, err);
  mt_tensor *nm = NULL;
  mt_status st = mt_tensor_clone(m, &nm, err);
  if (st != MT_OK) return st;
  uint8_t *b = nm->values, *stored = calloc((size_t)(mt_numel(m) ? mt_numel(m) : 1), 1);
  if (!stored) {
    mt_tensor_free(nm);
    return mt_err(err, MT_OUT_OF_MEMORY, "mutant: out of memory");
  }
  for (int64_t k = 0; k < x->nnz; k++) stored[mt_coo_linear(x, k)] = 1;
  for (int64_t i = 0; i < mt_numel(m); i++) b[i] = b[i] && stored[i];
  st = mt__mutant_call_in(call, err, mt_cpu_masked_amax, 1, nm);
  free(stored);
  mt_tensor_free(nm);
  return st;
}

static const mt_kernel_fn kernels[MT_OP__END] = {
#include "cpu_slots.h"
    [MT_OP_masked_amax] = mutant_amax,
};
MT_MUTANT_ENTRY("masked_sparse_stored_only", kernels)

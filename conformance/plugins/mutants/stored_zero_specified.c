/* stored_zero_specified.c - breaks ADA-3: the MaskedTensor Adagrad path
 * given a COO gradient takes every stored entry as specified (mask = the
 * COO's indices, as the sparse path does) instead of the tutorial's
 * mask = grad != 0, so an explicitly stored zero is updated: with eps = 0
 * and a zero accumulator, 0/0 = NaN where torch has none (ADA-6). */
#include "mutant.h"

static mt_status mutant_adagrad_masked(mt_call *call, mt_error *err) {
  const mt_tensor *g = call->n_in > 1 ? call->in[1] : NULL;
  if (!g || g->kind != MT_KIND_COO || g->dense_dim != 0) return mt_cpu_adagrad_masked(call, err);
  mt_tensor *data = NULL, *mask = NULL, *mg = NULL;
  mt_status st;
  if ((st = mt_tensor_clone(g, &data, err)) != MT_OK) return st;
  if ((st = mt_coo_new(MT_bool, g->ndim, g->shape, g->sparse_dim, g->nnz, &mask, err)) != MT_OK) {
    mt_tensor_free(data);
    return st;
  }
  if (g->nnz) memcpy(mask->indices, data->indices, sizeof(int64_t) * (size_t)(g->sparse_dim * g->nnz));
  memset(mask->values, 1, (size_t)g->nnz);
  mask->coalesced = data->coalesced;
  if ((st = mt_masked_new(data, mask, &mg, err)) != MT_OK) return st; /* took data and mask */
  st = mt__mutant_call_in(call, err, mt_cpu_adagrad_masked, 1, mg);
  mt_tensor_free(mg);
  return st;
}

static const mt_kernel_fn kernels[MT_OP__END] = {
#include "cpu_slots.h"
    [MT_OP_adagrad_masked] = mutant_adagrad_masked,
};
MT_MUTANT_ENTRY("stored_zero_specified", kernels)

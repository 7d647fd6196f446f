/* coo_pattern_as_mask.c - breaks STR-6: to_dense of a COO-storage masked
 * tensor marks every stored entry as specified (the sparsity pattern taken
 * for the mask, a stored false mask value ignored), as a library that
 * conflates "stored" with "specified". */
#include "mutant.h"

static mt_status mutant_to_dense(mt_call *call, mt_error *err) {
  mt_status st = mt_cpu_to_dense(call, err);
  const mt_tensor *x = call->n_in > 0 ? call->in[0] : NULL;
  if (st != MT_OK || !x || x->kind != MT_KIND_MASKED || x->mask->kind != MT_KIND_COO ||
      !mt__mutant_dense_masked(call->out[0]) || x->mask->dense_dim != 0)
    return st;
  uint8_t *m = call->out[0]->mask->values;
  for (int64_t k = 0; k < x->mask->nnz; k++) m[mt_coo_linear(x->mask, k)] = 1;
  return MT_OK;
}

static const mt_kernel_fn kernels[MT_OP__END] = {
#include "cpu_slots.h"
    [MT_OP_to_dense] = mutant_to_dense,
};
MT_MUTANT_ENTRY("coo_pattern_as_mask", kernels)

/* same_size_compares_masks.c - breaks STR-5: is_same_size also requires the
 * two masks to be equal (a library that compares "the masked tensors"
 * instead of their sizes). */
#include "mutant.h"

static mt_status mutant_is_same_size(mt_call *call, mt_error *err) {
  mt_status st = mt_cpu_is_same_size(call, err);
  if (st != MT_OK || call->n_in < 2 || !mt__mutant_dense_masked(call->in[0]) ||
      !mt__mutant_dense_masked(call->in[1]) || call->n_out != 1 ||
      call->out[0]->kind != MT_KIND_SCALAR)
    return st;
  const mt_tensor *a = call->in[0]->mask, *b = call->in[1]->mask;
  if (mt_numel(a) == mt_numel(b) && memcmp(a->values, b->values, (size_t)mt_numel(a)) != 0)
    ((uint8_t *)call->out[0]->values)[0] = 0;
  return MT_OK;
}

static const mt_kernel_fn kernels[MT_OP__END] = {
#include "cpu_slots.h"
    [MT_OP_is_same_size] = mutant_is_same_size,
};
MT_MUTANT_ENTRY("same_size_compares_masks", kernels)

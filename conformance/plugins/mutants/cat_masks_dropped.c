/* cat_masks_dropped.c - breaks STR-2: cat and stack concatenate the data and
 * return an all-true mask, as a library that concatenates the data tensors
 * of its operands and rebuilds the result as "fully specified" (the masks
 * dropped on the floor). */
#include "mutant.h"

static mt_status drop_masks(mt_call *call, mt_error *err, mt_kernel_fn real) {
  mt_status st = real(call, err);
  if (st != MT_OK || !mt__mutant_dense_masked(call->out[0])) return st;
  mt_tensor *m = call->out[0]->mask;
  memset(m->values, 1, (size_t)mt_numel(m));
  return MT_OK;
}
static mt_status mutant_cat(mt_call *c, mt_error *e) { return drop_masks(c, e, mt_cpu_cat); }
static mt_status mutant_stack(mt_call *c, mt_error *e) { return drop_masks(c, e, mt_cpu_stack); }

static const mt_kernel_fn kernels[MT_OP__END] = {
#include "cpu_slots.h"
    [MT_OP_cat] = mutant_cat,
    [MT_OP_stack] = mutant_stack,
};
MT_MUTANT_ENTRY("cat_masks_dropped", kernels)

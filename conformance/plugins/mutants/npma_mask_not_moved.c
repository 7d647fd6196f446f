/* npma_mask_not_moved.c - breaks NPMA-18: numpy_ma's transpose and t
 * permute the data but leave the mask in its old memory order (a port that
 * swaps the data's strides and copies the mask buffer as it is). */
#include "npma_mutant.h"

static mt_status stale_mask(mt_call *call, mt_error *err,
                            mt_status (*kernel)(mt_call *, mt_error *)) {
  mt_status st = kernel(call, err);
  if (st != MT_OK || call->n_out < 1 || !mt__mutant_dense_masked(call->out[0]) ||
      !mt__mutant_dense_masked(call->in[0]))
    return st;
  const mt_tensor *m = call->in[0]->mask;
  mt_tensor *o = call->out[0]->mask;
  if (mt_numel(m) != mt_numel(o)) return st;
  memcpy(o->values, m->values, (size_t)mt_numel(o));
  return MT_OK;
}

static mt_status mutant_transpose(mt_call *call, mt_error *err) {
  return stale_mask(call, err, mt_npma_transpose);
}
static mt_status mutant_t(mt_call *call, mt_error *err) { return stale_mask(call, err, mt_npma_t); }

static const mt_kernel_fn npma[MT_OP__END] = {
#include "npma_slots.h"
    [MT_OP_transpose] = mutant_transpose,
    [MT_OP_t] = mutant_t,
};
MT_NPMA_MUTANT_ENTRY("npma_mask_not_moved", npma)

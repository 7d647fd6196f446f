/* transpose_mask_not_moved.c - breaks STR-1: transpose and t move the data
 * but hand the mask over in its old row-major order (the mask buffer copied
 * as it is, only its shape relabelled): a wrapper that forwards a view op to
 * the data tensor and "reshapes" the mask to match. Every non-square or
 * non-symmetric mask shows it. */
#include "mutant.h"

static mt_status keep_mask_order(mt_call *call, mt_error *err, mt_kernel_fn real) {
  mt_status st = real(call, err);
  if (st != MT_OK || call->n_in < 1 || !mt__mutant_dense_masked(call->in[0]) ||
      !mt__mutant_dense_masked(call->out[0]))
    return st;
  const mt_tensor *in = call->in[0]->mask;
  mt_tensor *out = call->out[0]->mask;
  if (mt_numel(in) == mt_numel(out)) memcpy(out->values, in->values, (size_t)mt_numel(in));
  return MT_OK;
}
static mt_status mutant_transpose(mt_call *c, mt_error *e) {
  return keep_mask_order(c, e, mt_cpu_transpose);
}
static mt_status mutant_t(mt_call *c, mt_error *e) { return keep_mask_order(c, e, mt_cpu_t); }

static const mt_kernel_fn kernels[MT_OP__END] = {
#include "cpu_slots.h"
    [MT_OP_transpose] = mutant_transpose,
    [MT_OP_t] = mutant_t,
};
MT_MUTANT_ENTRY("transpose_mask_not_moved", kernels)

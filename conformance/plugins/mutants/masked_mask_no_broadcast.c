/* masked_mask_no_broadcast.c - breaks MFN-1: masked.prod requires the mask
 * to have the input's shape (numpy.ma's "Mask and data not compatible")
 * instead of broadcasting it as torch does. */
#include "mutant.h"

static mt_status mutant_prod(mt_call *call, mt_error *err) {
  if (call->n_in == 2 && call->in[0] && call->in[1] && !mt_shape_equal(call->in[0], call->in[1]))
    return mt_err(err, MT_SHAPE_MISMATCH, "masked_prod: mask and input shapes differ");
  return mt_cpu_masked_prod(call, err);
}

static const mt_kernel_fn kernels[MT_OP__END] = {
#include "cpu_slots.h"
    [MT_OP_masked_prod] = mutant_prod,
};
MT_MUTANT_ENTRY("masked_mask_no_broadcast", kernels)

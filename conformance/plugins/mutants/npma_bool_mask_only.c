/* npma_bool_mask_only.c - breaks NPMA-1: numpy_ma's masked_tensor refuses a
 * mask that is not bool with DTYPE_MISMATCH, as torch does (MASK-2), where
 * np.ma.masked_array converts any mask (nonzero = specified here): a
 * numpy.ma clone that kept torch's constructor. */
#include <stdio.h>

#include "npma_mutant.h"

static mt_status mutant_masked_tensor(mt_call *call, mt_error *err) {
  if (call->n_in > 1 && call->in[1] && call->in[1]->kind == MT_KIND_DENSE &&
      call->in[1]->dtype != MT_bool) {
    err->status = MT_DTYPE_MISMATCH;
    snprintf(err->msg, sizeof err->msg, "masked_tensor: mask must have dtype bool");
    return MT_DTYPE_MISMATCH;
  }
  return mt_npma_masked_tensor(call, err);
}

static const mt_kernel_fn npma[MT_OP__END] = {
#include "npma_slots.h"
    [MT_OP_masked_tensor] = mutant_masked_tensor,
};
MT_NPMA_MUTANT_ENTRY("npma_bool_mask_only", npma)

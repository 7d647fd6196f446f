/* masked_logaddexp_one_mask.c - breaks MFN-6: masked.logaddexp applies
 * input_mask to both operands (other_mask ignored), as a port that assumes
 * one mask per call like the other masked ops. */
#include "mutant.h"

static mt_status mutant_logaddexp(mt_call *call, mt_error *err) {
  if (call->n_in != 4) return mt_cpu_masked_logaddexp(call, err);
  return mt__mutant_call_in(call, err, mt_cpu_masked_logaddexp, 3, call->in[2]);
}

static const mt_kernel_fn kernels[MT_OP__END] = {
#include "cpu_slots.h"
    [MT_OP_masked_logaddexp] = mutant_logaddexp,
};
MT_MUTANT_ENTRY("masked_logaddexp_one_mask", kernels)

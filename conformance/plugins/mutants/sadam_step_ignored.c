/* sadam_step_ignored.c - breaks SADAM-2: the bias corrections always use
 * step 1 (an implementation that keeps no step count, or resets it every
 * call), where torch uses the state's step: step_size = lr *
 * sqrt(1 - beta2**step) / (1 - beta1**step). */
#include "mutant.h"

static mt_status mutant_sparse_adam(mt_call *call, mt_error *err) {
  if (mt_kw_float(call->kw, "step", 1.0) < 1.0) return mt_cpu_sparse_adam(call, err);
  return mt__mutant_call_kw(call, err, mt_cpu_sparse_adam, "step", 1.0, 0);
}

static const mt_kernel_fn kernels[MT_OP__END] = {
#include "cpu_slots.h"
    [MT_OP_sparse_adam] = mutant_sparse_adam,
};
MT_MUTANT_ENTRY("sadam_step_ignored", kernels)

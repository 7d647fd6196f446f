/* masked_var_ddof0.c - breaks MFN-3: masked.var without `unbiased` or
 * `correction` divides by the count (numpy's default ddof=0) instead of
 * torch's count - 1. */
#include "mutant.h"

static mt_status mutant_var(mt_call *call, mt_error *err) {
  if (mt_kw_find(call->kw, "unbiased") || mt_kw_find(call->kw, "correction"))
    return mt_cpu_masked_var(call, err);
  return mt__mutant_call_kw(call, err, mt_cpu_masked_var, "correction", 0.0, 0);
}

static const mt_kernel_fn kernels[MT_OP__END] = {
#include "cpu_slots.h"
    [MT_OP_masked_var] = mutant_var,
};
MT_MUTANT_ENTRY("masked_var_ddof0", kernels)

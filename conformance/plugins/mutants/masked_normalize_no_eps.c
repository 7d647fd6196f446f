/* masked_normalize_no_eps.c - breaks MFN-5: masked.normalize divides by the
 * masked norm itself instead of max(norm, eps), so a fully masked slice is
 * 0/0 = NaN instead of torch's 0 (the eps keyword is dropped). */
#include "mutant.h"

static mt_status mutant_normalize(mt_call *call, mt_error *err) {
  return mt__mutant_call_kw(call, err, mt_cpu_masked_normalize, "eps", 0.0, 0);
}

static const mt_kernel_fn kernels[MT_OP__END] = {
#include "cpu_slots.h"
    [MT_OP_masked_normalize] = mutant_normalize,
};
MT_MUTANT_ENTRY("masked_normalize_no_eps", kernels)

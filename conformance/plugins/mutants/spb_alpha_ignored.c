/* spb_alpha_ignored.c - breaks SPB-3: addmv adds the product unscaled
 * (alpha taken as 1), as a sparse mv that only has y = A x + beta y would. */
#include "mutant.h"

static mt_status mutant_addmv(mt_call *call, mt_error *err) {
  return mt__mutant_call_kw(call, err, mt_cpu_addmv, "alpha", 1.0, 0);
}

static const mt_kernel_fn kernels[MT_OP__END] = {
#include "cpu_slots.h"
    [MT_OP_addmv] = mutant_addmv,
};
MT_MUTANT_ENTRY("spb_alpha_ignored", kernels)

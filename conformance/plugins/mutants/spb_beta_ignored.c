/* spb_beta_ignored.c - breaks SPB-3: addmm always adds the input once
 * (beta taken as 1), as an implementation that forwards only alpha to its
 * BLAS call (gemm's C = alpha A B + C) would. */
#include "mutant.h"

static mt_status mutant_addmm(mt_call *call, mt_error *err) {
  return mt__mutant_call_kw(call, err, mt_cpu_addmm, "beta", 1.0, 0);
}

static const mt_kernel_fn kernels[MT_OP__END] = {
#include "cpu_slots.h"
    [MT_OP_addmm] = mutant_addmm,
};
MT_MUTANT_ENTRY("spb_beta_ignored", kernels)

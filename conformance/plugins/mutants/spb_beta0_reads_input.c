/* spb_beta0_reads_input.c - breaks SPB-3: addmm with beta = 0 still
 * multiplies the input (0 * NaN = NaN, 0 * inf = NaN reach the result),
 * where torch ignores the input (BLAS's convention for beta = 0). Runs the
 * reference with beta = 1e-300: the same result for finite inputs, NaN or
 * inf wherever the input holds one. */
#include "mutant.h"

static mt_status mutant_addmm(mt_call *call, mt_error *err) {
  if (mt_kw_float(call->kw, "beta", 1.0) != 0.0) return mt_cpu_addmm(call, err);
  return mt__mutant_call_kw(call, err, mt_cpu_addmm, "beta", 1e-300, 0);
}

static const mt_kernel_fn kernels[MT_OP__END] = {
#include "cpu_slots.h"
    [MT_OP_addmm] = mutant_addmm,
};
MT_MUTANT_ENTRY("spb_beta0_reads_input", kernels)

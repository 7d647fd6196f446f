/* npma_remainder_as_fmod.c - breaks NPMA-10: numpy_ma's remainder is C's
 * fmod (the dividend's sign: remainder(-7, 2) = -1), where np.ma.remainder
 * is Python's modulo with the divisor's sign (remainder(-7, 2) = 1): a port
 * that maps % to fmod. */
#include "npma_mutant.h"

static mt_status mutant_remainder(mt_call *call, mt_error *err) {
  return mt_npma_fmod(call, err);
}

static const mt_kernel_fn npma[MT_OP__END] = {
#include "npma_slots.h"
    [MT_OP_remainder] = mutant_remainder,
};
MT_NPMA_MUTANT_ENTRY("npma_remainder_as_fmod", npma)

/* remainder_as_fmod.c - breaks BIN-5: torch.remainder computed as C's fmod,
 * whose result has the sign of the dividend (-5 fmod 3 = -2), where torch's
 * remainder, like Python's %, has the sign of the divisor (-5 % 3 = 1). A C
 * library that maps "remainder" to fmod()/% does exactly this. */
#include "mutant.h"

static mt_status mutant_remainder(mt_call *c, mt_error *e) { return mt_cpu_fmod(c, e); }

static const mt_kernel_fn kernels[MT_OP__END] = {
#include "cpu_slots.h"
    [MT_OP_remainder] = mutant_remainder,
};
MT_MUTANT_ENTRY("remainder_as_fmod", kernels)

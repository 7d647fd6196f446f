/* decimals_ignored.c - breaks UN-5: round(m, decimals=1) runs (as plain
 * round, the keyword dropped) where MaskedTensor refuses every keyword
 * argument of a unary op ("MaskedTensor unary ops require that len(kwargs)
 * == 0"), decimals=0 included. */
#include "mutant.h"

static mt_status mutant_round(mt_call *call, mt_error *err) {
  return mt__mutant_call_kw(call, err, mt_cpu_round, "decimals", 0, 1);
}

static const mt_kernel_fn kernels[MT_OP__END] = {
#include "cpu_slots.h"
    [MT_OP_round] = mutant_round,
};
MT_MUTANT_ENTRY("decimals_ignored", kernels)

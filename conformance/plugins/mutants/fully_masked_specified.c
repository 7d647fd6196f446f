/* fully_masked_specified.c - breaks RED-3: reduction outputs none of whose
 * inputs is specified come back specified (mask true, holding the fill),
 * as a library that allocates the output mask as ones and never clears it,
 * so an empty sum reads as a real 0. */
#include "mutant.h"

static mt_status all_specified(mt_call *call, mt_error *err, mt_kernel_fn real) {
  mt_status st = real(call, err);
  if (st != MT_OK || !mt__mutant_dense_masked(call->out[0])) return st;
  mt_tensor *m = call->out[0]->mask;
  memset(m->values, 1, (size_t)mt_numel(m));
  return MT_OK;
}

#define MUTANT(op) \
  static mt_status mutant_##op(mt_call *c, mt_error *e) { return all_specified(c, e, mt_cpu_##op); }
MUTANT(sum)
MUTANT(mean)
MUTANT(prod)
MUTANT(amin)
MUTANT(amax)

static const mt_kernel_fn kernels[MT_OP__END] = {
#include "cpu_slots.h"
    [MT_OP_sum] = mutant_sum,   [MT_OP_mean] = mutant_mean, [MT_OP_prod] = mutant_prod,
    [MT_OP_amin] = mutant_amin, [MT_OP_amax] = mutant_amax,
};
MT_MUTANT_ENTRY("fully_masked_specified", kernels)

/* maximize_ignored.c - breaks ADA-3: the MaskedTensor Adagrad path ignores
 * maximize=True (the tutorial's loop has no such option, and a library
 * copying it forgets to negate the gradient), so it descends where torch
 * ascends. */
#include "mutant.h"

static mt_status mutant_adagrad_masked(mt_call *call, mt_error *err) {
  return mt__mutant_call_kw(call, err, mt_cpu_adagrad_masked, "maximize", 0.0, 1);
}

static const mt_kernel_fn kernels[MT_OP__END] = {
#include "cpu_slots.h"
    [MT_OP_adagrad_masked] = mutant_adagrad_masked,
};
MT_MUTANT_ENTRY("maximize_ignored", kernels)

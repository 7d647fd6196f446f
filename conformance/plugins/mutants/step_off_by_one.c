/* step_off_by_one.c - breaks ADA-2: the sparse Adagrad step decays the
 * learning rate with the step count already incremented,
 * clr = lr / (1 + step * lr_decay), instead of torch's
 * lr / (1 + (step - 1) * lr_decay): every step is decayed once too often. */
#include "mutant.h"

static mt_status mutant_adagrad_sparse(mt_call *call, mt_error *err) {
  double step = mt_kw_float(call->kw, "step", 1.0);
  if (!(step >= 1.0)) return mt_cpu_adagrad_sparse(call, err);
  return mt__mutant_call_kw(call, err, mt_cpu_adagrad_sparse, "step", step + 1.0, 0);
}

static const mt_kernel_fn kernels[MT_OP__END] = {
#include "cpu_slots.h"
    [MT_OP_adagrad_sparse] = mutant_adagrad_sparse,
};
MT_MUTANT_ENTRY("step_off_by_one", kernels)

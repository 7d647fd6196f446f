/* lr_decay_ignored.c - breaks ADA-1: the dense Adagrad step uses lr as the
 * step size, ignoring lr_decay (clr = lr instead of
 * lr / (1 + (step - 1) * lr_decay)), as ports of Adagrad that only know the
 * original paper's update do. */
#include "mutant.h"

static mt_status mutant_adagrad_dense(mt_call *call, mt_error *err) {
  if (mt_kw_float(call->kw, "lr_decay", 0.0) < 0) return mt_cpu_adagrad_dense(call, err); /* ADA-5 */
  return mt__mutant_call_kw(call, err, mt_cpu_adagrad_dense, "lr_decay", 0.0, 1);
}

static const mt_kernel_fn kernels[MT_OP__END] = {
#include "cpu_slots.h"
    [MT_OP_adagrad_dense] = mutant_adagrad_dense,
};
MT_MUTANT_ENTRY("lr_decay_ignored", kernels)

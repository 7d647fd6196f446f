/* sgd_nesterov_ignored.c - breaks SGD-2: nesterov=True is accepted and
 * ignored (plain momentum: param -= lr * buf), where torch steps with grad
 * + momentum * buf. */
#include "mutant.h"

static mt_status mutant_sgd(mt_call *call, mt_error *err) {
  if (mt_kw_float(call->kw, "nesterov", 0.0) == 0.0 || mt_kw_float(call->kw, "momentum", 0.0) <= 0.0 ||
      mt_kw_float(call->kw, "dampening", 0.0) != 0.0)
    return mt_cpu_sgd(call, err); /* SGD-4's refusals stay */
  if (call->n_in == 3 && call->in[1]->kind != call->in[2]->kind)
    return mt_cpu_sgd(call, err); /* SGD-3's refusals of sparse + dense stay */
  return mt__mutant_call_kw(call, err, mt_cpu_sgd, "nesterov", 0.0, 1);
}

static const mt_kernel_fn kernels[MT_OP__END] = {
#include "cpu_slots.h"
    [MT_OP_sgd] = mutant_sgd,
};
MT_MUTANT_ENTRY("sgd_nesterov_ignored", kernels)

/* sgd_nesterov_dampening_accepted.c - breaks SGD-4: Nesterov momentum with
 * a nonzero dampening is accepted (the dampening silently dropped), where
 * torch's SGD.__init__ raises "Nesterov momentum requires a momentum and
 * zero dampening". */
#include "mutant.h"

static mt_status mutant_sgd(mt_call *call, mt_error *err) {
  if (mt_kw_float(call->kw, "nesterov", 0.0) == 0.0 || mt_kw_float(call->kw, "momentum", 0.0) <= 0.0 ||
      mt_kw_float(call->kw, "dampening", 0.0) == 0.0 || mt_kw_float(call->kw, "lr", 1e-3) < 0.0)
    return mt_cpu_sgd(call, err);
  return mt__mutant_call_kw(call, err, mt_cpu_sgd, "dampening", 0.0, 1);
}

static const mt_kernel_fn kernels[MT_OP__END] = {
#include "cpu_slots.h"
    [MT_OP_sgd] = mutant_sgd,
};
MT_MUTANT_ENTRY("sgd_nesterov_dampening_accepted", kernels)

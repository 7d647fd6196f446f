/* decays_unchecked.c - breaks ADA-5: the dense Adagrad step validates lr and
 * eps but not lr_decay and weight_decay (the two options added to Adagrad
 * after the paper), so negative values are accepted and used where torch
 * raises "Invalid lr_decay value" / "Invalid weight_decay value". */
#include "mutant.h"

static mt_status mutant_adagrad_dense(mt_call *call, mt_error *err) {
  double lr_decay = mt_kw_float(call->kw, "lr_decay", 0.0);
  double wd = mt_kw_float(call->kw, "weight_decay", 0.0);
  double lr = mt_kw_float(call->kw, "lr", 0.01), eps = mt_kw_float(call->kw, "eps", 1e-10);
  if (!(lr >= 0.0) || !(eps >= 0.0) || (lr_decay >= 0.0 && wd >= 0.0))
    return mt_cpu_adagrad_dense(call, err);
  /* let the reference run with the checks passed: the negative value's
   * magnitude as the sign the validator never looked at */
  mt_kwarg items[32];
  mt_kwargs kw = {0, items};
  const mt_kwargs *orig = call->kw;
  for (int k = 0; orig && k < orig->n && kw.n < 32; k++) {
    items[kw.n] = orig->items[k];
    if ((!strcmp(items[kw.n].name, "lr_decay") || !strcmp(items[kw.n].name, "weight_decay")) &&
        items[kw.n].f < 0)
      items[kw.n].f = -items[kw.n].f, items[kw.n].i = -items[kw.n].i;
    kw.n++;
  }
  call->kw = &kw;
  mt_status st = mt_cpu_adagrad_dense(call, err);
  call->kw = orig;
  return st;
}

static const mt_kernel_fn kernels[MT_OP__END] = {
#include "cpu_slots.h"
    [MT_OP_adagrad_dense] = mutant_adagrad_dense,
};
MT_MUTANT_ENTRY("decays_unchecked", kernels)

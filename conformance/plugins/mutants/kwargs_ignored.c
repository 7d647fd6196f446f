/* kwargs_ignored.c - breaks BIN-7: binary ops ignore keyword arguments
 * (alpha, rounding_mode) and compute the plain op, where torch.masked
 * refuses any kwarg ("len(kwargs) must equal 0"). A wrapper that forwards
 * only the positional operands does this. */
#include "mutant.h"

static mt_status no_kw(mt_call *call, mt_error *err, mt_kernel_fn real) {
  /* masked operands only: plain sparse add takes alpha (SPP-2) */
  int masked = 0;
  for (int k = 0; k < call->n_in; k++) masked |= call->in[k] && call->in[k]->kind == MT_KIND_MASKED;
  if (!masked) return real(call, err);
  const mt_kwargs *kw = call->kw;
  call->kw = NULL;
  mt_status st = real(call, err);
  call->kw = kw;
  return st;
}
static mt_status mutant_add(mt_call *c, mt_error *e) { return no_kw(c, e, mt_cpu_add); }
static mt_status mutant_div(mt_call *c, mt_error *e) { return no_kw(c, e, mt_cpu_div); }

static const mt_kernel_fn kernels[MT_OP__END] = {
#include "cpu_slots.h"
    [MT_OP_add] = mutant_add,
    [MT_OP_div] = mutant_div,
};
MT_MUTANT_ENTRY("kwargs_ignored", kernels)

/* reflected_swapped.c - breaks MASK-7: plain tensor - masked and plain
 * tensor / masked compute masked - plain and masked / plain: the reflected
 * operators (__rsub__, __rtruediv__) forward to the forward ones without
 * swapping the operands, a classic slip when a tensor subclass defines its
 * reflected operators. */
#include "mutant.h"

static mt_status swapped(mt_call *call, mt_error *err, mt_kernel_fn real) {
  if (call->n_in != 2 || call->in[0]->kind != MT_KIND_DENSE || call->in[1]->kind != MT_KIND_MASKED)
    return real(call, err);
  const mt_tensor *in[2] = {call->in[1], call->in[0]};
  const mt_tensor *const *orig = call->in;
  call->in = in;
  mt_status st = real(call, err);
  call->in = orig;
  return st;
}
static mt_status mutant_sub(mt_call *c, mt_error *e) { return swapped(c, e, mt_cpu_sub); }
static mt_status mutant_div(mt_call *c, mt_error *e) { return swapped(c, e, mt_cpu_div); }

static const mt_kernel_fn kernels[MT_OP__END] = {
#include "cpu_slots.h"
    [MT_OP_sub] = mutant_sub, [MT_OP_div] = mutant_div,
};
MT_MUTANT_ENTRY("reflected_swapped", kernels)

/* keepdim_ignored.c - breaks RED-2: keepdim=True is ignored (the kwarg is
 * dropped on the way to the kernel, as a wrapper forwarding only `dim`
 * does), so the reduced dims vanish from the output shape. Masked inputs
 * only: a plain sparse input's sum is SPS-3's (one rule per mutant). */
#include "mutant.h"

#define MUTANT(op)                                                          \
  static mt_status mutant_##op(mt_call *c, mt_error *e) {                  \
    if (c->n_in > 0 && c->in && c->in[0] && c->in[0]->kind != MT_KIND_MASKED) \
      return mt_cpu_##op(c, e);                                             \
    return mt__mutant_call_kw(c, e, mt_cpu_##op, "keepdim", 0.0, 1);        \
  }
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
MT_MUTANT_ENTRY("keepdim_ignored", kernels)

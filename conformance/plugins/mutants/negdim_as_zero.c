/* negdim_as_zero.c - breaks RED-2: a negative `dim` is clamped to 0
 * (max(dim, 0), where it should count from the end: dim + ndim), so
 * sum(m, -1) reduces the first dim instead of the last. Masked inputs
 * only: a plain sparse input's sum is SPS-3's (one rule per mutant). */
#include "mutant.h"

static mt_status clamp_dim(mt_call *call, mt_error *err, mt_kernel_fn real) {
  const mt_kwarg *a = mt_kw_find(call->kw, "dim");
  if (!a || a->type != MT_KW_INT || a->i >= 0) return real(call, err);
  if (call->n_in > 0 && call->in && call->in[0] && call->in[0]->kind != MT_KIND_MASKED)
    return real(call, err);
  mt_kwarg items[32];
  mt_kwargs kw = {0, items};
  const mt_kwargs *orig = call->kw;
  if (orig->n > 32) return real(call, err);
  for (int k = 0; k < orig->n; k++) {
    items[kw.n] = orig->items[k];
    if (strcmp(items[kw.n].name, "dim") == 0) items[kw.n].i = 0, items[kw.n].f = 0.0;
    kw.n++;
  }
  call->kw = &kw;
  mt_status st = real(call, err);
  call->kw = orig;
  return st;
}

#define MUTANT(op) \
  static mt_status mutant_##op(mt_call *c, mt_error *e) { return clamp_dim(c, e, mt_cpu_##op); }
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
MT_MUTANT_ENTRY("negdim_as_zero", kernels)

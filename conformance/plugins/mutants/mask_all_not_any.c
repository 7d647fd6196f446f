/* mask_all_not_any.c - breaks RED-2: the output mask of a reduction over
 * dims is all() of the input mask over the reduced dims instead of any():
 * an output is specified only when every element it reduces is, as in
 * pandas' skipna=False or a library that ANDs masks the way numpy.ma ORs
 * its "masked" flags. */
#include "mutant.h"

static void invert(double *v, uint8_t *m) {
  (void)v;
  *m = !*m;
}
/* all(mask) = !any(!mask): B's mask is any(!mask) over the reduced dims. */
static mt_status mask_all(mt_call *call, mt_error *err, mt_kernel_fn real) {
  const mt_tensor *x = call->n_in > 0 ? call->in[0] : NULL;
  if (mt__mutant_all_reduce(call) || !mt__mutant_dense_masked(x)) return real(call, err);
  mt_status st = real(call, err);
  if (st != MT_OK || !mt__mutant_dense_masked(call->out[0])) return st;
  const mt_host *h = call->host ? call->host : mt_host_default();
  mt_tensor *a = call->out[0], *m = NULL;
  if ((st = mt_tensor_clone(x->mask, &m, err)) != MT_OK) goto fail;
  for (int64_t i = 0; i < mt_numel(m); i++) {
    double unused = 0.0;
    invert(&unused, (uint8_t *)m->values + i);
  }
  mt_tensor view = *x;
  view.mask = m;
  view.owner = NULL;
  call->out[0] = NULL;
  st = mt__mutant_call_in(call, err, real, 0, &view);
  mt_tensor_free(m);
  if (st != MT_OK) goto fail;
  uint8_t *am = a->mask->values;
  const uint8_t *bm = call->out[0]->mask->values;
  for (int64_t i = 0; i < mt_numel(a->mask); i++) am[i] = am[i] && !bm[i];
  h->free(call->out[0]);
  call->out[0] = a;
  call->n_out = 1;
  return MT_OK;
fail:
  h->free(a);
  call->out[0] = NULL;
  call->n_out = 0;
  return st;
}

#define MUTANT(op) \
  static mt_status mutant_##op(mt_call *c, mt_error *e) { return mask_all(c, e, mt_cpu_##op); }
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
MT_MUTANT_ENTRY("mask_all_not_any", kernels)

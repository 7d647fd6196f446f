/* digamma_pole_nan.c - breaks UN-3: digamma(+-0) is NaN (a reflection
 * formula applied at the pole, or "undefined" taken literally), where torch
 * follows C's convention for gamma functions: digamma(+0) = -inf,
 * digamma(-0) = +inf. */
#include "mutant.h"

static mt_status mutant_digamma(mt_call *call, mt_error *err) {
  mt_status st = mt_cpu_digamma(call, err);
  const mt_tensor *x = call->n_in > 0 ? call->in[0] : NULL;
  if (st != MT_OK || !mt__mutant_dense_masked(x) || !mt__mutant_dense_masked(call->out[0]))
    return st;
  mt_tensor *o = call->out[0]->data;
  for (int64_t i = 0; i < mt_numel(o); i++)
    if (mt_dense_get(x->data, i) == 0.0) mt_set_f64(o->values, o->dtype, i, NAN);
  return MT_OK;
}

static const mt_kernel_fn kernels[MT_OP__END] = {
#include "cpu_slots.h"
    [MT_OP_digamma] = mutant_digamma,
};
MT_MUTANT_ENTRY("digamma_pole_nan", kernels)

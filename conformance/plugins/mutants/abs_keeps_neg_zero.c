/* abs_keeps_neg_zero.c - breaks MASK-4: abs is x < 0 ? -x : x (the textbook
 * branch instead of clearing the sign bit, fabs), so abs(-0.0) stays -0.0
 * where torch gives +0.0. Only a golden holding a signed zero under an
 * exact tolerance shows it. */
#include "mutant.h"

static mt_status mutant_abs(mt_call *call, mt_error *err) {
  mt_status st = mt_cpu_abs(call, err);
  if (st != MT_OK || !mt__mutant_dense_masked(call->out[0]) || !mt__mutant_dense_masked(call->in[0]))
    return st;
  const mt_tensor *x = call->in[0]->data;
  mt_tensor *o = call->out[0]->data;
  for (int64_t i = 0; i < mt_numel(o); i++) {
    double v = mt_dense_get(x, i);
    mt_set_f64(o->values, o->dtype, i, v < 0 ? -v : v);
  }
  return MT_OK;
}

static const mt_kernel_fn kernels[MT_OP__END] = {
#include "cpu_slots.h"
    [MT_OP_abs] = mutant_abs,
};
MT_MUTANT_ENTRY("abs_keeps_neg_zero", kernels)

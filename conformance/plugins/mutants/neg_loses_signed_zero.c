/* neg_loses_signed_zero.c - breaks MASK-4: neg is computed as 0 - x (a
 * subtraction kernel reused for negation), so neg(+0.0) is +0.0 instead
 * of -0.0. Only a golden holding a signed zero under an exact tolerance
 * shows it. */
#include "mutant.h"

static mt_status mutant_neg(mt_call *call, mt_error *err) {
  mt_status st = mt_cpu_neg(call, err);
  if (st != MT_OK || !mt__mutant_dense_masked(call->out[0])) return st;
  mt_tensor *o = call->out[0]->data;
  for (int64_t i = 0; i < mt_numel(o); i++) /* -x is 0 - x except for the sign of 0 */
    if (mt_get_f64(o->values, o->dtype, i) == 0.0) mt_set_f64(o->values, o->dtype, i, 0.0);
  return MT_OK;
}

static const mt_kernel_fn kernels[MT_OP__END] = {
#include "cpu_slots.h"
    [MT_OP_neg] = mutant_neg,
};
MT_MUTANT_ENTRY("neg_loses_signed_zero", kernels)

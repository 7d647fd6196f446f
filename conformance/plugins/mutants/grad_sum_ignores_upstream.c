/* grad_sum_ignores_upstream: sum's backward returns ones under the input's
 * mask, as if the upstream gradient were always 1 (what `sum(m).backward()`
 * happens to give): breaks GRAD-2, the specified gradient is torch's formula
 * on the upstream gradient. */
#include "mutant.h"

static mt_status mutant_grad_sum(mt_call *call, mt_error *err) {
  mt_status st = mt_cpu_grad_sum(call, err);
  if (st != MT_OK || !mt__mutant_dense_masked(call->out[0])) return st;
  mt_tensor *d = call->out[0]->data;
  for (int64_t i = 0; i < mt_numel(d); i++) mt_set_f64(d->values, d->dtype, i, 1.0);
  return MT_OK;
}

static const mt_kernel_fn backward[MT_OP__END] = {
#include "grad_slots.h"
    [MT_OP_sum] = mutant_grad_sum,
};
MT_MUTANT_GRAD_ENTRY("grad_sum_ignores_upstream", backward)

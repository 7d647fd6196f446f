/* grad_mask_all_specified: sum's backward gives a gradient whose mask is all
 * true (a dense gradient dressed as a MaskedTensor): breaks GRAD-1, a
 * MaskedTensor input's gradient carries the input's mask. */
#include "mutant.h"

static mt_status mutant_grad_sum(mt_call *call, mt_error *err) {
  mt_status st = mt_cpu_grad_sum(call, err);
  if (st != MT_OK || !mt__mutant_dense_masked(call->out[0])) return st;
  mt_tensor *m = call->out[0]->mask;
  memset(m->values, 1, (size_t)mt_numel(m));
  return MT_OK;
}

static const mt_kernel_fn backward[MT_OP__END] = {
#include "grad_slots.h"
    [MT_OP_sum] = mutant_grad_sum,
};
MT_MUTANT_GRAD_ENTRY("grad_mask_all_specified", backward)

/* masked_softmax_no_fill.c - breaks MFN-5: masked.softmax ignores the mask
 * and normalizes over every element of the slice (as if mask=None), the
 * mistake of calling the plain softmax on the data: masked-out outputs are
 * not 0, fully masked rows are not NaN, and the poison stored under the
 * mask (+inf, 1e30) takes over the row. */
#include "mutant.h"

static mt_status mutant_softmax(mt_call *call, mt_error *err) {
  int n = call->n_in;
  if (n == 2) call->n_in = 1; /* drop the mask */
  mt_status st = mt_cpu_masked_softmax(call, err);
  call->n_in = n;
  return st;
}

static const mt_kernel_fn kernels[MT_OP__END] = {
#include "cpu_slots.h"
    [MT_OP_masked_softmax] = mutant_softmax,
};
MT_MUTANT_ENTRY("masked_softmax_no_fill", kernels)

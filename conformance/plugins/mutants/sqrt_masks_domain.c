/* sqrt_masks_domain.c - breaks MASK-5: sqrt masks out its domain errors
 * (x < 0), as np.ma.sqrt does, where torch keeps NaN specified. */
#include "mutant.h"

static mt_status mutant_sqrt(mt_call *call, mt_error *err) {
  mt_status st = mt_cpu_sqrt(call, err);
  if (st != MT_OK || !mt__mutant_dense_masked(call->out[0]) || !mt__mutant_dense_masked(call->in[0]))
    return st;
  const mt_tensor *x = call->in[0]->data;
  uint8_t *m = call->out[0]->mask->values;
  for (int64_t i = 0; i < mt_numel(x); i++)
    if (m[i] && mt_dense_get(x, i) < 0) m[i] = 0;
  return MT_OK;
}

static const mt_kernel_fn kernels[MT_OP__END] = {
#include "cpu_slots.h"
    [MT_OP_sqrt] = mutant_sqrt,
};
MT_MUTANT_ENTRY("sqrt_masks_domain", kernels)

/* log_masks_domain.c - breaks MASK-5: log masks out its domain errors
 * (x <= 0), as np.ma.log does, where torch keeps -inf and NaN masked in. */
#include "mutant.h"

static mt_status mutant_log(mt_call *call, mt_error *err) {
  mt_status st = mt_cpu_log(call, err);
  if (st != MT_OK || !mt__mutant_dense_masked(call->out[0]) || call->in[0]->kind != MT_KIND_MASKED)
    return st;
  const mt_tensor *x = call->in[0]->data;
  uint8_t *m = call->out[0]->mask->values;
  for (int64_t i = 0; i < mt_numel(x); i++)
    if (m[i] && !(mt_dense_get(x, i) > 0)) m[i] = 0;
  return MT_OK;
}

static const mt_kernel_fn kernels[MT_OP__END] = {
#include "cpu_slots.h"
    [MT_OP_log] = mutant_log,
};
MT_MUTANT_ENTRY("log_masks_domain", kernels)

/* div_masks_zero.c - breaks MASK-6: masked / masked masks out every element
 * whose divisor is zero, as np.ma.divide does (its domain check), where
 * torch keeps inf / -inf / NaN specified. (np.ma does it for plain
 * divisors too; this mutant breaks only the masked / masked form, MASK-6,
 * so that every case it fails blames that one rule.) */
#include "mutant.h"

static mt_status mutant_div(mt_call *call, mt_error *err) {
  mt_status st = mt_cpu_div(call, err);
  if (st != MT_OK || call->n_in < 2 || !mt__mutant_dense_masked(call->out[0]) ||
      call->in[0]->kind != MT_KIND_MASKED || call->in[1]->kind != MT_KIND_MASKED)
    return st;
  const mt_tensor *b = call->in[1];
  uint8_t *m = call->out[0]->mask->values;
  int64_t n = mt_numel(call->out[0]->data);
  for (int64_t i = 0; i < n; i++)
    if (mt_dense_get(b->data, i) == 0.0) m[i] = 0;
  return MT_OK;
}

static const mt_kernel_fn kernels[MT_OP__END] = {
#include "cpu_slots.h"
    [MT_OP_div] = mutant_div,
};
MT_MUTANT_ENTRY("div_masks_zero", kernels)

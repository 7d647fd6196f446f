/* float_mask_accepted.c - breaks MASK-2: masked_tensor accepts a float mask
 * and converts it (non-zero = specified), as np.ma.array converts any mask
 * to bool, where torch raises TypeError "mask must have dtype bool". */
#include "mutant.h"

static mt_status mutant_masked_tensor(mt_call *call, mt_error *err) {
  const mt_tensor *mask = call->n_in > 1 ? call->in[1] : NULL;
  if (!mask || mask->kind != MT_KIND_DENSE || mask->dtype == MT_bool ||
      (mask->dtype != MT_float32 && mask->dtype != MT_float64))
    return mt_cpu_masked_tensor(call, err);
  mt_tensor *b = NULL;
  mt_status st = mt_dense_new(MT_bool, mask->ndim, mask->shape, &b, err);
  if (st != MT_OK) return st;
  for (int64_t i = 0; i < mt_numel(mask); i++)
    ((uint8_t *)b->values)[i] = mt_dense_get(mask, i) != 0.0;
  st = mt__mutant_call_in(call, err, mt_cpu_masked_tensor, 1, b);
  mt_tensor_free(b);
  return st;
}

static const mt_kernel_fn kernels[MT_OP__END] = {
#include "cpu_slots.h"
    [MT_OP_masked_tensor] = mutant_masked_tensor,
};
MT_MUTANT_ENTRY("float_mask_accepted", kernels)

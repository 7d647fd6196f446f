/* npma_idiv_masks_nonfinite.c - breaks NPMA-22: numpy_ma's div_ masks every
 * non-finite quotient, as np.ma.divide does (a port that implements a /= b
 * as a = np.ma.divide(a, b)), where MaskedArray.__itruediv__ masks only the
 * domain |a| * tiny >= |b|: 1e300 / 1e-10 = inf stays specified. */
#include "npma_mutant.h"

static mt_status mask_nonfinite(mt_call *call, mt_error *err,
                                mt_status (*kernel)(mt_call *, mt_error *)) {
  mt_status st = kernel(call, err);
  if (st != MT_OK || !mt__mutant_dense_masked(call->out[0])) return st;
  mt_tensor *o = call->out[0];
  for (int64_t i = 0; i < mt_numel(o->data); i++)
    if (!isfinite(mt_get_f64(o->data->values, o->data->dtype, i)))
      ((uint8_t *)o->mask->values)[i] = 0;
  return MT_OK;
}

static mt_status mutant_div_(mt_call *call, mt_error *err) {
  return mask_nonfinite(call, err, mt_npma_div_);
}

static const mt_kernel_fn npma[MT_OP__END] = {
#include "npma_slots.h"
    [MT_OP_div_] = mutant_div_,
};
MT_NPMA_MUTANT_ENTRY("npma_idiv_masks_nonfinite", npma)

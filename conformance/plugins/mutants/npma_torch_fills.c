/* npma_torch_fills.c - breaks NPMA-7: numpy_ma's amin/amax leave torch's
 * fills (+inf for amin, -inf for amax: RED-3) under fully masked outputs of
 * a reduction over dims, where numpy.ma leaves its fill_value (1e20, 999999,
 * True): a library that implements both profiles with one reduction kernel
 * and changes only the masks. */
#include "npma_mutant.h"

static mt_status torch_fill(mt_call *call, mt_error *err, mt_kernel_fn real, double fill) {
  mt_status st = real(call, err);
  if (st != MT_OK || !mt__mutant_dense_masked(call->out[0]) || mt__mutant_all_reduce(call))
    return st;
  mt_tensor *o = call->out[0];
  if (!mt_dtype_is_float(o->data->dtype)) return st;
  const uint8_t *m = o->mask->values;
  for (int64_t i = 0; i < mt_numel(o->data); i++)
    if (!m[i]) mt_set_f64(o->data->values, o->data->dtype, i, fill);
  return MT_OK;
}
static mt_status mutant_amin(mt_call *c, mt_error *e) {
  return torch_fill(c, e, mt_npma_amin, INFINITY);
}
static mt_status mutant_amax(mt_call *c, mt_error *e) {
  return torch_fill(c, e, mt_npma_amax, -INFINITY);
}

static const mt_kernel_fn npma[MT_OP__END] = {
#include "npma_slots.h"
    [MT_OP_amin] = mutant_amin, [MT_OP_amax] = mutant_amax,
};
MT_NPMA_MUTANT_ENTRY("npma_torch_fills", npma)

/* npma_ipow_keeps_overflow.c - breaks NPMA-23: numpy_ma's pow_ leaves a
 * non-finite power specified (1e30 ** 2 = inf in float32), as torch's
 * pow_ does, where MaskedArray.__ipow__ masks every non-finite element and
 * stores fill_value there. */
#include <math.h>

#include "npma_mutant.h"

static mt_status mutant_pow_(mt_call *call, mt_error *err) {
  mt_status st = mt_npma_pow_(call, err);
  if (st != MT_OK || call->n_in != 2 || !mt__mutant_dense_masked(call->in[0]) ||
      !mt__mutant_dense_masked(call->out[0]) || call->in[1]->kind != MT_KIND_SCALAR)
    return st;
  const mt_tensor *a = call->in[0], *b = call->in[1];
  mt_tensor *o = call->out[0];
  if (o->data->dtype != MT_float32 && o->data->dtype != MT_float64) return st;
  double e = mt_get_f64(b->values, b->dtype, 0);
  for (int64_t i = 0; i < mt_numel(o->data); i++) {
    if (!((const uint8_t *)a->mask->values)[i]) continue;
    double p = pow(mt_get_f64(a->data->values, a->data->dtype, i), e);
    if (o->data->dtype == MT_float32 ? isfinite((float)p) : isfinite(p)) continue;
    mt_set_f64(o->data->values, o->data->dtype, i, p);
    ((uint8_t *)o->mask->values)[i] = 1;
  }
  return MT_OK;
}

static const mt_kernel_fn npma[MT_OP__END] = {
#include "npma_slots.h"
    [MT_OP_pow_] = mutant_pow_,
};
MT_NPMA_MUTANT_ENTRY("npma_ipow_keeps_overflow", npma)

/* npma_angle_neg_zero.c - breaks NPMA-21: numpy_ma's angle gives 0 for
 * -0.0, as `where(x < 0, pi, 0)` does (torch's angle of a real tensor),
 * where np.ma.angle is arctan2(0, x) and arctan2(0, -0.0) = pi. */
#include "npma_mutant.h"

static mt_status mutant_angle(mt_call *call, mt_error *err) {
  mt_status st = mt_npma_angle(call, err);
  if (st != MT_OK || !mt__mutant_dense_masked(call->in[0]) ||
      !mt__mutant_dense_masked(call->out[0]))
    return st;
  const mt_tensor *x = call->in[0]->data;
  mt_tensor *o = call->out[0]->data;
  if (mt_numel(x) != mt_numel(o) || (x->dtype != MT_float32 && x->dtype != MT_float64)) return st;
  for (int64_t i = 0; i < mt_numel(o); i++) {
    double v = mt_get_f64(x->values, x->dtype, i);
    if (v == 0.0 && signbit(v) && ((const uint8_t *)call->in[0]->mask->values)[i])
      mt_set_f64(o->values, o->dtype, i, 0.0);
  }
  return MT_OK;
}

static const mt_kernel_fn npma[MT_OP__END] = {
#include "npma_slots.h"
    [MT_OP_angle] = mutant_angle,
};
MT_NPMA_MUTANT_ENTRY("npma_angle_neg_zero", npma)

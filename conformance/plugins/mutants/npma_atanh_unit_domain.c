/* npma_atanh_unit_domain.c - breaks NPMA-8: numpy_ma's arctanh masks only
 * |x| >= 1 (the mathematical domain, as a port that drops numpy.ma's
 * 1e-15 tolerance would), where np.ma.arctanh masks x outside
 * [-1 + 1e-15, 1 - 1e-15]: float64's 0.9999999999999995 becomes a
 * specified 17.6. */
#include "npma_mutant.h"

static mt_status unit_domain(mt_call *call, mt_error *err,
                             mt_status (*kernel)(mt_call *, mt_error *)) {
  mt_status st = kernel(call, err);
  const mt_tensor *x = call->n_in > 0 ? call->in[0] : NULL;
  if (st != MT_OK || !mt__mutant_dense_masked(call->out[0]) || !mt__mutant_dense_masked(x))
    return st;
  mt_tensor *o = call->out[0];
  const uint8_t *xm = x->mask->values;
  uint8_t *om = o->mask->values;
  for (int64_t i = 0; i < mt_numel(o->data); i++) {
    if (!xm[i] || om[i]) continue;
    double v = mt_get_f64(x->data->values, x->data->dtype, i);
    if (!(fabs(v) < 1.0)) continue;
    om[i] = 1;
    mt_set_f64(o->data->values, o->data->dtype, i,
               o->data->dtype == MT_float64 ? atanh(v) : (double)atanhf((float)v));
  }
  return MT_OK;
}

static mt_status mutant_arctanh(mt_call *call, mt_error *err) {
  return unit_domain(call, err, mt_npma_arctanh);
}
static mt_status mutant_atanh(mt_call *call, mt_error *err) {
  return unit_domain(call, err, mt_npma_atanh);
}

static const mt_kernel_fn npma[MT_OP__END] = {
#include "npma_slots.h"
    [MT_OP_arctanh] = mutant_arctanh,
    [MT_OP_atanh] = mutant_atanh,
};
MT_NPMA_MUTANT_ENTRY("npma_atanh_unit_domain", npma)

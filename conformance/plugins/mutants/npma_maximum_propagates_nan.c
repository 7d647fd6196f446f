/* npma_maximum_propagates_nan.c - breaks NPMA-11: numpy_ma's maximum and
 * minimum propagate a NaN from either operand, as np.maximum (and torch)
 * do, where np.ma.maximum is where(a > b, a, b): a NaN in a loses
 * (maximum(NaN, 1) = 1). A port that calls the plain ufunc. */
#include "npma_mutant.h"

static mt_status nan_wins(mt_call *call, mt_error *err,
                          mt_status (*kernel)(mt_call *, mt_error *)) {
  mt_status st = kernel(call, err);
  if (st != MT_OK || call->n_in < 2 || !mt__mutant_dense_masked(call->out[0]) ||
      !mt__mutant_dense_masked(call->in[0]) || !mt__mutant_dense_masked(call->in[1]))
    return st;
  mt_tensor *o = call->out[0];
  const mt_tensor *a = call->in[0]->data, *b = call->in[1]->data;
  if (mt_numel(a) != mt_numel(o->data) || mt_numel(b) != mt_numel(o->data)) return st;
  for (int64_t i = 0; i < mt_numel(o->data); i++) {
    double x = mt_get_f64(a->values, a->dtype, i), y = mt_get_f64(b->values, b->dtype, i);
    if (isnan(x) || isnan(y)) mt_set_f64(o->data->values, o->data->dtype, i, NAN);
  }
  return MT_OK;
}

static mt_status mutant_maximum(mt_call *call, mt_error *err) {
  return nan_wins(call, err, mt_npma_maximum);
}
static mt_status mutant_minimum(mt_call *call, mt_error *err) {
  return nan_wins(call, err, mt_npma_minimum);
}

static const mt_kernel_fn npma[MT_OP__END] = {
#include "npma_slots.h"
    [MT_OP_maximum] = mutant_maximum,
    [MT_OP_minimum] = mutant_minimum,
};
MT_NPMA_MUTANT_ENTRY("npma_maximum_propagates_nan", npma)

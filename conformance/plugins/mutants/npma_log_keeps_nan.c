/* npma_log_keeps_nan.c - breaks NPMA-3: numpy_ma's log keeps its domain
 * errors specified as torch does (log(0) = -inf, log(-1) = NaN, log(inf) =
 * inf masked in), where np.ma.log masks x <= 0 and every non-finite result:
 * a numpy.ma clone built on torch's kernels. */
#include "npma_mutant.h"

static mt_status mutant_log(mt_call *call, mt_error *err) {
  mt_status st = mt_npma_log(call, err);
  const mt_tensor *x = call->n_in > 0 ? call->in[0] : NULL;
  if (st != MT_OK || !mt__mutant_dense_masked(call->out[0]) || !mt__mutant_dense_masked(x))
    return st;
  mt_tensor *o = call->out[0];
  const uint8_t *xm = x->mask->values;
  uint8_t *om = o->mask->values;
  for (int64_t i = 0; i < mt_numel(o->data); i++) {
    if (!xm[i] || om[i]) continue;
    double v = mt_get_f64(x->data->values, x->data->dtype, i);
    om[i] = 1;
    mt_set_f64(o->data->values, o->data->dtype, i,
               o->data->dtype == MT_float64 ? log(v) : (double)logf((float)v));
  }
  return MT_OK;
}

static const mt_kernel_fn npma[MT_OP__END] = {
#include "npma_slots.h"
    [MT_OP_log] = mutant_log,
};
MT_NPMA_MUTANT_ENTRY("npma_log_keeps_nan", npma)

/* numpy_ma_fills.c - breaks RED-3: fully masked outputs hold numpy.ma's data
 * instead of torch's fill: amin holds the default fill value 1e20 (not
 * +inf) and mean holds 0 (not NaN), as np.ma.min / np.ma.mean leave them;
 * a library built on numpy.ma inherits both. */
#include "mutant.h"

static mt_status np_fill(mt_call *call, mt_error *err, mt_kernel_fn real, double fill) {
  mt_status st = real(call, err);
  if (st != MT_OK || !mt__mutant_dense_masked(call->out[0])) return st;
  mt_tensor *o = call->out[0];
  const uint8_t *m = o->mask->values;
  for (int64_t i = 0; i < mt_numel(o->data); i++)
    if (!m[i]) mt_set_f64(o->data->values, o->data->dtype, i, fill);
  return MT_OK;
}
static mt_status mutant_amin(mt_call *c, mt_error *e) { return np_fill(c, e, mt_cpu_amin, 1e20); }
static mt_status mutant_mean(mt_call *c, mt_error *e) { return np_fill(c, e, mt_cpu_mean, 0.0); }

static const mt_kernel_fn kernels[MT_OP__END] = {
#include "cpu_slots.h"
    [MT_OP_amin] = mutant_amin, [MT_OP_mean] = mutant_mean,
};
MT_MUTANT_ENTRY("numpy_ma_fills", kernels)

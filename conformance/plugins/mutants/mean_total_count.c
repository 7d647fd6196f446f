/* mean_total_count.c - breaks RED-1: the all-reduce mean divides the masked
 * sum by the total element count (numel) instead of the number of specified
 * elements, i.e. sum(where(mask, data, 0)) / data.numel(): every mean with
 * a masked-out element is too small, and a fully masked mean is 0, not NaN. */
#include "mutant.h"

static mt_status mutant_mean(mt_call *call, mt_error *err) {
  const mt_tensor *x = call->n_in > 0 ? call->in[0] : NULL;
  mt_status st = mt_cpu_mean(call, err);
  if (st != MT_OK || !mt__mutant_all_dense(call, x)) return st;
  mt_tensor *o = call->out[0];
  const uint8_t *m = x->mask->values;
  double sum = 0.0;
  int64_t n = mt_numel(x);
  for (int64_t i = 0; i < n; i++)
    if (m[i]) sum += mt_get_f64(x->data->values, x->data->dtype, i);
  mt_set_f64(o->data->values, o->data->dtype, 0, sum / (double)n);
  return MT_OK;
}

static const mt_kernel_fn kernels[MT_OP__END] = {
#include "cpu_slots.h"
    [MT_OP_mean] = mutant_mean,
};
MT_MUTANT_ENTRY("mean_total_count", kernels)

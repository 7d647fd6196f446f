/* f64_sum_in_float.c - breaks RED-1: the all-reduce sum and mean of float64
 * data accumulate in float (a kernel templated on float only, or a GPU-style
 * float accumulator) instead of double, so results carry float's 7 digits. */
#include "mutant.h"

static mt_status float_acc(mt_call *call, mt_error *err, mt_kernel_fn real, int mean) {
  const mt_tensor *x = call->n_in > 0 ? call->in[0] : NULL;
  mt_status st = real(call, err);
  if (st != MT_OK || !mt__mutant_all_dense(call, x) || x->data->dtype != MT_float64) return st;
  const uint8_t *m = x->mask->values;
  float acc = 0.0f;
  int64_t count = 0;
  for (int64_t i = 0; i < mt_numel(x); i++)
    if (m[i]) {
      acc += (float)mt_get_f64(x->data->values, MT_float64, i);
      count++;
    }
  if (count) mt_set_f64(call->out[0]->data->values, MT_float64, 0, mean ? acc / (float)count : acc);
  return MT_OK;
}
static mt_status mutant_sum(mt_call *c, mt_error *e) { return float_acc(c, e, mt_cpu_sum, 0); }
static mt_status mutant_mean(mt_call *c, mt_error *e) { return float_acc(c, e, mt_cpu_mean, 1); }

static const mt_kernel_fn kernels[MT_OP__END] = {
#include "cpu_slots.h"
    [MT_OP_sum] = mutant_sum, [MT_OP_mean] = mutant_mean,
};
MT_MUTANT_ENTRY("f64_sum_in_float", kernels)

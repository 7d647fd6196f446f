/* int_sum_overflows.c - breaks RED-7: sum of int8/int32 data accumulates at
 * the input's width (a C loop `int8_t acc += x[i]`, numpy's sum with
 * dtype=x.dtype) and only then widens to int64, so sums beyond the input
 * range wrap (int8: 100 + 100 + 100 = 44) where torch promotes to int64
 * first (300). */
#include "mutant.h"

static mt_status mutant_sum(mt_call *call, mt_error *err) {
  const mt_tensor *x = call->n_in > 0 ? call->in[0] : NULL;
  mt_status st = mt_cpu_sum(call, err);
  if (st != MT_OK || !mt__mutant_dense_masked(x) || !mt__mutant_dense_masked(call->out[0]))
    return st;
  mt_dtype dt = x->data->dtype;
  mt_tensor *o = call->out[0];
  if ((dt != MT_int8 && dt != MT_int32) || o->data->dtype != MT_int64) return st;
  int64_t *v = o->data->values; /* int64 output */
  for (int64_t k = 0; k < mt_numel(o->data); k++)
    v[k] = dt == MT_int8 ? (int64_t)(int8_t)(uint8_t)(uint64_t)v[k]
                         : (int64_t)(int32_t)(uint32_t)(uint64_t)v[k];
  return st;
}

static const mt_kernel_fn kernels[MT_OP__END] = {
#include "cpu_slots.h"
    [MT_OP_sum] = mutant_sum,
};
MT_MUTANT_ENTRY("int_sum_overflows", kernels)

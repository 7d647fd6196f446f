/* masked_sum_keeps_int_dtype.c - breaks MFN-7: masked.sum of an integer or
 * bool input returns the input's dtype (as a plain reduction "keeps the
 * dtype") instead of torch's int64: int8 sums wrap, bool sums saturate. */
#include "mutant.h"

static mt_status mutant_sum(mt_call *call, mt_error *err) {
  const mt_tensor *x = call->n_in > 0 ? call->in[0] : NULL;
  mt_status st = mt_cpu_masked_sum(call, err);
  if (st != MT_OK || !x || mt_dtype_is_float(x->dtype) || x->dtype == MT_int64) return st;
  const mt_host *h = call->host ? call->host : mt_host_default();
  mt_tensor *o = call->out[0], *t = NULL;
  if ((st = h->dense_new(x->dtype, o->ndim, o->shape, &t, err)) != MT_OK) return st;
  for (int64_t i = 0; i < mt_numel(o); i++) {
    int64_t v = ((const int64_t *)o->values)[i];
    switch (x->dtype) {
    case MT_int32: ((int32_t *)t->values)[i] = (int32_t)(uint32_t)(uint64_t)v; break;
    case MT_int8: ((int8_t *)t->values)[i] = (int8_t)(uint8_t)(uint64_t)v; break;
    case MT_uint8: ((uint8_t *)t->values)[i] = (uint8_t)(uint64_t)v; break;
    default: ((uint8_t *)t->values)[i] = v != 0; break; /* bool */
    }
  }
  h->free(o);
  call->out[0] = t;
  return MT_OK;
}

static const mt_kernel_fn kernels[MT_OP__END] = {
#include "cpu_slots.h"
    [MT_OP_masked_sum] = mutant_sum,
};
MT_MUTANT_ENTRY("masked_sum_keeps_int_dtype", kernels)

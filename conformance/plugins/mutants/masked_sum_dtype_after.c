/* masked_sum_dtype_after.c - breaks MFN-8: masked.sum with dtype= sums in
 * the input's dtype and casts the sum (as masked.amax does), instead of
 * casting the filled input first as torch.sum(..., dtype=) does: float32
 * input with dtype=int64 gives trunc(sum) instead of sum(trunc), float64
 * with dtype=float16 rounds once instead of per element. The plausible
 * slip of a library that treats every dtype= as an output conversion. */
#include "mutant.h"

#include "mt/kwargs.h"

static mt_status mutant_sum(mt_call *call, mt_error *err) {
  const mt_kwarg *dk = mt_kw_find(call->kw, "dtype");
  mt_dtype to;
  if (!dk || mt_kw_dtype_parse(dk->s, &to) != 0) return mt_cpu_masked_sum(call, err);
  mt_status st = mt__mutant_call_kw(call, err, mt_cpu_masked_sum, "dtype", 0.0, 1);
  if (st != MT_OK || call->n_out != 1 || call->out[0]->dtype == to) return st;
  const mt_host *h = call->host ? call->host : mt_host_default();
  mt_tensor *o = call->out[0], *t = NULL;
  if ((st = h->dense_new(to, o->ndim, o->shape, &t, err)) != MT_OK) return st;
  for (int64_t i = 0; i < mt_numel(o); i++)
    mt_set_f64(t->values, to, i, mt_get_f64(o->values, o->dtype, i));
  h->free(o);
  call->out[0] = t;
  return MT_OK;
}

static const mt_kernel_fn kernels[MT_OP__END] = {
#include "cpu_slots.h"
    [MT_OP_masked_sum] = mutant_sum,
};
MT_MUTANT_ENTRY("masked_sum_dtype_after", kernels)

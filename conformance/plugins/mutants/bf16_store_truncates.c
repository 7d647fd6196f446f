/* bf16_store_truncates.c - breaks MFN-7: bfloat16 results are stored by
 * dropping the low 16 bits of the float32 result (truncation toward zero,
 * the cheap float -> bfloat16 conversion of early bfloat16 code and of
 * some accelerators' default mode) instead of rounding to nearest even as
 * torch's c10::BFloat16 does. Computes in float32 as torch does, so the
 * result is at most 1 bfloat16 ulp off: only the exact-tolerance bfloat16
 * cases (masked sum, mean and cumsum) can see it. */
#include "mutant.h"

/* f -> bfloat16 bits by truncation; NaN stays a (quiet) NaN. */
static uint16_t truncate_bf16(float f) {
  uint32_t x;
  memcpy(&x, &f, sizeof x);
  if ((x & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((x >> 16) | 0x0040u);
  return (uint16_t)(x >> 16);
}

/* real() on a float32 copy of a dense bfloat16 input 0, its float32 output
 * truncated to bfloat16; every other call unchanged. */
static mt_status truncating(mt_call *call, mt_error *err, mt_kernel_fn real) {
  const mt_tensor *x = call->n_in > 0 ? call->in[0] : NULL;
  if (!x || x->kind != MT_KIND_DENSE || x->dtype != MT_bfloat16) return real(call, err);
  const mt_host *h = call->host ? call->host : mt_host_default();
  mt_tensor *xf = NULL, *t = NULL;
  mt_status st = h->dense_new(MT_float32, x->ndim, x->shape, &xf, err);
  if (st != MT_OK) return st;
  for (int64_t i = 0; i < mt_numel(x); i++) ((float *)xf->values)[i] = (float)mt_dense_get(x, i);
  st = mt__mutant_call_in(call, err, real, 0, xf);
  if (st != MT_OK) goto out;
  mt_tensor *o = call->out[0];
  if (!o || o->kind != MT_KIND_DENSE || o->dtype != MT_float32 || !mt_is_contiguous(o)) goto out;
  if ((st = h->dense_new(MT_bfloat16, o->ndim, o->shape, &t, err)) != MT_OK) goto out;
  for (int64_t i = 0; i < mt_numel(o); i++)
    ((uint16_t *)t->values)[i] = truncate_bf16(((const float *)o->values)[i]);
  h->free(o);
  call->out[0] = t;
out:
  h->free(xf);
  return st;
}

static mt_status mutant_sum(mt_call *call, mt_error *err) {
  return truncating(call, err, mt_cpu_masked_sum);
}
static mt_status mutant_mean(mt_call *call, mt_error *err) {
  return truncating(call, err, mt_cpu_masked_mean);
}
static mt_status mutant_cumsum(mt_call *call, mt_error *err) {
  return truncating(call, err, mt_cpu_masked_cumsum);
}

static const mt_kernel_fn kernels[MT_OP__END] = {
#include "cpu_slots.h"
    [MT_OP_masked_sum] = mutant_sum,
    [MT_OP_masked_mean] = mutant_mean,
    [MT_OP_masked_cumsum] = mutant_cumsum,
};
MT_MUTANT_ENTRY("bf16_store_truncates", kernels)

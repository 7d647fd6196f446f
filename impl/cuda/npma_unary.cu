/* npma_unary.cu - the numpy_ma profile's unary family on the device: neg
 * .. ceil, pow, pow_, clamp/clip, round, angle, conj_physical of a masked
 * tensor with dense storage (numpy.ma has no other layout). The host plan
 * (checks, numpy's dtype rules, outputs) is impl/cpu/npma_unary.c's
 * (mt__npma_unary_run); this file is its compute: upload the data and
 * mask, one thread per element with common/npma_unary_math.h's
 * mt_npu_elem, download the data and mask. */
#include "common/exec.h"
#include "common/npma_unary_math.h"
#include "cuda_compat.h"

/* what the kernels take by value (cuda_compat.h, MTC_PLAIN_ARG) */
MTC_PLAIN_ARG(mt_npu_par);

MTC_KERNEL void npma_unary_kernel(mt_npu_par p, const void *in, const uint8_t *mask, void *out,
                                  uint8_t *mask_out, int64_t n) {
  MTC_FOR(i, n) mt_npu_elem(&p, in, mask, out, mask_out, i);
}

extern "C" mt_status MTC(npma_unary_exec)(const struct mt_npu_par *p, const void *in,
                                          const uint8_t *mask, void *out, uint8_t *mask_out,
                                          int64_t n, mt_error *err) {
  size_t si = mt_dtype_size(p->in), so = mt_dtype_size(p->out), total = 0;
  mtc_arena a;
  mt_status st;
  if (MTC(arena_add)(&total, n, si) || MTC(arena_add)(&total, n, 1) ||
      MTC(arena_add)(&total, n, so) || MTC(arena_add)(&total, n, 1))
    return mt_err(err, MT_OUT_OF_MEMORY,
                  "npma_unary: %lld elements do not fit one device buffer", (long long)n);
  if ((st = MTC(arena_open)(&a, total, "npma_unary", err)) != MT_OK) return st;
  void *din = MTC(arena_take)(&a, n, si);
  uint8_t *dm = (uint8_t *)MTC(arena_take)(&a, n, 1);
  void *dout = MTC(arena_take)(&a, n, so);
  uint8_t *dmo = (uint8_t *)MTC(arena_take)(&a, n, 1);
  if ((st = MTC(upload)(&a, din, in, (size_t)n * si, err)) != MT_OK ||
      (st = MTC(upload)(&a, dm, mask, (size_t)n, err)) != MT_OK)
    goto out;
  if ((st = MTC_LAUNCH(&a, npma_unary_kernel, n, *p, din, dm, dout, dmo, n)) != MT_OK) goto out;
  if ((st = MTC(download)(&a, out, dout, (size_t)n * so, err)) != MT_OK) goto out;
  st = MTC(download)(&a, mask_out, dmo, (size_t)n, err);
out:
  MTC(arena_close)(&a);
  return st;
}

#define X(name)                                                         \
  extern "C" mt_status MTC(npma_##name)(mt_call * call, mt_error * err) { \
    return mt__npma_unary_run(call, MT_OP_##name, &MTC(exec), err);     \
  }
NPMA_UNARY_OPS(X)
#undef X

/* npma_binary.cu - the numpy_ma profile's binary family on the device: add
 * sub mul div floor_divide remainder fmod atan2 bitwise_* the comparisons
 * maximum minimum and the shifts (their aliases too), and the in-place
 * add_ .. floor_divide_, on masked tensors, plain dense tensors and numbers
 * with numpy's broadcasting. The host plan (checks, numpy's promotion, the
 * broadcast strides, outputs) is impl/cpu/npma_binary.c's
 * (mt__npma_binary_run); this file is its compute: upload both operands'
 * data and masks, one thread per result element with
 * common/npma_binary_math.h's mt_npb_elem, download the data and mask. */
#include "common/exec.h"
#include "common/npma_binary_math.h"
#include "cuda_compat.h"

/* what the kernels take by value (cuda_compat.h, MTC_PLAIN_ARG) */
MTC_PLAIN_ARG(mt_npb_par);

MTC_KERNEL void npma_binary_kernel(mt_npb_par p, const void *a, const uint8_t *ma, const void *b,
                                   const uint8_t *mb, void *out, uint8_t *mask_out, int64_t n) {
  MTC_FOR(i, n) mt_npb_elem(&p, a, ma, b, mb, out, mask_out, i);
}

extern "C" mt_status MTC(npma_binary_exec)(const struct mt_npb_par *p, const void *a, int64_t na,
                                           const uint8_t *ma, const void *b, int64_t nb,
                                           const uint8_t *mb, void *out, uint8_t *mask_out,
                                           int64_t n, mt_error *err) {
  size_t sa = mt_dtype_size(p->a.dt), sb = mt_dtype_size(p->b.dt), so = mt_dtype_size(p->rt);
  size_t total = 0;
  int64_t nma = ma ? na : 0, nmb = mb ? nb : 0;
  mtc_arena ar;
  mt_status st;
  if (MTC(arena_add)(&total, na, sa) || MTC(arena_add)(&total, nma, 1) ||
      MTC(arena_add)(&total, nb, sb) || MTC(arena_add)(&total, nmb, 1) ||
      MTC(arena_add)(&total, n, so) || MTC(arena_add)(&total, n, 1))
    return mt_err(err, MT_OUT_OF_MEMORY,
                  "npma_binary: %lld elements do not fit one device buffer", (long long)n);
  if ((st = MTC(arena_open)(&ar, total, "npma_binary", err)) != MT_OK) return st;
  void *da = MTC(arena_take)(&ar, na, sa);
  uint8_t *dma = ma ? (uint8_t *)MTC(arena_take)(&ar, nma, 1) : NULL;
  void *db = MTC(arena_take)(&ar, nb, sb);
  uint8_t *dmb = mb ? (uint8_t *)MTC(arena_take)(&ar, nmb, 1) : NULL;
  void *dout = MTC(arena_take)(&ar, n, so);
  uint8_t *dmo = (uint8_t *)MTC(arena_take)(&ar, n, 1);
  if ((st = MTC(upload)(&ar, da, a, (size_t)na * sa, err)) != MT_OK ||
      (ma && (st = MTC(upload)(&ar, dma, ma, (size_t)nma, err)) != MT_OK) ||
      (st = MTC(upload)(&ar, db, b, (size_t)nb * sb, err)) != MT_OK ||
      (mb && (st = MTC(upload)(&ar, dmb, mb, (size_t)nmb, err)) != MT_OK))
    goto out;
  if ((st = MTC_LAUNCH(&ar, npma_binary_kernel, n, *p, da, dma, db, dmb, dout, dmo, n)) != MT_OK)
    goto out;
  if ((st = MTC(download)(&ar, out, dout, (size_t)n * so, err)) != MT_OK) goto out;
  st = MTC(download)(&ar, mask_out, dmo, (size_t)n, err);
out:
  MTC(arena_close)(&ar);
  return st;
}

#define X(name)                                                           \
  extern "C" mt_status MTC(npma_##name)(mt_call * call, mt_error * err) { \
    return mt__npma_binary_run(call, MT_OP_##name, &MTC(exec), err);     \
  }
NPMA_BINARY_OPS(X)
#undef X

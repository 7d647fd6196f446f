/* npma_reduce.cu - the numpy_ma profile's reductions on the device: sum
 * mean prod amin amax all argmin argmax var std of a masked tensor with
 * dense storage, every axis form. The host plan (axes, numpy's dtypes and
 * errors, outputs, each output's input elements in row-major order) is
 * impl/cpu/npma_reduce.c's (mt__npma_reduce_run); this file is its
 * compute: one thread per output element running
 * common/npma_reduce_math.h's mt_npr_out over its inputs in the CPU's
 * order, so every sum is the CPU's bit for bit. */
#include "common/exec.h"
#include "common/npma_reduce_math.h"
#include "cuda_compat.h"

/* what the kernels take by value (cuda_compat.h, MTC_PLAIN_ARG) */
MTC_PLAIN_ARG(mt_npr_par);

MTC_KERNEL void npma_reduce_kernel(mt_npr_par p, const void *x, const uint8_t *mask,
                                   const int64_t *off, const int64_t *idx, void *out,
                                   uint8_t *mask_out, int64_t n_grp) {
  MTC_FOR(o, n_grp) mt_npr_out(&p, x, mask, off, idx, out, mask_out, o);
}

extern "C" mt_status MTC(npma_reduce_exec)(const struct mt_npr_par *p, const void *x,
                                           const uint8_t *mask, int64_t n, const int64_t *off,
                                           const int64_t *idx, int64_t n_grp, void *out,
                                           uint8_t *mask_out, mt_error *err) {
  size_t si = mt_dtype_size(p->in), so = mt_dtype_size(p->rt), total = 0;
  int64_t nmo = mask_out ? n_grp : 0;
  mtc_arena a;
  mt_status st;
  if (MTC(arena_add)(&total, n, si) || MTC(arena_add)(&total, n, 1) ||
      MTC(arena_add)(&total, n_grp + 1, sizeof(int64_t)) ||
      MTC(arena_add)(&total, n, sizeof(int64_t)) || MTC(arena_add)(&total, n_grp, so) ||
      MTC(arena_add)(&total, nmo, 1))
    return mt_err(err, MT_OUT_OF_MEMORY,
                  "npma_reduce: %lld elements do not fit one device buffer", (long long)n);
  if ((st = MTC(arena_open)(&a, total, "npma_reduce", err)) != MT_OK) return st;
  void *dx = MTC(arena_take)(&a, n, si);
  uint8_t *dm = (uint8_t *)MTC(arena_take)(&a, n, 1);
  int64_t *doff = (int64_t *)MTC(arena_take)(&a, n_grp + 1, sizeof(int64_t));
  int64_t *didx = (int64_t *)MTC(arena_take)(&a, n, sizeof(int64_t));
  void *dout = MTC(arena_take)(&a, n_grp, so);
  uint8_t *dmo = mask_out ? (uint8_t *)MTC(arena_take)(&a, nmo, 1) : NULL;
  if ((st = MTC(upload)(&a, dx, x, (size_t)n * si, err)) != MT_OK ||
      (st = MTC(upload)(&a, dm, mask, (size_t)n, err)) != MT_OK ||
      (st = MTC(upload)(&a, doff, off, (size_t)(n_grp + 1) * sizeof(int64_t), err)) != MT_OK ||
      (st = MTC(upload)(&a, didx, idx, (size_t)n * sizeof(int64_t), err)) != MT_OK)
    goto out;
  if ((st = MTC_LAUNCH(&a, npma_reduce_kernel, n_grp, *p, dx, dm, doff, didx, dout, dmo,
                       n_grp)) != MT_OK)
    goto out;
  if ((st = MTC(download)(&a, out, dout, (size_t)n_grp * so, err)) != MT_OK) goto out;
  if (mask_out) st = MTC(download)(&a, mask_out, dmo, (size_t)nmo, err);
out:
  MTC(arena_close)(&a);
  return st;
}

#define X(name)                                                           \
  extern "C" mt_status MTC(npma_##name)(mt_call * call, mt_error * err) { \
    return mt__npma_reduce_run(call, MT_OP_##name, &MTC(exec), err);     \
  }
NPMA_REDUCE_OPS(X)
#undef X

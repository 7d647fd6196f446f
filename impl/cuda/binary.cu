/* binary.cu - the binary family on the device: every op of
 * common/binary_ops.h (in place too) on masked tensors of dense, COO and
 * CSR storage, with plain tensors and numbers, broadcasting included. The
 * host plan (torch.masked's checks, promotion, masks, layouts) is
 * impl/cpu/binary.c's (mt__binary_run); this file is its compute: one
 * thread per result element with common/binary_math.h, the first zero
 * integer divisor at a specified position found by an atomic min (the
 * CPU's loop stops at the same element, so the error names the same
 * index). Plain sparse operands (SPP-2 .. SPP-6) have no device compute
 * yet: NOT_SUPPORTED. */
#include "common/binary_math.h"
#include "common/binary_ops.h"
#include "common/exec.h"
#include "cuda_compat.h"

/* what the kernels take by value (cuda_compat.h, MTC_PLAIN_ARG) */
MTC_PLAIN_ARG(mt_bin_par);
MTC_PLAIN_ARG(mt_bin_loop);

MTC_KERNEL void binary_kernel(mt_bin_par p, mt_bin_loop l, const void *va, const void *vb,
                              const uint8_t *mask, void *out, uint8_t *mask_out,
                              uint64_t *zero_at) {
  MTC_FOR(i, l.n) {
    if (mt_bin_elem(&p, &l, va, vb, mask, out, mask_out, i))
      MTC_ATOMIC_MIN_U64(zero_at, (uint64_t)i);
  }
}

extern "C" mt_status MTC(binary_exec)(const struct mt_bin_par *p, const struct mt_bin_loop *l,
                                      const void *va, int64_t na, const void *vb, int64_t nb,
                                      const uint8_t *mask, int64_t nm, void *out,
                                      uint8_t *mask_out, int64_t *zero_div_at, mt_error *err) {
  size_t sa = va ? mt_dtype_size(p->dt[0]) : 0, sb = vb ? mt_dtype_size(p->dt[1]) : 0;
  size_t so = mt_dtype_size(p->rt), total = 0;
  int64_t n = l->n, nmo = mask_out ? n : 0;
  uint64_t zero = UINT64_MAX;
  mtc_arena a;
  mt_status st;
  *zero_div_at = -1;
  if (!va) na = 0;
  if (!vb) nb = 0;
  if (MTC(arena_add)(&total, na, sa ? sa : 1) || MTC(arena_add)(&total, nb, sb ? sb : 1) ||
      MTC(arena_add)(&total, nm, 1) || MTC(arena_add)(&total, n, so) ||
      MTC(arena_add)(&total, nmo, 1) || MTC(arena_add)(&total, 1, sizeof zero))
    return mt_err(err, MT_OUT_OF_MEMORY, "binary: %lld elements do not fit one device buffer",
                  (long long)n);
  if ((st = MTC(arena_open)(&a, total, "binary", err)) != MT_OK) return st;
  void *da = MTC(arena_take)(&a, na, sa ? sa : 1), *db = MTC(arena_take)(&a, nb, sb ? sb : 1);
  uint8_t *dm = (uint8_t *)MTC(arena_take)(&a, nm, 1);
  void *dout = MTC(arena_take)(&a, n, so);
  uint8_t *dmo = (uint8_t *)MTC(arena_take)(&a, nmo, 1);
  uint64_t *dz = (uint64_t *)MTC(arena_take)(&a, 1, sizeof zero);
  if ((st = MTC(upload)(&a, da, va, (size_t)na * sa, err)) != MT_OK ||
      (st = MTC(upload)(&a, db, vb, (size_t)nb * sb, err)) != MT_OK ||
      (st = MTC(upload)(&a, dm, mask, (size_t)nm, err)) != MT_OK ||
      (st = MTC(upload)(&a, dz, &zero, sizeof zero, err)) != MT_OK)
    goto out;
  if ((st = MTC_LAUNCH(&a, binary_kernel, n, *p, *l, va ? da : NULL, vb ? db : NULL, dm, dout,
                       mask_out ? dmo : NULL, dz)) != MT_OK)
    goto out;
  if ((st = MTC(download)(&a, out, dout, (size_t)n * so, err)) != MT_OK ||
      (st = MTC(download)(&a, mask_out, dmo, (size_t)nmo, err)) != MT_OK ||
      (st = MTC(download)(&a, &zero, dz, sizeof zero, err)) != MT_OK)
    goto out;
  if (zero != UINT64_MAX) *zero_div_at = (int64_t)zero;
out:
  MTC(arena_close)(&a);
  return st;
}

#define X(name, code, acc, res, kname)                            \
  extern "C" mt_status MTC(name)(mt_call * call, mt_error * err) { \
    return mt__binary_run(call, MT_OP_##name, &MTC(exec), err);    \
  }
BINARY_OPS(X)
#undef X
#define X(name, base)                                              \
  extern "C" mt_status MTC(name)(mt_call * call, mt_error * err) { \
    return mt__binary_run(call, MT_OP_##name, &MTC(exec), err);    \
  }
INPLACE_OPS(X)
#undef X

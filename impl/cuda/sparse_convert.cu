/* sparse_convert.cu - the sparse_convert family on the device. The host
 * plan is impl/cpu/sparse_convert.c's (mt__sparse_convert_run): torch's
 * checks and refusals, the results' indices (entries sorted, compressed
 * and plain indices built: bookkeeping) and a copy plan of every result
 * value, run by the device's gather (structure.cu); COO inputs are
 * coalesced on the device (coalesce.cu). This file is the one computation
 * on the values: which cells of a dense input are stored (SPC-1), one
 * thread per cell (common/sparse_convert_math.h), the flags downloaded for
 * the host to build the indices from. */
#include "common/exec.h"
#include "common/sparse_convert_math.h"
#include "common/sparse_convert_ops.h"
#include "cuda_compat.h"

MTC_KERNEL void nonzero_kernel(mt_dtype dt, const void *x, int64_t run, uint8_t *flags,
                               int64_t n) {
  MTC_FOR(c, n) flags[c] = mt_spc_nonzero(dt, x, run, c);
}

extern "C" mt_status MTC(nonzero_exec)(mt_dtype dt, const void *x, int64_t n, int64_t run,
                                       uint8_t *flags, mt_error *err) {
  size_t es = mt_dtype_size(dt), total = 0;
  mtc_arena a;
  mt_status st;
  if (!n) return MT_OK;
  if (n > INT64_MAX / (run > 0 ? run : 1) || MTC(arena_add)(&total, n * run, es) ||
      MTC(arena_add)(&total, n, 1))
    return mt_err(err, MT_OUT_OF_MEMORY,
                  "sparse_convert: %lld cells do not fit one device buffer", (long long)n);
  if ((st = MTC(arena_open)(&a, total, "sparse_convert", err)) != MT_OK) return st;
  void *dx = MTC(arena_take)(&a, n * run, es);
  uint8_t *dflags = (uint8_t *)MTC(arena_take)(&a, n, 1);
  if ((st = MTC(upload)(&a, dx, x, (size_t)(n * run) * es, err)) != MT_OK) goto out;
  if ((st = MTC_LAUNCH(&a, nonzero_kernel, n, dt, dx, run, dflags, n)) != MT_OK) goto out;
  st = MTC(download)(&a, flags, dflags, (size_t)n, err);
out:
  MTC(arena_close)(&a);
  return st;
}

MTC_KERNEL void convert_kernel(mt_dtype in, const void *x, const int64_t *off, mt_dtype out,
                               void *y, int64_t n) {
  MTC_FOR(i, n) mt_spc_convert(in, x, off[i], out, y, i);
}

/* structure's converting copy_ (impl/cpu/structure.c): the cast of torch's
 * copy_ on the device, one thread per result element */
extern "C" mt_status MTC(convert_exec)(mt_dtype in, const void *x, int64_t n_x,
                                       const int64_t *off, mt_dtype out, void *y, int64_t n,
                                       mt_error *err) {
  size_t ei = mt_dtype_size(in), eo = mt_dtype_size(out), total = 0;
  mtc_arena a;
  mt_status st;
  if (!n) return MT_OK;
  if (MTC(arena_add)(&total, n_x, ei) || MTC(arena_add)(&total, n, sizeof(int64_t)) ||
      MTC(arena_add)(&total, n, eo))
    return mt_err(err, MT_OUT_OF_MEMORY, "copy_: %lld elements do not fit one device buffer",
                  (long long)n);
  if ((st = MTC(arena_open)(&a, total, "copy_", err)) != MT_OK) return st;
  void *dx = MTC(arena_take)(&a, n_x, ei);
  int64_t *doff = (int64_t *)MTC(arena_take)(&a, n, sizeof(int64_t));
  void *dy = MTC(arena_take)(&a, n, eo);
  if ((st = MTC(upload)(&a, dx, x, (size_t)n_x * ei, err)) != MT_OK ||
      (st = MTC(upload)(&a, doff, off, (size_t)n * sizeof(int64_t), err)) != MT_OK)
    goto out;
  if ((st = MTC_LAUNCH(&a, convert_kernel, n, in, dx, doff, out, dy, n)) != MT_OK) goto out;
  st = MTC(download)(&a, y, dy, (size_t)n * eo, err);
out:
  MTC(arena_close)(&a);
  return st;
}

#define SPC_OP(name)                                                   \
  extern "C" mt_status MTC(name)(mt_call * call, mt_error * err) {     \
    return mt__sparse_convert_run(call, MT_OP_##name, &MTC(exec), err); \
  }
SPC_OPS(SPC_OP)

/* reduce.cu - the reduce family on the device: sum mean prod amin amax
 * argmin argmax all var std (norm is refused by torch for every masked
 * input) over dense-storage masked tensors, every dim form, and the
 * all-reduce of COO/CSR storage (SP-3). The host plan (dims, dtypes,
 * refusals, layouts) is impl/cpu/reduce.c's (mt__reduce_run); this file is
 * its compute: one thread per output element running
 * common/reduce_math.h's mt_red_out, which visits the output's inputs in
 * row-major order, so every sum has the CPU's order and the goldens'
 * tolerances hold unchanged. (A tree reduction would be faster on long
 * rows and would need the tolerance the reduction length implies; the
 * conformance kernels keep the exact order.) Plain sparse inputs (SPS-3,
 * SPS-4) are reduce_sparse.c's plans, whose values sparse_vals.cu folds. */
#include "common/exec.h"
#include "common/reduce_math.h"
#include "common/reduce_ops.h"
#include "cuda_compat.h"

/* what the kernels take by value (cuda_compat.h, MTC_PLAIN_ARG) */
MTC_PLAIN_ARG(mt_red_par);

MTC_KERNEL void reduce_kernel(mt_red_par p, const void *data, const uint8_t *mask, void *out,
                              uint8_t *mask_out, int64_t n_out) {
  MTC_FOR(o, n_out) mt_red_out(&p, data, mask, out, mask_out, o);
}

extern "C" mt_status MTC(reduce_exec)(const struct mt_red_par *p, const void *data,
                                      const uint8_t *mask, int64_t n_in, void *out,
                                      uint8_t *mask_out, int64_t n_out, mt_error *err) {
  size_t si = mt_dtype_size(p->idt), so = mt_dtype_size(p->odt), total = 0;
  mtc_arena a;
  mt_status st;
  if (MTC(arena_add)(&total, n_in, si) || MTC(arena_add)(&total, n_in, 1) ||
      MTC(arena_add)(&total, n_out, so) || MTC(arena_add)(&total, n_out, 1))
    return mt_err(err, MT_OUT_OF_MEMORY, "reduce: %lld elements do not fit one device buffer",
                  (long long)n_in);
  if ((st = MTC(arena_open)(&a, total, "reduce", err)) != MT_OK) return st;
  void *dd = MTC(arena_take)(&a, n_in, si);
  uint8_t *dm = (uint8_t *)MTC(arena_take)(&a, n_in, 1);
  void *dout = MTC(arena_take)(&a, n_out, so);
  uint8_t *dmo = (uint8_t *)MTC(arena_take)(&a, n_out, 1);
  if ((st = MTC(upload)(&a, dd, data, (size_t)n_in * si, err)) != MT_OK ||
      (st = MTC(upload)(&a, dm, mask, (size_t)n_in, err)) != MT_OK)
    goto out;
  if ((st = MTC_LAUNCH(&a, reduce_kernel, n_out, *p, dd, dm, dout, dmo, n_out)) != MT_OK)
    goto out;
  if ((st = MTC(download)(&a, out, dout, (size_t)n_out * so, err)) != MT_OK) goto out;
  st = MTC(download)(&a, mask_out, dmo, (size_t)n_out, err);
out:
  MTC(arena_close)(&a);
  return st;
}

#define X(name, ...)                                               \
  extern "C" mt_status MTC(name)(mt_call * call, mt_error * err) { \
    return mt__reduce_run(call, MT_OP_##name, &MTC(exec), err);    \
  }
RED_OPS(X)
#undef X

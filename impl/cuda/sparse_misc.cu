/* sparse_misc.cu - the sparse_misc family on the device. The host plan is
 * impl/cpu/sparse_misc.c's (mt__sparse_misc_run): torch's checks and
 * refusals, the results' indices, the gather plans of narrow_copy,
 * index_select and sparse_resize_ (their values are copies: the device's
 * gather, structure.cu), the softmaxes' coalescing (coalesce.cu) and
 * slices. This file is the softmaxes' compute: one thread per result value
 * (common/sparse_misc_math.h) takes its slice's max and sum in the CPU's
 * order. t_ and torch.sparse.sum are the structure and reduce families'
 * plain sparse kernels: their values move through the gather (structure.cu)
 * and sum through sparse_vals.cu. */
#include "common/exec.h"
#include "common/sparse_misc_math.h"
#include "common/sparse_misc_ops.h"
#include "cuda_compat.h"

/* what the kernels take by value (cuda_compat.h, MTC_PLAIN_ARG) */
MTC_PLAIN_ARG(mt_smx_par);

MTC_KERNEL void smx_kernel(mt_smx_par p, const void *vals, const int64_t *ptr, const int64_t *off,
                           const int64_t *sl, void *out, int64_t n) {
  MTC_FOR(o, n) mt_smx_out(&p, vals, ptr, off, sl, out, o);
}

extern "C" mt_status MTC(sparse_softmax_exec)(const struct mt_smx_par *p, const void *vals,
                                              const int64_t *ptr, const int64_t *off,
                                              const int64_t *sl, void *out, mt_error *err) {
  size_t ei = mt_dtype_size(p->in_dt), eo = mt_dtype_size(p->out_dt), total = 0;
  size_t i8 = sizeof(int64_t);
  int64_t n = p->n_out, np = p->n_slices + 1;
  mtc_arena a;
  mt_status st;
  if (!n) return MT_OK;
  if (MTC(arena_add)(&total, n, ei) || MTC(arena_add)(&total, np, i8) ||
      MTC(arena_add)(&total, p->n_off, i8) || MTC(arena_add)(&total, n, i8) ||
      MTC(arena_add)(&total, n, eo))
    return mt_err(err, MT_OUT_OF_MEMORY, "sparse_misc: %lld values do not fit one device buffer",
                  (long long)n);
  if ((st = MTC(arena_open)(&a, total, "sparse_misc", err)) != MT_OK) return st;
  void *dv = MTC(arena_take)(&a, n, ei);
  int64_t *dp = (int64_t *)MTC(arena_take)(&a, np, i8);
  int64_t *dof = (int64_t *)MTC(arena_take)(&a, p->n_off, i8);
  int64_t *dsl = (int64_t *)MTC(arena_take)(&a, n, i8);
  void *dout = MTC(arena_take)(&a, n, eo);
  if ((st = MTC(upload)(&a, dv, vals, (size_t)n * ei, err)) != MT_OK ||
      (st = MTC(upload)(&a, dp, ptr, (size_t)np * i8, err)) != MT_OK ||
      (st = MTC(upload)(&a, dof, off, (size_t)p->n_off * i8, err)) != MT_OK ||
      (st = MTC(upload)(&a, dsl, sl, (size_t)n * i8, err)) != MT_OK)
    goto out;
  if ((st = MTC_LAUNCH(&a, smx_kernel, n, *p, dv, dp, dof, dsl, dout, n)) != MT_OK) goto out;
  st = MTC(download)(&a, out, dout, (size_t)n * eo, err);
out:
  MTC(arena_close)(&a);
  return st;
}

#define SMISC_OP(name)                                                 \
  extern "C" mt_status MTC(name)(mt_call * call, mt_error * err) {     \
    return mt__sparse_misc_run(call, MT_OP_##name, &MTC(exec), err);   \
  }
SMISC_OPS(SMISC_OP)

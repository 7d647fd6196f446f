/* structure.cu - the structure family on the device: select, slice,
 * transpose, t, view, reshape, expand, unsqueeze, unfold, contiguous,
 * index, split, cat, stack and where on dense-storage masked tensors. The
 * host plan (impl/cpu/structure.c: argument checks, the gather plan of
 * every output element's source and offset) drives one copy kernel, run
 * once for the data and once for the mask, so both move alike (STR-1).
 * COO/CSR storage and plain sparse inputs (clone, t, transpose, unsqueeze,
 * cat, select, copy_) move their values through the same gather, planned on
 * the host; copy_'s dtype conversion and the layout conversions run
 * sparse_convert.cu's kernels. */
#include <string.h>

#include "common/exec.h"
#include "common/structure_ops.h"
#include "cuda_compat.h"

#define MAX_SRC 16 /* impl/cpu/structure_util.h's ST_MAX_INPUTS */

typedef struct {
  const char *p[MAX_SRC];
} srcs_t;

/* what the kernels take by value (cuda_compat.h, MTC_PLAIN_ARG) */
MTC_PTR_ARRAY_ARG(srcs_t, 8 * MAX_SRC, p);

MTC_KERNEL void gather_kernel(const int *src, const int64_t *off, int64_t n, srcs_t s, size_t es,
                              char *dst) {
  MTC_FOR(i, n) {
    const char *from = s.p[src[i]] + (size_t)off[i] * es;
    for (size_t b = 0; b < es; b++) dst[(size_t)i * es + b] = from[b];
  }
}

extern "C" mt_status MTC(gather_exec)(const int *src, const int64_t *off, int64_t n, int n_src,
                                      const void *const *srcs, const int64_t *len, size_t es,
                                      void *dst, mt_error *err) {
  size_t total = 0;
  srcs_t ds;
  mtc_arena a;
  mt_status st;
  memset(&ds, 0, sizeof ds);
  if (n_src > MAX_SRC)
    return mt_err(err, MT_INVALID_ARGUMENT, "gather: %d sources, at most %d", n_src, MAX_SRC);
  int bad = MTC(arena_add)(&total, n, sizeof(int)) || MTC(arena_add)(&total, n, 8) ||
            MTC(arena_add)(&total, n, es);
  for (int k = 0; k < n_src; k++) bad = bad || MTC(arena_add)(&total, len[k], es);
  if (bad)
    return mt_err(err, MT_OUT_OF_MEMORY, "gather: %lld elements do not fit one device buffer",
                  (long long)n);
  if ((st = MTC(arena_open)(&a, total, "gather", err)) != MT_OK) return st;
  int *dsrc = (int *)MTC(arena_take)(&a, n, sizeof(int));
  int64_t *doff = (int64_t *)MTC(arena_take)(&a, n, 8);
  char *ddst = (char *)MTC(arena_take)(&a, n, es);
  for (int k = 0; k < n_src; k++) {
    ds.p[k] = (const char *)MTC(arena_take)(&a, len[k], es);
    if ((st = MTC(upload)(&a, (void *)ds.p[k], srcs[k], (size_t)len[k] * es, err)) != MT_OK)
      goto out;
  }
  if ((st = MTC(upload)(&a, dsrc, src, (size_t)n * sizeof(int), err)) != MT_OK ||
      (st = MTC(upload)(&a, doff, off, (size_t)n * 8, err)) != MT_OK)
    goto out;
  if ((st = MTC_LAUNCH(&a, gather_kernel, n, dsrc, doff, n, ds, es, ddst)) != MT_OK) goto out;
  st = MTC(download)(&a, dst, ddst, (size_t)n * es, err);
out:
  MTC(arena_close)(&a);
  return st;
}

#define X(name)                                                     \
  extern "C" mt_status MTC(name)(mt_call * call, mt_error * err) {  \
    return mt__structure_run(call, MT_OP_##name, &MTC(exec), err);  \
  }
STRUCTURE_OPS(X)
#undef X

/* the masked family (impl/cpu/masked.c): its copies and to_tensor's fill are
 * this file's gather too */
extern "C" mt_status MTC(masked_tensor)(mt_call *call, mt_error *err) {
  return mt__masked_run(call, MT_OP_masked_tensor, &MTC(exec), err);
}
extern "C" mt_status MTC(to_tensor)(mt_call *call, mt_error *err) {
  return mt__masked_run(call, MT_OP_to_tensor, &MTC(exec), err);
}

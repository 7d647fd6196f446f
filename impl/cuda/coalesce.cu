/* coalesce.cu - COO coalescing on the device (common/coalesce_math.h), the
 * compute behind every host plan's "coalesce the input first" on the CUDA
 * path (mt__exec_coalesced): keys, first-of-key flags, output positions and
 * group sums, one thread per entry each. The host counts the first flags
 * to size the output (bookkeeping); every index and value of the result is
 * the device's. */
#include <stdlib.h>
#include <string.h>

#include "common/coalesce_math.h"
#include "common/exec.h"
#include "cuda_compat.h"

MTC_KERNEL void coal_keys(mt_coal_par p, const int64_t *indices, int64_t *keys) {
  MTC_FOR(k, p.nnz) keys[k] = mt_coal_key(&p, indices, k);
}
MTC_KERNEL void coal_first(mt_coal_par p, const int64_t *keys, uint8_t *first) {
  MTC_FOR(k, p.nnz) first[k] = (uint8_t)mt_coal_first(&p, keys, k);
}
MTC_KERNEL void coal_pos(mt_coal_par p, const int64_t *keys, const uint8_t *first, int64_t *pos) {
  MTC_FOR(k, p.nnz) pos[k] = first[k] ? mt_coal_pos(&p, keys, first, k) : -1;
}
MTC_KERNEL void coal_groups(mt_coal_par p, const int64_t *keys, const int64_t *indices,
                            const void *values, const int64_t *pos, int64_t uniq,
                            int64_t *out_indices, void *out_values) {
  MTC_FOR(k, p.nnz) {
    if (pos[k] >= 0)
      mt_coal_group(&p, keys, indices, values, uniq, k, pos[k], out_indices, out_values);
  }
}

extern "C" mt_status MTC(coalesce_exec)(const mt_tensor *coo, mt_tensor **out, mt_error *err) {
  mt_coal_par p;
  memset(&p, 0, sizeof p);
  p.sparse_dim = coo->sparse_dim;
  p.nnz = coo->nnz;
  p.row = mt_coo_row_numel(coo);
  p.dtype = coo->dtype;
  for (int d = 0; d < coo->sparse_dim; d++) p.shape[d] = coo->shape[d];
  size_t es = mt_dtype_size(coo->dtype), total = 0;
  int64_t n = p.nnz, sd = p.sparse_dim, nv = n * p.row, uniq = 0;
  uint8_t *first = NULL;
  mt_tensor *t = NULL;
  mtc_arena a;
  mt_status st;
  *out = NULL;
  /* in: indices, values; work: keys, first, pos; out: indices, values (<= n entries) */
  if (MTC(arena_add)(&total, sd * n, 8) || MTC(arena_add)(&total, nv, es) ||
      MTC(arena_add)(&total, n, 8) || MTC(arena_add)(&total, n, 1) ||
      MTC(arena_add)(&total, n, 8) || MTC(arena_add)(&total, sd * n, 8) ||
      MTC(arena_add)(&total, nv, es))
    return mt_err(err, MT_OUT_OF_MEMORY, "coalesce: %lld entries do not fit one device buffer",
                  (long long)n);
  if ((st = MTC(arena_open)(&a, total, "coalesce", err)) != MT_OK) return st;
  int64_t *di = (int64_t *)MTC(arena_take)(&a, sd * n, 8);
  void *dv = MTC(arena_take)(&a, nv, es);
  int64_t *dk = (int64_t *)MTC(arena_take)(&a, n, 8);
  uint8_t *df = (uint8_t *)MTC(arena_take)(&a, n, 1);
  int64_t *dp = (int64_t *)MTC(arena_take)(&a, n, 8);
  int64_t *doi = (int64_t *)MTC(arena_take)(&a, sd * n, 8);
  void *dov = MTC(arena_take)(&a, nv, es);
  if (!(first = (uint8_t *)malloc((size_t)(n ? n : 1)))) {
    st = mt_err(err, MT_OUT_OF_MEMORY, "coalesce: cannot allocate %lld flags", (long long)n);
    goto out;
  }
  if ((st = MTC(upload)(&a, di, coo->indices, (size_t)(sd * n) * 8, err)) != MT_OK ||
      (st = MTC(upload)(&a, dv, coo->values, (size_t)nv * es, err)) != MT_OK)
    goto out;
  if (n > 0) {
    if ((st = MTC_LAUNCH(&a, coal_keys, n, p, di, dk)) != MT_OK ||
        (st = MTC_LAUNCH(&a, coal_first, n, p, dk, df)) != MT_OK ||
        (st = MTC(download)(&a, first, df, (size_t)n, err)) != MT_OK)
      goto out;
    for (int64_t k = 0; k < n; k++) uniq += first[k] != 0;
    if ((st = MTC_LAUNCH(&a, coal_pos, n, p, dk, df, dp)) != MT_OK ||
        (st = MTC_LAUNCH(&a, coal_groups, n, p, dk, di, dv, dp, uniq, doi, dov)) != MT_OK)
      goto out;
  }
  if ((st = mt_coo_new(coo->dtype, coo->ndim, coo->shape, coo->sparse_dim, uniq, &t, err)) != MT_OK)
    goto out;
  if ((st = MTC(download)(&a, t->indices, doi, (size_t)(sd * uniq) * 8, err)) != MT_OK ||
      (st = MTC(download)(&a, t->values, dov, (size_t)(uniq * p.row) * es, err)) != MT_OK)
    goto out;
  t->coalesced = 1;
  *out = t;
  t = NULL;
out:
  free(first);
  mt_tensor_free(t);
  MTC(arena_close)(&a);
  return st;
}

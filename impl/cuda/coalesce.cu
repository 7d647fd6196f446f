/* coalesce.cu - COO coalescing on the device (common/coalesce_math.h, the
 * steps impl/convert.c's mt_coo_coalesce runs on the host), the compute
 * behind every host plan's "coalesce the input first" on the CUDA path
 * (mt__exec_coalesced): each entry's key (one thread per entry), a stable
 * radix sort of (key, entry) (CUB), run-head flags (one thread per sorted
 * position), then one thread per output entry: its indices and its run's
 * sums. The host reads the flags back to size the output and list the run
 * heads (bookkeeping); every index and value of the result is the
 * device's. */
#include <stdlib.h>
#include <string.h>

#include "common/coalesce_math.h"
#include "common/exec.h"
#include "cuda_compat.h"

/* what the kernels take by value (cuda_compat.h, MTC_PLAIN_ARG) */
MTC_PLAIN_ARG(mt_coal_par);

MTC_KERNEL void coal_keys(mt_coal_par p, const int64_t *indices, int64_t *keys, int64_t *iota) {
  MTC_FOR(k, p.nnz) {
    keys[k] = mt_coal_key(&p, indices, k);
    iota[k] = k;
  }
}
MTC_KERNEL void coal_heads(int64_t n, const int64_t *skeys, uint8_t *head) {
  MTC_FOR(i, n) head[i] = (uint8_t)mt_coal_head(skeys, i);
}
MTC_KERNEL void coal_runs(mt_coal_par p, const int64_t *indices, const void *values,
                          const int64_t *perm, const int64_t *heads, int64_t uniq,
                          int64_t *out_indices, void *out_values) {
  MTC_FOR(u, uniq) mt_coal_run(&p, indices, values, perm, heads, uniq, u, out_indices, out_values);
}

#if defined(MT_CUDA_EMU_FAULT) && MT_CUDA_EMU_FAULT == 12 /* tests/cuda_emu_faults.cmake */
/* The classic lost update: each run's sum as a scatter-add of one thread
 * per sorted position, without an atomic. Any serial order of the threads
 * adds every value, so the goldens pass in every order of the emulation;
 * on a GPU two threads of one run read the same partial sum and one
 * addition is lost. Only the race check (tests/race/) sees it. */
MTC_KERNEL void coal_zero(mt_coal_par p, const int64_t *indices, const int64_t *perm,
                          const int64_t *heads, int64_t uniq, int64_t *out_indices,
                          void *out_values) {
  MTC_FOR(u, uniq) {
    for (int d = 0; d < p.sparse_dim; d++)
      out_indices[d * uniq + u] = indices[d * p.nnz + perm[heads[u]]];
    for (int64_t j = 0; j < p.row; j++) mt_hd_set_f64(out_values, p.dtype, u * p.row + j, 0.0);
  }
}
MTC_KERNEL void coal_scatter(mt_coal_par p, const void *values, const int64_t *perm,
                             const int64_t *heads, int64_t uniq, void *out_values) {
  MTC_FOR(i, p.nnz) {
    int64_t lo = 0, hi = uniq - 1; /* the run of sorted position i: the last head <= i */
    while (lo < hi) {
      int64_t mid = (lo + hi + 1) / 2;
      if (heads[mid] <= i) lo = mid;
      else hi = mid - 1;
    }
    for (int64_t j = 0; j < p.row; j++) {
      double acc = mt_hd_get_f64(out_values, p.dtype, lo * p.row + j);
      double v = mt_hd_get_f64(values, p.dtype, perm[i] * p.row + j);
      acc = p.dtype == MT_bool ? (double)(acc != 0 || v != 0) : acc + v;
      mt_hd_set_f64(out_values, p.dtype, lo * p.row + j, acc);
    }
  }
}
#endif

extern "C" mt_status MTC(coalesce_exec)(const mt_tensor *coo, mt_tensor **out, mt_error *err) {
  mt_coal_par p;
  size_t es = mt_dtype_size(coo->dtype), total = 0, tmp_bytes = 0;
  int64_t span, uniq = 0;
  uint8_t *head = NULL;
  int64_t *heads = NULL;
  mt_tensor *t = NULL;
  mtc_arena a;
  mt_status st;
  *out = NULL;
  if ((st = mt_coal_par_of(coo, &p, &span, err)) != MT_OK) return st;
  int64_t n = p.nnz, sd = p.sparse_dim, nv = n * p.row;
  int bits = MTC(key_bits)(span > 0 ? span - 1 : 0);
  memset(&a, 0, sizeof a);
  a.what = "coalesce";
  if ((st = MTC(sort_bytes)(&a, n, bits, &tmp_bytes, err)) != MT_OK) return st;
  /* in: indices, values; work: keys, iota, sorted keys, perm, head flags, heads, the sort's
   * storage; out: indices, values (<= n entries) */
  if (MTC(arena_add)(&total, sd * n, 8) || MTC(arena_add)(&total, nv, es) ||
      MTC(arena_add)(&total, n, 8) || MTC(arena_add)(&total, n, 8) ||
      MTC(arena_add)(&total, n, 8) || MTC(arena_add)(&total, n, 8) ||
      MTC(arena_add)(&total, n, 1) || MTC(arena_add)(&total, n + 1, 8) ||
      MTC(arena_add)(&total, (int64_t)tmp_bytes, 1) || MTC(arena_add)(&total, sd * n, 8) ||
      MTC(arena_add)(&total, nv, es))
    return mt_err(err, MT_OUT_OF_MEMORY, "coalesce: %lld entries do not fit one device buffer",
                  (long long)n);
  if ((st = MTC(arena_open)(&a, total, "coalesce", err)) != MT_OK) return st;
  int64_t *di = (int64_t *)MTC(arena_take)(&a, sd * n, 8);
  void *dv = MTC(arena_take)(&a, nv, es);
  int64_t *dk = (int64_t *)MTC(arena_take)(&a, n, 8);
  int64_t *diota = (int64_t *)MTC(arena_take)(&a, n, 8);
  int64_t *dsk = (int64_t *)MTC(arena_take)(&a, n, 8);
  int64_t *dperm = (int64_t *)MTC(arena_take)(&a, n, 8);
  uint8_t *dh = (uint8_t *)MTC(arena_take)(&a, n, 1);
  int64_t *dheads = (int64_t *)MTC(arena_take)(&a, n + 1, 8);
  void *dtmp = MTC(arena_take)(&a, (int64_t)tmp_bytes, 1);
  int64_t *doi = (int64_t *)MTC(arena_take)(&a, sd * n, 8);
  void *dov = MTC(arena_take)(&a, nv, es);
  if (!(head = (uint8_t *)malloc((size_t)(n ? n : 1))) ||
      !(heads = (int64_t *)malloc((size_t)(n + 1) * sizeof *heads))) {
    st = mt_err(err, MT_OUT_OF_MEMORY, "coalesce: cannot allocate %lld flags", (long long)n);
    goto out;
  }
  if ((st = MTC(upload)(&a, di, coo->indices, (size_t)(sd * n) * 8, err)) != MT_OK ||
      (st = MTC(upload)(&a, dv, coo->values, (size_t)nv * es, err)) != MT_OK)
    goto out;
  if (n > 0) {
    if ((st = MTC_LAUNCH(&a, coal_keys, n, p, di, dk, diota)) != MT_OK ||
        (st = MTC(sort_pairs)(&a, dtmp, tmp_bytes, dk, dsk, diota, dperm, n, bits, err)) != MT_OK ||
        (st = MTC_LAUNCH(&a, coal_heads, n, n, dsk, dh)) != MT_OK ||
        (st = MTC(download)(&a, head, dh, (size_t)n, err)) != MT_OK)
      goto out;
#if defined(MT_CUDA_EMU_FAULT) && MT_CUDA_EMU_FAULT == 8 /* tests/cuda_emu_faults.cmake */
    memcpy(head, dh, (size_t)n); /* the device's flags read by host code, not downloaded */
#endif
    for (int64_t i = 0; i < n; i++)
      if (head[i]) heads[uniq++] = i;
    heads[uniq] = n;
    if ((st = MTC(upload)(&a, dheads, heads, (size_t)(uniq + 1) * 8, err)) != MT_OK) goto out;
#if defined(MT_CUDA_EMU_FAULT) && MT_CUDA_EMU_FAULT == 7 /* tests/cuda_emu_faults.cmake */
    dheads = heads; /* the host's list handed to the kernel: right values, wrong memory */
#endif
#if defined(MT_CUDA_EMU_FAULT) && MT_CUDA_EMU_FAULT == 12 /* the lost update above */
    (void)coal_runs;
    if ((st = MTC_LAUNCH(&a, coal_zero, uniq, p, di, dperm, dheads, uniq, doi, dov)) != MT_OK ||
        (st = MTC_LAUNCH(&a, coal_scatter, n, p, dv, dperm, dheads, uniq, dov)) != MT_OK)
      goto out;
#else
    if ((st = MTC_LAUNCH(&a, coal_runs, uniq, p, di, dv, dperm, dheads, uniq, doi, dov)) != MT_OK)
      goto out;
#endif
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
  free(head);
  free(heads);
  mt_tensor_free(t);
  MTC(arena_close)(&a);
  return st;
}

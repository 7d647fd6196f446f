/* coalesce_math.h - COO coalescing (entries ordered by their row-major
 * linear index over the sparse dims, ties in input order; duplicates summed
 * in the dtype, one rounding per addition, bool duplicates or-ed) in the
 * pieces both implementations run: impl/convert.c's mt_coo_coalesce on the
 * host and impl/cuda/coalesce.cu with one thread per entry or per output.
 *
 *   key    each entry's linear key                       mt_coal_key
 *   sort   (key, entry) pairs, stable by key: the permutation `perm`
 *          (qsort with the entry as tie-break on the host, CUB's radix
 *          sort on a device)
 *   head   whether sorted position i starts a run of equal keys
 *          (mt_coal_head); the host turns the flags into `heads`, the
 *          sorted position of each output's first entry, heads[uniq] = nnz
 *   run    output u: the indices of its first entry, each value the run's
 *          entries summed in sorted = input order          mt_coal_run
 *
 * O(nnz log nnz) in all; every sum has mt_coo_coalesce's order, so the two
 * agree bit for bit. */
#ifndef MT_COALESCE_MATH_H
#define MT_COALESCE_MATH_H

#include "common/mt_hd.h"

/* The sparse geometry of a COO tensor. */
typedef struct mt_coal_par {
  int sparse_dim;
  int64_t nnz;
  int64_t row;                   /* elements per entry: prod(shape[sparse_dim:]) */
  int64_t shape[MT_MAX_DIMS];    /* the sparse dims' sizes */
  mt_dtype dtype;
} mt_coal_par;

/* Row-major linear index of entry k over the sparse dims (mt_coo_linear). */
MT_HD int64_t mt_coal_key(const mt_coal_par *p, const int64_t *indices, int64_t k) {
  int64_t lin = 0;
  for (int d = 0; d < p->sparse_dim; d++) lin = lin * p->shape[d] + indices[d * p->nnz + k];
  return lin;
}

/* 1 when sorted position i starts a run: the first, or a key unlike the
 * one before it (skeys: the keys in sorted order). */
MT_HD int mt_coal_head(const int64_t *skeys, int64_t i) {
#if defined(MT_CUDA_EMU_FAULT) && MT_CUDA_EMU_FAULT == 13 /* tests/cuda_emu_faults.cmake */
  return skeys[i] != skeys[i - 1]; /* the first position's edge test dropped: reads skeys[-1] */
#else
  return i == 0 || skeys[i] != skeys[i - 1];
#endif
}

/* Output entry u: the run of sorted positions heads[u] .. heads[u + 1] - 1,
 * entries perm[i]. Its indices are its first entry's; each of its row of
 * values is the run's values summed in run order from its first value (so
 * a lone -0.0 stays -0.0), in the dtype as torch's CPU coalesce does (an
 * axpy of scalar_t): a float sum rounded to the dtype after every addition
 * (float32 [v, 1.5, -1.5] is (v + 1.5) - 1.5, not v; float16 [1, 2^-11,
 * 2^-11] is 1), integers in int64 wrapping to the width (int64 [2^62, 2^62]
 * is INT64_MIN, [2^62 + 1, 1] exact beyond 2^53), bool or-ed. A double
 * sum of two values of a narrower float rounds once to it exactly as the
 * narrower addition does (53 >= 2 * 24 + 2 bits), so mt_hd_round of it is
 * torch's step. */
MT_HD void mt_coal_run(const mt_coal_par *p, const int64_t *indices, const void *values,
                       const int64_t *perm, const int64_t *heads, int64_t uniq, int64_t u,
                       int64_t *out_indices, void *out_values) {
  int is_bool = p->dtype == MT_bool;
  int64_t lo = heads[u], hi = heads[u + 1];
#if defined(MT_CUDA_EMU_FAULT) && MT_CUDA_EMU_FAULT == 3 /* tests/cuda_emu_faults.cmake */
  hi = lo + 1; /* duplicates dropped, not summed */
#endif
  for (int d = 0; d < p->sparse_dim; d++) out_indices[d * uniq + u] = indices[d * p->nnz + perm[lo]];
  if (!mt_hd_is_float(p->dtype)) {
    for (int64_t j = 0; j < p->row; j++) {
      uint64_t acc = (uint64_t)mt_hd_ldi(values, p->dtype, perm[lo] * p->row + j);
      for (int64_t i = lo + 1; i < hi; i++) {
        uint64_t v = (uint64_t)mt_hd_ldi(values, p->dtype, perm[i] * p->row + j);
        acc = is_bool ? (uint64_t)(acc != 0 || v != 0) : acc + v; /* two's complement wrap */
      }
      mt_hd_sti(out_values, p->dtype, u * p->row + j, (int64_t)acc);
    }
    return;
  }
  for (int64_t j = 0; j < p->row; j++) {
    double acc = mt_hd_get_f64(values, p->dtype, perm[lo] * p->row + j);
    for (int64_t i = lo + 1; i < hi; i++)
      acc = mt_hd_round(p->dtype, acc + mt_hd_get_f64(values, p->dtype, perm[i] * p->row + j));
    mt_hd_set_f64(out_values, p->dtype, u * p->row + j, acc);
  }
}

#endif /* MT_COALESCE_MATH_H */

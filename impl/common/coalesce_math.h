/* coalesce_math.h - COO coalescing one entry at a time, as impl/convert.c's
 * mt_coo_coalesce does it (entries ordered by their row-major linear index
 * over the sparse dims, ties in input order; duplicates summed in double,
 * bool duplicates or-ed, then rounded once to the dtype), in pieces a
 * device can run with one thread per entry: the linear key, whether an
 * entry is the first of its key, the output position of a first entry,
 * and the sum of a group. Each piece is O(nnz) per thread (O(nnz^2) in
 * all): the conformance kernel, exact and order-preserving; a sort-based
 * one is for the benchmarks. */
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

/* 1 when no earlier entry has entry k's key. */
MT_HD int mt_coal_first(const mt_coal_par *p, const int64_t *keys, int64_t k) {
  for (int64_t j = 0; j < k; j++)
    if (keys[j] == keys[k]) return 0;
  return 1;
}

/* The output position of a first entry k: the number of distinct keys
 * smaller than its own. */
MT_HD int64_t mt_coal_pos(const mt_coal_par *p, const int64_t *keys, const uint8_t *first,
                          int64_t k) {
  int64_t u = 0;
  for (int64_t j = 0; j < p->nnz; j++) u += first[j] && keys[j] < keys[k];
  return u;
}

/* Output entry u from the group of first entry k: its indices and its row
 * of values, the group's entries summed in input order. */
MT_HD void mt_coal_group(const mt_coal_par *p, const int64_t *keys, const int64_t *indices,
                         const void *values, int64_t uniq, int64_t k, int64_t u,
                         int64_t *out_indices, void *out_values) {
  int is_bool = p->dtype == MT_bool;
  for (int d = 0; d < p->sparse_dim; d++) out_indices[d * uniq + u] = indices[d * p->nnz + k];
  for (int64_t j = 0; j < p->row; j++) {
    double acc = 0.0;
#if defined(MT_CUDA_EMU_FAULT) && MT_CUDA_EMU_FAULT == 3 /* tests/cuda_emu_faults.cmake */
    for (int64_t i = k; i < k + 1; i++) { /* duplicates dropped, not summed */
#else
    for (int64_t i = k; i < p->nnz; i++) {
#endif
      if (keys[i] != keys[k]) continue;
      double v = mt_hd_get_f64(values, p->dtype, i * p->row + j);
      acc = is_bool ? (double)(acc != 0 || v != 0) : acc + v;
    }
    mt_hd_set_f64(out_values, p->dtype, u * p->row + j, acc);
  }
}

#endif /* MT_COALESCE_MATH_H */

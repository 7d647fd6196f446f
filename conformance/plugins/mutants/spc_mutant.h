/* spc_mutant.h - helpers of the sparse_convert mutants (SPC-*). */
#ifndef MT_SPC_MUTANT_H
#define MT_SPC_MUTANT_H
#include "mutant.h"

/* Removes, in place, the entries of a COO output whose value row is all
 * zero (scipy.sparse's eliminate_zeros): the mistake of a library that
 * treats a stored zero as "not stored". */
static inline void mt__spc_drop_zero_entries(mt_tensor *t) {
  if (!t || t->kind != MT_KIND_COO) return;
  int64_t row = mt_coo_row_numel(t), kept = 0;
  size_t es = mt_dtype_size(t->dtype);
  for (int64_t k = 0; k < t->nnz; k++) {
    int zero = 1;
    for (int64_t j = 0; j < row && zero; j++) zero = mt_get_f64(t->values, t->dtype, k * row + j) == 0;
    if (zero) continue;
    for (int d = 0; d < t->sparse_dim; d++)
      t->indices[d * t->nnz + kept] = t->indices[d * t->nnz + k];
    memmove((char *)t->values + (size_t)(kept * row) * es, (char *)t->values + (size_t)(k * row) * es,
            (size_t)row * es);
    kept++;
  }
  /* indices are [sparse_dim][nnz]: close the gaps left by the old nnz */
  for (int d = 1; d < t->sparse_dim; d++)
    memmove(t->indices + d * kept, t->indices + d * t->nnz, (size_t)kept * sizeof(int64_t));
  t->nnz = kept;
}
#endif

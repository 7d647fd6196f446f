/* spc_nan_not_stored.c - breaks SPC-1: to_sparse_coo of a dense tensor
 * drops NaN, as a converter that tests `fabs(x) > 0` (false for NaN)
 * instead of `x != 0` does. torch stores NaN: it is not zero. */
#include <math.h>

#include "mutant.h"

static mt_status mutant_to_sparse_coo(mt_call *call, mt_error *err) {
  mt_status st = mt_cpu_to_sparse_coo(call, err);
  const mt_tensor *x = call->n_in > 0 ? call->in[0] : NULL;
  mt_tensor *t = st == MT_OK ? call->out[0] : NULL;
  if (!x || x->kind != MT_KIND_DENSE || !t || t->kind != MT_KIND_COO) return st;
  int64_t row = mt_coo_row_numel(t), kept = 0;
  size_t es = mt_dtype_size(t->dtype);
  for (int64_t k = 0; k < t->nnz; k++) {
    int nonzero = 0;
    for (int64_t j = 0; j < row; j++)
      nonzero |= fabs(mt_get_f64(t->values, t->dtype, k * row + j)) > 0;
    if (!nonzero) continue;
    for (int d = 0; d < t->sparse_dim; d++)
      t->indices[d * t->nnz + kept] = t->indices[d * t->nnz + k];
    memmove((char *)t->values + (size_t)(kept * row) * es,
            (char *)t->values + (size_t)(k * row) * es, (size_t)row * es);
    kept++;
  }
  for (int d = 1; d < t->sparse_dim; d++)
    memmove(t->indices + d * kept, t->indices + d * t->nnz, (size_t)kept * sizeof(int64_t));
  t->nnz = kept;
  return st;
}

static const mt_kernel_fn kernels[MT_OP__END] = {
#include "cpu_slots.h"
    [MT_OP_to_sparse_coo] = mutant_to_sparse_coo,
};
MT_MUTANT_ENTRY("spc_nan_not_stored", kernels)

/* spc_csr_cols_sorted_silently.c - breaks SPC-10: sparse_csr_tensor
 * sorts unsorted column indices within each row instead of refusing them
 * (scipy.sparse.csr_matrix accepts unsorted indices and sorts on demand);
 * torch's check_invariants refuses ("`col_indices[..., crow_indices[..., i
 * - 1]:crow_indices[..., i]] ... are sorted and distinct` is not
 * satisfied"). Values are not permuted with them: a library that sorts
 * only the indices. */
#include "mutant.h"

static int cmp_i64(const void *a, const void *b) {
  int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return (x > y) - (x < y);
}

static mt_status mutant_sparse_csr_tensor(mt_call *call, mt_error *err) {
  mt_status st = mt_cpu_sparse_csr_tensor(call, err);
  const mt_tensor *crow = call->n_in > 2 ? call->in[0] : NULL, *col = crow ? call->in[1] : NULL;
  if (st != MT_INVALID_ARGUMENT || !strstr(err->msg, "not sorted and distinct") ||
      crow->ndim != 1 || crow->dtype != MT_int64 || col->dtype != MT_int64 ||
      !mt_is_contiguous(crow) || !mt_is_contiguous(col))
    return st;
  mt_tensor *sorted = NULL;
  if ((st = mt_tensor_clone(col, &sorted, err)) != MT_OK) return st;
  const int64_t *c = crow->values;
  for (int64_t r = 0; r + 1 < crow->shape[0]; r++)
    qsort((int64_t *)sorted->values + c[r], (size_t)(c[r + 1] - c[r]), sizeof(int64_t), cmp_i64);
  st = mt__mutant_call_in(call, err, mt_cpu_sparse_csr_tensor, 1, sorted);
  mt_tensor_free(sorted);
  return st;
}

static const mt_kernel_fn kernels[MT_OP__END] = {
#include "cpu_slots.h"
    [MT_OP_sparse_csr_tensor] = mutant_sparse_csr_tensor,
};
MT_MUTANT_ENTRY("spc_csr_cols_sorted_silently", kernels)

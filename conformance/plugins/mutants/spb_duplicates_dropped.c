/* spb_duplicates_dropped.c - breaks SPB-6: mm keeps only the first entry
 * of each index of an uncoalesced COO operand (a "coalesce" that
 * deduplicates instead of summing), where torch sums duplicates. */
#include "mutant.h"

/* A copy of COO t with every repeated index after its first dropped. */
static mt_status first_only(const mt_tensor *t, mt_tensor **out, mt_error *err) {
  mt_status st = mt_coo_new(t->dtype, t->ndim, t->shape, t->sparse_dim, t->nnz, out, err);
  if (st != MT_OK) return st;
  int64_t n = 0, row = mt_coo_row_numel(t);
  size_t es = mt_dtype_size(t->dtype);
  for (int64_t k = 0; k < t->nnz; k++) {
    int64_t lk = mt_coo_linear(t, k), seen = 0;
    for (int64_t q = 0; q < k && !seen; q++) seen = mt_coo_linear(t, q) == lk;
    if (seen) continue;
    for (int d = 0; d < t->sparse_dim; d++) (*out)->indices[d * t->nnz + n] = t->indices[d * t->nnz + k];
    memcpy((char *)(*out)->values + (size_t)(n * row) * es, (const char *)t->values + (size_t)(k * row) * es,
           (size_t)row * es);
    n++;
  }
  for (int d = 1; d < t->sparse_dim; d++) /* rows of [sparse_dim, nnz] shrink to n */
    memmove((*out)->indices + d * n, (*out)->indices + d * t->nnz, (size_t)n * sizeof(int64_t));
  (*out)->nnz = n;
  (*out)->coalesced = 0;
  return MT_OK;
}

static mt_status mutant_mm(mt_call *call, mt_error *err) {
  for (int i = 0; i < call->n_in && i < 2; i++) {
    const mt_tensor *t = call->in[i];
    if (!t || t->kind != MT_KIND_COO || t->coalesced) continue;
    mt_tensor *dedup = NULL;
    mt_status st = first_only(t, &dedup, err);
    if (st != MT_OK) return st;
    st = mt__mutant_call_in(call, err, mt_cpu_mm, i, dedup);
    mt_tensor_free(dedup);
    return st;
  }
  return mt_cpu_mm(call, err);
}

static const mt_kernel_fn kernels[MT_OP__END] = {
#include "cpu_slots.h"
    [MT_OP_mm] = mutant_mm,
};
MT_MUTANT_ENTRY("spb_duplicates_dropped", kernels)

/* sps_sum_drops_zero_sums.c - breaks SPS-3: torch.sum over a dim of a
 * plain COO tensor drops the entries whose sum is zero (a stored zero, or
 * values that cancel), where torch keeps every kept index that stores
 * anything. A library that "prunes" its sparse results after a reduction
 * does this: the dense view is the same, the stored entries are not. */
#include "mutant.h"

static mt_status mutant_sum(mt_call *call, mt_error *err) {
  mt_status st = mt_cpu_sum(call, err);
  if (st != MT_OK || call->n_out != 1 || call->in[0]->kind != MT_KIND_COO ||
      call->out[0]->kind != MT_KIND_COO)
    return st;
  mt_tensor *o = call->out[0];
  int64_t row = mt_coo_row_numel(o), k = 0;
  size_t es = mt_dtype_size(o->dtype);
  for (int64_t e = 0; e < o->nnz; e++) {
    int zero = 1;
    for (int64_t j = 0; j < row; j++) zero &= mt_get_f64(o->values, o->dtype, e * row + j) == 0.0;
    if (zero) continue;
    for (int d = 0; d < o->sparse_dim; d++) o->indices[(int64_t)d * o->nnz + k] = o->indices[(int64_t)d * o->nnz + e];
    memmove((char *)o->values + (size_t)(k * row) * es, (char *)o->values + (size_t)(e * row) * es,
            (size_t)row * es);
    k++;
  }
  /* indices are [sparse_dim][nnz]: repack the rows for the new nnz */
  for (int d = 1; d < o->sparse_dim; d++)
    memmove(o->indices + (int64_t)d * k, o->indices + (int64_t)d * o->nnz, (size_t)k * sizeof(int64_t));
  o->nnz = k;
  return MT_OK;
}

static const mt_kernel_fn kernels[MT_OP__END] = {
#include "cpu_slots.h"
    [MT_OP_sum] = mutant_sum,
};
MT_MUTANT_ENTRY("sps_sum_drops_zero_sums", kernels)

/* mul_uncoalesced_drops_unmatched.c - breaks SPP-4: mul of two COO tensors
 * of which one is uncoalesced drops the entries found in only one operand,
 * the textbook intersection; torch's intersection kernel keeps every entry
 * of its `source` operand there (0 where the other stores nothing) and
 * filters only when both operands are coalesced. */
#include "mutant.h"

static mt_status mutant_mul(mt_call *call, mt_error *err) {
  mt_status st = mt_cpu_mul(call, err);
  if (st != MT_OK || call->n_in < 2 || call->in[0]->kind != MT_KIND_COO ||
      call->in[1]->kind != MT_KIND_COO || (call->in[0]->coalesced && call->in[1]->coalesced))
    return st;
  mt_tensor *o = call->out[0];
  if (o->dtype != MT_float32 && o->dtype != MT_float64) return st;
  /* keep the entries whose values are not all zero (the unmatched ones are 0) */
  int64_t row = mt_coo_row_numel(o), n = 0;
  for (int64_t k = 0; k < o->nnz; k++) {
    int keep = 0;
    for (int64_t j = 0; j < row; j++) keep |= mt_get_f64(o->values, o->dtype, k * row + j) != 0.0;
    if (!keep) continue;
    for (int d = 0; d < o->sparse_dim; d++) o->indices[d * o->nnz + n] = o->indices[d * o->nnz + k];
    memmove((char *)o->values + n * row * mt_dtype_size(o->dtype),
            (char *)o->values + k * row * mt_dtype_size(o->dtype),
            (size_t)row * mt_dtype_size(o->dtype));
    n++;
  }
  for (int d = 1; d < o->sparse_dim; d++)
    memmove(o->indices + d * n, o->indices + d * o->nnz, (size_t)n * sizeof(int64_t));
  o->nnz = n;
  return MT_OK;
}

static const mt_kernel_fn kernels[MT_OP__END] = {
#include "cpu_slots.h"
    [MT_OP_mul] = mutant_mul,
};
MT_MUTANT_ENTRY("mul_uncoalesced_drops_unmatched", kernels)

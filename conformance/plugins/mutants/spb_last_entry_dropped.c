/* spb_last_entry_dropped.c - breaks SPB-2: mm loses the last stored entry
 * of its sparse left operand (an off-by-one in the loop over stored
 * entries, `k < nnz - 1`). The goldens' tolerances come from the reduction
 * length: one missing product |a b| lies far outside them. */
#include "mutant.h"

/* A copy of t (COO or 2-d CSR) without its last stored entry. */
static mt_status drop_last(const mt_tensor *t, mt_tensor **out, mt_error *err) {
  mt_status st = mt_tensor_clone(t, out, err);
  if (st != MT_OK) return st;
  mt_tensor *c = *out;
  int64_t n = c->nnz - 1;
  if (c->kind == MT_KIND_COO) {
    for (int d = 1; d < c->sparse_dim; d++)
      memmove(c->indices + d * n, c->indices + d * c->nnz, (size_t)n * sizeof(int64_t));
  } else {
    for (int64_t r = 0; r <= c->shape[0]; r++)
      if (c->crow_indices[r] > n) c->crow_indices[r] = n;
  }
  c->nnz = n;
  return MT_OK;
}

static mt_status mutant_mm(mt_call *call, mt_error *err) {
  const mt_tensor *a = call->n_in > 0 ? call->in[0] : NULL;
  if (!a || a->nnz < 1 || a->ndim != 2 || !(a->kind == MT_KIND_COO || a->kind == MT_KIND_CSR))
    return mt_cpu_mm(call, err);
  mt_tensor *cut = NULL;
  mt_status st = drop_last(a, &cut, err);
  if (st != MT_OK) return st;
  st = mt__mutant_call_in(call, err, mt_cpu_mm, 0, cut);
  mt_tensor_free(cut);
  return st;
}

static const mt_kernel_fn kernels[MT_OP__END] = {
#include "cpu_slots.h"
    [MT_OP_mm] = mutant_mm,
};
MT_MUTANT_ENTRY("spb_last_entry_dropped", kernels)

/* hybrid_row_first_only.c - breaks ADA-8: with a hybrid COO gradient
 * (values [nnz, dim]: nn.Embedding's rows) only the first element of each
 * row is updated, as a kernel written for one value per index does, where
 * torch updates the whole row of param and state_sum. */
#include "mutant.h"

static mt_status mutant_adagrad_sparse(mt_call *call, mt_error *err) {
  mt_status st = mt_cpu_adagrad_sparse(call, err);
  const mt_tensor *g = call->n_in >= 2 ? call->in[1] : NULL;
  if (st != MT_OK || call->n_out != 3 || !g || g->kind != MT_KIND_COO || g->dense_dim == 0)
    return st;
  const mt_tensor *p0 = call->in[0], *s0 = call->in[2];
  mt_tensor *p = call->out[0], *s = call->out[1];
  int64_t row = mt_coo_row_numel(g);
  for (int64_t k = 0; k < g->nnz; k++)
    for (int64_t j = 1; j < row; j++) { /* undo all but the row's first element */
      int64_t i = mt_coo_linear(g, k) * row + j;
      mt_set_f64(p->values, p->dtype, i, mt_dense_get(p0, i));
      mt_set_f64(s->values, s->dtype, i, mt_dense_get(s0, i));
    }
  return MT_OK;
}

static const mt_kernel_fn kernels[MT_OP__END] = {
#include "cpu_slots.h"
    [MT_OP_adagrad_sparse] = mutant_adagrad_sparse,
};
MT_MUTANT_ENTRY("hybrid_row_first_only", kernels)

/* sadam_dense_moments.c - breaks SADAM-1: the moments decay at every
 * element, as dense Adam does (exp_avg *= beta1, exp_avg_sq *= beta2 where
 * the gradient has no entry), where SparseAdam's lazy update leaves every
 * element outside the coalesced gradient's indices untouched. A "sparse
 * Adam" written as dense Adam over a densified gradient does this. */
#include "mutant.h"

static mt_status mutant_sparse_adam(mt_call *call, mt_error *err) {
  mt_status st = mt_cpu_sparse_adam(call, err);
  /* an empty gradient is SADAM-3's (torch skips the whole update) */
  if (st != MT_OK || call->n_out != 3 || call->in[1]->kind != MT_KIND_COO || call->in[1]->nnz == 0)
    return st;
  const mt_tensor *g = call->in[1];
  const mt_kwarg *betas = mt_kw_find(call->kw, "betas");
  double b1 = 0.9, b2 = 0.999;
  if (betas && betas->type == MT_KW_FLOATS && betas->n == 2) {
    b1 = betas->floats[0];
    b2 = betas->floats[1];
  }
  mt_tensor *m = call->out[1], *v = call->out[2];
  mt_dtype dt = m->dtype;
  int64_t n = mt_numel(m), row = mt_coo_row_numel(g);
  uint8_t *touched = calloc((size_t)(n ? n : 1), 1);
  if (!touched) return MT_OK;
  for (int64_t k = 0; k < g->nnz; k++)
    for (int64_t j = 0; j < row; j++) touched[mt_coo_linear(g, k) * row + j] = 1;
  for (int64_t i = 0; i < n; i++) {
    if (touched[i]) continue;
    mt_set_f64(m->values, dt, i, mt_get_f64(m->values, dt, i) * b1);
    mt_set_f64(v->values, dt, i, mt_get_f64(v->values, dt, i) * b2);
  }
  free(touched);
  return MT_OK;
}

static const mt_kernel_fn kernels[MT_OP__END] = {
#include "cpu_slots.h"
    [MT_OP_sparse_adam] = mutant_sparse_adam,
};
MT_MUTANT_ENTRY("sadam_dense_moments", kernels)

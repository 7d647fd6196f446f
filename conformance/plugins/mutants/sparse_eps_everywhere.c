/* sparse_eps_everywhere.c - breaks ADA-2: the sparse Adagrad step computes
 * std = sqrt(state_sum) + eps over the whole dense state and divides the
 * densified gradient by it, so the entries the gradient does not specify
 * are "updated" by -clr * 0 / std too. That is a no-op except where std is
 * 0 (eps = 0, zero accumulator): 0/0 = NaN where torch leaves the parameter
 * untouched (ADA-6). */
#include "mutant.h"

static mt_status mutant_adagrad_sparse(mt_call *call, mt_error *err) {
  mt_status st = mt_cpu_adagrad_sparse(call, err);
  if (st != MT_OK || call->n_out != 3 || call->out[2]->kind != MT_KIND_COO) return st;
  mt_tensor *p = call->out[0], *s = call->out[1], *sd = call->out[2];
  mt_dtype dt = p->dtype;
  double nclr = mt__mutant_r(dt, -mt__mutant_clr(call));
  double eps = mt__mutant_r(dt, mt_kw_float(call->kw, "eps", 1e-10));
  int64_t n = mt_numel(p), row = mt_coo_row_numel(sd);
  uint8_t *touched = calloc((size_t)(n ? n : 1), 1);
  if (!touched) return mt_err(err, MT_OUT_OF_MEMORY, "adagrad_sparse: out of memory");
  for (int64_t k = 0; k < sd->nnz; k++)
    for (int64_t j = 0; j < row; j++) touched[mt_coo_linear(sd, k) * row + j] = 1;
  for (int64_t i = 0; i < n; i++)
    if (!touched[i]) {
      double std = mt__mutant_r(dt, mt__mutant_r(dt, sqrt(mt_get_f64(s->values, dt, i))) + eps);
      mt_set_f64(p->values, dt, i, mt_get_f64(p->values, dt, i) + mt__mutant_r(dt, nclr * 0.0) / std);
    }
  free(touched);
  return MT_OK;
}

static const mt_kernel_fn kernels[MT_OP__END] = {
#include "cpu_slots.h"
    [MT_OP_adagrad_sparse] = mutant_adagrad_sparse,
};
MT_MUTANT_ENTRY("sparse_eps_everywhere", kernels)

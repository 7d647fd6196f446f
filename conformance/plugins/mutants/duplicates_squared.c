/* duplicates_squared.c - breaks ADA-2: the sparse Adagrad step does not
 * coalesce the gradient: it walks the stored entries one by one, each
 * adding its own square to state_sum and taking its own step, so duplicate
 * entries contribute the sum of their squares (v1^2 + v2^2) where torch
 * squares their sum ((v1 + v2)^2). The naive scatter loop of a hand-written
 * embedding optimizer does exactly this. */
#include "mutant.h"

static mt_status mutant_adagrad_sparse(mt_call *call, mt_error *err) {
  mt_status st = mt_cpu_adagrad_sparse(call, err);
  if (st != MT_OK || call->n_out != 3 || call->in[1]->kind != MT_KIND_COO ||
      call->in[1]->coalesced || call->out[2]->kind != MT_KIND_COO)
    return st;
  const mt_tensor *p0 = call->in[0], *g = call->in[1], *s0 = call->in[2];
  mt_tensor *p = call->out[0], *s = call->out[1], *sd = call->out[2];
  mt_dtype dt = p->dtype;
  double nclr = mt__mutant_r(dt, -mt__mutant_clr(call));
  double eps = mt__mutant_r(dt, mt_kw_float(call->kw, "eps", 1e-10));
  int maximize = mt_kw_float(call->kw, "maximize", 0.0) != 0.0;
  int64_t row = mt_coo_row_numel(g);
  for (int64_t k = 0; k < g->nnz; k++) /* start again from the inputs */
    for (int64_t j = 0; j < row; j++) {
      int64_t i = mt_coo_linear(g, k) * row + j;
      mt_set_f64(p->values, dt, i, mt_dense_get(p0, i));
      mt_set_f64(s->values, dt, i, mt_dense_get(s0, i));
    }
  for (int64_t k = 0; k < g->nnz; k++) /* one entry at a time, duplicates too */
    for (int64_t j = 0; j < row; j++) {
      int64_t i = mt_coo_linear(g, k) * row + j;
      double v = mt_get_f64(g->values, dt, k * row + j);
      if (maximize) v = -v;
      double si = mt__mutant_r(dt, mt_get_f64(s->values, dt, i) + mt__mutant_r(dt, v * v));
      double std = mt__mutant_r(dt, mt__mutant_r(dt, sqrt(si)) + eps);
      mt_set_f64(s->values, dt, i, si);
      mt_set_f64(p->values, dt, i,
                 mt_get_f64(p->values, dt, i) + mt__mutant_r(dt, nclr * mt__mutant_r(dt, v / std)));
    }
  for (int64_t k = 0; k < sd->nnz; k++) /* std over the coalesced indices, from the new sums */
    for (int64_t j = 0; j < row; j++) {
      double si = mt_get_f64(s->values, dt, mt_coo_linear(sd, k) * row + j);
      mt_set_f64(sd->values, dt, k * row + j, mt__mutant_r(dt, mt__mutant_r(dt, sqrt(si)) + eps));
    }
  return MT_OK;
}

static const mt_kernel_fn kernels[MT_OP__END] = {
#include "cpu_slots.h"
    [MT_OP_adagrad_sparse] = mutant_adagrad_sparse,
};
MT_MUTANT_ENTRY("duplicates_squared", kernels)

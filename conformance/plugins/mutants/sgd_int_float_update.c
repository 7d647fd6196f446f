/* sgd_int_float_update.c - breaks SGD-1: an integer param with a sparse
 * gradient is updated in floating point and truncated back (p + (-lr) * g,
 * then cast), the way a library that computes every optimizer in float
 * does, where torch casts alpha = -lr to the integer type first (0 for
 * |lr| < 1: the param does not move). */
#include "mutant.h"

static mt_status mutant_sgd(mt_call *call, mt_error *err) {
  mt_status st = mt_cpu_sgd(call, err);
  if (st != MT_OK || call->n_in < 2 || call->in[1]->kind != MT_KIND_COO ||
      mt_dtype_is_float(call->in[0]->dtype) || call->in[0]->dtype == MT_bool)
    return st;
  const mt_tensor *g = call->in[1];
  mt_tensor *p = call->out[0];
  double lr = mt_kw_float(call->kw, "lr", 1e-3);
  int64_t row = mt_coo_row_numel(g);
  for (int64_t k = 0; k < g->nnz; k++)
    for (int64_t j = 0; j < row; j++) {
      int64_t i = mt_coo_linear(g, k) * row + j;
      double v = mt_get_f64(p->values, p->dtype, i) - lr * mt_get_f64(g->values, g->dtype, k * row + j);
      mt_set_f64(p->values, p->dtype, i, trunc(v));
    }
  return MT_OK;
}

static const mt_kernel_fn kernels[MT_OP__END] = {
#include "cpu_slots.h"
    [MT_OP_sgd] = mutant_sgd,
};
MT_MUTANT_ENTRY("sgd_int_float_update", kernels)

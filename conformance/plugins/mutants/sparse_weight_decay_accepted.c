/* sparse_weight_decay_accepted.c - breaks ADA-2: the sparse Adagrad step
 * accepts weight_decay and silently applies it at the gradient's entries
 * (grad += weight_decay * param there), where torch refuses: "weight_decay
 * option is not compatible with sparse gradients". */
#include "mutant.h"

static mt_status mutant_adagrad_sparse(mt_call *call, mt_error *err) {
  double wd = mt_kw_float(call->kw, "weight_decay", 0.0);
  if (call->n_in < 3 || call->in[1]->kind != MT_KIND_COO || !(wd > 0.0) ||
      call->in[0]->kind != MT_KIND_DENSE || !mt_shape_equal(call->in[0], call->in[1]))
    return mt_cpu_adagrad_sparse(call, err);
  const mt_tensor *p = call->in[0];
  mt_tensor *g = NULL;
  mt_status st = mt_coo_coalesce(call->in[1], &g, err);
  if (st != MT_OK) return st;
  mt_dtype dt = g->dtype;
  int64_t row = mt_coo_row_numel(g);
  for (int64_t k = 0; k < g->nnz; k++)
    for (int64_t j = 0; j < row; j++) {
      double v = mt_get_f64(g->values, dt, k * row + j);
      double pv = mt_dense_get(p, mt_coo_linear(g, k) * row + j);
      mt_set_f64(g->values, dt, k * row + j, mt__mutant_r(dt, v + mt__mutant_r(dt, wd * pv)));
    }
  const mt_kwargs *orig = call->kw;
  mt_kwarg items[32];
  mt_kwargs kw = {0, items};
  for (int k = 0; orig && k < orig->n && kw.n < 32; k++)
    if (strcmp(orig->items[k].name, "weight_decay") != 0) items[kw.n++] = orig->items[k];
  call->kw = &kw;
  st = mt__mutant_call_in(call, err, mt_cpu_adagrad_sparse, 1, g);
  call->kw = orig;
  mt_tensor_free(g);
  return st;
}

static const mt_kernel_fn kernels[MT_OP__END] = {
#include "cpu_slots.h"
    [MT_OP_adagrad_sparse] = mutant_adagrad_sparse,
};
MT_MUTANT_ENTRY("sparse_weight_decay_accepted", kernels)

/* sgd_sparse_weight_decay_densified.c - breaks SGD-3: weight decay with a
 * sparse gradient is accepted by densifying the gradient first (grad =
 * grad.to_dense() + weight_decay * param), which some optimizers do
 * silently, where torch refuses `grad.add(param)`: "add(sparse, dense) is
 * not supported". */
#include "mutant.h"

static mt_status mutant_sgd(mt_call *call, mt_error *err) {
  /* a dense param (a COO param adds sparse + sparse: SGD-5) */
  if (call->n_in != 2 || call->in[0]->kind != MT_KIND_DENSE || call->in[1]->kind != MT_KIND_COO ||
      mt_kw_float(call->kw, "weight_decay", 0.0) <= 0.0 || !mt_dtype_is_float(call->in[0]->dtype))
    return mt_cpu_sgd(call, err);
  mt_tensor *dense = NULL;
  mt_status st = mt_to_dense(call->in[1], &dense, err);
  if (st != MT_OK) return st;
  st = mt__mutant_call_in(call, err, mt_cpu_sgd, 1, dense);
  mt_tensor_free(dense);
  return st;
}

static const mt_kernel_fn kernels[MT_OP__END] = {
#include "cpu_slots.h"
    [MT_OP_sgd] = mutant_sgd,
};
MT_MUTANT_ENTRY("sgd_sparse_weight_decay_densified", kernels)

/* sparse_as_dense.c - breaks ADA-2: the sparse Adagrad step densifies the
 * gradient and takes the dense path (grad.to_dense(), what an optimizer
 * without a sparse path does), so eps goes everywhere, untouched entries
 * are updated, std comes back dense and weight_decay is accepted. */
#include "mutant.h"

static mt_status mutant_adagrad_sparse(mt_call *call, mt_error *err) {
  if (call->n_in < 3 || call->in[1]->kind != MT_KIND_COO) return mt_cpu_adagrad_sparse(call, err);
  mt_tensor *g = NULL;
  mt_status st = mt_to_dense(call->in[1], &g, err);
  if (st != MT_OK) return st;
  const mt_tensor *in[3] = {call->in[0], g, call->in[2]};
  const mt_tensor *const *orig = call->in;
  call->in = in;
  st = mt_cpu_adagrad_dense(call, err);
  call->in = orig;
  mt_tensor_free(g);
  return st;
}

static const mt_kernel_fn kernels[MT_OP__END] = {
#include "cpu_slots.h"
    [MT_OP_adagrad_sparse] = mutant_adagrad_sparse,
};
MT_MUTANT_ENTRY("sparse_as_dense", kernels)

/* sadam_dense_grad_ignored.c - breaks SADAM-5: a dense gradient is silently
 * treated as "no sparse entries" (param and state come back unchanged),
 * where torch raises "SparseAdam does not support dense gradients, please
 * consider Adam instead". A library that looks only for sparse entries
 * does this, and a training loop then never learns. */
#include "mutant.h"

static mt_status mutant_sparse_adam(mt_call *call, mt_error *err) {
  mt_status st = mt_cpu_sparse_adam(call, err);
  if (st != MT_LAYOUT_MISMATCH || call->n_in != 4 || call->in[1]->kind != MT_KIND_DENSE ||
      call->in[0]->kind != MT_KIND_DENSE)
    return st;
  const mt_host *h = call->host ? call->host : mt_host_default();
  for (int k = 0; k < 3; k++) {
    if ((st = mt_tensor_clone_host(h, call->in[k == 0 ? 0 : k + 1], &call->out[k], err)) != MT_OK) {
      for (int q = 0; q < k; q++) h->free(call->out[q]);
      call->n_out = 0;
      return st;
    }
  }
  call->n_out = 3;
  return MT_OK;
}

static const mt_kernel_fn kernels[MT_OP__END] = {
#include "cpu_slots.h"
    [MT_OP_sparse_adam] = mutant_sparse_adam,
};
MT_MUTANT_ENTRY("sadam_dense_grad_ignored", kernels)

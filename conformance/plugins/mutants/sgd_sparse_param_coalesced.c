/* sgd_sparse_param_coalesced.c - breaks SGD-5: SGD on a COO param returns
 * the updated param coalesced (a library that coalesces after every sparse
 * add), where torch's merge leaves it uncoalesced whenever an operand was,
 * duplicates included. Same values; level strict sees the storage (SP-6). */
#include "mutant.h"

static mt_status mutant_sgd(mt_call *call, mt_error *err) {
  mt_status st = mt_cpu_sgd(call, err);
  if (st != MT_OK || call->n_out < 1 || call->out[0]->kind != MT_KIND_COO ||
      call->out[0]->coalesced)
    return st;
  const mt_host *h = call->host ? call->host : mt_host_default();
  mt_tensor *c = NULL, *out = NULL;
  if ((st = mt_coo_coalesce(call->out[0], &c, err)) == MT_OK)
    st = mt_tensor_clone_host(h, c, &out, err);
  mt_tensor_free(c);
  if (st != MT_OK) return st; /* the runner frees call->out */
  h->free(call->out[0]);
  call->out[0] = out;
  return MT_OK;
}

static const mt_kernel_fn kernels[MT_OP__END] = {
#include "cpu_slots.h"
    [MT_OP_sgd] = mutant_sgd,
};
MT_MUTANT_ENTRY("sgd_sparse_param_coalesced", kernels)

/* masked_tensor_no_copy.c - breaks CALL-1: masked_tensor(data, mask) keeps a
 * view of the caller's data instead of a copy (torch.masked's
 * as_masked_tensor semantics where masked_tensor was asked for), so the
 * result shares memory with its input and later writes to either show up
 * in both.
 * Built as a view in the ABI's sense: the member's `owner` is NULL, so
 * whoever frees the result frees the mask and the header, never the
 * caller's buffer (no double free, whatever the runner does). */
#include "mutant.h"

static mt_tensor view_of_data; /* one call per case process: one view is enough */

static mt_status mutant_masked_tensor(mt_call *call, mt_error *err) {
  mt_status st = mt_cpu_masked_tensor(call, err);
  if (st != MT_OK || !mt__mutant_dense_masked(call->out[0]) || call->in[0]->kind != MT_KIND_DENSE ||
      mt_numel(call->in[0]) == 0)
    return st;
  const mt_host *h = call->host ? call->host : mt_host_default();
  mt_tensor *o = call->out[0];
  h->free(o->data); /* the copy, replaced by the view */
  view_of_data = *call->in[0];
  view_of_data.owner = NULL;
  o->data = &view_of_data;
  return MT_OK;
}

static const mt_kernel_fn kernels[MT_OP__END] = {
#include "cpu_slots.h"
    [MT_OP_masked_tensor] = mutant_masked_tensor,
};
MT_MUTANT_ENTRY("masked_tensor_no_copy", kernels)

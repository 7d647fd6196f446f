/* adagrad_in_place.c - breaks CALL-1: the dense Adagrad step updates param
 * and state_sum in place, as torch.optim does to its own tensors, and
 * returns them as its outputs: the caller's inputs are modified and the
 * outputs share their memory. A library wrapping an in-place optimizer
 * step behind a functional API does this.
 * The outputs are views in the ABI's sense (`owner` NULL): whoever frees
 * them never frees the caller's buffers (no double free). */
#include "mutant.h"

static mt_tensor views[2]; /* one call per case process */

static mt_status mutant_adagrad_dense(mt_call *call, mt_error *err) {
  mt_status st = mt_cpu_adagrad_dense(call, err);
  if (st != MT_OK || call->n_out != 3) return st;
  const mt_host *h = call->host ? call->host : mt_host_default();
  for (int k = 0; k < 2; k++) {
    const mt_tensor *in = call->in[k == 0 ? 0 : 2];
    mt_tensor *o = call->out[k];
    if (in->kind != MT_KIND_DENSE || !mt_is_contiguous(in) || o->dtype != in->dtype) continue;
    if (mt_numel(o)) memcpy(in->values, o->values, (size_t)mt_numel(o) * mt_dtype_size(o->dtype));
    h->free(o);
    views[k] = *in;
    views[k].owner = NULL;
    call->out[k] = &views[k];
  }
  return MT_OK;
}

static const mt_kernel_fn kernels[MT_OP__END] = {
#include "cpu_slots.h"
    [MT_OP_adagrad_dense] = mutant_adagrad_dense,
};
MT_MUTANT_ENTRY("adagrad_in_place", kernels)

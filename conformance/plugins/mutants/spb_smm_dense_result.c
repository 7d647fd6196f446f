/* spb_smm_dense_result.c - breaks SPB-4: smm returns its product dense
 * (what torch.mm gives for sparse @ dense), where torch's smm returns a
 * COO tensor. */
#include "mutant.h"

static mt_status mutant_smm(mt_call *call, mt_error *err) {
  mt_status st = mt_cpu_smm(call, err);
  if (st != MT_OK || call->n_out != 1) return st;
  const mt_host *h = call->host ? call->host : mt_host_default();
  mt_tensor *d = NULL, *out = NULL;
  if ((st = mt_to_dense(call->out[0], &d, err)) == MT_OK)
    st = mt_tensor_clone_host(h, d, &out, err);
  mt_tensor_free(d);
  h->free(call->out[0]);
  call->out[0] = out;
  call->n_out = out ? 1 : 0;
  return st;
}

static const mt_kernel_fn kernels[MT_OP__END] = {
#include "cpu_slots.h"
    [MT_OP_smm] = mutant_smm,
};
MT_MUTANT_ENTRY("spb_smm_dense_result", kernels)

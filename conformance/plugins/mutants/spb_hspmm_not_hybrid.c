/* spb_hspmm_not_hybrid.c - breaks SPB-4: hspmm returns a plain 2-d COO
 * (sparse_dim 2, smm's result) instead of torch's hybrid COO (sparse_dim 1,
 * one dense row of values per stored row). */
#include "mutant.h"

static mt_status mutant_hspmm(mt_call *call, mt_error *err) {
  mt_status st = mt_cpu_hspmm(call, err);
  if (st != MT_OK) return st;
  for (int k = 0; k < MT_MAX_OUTPUTS; k++) {
    if (call->out[k]) (call->host ? call->host : mt_host_default())->free(call->out[k]);
    call->out[k] = NULL;
  }
  call->n_out = 0;
  return mt_cpu_smm(call, err);
}

static const mt_kernel_fn kernels[MT_OP__END] = {
#include "cpu_slots.h"
    [MT_OP_hspmm] = mutant_hspmm,
};
MT_MUTANT_ENTRY("spb_hspmm_not_hybrid", kernels)

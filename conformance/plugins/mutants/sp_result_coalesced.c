/* sp_result_coalesced.c - breaks SP-5 (seen through SP-6's storage check):
 * neg of an uncoalesced COO tensor is coalesced first, as for the nonlinear
 * ops. The values are the same once coalesced, so only level strict, which
 * compares the coalesced flag and the stored entries, tells it from torch,
 * which maps the linear ops' entries as stored. */
#include "mutant.h"

static mt_status mutant_neg(mt_call *call, mt_error *err) {
  const mt_tensor *x = call->n_in > 0 ? call->in[0] : NULL;
  if (!x || x->kind != MT_KIND_COO || x->coalesced) return mt_cpu_neg(call, err);
  const mt_host *h = call->host ? call->host : mt_host_default();
  mt_tensor *c = NULL, *out = NULL;
  mt_status st = mt_coo_coalesce(x, &c, err);
  if (st == MT_OK) st = mt_tensor_clone_host(h, c, &out, err);
  mt_tensor_free(c);
  if (st != MT_OK) return st;
  int64_t n = out->nnz * mt_coo_row_numel(out);
  for (int64_t i = 0; i < n; i++)
    mt_set_f64(out->values, out->dtype, i, -mt_get_f64(out->values, out->dtype, i));
  call->out[0] = out;
  call->n_out = 1;
  return MT_OK;
}

static const mt_kernel_fn kernels[MT_OP__END] = {
#include "cpu_slots.h"
    [MT_OP_neg] = mutant_neg,
};
MT_MUTANT_ENTRY("sp_result_coalesced", kernels)

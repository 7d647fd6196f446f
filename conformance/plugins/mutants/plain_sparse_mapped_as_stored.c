/* plain_sparse_mapped_as_stored.c - breaks SP-5: a plain uncoalesced COO
 * tensor through sin is mapped entry by entry as stored (sin(a) + sin(b)
 * where an index holds a and b), the shortcut a library takes when it
 * treats a COO tensor as a list of values, where torch coalesces first and
 * gives sin(a + b). */
#include "mutant.h"

static mt_status mutant_sin(mt_call *call, mt_error *err) {
  const mt_tensor *x = call->n_in > 0 ? call->in[0] : NULL;
  if (!x || x->kind != MT_KIND_COO || x->coalesced || x->dtype != MT_float32)
    return mt_cpu_sin(call, err);
  const mt_host *h = call->host ? call->host : mt_host_default();
  mt_tensor *out = NULL;
  mt_status st = mt_tensor_clone_host(h, x, &out, err);
  if (st != MT_OK) return st;
  int64_t n = out->nnz * mt_coo_row_numel(out);
  for (int64_t i = 0; i < n; i++) ((float *)out->values)[i] = sinf(((const float *)x->values)[i]);
  call->out[0] = out;
  call->n_out = 1;
  return MT_OK;
}

static const mt_kernel_fn kernels[MT_OP__END] = {
#include "cpu_slots.h"
    [MT_OP_sin] = mutant_sin,
};
MT_MUTANT_ENTRY("plain_sparse_mapped_as_stored", kernels)

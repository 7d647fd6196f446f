/* sps_norm_as_stored.c - breaks SPS-4: torch.norm of a plain uncoalesced
 * COO tensor takes the 2-norm of the values as stored (sqrt(a^2 + b^2) for
 * an index stored twice as a and b), where torch coalesces first
 * (|a + b|). Treating the values array as the vector to measure, without
 * summing duplicates, is the natural shortcut. */
#include "mutant.h"

static mt_status mutant_norm(mt_call *call, mt_error *err) {
  mt_status st = mt_cpu_norm(call, err);
  const mt_tensor *x = call->n_in > 0 ? call->in[0] : NULL;
  if (st != MT_OK || call->n_out != 1 || !x || x->kind != MT_KIND_COO || x->coalesced ||
      mt_kw_find(call->kw, "p"))
    return st;
  double acc = 0;
  int64_t n = x->nnz * mt_coo_row_numel(x);
  for (int64_t i = 0; i < n; i++) {
    double v = mt_get_f64(x->values, x->dtype, i);
    acc += v * v;
  }
  mt_set_f64(call->out[0]->values, call->out[0]->dtype, 0, sqrt(acc));
  return MT_OK;
}

static const mt_kernel_fn kernels[MT_OP__END] = {
#include "cpu_slots.h"
    [MT_OP_norm] = mutant_norm,
};
MT_MUTANT_ENTRY("sps_norm_as_stored", kernels)

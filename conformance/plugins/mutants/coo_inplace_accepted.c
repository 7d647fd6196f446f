/* coo_inplace_accepted.c - breaks SP-2: add_ on COO storage returns the
 * out-of-place sum instead of torch's refusal. torch's _binary_helper
 * rebuilds self's data uncoalesced and MaskedTensor's validation then asks
 * for its indices (RuntimeError "Cannot get indices on an uncoalesced
 * tensor"): a library that coalesces first accepts it. */
#include "mutant.h"

static mt_status mutant_add_(mt_call *call, mt_error *err) {
  const mt_tensor *m = call->n_in > 0 ? call->in[0] : NULL;
  if (m && m->kind == MT_KIND_MASKED && m->data->kind == MT_KIND_COO) {
    mt_status st = mt_cpu_add(call, err);
    if (st != MT_LAYOUT_MISMATCH) return st;
  }
  return mt_cpu_add_(call, err);
}

static const mt_kernel_fn kernels[MT_OP__END] = {
#include "cpu_slots.h"
    [MT_OP_add_] = mutant_add_,
};
MT_MUTANT_ENTRY("coo_inplace_accepted", kernels)

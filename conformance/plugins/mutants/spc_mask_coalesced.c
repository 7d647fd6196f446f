/* spc_mask_coalesced.c - breaks SPC-7: sparse_mask coalesces an
 * uncoalesced COO mask first, so a repeated mask index gives one entry;
 * torch keeps the mask's indices as stored (each repeat holds self's value,
 * and the result sums them when coalesced). */
#include "mutant.h"

static mt_status mutant_sparse_mask(mt_call *call, mt_error *err) {
  const mt_tensor *m = call->n_in > 1 ? call->in[1] : NULL;
  if (!m || m->kind != MT_KIND_COO || m->coalesced) return mt_cpu_sparse_mask(call, err);
  mt_tensor *c = NULL;
  mt_status st = mt_coo_coalesce(m, &c, err);
  if (st == MT_OK) st = mt__mutant_call_in(call, err, mt_cpu_sparse_mask, 1, c);
  mt_tensor_free(c);
  return st;
}

static const mt_kernel_fn kernels[MT_OP__END] = {
#include "cpu_slots.h"
    [MT_OP_sparse_mask] = mutant_sparse_mask,
};
MT_MUTANT_ENTRY("spc_mask_coalesced", kernels)

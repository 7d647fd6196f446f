/* where_mask_of_x.c - breaks STR-3: torch.where selects the data by the
 * condition but keeps the first branch's mask everywhere, as a library that
 * treats where like a binary op whose result takes self's mask. */
#include "mutant.h"

static mt_status mutant_where(mt_call *call, mt_error *err) {
  mt_status st = mt_cpu_where(call, err);
  if (st != MT_OK || call->n_in < 2 || !mt__mutant_dense_masked(call->in[1]) ||
      !mt__mutant_dense_masked(call->out[0]))
    return st;
  const mt_tensor *x = call->in[1]->mask;
  mt_tensor *m = call->out[0]->mask;
  if (mt_numel(x) == mt_numel(m)) memcpy(m->values, x->values, (size_t)mt_numel(m));
  return MT_OK;
}

static const mt_kernel_fn kernels[MT_OP__END] = {
#include "cpu_slots.h"
    [MT_OP_where] = mutant_where,
};
MT_MUTANT_ENTRY("where_mask_of_x", kernels)

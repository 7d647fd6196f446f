/* spc_values_coalesces.c - breaks SPC-8: values() of an uncoalesced COO
 * tensor coalesces it and answers, where torch refuses ("Cannot get values
 * on an uncoalesced tensor, please call .coalesce() first"). */
#include "mutant.h"

static mt_status mutant_values(mt_call *call, mt_error *err) {
  const mt_tensor *x = call->n_in > 0 ? call->in[0] : NULL;
  if (!x || x->kind != MT_KIND_COO || x->coalesced) return mt_cpu_values(call, err);
  mt_tensor *c = NULL;
  mt_status st = mt_coo_coalesce(x, &c, err);
  if (st == MT_OK) st = mt__mutant_call_in(call, err, mt_cpu_values, 0, c);
  mt_tensor_free(c);
  return st;
}

static const mt_kernel_fn kernels[MT_OP__END] = {
#include "cpu_slots.h"
    [MT_OP_values] = mutant_values,
};
MT_MUTANT_ENTRY("spc_values_coalesces", kernels)

/* sadam_empty_refused.c - breaks SADAM-3: an empty gradient (no entry once
 * coalesced) is refused as invalid, where torch skips the update and leaves
 * param and state as they were (an embedding whose rows got no gradient
 * this step). */
#include "mutant.h"

static mt_status mutant_sparse_adam(mt_call *call, mt_error *err) {
  if (call->n_in >= 2 && call->in[1] && call->in[1]->kind == MT_KIND_COO && call->in[1]->nnz == 0 &&
      call->in[0] && call->in[0]->kind == MT_KIND_DENSE && mt_dtype_is_float(call->in[0]->dtype)) {
    call->n_out = 0;
    return mt_err(err, MT_INVALID_ARGUMENT, "sparse_adam: the gradient has no entries");
  }
  return mt_cpu_sparse_adam(call, err);
}

static const mt_kernel_fn kernels[MT_OP__END] = {
#include "cpu_slots.h"
    [MT_OP_sparse_adam] = mutant_sparse_adam,
};
MT_MUTANT_ENTRY("sadam_empty_refused", kernels)

/* spc_blocksize_change_accepted.c - breaks SPC-5: to_sparse_bsr of a BSR
 * tensor with another blocksize re-blocks it through a dense copy, where
 * torch refuses ("conversion from SparseBsr to SparseBsr with blocksize
 * changed from [2, 3] to [1, 2] is not supported"). */
#include "mutant.h"

static mt_status mutant_to_sparse_bsr(mt_call *call, mt_error *err) {
  mt_status st = mt_cpu_to_sparse_bsr(call, err);
  const mt_tensor *x = call->n_in > 0 ? call->in[0] : NULL;
  if (st != MT_INVALID_ARGUMENT || !x || x->kind != MT_KIND_BSR ||
      !strstr(err->msg, "blocksize changed"))
    return st;
  mt_tensor *d = NULL;
  if ((st = mt_to_dense(x, &d, err)) == MT_OK)
    st = mt__mutant_call_in(call, err, mt_cpu_to_sparse_bsr, 0, d);
  mt_tensor_free(d);
  return st;
}

static const mt_kernel_fn kernels[MT_OP__END] = {
#include "cpu_slots.h"
    [MT_OP_to_sparse_bsr] = mutant_to_sparse_bsr,
};
MT_MUTANT_ENTRY("spc_blocksize_change_accepted", kernels)

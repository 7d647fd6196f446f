/* spc_stored_zero_dropped.c - breaks SPC-2: to_sparse_coo of a compressed
 * tensor drops the stored entries that hold 0 (a stored zero of CSR, the
 * zeros that fill a BSR block), as a library does that treats "stored" as
 * "nonzero" (scipy's eliminate_zeros). torch keeps every stored entry. */
#include "spc_mutant.h"

static mt_status mutant_to_sparse_coo(mt_call *call, mt_error *err) {
  mt_status st = mt_cpu_to_sparse_coo(call, err);
  const mt_tensor *x = call->n_in > 0 ? call->in[0] : NULL;
  if (st == MT_OK && x && mt_kind_is_compressed(x->kind)) mt__spc_drop_zero_entries(call->out[0]);
  return st;
}

static const mt_kernel_fn kernels[MT_OP__END] = {
#include "cpu_slots.h"
    [MT_OP_to_sparse_coo] = mutant_to_sparse_coo,
};
MT_MUTANT_ENTRY("spc_stored_zero_dropped", kernels)

/* spc_coo_always_coalesced.c - breaks SPC-3: every COO result of
 * to_sparse_coo is flagged coalesced, as a library does whose COO is
 * always sorted. torch keeps an uncoalesced COO input uncoalesced and flags
 * COO from CSC/BSR/BSC uncoalesced (column or block order). */
#include "mutant.h"

static mt_status mutant_to_sparse_coo(mt_call *call, mt_error *err) {
  mt_status st = mt_cpu_to_sparse_coo(call, err);
  if (st == MT_OK && call->out[0] && call->out[0]->kind == MT_KIND_COO) call->out[0]->coalesced = 1;
  return st;
}

static const mt_kernel_fn kernels[MT_OP__END] = {
#include "cpu_slots.h"
    [MT_OP_to_sparse_coo] = mutant_to_sparse_coo,
};
MT_MUTANT_ENTRY("spc_coo_always_coalesced", kernels)

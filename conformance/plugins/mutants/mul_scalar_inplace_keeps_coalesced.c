/* mul_scalar_inplace_keeps_coalesced.c - breaks SPP-5: S.mul_(number) on a
 * coalesced COO tensor keeps the coalesced flag, as a library reasoning
 * "scaling the values cannot move an index" would; torch's in-place sparse
 * mul by a number leaves self flagged uncoalesced (its out-of-place mul
 * and div_ keep the flag). */
#include "mutant.h"

static mt_status mutant_mul_(mt_call *call, mt_error *err) {
  mt_status st = mt_cpu_mul_(call, err);
  if (st == MT_OK && call->n_out == 1 && call->out[0]->kind == MT_KIND_COO && call->n_in > 1 &&
      call->in[0]->kind == MT_KIND_COO && call->in[1]->kind == MT_KIND_SCALAR)
    call->out[0]->coalesced = call->in[0]->coalesced;
  return st;
}

static const mt_kernel_fn kernels[MT_OP__END] = {
#include "cpu_slots.h"
    [MT_OP_mul_] = mutant_mul_,
};
MT_MUTANT_ENTRY("mul_scalar_inplace_keeps_coalesced", kernels)

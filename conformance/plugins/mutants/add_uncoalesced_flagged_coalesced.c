/* add_uncoalesced_flagged_coalesced.c - breaks SPP-2: add of two COO
 * tensors returns torch's merged entries but flags the result coalesced
 * whatever its operands were, the shortcut of a library that assumes a
 * merge of two index lists is always sorted and unique (torch flags it
 * coalesced only when both operands are; with an uncoalesced operand the
 * merge keeps duplicates and the stored order). */
#include "mutant.h"

static mt_status mutant_add(mt_call *call, mt_error *err) {
  mt_status st = mt_cpu_add(call, err);
  if (st == MT_OK && call->n_out == 1 && call->out[0] && call->out[0]->kind == MT_KIND_COO &&
      call->n_in > 1 && call->in[1] && call->in[1]->kind == MT_KIND_COO)
    call->out[0]->coalesced = 1;
  return st;
}

static const mt_kernel_fn kernels[MT_OP__END] = {
#include "cpu_slots.h"
    [MT_OP_add] = mutant_add,
};
MT_MUTANT_ENTRY("add_uncoalesced_flagged_coalesced", kernels)

/* spb_smm_flagged_coalesced.c - breaks SPB-4 (caught because SPB cases
 * check the structure, SP-6): smm flags its result coalesced. Its entries are sorted and unique,
 * so the values agree; torch's `is_coalesced()` is False all the same (an
 * implementation that sets the flag from the entries' order, not torch's
 * kernel). */
#include "mutant.h"

static mt_status mutant_smm(mt_call *call, mt_error *err) {
  mt_status st = mt_cpu_smm(call, err);
  if (st == MT_OK && call->n_out == 1 && call->out[0]->kind == MT_KIND_COO)
    call->out[0]->coalesced = 1;
  return st;
}

static const mt_kernel_fn kernels[MT_OP__END] = {
#include "cpu_slots.h"
    [MT_OP_smm] = mutant_smm,
};
MT_MUTANT_ENTRY("spb_smm_flagged_coalesced", kernels)

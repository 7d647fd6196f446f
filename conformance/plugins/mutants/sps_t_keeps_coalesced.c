/* sps_t_keeps_coalesced.c - breaks SPS-2: t() of a plain COO tensor keeps
 * the input's coalesced flag, where torch clears it (its result is marked
 * uncoalesced whenever it stores anything, though the swapped indices of a
 * 2-entry tensor could be sorted). A library that copies the metadata of
 * the input into the view does this; the values and indices are right, so
 * only level strict's storage check (SP-6) sees it. */
#include "mutant.h"

static mt_status mutant_t(mt_call *call, mt_error *err) {
  mt_status st = mt_cpu_t(call, err);
  if (st != MT_OK || call->n_out != 1 || call->in[0]->kind != MT_KIND_COO) return st;
  call->out[0]->coalesced = call->in[0]->coalesced;
  return MT_OK;
}

static const mt_kernel_fn kernels[MT_OP__END] = {
#include "cpu_slots.h"
    [MT_OP_t] = mutant_t,
};
MT_MUTANT_ENTRY("sps_t_keeps_coalesced", kernels)

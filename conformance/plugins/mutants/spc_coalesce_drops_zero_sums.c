/* spc_coalesce_drops_zero_sums.c - breaks SPC-6: coalesce drops the
 * entries whose duplicates sum to 0 (1.5 + -1.5), as scipy's sum_duplicates
 * followed by eliminate_zeros would. torch keeps the stored 0. */
#include "spc_mutant.h"

static mt_status mutant_coalesce(mt_call *call, mt_error *err) {
  mt_status st = mt_cpu_coalesce(call, err);
  if (st == MT_OK) mt__spc_drop_zero_entries(call->out[0]);
  return st;
}

static const mt_kernel_fn kernels[MT_OP__END] = {
#include "cpu_slots.h"
    [MT_OP_coalesce] = mutant_coalesce,
};
MT_MUTANT_ENTRY("spc_coalesce_drops_zero_sums", kernels)

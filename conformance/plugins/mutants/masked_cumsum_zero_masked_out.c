/* masked_cumsum_zero_masked_out.c - breaks MFN-4: masked.cumsum writes 0 at
 * masked-out positions (a numpy.ma result `.filled(0)`) instead of torch's
 * running sum, which carries through them. Same-shape masks only. */
#include "mutant.h"

static mt_status mutant_cumsum(mt_call *call, mt_error *err) {
  mt_status st = mt_cpu_masked_cumsum(call, err);
  if (st != MT_OK || call->n_in != 2) return st;
  const mt_tensor *m = call->in[1];
  mt_tensor *o = call->out[0];
  if (m->kind != MT_KIND_DENSE || m->dtype != MT_bool || !mt_is_contiguous(m) ||
      mt_numel(m) != mt_numel(o))
    return st;
  for (int64_t i = 0; i < mt_numel(o); i++)
    if (!((const uint8_t *)m->values)[i]) mt_set_f64(o->values, o->dtype, i, 0.0);
  return MT_OK;
}

static const mt_kernel_fn kernels[MT_OP__END] = {
#include "cpu_slots.h"
    [MT_OP_masked_cumsum] = mutant_cumsum,
};
MT_MUTANT_ENTRY("masked_cumsum_zero_masked_out", kernels)

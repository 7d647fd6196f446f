/* fill_zero.c - breaks RED-3: amin and amax leave 0 at fully masked-out
 * outputs instead of torch's fill (+inf for amin, -inf for amax): a library
 * that allocates its outputs zeroed and writes only the groups that had
 * something to reduce. */
#include "mutant.h"

static mt_status zero_fill(mt_call *call, mt_error *err, mt_kernel_fn real) {
  mt_status st = real(call, err);
  if (st != MT_OK || !mt__mutant_dense_masked(call->out[0])) return st;
  mt_tensor *o = call->out[0];
  const uint8_t *m = o->mask->values;
  for (int64_t i = 0; i < mt_numel(o->data); i++)
    if (!m[i]) mt_set_f64(o->data->values, o->data->dtype, i, 0.0);
  return MT_OK;
}
static mt_status mutant_amin(mt_call *c, mt_error *e) { return zero_fill(c, e, mt_cpu_amin); }
static mt_status mutant_amax(mt_call *c, mt_error *e) { return zero_fill(c, e, mt_cpu_amax); }

static const mt_kernel_fn kernels[MT_OP__END] = {
#include "cpu_slots.h"
    [MT_OP_amin] = mutant_amin, [MT_OP_amax] = mutant_amax,
};
MT_MUTANT_ENTRY("fill_zero", kernels)

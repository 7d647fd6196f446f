/* round_half_away.c - breaks UN-4: round(x) is C's round(), half away from
 * zero (round(2.5) = 3, round(-0.5) = -1), the schoolbook rule of many
 * libraries, where torch rounds half to even (round(2.5) = 2, round(0.5) =
 * 0) as nearbyint does. */
#include "mutant.h"

static mt_status mutant_round(mt_call *call, mt_error *err) {
  mt_status st = mt_cpu_round(call, err);
  const mt_tensor *x = call->n_in > 0 ? call->in[0] : NULL;
  if (st != MT_OK || !mt__mutant_dense_masked(x) || !mt_dtype_is_float(x->data->dtype) ||
      !mt__mutant_dense_masked(call->out[0]))
    return st;
  mt_tensor *o = call->out[0]->data;
  for (int64_t i = 0; i < mt_numel(o); i++)
    mt_set_f64(o->values, o->dtype, i, round(mt_dense_get(x->data, i)));
  return MT_OK;
}

static const mt_kernel_fn kernels[MT_OP__END] = {
#include "cpu_slots.h"
    [MT_OP_round] = mutant_round,
};
MT_MUTANT_ENTRY("round_half_away", kernels)

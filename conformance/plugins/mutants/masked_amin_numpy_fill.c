/* masked_amin_numpy_fill.c - breaks MFN-2: masked.amin of a fully masked
 * slice gives numpy.ma's default fill for floats, 1e20, instead of torch's
 * identity +inf (a port that reuses np.ma.minimum_fill_value-style
 * constants); every +inf in the result becomes 1e20. */
#include "mutant.h"

static mt_status mutant_amin(mt_call *call, mt_error *err) {
  mt_status st = mt_cpu_masked_amin(call, err);
  if (st != MT_OK) return st;
  mt_tensor *o = call->out[0];
  if (!mt_dtype_is_float(o->dtype)) return MT_OK;
  for (int64_t i = 0; i < mt_numel(o); i++)
    if (mt_get_f64(o->values, o->dtype, i) == INFINITY) mt_set_f64(o->values, o->dtype, i, 1e20);
  return MT_OK;
}

static const mt_kernel_fn kernels[MT_OP__END] = {
#include "cpu_slots.h"
    [MT_OP_masked_amin] = mutant_amin,
};
MT_MUTANT_ENTRY("masked_amin_numpy_fill", kernels)

/* inplace_promotes.c - breaks UN-6: m.sin_() on integer data returns the
 * float32 result (the in-place op implemented as `m = m.sin()`), where
 * torch refuses to write a float result into an integer tensor: "result
 * type Float can't be cast to the desired output type Long". */
#include "mutant.h"

static mt_status mutant_sin_(mt_call *call, mt_error *err) {
  const mt_tensor *x = call->n_in > 0 ? call->in[0] : NULL;
  if (x && x->kind == MT_KIND_MASKED && x->data && !mt_dtype_is_float(x->data->dtype))
    return mt_cpu_sin(call, err);
  return mt_cpu_sin_(call, err);
}

static const mt_kernel_fn kernels[MT_OP__END] = {
#include "cpu_slots.h"
    [MT_OP_sin_] = mutant_sin_,
};
MT_MUTANT_ENTRY("inplace_promotes", kernels)

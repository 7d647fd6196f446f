/* to_tensor_numpy_fill.c - breaks MASK-3: to_tensor(value) ignores value and
 * fills masked-out elements with numpy.ma's default float fill value 1e20
 * (m.filled() called without its argument). */
#include "mutant.h"

static mt_status mutant_to_tensor(mt_call *call, mt_error *err) {
  mt_status st = mt_cpu_to_tensor(call, err);
  const mt_tensor *m = call->n_in > 0 ? call->in[0] : NULL;
  if (st != MT_OK || !mt__mutant_dense_masked(m) || call->out[0]->kind != MT_KIND_DENSE) return st;
  mt_tensor *o = call->out[0];
  const uint8_t *k = m->mask->values;
  for (int64_t i = 0; i < mt_numel(o); i++)
    if (!k[i]) mt_set_f64(o->values, o->dtype, i, 1e20);
  return MT_OK;
}

static const mt_kernel_fn kernels[MT_OP__END] = {
#include "cpu_slots.h"
    [MT_OP_to_tensor] = mutant_to_tensor,
};
MT_MUTANT_ENTRY("to_tensor_numpy_fill", kernels)

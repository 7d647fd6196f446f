/* to_tensor_reads_data.c - breaks MASK-3: to_tensor(value) returns the
 * stored data everywhere, ignoring the fill at masked-out positions (a
 * library that treats the mask as advisory). The goldens' poison makes it
 * visible. */
#include "mutant.h"

static mt_status mutant_to_tensor(mt_call *call, mt_error *err) {
  mt_status st = mt_cpu_to_tensor(call, err);
  const mt_tensor *m = call->n_in > 0 ? call->in[0] : NULL;
  if (st != MT_OK || !mt__mutant_dense_masked(m) || call->out[0]->kind != MT_KIND_DENSE) return st;
  mt_tensor *o = call->out[0];
  for (int64_t i = 0; i < mt_numel(o); i++)
    mt_set_f64(o->values, o->dtype, i, mt_dense_get(m->data, i));
  return MT_OK;
}

static const mt_kernel_fn kernels[MT_OP__END] = {
#include "cpu_slots.h"
    [MT_OP_to_tensor] = mutant_to_tensor,
};
MT_MUTANT_ENTRY("to_tensor_reads_data", kernels)

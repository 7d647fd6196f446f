/* to_tensor_in_place.c - breaks CALL-1: to_tensor(value) fills the input's
 * own data, data.masked_fill_(~mask, value) where masked_fill (no
 * underscore) was meant, then returns a copy: the result is right, but the
 * caller's masked tensor has lost its masked-out data. */
#include "mutant.h"

static mt_status mutant_to_tensor(mt_call *call, mt_error *err) {
  mt_status st = mt_cpu_to_tensor(call, err);
  const mt_tensor *m = call->n_in > 0 ? call->in[0] : NULL;
  if (st != MT_OK || !mt__mutant_dense_masked(m) || call->out[0]->kind != MT_KIND_DENSE) return st;
  const mt_tensor *o = call->out[0];
  const uint8_t *k = m->mask->values;
  for (int64_t i = 0; i < mt_numel(o); i++) /* the fill, written back into the input */
    if (!k[i]) mt_set_f64(m->data->values, m->data->dtype, i, mt_get_f64(o->values, o->dtype, i));
  return MT_OK;
}

static const mt_kernel_fn kernels[MT_OP__END] = {
#include "cpu_slots.h"
    [MT_OP_to_tensor] = mutant_to_tensor,
};
MT_MUTANT_ENTRY("to_tensor_in_place", kernels)

/* nextafter_half_in_float.c - breaks BIN-8: float16 nextafter computed as
 * float's nextafterf and rounded back to float16 (how float16 ops are
 * usually computed), which steps by a float ulp and rounds back to x,
 * where torch steps to the adjacent float16. Same-shape masked operands. */
#include "mutant.h"

static mt_status mutant_nextafter(mt_call *call, mt_error *err) {
  mt_status s = mt_cpu_nextafter(call, err);
  if (s != MT_OK || call->n_in < 2 || !mt__mutant_dense_masked(call->out[0])) return s;
  const mt_tensor *a = call->in[0], *b = call->in[1];
  mt_tensor *o = call->out[0]->data;
  if (o->dtype != MT_float16 || !mt__mutant_dense_masked(a) || !mt__mutant_dense_masked(b) ||
      mt_numel(a) != mt_numel(o) || mt_numel(b) != mt_numel(o))
    return MT_OK;
  for (int64_t i = 0; i < mt_numel(o); i++) {
    float x = (float)mt_get_f64(a->data->values, MT_float16, i);
    float y = (float)mt_get_f64(b->data->values, MT_float16, i);
    mt_set_f64(o->values, MT_float16, i, (double)nextafterf(x, y));
  }
  return MT_OK;
}

static const mt_kernel_fn kernels[MT_OP__END] = {
#include "cpu_slots.h"
    [MT_OP_nextafter] = mutant_nextafter,
};
MT_MUTANT_ENTRY("nextafter_half_in_float", kernels)

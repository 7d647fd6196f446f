/* npma_mask_not_broadcast.c - breaks NPMA-16: numpy_ma's binary ops
 * broadcast the data but take the result's mask from the operand that
 * already has the result's shape, dropping the broadcast operand's mask
 * (a port that stretches values with strides but copies one mask). */
#include "npma_mutant.h"

static mt_status one_mask(mt_call *call, mt_error *err,
                          mt_status (*kernel)(mt_call *, mt_error *)) {
  mt_status st = kernel(call, err);
  if (st != MT_OK || call->n_in < 2 || !mt__mutant_dense_masked(call->out[0])) return st;
  mt_tensor *o = call->out[0];
  for (int j = 0; j < 2; j++) {
    const mt_tensor *a = call->in[j];
    if (!mt__mutant_dense_masked(a) || !mt_shape_equal(a->data, o->data)) continue;
    const mt_tensor *other = call->in[1 - j];
    if (other->kind == MT_KIND_MASKED && mt_shape_equal(other->data, o->data)) return st;
    for (int64_t i = 0; i < mt_numel(o->mask); i++)
      ((uint8_t *)o->mask->values)[i] = ((const uint8_t *)a->mask->values)[i];
    return MT_OK;
  }
  return st;
}

#define NPMA_MUTANT_BINARY(op) \
  static mt_status mutant_##op(mt_call *call, mt_error *err) { \
    return one_mask(call, err, mt_npma_##op); \
  }
NPMA_MUTANT_BINARY(add)
NPMA_MUTANT_BINARY(mul)
NPMA_MUTANT_BINARY(eq)

static const mt_kernel_fn npma[MT_OP__END] = {
#include "npma_slots.h"
    [MT_OP_add] = mutant_add,
    [MT_OP_mul] = mutant_mul,
    [MT_OP_eq] = mutant_eq,
};
MT_NPMA_MUTANT_ENTRY("npma_mask_not_broadcast", npma)

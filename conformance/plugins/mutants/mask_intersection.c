/* mask_intersection.c - breaks MASK-8: binary ops on two masked tensors whose
 * masks differ return a result specified only where both operands are
 * (mask = a AND b, numpy.ma's rule: it ORs the "masked" flags) instead of
 * torch's MASK_MISMATCH error. */
#include "mutant.h"

static mt_status intersect(mt_call *call, mt_error *err, mt_kernel_fn real) {
  const mt_tensor *a = call->n_in > 1 ? call->in[0] : NULL, *b = call->n_in > 1 ? call->in[1] : NULL;
  if (!mt__mutant_dense_masked(a) || !mt__mutant_dense_masked(b) || !mt_shape_equal(a, b))
    return real(call, err);
  mt_tensor b_same = *b; /* a view of b that borrows a's mask */
  b_same.mask = a->mask;
  b_same.owner = NULL;
  mt_status st = mt__mutant_call_in(call, err, real, 1, &b_same);
  if (st != MT_OK || !mt__mutant_dense_masked(call->out[0])) return st;
  uint8_t *m = call->out[0]->mask->values;
  const uint8_t *mb = b->mask->values;
  for (int64_t i = 0; i < mt_numel(b); i++) m[i] = m[i] && mb[i];
  return MT_OK;
}

#define MUTANT(op) \
  static mt_status mutant_##op(mt_call *c, mt_error *e) { return intersect(c, e, mt_cpu_##op); }
MUTANT(add)
MUTANT(sub)
MUTANT(mul)
MUTANT(div)

static const mt_kernel_fn kernels[MT_OP__END] = {
#include "cpu_slots.h"
    [MT_OP_add] = mutant_add, [MT_OP_sub] = mutant_sub,
    [MT_OP_mul] = mutant_mul, [MT_OP_div] = mutant_div,
};
MT_MUTANT_ENTRY("mask_intersection", kernels)

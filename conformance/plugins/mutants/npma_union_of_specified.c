/* npma_union_of_specified.c - breaks NPMA-2: numpy_ma's add/sub/mul/div are
 * specified where EITHER operand is (the union of the specified sets, a
 * library that ANDs numpy's invalid-masks instead of ORing them, or that
 * treats a masked-out element as "use the other operand"), instead of only
 * where both are. Each masked operand is handed to the real kernel with the
 * union of the masks. */
#include "npma_mutant.h"

static mt_status union_call(mt_call *call, mt_error *err, mt_kernel_fn real) {
  const mt_tensor *a = call->n_in > 1 ? call->in[0] : NULL;
  const mt_tensor *b = call->n_in > 1 ? call->in[1] : NULL;
  if (!mt__mutant_dense_masked(a) || !mt__mutant_dense_masked(b) || !mt_shape_equal(a, b))
    return real(call, err);
  mt_tensor *u = NULL;
  mt_status st = mt_tensor_clone(a->mask, &u, err);
  if (st != MT_OK) return st;
  uint8_t *um = u->values;
  const uint8_t *bm = b->mask->values;
  for (int64_t i = 0; i < mt_numel(a); i++) um[i] = um[i] || bm[i];
  mt_tensor a2 = *a, b2 = *b;
  a2.mask = u;
  b2.mask = u;
  a2.owner = b2.owner = NULL;
  const mt_tensor *in[2] = {&a2, &b2};
  const mt_tensor *const *orig = call->in;
  call->in = in;
  st = real(call, err);
  call->in = orig;
  mt_tensor_free(u);
  return st;
}

#define MUTANT(op) \
  static mt_status mutant_##op(mt_call *c, mt_error *e) { return union_call(c, e, mt_npma_##op); }
MUTANT(add)
MUTANT(sub)
MUTANT(mul)
MUTANT(div)

static const mt_kernel_fn npma[MT_OP__END] = {
#include "npma_slots.h"
    [MT_OP_add] = mutant_add, [MT_OP_sub] = mutant_sub,
    [MT_OP_mul] = mutant_mul, [MT_OP_div] = mutant_div,
};
MT_NPMA_MUTANT_ENTRY("npma_union_of_specified", npma)

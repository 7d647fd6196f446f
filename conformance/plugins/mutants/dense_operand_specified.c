/* dense_operand_specified.c - breaks MASK-7: masked (op) plain tensor comes
 * back fully specified: the plain tensor is taken as a masked tensor with an
 * all-true mask and the masks are combined by OR (the union of the
 * specified sets), where torch keeps the masked operand's mask. */
#include "mutant.h"

static mt_status union_with_dense(mt_call *call, mt_error *err, mt_kernel_fn real) {
  mt_status st = real(call, err);
  if (st != MT_OK || call->n_in < 2 || !mt__mutant_dense_masked(call->out[0])) return st;
  if (call->in[0]->kind != MT_KIND_DENSE && call->in[1]->kind != MT_KIND_DENSE) return MT_OK;
  mt_tensor *m = call->out[0]->mask;
  memset(m->values, 1, (size_t)mt_numel(m));
  return MT_OK;
}

#define MUTANT(op) \
  static mt_status mutant_##op(mt_call *c, mt_error *e) { return union_with_dense(c, e, mt_cpu_##op); }
MUTANT(add)
MUTANT(sub)
MUTANT(mul)
MUTANT(div)

static const mt_kernel_fn kernels[MT_OP__END] = {
#include "cpu_slots.h"
    [MT_OP_add] = mutant_add, [MT_OP_sub] = mutant_sub,
    [MT_OP_mul] = mutant_mul, [MT_OP_div] = mutant_div,
};
MT_MUTANT_ENTRY("dense_operand_specified", kernels)

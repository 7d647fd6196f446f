/* dtype_before_masks.c - breaks MASK-8: binary ops on two masked tensors
 * check the data dtypes (the type-promotion step most libraries run first)
 * before comparing the masks, so operands whose masks differ AND whose
 * dtypes differ report DTYPE_MISMATCH where torch.masked, which compares
 * the masks before anything else, reports MASK_MISMATCH. Needs golden
 * cases with both violations to show. Since binary ops promote (BIN-2),
 * operands of different dtypes are no error by themselves: the mutant
 * reports DTYPE_MISMATCH only where the masks differ too (its check runs
 * first), which is the only place the order is visible. */
#include "mutant.h"

static mt_status dtype_first(mt_call *call, mt_error *err, mt_kernel_fn real) {
  const mt_tensor *a = call->n_in > 1 ? call->in[0] : NULL, *b = call->n_in > 1 ? call->in[1] : NULL;
  mt_status st = real(call, err);
  if (st == MT_MASK_MISMATCH && a && b && a->kind == MT_KIND_MASKED &&
      b->kind == MT_KIND_MASKED && a->data && b->data && a->data->dtype != b->data->dtype) {
    call->n_out = 0;
    return mt_err(err, MT_DTYPE_MISMATCH, "%s: dtypes must match (inputs/0 is %s, inputs/1 is %s)",
                  mt_op_name(call->op), mt_dtype_name(a->data->dtype), mt_dtype_name(b->data->dtype));
  }
  return st;
}

#define MUTANT(op) \
  static mt_status mutant_##op(mt_call *c, mt_error *e) { return dtype_first(c, e, mt_cpu_##op); }
MUTANT(add)
MUTANT(sub)
MUTANT(mul)
MUTANT(div)

static const mt_kernel_fn kernels[MT_OP__END] = {
#include "cpu_slots.h"
    [MT_OP_add] = mutant_add, [MT_OP_sub] = mutant_sub,
    [MT_OP_mul] = mutant_mul, [MT_OP_div] = mutant_div,
};
MT_MUTANT_ENTRY("dtype_before_masks", kernels)

/* sub_bool_as_xor.c - breaks BIN-3: sub of two bools is computed as xor
 * (what torch's own error message suggests, and what a generic integer
 * kernel gives modulo 2), where torch refuses any bool operand of sub. */
#include "mutant.h"

static int is_bool(const mt_tensor *t) {
  if (!t) return 0;
  return (t->kind == MT_KIND_MASKED ? t->data->dtype : t->dtype) == MT_bool;
}
static mt_status mutant_sub(mt_call *call, mt_error *err) {
  mt_status st = mt_cpu_sub(call, err);
  if (st == MT_DTYPE_MISMATCH && call->n_in > 1 && is_bool(call->in[0]) && is_bool(call->in[1]))
    return mt_cpu_bitwise_xor(call, err);
  return st;
}

static const mt_kernel_fn kernels[MT_OP__END] = {
#include "cpu_slots.h"
    [MT_OP_sub] = mutant_sub,
};
MT_MUTANT_ENTRY("sub_bool_as_xor", kernels)

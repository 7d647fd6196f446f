/* prod_fills_zero.c - breaks RED-2: prod over a dim replaces masked-out
 * elements by 0 before reducing (masked_fill(~mask, 0), the one fill a
 * library wrote for sum and reused for every reduction) instead of prod's
 * identity 1, so any group with a masked-out element multiplies to 0. */
#include "mutant.h"

static void fill_zero(double *v, uint8_t *m) {
  if (!*m) *v = 0.0;
  *m = 1;
}
static mt_status mutant_prod(mt_call *call, mt_error *err) {
  if (mt__mutant_all_reduce(call)) return mt_cpu_prod(call, err);
  return mt__mutant_reduce_tf(call, err, mt_cpu_prod, fill_zero);
}

static const mt_kernel_fn kernels[MT_OP__END] = {
#include "cpu_slots.h"
    [MT_OP_prod] = mutant_prod,
};
MT_MUTANT_ENTRY("prod_fills_zero", kernels)

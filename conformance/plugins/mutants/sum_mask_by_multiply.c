/* sum_mask_by_multiply.c - breaks RED-2: sum over a dim masks by
 * multiplication, sum(data * mask), the classic shortcut for
 * where(mask, data, 0): NaN * 0 = NaN and inf * 0 = NaN leak masked-out
 * data into the result (the goldens' NaN poison, the runner's ±inf). */
#include "mutant.h"

static void times_mask(double *v, uint8_t *m) {
  *v = *v * (double)*m;
  *m = 1;
}
static mt_status mutant_sum(mt_call *call, mt_error *err) {
  if (mt__mutant_all_reduce(call)) return mt_cpu_sum(call, err);
  return mt__mutant_reduce_tf(call, err, mt_cpu_sum, times_mask);
}

static const mt_kernel_fn kernels[MT_OP__END] = {
#include "cpu_slots.h"
    [MT_OP_sum] = mutant_sum,
};
MT_MUTANT_ENTRY("sum_mask_by_multiply", kernels)

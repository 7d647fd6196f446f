/* amin_nan_skipping.c - breaks RED-2: amin over a dim takes the minimum over
 * ALL stored data of the group with a NaN-skipping fmin (numpy's nanmin),
 * as a library that stores masked-out elements as NaN does; groups with no
 * specified element still get the right fill (+inf, masked out). Only
 * masked-out data below the specified minimum shows it: the runner's
 * -inf/-1e30 poison (MASK-9); the goldens' NaN/+1e30 poison hides it. */
#include "mutant.h"

static void widen(double *v, uint8_t *m) {
  if (!*m && !isnan(*v)) *m = 1; /* "not NaN" taken for "specified" */
}
static mt_status mutant_amin(mt_call *call, mt_error *err) {
  if (mt__mutant_all_reduce(call)) return mt_cpu_amin(call, err);
  return mt__mutant_reduce_tf(call, err, mt_cpu_amin, widen);
}

static const mt_kernel_fn kernels[MT_OP__END] = {
#include "cpu_slots.h"
    [MT_OP_amin] = mutant_amin,
};
MT_MUTANT_ENTRY("amin_nan_skipping", kernels)

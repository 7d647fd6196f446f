/* amax_nan_skipping.c - breaks RED-1: the all-reduce amax takes the maximum
 * over ALL stored data with a NaN-skipping fmax (numpy's nanmax), as a
 * library that represents "masked out" as NaN does; empty inputs still get
 * the right fill (-inf, masked out). Masked-out data that is not NaN (the
 * goldens' 1e30 poison, the runner's +inf) wins the max. */
#include "mutant.h"

static void widen(double *v, uint8_t *m) {
  if (!*m && !isnan(*v)) *m = 1; /* "not NaN" taken for "specified" */
}
static mt_status mutant_amax(mt_call *call, mt_error *err) {
  if (!mt__mutant_all_reduce(call)) return mt_cpu_amax(call, err);
  return mt__mutant_reduce_tf(call, err, mt_cpu_amax, widen);
}

static const mt_kernel_fn kernels[MT_OP__END] = {
#include "cpu_slots.h"
    [MT_OP_amax] = mutant_amax,
};
MT_MUTANT_ENTRY("amax_nan_skipping", kernels)

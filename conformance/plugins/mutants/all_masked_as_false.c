/* all_masked_as_false.c - breaks RED-6: all() treats masked-out elements as
 * False, i.e. all((data != 0) & mask), the way a library that stores
 * "masked" as a zero or ANDs the mask into the data does, where torch fills
 * them with True (data.masked_fill(~mask, True).all()): any output with a
 * masked-out element becomes False. Masks and fully masked fills are the
 * reference's. */
#include "mutant.h"

static void as_false(double *v, uint8_t *m) {
  if (!*m) *v = 0.0;
  *m = 1;
}
static mt_status mutant_all(mt_call *call, mt_error *err) {
  return mt__mutant_reduce_tf(call, err, mt_cpu_all, as_false);
}

static const mt_kernel_fn kernels[MT_OP__END] = {
#include "cpu_slots.h"
    [MT_OP_all] = mutant_all,
};
MT_MUTANT_ENTRY("all_masked_as_false", kernels)

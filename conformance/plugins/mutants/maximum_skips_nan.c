/* maximum_skips_nan.c - breaks BIN-9: maximum/minimum ignore NaN (fmax/fmin
 * semantics, C's fmax(), numpy's np.fmax), where torch.maximum/minimum
 * propagate it: maximum(NaN, 1) is NaN in torch, 1 here. */
#include "mutant.h"

static mt_status mutant_maximum(mt_call *c, mt_error *e) { return mt_cpu_fmax(c, e); }
static mt_status mutant_minimum(mt_call *c, mt_error *e) { return mt_cpu_fmin(c, e); }

static const mt_kernel_fn kernels[MT_OP__END] = {
#include "cpu_slots.h"
    [MT_OP_maximum] = mutant_maximum,
    [MT_OP_minimum] = mutant_minimum,
};
MT_MUTANT_ENTRY("maximum_skips_nan", kernels)

/* dense_skips_zero_grad.c - breaks ADA-1: the dense Adagrad step skips the
 * elements whose gradient is zero (a "sparse-aware" shortcut: nothing to
 * add, nothing to move), where torch updates every element: with eps = 0
 * and a zero accumulator, torch's 0/0 gives NaN there (ADA-6), and with
 * weight decay a zero gradient still moves the parameter. */
#include "mutant.h"

static mt_status mutant_adagrad_dense(mt_call *call, mt_error *err) {
  mt_status st = mt_cpu_adagrad_dense(call, err);
  if (st != MT_OK || call->n_out != 3) return st;
  const mt_tensor *p0 = call->in[0], *g = call->in[1], *s0 = call->in[2];
  mt_tensor *p = call->out[0], *s = call->out[1];
  for (int64_t i = 0; i < mt_numel(p); i++)
    if (mt_dense_get(g, i) == 0.0) {
      mt_set_f64(p->values, p->dtype, i, mt_dense_get(p0, i));
      mt_set_f64(s->values, s->dtype, i, mt_dense_get(s0, i));
    }
  return MT_OK;
}

static const mt_kernel_fn kernels[MT_OP__END] = {
#include "cpu_slots.h"
    [MT_OP_adagrad_dense] = mutant_adagrad_dense,
};
MT_MUTANT_ENTRY("dense_skips_zero_grad", kernels)

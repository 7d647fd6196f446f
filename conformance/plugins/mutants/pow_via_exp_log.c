/* pow_via_exp_log.c - breaks MASK-4: pow(m, e) is computed as
 * exp(e * log(x)), the shortcut of libraries without a pow kernel: a
 * negative base gives NaN even for integer exponents (pow(-2, 2) = 4 in
 * torch) and the result loses a few ulps elsewhere. */
#include "mutant.h"

static mt_status mutant_pow(mt_call *call, mt_error *err) {
  mt_status st = mt_cpu_pow(call, err);
  if (st != MT_OK || call->n_in < 2 || !mt__mutant_dense_masked(call->out[0]) ||
      !mt__mutant_dense_masked(call->in[0]) || call->in[1]->kind != MT_KIND_SCALAR)
    return st;
  double e = mt_get_f64(call->in[1]->values, call->in[1]->dtype, 0);
  const mt_tensor *x = call->in[0]->data;
  mt_tensor *o = call->out[0]->data;
  for (int64_t i = 0; i < mt_numel(o); i++) {
    double v = mt_dense_get(x, i);
    mt_set_f64(o->values, o->dtype, i,
               o->dtype == MT_float32 ? (double)expf((float)e * logf((float)v)) : exp(e * log(v)));
  }
  return MT_OK;
}

static const mt_kernel_fn kernels[MT_OP__END] = {
#include "cpu_slots.h"
    [MT_OP_pow] = mutant_pow,
};
MT_MUTANT_ENTRY("pow_via_exp_log", kernels)

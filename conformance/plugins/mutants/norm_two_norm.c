/* norm_two_norm.c - breaks RED-8: norm of a MaskedTensor computes the
 * 2-norm of the masked-in values (what torch.masked.norm, or
 * torch.ops.aten.norm(m), gives) instead of torch.norm's refusal: torch's
 * public torch.norm passes p= to MaskedTensor's reduction, which rejects it
 * for every call. */
#include "mutant.h"

static mt_status mutant_norm(mt_call *call, mt_error *err) {
  const mt_tensor *x = call->n_in > 0 ? call->in[0] : NULL;
  if (!mt__mutant_dense_masked(x) || !mt_dtype_is_float(x->data->dtype) ||
      (call->kw && call->kw->n > 0))
    return mt_cpu_norm(call, err);
  mt_status st = mt_cpu_sum(call, err); /* a 0-d masked output of x's dtype */
  if (st != MT_OK || !mt__mutant_dense_masked(call->out[0])) return st;
  const uint8_t *m = x->mask->values;
  double acc = 0.0;
  for (int64_t i = 0; i < mt_numel(x); i++)
    if (m[i]) {
      double v = mt_get_f64(x->data->values, x->data->dtype, i);
      acc += v * v;
    }
  mt_set_f64(call->out[0]->data->values, call->out[0]->data->dtype, 0, sqrt(acc));
  return st;
}

static const mt_kernel_fn kernels[MT_OP__END] = {
#include "cpu_slots.h"
    [MT_OP_norm] = mutant_norm,
};
MT_MUTANT_ENTRY("norm_two_norm", kernels)

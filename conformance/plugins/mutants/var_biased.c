/* var_biased.c - breaks RED-5: var divides the sum of squared deviations by
 * n (numpy.ma's default ddof=0, or torch's unbiased=False) instead of
 * torch.masked.var's n - 1: every variance is n/(n-1) too small, and one
 * masked-in element gives 0 instead of NaN. Masks and fully masked fills
 * (NaN) are the reference's. */
#include "reduce_mutant.h"

static mt_status mutant_var(mt_call *call, mt_error *err) {
  const mt_tensor *x = call->n_in > 0 ? call->in[0] : NULL;
  mt__rm_dims d;
  mt_status st = mt_cpu_var(call, err);
  if (st != MT_OK || !mt__rm_parse(call, x, &d) || !mt__mutant_dense_masked(call->out[0]) ||
      !mt_dtype_is_float(x->data->dtype))
    return st;
  mt_tensor *o = call->out[0];
  int64_t n_out = mt_numel(o->data), n = mt_numel(x);
  double *s = calloc((size_t)(n_out ? n_out : 1) * 3, sizeof(double));
  if (!s) return st;
  const uint8_t *m = x->mask->values;
  for (int pass = 0; pass < 2; pass++) {
    for (int64_t i = 0; i < n; i++) {
      if (!m[i]) continue;
      int64_t pos, k = mt__rm_out(x, &d, i, &pos);
      double v = mt_get_f64(x->data->values, x->data->dtype, i);
      if (pass == 0) {
        s[3 * k] += v;
        s[3 * k + 1] += 1;
      } else {
        double dv = v - s[3 * k] / s[3 * k + 1];
        s[3 * k + 2] += dv * dv;
      }
    }
  }
  const uint8_t *om = o->mask->values;
  for (int64_t k = 0; k < n_out; k++)
    if (om[k]) mt_set_f64(o->data->values, o->data->dtype, k, s[3 * k + 2] / s[3 * k + 1]);
  free(s);
  return st;
}

static const mt_kernel_fn kernels[MT_OP__END] = {
#include "cpu_slots.h"
    [MT_OP_var] = mutant_var,
};
MT_MUTANT_ENTRY("var_biased", kernels)

/* masked_mean_counts_all.c - breaks MFN-3: masked.mean divides the masked
 * sum by the slice's element count instead of the number of masked-in
 * elements (sum(where(mask, x, 0)) / x.size(dim)): every mean with a
 * masked-out element is too small and a fully masked slice gives 0, not
 * NaN. */
#include "mutant.h"

static mt_status mutant_mean(mt_call *call, mt_error *err) {
  const mt_tensor *x = call->n_in > 0 ? call->in[0] : NULL;
  if (!x || x->kind != MT_KIND_DENSE || !mt_dtype_is_float(x->dtype))
    return mt_cpu_masked_mean(call, err);
  mt_status st = mt_cpu_masked_sum(call, err); /* same kwargs: dim, keepdim */
  if (st != MT_OK) return st;
  mt_tensor *o = call->out[0];
  int64_t n_out = mt_numel(o), n_in = mt_numel(x);
  if (n_out == 0) return MT_OK;
  double L = (double)(n_in / n_out);
  for (int64_t i = 0; i < n_out; i++)
    mt_set_f64(o->values, o->dtype, i, mt_get_f64(o->values, o->dtype, i) / L);
  return MT_OK;
}

static const mt_kernel_fn kernels[MT_OP__END] = {
#include "cpu_slots.h"
    [MT_OP_masked_mean] = mutant_mean,
};
MT_MUTANT_ENTRY("masked_mean_counts_all", kernels)

/* masked_amax_fill_zero.c - breaks MFN-2: masked.amax fills masked-out
 * elements with 0 (numpy.ma's `filled(0)` habit) instead of -inf before
 * reducing: a slice of negative specified values gets 0, a fully masked
 * slice 0 instead of -inf. Same-shape float masks only (others run the
 * reference). */
#include "mutant.h"

static mt_status mutant_amax(mt_call *call, mt_error *err) {
  const mt_tensor *x = call->n_in == 2 ? call->in[0] : NULL, *m = x ? call->in[1] : NULL;
  if (!x || x->kind != MT_KIND_DENSE || m->kind != MT_KIND_DENSE || m->dtype != MT_bool ||
      !mt_dtype_is_float(x->dtype) || !mt_shape_equal(x, m) || !mt_is_contiguous(x) ||
      !mt_is_contiguous(m))
    return mt_cpu_masked_amax(call, err);
  mt_tensor *z = NULL;
  mt_status st = mt_tensor_clone(x, &z, err);
  if (st != MT_OK) return st;
  for (int64_t i = 0; i < mt_numel(x); i++)
    if (!((const uint8_t *)m->values)[i]) mt_set_f64(z->values, z->dtype, i, 0.0);
  const mt_tensor *in[1] = {z};
  const mt_tensor *const *orig = call->in;
  call->in = in;
  call->n_in = 1;
  st = mt_cpu_masked_amax(call, err);
  call->in = orig;
  call->n_in = 2;
  mt_tensor_free(z);
  return st;
}

static const mt_kernel_fn kernels[MT_OP__END] = {
#include "cpu_slots.h"
    [MT_OP_masked_amax] = mutant_amax,
};
MT_MUTANT_ENTRY("masked_amax_fill_zero", kernels)

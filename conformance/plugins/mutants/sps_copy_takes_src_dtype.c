/* sps_copy_takes_src_dtype.c - breaks SPS-1: dst.copy_(src) of two plain
 * COO tensors of different dtypes hands back src's storage in src's dtype,
 * where torch converts src's values to dst's dtype (copy_ writes into dst,
 * which keeps its dtype). A library that implements copy_ of a sparse
 * tensor as "replace dst by a clone of src" does this. */
#include "mutant.h"

static mt_status mutant_copy_(mt_call *call, mt_error *err) {
  const mt_tensor *dst = call->n_in > 1 ? call->in[0] : NULL, *src = dst ? call->in[1] : NULL;
  if (!dst || !src || dst->kind != MT_KIND_COO || src->kind != MT_KIND_COO || dst->dtype == src->dtype)
    return mt_cpu_copy_(call, err);
  /* dst relabelled with src's dtype (copy_ reads dst's dims, not its
   * values; a narrower src dtype keeps every read inside dst's buffer) */
  if (mt_dtype_size(src->dtype) > mt_dtype_size(dst->dtype)) return mt_cpu_copy_(call, err);
  mt_tensor fake = *dst;
  fake.dtype = src->dtype;
  return mt__mutant_call_in(call, err, mt_cpu_copy_, 0, &fake);
}

static const mt_kernel_fn kernels[MT_OP__END] = {
#include "cpu_slots.h"
    [MT_OP_copy_] = mutant_copy_,
};
MT_MUTANT_ENTRY("sps_copy_takes_src_dtype", kernels)

/* size_checked_first.c - breaks MASK-2: masked_tensor checks that data and
 * mask have the same size before it checks their layouts and the mask's
 * dtype (numpy.ma's order: MaskError on size first), so a call with two
 * violations reports SHAPE_MISMATCH where torch reports the layout
 * (LAYOUT_MISMATCH) or the dtype (DTYPE_MISMATCH) first. Needs golden cases
 * with two violations to show. */
#include "mutant.h"

static mt_status mutant_masked_tensor(mt_call *call, mt_error *err) {
  const mt_tensor *d = call->n_in > 1 ? call->in[0] : NULL, *m = call->n_in > 1 ? call->in[1] : NULL;
  if (d && m && d->kind != MT_KIND_MASKED && d->kind != MT_KIND_SCALAR &&
      m->kind != MT_KIND_MASKED && m->kind != MT_KIND_SCALAR && !mt_shape_equal(d, m)) {
    call->n_out = 0;
    return mt_err(err, MT_SHAPE_MISMATCH, "masked_tensor: data.size() must equal mask.size()");
  }
  return mt_cpu_masked_tensor(call, err);
}

static const mt_kernel_fn kernels[MT_OP__END] = {
#include "cpu_slots.h"
    [MT_OP_masked_tensor] = mutant_masked_tensor,
};
MT_MUTANT_ENTRY("size_checked_first", kernels)

/* masks_same_shape_only.c - breaks BIN-1: two masked operands must have
 * masks of the same shape, where torch compares them with
 * torch.eq(mask_a, mask_b).all() and so accepts masks that broadcast and
 * agree (a (1, 4) mask against its (3, 4) expansion). A library that
 * compares masks with memcmp after a shape check does this. */
#include "mutant.h"

static mt_status mutant_add(mt_call *call, mt_error *err) {
  const mt_tensor *a = call->n_in > 1 ? call->in[0] : NULL, *b = call->n_in > 1 ? call->in[1] : NULL;
  mt_status st = mt_cpu_add(call, err);
  /* where the reference accepts masks that broadcast, refuse them */
  if (st == MT_OK && a && b && a->kind == MT_KIND_MASKED && b->kind == MT_KIND_MASKED &&
      a->mask && b->mask && !mt_shape_equal(a->mask, b->mask)) {
    const mt_host *h = call->host ? call->host : mt_host_default();
    h->free(call->out[0]);
    call->out[0] = NULL;
    call->n_out = 0;
    return mt_err(err, MT_MASK_MISMATCH, "add: Input masks must match (mask shapes differ)");
  }
  return st;
}

static const mt_kernel_fn kernels[MT_OP__END] = {
#include "cpu_slots.h"
    [MT_OP_add] = mutant_add,
};
MT_MUTANT_ENTRY("masks_same_shape_only", kernels)

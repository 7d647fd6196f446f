/* copy_takes_src_mask.c - breaks STR-4: dst.copy_(src) takes src's mask
 * along with its data (numpy.ma's assignment semantics), where torch keeps
 * dst's mask. */
#include "mutant.h"

static mt_status mutant_copy_(mt_call *call, mt_error *err) {
  mt_status st = mt_cpu_copy_(call, err);
  if (st != MT_OK || call->n_in < 2 || !mt__mutant_dense_masked(call->in[1]) ||
      !mt__mutant_dense_masked(call->out[0]))
    return st;
  const mt_tensor *s = call->in[1]->mask;
  mt_tensor *m = call->out[0]->mask;
  if (mt_numel(s) == mt_numel(m)) memcpy(m->values, s->values, (size_t)mt_numel(m));
  return MT_OK;
}

static const mt_kernel_fn kernels[MT_OP__END] = {
#include "cpu_slots.h"
    [MT_OP_copy_] = mutant_copy_,
};
MT_MUTANT_ENTRY("copy_takes_src_mask", kernels)

/* zero_size_oom.c - breaks MASK-1: masked_tensor of a zero-size tensor fails
 * with OUT_OF_MEMORY: the copy is allocated with malloc(numel * size) and
 * a NULL result is taken for "out of memory", but malloc(0) may return
 * NULL. torch (and the C standard's fine print) make zero-size tensors
 * valid: masked_tensor(torch.empty(0, 3), ...) is an empty masked tensor. */
#include "mutant.h"

static mt_status mutant_masked_tensor(mt_call *call, mt_error *err) {
  mt_status st = mt_cpu_masked_tensor(call, err);
  if (st != MT_OK || mt_numel(call->out[0]) != 0) return st;
  const mt_host *h = call->host ? call->host : mt_host_default();
  h->free(call->out[0]);
  call->out[0] = NULL;
  call->n_out = 0;
  return mt_err(err, MT_OUT_OF_MEMORY, "masked_tensor: malloc(0) returned NULL: out of memory");
}

static const mt_kernel_fn kernels[MT_OP__END] = {
#include "cpu_slots.h"
    [MT_OP_masked_tensor] = mutant_masked_tensor,
};
MT_MUTANT_ENTRY("zero_size_oom", kernels)

/* grad_plain_operand_dense: in mul's backward, a plain (dense) operand gets
 * a plain dense gradient (the masked gradient's data), as autograd on plain
 * tensors would give: breaks GRAD-4, torch gives a plain tensor combined
 * with a MaskedTensor a MaskedTensor gradient. */
#include "mutant.h"

static mt_status mutant_grad_mul(mt_call *call, mt_error *err) {
  mt_status st = mt_cpu_grad_mul(call, err);
  if (st != MT_OK) return st;
  const mt_host *h = call->host ? call->host : mt_host_default();
  for (int k = 0; k < call->n_out && k < call->n_in; k++) {
    if (call->in[k]->kind != MT_KIND_DENSE || !mt__mutant_dense_masked(call->out[k])) continue;
    mt_tensor *data = NULL;
    if ((st = mt_tensor_clone_host(h, call->out[k]->data, &data, err)) != MT_OK) return st;
    h->free(call->out[k]);
    call->out[k] = data;
  }
  return MT_OK;
}

static const mt_kernel_fn backward[MT_OP__END] = {
#include "grad_slots.h"
    [MT_OP_mul] = mutant_grad_mul,
};
MT_MUTANT_GRAD_ENTRY("grad_plain_operand_dense", backward)

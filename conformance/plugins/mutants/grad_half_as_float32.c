/* grad_half_as_float32: mul's backward returns a float16/bfloat16 input's
 * gradient in float32 (the values computed right, the cast back to the
 * input's dtype forgotten), as a library that upcasts half precision for
 * its backward pass and hands the wide buffer out: breaks GRAD-9, torch's
 * gradient of a half-precision input has the input's dtype. */
#include "mutant.h"

static mt_status mutant_grad_mul(mt_call *call, mt_error *err) {
  mt_status st = mt_cpu_grad_mul(call, err);
  if (st != MT_OK) return st;
  const mt_host *h = call->host ? call->host : mt_host_default();
  for (int k = 0; k < call->n_out; k++) {
    mt_tensor *g = call->out[k], *wide = NULL, *data = NULL, *mask = NULL;
    if (!mt__mutant_dense_masked(g)) continue;
    mt_dtype dt = g->data->dtype;
    if (dt != MT_float16 && dt != MT_bfloat16) continue;
    int64_t n = mt_numel(g->data);
    if ((st = h->dense_new(MT_float32, g->data->ndim, g->data->shape, &data, err)) != MT_OK)
      return st;
    if ((st = mt_tensor_clone_host(h, g->mask, &mask, err)) != MT_OK) {
      h->free(data);
      return st;
    }
    for (int64_t i = 0; i < n; i++)
      mt_set_f64(data->values, MT_float32, i, mt_get_f64(g->data->values, dt, i));
    if ((st = h->masked_new(data, mask, &wide, err)) != MT_OK) return st; /* took both */
    h->free(g);
    call->out[k] = wide;
  }
  return MT_OK;
}

static const mt_kernel_fn backward[MT_OP__END] = {
#include "grad_slots.h"
    [MT_OP_mul] = mutant_grad_mul,
};
MT_MUTANT_GRAD_ENTRY("grad_half_as_float32", backward)

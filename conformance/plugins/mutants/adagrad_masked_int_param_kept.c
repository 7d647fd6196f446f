/* adagrad_masked_int_param_kept.c - breaks ADA-7: the masked Adagrad path
 * of an integer param hands the param back in its own dtype (the update
 * truncated into it, as an in-place `param.add_` would), instead of the
 * float32 param that torch.masked's out-of-place `param.add(...)` promotes
 * to. The slip of an optimizer that assumes param keeps its dtype. */
#include "mutant.h"

static mt_status mutant_masked(mt_call *call, mt_error *err) {
  const mt_tensor *p = call->n_in > 0 ? call->in[0] : NULL;
  mt_status st = mt_cpu_adagrad_masked(call, err);
  if (st != MT_OK || !p || p->kind != MT_KIND_DENSE || mt_dtype_is_float(p->dtype)) return st;
  const mt_host *h = call->host ? call->host : mt_host_default();
  mt_tensor *o = call->out[0], *t = NULL;
  if ((st = h->dense_new(p->dtype, o->ndim, o->shape, &t, err)) != MT_OK) return st;
  for (int64_t i = 0; i < mt_numel(o); i++)
    mt_set_f64(t->values, p->dtype, i, mt_get_f64(o->values, o->dtype, i));
  h->free(o);
  call->out[0] = t;
  return MT_OK;
}

static const mt_kernel_fn kernels[MT_OP__END] = {
#include "cpu_slots.h"
    [MT_OP_adagrad_masked] = mutant_masked,
};
MT_MUTANT_ENTRY("adagrad_masked_int_param_kept", kernels)

/* promote_to_lhs.c - breaks BIN-2: the result keeps the left operand's
 * dtype (int32 m + 2.5 stays int32, int8 m + int32 t stays int8), where
 * torch promotes with torch.result_type. Libraries that compute "in place
 * into a copy of self" (a += b semantics) do this. The right result is
 * cast to the left operand's dtype. */
#include "mutant.h"

static mt_status to_lhs(mt_call *call, mt_error *err, mt_kernel_fn real) {
  mt_status st = real(call, err);
  if (st != MT_OK || call->n_in < 2 || !mt__mutant_dense_masked(call->out[0])) return st;
  const mt_tensor *l = call->in[0];
  mt_dtype lt;
  if (l->kind == MT_KIND_MASKED)
    lt = l->data->dtype;
  else if (l->kind == MT_KIND_DENSE)
    lt = l->dtype;
  else
    return MT_OK;
  mt_tensor *o = call->out[0], *d = NULL, *m = NULL, *r = NULL;
  if (o->data->dtype == lt) return MT_OK;
  const mt_host *h = call->host ? call->host : mt_host_default();
  if ((st = h->dense_new(lt, o->data->ndim, o->data->shape, &d, err)) != MT_OK) goto fail;
  for (int64_t i = 0; i < mt_numel(d); i++)
    mt_set_f64(d->values, lt, i, mt_get_f64(o->data->values, o->data->dtype, i));
  if ((st = mt_tensor_clone_host(h, o->mask, &m, err)) != MT_OK) goto fail;
  st = h->masked_new(d, m, &r, err); /* takes d and m */
  d = m = NULL;
  if (st != MT_OK) goto fail;
  h->free(o);
  call->out[0] = r;
  return MT_OK;
fail:
  if (d) h->free(d);
  if (m) h->free(m);
  h->free(o);
  call->out[0] = NULL;
  call->n_out = 0;
  return st;
}

static mt_status mutant_add(mt_call *c, mt_error *e) { return to_lhs(c, e, mt_cpu_add); }

static const mt_kernel_fn kernels[MT_OP__END] = {
#include "cpu_slots.h"
    [MT_OP_add] = mutant_add,
};
MT_MUTANT_ENTRY("promote_to_lhs", kernels)

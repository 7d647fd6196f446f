/* comparison_keeps_dtype.c - breaks BIN-4: eq returns 0/1 in the left
 * operand's dtype (float32 1.0 for true), as a generic "same dtype as the
 * input" elementwise template does, where torch gives bool. */
#include "mutant.h"

static mt_status mutant_eq(mt_call *call, mt_error *err) {
  mt_status st = mt_cpu_eq(call, err);
  if (st != MT_OK || call->n_in < 2 || !mt__mutant_dense_masked(call->out[0])) return st;
  const mt_tensor *l = call->in[0];
  if (l->kind != MT_KIND_MASKED) return MT_OK;
  mt_dtype lt = l->data->dtype;
  mt_tensor *o = call->out[0], *d = NULL, *m = NULL, *r = NULL;
  if (lt == MT_bool) return MT_OK;
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

static const mt_kernel_fn kernels[MT_OP__END] = {
#include "cpu_slots.h"
    [MT_OP_eq] = mutant_eq,
};
MT_MUTANT_ENTRY("comparison_keeps_dtype", kernels)

/* sum_holds_bf16.c - breaks RED-7: `torch.sum(m, dim, dtype=torch.bfloat16)`
 * returns a bfloat16 masked tensor (the sum converted to bfloat16, rounded
 * to nearest even), as a library whose masked tensor holds every dtype of
 * its plain tensors would; torch's MaskedTensor refuses bfloat16 data
 * ("torch.bfloat16 is not supported in MaskedTensor", a TypeError ->
 * DTYPE_MISMATCH). */
#include "mutant.h"

static mt_status mutant_sum(mt_call *call, mt_error *err) {
  const mt_kwargs *orig = call->kw;
  const mt_kwarg *dk = mt_kw_find(orig, "dtype");
  if (!dk || !dk->s || strcmp(dk->s, "bfloat16") != 0 || orig->n > 32) return mt_cpu_sum(call, err);
  /* the sum in float32, then held as bfloat16 */
  mt_kwarg items[32];
  mt_kwargs kw = {0, items};
  for (int k = 0; k < orig->n; k++) {
    items[kw.n] = orig->items[k];
    if (!strcmp(items[kw.n].name, "dtype")) items[kw.n].s = "float32";
    kw.n++;
  }
  call->kw = &kw;
  mt_status st = mt_cpu_sum(call, err);
  call->kw = orig;
  mt_tensor *o = call->out[0];
  if (st != MT_OK || !mt__mutant_dense_masked(o)) return st;
  const mt_host *h = call->host ? call->host : mt_host_default();
  mt_tensor *d = NULL, *m = NULL, *r = NULL;
  if ((st = h->dense_new(MT_bfloat16, o->data->ndim, o->data->shape, &d, err)) != MT_OK) return st;
  if ((st = h->dense_new(MT_bool, o->mask->ndim, o->mask->shape, &m, err)) != MT_OK) {
    h->free(d);
    return st;
  }
  for (int64_t i = 0; i < mt_numel(o->data); i++)
    mt_set_f64(d->values, MT_bfloat16, i, mt_get_f64(o->data->values, o->data->dtype, i));
  memcpy(m->values, o->mask->values, (size_t)mt_numel(o->mask));
  if ((st = h->masked_new(d, m, &r, err)) != MT_OK) return st; /* took d and m */
  h->free(o);
  call->out[0] = r;
  return MT_OK;
}

static const mt_kernel_fn kernels[MT_OP__END] = {
#include "cpu_slots.h"
    [MT_OP_sum] = mutant_sum,
};
MT_MUTANT_ENTRY("sum_holds_bf16", kernels)

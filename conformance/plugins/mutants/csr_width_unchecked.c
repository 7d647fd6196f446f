/* csr_width_unchecked.c - breaks SP-1: sin of CSR storage maps the stored
 * values and keeps the input's size, as if torch rebuilt the data with the
 * mask's size. torch's _unary_helper calls sparse_csr_tensor(crow, col,
 * values) without a size: data whose last column stores nothing comes out
 * narrower than its mask and MaskedTensor refuses it (what a port that
 * passes the size, as the binary path does, gets wrong). */
#include "mutant.h"

static mt_status mutant_sin(mt_call *call, mt_error *err) {
  const mt_tensor *m = call->n_in == 1 ? call->in[0] : NULL;
  if (!m || m->kind != MT_KIND_MASKED || m->data->kind != MT_KIND_CSR ||
      m->data->dtype != MT_float32)
    return mt_cpu_sin(call, err);
  const mt_host *h = call->host;
  const mt_tensor *d = m->data;
  mt_tensor *data = NULL, *mask = NULL;
  mt_status st = h->csr_new(d->dtype, d->shape[0], d->shape[1], d->nnz, &data, err);
  if (st != MT_OK) return st;
  memcpy(data->crow_indices, d->crow_indices, (size_t)(d->shape[0] + 1) * sizeof(int64_t));
  if (d->nnz) memcpy(data->col_indices, d->col_indices, (size_t)d->nnz * sizeof(int64_t));
  for (int64_t k = 0; k < d->nnz; k++)
    ((float *)data->values)[k] = sinf(((const float *)d->values)[k]);
  if ((st = mt_tensor_clone_host(h, m->mask, &mask, err)) != MT_OK) {
    h->free(data);
    return st;
  }
  if ((st = h->masked_new(data, mask, &call->out[0], err)) == MT_OK) call->n_out = 1;
  return st;
}

static const mt_kernel_fn kernels[MT_OP__END] = {
#include "cpu_slots.h"
    [MT_OP_sin] = mutant_sin,
};
MT_MUTANT_ENTRY("csr_width_unchecked", kernels)

/* sparse_mean_counts_specified.c - breaks SP-3: the mean of sparse storage
 * divides the specified values' sum by the number of specified values, as
 * for dense storage (RED-1) and as one would expect. torch hands
 * torch.masked the stored values with the mask's stored values and divides
 * by the number of *stored* entries (7/4, not 7/3, for stored 1, 2, 3, 4
 * with the third masked out). */
#include "mutant.h"

static mt_status mutant_mean(mt_call *call, mt_error *err) {
  const mt_tensor *m = call->n_in == 1 ? call->in[0] : NULL;
  mt_status st = mt_cpu_mean(call, err);
  if (st != MT_OK || !m || m->kind != MT_KIND_MASKED ||
      (m->data->kind != MT_KIND_CSR && m->data->kind != MT_KIND_COO))
    return st;
  /* a coalesced input's stored values in order; both kinds keep nnz values */
  const mt_tensor *d = m->data, *k = m->mask;
  double sum = 0.0;
  int64_t n = 0;
  for (int64_t i = 0; i < d->nnz; i++)
    if (((const uint8_t *)k->values)[i]) {
      sum += mt_get_f64(d->values, d->dtype, i);
      n++;
    }
  mt_tensor *o = call->out[0];
  mt_set_f64(o->data->values, o->data->dtype, 0, sum / (double)n);
  return MT_OK;
}

static const mt_kernel_fn kernels[MT_OP__END] = {
#include "cpu_slots.h"
    [MT_OP_mean] = mutant_mean,
};
MT_MUTANT_ENTRY("sparse_mean_counts_specified", kernels)

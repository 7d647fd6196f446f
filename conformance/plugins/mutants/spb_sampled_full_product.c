/* spb_sampled_full_product.c - breaks SPB-7: sparse_sampled_addmm returns
 * every entry of beta * input + alpha * (mat1 @ mat2) as a CSR (addmm, then
 * to_sparse_csr), where torch keeps only the input's stored positions. Runs
 * the reference on an input that stores every position of one batch (2-d
 * inputs only; the unstored ones as 0). */
#include "mutant.h"

static mt_status mutant_sampled(mt_call *call, mt_error *err) {
  const mt_tensor *c = call->n_in > 0 ? call->in[0] : NULL;
  if (!c || c->kind != MT_KIND_CSR || c->ndim != 2 || c->dense_dim != 0)
    return mt_cpu_sparse_sampled_addmm(call, err);
  int64_t r = c->shape[0], n = c->shape[1];
  mt_tensor *full = NULL, *d = NULL;
  mt_status st = mt_to_dense(c, &d, err);
  if (st == MT_OK) st = mt_compressed_new(MT_KIND_CSR, c->dtype, 2, c->shape, 0, NULL, r * n, &full, err);
  if (st == MT_OK) {
    for (int64_t i = 0; i <= r; i++) full->crow_indices[i] = i * n;
    for (int64_t q = 0; q < r * n; q++) {
      full->col_indices[q] = q % n;
      mt_set_f64(full->values, c->dtype, q, mt_get_f64(d->values, d->dtype, q));
    }
    st = mt__mutant_call_in(call, err, mt_cpu_sparse_sampled_addmm, 0, full);
  }
  mt_tensor_free(full);
  mt_tensor_free(d);
  return st;
}

static const mt_kernel_fn kernels[MT_OP__END] = {
#include "cpu_slots.h"
    [MT_OP_sparse_sampled_addmm] = mutant_sampled,
};
MT_MUTANT_ENTRY("spb_sampled_full_product", kernels)

/* spb_compressed_ints_accepted.c - breaks SPB-1: mm of a CSR matrix runs
 * every dtype through the loop over stored entries (as COO @ dense does),
 * where torch's CSR kernels (MKL) refuse integer, float16 and bfloat16
 * tensors ("addmm_out_sparse_csr_impl_mkl" not implemented for 'Long'). The
 * CSR operand is handed to the reference as the same entries in COO. */
#include "mutant.h"

static mt_status mutant_mm(mt_call *call, mt_error *err) {
  const mt_tensor *a = call->n_in == 2 ? call->in[0] : NULL;
  if (!a || a->kind != MT_KIND_CSR || a->ndim != 2 || a->dense_dim != 0 ||
      call->in[1]->kind != MT_KIND_DENSE)
    return mt_cpu_mm(call, err);
  mt_tensor *coo = NULL;
  mt_status st = mt_coo_new(a->dtype, 2, a->shape, 2, a->nnz, &coo, err);
  if (st != MT_OK) return st;
  for (int64_t r = 0; r < a->shape[0]; r++)
    for (int64_t k = a->crow_indices[r]; k < a->crow_indices[r + 1]; k++) {
      coo->indices[k] = r;
      coo->indices[a->nnz + k] = a->col_indices[k];
    }
  if (a->nnz) memcpy(coo->values, a->values, (size_t)a->nnz * mt_dtype_size(a->dtype));
  coo->coalesced = 1;
  st = mt__mutant_call_in(call, err, mt_cpu_mm, 0, coo);
  mt_tensor_free(coo);
  return st;
}

static const mt_kernel_fn kernels[MT_OP__END] = {
#include "cpu_slots.h"
    [MT_OP_mm] = mutant_mm,
};
MT_MUTANT_ENTRY("spb_compressed_ints_accepted", kernels)

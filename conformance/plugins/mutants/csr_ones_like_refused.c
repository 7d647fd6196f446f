/* csr_ones_like_refused.c - breaks SP-4: ones_like of CSR storage is
 * refused as it is on COO storage (aten::fill_ has no SparseCPU kernel).
 * torch's SparseCsrCPU fill_ exists: the result keeps the structure with
 * every stored value 1 (a port that treats the two sparse layouts alike
 * gets it wrong). */
#include "mutant.h"

static mt_status mutant_ones_like(mt_call *call, mt_error *err) {
  const mt_tensor *m = call->n_in == 1 ? call->in[0] : NULL;
  if (m && m->kind == MT_KIND_MASKED && m->data->kind == MT_KIND_CSR)
    return mt_err(err, MT_LAYOUT_MISMATCH,
                  "ones_like: Could not run 'aten::fill_.Scalar' with arguments from the sparse "
                  "backend");
  return mt_cpu_ones_like(call, err);
}

static const mt_kernel_fn kernels[MT_OP__END] = {
#include "cpu_slots.h"
    [MT_OP_ones_like] = mutant_ones_like,
};
MT_MUTANT_ENTRY("csr_ones_like_refused", kernels)

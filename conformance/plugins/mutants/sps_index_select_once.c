/* sps_index_select_once.c - breaks SPS-6: index_select of a plain COO
 * tensor along a sparse dim with an index that names a position twice
 * stores the selected entries once (for the first naming), where torch
 * copies them for every naming. A kernel that builds the result by
 * filtering entries ("is my index in the index set?") does this. */
#include "mutant.h"

static mt_status mutant_index_select(mt_call *call, mt_error *err) {
  mt_status st = mt_cpu_index_select(call, err);
  if (st != MT_OK || call->n_out != 1 || call->in[0]->kind != MT_KIND_COO) return st;
  const mt_tensor *ix = call->in[1];
  mt_tensor *o = call->out[0];
  int d = (int)mt_kw_int(call->kw, "dim", 0);
  if (d < 0) d += o->ndim;
  if (d >= o->sparse_dim) return st;
  int64_t row = mt_coo_row_numel(o), k = 0, n = o->nnz;
  size_t es = mt_dtype_size(o->dtype);
  for (int64_t e = 0; e < n; e++) {
    int64_t j = o->indices[(int64_t)d * n + e], first = 1;
    for (int64_t q = 0; q < j && first; q++) first = mt_dense_get(ix, q) != mt_dense_get(ix, j);
    if (!first) continue; /* an earlier position names the same index: dropped */
    for (int r = 0; r < o->sparse_dim; r++) o->indices[(int64_t)r * n + k] = o->indices[(int64_t)r * n + e];
    memmove((char *)o->values + (size_t)(k * row) * es, (char *)o->values + (size_t)(e * row) * es,
            (size_t)row * es);
    k++;
  }
  for (int r = 1; r < o->sparse_dim; r++)
    memmove(o->indices + (int64_t)r * k, o->indices + (int64_t)r * n, (size_t)k * sizeof(int64_t));
  o->nnz = k;
  return MT_OK;
}

static const mt_kernel_fn kernels[MT_OP__END] = {
#include "cpu_slots.h"
    [MT_OP_index_select] = mutant_index_select,
};
MT_MUTANT_ENTRY("sps_index_select_once", kernels)

/* sps.h - the plain sparse kernels of the structure and reduce families
 * (SPS-*; impl/cpu/structure_sparse.c, impl/cpu/reduce_sparse.c): the
 * family kernels hand a call whose input 0 is a plain COO or compressed
 * tensor (not a masked tensor's storage) to these (internal). */
#ifndef MT_CPU_SPS_H
#define MT_CPU_SPS_H
#include "mt_core.h"

struct mt_exec; /* common/exec.h */

/* 1 when t is a plain COO, CSR, CSC, BSR or BSC tensor. */
static inline int mt__sps_is_plain(const mt_tensor *t) {
  return t && (t->kind == MT_KIND_COO || t->kind == MT_KIND_CSR || t->kind == MT_KIND_CSC ||
               t->kind == MT_KIND_BSR || t->kind == MT_KIND_BSC);
}
/* 1 when call's input 0 is a plain sparse tensor. */
static inline int mt__sps_call(const mt_call *call) {
  return call && call->n_in > 0 && call->in && mt__sps_is_plain(call->in[0]);
}

/* clone, copy_, t, transpose, unsqueeze, reshape, cat, the values moved or
 * converted on ex */
mt_status mt__sps_structure_run(mt_call *call, mt_op op, const struct mt_exec *ex, mt_error *err);
/* sum, amax, norm, the values computed on ex */
mt_status mt__sps_reduce(mt_call *call, mt_op op, const struct mt_exec *ex, mt_error *err);
/* torch.sum / torch.sparse.sum of a COO or compressed tensor (shared by
 * reduce_sparse.c and sparse_misc.c); sparse = 1: torch.sparse.sum's
 * layouts and refusals */
mt_status mt__sps_sum(mt_call *call, mt_op op, int sparse, const struct mt_exec *ex,
                      mt_error *err);
/* t of a COO or compressed tensor (inplace: t_'s refusals), values moved on ex */
mt_status mt__sps_t(mt_call *call, mt_op op, int inplace, const struct mt_exec *ex,
                    mt_error *err);
/* torch's SparseTensorImpl::resize_ checks of a COO tensor resized to
 * (ndim, shape, sparse_dim) (copy_, sparse_resize_; SPS-7) */
mt_status mt__sps_resize_check(const char *op, const mt_tensor *x, int ndim, const int64_t *shape,
                               int sparse_dim, mt_error *err);
/* unsqueeze of a COO tensor into a host-allocated result (values copied on ex) */
mt_status mt__sps_unsqueeze_coo(const mt_host *h, const struct mt_exec *ex, const mt_tensor *x,
                                int d, mt_tensor **out, mt_error *err);
#endif

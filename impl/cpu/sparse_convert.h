/* sparse_convert.h - the plain (not masked) forms of the structure ops
 * to_dense, to_sparse and to_sparse_csr (impl/cpu/structure.c sends every
 * input that is not a masked tensor here; SPC-*, impl/cpu/sparse_convert.c). */
#ifndef MT_CPU_SPARSE_CONVERT_H
#define MT_CPU_SPARSE_CONVERT_H
#include "common/exec.h"
#include "cpu.h"

/* the plain forms, their values copied on ex (the CUDA backend's too) */
mt_status mt__spc_to_dense(mt_call *call, const mt_exec *ex, mt_error *err);
mt_status mt__spc_to_sparse(mt_call *call, const mt_exec *ex, mt_error *err);
mt_status mt__spc_to_sparse_csr(mt_call *call, const mt_exec *ex, mt_error *err);
/* A dense contiguous copy of plain x (any layout; COO duplicates summed by
 * ex), allocated by h, its values copied on ex. */
mt_status mt__spc_densify(const mt_host *h, const mt_exec *ex, const mt_tensor *x,
                          mt_tensor **out, mt_error *err);

#endif

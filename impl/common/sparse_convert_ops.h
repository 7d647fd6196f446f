/* sparse_convert_ops.h - the sparse_convert family's op list, SPC_OPS(X),
 * X(name): the CUDA backend's kernels (impl/cuda/sparse_convert.cu) and
 * slots (impl/cuda/table.c), each through mt__sparse_convert_run. to_dense,
 * to_sparse and to_sparse_csr are structure's ops (their plain forms run
 * this family's kernels). */
#ifndef MT_SPARSE_CONVERT_OPS_H
#define MT_SPARSE_CONVERT_OPS_H

#define SPC_OPS(X)                                                                            \
  X(to_sparse_coo) X(to_sparse_csc) X(to_sparse_bsr) X(to_sparse_bsc) X(coalesce)            \
  X(sparse_mask) X(values) X(indices) X(_indices) X(_values) X(crow_indices) X(col_indices) \
  X(ccol_indices) X(row_indices) X(sparse_coo_tensor) X(sparse_csr_tensor)                  \
  X(sparse_csc_tensor) X(sparse_bsr_tensor) X(sparse_bsc_tensor)

#endif /* MT_SPARSE_CONVERT_OPS_H */

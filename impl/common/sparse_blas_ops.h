/* sparse_blas_ops.h - the sparse_blas family's op list, SPB_OPS(X), X(name):
 * impl/cpu/sparse_blas.c makes the CPU reference's kernels from it (each
 * through mt__sparse_blas_run), impl/cuda/table.c the CUDA backend's slots. */
#ifndef MT_SPARSE_BLAS_OPS_H
#define MT_SPARSE_BLAS_OPS_H

#define SPB_OPS(X)                                                                        \
  X(mm) X(sparse_mm) X(spmm) X(addmm) X(sparse_addmm) X(smm) X(sspaddmm) X(hspmm) X(bmm) \
  X(linear) X(matmul) X(addmv) X(sparse_sampled_addmm)

#endif /* MT_SPARSE_BLAS_OPS_H */

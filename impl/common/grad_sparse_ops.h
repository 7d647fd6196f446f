/* grad_sparse_ops.h - the ops whose backward only impl/cpu/grad_sparse.c
 * has (grad_ops.def's grad_sparse.c section): their slot kernels, on the
 * CPU (mt_cpu_grad_<op>) and the CUDA backend (impl/cuda/grad_sparse.cu).
 * The other plain sparse calls reach grad_sparse.c through their family's
 * backward kernel (grad_unary.c, grad_binary.c, grad_reduce.c,
 * grad_structure.c). */
#ifndef MT_GRAD_SPARSE_OPS_H
#define MT_GRAD_SPARSE_OPS_H

#define GRAD_SPARSE_OWN_OPS(X)                                                              \
  X(coalesce) X(norm) X(narrow_copy) X(index_select) X(hspmm) X(smm) X(sspaddmm)            \
  X(sparse_sum) X(mm) X(matmul) X(bmm) X(sparse_mm) X(addmm) X(addmv) X(sparse_addmm)       \
  X(spmm)                                                                                   \
  X(sparse_sampled_addmm) X(linear) X(sparse_softmax) X(sparse_log_softmax) X(sparse_mask)  \
  X(copy_) X(values) X(to_sparse_coo) X(to_sparse_csc) X(to_sparse_bsr) X(to_sparse_bsc)    \
  X(sparse_coo_tensor) X(sparse_csr_tensor) X(sparse_csc_tensor) X(sparse_bsr_tensor)       \
  X(sparse_bsc_tensor)

#endif /* MT_GRAD_SPARSE_OPS_H */

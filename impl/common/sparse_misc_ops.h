/* sparse_misc_ops.h - the sparse_misc family's op list, SMISC_OPS(X),
 * X(name): the CUDA backend's kernels (impl/cuda/sparse_misc.cu) and slots
 * (impl/cuda/table.c), each through mt__sparse_misc_run. */
#ifndef MT_SPARSE_MISC_OPS_H
#define MT_SPARSE_MISC_OPS_H

#define SMISC_OPS(X)                                                                   \
  X(zero_) X(t_) X(nonzero) X(narrow) X(narrow_copy) X(index_select) X(sparse_softmax) \
  X(sparse_log_softmax) X(sparse_sum) X(max) X(sparse_resize_) X(sparse_resize_and_clear_)

#endif /* MT_SPARSE_MISC_OPS_H */

/* structure_ops.h - the structure family's op list, STRUCTURE_OPS(X),
 * X(name): impl/cpu/structure.c's kernels, and the CUDA backend's slots
 * (impl/cuda/table.c, impl/cuda/structure.cu). */
#ifndef MT_STRUCTURE_OPS_H
#define MT_STRUCTURE_OPS_H

#define STRUCTURE_OPS(X)                                                                     \
  X(select) X(slice) X(transpose) X(t) X(view) X(reshape) X(expand) X(unsqueeze) X(unfold) \
  X(contiguous) X(index) X(split) X(cat) X(stack) X(where) X(clone) X(detach) X(ones_like) \
  X(copy_) X(is_contiguous) X(is_same_size) X(to_dense) X(to_sparse) X(to_sparse_csr)

#endif /* MT_STRUCTURE_OPS_H */

/* grad_structure_ops.h - the structure ops with a backward kernel
 * (impl/cpu/grad_structure.c), GRAD_STRUCTURE_OPS(X), X(name): the CUDA
 * backend's backward slots (impl/cuda/grad_structure.cu, table.c);
 * to_tensor's backward (grad_masked.c) is listed apart. */
#ifndef MT_GRAD_STRUCTURE_OPS_H
#define MT_GRAD_STRUCTURE_OPS_H

#define GRAD_STRUCTURE_OPS(X)                                                                  \
  X(select) X(slice) X(index) X(transpose) X(t) X(view) X(reshape) X(expand) X(unsqueeze)     \
  X(split) X(cat) X(stack) X(unfold) X(where) X(contiguous) X(clone) X(to_dense) X(to_sparse) \
  X(to_sparse_csr)

#endif /* MT_GRAD_STRUCTURE_OPS_H */

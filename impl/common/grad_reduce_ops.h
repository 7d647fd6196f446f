/* grad_reduce_ops.h - the reductions with a backward kernel
 * (impl/cpu/grad_reduce.c), GRAD_RED_OPS(X), X(name, kind): kind is the
 * gradient's formula (common/grad_reduce_math.h's GR_*). The CPU
 * reference's slots, its dispatch, and the CUDA backend's slots
 * (impl/cuda/grad_reduce.cu, table.c) are all made from it. */
#ifndef MT_GRAD_REDUCE_OPS_H
#define MT_GRAD_REDUCE_OPS_H

#define GRAD_RED_OPS(X)                                                                        \
  X(sum, GR_SUM) X(mean, GR_MEAN) X(prod, GR_PROD) X(amin, GR_AMIN) X(amax, GR_AMAX)           \
  X(var, GR_VAR) X(std, GR_STD)

#endif /* MT_GRAD_REDUCE_OPS_H */

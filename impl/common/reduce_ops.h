/* reduce_ops.h - the reduce family's op list: RED_OPS(X), X(op, kind,
 * accepted input dtypes, output dtype rule, refusal text). impl/cpu/reduce.c
 * plans from it; impl/cuda/reduce.cu and impl/cuda/table.c make the CUDA
 * backend's kernel slots from the names. */
#ifndef MT_REDUCE_OPS_H
#define MT_REDUCE_OPS_H

#define DT(d) (1u << MT_##d)
#define DT_FLOAT (DT(float16) | DT(float32) | DT(float64))
#define DT_INT (DT(int64) | DT(int32) | DT(int8))

/* X(op, kind, accepted input dtypes, output dtype rule, refusal text) */
#define RED_OPS(X)                                                                          \
  X(sum, RK_SUM, DT_FLOAT | DT_INT | DT(bool), O_WIDEN, "")                                  \
  X(mean, RK_MEAN, DT_FLOAT, O_SAME,                                                         \
    "Could not infer output dtype. Input dtype must be either a floating point or complex " \
    "dtype")                                                                                \
  X(prod, RK_PROD, DT_FLOAT | DT_INT | DT(bool), O_WIDEN, "")                                \
  X(amin, RK_MIN, DT_FLOAT | DT_INT, O_SAME, "torch.masked has no identity of amin on bool")  \
  X(amax, RK_MAX, DT_FLOAT | DT_INT, O_SAME, "torch.masked has no identity of amax on bool")  \
  X(argmin, RK_ARGMIN, DT_FLOAT | DT_INT, O_SAME,                                            \
    "torch.masked has no identity of argmin on bool")                                       \
  X(argmax, RK_ARGMAX, DT_FLOAT | DT_INT, O_SAME,                                            \
    "torch.masked has no identity of argmax on bool")                                       \
  X(all, RK_ALL, DT_FLOAT | DT_INT | DT(bool), O_BOOL, "")                                   \
  X(var, RK_VAR, DT_FLOAT | DT_INT, O_F32,                                                   \
    "its `input - mean` step subtracts bool tensors, which torch refuses")                  \
  X(std, RK_STD, DT_FLOAT | DT_INT, O_F32,                                                   \
    "its `input - mean` step subtracts bool tensors, which torch refuses")                  \
  X(norm, RK_NORM, DT_FLOAT, O_SAME, "")

#endif /* MT_REDUCE_OPS_H */

/* masked_fn_ops.h - the masked_fn family's op list: MFN_OPS(X), X(op,
 * shape, dim form, identity, integer dtypes taken, where dtype= casts,
 * kind). impl/cpu/masked_fn.c plans from it (the shape, dim, ints and cast
 * names are its own enums; the identity and kind are
 * common/masked_fn_math.h's); impl/cuda/masked_fn.cu and impl/cuda/table.c
 * make the CUDA backend's kernel slots from the names. */
#ifndef MT_MASKED_FN_OPS_H
#define MT_MASKED_FN_OPS_H

/* X(op, shape, dim, fill, ints, cast, kind) */
#define MFN_OPS(X)                                                                           \
  X(masked_sum, SH_REDUCE, DIM_MULTI, MFN_ID_ZERO, INT_BOOL, CAST_PRE, MFK_SUM)                 \
  X(masked_prod, SH_REDUCE, DIM_MULTI, MFN_ID_ONE, INT_BOOL, CAST_PRE, MFK_PROD)                \
  X(masked_amin, SH_REDUCE, DIM_MULTI, MFN_ID_POS_INF, INT_YES, CAST_POST, MFK_AMIN)            \
  X(masked_amax, SH_REDUCE, DIM_MULTI, MFN_ID_NEG_INF, INT_YES, CAST_POST, MFK_AMAX)            \
  X(masked_argmin, SH_REDUCE, DIM_FLAT, MFN_ID_POS_INF, INT_YES, CAST_POST, MFK_ARGMIN)         \
  X(masked_argmax, SH_REDUCE, DIM_FLAT, MFN_ID_NEG_INF, INT_YES, CAST_POST, MFK_ARGMAX)         \
  X(masked_mean, SH_REDUCE, DIM_MULTI, MFN_ID_ZERO, INT_NO, CAST_PRE, MFK_MEAN)                 \
  X(masked_median, SH_REDUCE, DIM_LAST, MFN_ID_NAN, INT_BOOL, CAST_MEDIAN, MFK_MEDIAN)          \
  X(masked_norm, SH_REDUCE, DIM_MULTI, MFN_ID_NORM, INT_NO, CAST_PRE, MFK_NORM)                 \
  X(masked_var, SH_REDUCE, DIM_MULTI, MFN_ID_NONE, INT_YES, CAST_VAR, MFK_VAR)                  \
  X(masked_std, SH_REDUCE, DIM_MULTI, MFN_ID_NONE, INT_YES, CAST_VAR, MFK_STD)                  \
  X(masked_logsumexp, SH_REDUCE, DIM_MULTI, MFN_ID_NEG_INF, INT_YES, CAST_POST, MFK_LOGSUMEXP)  \
  X(masked_cumsum, SH_SCAN, DIM_REQUIRED, MFN_ID_ZERO, INT_YES, CAST_PRE, MFK_CUMSUM)           \
  X(masked_cumprod, SH_SCAN, DIM_REQUIRED, MFN_ID_ONE, INT_YES, CAST_PRE, MFK_CUMPROD)          \
  X(masked_softmax, SH_SCAN, DIM_REQUIRED, MFN_ID_NEG_INF, INT_NO, CAST_PRE, MFK_SOFTMAX)       \
  X(masked_log_softmax, SH_SCAN, DIM_REQUIRED, MFN_ID_NEG_INF, INT_NO, CAST_PRE,                \
    MFK_LOG_SOFTMAX)                                                                         \
  X(masked_softmin, SH_SCAN, DIM_REQUIRED, MFN_ID_POS_INF, INT_NO, CAST_PRE, MFK_SOFTMIN)       \
  X(masked_normalize, SH_SCAN, DIM_REQUIRED, MFN_ID_ZERO, INT_NO, CAST_PRE, MFK_NORMALIZE)      \
  X(masked_logaddexp, SH_BINARY, DIM_NONE, MFN_ID_NEG_INF, INT_NO, CAST_POST, MFK_LOGADDEXP)

#endif /* MT_MASKED_FN_OPS_H */

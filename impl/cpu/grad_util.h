/* grad_util.h - helpers shared by the CPU backward kernels (grad_*.c;
 * golden format 3's gradient cases, spec/SEMANTICS.md GRAD-*; internal).
 *
 * A backward kernel gets the forward inputs (call->in), the forward kwargs
 * and the upstream gradients (call->grad_out, one per forward output, of
 * that output's kind, dtype and mask) and sets call->n_out = call->n_in,
 * out[k] = the gradient of input k as torch makes it, NULL where torch
 * gives none. Element access here reads any strides in row-major order and
 * widens to double: the kernels compute in double and round once to the
 * gradient's dtype. Everything is static inline, like cpu_util.h. */
#ifndef MT_GRAD_UTIL_H
#define MT_GRAD_UTIL_H

#include "cpu_util.h"
#include "grad_sparse.h"

/* Upstream gradient j of the call (a backward call has one per forward
 * output), validated. */
static inline mt_status mt__grad_out(const mt_call *call, int j, const char *op,
                                     const mt_tensor **g, mt_error *err) {
  *g = NULL;
  if (!call->grad_out || call->n_grad_out <= j || !call->grad_out[j])
    return mt_err(err, MT_INVALID_ARGUMENT, "%s backward: expected %d upstream gradients, got %d",
                  op, j + 1, call->n_grad_out);
  *g = call->grad_out[j];
  return mt_tensor_validate(*g, "grad_outputs", err);
}

/* 1 when t is a masked tensor whose data has layout `kind`. */
static inline int mt__grad_is_masked(const mt_tensor *t, mt_kind kind) {
  return t && t->kind == MT_KIND_MASKED && t->data && t->data->kind == kind;
}

/* NOT_SUPPORTED unless t is a dense-storage masked float32/float64 tensor
 * (what `what` names in the message: "inputs/0", "grad_outputs/0"). */
static inline mt_status mt__grad_masked_dense(const mt_tensor *t, const char *what, const char *op,
                                              mt_error *err) {
  if (!mt__grad_is_masked(t, MT_KIND_DENSE))
    return mt_err(err, MT_NOT_SUPPORTED,
                  "%s backward: %s is %s%s%s; the CPU backend implements it on dense-storage "
                  "masked tensors", op, what, mt_kind_name(t->kind),
                  t->kind == MT_KIND_MASKED ? " of " : "",
                  t->kind == MT_KIND_MASKED ? mt_kind_name(t->data->kind) : "");
  return mt__cpu_require_float(t, what, op, err);
}

/* Element i (row-major, any strides) of a dense tensor or of a dense-storage
 * masked tensor's data, as double; a scalar's value. */
static inline double mt__grad_at(const mt_tensor *t, int64_t i) {
  const mt_tensor *d = t->kind == MT_KIND_MASKED ? t->data : t;
  return mt__cpu_ld(d->values, d->dtype, d->kind == MT_KIND_DENSE ? mt_dense_offset(d, i) : 0);
}

/* Whether element i (row-major) is specified: a dense-storage masked
 * tensor's mask bit, 1 for a plain tensor. */
static inline int mt__grad_spec(const mt_tensor *t, int64_t i) {
  if (t->kind != MT_KIND_MASKED) return 1;
  return mt__cpu_ldb(t->mask->values, mt_dense_offset(t->mask, i));
}

/* A new dense-storage masked gradient of dtype dt shaped like x, with x's
 * mask (GRAD-1: the input's mask; all true for a plain x); *data points at
 * its zero-filled contiguous data. */
static inline mt_status mt__grad_like_input(const mt_host *h, const mt_tensor *x, mt_dtype dt,
                                            mt_tensor **out, mt_tensor **data, mt_error *err) {
  mt_tensor *mask;
  mt_status st = mt__cpu_new_masked_dense(h, dt, x->ndim, x->shape, out, data, &mask, err);
  if (st != MT_OK) return st;
  for (int64_t i = 0, n = mt_numel(x); i < n; i++)
    mt__cpu_st(mask->values, MT_bool, i, mt__grad_spec(x, i));
  return MT_OK;
}

/* n doubles, zero-filled (free with free()); OUT_OF_MEMORY names op. */
static inline mt_status mt__grad_doubles(int64_t n, const char *op, double **out, mt_error *err) {
  *out = calloc((size_t)(n > 0 ? n : 1), sizeof(double));
  if (!*out)
    return mt_err(err, MT_OUT_OF_MEMORY, "%s backward: no memory for %lld doubles", op,
                  (long long)n);
  return MT_OK;
}

/* Stores acc[0..n) into the contiguous dense tensor d, rounding once. */
static inline void mt__grad_store(mt_tensor *d, const double *acc, int64_t n) {
  for (int64_t i = 0; i < n; i++) mt__cpu_st(d->values, d->dtype, i, acc[i]);
}

/* The end of a successful backward kernel: one gradient slot per input. */
static inline mt_status mt__grad_done(mt_call *call) {
  call->n_out = call->n_in;
  return MT_OK;
}

/* The row-major multi-index after idx (shape of ndim dims); a 0-d shape
 * has one element and no index. */
static inline void mt__grad_next(int64_t *idx, int ndim, const int64_t *shape) {
  for (int d = ndim - 1; d >= 0; d--) {
    if (++idx[d] < shape[d]) return;
    idx[d] = 0;
  }
}

#endif /* MT_GRAD_UTIL_H */

/* cpu_fixtures.h - building inputs and calling CPU kernels directly in the
 * unit tests of impl/cpu (test_cpu_*.c). Allocation failures abort: a test
 * that cannot build its input has nothing to check. */
#ifndef MT_CPU_FIXTURES_H
#define MT_CPU_FIXTURES_H
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cpu/cpu.h"

#define SHAPE(...) ((const int64_t[]){__VA_ARGS__})
#define VALS(...) ((const double[]){__VA_ARGS__})
#define BITS(...) ((const int[]){__VA_ARGS__})
#define NAN_POISON NAN

static inline mt_tensor *dense(mt_dtype dt, int ndim, const int64_t *shape, const double *v) {
  mt_tensor *t = NULL;
  if (mt_dense_new(dt, ndim, shape, &t, NULL) != MT_OK) abort();
  for (int64_t i = 0; i < mt_numel(t); i++) mt_set_f64(t->values, dt, i, v[i]);
  return t;
}
static inline mt_tensor *bools(int ndim, const int64_t *shape, const int *b) {
  mt_tensor *t = NULL;
  if (mt_dense_new(MT_bool, ndim, shape, &t, NULL) != MT_OK) abort();
  for (int64_t i = 0; i < mt_numel(t); i++) ((uint8_t *)t->values)[i] = (uint8_t)(b[i] != 0);
  return t;
}
static inline mt_tensor *masked(mt_tensor *data, mt_tensor *mask) {
  mt_tensor *t = NULL;
  if (mt_masked_new(data, mask, &t, NULL) != MT_OK) abort();
  return t;
}
static inline mt_tensor *number(double v) {
  mt_tensor *t = NULL;
  if (mt_scalar_new(MT_float64, v, &t, NULL) != MT_OK) abort();
  return t;
}
/* 2-d COO [rows x cols] with nnz entries (rows[k], cols[k]) = v[k]. */
static inline mt_tensor *coo2(mt_dtype dt, int64_t r, int64_t c, int64_t nnz, const int64_t *ri,
                              const int64_t *ci, const double *v, int coalesced) {
  mt_tensor *t = NULL;
  if (mt_coo_new(dt, 2, SHAPE(r, c), 2, nnz, &t, NULL) != MT_OK) abort();
  for (int64_t k = 0; k < nnz; k++) {
    t->indices[k] = ri[k];
    t->indices[nnz + k] = ci[k];
    if (dt == MT_bool)
      ((uint8_t *)t->values)[k] = v[k] != 0;
    else
      mt_set_f64(t->values, dt, k, v[k]);
  }
  t->coalesced = coalesced;
  return t;
}
/* 2-d CSR [rows x cols] with nnz entries (rows[k], cols[k]) = v[k], the
 * entries given in row-major order. */
static inline mt_tensor *csr2(mt_dtype dt, int64_t r, int64_t c, int64_t nnz, const int64_t *ri,
                              const int64_t *ci, const double *v) {
  mt_tensor *t = NULL;
  if (mt_csr_new(dt, r, c, nnz, &t, NULL) != MT_OK) abort();
  memset(t->crow_indices, 0, (size_t)(r + 1) * sizeof(int64_t));
  for (int64_t k = 0; k < nnz; k++) {
    t->crow_indices[ri[k] + 1]++;
    t->col_indices[k] = ci[k];
    if (dt == MT_bool)
      ((uint8_t *)t->values)[k] = v[k] != 0;
    else
      mt_set_f64(t->values, dt, k, v[k]);
  }
  for (int64_t i = 0; i < r; i++) t->crow_indices[i + 1] += t->crow_indices[i];
  return t;
}
static inline double at(const mt_tensor *t, int64_t i) {
  return mt_get_f64(t->values, t->dtype, i);
}
static inline int bit(const mt_tensor *t, int64_t i) {
  return ((const uint8_t *)t->values)[i] != 0;
}

/* Runs kernel fn on the inputs (and kwargs); outputs land in call. */
static inline mt_status run(mt_kernel_fn fn, mt_call *call, mt_error *err, int n_in,
                            const mt_tensor *const *in, const mt_kwargs *kw) {
  memset(call, 0, sizeof *call);
  memset(err, 0, sizeof *err);
  call->host = mt_host_default();
  call->n_in = n_in;
  call->in = in;
  call->kw = kw;
  return fn(call, err);
}

/* Runs backward kernel fn (mt_impl.backward) on the forward inputs, kwargs
 * and n_g upstream gradients; the gradients land in call. */
static inline mt_status run_backward(mt_kernel_fn fn, mt_call *call, mt_error *err, int n_in,
                                     const mt_tensor *const *in, const mt_kwargs *kw, int n_g,
                                     const mt_tensor *const *gout) {
  memset(call, 0, sizeof *call);
  memset(err, 0, sizeof *err);
  call->host = mt_host_default();
  call->n_in = n_in;
  call->in = in;
  call->kw = kw;
  call->n_grad_out = n_g;
  call->grad_out = gout;
  return fn(call, err);
}
static inline void done(mt_call *call, mt_tensor **own, int n_own) {
  for (int k = 0; k < call->n_out; k++) mt_tensor_free(call->out[k]);
  for (int k = 0; k < n_own; k++) mt_tensor_free(own[k]);
}

static inline mt_kwarg kw_float(const char *name, double v) {
  return (mt_kwarg){.name = name, .type = MT_KW_FLOAT, .f = v};
}
static inline mt_kwarg kw_int(const char *name, int64_t v) {
  return (mt_kwarg){.name = name, .type = MT_KW_INT, .i = v, .f = (double)v};
}
static inline mt_kwarg kw_bool(const char *name, int v) {
  return (mt_kwarg){.name = name, .type = MT_KW_BOOL, .i = v, .f = v};
}
static inline mt_kwarg kw_ints(const char *name, int n, const int64_t *v) {
  return (mt_kwarg){.name = name, .type = MT_KW_INTS, .n = n, .ints = v};
}

#endif

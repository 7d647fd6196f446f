/* tensor.c - allocation, freeing, cloning and shape helpers.
 *
 * Every tensor made here owns its buffers (zero-filled, contiguous) and is
 * tagged in `owner`; mt_tensor_free releases only tagged tensors, so a view
 * built by hand (owner NULL) is never freed by mistake. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mt_core.h"

static const char owner_tag = 'm';
#define MT_OWNED ((void *)&owner_tag)

/* ---- shape helpers -------------------------------------------------------- */

int64_t mt_shape_numel(int ndim, const int64_t *shape) {
  int64_t n = 1;
  for (int d = 0; d < ndim; d++) {
    if (shape[d] <= 0) return 0;
    if (n > INT64_MAX / shape[d]) return -1; /* overflow */
    n *= shape[d];
  }
  return n;
}

int64_t mt_numel(const mt_tensor *t) { return mt_shape_numel(t->ndim, t->shape); }

int mt_shape_equal(const mt_tensor *a, const mt_tensor *b) {
  if (a->ndim != b->ndim) return 0;
  for (int d = 0; d < a->ndim; d++)
    if (a->shape[d] != b->shape[d]) return 0;
  return 1;
}

int mt_is_contiguous(const mt_tensor *t) {
  if (t->kind != MT_KIND_DENSE) return 1;
  if (mt_numel(t) <= 1) return 1;
  int64_t expect = 1;
  for (int d = t->ndim - 1; d >= 0; d--) {
    if (t->shape[d] != 1 && t->strides[d] != expect) return 0;
    expect *= t->shape[d];
  }
  return 1;
}

const char *mt_shape_str(int ndim, const int64_t *shape, char *buf, size_t len) {
  size_t used = 0;
  if (!len) return buf;
  buf[0] = '\0';
  used += (size_t)snprintf(buf, len, "[");
  for (int d = 0; d < ndim && used < len; d++)
    used += (size_t)snprintf(buf + used, len - used, "%s%lld", d ? ", " : "", (long long)shape[d]);
  if (used < len) snprintf(buf + used, len - used, "]");
  return buf;
}

int64_t mt_coo_row_numel(const mt_tensor *t) {
  return mt_shape_numel(t->ndim - t->sparse_dim, t->shape + t->sparse_dim);
}

int64_t mt_coo_linear(const mt_tensor *t, int64_t k) {
  int64_t lin = 0;
  for (int d = 0; d < t->sparse_dim; d++) lin = lin * t->shape[d] + t->indices[d * t->nnz + k];
  return lin;
}

/* ---- allocation ----------------------------------------------------------- */

static mt_status check_shape(int ndim, const int64_t *shape, int64_t *numel, mt_error *err) {
  char buf[160];
  if (ndim < 0 || ndim > MT_MAX_DIMS)
    return mt_err(err, MT_INVALID_ARGUMENT, "ndim = %d is outside [0, %d]", ndim, MT_MAX_DIMS);
  if (ndim > 0 && !shape) return mt_err(err, MT_INVALID_ARGUMENT, "shape is NULL");
  for (int d = 0; d < ndim; d++)
    if (shape[d] < 0)
      return mt_err(err, MT_INVALID_ARGUMENT, "shape[%d] = %lld is negative", d,
                    (long long)shape[d]);
  *numel = mt_shape_numel(ndim, shape);
  if (*numel < 0)
    return mt_err(err, MT_INVALID_ARGUMENT, "shape %s has more than 2^63 elements",
                  mt_shape_str(ndim, shape, buf, sizeof buf));
  return MT_OK;
}

/* calloc of n elements of size es, at least one byte, overflow-checked. */
static mt_status zalloc(void **p, int64_t n, size_t es, const char *what, mt_error *err) {
  *p = NULL;
  if (n < 0 || (es && (uint64_t)n > SIZE_MAX / es))
    return mt_err(err, MT_OUT_OF_MEMORY, "%s: %lld elements of %zu bytes do not fit in memory",
                  what, (long long)n, es);
  size_t bytes = (size_t)n * es;
  *p = calloc(bytes ? bytes : 1, 1);
  if (!*p)
    return mt_err(err, MT_OUT_OF_MEMORY, "%s: cannot allocate %zu bytes", what, bytes);
  return MT_OK;
}

static mt_status tensor_shell(mt_kind kind, mt_dtype dtype, int ndim, const int64_t *shape,
                              mt_tensor **out, mt_error *err) {
  *out = NULL;
  if ((unsigned)dtype >= MT_DTYPE__COUNT)
    return mt_err(err, MT_INVALID_ARGUMENT, "dtype id %d is unknown", (int)dtype);
  mt_tensor *t = calloc(1, sizeof *t);
  if (!t) return mt_err(err, MT_OUT_OF_MEMORY, "cannot allocate a tensor header");
  t->kind = kind;
  t->dtype = dtype;
  t->ndim = ndim;
  for (int d = 0; d < ndim; d++) t->shape[d] = shape[d];
  t->owner = MT_OWNED;
  *out = t;
  return MT_OK;
}

static void set_contiguous_strides(mt_tensor *t) {
  int64_t s = 1;
  for (int d = t->ndim - 1; d >= 0; d--) {
    t->strides[d] = s;
    s *= t->shape[d] > 0 ? t->shape[d] : 1;
  }
}

mt_status mt_dense_new(mt_dtype dtype, int ndim, const int64_t *shape, mt_tensor **out,
                       mt_error *err) {
  int64_t n;
  mt_status st;
  *out = NULL;
  if ((st = check_shape(ndim, shape, &n, err)) != MT_OK) return st;
  if ((st = tensor_shell(MT_KIND_DENSE, dtype, ndim, shape, out, err)) != MT_OK) return st;
  set_contiguous_strides(*out);
  if ((st = zalloc(&(*out)->values, n, mt_dtype_size(dtype), "dense values", err)) != MT_OK)
    goto fail;
  return MT_OK;
fail:
  mt_tensor_free(*out);
  *out = NULL;
  return st;
}

mt_status mt_coo_new(mt_dtype dtype, int ndim, const int64_t *shape, int sparse_dim, int64_t nnz,
                     mt_tensor **out, mt_error *err) {
  int64_t n;
  mt_status st;
  *out = NULL;
  if ((st = check_shape(ndim, shape, &n, err)) != MT_OK) return st;
  if (sparse_dim < 0 || sparse_dim > ndim)
    return mt_err(err, MT_INVALID_ARGUMENT, "COO sparse_dim = %d is outside [0, ndim = %d]",
                  sparse_dim, ndim);
  if (nnz < 0) return mt_err(err, MT_INVALID_ARGUMENT, "COO nnz = %lld is negative", (long long)nnz);
  if ((st = tensor_shell(MT_KIND_COO, dtype, ndim, shape, out, err)) != MT_OK) return st;
  mt_tensor *t = *out;
  t->sparse_dim = sparse_dim;
  t->dense_dim = ndim - sparse_dim;
  t->nnz = nnz;
  t->coalesced = nnz <= 1;
  int64_t row = mt_coo_row_numel(t);
  if (sparse_dim && nnz > INT64_MAX / sparse_dim) {
    st = mt_err(err, MT_OUT_OF_MEMORY, "COO indices: %d x %lld entries overflow", sparse_dim,
                (long long)nnz);
    goto fail;
  }
  if ((st = zalloc((void **)&t->indices, (int64_t)sparse_dim * nnz, sizeof(int64_t),
                   "COO indices", err)) != MT_OK)
    goto fail;
  if (row && nnz > INT64_MAX / row) {
    st = mt_err(err, MT_OUT_OF_MEMORY, "COO values: %lld x %lld elements overflow",
                (long long)nnz, (long long)row);
    goto fail;
  }
  if ((st = zalloc(&t->values, nnz * row, mt_dtype_size(dtype), "COO values", err)) != MT_OK)
    goto fail;
  return MT_OK;
fail:
  mt_tensor_free(*out);
  *out = NULL;
  return st;
}

static int64_t mul_or_neg(int64_t a, int64_t b) { /* a * b, -1 on overflow (a, b >= 0) */
  return (b && a > INT64_MAX / b) ? -1 : a * b;
}

mt_status mt_compressed_new(mt_kind kind, mt_dtype dtype, int ndim, const int64_t *shape,
                            int dense_dim, const int64_t *blocksize, int64_t nnz,
                            mt_tensor **out, mt_error *err) {
  int64_t n;
  mt_status st;
  mt_cgeom g;
  *out = NULL;
  if (!mt_kind_is_compressed(kind))
    return mt_err(err, MT_INVALID_ARGUMENT, "kind %d is not a compressed layout", (int)kind);
  const char *k = mt_kind_name(kind);
  if ((st = check_shape(ndim, shape, &n, err)) != MT_OK) return st;
  if (dense_dim < 0 || ndim - 2 - dense_dim < 0)
    return mt_err(err, MT_INVALID_ARGUMENT, "%s: ndim = %d leaves no room for 2 sparse dims and "
                  "dense_dim = %d", k, ndim, dense_dim);
  if (nnz < 0) return mt_err(err, MT_INVALID_ARGUMENT, "%s nnz = %lld is negative", k, (long long)nnz);
  if (mt_kind_is_blocked(kind) && !blocksize)
    return mt_err(err, MT_INVALID_ARGUMENT, "%s needs a blocksize", k);
  if ((st = tensor_shell(kind, dtype, ndim, shape, out, err)) != MT_OK) return st;
  mt_tensor *t = *out;
  t->nnz = nnz;
  t->dense_dim = dense_dim;
  t->blocksize[0] = mt_kind_is_blocked(kind) ? blocksize[0] : 1;
  t->blocksize[1] = mt_kind_is_blocked(kind) ? blocksize[1] : 1;
  if (!mt_cgeom_of(t, &g)) {
    st = mt_err(err, MT_INVALID_ARGUMENT, "%s: blocksize (%lld, %lld) does not divide the sparse "
                "dims (%lld, %lld)", k, (long long)t->blocksize[0], (long long)t->blocksize[1],
                (long long)shape[ndim - 2 - dense_dim], (long long)shape[ndim - 1 - dense_dim]);
    goto fail;
  }
  int64_t ncrow = mul_or_neg(g.batches, g.ncomp + 1), ncol = mul_or_neg(g.batches, nnz),
          nval = ncol < 0 ? -1 : mul_or_neg(ncol, g.entry);
  if (ncrow < 0 || ncol < 0 || nval < 0) {
    st = mt_err(err, MT_OUT_OF_MEMORY, "%s: %lld batches x %lld entries overflow", k,
                (long long)g.batches, (long long)nnz);
    goto fail;
  }
  if ((st = zalloc((void **)&t->crow_indices, ncrow, sizeof(int64_t), mt_compressed_name(kind),
                   err)) != MT_OK ||
      (st = zalloc((void **)&t->col_indices, ncol, sizeof(int64_t), mt_plain_name(kind), err)) !=
          MT_OK ||
      (st = zalloc(&t->values, nval, mt_dtype_size(dtype), "values", err)) != MT_OK)
    goto fail;
  return MT_OK;
fail:
  mt_tensor_free(*out);
  *out = NULL;
  return st;
}

mt_status mt_csr_new(mt_dtype dtype, int64_t rows, int64_t cols, int64_t nnz, mt_tensor **out,
                     mt_error *err) {
  int64_t shape[2] = {rows, cols};
  return mt_compressed_new(MT_KIND_CSR, dtype, 2, shape, 0, NULL, nnz, out, err);
}

mt_status mt_masked_new(mt_tensor *data, mt_tensor *mask, mt_tensor **out, mt_error *err) {
  mt_status st;
  *out = NULL;
  if (!data || !mask) {
    st = mt_err(err, MT_INVALID_ARGUMENT, "masked tensor: %s is NULL", data ? "mask" : "data");
    goto fail;
  }
  if (data->kind == MT_KIND_MASKED || mask->kind == MT_KIND_MASKED) {
    st = mt_err(err, MT_INVALID_ARGUMENT, "masked tensor: data and mask cannot be masked");
    goto fail;
  }
  if ((st = tensor_shell(MT_KIND_MASKED, data->dtype, data->ndim, data->shape, out, err)) != MT_OK)
    goto fail;
  (*out)->data = data;
  (*out)->mask = mask;
  return MT_OK;
fail:
  mt_tensor_free(data);
  mt_tensor_free(mask);
  return st;
}

mt_status mt_scalar_new(mt_dtype dtype, double value, mt_tensor **out, mt_error *err) {
  mt_status st;
  *out = NULL;
  if ((st = tensor_shell(MT_KIND_SCALAR, dtype, 0, NULL, out, err)) != MT_OK) return st;
  if ((st = zalloc(&(*out)->values, 1, mt_dtype_size(dtype), "scalar value", err)) != MT_OK) {
    mt_tensor_free(*out);
    *out = NULL;
    return st;
  }
  mt_set_f64((*out)->values, dtype, 0, value);
  return MT_OK;
}

void mt_tensor_free(mt_tensor *t) {
  if (!t || t->owner != MT_OWNED) return;
  free(t->values);
  free(t->indices);
  free(t->crow_indices);
  free(t->col_indices);
  mt_tensor_free(t->data);
  mt_tensor_free(t->mask);
  free(t);
}

static void host_free(mt_tensor *t) { mt_tensor_free(t); }

static const mt_host default_host = {
    .abi_version = MT_ABI_VERSION,
    .struct_size = sizeof(mt_host),
    .dense_new = mt_dense_new,
    .coo_new = mt_coo_new,
    .csr_new = mt_csr_new,
    .masked_new = mt_masked_new,
    .scalar_new = mt_scalar_new,
    .free = host_free,
    .compressed_new = mt_compressed_new,
};

const mt_host *mt_host_default(void) { return &default_host; }

mt_status mt_tensor_clone_host(const mt_host *h, const mt_tensor *t, mt_tensor **out,
                               mt_error *err) {
  mt_status st;
  size_t es = mt_dtype_size(t->dtype);
  *out = NULL;
  switch (t->kind) {
  case MT_KIND_DENSE: {
    if ((st = h->dense_new(t->dtype, t->ndim, t->shape, out, err)) != MT_OK) return st;
    int64_t n = mt_numel(t);
    if (mt_is_contiguous(t)) {
      if (n) memcpy((*out)->values, t->values, (size_t)n * es);
    } else {
      for (int64_t i = 0; i < n; i++) /* bytes, not doubles: int64 stays exact */
        memcpy((char *)(*out)->values + (size_t)i * es,
               (const char *)t->values + (size_t)mt_dense_offset(t, i) * es, es);
    }
    return MT_OK;
  }
  case MT_KIND_SCALAR:
    if ((st = h->scalar_new(t->dtype, 0.0, out, err)) != MT_OK) return st;
    memcpy((*out)->values, t->values, es);
    return MT_OK;
  case MT_KIND_COO:
    if ((st = h->coo_new(t->dtype, t->ndim, t->shape, t->sparse_dim, t->nnz, out, err)) != MT_OK)
      return st;
    if (t->nnz) {
      memcpy((*out)->indices, t->indices, (size_t)t->sparse_dim * (size_t)t->nnz * sizeof(int64_t));
      memcpy((*out)->values, t->values, (size_t)t->nnz * (size_t)mt_coo_row_numel(t) * es);
    }
    (*out)->coalesced = t->coalesced;
    return MT_OK;
  case MT_KIND_CSR:
  case MT_KIND_CSC:
  case MT_KIND_BSR:
  case MT_KIND_BSC: {
    mt_cgeom g;
    if (!mt_cgeom_of(t, &g))
      return mt_err(err, MT_INVALID_ARGUMENT, "clone: %s tensor of inconsistent geometry",
                    mt_kind_name(t->kind));
    if ((st = h->compressed_new(t->kind, t->dtype, t->ndim, t->shape, t->dense_dim, t->blocksize,
                                t->nnz, out, err)) != MT_OK)
      return st;
    memcpy((*out)->crow_indices, t->crow_indices,
           (size_t)(g.batches * (g.ncomp + 1)) * sizeof(int64_t));
    if (g.batches > 0 && t->nnz > 0) {
      memcpy((*out)->col_indices, t->col_indices, (size_t)(g.batches * t->nnz) * sizeof(int64_t));
      memcpy((*out)->values, t->values, (size_t)(g.batches * t->nnz * g.entry) * es);
    }
    return MT_OK;
  }
  case MT_KIND_MASKED: {
    mt_tensor *d = NULL, *m = NULL;
    if ((st = mt_tensor_clone_host(h, t->data, &d, err)) != MT_OK) return st;
    if ((st = mt_tensor_clone_host(h, t->mask, &m, err)) != MT_OK) {
      h->free(d);
      return st;
    }
    return h->masked_new(d, m, out, err);
  }
  default:
    return mt_err(err, MT_INVALID_ARGUMENT, "clone: unknown tensor kind %d", (int)t->kind);
  }
}

mt_status mt_tensor_clone(const mt_tensor *t, mt_tensor **out, mt_error *err) {
  return mt_tensor_clone_host(mt_host_default(), t, out, err);
}

/* validate.c - every invariant of every layout, checked before a kernel
 * sees a tensor (spec/SEMANTICS.md, ERR-1..ERR-4). Messages name the
 * tensor, the field, the index and the value. */
#include <stdio.h>

#include "mt_core.h"

static mt_status check_header(const mt_tensor *t, const char *what, mt_error *err) {
  char buf[160];
  if ((unsigned)t->dtype >= MT_DTYPE__COUNT)
    return mt_err(err, MT_INVALID_ARGUMENT, "%s: dtype id %d is unknown", what, (int)t->dtype);
  if (t->ndim < 0 || t->ndim > MT_MAX_DIMS)
    return mt_err(err, MT_INVALID_ARGUMENT, "%s: ndim = %d is outside [0, %d]", what, t->ndim,
                  MT_MAX_DIMS);
  for (int d = 0; d < t->ndim; d++)
    if (t->shape[d] < 0)
      return mt_err(err, MT_INVALID_ARGUMENT, "%s: shape[%d] = %lld is negative", what, d,
                    (long long)t->shape[d]);
  if (mt_numel(t) < 0)
    return mt_err(err, MT_INVALID_ARGUMENT, "%s: shape %s has more than 2^63 elements", what,
                  mt_shape_str(t->ndim, t->shape, buf, sizeof buf));
  return MT_OK;
}

static mt_status check_dense(const mt_tensor *t, const char *what, mt_error *err) {
  for (int d = 0; d < t->ndim; d++)
    if (t->strides[d] < 0)
      return mt_err(err, MT_INVALID_ARGUMENT, "%s: strides[%d] = %lld is negative", what, d,
                    (long long)t->strides[d]);
  if (mt_numel(t) > 0 && !t->values)
    return mt_err(err, MT_INVALID_ARGUMENT, "%s: values is NULL for %lld elements", what,
                  (long long)mt_numel(t));
  return MT_OK;
}

static mt_status check_coo(const mt_tensor *t, const char *what, mt_error *err) {
  if (t->sparse_dim < 0 || t->dense_dim < 0 || t->sparse_dim + t->dense_dim != t->ndim)
    return mt_err(err, MT_INVALID_ARGUMENT,
                  "%s: COO sparse_dim (%d) + dense_dim (%d) must equal ndim (%d)", what,
                  t->sparse_dim, t->dense_dim, t->ndim);
  if (t->nnz < 0)
    return mt_err(err, MT_INVALID_ARGUMENT, "%s: COO nnz = %lld is negative", what,
                  (long long)t->nnz);
  if (t->nnz > 0 && ((t->sparse_dim > 0 && !t->indices) || !t->values))
    return mt_err(err, MT_INVALID_ARGUMENT, "%s: COO %s is NULL with nnz = %lld", what,
                  t->values ? "indices" : "values", (long long)t->nnz);
  for (int d = 0; d < t->sparse_dim; d++)
    for (int64_t k = 0; k < t->nnz; k++) {
      int64_t v = t->indices[d * t->nnz + k];
      if (v < 0 || v >= t->shape[d])
        return mt_err(err, MT_INDEX_OUT_OF_RANGE,
                      "%s: COO indices[%d][%lld] = %lld is out of range for dim %d of size %lld",
                      what, d, (long long)k, (long long)v, d, (long long)t->shape[d]);
    }
  if (t->coalesced) /* the flag promises sorted, unique indices: hold it to that */
    for (int64_t k = 1; k < t->nnz; k++) {
      int cmp = 0;
      for (int d = 0; d < t->sparse_dim && !cmp; d++) {
        int64_t a = t->indices[d * t->nnz + k - 1], b = t->indices[d * t->nnz + k];
        cmp = (a > b) - (a < b);
      }
      if (cmp >= 0)
        return mt_err(err, MT_INVALID_ARGUMENT,
                      "%s: COO is flagged coalesced but entry %lld is %s entry %lld", what,
                      (long long)k, cmp ? "ordered before" : "a duplicate of", (long long)k - 1);
    }
  return MT_OK;
}

/* CSR, CSC, BSR, BSC (mt/compressed.h), batch by batch: the compressed
 * indices start at 0, never decrease and end at nnz; the plain indices are
 * in range and strictly increasing within each compressed slot (torch's
 * _validate_compressed_sparse_indices). */
static mt_status check_compressed(const mt_tensor *t, const char *what, mt_error *err) {
  static const char *UPPER[MT_KIND__COUNT] = {
      [MT_KIND_CSR] = "CSR", [MT_KIND_CSC] = "CSC", [MT_KIND_BSR] = "BSR", [MT_KIND_BSC] = "BSC"};
  const char *K = UPPER[t->kind], *cn = mt_compressed_name(t->kind), *pn = mt_plain_name(t->kind);
  mt_cgeom g;
  if (t->dense_dim < 0 || t->ndim - 2 - t->dense_dim < 0)
    return mt_err(err, MT_INVALID_ARGUMENT,
                  "%s: %s needs 2 sparse dims: ndim = %d with dense_dim = %d", what, K, t->ndim,
                  t->dense_dim);
  if (mt_kind_is_blocked(t->kind) && (t->blocksize[0] < 1 || t->blocksize[1] < 1))
    return mt_err(err, MT_INVALID_ARGUMENT, "%s: %s blocksize (%lld, %lld) must be positive", what,
                  K, (long long)t->blocksize[0], (long long)t->blocksize[1]);
  if (!mt_cgeom_of(t, &g))
    return mt_err(err, MT_INVALID_ARGUMENT,
                  "%s: %s blocksize (%lld, %lld) does not divide the sparse dims (%lld, %lld)", what,
                  K, (long long)t->blocksize[0], (long long)t->blocksize[1],
                  (long long)t->shape[t->ndim - 2 - t->dense_dim],
                  (long long)t->shape[t->ndim - 1 - t->dense_dim]);
  int64_t nnz = t->nnz;
  if (nnz < 0)
    return mt_err(err, MT_INVALID_ARGUMENT, "%s: %s nnz = %lld is negative", what, K,
                  (long long)nnz);
  if (g.batches && g.nplain == 0 && nnz > 0)
    return mt_err(err, MT_INDEX_OUT_OF_RANGE, "%s: %s has nnz = %lld but no %s to index", what,
                  K, (long long)nnz, pn);
  const int64_t *crow_all = t->crow_indices, *col_all = t->col_indices;
  if (g.batches > 0 && (!crow_all || (nnz > 0 && (!col_all || !t->values))))
    return mt_err(err, MT_INVALID_ARGUMENT, "%s: %s %s is NULL", what, K,
                  !crow_all ? cn : !col_all ? pn : "values");
  const char *unit = g.by_col ? (g.bh > 1 ? "block rows" : "rows")
                              : (g.bw > 1 ? "block columns" : "columns");
  for (int64_t b = 0; b < g.batches; b++) {
    const int64_t *crow = crow_all + b * (g.ncomp + 1), *col = col_all + b * nnz;
    char at[48] = "";
    if (g.nb) snprintf(at, sizeof at, "batch %lld: ", (long long)b);
    if (crow[0] != 0)
      return mt_err(err, MT_INVALID_ARGUMENT, "%s: %s%s %s[0] = %lld, must be 0", what, at, K, cn,
                    (long long)crow[0]);
    for (int64_t r = 0; r < g.ncomp; r++)
      if (crow[r + 1] < crow[r])
        return mt_err(err, MT_INVALID_ARGUMENT,
                      "%s: %s%s %s[%lld] = %lld is less than %s[%lld] = %lld "
                      "(must be non-decreasing)",
                      what, at, K, cn, (long long)r + 1, (long long)crow[r + 1], cn, (long long)r,
                      (long long)crow[r]);
    if (crow[g.ncomp] != nnz)
      return mt_err(err, MT_INVALID_ARGUMENT, "%s: %s%s %s[%lld] = %lld, must equal nnz = %lld",
                    what, at, K, cn, (long long)g.ncomp, (long long)crow[g.ncomp],
                    (long long)nnz);
    for (int64_t r = 0; r < g.ncomp; r++)
      for (int64_t k = crow[r]; k < crow[r + 1]; k++) {
        if (col[k] < 0 || col[k] >= g.nplain)
          return mt_err(err, MT_INDEX_OUT_OF_RANGE,
                        "%s: %s%s %s[%lld] = %lld is out of range for %lld %s", what, at, K, pn,
                        (long long)k, (long long)col[k], (long long)g.nplain, unit);
        if (k > crow[r] && col[k] <= col[k - 1])
          return mt_err(err, MT_INVALID_ARGUMENT,
                        "%s: %s%s %s[%lld] = %lld in %s %lld is not greater than the previous "
                        "one, %lld (%s must be sorted and unique per %s)",
                        what, at, K, pn, (long long)k, (long long)col[k],
                        g.by_col ? "column" : "row", (long long)r, (long long)col[k - 1], unit,
                        g.by_col ? "column" : "row");
      }
  }
  return MT_OK;
}

static mt_status check_masked(const mt_tensor *t, const char *what, mt_error *err) {
  char sub[96], a[160], b[160];
  mt_status st;
  if (!t->data || !t->mask)
    return mt_err(err, MT_INVALID_ARGUMENT, "%s: masked tensor has no %s", what,
                  t->data ? "mask" : "data");
  if (t->data->kind != t->mask->kind)
    return mt_err(err, MT_LAYOUT_MISMATCH, "%s: data is %s but mask is %s", what,
                  mt_kind_name(t->data->kind), mt_kind_name(t->mask->kind));
  if (t->data->kind == MT_KIND_MASKED || t->data->kind == MT_KIND_SCALAR)
    return mt_err(err, MT_INVALID_ARGUMENT, "%s: masked data cannot be %s", what,
                  mt_kind_name(t->data->kind));
  if (!mt_shape_equal(t->data, t->mask))
    return mt_err(err, MT_SHAPE_MISMATCH, "%s: data shape %s differs from mask shape %s", what,
                  mt_shape_str(t->data->ndim, t->data->shape, a, sizeof a),
                  mt_shape_str(t->mask->ndim, t->mask->shape, b, sizeof b));
  if (t->mask->dtype != MT_bool)
    return mt_err(err, MT_DTYPE_MISMATCH, "%s: mask dtype is %s, must be bool", what,
                  mt_dtype_name(t->mask->dtype));
  snprintf(sub, sizeof sub, "%.80s/data", what);
  if ((st = mt_tensor_validate(t->data, sub, err)) != MT_OK) return st;
  snprintf(sub, sizeof sub, "%.80s/mask", what);
  return mt_tensor_validate(t->mask, sub, err);
}

mt_status mt_tensor_validate(const mt_tensor *t, const char *what, mt_error *err) {
  mt_status st;
  if (!what) what = "tensor";
  if (!t) return mt_err(err, MT_INVALID_ARGUMENT, "%s is NULL", what);
  if ((st = check_header(t, what, err)) != MT_OK) return st;
  switch (t->kind) {
  case MT_KIND_DENSE: return check_dense(t, what, err);
  case MT_KIND_COO: return check_coo(t, what, err);
  case MT_KIND_CSR:
  case MT_KIND_CSC:
  case MT_KIND_BSR:
  case MT_KIND_BSC: return check_compressed(t, what, err);
  case MT_KIND_MASKED: return check_masked(t, what, err);
  case MT_KIND_SCALAR:
    if (t->ndim != 0 || !t->values)
      return mt_err(err, MT_INVALID_ARGUMENT, "%s: a scalar has ndim 0 and one value", what);
    return MT_OK;
  default:
    return mt_err(err, MT_INVALID_ARGUMENT, "%s: kind id %d is unknown", what, (int)t->kind);
  }
}

/* convert.c - layout conversions: COO coalescing and densifying. */
#include <stdlib.h>
#include <string.h>

#include "mt_core.h"

typedef struct {
  int64_t key, k;
} coo_key;

static int key_cmp(const void *pa, const void *pb) {
  const coo_key *a = pa, *b = pb;
  if (a->key != b->key) return a->key < b->key ? -1 : 1;
  return (a->k > b->k) - (a->k < b->k); /* stable: keeps duplicates in input order */
}

mt_status mt_coo_coalesce(const mt_tensor *coo, mt_tensor **out, mt_error *err) {
  mt_status st;
  coo_key *keys = NULL;
  double *acc = NULL;
  mt_tensor *t = NULL;
  *out = NULL;
  if (coo->kind != MT_KIND_COO)
    return mt_err(err, MT_INVALID_ARGUMENT, "coalesce: expected a COO tensor, got %s",
                  mt_kind_name(coo->kind));
  int sd = coo->sparse_dim;
  int64_t nnz = coo->nnz, row = mt_coo_row_numel(coo), span = 1;
  for (int d = 0; d < sd; d++) {
    if (coo->shape[d] > 0 && span > INT64_MAX / coo->shape[d])
      return mt_err(err, MT_INVALID_ARGUMENT, "coalesce: sparse dims have more than 2^63 cells");
    span *= coo->shape[d];
  }
  keys = malloc((size_t)(nnz ? nnz : 1) * sizeof *keys);
  acc = malloc((size_t)(row ? row : 1) * sizeof *acc);
  if (!keys || !acc) {
    st = mt_err(err, MT_OUT_OF_MEMORY, "coalesce: cannot allocate %lld keys", (long long)nnz);
    goto done;
  }
  for (int64_t k = 0; k < nnz; k++) keys[k] = (coo_key){mt_coo_linear(coo, k), k};
  qsort(keys, (size_t)nnz, sizeof *keys, key_cmp);
  int64_t uniq = 0;
  for (int64_t k = 0; k < nnz; k++) uniq += (k == 0 || keys[k].key != keys[k - 1].key);
  if ((st = mt_coo_new(coo->dtype, coo->ndim, coo->shape, sd, uniq, &t, err)) != MT_OK) goto done;
  int is_bool = coo->dtype == MT_bool;
  for (int64_t k = 0, u = -1; k < nnz; k++) {
    int64_t src = keys[k].k;
    if (k == 0 || keys[k].key != keys[k - 1].key) {
      if (u >= 0)
        for (int64_t j = 0; j < row; j++) mt_set_f64(t->values, t->dtype, u * row + j, acc[j]);
      u++;
      for (int d = 0; d < sd; d++) t->indices[d * uniq + u] = coo->indices[d * nnz + src];
      for (int64_t j = 0; j < row; j++) acc[j] = 0.0;
    }
    for (int64_t j = 0; j < row; j++) {
      double v = mt_get_f64(coo->values, coo->dtype, src * row + j);
      acc[j] = is_bool ? (double)(acc[j] != 0 || v != 0) : acc[j] + v;
    }
    if (k == nnz - 1)
      for (int64_t j = 0; j < row; j++) mt_set_f64(t->values, t->dtype, u * row + j, acc[j]);
  }
  t->coalesced = 1;
  *out = t;
  t = NULL;
done:
  free(keys);
  free(acc);
  mt_tensor_free(t);
  return st;
}

/* Entry k of batch b in compressed slot c: block (c, plain) or (plain, c),
 * each cell of the block `dense` elements (mt/compressed.h). Copies bytes:
 * every dtype stays exact. */
static mt_status compressed_to_dense(const mt_tensor *t, mt_tensor **out, mt_error *err) {
  mt_status st;
  mt_cgeom g;
  if (!mt_cgeom_of(t, &g))
    return mt_err(err, MT_INVALID_ARGUMENT, "to_dense: %s tensor of inconsistent geometry",
                  mt_kind_name(t->kind));
  if ((st = mt_dense_new(t->dtype, t->ndim, t->shape, out, err)) != MT_OK) return st;
  size_t es = mt_dtype_size(t->dtype), cell = (size_t)g.dense * es;
  char *dst = (*out)->values;
  const char *src = t->values;
  for (int64_t b = 0; b < g.batches; b++)
    MT_CGEOM_FOR_EACH_CELL(t, &g, b, row, col, at)
      memcpy(dst + (size_t)((b * g.rows + row) * g.cols + col) * cell, src + (size_t)at * es, cell);
  return MT_OK;
}

mt_status mt_to_dense(const mt_tensor *t, mt_tensor **out, mt_error *err) {
  mt_status st;
  mt_tensor *c = NULL;
  *out = NULL;
  switch (t->kind) {
  case MT_KIND_DENSE: return mt_tensor_clone(t, out, err);
  case MT_KIND_MASKED: return mt_to_dense(t->data, out, err);
  case MT_KIND_SCALAR:
    if ((st = mt_dense_new(t->dtype, 0, NULL, out, err)) != MT_OK) return st;
    memcpy((*out)->values, t->values, mt_dtype_size(t->dtype));
    return MT_OK;
  case MT_KIND_COO: {
    if ((st = mt_coo_coalesce(t, &c, err)) != MT_OK) return st;
    if ((st = mt_dense_new(t->dtype, t->ndim, t->shape, out, err)) != MT_OK) break;
    int64_t row = mt_coo_row_numel(c);
    size_t es = mt_dtype_size(t->dtype);
    for (int64_t k = 0; k < c->nnz; k++) {
      int64_t lin = mt_coo_linear(c, k);
      memcpy((char *)(*out)->values + (size_t)(lin * row) * es,
             (const char *)c->values + (size_t)(k * row) * es, (size_t)row * es);
    }
    break;
  }
  case MT_KIND_CSR:
  case MT_KIND_CSC:
  case MT_KIND_BSR:
  case MT_KIND_BSC: return compressed_to_dense(t, out, err);
  default:
    return mt_err(err, MT_INVALID_ARGUMENT, "to_dense: unknown tensor kind %d", (int)t->kind);
  }
  mt_tensor_free(c);
  return st;
}

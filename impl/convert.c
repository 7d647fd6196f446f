/* convert.c - layout conversions: COO coalescing and densifying. */
#include <stdlib.h>
#include <string.h>

#include "common/coalesce_math.h"
#include "mt_core.h"

typedef struct {
  int64_t key, k;
} coo_key;

static int key_cmp(const void *pa, const void *pb) {
  const coo_key *a = pa, *b = pb;
  if (a->key != b->key) return a->key < b->key ? -1 : 1;
  return (a->k > b->k) - (a->k < b->k); /* stable: keeps duplicates in input order */
}

mt_status mt_coal_par_of(const mt_tensor *coo, mt_coal_par *p, int64_t *span, mt_error *err) {
  memset(p, 0, sizeof *p);
  p->sparse_dim = coo->sparse_dim;
  p->nnz = coo->nnz;
  p->row = mt_coo_row_numel(coo);
  p->dtype = coo->dtype;
  *span = 1;
  for (int d = 0; d < coo->sparse_dim; d++) {
    if (coo->shape[d] > 0 && *span > INT64_MAX / coo->shape[d])
      return mt_err(err, MT_INVALID_ARGUMENT, "coalesce: sparse dims have more than 2^63 cells");
    *span *= coo->shape[d];
    p->shape[d] = coo->shape[d];
  }
  return MT_OK;
}

/* The steps of common/coalesce_math.h, as the CUDA backend runs them
 * (impl/cuda/coalesce.cu): keys, a stable sort, run heads, one run per
 * output. */
mt_status mt_coo_coalesce(const mt_tensor *coo, mt_tensor **out, mt_error *err) {
  mt_status st;
  coo_key *keys = NULL;
  int64_t *perm = NULL, *heads = NULL;
  mt_tensor *t = NULL;
  mt_coal_par p;
  *out = NULL;
  if (coo->kind != MT_KIND_COO)
    return mt_err(err, MT_INVALID_ARGUMENT, "coalesce: expected a COO tensor, got %s",
                  mt_kind_name(coo->kind));
  int sd = coo->sparse_dim;
  int64_t nnz = coo->nnz, span;
  if ((st = mt_coal_par_of(coo, &p, &span, err)) != MT_OK) return st;
  size_t n1 = (size_t)(nnz ? nnz : 1);
  keys = malloc(n1 * sizeof *keys);
  perm = malloc(n1 * sizeof *perm);
  heads = malloc((n1 + 1) * sizeof *heads);
  if (!keys || !perm || !heads) {
    st = mt_err(err, MT_OUT_OF_MEMORY, "coalesce: cannot allocate %lld keys", (long long)nnz);
    goto done;
  }
  for (int64_t k = 0; k < nnz; k++) keys[k] = (coo_key){mt_coal_key(&p, coo->indices, k), k};
  qsort(keys, (size_t)nnz, sizeof *keys, key_cmp);
  int64_t uniq = 0;
  for (int64_t i = 0; i < nnz; i++) {
    perm[i] = keys[i].k;
    if (i == 0 || keys[i].key != keys[i - 1].key) heads[uniq++] = i;
  }
  heads[uniq] = nnz;
  if ((st = mt_coo_new(coo->dtype, coo->ndim, coo->shape, sd, uniq, &t, err)) != MT_OK) goto done;
  for (int64_t u = 0; u < uniq; u++)
    mt_coal_run(&p, coo->indices, coo->values, perm, heads, uniq, u, t->indices, t->values);
  t->coalesced = 1;
  *out = t;
  t = NULL;
done:
  free(keys);
  free(perm);
  free(heads);
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

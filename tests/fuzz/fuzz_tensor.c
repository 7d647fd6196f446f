/* fuzz_tensor.c - libFuzzer target for the tensor validators
 * (mt_tensor_validate, impl/validate.c). The input describes a tensor the
 * way the golden reader builds one: kind, dtype, shape, COO sparse_dim and
 * nnz, the compressed kinds' (CSR, CSC, BSR, BSC) dense_dim, blocksize and
 * nnz per batch, allocated with mt_*_new; then indices, crow/col arrays,
 * values and the coalesced flag come from the input bytes. The contract
 * checked: whatever validate accepts is safe to consume, so an accepted
 * tensor goes through mt_tensor_clone, mt_to_dense and (COO) mt_coo_coalesce
 * under ASan/UBSan. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "mt_core.h"

typedef struct src {
  const uint8_t *p;
  size_t n;
} src;

static uint8_t u8(src *s) {
  if (!s->n) return 0;
  s->n--;
  return *s->p++;
}

/* An index value: mostly small (near the dims), sometimes extreme. */
static int64_t idx(src *s) {
  uint8_t sel = u8(s);
  switch (sel >> 6) {
    case 0: return (int64_t)(sel & 63) - 8;
    case 1: return (int64_t)(int8_t)u8(s);
    case 2: return (int64_t)(int16_t)(u8(s) | u8(s) << 8);
    default: {
      uint64_t v = 0;
      for (int k = 0; k < 8; k++) v = v << 8 | u8(s);
      return (int64_t)v;
    }
  }
}

static mt_tensor *build(src *s, int depth) {
  mt_tensor *t = NULL;
  mt_error err;
  uint8_t kind = u8(s) % (depth ? 3 : MT_KIND__COUNT); /* masked parts: dense/coo/csr */
  mt_dtype dt = (mt_dtype)(u8(s) % MT_DTYPE__COUNT);
  int ndim = u8(s) % (MT_MAX_DIMS + 1);
  int64_t shape[MT_MAX_DIMS];
  for (int d = 0; d < ndim; d++) shape[d] = u8(s) % 6; /* small: keeps numel small */
  switch (kind) {
    case MT_KIND_DENSE:
      if (mt_dense_new(dt, ndim, shape, &t, &err) != MT_OK) return NULL;
      break;
    case MT_KIND_COO: {
      int sd = ndim ? u8(s) % (ndim + 1) : 0;
      int64_t nnz = u8(s) % 9;
      if (mt_coo_new(dt, ndim, shape, sd, nnz, &t, &err) != MT_OK) return NULL;
      for (int64_t k = 0; k < (int64_t)sd * nnz; k++) t->indices[k] = idx(s);
      t->coalesced = u8(s) & 1;
      break;
    }
    case MT_KIND_CSR:
    case MT_KIND_CSC:
    case MT_KIND_BSR:
    case MT_KIND_BSC: {
      /* masked parts stay 2-d CSR (as the reader requires); top level: up
       * to 2 batch dims and 2 dense dims, block sizes 1..3 (which may not
       * divide: compressed_new refuses that) */
      int dense_dim = depth ? 0 : u8(s) % 3;
      int nd = depth ? 2 : 2 + u8(s) % 3 + dense_dim;
      int64_t cshape[MT_MAX_DIMS], bs[2] = {1 + u8(s) % 3, 1 + u8(s) % 3}, nnz = u8(s) % 9;
      for (int d = 0; d < nd; d++) cshape[d] = u8(s) % 6;
      if (mt_compressed_new((mt_kind)kind, dt, nd, cshape, dense_dim, bs, nnz, &t, &err) != MT_OK)
        return NULL;
      mt_cgeom g;
      if (!mt_cgeom_of(t, &g)) __builtin_trap(); /* compressed_new made a bad geometry */
      for (int64_t k = 0; k < g.batches * (g.ncomp + 1); k++) t->crow_indices[k] = idx(s);
      for (int64_t k = 0; k < g.batches * nnz; k++) t->col_indices[k] = idx(s);
      break;
    }
    case MT_KIND_MASKED: {
      mt_tensor *data = build(s, depth + 1), *mask = build(s, depth + 1);
      if (mt_masked_new(data, mask, &t, &err) != MT_OK) return NULL; /* frees both */
      return t;
    }
    default:
      if (mt_scalar_new(dt, 0.0, &t, &err) != MT_OK) return NULL;
      break;
  }
  /* values: raw bytes (NaN, bools that are not 0/1, ...) */
  mt_cgeom g;
  int64_t nv = t->kind == MT_KIND_DENSE  ? mt_numel(t)
               : t->kind == MT_KIND_COO  ? t->nnz * mt_coo_row_numel(t)
               : mt_cgeom_of(t, &g)      ? g.batches * t->nnz * g.entry
                                         : 1;
  uint8_t *v = t->values;
  for (int64_t b = 0; v && b < nv * (int64_t)mt_dtype_size(t->dtype); b++) v[b] = u8(s);
  return t;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  src s = {data, size};
  mt_error err;
  mt_tensor *t = build(&s, 0), *c = NULL, *d = NULL, *co = NULL;
  if (!t) return 0;
  if (mt_tensor_validate(t, "fuzz", &err) == MT_OK) {
    if (mt_tensor_clone(t, &c, &err) == MT_OK) mt_tensor_validate(c, "clone", &err);
    mt_to_dense(t, &d, &err);
    if (t->kind == MT_KIND_COO && mt_coo_coalesce(t, &co, &err) == MT_OK &&
        mt_tensor_validate(co, "coalesced", &err) != MT_OK)
      __builtin_trap(); /* coalesce made an invalid tensor out of a valid one */
  }
  mt_tensor_free(co);
  mt_tensor_free(d);
  mt_tensor_free(c);
  mt_tensor_free(t);
  return 0;
}

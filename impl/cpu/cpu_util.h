/* cpu_util.h - helpers shared by the CPU reference kernels (internal).
 *
 * Everything here is static inline so that each op-family file stays a
 * self-contained unit. Conventions:
 *   - every function that can fail returns an mt_status and fills err with a
 *     message naming the op, the field and the value;
 *   - outputs are allocated through the call's mt_host (mt__cpu_host), never
 *     with malloc; temporaries come from the core (mt_tensor_clone,
 *     mt_coo_coalesce) and are released with mt_tensor_free;
 *   - element loads (mt__cpu_ld) widen any dtype to double, stores
 *     (mt__cpu_st) round once to the tensor dtype; integer arithmetic uses
 *     the exact mt__cpu_ldi/mt__cpu_sti (int64 does not fit a double). */
#ifndef MT_CPU_UTIL_H
#define MT_CPU_UTIL_H

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/mt_hd.h"
#include "cpu.h"

/* ---- call plumbing ---------------------------------------------------- */

/* The allocator for outputs: the caller's host, or the core's when a test
 * calls a kernel directly without one. */
static inline const mt_host *mt__cpu_host(const mt_call *call) {
  return call->host ? call->host : mt_host_default();
}

/* Input i of the call; INVALID_ARGUMENT when the caller passed fewer. */
static inline mt_status mt__cpu_input(const mt_call *call, int i, const char *op,
                                      const mt_tensor **out, mt_error *err) {
  *out = NULL;
  if (call->n_in <= i || !call->in || !call->in[i])
    return mt_err(err, MT_INVALID_ARGUMENT, "%s: expected at least %d inputs, got %d", op, i + 1,
                  call->n_in);
  *out = call->in[i];
  return MT_OK;
}

/* "inputs/<i>" for messages. */
static inline const char *mt__cpu_in_name(int i, char *buf, size_t len) {
  snprintf(buf, len, "inputs/%d", i);
  return buf;
}

/* Start of every kernel: no outputs yet (the caller's out[] may hold
 * anything until the kernel sets it). */
static inline void mt__cpu_begin(mt_call *call) {
  call->n_out = 0;
  for (int k = 0; k < MT_MAX_OUTPUTS; k++) call->out[k] = NULL;
}

/* Frees every output the kernel had set (on a failure path) and resets
 * n_out, so that a failed call hands nothing back. */
static inline void mt__cpu_drop_outputs(mt_call *call) {
  const mt_host *h = mt__cpu_host(call);
  for (int k = 0; k < MT_MAX_OUTPUTS; k++) {
    if (call->out[k]) h->free(call->out[k]);
    call->out[k] = NULL;
  }
  call->n_out = 0;
}

/* ---- dtypes ----------------------------------------------------------- */

/* torch's ScalarType name of a dtype, as its messages spell it ("not
 * implemented for 'Long'", "result type Float can't be cast ..."). */
static inline const char *mt__cpu_torch_type(mt_dtype d) {
  static const char *const names[MT_DTYPE__COUNT] = {
      [MT_float32] = "Float", [MT_float64] = "Double", [MT_float16] = "Half",
      [MT_int64] = "Long",    [MT_int32] = "Int",      [MT_int8] = "Char",
      [MT_uint8] = "Byte",    [MT_bool] = "Bool",      [MT_bfloat16] = "BFloat16"};
  return (unsigned)d < MT_DTYPE__COUNT && names[d] ? names[d] : "?";
}

static inline int mt__cpu_is_f(mt_dtype d) { return d == MT_float32 || d == MT_float64; }
/* float16, bfloat16, float32, float64 */
static inline int mt__cpu_is_float(mt_dtype d) { return mt_dtype_is_float(d); }
/* int8, uint8, int32, int64 (bool is neither an integer nor a float here) */
static inline int mt__cpu_is_int(mt_dtype d) {
  return d == MT_int64 || d == MT_int32 || d == MT_int8 || d == MT_uint8;
}

/* NOT_SUPPORTED unless t (or a masked tensor's data) is a floating dtype
 * (float16, bfloat16, float32, float64: the backward kernels compute in
 * double and round once). */
static inline mt_status mt__cpu_require_float(const mt_tensor *t, const char *what, const char *op,
                                              mt_error *err) {
  mt_dtype d = t->kind == MT_KIND_MASKED ? t->data->dtype : t->dtype;
  if (mt__cpu_is_float(d)) return MT_OK;
  return mt_err(err, MT_NOT_SUPPORTED,
                "%s: %s has dtype %s; the CPU reference backend differentiates floating dtypes "
                "only", op, what, mt_dtype_name(d));
}

/* Element i of a contiguous buffer of any dtype, as double (exact for every
 * dtype but int64 beyond 2^53: use mt__cpu_ldi for integer arithmetic). */
static inline double mt__cpu_ld(const void *buf, mt_dtype d, int64_t i) {
  if (d == MT_float32) return (double)((const float *)buf)[i];
  if (d == MT_float64) return ((const double *)buf)[i];
  return mt_get_f64(buf, d, i);
}
/* Stores v rounded once to d (float16 and bfloat16 through float, as torch
 * computes half and bfloat16 in float; integers truncate toward zero and wrap to their width,
 * NaN gives 0; bool is v != 0). */
static inline void mt__cpu_st(void *buf, mt_dtype d, int64_t i, double v) {
  if (d == MT_float32)
    ((float *)buf)[i] = (float)v;
  else if (d == MT_float64)
    ((double *)buf)[i] = v;
  else
    mt_set_f64(buf, d, i, v);
}
/* Exact integer access for the integer dtypes and bool (0/1). */
static inline int64_t mt__cpu_ldi(const void *buf, mt_dtype d, int64_t i) {
  return mt_hd_ldi(buf, d, i);
}
/* Stores v wrapped to d's width (two's complement, as torch's integer ops). */
static inline void mt__cpu_sti(void *buf, mt_dtype d, int64_t i, int64_t v) {
  mt_hd_sti(buf, d, i, v);
}
/* A bool (uint8 0/1) element; any nonzero byte reads as true. */
static inline bool mt__cpu_ldb(const void *buf, int64_t i) {
  return ((const uint8_t *)buf)[i] != 0;
}

/* A Python number in a tensor op (add/sub/mul): cast to the op's compute
 * type, float for float32 and the half types, double for float64. */
static inline double mt__cpu_op_scalar(mt_dtype dt, double v) {
  return dt == MT_float64 ? v : (double)(float)v;
}

/* Rounds a double to the dtype (the "cast to the tensor dtype first" of
 * scalar operands and hyper-parameters). */
static inline double mt__cpu_round(mt_dtype d, double v) {
  if (d == MT_float64) return v;
  if (d == MT_float32) return (double)(float)v;
  unsigned char tmp[8];
  mt__cpu_st(tmp, d, 0, v);
  return mt__cpu_ld(tmp, d, 0);
}

/* A Python number operand (kind SCALAR, or a 0-d dense tensor) as double. */
static inline mt_status mt__cpu_scalar_value(const mt_tensor *t, const char *what, const char *op,
                                             double *out, mt_error *err) {
  *out = 0.0;
  if (!(t->kind == MT_KIND_SCALAR || (t->kind == MT_KIND_DENSE && t->ndim == 0)) || !t->values)
    return mt_err(err, MT_INVALID_ARGUMENT, "%s: %s must be a number (kind scalar), got kind %s",
                  op, what, mt_kind_name(t->kind));
  *out = mt_get_f64(t->values, t->dtype, 0);
  return MT_OK;
}

/* Python's repr() of a float ("-0.1", "1e-10", "100.0", "nan"), for the
 * messages that quote torch's ("Invalid learning rate: -0.1"). */
static inline const char *mt__cpu_pyfloat(double v, char *buf, size_t len) {
  if (isnan(v)) {
    snprintf(buf, len, "nan");
    return buf;
  }
  if (isinf(v)) {
    snprintf(buf, len, v < 0 ? "-inf" : "inf");
    return buf;
  }
  char e[40];
  int p = 1;
  for (; p < 17; p++) { /* shortest digit count that round-trips */
    snprintf(e, sizeof e, "%.*e", p - 1, v);
    if (strtod(e, NULL) == v) break;
  }
  snprintf(e, sizeof e, "%.*e", p - 1, v);
  int exp10 = atoi(strchr(e, 'e') + 1);
  if (exp10 >= -4 && exp10 < 16) {
    int dec = p - 1 - exp10;
    snprintf(buf, len, "%.*f", dec > 0 ? dec : 0, v);
    if (!strchr(buf, '.') && strlen(buf) + 2 < len) strcat(buf, ".0");
  } else {
    snprintf(buf, len, "%s", e);
  }
  return buf;
}

/* The first input of a unary op or a reduction: a valid masked tensor with
 * float32/float64 data (NOT_SUPPORTED for other kinds and dtypes). */
static inline mt_status mt__cpu_masked_input0(const mt_call *call, const char *op,
                                              const mt_tensor **m, mt_error *err) {
  mt_status st;
  if ((st = mt__cpu_input(call, 0, op, m, err)) != MT_OK) return st;
  if ((*m)->kind != MT_KIND_MASKED)
    return mt_err(err, MT_NOT_SUPPORTED,
                  "%s: inputs/0 has kind %s; the CPU backend implements %s on masked tensors", op,
                  mt_kind_name((*m)->kind), op);
  if ((st = mt_tensor_validate(*m, "inputs/0", err)) != MT_OK) return st;
  return mt__cpu_require_float(*m, "inputs/0", op, err);
}

/* ---- dense views -------------------------------------------------------- */

/* A contiguous view of a dense tensor: t itself when already contiguous,
 * else a core clone put in *tmp (free it with mt_tensor_free). */
static inline mt_status mt__cpu_contig(const mt_tensor *t, const mt_tensor **view, mt_tensor **tmp,
                                       mt_error *err) {
  *tmp = NULL;
  if (t->kind != MT_KIND_DENSE || mt_is_contiguous(t)) {
    *view = t;
    return MT_OK;
  }
  mt_status st = mt_tensor_clone(t, tmp, err);
  *view = *tmp;
  return st;
}

/* A dense-storage masked tensor with contiguous data and mask. */
typedef struct {
  const mt_tensor *data, *mask;
  mt_tensor *tmp_data, *tmp_mask;
} mt__cpu_mview;

static inline void mt__cpu_mview_close(mt__cpu_mview *v) {
  mt_tensor_free(v->tmp_data);
  mt_tensor_free(v->tmp_mask);
  memset(v, 0, sizeof *v);
}

static inline mt_status mt__cpu_mview_open(const mt_tensor *m, mt__cpu_mview *v, mt_error *err) {
  mt_status st;
  memset(v, 0, sizeof *v);
  if ((st = mt__cpu_contig(m->data, &v->data, &v->tmp_data, err)) != MT_OK) goto fail;
  if ((st = mt__cpu_contig(m->mask, &v->mask, &v->tmp_mask, err)) != MT_OK) goto fail;
  return MT_OK;
fail:
  mt__cpu_mview_close(v);
  return st;
}

/* ---- outputs ------------------------------------------------------------ */

/* A dense-storage masked output of the given dtype/shape; *data and *mask
 * point at its (zero-filled, contiguous) members. */
static inline mt_status mt__cpu_new_masked_dense(const mt_host *h, mt_dtype dtype, int ndim,
                                                 const int64_t *shape, mt_tensor **out,
                                                 mt_tensor **data, mt_tensor **mask,
                                                 mt_error *err) {
  mt_tensor *d = NULL, *m = NULL;
  mt_status st;
  *out = NULL;
  if ((st = h->dense_new(dtype, ndim, shape, &d, err)) != MT_OK) return st;
  if ((st = h->dense_new(MT_bool, ndim, shape, &m, err)) != MT_OK) {
    h->free(d);
    return st;
  }
  if ((st = h->masked_new(d, m, out, err)) != MT_OK) return st; /* took d and m */
  *data = (*out)->data;
  *mask = (*out)->mask;
  return MT_OK;
}

/* Deep copy of a DENSE (any strides) or COO tensor, allocated by h; the
 * copy is contiguous and keeps the COO `coalesced` flag. */
static inline mt_status mt__cpu_copy(const mt_host *h, const mt_tensor *t, mt_tensor **out,
                                     mt_error *err) {
  *out = NULL;
  if (t->kind != MT_KIND_DENSE && t->kind != MT_KIND_COO)
    return mt_err(err, MT_NOT_SUPPORTED, "copy of a %s tensor is not supported by the CPU backend",
                  mt_kind_name(t->kind));
  return mt_tensor_clone_host(h, t, out, err);
}

/* A coalesced copy of a COO tensor, allocated by h (already coalesced
 * inputs are copied as they are). */
static inline mt_status mt__cpu_coalesced_copy(const mt_host *h, const mt_tensor *coo,
                                               mt_tensor **out, mt_error *err) {
  if (coo->coalesced) return mt__cpu_copy(h, coo, out, err);
  mt_tensor *tmp = NULL;
  mt_status st = mt_coo_coalesce(coo, &tmp, err);
  if (st == MT_OK) st = mt__cpu_copy(h, tmp, out, err);
  mt_tensor_free(tmp);
  return st;
}

/* A coalesced view of a COO tensor: coo itself, or a core coalesced copy in
 * *tmp (free it with mt_tensor_free). */
static inline mt_status mt__cpu_coalesced(const mt_tensor *coo, const mt_tensor **view,
                                          mt_tensor **tmp, mt_error *err) {
  *tmp = NULL;
  if (coo->coalesced) {
    *view = coo;
    return MT_OK;
  }
  mt_status st = mt_coo_coalesce(coo, tmp, err);
  *view = *tmp;
  return st;
}

/* 1 when two COO tensors have the same sparse_dim, nnz and indices. */
static inline int mt__cpu_coo_same_indices(const mt_tensor *a, const mt_tensor *b) {
  if (a->sparse_dim != b->sparse_dim || a->nnz != b->nnz) return 0;
  size_t n = (size_t)a->sparse_dim * (size_t)a->nnz;
  return n == 0 || memcmp(a->indices, b->indices, n * sizeof(int64_t)) == 0;
}

/* 1 when two CSR tensors have one structure: rows, crow and col indices. */
static inline int mt__cpu_csr_same_structure(const mt_tensor *a, const mt_tensor *b) {
  return a->shape[0] == b->shape[0] && a->nnz == b->nnz &&
         memcmp(a->crow_indices, b->crow_indices, (size_t)(a->shape[0] + 1) * sizeof(int64_t)) ==
             0 &&
         (a->nnz == 0 || memcmp(a->col_indices, b->col_indices, (size_t)a->nnz * sizeof(int64_t)) == 0);
}

/* A new compressed tensor (CSR, CSC, BSR or BSC) of dtype with src's
 * structure: kind, shape, batches, blocksize, dense dims, compressed and
 * plain indices copied; values zero-filled; allocated by h. */
static inline mt_status mt__cpu_compressed_like(const mt_host *h, const mt_tensor *src,
                                                mt_dtype dtype, mt_tensor **out, mt_error *err) {
  mt_cgeom g;
  if (!mt_cgeom_of(src, &g))
    return mt_err(err, MT_INVALID_ARGUMENT, "inconsistent %s geometry", mt_kind_name(src->kind));
  mt_status st = h->compressed_new(src->kind, dtype, src->ndim, src->shape, src->dense_dim,
                                   src->blocksize, src->nnz, out, err);
  if (st != MT_OK) return st;
  memcpy((*out)->crow_indices, src->crow_indices,
         (size_t)(g.batches * (g.ncomp + 1)) * sizeof(int64_t));
  if (g.batches * src->nnz > 0)
    memcpy((*out)->col_indices, src->col_indices, (size_t)(g.batches * src->nnz) * sizeof(int64_t));
  return MT_OK;
}

/* A COO copy of a CSR tensor (row-major entries, coalesced), allocated by
 * h: torch's select of CSR storage returns COO (SP-4). */
static inline mt_status mt__cpu_csr_to_coo(const mt_host *h, const mt_tensor *csr,
                                           mt_tensor **out, mt_error *err) {
  mt_status st = h->coo_new(csr->dtype, 2, csr->shape, 2, csr->nnz, out, err);
  if (st != MT_OK) return st;
  for (int64_t r = 0; r < csr->shape[0]; r++)
    for (int64_t k = csr->crow_indices[r]; k < csr->crow_indices[r + 1]; k++) {
      (*out)->indices[k] = r;
      (*out)->indices[csr->nnz + k] = csr->col_indices[k];
    }
  if (csr->nnz) memcpy((*out)->values, csr->values, (size_t)csr->nnz * mt_dtype_size(csr->dtype));
  (*out)->coalesced = 1;
  return MT_OK;
}

/* The CSR form of a coalesced 2-d COO tensor without dense dims, allocated
 * by h (torch's to_sparse_csr of COO storage, SP-4): its crow and col
 * indices built, its values (in the COO's order) left to the caller. */
static inline mt_status mt__cpu_coo_csr_indices(const mt_host *h, const mt_tensor *coo,
                                                mt_tensor **out, mt_error *err) {
  mt_status st = h->csr_new(coo->dtype, coo->shape[0], coo->shape[1], coo->nnz, out, err);
  if (st != MT_OK) return st;
  memset((*out)->crow_indices, 0, (size_t)(coo->shape[0] + 1) * sizeof(int64_t));
  for (int64_t k = 0; k < coo->nnz; k++) {
    (*out)->crow_indices[coo->indices[k] + 1]++;
    (*out)->col_indices[k] = coo->indices[coo->nnz + k];
  }
  for (int64_t r = 0; r < coo->shape[0]; r++)
    (*out)->crow_indices[r + 1] += (*out)->crow_indices[r];
  return MT_OK;
}

/* SP-1: the column count torch.sparse_csr_tensor(crow, col, values) infers
 * without a size (max col index + 1; 0 without stored entries). torch's
 * MaskedTensor unary ops rebuild CSR data that way, so data whose last
 * column stores nothing gets a narrower size than its mask: refused. */
static inline mt_status mt__cpu_csr_inferred_cols(const mt_tensor *csr, const char *op,
                                                  mt_error *err) {
  int64_t cols = 0;
  for (int64_t k = 0; k < csr->nnz; k++)
    if (csr->col_indices[k] + 1 > cols) cols = csr->col_indices[k] + 1;
  if (cols == csr->shape[1]) return MT_OK;
  return mt_err(err, MT_INVALID_ARGUMENT,
                "%s: CSR storage whose last column stores no entry: torch rebuilds the data with "
                "%lld columns from its col_indices, not %lld (ValueError: data.size() must equal "
                "mask.size())",
                op, (long long)cols, (long long)csr->shape[1]);
}

#endif /* MT_CPU_UTIL_H */

/* sps_util.h - helpers of the plain sparse kernels (SPS-*):
 * structure_sparse.c, reduce_sparse.c, sparse_misc.c (internal).
 *
 * A plain sparse tensor is a COO or compressed (CSR, CSC, BSR, BSC) tensor
 * that is not the storage of a masked tensor. torch's names of the layouts
 * and backends appear in the refusals, as torch spells them. */
#ifndef MT_CPU_SPS_UTIL_H
#define MT_CPU_SPS_UTIL_H

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/exec.h"
#include "cpu_util.h"
#include "mt/compressed.h"
#include "mt/kwargs.h"
#include "sps.h"

static inline int sps_compressed(const mt_tensor *t) { return mt_kind_is_compressed(t->kind); }

/* torch's layout name: "Sparse", "SparseCsr", ... */
static inline const char *sps_layout(const mt_tensor *t) {
  switch (t->kind) {
    case MT_KIND_COO: return "Sparse";
    case MT_KIND_CSR: return "SparseCsr";
    case MT_KIND_CSC: return "SparseCsc";
    case MT_KIND_BSR: return "SparseBsr";
    case MT_KIND_BSC: return "SparseBsc";
    default: return "Strided";
  }
}

/* "CSR" / "CSC" / "BSR" / "BSC", as torch's "Sparse CSR tensors do not
 * have strides" */
static inline const char *sps_upper(const mt_tensor *t) {
  switch (t->kind) {
    case MT_KIND_CSR: return "CSR";
    case MT_KIND_CSC: return "CSC";
    case MT_KIND_BSR: return "BSR";
    case MT_KIND_BSC: return "BSC";
    default: return "COO";
  }
}

/* torch's dispatch key of a plain sparse tensor on the CPU */
static inline const char *sps_backend(const mt_tensor *t) {
  return t->kind == MT_KIND_COO ? "SparseCPU" : "SparseCsrCPU";
}

/* SPS-0: the op has no kernel for this layout (NotImplementedError). */
static inline mt_status sps_no_kernel(mt_error *err, const char *op, const char *aten,
                                      const mt_tensor *t) {
  return mt_err(err, MT_LAYOUT_MISMATCH,
                "%s: Could not run 'aten::%s' with arguments from the '%s' backend", op, aten,
                sps_backend(t));
}

/* torch's wrap of a dim into [0, n) ("Dimension out of range (expected to
 * be in range of [-n, n-1], but got d)"); n = 0 counts as 1, as torch. */
static inline mt_status sps_wrap_dim(const char *op, int64_t d, int n, int *out, mt_error *err) {
  int m = n > 0 ? n : 1;
  if (d < -m || d >= m)
    return mt_err(err, MT_INDEX_OUT_OF_RANGE,
                  "%s: Dimension out of range (expected to be in range of [%d, %d], but got %lld)",
                  op, -m, m - 1, (long long)d);
  *out = (int)(d < 0 ? d + m : d);
  return MT_OK;
}

/* Element di of dst (dtype ddt) = element si of src (dtype sdt), converted
 * as torch's copy_/to(): to bool by != 0, float to integer toward zero,
 * integers exactly, floats rounded once. */
static inline void sps_convert(void *dst, mt_dtype ddt, int64_t di, const void *src, mt_dtype sdt,
                               int64_t si) {
  if (ddt == MT_bool) {
    ((uint8_t *)dst)[di] = mt__cpu_is_float(sdt) ? mt__cpu_ld(src, sdt, si) != 0.0
                                                 : mt__cpu_ldi(src, sdt, si) != 0;
  } else if (mt__cpu_is_int(ddt)) {
    /* toward zero; NaN 0 and saturating, as the CUDA kernels (no UB) */
    int64_t v = mt__cpu_is_float(sdt) ? mt_hd_f64_to_i64(mt__cpu_ld(src, sdt, si))
                                      : mt__cpu_ldi(src, sdt, si);
    mt__cpu_sti(dst, ddt, di, v);
  } else if (sdt == ddt) {
    size_t es = mt_dtype_size(ddt);
    memcpy((char *)dst + (size_t)di * es, (const char *)src + (size_t)si * es, es);
  } else {
    double v = mt__cpu_is_float(sdt) ? mt__cpu_ld(src, sdt, si)
                                     : (double)mt__cpu_ldi(src, sdt, si);
    mt__cpu_st(dst, ddt, di, v);
  }
}

/* A COO result: h->coo_new, then *out. */
static inline mt_status sps_coo_new(const mt_host *h, mt_dtype dt, int ndim, const int64_t *shape,
                                    int sparse_dim, int64_t nnz, mt_tensor **out, mt_error *err) {
  return h->coo_new(dt, ndim, shape, sparse_dim, nnz, out, err);
}

/* SPS-2: the coalesced flag torch gives a COO result it builds from
 * scratch (unsqueeze, cat, index_select, sum's keepdim): set when fewer
 * than 2 entries are stored, whatever the input's flag. */
static inline int sps_built_flag(int64_t nnz) { return nnz < 2; }

/* Copies value row k of src (its row_numel elements, bytes) into row j of dst. */
static inline void sps_copy_row(mt_tensor *dst, int64_t j, const mt_tensor *src, int64_t k) {
  size_t es = mt_dtype_size(src->dtype);
  size_t row = (size_t)mt_coo_row_numel(src) * es;
  if (row) memcpy((char *)dst->values + (size_t)j * row, (const char *)src->values + (size_t)k * row, row);
}

/* The first kernel steps of every plain sparse op: kwargs, input 0 valid. */
static inline mt_status sps_begin(mt_call *call, mt_op op, const mt_tensor **x, mt_error *err) {
  mt_status st;
  mt__cpu_begin(call);
  if ((st = mt__kw_check(op, call->kw, err)) != MT_OK) return st;
  if ((st = mt__cpu_input(call, 0, mt_op_name(op), x, err)) != MT_OK) return st;
  return mt_tensor_validate(*x, "inputs/0", err);
}

/* The result of a kernel: out[0] = *t, *t = NULL. */
static inline mt_status sps_out(mt_call *call, mt_tensor **t) {
  call->out[0] = *t;
  call->n_out = 1;
  *t = NULL;
  return MT_OK;
}

/* The dims of a DIMS kwarg (absent: *n = -1), each wrapped into [0, ndim);
 * a repeated one is torch's "dim d appears multiple times in the list of
 * dims" (INVALID_ARGUMENT). red[d] = 1 for each reduced dim. */
static inline mt_status sps_dims(const char *op, const mt_kwargs *kw, int ndim, int red[MT_MAX_DIMS],
                                 int *n, mt_error *err) {
  const mt_kwarg *a = mt_kw_find(kw, "dim");
  memset(red, 0, sizeof(int) * MT_MAX_DIMS);
  *n = -1;
  if (!a) return MT_OK;
  int cnt = a->type == MT_KW_INTS ? a->n : 1;
  *n = 0;
  for (int k = 0; k < cnt; k++) {
    int d = 0;
    mt_status st = sps_wrap_dim(op, a->type == MT_KW_INTS ? a->ints[k] : a->i, ndim, &d, err);
    if (st != MT_OK) return st;
    if (red[d])
      return mt_err(err, MT_INVALID_ARGUMENT, "%s: dim %d appears multiple times in the list of dims",
                    op, d);
    red[d] = 1;
    (*n)++;
  }
  return MT_OK;
}

/* dst[i] = element off[i] (es bytes) of srcs[src[i]] for i < n: a pure
 * copy on ex, the device's gather on the CUDA path (each source uploaded
 * to its extent in the plan); the CPU reference, which has no gather
 * hook, copies on the host. */
static inline mt_status sps_gather(const mt_exec *ex, const int *src, const int64_t *off, int64_t n,
                                   int n_src, const void *const *srcs, size_t es, void *dst,
                                   mt_error *err) {
  int64_t len[16] = {0};
  if (n <= 0) return MT_OK;
  if (ex == &mt_cpu_exec) {
    for (int64_t i = 0; i < n; i++)
      memcpy((char *)dst + (size_t)i * es, (const char *)srcs[src[i]] + (size_t)off[i] * es, es);
    return MT_OK;
  }
  if (!ex->gather || n_src > 16)
    return mt_err(err, MT_NOT_SUPPORTED, "the %s backend has no gather kernel for this copy",
                  ex->name);
  for (int64_t i = 0; i < n; i++)
    if (off[i] + 1 > len[src[i]]) len[src[i]] = off[i] + 1;
  return ex->gather(src, off, n, n_src, srcs, len, es, dst, err);
}

/* dst[i] = src[i] for i < n values of es bytes: a copy on ex (sps_gather) */
static inline mt_status sps_copy_vals(const mt_exec *ex, void *dst, const void *src, int64_t n,
                                      size_t es, mt_error *err) {
  int *s0 = NULL;
  int64_t *off = NULL;
  mt_status st;
  if (n <= 0) return MT_OK;
  s0 = (int *)calloc((size_t)n, sizeof *s0);
  off = (int64_t *)malloc((size_t)n * sizeof *off);
  if (!s0 || !off) {
    st = mt_err(err, MT_OUT_OF_MEMORY, "out of memory for a copy of %lld values", (long long)n);
  } else {
    const void *srcs[1] = {src};
    for (int64_t i = 0; i < n; i++) off[i] = i;
    st = sps_gather(ex, s0, off, n, 1, srcs, es, dst, err);
  }
  free(s0);
  free(off);
  return st;
}

/* The number of values a COO or compressed tensor stores. */
static inline int64_t sps_n_values(const mt_tensor *t) {
  mt_cgeom g;
  if (t->kind == MT_KIND_COO) return t->nnz * mt_coo_row_numel(t);
  return mt_cgeom_of(t, &g) ? g.batches * t->nnz * g.entry : 0;
}

/* A copy of the COO or compressed tensor x allocated by h (indices and
 * flag on the host, values copied on ex). */
static inline mt_status sps_clone(const mt_host *h, const mt_exec *ex, const mt_tensor *x,
                                  mt_tensor **out, mt_error *err) {
  mt_status st;
  *out = NULL;
  if (x->kind == MT_KIND_COO) {
    if ((st = h->coo_new(x->dtype, x->ndim, x->shape, x->sparse_dim, x->nnz, out, err)) != MT_OK)
      return st;
    if (x->nnz && x->sparse_dim)
      memcpy((*out)->indices, x->indices, (size_t)x->sparse_dim * (size_t)x->nnz * sizeof(int64_t));
    (*out)->coalesced = x->coalesced;
  } else if ((st = mt__cpu_compressed_like(h, x, x->dtype, out, err)) != MT_OK) {
    return st;
  }
  st = sps_copy_vals(ex, (*out)->values, x->values, sps_n_values(x), mt_dtype_size(x->dtype), err);
  if (st != MT_OK) {
    h->free(*out);
    *out = NULL;
  }
  return st;
}

#endif /* MT_CPU_SPS_UTIL_H */

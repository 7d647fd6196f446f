/* cusparse_emu.h - the part of cuSPARSE's generic API that mtcs calls, on
 * the host, for the emulation (MT_CUDA_EMU; cub_emu.h is its CUB). The
 * conformance backend's products (impl/cuda/cusparse_lib.cu: CSR SpMV,
 * SpMM, SpGEMM) and the benchmark's gather/scatter baseline
 * (perf/kernels/adagrad_gs.cu, whose cusparseGather/Scatter
 * perf/kernels/cuda_emu_runtime.h adds) call these functions exactly as
 * the GPU build calls the library's, so their call sequences run in CI:
 * every descriptor, dimension, leading dimension, type, workspace and
 * phase they hand over is checked against what cuSPARSE's documentation
 * asks, as a status the library would return (or stricter), with the
 * reason kept in the handle (mt_csp_emu_why) for the case's message:
 *
 *  - a handle made by cusparseCreate and not destroyed; alpha and beta
 *    given (host pointers: CUSPARSE_POINTER_MODE_HOST, the default);
 *  - descriptors: sizes >= 0, pointers aligned to their element type and
 *    given wherever an element is stored; a dense matrix's leading
 *    dimension at least its rows (column-major) or columns (row-major);
 *  - a product's operands of agreeing shapes, one value type, which is the
 *    compute type (the float32 and float64 products mtcs makes), and the
 *    operations and algorithms implemented here (non-transposed operands;
 *    SpMV CSR_ALG1/ALG2, SpMM CSR_ALG1/ALG2, SpGEMM ALG1 with beta 0, as
 *    the library documents it for ALG1): another is NOT_SUPPORTED, named;
 *  - a CSR operand as cuSPARSE assumes it: row offsets from base to
 *    nnz + base, non-decreasing, each row's columns in range and strictly
 *    increasing (sorted, no duplicate: stricter than the library, which
 *    does not check it and computes garbage);
 *  - every array the library would read or write on the device lies, with
 *    all its bytes, in device memory (the includer's hook, mt_csp_emu_mem);
 *  - a workspace: the bytes its bufferSize call returned, device memory,
 *    given (not NULL) whenever that size is not 0; the library writes all
 *    of it (a pattern: an allocation shorter than it asked for runs into
 *    the emulation's guard) and, for SpGEMM, finds it intact when a later
 *    phase needs it (buffer 1 at compute, buffer 2 at copy, as the
 *    documentation keeps them alive);
 *  - SpGEMM's phases in their order: workEstimation (NULL buffer: only
 *    the size), workEstimation with the buffer, compute (NULL: its size),
 *    compute with the buffer (C's nnz now known: cusparseSpMatGetSize),
 *    cusparseCsrSetPointers on C, copy; each phase with the operands,
 *    compute type and algorithm of the first.
 *
 * What is the emulation's own: the workspace sizes (deterministic, not the
 * library's: what is checked is that the caller allocates and hands over
 * what it was told) and the summation order (each C element its row's
 * products in stored order, in the compute type, then times alpha: what
 * the documentation promises up to the order, which the goldens'
 * tolerances leave free; spec/cuda-backend.md "cuSPARSE"). The enum values
 * are cusparse.h's, though nothing depends on them: the emulation is never
 * linked with the library. */
#ifndef MT_CUSPARSE_EMU_H
#define MT_CUSPARSE_EMU_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef enum {
  CUSPARSE_STATUS_SUCCESS = 0,
  CUSPARSE_STATUS_NOT_INITIALIZED = 1,
  CUSPARSE_STATUS_ALLOC_FAILED = 2,
  CUSPARSE_STATUS_INVALID_VALUE = 3,
  CUSPARSE_STATUS_EXECUTION_FAILED = 6,
  CUSPARSE_STATUS_INTERNAL_ERROR = 7,
  CUSPARSE_STATUS_NOT_SUPPORTED = 10,
  CUSPARSE_STATUS_INSUFFICIENT_RESOURCES = 11,
} cusparseStatus_t;
typedef enum { CUDA_R_32F = 0, CUDA_R_64F = 1 } cudaDataType;
typedef enum { CUSPARSE_INDEX_32I = 2, CUSPARSE_INDEX_64I = 3 } cusparseIndexType_t;
typedef enum { CUSPARSE_INDEX_BASE_ZERO = 0, CUSPARSE_INDEX_BASE_ONE = 1 } cusparseIndexBase_t;
typedef enum {
  CUSPARSE_OPERATION_NON_TRANSPOSE = 0,
  CUSPARSE_OPERATION_TRANSPOSE = 1,
  CUSPARSE_OPERATION_CONJUGATE_TRANSPOSE = 2,
} cusparseOperation_t;
typedef enum { CUSPARSE_ORDER_COL = 1, CUSPARSE_ORDER_ROW = 2 } cusparseOrder_t;
typedef enum {
  CUSPARSE_SPMV_ALG_DEFAULT = 0,
  CUSPARSE_SPMV_CSR_ALG1 = 2,
  CUSPARSE_SPMV_CSR_ALG2 = 3,
} cusparseSpMVAlg_t;
typedef enum {
  CUSPARSE_SPMM_ALG_DEFAULT = 0,
  CUSPARSE_SPMM_CSR_ALG1 = 4,
  CUSPARSE_SPMM_CSR_ALG2 = 6,
  CUSPARSE_SPMM_CSR_ALG3 = 12,
} cusparseSpMMAlg_t;
typedef enum {
  CUSPARSE_SPGEMM_DEFAULT = 0,
  CUSPARSE_SPGEMM_ALG1 = 1,
  CUSPARSE_SPGEMM_ALG2 = 2,
  CUSPARSE_SPGEMM_ALG3 = 3,
} cusparseSpGEMMAlg_t;

/* Device memory as the includer sees it: dev says whether [p, p + bytes)
 * is device memory (NULL: every pointer is), reach opens (1) and closes
 * (0) it to the library's host loops (NULL: always open). */
typedef struct mt_csp_emu_mem {
  int (*dev)(const void *ctx, const void *p, size_t bytes);
  void (*reach)(const void *ctx, int on);
  const void *ctx;
} mt_csp_emu_mem;

typedef struct mt_csp_emu_handle {
  int live;
  mt_csp_emu_mem mem;
  char why[256]; /* the last failed check */
} *cusparseHandle_t;

typedef struct mt_csp_emu_spmat { /* CSR */
  int64_t rows, cols, nnz;
  void *rp, *ci, *val;
  cusparseIndexType_t rt, ct;
  cusparseIndexBase_t base;
  cudaDataType vt;
} mt_csp_emu_spmat;
typedef mt_csp_emu_spmat *cusparseSpMatDescr_t;
typedef const mt_csp_emu_spmat *cusparseConstSpMatDescr_t;

typedef struct mt_csp_emu_dnmat {
  int64_t rows, cols, ld;
  void *val;
  cudaDataType vt;
  cusparseOrder_t order;
} mt_csp_emu_dnmat;
typedef mt_csp_emu_dnmat *cusparseDnMatDescr_t;
typedef const mt_csp_emu_dnmat *cusparseConstDnMatDescr_t;

typedef struct mt_csp_emu_dnvec {
  int64_t size;
  void *vals;
  cudaDataType vt;
} mt_csp_emu_dnvec;
typedef mt_csp_emu_dnvec *cusparseDnVecDescr_t;
typedef const mt_csp_emu_dnvec *cusparseConstDnVecDescr_t;

typedef struct mt_csp_emu_spgemm {
  int phase; /* 0 made, 1 work estimated, 2 computed, 3 copied */
  const mt_csp_emu_spmat *a, *b, *c;
  cudaDataType ty;
  cusparseSpGEMMAlg_t alg;
  void *buf1, *buf2; /* the caller's workspaces, and their sizes */
  size_t bytes1, bytes2;
  int64_t nnz; /* C's, from compute on; C itself in the library's own memory */
  int32_t *rp, *ci;
  void *val;
} *cusparseSpGEMMDescr_t;

/* The byte the library leaves in its workspaces (not the emulation's guard canary, 0xa5). */
#define MT_CSP_EMU_WS 0x5c

/* ---- handle, status, the reason of the last failure ---------------------- */
static inline const char *cusparseGetErrorName(cusparseStatus_t s) {
  switch (s) {
  case CUSPARSE_STATUS_SUCCESS: return "CUSPARSE_STATUS_SUCCESS";
  case CUSPARSE_STATUS_NOT_INITIALIZED: return "CUSPARSE_STATUS_NOT_INITIALIZED";
  case CUSPARSE_STATUS_ALLOC_FAILED: return "CUSPARSE_STATUS_ALLOC_FAILED";
  case CUSPARSE_STATUS_INVALID_VALUE: return "CUSPARSE_STATUS_INVALID_VALUE";
  case CUSPARSE_STATUS_EXECUTION_FAILED: return "CUSPARSE_STATUS_EXECUTION_FAILED";
  case CUSPARSE_STATUS_INTERNAL_ERROR: return "CUSPARSE_STATUS_INTERNAL_ERROR";
  case CUSPARSE_STATUS_NOT_SUPPORTED: return "CUSPARSE_STATUS_NOT_SUPPORTED";
  case CUSPARSE_STATUS_INSUFFICIENT_RESOURCES: return "CUSPARSE_STATUS_INSUFFICIENT_RESOURCES";
  }
  return "CUSPARSE_STATUS_UNKNOWN";
}
static inline const char *cusparseGetErrorString(cusparseStatus_t s) {
  switch (s) {
  case CUSPARSE_STATUS_SUCCESS: return "success";
  case CUSPARSE_STATUS_NOT_INITIALIZED: return "initialization error";
  case CUSPARSE_STATUS_ALLOC_FAILED: return "out of memory";
  case CUSPARSE_STATUS_INVALID_VALUE: return "invalid value";
  case CUSPARSE_STATUS_EXECUTION_FAILED: return "execution failed";
  case CUSPARSE_STATUS_INTERNAL_ERROR: return "internal error";
  case CUSPARSE_STATUS_NOT_SUPPORTED: return "operation not supported";
  case CUSPARSE_STATUS_INSUFFICIENT_RESOURCES: return "insufficient resources";
  }
  return "unknown error";
}
static inline cusparseStatus_t cusparseCreate(cusparseHandle_t *h) {
  if (!h) return CUSPARSE_STATUS_INVALID_VALUE;
  *h = (cusparseHandle_t)calloc(1, sizeof **h);
  if (!*h) return CUSPARSE_STATUS_ALLOC_FAILED;
  (*h)->live = 1;
  return CUSPARSE_STATUS_SUCCESS;
}
static inline cusparseStatus_t cusparseDestroy(cusparseHandle_t h) {
  if (!h || !h->live) return CUSPARSE_STATUS_NOT_INITIALIZED;
  h->live = 0;
  free(h);
  return CUSPARSE_STATUS_SUCCESS;
}
/* The emulation's own: the includer's device memory, for the checks. */
static inline void mt_csp_emu_memory(cusparseHandle_t h, const mt_csp_emu_mem *m) {
  if (h) h->mem = *m;
}
/* The emulation's own: why the last call on h failed ("" when none did). */
static inline const char *mt_csp_emu_why(cusparseHandle_t h) { return h ? h->why : ""; }

#if defined(__GNUC__)
__attribute__((format(printf, 3, 4)))
#endif
static inline cusparseStatus_t mt_csp_emu_fail(cusparseHandle_t h, cusparseStatus_t s,
                                               const char *fmt, ...) {
  if (h) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(h->why, sizeof h->why, fmt, ap);
    va_end(ap);
  }
  return s;
}
#define MT_CSP_EMU_TRY(call)                                                                       \
  do {                                                                                             \
    cusparseStatus_t s_ = (call);                                                                  \
    if (s_ != CUSPARSE_STATUS_SUCCESS) return s_;                                                  \
  } while (0)

/* the library's host loops on device memory (the includer's reach), for a scope */
struct mt_csp_emu_reach {
  cusparseHandle_t h;
  explicit mt_csp_emu_reach(cusparseHandle_t hh) : h(hh) {
    if (h->mem.reach) h->mem.reach(h->mem.ctx, 1);
  }
  ~mt_csp_emu_reach() {
    if (h->mem.reach) h->mem.reach(h->mem.ctx, 0);
  }
  mt_csp_emu_reach(const mt_csp_emu_reach &) = delete;
  mt_csp_emu_reach &operator=(const mt_csp_emu_reach &) = delete;
};

static inline size_t mt_csp_emu_vsz(cudaDataType t) {
  return t == CUDA_R_64F ? 8 : t == CUDA_R_32F ? 4 : 0;
}
static inline size_t mt_csp_emu_isz(cusparseIndexType_t t) {
  return t == CUSPARSE_INDEX_64I ? 8 : t == CUSPARSE_INDEX_32I ? 4 : 0;
}
static inline int mt_csp_emu_aligned(const void *p, size_t es) {
  return es && (uintptr_t)p % es == 0;
}
static inline int64_t mt_csp_emu_idx(const void *p, cusparseIndexType_t t, int64_t k) {
  return t == CUSPARSE_INDEX_64I ? ((const int64_t *)p)[k] : (int64_t)((const int32_t *)p)[k];
}
/* n elements of es bytes at p are device memory (none: always; NULL is not, else) */
static inline cusparseStatus_t mt_csp_emu_dev(cusparseHandle_t h, const char *fn, const char *what,
                                              const void *p, int64_t n, size_t es) {
  if (n <= 0) return CUSPARSE_STATUS_SUCCESS;
  if (!p) return mt_csp_emu_fail(h, CUSPARSE_STATUS_INVALID_VALUE, "%s: %s is NULL", fn, what);
  if (h->mem.dev && !h->mem.dev(h->mem.ctx, p, (size_t)n * es))
    return mt_csp_emu_fail(h, CUSPARSE_STATUS_INVALID_VALUE,
                           "%s: %s (%lld bytes) is not (wholly) device memory", fn, what,
                           (long long)((size_t)n * es));
  return CUSPARSE_STATUS_SUCCESS;
}
static inline cusparseStatus_t mt_csp_emu_live(cusparseHandle_t h) {
  return h && h->live ? CUSPARSE_STATUS_SUCCESS : CUSPARSE_STATUS_NOT_INITIALIZED;
}

/* ---- descriptors ---------------------------------------------------------- */
static inline cusparseStatus_t mt_csp_emu_csr_make(mt_csp_emu_spmat **d, int64_t rows,
                                                   int64_t cols, int64_t nnz, const void *rp,
                                                   const void *ci, const void *val,
                                                   cusparseIndexType_t rt, cusparseIndexType_t ct,
                                                   cusparseIndexBase_t base, cudaDataType vt) {
  if (!d) return CUSPARSE_STATUS_INVALID_VALUE;
  *d = NULL;
  size_t ri = mt_csp_emu_isz(rt), cz = mt_csp_emu_isz(ct), vz = mt_csp_emu_vsz(vt);
  if (rows < 0 || cols < 0 || nnz < 0 || !ri || !cz || !vz ||
      (base != CUSPARSE_INDEX_BASE_ZERO && base != CUSPARSE_INDEX_BASE_ONE))
    return CUSPARSE_STATUS_INVALID_VALUE;
  /* pointers aligned to their types; an array with elements given (C's, made empty, may wait
     for cusparseCsrSetPointers) */
  if ((rp && !mt_csp_emu_aligned(rp, ri)) || (ci && !mt_csp_emu_aligned(ci, cz)) ||
      (val && !mt_csp_emu_aligned(val, vz)) || (nnz > 0 && (!rp || !ci || !val)))
    return CUSPARSE_STATUS_INVALID_VALUE;
  *d = (mt_csp_emu_spmat *)calloc(1, sizeof **d);
  if (!*d) return CUSPARSE_STATUS_ALLOC_FAILED;
  **d = mt_csp_emu_spmat{rows, cols, nnz, (void *)rp, (void *)ci, (void *)val, rt, ct, base, vt};
  return CUSPARSE_STATUS_SUCCESS;
}
static inline cusparseStatus_t cusparseCreateCsr(cusparseSpMatDescr_t *d, int64_t rows,
                                                 int64_t cols, int64_t nnz, void *rp, void *ci,
                                                 void *val, cusparseIndexType_t rt,
                                                 cusparseIndexType_t ct, cusparseIndexBase_t base,
                                                 cudaDataType vt) {
  return mt_csp_emu_csr_make(d, rows, cols, nnz, rp, ci, val, rt, ct, base, vt);
}
static inline cusparseStatus_t cusparseCreateConstCsr(cusparseConstSpMatDescr_t *d, int64_t rows,
                                                      int64_t cols, int64_t nnz, const void *rp,
                                                      const void *ci, const void *val,
                                                      cusparseIndexType_t rt,
                                                      cusparseIndexType_t ct,
                                                      cusparseIndexBase_t base, cudaDataType vt) {
  mt_csp_emu_spmat *m = NULL;
  cusparseStatus_t s = mt_csp_emu_csr_make(&m, rows, cols, nnz, rp, ci, val, rt, ct, base, vt);
  if (d) *d = m;
  return s;
}
static inline cusparseStatus_t cusparseDestroySpMat(cusparseConstSpMatDescr_t d) {
  free((void *)d);
  return CUSPARSE_STATUS_SUCCESS;
}
static inline cusparseStatus_t cusparseSpMatGetSize(cusparseConstSpMatDescr_t d, int64_t *rows,
                                                    int64_t *cols, int64_t *nnz) {
  if (!d || !rows || !cols || !nnz) return CUSPARSE_STATUS_INVALID_VALUE;
  *rows = d->rows, *cols = d->cols, *nnz = d->nnz;
  return CUSPARSE_STATUS_SUCCESS;
}
static inline cusparseStatus_t cusparseCsrSetPointers(cusparseSpMatDescr_t d, void *rp, void *ci,
                                                      void *val) {
  if (!d || !rp || (d->nnz > 0 && (!ci || !val)) || !mt_csp_emu_aligned(rp, mt_csp_emu_isz(d->rt)) ||
      (ci && !mt_csp_emu_aligned(ci, mt_csp_emu_isz(d->ct))) ||
      (val && !mt_csp_emu_aligned(val, mt_csp_emu_vsz(d->vt))))
    return CUSPARSE_STATUS_INVALID_VALUE;
  d->rp = rp, d->ci = ci, d->val = val;
  return CUSPARSE_STATUS_SUCCESS;
}

static inline cusparseStatus_t mt_csp_emu_dnmat_make(mt_csp_emu_dnmat **d, int64_t rows,
                                                     int64_t cols, int64_t ld, const void *val,
                                                     cudaDataType vt, cusparseOrder_t order) {
  if (!d) return CUSPARSE_STATUS_INVALID_VALUE;
  *d = NULL;
  size_t vz = mt_csp_emu_vsz(vt);
  if (rows < 0 || cols < 0 || !vz || (order != CUSPARSE_ORDER_COL && order != CUSPARSE_ORDER_ROW))
    return CUSPARSE_STATUS_INVALID_VALUE;
  /* the leading dimension holds a column (column-major) or a row (row-major) */
  if (ld < (order == CUSPARSE_ORDER_COL ? rows : cols) || ld < 1)
    return CUSPARSE_STATUS_INVALID_VALUE;
  if ((val && !mt_csp_emu_aligned(val, vz)) || (rows > 0 && cols > 0 && !val))
    return CUSPARSE_STATUS_INVALID_VALUE;
  *d = (mt_csp_emu_dnmat *)calloc(1, sizeof **d);
  if (!*d) return CUSPARSE_STATUS_ALLOC_FAILED;
  **d = mt_csp_emu_dnmat{rows, cols, ld, (void *)val, vt, order};
  return CUSPARSE_STATUS_SUCCESS;
}
static inline cusparseStatus_t cusparseCreateDnMat(cusparseDnMatDescr_t *d, int64_t rows,
                                                   int64_t cols, int64_t ld, void *val,
                                                   cudaDataType vt, cusparseOrder_t order) {
  return mt_csp_emu_dnmat_make(d, rows, cols, ld, val, vt, order);
}
static inline cusparseStatus_t cusparseCreateConstDnMat(cusparseConstDnMatDescr_t *d,
                                                        int64_t rows, int64_t cols, int64_t ld,
                                                        const void *val, cudaDataType vt,
                                                        cusparseOrder_t order) {
  mt_csp_emu_dnmat *m = NULL;
  cusparseStatus_t s = mt_csp_emu_dnmat_make(&m, rows, cols, ld, val, vt, order);
  if (d) *d = m;
  return s;
}
static inline cusparseStatus_t cusparseDestroyDnMat(cusparseConstDnMatDescr_t d) {
  free((void *)d);
  return CUSPARSE_STATUS_SUCCESS;
}

static inline cusparseStatus_t mt_csp_emu_dnvec_make(mt_csp_emu_dnvec **d, int64_t size,
                                                     const void *vals, cudaDataType vt) {
  if (!d) return CUSPARSE_STATUS_INVALID_VALUE;
  *d = NULL;
  size_t vz = mt_csp_emu_vsz(vt);
  if (size < 0 || !vz || (size > 0 && !vals) || (vals && !mt_csp_emu_aligned(vals, vz)))
    return CUSPARSE_STATUS_INVALID_VALUE;
  *d = (mt_csp_emu_dnvec *)calloc(1, sizeof **d);
  if (!*d) return CUSPARSE_STATUS_ALLOC_FAILED;
  **d = mt_csp_emu_dnvec{size, (void *)vals, vt};
  return CUSPARSE_STATUS_SUCCESS;
}
static inline cusparseStatus_t cusparseCreateDnVec(cusparseDnVecDescr_t *d, int64_t size,
                                                   void *vals, cudaDataType vt) {
  return mt_csp_emu_dnvec_make(d, size, vals, vt);
}
static inline cusparseStatus_t cusparseCreateConstDnVec(cusparseConstDnVecDescr_t *d,
                                                        int64_t size, const void *vals,
                                                        cudaDataType vt) {
  mt_csp_emu_dnvec *v = NULL;
  cusparseStatus_t s = mt_csp_emu_dnvec_make(&v, size, vals, vt);
  if (d) *d = v;
  return s;
}
static inline cusparseStatus_t cusparseDestroyDnVec(cusparseConstDnVecDescr_t d) {
  free((void *)d);
  return CUSPARSE_STATUS_SUCCESS;
}

/* ---- the checks every product makes --------------------------------------- */
/* A CSR operand: given, not empty (the products mtcs hands over never are),
 * its arrays device memory, and sorted, unique columns in range. */
static inline cusparseStatus_t mt_csp_emu_csr_check(cusparseHandle_t h, const char *fn,
                                                    const char *name,
                                                    const mt_csp_emu_spmat *m) {
  if (!m) return mt_csp_emu_fail(h, CUSPARSE_STATUS_INVALID_VALUE, "%s: %s is NULL", fn, name);
  if (m->rows <= 0 || m->cols <= 0)
    return mt_csp_emu_fail(h, CUSPARSE_STATUS_INVALID_VALUE, "%s: %s is %lld x %lld (empty)", fn,
                           name, (long long)m->rows, (long long)m->cols);
  if (m->rt != m->ct)
    return mt_csp_emu_fail(h, CUSPARSE_STATUS_NOT_SUPPORTED,
                           "%s: %s's row offsets and columns of two index types", fn, name);
  size_t iz = mt_csp_emu_isz(m->rt);
  char what[64];
  snprintf(what, sizeof what, "%s's row offsets", name);
  MT_CSP_EMU_TRY(mt_csp_emu_dev(h, fn, what, m->rp, m->rows + 1, iz));
  snprintf(what, sizeof what, "%s's columns", name);
  MT_CSP_EMU_TRY(mt_csp_emu_dev(h, fn, what, m->ci, m->nnz, iz));
  snprintf(what, sizeof what, "%s's values", name);
  MT_CSP_EMU_TRY(mt_csp_emu_dev(h, fn, what, m->val, m->nnz, mt_csp_emu_vsz(m->vt)));
  mt_csp_emu_reach r(h);
  int64_t b = m->base;
  if (mt_csp_emu_idx(m->rp, m->rt, 0) != b || mt_csp_emu_idx(m->rp, m->rt, m->rows) != m->nnz + b)
    return mt_csp_emu_fail(h, CUSPARSE_STATUS_INVALID_VALUE,
                           "%s: %s's row offsets do not run from %lld to nnz + %lld = %lld", fn,
                           name, (long long)b, (long long)b, (long long)(m->nnz + b));
  for (int64_t i = 0; i < m->rows; i++) {
    int64_t lo = mt_csp_emu_idx(m->rp, m->rt, i) - b, hi = mt_csp_emu_idx(m->rp, m->rt, i + 1) - b;
    if (hi < lo)
      return mt_csp_emu_fail(h, CUSPARSE_STATUS_INVALID_VALUE,
                             "%s: %s's row offsets decrease at row %lld", fn, name, (long long)i);
    for (int64_t t = lo; t < hi; t++) {
      int64_t c = mt_csp_emu_idx(m->ci, m->ct, t) - b;
      if (c < 0 || c >= m->cols || (t > lo && c <= mt_csp_emu_idx(m->ci, m->ct, t - 1) - b))
        return mt_csp_emu_fail(h, CUSPARSE_STATUS_INVALID_VALUE,
                               "%s: %s's row %lld: column %lld out of range or not above the "
                               "previous one (cuSPARSE's CSR: sorted, unique columns)",
                               fn, name, (long long)i, (long long)c);
    }
  }
  return CUSPARSE_STATUS_SUCCESS;
}
static inline cusparseStatus_t mt_csp_emu_types(cusparseHandle_t h, const char *fn,
                                                cudaDataType ty, cudaDataType a, cudaDataType b,
                                                cudaDataType c) {
  if (!mt_csp_emu_vsz(ty) || a != ty || b != ty || c != ty)
    return mt_csp_emu_fail(h, CUSPARSE_STATUS_NOT_SUPPORTED,
                           "%s: operands of types %d, %d, %d with compute type %d (the "
                           "emulation implements one type, float32 or float64, for all four)",
                           fn, (int)a, (int)b, (int)c, (int)ty);
  return CUSPARSE_STATUS_SUCCESS;
}
static inline cusparseStatus_t mt_csp_emu_scalars(cusparseHandle_t h, const char *fn,
                                                  const void *alpha, const void *beta) {
  if (!alpha || !beta)
    return mt_csp_emu_fail(h, CUSPARSE_STATUS_INVALID_VALUE, "%s: alpha or beta is NULL", fn);
  return CUSPARSE_STATUS_SUCCESS;
}
static inline double mt_csp_emu_scalar(const void *p, cudaDataType ty) {
  return ty == CUDA_R_64F ? *(const double *)p : (double)*(const float *)p;
}
/* a dense matrix's n elements, from its last element's offset */
static inline int64_t mt_csp_emu_dn_span(const mt_csp_emu_dnmat *d) {
  if (d->rows == 0 || d->cols == 0) return 0;
  return d->order == CUSPARSE_ORDER_COL ? (d->cols - 1) * d->ld + d->rows
                                        : (d->rows - 1) * d->ld + d->cols;
}
static inline int64_t mt_csp_emu_dn_at(const mt_csp_emu_dnmat *d, int64_t r, int64_t c) {
  return d->order == CUSPARSE_ORDER_COL ? c * d->ld + r : r * d->ld + c;
}
/* the workspace a call was told to allocate: given, device memory; the library writes it all */
static inline cusparseStatus_t mt_csp_emu_ws(cusparseHandle_t h, const char *fn, void *buf,
                                             size_t bytes) {
  if (!bytes) return CUSPARSE_STATUS_SUCCESS;
  if (!buf)
    return mt_csp_emu_fail(h, CUSPARSE_STATUS_INVALID_VALUE,
                           "%s: externalBuffer is NULL, and bufferSize asked for %zu bytes", fn,
                           bytes);
  MT_CSP_EMU_TRY(mt_csp_emu_dev(h, fn, "externalBuffer", buf, (int64_t)bytes, 1));
  mt_csp_emu_reach r(h);
  memset(buf, MT_CSP_EMU_WS, bytes);
  return CUSPARSE_STATUS_SUCCESS;
}
/* a workspace a later phase needs: still device memory, as the library left it */
static inline cusparseStatus_t mt_csp_emu_ws_kept(cusparseHandle_t h, const char *fn,
                                                  const char *what, const void *buf,
                                                  size_t bytes) {
  if (!bytes) return CUSPARSE_STATUS_SUCCESS;
  MT_CSP_EMU_TRY(mt_csp_emu_dev(h, fn, what, buf, (int64_t)bytes, 1));
  mt_csp_emu_reach r(h);
  for (size_t i = 0; i < bytes; i++)
    if (((const unsigned char *)buf)[i] != MT_CSP_EMU_WS)
      return mt_csp_emu_fail(h, CUSPARSE_STATUS_INVALID_VALUE,
                             "%s: %s changed since the library wrote it (byte %zu)", fn, what, i);
  return CUSPARSE_STATUS_SUCCESS;
}

/* ---- SpMV and SpMM: C = alpha A B + beta C, A CSR -------------------------- */
template <typename T>
static inline void mt_csp_emu_csr_times(const mt_csp_emu_spmat *a, const T *b, int64_t b_ld,
                                        int b_rowmajor, T *c, int64_t c_ld, int c_rowmajor,
                                        int64_t n, T alpha, T beta) {
  int64_t base = a->base;
  for (int64_t j = 0; j < n; j++)
    for (int64_t r = 0; r < a->rows; r++) {
      T acc = 0;
      int64_t lo = mt_csp_emu_idx(a->rp, a->rt, r) - base;
      int64_t hi = mt_csp_emu_idx(a->rp, a->rt, r + 1) - base;
      for (int64_t t = lo; t < hi; t++) {
        int64_t k = mt_csp_emu_idx(a->ci, a->ct, t) - base;
        acc += ((const T *)a->val)[t] * b[b_rowmajor ? k * b_ld + j : j * b_ld + k];
      }
      T *out = &c[c_rowmajor ? r * c_ld + j : j * c_ld + r];
      /* beta 0: C is not read (it need not hold numbers) */
      *out = beta == (T)0 ? alpha * acc : alpha * acc + beta * *out;
    }
}

static inline cusparseStatus_t mt_csp_emu_spmm_check(cusparseHandle_t h, const char *fn,
                                                     cusparseOperation_t oa,
                                                     cusparseOperation_t ob, const void *alpha,
                                                     const mt_csp_emu_spmat *a,
                                                     const mt_csp_emu_dnmat *b, const void *beta,
                                                     const mt_csp_emu_dnmat *c, cudaDataType ty,
                                                     cusparseSpMMAlg_t alg) {
  MT_CSP_EMU_TRY(mt_csp_emu_live(h));
  if (oa != CUSPARSE_OPERATION_NON_TRANSPOSE || ob != CUSPARSE_OPERATION_NON_TRANSPOSE)
    return mt_csp_emu_fail(h, CUSPARSE_STATUS_NOT_SUPPORTED,
                           "%s: a transposed operand (the emulation implements op(A) = A, "
                           "op(B) = B)", fn);
  if (alg != CUSPARSE_SPMM_ALG_DEFAULT && alg != CUSPARSE_SPMM_CSR_ALG1 &&
      alg != CUSPARSE_SPMM_CSR_ALG2)
    return mt_csp_emu_fail(h, CUSPARSE_STATUS_NOT_SUPPORTED,
                           "%s: algorithm %d (the emulation implements DEFAULT, CSR_ALG1, "
                           "CSR_ALG2)", fn, (int)alg);
  MT_CSP_EMU_TRY(mt_csp_emu_scalars(h, fn, alpha, beta));
  if (!b || !c) return mt_csp_emu_fail(h, CUSPARSE_STATUS_INVALID_VALUE, "%s: B or C is NULL", fn);
  MT_CSP_EMU_TRY(mt_csp_emu_csr_check(h, fn, "A", a));
  MT_CSP_EMU_TRY(mt_csp_emu_types(h, fn, ty, a->vt, b->vt, c->vt));
  if (b->rows != a->cols || c->rows != a->rows || c->cols != b->cols)
    return mt_csp_emu_fail(h, CUSPARSE_STATUS_INVALID_VALUE,
                           "%s: A %lld x %lld, B %lld x %lld, C %lld x %lld do not agree", fn,
                           (long long)a->rows, (long long)a->cols, (long long)b->rows,
                           (long long)b->cols, (long long)c->rows, (long long)c->cols);
  if (b->order != c->order)
    return mt_csp_emu_fail(h, CUSPARSE_STATUS_NOT_SUPPORTED, "%s: B and C of two orders", fn);
  size_t vz = mt_csp_emu_vsz(ty);
  MT_CSP_EMU_TRY(mt_csp_emu_dev(h, fn, "B's values", b->val, mt_csp_emu_dn_span(b), vz));
  MT_CSP_EMU_TRY(mt_csp_emu_dev(h, fn, "C's values", c->val, mt_csp_emu_dn_span(c), vz));
  return CUSPARSE_STATUS_SUCCESS;
}
/* the emulation's own sizes (nothing is kept there but the pattern) */
static inline size_t mt_csp_emu_spmm_bytes(const mt_csp_emu_spmat *a) {
  return 128 + 8 * (size_t)a->rows;
}
static inline cusparseStatus_t cusparseSpMM_bufferSize(
    cusparseHandle_t h, cusparseOperation_t oa, cusparseOperation_t ob, const void *alpha,
    cusparseConstSpMatDescr_t a, cusparseConstDnMatDescr_t b, const void *beta,
    cusparseDnMatDescr_t c, cudaDataType ty, cusparseSpMMAlg_t alg, size_t *bytes) {
  const char *fn = "cusparseSpMM_bufferSize";
  if (!bytes) return mt_csp_emu_fail(h, CUSPARSE_STATUS_INVALID_VALUE, "%s: bufferSize is NULL", fn);
  MT_CSP_EMU_TRY(mt_csp_emu_spmm_check(h, fn, oa, ob, alpha, a, b, beta, c, ty, alg));
  *bytes = mt_csp_emu_spmm_bytes(a);
  return CUSPARSE_STATUS_SUCCESS;
}
static inline cusparseStatus_t cusparseSpMM(cusparseHandle_t h, cusparseOperation_t oa,
                                            cusparseOperation_t ob, const void *alpha,
                                            cusparseConstSpMatDescr_t a,
                                            cusparseConstDnMatDescr_t b, const void *beta,
                                            cusparseDnMatDescr_t c, cudaDataType ty,
                                            cusparseSpMMAlg_t alg, void *buf) {
  const char *fn = "cusparseSpMM";
  MT_CSP_EMU_TRY(mt_csp_emu_spmm_check(h, fn, oa, ob, alpha, a, b, beta, c, ty, alg));
  MT_CSP_EMU_TRY(mt_csp_emu_ws(h, fn, buf, mt_csp_emu_spmm_bytes(a)));
  mt_csp_emu_reach r(h);
  int row = b->order == CUSPARSE_ORDER_ROW;
  if (ty == CUDA_R_64F)
    mt_csp_emu_csr_times(a, (const double *)b->val, b->ld, row, (double *)c->val, c->ld, row,
                         c->cols, *(const double *)alpha, *(const double *)beta);
  else
    mt_csp_emu_csr_times(a, (const float *)b->val, b->ld, row, (float *)c->val, c->ld, row,
                         c->cols, *(const float *)alpha, *(const float *)beta);
  return CUSPARSE_STATUS_SUCCESS;
}

static inline cusparseStatus_t mt_csp_emu_spmv_check(cusparseHandle_t h, const char *fn,
                                                     cusparseOperation_t oa, const void *alpha,
                                                     const mt_csp_emu_spmat *a,
                                                     const mt_csp_emu_dnvec *x, const void *beta,
                                                     const mt_csp_emu_dnvec *y, cudaDataType ty,
                                                     cusparseSpMVAlg_t alg) {
  MT_CSP_EMU_TRY(mt_csp_emu_live(h));
  if (oa != CUSPARSE_OPERATION_NON_TRANSPOSE)
    return mt_csp_emu_fail(h, CUSPARSE_STATUS_NOT_SUPPORTED,
                           "%s: a transposed A (the emulation implements op(A) = A)", fn);
  if (alg != CUSPARSE_SPMV_ALG_DEFAULT && alg != CUSPARSE_SPMV_CSR_ALG1 &&
      alg != CUSPARSE_SPMV_CSR_ALG2)
    return mt_csp_emu_fail(h, CUSPARSE_STATUS_NOT_SUPPORTED,
                           "%s: algorithm %d (the emulation implements DEFAULT, CSR_ALG1, "
                           "CSR_ALG2)", fn, (int)alg);
  MT_CSP_EMU_TRY(mt_csp_emu_scalars(h, fn, alpha, beta));
  if (!x || !y) return mt_csp_emu_fail(h, CUSPARSE_STATUS_INVALID_VALUE, "%s: X or Y is NULL", fn);
  MT_CSP_EMU_TRY(mt_csp_emu_csr_check(h, fn, "A", a));
  MT_CSP_EMU_TRY(mt_csp_emu_types(h, fn, ty, a->vt, x->vt, y->vt));
  if (x->size != a->cols || y->size != a->rows)
    return mt_csp_emu_fail(h, CUSPARSE_STATUS_INVALID_VALUE,
                           "%s: A %lld x %lld, X of %lld, Y of %lld do not agree", fn,
                           (long long)a->rows, (long long)a->cols, (long long)x->size,
                           (long long)y->size);
  size_t vz = mt_csp_emu_vsz(ty);
  MT_CSP_EMU_TRY(mt_csp_emu_dev(h, fn, "X's values", x->vals, x->size, vz));
  MT_CSP_EMU_TRY(mt_csp_emu_dev(h, fn, "Y's values", y->vals, y->size, vz));
  return CUSPARSE_STATUS_SUCCESS;
}
static inline size_t mt_csp_emu_spmv_bytes(const mt_csp_emu_spmat *a) {
  return 64 + 4 * (size_t)a->rows;
}
static inline cusparseStatus_t cusparseSpMV_bufferSize(cusparseHandle_t h, cusparseOperation_t oa,
                                                       const void *alpha,
                                                       cusparseConstSpMatDescr_t a,
                                                       cusparseConstDnVecDescr_t x,
                                                       const void *beta, cusparseDnVecDescr_t y,
                                                       cudaDataType ty, cusparseSpMVAlg_t alg,
                                                       size_t *bytes) {
  const char *fn = "cusparseSpMV_bufferSize";
  if (!bytes) return mt_csp_emu_fail(h, CUSPARSE_STATUS_INVALID_VALUE, "%s: bufferSize is NULL", fn);
  MT_CSP_EMU_TRY(mt_csp_emu_spmv_check(h, fn, oa, alpha, a, x, beta, y, ty, alg));
  *bytes = mt_csp_emu_spmv_bytes(a);
  return CUSPARSE_STATUS_SUCCESS;
}
static inline cusparseStatus_t cusparseSpMV(cusparseHandle_t h, cusparseOperation_t oa,
                                            const void *alpha, cusparseConstSpMatDescr_t a,
                                            cusparseConstDnVecDescr_t x, const void *beta,
                                            cusparseDnVecDescr_t y, cudaDataType ty,
                                            cusparseSpMVAlg_t alg, void *buf) {
  const char *fn = "cusparseSpMV";
  MT_CSP_EMU_TRY(mt_csp_emu_spmv_check(h, fn, oa, alpha, a, x, beta, y, ty, alg));
  MT_CSP_EMU_TRY(mt_csp_emu_ws(h, fn, buf, mt_csp_emu_spmv_bytes(a)));
  mt_csp_emu_reach r(h);
  /* one column: x as a k x 1 and y as an m x 1 column-major matrix */
  if (ty == CUDA_R_64F)
    mt_csp_emu_csr_times(a, (const double *)x->vals, a->cols, 0, (double *)y->vals, a->rows, 0,
                         1, *(const double *)alpha, *(const double *)beta);
  else
    mt_csp_emu_csr_times(a, (const float *)x->vals, a->cols, 0, (float *)y->vals, a->rows, 0, 1,
                         *(const float *)alpha, *(const float *)beta);
  return CUSPARSE_STATUS_SUCCESS;
}

/* ---- SpGEMM: C = alpha A B (beta 0), A, B, C CSR of 32-bit indices ------- */
static inline cusparseStatus_t cusparseSpGEMM_createDescr(cusparseSpGEMMDescr_t *d) {
  if (!d) return CUSPARSE_STATUS_INVALID_VALUE;
  *d = (cusparseSpGEMMDescr_t)calloc(1, sizeof **d);
  return *d ? CUSPARSE_STATUS_SUCCESS : CUSPARSE_STATUS_ALLOC_FAILED;
}
static inline cusparseStatus_t cusparseSpGEMM_destroyDescr(cusparseSpGEMMDescr_t d) {
  if (d) free(d->rp), free(d->ci), free(d->val);
  free(d);
  return CUSPARSE_STATUS_SUCCESS;
}
/* every phase's arguments; from the second on, the first's */
static inline cusparseStatus_t mt_csp_emu_spgemm_check(
    cusparseHandle_t h, const char *fn, cusparseOperation_t oa, cusparseOperation_t ob,
    const void *alpha, const mt_csp_emu_spmat *a, const mt_csp_emu_spmat *b, const void *beta,
    const mt_csp_emu_spmat *c, cudaDataType ty, cusparseSpGEMMAlg_t alg,
    const mt_csp_emu_spgemm *d) {
  MT_CSP_EMU_TRY(mt_csp_emu_live(h));
  if (!d) return mt_csp_emu_fail(h, CUSPARSE_STATUS_INVALID_VALUE, "%s: spgemmDescr is NULL", fn);
  if (oa != CUSPARSE_OPERATION_NON_TRANSPOSE || ob != CUSPARSE_OPERATION_NON_TRANSPOSE)
    return mt_csp_emu_fail(h, CUSPARSE_STATUS_NOT_SUPPORTED,
                           "%s: a transposed operand (SpGEMM takes op(A) = A, op(B) = B)", fn);
  if (alg != CUSPARSE_SPGEMM_DEFAULT && alg != CUSPARSE_SPGEMM_ALG1)
    return mt_csp_emu_fail(h, CUSPARSE_STATUS_NOT_SUPPORTED,
                           "%s: algorithm %d (the emulation implements DEFAULT and ALG1; ALG2 "
                           "and ALG3 need cusparseSpGEMM_estimateMemory)", fn, (int)alg);
  MT_CSP_EMU_TRY(mt_csp_emu_scalars(h, fn, alpha, beta));
  if (!c) return mt_csp_emu_fail(h, CUSPARSE_STATUS_INVALID_VALUE, "%s: C is NULL", fn);
  if (d->phase > 0 && (a != d->a || b != d->b || c != d->c || ty != d->ty || alg != d->alg))
    return mt_csp_emu_fail(h, CUSPARSE_STATUS_INVALID_VALUE,
                           "%s: operands, compute type or algorithm not those of the work "
                           "estimation", fn);
  MT_CSP_EMU_TRY(mt_csp_emu_csr_check(h, fn, "A", a));
  MT_CSP_EMU_TRY(mt_csp_emu_csr_check(h, fn, "B", b));
  MT_CSP_EMU_TRY(mt_csp_emu_types(h, fn, ty, a->vt, b->vt, c->vt));
  if (mt_csp_emu_scalar(beta, ty) != 0)
    return mt_csp_emu_fail(h, CUSPARSE_STATUS_NOT_SUPPORTED,
                           "%s: beta is not 0 (the emulation implements C = alpha A B)", fn);
  if (a->rt != CUSPARSE_INDEX_32I || b->rt != CUSPARSE_INDEX_32I || c->rt != CUSPARSE_INDEX_32I ||
      c->ct != CUSPARSE_INDEX_32I)
    return mt_csp_emu_fail(h, CUSPARSE_STATUS_NOT_SUPPORTED,
                           "%s: an operand without 32-bit indices (SpGEMM takes only those)", fn);
  if (b->rows != a->cols || c->rows != a->rows || c->cols != b->cols)
    return mt_csp_emu_fail(h, CUSPARSE_STATUS_INVALID_VALUE,
                           "%s: A %lld x %lld, B %lld x %lld, C %lld x %lld do not agree", fn,
                           (long long)a->rows, (long long)a->cols, (long long)b->rows,
                           (long long)b->cols, (long long)c->rows, (long long)c->cols);
  if (a->base != b->base || c->base != a->base)
    return mt_csp_emu_fail(h, CUSPARSE_STATUS_NOT_SUPPORTED, "%s: operands of two index bases",
                           fn);
  return CUSPARSE_STATUS_SUCCESS;
}
static inline cusparseStatus_t cusparseSpGEMM_workEstimation(
    cusparseHandle_t h, cusparseOperation_t oa, cusparseOperation_t ob, const void *alpha,
    cusparseConstSpMatDescr_t a, cusparseConstSpMatDescr_t b, const void *beta,
    cusparseSpMatDescr_t c, cudaDataType ty, cusparseSpGEMMAlg_t alg, cusparseSpGEMMDescr_t d,
    size_t *bytes1, void *buf1) {
  const char *fn = "cusparseSpGEMM_workEstimation";
  if (!bytes1) return mt_csp_emu_fail(h, CUSPARSE_STATUS_INVALID_VALUE, "%s: bufferSize1 is NULL", fn);
  MT_CSP_EMU_TRY(mt_csp_emu_spgemm_check(h, fn, oa, ob, alpha, a, b, beta, c, ty, alg, d));
  size_t need = 256 + 8 * (size_t)(a->nnz + a->rows);
  if (!buf1) { /* the size only */
    *bytes1 = need;
    return CUSPARSE_STATUS_SUCCESS;
  }
  if (*bytes1 < need)
    return mt_csp_emu_fail(h, CUSPARSE_STATUS_INVALID_VALUE,
                           "%s: bufferSize1 %zu, under the %zu bytes it asked for", fn, *bytes1,
                           need);
  MT_CSP_EMU_TRY(mt_csp_emu_ws(h, fn, buf1, *bytes1));
  d->a = a, d->b = b, d->c = c, d->ty = ty, d->alg = alg;
  d->buf1 = buf1, d->bytes1 = *bytes1, d->phase = 1;
  return CUSPARSE_STATUS_SUCCESS;
}
/* C = alpha A B, row by row (Gustavson), in T, columns ascending, into the
 * descriptor's own memory; -1 when that memory cannot be had */
template <typename T>
static inline int mt_csp_emu_spgemm_run(mt_csp_emu_spgemm *d, T alpha) {
  const mt_csp_emu_spmat *a = d->a, *b = d->b;
  const int32_t *ar = (const int32_t *)a->rp, *ac = (const int32_t *)a->ci;
  const int32_t *br = (const int32_t *)b->rp, *bc = (const int32_t *)b->ci;
  const T *av = (const T *)a->val, *bv = (const T *)b->val;
  int32_t o = (int32_t)a->base;
  int64_t cap = 0;
  for (int64_t t = 0; t < a->nnz; t++) cap += br[ac[t] - o + 1] - br[ac[t] - o];
  if (cap > a->rows * b->cols) cap = a->rows * b->cols;
  free(d->rp), free(d->ci), free(d->val);
  d->rp = (int32_t *)malloc((size_t)(a->rows + 1) * sizeof(int32_t));
  d->ci = (int32_t *)malloc((size_t)(cap + 1) * sizeof(int32_t));
  d->val = malloc((size_t)(cap + 1) * sizeof(T));
  T *row = (T *)malloc((size_t)b->cols * sizeof(T));
  unsigned char *hit = (unsigned char *)malloc((size_t)b->cols);
  if (!d->rp || !d->ci || !d->val || !row || !hit) {
    free(row), free(hit);
    return -1;
  }
  int64_t nc = 0;
  d->rp[0] = o;
  for (int64_t r = 0; r < a->rows; r++) {
    memset(hit, 0, (size_t)b->cols);
    for (int32_t t = ar[r] - o; t < ar[r + 1] - o; t++)
      for (int32_t u = br[ac[t] - o] - o; u < br[ac[t] - o + 1] - o; u++) {
        int32_t j = bc[u] - o;
        if (!hit[j]) row[j] = 0;
        hit[j] = 1;
        row[j] += av[t] * bv[u];
      }
    for (int64_t j = 0; j < b->cols; j++)
      if (hit[j]) d->ci[nc] = (int32_t)j + o, ((T *)d->val)[nc++] = alpha * row[j];
    d->rp[r + 1] = (int32_t)nc + o;
  }
  d->nnz = nc;
  free(row), free(hit);
  return 0;
}
static inline cusparseStatus_t cusparseSpGEMM_compute(
    cusparseHandle_t h, cusparseOperation_t oa, cusparseOperation_t ob, const void *alpha,
    cusparseConstSpMatDescr_t a, cusparseConstSpMatDescr_t b, const void *beta,
    cusparseSpMatDescr_t c, cudaDataType ty, cusparseSpGEMMAlg_t alg, cusparseSpGEMMDescr_t d,
    size_t *bytes2, void *buf2) {
  const char *fn = "cusparseSpGEMM_compute";
  if (!bytes2) return mt_csp_emu_fail(h, CUSPARSE_STATUS_INVALID_VALUE, "%s: bufferSize2 is NULL", fn);
  MT_CSP_EMU_TRY(mt_csp_emu_spgemm_check(h, fn, oa, ob, alpha, a, b, beta, c, ty, alg, d));
  if (d->phase < 1)
    return mt_csp_emu_fail(h, CUSPARSE_STATUS_INVALID_VALUE,
                           "%s: before cusparseSpGEMM_workEstimation with its buffer", fn);
  MT_CSP_EMU_TRY(mt_csp_emu_ws_kept(h, fn, "externalBuffer1", d->buf1, d->bytes1));
  size_t need = 256 + 8 * (size_t)(a->nnz + b->nnz + a->rows);
  if (!buf2) {
    *bytes2 = need;
    return CUSPARSE_STATUS_SUCCESS;
  }
  if (*bytes2 < need)
    return mt_csp_emu_fail(h, CUSPARSE_STATUS_INVALID_VALUE,
                           "%s: bufferSize2 %zu, under the %zu bytes it asked for", fn, *bytes2,
                           need);
  MT_CSP_EMU_TRY(mt_csp_emu_ws(h, fn, buf2, *bytes2));
  int bad;
  {
    mt_csp_emu_reach r(h);
    bad = ty == CUDA_R_64F ? mt_csp_emu_spgemm_run(d, *(const double *)alpha)
                           : mt_csp_emu_spgemm_run(d, *(const float *)alpha);
  }
  if (bad)
    return mt_csp_emu_fail(h, CUSPARSE_STATUS_ALLOC_FAILED, "%s: C's %lld rows", fn,
                           (long long)a->rows);
  c->nnz = d->nnz; /* cusparseSpMatGetSize tells it now */
  d->buf2 = buf2, d->bytes2 = *bytes2, d->phase = 2;
  return CUSPARSE_STATUS_SUCCESS;
}
static inline cusparseStatus_t cusparseSpGEMM_copy(cusparseHandle_t h, cusparseOperation_t oa,
                                                   cusparseOperation_t ob, const void *alpha,
                                                   cusparseConstSpMatDescr_t a,
                                                   cusparseConstSpMatDescr_t b, const void *beta,
                                                   cusparseSpMatDescr_t c, cudaDataType ty,
                                                   cusparseSpGEMMAlg_t alg,
                                                   cusparseSpGEMMDescr_t d) {
  const char *fn = "cusparseSpGEMM_copy";
  MT_CSP_EMU_TRY(mt_csp_emu_spgemm_check(h, fn, oa, ob, alpha, a, b, beta, c, ty, alg, d));
  if (d->phase < 2)
    return mt_csp_emu_fail(h, CUSPARSE_STATUS_INVALID_VALUE,
                           "%s: before cusparseSpGEMM_compute with its buffer", fn);
  MT_CSP_EMU_TRY(mt_csp_emu_ws_kept(h, fn, "externalBuffer2", d->buf2, d->bytes2));
  if (c->nnz != d->nnz)
    return mt_csp_emu_fail(h, CUSPARSE_STATUS_INVALID_VALUE, "%s: C's nnz changed since compute",
                           fn);
  size_t vz = mt_csp_emu_vsz(ty);
  MT_CSP_EMU_TRY(mt_csp_emu_dev(h, fn, "C's row offsets", c->rp, c->rows + 1, 4));
  MT_CSP_EMU_TRY(mt_csp_emu_dev(h, fn, "C's columns", c->ci, d->nnz, 4));
  MT_CSP_EMU_TRY(mt_csp_emu_dev(h, fn, "C's values", c->val, d->nnz, vz));
  mt_csp_emu_reach r(h);
  memcpy(c->rp, d->rp, (size_t)(c->rows + 1) * 4);
  if (d->nnz) memcpy(c->ci, d->ci, (size_t)d->nnz * 4), memcpy(c->val, d->val, (size_t)d->nnz * vz);
  d->phase = 3;
  return CUSPARSE_STATUS_SUCCESS;
}

#endif /* MT_CUSPARSE_EMU_H */

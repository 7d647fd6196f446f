/* cusparse_lib.cu - the products the CUDA backend hands to cuSPARSE
 * (cuda_compat.h, "cuSPARSE"), float32 and float64 (the compute type is the
 * dtype), CSR matrices of 32-bit indices (as torch hands cuSPARSE's
 * SpGEMM; every algorithm takes them): C = A B with B, C dense
 * column-major, through cusparseSpMV (n = 1) or cusparseSpMM; and C = A B
 * with A and B CSR, C scattered into a dense column-major accumulator.
 *
 * cuSPARSE is loaded when first called (dlopen of libcusparse.so.<major>,
 * never closed), so that mtcs starts, and runs every other backend, on a
 * machine without it; a failed load is the case's DEVICE_ERROR naming the
 * library and MTCS_CUSPARSE=0 (our own kernels instead). Its failures are
 * DEVICE_ERROR / OUT_OF_MEMORY with cuSPARSE's name and message.
 *
 * In the emulation (MT_CUDA_EMU) the same entry point is a host loop with
 * what the documentation promises: each C element the sum of its row's
 * products in the compute type (float for float32: a rounding our kernels,
 * which sum in double, do not make, so the goldens' order-free tolerances
 * are exercised), and cuSPARSE's argument checks, stricter than the
 * library's (row offsets from 0 to nnz, non-decreasing; each row's column
 * indices in range, increasing: the sorted, unique CSR cuSPARSE assumes)
 * as INVALID_VALUE. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/mt_hd.h"
#include "cuda_compat.h"

/* SpGEMM's C (m x n, CSR) into the dense column-major accumulator c,
 * zeroed first (the arena holds poison). */
MTC_KERNEL void csp_zero(mt_dtype dt, int64_t n, void *c) {
  MTC_FOR(i, n) mt_hd_set_f64(c, dt, i, 0.0);
}
MTC_KERNEL void csp_scatter(mt_dtype dt, int64_t m, int64_t n, const int32_t *rptr,
                            const int32_t *col, const void *val, void *c) {
  MTC_FOR(r, m) {
    for (int32_t t = rptr[r]; t < rptr[r + 1]; t++) {
#if MT_CUDA_EMU_FAULT == 6 /* tests/cuda_emu_faults.cmake: C taken as row-major */
      int64_t at = r * n + col[t];
#else
      int64_t at = (int64_t)col[t] * m + r;
#endif
      mt_hd_set_f64(c, dt, at, mt_hd_get_f64(val, dt, t));
    }
  }
  (void)n;
}

extern "C" int MTC(cusparse_on)(void) {
  const char *v = getenv("MTCS_CUSPARSE");
  return !(v && strcmp(v, "0") == 0);
}

#ifdef MT_CUDA_EMU

template <typename T>
static void emu_csr_mm(int64_t m, int64_t k, int64_t n, const int32_t *rptr, const int32_t *col,
                       const T *val, const T *b, T *c) {
  for (int64_t j = 0; j < n; j++)
    for (int64_t r = 0; r < m; r++) {
      T acc = 0;
#if MT_CUDA_EMU_FAULT == 6 /* tests/cuda_emu_faults.cmake: B and C taken as row-major */
      for (int32_t t = rptr[r]; t < rptr[r + 1]; t++) acc += val[t] * b[(int64_t)col[t] * n + j];
      c[r * n + j] = acc;
#else
      for (int32_t t = rptr[r]; t < rptr[r + 1]; t++) acc += val[t] * b[j * k + col[t]];
      c[j * m + r] = acc;
#endif
    }
}

/* cuSPARSE's CSR, checked: offsets from 0 to nnz, non-decreasing; each
 * row's columns in [0, k), increasing. 0 when it is one. */
template <typename I>
static int emu_csr_bad(int64_t m, int64_t k, int64_t nnz, const I *rptr, const I *col) {
  if (m <= 0 || k <= 0 || nnz < 0 || rptr[0] != 0 || rptr[m] != nnz) return 1;
  for (int64_t r = 0; r < m; r++) {
    if (rptr[r + 1] < rptr[r]) return 1;
    for (int64_t t = rptr[r]; t < rptr[r + 1]; t++)
      if (col[t] < 0 || col[t] >= k || (t > rptr[r] && col[t] <= col[t - 1])) return 1;
  }
  return 0;
}

static mt_status emu_invalid(const mtc_arena *a, const char *fn, int64_t m, int64_t k, int64_t n,
                             mt_error *err) {
  return mt_err(err, MT_DEVICE_ERROR,
                "%s: %s: invalid value (CUSPARSE_STATUS_INVALID_VALUE, emulated: a %lld x %lld "
                "CSR times %lld columns)",
                a->what, fn, (long long)m, (long long)k, (long long)n);
}

extern "C" mt_status MTC(csr_mm)(const mtc_arena *a, mt_dtype dt, int64_t m, int64_t k, int64_t n,
                                 int64_t nnz, const int32_t *rptr, const int32_t *col,
                                 const void *val, const void *b, void *c, mt_error *err) {
  const char *fn = n == 1 ? "cusparseSpMV" : "cusparseSpMM";
  /* the library reads and writes device memory only */
  if (MTC(emu_args)(a, fn, mtc_emu_args(a, rptr, col, val, b, c), err)) return MT_DEVICE_ERROR;
  MTC(emu_reach)(a, 1); /* the library on device memory */
  int bad = (dt != MT_float32 && dt != MT_float64) || n <= 0 || emu_csr_bad(m, k, nnz, rptr, col);
  if (!bad && dt == MT_float32)
    emu_csr_mm(m, k, n, rptr, col, (const float *)val, (const float *)b, (float *)c);
  else if (!bad)
    emu_csr_mm(m, k, n, rptr, col, (const double *)val, (const double *)b, (double *)c);
  MTC(emu_reach)(a, 0);
  if (bad) return emu_invalid(a, fn, m, k, n, err);
  return MTC(launched)(a, fn, err); /* fault 5 fails it like a kernel */
}

/* C = A B as a CSR with sorted columns (Gustavson's row by row, in the
 * compute type), into crp/ccol/cval (host memory: the emulation's device). */
template <typename T>
static void emu_spgemm(int64_t m, int64_t n, const int32_t *ar, const int32_t *ac, const T *av,
                       const int32_t *br, const int32_t *bc, const T *bv, T *row, uint8_t *hit,
                       int32_t *crp, int32_t *ccol, T *cval) {
  int32_t nc = 0;
  crp[0] = 0;
  for (int64_t r = 0; r < m; r++) {
    memset(hit, 0, (size_t)n);
    for (int32_t t = ar[r]; t < ar[r + 1]; t++)
      for (int32_t u = br[ac[t]]; u < br[ac[t] + 1]; u++) {
        if (!hit[bc[u]]) row[bc[u]] = 0;
        hit[bc[u]] = 1;
        row[bc[u]] += av[t] * bv[u];
      }
    for (int64_t j = 0; j < n; j++)
      if (hit[j]) ccol[nc] = (int32_t)j, cval[nc++] = row[j];
    crp[r + 1] = nc;
  }
}

extern "C" mt_status MTC(csr_spgemm)(const mtc_arena *a, mt_dtype dt, int64_t m, int64_t k,
                                     int64_t n, int64_t nnz_a, const int32_t *ar,
                                     const int32_t *ac, const void *av, int64_t nnz_b,
                                     const int32_t *br, const int32_t *bc, const void *bv,
                                     void *c, mt_error *err) {
  const char *fn = "cusparseSpGEMM";
  size_t es = dt == MT_float64 ? 8 : 4;
  if (MTC(emu_args)(a, fn, mtc_emu_args(a, ar, ac, av, br, bc, bv, c), err))
    return MT_DEVICE_ERROR;
  MTC(emu_reach)(a, 1); /* the library on device memory */
  int bad = (dt != MT_float32 && dt != MT_float64) || n <= 0 ||
            emu_csr_bad(m, k, nnz_a, ar, ac) || emu_csr_bad(k, n, nnz_b, br, bc);
  /* C has at most min(m n, sum over A's entries of their B row's length) entries */
  int64_t cap = 0;
  for (int64_t t = 0; !bad && t < nnz_a; t++) cap += br[ac[t] + 1] - br[ac[t]];
  if (cap > m * n) cap = m * n;
  MTC(emu_reach)(a, 0);
  if (bad) return emu_invalid(a, fn, m, k, n, err);
  /* C in device memory of its own, as the library's C is (csp_malloc): an arena the
   * scatter's launch accepts through `also` */
  mtc_arena ca, both = *a;
  size_t total = 0;
  int32_t *crp = NULL, *ccol = NULL;
  void *cval = NULL, *row = malloc((size_t)n * es);
  uint8_t *hit = (uint8_t *)malloc((size_t)n);
  mt_status st;
  memset(&ca, 0, sizeof ca);
  if (MTC(arena_add)(&total, m + 1, sizeof(int32_t)) || MTC(arena_add)(&total, cap + 1, 4) ||
      MTC(arena_add)(&total, cap + 1, es) || !row || !hit) {
    st = mt_err(err, MT_OUT_OF_MEMORY, "%s: %s: emulated C of %lld entries", a->what, fn,
                (long long)cap);
    goto out;
  }
  if ((st = MTC(arena_open)(&ca, total, a->what, err)) != MT_OK) goto out;
  crp = (int32_t *)MTC(arena_take)(&ca, m + 1, sizeof(int32_t));
  ccol = (int32_t *)MTC(arena_take)(&ca, cap + 1, 4);
  cval = MTC(arena_take)(&ca, cap + 1, es);
  both.also = &ca;
  MTC(emu_reach)(&both, 1);
  if (dt == MT_float32)
    emu_spgemm(m, n, ar, ac, (const float *)av, br, bc, (const float *)bv, (float *)row, hit,
               crp, ccol, (float *)cval);
  else
    emu_spgemm(m, n, ar, ac, (const double *)av, br, bc, (const double *)bv, (double *)row, hit,
               crp, ccol, (double *)cval);
  MTC(emu_reach)(&both, 0);
  if ((st = MTC(launched)(&both, fn, err)) != MT_OK || /* C's guards too */
      (st = MTC_LAUNCH(a, csp_zero, m * n, dt, m * n, c)) != MT_OK)
    goto out;
  st = MTC_LAUNCH(&both, csp_scatter, m, dt, m, n, crp, ccol, cval, c);
out:
  MTC(arena_close)(&ca);
  free(row), free(hit);
  return st;
}

extern "C" int MTC(cusparse_probe)(char *why, size_t why_len) {
  snprintf(why, why_len, "emulated: nothing to load");
  return 0;
}

#else /* the device */

#include <cuda_runtime.h>
#include <cusparse.h>
#include <dlfcn.h>

#define CSP_STR2(x) #x
#define CSP_STR(x) CSP_STR2(x)
#define CSP_SONAME "libcusparse.so." CSP_STR(CUSPARSE_VER_MAJOR)

/* The functions called, resolved by name from the loaded library. */
#define CSP_FUNCS(X)                                                                               \
  X(cusparseCreate)                                                                                \
  X(cusparseDestroy)                                                                               \
  X(cusparseGetErrorName)                                                                          \
  X(cusparseGetErrorString)                                                                        \
  X(cusparseCreateConstCsr)                                                                        \
  X(cusparseDestroySpMat)                                                                          \
  X(cusparseCreateConstDnMat)                                                                      \
  X(cusparseCreateDnMat)                                                                           \
  X(cusparseDestroyDnMat)                                                                          \
  X(cusparseCreateConstDnVec)                                                                      \
  X(cusparseCreateDnVec)                                                                           \
  X(cusparseDestroyDnVec)                                                                          \
  X(cusparseSpMM_bufferSize)                                                                       \
  X(cusparseSpMM)                                                                                  \
  X(cusparseSpMV_bufferSize)                                                                       \
  X(cusparseSpMV)                                                                                  \
  X(cusparseCreateCsr)                                                                             \
  X(cusparseSpMatGetSize)                                                                          \
  X(cusparseCsrSetPointers)                                                                        \
  X(cusparseSpGEMM_createDescr)                                                                    \
  X(cusparseSpGEMM_destroyDescr)                                                                   \
  X(cusparseSpGEMM_workEstimation)                                                                 \
  X(cusparseSpGEMM_compute)                                                                        \
  X(cusparseSpGEMM_copy)

typedef struct {
#define CSP_MEMBER(f) decltype(&::f) f;
  CSP_FUNCS(CSP_MEMBER)
#undef CSP_MEMBER
} csp_lib;

/* dlopen is reference-counted and the library stays loaded: every call
 * resolves the table again, cheaply, and no state outlives it here. */
static mt_status csp_open(csp_lib *l, const char *what, mt_error *err) {
  void *dl = dlopen(CSP_SONAME, RTLD_NOW | RTLD_LOCAL);
  if (!dl)
    return mt_err(err, MT_DEVICE_ERROR,
                  "%s: cuSPARSE: cannot load %s (%s); put its folder on LD_LIBRARY_PATH, or set "
                  "MTCS_CUSPARSE=0 to run the backend's own kernels instead",
                  what, CSP_SONAME, dlerror());
#define CSP_LOAD(f)                                                                                \
  if (!(l->f = (decltype(l->f))dlsym(dl, #f)))                                                     \
    return mt_err(err, MT_DEVICE_ERROR, "%s: cuSPARSE: %s has no %s", what, CSP_SONAME, #f);
  CSP_FUNCS(CSP_LOAD)
#undef CSP_LOAD
  return MT_OK;
}

extern "C" int MTC(cusparse_probe)(char *why, size_t why_len) {
  csp_lib l;
  mt_error e;
  memset(&e, 0, sizeof e);
  if (csp_open(&l, "cuSPARSE probe", &e) != MT_OK) {
    snprintf(why, why_len, "%s", e.msg);
    return 1;
  }
  snprintf(why, why_len, "%s: all %zu functions the backend calls resolve", CSP_SONAME,
           sizeof l / sizeof(void (*)(void)));
  return 0;
}

static mt_status csp_fail(const csp_lib *l, const mtc_arena *a, cusparseStatus_t s,
                          const char *call, mt_error *err) {
  mt_status st = s == CUSPARSE_STATUS_ALLOC_FAILED || s == CUSPARSE_STATUS_INSUFFICIENT_RESOURCES
                     ? MT_OUT_OF_MEMORY
                     : MT_DEVICE_ERROR;
  return mt_err(err, st, "%s: %s: %s (%s)", a->what, call, l->cusparseGetErrorString(s),
                l->cusparseGetErrorName(s));
}

#define CSP_TRY(call, what)                                                                        \
  do {                                                                                             \
    cusparseStatus_t s_ = (call);                                                                  \
    if (s_ != CUSPARSE_STATUS_SUCCESS) {                                                           \
      st = csp_fail(&x.l, a, s_, what, err);                                                       \
      goto out;                                                                                    \
    }                                                                                              \
  } while (0)

/* cudaMalloc of bytes (none when 0) into *p, else the status. */
static mt_status csp_malloc(const mtc_arena *a, void **p, size_t bytes, const char *what,
                            mt_error *err) {
  *p = NULL;
  if (!bytes) return MT_OK;
  cudaError_t e = cudaMalloc(p, bytes);
  if (e == cudaSuccess) return MT_OK;
  *p = NULL;
  return mt_err(err, e == cudaErrorMemoryAllocation ? MT_OUT_OF_MEMORY : MT_DEVICE_ERROR,
                "%s: cudaMalloc of %zu bytes for %s: %s (%s)", a->what, bytes, what,
                cudaGetErrorString(e), cudaGetErrorName(e));
}

/* One call's library table, handle and scalars (alpha 1, beta 0 in the
 * compute type, which is the dtype). */
typedef struct {
  csp_lib l;
  cusparseHandle_t h;
  cudaDataType ty;
  float one_f, zero_f;
  double one_d, zero_d;
  const void *one, *zero;
} csp_ctx;

static mt_status csp_begin(csp_ctx *x, const mtc_arena *a, mt_dtype dt, mt_error *err) {
  mt_status st;
  memset(x, 0, sizeof *x);
  if (dt != MT_float32 && dt != MT_float64)
    return mt_err(err, MT_NOT_SUPPORTED, "%s: cuSPARSE products take float32 and float64 only",
                  a->what);
  int f64 = dt == MT_float64;
  x->ty = f64 ? CUDA_R_64F : CUDA_R_32F;
  x->one_f = 1.0f, x->one_d = 1.0;
  x->one = f64 ? (const void *)&x->one_d : (const void *)&x->one_f;
  x->zero = f64 ? (const void *)&x->zero_d : (const void *)&x->zero_f;
  if ((st = csp_open(&x->l, a->what, err)) != MT_OK) return st;
  cusparseStatus_t s = x->l.cusparseCreate(&x->h);
  if (s == CUSPARSE_STATUS_SUCCESS) return MT_OK;
  x->h = NULL;
  return csp_fail(&x->l, a, s, "cusparseCreate", err);
}

static void csp_end(csp_ctx *x) {
  if (x->h) x->l.cusparseDestroy(x->h);
}

extern "C" mt_status MTC(csr_mm)(const mtc_arena *a, mt_dtype dt, int64_t m, int64_t k, int64_t n,
                                 int64_t nnz, const int32_t *rptr, const int32_t *col,
                                 const void *val, const void *b, void *c, mt_error *err) {
  csp_ctx x;
  cusparseConstSpMatDescr_t A = NULL;
  cusparseConstDnMatDescr_t B = NULL;
  cusparseDnMatDescr_t C = NULL;
  cusparseConstDnVecDescr_t xv = NULL;
  cusparseDnVecDescr_t y = NULL;
  void *buf = NULL;
  size_t bytes = 0;
  const cusparseOperation_t N = CUSPARSE_OPERATION_NON_TRANSPOSE;
  mt_status st;
  if ((st = csp_begin(&x, a, dt, err)) != MT_OK) return st;
  CSP_TRY(x.l.cusparseCreateConstCsr(&A, m, k, nnz, rptr, col, val, CUSPARSE_INDEX_32I,
                                     CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO, x.ty),
          "cusparseCreateConstCsr");
  if (n == 1) { /* CSR_ALG1: deterministic, as the runner's poison re-runs need */
    CSP_TRY(x.l.cusparseCreateConstDnVec(&xv, k, b, x.ty), "cusparseCreateConstDnVec");
    CSP_TRY(x.l.cusparseCreateDnVec(&y, m, c, x.ty), "cusparseCreateDnVec");
    CSP_TRY(x.l.cusparseSpMV_bufferSize(x.h, N, x.one, A, xv, x.zero, y, x.ty,
                                        CUSPARSE_SPMV_CSR_ALG1, &bytes),
            "cusparseSpMV_bufferSize");
  } else { /* CSR_ALG1 without transposing A: deterministic */
    CSP_TRY(x.l.cusparseCreateConstDnMat(&B, k, n, k, b, x.ty, CUSPARSE_ORDER_COL),
            "cusparseCreateConstDnMat");
    CSP_TRY(x.l.cusparseCreateDnMat(&C, m, n, m, c, x.ty, CUSPARSE_ORDER_COL),
            "cusparseCreateDnMat");
    CSP_TRY(x.l.cusparseSpMM_bufferSize(x.h, N, N, x.one, A, B, x.zero, C, x.ty,
                                        CUSPARSE_SPMM_CSR_ALG1, &bytes),
            "cusparseSpMM_bufferSize");
  }
  if ((st = csp_malloc(a, &buf, bytes, "cuSPARSE's workspace", err)) != MT_OK) goto out;
  if (n == 1)
    CSP_TRY(x.l.cusparseSpMV(x.h, N, x.one, A, xv, x.zero, y, x.ty, CUSPARSE_SPMV_CSR_ALG1, buf),
            "cusparseSpMV");
  else
    CSP_TRY(x.l.cusparseSpMM(x.h, N, N, x.one, A, B, x.zero, C, x.ty, CUSPARSE_SPMM_CSR_ALG1,
                             buf),
            "cusparseSpMM");
  st = MTC(launched)(a, n == 1 ? "cusparseSpMV" : "cusparseSpMM", err);
out:
  if (buf) cudaFree(buf);
  if (y) x.l.cusparseDestroyDnVec(y);
  if (xv) x.l.cusparseDestroyDnVec(xv);
  if (C) x.l.cusparseDestroyDnMat(C);
  if (B) x.l.cusparseDestroyDnMat(B);
  if (A) x.l.cusparseDestroySpMat(A);
  csp_end(&x);
  return st;
}

extern "C" mt_status MTC(csr_spgemm)(const mtc_arena *a, mt_dtype dt, int64_t m, int64_t k,
                                     int64_t n, int64_t nnz_a, const int32_t *ar,
                                     const int32_t *ac, const void *av, int64_t nnz_b,
                                     const int32_t *br, const int32_t *bc, const void *bv,
                                     void *c, mt_error *err) {
  csp_ctx x;
  cusparseConstSpMatDescr_t A = NULL, B = NULL;
  cusparseSpMatDescr_t C = NULL;
  cusparseSpGEMMDescr_t g = NULL;
  void *buf1 = NULL, *buf2 = NULL, *crp = NULL, *ccol = NULL, *cval = NULL;
  size_t bytes1 = 0, bytes2 = 0, es = dt == MT_float64 ? 8 : 4;
  int64_t cm = 0, cn = 0, cnnz = 0;
  const cusparseOperation_t N = CUSPARSE_OPERATION_NON_TRANSPOSE;
  const cusparseSpGEMMAlg_t alg = CUSPARSE_SPGEMM_ALG1; /* deterministic */
  mt_status st;
  if ((st = csp_begin(&x, a, dt, err)) != MT_OK) return st;
  CSP_TRY(x.l.cusparseCreateConstCsr(&A, m, k, nnz_a, ar, ac, av, CUSPARSE_INDEX_32I,
                                     CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO, x.ty),
          "cusparseCreateConstCsr");
  CSP_TRY(x.l.cusparseCreateConstCsr(&B, k, n, nnz_b, br, bc, bv, CUSPARSE_INDEX_32I,
                                     CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO, x.ty),
          "cusparseCreateConstCsr");
  CSP_TRY(x.l.cusparseCreateCsr(&C, m, n, 0, NULL, NULL, NULL, CUSPARSE_INDEX_32I,
                                CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO, x.ty),
          "cusparseCreateCsr");
  CSP_TRY(x.l.cusparseSpGEMM_createDescr(&g), "cusparseSpGEMM_createDescr");
  CSP_TRY(x.l.cusparseSpGEMM_workEstimation(x.h, N, N, x.one, A, B, x.zero, C, x.ty, alg, g,
                                            &bytes1, NULL),
          "cusparseSpGEMM_workEstimation");
  if ((st = csp_malloc(a, &buf1, bytes1, "cusparseSpGEMM's work estimation", err)) != MT_OK)
    goto out;
  CSP_TRY(x.l.cusparseSpGEMM_workEstimation(x.h, N, N, x.one, A, B, x.zero, C, x.ty, alg, g,
                                            &bytes1, buf1),
          "cusparseSpGEMM_workEstimation");
  CSP_TRY(x.l.cusparseSpGEMM_compute(x.h, N, N, x.one, A, B, x.zero, C, x.ty, alg, g, &bytes2,
                                     NULL),
          "cusparseSpGEMM_compute");
  if ((st = csp_malloc(a, &buf2, bytes2, "cusparseSpGEMM's compute", err)) != MT_OK) goto out;
  CSP_TRY(x.l.cusparseSpGEMM_compute(x.h, N, N, x.one, A, B, x.zero, C, x.ty, alg, g, &bytes2,
                                     buf2),
          "cusparseSpGEMM_compute");
  CSP_TRY(x.l.cusparseSpMatGetSize(C, &cm, &cn, &cnnz), "cusparseSpMatGetSize");
  if ((st = csp_malloc(a, &crp, (size_t)(m + 1) * sizeof(int32_t), "C's row offsets", err)) !=
          MT_OK ||
      (st = csp_malloc(a, &ccol, (size_t)cnnz * sizeof(int32_t), "C's columns", err)) != MT_OK ||
      (st = csp_malloc(a, &cval, (size_t)cnnz * es, "C's values", err)) != MT_OK)
    goto out;
  CSP_TRY(x.l.cusparseCsrSetPointers(C, crp, ccol, cval), "cusparseCsrSetPointers");
  CSP_TRY(x.l.cusparseSpGEMM_copy(x.h, N, N, x.one, A, B, x.zero, C, x.ty, alg, g),
          "cusparseSpGEMM_copy");
  if ((st = MTC(launched)(a, "cusparseSpGEMM", err)) != MT_OK ||
      (st = MTC_LAUNCH(a, csp_zero, m * n, dt, m * n, c)) != MT_OK)
    goto out;
  st = MTC_LAUNCH(a, csp_scatter, m, dt, m, n, (const int32_t *)crp, (const int32_t *)ccol,
                  cval, c);
out:
  if (cval) cudaFree(cval);
  if (ccol) cudaFree(ccol);
  if (crp) cudaFree(crp);
  if (buf2) cudaFree(buf2);
  if (buf1) cudaFree(buf1);
  if (g) x.l.cusparseSpGEMM_destroyDescr(g);
  if (C) x.l.cusparseDestroySpMat(C);
  if (B) x.l.cusparseDestroySpMat(B);
  if (A) x.l.cusparseDestroySpMat(A);
  csp_end(&x);
  return st;
}

#endif

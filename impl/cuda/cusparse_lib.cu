/* cusparse_lib.cu - the products the CUDA backend hands to cuSPARSE
 * (cuda_compat.h, "cuSPARSE"): C = A B with A a CSR matrix of 64-bit
 * indices and B, C dense column-major, through cusparseSpMV (n = 1) or
 * cusparseSpMM, float32 and float64 (the compute type is the dtype).
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
 * are exercised), and cuSPARSE's argument checks (row offsets from 0 to
 * nnz, non-decreasing; column indices in range) as INVALID_VALUE. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_compat.h"

extern "C" int MTC(cusparse_on)(void) {
  const char *v = getenv("MTCS_CUSPARSE");
  return !(v && strcmp(v, "0") == 0);
}

#ifdef MT_CUDA_EMU

template <typename T>
static void emu_csr_mm(int64_t m, int64_t k, int64_t n, const int64_t *rptr, const int64_t *col,
                       const T *val, const T *b, T *c) {
  for (int64_t j = 0; j < n; j++)
    for (int64_t r = 0; r < m; r++) {
      T acc = 0;
#if MT_CUDA_EMU_FAULT == 6 /* tests/cuda_emu_faults.cmake: B and C taken as row-major */
      for (int64_t t = rptr[r]; t < rptr[r + 1]; t++) acc += val[t] * b[col[t] * n + j];
      c[r * n + j] = acc;
#else
      for (int64_t t = rptr[r]; t < rptr[r + 1]; t++) acc += val[t] * b[j * k + col[t]];
      c[j * m + r] = acc;
#endif
    }
}

extern "C" mt_status MTC(csr_mm)(const mtc_arena *a, mt_dtype dt, int64_t m, int64_t k, int64_t n,
                                 int64_t nnz, const int64_t *rptr, const int64_t *col,
                                 const void *val, const void *b, void *c, mt_error *err) {
  const char *fn = n == 1 ? "cusparseSpMV" : "cusparseSpMM";
  int bad = (dt != MT_float32 && dt != MT_float64) || m <= 0 || k <= 0 || n <= 0 || nnz < 0 ||
            rptr[0] != 0 || rptr[m] != nnz;
  for (int64_t r = 0; !bad && r < m; r++) bad = rptr[r + 1] < rptr[r];
  for (int64_t t = 0; !bad && t < nnz; t++) bad = col[t] < 0 || col[t] >= k;
  if (bad)
    return mt_err(err, MT_DEVICE_ERROR,
                  "%s: %s: invalid value (CUSPARSE_STATUS_INVALID_VALUE, emulated: %lld x %lld "
                  "CSR, %lld stored, n %lld)",
                  a->what, fn, (long long)m, (long long)k, (long long)nnz, (long long)n);
  if (dt == MT_float32)
    emu_csr_mm(m, k, n, rptr, col, (const float *)val, (const float *)b, (float *)c);
  else
    emu_csr_mm(m, k, n, rptr, col, (const double *)val, (const double *)b, (double *)c);
  return MTC(launched)(a, fn, err); /* fault 5 fails it like a kernel */
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
  X(cusparseSpMV)

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
      st = csp_fail(&l, a, s_, what, err);                                                         \
      goto out;                                                                                    \
    }                                                                                              \
  } while (0)

extern "C" mt_status MTC(csr_mm)(const mtc_arena *a, mt_dtype dt, int64_t m, int64_t k, int64_t n,
                                 int64_t nnz, const int64_t *rptr, const int64_t *col,
                                 const void *val, const void *b, void *c, mt_error *err) {
  csp_lib l;
  memset(&l, 0, sizeof l);
  cusparseHandle_t h = NULL;
  cusparseConstSpMatDescr_t A = NULL;
  cusparseConstDnMatDescr_t B = NULL;
  cusparseDnMatDescr_t C = NULL;
  cusparseConstDnVecDescr_t x = NULL;
  cusparseDnVecDescr_t y = NULL;
  void *buf = NULL;
  size_t bytes = 0;
  int f64 = dt == MT_float64;
  cudaDataType ty = f64 ? CUDA_R_64F : CUDA_R_32F;
  float one_f = 1.0f, zero_f = 0.0f;
  double one_d = 1.0, zero_d = 0.0;
  const void *one = f64 ? (const void *)&one_d : (const void *)&one_f;
  const void *zero = f64 ? (const void *)&zero_d : (const void *)&zero_f;
  mt_status st;
  if (dt != MT_float32 && dt != MT_float64)
    return mt_err(err, MT_NOT_SUPPORTED, "%s: cuSPARSE products take float32 and float64 only",
                  a->what);
  if ((st = csp_open(&l, a->what, err)) != MT_OK) return st;
  CSP_TRY(l.cusparseCreate(&h), "cusparseCreate");
  CSP_TRY(l.cusparseCreateConstCsr(&A, m, k, nnz, rptr, col, val, CUSPARSE_INDEX_64I,
                                   CUSPARSE_INDEX_64I, CUSPARSE_INDEX_BASE_ZERO, ty),
          "cusparseCreateConstCsr");
  if (n == 1) { /* CSR_ALG1: deterministic, as the runner's poison re-runs need */
    CSP_TRY(l.cusparseCreateConstDnVec(&x, k, b, ty), "cusparseCreateConstDnVec");
    CSP_TRY(l.cusparseCreateDnVec(&y, m, c, ty), "cusparseCreateDnVec");
    CSP_TRY(l.cusparseSpMV_bufferSize(h, CUSPARSE_OPERATION_NON_TRANSPOSE, one, A, x, zero, y, ty,
                                      CUSPARSE_SPMV_CSR_ALG1, &bytes),
            "cusparseSpMV_bufferSize");
  } else { /* CSR_ALG1 without transposing A: deterministic */
    CSP_TRY(l.cusparseCreateConstDnMat(&B, k, n, k, b, ty, CUSPARSE_ORDER_COL),
            "cusparseCreateConstDnMat");
    CSP_TRY(l.cusparseCreateDnMat(&C, m, n, m, c, ty, CUSPARSE_ORDER_COL), "cusparseCreateDnMat");
    CSP_TRY(l.cusparseSpMM_bufferSize(h, CUSPARSE_OPERATION_NON_TRANSPOSE,
                                      CUSPARSE_OPERATION_NON_TRANSPOSE, one, A, B, zero, C, ty,
                                      CUSPARSE_SPMM_CSR_ALG1, &bytes),
            "cusparseSpMM_bufferSize");
  }
  if (bytes) {
    cudaError_t e = cudaMalloc(&buf, bytes);
    if (e != cudaSuccess) {
      buf = NULL;
      st = mt_err(err, e == cudaErrorMemoryAllocation ? MT_OUT_OF_MEMORY : MT_DEVICE_ERROR,
                  "%s: cudaMalloc of cuSPARSE's %zu-byte workspace: %s (%s)", a->what, bytes,
                  cudaGetErrorString(e), cudaGetErrorName(e));
      goto out;
    }
  }
  if (n == 1)
    CSP_TRY(l.cusparseSpMV(h, CUSPARSE_OPERATION_NON_TRANSPOSE, one, A, x, zero, y, ty,
                           CUSPARSE_SPMV_CSR_ALG1, buf),
            "cusparseSpMV");
  else
    CSP_TRY(l.cusparseSpMM(h, CUSPARSE_OPERATION_NON_TRANSPOSE, CUSPARSE_OPERATION_NON_TRANSPOSE,
                           one, A, B, zero, C, ty, CUSPARSE_SPMM_CSR_ALG1, buf),
            "cusparseSpMM");
  st = MTC(launched)(a, n == 1 ? "cusparseSpMV" : "cusparseSpMM", err);
out:
  if (buf) cudaFree(buf);
  if (y) l.cusparseDestroyDnVec(y);
  if (x) l.cusparseDestroyDnVec(x);
  if (C) l.cusparseDestroyDnMat(C);
  if (B) l.cusparseDestroyDnMat(B);
  if (A) l.cusparseDestroySpMat(A);
  if (h) l.cusparseDestroy(h);
  return st;
}

#endif

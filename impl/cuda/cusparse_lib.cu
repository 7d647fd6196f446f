/* cusparse_lib.cu - the products the CUDA backend hands to cuSPARSE
 * (cuda_compat.h, "cuSPARSE"), float32 and float64 (the compute type is the
 * dtype), CSR matrices of 32-bit indices (as torch hands cuSPARSE's
 * SpGEMM; every algorithm takes them): C = A B with B, C dense
 * column-major, through cusparseSpMV (n = 1) or cusparseSpMM; and C = A B
 * with A and B CSR, C scattered into a dense column-major accumulator.
 *
 * One source for the device and the emulation: on the device cuSPARSE is
 * loaded when first called (dlopen of libcusparse.so.<major>, never
 * closed), so that mtcs starts, and runs every other backend, on a machine
 * without it; a failed load is the case's DEVICE_ERROR naming the library
 * and MTCS_CUSPARSE=0 (our own kernels instead). In the emulation
 * (MT_CUDA_EMU) the same calls go to cusparse_emu.h, cuSPARSE's documented
 * contract on the host, which checks every descriptor, workspace and phase
 * these calls hand over, against the call's device memory (the arena and
 * the library's own allocations chained to it). Failures are DEVICE_ERROR /
 * OUT_OF_MEMORY with cuSPARSE's name and message (and, emulated, the
 * reason). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/mt_hd.h"
#include "cuda_compat.h"
#ifdef MT_CUDA_EMU
#include "cusparse_emu.h"
#else
#include <cusparse.h>
#include <dlfcn.h>
#endif

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

/* The functions called, resolved by name from the loaded library (the
 * emulation: cusparse_emu.h's). */
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

#ifdef MT_CUDA_EMU
#define CSP_SONAME "cusparse_emu.h"
static mt_status csp_open(csp_lib *l, const char *what, mt_error *err) {
#define CSP_LOAD(f) l->f = &::f;
  CSP_FUNCS(CSP_LOAD)
#undef CSP_LOAD
  (void)what, (void)err;
  return MT_OK;
}
#else
#define CSP_STR2(x) #x
#define CSP_STR(x) CSP_STR2(x)
#define CSP_SONAME "libcusparse.so." CSP_STR(CUSPARSE_VER_MAJOR)
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
#endif

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

/* One call's library table, handle and scalars (alpha 1, beta 0 in the
 * compute type, which is the dtype), and its device memory: a copy of the
 * call's arena with the library's workspaces and SpGEMM's C chained to it
 * (also), which every launch and check after the library takes. */
#define CSP_ARENAS 3
typedef struct {
  csp_lib l;
  cusparseHandle_t h;
  cudaDataType ty;
  float one_f, zero_f;
  double one_d, zero_d;
  const void *one, *zero;
  mtc_arena mem, lib[CSP_ARENAS];
  int n_lib;
} csp_ctx;

static mt_status csp_fail(const csp_ctx *x, cusparseStatus_t s, const char *call, mt_error *err) {
  mt_status st = s == CUSPARSE_STATUS_ALLOC_FAILED || s == CUSPARSE_STATUS_INSUFFICIENT_RESOURCES
                     ? MT_OUT_OF_MEMORY
                     : MT_DEVICE_ERROR;
#ifdef MT_CUDA_EMU
  const char *why = mt_csp_emu_why(x->h);
  if (*why)
    return mt_err(err, st, "%s: %s: %s (%s; emulated: %s)", x->mem.what, call,
                  x->l.cusparseGetErrorString(s), x->l.cusparseGetErrorName(s), why);
#endif
  return mt_err(err, st, "%s: %s: %s (%s)", x->mem.what, call, x->l.cusparseGetErrorString(s),
                x->l.cusparseGetErrorName(s));
}

#define CSP_TRY(call, what)                                                                        \
  do {                                                                                             \
    cusparseStatus_t s_ = (call);                                                                  \
    if (s_ != CUSPARSE_STATUS_SUCCESS) {                                                           \
      st = csp_fail(&x, s_, what, err);                                                            \
      goto out;                                                                                    \
    }                                                                                              \
  } while (0)

#ifdef MT_CUDA_EMU
/* the emulated library's view of the call's device memory: [p, p + bytes) inside one of
 * its allocations, and their reach around the library's host loops */
static int csp_emu_dev(const void *ctx, const void *p, size_t bytes) {
  for (const mtc_arena *a = (const mtc_arena *)ctx; a; a = a->also)
    if (a->base && (const char *)p >= a->base && bytes <= a->size &&
        (size_t)((const char *)p - a->base) <= a->size - bytes)
      return 1;
  return 0;
}
static void csp_emu_reach(const void *ctx, int on) { MTC(emu_reach)((const mtc_arena *)ctx, on); }
#endif

static mt_status csp_begin(csp_ctx *x, const mtc_arena *a, mt_dtype dt, mt_error *err) {
  memset(x, 0, sizeof *x);
  x->mem = *a;
  if (dt != MT_float32 && dt != MT_float64)
    return mt_err(err, MT_NOT_SUPPORTED, "%s: cuSPARSE products take float32 and float64 only",
                  a->what);
  int f64 = dt == MT_float64;
  x->ty = f64 ? CUDA_R_64F : CUDA_R_32F;
  x->one_f = 1.0f, x->one_d = 1.0;
  x->one = f64 ? (const void *)&x->one_d : (const void *)&x->one_f;
  x->zero = f64 ? (const void *)&x->zero_d : (const void *)&x->zero_f;
  mt_status st = csp_open(&x->l, a->what, err);
  if (st != MT_OK) return st;
  cusparseStatus_t s = x->l.cusparseCreate(&x->h);
  if (s != CUSPARSE_STATUS_SUCCESS) {
    x->h = NULL;
    return csp_fail(x, s, "cusparseCreate", err);
  }
#ifdef MT_CUDA_EMU
  mt_csp_emu_mem m = {csp_emu_dev, csp_emu_reach, &x->mem};
  mt_csp_emu_memory(x->h, &m);
#endif
  return MT_OK;
}

static void csp_end(csp_ctx *x) {
  if (x->h) x->l.cusparseDestroy(x->h);
  while (x->n_lib > 0) MTC(arena_close)(&x->lib[--x->n_lib]);
}

/* A device allocation of the library's, of total bytes (arena_add's count),
 * chained to the call's memory: *w. */
static mt_status csp_arena(csp_ctx *x, size_t total, mtc_arena **w, mt_error *err) {
  *w = NULL;
  if (x->n_lib == CSP_ARENAS)
    return mt_err(err, MT_DEVICE_ERROR, "%s: cuSPARSE: more than %d allocations", x->mem.what,
                  CSP_ARENAS);
  mtc_arena *n = &x->lib[x->n_lib];
  mt_status st = MTC(arena_open)(n, total, x->mem.what, err);
  if (st != MT_OK) return st;
  x->n_lib++;
  n->also = x->mem.also;
  x->mem.also = n;
  *w = n;
  return MT_OK;
}
/* A workspace of the bytes a bufferSize call asked for (NULL when 0). */
static mt_status csp_ws(csp_ctx *x, size_t bytes, void **buf, mt_error *err) {
  size_t total = 0;
  mtc_arena *w;
  *buf = NULL;
  if (!bytes) return MT_OK;
  if (bytes > INT64_MAX || MTC(arena_add)(&total, (int64_t)bytes, 1))
    return mt_err(err, MT_OUT_OF_MEMORY, "%s: cuSPARSE's workspace of %zu bytes", x->mem.what,
                  bytes);
  mt_status st = csp_arena(x, total, &w, err);
  if (st == MT_OK) *buf = MTC(arena_take)(w, (int64_t)bytes, 1);
  return st;
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
  /* B and C column-major, leading dimensions k and m */
#if MT_CUDA_EMU_FAULT == 6 /* tests/cuda_emu_faults.cmake: B and C declared row-major */
  const cusparseOrder_t order = CUSPARSE_ORDER_ROW;
  const int64_t ldb = n, ldc = n;
#else
  const cusparseOrder_t order = CUSPARSE_ORDER_COL;
  const int64_t ldb = k, ldc = m;
#endif
  mt_status st = csp_begin(&x, a, dt, err);
  if (st != MT_OK) goto out;
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
    CSP_TRY(x.l.cusparseCreateConstDnMat(&B, k, n, ldb, b, x.ty, order),
            "cusparseCreateConstDnMat");
    CSP_TRY(x.l.cusparseCreateDnMat(&C, m, n, ldc, c, x.ty, order), "cusparseCreateDnMat");
    CSP_TRY(x.l.cusparseSpMM_bufferSize(x.h, N, N, x.one, A, B, x.zero, C, x.ty,
                                        CUSPARSE_SPMM_CSR_ALG1, &bytes),
            "cusparseSpMM_bufferSize");
  }
  if ((st = csp_ws(&x, bytes, &buf, err)) != MT_OK) goto out;
  if (n == 1)
    CSP_TRY(x.l.cusparseSpMV(x.h, N, x.one, A, xv, x.zero, y, x.ty, CUSPARSE_SPMV_CSR_ALG1, buf),
            "cusparseSpMV");
  else
    CSP_TRY(x.l.cusparseSpMM(x.h, N, N, x.one, A, B, x.zero, C, x.ty, CUSPARSE_SPMM_CSR_ALG1,
                             buf),
            "cusparseSpMM");
  /* the library's errors, then (emulated) the guards of every allocation */
  st = MTC(launched)(&x.mem, n == 1 ? "cusparseSpMV" : "cusparseSpMM", err);
out:
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
  size_t bytes1 = 0, bytes2 = 0, total = 0, es = dt == MT_float64 ? 8 : 4;
  int64_t cm = 0, cn = 0, cnnz = 0;
  mtc_arena *w = NULL;
  const cusparseOperation_t N = CUSPARSE_OPERATION_NON_TRANSPOSE;
  const cusparseSpGEMMAlg_t alg = CUSPARSE_SPGEMM_ALG1; /* deterministic */
  mt_status st = csp_begin(&x, a, dt, err);
  if (st != MT_OK) goto out;
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
  /* each phase asked for its buffer's size (a NULL buffer), then given it: a buffer is never
     NULL when its size is not 0 (a NULL one would only ask again) */
  CSP_TRY(x.l.cusparseSpGEMM_workEstimation(x.h, N, N, x.one, A, B, x.zero, C, x.ty, alg, g,
                                            &bytes1, NULL),
          "cusparseSpGEMM_workEstimation");
  if ((st = csp_ws(&x, bytes1, &buf1, err)) != MT_OK) goto out;
  CSP_TRY(x.l.cusparseSpGEMM_workEstimation(x.h, N, N, x.one, A, B, x.zero, C, x.ty, alg, g,
                                            &bytes1, buf1),
          "cusparseSpGEMM_workEstimation");
  CSP_TRY(x.l.cusparseSpGEMM_compute(x.h, N, N, x.one, A, B, x.zero, C, x.ty, alg, g, &bytes2,
                                     NULL),
          "cusparseSpGEMM_compute");
  if ((st = csp_ws(&x, bytes2, &buf2, err)) != MT_OK) goto out;
  CSP_TRY(x.l.cusparseSpGEMM_compute(x.h, N, N, x.one, A, B, x.zero, C, x.ty, alg, g, &bytes2,
                                     buf2),
          "cusparseSpGEMM_compute");
  CSP_TRY(x.l.cusparseSpMatGetSize(C, &cm, &cn, &cnnz), "cusparseSpMatGetSize");
  /* C's arrays in one allocation; an empty C's columns and values still point into it */
  if (MTC(arena_add)(&total, m + 1, sizeof(int32_t)) ||
      MTC(arena_add)(&total, cnnz, sizeof(int32_t)) || MTC(arena_add)(&total, cnnz, es)) {
    st = mt_err(err, MT_OUT_OF_MEMORY, "%s: cusparseSpGEMM: C of %lld entries", a->what,
                (long long)cnnz);
    goto out;
  }
  if ((st = csp_arena(&x, total, &w, err)) != MT_OK) goto out;
  crp = MTC(arena_take)(w, m + 1, sizeof(int32_t));
  ccol = MTC(arena_take)(w, cnnz, sizeof(int32_t));
  cval = MTC(arena_take)(w, cnnz, es);
  CSP_TRY(x.l.cusparseCsrSetPointers(C, crp, ccol, cval), "cusparseCsrSetPointers");
  CSP_TRY(x.l.cusparseSpGEMM_copy(x.h, N, N, x.one, A, B, x.zero, C, x.ty, alg, g),
          "cusparseSpGEMM_copy");
  if ((st = MTC(launched)(&x.mem, "cusparseSpGEMM", err)) != MT_OK ||
      (st = MTC_LAUNCH(&x.mem, csp_zero, m * n, dt, m * n, c)) != MT_OK)
    goto out;
  st = MTC_LAUNCH(&x.mem, csp_scatter, m, dt, m, n, (const int32_t *)crp, (const int32_t *)ccol,
                  (const void *)cval, c);
out:
  if (g) x.l.cusparseSpGEMM_destroyDescr(g);
  if (C) x.l.cusparseDestroySpMat(C);
  if (B) x.l.cusparseDestroySpMat(B);
  if (A) x.l.cusparseDestroySpMat(A);
  csp_end(&x);
  (void)cm, (void)cn;
  return st;
}

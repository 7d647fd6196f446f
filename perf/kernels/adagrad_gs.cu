/* adagrad_gs.cu - the baseline the fused sparse step is judged against
 * (adagrad_cuda.h, "cuSPARSE gather/scatter pipeline"): Adagrad's sparse
 * COO step (ADA-2, ADA-3's COO form) the way a library built from cuSPARSE
 * primitives runs it, in five launches:
 *   cusparseGather   s[idx] -> sv          cusparseGather   p[idx] -> pv
 *   one kernel on the nnz compact values:  sv += g*g; pv += nclr * (g / (sqrt(sv) + eps))
 *   cusparseScatter  sv -> s[idx]          cusparseScatter  pv -> p[idx]
 * against the fused step (adagrad_step.cu, coo_k: one launch, each entry's
 * p and s read and written once). The same arithmetic as coo_k, its very
 * function (adagrad_entry.cuh; -fmad=false here too), so on the same
 * coalesced grad both are bit-identical to the CPU reference: the
 * benchmark checks the pipeline like every other device step.
 *
 * Its own file: only executables that time the baseline need libcusparse
 * (linked shared: CUDA 13 ships no static archive; spec/gpu-machine.md says
 * how the GPU bundle finds it). */
#include <stdlib.h>

#include "cuda_emu_runtime.h" /* CUDA's runtime, or its emulation (MT_CUDA_EMU) */
#ifndef MT_CUDA_EMU
#include <cusparse.h>
#endif

#include "adagrad_cuda.h"
#include "adagrad_entry.cuh"

struct mt_cuda_gs {
  cusparseHandle_t h;
  cusparseSpVecDescr_t sv, pv;   /* idx with the compact s and p values */
  cusparseDnVecDescr_t s, p;     /* the dense state_sum and param */
  void *sbuf, *pbuf;             /* the compact values (nnz each) */
  int64_t nnz;
  int f64;
};

static mt_status gs_cuda_fail(mt_error *err, cudaError_t e, const char *what) {
  return mt_err(err, e == cudaErrorMemoryAllocation ? MT_OUT_OF_MEMORY : MT_DEVICE_ERROR,
                "cuda: %s: %s", what, cudaGetErrorString(e));
}

static mt_status gs_sparse_fail(mt_error *err, cusparseStatus_t e, const char *what) {
  return mt_err(err, e == CUSPARSE_STATUS_ALLOC_FAILED ? MT_OUT_OF_MEMORY : MT_DEVICE_ERROR,
                "cusparse: %s: %s", what, cusparseGetErrorString(e));
}

#define GS_CU(call, what)                                                                          \
  do {                                                                                             \
    cudaError_t e_ = (call);                                                                       \
    if (e_ != cudaSuccess) {                                                                       \
      st = gs_cuda_fail(err, e_, what);                                                            \
      goto fail;                                                                                   \
    }                                                                                              \
  } while (0)
#define GS_SP(call, what)                                                                          \
  do {                                                                                             \
    cusparseStatus_t e_ = (call);                                                                  \
    if (e_ != CUSPARSE_STATUS_SUCCESS) {                                                           \
      st = gs_sparse_fail(err, e_, what);                                                          \
      goto fail;                                                                                   \
    }                                                                                              \
  } while (0)

extern "C" void mt_cuda_gs_free(mt_cuda_gs *g) {
  if (!g) return;
  if (g->sv) cusparseDestroySpVec(g->sv);
  if (g->pv) cusparseDestroySpVec(g->pv);
  if (g->s) cusparseDestroyDnVec(g->s);
  if (g->p) cusparseDestroyDnVec(g->p);
  if (g->h) cusparseDestroy(g->h);
  cudaFree(g->sbuf);
  cudaFree(g->pbuf);
  free(g);
}

extern "C" mt_status mt_cuda_gs_new(mt_cuda_gs **out, void *p, void *s, int64_t n,
                                    int64_t *idx, int64_t nnz, int f64, mt_error *err) {
  mt_status st = MT_OK;
  size_t es = f64 ? sizeof(double) : sizeof(float);
  cudaDataType vt = f64 ? CUDA_R_64F : CUDA_R_32F;
  mt_cuda_gs *g = (mt_cuda_gs *)calloc(1, sizeof *g);
  *out = NULL;
  if (!g) return mt_err(err, MT_OUT_OF_MEMORY, "cusparse pipeline: out of host memory");
  if (nnz < 1 || n < 1) {
    st = mt_err(err, MT_INVALID_ARGUMENT, "cusparse pipeline: nnz %lld, n %lld (need >= 1)",
                (long long)nnz, (long long)n);
    goto fail;
  }
  g->nnz = nnz, g->f64 = f64;
  GS_SP(cusparseCreate(&g->h), "cusparseCreate");
  GS_CU(cudaMalloc(&g->sbuf, (size_t)nnz * es), "cudaMalloc (compact state_sum)");
  GS_CU(cudaMalloc(&g->pbuf, (size_t)nnz * es), "cudaMalloc (compact param)");
  GS_SP(cusparseCreateSpVec(&g->sv, n, nnz, idx, g->sbuf, CUSPARSE_INDEX_64I,
                            CUSPARSE_INDEX_BASE_ZERO, vt),
        "cusparseCreateSpVec (state_sum)");
  GS_SP(cusparseCreateSpVec(&g->pv, n, nnz, idx, g->pbuf, CUSPARSE_INDEX_64I,
                            CUSPARSE_INDEX_BASE_ZERO, vt),
        "cusparseCreateSpVec (param)");
  GS_SP(cusparseCreateDnVec(&g->s, n, s, vt), "cusparseCreateDnVec (state_sum)");
  GS_SP(cusparseCreateDnVec(&g->p, n, p, vt), "cusparseCreateDnVec (param)");
  *out = g;
  return MT_OK;
fail:
  mt_cuda_gs_free(g);
  return st;
}

/* coo_k's arithmetic (adagrad_entry.cuh) on the compact values (masked: zero
 * values skipped, their gathered p and s scattered back unchanged) */
template <typename T>
__global__ void gs_k(T *pv, T *sv, const T *v, int64_t nnz, T nclr, T eps, int max, int masked) {
  MT_GRID_STRIDE(k, nnz) {
    if (masked && !(v[k] != 0)) continue;
    mt_ada_entry(&pv[k], &sv[k], v[k], nclr, eps, max);
  }
}

extern "C" mt_status mt_cuda_adagrad_coo_gs(mt_cuda_gs *g, const void *vals, int masked,
                                            const mt_adagrad_hparams *hp, mt_error *err) {
  mt_status st = mt_adagrad_check("cuda_adagrad_coo_gs", hp, g->nnz, 0, err);
  if (st != MT_OK) return st;
  unsigned grid = mt_grid_for(g->nnz);
  GS_SP(cusparseGather(g->h, g->s, g->sv), "cusparseGather (state_sum)");
  GS_SP(cusparseGather(g->h, g->p, g->pv), "cusparseGather (param)");
  if (g->f64)
    MT_KLAUNCH(gs_k<double>, grid, 256, (double *)g->pbuf, (double *)g->sbuf,
               (const double *)vals, g->nnz, -hp->clr, hp->eps, hp->maximize != 0, masked != 0);
  else
    MT_KLAUNCH(gs_k<float>, grid, 256, (float *)g->pbuf, (float *)g->sbuf, (const float *)vals,
               g->nnz, (float)-hp->clr, (float)hp->eps, hp->maximize != 0, masked != 0);
  GS_CU(cudaGetLastError(), "pipeline step kernel");
  GS_SP(cusparseScatter(g->h, g->sv, g->s), "cusparseScatter (state_sum)");
  GS_SP(cusparseScatter(g->h, g->pv, g->p), "cusparseScatter (param)");
  return MT_OK;
fail:
  return st;
}

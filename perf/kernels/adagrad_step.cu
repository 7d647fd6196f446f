/* adagrad_step.cu - the Adagrad steps and the stream kernel on a CUDA device
 * (adagrad_cuda.h). One thread per element (dense paths) or per entry
 * (COO), grid-stride loops; each line below mirrors a line of
 * perf/kernels/adagrad_step.c, and this file is compiled with -fmad=false so
 * that a * b + c is never fused where the CPU reference does not fuse it.
 * Rule ids: ADA-1 (dense), ADA-2 (sparse), ADA-3 (masked). */
#include <stdio.h>
#include <stdlib.h>

#include "cuda_emu_runtime.h" /* CUDA's runtime, or its emulation (MT_CUDA_EMU) */

#include "adagrad_cuda.h"
#include "adagrad_entry.cuh"

/* ---- errors ------------------------------------------------------------- */

static mt_status cuda_fail(mt_error *err, cudaError_t e, const char *what) {
  mt_status st = e == cudaErrorMemoryAllocation ? MT_OUT_OF_MEMORY : MT_DEVICE_ERROR;
  return mt_err(err, st, "cuda: %s: %s", what, cudaGetErrorString(e));
}

#define CU_TRY(call, what)                                                                         \
  do {                                                                                             \
    cudaError_t e_ = (call);                                                                       \
    if (e_ != cudaSuccess) return cuda_fail(err, e_, what);                                        \
  } while (0)

/* ---- device, memory, timing --------------------------------------------- */

extern "C" int mt_cuda_probe(char *info, size_t len) {
  int n = 0;
  cudaError_t e = cudaGetDeviceCount(&n);
  if (e != cudaSuccess || n == 0) {
    snprintf(info, len, "no CUDA device (%s)",
             e != cudaSuccess ? cudaGetErrorString(e) : "none found");
    return -1;
  }
  cudaDeviceProp pr;
  if ((e = cudaGetDeviceProperties(&pr, 0)) != cudaSuccess) {
    snprintf(info, len, "CUDA device 0: %s", cudaGetErrorString(e));
    return -1;
  }
  snprintf(info, len, "%s, %.1f GiB, %d SMs, L2 %d MiB, cc %d.%d", pr.name,
           (double)pr.totalGlobalMem / (1 << 30), pr.multiProcessorCount, pr.l2CacheSize >> 20,
           pr.major, pr.minor);
  return 0;
}

extern "C" mt_status mt_cuda_malloc(void **dev, size_t bytes, mt_error *err) {
  *dev = NULL;
  CU_TRY(cudaMalloc(dev, bytes ? bytes : 1), "cudaMalloc");
  return MT_OK;
}

extern "C" void mt_cuda_free(void *dev) {
  if (dev) cudaFree(dev);
}

extern "C" mt_status mt_cuda_upload(void *dev, const void *host, size_t bytes, mt_error *err) {
  CU_TRY(cudaMemcpy(dev, host, bytes, cudaMemcpyHostToDevice), "upload");
  return MT_OK;
}

extern "C" mt_status mt_cuda_download(void *host, const void *dev, size_t bytes, mt_error *err) {
  CU_TRY(cudaMemcpy(host, dev, bytes, cudaMemcpyDeviceToHost), "download");
  return MT_OK;
}

extern "C" mt_status mt_cuda_sync(mt_error *err) {
  CU_TRY(cudaDeviceSynchronize(), "synchronize");
  return MT_OK;
}

struct mt_cuda_timer {
  cudaEvent_t a, b;
};

extern "C" mt_status mt_cuda_timer_new(mt_cuda_timer **t, mt_error *err) {
  *t = (mt_cuda_timer *)calloc(1, sizeof **t);
  if (!*t) return mt_err(err, MT_OUT_OF_MEMORY, "cuda: timer");
  cudaError_t e = cudaEventCreate(&(*t)->a);
  if (e == cudaSuccess && (e = cudaEventCreate(&(*t)->b)) != cudaSuccess) cudaEventDestroy((*t)->a);
  if (e != cudaSuccess) {
    free(*t);
    *t = NULL;
    return cuda_fail(err, e, "cudaEventCreate");
  }
  return MT_OK;
}

extern "C" void mt_cuda_timer_free(mt_cuda_timer *t) {
  if (!t) return;
  cudaEventDestroy(t->a);
  cudaEventDestroy(t->b);
  free(t);
}

extern "C" void mt_cuda_timer_start(mt_cuda_timer *t) { cudaEventRecord(t->a, 0); }

extern "C" mt_status mt_cuda_timer_stop(mt_cuda_timer *t, double *seconds, mt_error *err) {
  float ms = 0;
  CU_TRY(cudaEventRecord(t->b, 0), "cudaEventRecord");
  CU_TRY(cudaEventSynchronize(t->b), "the timed work");
  CU_TRY(cudaEventElapsedTime(&ms, t->a, t->b), "cudaEventElapsedTime");
  *seconds = ms * 1e-3;
  return MT_OK;
}

extern "C" mt_status mt_cuda_copy_bandwidth(size_t bytes, int reps, double *bytes_per_second,
                                            mt_error *err) {
  void *a = NULL, *b = NULL;
  mt_cuda_timer *t = NULL;
  mt_status st = MT_OK;
  double best = 0;
  *bytes_per_second = 0;
  if ((st = mt_cuda_malloc(&a, bytes, err)) != MT_OK || (st = mt_cuda_malloc(&b, bytes, err)) ||
      (st = mt_cuda_timer_new(&t, err)) != MT_OK)
    goto out;
  for (int r = 0; r < (reps > 0 ? reps : 1) + 1; r++) { /* the first is a warm-up */
    double sec = 0;
    mt_cuda_timer_start(t);
    cudaError_t e = cudaMemcpy(b, a, bytes, cudaMemcpyDeviceToDevice);
    if (e != cudaSuccess) {
      st = cuda_fail(err, e, "device-to-device copy");
      goto out;
    }
    if ((st = mt_cuda_timer_stop(t, &sec, err)) != MT_OK) goto out;
    if (r > 0 && sec > 0 && 2.0 * (double)bytes / sec > best) best = 2.0 * (double)bytes / sec;
  }
  *bytes_per_second = best;
out:
  mt_cuda_timer_free(t);
  mt_cuda_free(a);
  mt_cuda_free(b);
  return st;
}

/* ---- kernels ------------------------------------------------------------- */

/* ADA-1 */
template <typename T>
__global__ void dense_k(T *p, T *s, const T *g, int64_t n, T nclr, T eps, T wd, int max,
                        int use_wd) {
  MT_GRID_STRIDE(i, n) {
    T gi = max ? -g[i] : g[i];
    if (use_wd) gi = fma(wd, p[i], gi); /* grad.add(param, alpha=weight_decay) */
    T sn = s[i] + gi * gi;              /* state_sum.addcmul_(grad, grad) */
    s[i] = sn;
    T sd = sqrt(sn) + eps;              /* state_sum.sqrt().add_(eps) */
    p[i] = p[i] + nclr * gi / sd;       /* param.addcdiv_(grad, std, value=-clr) */
  }
}

/* ADA-2 (and ADA-3's COO form when masked: zero values skipped) */
template <typename T>
__global__ void coo_k(T *p, T *s, const int64_t *idx, const T *v, int64_t nnz, T nclr, T eps,
                      int max, int masked) {
  MT_GRID_STRIDE(k, nnz) {
    if (masked && !(v[k] != 0)) continue;
    int64_t j = idx[k];
    mt_ada_entry(&p[j], &s[j], v[k], nclr, eps, max);
  }
}

/* ADA-3, dense storage: masked-out elements untouched, their data unread */
template <typename T>
__global__ void masked_k(T *p, T *s, const T *g, const uint8_t *mask, int64_t n, T nclr, T eps,
                         int max) {
  MT_GRID_STRIDE(i, n) {
    if (!mask[i]) continue;
    T gi = max ? -g[i] : g[i];
    T sn = s[i] + gi * gi;
    T sd = sqrt(sn) + eps;
    p[i] = fma(nclr, gi / sd, p[i]);
    s[i] = sn;
  }
}

template <typename T> __global__ void stream_k(T *p, T *s, const T *g, int64_t n, T k) {
  MT_GRID_STRIDE(i, n) {
    p[i] = p[i] + g[i] * k;
    s[i] = s[i] + g[i];
  }
}

/* ---- launches ------------------------------------------------------------ */

static mt_status launched(const char *what, mt_error *err) {
  CU_TRY(cudaGetLastError(), what);
  return MT_OK;
}

/* scalars rounded as the CPU kernels round them (job_hparams there) */
#define MT__CUDA_ENTRIES(T, SFX)                                                                   \
  extern "C" mt_status mt_cuda_adagrad_dense_##SFX(T *p, T *s, const T *g, int64_t n,              \
                                                   const mt_adagrad_hparams *hp, mt_error *err) {  \
    mt_status st = mt_adagrad_check("cuda_adagrad_dense_" #SFX, hp, n, 1, err);                    \
    if (st != MT_OK || n == 0) return st;                                                          \
    MT_KLAUNCH(dense_k<T>, mt_grid_for(n), 256, p, s, g, n, (T)-hp->clr, (T)hp->eps,               \
               (T)hp->weight_decay, hp->maximize != 0, hp->weight_decay != 0.0);                   \
    return launched("dense step", err);                                                            \
  }                                                                                                \
  extern "C" mt_status mt_cuda_adagrad_coo_##SFX(T *p, T *s, const int64_t *idx, const T *vals,    \
                                                 int64_t nnz, int masked,                          \
                                                 const mt_adagrad_hparams *hp, mt_error *err) {    \
    mt_status st = mt_adagrad_check("cuda_adagrad_coo_" #SFX, hp, nnz, 0, err);                    \
    if (st != MT_OK || nnz == 0) return st;                                                        \
    MT_KLAUNCH(coo_k<T>, mt_grid_for(nnz), 256, p, s, idx, vals, nnz, (T)-hp->clr, (T)hp->eps,     \
               hp->maximize != 0, masked != 0);                                                    \
    return launched("coo step", err);                                                              \
  }                                                                                                \
  extern "C" mt_status mt_cuda_adagrad_masked_dense_##SFX(T *p, T *s, const T *g,                  \
                                                          const uint8_t *mask, int64_t n,          \
                                                          const mt_adagrad_hparams *hp,            \
                                                          mt_error *err) {                         \
    mt_status st = mt_adagrad_check("cuda_adagrad_masked_dense_" #SFX, hp, n, 0, err);             \
    if (st != MT_OK || n == 0) return st;                                                          \
    MT_KLAUNCH(masked_k<T>, mt_grid_for(n), 256, p, s, g, mask, n, (T)-hp->clr, (T)hp->eps,        \
               hp->maximize != 0);                                                                 \
    return launched("masked dense step", err);                                                     \
  }                                                                                                \
  extern "C" mt_status mt_cuda_stream_##SFX(T *p, T *s, const T *g, int64_t n, T k,                \
                                            mt_error *err) {                                       \
    if (n <= 0) return MT_OK;                                                                      \
    MT_KLAUNCH(stream_k<T>, mt_grid_for(n), 256, p, s, g, n, k);                                   \
    return launched("stream kernel", err);                                                         \
  }

MT__CUDA_ENTRIES(float, f32)
MT__CUDA_ENTRIES(double, f64)

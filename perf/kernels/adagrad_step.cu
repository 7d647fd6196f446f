/* adagrad_step.cu - the Adagrad steps and the stream kernel on a CUDA device
 * (adagrad_cuda.h). One thread per element (dense paths), per entry (COO)
 * or per run of equal indices (uncoalesced COO, after a CUB radix sort),
 * grid-stride loops; each line below mirrors a line of
 * perf/kernels/adagrad_step.c, and this file is compiled with -fmad=false so
 * that a * b + c is never fused where the CPU reference does not fuse it.
 * Rule ids: ADA-1 (dense), ADA-2 (sparse), ADA-3 (masked). */
#include <stdio.h>
#include <stdlib.h>

#include "cuda_emu_runtime.h" /* CUDA's runtime, or its emulation (MT_CUDA_EMU) */
#ifndef MT_CUDA_EMU /* the emulation has CUB's SortPairs as a host stable sort */
#include <cub/device/device_radix_sort.cuh>
#endif

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

/* ADA-2 on an uncoalesced grad, after the sort (key: the sorted indices,
 * perm: their entries' positions in v, NULL when v is in key's order): one
 * thread per run of equal indices, its head's, sums the run (the
 * reference's coalesce) and updates that element */
template <typename T>
__global__ void dup_k(T *p, T *s, const int64_t *key, const int32_t *perm, const T *v, int64_t nnz,
                      T nclr, T eps, int max) {
  MT_GRID_STRIDE(k, nnz) {
    int64_t j = key[k];
    if (k > 0 && key[k - 1] == j) continue; /* inside a run: its head's thread has it */
    mt_ada_entry(&p[j], &s[j], mt_run_sum(key, perm, v, k, nnz), nclr, eps, max);
  }
}

/* the positions 0..n-1: the sort's values in */
__global__ void iota_k(int32_t *a, int64_t n) {
  MT_GRID_STRIDE(i, n) a[i] = (int32_t)i;
}

template <typename T> __global__ void stream_k(T *p, T *s, const T *g, int64_t n, T k) {
  MT_GRID_STRIDE(i, n) {
    p[i] = p[i] + g[i] * k;
    s[i] = s[i] + g[i];
  }
}

/* The sparse paths' reference (mt_touch_step_* on the CPU): the element COO
 * step's access pattern (read and write p and s at each entry's index) with
 * the stream kernel's arithmetic, so that the fused step's time can be set
 * against the pattern's own cost on the same entries */
template <typename T>
__global__ void touch_k(T *p, T *s, const int64_t *idx, const T *v, int64_t nnz, T k) {
  MT_GRID_STRIDE(e, nnz) {
    int64_t i = idx[e];
    s[i] = s[i] + v[e];
    p[i] = p[i] + v[e] * k;
  }
}

/* ---- launches ------------------------------------------------------------ */

static mt_status launched(const char *what, mt_error *err) {
  CU_TRY(cudaGetLastError(), what);
  return MT_OK;
}

/* ---- the uncoalesced step's sort ------------------------------------------ */

struct mt_cuda_dup {
  int64_t n, cap;
  int end_bit;          /* the bits of the largest index, n - 1 (at least 1) */
  int64_t *keys;        /* the indices, sorted */
  int32_t *perm, *iota; /* their positions in the input; 0..cap-1 */
  void *tmp;            /* CUB's temporary storage, for cap entries */
  size_t tmp_bytes;
};

extern "C" void mt_cuda_dup_free(mt_cuda_dup *d) {
  if (!d) return;
  mt_cuda_free(d->keys);
  mt_cuda_free(d->perm);
  mt_cuda_free(d->iota);
  mt_cuda_free(d->tmp);
  free(d);
}

extern "C" int64_t mt_cuda_dup_bytes(const mt_cuda_dup *d) {
  return d ? d->cap * (8 + 4 + 4) + (int64_t)d->tmp_bytes : 0;
}

extern "C" mt_status mt_cuda_dup_new(mt_cuda_dup **dp, int64_t n, int64_t cap, mt_error *err) {
  mt_status st = MT_OK;
  cudaError_t e;
  *dp = NULL;
  if (n < 1 || cap < 1 || cap > INT32_MAX)
    return mt_err(err, MT_INVALID_ARGUMENT,
                  "cuda_dup_new: n = %lld, capacity %lld (want n >= 1 and 1 <= capacity < 2^31)",
                  (long long)n, (long long)cap);
  mt_cuda_dup *d = (mt_cuda_dup *)calloc(1, sizeof *d);
  if (!d) return mt_err(err, MT_OUT_OF_MEMORY, "cuda: the sort's buffers");
  d->n = n, d->cap = cap, d->end_bit = 1;
  while (d->end_bit < 63 && ((n - 1) >> d->end_bit)) d->end_bit++;
  if ((st = mt_cuda_malloc((void **)&d->keys, (size_t)cap * 8, err)) != MT_OK ||
      (st = mt_cuda_malloc((void **)&d->perm, (size_t)cap * 4, err)) != MT_OK ||
      (st = mt_cuda_malloc((void **)&d->iota, (size_t)cap * 4, err)) != MT_OK)
    goto fail;
  e = cub::DeviceRadixSort::SortPairs(NULL, d->tmp_bytes, (const int64_t *)d->keys, d->keys,
                                      (const int32_t *)d->iota, d->perm, (int)cap, 0, d->end_bit);
  if (e != cudaSuccess) {
    st = cuda_fail(err, e, "radix sort (its storage size)");
    goto fail;
  }
  if ((st = mt_cuda_malloc(&d->tmp, d->tmp_bytes, err)) != MT_OK) goto fail;
  MT_KLAUNCH(iota_k, mt_grid_for(cap), 256, d->iota, cap);
  if ((st = launched("the sort's positions", err)) != MT_OK) goto fail;
  *dp = d;
  return MT_OK;
fail:
  mt_cuda_dup_free(d);
  return st;
}

/* the stable sort of (idx[k], k) by index into d->keys, d->perm */
static mt_status dup_sort(mt_cuda_dup *d, const int64_t *idx, int64_t nnz, const char *name,
                          mt_error *err) {
  if (!d)
    return mt_err(err, MT_INVALID_ARGUMENT, "%s: unsorted entries need the sort's buffers "
                  "(d is NULL)", name);
  if (nnz > d->cap)
    return mt_err(err, MT_INVALID_ARGUMENT, "%s: %lld entries, the sort's buffers hold %lld",
                  name, (long long)nnz, (long long)d->cap);
  size_t need = 0, have = d->tmp_bytes;
  CU_TRY(cub::DeviceRadixSort::SortPairs(NULL, need, idx, d->keys, (const int32_t *)d->iota,
                                         d->perm, (int)nnz, 0, d->end_bit),
         "radix sort (its storage size)");
  if (need > have)
    return mt_err(err, MT_DEVICE_ERROR, "%s: the radix sort of %lld entries needs %zu bytes of "
                  "storage, %zu were made for %lld", name, (long long)nnz, need, have,
                  (long long)d->cap);
  CU_TRY(cub::DeviceRadixSort::SortPairs(d->tmp, have, idx, d->keys, (const int32_t *)d->iota,
                                         d->perm, (int)nnz, 0, d->end_bit),
         "radix sort");
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
  extern "C" mt_status mt_cuda_adagrad_coo_dup_##SFX(T *p, T *s, const int64_t *idx, const T *vals,\
                                                     int64_t nnz, int sorted, mt_cuda_dup *d,      \
                                                     const mt_adagrad_hparams *hp,                 \
                                                     mt_error *err) {                              \
    static const char *name = "cuda_adagrad_coo_dup_" #SFX;                                        \
    mt_status st = mt_adagrad_check(name, hp, nnz, 0, err);                                        \
    if (st != MT_OK || nnz == 0) return st;                                                        \
    const int64_t *key = idx;                                                                      \
    const int32_t *perm = NULL;                                                                    \
    if (!sorted) {                                                                                 \
      if ((st = dup_sort(d, idx, nnz, name, err)) != MT_OK) return st;                             \
      key = d->keys, perm = d->perm;                                                               \
    }                                                                                              \
    MT_KLAUNCH(dup_k<T>, mt_grid_for(nnz), 256, p, s, key, perm, vals, nnz, (T)-hp->clr,           \
               (T)hp->eps, hp->maximize != 0);                                                     \
    return launched("coo_dup step", err);                                                          \
  }                                                                                                \
  extern "C" mt_status mt_cuda_stream_##SFX(T *p, T *s, const T *g, int64_t n, T k,                \
                                            mt_error *err) {                                       \
    if (n <= 0) return MT_OK;                                                                      \
    MT_KLAUNCH(stream_k<T>, mt_grid_for(n), 256, p, s, g, n, k);                                   \
    return launched("stream kernel", err);                                                         \
  }                                                                                                \
  extern "C" mt_status mt_cuda_touch_##SFX(T *p, T *s, const int64_t *idx, const T *vals,          \
                                           int64_t nnz, T k, mt_error *err) {                      \
    if (nnz <= 0) return MT_OK;                                                                    \
    MT_KLAUNCH(touch_k<T>, mt_grid_for(nnz), 256, p, s, idx, vals, nnz, k);                        \
    return launched("touch kernel", err);                                                          \
  }

MT__CUDA_ENTRIES(float, f32)
MT__CUDA_ENTRIES(double, f64)

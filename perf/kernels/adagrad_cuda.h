/* adagrad_cuda.h - the Adagrad steps on a CUDA device (perf/kernels/adagrad_step.cu),
 * for the benchmarks (perf/) and the GPU tests.
 *
 * The steps take DEVICE pointers and update p and s in place with the
 * arithmetic of perf/kernels/adagrad_step.c, operation for operation (nvcc
 * -fmad=false, IEEE sqrt and division, fma() exactly where the reference
 * calls it), so on the same inputs they are bit-identical to the CPU
 * reference ops:
 *   dense         ADA-1: p + (nclr * g) / std, weight decay as fma(wd, p, g)
 *   coo           ADA-2: element entries (linear indices, coalesced),
 *                 p + nclr * (g / std) at each entry
 *   masked_coo    ADA-3, COO storage: as coo, entries with value 0 skipped
 *   masked_dense  ADA-3, dense storage: fma(nclr, g / std, p) where mask
 *   coo_dup       ADA-2 on an uncoalesced grad: sort, then coalesce + update
 *                 in one kernel (below)
 * with std = sqrt(s) + eps. The stream kernel is the bandwidth reference
 * (3 reads + 2 writes per element, like the CPU one).
 *
 * Launches are asynchronous on the default stream; errors of the launch are
 * reported at once, errors of the execution at the next mt_cuda_sync or
 * timer stop. Built only where nvcc is found (MT_HAVE_CUDA); every function
 * works on a machine without a device and says so (mt_cuda_probe). */
#ifndef MT_ADAGRAD_CUDA_H
#define MT_ADAGRAD_CUDA_H

#include <stddef.h>
#include <stdint.h>

#include "adagrad_step.h"

#ifdef __cplusplus
extern "C" {
#endif

/* 0 when device 0 is usable, writing its name, memory and bandwidth facts
 * to info; -1 when not, with the reason in info. */
int mt_cuda_probe(char *info, size_t len);

mt_status mt_cuda_malloc(void **dev, size_t bytes, mt_error *err);
void mt_cuda_free(void *dev); /* NULL is fine */
mt_status mt_cuda_upload(void *dev, const void *host, size_t bytes, mt_error *err);
mt_status mt_cuda_download(void *host, const void *dev, size_t bytes, mt_error *err);
mt_status mt_cuda_sync(mt_error *err);

/* Device copy bandwidth: bytes per second of a device-to-device memcpy of
 * `bytes` (read + write counted), best of `reps`. */
mt_status mt_cuda_copy_bandwidth(size_t bytes, int reps, double *bytes_per_second,
                                 mt_error *err);

/* A pair of events on the default stream: stop records, waits and gives
 * the seconds since start. */
typedef struct mt_cuda_timer mt_cuda_timer;
mt_status mt_cuda_timer_new(mt_cuda_timer **t, mt_error *err);
void mt_cuda_timer_free(mt_cuda_timer *t);
void mt_cuda_timer_start(mt_cuda_timer *t);
mt_status mt_cuda_timer_stop(mt_cuda_timer *t, double *seconds, mt_error *err);

/* The steps (hp->nthreads and hp->isa are ignored). */
mt_status mt_cuda_adagrad_dense_f32(float *p, float *s, const float *g, int64_t n,
                                    const mt_adagrad_hparams *hp, mt_error *err);
mt_status mt_cuda_adagrad_dense_f64(double *p, double *s, const double *g, int64_t n,
                                    const mt_adagrad_hparams *hp, mt_error *err);
mt_status mt_cuda_adagrad_coo_f32(float *p, float *s, const int64_t *idx, const float *vals,
                                  int64_t nnz, int masked, const mt_adagrad_hparams *hp,
                                  mt_error *err);
mt_status mt_cuda_adagrad_coo_f64(double *p, double *s, const int64_t *idx, const double *vals,
                                  int64_t nnz, int masked, const mt_adagrad_hparams *hp,
                                  mt_error *err);
mt_status mt_cuda_adagrad_masked_dense_f32(float *p, float *s, const float *g,
                                           const uint8_t *mask, int64_t n,
                                           const mt_adagrad_hparams *hp, mt_error *err);
mt_status mt_cuda_adagrad_masked_dense_f64(double *p, double *s, const double *g,
                                           const uint8_t *mask, int64_t n,
                                           const mt_adagrad_hparams *hp, mt_error *err);
mt_status mt_cuda_stream_f32(float *p, float *s, const float *g, int64_t n, float k,
                             mt_error *err);
mt_status mt_cuda_stream_f64(double *p, double *s, const double *g, int64_t n, double k,
                             mt_error *err);
/* The touch kernel, as mt_touch_step_* bit for bit: per entry e,
 * s[idx[e]] += vals[e], p[idx[e]] += vals[e] * k (distinct indices: the
 * sparse paths' reference pattern, not a step). */
mt_status mt_cuda_touch_f32(float *p, float *s, const int64_t *idx, const float *vals,
                            int64_t nnz, float k, mt_error *err);
mt_status mt_cuda_touch_f64(double *p, double *s, const int64_t *idx, const double *vals,
                            int64_t nnz, double k, mt_error *err);

/* The uncoalesced element COO step (ADA-2 after torch's grad.coalesce(),
 * as mt_adagrad_step_coo_dup_* on the CPU, bit for bit): nnz entries at
 * linear indices idx[k] < n in any order, with duplicates. (a) A stable sort
 * of (index, position) pairs by index: CUB's DeviceRadixSort::SortPairs
 * over the index bits of n (under MT_CUDA_EMU a host std::stable_sort with
 * CUB's interface: cuda_emu_runtime.h); (b) ONE fused kernel: one thread per
 * run of equal indices (a run head: the first entry, or one whose index
 * differs from the one before) sums its run's values in input order exactly
 * as the reference's coalesce does (mt_run_sum) and applies ADA-2 to p and
 * s at that index (mt_ada_entry). The sort cannot be fused: a run is known
 * only after the global permutation. No coalesced grad is written.
 *
 * sorted: a FLAG, not detected (detecting would cost a pass and a copy
 * back): 1 says idx is already non-decreasing (the duplicates of an index
 * adjacent, in input order); the sort is skipped and the kernel reads idx
 * and vals directly (one launch; d may be NULL). Not checked: unsorted
 * entries with sorted = 1 race on the elements they share.
 * mt_cuda_dup_new makes the sort's device buffers for a param of n
 * elements and up to cap entries (sorted keys, the permutation, the
 * positions 0..cap-1, CUB's temporary storage), once per grad, so that a
 * timed step is the sort and the kernel only. cap < 2^31. A run of m
 * entries is one thread's m loads: all entries at one index run serially. */
typedef struct mt_cuda_dup mt_cuda_dup;
mt_status mt_cuda_dup_new(mt_cuda_dup **d, int64_t n, int64_t cap, mt_error *err);
void mt_cuda_dup_free(mt_cuda_dup *d); /* NULL is fine */
/* device bytes the buffers hold */
int64_t mt_cuda_dup_bytes(const mt_cuda_dup *d);
mt_status mt_cuda_adagrad_coo_dup_f32(float *p, float *s, const int64_t *idx, const float *vals,
                                      int64_t nnz, int sorted, mt_cuda_dup *d,
                                      const mt_adagrad_hparams *hp, mt_error *err);
mt_status mt_cuda_adagrad_coo_dup_f64(double *p, double *s, const int64_t *idx,
                                      const double *vals, int64_t nnz, int sorted,
                                      mt_cuda_dup *d, const mt_adagrad_hparams *hp,
                                      mt_error *err);

/* The cuSPARSE gather/scatter pipeline (adagrad_gs.cu): the sparse COO step
 * (masked: ADA-3's COO form) as cusparseGather of s and p at the entries,
 * one kernel on the compact values, cusparseScatter of both back. The
 * baseline the fused step (mt_cuda_adagrad_coo_*) is measured against;
 * bit-identical to it. mt_cuda_gs_new binds the device arrays p and s (n
 * elements, f32 or f64) and the coalesced linear indices idx (nnz >= 1) and
 * allocates the compact buffers; each step reads vals (nnz). */
typedef struct mt_cuda_gs mt_cuda_gs;
mt_status mt_cuda_gs_new(mt_cuda_gs **gs, void *p, void *s, int64_t n, int64_t *idx, int64_t nnz,
                         int f64, mt_error *err);
void mt_cuda_gs_free(mt_cuda_gs *gs); /* NULL is fine */
mt_status mt_cuda_adagrad_coo_gs(mt_cuda_gs *gs, const void *vals, int masked,
                                 const mt_adagrad_hparams *hp, mt_error *err);

#ifdef __cplusplus
}
#endif

#endif /* MT_ADAGRAD_CUDA_H */

/* adagrad_step.h - fast in-place Adagrad steps (the "fast second" of the
 * reference kernels in impl/cpu/optim.c, see STYLE.md "Reference first").
 *
 * Each function updates param p and state_sum s in place and gives results
 * BIT-IDENTICAL to the reference op on the same inputs:
 *   dense         mt_cpu_adagrad_dense  (ADA-1): p + (nclr * g) / std,
 *                 weight decay as fma(wd, p, g)
 *   coo, csr      mt_cpu_adagrad_sparse (ADA-2): p + nclr * (g / std);
 *                 CSR has no torch Adagrad path, it is ADA-2 on the same
 *                 entries (linear index row * cols + col)
 *   coo_dup       mt_cpu_adagrad_sparse (ADA-2) on an UNCOALESCED element
 *                 COO grad: its coalesce (duplicates summed) and the update
 *                 in one step
 *   masked_dense  mt_cpu_adagrad_masked (ADA-3), dense storage:
 *                 fma(nclr, g / std, p) where mask, untouched elsewhere;
 *                 masked-out grad data is never used
 *   masked_coo    mt_cpu_adagrad_masked (ADA-3) with a COO grad: the
 *                 tutorial's mask = grad != 0, so zero values are skipped
 * with std = sqrt(s) + eps and every operation in the tensor dtype
 * (clr and eps rounded to float for the f32 kernels, as the reference does).
 * The std output of the reference is not produced.
 *
 * Sparse gradients must be coalesced (indices unique, in range; sorted is
 * not required for correctness but is what makes the access stream
 * prefetch-friendly), except the uncoalesced step's (coo_dup, below).
 * Indices are not validated here: that is the reference's job
 * (mt_tensor_validate); these are the timed kernels.
 *
 * Threading: nthreads <= 0 uses every OpenMP thread, 1 runs serially;
 * without OpenMP the kernels are serial. Work is split statically into
 * contiguous ranges (elements, entries or rows); each element is updated by
 * exactly one thread with the same operations, so results do not depend on
 * nthreads. */
#ifndef MT_ADAGRAD_STEP_H
#define MT_ADAGRAD_STEP_H

#include <stdint.h>

#include "mt_core.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct mt_adagrad_hparams {
  double clr;          /* lr / (1 + (step - 1) * lr_decay): mt_adagrad_clr() */
  double eps;          /* added to sqrt(state_sum) */
  double weight_decay; /* dense only; the other paths reject != 0 like torch */
  int maximize;        /* negate the gradient first */
  int nthreads;        /* <= 0: all OpenMP threads; 1: serial */
  int isa;             /* MT_ADAGRAD_ISA_AUTO (0): the best this CPU runs */
} mt_adagrad_hparams;

/* Code paths; results are identical, only speed differs. BASE is plain
 * x86-64 (SSE2) or whatever the compiler targets elsewhere; AVX2 is
 * AVX2+FMA; AVX512 is AVX-512 F/VL/BW with 512-bit vectors. AUTO picks the
 * best the CPU (and OS) runs; asking for more than that gives the best.
 * Valgrind hides AVX-512, so under callgrind AUTO is AVX2. */
enum {
  MT_ADAGRAD_ISA_AUTO = 0,
  MT_ADAGRAD_ISA_BASE = 1,
  MT_ADAGRAD_ISA_AVX2 = 2,
  MT_ADAGRAD_ISA_AVX512 = 3
};
/* The path AUTO picks on this machine. */
int mt_adagrad_isa_best(void);
const char *mt_adagrad_isa_name(int isa);

/* clr exactly as the reference computes it (ADA-1, in double). */
double mt_adagrad_clr(double lr, double lr_decay, double step);
/* The argument checks every step makes (the CUDA steps too): hp not NULL,
 * count >= 0, and no weight decay unless allow_wd (torch's sparse and
 * masked paths reject it). MT_INVALID_ARGUMENT naming `name` otherwise. */
mt_status mt_adagrad_check(const char *name, const mt_adagrad_hparams *hp, int64_t count,
                           int allow_wd, mt_error *err);
/* Threads a kernel uses for hp->nthreads (1 without OpenMP). */
int mt_adagrad_threads(int nthreads);

/* Dense: n elements, g dense. p, s, g must not overlap. */
mt_status mt_adagrad_step_dense_f32(float *p, float *s, const float *g, int64_t n,
                                    const mt_adagrad_hparams *hp, mt_error *err);
mt_status mt_adagrad_step_dense_f64(double *p, double *s, const double *g, int64_t n,
                                    const mt_adagrad_hparams *hp, mt_error *err);

/* Coalesced COO: nnz entries, entry k covers the `row` elements at
 * idx[k] * row + j (j < row) with values vals[k * row + j]. row = 1 is an
 * element-sparse grad over the flattened param (linear indices); row > 1 a
 * hybrid grad with sparse_dim 1 (embedding rows). */
mt_status mt_adagrad_step_coo_f32(float *p, float *s, const int64_t *idx, const float *vals,
                                  int64_t nnz, int64_t row, const mt_adagrad_hparams *hp,
                                  mt_error *err);
mt_status mt_adagrad_step_coo_f64(double *p, double *s, const int64_t *idx, const double *vals,
                                  int64_t nnz, int64_t row, const mt_adagrad_hparams *hp,
                                  mt_error *err);

/* Uncoalesced element COO (ADA-2 after torch's `grad = grad.coalesce()`):
 * nnz entries at linear indices idx[k] over the flattened param, in any
 * order, with duplicates (an nn.Embedding(sparse=True) backward's grad, in
 * input order). One step coalesces and updates: a stable sort of (index,
 * payload) pairs by index (LSD radix, as few passes of <= 12-bit digits as
 * the index bits of n need; a digit that is the same for every entry is
 * skipped; the payload is an f32 entry's value, an f64 entry's position),
 * then ONE fused pass over the sorted entries: each run of equal indices is
 * summed in its input order (the sort is stable) exactly as the
 * reference's coalesce sums duplicates (mt_coo_coalesce: from the first,
 * in the dtype, each addition rounded, as torch's), and ADA-2's update is applied there with
 * sparse_coo's arithmetic (batches of 64 runs: gather, vector math,
 * scatter). No coalesced grad is written.
 *
 * sorted: a FLAG, not detected: 1 says idx is already non-decreasing (the
 * duplicates of an index adjacent, in input order), and the sort is
 * skipped (one pass; ws may be NULL). Not checked: unsorted entries with
 * sorted = 1 update an element once per run. sorted = 0 needs ws
 * (mt_adagrad_dup_new, made once per grad, not per step) for a param of n
 * elements and at least nnz entries; an index outside [0, n) is then
 * MT_INVALID_ARGUMENT (checked in the sort's counting pass).
 * The sort runs on one thread; the fused pass is split over threads at run
 * heads (each run is one thread's), so results do not depend on nthreads. */
typedef struct mt_adagrad_dup mt_adagrad_dup;
/* The sort's scratch for a param of n (<= 2^32) elements and up to cap
 * (< 2^32) entries: 16 bytes per entry and 48 KiB of counts. *ws NULL on
 * failure. */
mt_status mt_adagrad_dup_new(mt_adagrad_dup **ws, int64_t n, int64_t cap, mt_error *err);
void mt_adagrad_dup_free(mt_adagrad_dup *ws); /* NULL is fine */
/* Bytes the scratch holds (the step's memory beyond its inputs). */
int64_t mt_adagrad_dup_bytes(const mt_adagrad_dup *ws);
mt_status mt_adagrad_step_coo_dup_f32(float *p, float *s, const int64_t *idx, const float *vals,
                                      int64_t nnz, int sorted, mt_adagrad_dup *ws,
                                      const mt_adagrad_hparams *hp, mt_error *err);
mt_status mt_adagrad_step_coo_dup_f64(double *p, double *s, const int64_t *idx,
                                      const double *vals, int64_t nnz, int sorted,
                                      mt_adagrad_dup *ws, const mt_adagrad_hparams *hp,
                                      mt_error *err);

/* CSR grad of a rows x cols param: crow [rows + 1], col [nnz], vals [nnz];
 * columns unique within a row. */
mt_status mt_adagrad_step_csr_f32(float *p, float *s, int64_t rows, int64_t cols,
                                  const int64_t *crow, const int64_t *col, const float *vals,
                                  const mt_adagrad_hparams *hp, mt_error *err);
mt_status mt_adagrad_step_csr_f64(double *p, double *s, int64_t rows, int64_t cols,
                                  const int64_t *crow, const int64_t *col, const double *vals,
                                  const mt_adagrad_hparams *hp, mt_error *err);

/* Masked, dense storage: grad data g and bool mask (bytes, nonzero = set). */
mt_status mt_adagrad_step_masked_dense_f32(float *p, float *s, const float *g, const uint8_t *mask,
                                           int64_t n, const mt_adagrad_hparams *hp,
                                           mt_error *err);
mt_status mt_adagrad_step_masked_dense_f64(double *p, double *s, const double *g,
                                           const uint8_t *mask, int64_t n,
                                           const mt_adagrad_hparams *hp, mt_error *err);

/* Masked, COO storage as the tutorial builds it from a COO grad: element
 * entries (row = 1) whose value is zero are masked out and skipped. */
mt_status mt_adagrad_step_masked_coo_f32(float *p, float *s, const int64_t *idx,
                                         const float *vals, int64_t nnz,
                                         const mt_adagrad_hparams *hp, mt_error *err);
mt_status mt_adagrad_step_masked_coo_f64(double *p, double *s, const int64_t *idx,
                                         const double *vals, int64_t nnz,
                                         const mt_adagrad_hparams *hp, mt_error *err);

/* The bandwidth reference: Adagrad's access pattern without its arithmetic,
 * 3 reads + 2 writes per element: p[i] = p[i] + g[i] * k; s[i] = s[i] + g[i].
 * Same threading as the steps. */
void mt_stream_step_f32(float *p, float *s, const float *g, int64_t n, float k, int nthreads,
                        int isa);
void mt_stream_step_f64(double *p, double *s, const double *g, int64_t n, double k,
                        int nthreads, int isa);

/* The sparse step's access pattern without its arithmetic (the reference
 * for the sparse paths, as the stream kernel is for dense): per entry of a
 * coalesced element COO grad, s[i] = s[i] + v; p[i] = p[i] + v * k, with the
 * sparse step's batching, prefetch and threading. */
void mt_touch_step_f32(float *p, float *s, const int64_t *idx, const float *vals, int64_t nnz,
                       float k, int nthreads, int isa);
void mt_touch_step_f64(double *p, double *s, const int64_t *idx, const double *vals, int64_t nnz,
                       double k, int nthreads, int isa);

/* Elements per block of the masked dense-storage kernel: in a 64-block
 * segment where at least 31/32 of the blocks have all 16 mask bytes zero,
 * those blocks are skipped without touching p, s or g; other segments take
 * one straight blended pass (skipping short gaps costs more than it saves). */
#define MT_ADAGRAD_MASK_BLOCK 16

#ifdef __cplusplus
}
#endif
#endif /* MT_ADAGRAD_STEP_H */

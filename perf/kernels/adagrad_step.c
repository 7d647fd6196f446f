/* adagrad_step.c - fast in-place Adagrad steps, bit-identical to impl/cpu/optim.c.
 *
 * Each path of optim.c is mirrored operation by operation (this file is
 * compiled with -ffp-contract=off like the reference, so a * b + c is never
 * fused behind our back; fma() is used exactly where the reference uses
 * it). Speed comes from three things only, none of which changes a result:
 *   - specialisation: maximize / weight decay are compile-time constants in
 *     separate loops, so the common loop has no branches and vectorizes;
 *   - batching the sparse paths: entries are gathered into small local
 *     arrays, the sqrt/div arithmetic runs as a vector loop, and the results
 *     are scattered back (coalesced indices are unique, so no conflicts);
 *   - AVX2+FMA and AVX-512 copies of every loop, picked at run time (the
 *     hardware fma is the correctly rounded fma() the reference calls;
 *     vector sqrt and div are IEEE like the scalar ones), and static
 *     OpenMP splitting into contiguous ranges.
 * Rule ids: ADA-1 (dense), ADA-2 (sparse), ADA-3 (masked); see optim.c. */
#include "adagrad_step.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#ifdef _OPENMP
#include <omp.h>
#endif

#if defined(__x86_64__) && defined(__GNUC__)
#define MT__HAVE_AVX2_PATH 1
#define MT__AVX2 __attribute__((target("avx2,fma")))
/* Zen 4/5 and recent Intel run 512-bit sqrt/div at twice the 256-bit
 * element rate: the arithmetic of the dense step is no longer the limit. */
#define MT__AVX512 \
  __attribute__((target("avx512f,avx512vl,avx512bw,avx2,fma,prefer-vector-width=512")))
#else
#define MT__HAVE_AVX2_PATH 0
#endif

#define MT__INLINE static inline __attribute__((always_inline))
#define MT__UNUSED __attribute__((unused)) /* not every copy is dispatched to */

/* ---- public helpers ------------------------------------------------------ */

double mt_adagrad_clr(double lr, double lr_decay, double step) {
  /* ADA-1: clr = lr / (1 + (step - 1) * lr_decay), as parse_hparams does */
  return lr / (1.0 + (step - 1.0) * lr_decay);
}

int mt_adagrad_threads(int nthreads) {
#ifdef _OPENMP
  return nthreads <= 0 ? omp_get_max_threads() : nthreads;
#else
  (void)nthreads;
  return 1;
#endif
}

int mt_adagrad_isa_best(void) {
#if MT__HAVE_AVX2_PATH
  __builtin_cpu_init();
  int avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  if (avx2 && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl") &&
      __builtin_cpu_supports("avx512bw"))
    return MT_ADAGRAD_ISA_AVX512;
  if (avx2) return MT_ADAGRAD_ISA_AVX2;
#endif
  return MT_ADAGRAD_ISA_BASE;
}

const char *mt_adagrad_isa_name(int isa) {
  if (isa == MT_ADAGRAD_ISA_AUTO) isa = mt_adagrad_isa_best();
  return isa == MT_ADAGRAD_ISA_AVX512 ? "avx512" : isa == MT_ADAGRAD_ISA_AVX2 ? "avx2" : "base";
}

/* The path to run: the one asked for, at most the best this CPU has. */
static int pick(int isa) {
  int best = mt_adagrad_isa_best();
  return isa == MT_ADAGRAD_ISA_AUTO || isa > best ? best : isa;
}

/* ---- one job, split over threads ----------------------------------------- */

/* Everything a range kernel needs; the scalars of an f32 job hold the
 * float-rounded values (exact in double, cast back exactly). */
typedef struct job job;
typedef void (*range_fn)(const job *j, int64_t lo, int64_t hi);
struct job {
  void *p, *s;
  const void *g;           /* dense grad / COO, CSR values */
  const int64_t *idx;      /* COO indices */
  const uint64_t *sorted;  /* coo_dup: index << 32 | payload, by index; NULL: idx in order */
  const int64_t *crow, *col;
  const uint8_t *mask;
  int64_t row, cols;
  double nclr, wd, eps, k; /* k: the stream kernel's factor */
  int maximize, use_wd;
  range_fn fn;
  int64_t count; /* units to split: elements, entries or rows */
  int64_t align; /* range starts are multiples of this */
};

/* Static split of [0, count) into nt ranges starting at multiples of align:
 * thread t gets [lo, hi). */
static void split(int64_t count, int64_t align, int t, int nt, int64_t *lo, int64_t *hi) {
  int64_t blocks = (count + align - 1) / align;
  int64_t b0 = blocks * t / nt, b1 = blocks * (t + 1) / nt;
  *lo = b0 * align < count ? b0 * align : count;
  *hi = b1 * align < count ? b1 * align : count;
}

static void run_job(const job *j, int nthreads) {
  int nt = mt_adagrad_threads(nthreads);
  if (j->count <= 0) return;
#ifdef _OPENMP
  if (nt > 1 && j->count >= (int64_t)nt * j->align) {
#pragma omp parallel num_threads(nt)
    {
      int64_t lo, hi;
      split(j->count, j->align, omp_get_thread_num(), omp_get_num_threads(), &lo, &hi);
      if (lo < hi) j->fn(j, lo, hi);
    }
    return;
  }
#else
  (void)nt;
#endif
  j->fn(j, 0, j->count);
}

/* ---- the loops, once per dtype and instruction set ----------------------- */

/* Entries per batch of the sparse paths (local arrays stay in L1). */
#define BATCH 64
#define MBLK MT_ADAGRAD_MASK_BLOCK
/* Runs of set blocks at least this long go through the general vector
 * loop; shorter ones block by block. */
#define MRUN_MIN (16 * MBLK)
/* Segments whose blocks are mostly set skip nothing (one straight pass). */
#define MSEG (64 * MBLK)

/* ADA-1 dense; MAX and WD are constants at every expansion. */
#define DENSE_LOOP(T, SQRT, FMA, MAX, WD)                                                          \
  for (int64_t i = lo; i < hi; i++) {                                                              \
    /* grad = -grad if maximize */                                                                 \
    T gi = (MAX) ? -g[i] : g[i];                                                                   \
    /* grad = grad.add(param, alpha=weight_decay): fma */                                          \
    if (WD) gi = FMA(wd, p[i], gi);                                                                \
    /* state_sum.addcmul_(grad, grad, value=1) */                                                  \
    T sn = s[i] + gi * gi;                                                                         \
    s[i] = sn;                                                                                     \
    /* std = state_sum.sqrt().add_(eps); param.addcdiv_(grad, std, value=-clr) */                  \
    T sd = SQRT(sn) + eps;                                                                         \
    p[i] = p[i] + nclr * gi / sd;                                                                  \
  }

/* ADA-2 over one batch of m gathered entries: ls/lp hold s/p, v the grad
 * values; keep-blend for ADA-3's COO form when MASKED. */
#define COO_MATH(T, IT, BLEND, SQRT, MAX, MASKED)                                                  \
  for (int j = 0; j < m; j++) {                                                                    \
    T gi = (MAX) ? -v[j] : v[j];                                                                   \
    /* state_sum.add_(_make_sparse(grad, grad_indices, grad_values.pow(2))) */                     \
    T sn = ls[j] + gi * gi;                                                                        \
    /* std_values = state_sum.sparse_mask(grad)._values().sqrt_().add_(eps) */                     \
    T sd = SQRT(sn) + eps;                                                                         \
    /* param.add_(_make_sparse(grad, grad_indices, grad_values / std_values), alpha=-clr) */       \
    T pn = lp[j] + nclr * (gi / sd);                                                               \
    if (MASKED) {                                                                                  \
      /* the tutorial's mask = grad != 0: zero entries stay untouched */                           \
      IT keep = (IT)0 - (IT)(v[j] != 0);                                                           \
      ls[j] = BLEND(keep, sn, ls[j]);                                                              \
      lp[j] = BLEND(keep, pn, lp[j]);                                                              \
    } else {                                                                                       \
      ls[j] = sn;                                                                                  \
      lp[j] = pn;                                                                                  \
    }                                                                                              \
  }

/* ADA-2 over one hybrid entry's m contiguous elements ps, ss (in place). */
#define ROW_LOOP(T, SQRT, MAX)                                                                     \
  for (int64_t j = 0; j < m; j++) {                                                                \
    T gi = (MAX) ? -v[j] : v[j];                                                                   \
    T sn = ss[j] + gi * gi;                                                                        \
    T sd = SQRT(sn) + eps;                                                                         \
    ss[j] = sn;                                                                                    \
    ps[j] = ps[j] + nclr * (gi / sd);                                                              \
  }

/* ADA-3 dense storage over n elements (n <= MBLK in the blocked loop). */
#define MASKED_LOOP(T, IT, BLEND, SQRT, FMA, MAX, n)                                               \
  for (int64_t i = 0; i < (n); i++) {                                                              \
    T so = s[i], po = p[i];                                                                        \
    T gi = (MAX) ? -g[i] : g[i];                                                                   \
    /* state_sum = state_sum + masked_grad.pow(2).to_tensor(0) */                                  \
    T sn = so + gi * gi;                                                                           \
    /* std = masked_tensor(state_sum, mask).sqrt().add(eps) */                                     \
    T sd = SQRT(sn) + eps;                                                                         \
    /* param = param.add((masked_grad / std).to_tensor(0), alpha=-clr): fma */                     \
    T pn = FMA(nclr, gi / sd, po);                                                                 \
    /* masked-out: unchanged (the value computed from poison is dropped) */                        \
    IT keep = (IT)0 - (IT)(mask[i] != 0);                                                          \
    s[i] = BLEND(keep, sn, so);                                                                    \
    p[i] = BLEND(keep, pn, po);                                                                    \
  }

/* 1 when the MBLK mask bytes at m are all zero. */
MT__INLINE int block_zero(const uint8_t *m) {
  uint64_t w[MBLK / 8], any = 0;
  memcpy(w, m, MBLK);
  for (int q = 0; q < MBLK / 8; q++) any |= w[q];
  return any == 0;
}

/* coo_dup: where entry k of the sorted order comes from. DUP_IDX: idx and
 * vals as given (sorted = 1); else the sort's pairs (index << 32 |
 * payload), the payload the entry's position in vals (DUP_POS) or, for f32,
 * its value's bits (DUP_VAL: the fused pass then reads no value at random) */
enum { DUP_IDX, DUP_POS, DUP_VAL };
MT__INLINE int64_t dup_key(const job *jb, int64_t k, int mode) {
  return mode == DUP_IDX ? jb->idx[k] : (int64_t)(jb->sorted[k] >> 32);
}
/* the first run head at or after k (a run head: the first entry, or one
 * whose index differs from the entry before) */
MT__INLINE int64_t dup_head(const job *jb, int64_t k, int mode) {
  while (k > 0 && k < jb->count && dup_key(jb, k, mode) == dup_key(jb, k - 1, mode)) k++;
  return k;
}

#define MT__KERNELS(T, IT, SFX, SQRT, FMA, ATTR)                                                   \
  /* keep all-ones: a, else b; bitwise so that it vectorizes without                               \
   * if-conversion (FP selects are not if-converted under -ftrapping-math) */                      \
  MT__INLINE T blend_##SFX(IT keep, T a, T b) {                                                    \
    IT x, y;                                                                                       \
    memcpy(&x, &a, sizeof x);                                                                      \
    memcpy(&y, &b, sizeof y);                                                                      \
    x = (x & keep) | (y & ~keep);                                                                  \
    memcpy(&a, &x, sizeof a);                                                                      \
    return a;                                                                                      \
  }                                                                                                \
  MT__INLINE void dense_body_##SFX(T *restrict p, T *restrict s, const T *restrict g, int64_t lo,  \
                                   int64_t hi, T nclr, T wd, T eps, int max, int use_wd) {         \
    if (!max && !use_wd) {                                                                         \
      DENSE_LOOP(T, SQRT, FMA, 0, 0)                                                               \
    } else if (max && !use_wd) {                                                                   \
      DENSE_LOOP(T, SQRT, FMA, 1, 0)                                                               \
    } else if (!max) {                                                                             \
      DENSE_LOOP(T, SQRT, FMA, 0, 1)                                                               \
    } else {                                                                                       \
      DENSE_LOOP(T, SQRT, FMA, 1, 1)                                                               \
    }                                                                                              \
  }                                                                                                \
  ATTR MT__UNUSED static void dense_##SFX(const job *jb, int64_t lo, int64_t hi) {                 \
    dense_body_##SFX(jb->p, jb->s, jb->g, lo, hi, (T)jb->nclr, (T)jb->wd, (T)jb->eps,              \
                     jb->maximize, jb->use_wd);                                                    \
  }                                                                                                \
                                                                                                   \
  MT__INLINE void coo_math_##SFX(T *restrict ls, T *restrict lp, const T *restrict v, int m,       \
                                 T nclr, T eps, int max, int masked) {                             \
    if (!masked && !max) {                                                                         \
      COO_MATH(T, IT, blend_##SFX, SQRT, 0, 0)                                                     \
    } else if (!masked) {                                                                          \
      COO_MATH(T, IT, blend_##SFX, SQRT, 1, 0)                                                     \
    } else if (!max) {                                                                             \
      COO_MATH(T, IT, blend_##SFX, SQRT, 0, 1)                                                     \
    } else {                                                                                       \
      COO_MATH(T, IT, blend_##SFX, SQRT, 1, 1)                                                     \
    }                                                                                              \
  }                                                                                                \
  /* one batch of m entries at linear indices ix with values v: prefetch the                       \
   * next batch's mn entries (ixn) when they are more than a line apart on                         \
   * average (such gaps defeat the hardware stream prefetchers; closer entries                     \
   * touch every line and are streamed), gather, vector math, scatter.                             \
   * mode 0 ADA-2, 1 ADA-3's COO form, 2 the touch kernel (same access, no math) */                \
  MT__INLINE void batch_##SFX(const job *jb, const int64_t *ix, int m, const int64_t *ixn, int mn, \
                              const T *v, int mode) {                                              \
    T *p = jb->p, *s = jb->s;                                                                      \
    T ls[BATCH], lp[BATCH];                                                                        \
    if (mn > 0 && ixn[mn - 1] - ixn[0] < (int64_t)mn * (64 / (int)sizeof(T))) mn = 0;              \
    for (int j = 0; j < mn; j++) {                                                                 \
      __builtin_prefetch(&s[ixn[j]], 1);                                                           \
      __builtin_prefetch(&p[ixn[j]], 1);                                                           \
    }                                                                                              \
    for (int j = 0; j < m; j++) {                                                                  \
      ls[j] = s[ix[j]];                                                                            \
      lp[j] = p[ix[j]];                                                                            \
    }                                                                                              \
    if (mode == 2) {                                                                               \
      T kk = (T)jb->k;                                                                             \
      for (int j = 0; j < m; j++) {                                                                \
        ls[j] = ls[j] + v[j];                                                                      \
        lp[j] = lp[j] + v[j] * kk;                                                                 \
      }                                                                                            \
    } else {                                                                                       \
      coo_math_##SFX(ls, lp, v, m, (T)jb->nclr, (T)jb->eps, jb->maximize, mode == 1);              \
    }                                                                                              \
    for (int j = 0; j < m; j++) {                                                                  \
      s[ix[j]] = ls[j];                                                                            \
      p[ix[j]] = lp[j];                                                                            \
    }                                                                                              \
  }                                                                                                \
  /* element entries [lo, hi) in batches (their indices are the linear ones) */                    \
  MT__INLINE void coo1_body_##SFX(const job *jb, int64_t lo, int64_t hi, int mode) {               \
    for (int64_t k0 = lo; k0 < hi; k0 += BATCH) {                                                  \
      int m = hi - k0 < BATCH ? (int)(hi - k0) : BATCH;                                            \
      int mn = hi - k0 - BATCH < BATCH ? (int)(hi - k0 - BATCH) : BATCH;                           \
      batch_##SFX(jb, jb->idx + k0, m, jb->idx + k0 + BATCH, mn, (const T *)jb->g + k0, mode);     \
    }                                                                                              \
  }                                                                                                \
  ATTR MT__UNUSED static void coo1_##SFX(const job *jb, int64_t lo, int64_t hi) {                  \
    coo1_body_##SFX(jb, lo, hi, 0);                                                                \
  }                                                                                                \
  ATTR MT__UNUSED static void mcoo_##SFX(const job *jb, int64_t lo, int64_t hi) {                  \
    coo1_body_##SFX(jb, lo, hi, 1);                                                                \
  }                                                                                                \
  ATTR MT__UNUSED static void touch1_##SFX(const job *jb, int64_t lo, int64_t hi) {                \
    coo1_body_##SFX(jb, lo, hi, 2);                                                                \
  }                                                                                                \
  /* coo_dup: the value of sorted entry k (dup_key's modes) */                                     \
  MT__INLINE T dup_val_##SFX(const job *jb, int64_t k, int mode) {                                 \
    const T *vals = jb->g;                                                                         \
    if (mode == DUP_IDX) return vals[k];                                                           \
    uint32_t lo = (uint32_t)jb->sorted[k];                                                         \
    if (mode == DUP_POS) return vals[lo];                                                          \
    float f;                                                                                       \
    memcpy(&f, &lo, sizeof f);                                                                     \
    return (T)f;                                                                                   \
  }                                                                                                \
  /* coo_dup: the next up to BATCH runs from sorted entry *k (< hi, hi a run                       \
   * head): each run's index and its values summed as mt_coo_coalesce sums                         \
   * duplicates (in input order from the first, in T: each addition rounded,                       \
   * as torch's coalesce); the count */                                                            \
  MT__INLINE int dup_runs_##SFX(const job *jb, int64_t *k, int64_t hi, int mode, int64_t *ix,      \
                                T *v) {                                                            \
    int m = 0;                                                                                     \
    while (m < BATCH && *k < hi) {                                                                 \
      int64_t key = dup_key(jb, *k, mode);                                                         \
      T acc = dup_val_##SFX(jb, *k, mode);                                                         \
      for ((*k)++; *k < hi && dup_key(jb, *k, mode) == key; (*k)++)                                \
        acc = acc + dup_val_##SFX(jb, *k, mode);                                                   \
      ix[m] = key;                                                                                 \
      v[m++] = acc;                                                                                \
    }                                                                                              \
    return m;                                                                                      \
  }                                                                                                \
  /* coo_dup: the runs whose heads lie in [lo, hi) of the sorted entries,                          \
   * batch after batch through sparse_coo's gather / math / scatter (the                           \
   * next batch summed first, for its prefetch) */                                                 \
  MT__INLINE void dup_body_##SFX(const job *jb, int64_t lo, int64_t hi, int mode) {                \
    int64_t ix[2][BATCH], k = dup_head(jb, lo, mode);                                              \
    T v[2][BATCH];                                                                                 \
    hi = dup_head(jb, hi, mode);                                                                   \
    int m = dup_runs_##SFX(jb, &k, hi, mode, ix[0], v[0]);                                         \
    for (int b = 0; m > 0; b ^= 1) {                                                               \
      int mn = dup_runs_##SFX(jb, &k, hi, mode, ix[b ^ 1], v[b ^ 1]);                              \
      batch_##SFX(jb, ix[b], m, ix[b ^ 1], mn, v[b], 0);                                           \
      m = mn;                                                                                      \
    }                                                                                              \
  }                                                                                                \
  ATTR MT__UNUSED static void dups_##SFX(const job *jb, int64_t lo, int64_t hi) {                  \
    dup_body_##SFX(jb, lo, hi, sizeof(T) == 4 ? DUP_VAL : DUP_POS);                                \
  }                                                                                                \
  ATTR MT__UNUSED static void dupi_##SFX(const job *jb, int64_t lo, int64_t hi) {                  \
    dup_body_##SFX(jb, lo, hi, DUP_IDX);                                                           \
  }                                                                                                \
  /* hybrid entries: `row` contiguous elements each, updated in place */                           \
  MT__INLINE void row_math_##SFX(T *restrict ps, T *restrict ss, const T *restrict v, int64_t m,   \
                                 T nclr, T eps, int max) {                                         \
    if (!max) {                                                                                    \
      ROW_LOOP(T, SQRT, 0)                                                                         \
    } else {                                                                                       \
      ROW_LOOP(T, SQRT, 1)                                                                         \
    }                                                                                              \
  }                                                                                                \
  ATTR MT__UNUSED static void coorow_##SFX(const job *jb, int64_t lo, int64_t hi) {                \
    T *p = jb->p, *s = jb->s;                                                                      \
    const T *vals = jb->g;                                                                         \
    int64_t row = jb->row;                                                                         \
    for (int64_t k = lo; k < hi; k++)                                                              \
      row_math_##SFX(p + jb->idx[k] * row, s + jb->idx[k] * row, vals + k * row, row,              \
                     (T)jb->nclr, (T)jb->eps, jb->maximize);                                       \
  }                                                                                                \
  /* CSR rows [lo, hi): the entries crow[lo] .. crow[hi] in batches; each                          \
   * batch's linear indices row * cols + col are computed with the one before                      \
   * (for its prefetch), advancing the row cursor r */                                             \
  ATTR MT__UNUSED static void csr_##SFX(const job *jb, int64_t lo, int64_t hi) {                   \
    const int64_t *crow = jb->crow, *col = jb->col;                                                \
    int64_t r = lo, k0 = crow[lo], k1 = crow[hi];                                                  \
    int64_t li[2][BATCH];                                                                          \
    for (int64_t k = k0; k < k1 && k < k0 + BATCH; k++) {                                          \
      while (k >= crow[r + 1]) r++;                                                                \
      li[0][k - k0] = r * jb->cols + col[k];                                                       \
    }                                                                                              \
    for (int b = 0; k0 < k1; k0 += BATCH, b ^= 1) {                                                \
      int m = k1 - k0 < BATCH ? (int)(k1 - k0) : BATCH;                                            \
      int mn = k1 - k0 - BATCH < BATCH ? (int)(k1 - k0 - BATCH) : BATCH;                           \
      for (int j = 0; j < mn; j++) {                                                               \
        int64_t k = k0 + BATCH + j;                                                                \
        while (k >= crow[r + 1]) r++;                                                              \
        li[b ^ 1][j] = r * jb->cols + col[k];                                                      \
      }                                                                                            \
      batch_##SFX(jb, li[b], m, li[b ^ 1], mn, (const T *)jb->g + k0, 0);                          \
    }                                                                                              \
  }                                                                                                \
                                                                                                   \
  /* ADA-3 dense storage: runs of MBLK-element blocks with a set mask byte                         \
   * go through one vector loop; all-zero blocks are skipped (p, s, g not                          \
   * touched: the result is the same) */                                                           \
  MT__INLINE void mrun_##SFX(T *restrict p, T *restrict s, const T *restrict g,                    \
                             const uint8_t *restrict mask, int64_t n, T nclr, T eps, int max) {    \
    if (!max) {                                                                                    \
      MASKED_LOOP(T, IT, blend_##SFX, SQRT, FMA, 0, n)                                             \
    } else {                                                                                       \
      MASKED_LOOP(T, IT, blend_##SFX, SQRT, FMA, 1, n)                                             \
    }                                                                                              \
  }                                                                                                \
  MT__INLINE void mblock_##SFX(T *restrict p, T *restrict s, const T *restrict g,                  \
                               const uint8_t *restrict mask, T nclr, T eps, int max) {             \
    if (!max) {                                                                                    \
      MASKED_LOOP(T, IT, blend_##SFX, SQRT, FMA, 0, MBLK)                                          \
    } else {                                                                                       \
      MASKED_LOOP(T, IT, blend_##SFX, SQRT, FMA, 1, MBLK)                                          \
    }                                                                                              \
  }                                                                                                \
  /* the skipping pass over [i, hi) */                                                             \
  MT__INLINE void mskip_##SFX(T *restrict p, T *restrict s, const T *restrict g,                   \
                              const uint8_t *restrict mask, int64_t i, int64_t hi, T nclr, T eps,  \
                              int max) {                                                           \
    while (i < hi) {                                                                               \
      while (i + MBLK <= hi && block_zero(mask + i)) i += MBLK;                                    \
      if (i >= hi) break;                                                                          \
      int64_t j = i;                                                                               \
      while (j + MBLK <= hi && !block_zero(mask + j)) j += MBLK;                                   \
      if (j + MBLK > hi) j = hi; /* the partial tail block goes with the run */                    \
      if (j - i >= MRUN_MIN) {                                                                     \
        mrun_##SFX(p + i, s + i, g + i, mask + i, j - i, nclr, eps, max);                          \
        i = j;                                                                                     \
        continue;                                                                                  \
      }                                                                                            \
      /* short runs: fixed-size blocks (no loop prologue / alignment peel) */                      \
      for (; i + MBLK <= j; i += MBLK)                                                             \
        mblock_##SFX(p + i, s + i, g + i, mask + i, nclr, eps, max);                               \
      if (i < j) mrun_##SFX(p + i, s + i, g + i, mask + i, j - i, nclr, eps, max);                 \
      i = j;                                                                                       \
    }                                                                                              \
  }                                                                                                \
                                                                                                   \
  ATTR MT__UNUSED static void mdense_##SFX(const job *jb, int64_t lo, int64_t hi) {                \
    T *p = jb->p, *s = jb->s;                                                                      \
    const T *g = jb->g;                                                                            \
    const uint8_t *mask = jb->mask;                                                                \
    T nclr = (T)jb->nclr, eps = (T)jb->eps;                                                        \
    for (int64_t seg = lo; seg < hi; seg += MSEG) {                                                \
      int64_t end = hi - seg > MSEG ? seg + MSEG : hi, nb = 0, zero = 0;                           \
      /* mostly set blocks: one straight pass beats skipping (branches) */                         \
      for (int64_t b = seg; b + MBLK <= end; b += MBLK, nb++) zero += block_zero(mask + b);        \
      if (32 * zero < 31 * nb) {                                                                    \
        mrun_##SFX(p + seg, s + seg, g + seg, mask + seg, end - seg, nclr, eps, jb->maximize);     \
        continue;                                                                                  \
      }                                                                                            \
      mskip_##SFX(p, s, g, mask, seg, end, nclr, eps, jb->maximize);                               \
    }                                                                                              \
  }                                                                                                \
  MT__INLINE void stream_body_##SFX(T *restrict p, T *restrict s, const T *restrict g,             \
                                    int64_t lo, int64_t hi, T k) {                                 \
    for (int64_t i = lo; i < hi; i++) {                                                            \
      p[i] = p[i] + g[i] * k;                                                                      \
      s[i] = s[i] + g[i];                                                                          \
    }                                                                                              \
  }                                                                                                \
  ATTR MT__UNUSED static void stream_##SFX(const job *jb, int64_t lo, int64_t hi) {                \
    stream_body_##SFX(jb->p, jb->s, jb->g, lo, hi, (T)jb->k);                                      \
  }

MT__KERNELS(float, uint32_t, f32_base, sqrtf, fmaf, )
MT__KERNELS(double, uint64_t, f64_base, sqrt, fma, )
#if MT__HAVE_AVX2_PATH
MT__KERNELS(float, uint32_t, f32_avx2, sqrtf, fmaf, MT__AVX2)
MT__KERNELS(double, uint64_t, f64_avx2, sqrt, fma, MT__AVX2)
MT__KERNELS(float, uint32_t, f32_avx512, sqrtf, fmaf, MT__AVX512)
MT__KERNELS(double, uint64_t, f64_avx512, sqrt, fma, MT__AVX512)
#define PICK(isa, name, SFX)                                                                       \
  (pick(isa) == MT_ADAGRAD_ISA_AVX512 ? name##_##SFX##_avx512                                      \
   : pick(isa) == MT_ADAGRAD_ISA_AVX2 ? name##_##SFX##_avx2                                        \
                                      : name##_##SFX##_base)
/* The sparse paths stay on AVX2 code: the AVX-512 copies gather and scatter
 * with vpgather/vpscatter, slower than scalar loads/stores on AMD Zen and
 * measured ~1.4x slower here. */
#define PICK_SPARSE(isa, name, SFX)                                                                \
  (pick(isa) >= MT_ADAGRAD_ISA_AVX2 ? name##_##SFX##_avx2 : name##_##SFX##_base)
#else
#define PICK(isa, name, SFX) (name##_##SFX##_base)
#define PICK_SPARSE(isa, name, SFX) (name##_##SFX##_base)
#endif

/* ---- entry points -------------------------------------------------------- */

/* Scalars as the reference rounds them: the f32 kernels take
 * (float)-clr, (float)eps, (float)weight_decay; use_wd tests the double. */
static void job_hparams(job *j, const mt_adagrad_hparams *hp, int f32) {
  j->nclr = f32 ? (double)(float)-hp->clr : -hp->clr;
  j->eps = f32 ? (double)(float)hp->eps : hp->eps;
  j->wd = f32 ? (double)(float)hp->weight_decay : hp->weight_decay;
  j->use_wd = hp->weight_decay != 0.0;
  j->maximize = hp->maximize != 0;
}

/* Runs j with fn after rounding hp's scalars for the dtype (job_hparams). */
static mt_status launch(job *j, const mt_adagrad_hparams *hp, int f32, range_fn fn) {
  job_hparams(j, hp, f32);
  j->fn = fn;
  run_job(j, hp->nthreads);
  return MT_OK;
}

mt_status mt_adagrad_check(const char *name, const mt_adagrad_hparams *hp, int64_t count,
                           int allow_wd, mt_error *err) {
  if (!hp) return mt_err(err, MT_INVALID_ARGUMENT, "%s: hparams is NULL", name);
  if (count < 0)
    return mt_err(err, MT_INVALID_ARGUMENT, "%s: negative size %lld", name, (long long)count);
  if (!allow_wd && hp->weight_decay != 0.0)
    return mt_err(err, MT_INVALID_ARGUMENT,
                  "%s: weight_decay is not supported by this path (got %g)", name,
                  hp->weight_decay);
  return MT_OK;
}

/* ---- coo_dup: the stable sort of (index, payload) pairs ------------------ */

#define DUP_MAX_BITS 12 /* digits of at most 12 bits: 4096 buckets */
#define DUP_MAX_PASSES 3 /* 3 x 12 bits >= the 32 of an index */

struct mt_adagrad_dup {
  int64_t n, cap;
  int bits, passes;  /* digit width and count: passes x bits >= the bits of n - 1 */
  uint64_t *a, *b;   /* the pairs, packed index << 32 | payload */
  uint32_t count[DUP_MAX_PASSES][1 << DUP_MAX_BITS]; /* per digit, then each bucket's next slot */
};

mt_status mt_adagrad_dup_new(mt_adagrad_dup **ws, int64_t n, int64_t cap, mt_error *err) {
  *ws = NULL;
  if (n < 1 || n > ((int64_t)1 << 32) || cap < 0 || cap > (int64_t)UINT32_MAX)
    return mt_err(err, MT_INVALID_ARGUMENT,
                  "adagrad_dup_new: n = %lld, capacity %lld (want 1 <= n <= 2^32 and "
                  "0 <= capacity < 2^32)", (long long)n, (long long)cap);
  mt_adagrad_dup *w = calloc(1, sizeof *w);
  size_t bytes = (size_t)(cap ? cap : 1) * sizeof(uint64_t);
  if (w) {
    w->a = malloc(bytes);
    w->b = malloc(bytes);
  }
  if (!w || !w->a || !w->b) {
    mt_adagrad_dup_free(w);
    return mt_err(err, MT_OUT_OF_MEMORY, "adagrad_dup_new: no memory for %lld sort pairs",
                  (long long)cap);
  }
  /* as few passes as 12-bit digits allow, the bits spread evenly over them:
   * 1M elements 2 x 10 bits, 16M 2 x 12, 64M 3 x 9 */
  int total = 1;
  while (total < 32 && ((uint64_t)(n - 1) >> total)) total++;
  w->passes = (total + DUP_MAX_BITS - 1) / DUP_MAX_BITS;
  w->bits = (total + w->passes - 1) / w->passes;
  w->n = n;
  w->cap = cap;
  *ws = w;
  return MT_OK;
}

void mt_adagrad_dup_free(mt_adagrad_dup *ws) {
  if (!ws) return;
  free(ws->a);
  free(ws->b);
  free(ws);
}

int64_t mt_adagrad_dup_bytes(const mt_adagrad_dup *ws) {
  return ws ? (int64_t)sizeof *ws + 2 * ws->cap * (int64_t)sizeof(uint64_t) : 0;
}

/* LSD radix sort of the entries' (index, payload) pairs by index, stable
 * (each pass keeps the order of equal digits): one counting pass over idx
 * (every digit's counts, and the check that each index is < n), then a
 * scatter pass per digit that is not the same for every entry, the first
 * reading idx itself. The payload: the f32 value's bits when vals32 is
 * given, else the entry's position. *out: the sorted pairs (ws->a or
 * ws->b). */
static mt_status dup_sort(mt_adagrad_dup *ws, const int64_t *idx, const float *vals32, int64_t nnz,
                          const uint64_t **out, const char *name, mt_error *err) {
  if (!ws)
    return mt_err(err, MT_INVALID_ARGUMENT, "%s: unsorted entries need a workspace (ws is NULL)",
                  name);
  if (nnz > ws->cap)
    return mt_err(err, MT_INVALID_ARGUMENT, "%s: %lld entries, the workspace holds %lld", name,
                  (long long)nnz, (long long)ws->cap);
  const int bits = ws->bits, passes = ws->passes;
  const uint64_t M = ((uint64_t)1 << bits) - 1, R = M + 1;
  uint32_t *c0 = ws->count[0], *c1 = ws->count[1], *c2 = ws->count[2];
  for (int d = 0; d < DUP_MAX_PASSES; d++) memset(ws->count[d], 0, R * sizeof **ws->count);
  uint64_t most = 0;
  /* every digit's counts in one pass (a third digit of a 2-pass plan counts into
   * its bucket 0, unread): no loop over the digits per entry */
  for (int64_t k = 0; k < nnz; k++) {
    uint64_t key = (uint64_t)idx[k];
    most = key > most ? key : most;
    c0[key & M]++;
    c1[(key >> bits) & M]++;
    c2[(key >> 2 * bits) & M]++;
  }
  if (most >= (uint64_t)ws->n) /* a negative index is a large unsigned one */
    for (int64_t k = 0; k < nnz; k++)
      if ((uint64_t)idx[k] >= (uint64_t)ws->n)
        return mt_err(err, MT_INVALID_ARGUMENT, "%s: idx[%lld] = %lld is not in [0, %lld)", name,
                      (long long)k, (long long)idx[k], (long long)ws->n);
  const uint64_t *src = NULL;
  uint64_t *dst = ws->a;
  for (int d = 0; d < passes; d++) {
    uint32_t *c = ws->count[d];
    int sh = d * bits;
    if (nnz == 0 || c[((uint64_t)idx[0] >> sh) & M] == (uint64_t)nnz) continue; /* in order */
    for (uint64_t r = 0, at = 0; r < R; r++) { /* counts -> first slots */
      uint32_t n_r = c[r];
      c[r] = (uint32_t)at;
      at += n_r;
    }
    if (!src)
      for (int64_t k = 0; k < nnz; k++) {
        uint64_t key = (uint64_t)idx[k];
        uint32_t pay;
        if (vals32) memcpy(&pay, &vals32[k], sizeof pay);
        else pay = (uint32_t)k;
        dst[c[(key >> sh) & M]++] = key << 32 | pay;
      }
    else
      for (int64_t k = 0; k < nnz; k++) {
        uint64_t x = src[k];
        dst[c[(x >> (32 + sh)) & M]++] = x;
      }
    src = dst;
    dst = dst == ws->a ? ws->b : ws->a;
  }
  if (!src) { /* every digit the same for all: one index, already in order */
    for (int64_t k = 0; k < nnz; k++) {
      uint32_t pay;
      if (vals32) memcpy(&pay, &vals32[k], sizeof pay);
      else pay = (uint32_t)k;
      ws->a[k] = (uint64_t)idx[k] << 32 | pay;
    }
    src = ws->a;
  }
  *out = src;
  return MT_OK;
}

#define MT__ENTRIES(T, SFX, F32)                                                                   \
  mt_status mt_adagrad_step_dense_##SFX(T *p, T *s, const T *g, int64_t n,                         \
                                        const mt_adagrad_hparams *hp, mt_error *err) {             \
    mt_status st = mt_adagrad_check("adagrad_step_dense_" #SFX, hp, n, 1, err);                    \
    if (st != MT_OK) return st;                                                                    \
    job j = {.p = p, .s = s, .g = g, .count = n, .align = 64};                                     \
    return launch(&j, hp, F32, PICK(hp->isa, dense, SFX));                                         \
  }                                                                                                \
  mt_status mt_adagrad_step_coo_##SFX(T *p, T *s, const int64_t *idx, const T *vals, int64_t nnz,  \
                                      int64_t row, const mt_adagrad_hparams *hp, mt_error *err) {  \
    mt_status st = mt_adagrad_check("adagrad_step_coo_" #SFX, hp, nnz, 0, err);                    \
    if (st != MT_OK) return st;                                                                    \
    if (row < 1)                                                                                   \
      return mt_err(err, MT_INVALID_ARGUMENT, "adagrad_step_coo_" #SFX ": row = %lld < 1",         \
                    (long long)row);                                                               \
    job j = {.p = p, .s = s, .g = vals, .idx = idx, .row = row, .count = nnz,                      \
             .align = row == 1 ? BATCH : 1};                                                       \
    return launch(&j, hp, F32,                                                                     \
                  row == 1 ? PICK_SPARSE(hp->isa, coo1, SFX) : PICK_SPARSE(hp->isa, coorow, SFX)); \
  }                                                                                                \
  mt_status mt_adagrad_step_coo_dup_##SFX(T *p, T *s, const int64_t *idx, const T *vals,           \
                                          int64_t nnz, int sorted, mt_adagrad_dup *ws,             \
                                          const mt_adagrad_hparams *hp, mt_error *err) {           \
    static const char *name = "adagrad_step_coo_dup_" #SFX;                                        \
    mt_status st = mt_adagrad_check(name, hp, nnz, 0, err);                                        \
    const uint64_t *pairs = NULL;                                                                  \
    if (st != MT_OK || nnz == 0) return st;                                                        \
    if (!sorted && (st = dup_sort(ws, idx, F32 ? (const float *)vals : NULL, nnz, &pairs, name,    \
                                  err)) != MT_OK)                                                  \
      return st;                                                                                   \
    job j = {.p = p, .s = s, .g = vals, .idx = idx, .sorted = pairs, .count = nnz,                 \
             .align = BATCH};                                                                      \
    return launch(&j, hp, F32,                                                                     \
                  sorted ? PICK_SPARSE(hp->isa, dupi, SFX) : PICK_SPARSE(hp->isa, dups, SFX));     \
  }                                                                                                \
  mt_status mt_adagrad_step_csr_##SFX(T *p, T *s, int64_t rows, int64_t cols, const int64_t *crow, \
                                      const int64_t *col, const T *vals,                           \
                                      const mt_adagrad_hparams *hp, mt_error *err) {               \
    mt_status st = mt_adagrad_check("adagrad_step_csr_" #SFX, hp, rows, 0, err);                   \
    if (st != MT_OK) return st;                                                                    \
    if (cols < 0)                                                                                  \
      return mt_err(err, MT_INVALID_ARGUMENT, "adagrad_step_csr_" #SFX ": cols = %lld < 0",        \
                    (long long)cols);                                                              \
    job j = {.p = p, .s = s, .g = vals, .crow = crow, .col = col, .cols = cols, .count = rows,     \
             .align = 1};                                                                          \
    return launch(&j, hp, F32, PICK_SPARSE(hp->isa, csr, SFX));                                    \
  }                                                                                                \
  mt_status mt_adagrad_step_masked_dense_##SFX(T *p, T *s, const T *g, const uint8_t *mask,        \
                                               int64_t n, const mt_adagrad_hparams *hp,            \
                                               mt_error *err) {                                    \
    mt_status st = mt_adagrad_check("adagrad_step_masked_dense_" #SFX, hp, n, 0, err);             \
    if (st != MT_OK) return st;                                                                    \
    job j = {.p = p, .s = s, .g = g, .mask = mask, .count = n, .align = 64};                       \
    return launch(&j, hp, F32, PICK(hp->isa, mdense, SFX));                                        \
  }                                                                                                \
  mt_status mt_adagrad_step_masked_coo_##SFX(T *p, T *s, const int64_t *idx, const T *vals,        \
                                             int64_t nnz, const mt_adagrad_hparams *hp,            \
                                             mt_error *err) {                                      \
    mt_status st = mt_adagrad_check("adagrad_step_masked_coo_" #SFX, hp, nnz, 0, err);             \
    if (st != MT_OK) return st;                                                                    \
    job j = {.p = p, .s = s, .g = vals, .idx = idx, .row = 1, .count = nnz, .align = BATCH};       \
    return launch(&j, hp, F32, PICK_SPARSE(hp->isa, mcoo, SFX));                                   \
  }                                                                                                \
  void mt_stream_step_##SFX(T *p, T *s, const T *g, int64_t n, T k, int nthreads, int isa) {       \
    job j = {.p = p, .s = s, .g = g, .k = k, .count = n, .align = 64};                             \
    j.fn = PICK(isa, stream, SFX);                                                                 \
    run_job(&j, nthreads);                                                                         \
  }                                                                                                \
  void mt_touch_step_##SFX(T *p, T *s, const int64_t *idx, const T *vals, int64_t nnz, T k,        \
                           int nthreads, int isa) {                                                \
    job j = {.p = p, .s = s, .g = vals, .idx = idx, .k = k, .count = nnz, .align = BATCH};         \
    j.fn = PICK_SPARSE(isa, touch1, SFX);                                                          \
    run_job(&j, nthreads);                                                                         \
  }

MT__ENTRIES(float, f32, 1)
MT__ENTRIES(double, f64, 0)

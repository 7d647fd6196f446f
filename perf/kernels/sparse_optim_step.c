/* sparse_optim_step.c - fast in-place SparseAdam and sparse SGD steps,
 * bit-identical to impl/cpu/sparse_optim.c (see sparse_optim_step.h).
 *
 * Compiled with -ffp-contract=off like the reference: a * b + c is never
 * fused behind our back; fma() appears exactly where the reference calls
 * it. Speed comes from, and only from:
 *   - element grads (row 1): entries gathered in batches of 64 into local
 *     arrays, the arithmetic as a vector loop, results scattered back
 *     (coalesced indices are unique: no conflicts);
 *   - hybrid grads: each row of `row` contiguous elements is one vector loop
 *     in place;
 *   - an AVX2+FMA copy of every loop picked at run time (hardware fma is the
 *     correctly rounded fma() of the reference; vector sqrt and div are
 *     IEEE), and static OpenMP splitting of the entries.
 * Rule ids: SADAM-1/2 (SparseAdam), SGD-1/2 (SGD); see sparse_optim.c. */
#include "sparse_optim_step.h"

#include <math.h>
#include <string.h>

#ifdef _OPENMP
#include <omp.h>
#endif

#if defined(__x86_64__) && defined(__GNUC__)
#define SO_HAVE_AVX2 1
#define SO_AVX2 __attribute__((target("avx2,fma")))
#else
#define SO_HAVE_AVX2 0
#endif

#define SO_BATCH 64

/* The reference's fma for each dtype: fma() for double; for float, fma in
 * double (exact product, one rounding) then rounded to float. */
#define FMA_f64(a, b, c) fma((a), (b), (c))
#define FMA_f32(a, b, c) ((float)((double)(a) * (double)(b) + (double)(c)))

/* ---- shared: split entries over threads ----------------------------------- */

typedef struct so_job so_job;
typedef void (*so_range_fn)(const so_job *j, int64_t lo, int64_t hi);
struct so_job {
  void *p, *m, *v; /* sgd_momentum: m is the packed buffer */
  const int64_t *idx;
  const void *vals;
  int64_t nnz, row;
  /* scalars in the kernel dtype (f32: float-rounded, exact in double) */
  double c1, c2, eps, nstep;  /* sparse_adam */
  double nlr, mom, a1;        /* sgd */
  so_range_fn fn;
};

static void so_run(const so_job *j, int nthreads) {
  int nt = mt_adagrad_threads(nthreads);
  if (j->nnz <= 0) return;
#ifdef _OPENMP
  if (nt > 1 && j->nnz >= (int64_t)nt * SO_BATCH) {
#pragma omp parallel num_threads(nt)
    {
      int t = omp_get_thread_num(), n = omp_get_num_threads();
      int64_t lo = j->nnz * t / n, hi = j->nnz * (t + 1) / n;
      if (lo < hi) j->fn(j, lo, hi);
    }
    return;
  }
#else
  (void)nt;
#endif
  j->fn(j, 0, j->nnz);
}

static int so_avx2(int isa) {
#if SO_HAVE_AVX2
  int best = mt_adagrad_isa_best();
  return best >= MT_ADAGRAD_ISA_AVX2 && (isa == MT_ADAGRAD_ISA_AUTO || isa >= MT_ADAGRAD_ISA_AVX2);
#else
  (void)isa;
  return 0;
#endif
}

const char *mt_sparse_optim_isa_name(int isa) { return so_avx2(isa) ? "avx2" : "base"; }

/* ---- the loops ------------------------------------------------------------ */

/* SADAM-2 over cnt elements: P, M, V the param / exp_avg / exp_avg_sq
 * values (in place), G the grad values. Each line is the reference's. */
#define ADAM_MATH(T, SQRT, P, M, V, G, cnt)                                                        \
  for (int64_t q = 0; q < (cnt); q++) {                                                            \
    T gv = (G)[q], mo = (M)[q], vo = (V)[q];                                                       \
    /* exp_avg_update_values = grad_values.sub(old_exp_avg_values).mul_(1 - beta1) */              \
    T mu = (gv - mo) * c1;                                                                         \
    (M)[q] = mo + mu;                                                                              \
    /* exp_avg_sq_update_values = grad_values.pow(2).sub_(old).mul_(1 - beta2) */                  \
    T vu = (gv * gv - vo) * c2;                                                                    \
    (V)[q] = vo + vu;                                                                              \
    /* numer = update.add_(old_exp_avg); denom = update_sq.add_(old).sqrt_().add_(eps) */         \
    T numer = mu + mo;                                                                             \
    T denom = SQRT(vu + vo) + eps;                                                                 \
    /* param.add_(make_sparse(-step_size * numer.div_(denom))) */                                  \
    (P)[q] = (P)[q] + (numer / denom) * nstep;                                                     \
  }

#define ADAM_RANGE(NAME, ATTR, T, SQRT)                                                            \
  ATTR static void NAME(const so_job *j, int64_t lo, int64_t hi) {                                 \
    T *p = j->p, *m = j->m, *v = j->v;                                                             \
    const T *vals = j->vals;                                                                       \
    const int64_t *idx = j->idx, row = j->row;                                                     \
    const T c1 = (T)j->c1, c2 = (T)j->c2, eps = (T)j->eps, nstep = (T)j->nstep;                    \
    if (row > 1) { /* hybrid: whole rows in place */                                               \
      for (int64_t k = lo; k < hi; k++) {                                                          \
        int64_t b = idx[k] * row;                                                                  \
        T *P = p + b, *M = m + b, *V = v + b;                                                      \
        const T *G = vals + k * row;                                                               \
        ADAM_MATH(T, SQRT, P, M, V, G, row)                                                        \
      }                                                                                            \
      return;                                                                                      \
    }                                                                                              \
    T lp[SO_BATCH], lm[SO_BATCH], lv[SO_BATCH];                                                    \
    for (int64_t k0 = lo; k0 < hi; k0 += SO_BATCH) {                                               \
      int64_t c = hi - k0 < SO_BATCH ? hi - k0 : SO_BATCH;                                         \
      const int64_t *ix = idx + k0;                                                                \
      for (int64_t q = 0; q < c; q++) lp[q] = p[ix[q]], lm[q] = m[ix[q]], lv[q] = v[ix[q]];        \
      const T *G = vals + k0;                                                                      \
      ADAM_MATH(T, SQRT, lp, lm, lv, G, c)                                                         \
      for (int64_t q = 0; q < c; q++) p[ix[q]] = lp[q], m[ix[q]] = lm[q], v[ix[q]] = lv[q];        \
    }                                                                                              \
  }

/* SGD-1: param.add_(grad, alpha=-lr). A coalesced element grad rounds the
 * product first; a hybrid grad is one fused multiply-add. */
#define SGD_RANGE(NAME, ATTR, T, FMA)                                                              \
  ATTR static void NAME(const so_job *j, int64_t lo, int64_t hi) {                                 \
    T *p = j->p;                                                                                   \
    const T *vals = j->vals;                                                                       \
    const int64_t *idx = j->idx, row = j->row;                                                     \
    const T a = (T)j->nlr;                                                                         \
    if (row > 1) {                                                                                 \
      for (int64_t k = lo; k < hi; k++) {                                                          \
        T *P = p + idx[k] * row;                                                                   \
        const T *G = vals + k * row;                                                               \
        for (int64_t q = 0; q < row; q++) P[q] = FMA(a, G[q], P[q]);                               \
      }                                                                                            \
      return;                                                                                      \
    }                                                                                              \
    for (int64_t k = lo; k < hi; k++) p[idx[k]] = p[idx[k]] + a * vals[k];                         \
  }

/* SGD-2, steady state: buf.mul_(momentum).add_(grad, alpha=1 - dampening)
 * (equal indices merge into one fma), then param.add_(buf, alpha=-lr), fused
 * (the buffer is uncoalesced). */
#define SGDM_MATH(T, FMA, P, B, G, cnt)                                                            \
  for (int64_t q = 0; q < (cnt); q++) {                                                            \
    T bn = FMA(a1, (G)[q], (B)[q] * mom);                                                          \
    (B)[q] = bn;                                                                                   \
    (P)[q] = FMA(a, bn, (P)[q]);                                                                   \
  }

#define SGDM_RANGE(NAME, ATTR, T, FMA)                                                             \
  ATTR static void NAME(const so_job *j, int64_t lo, int64_t hi) {                                 \
    T *p = j->p, *buf = j->m;                                                                      \
    const T *vals = j->vals;                                                                       \
    const int64_t *idx = j->idx, row = j->row;                                                     \
    const T a = (T)j->nlr, mom = (T)j->mom, a1 = (T)j->a1;                                         \
    if (row > 1) {                                                                                 \
      for (int64_t k = lo; k < hi; k++) {                                                          \
        T *P = p + idx[k] * row, *B = buf + k * row;                                               \
        const T *G = vals + k * row;                                                               \
        SGDM_MATH(T, FMA, P, B, G, row)                                                            \
      }                                                                                            \
      return;                                                                                      \
    }                                                                                              \
    T lp[SO_BATCH];                                                                                \
    for (int64_t k0 = lo; k0 < hi; k0 += SO_BATCH) {                                               \
      int64_t c = hi - k0 < SO_BATCH ? hi - k0 : SO_BATCH;                                         \
      const int64_t *ix = idx + k0;                                                                \
      for (int64_t q = 0; q < c; q++) lp[q] = p[ix[q]];                                            \
      T *B = buf + k0;                                                                             \
      const T *G = vals + k0;                                                                      \
      SGDM_MATH(T, FMA, lp, B, G, c)                                                               \
      for (int64_t q = 0; q < c; q++) p[ix[q]] = lp[q];                                            \
    }                                                                                              \
  }

/* one copy per dtype and instruction set */
#define SO_NOATTR
#define SO_EXPAND(SUFFIX, ATTR)                                                                    \
  ADAM_RANGE(adam_f32_##SUFFIX, ATTR, float, sqrtf)                                                \
  ADAM_RANGE(adam_f64_##SUFFIX, ATTR, double, sqrt)                                                \
  SGD_RANGE(sgd_f32_##SUFFIX, ATTR, float, FMA_f32)                                                \
  SGD_RANGE(sgd_f64_##SUFFIX, ATTR, double, FMA_f64)                                               \
  SGDM_RANGE(sgdm_f32_##SUFFIX, ATTR, float, FMA_f32)                                              \
  SGDM_RANGE(sgdm_f64_##SUFFIX, ATTR, double, FMA_f64)

SO_EXPAND(base, SO_NOATTR)
#if SO_HAVE_AVX2
SO_EXPAND(avx2, SO_AVX2)
#define SO_PICK(isa, name) (so_avx2(isa) ? name##_avx2 : name##_base)
#else
#define SO_PICK(isa, name) name##_base
#endif

/* ---- the entry points ----------------------------------------------------- */

static mt_status so_check(const char *name, const void *hp, int64_t nnz, int64_t row,
                          mt_error *err) {
  if (!hp) return mt_err(err, MT_INVALID_ARGUMENT, "%s: no hyper-parameters", name);
  if (nnz < 0 || row < 1)
    return mt_err(err, MT_INVALID_ARGUMENT, "%s: nnz %lld, row %lld", name, (long long)nnz,
                  (long long)row);
  return MT_OK;
}

/* The reference's scalars (parse_hp / update in sparse_optim.c): Python
 * numbers cast to the op's compute type (float for f32), step_size a
 * Python float. */
static so_job adam_job(int f64, const mt_sparse_adam_hparams *hp) {
#define OPS(x) (f64 ? (x) : (double)(float)(x))
  double bc1 = 1.0 - pow(hp->beta1, hp->step), bc2 = 1.0 - pow(hp->beta2, hp->step);
  double step_size = hp->lr * sqrt(bc2) / bc1;
  so_job j;
  memset(&j, 0, sizeof j);
  j.c1 = OPS(1.0 - hp->beta1);
  j.c2 = OPS(1.0 - hp->beta2);
  j.eps = OPS(hp->eps);
  j.nstep = OPS(-step_size);
  return j;
}

static so_job sgd_job(int f64, const mt_sgd_hparams *hp) {
  so_job j;
  memset(&j, 0, sizeof j);
  j.nlr = OPS(-hp->lr);              /* alpha rounded to the dtype */
  j.mom = OPS(hp->momentum);         /* scale(): op_scalar(momentum) */
  j.a1 = OPS(1.0 - hp->dampening);   /* coo_add: op_scalar(alpha) */
  return j;
#undef OPS
}

#define ADAM_ENTRY(T, SFX)                                                                         \
  mt_status mt_sparse_adam_step_##SFX(T *p, T *m, T *v, const int64_t *idx, const T *vals,         \
                                      int64_t nnz, int64_t row,                                    \
                                      const mt_sparse_adam_hparams *hp, mt_error *err) {           \
    mt_status st = so_check("sparse_adam_step_" #SFX, hp, nnz, row, err);                          \
    if (st != MT_OK) return st;                                                                    \
    so_job j = adam_job(sizeof(T) == 8, hp);                                                       \
    j.p = p, j.m = m, j.v = v, j.idx = idx, j.vals = vals, j.nnz = nnz, j.row = row;               \
    j.fn = SO_PICK(hp->isa, adam_##SFX);                                                           \
    so_run(&j, hp->nthreads);                                                                      \
    return MT_OK;                                                                                  \
  }
ADAM_ENTRY(float, f32)
ADAM_ENTRY(double, f64)

#define SGD_ENTRY(T, SFX)                                                                          \
  mt_status mt_sgd_step_coo_##SFX(T *p, const int64_t *idx, const T *vals, int64_t nnz,            \
                                  int64_t row, const mt_sgd_hparams *hp, mt_error *err) {          \
    mt_status st = so_check("sgd_step_coo_" #SFX, hp, nnz, row, err);                              \
    if (st != MT_OK) return st;                                                                    \
    if (hp->momentum != 0.0)                                                                       \
      return mt_err(err, MT_INVALID_ARGUMENT,                                                      \
                    "sgd_step_coo_" #SFX ": momentum %g needs the momentum step", hp->momentum);   \
    so_job j = sgd_job(sizeof(T) == 8, hp);                                                        \
    j.p = p, j.idx = idx, j.vals = vals, j.nnz = nnz, j.row = row;                                 \
    j.fn = SO_PICK(hp->isa, sgd_##SFX);                                                            \
    so_run(&j, hp->nthreads);                                                                      \
    return MT_OK;                                                                                  \
  }                                                                                                \
  mt_status mt_sgd_momentum_step_coo_##SFX(T *p, T *buf, const int64_t *idx, const T *vals,       \
                                           int64_t nnz, int64_t row, const mt_sgd_hparams *hp,     \
                                           mt_error *err) {                                        \
    mt_status st = so_check("sgd_momentum_step_coo_" #SFX, hp, nnz, row, err);                     \
    if (st != MT_OK) return st;                                                                    \
    if (!(hp->momentum > 0.0))                                                                     \
      return mt_err(err, MT_INVALID_ARGUMENT,                                                      \
                    "sgd_momentum_step_coo_" #SFX ": momentum must be > 0, got %g",                \
                    hp->momentum);                                                                 \
    so_job j = sgd_job(sizeof(T) == 8, hp);                                                        \
    j.p = p, j.m = buf, j.idx = idx, j.vals = vals, j.nnz = nnz, j.row = row;                      \
    j.fn = SO_PICK(hp->isa, sgdm_##SFX);                                                           \
    so_run(&j, hp->nthreads);                                                                      \
    return MT_OK;                                                                                  \
  }
SGD_ENTRY(float, f32)
SGD_ENTRY(double, f64)

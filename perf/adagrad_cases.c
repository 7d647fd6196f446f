/* adagrad_cases.c - data, byte model, reference check and timed step of the
 * Adagrad benchmark cases (see adagrad_cases.h, perf/README.md). */
#include "adagrad_cases.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mt_core.h"

static const char *const PATH_NAMES[BC__COUNT] = {
    [BC_DENSE] = "dense",           [BC_SPARSE_COO] = "sparse_coo",
    [BC_SPARSE_CSR] = "sparse_csr", [BC_MASKED_DENSE] = "masked_dense",
    [BC_MASKED_SPARSE] = "masked_sparse", [BC_HYBRID_COO] = "hybrid_coo",
    [BC_STREAM] = "stream",         [BC_TOUCH] = "touch",
    [BC_SPARSE_COO_DUP] = "sparse_coo_dup",
};

const char *bc_path_name(bc_path p) { return p < BC__COUNT ? PATH_NAMES[p] : "?"; }

int bc_path_from_name(const char *s, bc_path *out) {
  for (int p = 0; p < BC__COUNT; p++)
    if (strcmp(s, PATH_NAMES[p]) == 0) {
      *out = (bc_path)p;
      return 0;
    }
  return -1;
}

static const char *const OPT_NAMES[BC_OPT__COUNT] = {
#define BC_OPT_NAME(id, name) [BC_OPT_##id] = name,
    BC_OPTS(BC_OPT_NAME)
#undef BC_OPT_NAME
};

const char *bc_opt_name(bc_opt o) { return o < BC_OPT__COUNT ? OPT_NAMES[o] : "?"; }

int bc_opt_from_name(const char *s, bc_opt *out) {
  for (int o = 0; o < BC_OPT__COUNT; o++)
    if (strcmp(s, OPT_NAMES[o]) == 0) {
      *out = (bc_opt)o;
      return 0;
    }
  return -1;
}

int bc_opt_path_ok(bc_opt o, bc_path p) {
  return o == BC_OPT_ADAGRAD || p == BC_SPARSE_COO || p == BC_HYBRID_COO;
}

int bc_size_ok(bc_path path, int64_t n) {
  if (n < 1) return 0;
  if (path == BC_SPARSE_CSR) return n % BC_CSR_COLS == 0;
  if (path == BC_HYBRID_COO) return n % BC_HYBRID_DIM == 0;
  return 1;
}

/* ---- random data (splitmix64: fast, deterministic) ----------------------- */

typedef struct {
  uint64_t s;
} rng;
static inline uint64_t next(rng *r) {
  uint64_t z = (r->s += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}
static inline double unit(rng *r) { return (double)(next(r) >> 11) * 0x1p-53; }
/* A gradient value: [0.5, 1) * 1e-2, never zero, small and positive, so
 * that warm runs of many steps stay finite and normal. Positive because
 * the stream and touch kernels add g itself to s (s += g, the bandwidth
 * of Adagrad's s += g*g) and run thousands of times on the same data, as
 * cases of their own and as the pairs timed inside the dense and sparse
 * cases' loops: with signed values s drifted below zero and every later
 * step took the square root of a negative number (NaN everywhere, unseen
 * while the CPU's NaNs matched its reference's bit for bit; the first GPU
 * run, 2026-12-04, gave +nan against the host's -nan). bc_verify now
 * refuses a non-finite expected value. */
static inline double grad_value(rng *r) {
  uint64_t x = next(r);
  return (0.5 + 0.5 * (double)(x >> 11) * 0x1p-53) * 1e-2;
}
static void fill(void *buf, int f64, int64_t n, rng *r, int kind) {
  for (int64_t i = 0; i < n; i++) {
    double v = kind == 0 ? 2.0 * unit(r) - 1.0 : kind == 1 ? 0.0 : grad_value(r);
    if (f64)
      ((double *)buf)[i] = v;
    else
      ((float *)buf)[i] = (float)v;
  }
}

/* Bernoulli(density) selection of m positions, called twice with the same
 * seed (count, then fill) so that no capacity guess is needed. */
static inline int pick(rng *r, uint64_t thr) { return (next(r) >> 32) < thr; }
static uint64_t threshold(double density) {
  double t = density * 4294967296.0;
  return t >= 4294967296.0 ? (uint64_t)1 << 32 : (uint64_t)t;
}

static void *alloc(size_t bytes) {
  /* 64-byte aligned, so that a 64-element range starts a cache line */
  void *p = NULL;
  if (posix_memalign(&p, 64, bytes ? bytes : 64)) return NULL;
  return p;
}

int bc_base_make(bc_base *b, int64_t n, int f64, uint64_t seed, char *why, size_t len) {
  size_t es = f64 ? 8 : 4;
  memset(b, 0, sizeof *b);
  b->n = n;
  b->f64 = f64;
  b->p = alloc((size_t)n * es);
  b->s = alloc((size_t)n * es);
  b->g = alloc((size_t)n * es);
  if (!b->p || !b->s || !b->g) {
    snprintf(why, len, "out of memory for 3 x %lld %s elements", (long long)n,
             f64 ? "f64" : "f32");
    bc_base_free(b);
    return -1;
  }
  rng r = {seed};
  fill(b->p, f64, n, &r, 0);
  fill(b->s, f64, n, &r, 1); /* torch's initial_accumulator_value = 0 */
  fill(b->g, f64, n, &r, 2);
  return 0;
}

int bc_base_need_m(bc_base *b, char *why, size_t len) {
  size_t bytes = (size_t)b->n * (b->f64 ? 8 : 4);
  if (b->m) return 0;
  if (!(b->m = alloc(bytes))) {
    snprintf(why, len, "out of memory for exp_avg (%lld elements)", (long long)b->n);
    return -1;
  }
  memset(b->m, 0, bytes); /* torch: zeros_like(param) */
  return 0;
}

void bc_base_free(bc_base *b) {
  free(b->m);
  free(b->p);
  free(b->s);
  free(b->g);
  memset(b, 0, sizeof *b);
}

void bc_grad_free(bc_grad *g) {
  mt_adagrad_dup_free(g->dup);
  free(g->uidx);
  free(g->cvals);
  free(g->idx);
  free(g->crow);
  free(g->col);
  free(g->vals);
  free(g->mask);
  free(g->buf);
  memset(g, 0, sizeof *g);
}

int bc_grad_set_opt(bc_grad *g, bc_opt opt, char *why, size_t len) {
  if (!bc_opt_path_ok(opt, g->path)) {
    snprintf(why, len, "%s does not run path %s", bc_opt_name(opt), bc_path_name(g->path));
    return -1;
  }
  g->opt = opt;
  if (opt == BC_OPT_SGD_MOMENTUM && !g->buf) {
    size_t bytes = (size_t)g->specified * (g->f64 ? 8 : 4);
    if (!(g->buf = alloc(bytes))) {
      snprintf(why, len, "out of memory for the momentum buffer (%lld values)",
               (long long)g->specified);
      return -1;
    }
    /* the first step's buf = grad.detach().clone() */
    memcpy(g->buf, g->vals, bytes);
  }
  return 0;
}

static int64_t lower_bound(const int64_t *a, int64_t lo, int64_t hi, int64_t x);
static int cmp_i64(const void *a, const void *b);

/* sparse_coo_dup: given idx, vals (entries) and uidx (specified), the
 * coalesced values as the reference's coalesce makes them (mt_coo_coalesce:
 * each element's values in input order from the first, in the dtype, each
 * addition rounded, as torch's coalesce) and the CPU step's sort scratch.
 * -1 with why. */
static int dup_finish(bc_grad *g, char *why, size_t len) {
  size_t es = g->f64 ? 8 : 4;
  int64_t u = g->specified;
  mt_dtype dt = g->f64 ? MT_float64 : MT_float32;
  mt_error err = {0};
  double *acc = calloc((size_t)(u ? u : 1), sizeof *acc);
  unsigned char *seen = calloc((size_t)(u ? u : 1), 1);
  if (!acc || !seen || !(g->cvals = alloc((size_t)u * es))) {
    free(acc);
    free(seen);
    snprintf(why, len, "out of memory for the coalesced values of %lld elements", (long long)u);
    return -1;
  }
  for (int64_t k = 0; k < g->entries; k++) {
    int64_t r = lower_bound(g->uidx, 0, u, g->idx[k]);
    double v = mt_get_f64(g->vals, dt, k);
    acc[r] = seen[r] ? acc[r] + v : v;
    if (!g->f64) acc[r] = (float)acc[r]; /* float32's addition, rounded each time */
    seen[r] = 1;
  }
  for (int64_t r = 0; r < u; r++) mt_set_f64(g->cvals, dt, r, acc[r]);
  free(acc);
  free(seen);
  if (mt_adagrad_dup_new(&g->dup, g->n, g->entries, &err) != MT_OK) {
    snprintf(why, len, "%.400s", err.msg);
    return -1;
  }
  return 0;
}

int bc_grad_dup_from(bc_grad *g, int f64, int64_t n, const int64_t *idx, const void *vals,
                     int64_t entries, char *why, size_t len) {
  size_t es = f64 ? 8 : 4;
  memset(g, 0, sizeof *g);
  g->path = BC_SPARSE_COO_DUP;
  g->f64 = f64;
  g->n = n;
  g->row = g->rows = 1;
  g->cols = n;
  g->entries = entries;
  if (!(g->idx = alloc((size_t)entries * 8)) || !(g->vals = alloc((size_t)entries * es)) ||
      !(g->uidx = alloc((size_t)entries * 8))) {
    snprintf(why, len, "out of memory for a sparse_coo_dup grad of %lld entries",
             (long long)entries);
    bc_grad_free(g);
    return -1;
  }
  for (int64_t k = 0; k < entries; k++)
    if (idx[k] < 0 || idx[k] >= n) {
      snprintf(why, len, "sparse_coo_dup: idx[%lld] = %lld is not in [0, %lld)", (long long)k,
               (long long)idx[k], (long long)n);
      bc_grad_free(g);
      return -1;
    }
  memcpy(g->idx, idx, (size_t)entries * 8);
  memcpy(g->vals, vals, (size_t)entries * es);
  memcpy(g->uidx, idx, (size_t)entries * 8);
  qsort(g->uidx, (size_t)entries, sizeof *g->uidx, cmp_i64);
  int64_t u = 0;
  for (int64_t k = 0; k < entries; k++)
    if (u == 0 || g->uidx[u - 1] != g->uidx[k]) g->uidx[u++] = g->uidx[k];
  g->specified = u;
  g->density = n ? (double)u / (double)n : 0.0;
  if (dup_finish(g, why, len)) {
    bc_grad_free(g);
    return -1;
  }
  return 0;
}

bc_grad bc_grad_coalesced(const bc_grad *g) {
  bc_grad v = *g;
  if (g->path != BC_SPARSE_COO_DUP) return v;
  v.path = BC_SPARSE_COO;
  v.idx = g->uidx;
  v.vals = g->cvals;
  v.entries = g->specified;
  v.uidx = NULL, v.cvals = NULL, v.dup = NULL;
  return v;
}

int64_t bc_grad_extra_bytes(const bc_grad *g) { return mt_adagrad_dup_bytes(g->dup); }

int bc_grad_make(bc_grad *g, bc_path path, int f64, int64_t n, double density, uint64_t seed,
                 char *why, size_t len) {
  size_t es = f64 ? 8 : 4;
  uint64_t thr = threshold(density);
  memset(g, 0, sizeof *g);
  g->path = path;
  g->f64 = f64;
  g->n = n;
  g->density = density;
  g->row = 1;
  g->rows = 1;
  g->cols = n;
  if (path == BC_DENSE || path == BC_STREAM) {
    g->entries = g->specified = n;
    return 0;
  }
  rng r = {seed};
  if (path == BC_MASKED_DENSE) {
    if (!(g->mask = alloc((size_t)n))) goto oom;
    int64_t c = 0;
    for (int64_t i = 0; i < n; i++) c += g->mask[i] = (uint8_t)pick(&r, thr);
    g->entries = n;
    g->specified = c;
    return 0;
  }
  /* units to sample: elements, or rows of 64 for hybrid */
  int64_t units = n;
  if (path == BC_HYBRID_COO) {
    g->row = BC_HYBRID_DIM;
    units = g->rows = n / BC_HYBRID_DIM;
    g->cols = BC_HYBRID_DIM;
  }
  if (path == BC_SPARSE_CSR) {
    g->cols = BC_CSR_COLS;
    g->rows = n / BC_CSR_COLS;
  }
  rng r0 = r;
  int64_t nnz = 0;
  for (int64_t u = 0; u < units; u++) nnz += pick(&r, thr);
  r = r0;
  if (path == BC_SPARSE_COO_DUP) { /* sparse_coo's elements, BC_DUP_COPIES entries each */
    int64_t e = nnz * BC_DUP_COPIES;
    g->entries = e;
    g->specified = nnz;
    if (!(g->uidx = alloc((size_t)nnz * 8)) || !(g->idx = alloc((size_t)e * 8)) ||
        !(g->vals = alloc((size_t)e * es)))
      goto oom;
    for (int64_t i = 0, k = 0; i < n; i++)
      if (pick(&r, thr)) g->uidx[k++] = i;
    for (int64_t k = 0; k < e; k++) g->idx[k] = g->uidx[k / BC_DUP_COPIES];
    rng rv = {seed ^ 0x5bd1e995u};
    fill(g->vals, f64, e, &rv, 2);
    /* the input order: a Fisher-Yates shuffle of the entries */
    rng rs = {seed ^ 0x73687566666c65ull};
    for (int64_t k = e - 1; k > 0; k--) {
      int64_t j = (int64_t)(next(&rs) % (uint64_t)(k + 1)), ti = g->idx[k];
      g->idx[k] = g->idx[j], g->idx[j] = ti;
      if (f64) {
        double tv = ((double *)g->vals)[k];
        ((double *)g->vals)[k] = ((double *)g->vals)[j], ((double *)g->vals)[j] = tv;
      } else {
        float tv = ((float *)g->vals)[k];
        ((float *)g->vals)[k] = ((float *)g->vals)[j], ((float *)g->vals)[j] = tv;
      }
    }
    if (dup_finish(g, why, len)) {
      bc_grad_free(g);
      return -1;
    }
    return 0;
  }
  g->entries = nnz;
  g->specified = nnz * g->row;
  if (!(g->vals = alloc((size_t)(nnz * g->row) * es))) goto oom;
  if (path == BC_SPARSE_CSR) {
    if (!(g->crow = calloc((size_t)g->rows + 1, sizeof *g->crow))) goto oom;
    if (!(g->col = alloc((size_t)nnz * sizeof *g->col))) goto oom;
  } else if (!(g->idx = alloc((size_t)nnz * sizeof *g->idx))) {
    goto oom;
  }
  int64_t k = 0;
  for (int64_t u = 0; u < units; u++) {
    if (!pick(&r, thr)) continue;
    if (path == BC_SPARSE_CSR) {
      g->col[k] = u % BC_CSR_COLS;
      g->crow[u / BC_CSR_COLS + 1]++;
    } else {
      g->idx[k] = u;
    }
    k++;
  }
  if (path == BC_SPARSE_CSR)
    for (int64_t i = 0; i < g->rows; i++) g->crow[i + 1] += g->crow[i];
  rng rv = {seed ^ 0x5bd1e995u};
  fill(g->vals, f64, nnz * g->row, &rv, 2);
  return 0;
oom:
  snprintf(why, len, "out of memory for a %s grad of %lld elements at density %g",
           bc_path_name(path), (long long)n, density);
  bc_grad_free(g);
  return -1;
}

/* ---- the step --------------------------------------------------------- */

mt_adagrad_hparams bc_hparams(int nthreads) {
  return (mt_adagrad_hparams){.clr = mt_adagrad_clr(0.01, 0.0, 1.0),
                              .eps = 1e-10,
                              .weight_decay = 0.0,
                              .maximize = 0,
                              .nthreads = nthreads,
                              .isa = MT_ADAGRAD_ISA_AUTO};
}

/* The stream kernel's factor: -clr, as the step scales its update. */

/* One step on explicit arrays. */
static mt_status step_on(bc_path path, int f64, void *p, void *s, const void *gd, int64_t n,
                     const bc_grad *g, int64_t entries, int64_t rows, int nthreads,
                     mt_error *err) {
  mt_adagrad_hparams hp = bc_hparams(nthreads);
  switch (path) {
  case BC_DENSE:
    return f64 ? mt_adagrad_step_dense_f64(p, s, gd, n, &hp, err)
               : mt_adagrad_step_dense_f32(p, s, gd, n, &hp, err);
  case BC_STREAM:
    if (f64)
      mt_stream_step_f64(p, s, gd, n, BC_STREAM_K, nthreads, MT_ADAGRAD_ISA_AUTO);
    else
      mt_stream_step_f32(p, s, gd, n, (float)BC_STREAM_K, nthreads, MT_ADAGRAD_ISA_AUTO);
    return MT_OK;
  case BC_MASKED_DENSE:
    return f64 ? mt_adagrad_step_masked_dense_f64(p, s, gd, g->mask, n, &hp, err)
               : mt_adagrad_step_masked_dense_f32(p, s, gd, g->mask, n, &hp, err);
  case BC_TOUCH:
    if (f64)
      mt_touch_step_f64(p, s, g->idx, g->vals, entries, BC_STREAM_K, nthreads, MT_ADAGRAD_ISA_AUTO);
    else
      mt_touch_step_f32(p, s, g->idx, g->vals, entries, (float)BC_STREAM_K, nthreads,
                        MT_ADAGRAD_ISA_AUTO);
    return MT_OK;
  case BC_SPARSE_COO:
  case BC_HYBRID_COO:
    return f64 ? mt_adagrad_step_coo_f64(p, s, g->idx, g->vals, entries, g->row, &hp, err)
               : mt_adagrad_step_coo_f32(p, s, g->idx, g->vals, entries, g->row, &hp, err);
  case BC_MASKED_SPARSE:
    return f64 ? mt_adagrad_step_masked_coo_f64(p, s, g->idx, g->vals, entries, &hp, err)
               : mt_adagrad_step_masked_coo_f32(p, s, g->idx, g->vals, entries, &hp, err);
  case BC_SPARSE_COO_DUP:
    return f64 ? mt_adagrad_step_coo_dup_f64(p, s, g->idx, g->vals, entries, 0, g->dup, &hp, err)
               : mt_adagrad_step_coo_dup_f32(p, s, g->idx, g->vals, entries, 0, g->dup, &hp, err);
  case BC_SPARSE_CSR:
    return f64 ? mt_adagrad_step_csr_f64(p, s, rows, g->cols, g->crow, g->col, g->vals, &hp, err)
               : mt_adagrad_step_csr_f32(p, s, rows, g->cols, g->crow, g->col, g->vals, &hp, err);
  default:
    return mt_err(err, MT_INVALID_ARGUMENT, "bench: unknown path %d", (int)path);
  }
}

/* One step of SparseAdam or sparse SGD (g->opt) on b. */
static mt_status opt_step(const bc_base *b, const bc_grad *g, int nthreads, mt_error *err) {
  mt_sparse_adam_hparams ah = {.lr = BC_ADAM_LR, .beta1 = BC_ADAM_BETA1, .beta2 = BC_ADAM_BETA2,
                               .eps = BC_ADAM_EPS, .step = BC_ADAM_STEP, .nthreads = nthreads,
                               .isa = MT_ADAGRAD_ISA_AUTO};
  mt_sgd_hparams sh = {.lr = BC_SGD_LR, .momentum = 0.0, .dampening = BC_SGD_DAMPENING,
                       .nthreads = nthreads, .isa = MT_ADAGRAD_ISA_AUTO};
  int f64 = b->f64;
  switch (g->opt) {
  case BC_OPT_SPARSE_ADAM:
    if (!b->m) return mt_err(err, MT_INVALID_ARGUMENT, "bench: sparse_adam without exp_avg");
    return f64 ? mt_sparse_adam_step_f64(b->p, b->m, b->s, g->idx, g->vals, g->entries, g->row,
                                         &ah, err)
               : mt_sparse_adam_step_f32(b->p, b->m, b->s, g->idx, g->vals, g->entries, g->row,
                                         &ah, err);
  case BC_OPT_SGD:
    return f64 ? mt_sgd_step_coo_f64(b->p, g->idx, g->vals, g->entries, g->row, &sh, err)
               : mt_sgd_step_coo_f32(b->p, g->idx, g->vals, g->entries, g->row, &sh, err);
  case BC_OPT_SGD_MOMENTUM:
    sh.momentum = BC_SGD_MOMENTUM;
    if (!g->buf) return mt_err(err, MT_INVALID_ARGUMENT, "bench: sgd_momentum without a buffer");
    return f64 ? mt_sgd_momentum_step_coo_f64(b->p, g->buf, g->idx, g->vals, g->entries, g->row,
                                              &sh, err)
               : mt_sgd_momentum_step_coo_f32(b->p, g->buf, g->idx, g->vals, g->entries, g->row,
                                              &sh, err);
  default:
    return mt_err(err, MT_INVALID_ARGUMENT, "bench: unknown optimizer %d", (int)g->opt);
  }
}

mt_status bc_step(const bc_base *b, const bc_grad *g, int nthreads, mt_error *err) {
  if (g->opt != BC_OPT_ADAGRAD) return opt_step(b, g, nthreads, err);
  return step_on(g->path, b->f64, b->p, b->s, b->g, b->n, g, g->entries, g->rows, nthreads,
                    err);
}

/* First element where a and b differ bit for bit (es-byte elements), or -1. */
static int64_t first_diff(const void *a, const void *b, int64_t n, size_t es) {
  if (memcmp(a, b, (size_t)n * es) == 0) return -1;
  for (int64_t i = 0; i < n; i++)
    if (memcmp((const char *)a + i * es, (const char *)b + i * es, es) != 0) return i;
  return -1;
}

/* ---- verification: the whole output against the reference op ----------- */

/* The touched elements of g in order (the order of its entries): the
 * position of the next one, or -1 after the last. */
typedef struct {
  const bc_grad *g;
  int64_t k, j, r, i;
} walk;

static int dense_like(bc_path p) { return p == BC_DENSE || p == BC_STREAM; }
static int64_t touched_count(const bc_grad *g) { return dense_like(g->path) ? g->n : g->specified; }

static int64_t walk_next(walk *w) {
  const bc_grad *g = w->g;
  switch (g->path) {
  case BC_DENSE:
  case BC_STREAM:
    return w->i < g->n ? w->i++ : -1;
  case BC_MASKED_DENSE:
    while (w->i < g->n && !g->mask[w->i]) w->i++;
    return w->i < g->n ? w->i++ : -1;
  case BC_SPARSE_CSR:
    if (w->k >= g->entries) return -1;
    while (g->crow[w->r + 1] <= w->k) w->r++;
    return w->r * g->cols + g->col[w->k++];
  case BC_SPARSE_COO_DUP: /* the distinct elements, in order */
    return w->k < g->specified ? g->uidx[w->k++] : -1;
  default: /* element COO (row 1) or hybrid rows */
    if (w->k >= g->entries) return -1;
    int64_t pos = g->idx[w->k] * g->row + w->j;
    if (++w->j == g->row) w->j = 0, w->k++;
    return pos;
  }
}

/* First k in [lo, hi) with a[k] >= x. */
static int64_t lower_bound(const int64_t *a, int64_t lo, int64_t hi, int64_t x) {
  while (lo < hi) {
    int64_t mid = lo + (hi - lo) / 2;
    if (a[mid] < x) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/* Does one step of g's path update element i (is it in the grad)? */
static int is_touched(const bc_grad *g, int64_t i) {
  switch (g->path) {
  case BC_DENSE:
  case BC_STREAM:
    return 1;
  case BC_MASKED_DENSE:
    return g->mask[i] != 0;
  case BC_SPARSE_CSR: {
    int64_t r = i / g->cols, c = i % g->cols, k = lower_bound(g->col, g->crow[r], g->crow[r + 1], c);
    return k < g->crow[r + 1] && g->col[k] == c;
  }
  case BC_SPARSE_COO_DUP: {
    int64_t k = lower_bound(g->uidx, 0, g->specified, i);
    return k < g->specified && g->uidx[k] == i;
  }
  default: {
    int64_t u = i / g->row, k = lower_bound(g->idx, 0, g->entries, u);
    return k < g->entries && g->idx[k] == u;
  }
  }
}

static mt_tensor *dense_buf(mt_dtype dt, int ndim, const int64_t *shape) {
  mt_tensor *t = NULL;
  return mt_dense_new(dt, ndim, shape, &t, NULL) == MT_OK ? t : NULL;
}

/* The reference on a compact problem: m touched elements gathered into
 * cp, cs (param, state_sum; updated in place) with their grad values cg,
 * every one of them present in the grad: adagrad_dense with a dense grad,
 * adagrad_sparse with a COO grad of indices 0..m-1 (hybrid: rows of 64),
 * adagrad_masked with a mask of ones (dense storage) or that COO grad; for
 * stream and touch the plain loop. The ops are elementwise, so each element
 * comes out as in the whole problem. */
/* sparse_coo_dup: the uncoalesced entries of one compact problem, in input
 * order: their compact indices (0..m-1) and values */
typedef struct {
  int64_t ne;
  const int64_t *idx;
  const void *vals;
} dup_chunk;

static int reference_compact(bc_path path, int f64, int64_t m, void *cp, void *cs, const void *cg,
                             const dup_chunk *dc, char *why, size_t len) {
  mt_dtype dt = f64 ? MT_float64 : MT_float32;
  size_t es = f64 ? 8 : 4;
  if (path == BC_STREAM || path == BC_TOUCH) {
    for (int64_t t = 0; t < m; t++)
      if (f64) {
        double v = ((const double *)cg)[t];
        ((double *)cs)[t] = ((double *)cs)[t] + v;
        ((double *)cp)[t] = ((double *)cp)[t] + v * BC_STREAM_K;
      } else {
        float v = ((const float *)cg)[t];
        ((float *)cs)[t] = ((float *)cs)[t] + v;
        ((float *)cp)[t] = ((float *)cp)[t] + v * (float)BC_STREAM_K;
      }
    return 0;
  }
  int rc = -1;
  int hybrid = path == BC_HYBRID_COO, ndim = hybrid ? 2 : 1;
  int64_t shape[2] = {hybrid ? m / BC_HYBRID_DIM : m, BC_HYBRID_DIM};
  mt_tensor *param = NULL, *state = NULL, *grad = NULL, *gdata = NULL, *gmask = NULL;
  mt_call call;
  mt_error err = {0};
  mt_status st;
  memset(&call, 0, sizeof call);
  if (!(param = dense_buf(dt, ndim, shape)) || !(state = dense_buf(dt, ndim, shape))) goto oom;
  memcpy(param->values, cp, (size_t)m * es);
  memcpy(state->values, cs, (size_t)m * es);
  switch (path) {
  case BC_DENSE:
    call.op = MT_OP_adagrad_dense;
    if (!(grad = dense_buf(dt, 1, shape))) goto oom;
    memcpy(grad->values, cg, (size_t)m * es);
    break;
  case BC_MASKED_DENSE:
    call.op = MT_OP_adagrad_masked;
    if (!(gdata = dense_buf(dt, 1, shape)) || !(gmask = dense_buf(MT_bool, 1, shape))) goto oom;
    memcpy(gdata->values, cg, (size_t)m * es);
    memset(gmask->values, 1, (size_t)m);
    st = mt_masked_new(gdata, gmask, &grad, &err);
    gdata = gmask = NULL; /* taken, also on failure */
    if (st != MT_OK) goto oom;
    break;
  default: { /* sparse_coo, sparse_csr, hybrid_coo, masked_sparse, sparse_coo_dup */
    call.op = path == BC_MASKED_SPARSE ? MT_OP_adagrad_masked : MT_OP_adagrad_sparse;
    if (dc) { /* uncoalesced: the reference coalesces it (torch's grad.coalesce()) */
      if (mt_coo_new(dt, 1, shape, 1, dc->ne, &grad, &err) != MT_OK) goto oom;
      memcpy(grad->indices, dc->idx, (size_t)dc->ne * 8);
      memcpy(grad->values, dc->vals, (size_t)dc->ne * es);
      grad->coalesced = 0;
      break;
    }
    if (mt_coo_new(dt, ndim, shape, 1, shape[0], &grad, &err) != MT_OK) goto oom;
    for (int64_t k = 0; k < shape[0]; k++) grad->indices[k] = k;
    memcpy(grad->values, cg, (size_t)m * es);
    grad->coalesced = 1;
    break;
  }
  }
  mt_kwarg kv[] = {{.name = "lr", .type = MT_KW_FLOAT, .f = 0.01},
                   {.name = "eps", .type = MT_KW_FLOAT, .f = 1e-10},
                   {.name = "step", .type = MT_KW_INT, .i = 1, .f = 1.0}};
  mt_kwargs kw = {3, kv};
  const mt_tensor *in[] = {param, grad, state};
  call.host = mt_host_default();
  call.n_in = 3;
  call.in = in;
  call.kw = &kw;
  if ((st = mt_dispatch(mt_backend_cpu(), &call, &err)) != MT_OK) {
    snprintf(why, len, "reference %s failed: %.400s", mt_op_name(call.op), err.msg);
    goto out;
  }
  memcpy(cp, call.out[0]->values, (size_t)m * es);
  memcpy(cs, call.out[1]->values, (size_t)m * es);
  rc = 0;
  goto out;
oom:
  snprintf(why, len, "verify: could not build the reference inputs: %.400s", err.msg);
out:
  for (int k = 0; k < call.n_out; k++) mt_tensor_free(call.out[k]);
  mt_tensor_free(param);
  mt_tensor_free(state);
  mt_tensor_free(grad);
  mt_tensor_free(gdata);
  mt_tensor_free(gmask);
  return rc;
}

/* The reference of SparseAdam / sparse SGD on a compact problem: m touched
 * elements (sparse_coo: m entries; hybrid_coo: m / 64 rows) gathered into
 * cp (param), cs (exp_avg_sq), cm (exp_avg), cb (the momentum buffer's
 * values), all updated in place, with their grad values cg: a COO grad of
 * indices 0..rows-1, coalesced like the benchmark's (mt_dispatch on the CPU
 * backend: sparse_adam [param, grad, exp_avg, exp_avg_sq]; sgd [param,
 * grad] or [param, grad, buffer] with the buffer a COO tensor on the same
 * entries). The ops are elementwise over the entries, so each element comes
 * out as in the whole problem. */
static int reference_opt(bc_opt opt, bc_path path, int f64, int64_t m, void *cp, void *cs,
                         void *cm, void *cb, const void *cg, char *why, size_t len) {
  mt_dtype dt = f64 ? MT_float64 : MT_float32;
  size_t es = f64 ? 8 : 4;
  int rc = -1;
  int hybrid = path == BC_HYBRID_COO, ndim = hybrid ? 2 : 1;
  int64_t shape[2] = {hybrid ? m / BC_HYBRID_DIM : m, BC_HYBRID_DIM};
  mt_tensor *param = NULL, *grad = NULL, *t2 = NULL, *t3 = NULL;
  mt_call call;
  mt_error err = {0};
  mt_status st;
  memset(&call, 0, sizeof call);
  if (!(param = dense_buf(dt, ndim, shape))) goto oom;
  memcpy(param->values, cp, (size_t)m * es);
  if (mt_coo_new(dt, ndim, shape, 1, shape[0], &grad, &err) != MT_OK) goto oom;
  for (int64_t k = 0; k < shape[0]; k++) grad->indices[k] = k;
  memcpy(grad->values, cg, (size_t)m * es);
  grad->coalesced = 1;
  const double betas[2] = {BC_ADAM_BETA1, BC_ADAM_BETA2};
  mt_kwarg adam_kw[] = {{.name = "lr", .type = MT_KW_FLOAT, .f = BC_ADAM_LR},
                        {.name = "betas", .type = MT_KW_FLOATS, .n = 2, .floats = betas},
                        {.name = "eps", .type = MT_KW_FLOAT, .f = BC_ADAM_EPS},
                        {.name = "step", .type = MT_KW_INT, .i = BC_ADAM_STEP,
                         .f = (double)BC_ADAM_STEP}};
  mt_kwarg sgd_kw[] = {{.name = "lr", .type = MT_KW_FLOAT, .f = BC_SGD_LR},
                       {.name = "momentum", .type = MT_KW_FLOAT, .f = BC_SGD_MOMENTUM},
                       {.name = "dampening", .type = MT_KW_FLOAT, .f = BC_SGD_DAMPENING}};
  mt_kwargs kw = {0, NULL};
  const mt_tensor *in[4] = {param, grad, NULL, NULL};
  switch (opt) {
  case BC_OPT_SPARSE_ADAM:
    call.op = MT_OP_sparse_adam;
    if (!(t2 = dense_buf(dt, ndim, shape)) || !(t3 = dense_buf(dt, ndim, shape))) goto oom;
    memcpy(t2->values, cm, (size_t)m * es);
    memcpy(t3->values, cs, (size_t)m * es);
    in[2] = t2, in[3] = t3;
    call.n_in = 4;
    kw = (mt_kwargs){4, adam_kw};
    break;
  case BC_OPT_SGD:
    call.op = MT_OP_sgd;
    call.n_in = 2;
    kw = (mt_kwargs){1, sgd_kw};
    break;
  case BC_OPT_SGD_MOMENTUM:
    call.op = MT_OP_sgd;
    if (mt_coo_new(dt, ndim, shape, 1, shape[0], &t2, &err) != MT_OK) goto oom;
    for (int64_t k = 0; k < shape[0]; k++) t2->indices[k] = k;
    memcpy(t2->values, cb, (size_t)m * es);
    t2->coalesced = 0; /* torch's buffer after buf.mul_ (the reference clears it anyway) */
    in[2] = t2;
    call.n_in = 3;
    kw = (mt_kwargs){3, sgd_kw};
    break;
  default:
    snprintf(why, len, "verify: no reference for optimizer %d", (int)opt);
    goto out;
  }
  call.host = mt_host_default();
  call.in = in;
  call.kw = &kw;
  if ((st = mt_dispatch(mt_backend_cpu(), &call, &err)) != MT_OK) {
    snprintf(why, len, "reference %s failed: %.400s", mt_op_name(call.op), err.msg);
    goto out;
  }
  memcpy(cp, call.out[0]->values, (size_t)m * es);
  if (opt == BC_OPT_SPARSE_ADAM) {
    memcpy(cm, call.out[1]->values, (size_t)m * es);
    memcpy(cs, call.out[2]->values, (size_t)m * es);
  } else if (opt == BC_OPT_SGD_MOMENTUM) {
    /* the merged buffer: one entry per grad entry, in order */
    const mt_tensor *b = call.n_out > 1 ? call.out[1] : NULL;
    if (!b || b->kind != MT_KIND_COO || b->nnz != shape[0]) {
      snprintf(why, len, "verify: reference sgd left a momentum buffer of %lld entries, not %lld",
               b ? (long long)b->nnz : -1LL, (long long)shape[0]);
      goto out;
    }
    memcpy(cb, b->values, (size_t)m * es);
  }
  rc = 0;
  goto out;
oom:
  snprintf(why, len, "verify: could not build the reference inputs: %.400s", err.msg);
out:
  for (int k = 0; k < call.n_out; k++) mt_tensor_free(call.out[k]);
  mt_tensor_free(param);
  mt_tensor_free(grad);
  mt_tensor_free(t2);
  mt_tensor_free(t3);
  return rc;
}

static const char *reference_name(bc_opt opt, bc_path path) {
  if (opt == BC_OPT_SPARSE_ADAM) return "reference sparse_adam";
  if (opt != BC_OPT_ADAGRAD) return "reference sgd";
  switch (path) {
  case BC_STREAM:
  case BC_TOUCH: return "the plain loop";
  case BC_DENSE: return "reference adagrad_dense";
  case BC_MASKED_DENSE:
  case BC_MASKED_SPARSE: return "reference adagrad_masked";
  case BC_SPARSE_COO_DUP: return "reference adagrad_sparse (on the uncoalesced grad)";
  default: return "reference adagrad_sparse";
  }
}

/* Appends the untouched neighbours of a touched element at pos. */
static void add_neighbours(const bc_grad *g, int64_t pos, int64_t *out, int64_t *n) {
  if (pos > 0 && !is_touched(g, pos - 1)) out[(*n)++] = pos - 1;
  if (pos + 1 < g->n && !is_touched(g, pos + 1)) out[(*n)++] = pos + 1;
}

static int cmp_i64(const void *a, const void *b) {
  int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return (x > y) - (x < y);
}

/* The sample of untouched elements, sorted and unique: the n_out given
 * (neighbours) and one seeded random element per stratum of n /
 * BC_VERIFY_SAMPLE (up to 64 draws to find one). The new count. */
static int64_t make_sample(const bc_grad *g, uint64_t seed, int64_t *out, int64_t n_out) {
  rng r = {seed};
  int64_t n = g->n, strata = BC_VERIFY_SAMPLE < n ? BC_VERIFY_SAMPLE : n;
  for (int64_t q = 0; q < strata && !dense_like(g->path); q++) {
    int64_t lo = q * n / strata, hi = (q + 1) * n / strata;
    for (int d = 0; d < 64; d++) {
      int64_t i = lo + (int64_t)(next(&r) % (uint64_t)(hi - lo));
      if (!is_touched(g, i)) {
        out[n_out++] = i;
        break;
      }
    }
  }
  qsort(out, (size_t)n_out, sizeof *out, cmp_i64);
  int64_t k = 0;
  for (int64_t j = 0; j < n_out; j++)
    if (k == 0 || out[k - 1] != out[j]) out[k++] = out[j];
  return k;
}

/* touched elements per reference call: small enough that the reference's
 * buffers come from the heap again and again, not fresh pages each time */
#define VERIFY_CHUNK ((int64_t)1 << 16)

/* d[di] = s[si] for es-byte elements */
static inline void copy_el(void *d, int64_t di, const void *s, int64_t si, size_t es) {
  if (es == 8)
    ((uint64_t *)d)[di] = ((const uint64_t *)s)[si];
  else
    ((uint32_t *)d)[di] = ((const uint32_t *)s)[si];
}

void bc_expect_free(bc_expect *e) {
  free(e->ep);
  free(e->eq);
  free(e->sample);
  free(e->em);
  free(e->eb);
  memset(e, 0, sizeof *e);
}

int bc_expect_make(bc_expect *e, const void *p, const void *s, const bc_base *b, const bc_grad *g,
                   int64_t all_max_n, uint64_t seed, char *why, size_t len) {
  size_t es = b->f64 ? 8 : 4;
  int64_t n = b->n, touched = touched_count(g);
  memset(e, 0, sizeof *e);
  e->g = g;
  e->f64 = b->f64;
  e->n = n;
  e->touched = touched;
  e->all = n <= all_max_n || touched >= n / 2;
  int rc = -1;
  int64_t *pos = NULL, n_nb = 0;
  char *cp = NULL, *cs = NULL, *cg = NULL, *cm = NULL, *cb = NULL;
  /* sparse_coo_dup: each entry's element (its rank in uidx), the entries
   * grouped by compact problem in input order (dorder, from doff[c]), and
   * one problem's entries (dix, dv) */
  int dup = g->path == BC_SPARSE_COO_DUP;
  int64_t *drank = NULL, *dorder = NULL, *doff = NULL, *dcur = NULL, *dix = NULL;
  char *dv = NULL;
  int adam = g->opt == BC_OPT_SPARSE_ADAM, mom = g->opt == BC_OPT_SGD_MOMENTUM;
  if ((adam && !b->m) || (mom && !g->buf)) {
    snprintf(why, len, "verify: %s without its state", bc_opt_name(g->opt));
    return -1;
  }
  int64_t cap = touched < VERIFY_CHUNK ? (touched ? touched : 1) : VERIFY_CHUNK;
  /* the neighbours of every stride-th unit (element; hybrid: row of 64):
   * at most 2 x BC_VERIFY_SAMPLE */
  int64_t stride = touched / g->row / BC_VERIFY_SAMPLE + 1;
  if (!(pos = malloc((size_t)cap * sizeof *pos)) || !(cp = malloc((size_t)cap * es)) ||
      !(cs = malloc((size_t)cap * es)) || !(cg = malloc((size_t)cap * es)) ||
      !(cm = malloc((size_t)cap * es)) || !(cb = malloc((size_t)cap * es)))
    goto oom;
  if (dup) {
    int64_t ne = g->entries, nch = (touched + cap - 1) / cap, most = 1;
    size_t bytes = (size_t)(ne ? ne : 1) * 8;
    if (!(drank = malloc(bytes)) || !(dorder = malloc(bytes)) ||
        !(doff = calloc((size_t)nch + 1, 8)) || !(dcur = malloc((size_t)(nch ? nch : 1) * 8)))
      goto oom;
    for (int64_t k = 0; k < ne; k++) {
      int64_t r = drank[k] = lower_bound(g->uidx, 0, touched, g->idx[k]);
      if (r == touched || g->uidx[r] != g->idx[k]) {
        snprintf(why, len, "verify: sparse_coo_dup entry %lld (element %lld) is not among the "
                 "grad's elements", (long long)k, (long long)g->idx[k]);
        goto out;
      }
      doff[r / cap + 1]++;
    }
    for (int64_t c = 0; c < nch; c++) {
      most = doff[c + 1] > most ? doff[c + 1] : most;
      doff[c + 1] += doff[c];
      dcur[c] = doff[c];
    }
    for (int64_t k = 0; k < ne; k++) dorder[dcur[drank[k] / cap]++] = k; /* stable */
    if (!(dix = malloc((size_t)most * 8)) || !(dv = malloc((size_t)most * es))) goto oom;
  }
  if (adam) e->m_live = b->m;
  if (mom) {
    e->b_live = g->buf;
    if (!(e->eb = malloc((size_t)touched * es + 1))) goto oom;
  }
  if (e->all) {
    if (!(e->ep = malloc((size_t)n * es)) || !(e->eq = malloc((size_t)n * es))) goto oom;
    if (adam && !(e->em = malloc((size_t)n * es))) goto oom;
    if (touched < n) { /* else every element comes from the reference */
      memcpy(e->ep, p, (size_t)n * es);
      memcpy(e->eq, s, (size_t)n * es);
      if (adam) memcpy(e->em, b->m, (size_t)n * es);
    }
  } else {
    int64_t max_sample = BC_VERIFY_SAMPLE + 2 * (touched / g->row / stride + 1);
    if (!(e->sample = malloc((size_t)max_sample * sizeof *e->sample)) ||
        !(e->ep = malloc((size_t)(touched + max_sample) * es)) ||
        !(e->eq = malloc((size_t)(touched + max_sample) * es)) ||
        (adam && !(e->em = malloc((size_t)(touched + max_sample) * es))))
      goto oom;
  }
  /* the touched elements, chunk by chunk, through the reference */
  walk w = {.g = g};
  /* grad values: the dense grad's at each position, or the entries' in order */
  int at_pos = dense_like(g->path) || g->path == BC_MASKED_DENSE;
  const char *gv = at_pos ? b->g : dup ? g->cvals : g->vals;
  for (int64_t t0 = 0; t0 < touched; t0 += cap) {
    int64_t m = touched - t0 < cap ? touched - t0 : cap;
    for (int64_t t = 0; t < m; t++) {
      int64_t i = pos[t] = walk_next(&w);
      copy_el(cp, t, p, i, es);
      copy_el(cs, t, s, i, es);
      copy_el(cg, t, gv, at_pos ? i : t0 + t, es);
      if (adam) copy_el(cm, t, b->m, i, es);
      if (mom) copy_el(cb, t, g->buf, t0 + t, es);
      if (!e->all && (t0 + t) / g->row % stride == 0) add_neighbours(g, i, e->sample, &n_nb);
    }
    dup_chunk dc = {0, dix, dv};
    for (int64_t j = 0, c = t0 / cap; dup && j < doff[c + 1] - doff[c]; j++, dc.ne++) {
      int64_t k = dorder[doff[c] + j];
      dix[j] = drank[k] - t0;
      copy_el(dv, j, g->vals, k, es);
    }
    if (g->opt == BC_OPT_ADAGRAD
            ? reference_compact(g->path, b->f64, m, cp, cs, cg, dup ? &dc : NULL, why, len)
            : reference_opt(g->opt, g->path, b->f64, m, cp, cs, cm, cb, cg, why, len))
      goto out;
    if (e->all) {
      for (int64_t t = 0; t < m; t++) {
        copy_el(e->ep, pos[t], cp, t, es);
        copy_el(e->eq, pos[t], cs, t, es);
        if (adam) copy_el(e->em, pos[t], cm, t, es);
      }
    } else {
      memcpy((char *)e->ep + t0 * es, cp, (size_t)m * es);
      memcpy((char *)e->eq + t0 * es, cs, (size_t)m * es);
      if (adam) memcpy((char *)e->em + t0 * es, cm, (size_t)m * es);
    }
    if (mom) memcpy((char *)e->eb + t0 * es, cb, (size_t)m * es);
  }
  if (!e->all) { /* untouched elements keep their values */
    e->n_sample = make_sample(g, seed, e->sample, n_nb);
    for (int64_t k = 0; k < e->n_sample; k++) {
      copy_el(e->ep, touched + k, p, e->sample[k], es);
      copy_el(e->eq, touched + k, s, e->sample[k], es);
      if (adam) copy_el(e->em, touched + k, b->m, e->sample[k], es);
    }
  }
  rc = 0;
  goto out;
oom:
  snprintf(why, len, "verify: out of memory for the expected values of %lld elements",
           (long long)(e->all ? n : touched));
out:
  free(drank);
  free(dorder);
  free(doff);
  free(dcur);
  free(dix);
  free(dv);
  free(pos);
  free(cp);
  free(cs);
  free(cg);
  free(cm);
  free(cb);
  if (rc) bc_expect_free(e);
  return rc;
}

void bc_expect_summary(const bc_expect *e, bc_verified *v) {
  v->all = e->all;
  v->touched = e->touched;
  v->elements = e->all ? e->n : e->touched + e->n_sample;
}

/* "param[i] = v, expected x (...)" for the first of p, s (and exp_avg) to
 * differ at i. */
static int mismatch(const bc_expect *e, const void *p, const void *s, int64_t i, int64_t k,
                    const char *what, char *why, size_t len) {
  size_t es = e->f64 ? 8 : 4;
  mt_dtype dt = e->f64 ? MT_float64 : MT_float32;
  int adam = e->g->opt == BC_OPT_SPARSE_ADAM;
  const char *live = p, *want = e->ep, *name = "param";
  if (!memcmp((const char *)p + i * es, (const char *)e->ep + k * es, es)) {
    if (memcmp((const char *)s + i * es, (const char *)e->eq + k * es, es) || !e->m_live)
      live = s, want = e->eq, name = adam ? "exp_avg_sq" : "state_sum";
    else
      live = e->m_live, want = e->em, name = "exp_avg";
  }
  int touched = e->all ? is_touched(e->g, i) : k < e->touched;
  bc_verified v;
  bc_expect_summary(e, &v);
  snprintf(why, len,
           "%s differs from %s: %s[%lld] = %.17g, expected %.17g (%s; %lld of %lld elements "
           "checked, %lld of them updated)",
           what, reference_name(e->g->opt, e->g->path), name, (long long)i,
           mt_get_f64(live, dt, i), mt_get_f64(want, dt, k),
           touched ? "an updated element" : "an element the step must leave unchanged",
           (long long)v.elements, (long long)e->n, (long long)v.touched);
  return -1;
}

/* Does element i of the live arrays differ from expected slot k? */
static int differs(const bc_expect *e, const void *p, const void *s, int64_t i, int64_t k) {
  size_t es = e->f64 ? 8 : 4;
  return memcmp((const char *)p + i * es, (const char *)e->ep + k * es, es) ||
         memcmp((const char *)s + i * es, (const char *)e->eq + k * es, es) ||
         (e->m_live && memcmp((const char *)e->m_live + i * es, (const char *)e->em + k * es, es));
}

/* The element of g's k-th updated element (in g's order: the walk's). */
static int64_t touched_element(const bc_grad *g, int64_t k) {
  walk w = {.g = g};
  int64_t i = -1;
  for (int64_t t = 0; t <= k; t++) i = walk_next(&w);
  return i;
}

/* The first slot of a (n values) that is not finite, or -1. */
static int64_t first_nonfinite(const void *a, int64_t n, int f64) {
  for (int64_t i = 0; i < n; i++)
    if (!isfinite(f64 ? ((const double *)a)[i] : (double)((const float *)a)[i])) return i;
  return -1;
}

/* The expected values must be finite: the data is (perf/README.md,
 * "Verification"), and a step of finite data stays finite. A NaN expected
 * would compare bit for bit with a kernel that also made one -- on the same
 * CPU the two NaNs even have the same sign -- and prove nothing; that is how
 * a drifted state_sum went unnoticed until a device's +nan met the host's
 * -nan. */
static int nonfinite(const bc_expect *e, const char *what, char *why, size_t len) {
  int64_t slots = e->all ? e->n : e->touched + e->n_sample;
  const void *arr[3] = {e->ep, e->eq, e->em};
  const char *name[3] = {"param", e->g->opt == BC_OPT_SPARSE_ADAM ? "exp_avg_sq" : "state_sum",
                         "exp_avg"};
  for (int a = 0; a < 3; a++) {
    int64_t k = arr[a] ? first_nonfinite(arr[a], slots, e->f64) : -1;
    if (k < 0) continue;
    int64_t i = e->all ? k /* the element of slot k */
                : k < e->touched ? touched_element(e->g, k) : e->sample[k - e->touched];
    snprintf(why, len,
             "%s: %s gives %s[%lld] = %g: the bench's data is no longer finite, "
             "so a bitwise match would prove nothing (perf/README.md, Verification)",
             what, reference_name(e->g->opt, e->g->path), name[a], (long long)i,
             mt_get_f64(arr[a], e->f64 ? MT_float64 : MT_float32, k));
    return -1;
  }
  return 0;
}

int bc_verify(const bc_expect *e, const void *p, const void *s, const char *what, char *why,
              size_t len) {
  size_t es = e->f64 ? 8 : 4;
  if (nonfinite(e, what, why, len)) return -1;
  if (e->all) {
    int64_t bp = first_diff(e->ep, p, e->n, es), bs = first_diff(e->eq, s, e->n, es);
    int64_t bm = e->m_live ? first_diff(e->em, e->m_live, e->n, es) : -1;
    int64_t i = bp;
    if (bs >= 0 && (i < 0 || bs < i)) i = bs;
    if (bm >= 0 && (i < 0 || bm < i)) i = bm;
    if (i >= 0) return mismatch(e, p, s, i, i, what, why, len);
  } else {
    walk w = {.g = e->g};
    for (int64_t k = 0; k < e->touched + e->n_sample; k++) {
      int64_t i = k < e->touched ? walk_next(&w) : e->sample[k - e->touched];
      if (differs(e, p, s, i, k)) return mismatch(e, p, s, i, k, what, why, len);
    }
  }
  if (e->b_live) { /* the momentum buffer: every value, in the grad's order */
    int64_t k = first_diff(e->eb, e->b_live, e->touched, es);
    if (k >= 0) {
      mt_dtype dt = e->f64 ? MT_float64 : MT_float32;
      int64_t i = touched_element(e->g, k);
      snprintf(why, len,
               "%s differs from %s: momentum_buffer value %lld (param element %lld) = %.17g, "
               "expected %.17g (all %lld buffer values checked)",
               what, reference_name(e->g->opt, e->g->path), (long long)k, (long long)i,
               mt_get_f64(e->b_live, dt, k), mt_get_f64(e->eb, dt, k), (long long)e->touched);
      return -1;
    }
  }
  return 0;
}

int bc_check(const bc_base *b, const bc_grad *g, int nthreads, bc_verified *v, char *why, size_t len) {
  bc_expect e;
  mt_error err = {0};
  memset(v, 0, sizeof *v);
  if (bc_expect_make(&e, b->p, b->s, b, g, BC_VERIFY_ALL_N, BC_VERIFY_SEED ^ (uint64_t)b->n, why,
                     len))
    return -1;
  int rc = -1;
  if (bc_step(b, g, nthreads, &err) != MT_OK) {
    snprintf(why, len, "fast kernel failed: %.400s", err.msg);
  } else {
    char what[96];
    snprintf(what, sizeof what, "fast %s%s%s (%d threads)",
             g->opt == BC_OPT_ADAGRAD ? "" : bc_opt_name(g->opt),
             g->opt == BC_OPT_ADAGRAD ? "" : " ", bc_path_name(g->path), nthreads);
    rc = bc_verify(&e, b->p, b->s, what, why, len);
    bc_expect_summary(&e, v);
  }
  bc_expect_free(&e);
  return rc;
}

/* ---- the byte model ------------------------------------------------------ */
/* T = element size, L = 64 / T elements per cache line. Dense streams
 * read p, s, g and write p, s: 5 T n. A sparse step reads each entry's
 * index (8 B) and value (T) once, and moves every cache line of p and s
 * that holds at least one updated element in and out (2 arrays x read +
 * write x 64 B); with elements picked independently at density d a line is
 * touched with probability 1 - (1 - d)^L. See perf/README.md. */

static double touched(double d, double per_unit) { return 1.0 - pow(1.0 - d, per_unit); }

double bc_model_bytes(bc_path path, int f64, int64_t n, double d, int64_t entries) {
  double T = f64 ? 8.0 : 4.0, L = 64.0 / T, N = (double)n, e = (double)entries;
  switch (path) {
  case BC_DENSE:
  case BC_STREAM:
    return 5.0 * T * N;
  case BC_MASKED_DENSE: /* mask bytes + p, s, g of blocks with a set bit */
    /* the kernel skips all-zero blocks only in segments where >= 31/32 of
     * the blocks are empty; elsewhere it streams everything */
    return N + 5.0 * T * N *
                   (touched(d, MT_ADAGRAD_MASK_BLOCK) > 1.0 / 32 ? 1.0
                                                                : touched(d, MT_ADAGRAD_MASK_BLOCK));
  case BC_SPARSE_COO:
  case BC_MASKED_SPARSE:
  case BC_TOUCH:
  case BC_SPARSE_COO_DUP: /* its e entries once, the lines of its d n elements; not the sort */
    return e * (8.0 + T) + 4.0 * T * N * touched(d, L);
  case BC_SPARSE_CSR:
    return e * (8.0 + T) + 8.0 * (N / BC_CSR_COLS + 1.0) + 4.0 * T * N * touched(d, L);
  case BC_HYBRID_COO: /* whole rows: index + values + p, s in and out */
    return e * (8.0 + 5.0 * T * BC_HYBRID_DIM);
  default:
    return 0.0;
  }
}

double bc_model_crossover_pct(bc_path path, int f64, int64_t n) {
  if (path == BC_DENSE || path == BC_STREAM) return 100.0;
  double dense = bc_model_bytes(BC_DENSE, f64, n, 1.0, n);
  double units = path == BC_HYBRID_COO ? (double)n / BC_HYBRID_DIM : (double)n;
  if (path == BC_SPARSE_COO_DUP) units *= BC_DUP_COPIES; /* entries per element */
  double lo = 0.0, hi = 1.0;
  if (bc_model_bytes(path, f64, n, 1.0, (int64_t)units) <= dense) return 100.0;
  for (int it = 0; it < 60; it++) { /* bytes grow with d: bisect */
    double mid = 0.5 * (lo + hi);
    if (bc_model_bytes(path, f64, n, mid, (int64_t)(mid * units)) < dense)
      lo = mid;
    else
      hi = mid;
  }
  return 100.0 * 0.5 * (lo + hi);
}

/* SparseAdam and sparse SGD (perf/README.md, "Byte model"): per entry the
 * index (8 B) and its row of grad values; the lines of the dense arrays
 * the step updates in and out (SparseAdam: p, exp_avg, exp_avg_sq; SGD: p);
 * with momentum, the packed buffer's values in and out. Hybrid rows are
 * whole lines. */
static int opt_dense_arrays(bc_opt opt) { /* dense arrays updated in place */
  return opt == BC_OPT_SPARSE_ADAM ? 3 : opt == BC_OPT_ADAGRAD ? 2 : 1;
}

double bc_model_bytes_opt(bc_opt opt, bc_path path, int f64, int64_t n, double d,
                          int64_t entries) {
  if (opt == BC_OPT_ADAGRAD) return bc_model_bytes(path, f64, n, d, entries);
  double T = f64 ? 8.0 : 4.0, L = 64.0 / T, N = (double)n, e = (double)entries;
  double arrays = opt_dense_arrays(opt), buf = opt == BC_OPT_SGD_MOMENTUM ? 2.0 * T : 0.0;
  if (path == BC_DENSE) /* the optimizer's dense step: g in, the arrays (and buffer) in and out */
    return N * (T + 2.0 * arrays * T + buf);
  if (path == BC_HYBRID_COO)
    return e * (8.0 + BC_HYBRID_DIM * (T + 2.0 * arrays * T + buf));
  if (path == BC_SPARSE_COO)
    return e * (8.0 + T + buf) + 2.0 * arrays * T * N * touched(d, L);
  return 0.0;
}

double bc_model_crossover_pct_opt(bc_opt opt, bc_path path, int f64, int64_t n) {
  if (opt == BC_OPT_ADAGRAD) return bc_model_crossover_pct(path, f64, n);
  double dense = bc_model_bytes_opt(opt, BC_DENSE, f64, n, 1.0, n);
  double units = path == BC_HYBRID_COO ? (double)n / BC_HYBRID_DIM : (double)n;
  double lo = 0.0, hi = 1.0;
  if (bc_model_bytes_opt(opt, path, f64, n, 1.0, (int64_t)units) <= dense) return 100.0;
  for (int it = 0; it < 60; it++) {
    double mid = 0.5 * (lo + hi);
    if (bc_model_bytes_opt(opt, path, f64, n, mid, (int64_t)(mid * units)) < dense)
      lo = mid;
    else
      hi = mid;
  }
  return 100.0 * 0.5 * (lo + hi);
}

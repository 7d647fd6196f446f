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
/* A gradient value: +-[0.5, 1) * 1e-2, never zero (small, so that warm
 * runs of many steps stay finite and normal). */
static inline double grad_value(rng *r) {
  uint64_t x = next(r);
  double v = (0.5 + 0.5 * (double)(x >> 11) * 0x1p-53) * 1e-2;
  return (x & 1) ? -v : v;
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

void bc_base_free(bc_base *b) {
  free(b->p);
  free(b->s);
  free(b->g);
  memset(b, 0, sizeof *b);
}

void bc_grad_free(bc_grad *g) {
  free(g->idx);
  free(g->crow);
  free(g->col);
  free(g->vals);
  free(g->mask);
  memset(g, 0, sizeof *g);
}

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

/* One step on explicit arrays (the full problem or a prefix view). */
mt_status bc_step_on(bc_path path, int f64, void *p, void *s, const void *gd, int64_t n,
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
  case BC_SPARSE_CSR:
    return f64 ? mt_adagrad_step_csr_f64(p, s, rows, g->cols, g->crow, g->col, g->vals, &hp, err)
               : mt_adagrad_step_csr_f32(p, s, rows, g->cols, g->crow, g->col, g->vals, &hp, err);
  default:
    return mt_err(err, MT_INVALID_ARGUMENT, "bench: unknown path %d", (int)path);
  }
}

mt_status bc_step(const bc_base *b, const bc_grad *g, int nthreads, mt_error *err) {
  return bc_step_on(g->path, b->f64, b->p, b->s, b->g, b->n, g, g->entries, g->rows, nthreads,
                    err);
}

/* ---- the check against the reference ---------------------------------- */

#define CHECK_ELEMS (1 << 15)

static mt_tensor *dense_copy(mt_dtype dt, int ndim, const int64_t *shape, const void *src) {
  mt_tensor *t = NULL;
  if (mt_dense_new(dt, ndim, shape, &t, NULL) != MT_OK) return NULL;
  memcpy(t->values, src, (size_t)mt_numel(t) * mt_dtype_size(dt));
  return t;
}

/* First element where a and b differ bit for bit (es-byte elements), or -1. */
static int64_t first_diff(const void *a, const void *b, int64_t n, size_t es) {
  if (memcmp(a, b, (size_t)n * es) == 0) return -1;
  for (int64_t i = 0; i < n; i++)
    if (memcmp((const char *)a + i * es, (const char *)b + i * es, es) != 0) return i;
  return -1;
}

/* The stream / touch kernels' plain loop on the m-element prefix, into ep
 * and eq (copies of p and s made here): p += v * BC_STREAM_K, s += v for
 * every element (stream, v the dense grad) or entry (touch). */
static void plain_reference(const bc_base *b, const bc_grad *g, int64_t m, int64_t entries,
                            void *ep, void *eq) {
  size_t es = b->f64 ? 8 : 4;
  memcpy(ep, b->p, (size_t)m * es);
  memcpy(eq, b->s, (size_t)m * es);
  int touch = g->path == BC_TOUCH;
  const void *vals = touch ? g->vals : b->g;
  for (int64_t k = 0; k < (touch ? entries : m); k++) {
    int64_t i = touch ? g->idx[k] : k;
    if (b->f64) {
      double v = ((const double *)vals)[k];
      ((double *)eq)[i] = ((double *)eq)[i] + v;
      ((double *)ep)[i] = ((double *)ep)[i] + v * BC_STREAM_K;
    } else {
      float v = ((const float *)vals)[k];
      ((float *)eq)[i] = ((float *)eq)[i] + v;
      ((float *)ep)[i] = ((float *)ep)[i] + v * (float)BC_STREAM_K;
    }
  }
}

int bc_compare(const void *p, const void *s, const void *ep, const void *eq, int64_t m, int f64,
               const char *what, const char *expected, const char *ctx, char *why, size_t len) {
  size_t es = f64 ? 8 : 4;
  int64_t bp = first_diff(ep, p, m, es), bs = bp >= 0 ? -1 : first_diff(eq, s, m, es);
  if (bp < 0 && bs < 0) return 0;
  int64_t i = bp >= 0 ? bp : bs;
  mt_dtype dt = f64 ? MT_float64 : MT_float32;
  snprintf(why, len, "%s differs from %s: %s[%lld] = %.17g, %s %.17g%s", what, expected,
           bp >= 0 ? "param" : "state_sum", (long long)i, mt_get_f64(bp >= 0 ? p : s, dt, i),
           expected, mt_get_f64(bp >= 0 ? ep : eq, dt, i), ctx);
  return -1;
}

void bc_prefix(const bc_base *b, const bc_grad *g, int64_t *m_out, int64_t *entries_out,
               int64_t *rows_out) {
  int64_t m = b->n < CHECK_ELEMS ? b->n : CHECK_ELEMS, entries = 0, rows = 1;
  if (g->path == BC_SPARSE_CSR || g->path == BC_HYBRID_COO) {
    rows = m / g->cols > 0 ? m / g->cols : 1;
    if (rows > g->rows) rows = g->rows;
    m = rows * g->cols;
  }
  if (g->path == BC_SPARSE_CSR) {
    entries = g->crow[rows];
  } else if (g->path == BC_SPARSE_COO || g->path == BC_MASKED_SPARSE || g->path == BC_HYBRID_COO ||
             g->path == BC_TOUCH) {
    int64_t lim = g->path == BC_HYBRID_COO ? rows : m;
    while (entries < g->entries && g->idx[entries] < lim) entries++;
  }
  *m_out = m;
  *entries_out = entries;
  *rows_out = rows;
}

int bc_check(const bc_base *b, const bc_grad *g, int nthreads, int64_t *checked, char *why,
             size_t len) {
  mt_dtype dt = b->f64 ? MT_float64 : MT_float32;
  size_t es = b->f64 ? 8 : 4;
  int rc = -1;
  mt_tensor *param = NULL, *state = NULL, *grad = NULL, *gdata = NULL, *gmask = NULL;
  void *p = NULL, *s = NULL;
  mt_call call;
  mt_error err = {0};
  memset(&call, 0, sizeof call);

  int64_t m, entries, rows;
  bc_prefix(b, g, &m, &entries, &rows);
  int ndim = g->path == BC_SPARSE_CSR || g->path == BC_HYBRID_COO ? 2 : 1;
  int64_t shape[2] = {ndim == 2 ? rows : m, ndim == 2 ? g->cols : 1};
  *checked = m;

  /* the fast kernel on copies */
  p = malloc((size_t)m * es);
  s = malloc((size_t)m * es);
  if (!p || !s) {
    snprintf(why, len, "check: out of memory");
    goto out;
  }
  memcpy(p, b->p, (size_t)m * es);
  memcpy(s, b->s, (size_t)m * es);
  mt_status st = bc_step_on(g->path, b->f64, p, s, b->g, m, g, entries, rows, nthreads, &err);
  if (st != MT_OK) {
    snprintf(why, len, "fast kernel failed: %.400s", err.msg);
    goto out;
  }

  char what[64], ctx[96];
  snprintf(what, sizeof what, "fast %s", bc_path_name(g->path));
  snprintf(ctx, sizeof ctx, " (sub-problem of %lld elements, %d threads)", (long long)m, nthreads);
  if (g->path == BC_TOUCH || g->path == BC_STREAM) { /* a plain loop is the reference */
    void *ep = malloc((size_t)m * es), *eq = malloc((size_t)m * es);
    if (!ep || !eq) {
      snprintf(why, len, "check: out of memory");
    } else {
      plain_reference(b, g, m, entries, ep, eq);
      rc = bc_compare(p, s, ep, eq, m, b->f64, what, "the plain loop", ctx, why, len);
    }
    free(ep);
    free(eq);
    goto out;
  }
  /* the reference op on the same sub-problem */
  if (!(param = dense_copy(dt, ndim, shape, b->p)) || !(state = dense_copy(dt, ndim, shape, b->s)))
    goto oom;
  switch (g->path) {
  case BC_DENSE:
    call.op = MT_OP_adagrad_dense;
    if (!(grad = dense_copy(dt, ndim, shape, b->g))) goto oom;
    break;
  case BC_MASKED_DENSE: {
    call.op = MT_OP_adagrad_masked;
    if (!(gdata = dense_copy(dt, 1, shape, b->g))) goto oom;
    if (mt_dense_new(MT_bool, 1, shape, &gmask, NULL) != MT_OK) goto oom;
    memcpy(gmask->values, g->mask, (size_t)m);
    for (int64_t i = 0; i < m; i++) /* poison the masked-out data */
      if (!g->mask[i]) mt_set_f64(gdata->values, dt, i, NAN);
    st = mt_masked_new(gdata, gmask, &grad, &err);
    gdata = gmask = NULL; /* taken, also on failure */
    if (st != MT_OK) goto oom;
    break;
  }
  case BC_SPARSE_COO:
  case BC_MASKED_SPARSE:
  case BC_HYBRID_COO:
  case BC_SPARSE_CSR: {
    int sparse_dim = g->path == BC_SPARSE_CSR ? 2 : 1;
    call.op = g->path == BC_MASKED_SPARSE ? MT_OP_adagrad_masked : MT_OP_adagrad_sparse;
    if (mt_coo_new(dt, ndim, shape, sparse_dim, entries, &grad, &err) != MT_OK) goto oom;
    if (g->path == BC_SPARSE_CSR) {
      for (int64_t r = 0; r < rows; r++)
        for (int64_t k = g->crow[r]; k < g->crow[r + 1]; k++) {
          grad->indices[k] = r;
          grad->indices[entries + k] = g->col[k];
        }
    } else {
      memcpy(grad->indices, g->idx, (size_t)entries * sizeof(int64_t));
    }
    memcpy(grad->values, g->vals, (size_t)(entries * g->row) * es);
    grad->coalesced = 1;
    break;
  }
  default:
    snprintf(why, len, "check: unknown path");
    goto out;
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
  char ref[64];
  snprintf(ref, sizeof ref, "reference %s", mt_op_name(call.op));
  rc = bc_compare(p, s, call.out[0]->values, call.out[1]->values, m, b->f64, what, ref, ctx, why,
                  len);
  goto out;
oom:
  snprintf(why, len, "check: could not build the reference inputs: %.400s", err.msg);
out:
  for (int k = 0; k < call.n_out; k++) mt_tensor_free(call.out[k]);
  mt_tensor_free(param);
  mt_tensor_free(state);
  mt_tensor_free(grad);
  mt_tensor_free(gdata);
  mt_tensor_free(gmask);
  free(p);
  free(s);
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

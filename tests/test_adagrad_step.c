/* test_adagrad_step.c - the fast in-place Adagrad steps (perf/kernels/
 * adagrad_step.c) against the reference kernels of impl/cpu/optim.c: for every path
 * and dtype, random inputs with a fixed seed, param and state_sum compared
 * BIT FOR BIT with mt_cpu_adagrad_dense / _sparse / _masked, serially and
 * with 2 threads, on the baseline and (where the CPU has them) the AVX2 and
 * AVX-512 code.
 * Sizes are odd so that vector tails and thread splits are exercised. */
#include <stdlib.h>

#include "adagrad_step.h"
#include "cpu/cpu.h"
#include "mt_test.h"

/* ---- fixtures ------------------------------------------------------------ */
#define SHAPE(...) ((const int64_t[]){__VA_ARGS__})

static uint64_t rng_state;
static void seed(uint64_t s) { rng_state = s * 0x9E3779B97F4A7C15ull + 1; }
static uint64_t rnd(void) { /* splitmix64 */
  uint64_t z = (rng_state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}
static double unif(double lo, double hi) { return lo + (hi - lo) * (double)(rnd() >> 11) * 0x1p-53; }

static mt_tensor *dense_rand(mt_dtype dt, int ndim, const int64_t *shape, double lo, double hi) {
  mt_tensor *t = NULL;
  if (mt_dense_new(dt, ndim, shape, &t, NULL) != MT_OK) abort();
  for (int64_t i = 0; i < mt_numel(t); i++) mt_set_f64(t->values, dt, i, unif(lo, hi));
  return t;
}
static mt_tensor *clone(const mt_tensor *t) {
  mt_tensor *c = NULL;
  if (mt_tensor_clone(t, &c, NULL) != MT_OK) abort();
  return c;
}
/* Uncoalesced COO over shape with sparse_dim dims, nnz entries drawn with
 * repeats; a fraction `zeros` of the values are 0 (half of them -0.0). */
static mt_tensor *coo_rand(mt_dtype dt, int ndim, const int64_t *shape, int sparse_dim,
                           int64_t nnz, double zeros) {
  mt_tensor *t = NULL;
  if (mt_coo_new(dt, ndim, shape, sparse_dim, nnz, &t, NULL) != MT_OK) abort();
  for (int64_t k = 0; k < nnz; k++)
    for (int d = 0; d < sparse_dim; d++) t->indices[d * nnz + k] = (int64_t)(rnd() % (uint64_t)shape[d]);
  int64_t row = mt_coo_row_numel(t);
  for (int64_t k = 0; k < nnz; k++) {
    double z = unif(0, 1);
    for (int64_t j = 0; j < row; j++)
      mt_set_f64(t->values, dt, k * row + j, z < zeros ? (z < zeros / 2 ? -0.0 : 0.0) : unif(-1, 1));
  }
  t->coalesced = 0;
  return t;
}
static mt_tensor *coalesce(const mt_tensor *coo) {
  mt_tensor *c = NULL;
  if (mt_coo_coalesce(coo, &c, NULL) != MT_OK) abort();
  return c;
}
/* Linear index of each entry over the sparse dims. */
static int64_t *linear(const mt_tensor *coo) {
  int64_t *lin = malloc(sizeof *lin * (size_t)(coo->nnz + 1));
  for (int64_t k = 0; k < coo->nnz; k++) lin[k] = mt_coo_linear(coo, k);
  return lin;
}

typedef struct {
  double lr, lr_decay, step, eps, wd;
  int maximize;
} hyper;

static const hyper HYPERS[] = {
    {0.01, 0.0, 1, 1e-10, 0.0, 0},
    {0.05, 0.1, 3, 1e-3, 0.0, 1},
    {0.3, 0.0, 2, 1e-10, 0.25, 0}, /* weight decay: dense only */
    {0.3, 0.01, 5, 1e-6, 0.5, 1},
};
#define N_HYPERS (int)(sizeof HYPERS / sizeof HYPERS[0])

/* Runs a reference kernel on [param, grad, state] with h; out[0..1]. */
static mt_status reference(mt_kernel_fn fn, mt_call *c, const mt_tensor *param,
                           const mt_tensor *grad, const mt_tensor *state, const hyper *h) {
  static mt_error e;
  mt_kwarg kv[] = {
      {.name = "lr", .type = MT_KW_FLOAT, .f = h->lr},
      {.name = "lr_decay", .type = MT_KW_FLOAT, .f = h->lr_decay},
      {.name = "eps", .type = MT_KW_FLOAT, .f = h->eps},
      {.name = "weight_decay", .type = MT_KW_FLOAT, .f = h->wd},
      {.name = "maximize", .type = MT_KW_BOOL, .i = h->maximize, .f = h->maximize},
      {.name = "step", .type = MT_KW_INT, .i = (int64_t)h->step, .f = h->step},
  };
  mt_kwargs kw = {6, kv};
  const mt_tensor *in[] = {param, grad, state};
  memset(c, 0, sizeof *c);
  c->host = mt_host_default();
  c->n_in = 3;
  c->in = in;
  c->kw = &kw;
  mt_status st = fn(c, &e);
  if (st != MT_OK) fprintf(stderr, "  reference: %s\n", e.msg);
  return st;
}
static void drop(mt_call *c) {
  for (int k = 0; k < c->n_out; k++) mt_tensor_free(c->out[k]);
  c->n_out = 0;
}

static mt_adagrad_hparams fast_hp(const hyper *h, int nthreads, int isa) {
  return (mt_adagrad_hparams){.clr = mt_adagrad_clr(h->lr, h->lr_decay, h->step),
                              .eps = h->eps,
                              .weight_decay = h->wd,
                              .maximize = h->maximize,
                              .nthreads = nthreads,
                              .isa = isa};
}

/* The (nthreads, isa) combinations to run. */
typedef struct {
  int nthreads, isa;
} variant;
static int variants(variant *v) {
  int n = 0;
  for (int isa = MT_ADAGRAD_ISA_BASE; isa <= mt_adagrad_isa_best(); isa++)
    for (int t = 1; t <= 2; t++) v[n++] = (variant){t, isa};
  return n;
}

static int same_bits(const mt_tensor *want, const void *got, int64_t n, const char *what,
                     const char *path, int dt_f32, const hyper *h, variant v) {
  size_t es = dt_f32 ? 4 : 8;
  if (memcmp(want->values, got, (size_t)n * es) == 0) return 1;
  for (int64_t i = 0; i < n; i++)
    if (memcmp((const char *)want->values + i * es, (const char *)got + i * es, es) != 0) {
      fprintf(stderr,
              "  %s %s %s: element %lld differs: reference %.17g, fast %.17g "
              "(maximize %d, wd %g, threads %d, isa %s)\n",
              path, dt_f32 ? "f32" : "f64", what, (long long)i,
              mt_get_f64(want->values, want->dtype, i),
              mt_get_f64(got, dt_f32 ? MT_float32 : MT_float64, i), h->maximize, h->wd,
              v.nthreads, mt_adagrad_isa_name(v.isa));
      break;
    }
  return 0;
}

static const mt_dtype DTYPES[] = {MT_float32, MT_float64};

/* ---- dense (ADA-1) ------------------------------------------------------- */
TEST(dense_step_matches_reference_bitwise) {
  variant vs[8];
  int nv = variants(vs);
  for (int d = 0; d < 2; d++)
    for (int hi = 0; hi < N_HYPERS; hi++) {
      mt_dtype dt = DTYPES[d];
      seed(100 + (uint64_t)(d * 10 + hi));
      int64_t n = 5003; /* odd: vector tails, uneven thread split */
      mt_tensor *param = dense_rand(dt, 2, SHAPE(1, n), -1, 1);
      mt_tensor *state = dense_rand(dt, 2, SHAPE(1, n), 0, 2);
      mt_tensor *grad = dense_rand(dt, 2, SHAPE(1, n), -1, 1);
      for (int64_t i = 0; i < n; i += 7) mt_set_f64(grad->values, dt, i, 0.0);
      for (int64_t i = 3; i < n; i += 11) mt_set_f64(state->values, dt, i, 0.0);
      mt_call c;
      CHECK_STATUS(reference(mt_cpu_adagrad_dense, &c, param, grad, state, &HYPERS[hi]), MT_OK);
      for (int k = 0; k < nv; k++) {
        mt_tensor *p = clone(param), *s = clone(state);
        mt_adagrad_hparams hp = fast_hp(&HYPERS[hi], vs[k].nthreads, vs[k].isa);
        mt_status st = dt == MT_float32
                           ? mt_adagrad_step_dense_f32(p->values, s->values, grad->values, n, &hp, NULL)
                           : mt_adagrad_step_dense_f64(p->values, s->values, grad->values, n, &hp, NULL);
        CHECK_STATUS(st, MT_OK);
        CHECK(same_bits(c.out[0], p->values, n, "param", "dense", dt == MT_float32, &HYPERS[hi], vs[k]));
        CHECK(same_bits(c.out[1], s->values, n, "state_sum", "dense", dt == MT_float32, &HYPERS[hi], vs[k]));
        mt_tensor_free(p);
        mt_tensor_free(s);
      }
      drop(&c);
      mt_tensor_free(param);
      mt_tensor_free(state);
      mt_tensor_free(grad);
    }
}

/* ---- sparse COO (ADA-2), element-sparse and hybrid ------------------------ */
/* shape: param shape; sparse_dim 2 = element-sparse over a 2-d param
 * (linearized, row 1), sparse_dim 1 of a 2-d shape = hybrid rows. */
static void coo_case(int *mt__failed, int ndim, const int64_t *shape, int sparse_dim, int64_t nnz,
                     int masked) {
  variant vs[8];
  int nv = variants(vs);
  for (int d = 0; d < 2; d++)
    for (int hi = 0; hi < N_HYPERS; hi++) {
      if (HYPERS[hi].wd != 0.0) continue; /* rejected by sparse / masked paths */
      mt_dtype dt = DTYPES[d];
      seed(200 + (uint64_t)(d * 10 + hi + 100 * masked + 1000 * sparse_dim));
      mt_tensor *param = dense_rand(dt, ndim, shape, -1, 1);
      mt_tensor *state = dense_rand(dt, ndim, shape, 0, 2);
      mt_tensor *grad = coo_rand(dt, ndim, shape, sparse_dim, nnz, masked ? 0.2 : 0.05);
      mt_tensor *cg = coalesce(grad);
      int64_t *lin = linear(cg), row = mt_coo_row_numel(cg), n = mt_numel(param);
      CHECK(cg->nnz < nnz); /* the draw had duplicates to sum */
      mt_call c;
      CHECK_STATUS(reference(masked ? mt_cpu_adagrad_masked : mt_cpu_adagrad_sparse, &c, param,
                             grad, state, &HYPERS[hi]),
                   MT_OK);
      for (int k = 0; k < nv; k++) {
        mt_tensor *p = clone(param), *s = clone(state);
        mt_adagrad_hparams hp = fast_hp(&HYPERS[hi], vs[k].nthreads, vs[k].isa);
        mt_status st;
        if (masked)
          st = dt == MT_float32 ? mt_adagrad_step_masked_coo_f32(p->values, s->values, lin,
                                                                 cg->values, cg->nnz, &hp, NULL)
                                : mt_adagrad_step_masked_coo_f64(p->values, s->values, lin,
                                                                 cg->values, cg->nnz, &hp, NULL);
        else
          st = dt == MT_float32 ? mt_adagrad_step_coo_f32(p->values, s->values, lin, cg->values,
                                                          cg->nnz, row, &hp, NULL)
                                : mt_adagrad_step_coo_f64(p->values, s->values, lin, cg->values,
                                                          cg->nnz, row, &hp, NULL);
        CHECK_STATUS(st, MT_OK);
        const char *path = masked ? "masked_coo" : row > 1 ? "hybrid_coo" : "coo";
        CHECK(same_bits(c.out[0], p->values, n, "param", path, dt == MT_float32, &HYPERS[hi], vs[k]));
        CHECK(same_bits(c.out[1], s->values, n, "state_sum", path, dt == MT_float32, &HYPERS[hi], vs[k]));
        mt_tensor_free(p);
        mt_tensor_free(s);
      }
      drop(&c);
      free(lin);
      mt_tensor_free(cg);
      mt_tensor_free(grad);
      mt_tensor_free(param);
      mt_tensor_free(state);
    }
}

TEST(coo_step_matches_reference_bitwise_after_coalesce) {
  coo_case(mt__failed, 2, SHAPE(97, 61), 2, 1500, 0);
}
TEST(hybrid_coo_step_matches_reference_bitwise) {
  coo_case(mt__failed, 2, SHAPE(301, 19), 1, 260, 0);
}
TEST(masked_coo_step_skips_zero_values_like_reference) {
  coo_case(mt__failed, 2, SHAPE(97, 61), 2, 1500, 1);
}

/* ---- uncoalesced COO (ADA-2 after grad.coalesce()) in one step ------------ */
/* Entry order k sorted stably by lin[k] (the order the reference's coalesce
 * sums in), for the sorted = 1 form. */
static const int64_t *sort_lin;
static int by_lin(const void *a, const void *b) {
  int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  if (sort_lin[x] != sort_lin[y]) return sort_lin[x] < sort_lin[y] ? -1 : 1;
  return (x > y) - (x < y);
}

/* The dup step on grad's entries in input order (sorted = 0, with a
 * workspace) and pre-sorted (sorted = 1, none) against the reference's
 * adagrad_sparse on the uncoalesced grad, every (threads, isa). */
static void dup_case(int *mt__failed, const int64_t *shape, int64_t nnz, const int64_t *pool,
                     int n_pool, uint64_t sd) {
  variant vs[8];
  int nv = variants(vs);
  for (int d = 0; d < 2; d++)
    for (int hi = 0; hi < N_HYPERS; hi++) {
      if (HYPERS[hi].wd != 0.0) continue;
      mt_dtype dt = DTYPES[d];
      size_t es = dt == MT_float32 ? 4 : 8;
      seed(sd + (uint64_t)(d * 10 + hi));
      mt_tensor *param = dense_rand(dt, 2, shape, -1, 1);
      mt_tensor *state = dense_rand(dt, 2, shape, 0, 2);
      mt_tensor *grad = coo_rand(dt, 2, shape, 2, nnz, 0.05); /* zeros, -0.0 among them */
      for (int64_t k = 0; n_pool > 0 && k < nnz; k++) { /* linear indices from the pool */
        int64_t i = pool[rnd() % (uint64_t)n_pool];
        grad->indices[k] = i / shape[1], grad->indices[nnz + k] = i % shape[1];
      }
      int64_t *lin = linear(grad), n = mt_numel(param);
      int64_t *order = malloc(sizeof *order * (size_t)nnz);
      int64_t *slin = malloc(sizeof *slin * (size_t)nnz);
      char *svals = malloc(es * (size_t)nnz);
      for (int64_t k = 0; k < nnz; k++) order[k] = k;
      sort_lin = lin;
      qsort(order, (size_t)nnz, sizeof *order, by_lin);
      for (int64_t k = 0; k < nnz; k++) {
        slin[k] = lin[order[k]];
        memcpy(svals + k * es, (char *)grad->values + order[k] * es, es);
      }
      mt_adagrad_dup *ws = NULL;
      CHECK_STATUS(mt_adagrad_dup_new(&ws, n, nnz, NULL), MT_OK);
      mt_call c;
      CHECK_STATUS(reference(mt_cpu_adagrad_sparse, &c, param, grad, state, &HYPERS[hi]), MT_OK);
      for (int k = 0; k < nv; k++)
        for (int pre = 0; pre <= 1; pre++) {
          mt_tensor *p = clone(param), *s = clone(state);
          mt_adagrad_hparams hp = fast_hp(&HYPERS[hi], vs[k].nthreads, vs[k].isa);
          const int64_t *ix = pre ? slin : lin;
          const void *v = pre ? (const void *)svals : grad->values;
          mt_status st =
              dt == MT_float32
                  ? mt_adagrad_step_coo_dup_f32(p->values, s->values, ix, v, nnz, pre,
                                                pre ? NULL : ws, &hp, NULL)
                  : mt_adagrad_step_coo_dup_f64(p->values, s->values, ix, v, nnz, pre,
                                                pre ? NULL : ws, &hp, NULL);
          CHECK_STATUS(st, MT_OK);
          const char *path = pre ? "coo_dup (sorted)" : "coo_dup";
          int f32 = dt == MT_float32;
          CHECK(same_bits(c.out[0], p->values, n, "param", path, f32, &HYPERS[hi], vs[k]));
          CHECK(same_bits(c.out[1], s->values, n, "state_sum", path, f32, &HYPERS[hi], vs[k]));
          mt_tensor_free(p);
          mt_tensor_free(s);
        }
      drop(&c);
      mt_adagrad_dup_free(ws);
      free(lin), free(order), free(slin), free(svals);
      mt_tensor_free(grad);
      mt_tensor_free(param);
      mt_tensor_free(state);
    }
}

TEST(coo_dup_step_coalesces_and_steps_like_reference_bitwise) {
  /* about 1.1 entries per touched element, in input order */
  dup_case(mt__failed, SHAPE(97, 61), 1500, NULL, 0, 500);
  /* many duplicates: 12 entries per element on average, runs of up to ~30 */
  dup_case(mt__failed, SHAPE(13, 7), 1100, NULL, 0, 600);
  /* every entry at one element: one run of 700 (one thread takes it all) */
  dup_case(mt__failed, SHAPE(13, 7), 700, (const int64_t[]){40}, 1, 700);
  /* indices equal in one of the sort's digits and different in the other
   * (97 x 61 = 5917 elements: 13 bits, two 7-bit digits; x, x + 1, x + 2^7,
   * ...): a pass left out or run out of order splits their runs (three
   * digits: coo_dup_sort_passes_cover_every_index_bit) */
  static const int64_t pool[] = {5, 6, 5 + 128, 6 + 128, 5 + 2048, 9, 9 + 1024, 128};
  dup_case(mt__failed, SHAPE(97, 61), 400, pool, 8, 800);
}

TEST(coo_dup_sort_passes_cover_every_index_bit) {
  /* params of 2^24 + 5 and 2^12 + 3 elements: 25 index bits (three 9-bit
   * digits) and 13 (two of 7). The sorted step's oracle: the same entries
   * sorted stably on the host, stepped with sorted = 1 (no sort; checked
   * against the reference above). p and s are calloc'd: only touched pages
   * are made. */
  static const int64_t ns[] = {((int64_t)1 << 24) + 5, ((int64_t)1 << 12) + 3};
  enum { E = 3000 };
  static int64_t idx[E], sidx[E], order[E];
  static float v[E], sv[E];
  mt_adagrad_hparams hp = {.clr = 0.01, .eps = 1e-10, .nthreads = 2};
  for (int t = 0; t < 2; t++) {
    int64_t n = ns[t];
    /* indices that differ in one digit only: the second (lo) and the third or,
     * for two digits, the second bit of the second (hi) */
    int64_t lo = t == 0 ? 512 : 128, hi = t == 0 ? 1 << 18 : 2048;
    const int64_t pool[] = {7, 7 + lo, 7 + hi, 7 + lo + hi, n - 1, n - 1 - lo, n - 1 - hi, hi};
    seed(900 + (uint64_t)t);
    for (int k = 0; k < E; k++) {
      idx[k] = k % 3 ? pool[rnd() % 8] : (int64_t)(rnd() % (uint64_t)n);
      v[k] = (float)unif(-1, 1);
      order[k] = k;
    }
    sort_lin = idx;
    qsort(order, E, sizeof *order, by_lin);
    for (int k = 0; k < E; k++) sidx[k] = idx[order[k]], sv[k] = v[order[k]];
    float *p = calloc((size_t)n, 4), *s = calloc((size_t)n, 4);
    float *q = calloc((size_t)n, 4), *r = calloc((size_t)n, 4);
    mt_adagrad_dup *ws = NULL;
    CHECK(p && s && q && r);
    CHECK_STATUS(mt_adagrad_dup_new(&ws, n, E, NULL), MT_OK);
    if (p && s && q && r && ws) {
      mt_error e = {0};
      CHECK_STATUS(mt_adagrad_step_coo_dup_f32(p, s, idx, v, E, 0, ws, &hp, &e), MT_OK);
      if (e.msg[0]) fprintf(stderr, "  %s\n", e.msg);
      CHECK_STATUS(mt_adagrad_step_coo_dup_f32(q, r, sidx, sv, E, 1, NULL, &hp, NULL), MT_OK);
      int same = 1;
      for (int k = 0; k < E; k++) same &= p[idx[k]] == q[idx[k]] && s[idx[k]] == r[idx[k]];
      CHECK(same);
      CHECK(s[7] != 0 && s[n - 1] != 0);
    }
    mt_adagrad_dup_free(ws);
    free(p), free(s), free(q), free(r);
  }
}

TEST(coo_dup_step_sums_each_run_in_input_order) {
  /* f32 param of 4, entries (index: value) in input order
   *   2: 1,  0: 5,  2: 2^60,  2: -2^60
   * The reference coalesces as mt_coo_coalesce does: element 0 gets 5;
   * element 2 gets, in float32 in input order from the first, 1,
   * 1 + 2^60 = 2^60 (2^60 + 1 needs 61 bits: rounds to 2^60), 2^60 - 2^60 =
   * 0. So state_sum[2] stays 0.5 + 0 * 0 = 0.5 and param[2] = 1 + (-0.1) *
   * (0 / (sqrt(0.5) + eps)) = 1 exactly; element 0: state_sum = 0.5 + 25 =
   * 25.5. Summed in reverse order (-2^60 + 2^60 + 1 = 1) or with the
   * duplicates dropped (1 alone), element 2 would get 1: state_sum 1.5. */
  const float big = 0x1p60f;
  int64_t idx[4] = {2, 0, 2, 2}, rev[4] = {2, 2, 0, 2};
  float vals[4] = {1, 5, big, -big}, rvals[4] = {-big, big, 5, 1};
  mt_adagrad_hparams hp = {.clr = 0.1, .eps = 1e-10, .nthreads = 1};
  mt_adagrad_dup *ws = NULL;
  CHECK_STATUS(mt_adagrad_dup_new(&ws, 4, 4, NULL), MT_OK);
  for (int isa = MT_ADAGRAD_ISA_BASE; isa <= mt_adagrad_isa_best(); isa++) {
    float p[4] = {1, 1, 1, 1}, s[4] = {0.5f, 0.5f, 0.5f, 0.5f};
    hp.isa = isa;
    CHECK_STATUS(mt_adagrad_step_coo_dup_f32(p, s, idx, vals, 4, 0, ws, &hp, NULL), MT_OK);
    CHECK(s[2] == 0.5f && p[2] == 1.0f);
    CHECK(s[0] == 25.5f && p[0] != 1.0f);
    CHECK(s[1] == 0.5f && p[1] == 1.0f && s[3] == 0.5f && p[3] == 1.0f);
    /* the wrong order (the same entries reversed: a stable sort then sums
     * element 2's run backwards) is caught by the check above */
    float q[4] = {1, 1, 1, 1}, t[4] = {0.5f, 0.5f, 0.5f, 0.5f};
    CHECK_STATUS(mt_adagrad_step_coo_dup_f32(q, t, rev, rvals, 4, 0, ws, &hp, NULL), MT_OK);
    CHECK(t[2] == 1.5f && q[2] != 1.0f);
    CHECK(t[0] == 25.5f && q[0] == p[0]);
  }
  mt_adagrad_dup_free(ws);
}

TEST(coo_dup_step_rejects_what_it_cannot_sort) {
  float p[3] = {0}, s[3] = {0}, v[2] = {1, 1};
  int64_t idx[2] = {0, 3}, neg[2] = {1, -1};
  mt_error e = {0};
  mt_adagrad_hparams hp = {.clr = 0.1, .eps = 1e-10, .nthreads = 1};
  mt_adagrad_dup *ws = NULL;
  CHECK_STATUS(mt_adagrad_dup_new(&ws, 3, 1, NULL), MT_OK);
  CHECK_STATUS(mt_adagrad_step_coo_dup_f32(p, s, idx, v, 2, 0, ws, &hp, &e), MT_INVALID_ARGUMENT);
  CHECK_HAS(e.msg, "2 entries, the workspace holds 1");
  mt_adagrad_dup_free(ws);
  CHECK_STATUS(mt_adagrad_dup_new(&ws, 3, 2, NULL), MT_OK);
  CHECK_STATUS(mt_adagrad_step_coo_dup_f32(p, s, idx, v, 2, 0, ws, &hp, &e), MT_INVALID_ARGUMENT);
  CHECK_HAS(e.msg, "idx[1] = 3 is not in [0, 3)");
  CHECK_STATUS(mt_adagrad_step_coo_dup_f32(p, s, neg, v, 2, 0, ws, &hp, &e), MT_INVALID_ARGUMENT);
  CHECK_HAS(e.msg, "idx[1] = -1");
  int64_t first[2] = {3, 1}; /* the bad index is entry 0 */
  CHECK_STATUS(mt_adagrad_step_coo_dup_f32(p, s, first, v, 2, 0, ws, &hp, &e), MT_INVALID_ARGUMENT);
  CHECK_HAS(e.msg, "idx[0] = 3 is not in [0, 3)");
  CHECK_STATUS(mt_adagrad_step_coo_dup_f32(p, s, neg, v, 2, 0, NULL, &hp, &e), MT_INVALID_ARGUMENT);
  CHECK_HAS(e.msg, "ws is NULL");
  hp.weight_decay = 0.5;
  CHECK_STATUS(mt_adagrad_step_coo_dup_f32(p, s, neg, v, 2, 1, NULL, &hp, &e), MT_INVALID_ARGUMENT);
  CHECK_HAS(e.msg, "weight_decay");
  CHECK(p[0] == 0 && p[1] == 0 && p[2] == 0 && s[0] == 0 && s[1] == 0 && s[2] == 0);
  mt_adagrad_dup_free(ws); /* nothing stepped, above */
  CHECK_STATUS(mt_adagrad_dup_new(&ws, 3, (int64_t)1 << 32, &e), MT_INVALID_ARGUMENT);
  CHECK(ws == NULL);
  CHECK_STATUS(mt_adagrad_dup_new(&ws, ((int64_t)1 << 32) + 1, 4, &e), MT_INVALID_ARGUMENT);
  CHECK_HAS(e.msg, "n = 4294967297");
}

TEST(coo_dup_workspace_takes_every_param_size_from_one) {
  /* n = 0 has no element an entry could name: refused, saying so. n = 1 is
   * a param of one element: entries 0: 0.5, 0: 0.25, 0: -1 coalesce in
   * input order to 0.5 + 0.25 - 1 = -0.25 (exact in float32), and the step
   * is the coalesced COO step with that one entry, bit for bit. n = 2^32,
   * the most 32-bit indices can name, is accepted (the scratch depends on
   * the capacity, not on n); so is a capacity of 0. */
  mt_error e = {0};
  mt_adagrad_dup *ws = NULL;
  CHECK_STATUS(mt_adagrad_dup_new(&ws, 0, 4, &e), MT_INVALID_ARGUMENT);
  CHECK_HAS(e.msg, "n = 0");
  CHECK(ws == NULL);
  CHECK_STATUS(mt_adagrad_dup_new(&ws, (int64_t)1 << 32, 4, &e), MT_OK);
  mt_adagrad_dup_free(ws);
  ws = NULL;
  /* a capacity of 0: a grad of no entry, whose step changes nothing */
  CHECK_STATUS(mt_adagrad_dup_new(&ws, 3, 0, &e), MT_OK);
  {
    float p3[3] = {1, 2, 3}, s3[3] = {0.5f, 0.5f, 0.5f};
    mt_adagrad_hparams h0 = {.clr = 0.1, .eps = 1e-10, .nthreads = 1};
    CHECK_STATUS(mt_adagrad_step_coo_dup_f32(p3, s3, NULL, NULL, 0, 0, ws, &h0, &e), MT_OK);
    CHECK(p3[0] == 1 && p3[2] == 3 && s3[1] == 0.5f);
  }
  mt_adagrad_dup_free(ws);
  ws = NULL;
  CHECK_STATUS(mt_adagrad_dup_new(&ws, 1, 3, &e), MT_OK);
  const int64_t idx[3] = {0, 0, 0}, one[1] = {0};
  const float vals[3] = {0.5f, 0.25f, -1.0f}, sum[1] = {-0.25f};
  mt_adagrad_hparams hp = {.clr = 0.1, .eps = 1e-10, .nthreads = 1};
  float p[1] = {0.75f}, s[1] = {0.5f}, q[1] = {0.75f}, t[1] = {0.5f};
  CHECK_STATUS(mt_adagrad_step_coo_dup_f32(p, s, idx, vals, 3, 0, ws, &hp, &e), MT_OK);
  CHECK_STATUS(mt_adagrad_step_coo_f32(q, t, one, sum, 1, 1, &hp, &e), MT_OK);
  CHECK(s[0] == 0.5625f); /* 0.5 + 0.25^2 */
  CHECK(memcmp(p, q, sizeof p) == 0 && memcmp(s, t, sizeof s) == 0);
  mt_adagrad_dup_free(ws);
}

TEST(coo_dup_workspace_reports_its_bytes) {
  /* two buffers of packed (index << 32 | payload) pairs, 8 bytes each, per
   * entry of capacity, beside 48 KiB of counts (adagrad_step.h): 1000 more
   * entries of capacity are 16000 bytes more; no workspace, no bytes */
  mt_adagrad_dup *a = NULL, *b = NULL;
  CHECK_STATUS(mt_adagrad_dup_new(&a, 100, 1000, NULL), MT_OK);
  CHECK_STATUS(mt_adagrad_dup_new(&b, 100, 2000, NULL), MT_OK);
  CHECK_EQ_INT(mt_adagrad_dup_bytes(b) - mt_adagrad_dup_bytes(a), 16000);
  CHECK(mt_adagrad_dup_bytes(a) >= 16000 + 3 * 4096 * 4);
  CHECK_EQ_INT(mt_adagrad_dup_bytes(NULL), 0);
  mt_adagrad_dup_free(a);
  mt_adagrad_dup_free(b);
}

/* ---- CSR: ADA-2 on the same entries -------------------------------------- */
TEST(csr_step_matches_sparse_reference_bitwise) {
  variant vs[8];
  int nv = variants(vs);
  const int64_t R = 203, C = 37;
  for (int d = 0; d < 2; d++)
    for (int hi = 0; hi < N_HYPERS; hi++) {
      if (HYPERS[hi].wd != 0.0) continue;
      mt_dtype dt = DTYPES[d];
      seed(300 + (uint64_t)(d * 10 + hi));
      mt_tensor *param = dense_rand(dt, 2, SHAPE(R, C), -1, 1);
      mt_tensor *state = dense_rand(dt, 2, SHAPE(R, C), 0, 2);
      mt_tensor *grad = coo_rand(dt, 2, SHAPE(R, C), 2, 2500, 0.05);
      mt_tensor *cg = coalesce(grad); /* row-major sorted: the CSR order */
      int64_t *crow = calloc((size_t)R + 1, sizeof *crow);
      for (int64_t k = 0; k < cg->nnz; k++) crow[cg->indices[k] + 1]++;
      for (int64_t r = 0; r < R; r++) crow[r + 1] += crow[r];
      const int64_t *col = cg->indices + cg->nnz;
      mt_call c;
      CHECK_STATUS(reference(mt_cpu_adagrad_sparse, &c, param, grad, state, &HYPERS[hi]), MT_OK);
      for (int k = 0; k < nv; k++) {
        mt_tensor *p = clone(param), *s = clone(state);
        mt_adagrad_hparams hp = fast_hp(&HYPERS[hi], vs[k].nthreads, vs[k].isa);
        mt_status st = dt == MT_float32 ? mt_adagrad_step_csr_f32(p->values, s->values, R, C, crow,
                                                                  col, cg->values, &hp, NULL)
                                        : mt_adagrad_step_csr_f64(p->values, s->values, R, C, crow,
                                                                  col, cg->values, &hp, NULL);
        CHECK_STATUS(st, MT_OK);
        CHECK(same_bits(c.out[0], p->values, R * C, "param", "csr", dt == MT_float32, &HYPERS[hi], vs[k]));
        CHECK(same_bits(c.out[1], s->values, R * C, "state_sum", "csr", dt == MT_float32, &HYPERS[hi], vs[k]));
        mt_tensor_free(p);
        mt_tensor_free(s);
      }
      drop(&c);
      free(crow);
      mt_tensor_free(cg);
      mt_tensor_free(grad);
      mt_tensor_free(param);
      mt_tensor_free(state);
    }
}

/* ---- masked, dense storage (ADA-3) ---------------------------------------- */
TEST(masked_dense_step_matches_reference_bitwise_ignoring_poison) {
  variant vs[8];
  int nv = variants(vs);
  static const double densities[] = {0.02, 0.5, 1.0};
  for (int d = 0; d < 2; d++)
    for (int hi = 0; hi < N_HYPERS; hi++)
      for (int q = 0; q < 3; q++) {
        if (HYPERS[hi].wd != 0.0) continue;
        mt_dtype dt = DTYPES[d];
        seed(400 + (uint64_t)(d * 10 + hi + 100 * q));
        int64_t n = 4099;
        mt_tensor *param = dense_rand(dt, 1, SHAPE(n), -1, 1);
        mt_tensor *state = dense_rand(dt, 1, SHAPE(n), 0, 2);
        mt_tensor *data = dense_rand(dt, 1, SHAPE(n), -1, 1), *mask = NULL, *grad = NULL;
        if (mt_dense_new(MT_bool, 1, SHAPE(n), &mask, NULL) != MT_OK) abort();
        uint8_t *m = mask->values;
        for (int64_t i = 0; i < n; i++) {
          m[i] = unif(0, 1) < densities[q];
          if (!m[i]) mt_set_f64(data->values, dt, i, NAN); /* poison */
        }
        if (n > 40) m[n - 1] = 1, m[n - 2] = 0; /* tail with a set and a poisoned element */
        mt_set_f64(data->values, dt, n - 2, NAN);
        mt_set_f64(data->values, dt, n - 1, 0.5);
        if (mt_masked_new(data, mask, &grad, NULL) != MT_OK) abort();
        mt_call c;
        CHECK_STATUS(reference(mt_cpu_adagrad_masked, &c, param, grad, state, &HYPERS[hi]), MT_OK);
        for (int k = 0; k < nv; k++) {
          mt_tensor *p = clone(param), *s = clone(state);
          mt_adagrad_hparams hp = fast_hp(&HYPERS[hi], vs[k].nthreads, vs[k].isa);
          mt_status st =
              dt == MT_float32
                  ? mt_adagrad_step_masked_dense_f32(p->values, s->values, grad->data->values, m, n, &hp, NULL)
                  : mt_adagrad_step_masked_dense_f64(p->values, s->values, grad->data->values, m, n, &hp, NULL);
          CHECK_STATUS(st, MT_OK);
          CHECK(same_bits(c.out[0], p->values, n, "param", "masked_dense", dt == MT_float32, &HYPERS[hi], vs[k]));
          CHECK(same_bits(c.out[1], s->values, n, "state_sum", "masked_dense", dt == MT_float32, &HYPERS[hi], vs[k]));
          mt_tensor_free(p);
          mt_tensor_free(s);
        }
        drop(&c);
        mt_tensor_free(grad);
        mt_tensor_free(param);
        mt_tensor_free(state);
      }
}

/* ---- argument checks and the stream kernel -------------------------------- */
TEST(sparse_paths_reject_weight_decay_like_torch) {
  float p[2] = {0}, s[2] = {0}, v[1] = {1};
  int64_t idx[1] = {0};
  mt_error e = {0};
  mt_adagrad_hparams hp = {.clr = 0.1, .eps = 1e-10, .weight_decay = 0.5, .nthreads = 1};
  CHECK_STATUS(mt_adagrad_step_coo_f32(p, s, idx, v, 1, 1, &hp, &e), MT_INVALID_ARGUMENT);
  CHECK_HAS(e.msg, "weight_decay");
  CHECK_STATUS(mt_adagrad_step_masked_dense_f32(p, s, v, (const uint8_t *)"\1\0", 2, &hp, &e),
               MT_INVALID_ARGUMENT);
  hp.weight_decay = 0;
  CHECK_STATUS(mt_adagrad_step_coo_f32(p, s, idx, v, 1, 0, &hp, &e), MT_INVALID_ARGUMENT);
  CHECK_HAS(e.msg, "row = 0");
}

TEST(touch_kernel_updates_exactly_the_entries) {
  /* entries at every 3rd element from 1 (gap < a line: no prefetch) and at
   * every 97th (gap > a line: the prefetching batches), more than one batch
   * of 64: p = 1 + 2 * 0.5 = 2, s = 3 + 2 = 5 there; elsewhere 1 and 3 */
  enum { N = 20000 };
  static float p[N], s[N], v[N];
  static int64_t idx[N];
  for (int stride = 3; stride <= 97; stride += 94)
    for (int t = 1; t <= 2; t++)
      for (int isa = MT_ADAGRAD_ISA_BASE; isa <= MT_ADAGRAD_ISA_AVX512; isa++) {
        int64_t nnz = 0;
        for (int i = 0; i < N; i++) p[i] = 1, s[i] = 3;
        for (int i = 1; i < N; i += stride) idx[nnz] = i, v[nnz++] = 2;
        mt_touch_step_f32(p, s, idx, v, nnz, 0.5f, t, isa);
        int ok = 1;
        for (int i = 0; i < N; i++) {
          int hit = i % stride == 1 % stride && i >= 1;
          ok &= hit ? p[i] == 2 && s[i] == 5 : p[i] == 1 && s[i] == 3;
        }
        CHECK(ok);
      }
}

TEST(stream_kernel_reads_three_writes_two) {
  /* p = 1 + 2 * 0.5 = 2, s = 3 + 2 = 5 for every element and thread count */
  enum { N = 1000 };
  static double p[N], s[N], g[N];
  for (int t = 1; t <= 2; t++) {
    for (int i = 0; i < N; i++) p[i] = 1, s[i] = 3, g[i] = 2;
    mt_stream_step_f64(p, s, g, N, 0.5, t, MT_ADAGRAD_ISA_AUTO);
    int ok = 1;
    for (int i = 0; i < N; i++) ok &= p[i] == 2 && s[i] == 5;
    CHECK(ok);
  }
}

MT_TEST_MAIN(T(dense_step_matches_reference_bitwise),
             T(coo_step_matches_reference_bitwise_after_coalesce),
             T(hybrid_coo_step_matches_reference_bitwise),
             T(masked_coo_step_skips_zero_values_like_reference),
             T(coo_dup_step_coalesces_and_steps_like_reference_bitwise),
             T(coo_dup_sort_passes_cover_every_index_bit),
             T(coo_dup_step_sums_each_run_in_input_order),
             T(coo_dup_step_rejects_what_it_cannot_sort),
             T(coo_dup_workspace_takes_every_param_size_from_one),
             T(coo_dup_workspace_reports_its_bytes),
             T(csr_step_matches_sparse_reference_bitwise),
             T(masked_dense_step_matches_reference_bitwise_ignoring_poison),
             T(touch_kernel_updates_exactly_the_entries),
             T(sparse_paths_reject_weight_decay_like_torch),
             T(stream_kernel_reads_three_writes_two))

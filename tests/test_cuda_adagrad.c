/* test_cuda_adagrad.c - the device Adagrad steps (perf/kernels/adagrad_step.cu)
 * are BIT-IDENTICAL to the CPU fast kernels (perf/kernels/adagrad_step.c), which
 * test_adagrad_step.c proves bit-identical to the reference ops: dense (with
 * and without weight decay), element COO, masked COO (zero values skipped),
 * masked dense storage (masked-out data poisoned with NaN) and the stream
 * kernel, f32 and f64, maximize on and off, sizes that are not multiples of
 * a block; and so is the cuSPARSE gather/scatter pipeline (adagrad_gs.cu,
 * the fused step's baseline) on the COO paths, and the uncoalesced step
 * (radix sort + one fused coalesce-and-update kernel) on grads with many
 * duplicates, all entries at one index, and indices that collide in the
 * sort's digits, with a hand-derived case where the order of a run's sum
 * decides the result. Exits 77 (ctest SKIP) when the build has no CUDA or the machine
 * no device: the GPU machine runs it. Built a second time against the
 * emulation (MT_CUDA_EMU: perf/kernels/cuda_emu_runtime.h, library
 * mtfast_emu) as unit.test_cuda_adagrad_emu: the same kernels' indexing,
 * launch shapes and arithmetic on the host, in CI. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mt_test.h"
#include "read_faults.h"

#if !defined(MT_HAVE_CUDA) && !defined(MT_CUDA_EMU)
int main(void) {
  printf("SKIP: not built with CUDA (nvcc was not found at configure time)\n");
  return 77;
}
#else

#include "adagrad_step.h"
#include "adagrad_cuda.h"

static uint64_t rng = 0x5eed;
static double uni(double lo, double hi) { /* xorshift64*, [lo, hi) */
  rng ^= rng >> 12, rng ^= rng << 25, rng ^= rng >> 27;
  return lo + (hi - lo) * (double)((rng * 2685821657736338717ull) >> 11) / 9007199254740992.0;
}

static const int64_t SIZES[] = {1, 1000, 100003};
static const struct {
  int max;
  double wd, eps;
} HP[] = {{0, 0.0, 1e-10}, {1, 0.0, 1e-10}, {0, 0.25, 1e-3}, {1, 0.25, 0.0},
          /* not a power of two: fma(wd, p, g) differs from wd * p + g */
          {0, 0.3, 1e-3}};
#define N_HP ((int)(sizeof HP / sizeof HP[0]))

static mt_adagrad_hparams hparams(int h) {
  mt_adagrad_hparams hp = {.clr = 0.01, .eps = HP[h].eps, .weight_decay = HP[h].wd,
                           .maximize = HP[h].max, .nthreads = 1};
  return hp;
}

enum { P_DENSE, P_COO, P_MCOO, P_MDENSE, P_STREAM, P_GS_COO, P_GS_MCOO, P_TOUCH, P__N };
static const char *PNAME[] = {"dense",        "coo",
                              "masked_coo",   "masked_dense",
                              "stream",       "cusparse coo",
                              "cusparse masked_coo", "touch"};

/* the pipeline on the device arrays: made, stepped, synchronised, freed */
static mt_status gs_step(void *dp, void *ds, int64_t n, void *di, const void *dv, int64_t nnz,
                         int f64, int masked, const mt_adagrad_hparams *hp, mt_error *err) {
  mt_cuda_gs *gs = NULL;
  mt_status st = mt_cuda_gs_new(&gs, dp, ds, n, (int64_t *)di, nnz, f64, err);
  if (st == MT_OK) st = mt_cuda_adagrad_coo_gs(gs, dv, masked, hp, err);
  if (st == MT_OK) st = mt_cuda_sync(err);
  mt_cuda_gs_free(gs);
  return st;
}

/* One path on one size: the device result against the CPU kernel's. */
#define CASE(T, SFX)                                                                               \
  static void case_##SFX(int *mt__failed, int path, int64_t n, int h) {                            \
    mt_adagrad_hparams hp = hparams(h);                                                            \
    if (path != P_DENSE && path != P_STREAM && hp.weight_decay != 0) return;                       \
    size_t es = sizeof(T);                                                                         \
    T *p = malloc(n * es), *s = malloc(n * es), *g = malloc(n * es), *vals = malloc(n * es);       \
    T *dp_h = malloc(n * es), *ds_h = malloc(n * es);                                              \
    int64_t *idx = malloc(n * 8), nnz = 0;                                                         \
    uint8_t *mask = malloc(n);                                                                     \
    void *dp = NULL, *ds = NULL, *dg = NULL, *dv = NULL, *di = NULL, *dm = NULL;                   \
    mt_error err = {0};                                                                            \
    for (int64_t i = 0; i < n; i++) {                                                              \
      p[i] = (T)uni(-1, 1), s[i] = (T)uni(0, 2), g[i] = (T)uni(-1, 1);                             \
      mask[i] = uni(0, 1) < 0.3;                                                                   \
      if (path == P_MDENSE && !mask[i]) g[i] = (T)NAN; /* never read */                            \
      if (uni(0, 1) < 0.1) idx[nnz] = i, vals[nnz++] = uni(0, 1) < 0.2 ? (T)0 : g[i];              \
    }                                                                                              \
    CHECK_STATUS(mt_cuda_malloc(&dp, n * es, &err), MT_OK);                                        \
    CHECK_STATUS(mt_cuda_malloc(&ds, n * es, &err), MT_OK);                                        \
    CHECK_STATUS(mt_cuda_malloc(&dg, n * es, &err), MT_OK);                                        \
    CHECK_STATUS(mt_cuda_malloc(&dv, n * es, &err), MT_OK);                                        \
    CHECK_STATUS(mt_cuda_malloc(&di, n * 8, &err), MT_OK);                                         \
    CHECK_STATUS(mt_cuda_malloc(&dm, n, &err), MT_OK);                                             \
    CHECK_STATUS(mt_cuda_upload(dp, p, n * es, &err), MT_OK);                                      \
    CHECK_STATUS(mt_cuda_upload(ds, s, n * es, &err), MT_OK);                                      \
    CHECK_STATUS(mt_cuda_upload(dg, g, n * es, &err), MT_OK);                                      \
    CHECK_STATUS(mt_cuda_upload(dv, vals, n * es, &err), MT_OK);                                   \
    CHECK_STATUS(mt_cuda_upload(di, idx, n * 8, &err), MT_OK);                                     \
    CHECK_STATUS(mt_cuda_upload(dm, mask, n, &err), MT_OK);                                        \
    mt_status a = MT_OK, b = MT_OK;                                                                \
    switch (path) {                                                                                \
    case P_DENSE:                                                                                  \
      a = mt_adagrad_step_dense_##SFX(p, s, g, n, &hp, &err);                                      \
      b = mt_cuda_adagrad_dense_##SFX(dp, ds, dg, n, &hp, &err);                                   \
      break;                                                                                       \
    case P_COO:                                                                                    \
      a = mt_adagrad_step_coo_##SFX(p, s, idx, vals, nnz, 1, &hp, &err);                           \
      b = mt_cuda_adagrad_coo_##SFX(dp, ds, di, dv, nnz, 0, &hp, &err);                            \
      break;                                                                                       \
    case P_MCOO:                                                                                   \
      a = mt_adagrad_step_masked_coo_##SFX(p, s, idx, vals, nnz, &hp, &err);                       \
      b = mt_cuda_adagrad_coo_##SFX(dp, ds, di, dv, nnz, 1, &hp, &err);                            \
      break;                                                                                       \
    case P_MDENSE:                                                                                 \
      a = mt_adagrad_step_masked_dense_##SFX(p, s, g, mask, n, &hp, &err);                         \
      b = mt_cuda_adagrad_masked_dense_##SFX(dp, ds, dg, dm, n, &hp, &err);                        \
      break;                                                                                       \
    case P_GS_COO:                                                                                 \
    case P_GS_MCOO:                                                                                \
      a = path == P_GS_COO ? mt_adagrad_step_coo_##SFX(p, s, idx, vals, nnz, 1, &hp, &err)         \
                           : mt_adagrad_step_masked_coo_##SFX(p, s, idx, vals, nnz, &hp, &err);    \
      if (nnz > 0) /* the pipeline needs an entry */                                              \
        b = gs_step(dp, ds, n, di, dv, nnz, es == 8, path == P_GS_MCOO, &hp, &err);               \
      break;                                                                                       \
    case P_TOUCH:                                                                                  \
      mt_touch_step_##SFX(p, s, idx, vals, nnz, (T)-0.01, 1, MT_ADAGRAD_ISA_AUTO);                 \
      b = mt_cuda_touch_##SFX(dp, ds, di, dv, nnz, (T)-0.01, &err);                                \
      break;                                                                                       \
    default:                                                                                       \
      mt_stream_step_##SFX(p, s, g, n, (T)-0.01, 1, MT_ADAGRAD_ISA_AUTO);                          \
      b = mt_cuda_stream_##SFX(dp, ds, dg, n, (T)-0.01, &err);                                     \
    }                                                                                              \
    CHECK_STATUS(a, MT_OK);                                                                        \
    CHECK_STATUS(b, MT_OK);                                                                        \
    CHECK_STATUS(mt_cuda_sync(&err), MT_OK);                                                       \
    CHECK_STATUS(mt_cuda_download(dp_h, dp, n * es, &err), MT_OK);                                 \
    CHECK_STATUS(mt_cuda_download(ds_h, ds, n * es, &err), MT_OK);                                 \
    for (int64_t i = 0; i < n; i++)                                                                \
      if (memcmp(&p[i], &dp_h[i], es) || memcmp(&s[i], &ds_h[i], es)) {                            \
        fprintf(stderr, "  %s " #SFX " n=%lld hparams %d: element %lld: device p %.17g s %.17g, " \
                        "CPU p %.17g s %.17g\n",                                                   \
                PNAME[path], (long long)n, h, (long long)i, (double)dp_h[i], (double)ds_h[i],      \
                (double)p[i], (double)s[i]);                                                       \
        *mt__failed = 1;                                                                           \
        break;                                                                                     \
      }                                                                                            \
    mt_cuda_free(dp), mt_cuda_free(ds), mt_cuda_free(dg), mt_cuda_free(dv), mt_cuda_free(di);      \
    mt_cuda_free(dm);                                                                              \
    free(p), free(s), free(g), free(vals), free(dp_h), free(ds_h), free(idx), free(mask);          \
  }
CASE(float, f32)
CASE(double, f64)

TEST(device_steps_match_cpu_kernels_bitwise) {
  for (int path = 0; path < P__N; path++)
    for (int k = 0; k < (int)(sizeof SIZES / sizeof SIZES[0]); k++)
      for (int h = 0; h < N_HP; h++) {
        case_f32(mt__failed, path, SIZES[k], h);
        case_f64(mt__failed, path, SIZES[k], h);
      }
}

/* ---- the uncoalesced step (coo_dup): sort + one fused kernel ------------- */

/* Entries (index, position) sorted stably by index, for the sorted = 1 form. */
static const int64_t *dup_lin;
static int dup_by_index(const void *a, const void *b) {
  int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  if (dup_lin[x] != dup_lin[y]) return dup_lin[x] < dup_lin[y] ? -1 : 1;
  return (x > y) - (x < y);
}

/* nnz entries over n elements in input order: indices from pool (n_pool > 0)
 * or uniform; the device step on them (sorted = 0, through the radix sort;
 * then pre-sorted on the host, sorted = 1, no buffers) against the CPU
 * kernel's (mt_adagrad_step_coo_dup_*, test_adagrad_step: bit for bit the
 * reference's coalesce + adagrad_sparse), every element of p and s. */
#define DUP_CASE(T, SFX)                                                                           \
  static void dup_case_##SFX(int *mt__failed, int64_t n, int64_t nnz, const int64_t *pool,         \
                             int n_pool, int h, const char *what) {                               \
    mt_adagrad_hparams hp = hparams(h);                                                            \
    size_t es = sizeof(T);                                                                         \
    T *p = malloc(n * es), *s = malloc(n * es), *p0 = malloc(n * es), *s0 = malloc(n * es);        \
    T *dp_h = malloc(n * es), *ds_h = malloc(n * es), *vals = malloc(nnz * es);                    \
    T *svals = malloc(nnz * es);                                                                   \
    int64_t *idx = malloc(nnz * 8), *sidx = malloc(nnz * 8), *order = malloc(nnz * 8);             \
    void *dp = NULL, *ds = NULL, *dv = NULL, *di = NULL;                                           \
    mt_adagrad_dup *ws = NULL;                                                                     \
    mt_cuda_dup *dd = NULL;                                                                        \
    mt_error err = {0};                                                                            \
    for (int64_t i = 0; i < n; i++) p0[i] = (T)uni(-1, 1), s0[i] = (T)uni(0, 2);                   \
    for (int64_t k = 0; k < nnz; k++) {                                                            \
      idx[k] = n_pool ? pool[(int64_t)uni(0, n_pool)] : (int64_t)uni(0, (double)n);                \
      vals[k] = uni(0, 1) < 0.05 ? (T)0 : (T)uni(-1, 1);                                           \
      order[k] = k;                                                                                \
    }                                                                                              \
    dup_lin = idx;                                                                                 \
    qsort(order, (size_t)nnz, sizeof *order, dup_by_index);                                        \
    for (int64_t k = 0; k < nnz; k++) sidx[k] = idx[order[k]], svals[k] = vals[order[k]];         \
    memcpy(p, p0, n * es), memcpy(s, s0, n * es);                                                  \
    CHECK_STATUS(mt_adagrad_dup_new(&ws, n, nnz, &err), MT_OK);                                    \
    CHECK_STATUS(mt_adagrad_step_coo_dup_##SFX(p, s, idx, vals, nnz, 0, ws, &hp, &err), MT_OK);    \
    CHECK_STATUS(mt_cuda_dup_new(&dd, n, nnz, &err), MT_OK);                                       \
    CHECK_STATUS(mt_cuda_malloc(&dp, n * es, &err), MT_OK);                                        \
    CHECK_STATUS(mt_cuda_malloc(&ds, n * es, &err), MT_OK);                                        \
    CHECK_STATUS(mt_cuda_malloc(&dv, nnz * es, &err), MT_OK);                                      \
    CHECK_STATUS(mt_cuda_malloc(&di, nnz * 8, &err), MT_OK);                                       \
    for (int pre = 0; pre <= 1; pre++) {                                                           \
      CHECK_STATUS(mt_cuda_upload(dp, p0, n * es, &err), MT_OK);                                   \
      CHECK_STATUS(mt_cuda_upload(ds, s0, n * es, &err), MT_OK);                                   \
      CHECK_STATUS(mt_cuda_upload(dv, pre ? svals : vals, nnz * es, &err), MT_OK);                 \
      CHECK_STATUS(mt_cuda_upload(di, pre ? sidx : idx, nnz * 8, &err), MT_OK);                    \
      CHECK_STATUS(mt_cuda_adagrad_coo_dup_##SFX(dp, ds, di, dv, nnz, pre, pre ? NULL : dd, &hp,   \
                                                 &err),                                            \
                   MT_OK);                                                                         \
      CHECK_STATUS(mt_cuda_sync(&err), MT_OK);                                                     \
      CHECK_STATUS(mt_cuda_download(dp_h, dp, n * es, &err), MT_OK);                               \
      CHECK_STATUS(mt_cuda_download(ds_h, ds, n * es, &err), MT_OK);                               \
      for (int64_t i = 0; i < n; i++)                                                              \
        if (memcmp(&p[i], &dp_h[i], es) || memcmp(&s[i], &ds_h[i], es)) {                          \
          fprintf(stderr, "  coo_dup%s " #SFX " %s n=%lld nnz=%lld hparams %d: element %lld: "    \
                          "device p %.17g s %.17g, CPU p %.17g s %.17g\n",                         \
                  pre ? " (sorted)" : "", what, (long long)n, (long long)nnz, h, (long long)i,     \
                  (double)dp_h[i], (double)ds_h[i], (double)p[i], (double)s[i]);                   \
          *mt__failed = 1;                                                                         \
          break;                                                                                   \
        }                                                                                          \
    }                                                                                              \
    mt_cuda_free(dp), mt_cuda_free(ds), mt_cuda_free(dv), mt_cuda_free(di);                        \
    mt_cuda_dup_free(dd);                                                                          \
    mt_adagrad_dup_free(ws);                                                                       \
    free(p), free(s), free(vals), free(svals), free(p0), free(s0), free(dp_h), free(ds_h);         \
    free(idx), free(sidx), free(order);                                                            \
  }
DUP_CASE(float, f32)
DUP_CASE(double, f64)

TEST(device_dup_step_matches_cpu_kernel_bitwise) {
  /* indices equal in one or two of the radix digits, different in others */
  static const int64_t spread[] = {5, 5 + 256, 5 + 65536, 5 + (1 << 22), 5 + (1 << 22) + 256,
                                   9, 9 + (1 << 22), 1 << 22};
  static const int64_t one[] = {777};
  for (int h = 0; h < N_HP; h++) {
    if (HP[h].wd != 0) continue; /* rejected, like torch's sparse path */
    dup_case_f32(mt__failed, 1000, 3000, NULL, 0, h, "many duplicates (3 an element)");
    dup_case_f64(mt__failed, 1000, 3000, NULL, 0, h, "many duplicates (3 an element)");
    dup_case_f32(mt__failed, 100003, 20000, NULL, 0, h, "few duplicates");
    dup_case_f64(mt__failed, 100003, 20000, NULL, 0, h, "few duplicates");
    dup_case_f32(mt__failed, 1000, 5000, one, 1, h, "every entry at one index");
    dup_case_f64(mt__failed, 1000, 5000, one, 1, h, "every entry at one index");
  }
  dup_case_f32(mt__failed, (1 << 22) + 1000, 2000, spread, 8, 0, "digit-colliding indices");
  dup_case_f64(mt__failed, (1 << 22) + 1000, 2000, spread, 8, 1, "digit-colliding indices");
}

TEST(device_dup_step_sums_each_run_in_input_order) {
  /* as test_adagrad_step's coo_dup_step_sums_each_run_in_input_order: f32
   * entries (index: value) 2: 1, 0: 5, 2: 2^60, 2: -2^60 in input order;
   * summed in float32 in that order element 2 gets (1 + 2^60) - 2^60
   * = 2^60 - 2^60 = 0 (2^60 + 1 rounds to 2^60), so its p and s stay 1 and
   * 0.5 exactly; element 0 gets 5: s = 0.5 + 25 = 25.5. The wrong variant,
   * the same entries reversed (the run summed backwards: -2^60 + 2^60 + 1 =
   * 1, as a kernel that sums a run in reverse or drops duplicates gets), gives
   * element 2 s = 1.5 and fails these checks. */
  const float big = 0x1p60f;
  int64_t idx[2][4] = {{2, 0, 2, 2}, {2, 2, 0, 2}};
  float vals[2][4] = {{1, 5, big, -big}, {-big, big, 5, 1}};
  float p0[4] = {1, 1, 1, 1}, s0[4] = {0.5f, 0.5f, 0.5f, 0.5f}, p[4], s[4];
  mt_adagrad_hparams hp = {.clr = 0.1, .eps = 1e-10, .nthreads = 1};
  mt_error err = {0};
  void *dp = NULL, *ds = NULL, *dv = NULL, *di = NULL;
  mt_cuda_dup *dd = NULL;
  CHECK_STATUS(mt_cuda_dup_new(&dd, 4, 4, &err), MT_OK);
  CHECK_STATUS(mt_cuda_malloc(&dp, sizeof p, &err), MT_OK);
  CHECK_STATUS(mt_cuda_malloc(&ds, sizeof s, &err), MT_OK);
  CHECK_STATUS(mt_cuda_malloc(&dv, sizeof vals[0], &err), MT_OK);
  CHECK_STATUS(mt_cuda_malloc(&di, sizeof idx[0], &err), MT_OK);
  for (int wrong = 0; wrong <= 1; wrong++) {
    CHECK_STATUS(mt_cuda_upload(dp, p0, sizeof p, &err), MT_OK);
    CHECK_STATUS(mt_cuda_upload(ds, s0, sizeof s, &err), MT_OK);
    CHECK_STATUS(mt_cuda_upload(dv, vals[wrong], sizeof vals[0], &err), MT_OK);
    CHECK_STATUS(mt_cuda_upload(di, idx[wrong], sizeof idx[0], &err), MT_OK);
    CHECK_STATUS(mt_cuda_adagrad_coo_dup_f32(dp, ds, di, dv, 4, 0, dd, &hp, &err), MT_OK);
    CHECK_STATUS(mt_cuda_sync(&err), MT_OK);
    CHECK_STATUS(mt_cuda_download(p, dp, sizeof p, &err), MT_OK);
    CHECK_STATUS(mt_cuda_download(s, ds, sizeof s, &err), MT_OK);
    int right = s[2] == 0.5f && p[2] == 1.0f && s[0] == 25.5f && p[0] != 1.0f && s[1] == 0.5f &&
                p[1] == 1.0f && s[3] == 0.5f && p[3] == 1.0f;
    CHECK_EQ_INT(right, !wrong);
    if (wrong) CHECK(s[2] == 1.5f);
  }
  mt_cuda_free(dp), mt_cuda_free(ds), mt_cuda_free(dv), mt_cuda_free(di);
  mt_cuda_dup_free(dd);
}

TEST(device_dup_step_rejects_what_it_cannot_sort) {
  mt_adagrad_hparams hp = hparams(0);
  mt_error err = {0};
  mt_cuda_dup *dd = NULL;
  CHECK_STATUS(mt_cuda_adagrad_coo_dup_f32(NULL, NULL, NULL, NULL, 3, 0, NULL, &hp, &err),
               MT_INVALID_ARGUMENT);
  CHECK_HAS(err.msg, "d is NULL");
  CHECK_STATUS(mt_cuda_dup_new(&dd, 10, 2, &err), MT_OK);
  CHECK_STATUS(mt_cuda_adagrad_coo_dup_f64(NULL, NULL, NULL, NULL, 3, 0, dd, &hp, &err),
               MT_INVALID_ARGUMENT);
  CHECK_HAS(err.msg, "3 entries, the sort's buffers hold 2");
  mt_cuda_dup_free(dd);
  dd = NULL;
  CHECK_STATUS(mt_cuda_dup_new(&dd, 10, (int64_t)1 << 31, &err), MT_INVALID_ARGUMENT);
  CHECK(dd == NULL);
  CHECK_STATUS(mt_cuda_dup_new(&dd, 0, 5, &err), MT_INVALID_ARGUMENT);
  CHECK_HAS(err.msg, "n = 0");
  hp = hparams(2); /* weight decay */
  CHECK_STATUS(mt_cuda_adagrad_coo_dup_f32(NULL, NULL, NULL, NULL, 1, 1, NULL, &hp, &err),
               MT_INVALID_ARGUMENT);
  CHECK_HAS(err.msg, "weight_decay");
}

TEST(device_dup_buffers_report_their_bytes) {
  /* per entry of capacity the keys (8 bytes), the permutation and the
   * positions (4 each), and beside them the radix sort's own temporary
   * storage, which is never empty and never shrinks with more items: more
   * than 16000 bytes for 1000 entries, and at least 16000 more for 1000
   * entries more. Not "more than": the emulation's storage grows with the
   * items, the real CUB's need not (on the first H200, 2026-12-04, CUB 13.0
   * asked for 1 byte at both sizes: 16001 and 32001 in all, printed below).
   * A capacity of 0 is refused (the sort needs an item). */
  mt_error err = {0};
  mt_cuda_dup *a = NULL, *b = NULL;
  CHECK_STATUS(mt_cuda_dup_new(&a, 100, 1000, &err), MT_OK);
  CHECK_STATUS(mt_cuda_dup_new(&b, 100, 2000, &err), MT_OK);
  printf("  the sort's bytes: %lld for 1000 entries, %lld for 2000 (16 an entry + its storage)\n",
         (long long)mt_cuda_dup_bytes(a), (long long)mt_cuda_dup_bytes(b));
  CHECK(mt_cuda_dup_bytes(a) > 16000);
  CHECK(mt_cuda_dup_bytes(b) - mt_cuda_dup_bytes(a) >= 16000);
  CHECK_EQ_INT(mt_cuda_dup_bytes(NULL), 0);
  mt_cuda_dup_free(a);
  mt_cuda_dup_free(b);
  a = NULL;
  CHECK_STATUS(mt_cuda_dup_new(&a, 100, 0, &err), MT_INVALID_ARGUMENT);
  CHECK_HAS(err.msg, "capacity 0");
  CHECK(a == NULL);
}

/* a and b bit for bit, or both NaN (a GPU's 0/0 and the host's differ in
 * the NaN's sign bit) */
static int same_or_nan(const float *a, const float *b, int64_t n) {
  for (int64_t i = 0; i < n; i++)
    if (memcmp(&a[i], &b[i], sizeof *a) && !(isnan(a[i]) && isnan(b[i]))) return 0;
  return 1;
}

enum { SMALL = 8 };
/* One float32 COO step of nnz entries on a param of n (<= SMALL) elements:
 * the CPU kernel (masked or plain) on q, u, then the device's (the fused
 * kernel, or with gs the cuSPARSE pipeline) from p0, s0; 1 when the two
 * agree (same_or_nan), else prints both. q, u: SMALL elements, the CPU's. */
static int small_coo_agrees(int *mt__failed, const float *p0, const float *s0, int64_t n,
                            const int64_t *idx, const float *v, int64_t nnz, int masked, int gs,
                            const mt_adagrad_hparams *hp, float *q, float *u) {
  float dp_h[SMALL], ds_h[SMALL];
  mt_error err = {0};
  void *dp = NULL, *ds = NULL, *di = NULL, *dv = NULL;
  size_t bytes = (size_t)n * sizeof *q;
  memcpy(q, p0, bytes), memcpy(u, s0, bytes);
  CHECK_STATUS(masked ? mt_adagrad_step_masked_coo_f32(q, u, idx, v, nnz, hp, &err)
                      : mt_adagrad_step_coo_f32(q, u, idx, v, nnz, 1, hp, &err),
               MT_OK);
  CHECK_STATUS(mt_cuda_malloc(&dp, bytes, &err), MT_OK);
  CHECK_STATUS(mt_cuda_malloc(&ds, bytes, &err), MT_OK);
  CHECK_STATUS(mt_cuda_malloc(&di, (size_t)nnz * 8, &err), MT_OK);
  CHECK_STATUS(mt_cuda_malloc(&dv, (size_t)nnz * sizeof *v, &err), MT_OK);
  CHECK_STATUS(mt_cuda_upload(dp, p0, bytes, &err), MT_OK);
  CHECK_STATUS(mt_cuda_upload(ds, s0, bytes, &err), MT_OK);
  CHECK_STATUS(mt_cuda_upload(di, idx, (size_t)nnz * 8, &err), MT_OK);
  CHECK_STATUS(mt_cuda_upload(dv, v, (size_t)nnz * sizeof *v, &err), MT_OK);
  CHECK_STATUS(gs ? gs_step(dp, ds, n, di, dv, nnz, 0, masked, hp, &err)
                  : mt_cuda_adagrad_coo_f32(dp, ds, di, dv, nnz, masked, hp, &err),
               MT_OK);
  CHECK_STATUS(mt_cuda_sync(&err), MT_OK);
  CHECK_STATUS(mt_cuda_download(dp_h, dp, bytes, &err), MT_OK);
  CHECK_STATUS(mt_cuda_download(ds_h, ds, bytes, &err), MT_OK);
  mt_cuda_free(dp), mt_cuda_free(ds), mt_cuda_free(di), mt_cuda_free(dv);
  if (same_or_nan(dp_h, q, n) && same_or_nan(ds_h, u, n)) return 1;
  fprintf(stderr, "  %s%s, n = %lld:", masked ? "masked " : "", gs ? "cusparse" : "fused",
          (long long)n);
  for (int64_t i = 0; i < n; i++)
    fprintf(stderr, " [%lld] device %g %g, CPU %g %g", (long long)i, dp_h[i], ds_h[i], q[i], u[i]);
  fprintf(stderr, "\n");
  return 0;
}

TEST(device_masked_steps_skip_stored_zeros_plain_ones_do_not) {
  /* with eps = 0, a stored 0 at an element whose state_sum is 0 gives the
   * plain step 0 / (sqrt(0) + 0), NaN, as torch's sparse Adagrad does; the
   * masked step skips the entry and leaves the element as it was. The fused
   * kernel and the cuSPARSE pipeline, float32, against the CPU kernels */
  const float p0[3] = {1, 2, 3}, s0[3] = {0, 0.5f, 0}, v[3] = {0, 1, 0.5f};
  const int64_t idx[3] = {0, 1, 2};
  mt_adagrad_hparams hp = {.clr = 0.01, .eps = 0, .nthreads = 1};
  for (int t = 0; t < 4; t++) {
    float q[SMALL], u[SMALL];
    int masked = t % 2, gs = t / 2;
    CHECK(small_coo_agrees(mt__failed, p0, s0, 3, idx, v, 3, masked, gs, &hp, q, u));
    CHECK(masked ? q[0] == 1.0f : isnan(q[0])); /* the CPU kernels, as derived above */
  }
}

TEST(device_gs_pipeline_takes_a_single_entry) {
  /* the cuSPARSE gather/scatter pipeline needs an entry (nnz 0 is refused
   * below); with exactly one (0.75 at element 3 of 5) it steps that element
   * as the CPU kernel does, bit for bit, and no other, plain and masked;
   * then a param of one element (n = 1), its entry at element 0 */
  const float p0[5] = {1, -0.5f, 0.25f, 2, -1}, s0[5] = {0.5f, 0.25f, 1, 0, 2}, v[1] = {0.75f};
  mt_adagrad_hparams hp = hparams(0);
  for (int t = 0; t < 4; t++) {
    float q[SMALL], u[SMALL];
    int masked = t % 2, one = t / 2;
    const int64_t idx[1] = {one ? 0 : 3};
    CHECK(small_coo_agrees(mt__failed, p0, s0, one ? 1 : 5, idx, v, 1, masked, 1, &hp, q, u));
    if (!one) CHECK(u[3] == 0.5625f && q[0] == p0[0] && u[4] == s0[4]); /* 0 + 0.75^2 at 3 only */
  }
}

TEST(device_sparse_paths_reject_weight_decay_like_torch) {
  mt_adagrad_hparams hp = hparams(2); /* weight_decay 0.25 */
  mt_error err = {0};
  CHECK_STATUS(mt_cuda_adagrad_coo_f32(NULL, NULL, NULL, NULL, 1, 0, &hp, &err),
               MT_INVALID_ARGUMENT);
  CHECK_HAS(err.msg, "weight_decay");
  CHECK_STATUS(mt_cuda_adagrad_dense_f32(NULL, NULL, NULL, -1, &hp, &err), MT_INVALID_ARGUMENT);
  CHECK_HAS(err.msg, "negative size");
  mt_cuda_gs *gs = NULL;
  CHECK_STATUS(mt_cuda_gs_new(&gs, NULL, NULL, 10, NULL, 0, 0, &err), MT_INVALID_ARGUMENT);
  CHECK_HAS(err.msg, "nnz 0");
  CHECK(gs == NULL);
}

TEST(device_copy_bandwidth_is_measured) {
  double bw = 0;
  mt_error err = {0};
  CHECK_STATUS(mt_cuda_copy_bandwidth((size_t)64 << 20, 3, &bw, &err), MT_OK);
#ifdef MT_CUDA_EMU
  CHECK(bw > 0); /* the host's memcpy, on a shared CI machine */
#else
  CHECK(bw > 1e9); /* any GPU copies more than 1 GB/s */
#endif
}

#ifdef MT_CUDA_EMU
/* a dense step over one element more than its 64-element buffers hold */
static void step_one_past(void *bufs) {
  float **b = (float **)bufs;
  mt_adagrad_hparams hp = hparams(0);
  mt_error err = {0};
  mt_cuda_adagrad_dense_f32(b[0], b[1], b[2], 65, &hp, &err);
}

/* The emulation tells device memory from host memory as a GPU does
 * (perf/kernels/cuda_emu_runtime.h): a step handed the host's arrays
 * fails (the kernel's launch: an illegal address) instead of reading them,
 * a copy whose kind names the wrong side fails, host code reading device
 * memory faults, and so does a kernel running past its buffer. Emulation only: a GPU
 * with HMM may read pageable host memory, and an illegal address would
 * end the context for the tests after it. */
TEST(emulation_refuses_host_pointers) {
  float p[4] = {1, 2, 3, 4}, s[4] = {0}, g[4] = {1, 1, 1, 1};
  mt_adagrad_hparams hp = hparams(0);
  mt_error err = {0};
  void *d = NULL;
  CHECK_STATUS(mt_cuda_adagrad_dense_f32(p, s, g, 4, &hp, &err), MT_DEVICE_ERROR);
  CHECK_HAS(err.msg, "illegal memory access");
  CHECK(p[0] == 1 && s[0] == 0); /* not touched */
  CHECK_STATUS(mt_cuda_malloc(&d, sizeof p, &err), MT_OK);
  CHECK(mt_read_faults((const char *)d)); /* device memory: out of the host code's reach */
  CHECK_STATUS(mt_cuda_upload(d, p, sizeof p, &err), MT_OK);
  CHECK_STATUS(mt_cuda_upload(p, d, sizeof p, &err), MT_DEVICE_ERROR); /* swapped */
  CHECK_STATUS(mt_cuda_upload((char *)d + 4, p, sizeof p, &err), MT_DEVICE_ERROR); /* past the end */
  mt_cuda_free(d);
  /* a guard page ends each allocation: a kernel running past 64 floats (256 bytes, no
   * rounding) faults there, as memcheck would report it on a GPU */
  float *b[3] = {NULL, NULL, NULL};
  for (int i = 0; i < 3; i++) CHECK_STATUS(mt_cuda_malloc((void **)&b[i], 64 * 4, &err), MT_OK);
  CHECK(mt_child_faults(step_one_past, b));
  for (int i = 0; i < 3; i++) mt_cuda_free(b[i]);
}
#endif

#ifdef MT_CUDA_EMU
/* the emulation's one device, as mt_cuda_probe describes it */
TEST(emulation_probe_names_its_one_device) {
  char info[256];
  CHECK_EQ_INT(mt_cuda_probe(info, sizeof info), 0);
  CHECK_HAS(info, "cuda-emu (host emulation), 1.0 GiB, 1 SMs");
}
#define EMU_ONLY_TESTS , T(emulation_refuses_host_pointers), T(emulation_probe_names_its_one_device)
/* the emulation always has its device: every test runs, and a probe that
 * fails there fails emulation_probe_names_its_one_device instead of
 * turning the whole run into a SKIP */
static int no_device(char *why, size_t len) {
  snprintf(why, len, "cuda-emu: the host emulation's one device");
  return 0;
}
#else
#define EMU_ONLY_TESTS
/* 0 with the device's facts in why, else the reason */
static int no_device(char *why, size_t len) { return mt_cuda_probe(why, len) != 0; }
#endif

MT_TEST_MAIN_UNLESS(no_device, T(device_steps_match_cpu_kernels_bitwise),
                    T(device_dup_step_matches_cpu_kernel_bitwise),
                    T(device_dup_step_sums_each_run_in_input_order),
                    T(device_dup_step_rejects_what_it_cannot_sort),
                    T(device_dup_buffers_report_their_bytes),
                    T(device_gs_pipeline_takes_a_single_entry),
                    T(device_masked_steps_skip_stored_zeros_plain_ones_do_not),
                    T(device_sparse_paths_reject_weight_decay_like_torch),
                    T(device_copy_bandwidth_is_measured) EMU_ONLY_TESTS)
#endif

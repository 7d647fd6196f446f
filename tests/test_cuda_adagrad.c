/* test_cuda_adagrad.c - the device Adagrad steps (perf/kernels/adagrad_step.cu)
 * are BIT-IDENTICAL to the CPU fast kernels (perf/kernels/adagrad_step.c), which
 * test_adagrad_step.c proves bit-identical to the reference ops: dense (with
 * and without weight decay), element COO, masked COO (zero values skipped),
 * masked dense storage (masked-out data poisoned with NaN) and the stream
 * kernel, f32 and f64, maximize on and off, sizes that are not multiples of
 * a block; and so is the cuSPARSE gather/scatter pipeline (adagrad_gs.cu,
 * the fused step's baseline) on the COO paths. Exits 77 (ctest SKIP) when the build has no CUDA or the machine
 * no device: the GPU machine runs it. Built a second time against the
 * emulation (MT_CUDA_EMU: perf/kernels/cuda_emu_runtime.h, library
 * mtfast_emu) as unit.test_cuda_adagrad_emu: the same kernels' indexing,
 * launch shapes and arithmetic on the host, in CI. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mt_test.h"

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

enum { P_DENSE, P_COO, P_MCOO, P_MDENSE, P_STREAM, P_GS_COO, P_GS_MCOO, P__N };
static const char *PNAME[] = {"dense",  "coo",         "masked_coo",         "masked_dense",
                              "stream", "cusparse coo", "cusparse masked_coo"};

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

/* 0 with the device's facts in why, else the reason */
static int no_device(char *why, size_t len) { return mt_cuda_probe(why, len) != 0; }

MT_TEST_MAIN_UNLESS(no_device, T(device_steps_match_cpu_kernels_bitwise),
                    T(device_sparse_paths_reject_weight_decay_like_torch),
                    T(device_copy_bandwidth_is_measured))
#endif

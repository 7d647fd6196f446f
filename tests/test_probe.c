/* test_probe.c - the probe kernels of the prefetch-aware model
 * (perf/kernels/probe.h): each pattern touches exactly the lines it says
 * (counts, positions, sortedness, determinism), and a probe step updates
 * exactly the pattern's elements as documented (s + v, p + v * k) on 1 and
 * 2 threads and every code path, leaving every other element's bits alone. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "mt_test.h"
#include "probe.h"
#include "adagrad_step.h"

/* f32: 16 elements per line; n = 1000 is 62.5 lines, so 63 (the last partial) */
TEST(gap_pattern_is_every_gap_th_line_start) {
  int64_t idx[64];
  int64_t m = mt_probe_indices(MT_PROBE_GAP, 1000, 4, 3, 0, idx);
  CHECK_EQ_INT(m, 21); /* lines 0, 3, ..., 60: ceil(63 / 3) */
  CHECK(m <= mt_probe_max_count(MT_PROBE_GAP, 1000, 4, 3));
  for (int64_t k = 0; k < m; k++) CHECK_EQ_INT(idx[k], k * 3 * 16);
  CHECK_EQ_INT(mt_probe_lines(idx, m, 4), 21);
  CHECK_EQ_INT(mt_probe_indices(MT_PROBE_GAP, 1000, 4, 3, 0, NULL), 21);
  /* f64: 8 per line, gap 1 = every line's first element: 125 lines */
  int64_t *all = malloc(200 * sizeof *all);
  CHECK_EQ_INT(mt_probe_indices(MT_PROBE_GAP, 1000, 8, 1, 0, all), 125);
  CHECK_EQ_INT(all[124], 992);
  free(all);
}

TEST(random_pattern_is_one_element_on_bernoulli_lines) {
  const int64_t lines = 40000, n = lines * 16;
  int64_t cap = mt_probe_max_count(MT_PROBE_RANDOM, n, 4, 4);
  int64_t *a = malloc((size_t)cap * sizeof *a), *b = malloc((size_t)cap * sizeof *b);
  int64_t m = mt_probe_indices(MT_PROBE_RANDOM, n, 4, 4, 7, a);
  /* binomial(40000, 1/4): mean 10000, sd 86.6; 6 sd either side */
  CHECK(m > 10000 - 520 && m < 10000 + 520);
  CHECK_EQ_INT(mt_probe_lines(a, m, 4), m); /* one element per line */
  int in_line_spread = 0;
  for (int64_t k = 1; k < m; k++) {
    CHECK(a[k] > a[k - 1] && a[k] / 16 > a[k - 1] / 16);
    in_line_spread |= (int)(a[k] % 16 != 0);
  }
  CHECK(a[m - 1] < n);
  CHECK(in_line_spread); /* the element within the line is drawn, not always 0 */
  CHECK_EQ_INT(mt_probe_indices(MT_PROBE_RANDOM, n, 4, 4, 7, NULL), m);
  CHECK_EQ_INT(mt_probe_indices(MT_PROBE_RANDOM, n, 4, 4, 7, b), m); /* same seed, same list */
  CHECK(memcmp(a, b, (size_t)m * sizeof *a) == 0);
  int64_t m2 = mt_probe_indices(MT_PROBE_RANDOM, n, 4, 4, 8, b);
  CHECK(m2 != m || memcmp(a, b, (size_t)m * sizeof *a) != 0);
  /* mean gap 1: every line */
  CHECK_EQ_INT(mt_probe_indices(MT_PROBE_RANDOM, n, 8, 1, 7, NULL), n / 8);
  free(a);
  free(b);
}

TEST(entry_pattern_and_bad_arguments) {
  int64_t idx[40];
  /* f64, gap 1/8 of a line: every element */
  CHECK_EQ_INT(mt_probe_indices(MT_PROBE_ENTRY, 40, 8, 0.125, 0, idx), 40);
  for (int k = 0; k < 40; k++) CHECK_EQ_INT(idx[k], k);
  CHECK_EQ_INT(mt_probe_lines(idx, 40, 8), 5);
  /* f32, gap 1/4 of a line: every 4th element, 4 on each line; 42 elements: 11 */
  CHECK_EQ_INT(mt_probe_indices(MT_PROBE_ENTRY, 42, 4, 0.25, 0, idx), 11);
  for (int k = 0; k < 11; k++) CHECK_EQ_INT(idx[k], 4 * k);
  CHECK_EQ_INT(mt_probe_lines(idx, 11, 4), 3);
  CHECK(mt_probe_max_count(MT_PROBE_ENTRY, 42, 4, 0.25) >= 11);
  CHECK_EQ_INT(mt_probe_indices(MT_PROBE_ENTRY, 42, 4, 0.3, 0, NULL), -1); /* 4.8 apart */
  CHECK_EQ_INT(mt_probe_indices(MT_PROBE_ENTRY, 42, 4, 2, 0, NULL), -1);   /* over a line */
  CHECK_EQ_INT(mt_probe_indices(MT_PROBE_ENTRY, 42, 8, 0.0625, 0, NULL), -1); /* half an f64 */
  CHECK_EQ_INT(mt_probe_indices(MT_PROBE_GAP, 40, 2, 1, 0, NULL), -1);    /* elsize */
  CHECK_EQ_INT(mt_probe_indices(MT_PROBE_GAP, 40, 4, 2.5, 0, NULL), -1);  /* gap integer */
  CHECK_EQ_INT(mt_probe_indices(MT_PROBE_RANDOM, 40, 4, 0.5, 0, NULL), -1);
  CHECK_EQ_INT(mt_probe_indices(MT_PROBE_RANDOM, 0, 4, 2, 0, NULL), -1);
  CHECK_EQ_INT(mt_probe_max_count(MT_PROBE_GAP, 40, 4, 0), 0);
  /* lines of a hand list: f32 lines 0 0 0 1 2; f64 0 0 1 2 5 */
  const int64_t l[] = {0, 1, 15, 16, 40};
  CHECK_EQ_INT(mt_probe_lines(l, 5, 4), 3);
  CHECK_EQ_INT(mt_probe_lines(l, 5, 8), 4);
}

/* One probe step on pattern (kind, gap) at n, dtype f64 or not, threads,
 * isa: every element checked. Values differ by entry, (k % 7 + 1) / 256, so
 * that an entry landing on the wrong element shows. */
static int step_ok(mt_probe_kind kind, double gap, int64_t n, int f64, int threads, int isa) {
  int es = f64 ? 8 : 4, ok = 1;
  int64_t cap = mt_probe_max_count(kind, n, es, gap);
  int64_t *idx = malloc((size_t)cap * sizeof *idx);
  void *p = NULL, *s = NULL, *v = malloc((size_t)cap * (size_t)es);
  size_t bytes = (size_t)n * (size_t)es;
  if (!idx || !v || posix_memalign(&p, 64, bytes) || posix_memalign(&s, 64, bytes)) return 0;
  int64_t m = mt_probe_indices(kind, n, es, gap, 99, idx);
  for (int64_t i = 0; i < n; i++) {
    if (f64) ((double *)p)[i] = 1.0 + (double)i, ((double *)s)[i] = 0.5;
    else ((float *)p)[i] = 1.0f + (float)(i % 1000), ((float *)s)[i] = 0.5f;
  }
  for (int64_t k = 0; k < m; k++) {
    double val = (double)(k % 7 + 1) / 256.0;
    if (f64) ((double *)v)[k] = val;
    else ((float *)v)[k] = (float)val;
  }
  if (f64) mt_probe_step_f64(p, s, idx, v, m, -0.01, threads, isa);
  else mt_probe_step_f32(p, s, idx, v, m, -0.01f, threads, isa);
  int64_t changed = 0;
  for (int64_t i = 0, k = 0; i < n; i++) {
    int in = k < m && idx[k] == i;
    if (f64) {
      double p0 = 1.0 + (double)i, vv = in ? ((double *)v)[k] : 0;
      double wp = in ? p0 + vv * -0.01 : p0, ws = in ? 0.5 + vv : 0.5;
      if (((double *)p)[i] != wp || ((double *)s)[i] != ws) ok = 0;
      changed += ((double *)s)[i] != 0.5;
    } else {
      float p0 = 1.0f + (float)(i % 1000), vv = in ? ((float *)v)[k] : 0;
      float wp = in ? p0 + vv * -0.01f : p0, ws = in ? 0.5f + vv : 0.5f;
      if (((float *)p)[i] != wp || ((float *)s)[i] != ws) ok = 0;
      changed += ((float *)s)[i] != 0.5f;
    }
    k += in;
  }
  if (changed != m) ok = 0;
  free(idx);
  free(v);
  free(p);
  free(s);
  return ok;
}

TEST(step_updates_exactly_the_pattern) {
  const int isas[] = {MT_ADAGRAD_ISA_BASE, MT_ADAGRAD_ISA_AVX2, MT_ADAGRAD_ISA_AUTO};
  for (int f64 = 0; f64 < 2; f64++)
    for (int t = 1; t <= 2; t++)
      for (int i = 0; i < 3; i++) {
        /* gap 1 (no software prefetch: entries a line apart), gap 6 (prefetch on) */
        CHECK(step_ok(MT_PROBE_GAP, 1, 100003, f64, t, isas[i]));
        CHECK(step_ok(MT_PROBE_GAP, 6, 100003, f64, t, isas[i]));
        CHECK(step_ok(MT_PROBE_RANDOM, 1.5, 100003, f64, t, isas[i]));
        CHECK(step_ok(MT_PROBE_RANDOM, 64, 100003, f64, t, isas[i]));
        CHECK(step_ok(MT_PROBE_ENTRY, 0.125, 4099, f64, t, isas[i])); /* f32: 2 apart */
        CHECK(step_ok(MT_PROBE_ENTRY, 0.5, 100003, f64, t, isas[i]));
      }
}

/* The math probe's step is the sparse Adagrad step: s + v v (exact for v = 2^-8:
 * 0.5 + 2^-16) and p moved on the entries only, every other element's bits kept. */
TEST(math_step_is_adagrad_on_the_entries) {
  for (int f64 = 0; f64 < 2; f64++) {
    int es = f64 ? 8 : 4;
    int64_t n = 4099, cap = mt_probe_max_count(MT_PROBE_MATH, n, es, 0.25);
    int64_t *idx = malloc((size_t)cap * sizeof *idx);
    double *pd = malloc((size_t)n * 8), *sd = malloc((size_t)n * 8), *vd = malloc((size_t)cap * 8);
    float *pf = malloc((size_t)n * 4), *sf = malloc((size_t)n * 4), *vf = malloc((size_t)cap * 4);
    int64_t m = mt_probe_indices(MT_PROBE_MATH, n, es, 0.25, 0, idx);
    CHECK_EQ_INT(m, f64 ? (n + 1) / 2 : (n + 3) / 4); /* 2 (f64) or 4 (f32) apart */
    for (int64_t i = 0; i < n; i++) pd[i] = 1.0, sd[i] = 0.5, pf[i] = 1.0f, sf[i] = 0.5f;
    for (int64_t k = 0; k < m; k++) vd[k] = 0x1p-8, vf[k] = 0x1p-8f;
    CHECK_EQ_INT(f64 ? mt_probe_math_step_f64(pd, sd, idx, vd, m, 2)
                     : mt_probe_math_step_f32(pf, sf, idx, vf, m, 2), 0);
    int64_t moved = 0, bad = 0;
    for (int64_t i = 0, k = 0; i < n; i++) {
      int in = k < m && idx[k] == i;
      double p = f64 ? pd[i] : pf[i], sv = f64 ? sd[i] : sf[i];
      if (in ? sv != 0.5 + 0x1p-16 || !(p < 1.0) : sv != 0.5 || p != 1.0) bad++;
      moved += p != 1.0;
      k += in;
    }
    CHECK_EQ_INT(bad, 0);
    CHECK_EQ_INT(moved, m);
    /* a step the Adagrad kernel refuses (a negative count) is -1, nothing moved */
    CHECK_EQ_INT(f64 ? mt_probe_math_step_f64(pd, sd, idx, vd, -1, 1)
                     : mt_probe_math_step_f32(pf, sf, idx, vf, -1, 1), -1);
    CHECK(f64 ? sd[0] == 0.5 + 0x1p-16 : sf[0] == 0.5f + 0x1p-16f);
    free(idx), free(pd), free(sd), free(vd), free(pf), free(sf), free(vf);
  }
}

/* The bounds of the arguments (probe.h): n from 1; ENTRY's spacing up to a
 * whole line (gap 1: one entry a line); GAP up to 1e12 lines; an unknown
 * kind refused. mt_probe_max_count is the exact count for GAP and ENTRY and
 * the line count for RANDOM (its most: gap 1 draws every line). */
TEST(pattern_bounds_and_exact_capacities) {
  int64_t idx[128];
  CHECK_EQ_INT(mt_probe_indices(MT_PROBE_GAP, 1, 4, 1, 0, idx), 1);
  CHECK_EQ_INT(idx[0], 0);
  CHECK_EQ_INT(mt_probe_indices(MT_PROBE_ENTRY, 1, 8, 0.125, 0, idx), 1);
  CHECK_EQ_INT(mt_probe_indices(MT_PROBE_RANDOM, 1, 4, 1, 5, idx), 1);
  CHECK_EQ_INT(idx[0], 0); /* the one element of the one (partial) line */
  /* ENTRY gap 1: 64 / elsize elements apart, element 0 of every line: f64 n = 40, 5 lines */
  CHECK_EQ_INT(mt_probe_indices(MT_PROBE_ENTRY, 40, 8, 1, 0, idx), 5);
  for (int k = 0; k < 5; k++) CHECK_EQ_INT(idx[k], 8 * k);
  CHECK_EQ_INT(mt_probe_indices(MT_PROBE_MATH, 40, 4, 1, 0, idx), 3); /* f32: 0 16 32 */
  CHECK_EQ_INT(mt_probe_indices(MT_PROBE_GAP, 40, 4, 1e12, 0, idx), 1);
  CHECK_EQ_INT(mt_probe_indices(MT_PROBE_GAP, 40, 4, 2e12, 0, NULL), -1);
  CHECK_EQ_INT(mt_probe_indices((mt_probe_kind)7, 40, 4, 2, 0, NULL), -1);
  CHECK_EQ_INT(mt_probe_max_count((mt_probe_kind)7, 40, 4, 2), 0);
  CHECK(strcmp(mt_probe_kind_name((mt_probe_kind)7), "?") == 0);
  CHECK(strcmp(mt_probe_kind_name(MT_PROBE_MATH), "math") == 0);
  /* exact capacities: f32 n = 1000 is 63 lines (the last partial), f64 125 */
  static const struct { mt_probe_kind kind; int es; double gap; int64_t want; } cap[] = {
      {MT_PROBE_GAP, 4, 1, 63},          {MT_PROBE_GAP, 4, 5, 13}, /* lines 0, 5, ..., 60 */
      {MT_PROBE_GAP, 8, 2, 63},          /* 125 lines: 0, 2, ..., 124 */
      {MT_PROBE_ENTRY, 4, 0.25, 250},    /* every 4th of 1000 */
      {MT_PROBE_ENTRY, 4, 0.1875, 334},  /* every 3rd: 0, 3, ..., 999 */
      {MT_PROBE_MATH, 8, 0.125, 1000},   /* every element */
      {MT_PROBE_RANDOM, 4, 3, 63},       {MT_PROBE_RANDOM, 8, 1.5, 125}};
  for (size_t c = 0; c < sizeof cap / sizeof *cap; c++) {
    CHECK_EQ_INT(mt_probe_max_count(cap[c].kind, 1000, cap[c].es, cap[c].gap), cap[c].want);
    if (cap[c].kind != MT_PROBE_RANDOM)
      CHECK_EQ_INT(mt_probe_indices(cap[c].kind, 1000, cap[c].es, cap[c].gap, 0, NULL),
                   cap[c].want);
  }
}

/* RANDOM on a partial last line: its element stays below n, for any draw.
 * f32 n = 1000: the last line holds elements 992..999, half a line; with
 * gap 1 every line is drawn, and 64 seeds draw each of its 16 offsets
 * (offsets 8..15 clamp to 999) with probability 1 - (15/16)^64 = 98%. */
TEST(random_pattern_stays_below_n_on_a_partial_line) {
  int64_t idx[63];
  int clamped = 0;
  for (uint64_t seed = 0; seed < 64; seed++) {
    CHECK_EQ_INT(mt_probe_indices(MT_PROBE_RANDOM, 1000, 4, 1, seed, idx), 63);
    CHECK(idx[62] >= 992 && idx[62] < 1000);
    clamped += idx[62] == 999;
  }
  CHECK(clamped > 0);
}

MT_TEST_MAIN(T(gap_pattern_is_every_gap_th_line_start),
             T(pattern_bounds_and_exact_capacities),
             T(random_pattern_stays_below_n_on_a_partial_line),
             T(random_pattern_is_one_element_on_bernoulli_lines),
             T(entry_pattern_and_bad_arguments), T(step_updates_exactly_the_pattern),
             T(math_step_is_adagrad_on_the_entries))

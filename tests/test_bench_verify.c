/* test_bench_verify.c - the benchmark's verifier (perf/adagrad_cases.c:
 * bc_expect_make, bc_verify) catches what it must: an updated element with a
 * wrong value and a write to an element the step must leave unchanged, far
 * past the 32K prefix the benchmark used to check, in both of its forms
 * (every element; the touched ones plus a seeded sample of the others). The
 * outputs are the fast kernel's, corrupted by hand or stepped by a
 * deliberately broken variant of it. On a GPU the device's check runs too. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "adagrad_cases.h"
#include "adagrad_cases_cuda.h"
#include "mt_test.h"

enum { N = 1 << 20 };

/* Base and grad of a case (n elements, density a fraction), with the
 * checks' expectations in both forms taken before one step. */
typedef struct {
  bc_base b;
  bc_grad g;
  bc_expect all, sampled;
} fixture;

static int setup_opt(fixture *f, bc_opt opt, bc_path path, int f64, int64_t n, double density) {
  char why[512];
  memset(f, 0, sizeof *f);
  if (bc_base_make(&f->b, n, f64, 7, why, sizeof why) ||
      bc_grad_make(&f->g, path, f64, n, density, 11, why, sizeof why) ||
      bc_grad_set_opt(&f->g, opt, why, sizeof why) ||
      (opt == BC_OPT_SPARSE_ADAM && bc_base_need_m(&f->b, why, sizeof why)) ||
      bc_expect_make(&f->all, f->b.p, f->b.s, &f->b, &f->g, BC_VERIFY_ALL_N, 3, why, sizeof why) ||
      bc_expect_make(&f->sampled, f->b.p, f->b.s, &f->b, &f->g, 0, 3, why, sizeof why)) {
    fprintf(stderr, "  setup: %s\n", why);
    return -1;
  }
  return 0;
}

static int setup(fixture *f, bc_path path, int f64, int64_t n, double density) {
  return setup_opt(f, BC_OPT_ADAGRAD, path, f64, n, density);
}

static void teardown(fixture *f) {
  bc_expect_free(&f->all);
  bc_expect_free(&f->sampled);
  bc_grad_free(&f->g);
  bc_base_free(&f->b);
}

static int step(fixture *f, const bc_grad *g) {
  mt_error err = {0};
  return bc_step(&f->b, g, 2, &err) == MT_OK ? 0 : -1;
}

/* bc_verify of e on the base's current param and state_sum; why filled. */
static int verify(const fixture *f, const bc_expect *e, char *why, size_t len) {
  why[0] = '\0';
  return bc_verify(e, f->b.p, f->b.s, "fast kernel", why, len);
}

/* Is element i one of g's (element COO) entries? */
static int in_grad(const bc_grad *g, int64_t i) {
  for (int64_t k = 0; k < g->entries; k++)
    if (g->idx[k] == i) return 1;
  return 0;
}

/* Flips the lowest bit of element i of a (a one-ulp error). */
static void flip(void *a, int f64, int64_t i) {
  if (f64)
    ((uint64_t *)a)[i] ^= 1;
  else
    ((uint32_t *)a)[i] ^= 1;
}

/* 1 when a device is there for the device checks. The emulation always has
 * its one device: there a failed probe fails the test instead of turning
 * every device check into a quiet pass (a broken probe would). */
static int have_device(int *mt__failed) {
  char info[256];
  if (bc_dev_probe(info, sizeof info) == 0) {
#ifdef MT_CUDA_EMU
    CHECK_HAS(info, "cuda-emu (host emulation)");
#endif
    return 1;
  }
#ifdef MT_CUDA_EMU
  fprintf(stderr, "  the emulation's device probe failed: %s\n", info);
  *mt__failed = 1;
#else
  printf("  (no device: %s)\n", info);
#endif
  return 0;
}

TEST(verify_accepts_every_fast_path_in_both_forms) {
  static const bc_path paths[] = {BC_STREAM,        BC_DENSE,         BC_SPARSE_COO,
                                  BC_TOUCH,         BC_SPARSE_CSR,    BC_MASKED_DENSE,
                                  BC_MASKED_SPARSE, BC_HYBRID_COO,    BC_SPARSE_COO_DUP};
  for (size_t k = 0; k < sizeof paths / sizeof paths[0]; k++)
    for (int f64 = 0; f64 <= 1; f64++) {
      fixture f;
      char why[512];
      if (setup(&f, paths[k], f64, 1 << 17, 0.01)) {
        CHECK(0);
        continue;
      }
      CHECK(!step(&f, &f.g));
      CHECK(f.all.all);
      /* dense and stream update every element: nothing to sample */
      CHECK_EQ_INT(f.sampled.all, paths[k] == BC_STREAM || paths[k] == BC_DENSE);
      CHECK_EQ_INT(verify(&f, &f.all, why, sizeof why), 0);
      CHECK_EQ_INT(verify(&f, &f.sampled, why, sizeof why), 0);
      if (why[0]) fprintf(stderr, "  %s %s: %s\n", bc_path_name(paths[k]), f64 ? "f64" : "f32", why);
      teardown(&f);
    }
}

TEST(verify_counts_every_updated_element_and_the_sample) {
  /* 1M elements at 1%: about 10.5K entries; the sampled form checks each of
   * them, one untouched element per stratum of 16 (65536 strata) and the
   * untouched neighbours of every entry (stride 1 below 65536 entries) */
  fixture f;
  bc_verified v;
  if (setup(&f, BC_SPARSE_COO, 0, N, 0.01)) {
    CHECK(0);
    return;
  }
  bc_expect_summary(&f.all, &v);
  CHECK_EQ_INT(v.elements, N);
  CHECK_EQ_INT(v.touched, f.g.entries);
  CHECK(v.all);
  bc_expect_summary(&f.sampled, &v);
  CHECK_EQ_INT(v.touched, f.g.entries);
  CHECK(!v.all);
  CHECK(f.sampled.n_sample >= BC_VERIFY_SAMPLE);
  CHECK_EQ_INT(v.elements, f.g.entries + f.sampled.n_sample);
  int sorted_untouched = 1;
  for (int64_t k = 0; k < f.sampled.n_sample; k++) {
    int64_t i = f.sampled.sample[k], j = 0;
    sorted_untouched &= k == 0 || f.sampled.sample[k - 1] < i;
    while (j < f.g.entries && f.g.idx[j] < i) j++;
    sorted_untouched &= j == f.g.entries || f.g.idx[j] != i;
    if (!sorted_untouched) break;
  }
  CHECK(sorted_untouched);
  teardown(&f);
}

TEST(verify_catches_a_wrong_updated_entry_past_32k) {
  /* 1M elements at 0.01%: about 105 entries, nearly all past 32K (the old
   * prefix check saw about 3 of them) */
  for (int f64 = 0; f64 <= 1; f64++) {
    fixture f;
    char why[512], want[64];
    if (setup(&f, BC_SPARSE_COO, f64, N, 0.0001)) {
      CHECK(0);
      continue;
    }
    int64_t last = f.g.idx[f.g.entries - 1];
    CHECK(last > 32768 * 16);
    CHECK(!step(&f, &f.g));
    const bc_expect *forms[] = {&f.all, &f.sampled};
    for (int k = 0; k < 2; k++) {
      CHECK_EQ_INT(verify(&f, forms[k], why, sizeof why), 0);
      /* param one ulp off at the last entry */
      flip(f.b.p, f64, last);
      CHECK_EQ_INT(verify(&f, forms[k], why, sizeof why), -1);
      snprintf(want, sizeof want, "param[%lld]", (long long)last);
      CHECK_HAS(why, want);
      CHECK_HAS(why, "an updated element");
      CHECK_HAS(why, "reference adagrad_sparse");
      flip(f.b.p, f64, last);
      /* state_sum one ulp off there */
      flip(f.b.s, f64, last);
      CHECK_EQ_INT(verify(&f, forms[k], why, sizeof why), -1);
      snprintf(want, sizeof want, "state_sum[%lld]", (long long)last);
      CHECK_HAS(why, want);
      flip(f.b.s, f64, last);
    }
    teardown(&f);
  }
}

TEST(verify_catches_a_kernel_that_drops_its_last_entry) {
  /* the broken kernel: the fast step over entries [0, nnz - 1) */
  fixture f;
  char why[512], want[64];
  if (setup(&f, BC_MASKED_SPARSE, 0, N, 0.0001)) {
    CHECK(0);
    return;
  }
  bc_grad broken = f.g;
  broken.entries--;
  CHECK(!step(&f, &broken));
  snprintf(want, sizeof want, "param[%lld]", (long long)f.g.idx[f.g.entries - 1]);
  CHECK_EQ_INT(verify(&f, &f.all, why, sizeof why), -1);
  CHECK_HAS(why, want);
  CHECK_EQ_INT(verify(&f, &f.sampled, why, sizeof why), -1);
  CHECK_HAS(why, want);
  CHECK_HAS(why, "reference adagrad_masked");
  teardown(&f);
}

TEST(verify_catches_a_write_to_an_untouched_entry_past_32k) {
  for (int f64 = 0; f64 <= 1; f64++) {
    fixture f;
    char why[512], want[64];
    if (setup(&f, BC_SPARSE_COO, f64, N, 0.0001)) {
      CHECK(0);
      continue;
    }
    CHECK(!step(&f, &f.g));
    /* every element form: a stray write anywhere, here near the end */
    int64_t u = N - 3;
    while (in_grad(&f.g, u)) u--;
    flip(f.b.p, f64, u);
    CHECK_EQ_INT(verify(&f, &f.all, why, sizeof why), -1);
    snprintf(want, sizeof want, "param[%lld]", (long long)u);
    CHECK_HAS(why, want);
    CHECK_HAS(why, "an element the step must leave unchanged");
    flip(f.b.p, f64, u);
    /* sampled form: a write to a sampled element past 32K */
    int64_t sp = f.sampled.sample[f.sampled.n_sample / 2];
    CHECK(sp > 32768);
    flip(f.b.s, f64, sp);
    CHECK_EQ_INT(verify(&f, &f.sampled, why, sizeof why), -1);
    snprintf(want, sizeof want, "state_sum[%lld]", (long long)sp);
    CHECK_HAS(why, want);
    CHECK_HAS(why, "an element the step must leave unchanged");
    flip(f.b.s, f64, sp);
    /* and a kernel that also writes the element after an entry (a vector
     * store one lane too wide): caught through the neighbours */
    int64_t nb = f.g.idx[f.g.entries / 2] + 1;
    CHECK(!in_grad(&f.g, nb));
    flip(f.b.p, f64, nb);
    CHECK_EQ_INT(verify(&f, &f.sampled, why, sizeof why), -1);
    snprintf(want, sizeof want, "param[%lld]", (long long)nb);
    CHECK_HAS(why, want);
    flip(f.b.p, f64, nb);
    CHECK_EQ_INT(verify(&f, &f.all, why, sizeof why), 0);
    CHECK_EQ_INT(verify(&f, &f.sampled, why, sizeof why), 0);
    teardown(&f);
  }
}

TEST(device_check_compares_every_updated_element_of_the_device_step) {
  /* on a GPU (or the emulation): the device's first step checked as the
   * CPU's is, in both dtypes the benchmark runs there (elsewhere the device
   * calls say why not, and there is nothing to check) */
  char why[512];
  if (!have_device(mt__failed)) return;
  static const bc_path paths[] = {BC_STREAM,       BC_DENSE,         BC_SPARSE_COO, BC_TOUCH,
                                  BC_MASKED_DENSE, BC_MASKED_SPARSE, BC_SPARSE_COO_DUP};
  for (size_t k = 0; k < 2 * sizeof paths / sizeof paths[0]; k++) {
    fixture f;
    bc_dev *d = NULL;
    bc_verified v;
    int f64 = k % 2;
    if (setup(&f, paths[k / 2], f64, N, 0.0001)) {
      CHECK(0);
      continue;
    }
    why[0] = '\0';
    CHECK_EQ_INT(bc_dev_load(&d, &f.b, &f.g, why, sizeof why), 0);
    /* the COO paths twice: the fused step, then the cuSPARSE pipeline (on
     * the state the first left: the check starts from the device's copy) */
    bc_path path = paths[k / 2];
    int coo = path == BC_SPARSE_COO || path == BC_MASKED_SPARSE;
    for (int gs = 0; gs <= coo; gs++) {
      CHECK_EQ_INT(bc_dev_check(d, &f.b, &f.g, gs, &v, why, sizeof why), 0);
      if (why[0])
        fprintf(stderr, "  %s %s%s: %s\n", bc_path_name(path), f64 ? "f64" : "f32",
                gs ? " (gs)" : "", why);
      CHECK_EQ_INT(v.elements, N);
      CHECK_EQ_INT(v.touched, path == BC_STREAM || path == BC_DENSE ? N : f.g.specified);
    }
    bc_dev_free(d);
    teardown(&f);
  }
}

/* ---- the uncoalesced grad (sparse_coo_dup) --------------------------------- */

enum { DUP_AT = 700001, DUP_E = 2003 };

/* A fixture on a sparse_coo_dup grad of given entries (f32, N elements). */
static int setup_dup(fixture *f, const int64_t *idx, const float *vals, int64_t ne) {
  char why[512];
  memset(f, 0, sizeof *f);
  if (bc_base_make(&f->b, N, 0, 7, why, sizeof why) ||
      bc_grad_dup_from(&f->g, 0, N, idx, vals, ne, why, sizeof why) ||
      bc_expect_make(&f->all, f->b.p, f->b.s, &f->b, &f->g, BC_VERIFY_ALL_N, 3, why, sizeof why) ||
      bc_expect_make(&f->sampled, f->b.p, f->b.s, &f->b, &f->g, 0, 3, why, sizeof why)) {
    fprintf(stderr, "  setup: %s\n", why);
    return -1;
  }
  return 0;
}

/* DUP_E entries in input order: 2000 drawn over N (some repeated; none at
 * DUP_AT), 40 of them at element 5 spread through, and at positions 10,
 * 1000 and 2000 element DUP_AT's three, 1, 2^60, -2^60. The reference
 * coalesces them in input order in float32: 1 + 2^60 rounds to
 * 2^60 (it needs 61 bits), minus 2^60 is 0, so DUP_AT is stepped with 0
 * (its state_sum stays as it was). Summed backwards, -2^60 + 2^60 + 1 = 1;
 * with the duplicates dropped, 1: either moves its state_sum by 1. */
static void dup_entries(int64_t *idx, float *vals) {
  uint64_t x = 42;
  for (int k = 0; k < DUP_E; k++) {
    x = x * 6364136223846793005ull + 1442695040888963407ull;
    idx[k] = (int64_t)((x >> 33) % N);
    if (idx[k] == DUP_AT) idx[k]++;
    if (k % 50 == 7) idx[k] = 5;
    vals[k] = (float)((double)(x >> 40) / (double)(1 << 24) - 0.5);
  }
  idx[10] = idx[1000] = idx[2000] = DUP_AT;
  vals[10] = 1, vals[1000] = 0x1p60f, vals[2000] = -0x1p60f;
}

TEST(verify_catches_a_dup_step_that_sums_out_of_order_or_drops_duplicates) {
  static int64_t idx[DUP_E], bad_idx[DUP_E];
  static float vals[DUP_E], bad_vals[DUP_E];
  dup_entries(idx, vals);
  fixture f;
  char why[512], want[64];
  if (setup_dup(&f, idx, vals, DUP_E)) {
    CHECK(0);
    return;
  }
  float s0 = ((float *)f.b.s)[DUP_AT];
  CHECK(f.g.specified < DUP_E - 40); /* duplicates, element 5's among them */
  CHECK(!step(&f, &f.g));
  CHECK_EQ_INT(verify(&f, &f.all, why, sizeof why), 0);
  CHECK_EQ_INT(verify(&f, &f.sampled, why, sizeof why), 0);
  CHECK(((float *)f.b.s)[DUP_AT] == s0); /* stepped with 0, as derived above */
  /* the wrong variants, each stepped from the same base (made again from its
   * seed), against the expectations of the right one */
  snprintf(want, sizeof want, "state_sum[%d]", DUP_AT);
  for (int variant = 0; variant < 2; variant++) {
    int64_t ne = 0;
    for (int k = 0; variant == 0 && k < DUP_E; k++) { /* reversed: every run summed backwards */
      bad_idx[k] = idx[DUP_E - 1 - k];
      bad_vals[k] = vals[DUP_E - 1 - k];
    }
    for (int k = 0; variant == 1 && k < DUP_E; k++) { /* the first entry of each element only */
      int seen = 0;
      for (int j = 0; j < k && !seen; j++) seen = idx[j] == idx[k];
      if (!seen) bad_idx[ne] = idx[k], bad_vals[ne++] = vals[k];
    }
    if (variant == 0) ne = DUP_E;
    bc_grad bad;
    char w2[512];
    bc_base_free(&f.b);
    if (bc_base_make(&f.b, N, 0, 7, w2, sizeof w2) ||
        bc_grad_dup_from(&bad, 0, N, bad_idx, bad_vals, ne, w2, sizeof w2)) {
      CHECK(0);
      continue;
    }
    CHECK(!step(&f, &bad));
    CHECK(((float *)f.b.s)[DUP_AT] == s0 + 1.0f);
    CHECK_EQ_INT(verify(&f, &f.all, why, sizeof why), -1);
    CHECK_HAS(why, "reference adagrad_sparse (on the uncoalesced grad)");
    CHECK_HAS(why, "an updated element");
    CHECK_EQ_INT(verify(&f, &f.sampled, why, sizeof why), -1);
    if (variant == 1) CHECK_HAS(why, "[5]"); /* element 5 is first to differ */
    else CHECK(strstr(why, want) || strstr(why, "param[700001]"));
    bc_grad_free(&bad);
  }
  teardown(&f);
}

TEST(the_pair_of_sparse_coo_dup_is_sparse_coo_on_its_coalesced_grad) {
  /* bc_grad_coalesced's view (the pair the benchmark times beside the case)
   * holds the grad's distinct elements and the reference's sums of their
   * entries: sparse_coo's step on it passes the check against adagrad_sparse
   * on that coalesced grad, on the CPU and, where there is one, the device
   * (its arrays are the dup grad's coalesced copies) */
  static int64_t idx[DUP_E];
  static float vals[DUP_E];
  dup_entries(idx, vals);
  fixture f;
  char why[512];
  bc_verified v;
  if (setup_dup(&f, idx, vals, DUP_E)) {
    CHECK(0);
    return;
  }
  bc_grad cv = bc_grad_coalesced(&f.g);
  CHECK_EQ_INT(cv.path, BC_SPARSE_COO);
  CHECK_EQ_INT(cv.entries, f.g.specified);
  why[0] = '\0';
  CHECK_EQ_INT(bc_check(&f.b, &cv, 2, &v, why, sizeof why), 0);
  if (why[0]) fprintf(stderr, "  cpu: %s\n", why);
  CHECK_EQ_INT(v.touched, f.g.specified);
  /* element DUP_AT's run sums to 0: its coalesced value is 0 */
  int64_t at = 0;
  while (at < cv.entries && cv.idx[at] != DUP_AT) at++;
  CHECK(at < cv.entries && ((const float *)cv.vals)[at] == 0.0f);
  if (have_device(mt__failed)) {
    bc_dev *d = NULL;
    CHECK_EQ_INT(bc_dev_load(&d, &f.b, &f.g, why, sizeof why), 0);
    CHECK_EQ_INT(bc_dev_check(d, &f.b, &cv, 0, &v, why, sizeof why), 0);
    if (why[0]) fprintf(stderr, "  device: %s\n", why);
    bc_dev_free(d);
  }
  teardown(&f);
}

TEST(device_check_covers_the_uncoalesced_step) {
  /* the entries above (many duplicates, a run whose order decides its sum)
   * and 3000 entries all at one element, through the device's sort and
   * fused kernel, checked as every device case is */
  char why[512];
  if (!have_device(mt__failed)) return;
  static int64_t idx[DUP_E], one[3000];
  static float vals[DUP_E], ov[3000];
  dup_entries(idx, vals);
  for (int k = 0; k < 3000; k++) one[k] = N - 2, ov[k] = (float)(k % 7) * 0.25f - 0.5f;
  for (int t = 0; t < 2; t++) {
    fixture f;
    bc_dev *d = NULL;
    bc_verified v;
    if (t == 0 ? setup_dup(&f, idx, vals, DUP_E) : setup_dup(&f, one, ov, 3000)) {
      CHECK(0);
      continue;
    }
    why[0] = '\0';
    CHECK_EQ_INT(bc_dev_load(&d, &f.b, &f.g, why, sizeof why), 0);
    CHECK_EQ_INT(bc_dev_check(d, &f.b, &f.g, 0, &v, why, sizeof why), 0);
    if (why[0]) fprintf(stderr, "  sparse_coo_dup %d: %s\n", t, why);
    CHECK_EQ_INT(v.touched, t == 0 ? f.g.specified : 1);
    CHECK_EQ_INT(v.elements, N);
    bc_dev_free(d);
    teardown(&f);
  }
}

/* ---- the edges: element 0, an untouched CSR element, a failed make ------- */

TEST(verify_checks_element_0_in_both_forms) {
  /* entries at elements 1, 3, 7, ... N - 1: element 0 is untouched and the
   * left neighbour of the first entry, so the sampled form holds it (the
   * neighbours of every stride-th entry; stride 1 here), first in its
   * sorted sample; the every-element form holds every element. A write to
   * it fails both. Then a grad with an entry at element 0: an update there
   * one ulp off fails both as a wrong updated element. The last entry is
   * element N - 1, whose right neighbour does not exist. */
  static const int64_t idx[] = {1, 3, 7, 100, 4096, 70000, 700001, N - 1};
  static const float vals[] = {0.5f, -0.25f, 1, 2, -1, 0.125f, 3, -2};
  static const int64_t idx0[] = {5, 0, 9};
  static const float vals0[] = {1, -0.5f, 2};
  for (int t = 0; t < 2; t++) {
    fixture f;
    char why[512];
    if (t == 0 ? setup_dup(&f, idx, vals, 8) : setup_dup(&f, idx0, vals0, 3)) {
      CHECK(0);
      continue;
    }
    CHECK(!step(&f, &f.g));
    /* the entry at N - 1 has no right neighbour: every sampled element is
     * one of the N */
    int in_range = 1;
    for (int64_t k = 0; k < f.sampled.n_sample; k++)
      in_range &= f.sampled.sample[k] >= 0 && f.sampled.sample[k] < N;
    CHECK(in_range);
    const bc_expect *forms[] = {&f.all, &f.sampled};
    for (int k = 0; k < 2; k++) {
      CHECK_EQ_INT(verify(&f, forms[k], why, sizeof why), 0);
      flip(f.b.p, 0, 0);
      CHECK_EQ_INT(verify(&f, forms[k], why, sizeof why), -1);
      CHECK_HAS(why, "param[0] =");
      CHECK_HAS(why, t == 0 ? "an element the step must leave unchanged" : "an updated element");
      flip(f.b.p, 0, 0);
      flip(f.b.s, 0, 0);
      CHECK_EQ_INT(verify(&f, forms[k], why, sizeof why), -1);
      CHECK_HAS(why, "state_sum[0] =");
      flip(f.b.s, 0, 0);
    }
    teardown(&f);
  }
}

TEST(verify_names_an_untouched_csr_element_as_untouched) {
  /* 1M elements as 1024 x 1024 at 0.01%: about 105 entries, most rows
   * empty. Element (r, c) of an empty row r whose next row's first entry
   * lies in column c is untouched (the search for c in row r ends where row
   * r + 1 begins): a write there is one to an element the step must leave
   * unchanged, not a wrong update */
  fixture f;
  char why[512], want[64];
  if (setup(&f, BC_SPARSE_CSR, 0, N, 0.0001)) {
    CHECK(0);
    return;
  }
  CHECK(!step(&f, &f.g));
  int64_t r = 0;
  while (r + 2 <= f.g.rows && !(f.g.crow[r] == f.g.crow[r + 1] && f.g.crow[r + 1] < f.g.crow[r + 2]))
    r++;
  CHECK(r + 2 <= f.g.rows); /* there is such a row */
  if (r + 2 <= f.g.rows) {
    int64_t i = r * f.g.cols + f.g.col[f.g.crow[r + 1]];
    flip(f.b.p, 0, i);
    CHECK_EQ_INT(verify(&f, &f.all, why, sizeof why), -1);
    snprintf(want, sizeof want, "param[%lld] =", (long long)i);
    CHECK_HAS(why, want);
    CHECK_HAS(why, "an element the step must leave unchanged");
    flip(f.b.p, 0, i);
  }
  teardown(&f);
}

TEST(a_failed_expectation_is_left_empty) {
  /* bc_expect_make refuses a sparse_coo_dup grad with an entry outside its
   * distinct elements (a grad built wrong), says which, and leaves the
   * expectation zeroed: freeing it again, as bc_dev_check's cleanup does,
   * frees nothing twice */
  static const int64_t idx[] = {4, 8, 4};
  static const float vals[] = {1, 2, 3};
  bc_base b;
  bc_grad g;
  bc_expect e;
  char why[512] = "";
  memset(&b, 0, sizeof b);
  if (bc_base_make(&b, 16, 0, 7, why, sizeof why) ||
      bc_grad_dup_from(&g, 0, 16, idx, vals, 3, why, sizeof why)) {
    fprintf(stderr, "  setup: %s\n", why);
    CHECK(0);
    bc_base_free(&b);
    return;
  }
  g.idx[2] = 5; /* not among uidx {4, 8} */
  CHECK_EQ_INT(bc_expect_make(&e, b.p, b.s, &b, &g, BC_VERIFY_ALL_N, 3, why, sizeof why), -1);
  CHECK_HAS(why, "sparse_coo_dup entry 2 (element 5) is not among the grad's elements");
  CHECK(e.ep == NULL && e.eq == NULL && e.sample == NULL && e.em == NULL && e.eb == NULL);
  CHECK(e.g == NULL && e.n == 0);
  bc_expect_free(&e);
  g.idx[2] = 4;
  bc_grad_free(&g);
  bc_base_free(&b);
}

/* ---- SparseAdam and sparse SGD ------------------------------------------- */

static const bc_opt OPTS[] = {BC_OPT_SPARSE_ADAM, BC_OPT_SGD, BC_OPT_SGD_MOMENTUM};
static const bc_path OPT_PATHS[] = {BC_SPARSE_COO, BC_HYBRID_COO};

TEST(verify_accepts_the_sparse_optimizer_steps_in_both_forms) {
  /* the fast SparseAdam / SGD steps (2 threads) against the reference ops:
   * param, exp_avg_sq (s) and exp_avg (m) or the momentum buffer, bit for
   * bit, at 1% and 100% (every element updated) */
  static const double dens[] = {0.01, 1.0};
  for (size_t o = 0; o < 3; o++)
    for (size_t k = 0; k < 2; k++)
      for (int f64 = 0; f64 <= 1; f64++)
        for (size_t d = 0; d < 2; d++) {
          fixture f;
          char why[512];
          if (setup_opt(&f, OPTS[o], OPT_PATHS[k], f64, 1 << 17, dens[d])) {
            CHECK(0);
            continue;
          }
          CHECK(!step(&f, &f.g));
          CHECK_EQ_INT(f.all.m_live != NULL, OPTS[o] == BC_OPT_SPARSE_ADAM);
          CHECK_EQ_INT(f.all.b_live != NULL, OPTS[o] == BC_OPT_SGD_MOMENTUM);
          CHECK_EQ_INT(verify(&f, &f.all, why, sizeof why), 0);
          if (why[0]) fprintf(stderr, "  %s %s %s: %s\n", bc_opt_name(OPTS[o]),
                              bc_path_name(OPT_PATHS[k]), f64 ? "f64" : "f32", why);
          CHECK_EQ_INT(verify(&f, &f.sampled, why, sizeof why), 0);
          if (why[0]) fprintf(stderr, "  %s %s %s sampled: %s\n", bc_opt_name(OPTS[o]),
                              bc_path_name(OPT_PATHS[k]), f64 ? "f64" : "f32", why);
          teardown(&f);
        }
}

TEST(sparse_optimizer_steps_are_the_same_on_every_isa_and_thread_count) {
  /* the base copy serially and the AVX2 copy on 2 threads give the same
   * bits (the verifier above judges AUTO against the reference) */
  enum { M = 1 << 14 };
  for (int f64 = 0; f64 <= 1; f64++)
    for (size_t k = 0; k < 2; k++) {
      fixture a, b;
      char why[512];
      mt_error err = {0};
      if (setup_opt(&a, BC_OPT_SPARSE_ADAM, OPT_PATHS[k], f64, M, 0.3) ||
          setup_opt(&b, BC_OPT_SPARSE_ADAM, OPT_PATHS[k], f64, M, 0.3)) {
        CHECK(0);
        continue;
      }
      mt_sparse_adam_hparams h1 = {.lr = 1e-3, .beta1 = 0.9, .beta2 = 0.999, .eps = 1e-8,
                                   .step = 3, .nthreads = 1, .isa = MT_ADAGRAD_ISA_BASE};
      mt_sparse_adam_hparams h2 = h1;
      h2.nthreads = 2;
      h2.isa = MT_ADAGRAD_ISA_AVX2;
      size_t bytes = (size_t)M * (f64 ? 8 : 4);
      for (int it = 0; it < 3; it++) {
        if (f64) {
          CHECK(mt_sparse_adam_step_f64(a.b.p, a.b.m, a.b.s, a.g.idx, a.g.vals, a.g.entries,
                                        a.g.row, &h1, &err) == MT_OK);
          CHECK(mt_sparse_adam_step_f64(b.b.p, b.b.m, b.b.s, b.g.idx, b.g.vals, b.g.entries,
                                        b.g.row, &h2, &err) == MT_OK);
        } else {
          CHECK(mt_sparse_adam_step_f32(a.b.p, a.b.m, a.b.s, a.g.idx, a.g.vals, a.g.entries,
                                        a.g.row, &h1, &err) == MT_OK);
          CHECK(mt_sparse_adam_step_f32(b.b.p, b.b.m, b.b.s, b.g.idx, b.g.vals, b.g.entries,
                                        b.g.row, &h2, &err) == MT_OK);
        }
      }
      CHECK(memcmp(a.b.p, b.b.p, bytes) == 0);
      CHECK(memcmp(a.b.m, b.b.m, bytes) == 0);
      CHECK(memcmp(a.b.s, b.b.s, bytes) == 0);
      /* SGD with momentum the same way */
      mt_sgd_hparams s1 = {.lr = 0.01, .momentum = 0.9, .dampening = 0.1, .nthreads = 1,
                           .isa = MT_ADAGRAD_ISA_BASE};
      mt_sgd_hparams s2 = s1;
      s2.nthreads = 2;
      s2.isa = MT_ADAGRAD_ISA_AVX2;
      if (bc_grad_set_opt(&a.g, BC_OPT_SGD_MOMENTUM, why, sizeof why) ||
          bc_grad_set_opt(&b.g, BC_OPT_SGD_MOMENTUM, why, sizeof why)) {
        CHECK(0);
      } else {
        for (int it = 0; it < 3; it++) {
          if (f64) {
            CHECK(mt_sgd_momentum_step_coo_f64(a.b.p, a.g.buf, a.g.idx, a.g.vals, a.g.entries,
                                               a.g.row, &s1, &err) == MT_OK);
            CHECK(mt_sgd_momentum_step_coo_f64(b.b.p, b.g.buf, b.g.idx, b.g.vals, b.g.entries,
                                               b.g.row, &s2, &err) == MT_OK);
          } else {
            CHECK(mt_sgd_momentum_step_coo_f32(a.b.p, a.g.buf, a.g.idx, a.g.vals, a.g.entries,
                                               a.g.row, &s1, &err) == MT_OK);
            CHECK(mt_sgd_momentum_step_coo_f32(b.b.p, b.g.buf, b.g.idx, b.g.vals, b.g.entries,
                                               b.g.row, &s2, &err) == MT_OK);
          }
        }
        CHECK(memcmp(a.b.p, b.b.p, bytes) == 0);
        CHECK(memcmp(a.g.buf, b.g.buf, (size_t)a.g.specified * (f64 ? 8 : 4)) == 0);
      }
      teardown(&a);
      teardown(&b);
    }
}

TEST(verify_catches_a_wrong_exp_avg_and_momentum_buffer_value) {
  for (int f64 = 0; f64 <= 1; f64++) {
    fixture f;
    char why[512], want[64];
    /* SparseAdam: exp_avg one ulp off at the last entry (both forms) */
    if (setup_opt(&f, BC_OPT_SPARSE_ADAM, BC_SPARSE_COO, f64, N, 0.0001)) {
      CHECK(0);
      continue;
    }
    int64_t last = f.g.idx[f.g.entries - 1];
    CHECK(!step(&f, &f.g));
    const bc_expect *forms[] = {&f.all, &f.sampled};
    for (int k = 0; k < 2; k++) {
      CHECK_EQ_INT(verify(&f, forms[k], why, sizeof why), 0);
      flip(f.b.m, f64, last);
      CHECK_EQ_INT(verify(&f, forms[k], why, sizeof why), -1);
      snprintf(want, sizeof want, "exp_avg[%lld]", (long long)last);
      CHECK_HAS(why, want);
      CHECK_HAS(why, "reference sparse_adam");
      flip(f.b.m, f64, last);
      flip(f.b.s, f64, last);
      CHECK_EQ_INT(verify(&f, forms[k], why, sizeof why), -1);
      snprintf(want, sizeof want, "exp_avg_sq[%lld]", (long long)last);
      CHECK_HAS(why, want);
      flip(f.b.s, f64, last);
      /* a stray write to exp_avg past the entries */
      int64_t u = N - 3;
      while (in_grad(&f.g, u)) u--;
      flip(f.b.m, f64, u);
      CHECK_EQ_INT(verify(&f, &f.all, why, sizeof why), -1);
      CHECK_HAS(why, "an element the step must leave unchanged");
      flip(f.b.m, f64, u);
    }
    teardown(&f);
    /* SGD with momentum: one buffer value one ulp off (the hybrid grad's
     * last row's last value, then the first row's first: value 0) */
    if (setup_opt(&f, BC_OPT_SGD_MOMENTUM, BC_HYBRID_COO, f64, N, 0.01)) {
      CHECK(0);
      continue;
    }
    CHECK(!step(&f, &f.g));
    CHECK_EQ_INT(verify(&f, &f.sampled, why, sizeof why), 0);
    const int64_t kbs[] = {f.g.specified - 1, 0};
    for (int j = 0; j < 2; j++) {
      flip(f.g.buf, f64, kbs[j]);
      CHECK_EQ_INT(verify(&f, &f.all, why, sizeof why), -1);
      snprintf(want, sizeof want, "momentum_buffer value %lld (", (long long)kbs[j]);
      CHECK_HAS(why, want);
      CHECK_HAS(why, "reference sgd");
      CHECK_EQ_INT(verify(&f, &f.sampled, why, sizeof why), -1);
      flip(f.g.buf, f64, kbs[j]);
    }
    CHECK_EQ_INT(verify(&f, &f.all, why, sizeof why), 0);
    teardown(&f);
  }
}

TEST(verify_catches_sparse_optimizer_kernels_that_drop_their_last_entry) {
  for (size_t o = 0; o < 3; o++) {
    fixture f;
    char why[512], want[64];
    if (setup_opt(&f, OPTS[o], BC_SPARSE_COO, 0, N, 0.0001)) {
      CHECK(0);
      continue;
    }
    bc_grad broken = f.g;
    broken.entries--;
    CHECK(!step(&f, &broken));
    /* the momentum step also leaves the last buffer value stale, but param
     * is compared first */
    snprintf(want, sizeof want, "param[%lld]", (long long)f.g.idx[f.g.entries - 1]);
    CHECK_EQ_INT(verify(&f, &f.all, why, sizeof why), -1);
    CHECK_HAS(why, want);
    CHECK_EQ_INT(verify(&f, &f.sampled, why, sizeof why), -1);
    CHECK_HAS(why, want);
    CHECK_HAS(why, "an updated element");
    teardown(&f);
  }
}

TEST(verify_refuses_a_non_finite_expectation_in_both_forms) {
  /* a state_sum of -1 under one entry: s + g*g stays negative, its square
   * root is NaN, and the kernel makes the same NaN bit for bit as the
   * reference (same CPU), so only the finiteness check can refuse it */
  char why[512], want[64];
  bc_base b;
  bc_grad g;
  bc_expect all, sampled;
  memset(&all, 0, sizeof all);
  memset(&sampled, 0, sizeof sampled);
  int64_t n = 1 << 17;
  if (bc_base_make(&b, n, 0, 7, why, sizeof why) ||
      bc_grad_make(&g, BC_SPARSE_COO, 0, n, 0.01, 11, why, sizeof why)) {
    fprintf(stderr, "  setup: %s\n", why);
    CHECK(0);
    return;
  }
  int64_t i = g.idx[g.entries / 2];
  ((float *)b.s)[i] = -1.0f;
  CHECK_EQ_INT(bc_expect_make(&all, b.p, b.s, &b, &g, BC_VERIFY_ALL_N, 3, why, sizeof why), 0);
  CHECK_EQ_INT(bc_expect_make(&sampled, b.p, b.s, &b, &g, 0, 3, why, sizeof why), 0);
  mt_error err = {0};
  CHECK(bc_step(&b, &g, 2, &err) == MT_OK);
  CHECK(isnan(((float *)b.p)[i]));
  snprintf(want, sizeof want, "param[%lld] = ", (long long)i);
  CHECK_EQ_INT(bc_verify(&all, b.p, b.s, "fast kernel", why, sizeof why), -1);
  CHECK_HAS(why, want);
  CHECK_HAS(why, "no longer finite");
  CHECK_EQ_INT(bc_verify(&sampled, b.p, b.s, "fast kernel", why, sizeof why), -1);
  CHECK_HAS(why, want);
  CHECK_HAS(why, "no longer finite");
  bc_expect_free(&all);
  bc_expect_free(&sampled);
  bc_grad_free(&g);
  bc_base_free(&b);
}

TEST(the_data_stays_finite_under_many_steps_with_their_pairs) {
  /* mtcs_bench keeps one base per size for every case and times each case
   * with its pair in the same loop (dense with stream, sparse_coo with
   * dense, touch with sparse_coo): thousands of steps of each, all adding
   * to s. The stream and touch kernels add g itself (s += g); with signed
   * grad values s drifted below zero, linearly, and every step after took
   * the square root of a negative number. 20000 rounds here (a 1M case
   * runs about that many in a second); the checks after them must pass. */
  enum { ROUNDS = 20000 };
  static const bc_path paths[] = {BC_STREAM, BC_DENSE, BC_TOUCH, BC_SPARSE_COO};
  char why[512];
  bc_base b;
  bc_grad g[4];
  memset(g, 0, sizeof g);
  int64_t n = 4096;
  CHECK_EQ_INT(bc_base_make(&b, n, 0, 7, why, sizeof why), 0);
  for (int k = 0; k < 4; k++)
    CHECK_EQ_INT(bc_grad_make(&g[k], paths[k], 0, n, 0.1, 11, why, sizeof why), 0);
  mt_error err = {0};
  mt_status st = MT_OK;
  for (int r = 0; r < ROUNDS; r++)
    for (int k = 0; k < 4; k++) st |= bc_step(&b, &g[k], 1, &err);
  CHECK(st == MT_OK);
  for (int k = 0; k < 4; k++) {
    bc_verified v;
    int rc = bc_check(&b, &g[k], 1, &v, why, sizeof why);
    CHECK_EQ_INT(rc, 0);
    if (rc) fprintf(stderr, "  %s: %s\n", bc_path_name(paths[k]), why);
    CHECK(v.touched > 0);
  }
  for (int k = 0; k < 4; k++) bc_grad_free(&g[k]);
  bc_base_free(&b);
}

/* ctest's unit.test_bench_verify.cuda (label cuda: on a GPU machine, the
 * GPU bundle) sets MT_TEST_NEED_DEVICE: there a missing device is a SKIP
 * (77), not the quiet "(no device)" of the plain entry, which runs the CPU
 * checks anywhere and the device checks where a device is. */
static int needed_device_absent(char *why, size_t len) {
  const char *need = getenv("MT_TEST_NEED_DEVICE");
  char info[200];
  int absent = bc_dev_probe(info, sizeof info) != 0;
  snprintf(why, len, "%s: %s", absent ? "no device" : "device", info);
  return absent && need && *need;
}

MT_TEST_MAIN_UNLESS(needed_device_absent, T(verify_accepts_every_fast_path_in_both_forms),
             T(verify_counts_every_updated_element_and_the_sample),
             T(verify_catches_a_wrong_updated_entry_past_32k),
             T(verify_catches_a_kernel_that_drops_its_last_entry),
             T(verify_catches_a_write_to_an_untouched_entry_past_32k),
             T(device_check_compares_every_updated_element_of_the_device_step),
             T(verify_catches_a_dup_step_that_sums_out_of_order_or_drops_duplicates),
             T(the_pair_of_sparse_coo_dup_is_sparse_coo_on_its_coalesced_grad),
             T(device_check_covers_the_uncoalesced_step),
             T(verify_checks_element_0_in_both_forms),
             T(verify_names_an_untouched_csr_element_as_untouched),
             T(a_failed_expectation_is_left_empty),
             T(verify_accepts_the_sparse_optimizer_steps_in_both_forms),
             T(sparse_optimizer_steps_are_the_same_on_every_isa_and_thread_count),
             T(verify_catches_a_wrong_exp_avg_and_momentum_buffer_value),
             T(verify_catches_sparse_optimizer_kernels_that_drop_their_last_entry),
             T(verify_refuses_a_non_finite_expectation_in_both_forms),
             T(the_data_stays_finite_under_many_steps_with_their_pairs))

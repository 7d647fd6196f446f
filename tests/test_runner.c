/* test_runner.c - judging and isolating cases (conformance/runner.c) and
 * writing reports (conformance/report.c), with a fake implementation whose
 * kernels pass, fail, crash, hang, exit or return errors. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* posix_openpt and friends, cfmakeraw: a terminal for the progress line */
#endif
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <termios.h>
#include <unistd.h>

#include "console.h"
#include "mt_core.h"
#include "mt_test.h"
#include "report.h"
#include "poison.h"
#include "repro.h"
#include "runner.h"

/* ---- a fake implementation: one kernel per behaviour -------------------------------- */

/* y = -x for a dense float32 [n]; `bump` is added to y[1]. */
static mt_status negate(mt_call *call, mt_error *err, float bump) {
  const mt_tensor *x = call->in[0];
  mt_tensor *y = NULL;
  mt_status st = call->host->dense_new(MT_float32, x->ndim, x->shape, &y, err);
  if (st != MT_OK) return st;
  for (int64_t i = 0; i < x->shape[0]; i++)
    ((float *)y->values)[i] = -((const float *)x->values)[i] + (i == 1 ? bump : 0.0f);
  call->out[0] = y;
  call->n_out = 1;
  return MT_OK;
}

static mt_status k_right(mt_call *c, mt_error *e) { return negate(c, e, 0.0f); }
static mt_status k_wrong(mt_call *c, mt_error *e) { return negate(c, e, 0.5f); }
static mt_status k_crash(mt_call *c, mt_error *e) { abort(); }
static mt_status k_hang(mt_call *c, mt_error *e) {
  for (;;) pause();
  return MT_OK;
}
static mt_status k_exit(mt_call *c, mt_error *e) { _exit(3); }
static mt_status k_mask_mismatch(mt_call *c, mt_error *e) {
  return mt_err(e, MT_MASK_MISMATCH, "masks differ at [0]");
}
static mt_status k_shape_mismatch(mt_call *c, mt_error *e) {
  return mt_err(e, MT_SHAPE_MISMATCH, "shapes [2] and [3]");
}
static mt_status k_not_supported(mt_call *c, mt_error *e) {
  return mt_err(e, MT_NOT_SUPPORTED, "fake: not this one");
}
static mt_status k_bad_n_out(mt_call *c, mt_error *e) {
  c->n_out = 99;
  return MT_OK;
}
/* A device that a fault leaves unusable for the rest of its process, as a
 * CUDA context is after an illegal address: k_fault faults it, and from then
 * on k_on_device fails in that process too. The flag is the process's device
 * state, so each forked worker starts with it clear. */
static int device_lost;
static mt_status k_fault(mt_call *c, mt_error *e) {
  device_lost = 1;
  return mt_err(e, MT_DEVICE_ERROR, "fake: an illegal memory access was encountered");
}
static mt_status k_on_device(mt_call *c, mt_error *e) {
  if (device_lost) return mt_err(e, MT_DEVICE_ERROR, "fake: the context is lost");
  return negate(c, e, 0.0f);
}

/* The fake implementation: the torch profile's kernel table `kernels`. */
static mt_impl fake_impl(mt_kernel_fn *kernels) {
  return (mt_impl){MT_ABI_VERSION, sizeof(mt_impl), "fake", NULL, NULL, MT_OP__END, kernels, 0,
                   NULL, 0, NULL};
}

/* ---- a hand-made case: neg of [1, 2] is [-1, -2] --------------------------------------- */

typedef struct fixture {
  mt_golden_case c;
  mt_tensor *in[1], *out[1], *alt[1];
  mt_golden_variant variant;
} fixture;

static mt_tensor *vec(float a, float b) {
  mt_tensor *t = NULL;
  mt_error err = {0};
  int64_t shape[1] = {2};
  if (mt_dense_new(MT_float32, 1, shape, &t, &err) != MT_OK) abort();
  ((float *)t->values)[0] = a;
  ((float *)t->values)[1] = b;
  return t;
}

static void fixture_init(fixture *f) {
  memset(f, 0, sizeof *f);
  mt_error err = {0};
  f->c.id = "neg.dense.f32.fake";
  f->c.op_name = "neg";
  f->c.op = MT_OP_neg;
  f->c.rules = "MASK-4";
  f->c.profile = "torch";
  f->c.tolerance_str = "exact";
  mt_tolerance_parse("exact", &f->c.tolerance, &err);
  f->in[0] = vec(1, 2);
  f->out[0] = vec(-1, -2);
  f->c.n_in = 1;
  f->c.in = f->in;
  f->c.n_out = 1;
  f->c.out = f->out;
  f->c.loaded = 1;
}

static void fixture_expect_error(fixture *f, const char *cls) {
  f->c.expect_error = 1;
  f->c.error_class = (char *)cls;
  f->c.torch_error = "RuntimeError: torch says no";
  f->c.n_out = 0;
}

static void fixture_add_variant(fixture *f, float y1) {
  f->alt[0] = vec(-1, y1);
  f->variant = (mt_golden_variant){"torch-2.1", 1, f->alt};
  f->c.variants = &f->variant;
  f->c.n_variants = 1;
}

static void fixture_free(fixture *f) {
  mt_tensor_free(f->in[0]);
  mt_tensor_free(f->out[0]);
  mt_tensor_free(f->alt[0]);
}

/* Runs f on an implementation whose only kernel, neg, is k (NULL: none). */
static mt_case_result run(mt_kernel_fn k, fixture *f, int no_fork, double timeout) {
  mt_kernel_fn kernels[MT_OP__END] = {[MT_OP_neg] = k};
  mt_impl impl = fake_impl(kernels);
  mt_run_opts o = {timeout, no_fork, {0}};
  mt_case_result r;
  mt_case_run(&impl, &f->c, &o, &r);
  return r;
}

/* ---- judging -------------------------------------------------------------------------- */

TEST(matching_outputs_pass_forked_and_in_process) {
  fixture f;
  fixture_init(&f);
  mt_case_result r = run(k_right, &f, 0, 10);
  CHECK_EQ_INT(r.status, MT_CS_PASS);
  r = run(k_right, &f, 1, 10);
  CHECK_EQ_INT(r.status, MT_CS_PASS);
  fixture_free(&f);
}

TEST(differing_output_fails_with_index_values_and_tolerance) {
  fixture f;
  fixture_init(&f);
  mt_case_result r = run(k_wrong, &f, 0, 10); /* y[1] = -1.5, not -2 */
  CHECK_EQ_INT(r.status, MT_CS_FAIL);
  CHECK_HAS(r.message, "output 0: values[1]: expected -2, got -1.5");
  CHECK_HAS(r.message, "tolerance exact");
  fixture_free(&f);
}

TEST(matching_a_recorded_variant_is_expected_divergence) {
  fixture f;
  fixture_init(&f);
  fixture_add_variant(&f, -1.5f); /* another torch gave -1.5 */
  mt_case_result r = run(k_wrong, &f, 0, 10);
  CHECK_EQ_INT(r.status, MT_CS_EXPECTED_DIVERGENCE);
  CHECK_HAS(r.message, "matches outputs@torch-2.1");
  fixture_free(&f);
  fixture_init(&f);
  fixture_add_variant(&f, 7.0f); /* no version gave -1.5 */
  r = run(k_wrong, &f, 0, 10);
  CHECK_EQ_INT(r.status, MT_CS_FAIL);
  CHECK_HAS(r.message, "no outputs@torch-* variant matches");
  fixture_free(&f);
}

TEST(error_cases_pass_on_the_same_status_and_fail_otherwise) {
  fixture f;
  fixture_init(&f);
  fixture_expect_error(&f, "MASK_MISMATCH");
  mt_case_result r = run(k_mask_mismatch, &f, 0, 10);
  CHECK_EQ_INT(r.status, MT_CS_PASS);
  r = run(k_shape_mismatch, &f, 0, 10);
  CHECK_EQ_INT(r.status, MT_CS_FAIL);
  CHECK_HAS(r.message, "expected error MASK_MISMATCH, got SHAPE_MISMATCH");
  CHECK_HAS(r.message, "torch says no");
  r = run(k_right, &f, 0, 10);
  CHECK_EQ_INT(r.status, MT_CS_FAIL);
  CHECK_HAS(r.message, "expected error MASK_MISMATCH, got OK");
  r = run(k_not_supported, &f, 0, 10);
  CHECK_EQ_INT(r.status, MT_CS_NOT_SUPPORTED);
  fixture_free(&f);
}

/* ---- --torch-version: the expectation of one version, the others divergences -------- */

/* f run on kernel k with the results of torch version v expected (NULL:
 * the file's own). */
static mt_case_result run_v(mt_kernel_fn k, fixture *f, const char *v) {
  mt_kernel_fn kernels[MT_OP__END] = {[MT_OP_neg] = k};
  mt_impl impl = fake_impl(kernels);
  mt_run_opts o = {10, 1, {0, MT_LEVEL_semantic, v, 0, NULL}};
  mt_case_result r;
  mt_case_run(&impl, &f->c, &o, &r);
  return r;
}

TEST(torch_version_picks_the_variant_as_the_expectation) {
  fixture f;
  fixture_init(&f);
  f.c.file_torch_version = "2.15.0";
  fixture_add_variant(&f, -1.5f); /* torch 2.1 gave [-1, -1.5] */
  mt_case_result r = run_v(k_wrong, &f, "2.1");
  CHECK_EQ_INT(r.status, MT_CS_PASS);
  r = run_v(k_right, &f, "2.1"); /* the file's torch's result */
  CHECK_EQ_INT(r.status, MT_CS_EXPECTED_DIVERGENCE);
  CHECK_HAS(r.message, "matches outputs (torch 2.15.0, the file's version)");
  CHECK_HAS(r.message, "differs from outputs@torch-2.1 (torch 2.1), the expectation of torch 2.1");
  r = run_v(k_right, &f, "2.15.0"); /* the file's own version: its outputs */
  CHECK_EQ_INT(r.status, MT_CS_PASS);
  r = run_v(k_wrong, &f, NULL);
  CHECK_EQ_INT(r.status, MT_CS_EXPECTED_DIVERGENCE);
  CHECK_HAS(r.message, "matches outputs@torch-2.1 (torch 2.1); differs from outputs:");
  fixture_free(&f);
}

TEST(torch_version_result_of_no_version_fails_against_the_expected_one) {
  fixture f;
  fixture_init(&f);
  f.c.file_torch_version = "2.15.0";
  fixture_add_variant(&f, 7.0f);
  mt_case_result r = run_v(k_wrong, &f, "2.1"); /* -1.5: neither -2 nor 7 */
  CHECK_EQ_INT(r.status, MT_CS_FAIL);
  CHECK_HAS(r.message, "expected 7, got -1.5");
  CHECK_HAS(r.message, "no outputs@torch-* variant matches either");
  r = run_v(k_mask_mismatch, &f, "2.1"); /* an error no version raises */
  CHECK_EQ_INT(r.status, MT_CS_ERROR);
  CHECK_HAS(r.message, "the implementation returned MASK_MISMATCH");
  fixture_free(&f);
}

TEST(error_variant_expected_when_asked_and_a_divergence_otherwise) {
  fixture f;
  fixture_init(&f);
  f.c.file_torch_version = "2.15.0";
  mt_golden_error_variant ev = {"torch-1.13.1", "MASK_MISMATCH"};
  f.c.error_variants = &ev;
  f.c.n_error_variants = 1;
  mt_case_result r = run_v(k_mask_mismatch, &f, "1.13.1"); /* 1.13.1 raises */
  CHECK_EQ_INT(r.status, MT_CS_PASS);
  CHECK_HAS(r.message, "MASK_MISMATCH as expected");
  r = run_v(k_right, &f, "1.13.1"); /* returns what 2.15.0 returns */
  CHECK_EQ_INT(r.status, MT_CS_EXPECTED_DIVERGENCE);
  CHECK_HAS(r.message, "matches outputs (torch 2.15.0");
  r = run_v(k_shape_mismatch, &f, "1.13.1"); /* another error */
  CHECK_EQ_INT(r.status, MT_CS_FAIL);
  CHECK_HAS(r.message, "expected error MASK_MISMATCH, got SHAPE_MISMATCH");
  CHECK_HAS(r.message, "recorded as error@torch-1.13.1");
  r = run_v(k_mask_mismatch, &f, NULL); /* raising like 1.13.1 on the default version */
  CHECK_EQ_INT(r.status, MT_CS_EXPECTED_DIVERGENCE);
  CHECK_HAS(r.message, "matches error@torch-1.13.1 (torch 1.13.1)");
  r = run_v(k_not_supported, &f, "1.13.1");
  CHECK_EQ_INT(r.status, MT_CS_NOT_SUPPORTED);
  fixture_free(&f);
}

TEST(outputs_variant_of_an_error_case) {
  fixture f;
  fixture_init(&f);
  f.c.file_torch_version = "2.15.0";
  fixture_expect_error(&f, "MASK_MISMATCH");
  fixture_add_variant(&f, -2.0f); /* torch 2.1 returned [-1, -2] */
  mt_case_result r = run_v(k_right, &f, "2.1");
  CHECK_EQ_INT(r.status, MT_CS_PASS);
  r = run_v(k_right, &f, NULL);
  CHECK_EQ_INT(r.status, MT_CS_EXPECTED_DIVERGENCE);
  CHECK_HAS(r.message, "matches outputs@torch-2.1");
  r = run_v(k_mask_mismatch, &f, "2.1");
  CHECK_EQ_INT(r.status, MT_CS_EXPECTED_DIVERGENCE);
  CHECK_HAS(r.message, "matches the error (torch 2.15.0, the file's version)");
  r = run_v(k_wrong, &f, NULL); /* neither the error nor 2.1's outputs */
  CHECK_EQ_INT(r.status, MT_CS_FAIL);
  CHECK_HAS(r.message, "expected error MASK_MISMATCH, got OK");
  fixture_free(&f);
}

TEST(unexpected_error_is_ERROR_and_not_supported_stays) {
  fixture f;
  fixture_init(&f);
  mt_case_result r = run(k_shape_mismatch, &f, 0, 10);
  CHECK_EQ_INT(r.status, MT_CS_ERROR);
  CHECK_HAS(r.message, "SHAPE_MISMATCH: shapes [2] and [3]");
  r = run(k_not_supported, &f, 0, 10);
  CHECK_EQ_INT(r.status, MT_CS_NOT_SUPPORTED);
  CHECK_HAS(r.message, "fake: not this one");
  r = run(NULL, &f, 0, 10); /* empty slot */
  CHECK_EQ_INT(r.status, MT_CS_NOT_SUPPORTED);
  r = run(k_bad_n_out, &f, 0, 10);
  CHECK_EQ_INT(r.status, MT_CS_FAIL);
  CHECK_HAS(r.message, "n_out = 99");
  fixture_free(&f);
}

/* ---- isolation ------------------------------------------------------------------------- */

TEST(crash_is_reported_with_the_signal_and_the_run_goes_on) {
  fixture f;
  fixture_init(&f);
  mt_case_result r = run(k_crash, &f, 0, 10);
  CHECK_EQ_INT(r.status, MT_CS_CRASH);
  CHECK_HAS(r.message, "SIGABRT");
  r = run(k_right, &f, 0, 10); /* this process is fine */
  CHECK_EQ_INT(r.status, MT_CS_PASS);
  fixture_free(&f);
}

TEST(hanging_case_is_killed_at_the_timeout) {
  fixture f;
  fixture_init(&f);
  mt_case_result r = run(k_hang, &f, 0, 0.3);
  CHECK_EQ_INT(r.status, MT_CS_TIMEOUT);
  CHECK(r.seconds >= 0.3 && r.seconds < 5.0);
  CHECK_HAS(r.message, "no result after 0.3 s");
  fixture_free(&f);
}

TEST(exit_without_a_result_is_a_crash) {
  fixture f;
  fixture_init(&f);
  mt_case_result r = run(k_exit, &f, 0, 10);
  CHECK_EQ_INT(r.status, MT_CS_CRASH);
  CHECK_HAS(r.message, "exited with status 3");
  fixture_free(&f);
}

/* n cases, case k the fixture with op ops[k] (its kernel picks the behaviour) */
static void batch_init(fixture *f, mt_golden_case **cases, const mt_op *ops, int n) {
  for (int k = 0; k < n; k++) {
    fixture_init(&f[k]);
    f[k].c.op = ops[k];
    cases[k] = &f[k].c;
  }
}

/* One worker runs a batch: a crash, a hang and an exit each cost only
 * their own case, a fresh worker takes the cases after them, and every
 * result lands at its own index. The op of each case picks its kernel. */
TEST(worker_batch_isolates_each_case_and_replaces_dead_workers) {
  enum { N = 7 };
  static const mt_op ops[N] = {MT_OP_neg, MT_OP_exp, MT_OP_abs, MT_OP_log,
                               MT_OP_sqrt, MT_OP_neg, MT_OP_abs};
  mt_kernel_fn kernels[MT_OP__END] = {[MT_OP_neg] = k_right, [MT_OP_exp] = k_crash,
                                      [MT_OP_abs] = k_right, [MT_OP_log] = k_hang,
                                      [MT_OP_sqrt] = k_exit};
  mt_impl impl = fake_impl(kernels);
  fixture f[N];
  mt_golden_case *cases[N];
  mt_case_result r[N];
  batch_init(f, cases, ops, N);
  for (int no_fork = 0; no_fork < 2; no_fork++) {
    mt_run_opts o = {0.5, no_fork, {0}};
    if (no_fork) { /* in process only the kernels that return can run */
      kernels[MT_OP_exp] = kernels[MT_OP_log] = kernels[MT_OP_sqrt] = k_wrong;
    }
    mt_cases_run(&impl, cases, N, &o, r);
    static const mt_case_status forked[N] = {MT_CS_PASS,    MT_CS_CRASH, MT_CS_PASS, MT_CS_TIMEOUT,
                                             MT_CS_CRASH,   MT_CS_PASS,  MT_CS_PASS};
    for (int k = 0; k < N; k++)
      CHECK_EQ_INT(r[k].status, no_fork ? (ops[k] == MT_OP_neg || ops[k] == MT_OP_abs
                                               ? MT_CS_PASS : MT_CS_FAIL)
                                        : forked[k]);
    if (!no_fork) {
      CHECK_HAS(r[1].message, "SIGABRT");
      CHECK_HAS(r[3].message, "no result after 0.5 s");
      CHECK(r[3].seconds >= 0.5 && r[3].seconds < 5.0);
      CHECK_HAS(r[4].message, "exited with status 3");
    }
  }
  for (int k = 0; k < N; k++) fixture_free(&f[k]);
}

/* A DEVICE_ERROR costs its own case: the worker that met it stops after
 * reporting it and a fresh one, with a fresh device, takes the cases after
 * it. In process (--no-fork) nothing can renew the device, and every case
 * after the fault fails with it. */
TEST(device_error_retires_the_worker_and_costs_only_its_case) {
  enum { N = 6 };
  static const mt_op ops[N] = {MT_OP_neg, MT_OP_exp, MT_OP_neg, MT_OP_neg, MT_OP_exp, MT_OP_neg};
  mt_kernel_fn kernels[MT_OP__END] = {[MT_OP_neg] = k_on_device, [MT_OP_exp] = k_fault};
  mt_impl impl = fake_impl(kernels);
  fixture f[N];
  mt_golden_case *cases[N];
  mt_case_result r[N];
  batch_init(f, cases, ops, N);
  for (int no_fork = 0; no_fork < 2; no_fork++) {
    mt_run_opts o = {5.0, no_fork, {0}};
    device_lost = 0;
    mt_cases_run(&impl, cases, N, &o, r);
    for (int k = 0; k < N; k++) {
      int faulted = ops[k] == MT_OP_exp || (no_fork && k > 1);
      CHECK_EQ_INT(r[k].status, faulted ? MT_CS_ERROR : MT_CS_PASS);
      CHECK_EQ_INT(r[k].device_error, faulted);
    }
    CHECK_HAS(r[1].message, "DEVICE_ERROR: fake: an illegal memory access");
    if (no_fork) CHECK_HAS(r[2].message, "the context is lost");
  }
  CHECK_EQ_INT(device_lost, 1); /* the in-process run faulted this process */
  device_lost = 0;
  for (int k = 0; k < N; k++) fixture_free(&f[k]);
}

/* ---- statuses and backends ----------------------------------------------------------- */

TEST(status_table_names_and_groups) {
  CHECK(!strcmp(mt_case_status_name(MT_CS_EXPECTED_DIVERGENCE), "EXPECTED_DIVERGENCE"));
  CHECK(!strcmp(mt_case_status_name(MT_CS_NOT_SUPPORTED), "NOT_SUPPORTED"));
  CHECK_EQ_INT(mt_case_status_group(MT_CS_PASS), MT_GROUP_PASSED);
  CHECK_EQ_INT(mt_case_status_group(MT_CS_EXPECTED_DIVERGENCE), MT_GROUP_PASSED);
  CHECK_EQ_INT(mt_case_status_group(MT_CS_NOT_SUPPORTED), MT_GROUP_SKIPPED);
  CHECK_EQ_INT(mt_case_status_group(MT_CS_SKIP), MT_GROUP_SKIPPED);
  CHECK_EQ_INT(mt_case_status_group(MT_CS_CRASH), MT_GROUP_FAILED);
  CHECK_EQ_INT(mt_case_status_group(MT_CS_TIMEOUT), MT_GROUP_FAILED);
  CHECK_EQ_INT(mt_case_status_group(MT_CS_ERROR), MT_GROUP_FAILED);
  CHECK(!strcmp(mt_case_status_junit(MT_CS_FAIL), "failure"));
  CHECK(!strcmp(mt_case_status_junit(MT_CS_CRASH), "error"));
  CHECK(mt_case_status_junit(MT_CS_PASS) == NULL);
}

TEST(backend_names_resolve_or_explain) {
  mt_backend b;
  mt_error err = {0};
  CHECK_STATUS(mt_backend_open("cpu", &b, &err), MT_OK);
  CHECK(b.impl == mt_backend_cpu() && !strcmp(b.name, "cpu"));
  CHECK_EQ_INT(b.batch, MT_BATCH_DEFAULT);
  mt_backend_close(&b);
  mt_status st = mt_backend_open("cuda", &b, &err);
  CHECK(st == MT_OK || st == MT_NOT_SUPPORTED);
  if (st == MT_NOT_SUPPORTED) CHECK_HAS(err.msg, "cuda backend: ");
  else CHECK_EQ_INT(b.batch, MT_BATCH_DEVICE); /* a worker per 1024 cases: CUDA's start */
  mt_backend_close(&b);
  CHECK_STATUS(mt_backend_open("cuda-emu", &b, &err), MT_OK);
  CHECK_EQ_INT(b.batch, MT_BATCH_DEVICE);
  mt_backend_close(&b);
  CHECK_STATUS(mt_backend_open("tpu", &b, &err), MT_INVALID_ARGUMENT);
  CHECK_HAS(err.msg, "unknown backend 'tpu'");
  CHECK_STATUS(mt_backend_open("/nonexistent/plugin.so", &b, &err), MT_INVALID_ARGUMENT);
  CHECK_HAS(err.msg, "/nonexistent/plugin.so");
  /* a name ending in .so is a plugin in the working directory; ".so" alone is no name */
  CHECK_STATUS(mt_backend_open("no_such_plugin.so", &b, &err), MT_INVALID_ARGUMENT);
  CHECK_HAS(err.msg, "plugin no_such_plugin.so: No such file");
  CHECK_STATUS(mt_backend_open(".so", &b, &err), MT_INVALID_ARGUMENT);
  CHECK_HAS(err.msg, "unknown backend '.so'");
  const char *example = MT_BINARY_DIR "/plugins/example.so";
  if (access(example, R_OK) == 0) {
    CHECK_STATUS(mt_backend_open(example, &b, &err), MT_OK);
    CHECK(b.impl && !strcmp(b.name, "example") && b.impl->abi_version == MT_ABI_VERSION);
    CHECK_EQ_INT(b.batch, MT_BATCH_DEFAULT);
    mt_backend_close(&b);
    char cwd[4096];
    CHECK(getcwd(cwd, sizeof cwd) != NULL);
    CHECK(chdir(MT_BINARY_DIR "/plugins") == 0);
    CHECK_STATUS(mt_backend_open("example.so", &b, &err), MT_OK); /* ./example.so */
    CHECK(b.impl && !strcmp(b.name, "example"));
    mt_backend_close(&b);
    CHECK(chdir(cwd) == 0);
  }
}

/* ---- reports ------------------------------------------------------------------------------ */

static char *capture(void (*fn)(FILE *, const char *), const char *s) {
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  fn(f, s);
  fclose(f);
  return buf;
}

TEST(json_and_xml_escaping) {
  char *j = capture(mt_json_string, "a\"b\\c\nd\x01");
  CHECK(!strcmp(j, "\"a\\\"b\\\\c\\nd\\u0001\""));
  free(j);
  j = capture(mt_json_string, NULL);
  CHECK(!strcmp(j, "null"));
  free(j);
  char *x = capture(mt_xml_text, "<a & 'b'>\"\x02");
  CHECK(!strcmp(x, "&lt;a &amp; &apos;b&apos;&gt;&quot;?"));
  free(x);
}

TEST(atomic_file_appears_only_on_commit) {
  char dir[512], path[600];
  snprintf(dir, sizeof dir, "%s/test_runner.XXXXXX", MT_BINARY_DIR);
  if (!mkdtemp(dir)) {
    snprintf(dir, sizeof dir, "/tmp/test_runner.XXXXXX");
    if (!mkdtemp(dir)) abort();
  }
  snprintf(path, sizeof path, "%s/r.json", dir);
  mt_afile a;
  mt_error err = {0};
  CHECK_STATUS(mt_afile_open(&a, path, &err), MT_OK);
  fputs("{}\n", a.f);
  CHECK(access(path, F_OK) != 0); /* not yet */
  CHECK_STATUS(mt_afile_commit(&a, &err), MT_OK);
  CHECK(access(path, F_OK) == 0);
  unlink(path);
  CHECK_STATUS(mt_afile_open(&a, path, &err), MT_OK);
  fputs("partial", a.f);
  mt_afile_abort(&a);
  CHECK(access(path, F_OK) != 0);
  CHECK(rmdir(dir) == 0); /* nothing left behind, the temporary file included */
  char bad[700];
  snprintf(bad, sizeof bad, "%s/no/such/dir/r.json", dir);
  CHECK_STATUS(mt_afile_open(&a, bad, &err), MT_IO_ERROR);
  CHECK_HAS(err.msg, "cannot write report");
}

TEST(report_counts_and_json_summary) {
  mt_report rep = {0};
  mt_error err = {0};
  rep.backend = "fake";
  rep.torch_version = "1.13.1";
  rep.torch_version_requested = 1;
  rep.complete = 1;
  CHECK_STATUS(mt_report_add_golden(&rep, "golden/x.h5", "2.5.1", "abc", &err), MT_OK);
  mt_case_result pass = {MT_CS_PASS, 0.25, "", "", 0},
                 fail = {MT_CS_FAIL, 0.5, "output 0: \"x\"", "", 0},
                 ns = {MT_CS_NOT_SUPPORTED, 0, "no", "", 0},
                 ed = {MT_CS_EXPECTED_DIVERGENCE, 0, "v", "", 0};
  mt_report_add_case(&rep, 0, "a", "neg", "unary", "MASK-4", &pass, &err);
  mt_report_add_case(&rep, 0, "b", "neg", "unary", "MASK-4", &fail, &err);
  mt_report_add_case(&rep, 0, "c", "neg", "unary", "MASK-4", &ns, &err);
  mt_report_add_case(&rep, 0, "d", "neg", "unary", "MASK-4", &ed, &err);
  CHECK_EQ_INT(mt_report_count_group(&rep, MT_GROUP_PASSED), 2); /* PASS + EXPECTED_DIVERGENCE */
  CHECK_EQ_INT(mt_report_count_group(&rep, MT_GROUP_FAILED), 1);
  CHECK_EQ_INT(mt_report_count_group(&rep, MT_GROUP_SKIPPED), 1);
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  CHECK_STATUS(mt_report_write_json(f, &rep, &err), MT_OK);
  fclose(f);
  CHECK_HAS(buf, "\"summary\": {\"PASS\": 1, \"FAIL\": 1, \"ERROR\": 0, \"NOT_SUPPORTED\": 1");
  CHECK_HAS(buf, "\"EXPECTED_DIVERGENCE\": 1, \"XFAIL\": 0, \"XPASS\": 0}");
  CHECK_HAS(buf, "\"message\": \"output 0: \\\"x\\\"\"");
  CHECK_HAS(buf, "\"torch_version\": \"2.5.1\"");
  CHECK_HAS(buf, "\"torch_version\": \"1.13.1\",\n  \"torch_version_requested\": true,");
  free(buf);
  f = open_memstream(&buf, &len);
  CHECK_STATUS(mt_report_write_junit(f, &rep, &err), MT_OK);
  fclose(f);
  CHECK_HAS(buf, "<testsuite name=\"golden/x.h5\" tests=\"4\" failures=\"1\" errors=\"0\" skipped=\"1\"");
  CHECK_HAS(buf, "<failure type=\"FAIL\" message=\"output 0: &quot;x&quot;\">");
  CHECK_HAS(buf, "classname=\"x.neg\" name=\"c\"");
  CHECK_HAS(buf, "<property name=\"expected_torch_version\" value=\"1.13.1\"/>");
  free(buf);
  mt_report_free(&rep);
}

TEST(shell_quoting_leaves_plain_words_alone) {
  char *q = capture(mt_sh_quote, "golden/reduce.h5");
  CHECK(!strcmp(q, "golden/reduce.h5"));
  free(q);
  q = capture(mt_sh_quote, "amin.*");
  CHECK(!strcmp(q, "'amin.*'"));
  free(q);
  q = capture(mt_sh_quote, "it's");
  CHECK(!strcmp(q, "'it'\\''s'")); /* 'it'\''s' */
  free(q);
  q = capture(mt_sh_quote, "");
  CHECK(!strcmp(q, "''"));
  free(q);
}

TEST(report_json_carries_profile_command_and_repro) {
  mt_report rep = {0};
  mt_error err = {0};
  rep.backend = "fake";
  rep.profile = "all";
  rep.complete = 1;
  const char *argv[] = {"mtcs", "run", "--filter", "sum.*", "--adapter", "python3 a b.py"};
  CHECK_STATUS(mt_report_set_command(&rep, 6, argv, &err), MT_OK);
  CHECK_STATUS(mt_report_add_golden(&rep, "g.h5", NULL, NULL, &err), MT_OK);
  mt_case_result pass = {MT_CS_PASS, 0, "", "", 0}, fail = {MT_CS_FAIL, 0, "differs", "", 0};
  CHECK_STATUS(mt_report_add_case(&rep, 0, "a", "neg", "unary", "MASK-4", &pass, &err), MT_OK);
  CHECK_STATUS(mt_report_describe_case(&rep, 0, "numpy_ma", NULL, NULL, &err), MT_OK);
  CHECK_STATUS(mt_report_add_case(&rep, 0, "b", "neg", "unary", "MASK-4", &fail, &err), MT_OK);
  CHECK_STATUS(mt_report_describe_case(&rep, 1, NULL, "mtcs run --filter b", "/r/b.sh", &err),
               MT_OK);
  CHECK_STATUS(mt_report_describe_case(&rep, 2, NULL, NULL, NULL, &err), MT_INVALID_ARGUMENT);
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  CHECK_STATUS(mt_report_write_json(f, &rep, &err), MT_OK);
  fclose(f);
  CHECK_HAS(buf, "\"profile\": \"all\", \"command\": \"mtcs run --filter 'sum.*' --adapter "
                 "'python3 a b.py'\"");
  CHECK_HAS(buf, "\"id\": \"a\", ");
  CHECK_HAS(buf, "\"profile\": \"numpy_ma\", \"repro_command\": null, \"repro_script\": null}");
  /* a case without a profile is torch's (the golden default) */
  CHECK_HAS(buf, "\"profile\": \"torch\", \"repro_command\": \"mtcs run --filter b\", "
                 "\"repro_script\": \"/r/b.sh\"}");
  free(buf);
  mt_report_free(&rep);
}

TEST(repro_command_replays_one_case_with_the_run_options) {
  mt_session_opts o = {.backend = "cpu", .self = "mtcs"};
  o.run.exec.level = MT_LEVEL_strict;
  o.run.exec.exact_version = 1;
  o.run.exec.poison_runs = 3;
  o.run.exec.torch_version = "1.13.1";
  mt_golden_case c = {.id = "amin.masked.f32.dim0", .profile = "numpy_ma"};
  char *cmd = mt_repro_command(&o, "/no/such/g.h5", &c, 1);
  CHECK(cmd != NULL);
  CHECK_HAS(cmd, " run --backend cpu --golden /no/such/g.h5 --filter amin.masked.f32.dim0 "
                 "--profile numpy_ma --level strict --torch-version 1.13.1 --exact-version "
                 "--poison-runs 3 --no-fork -v");
  free(cmd);
  o.run.exec = (mt_exec_opts){.poison_runs = MT_POISON__COUNT};
  c.profile = NULL;
  cmd = mt_repro_command(&o, "b.h5", &c, 0);
  CHECK(cmd != NULL);
  CHECK_HAS(cmd, " run --backend cpu --golden b.h5 --profile torch --level semantic --no-fork -v");
  CHECK(!strstr(cmd, "--filter") && !strstr(cmd, "--poison-runs"));
  free(cmd);
}

/* ---- the console: durations and the progress line ---------------------------------------- */

/* What mt_console_progress writes to a stream that is not a terminal (its
 * width is then taken as 80 columns). */
static char *progress_line(int k, int total, int failed, double elapsed_s, const char *id) {
  char *buf = NULL;
  size_t len = 0;
  mt_session_opts o;
  memset(&o, 0, sizeof o);
  o.diag = open_memstream(&buf, &len);
  mt_console_progress(&o, k, total, failed, elapsed_s, id);
  fclose(o.diag);
  return buf;
}

/* The visible columns of mt_console_progress's line (id long, no failures)
 * written to a pseudo-terminal of `cols` columns; -1 when the line could not
 * be read back, -2 when this machine has no pseudo-terminal. */
static int tty_progress_width(int cols, const char *id) {
  int m = posix_openpt(O_RDWR | O_NOCTTY), s = -1, n = -1;
  char *name = NULL;
  if (m < 0 || grantpt(m) || unlockpt(m) || !(name = ptsname(m)) ||
      (s = open(name, O_RDWR | O_NOCTTY)) < 0) {
    fprintf(stderr, "  note: no pseudo-terminal (%s): the terminal width cut is not checked\n",
            strerror(errno));
    if (m >= 0) close(m);
    return -2;
  }
  struct termios t;
  if (tcgetattr(s, &t) == 0) {
    cfmakeraw(&t); /* the bytes as written */
    tcsetattr(s, TCSANOW, &t);
  }
  struct winsize ws = {.ws_row = 24, .ws_col = (unsigned short)cols};
  FILE *f = ioctl(s, TIOCSWINSZ, &ws) == 0 ? fdopen(s, "w") : NULL;
  if (f) {
    mt_session_opts o;
    memset(&o, 0, sizeof o);
    o.diag = f;
    mt_console_progress(&o, 1, 4, 0, 0.0, id);
    fclose(f);
    char buf[512];
    struct pollfd p = {.fd = m, .events = POLLIN};
    if (poll(&p, 1, 2000) == 1) n = (int)read(m, buf, sizeof buf);
    n = n >= 4 ? n - 4 : -1; /* less "\r\033[K" */
  } else {
    close(s);
  }
  close(m);
  return n;
}

#define CHECK_DURATION(s, want) \
  do { char b_[32]; CHECK_STR(mt_console_duration((s), b_, sizeof b_), (want)); } while (0)

TEST(console_durations_and_the_progress_line) {
  /* rounded to the second; minutes and seconds from 60 s, hours and minutes
   * from 3600 s; negative, NaN and anything past 99h59m59s shown as its cap */
  CHECK_DURATION(0, "0s");
  CHECK_DURATION(59.49, "59s");
  CHECK_DURATION(59.5, "1m00s");
  CHECK_DURATION(185, "3m05s");
  CHECK_DURATION(3599.49, "59m59s");
  CHECK_DURATION(3599.5, "1h00m");
  CHECK_DURATION(7325, "2h02m");
  CHECK_DURATION(359999, "99h59m");
  CHECK_DURATION(1e12, "99h59m");
  CHECK_DURATION(-1, "99h59m");
  CHECK_DURATION(NAN, "99h59m");

  /* the line for k of total with `failed` failures after `elapsed` seconds */
  static const struct {
    int k, total, failed;
    double elapsed;
    const char *id, *want;
  } lines[] = {
      /* the first case: no rate yet, so no ETA; percent done counts finished cases */
      {1, 4, 0, 0.0, "a.case", "\r\033[K[1/4 0%] 0 cases/s, ETA ?, 0 failed  a.case"},
      /* 2 cases done in 1 s: 2 cases/s, the 3rd and 4th left: 1 s */
      {3, 4, 0, 1.0, "a.case", "\r\033[K[3/4 50%] 2 cases/s, ETA 1s, 0 failed  a.case"},
      /* 100 done in 50 s, 900 left: 450 s */
      {101, 1000, 0, 50.0, "x", "\r\033[K[101/1000 10%] 2 cases/s, ETA 7m30s, 0 failed  x"},
      /* a rate below 1 case/s still gives an ETA: 1 done in 2 s, 3 left */
      {2, 4, 0, 2.0, "x", "\r\033[K[2/4 25%] 0 cases/s, ETA 6s, 0 failed  x"},
      /* no time measured yet (a coarse clock): no rate, no ETA, not infinities */
      {3, 4, 0, 0.0, "x", "\r\033[K[3/4 50%] 0 cases/s, ETA ?, 0 failed  x"},
      /* failures in bold */
      {3, 4, 2, 1.0, "a.case",
       "\r\033[K[3/4 50%] 2 cases/s, ETA 1s, \033[1m2 failed  a.case\033[0m"},
  };
  char *l;
  for (size_t i = 0; i < sizeof lines / sizeof lines[0]; i++) {
    l = progress_line(lines[i].k, lines[i].total, lines[i].failed, lines[i].elapsed, lines[i].id);
    CHECK_STR(l, lines[i].want);
    free(l);
  }
  /* a long id is cut at 79 visible columns (80 less one), bold or not */
  char id[201];
  memset(id, 'x', 200);
  id[200] = 0;
  l = progress_line(1, 4, 0, 0.0, id);
  CHECK_EQ_INT((long)strlen(l), 4 + 79); /* "\r\033[K" and 79 columns */
  CHECK(!strncmp(l, "\r\033[K[1/4 0%]", 12) && l[strlen(l) - 1] == 'x');
  free(l);
  l = progress_line(1, 4, 1, 0.0, id);
  CHECK_EQ_INT((long)strlen(l), 4 + 79 + 4 + 4); /* and the bold on and off */
  CHECK(!strcmp(l + strlen(l) - 5, "x\033[0m"));
  free(l);

  /* on a terminal the line is cut at its width less one; 20 columns or
   * fewer are taken as 80 */
  static const struct { int cols, cut; } widths[] = {{100, 99}, {21, 20}, {20, 79}};
  for (size_t w = 0; w < sizeof widths / sizeof widths[0]; w++) {
    int got = tty_progress_width(widths[w].cols, id);
    if (got == -2) break; /* no pseudo-terminal here: said on stderr */
    CHECK_EQ_INT(got, widths[w].cut);
  }

  /* the line is cleared only on a terminal */
  char *buf = NULL;
  size_t len = 0;
  mt_session_opts o;
  memset(&o, 0, sizeof o);
  o.diag = open_memstream(&buf, &len);
  mt_console_progress_clear(&o);
  o.progress_tty = 1;
  mt_console_progress_clear(&o);
  fclose(o.diag);
  CHECK_STR(buf, "\r\033[K");
  free(buf);
}

/* The summary of an adapter run that lost cases: the first five reasons
 * listed, the rest counted. */
static char *incomplete_summary(int n_reasons) {
  static const char *const reasons[] = {"r0", "r1", "r2", "r3", "r4", "r5"};
  char *buf = NULL;
  size_t len = 0;
  mt_session_opts o;
  memset(&o, 0, sizeof o);
  o.out = open_memstream(&buf, &len);
  mt_report rep;
  memset(&rep, 0, sizeof rep);
  rep.incomplete_cases = 7;
  rep.not_run = 1;
  rep.reasons = reasons;
  rep.n_reasons = n_reasons;
  mt_console_summary(&o, &rep);
  fclose(o.out);
  return buf;
}

TEST(console_summary_lists_five_reasons_and_counts_the_rest) {
  char *s = incomplete_summary(5);
  CHECK_HAS(s, "INCOMPLETE: 7 of ");
  CHECK_HAS(s, "(6 lost to the adapter: CRASH, TIMEOUT or protocol ERROR; 1 not run); first:\n"
               "    r0\n    r1\n    r2\n    r3\n    r4\n");
  CHECK(!strstr(s, "more"));
  free(s);
  s = incomplete_summary(6);
  CHECK_HAS(s, "    r4\n    ... and 1 more (the JSON report lists all)\n");
  CHECK(!strstr(s, "r5"));
  free(s);
  s = incomplete_summary(0);
  CHECK_HAS(s, "1 not run)\n");
  CHECK(!strstr(s, "first:"));
  free(s);
}

MT_TEST_MAIN(T(matching_outputs_pass_forked_and_in_process),
             T(differing_output_fails_with_index_values_and_tolerance),
             T(matching_a_recorded_variant_is_expected_divergence),
             T(error_cases_pass_on_the_same_status_and_fail_otherwise),
             T(torch_version_picks_the_variant_as_the_expectation),
             T(torch_version_result_of_no_version_fails_against_the_expected_one),
             T(error_variant_expected_when_asked_and_a_divergence_otherwise),
             T(outputs_variant_of_an_error_case),
             T(unexpected_error_is_ERROR_and_not_supported_stays),
             T(crash_is_reported_with_the_signal_and_the_run_goes_on),
             T(hanging_case_is_killed_at_the_timeout), T(exit_without_a_result_is_a_crash),
             T(worker_batch_isolates_each_case_and_replaces_dead_workers),
             T(device_error_retires_the_worker_and_costs_only_its_case),
             T(status_table_names_and_groups), T(backend_names_resolve_or_explain),
             T(json_and_xml_escaping), T(atomic_file_appears_only_on_commit),
             T(report_counts_and_json_summary), T(shell_quoting_leaves_plain_words_alone),
             T(report_json_carries_profile_command_and_repro),
             T(repro_command_replays_one_case_with_the_run_options),
             T(console_durations_and_the_progress_line),
             T(console_summary_lists_five_reasons_and_counts_the_rest))

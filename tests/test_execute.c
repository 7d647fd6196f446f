/* test_execute.c - execute.c: the runner's own rules on every case, MASK-9
 * (poison invariance) and CALL-1 (inputs read-only, outputs new), on a
 * hand-made case: neg of a masked [4] float32, data 1, 2, 3, 4 and mask
 * 1, 0, 1, 0, whose golden output is data -1, -2, -3, -4 with the same mask
 * (masked-out output data is not compared). */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "cpu_fixtures.h"
#include "mt_core.h"
#include "mt_test.h"
#include "poison.h"
#include "runner.h"

/* data sign * (1, 2, 3, 4), mask 1, 0, 1, 0 */
static mt_tensor *masked4(float sign) {
  return masked(dense(MT_float32, 1, SHAPE(4), VALS(sign * 1, sign * 2, sign * 3, sign * 4)),
                bools(1, SHAPE(4), BITS(1, 0, 1, 0)));
}

typedef struct fixture {
  mt_golden_case c;
  mt_tensor *in[1], *out[1];
} fixture;

static void fixture_init(fixture *f) {
  memset(f, 0, sizeof *f);
  mt_error err = {0};
  f->c.id = "neg.masked.f32.fake";
  f->c.op_name = "neg";
  f->c.op = MT_OP_neg;
  f->c.rules = "MASK-4";
  f->c.profile = "torch";
  mt_tolerance_parse("exact", &f->c.tolerance, &err);
  f->in[0] = masked4(1);
  f->out[0] = masked4(-1);
  f->c.n_in = 1;
  f->c.in = f->in;
  f->c.n_out = 1;
  f->c.out = f->out;
  f->c.loaded = 1;
}

static void fixture_free(fixture *f) {
  mt_tensor_free(f->in[0]);
  mt_tensor_free(f->out[0]);
}

static mt_case_result run_case_at(mt_kernel_fn k, fixture *f, int poison_runs, mt_level level) {
  mt_kernel_fn kernels[MT_OP__END] = {[MT_OP_neg] = k};
  mt_impl impl = {MT_ABI_VERSION, sizeof(mt_impl), "fake", NULL, NULL, MT_OP__END, kernels, 0, NULL, 0, NULL};
  mt_run_opts o = {10, 0, {poison_runs, level, NULL, 0, NULL}};
  mt_case_result r;
  mt_case_run(&impl, &f->c, &o, &r);
  return r;
}

static mt_case_result run_case(mt_kernel_fn k, fixture *f, int poison_runs) {
  return run_case_at(k, f, poison_runs, MT_LEVEL_semantic);
}

/* The reference neg, then data[0] += 0 * data[1]: right on any finite
 * masked-out value, NaN once a poison is NaN or infinite. */
static mt_status k_reads_masked_out(mt_call *call, mt_error *err) {
  mt_status st = mt_cpu_neg(call, err);
  if (st != MT_OK) return st;
  const float *x = call->in[0]->data->values;
  ((float *)call->out[0]->data->values)[0] += 0.0f * x[1];
  return MT_OK;
}

/* The reference neg, then it zeroes its input's masked-out data. */
static mt_status k_writes_input(mt_call *call, mt_error *err) {
  mt_status st = mt_cpu_neg(call, err);
  if (st == MT_OK) ((float *)call->in[0]->data->values)[1] = 0.0f;
  return st;
}

/* The reference neg, then 99 written under the masked-out output data[1]
 * (the golden holds -2 there): a library that fills masked-out outputs its
 * own way. */
static mt_status k_own_fill(mt_call *call, mt_error *err) {
  mt_status st = mt_cpu_neg(call, err);
  if (st == MT_OK) ((float *)call->out[0]->data->values)[1] = 99.0f;
  return st;
}

/* Returns its input as the output (a library returning self). */
static mt_status k_returns_input(mt_call *call, mt_error *err) {
  call->out[0] = (mt_tensor *)call->in[0];
  call->n_out = 1;
  return MT_OK;
}

/* Refuses the input when masked-out data is NaN: the error depends on data
 * that is not specified. */
static mt_status k_error_on_nan(mt_call *call, mt_error *err) {
  const float *x = call->in[0]->data->values;
  if (isnan(x[1])) return mt_err(err, MT_INVALID_ARGUMENT, "NaN in the input");
  return mt_cpu_neg(call, err);
}

TEST(reference_kernel_passes_every_poison_run) {
  fixture f;
  fixture_init(&f);
  mt_case_result r = run_case(mt_cpu_neg, &f, MT_POISON__COUNT);
  CHECK_EQ_INT(r.status, MT_CS_PASS);
  CHECK(r.rule[0] == 0);
  fixture_free(&f);
}

TEST(kernel_reading_masked_out_data_fails_mask_9_naming_the_poison) {
  fixture f;
  fixture_init(&f);
  mt_case_result r = run_case(k_reads_masked_out, &f, 0); /* golden data 2 there: 0 * 2 = 0 */
  CHECK_EQ_INT(r.status, MT_CS_PASS);
  r = run_case(k_reads_masked_out, &f, MT_POISON__COUNT);
  CHECK_EQ_INT(r.status, MT_CS_FAIL);
  CHECK(!strcmp(r.rule, "MASK-9"));
  CHECK_HAS(r.message, "poison invariance (MASK-9): with masked-out input data = nan");
  CHECK_HAS(r.message, "data[0]: expected -1, got nan");
  fixture_free(&f);
}

TEST(error_that_depends_on_masked_out_data_fails_mask_9) {
  fixture f;
  fixture_init(&f);
  ((float *)f.in[0]->data->values)[1] = NAN; /* the golden's own poison */
  f.c.expect_error = 1;
  f.c.error_class = "INVALID_ARGUMENT";
  f.c.n_out = 0;
  mt_case_result r = run_case(k_error_on_nan, &f, 0);
  CHECK_EQ_INT(r.status, MT_CS_PASS); /* the golden alone cannot tell */
  r = run_case(k_error_on_nan, &f, 2);      /* nan (same error), then +inf: OK */
  CHECK_EQ_INT(r.status, MT_CS_FAIL);
  CHECK(!strcmp(r.rule, "MASK-9"));
  CHECK_HAS(r.message, "= +inf the implementation returned OK, on the golden inputs INVALID_ARGUMENT");
  fixture_free(&f);
}

TEST(kernel_writing_its_input_fails_call_1) {
  fixture f;
  fixture_init(&f);
  mt_case_result r = run_case(k_writes_input, &f, 0);
  CHECK_EQ_INT(r.status, MT_CS_FAIL);
  CHECK(!strcmp(r.rule, "CALL-1"));
  CHECK_HAS(r.message, "modified input 0 (data element 1 (was 2, now 0))");
  fixture_free(&f);
}

TEST(output_that_is_an_input_fails_call_1_and_is_not_freed) {
  fixture f;
  fixture_init(&f);
  /* forked: a double free would be a CRASH, not the FAIL checked here */
  mt_case_result r = run_case(k_returns_input, &f, 0);
  CHECK_EQ_INT(r.status, MT_CS_FAIL);
  CHECK(!strcmp(r.rule, "CALL-1"));
  CHECK_HAS(r.message, "output 0 (tensor) shares memory with input 0 (tensor)");
  fixture_free(&f);
}

/* An output whose values are the last row offset of a CSR input (2 rows:
 * crow_indices [0, 1, 1], its last entry at index 2): the span of an input's
 * crow_indices is all rows + 1 of them (tests/sweep: a span two entries
 * short let this through). Static: an aliased output is never freed. */
static mt_tensor k_alias_out;
static mt_status k_aliases_last_row_offset(mt_call *call, mt_error *err) {
  (void)err;
  const mt_tensor *x = call->in[0];
  memset(&k_alias_out, 0, sizeof k_alias_out);
  k_alias_out.kind = MT_KIND_DENSE;
  k_alias_out.dtype = MT_int64;
  k_alias_out.ndim = 1;
  k_alias_out.shape[0] = 1;
  k_alias_out.strides[0] = 1;
  k_alias_out.values = x->crow_indices + x->shape[0];
  call->out[0] = &k_alias_out;
  call->n_out = 1;
  return MT_OK;
}

TEST(output_aliasing_the_last_row_offset_of_a_csr_input_fails_call_1) {
  fixture f;
  fixture_init(&f);
  mt_tensor_free(f.in[0]);
  f.in[0] = csr2(MT_float32, 2, 4, 1, (const int64_t[]){0}, (const int64_t[]){1}, VALS(1));
  mt_case_result r = run_case(k_aliases_last_row_offset, &f, 0);
  CHECK_EQ_INT(r.status, MT_CS_FAIL);
  CHECK(!strcmp(r.rule, "CALL-1"));
  CHECK_HAS(r.message, "output 0 (values) shares memory with input 0 (crow_indices)");
  fixture_free(&f);
}

TEST(blame_names_the_runner_rule_else_the_case_rules) {
  mt_case_result r = {0};
  CHECK(!strcmp(mt_case_blame(&r, "MASK-4"), "MASK-4"));
  snprintf(r.rule, sizeof r.rule, "%s", MT_RULE_POISON);
  CHECK(!strcmp(mt_case_blame(&r, "MASK-4"), "MASK-9"));
}

/* check_masked_out cases compare the data under masked-out outputs at level
 * strict only: semantic (the default) never looks there. */
TEST(masked_out_output_data_is_compared_at_level_strict_only) {
  fixture f;
  fixture_init(&f);
  f.c.check_masked_out = 1;
  mt_case_result r = run_case_at(k_own_fill, &f, MT_POISON__COUNT, MT_LEVEL_semantic);
  CHECK_EQ_INT(r.status, MT_CS_PASS);
  r = run_case_at(k_own_fill, &f, MT_POISON__COUNT, MT_LEVEL_strict);
  CHECK_EQ_INT(r.status, MT_CS_FAIL);
  CHECK_HAS(r.message, "data[1]: expected -2, got 99");
  r = run_case_at(mt_cpu_neg, &f, MT_POISON__COUNT, MT_LEVEL_strict);
  CHECK_EQ_INT(r.status, MT_CS_PASS);
  f.c.check_masked_out = 0; /* a case that records no fill: strict compares nothing more */
  r = run_case_at(k_own_fill, &f, MT_POISON__COUNT, MT_LEVEL_strict);
  CHECK_EQ_INT(r.status, MT_CS_PASS);
  fixture_free(&f);
}

TEST(level_names_round_trip) {
  mt_level l = MT_LEVEL__COUNT;
  CHECK(mt_level_from_name("strict", &l) == 0 && l == MT_LEVEL_strict);
  CHECK(mt_level_from_name("semantic", &l) == 0 && l == MT_LEVEL_semantic);
  CHECK(mt_level_from_name("Strict", &l) != 0);
  CHECK(mt_level_from_name(NULL, &l) != 0);
  CHECK(!strcmp(mt_level_name(MT_LEVEL_strict), "strict"));
}

/* input_masks: out = [x[0] + x[2]] from a plain x = 1, 2, 3, 4 masked by
 * the bool input 1, 0, 1, 0 (golden 4); reads_all also adds 0 * x[1]. */
static mt_status plain_masked_sum(mt_call *call, mt_error *err, int reads_all) {
  const float *x = call->in[0]->values;
  mt_tensor *o = NULL;
  mt_status st = mt_dense_new(MT_float32, 0, NULL, &o, err);
  if (st != MT_OK) return st;
  ((float *)o->values)[0] = x[0] + x[2] + (reads_all ? 0.0f * x[1] : 0.0f);
  call->out[0] = o;
  call->n_out = 1;
  return MT_OK;
}
static mt_status k_plain_right(mt_call *c, mt_error *e) { return plain_masked_sum(c, e, 0); }
static mt_status k_plain_reads(mt_call *c, mt_error *e) { return plain_masked_sum(c, e, 1); }

TEST(plain_input_masked_by_another_input_is_poisoned_too) {
  fixture f;
  fixture_init(&f);
  mt_tensor *in[2] = {dense(MT_float32, 1, SHAPE(4), VALS(1, 2, 3, 4)),
                      bools(1, SHAPE(4), BITS(1, 0, 1, 0))};
  mt_tensor *out[1] = {dense(MT_float32, 0, NULL, VALS(4))};
  f.c.n_in = 2;
  f.c.in = in;
  f.c.out = out;
  mt_case_result r = run_case(k_plain_reads, &f, MT_POISON__COUNT);
  CHECK_EQ_INT(r.status, MT_CS_PASS); /* without input_masks nothing is poisoned */
  f.c.input_mask_of[0] = 1 + 1; /* input 0 is masked by input 1 */
  r = run_case(k_plain_right, &f, MT_POISON__COUNT);
  CHECK_EQ_INT(r.status, MT_CS_PASS);
  r = run_case(k_plain_reads, &f, MT_POISON__COUNT);
  CHECK_EQ_INT(r.status, MT_CS_FAIL);
  CHECK(!strcmp(r.rule, "MASK-9"));
  CHECK_HAS(r.message, "with masked-out input data = nan");
  for (int k = 0; k < 2; k++) mt_tensor_free(in[k]);
  mt_tensor_free(out[0]);
  fixture_free(&f);
}

MT_TEST_MAIN(T(reference_kernel_passes_every_poison_run),
             T(kernel_reading_masked_out_data_fails_mask_9_naming_the_poison),
             T(error_that_depends_on_masked_out_data_fails_mask_9),
             T(kernel_writing_its_input_fails_call_1),
             T(output_that_is_an_input_fails_call_1_and_is_not_freed),
             T(output_aliasing_the_last_row_offset_of_a_csr_input_fails_call_1),
             T(blame_names_the_runner_rule_else_the_case_rules),
             T(masked_out_output_data_is_compared_at_level_strict_only),
             T(level_names_round_trip),
             T(plain_input_masked_by_another_input_is_poisoned_too))

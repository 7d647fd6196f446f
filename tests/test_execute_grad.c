/* test_execute_grad.c - gradient cases (golden format 3) through the
 * runner: dispatch to mt_impl.backward, grads judged like outputs (a
 * missing or extra gradient is a FAIL), CALL-1 over the upstream gradients,
 * MASK-9 poisoning the upstream gradients' masked-out data, and a repro
 * bundle that reads back as the same gradient case.
 *
 * The hand-made case: the backward of neg on a masked [4] float32 x (data
 * 1, 2, 3, 4, mask 1, 0, 1, 0) and a plain int64 [4] operand that gets no
 * gradient (as torch gives an integer tensor none), with the upstream
 * gradient g = masked(data 0.5, 7, -1.5, 9; mask 1, 0, 1, 0). d(-x)/dx = -1,
 * so the golden grad of x is masked(-0.5, ., 1.5, .; mask 1, 0, 1, 0), by
 * hand; grads/1 is absent. (neg takes one input; the second only stands
 * for an input without a gradient, which the runner treats by position.) */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cpu_fixtures.h"
#include "golden_io.h"
#include "mt_core.h"
#include "mt_test.h"
#include "poison.h"
#include "runner.h"

typedef struct fixture {
  mt_golden_case c;
  mt_tensor *in[3], *out[2];
} fixture;

static void fixture_init(fixture *f) {
  memset(f, 0, sizeof *f);
  mt_error err = {0};
  f->c.id = "neg.masked_dense.f32.fake.grad";
  f->c.op_name = "neg";
  f->c.op = MT_OP_neg;
  f->c.rules = "GRAD-1";
  f->c.profile = "torch";
  f->c.tolerance_str = "exact";
  mt_tolerance_parse("exact", &f->c.tolerance, &err);
  f->in[0] = masked(dense(MT_float32, 1, SHAPE(4), VALS(1, 2, 3, 4)),
                    bools(1, SHAPE(4), BITS(1, 0, 1, 0)));
  f->in[1] = dense(MT_int64, 1, SHAPE(4), VALS(5, 6, 7, 8));
  f->in[2] = masked(dense(MT_float32, 1, SHAPE(4), VALS(0.5, 7, -1.5, 9)),
                    bools(1, SHAPE(4), BITS(1, 0, 1, 0)));
  f->out[0] = masked(dense(MT_float32, 1, SHAPE(4), VALS(-0.5, 0, 1.5, 0)),
                     bools(1, SHAPE(4), BITS(1, 0, 1, 0)));
  f->out[1] = NULL;
  f->c.backward = 1;
  f->c.n_fwd_in = 2;
  f->c.n_grad_out = 1;
  f->c.n_in = 3;
  f->c.in = f->in;
  f->c.n_out = 2;
  f->c.out = f->out;
  f->c.loaded = 1;
}

static void fixture_free(fixture *f) {
  for (int k = 0; k < 3; k++) mt_tensor_free(f->in[k]);
  for (int k = 0; k < 2; k++) mt_tensor_free(f->out[k]);
}

static mt_case_result run_with(mt_kernel_fn backward, fixture *f, int poison_runs) {
  mt_kernel_fn kernels[MT_OP__END] = {[MT_OP_neg] = mt_cpu_neg};
  mt_kernel_fn grads[MT_OP__END] = {[MT_OP_neg] = backward};
  mt_impl impl = {MT_ABI_VERSION, sizeof(mt_impl), "fake", NULL, NULL, MT_OP__END, kernels,
                  0, NULL, MT_OP__END, grads};
  mt_run_opts o = {10, 0, {poison_runs, MT_LEVEL_semantic, NULL, 0, NULL}};
  mt_case_result r;
  mt_case_run(&impl, &f->c, &o, &r);
  return r;
}

/* -g with g's mask, or (mutations) something else. */
typedef enum { RIGHT, READS_MASKED_OUT, NO_GRAD, EXTRA_GRAD, WRITES_GRAD_OUT, WRONG_MASK } how;

static mt_status grad_neg(mt_call *call, mt_error *err, how h) {
  if (call->n_in != 2 || call->n_grad_out != 1 || !call->grad_out)
    return mt_err(err, MT_INVALID_ARGUMENT, "backward call: %d inputs, %d upstream gradients",
                  call->n_in, call->n_grad_out);
  const mt_tensor *g = call->grad_out[0];
  mt_tensor *d = NULL, *m = NULL;
  mt_status st;
  if ((st = call->host->dense_new(MT_float32, 1, g->shape, &d, err)) != MT_OK) return st;
  if ((st = call->host->dense_new(MT_bool, 1, g->shape, &m, err)) != MT_OK) {
    call->host->free(d);
    return st;
  }
  const float *gv = g->data->values;
  const uint8_t *gm = g->mask->values;
  for (int i = 0; i < 4; i++) {
    ((float *)d->values)[i] = -gv[i] + (h == READS_MASKED_OUT ? 0.0f * gv[1] : 0.0f);
    ((uint8_t *)m->values)[i] = h == WRONG_MASK ? 1 : gm[i];
  }
  if ((st = call->host->masked_new(d, m, &call->out[0], err)) != MT_OK) return st;
  call->out[1] = NULL;
  if (h == EXTRA_GRAD && call->host->dense_new(MT_float32, 1, g->shape, &call->out[1], err))
    return err->status;
  if (h == NO_GRAD) {
    call->host->free(call->out[0]);
    call->out[0] = NULL;
  }
  if (h == WRITES_GRAD_OUT) ((float *)g->data->values)[1] = 0.0f;
  call->n_out = 2;
  return MT_OK;
}

static mt_status k_right(mt_call *c, mt_error *e) { return grad_neg(c, e, RIGHT); }
static mt_status k_reads(mt_call *c, mt_error *e) { return grad_neg(c, e, READS_MASKED_OUT); }
static mt_status k_none(mt_call *c, mt_error *e) { return grad_neg(c, e, NO_GRAD); }
static mt_status k_extra(mt_call *c, mt_error *e) { return grad_neg(c, e, EXTRA_GRAD); }
static mt_status k_writes(mt_call *c, mt_error *e) { return grad_neg(c, e, WRITES_GRAD_OUT); }
static mt_status k_mask(mt_call *c, mt_error *e) { return grad_neg(c, e, WRONG_MASK); }

TEST(right_backward_passes_every_poison_run) {
  fixture f;
  fixture_init(&f);
  mt_case_result r = run_with(k_right, &f, MT_POISON__COUNT);
  CHECK_EQ_INT(r.status, MT_CS_PASS);
  fixture_free(&f);
}

TEST(no_backward_slot_is_not_supported) {
  fixture f;
  fixture_init(&f);
  mt_case_result r = run_with(NULL, &f, 0);
  CHECK_EQ_INT(r.status, MT_CS_NOT_SUPPORTED);
  CHECK_HAS(r.message, "no backward kernel for op neg");
  fixture_free(&f);
}

TEST(reading_masked_out_upstream_gradient_fails_mask_9) {
  fixture f;
  fixture_init(&f);
  mt_case_result r = run_with(k_reads, &f, 0); /* golden data 7 there: 0 * 7 = 0 */
  CHECK_EQ_INT(r.status, MT_CS_PASS);
  r = run_with(k_reads, &f, MT_POISON__COUNT);
  CHECK_EQ_INT(r.status, MT_CS_FAIL);
  CHECK(!strcmp(r.rule, "MASK-9"));
  CHECK_HAS(r.message, "grad 0");
  fixture_free(&f);
}

TEST(missing_and_extra_gradients_fail_naming_the_input) {
  fixture f;
  fixture_init(&f);
  mt_case_result r = run_with(k_none, &f, 0);
  CHECK_EQ_INT(r.status, MT_CS_FAIL);
  CHECK_HAS(r.message, "grad 0: expected a gradient (masked), got none");
  r = run_with(k_extra, &f, 0);
  CHECK_EQ_INT(r.status, MT_CS_FAIL);
  CHECK_HAS(r.message, "grad 1: torch gives this input no gradient, got a dense tensor");
  r = run_with(k_mask, &f, 0);
  CHECK_EQ_INT(r.status, MT_CS_FAIL);
  CHECK_HAS(r.message, "grad 0");
  fixture_free(&f);
}

TEST(writing_the_upstream_gradient_breaks_call_1) {
  fixture f;
  fixture_init(&f);
  mt_case_result r = run_with(k_writes, &f, 0);
  CHECK_EQ_INT(r.status, MT_CS_FAIL);
  CHECK(!strcmp(r.rule, "CALL-1"));
  CHECK_HAS(r.message, "input 2");
  fixture_free(&f);
}

TEST(repro_bundle_reads_back_as_the_same_gradient_case) {
  fixture f;
  fixture_init(&f);
  char dir[] = "/tmp/mtcs-grad-XXXXXX", path[64];
  CHECK(mkdtemp(dir) != NULL);
  snprintf(path, sizeof path, "%s/case.h5", dir);
  mt_error err = {0};
  CHECK_STATUS(mt_golden_write_case(path, NULL, &f.c, &err), MT_OK);
  mt_golden_file *gf = NULL;
  CHECK_STATUS(mt_golden_open(path, &gf, &err), MT_OK);
  if (gf) {
    mt_golden_case *c = &gf->cases[0];
    CHECK_EQ_INT(c->backward, 1);
    CHECK_STATUS(mt_golden_load(gf, c, &err), MT_OK);
    CHECK_EQ_INT(c->n_fwd_in, 2);
    CHECK_EQ_INT(c->n_grad_out, 1);
    CHECK_EQ_INT(c->n_in, 3);
    CHECK_EQ_INT(c->n_out, 2);
    CHECK(c->out && c->out[0] && c->out[0]->kind == MT_KIND_MASKED && !c->out[1]);
    CHECK(c->in && c->in[2] && c->in[2]->kind == MT_KIND_MASKED);
    mt_case_result r = run_with(k_right, &f, 0);
    CHECK_EQ_INT(r.status, MT_CS_PASS);
    mt_golden_close(gf);
  }
  unlink(path);
  rmdir(dir);
  fixture_free(&f);
}

MT_TEST_MAIN(T(right_backward_passes_every_poison_run), T(no_backward_slot_is_not_supported),
             T(reading_masked_out_upstream_gradient_fails_mask_9),
             T(missing_and_extra_gradients_fail_naming_the_input),
             T(writing_the_upstream_gradient_breaks_call_1),
             T(repro_bundle_reads_back_as_the_same_gradient_case))

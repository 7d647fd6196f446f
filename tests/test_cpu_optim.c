/* test_cpu_optim.c - the CPU Adagrad kernels: adagrad_dense (ADA-1),
 * adagrad_sparse (ADA-2), adagrad_masked (ADA-3), the step/lr_decay/
 * maximize hyper-parameters (ADA-4), torch's argument checks (ADA-5) and
 * the eps-placement divergence between the paths (ADA-6). Inputs are
 * literals; expected values are derived by hand in the comments. */
#include <stdlib.h>

#include "cpu_fixtures.h"
#include "mt_test.h"

/* fixtures: tests/cpu_fixtures.h */

/* ---- the tutorial (ADA-1..4) --------------------------------------------- */
/* param = arange(8).reshape(2, 4) float32, state_sum = 0.5 everywhere,
 * grad = sparse_coo_tensor([[0,1,1],[2,0,2]], [3,4,5], [2,4]),
 * lr = 0.1, eps = 1e-10:
 *   state_sum (0,2) = 0.5 + 3*3 = 9.5, (1,0) = 0.5 + 16 = 16.5,
 *             (1,2) = 0.5 + 25 = 25.5, 0.5 elsewhere;
 *   std = sqrt(9.5) + 1e-10 = 3.0822070, sqrt(16.5) = 4.0620193,
 *         sqrt(25.5) = 5.0497522 (1e-10 is below float32's resolution);
 *   param (0,2) = 2 - 0.1*3/3.0822070 = 1.9026672, (1,0) = 4 - 0.4/4.0620193
 *         = 3.9015269, (1,2) = 6 - 0.5/5.0497522 = 5.9009852.
 * Step 2 (same grad, carried state): state 18.5, 32.5, 50.5; std 4.3011627,
 *   5.7008772, 7.1063352; param 1.9026672 - 0.3/4.3011627 = 1.8329185,
 *   3.8313622, 5.8306255 (the tutorial prints 1.8329, 3.8314, 5.8306). */
static const int64_t TUT_R[] = {0, 1, 1}, TUT_C[] = {2, 0, 2};
static const double TUT_STATE1[] = {0.5, 0.5, 9.5, 0.5, 16.5, 0.5, 25.5, 0.5};
static const double TUT_PARAM1[] = {0, 1, 1.9026672, 3, 3.9015269, 5, 5.9009852, 7};
static const double TUT_STD1[] = {3.0822070, 4.0620193, 5.0497522};
static const double TUT_PARAM2[] = {0, 1, 1.8329185, 3, 3.8313622, 5, 5.8306255, 7};
#define TOL 1e-6 /* a few float32 ulps at these magnitudes */

typedef enum { DENSE_GRAD, COO_GRAD, MASKED_DENSE_GRAD } grad_form;

/* The tutorial gradient in one of its forms: dense [[0,0,3,0],[4,0,5,0]],
 * COO (indices above, not flagged coalesced), or a dense-storage masked
 * tensor with NaN poison at the masked-out positions. `vals` are the 3
 * stored values. */
static mt_tensor *tutorial_grad(grad_form f, const double *vals) {
  if (f == COO_GRAD) return coo2(MT_float32, 2, 4, 3, TUT_R, TUT_C, vals, 0);
  double d[8] = {0}, md[8];
  int bits[8] = {0};
  for (int i = 0; i < 8; i++) md[i] = NAN_POISON;
  for (int k = 0; k < 3; k++) {
    d[TUT_R[k] * 4 + TUT_C[k]] = md[TUT_R[k] * 4 + TUT_C[k]] = vals[k];
    bits[TUT_R[k] * 4 + TUT_C[k]] = 1;
  }
  if (f == DENSE_GRAD) return dense(MT_float32, 2, SHAPE(2, 4), d);
  return masked(dense(MT_float32, 2, SHAPE(2, 4), md), bools(2, SHAPE(2, 4), bits));
}

/* std at the tutorial entry k, whatever layout the path returned it in. */
static double std_at(const mt_tensor *std, int k) {
  if (std->kind == MT_KIND_DENSE) return at(std, TUT_R[k] * 4 + TUT_C[k]);
  if (std->kind == MT_KIND_COO) return at(std, k);
  if (std->data->kind == MT_KIND_COO) return at(std->data, k);
  return at(std->data, TUT_R[k] * 4 + TUT_C[k]);
}

/* One Adagrad step of fn; kw as given. */
static mt_status step(mt_kernel_fn fn, mt_call *c, mt_error *e, const mt_tensor *param,
                      const mt_tensor *grad, const mt_tensor *state, const mt_kwargs *kw) {
  const mt_tensor *in[] = {param, grad, state};
  return run(fn, c, e, 3, in, kw);
}

static void tutorial_two_steps(int *mt__failed, mt_kernel_fn fn, grad_form f) {
  mt_tensor *param = dense(MT_float32, 2, SHAPE(2, 4), VALS(0, 1, 2, 3, 4, 5, 6, 7));
  mt_tensor *state = dense(MT_float32, 2, SHAPE(2, 4), VALS(.5, .5, .5, .5, .5, .5, .5, .5));
  mt_tensor *grad = tutorial_grad(f, VALS(3, 4, 5));
  mt_kwarg kv[] = {kw_float("lr", 0.1), kw_float("eps", 1e-10), kw_int("step", 1)};
  mt_kwargs kw = {3, kv};
  mt_call c1, c2;
  mt_error e;
  CHECK_STATUS(step(fn, &c1, &e, param, grad, state, &kw), MT_OK);
  CHECK_EQ_INT(c1.n_out, 3);
  if (c1.n_out != 3) {
    fprintf(stderr, "  %s\n", e.msg);
    done(&c1, (mt_tensor *[]){param, state, grad}, 3);
    return;
  }
  for (int i = 0; i < 8; i++) {
    CHECK_NEAR(at(c1.out[0], i), TUT_PARAM1[i], TOL);
    CHECK_NEAR(at(c1.out[1], i), TUT_STATE1[i], 0);
  }
  for (int k = 0; k < 3; k++) CHECK_NEAR(std_at(c1.out[2], k), TUT_STD1[k], TOL);
  kv[2] = kw_int("step", 2); /* lr_decay 0: clr stays 0.1 */
  CHECK_STATUS(step(fn, &c2, &e, c1.out[0], grad, c1.out[1], &kw), MT_OK);
  for (int i = 0; i < 8 && c2.n_out == 3; i++) CHECK_NEAR(at(c2.out[0], i), TUT_PARAM2[i], TOL);
  done(&c2, NULL, 0);
  done(&c1, (mt_tensor *[]){param, state, grad}, 3);
}

TEST(dense_path_reproduces_the_tutorial_two_steps) {
  tutorial_two_steps(mt__failed, mt_cpu_adagrad_dense, DENSE_GRAD);
}
TEST(sparse_path_reproduces_the_tutorial_two_steps) {
  tutorial_two_steps(mt__failed, mt_cpu_adagrad_sparse, COO_GRAD);
}
TEST(masked_path_with_coo_grad_reproduces_the_tutorial_two_steps) {
  tutorial_two_steps(mt__failed, mt_cpu_adagrad_masked, COO_GRAD);
}
TEST(masked_path_with_dense_storage_grad_reproduces_the_tutorial_two_steps) {
  tutorial_two_steps(mt__failed, mt_cpu_adagrad_masked, MASKED_DENSE_GRAD);
}

TEST(std_output_has_each_paths_layout) {
  /* dense -> dense [2,4]; sparse -> COO over the 3 coalesced grad indices,
   * coalesced; masked (COO grad) -> masked with COO data and COO mask over
   * the same 3 entries, mask values true */
  mt_tensor *param = dense(MT_float32, 2, SHAPE(2, 4), VALS(0, 1, 2, 3, 4, 5, 6, 7));
  mt_tensor *state = dense(MT_float32, 2, SHAPE(2, 4), VALS(.5, .5, .5, .5, .5, .5, .5, .5));
  mt_tensor *gd = tutorial_grad(DENSE_GRAD, VALS(3, 4, 5)),
            *gc = tutorial_grad(COO_GRAD, VALS(3, 4, 5));
  mt_call c;
  mt_error e;
  CHECK_STATUS(step(mt_cpu_adagrad_dense, &c, &e, param, gd, state, NULL), MT_OK);
  CHECK_EQ_INT(c.out[2]->kind, MT_KIND_DENSE);
  done(&c, NULL, 0);
  CHECK_STATUS(step(mt_cpu_adagrad_sparse, &c, &e, param, gc, state, NULL), MT_OK);
  CHECK_EQ_INT(c.out[2]->kind, MT_KIND_COO);
  CHECK_EQ_INT(c.out[2]->nnz, 3);
  CHECK_EQ_INT(c.out[2]->coalesced, 1);
  for (int k = 0; k < 3; k++) {
    CHECK_EQ_INT(c.out[2]->indices[k], TUT_R[k]);
    CHECK_EQ_INT(c.out[2]->indices[3 + k], TUT_C[k]);
  }
  done(&c, NULL, 0);
  CHECK_STATUS(step(mt_cpu_adagrad_masked, &c, &e, param, gc, state, NULL), MT_OK);
  mt_tensor *s = c.out[2];
  CHECK_EQ_INT(s->kind, MT_KIND_MASKED);
  CHECK_EQ_INT(s->data->kind, MT_KIND_COO);
  CHECK_EQ_INT(s->mask->kind, MT_KIND_COO);
  CHECK_EQ_INT(s->mask->nnz, 3);
  for (int k = 0; k < 3; k++) CHECK_EQ_INT(bit(s->mask, k), 1);
  done(&c, (mt_tensor *[]){param, state, gd, gc}, 4);
}

/* ---- eps placement (ADA-6) ----------------------------------------------- */
/* eps = 0, state_sum = 0, grad values [3, 0, 5] (an explicitly stored zero
 * at (1,0)), lr = 0.1:
 *   dense: every zero-grad element has std = sqrt(0) + 0 = 0 and updates
 *          by (-0.1*0)/0 = NaN: param is NaN everywhere but (0,2), (1,2);
 *   sparse: only the stored entries update; the stored zero gives 0/0 =
 *          NaN at (1,0) alone;
 *   masked: mask = grad != 0 leaves (1,0) out: no NaN at all.
 * (0,2): 2 - 0.1*3/3 = 1.9; (1,2): 6 - 0.1*5/5 = 5.9 in every path. */
static void eps0(int *mt__failed, mt_kernel_fn fn, grad_form f, const int nan_at[8]) {
  mt_tensor *param = dense(MT_float32, 2, SHAPE(2, 4), VALS(0, 1, 2, 3, 4, 5, 6, 7));
  mt_tensor *state = dense(MT_float32, 2, SHAPE(2, 4), VALS(0, 0, 0, 0, 0, 0, 0, 0));
  mt_tensor *grad = tutorial_grad(f, VALS(3, 0, 5));
  mt_kwarg kv[] = {kw_float("lr", 0.1), kw_float("eps", 0.0)};
  mt_kwargs kw = {2, kv};
  mt_call c;
  mt_error e;
  CHECK_STATUS(step(fn, &c, &e, param, grad, state, &kw), MT_OK);
  for (int i = 0; i < 8 && c.n_out == 3; i++) {
    double p = at(c.out[0], i);
    CHECK_EQ_INT(isnan(p) != 0, nan_at[i]);
    if (i == 2) CHECK_NEAR(p, 1.9, TOL);
    if (i == 6) CHECK_NEAR(p, 5.9, TOL);
  }
  done(&c, (mt_tensor *[]){param, state, grad}, 3);
}

TEST(eps0_dense_path_is_nan_at_every_zero_gradient) {
  eps0(mt__failed, mt_cpu_adagrad_dense, DENSE_GRAD, BITS(1, 1, 0, 1, 1, 1, 0, 1));
}
TEST(eps0_sparse_path_is_nan_only_at_the_stored_zero) {
  eps0(mt__failed, mt_cpu_adagrad_sparse, COO_GRAD, BITS(0, 0, 0, 0, 1, 0, 0, 0));
}
TEST(eps0_masked_path_is_never_nan) {
  eps0(mt__failed, mt_cpu_adagrad_masked, COO_GRAD, BITS(0, 0, 0, 0, 0, 0, 0, 0));
}

TEST(eps0_masked_path_std_masks_out_the_stored_zero) {
  /* the masked std keeps only (0,2) and (1,2): values sqrt(9) = 3, sqrt(25) = 5 */
  mt_tensor *param = dense(MT_float32, 2, SHAPE(2, 4), VALS(0, 1, 2, 3, 4, 5, 6, 7));
  mt_tensor *state = dense(MT_float32, 2, SHAPE(2, 4), VALS(0, 0, 0, 0, 0, 0, 0, 0));
  mt_tensor *grad = tutorial_grad(COO_GRAD, VALS(3, 0, 5));
  mt_kwarg kv[] = {kw_float("lr", 0.1), kw_float("eps", 0.0)};
  mt_kwargs kw = {2, kv};
  mt_call c;
  mt_error e;
  CHECK_STATUS(step(mt_cpu_adagrad_masked, &c, &e, param, grad, state, &kw), MT_OK);
  mt_tensor *s = c.out[2];
  CHECK_EQ_INT(s->data->nnz, 2);
  CHECK_EQ_INT(s->mask->nnz, 2);
  CHECK_NEAR(at(s->data, 0), 3, 0);
  CHECK_NEAR(at(s->data, 1), 5, 0);
  CHECK_NEAR(at(c.out[1], 4), 0, 0); /* state_sum at the stored zero untouched */
  done(&c, (mt_tensor *[]){param, state, grad}, 3);
}

/* ---- hyper-parameters (ADA-4) -------------------------------------------- */

/* One float64 element: param p, grad g, state s, with kwargs. */
static double one_step(int *mt__failed, mt_kernel_fn fn, double p, double g, double s,
                       const mt_kwargs *kw) {
  mt_tensor *tp = dense(MT_float64, 1, SHAPE(1), VALS(p)),
            *ts = dense(MT_float64, 1, SHAPE(1), VALS(s));
  mt_tensor *tg = fn == mt_cpu_adagrad_dense ? dense(MT_float64, 1, SHAPE(1), VALS(g)) : NULL;
  if (!tg) {
    if (mt_coo_new(MT_float64, 1, SHAPE(1), 1, 1, &tg, NULL) != MT_OK) abort();
    tg->indices[0] = 0;
    mt_set_f64(tg->values, MT_float64, 0, g);
    tg->coalesced = 1;
  }
  mt_call c;
  mt_error e;
  double out = NAN;
  CHECK_STATUS(step(fn, &c, &e, tp, tg, ts, kw), MT_OK);
  if (c.n_out == 3) out = at(c.out[0], 0);
  done(&c, (mt_tensor *[]){tp, tg, ts}, 3);
  return out;
}

TEST(maximize_negates_the_gradient_in_every_path) {
  /* p = 1, g = 2, s = 0, lr = 1, eps = 0, maximize: g = -2, s = 4, std = 2,
   * p = 1 + (-1)(-2)/2 = 2 */
  mt_kwarg kv[] = {kw_float("lr", 1), kw_float("eps", 0), kw_bool("maximize", 1)};
  mt_kwargs kw = {3, kv};
  CHECK_NEAR(one_step(mt__failed, mt_cpu_adagrad_dense, 1, 2, 0, &kw), 2, 0);
  CHECK_NEAR(one_step(mt__failed, mt_cpu_adagrad_sparse, 1, 2, 0, &kw), 2, 0);
  CHECK_NEAR(one_step(mt__failed, mt_cpu_adagrad_masked, 1, 2, 0, &kw), 2, 0);
}

TEST(lr_decay_scales_the_rate_by_the_step_count) {
  /* clr = lr / (1 + (step - 1) * lr_decay) = 1 / (1 + 2 * 0.5) = 0.5;
   * p = 1, g = 2, s = 0, eps = 0: s = 4, std = 2, p = 1 - 0.5*2/2 = 0.5 */
  mt_kwarg kv[] = {kw_float("lr", 1), kw_float("eps", 0), kw_float("lr_decay", 0.5),
                   kw_int("step", 3)};
  mt_kwargs kw = {4, kv};
  CHECK_NEAR(one_step(mt__failed, mt_cpu_adagrad_dense, 1, 2, 0, &kw), 0.5, 0);
  CHECK_NEAR(one_step(mt__failed, mt_cpu_adagrad_sparse, 1, 2, 0, &kw), 0.5, 0);
  CHECK_NEAR(one_step(mt__failed, mt_cpu_adagrad_masked, 1, 2, 0, &kw), 0.5, 0);
}

TEST(dense_weight_decay_adds_decay_times_param_to_the_gradient) {
  /* p = 2, g = 1, wd = 0.5: g = 1 + 0.5*2 = 2, s = 4, std = 2,
   * p = 2 - 1*2/2 = 1 */
  mt_kwarg kv[] = {kw_float("lr", 1), kw_float("eps", 0), kw_float("weight_decay", 0.5)};
  mt_kwargs kw = {3, kv};
  CHECK_NEAR(one_step(mt__failed, mt_cpu_adagrad_dense, 2, 1, 0, &kw), 1, 0);
}

TEST(sparse_path_coalesces_duplicate_gradient_entries_first) {
  /* grad [3] with entries 2:1, 0:2, 2:3 (uncoalesced) -> 0:2, 2:4;
   * p = 10, s = 0, lr = 1, eps = 0: p[0] = 10 - 2/2 = 9, p[2] = 10 - 4/4 = 9,
   * p[1] untouched; std COO [0, 2] -> [2, 4] */
  mt_tensor *p = dense(MT_float64, 1, SHAPE(3), VALS(10, 10, 10)),
            *s = dense(MT_float64, 1, SHAPE(3), VALS(0, 0, 0));
  mt_tensor *g = NULL;
  if (mt_coo_new(MT_float64, 1, SHAPE(3), 1, 3, &g, NULL) != MT_OK) abort();
  const int64_t idx[] = {2, 0, 2};
  const double v[] = {1, 2, 3};
  for (int k = 0; k < 3; k++) g->indices[k] = idx[k], mt_set_f64(g->values, MT_float64, k, v[k]);
  g->coalesced = 0;
  mt_kwarg kv[] = {kw_float("lr", 1), kw_float("eps", 0)};
  mt_kwargs kw = {2, kv};
  mt_call c;
  mt_error e;
  CHECK_STATUS(step(mt_cpu_adagrad_sparse, &c, &e, p, g, s, &kw), MT_OK);
  if (c.n_out == 3) {
    CHECK_NEAR(at(c.out[0], 0), 9, 0);
    CHECK_NEAR(at(c.out[0], 1), 10, 0);
    CHECK_NEAR(at(c.out[0], 2), 9, 0);
    CHECK_NEAR(at(c.out[1], 2), 16, 0);
    CHECK_EQ_INT(c.out[2]->nnz, 2);
    CHECK_EQ_INT(c.out[2]->indices[0], 0);
    CHECK_EQ_INT(c.out[2]->indices[1], 2);
    CHECK_NEAR(at(c.out[2], 0), 2, 0);
    CHECK_NEAR(at(c.out[2], 1), 4, 0);
  }
  done(&c, (mt_tensor *[]){p, g, s}, 3);
}

TEST(masked_path_never_reads_masked_out_gradient_data) {
  /* grad data [3, NaN], mask [1, 0]; p = [2, 5], s = [0, 7], lr 1, eps 0:
   * p[0] = 2 - 3/3 = 1, s[0] = 9; element 1 untouched (p 5, s 7) */
  mt_tensor *p = dense(MT_float64, 1, SHAPE(2), VALS(2, 5)),
            *s = dense(MT_float64, 1, SHAPE(2), VALS(0, 7));
  mt_tensor *g =
      masked(dense(MT_float64, 1, SHAPE(2), VALS(3, NAN_POISON)), bools(1, SHAPE(2), BITS(1, 0)));
  mt_kwarg kv[] = {kw_float("lr", 1), kw_float("eps", 0)};
  mt_kwargs kw = {2, kv};
  mt_call c;
  mt_error e;
  CHECK_STATUS(step(mt_cpu_adagrad_masked, &c, &e, p, g, s, &kw), MT_OK);
  if (c.n_out == 3) {
    CHECK_NEAR(at(c.out[0], 0), 1, 0);
    CHECK_NEAR(at(c.out[0], 1), 5, 0);
    CHECK_NEAR(at(c.out[1], 0), 9, 0);
    CHECK_NEAR(at(c.out[1], 1), 7, 0);
    CHECK_EQ_INT(c.out[2]->kind, MT_KIND_MASKED);
    CHECK_EQ_INT(c.out[2]->data->kind, MT_KIND_DENSE);
    CHECK_NEAR(at(c.out[2]->data, 0), 3, 0);
    CHECK_EQ_INT(bit(c.out[2]->mask, 0), 1);
    CHECK_EQ_INT(bit(c.out[2]->mask, 1), 0);
  }
  done(&c, (mt_tensor *[]){p, g, s}, 3);
}

/* ---- argument checks (ADA-5) --------------------------------------------- */

static void expect_invalid(int *mt__failed, mt_kernel_fn fn, mt_kwarg bad, const char *msg) {
  mt_tensor *p = dense(MT_float32, 1, SHAPE(1), VALS(1)),
            *s = dense(MT_float32, 1, SHAPE(1), VALS(0));
  mt_tensor *g = dense(MT_float32, 1, SHAPE(1), VALS(1));
  mt_kwargs kw = {1, &bad};
  mt_call c;
  mt_error e;
  CHECK_STATUS(step(fn, &c, &e, p, g, s, &kw), MT_INVALID_ARGUMENT);
  if (!strstr(e.msg, msg)) {
    fprintf(stderr, "  message \"%s\" lacks \"%s\"\n", e.msg, msg);
    *mt__failed = 1;
  }
  CHECK_EQ_INT(c.n_out, 0);
  done(&c, (mt_tensor *[]){p, g, s}, 3);
}

TEST(negative_hyper_parameters_are_rejected_with_torchs_messages) {
  expect_invalid(mt__failed, mt_cpu_adagrad_dense, kw_float("lr", -0.1),
                 "Invalid learning rate: -0.1");
  expect_invalid(mt__failed, mt_cpu_adagrad_dense, kw_float("lr", -1),
                 "Invalid learning rate: -1.0");
  expect_invalid(mt__failed, mt_cpu_adagrad_dense, kw_float("lr_decay", -0.5),
                 "Invalid lr_decay value: -0.5");
  expect_invalid(mt__failed, mt_cpu_adagrad_dense, kw_float("weight_decay", -0.1),
                 "Invalid weight_decay value: -0.1");
  expect_invalid(mt__failed, mt_cpu_adagrad_dense, kw_float("eps", -1e-10),
                 "Invalid epsilon value: -1e-10");
  expect_invalid(mt__failed, mt_cpu_adagrad_sparse, kw_float("lr", NAN),
                 "Invalid learning rate: nan");
}

TEST(sparse_and_masked_paths_refuse_weight_decay) {
  mt_tensor *p = dense(MT_float32, 1, SHAPE(1), VALS(1)),
            *s = dense(MT_float32, 1, SHAPE(1), VALS(0));
  mt_tensor *g = NULL;
  if (mt_coo_new(MT_float32, 1, SHAPE(1), 1, 0, &g, NULL) != MT_OK) abort();
  mt_kwarg kv[] = {kw_float("weight_decay", 0.1)};
  mt_kwargs kw = {1, kv};
  mt_call c;
  mt_error e;
  CHECK_STATUS(step(mt_cpu_adagrad_sparse, &c, &e, p, g, s, &kw), MT_INVALID_ARGUMENT);
  CHECK(strstr(e.msg, "weight_decay option is not compatible with sparse gradients") != NULL);
  CHECK_STATUS(step(mt_cpu_adagrad_masked, &c, &e, p, g, s, &kw), MT_INVALID_ARGUMENT);
  CHECK(strstr(e.msg, "weight_decay") != NULL);
  done(&c, (mt_tensor *[]){p, g, s}, 3);
}

TEST(each_path_rejects_a_gradient_of_the_wrong_layout_or_dtype) {
  mt_tensor *p = dense(MT_float32, 1, SHAPE(1), VALS(1)),
            *s = dense(MT_float32, 1, SHAPE(1), VALS(0));
  mt_tensor *gd = dense(MT_float32, 1, SHAPE(1), VALS(1)),
            *g64 = dense(MT_float64, 1, SHAPE(1), VALS(1));
  mt_tensor *gc = NULL;
  if (mt_coo_new(MT_float32, 1, SHAPE(1), 1, 0, &gc, NULL) != MT_OK) abort();
  mt_call c;
  mt_error e;
  CHECK_STATUS(step(mt_cpu_adagrad_sparse, &c, &e, p, gd, s, NULL), MT_LAYOUT_MISMATCH);
  CHECK_STATUS(step(mt_cpu_adagrad_dense, &c, &e, p, gc, s, NULL), MT_LAYOUT_MISMATCH);
  CHECK_STATUS(step(mt_cpu_adagrad_masked, &c, &e, p, gd, s, NULL), MT_LAYOUT_MISMATCH);
  CHECK_STATUS(step(mt_cpu_adagrad_dense, &c, &e, p, g64, s, NULL), MT_DTYPE_MISMATCH);
  CHECK(strstr(e.msg, "float64") != NULL);
  done(&c, (mt_tensor *[]){p, s, gd, g64, gc}, 5);
}

TEST(masked_path_of_an_int64_param_returns_a_float32_param) {
  /* ADA-7: param int64 [1, 2], grad masked int64 data [3, P] (P = 100)
   * mask [1, 0], state_sum int64 [1, 1], lr 0.1, eps 1e-10, step 1.
   * Element 0: state 1 + 3*3 = 10 (int64); std = sqrt(10) + eps in float32
   * = 3.1622777; param = 1 + (-0.1) * 3 / 3.1622777 = 1 - 0.0948683 =
   * 0.9051317 (float32). Element 1 (masked out): state 1, std sqrt(1) = 1,
   * param 2.0. Outputs: float32 param, int64 state_sum, float32 std. */
  mt_tensor *p = dense(MT_int64, 1, SHAPE(2), VALS(1, 2)),
            *s = dense(MT_int64, 1, SHAPE(2), VALS(1, 1));
  mt_tensor *g = masked(dense(MT_int64, 1, SHAPE(2), VALS(3, 100)), bools(1, SHAPE(2), BITS(1, 0)));
  mt_kwarg kv[] = {kw_float("lr", 0.1)};
  mt_kwargs kw = {1, kv};
  mt_call c;
  mt_error e;
  CHECK_STATUS(step(mt_cpu_adagrad_masked, &c, &e, p, g, s, &kw), MT_OK);
  if (c.n_out == 3) {
    CHECK_EQ_INT(c.out[0]->dtype, MT_float32);
    CHECK_NEAR(at(c.out[0], 0), 0.9051317, TOL);
    CHECK_NEAR(at(c.out[0], 1), 2.0, 0);
    CHECK_EQ_INT(c.out[1]->dtype, MT_int64);
    CHECK_EQ_INT(((const int64_t *)c.out[1]->values)[0], 10);
    CHECK_EQ_INT(((const int64_t *)c.out[1]->values)[1], 1);
    CHECK_EQ_INT(c.out[2]->data->dtype, MT_float32);
    CHECK_NEAR(at(c.out[2]->data, 0), 3.1622777, TOL);
  }
  done(&c, (mt_tensor *[]){p, s, g}, 3);
}

TEST(int_params_are_refused_by_dense_and_sparse_and_bool_maximize_by_masked) {
  /* ADA-7: torch.optim.Adagrad cannot write the float update into an int32
   * param (DTYPE_MISMATCH naming 'Int'); the masked path of a bool grad
   * with maximize negates a bool tensor, which torch refuses. */
  mt_tensor *p = dense(MT_int32, 1, SHAPE(1), VALS(1)), *s = dense(MT_int32, 1, SHAPE(1), VALS(0));
  mt_tensor *gd = dense(MT_int32, 1, SHAPE(1), VALS(2));
  mt_tensor *pb = dense(MT_bool, 1, SHAPE(1), VALS(1)), *sb = dense(MT_bool, 1, SHAPE(1), VALS(0));
  mt_tensor *gb = masked(dense(MT_bool, 1, SHAPE(1), VALS(1)), bools(1, SHAPE(1), BITS(1)));
  mt_kwarg kv[] = {kw_bool("maximize", 1)};
  mt_kwargs kw = {1, kv};
  mt_call c;
  mt_error e;
  CHECK_STATUS(step(mt_cpu_adagrad_dense, &c, &e, p, gd, s, NULL), MT_DTYPE_MISMATCH);
  CHECK(strstr(e.msg, "'Int'") != NULL || strstr(e.msg, "type Int") != NULL);
  CHECK_STATUS(step(mt_cpu_adagrad_masked, &c, &e, pb, gb, sb, &kw), MT_DTYPE_MISMATCH);
  CHECK_EQ_INT(c.n_out, 0);
  done(&c, (mt_tensor *[]){p, s, gd, pb, sb, gb}, 6);
}

MT_TEST_MAIN(T(dense_path_reproduces_the_tutorial_two_steps),
             T(sparse_path_reproduces_the_tutorial_two_steps),
             T(masked_path_with_coo_grad_reproduces_the_tutorial_two_steps),
             T(masked_path_with_dense_storage_grad_reproduces_the_tutorial_two_steps),
             T(std_output_has_each_paths_layout), T(eps0_dense_path_is_nan_at_every_zero_gradient),
             T(eps0_sparse_path_is_nan_only_at_the_stored_zero), T(eps0_masked_path_is_never_nan),
             T(eps0_masked_path_std_masks_out_the_stored_zero),
             T(maximize_negates_the_gradient_in_every_path),
             T(lr_decay_scales_the_rate_by_the_step_count),
             T(dense_weight_decay_adds_decay_times_param_to_the_gradient),
             T(sparse_path_coalesces_duplicate_gradient_entries_first),
             T(masked_path_never_reads_masked_out_gradient_data),
             T(negative_hyper_parameters_are_rejected_with_torchs_messages),
             T(sparse_and_masked_paths_refuse_weight_decay),
             T(each_path_rejects_a_gradient_of_the_wrong_layout_or_dtype),
             T(masked_path_of_an_int64_param_returns_a_float32_param),
             T(int_params_are_refused_by_dense_and_sparse_and_bool_maximize_by_masked))

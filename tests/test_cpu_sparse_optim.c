/* test_cpu_sparse_optim.c - the CPU sparse_adam kernel: one step derived by
 * hand (SADAM-1/2), a Tensor lr (SADAM-2), the state inputs' checks and the
 * betas pair (which no golden case can reach: torch's state always matches
 * the param), and SADAM-3 before SADAM-5's dtype refusal; the sgd kernel:
 * a momentum step with sparse buffers by hand (SGD-2), integer params
 * (SGD-1). */
#include <stdlib.h>

#include "cpu_fixtures.h"
#include "mt_test.h"

static mt_kwarg kw_floats(const char *name, int n, const double *v) {
  return (mt_kwarg){.name = name, .type = MT_KW_FLOATS, .n = n, .floats = v};
}

static mt_status adam(mt_call *c, mt_error *e, const mt_tensor *p, const mt_tensor *g,
                      const mt_tensor *m, const mt_tensor *v, const mt_kwargs *kw) {
  const mt_tensor *in[] = {p, g, m, v};
  return run(mt_cpu_sparse_adam, c, e, 4, in, kw);
}

/* The inputs of the step by hand below: param [[1, 2], [3, 4]] float64, grad
 * COO (0, 1) = 0.5 (coalesced), exp_avg and exp_avg_sq zero. */
typedef struct {
  mt_tensor *p, *g, *m, *v;
} adam_in;
static adam_in hand_inputs(void) {
  adam_in in;
  in.p = dense(MT_float64, 2, SHAPE(2, 2), VALS(1, 2, 3, 4));
  in.m = dense(MT_float64, 2, SHAPE(2, 2), VALS(0, 0, 0, 0));
  in.v = dense(MT_float64, 2, SHAPE(2, 2), VALS(0, 0, 0, 0));
  in.g = coo2(MT_float64, 2, 2, 1, (const int64_t[]){0}, (const int64_t[]){1}, VALS(0.5), 1);
  return in;
}

/* param [[1, 2], [3, 4]] float64, grad COO (0, 1) = 0.5, zero state, lr 0.1,
 * betas (0.5, 0.75), eps 0.25, step 1:
 *   mu = (0.5 - 0) * (1 - 0.5) = 0.25          -> exp_avg (0,1) = 0.25
 *   vu = (0.5^2 - 0) * (1 - 0.75) = 0.0625     -> exp_avg_sq (0,1) = 0.0625
 *   denom = sqrt(0.0625) + 0.25 = 0.5 (eps outside the root)
 *   step_size = 0.1 * sqrt(1 - 0.75) / (1 - 0.5) = 0.1 * 0.5 / 0.5 = 0.1
 *   param (0,1) = 2 + (-0.1) * (0.25 / 0.5) = 1.95; every other element of
 *   the three outputs keeps its value (SADAM-1). */
TEST(one_step_by_hand_moves_only_the_gradient_entry) {
  adam_in in = hand_inputs();
  mt_kwarg kv[] = {kw_float("lr", 0.1), kw_floats("betas", 2, VALS(0.5, 0.75)),
                   kw_float("eps", 0.25), kw_int("step", 1)};
  mt_kwargs kw = {4, kv};
  mt_call c;
  mt_error e;
  CHECK_STATUS(adam(&c, &e, in.p, in.g, in.m, in.v, &kw), MT_OK);
  if (c.n_out == 3) {
    const double want_p[] = {1, 1.95, 3, 4}, want_m[] = {0, 0.25, 0, 0},
                 want_v[] = {0, 0.0625, 0, 0};
    for (int i = 0; i < 4; i++) {
      CHECK_NEAR(at(c.out[0], i), want_p[i], 1e-15);
      CHECK_NEAR(at(c.out[1], i), want_m[i], 0);
      CHECK_NEAR(at(c.out[2], i), want_v[i], 0);
    }
  }
  done(&c, (mt_tensor *[]){in.p, in.m, in.v, in.g}, 4);
}

/* The same step with lr = torch.tensor([0.1]): a float32 tensor, so lr is
 * (float)0.1 = 0.100000001490116... and step_size is computed in float32:
 * f32(f32(lr * 0.5) / 0.5) = (float)0.1 again; param (0,1) = 2 - (float)0.1
 * * 0.5, which is 7.45e-10 below 1.95. */
TEST(tensor_lr_is_float32) {
  adam_in in = hand_inputs();
  mt_kwarg kv[] = {kw_floats("lr", 1, VALS(0.1)), kw_floats("betas", 2, VALS(0.5, 0.75)),
                   kw_float("eps", 0.25), kw_int("step", 1)};
  mt_kwargs kw = {4, kv};
  mt_call c;
  mt_error e;
  CHECK_STATUS(adam(&c, &e, in.p, in.g, in.m, in.v, &kw), MT_OK);
  if (c.n_out == 3) CHECK(at(c.out[0], 1) == 2.0 - (double)(float)0.1 * 0.5);
  done(&c, NULL, 0);
  kv[0] = kw_floats("lr", 2, VALS(0.1, 0.2));
  CHECK_STATUS(adam(&c, &e, in.p, in.g, in.m, in.v, &kw), MT_INVALID_ARGUMENT);
  CHECK_HAS(e.msg, "Tensor lr must be 1-element");
  done(&c, (mt_tensor *[]){in.p, in.m, in.v, in.g}, 4);
}

TEST(state_inputs_must_match_the_param) {
  mt_tensor *p = dense(MT_float64, 2, SHAPE(2, 2), VALS(1, 2, 3, 4));
  mt_tensor *z = dense(MT_float64, 2, SHAPE(2, 2), VALS(0, 0, 0, 0));
  mt_tensor *z32 = dense(MT_float32, 2, SHAPE(2, 2), VALS(0, 0, 0, 0));
  mt_tensor *z32s = dense(MT_float64, 2, SHAPE(4, 1), VALS(0, 0, 0, 0));
  mt_tensor *g = coo2(MT_float64, 2, 2, 1, (const int64_t[]){0}, (const int64_t[]){1}, VALS(0.5),
                      1);
  mt_tensor *gc = coo2(MT_float64, 2, 2, 1, (const int64_t[]){0}, (const int64_t[]){1}, VALS(0.5),
                       1);
  mt_call c;
  mt_error e;
  CHECK_STATUS(adam(&c, &e, p, g, z32, z, NULL), MT_DTYPE_MISMATCH);
  CHECK_HAS(e.msg, "inputs/2 (exp_avg)");
  CHECK_STATUS(adam(&c, &e, p, g, z, z32s, NULL), MT_SHAPE_MISMATCH);
  CHECK_HAS(e.msg, "inputs/3 (exp_avg_sq)");
  CHECK_STATUS(adam(&c, &e, p, g, z, gc, NULL), MT_LAYOUT_MISMATCH);
  CHECK_HAS(e.msg, "must be a dense tensor");
  done(&c, (mt_tensor *[]){p, z, z32, z32s, g, gc}, 6);
}

TEST(betas_must_be_a_pair_and_may_be_ints) {
  mt_tensor *p = dense(MT_float64, 1, SHAPE(2), VALS(1, 2));
  mt_tensor *m = dense(MT_float64, 1, SHAPE(2), VALS(0.5, 0.5));
  mt_tensor *v = dense(MT_float64, 1, SHAPE(2), VALS(1, 1));
  mt_tensor *g = NULL;
  if (mt_coo_new(MT_float64, 1, SHAPE(2), 1, 1, &g, NULL) != MT_OK) abort();
  g->indices[0] = 1;
  ((double *)g->values)[0] = 2.0;
  g->coalesced = 1;
  mt_kwarg kv[] = {kw_floats("betas", 3, VALS(0.5, 0.5, 0.5))};
  mt_kwargs kw = {1, kv};
  mt_call c;
  mt_error e;
  CHECK_STATUS(adam(&c, &e, p, g, m, v, &kw), MT_INVALID_ARGUMENT);
  CHECK_HAS(e.msg, "betas must be a pair");
  /* betas = (0, 0): no averaging, exp_avg = g = 2, exp_avg_sq = g^2 = 4 */
  kv[0] = kw_ints("betas", 2, (const int64_t[]){0, 0});
  CHECK_STATUS(adam(&c, &e, p, g, m, v, &kw), MT_OK);
  if (c.n_out == 3) {
    CHECK_NEAR(at(c.out[1], 1), 2.0, 0);
    CHECK_NEAR(at(c.out[2], 1), 4.0, 0);
    CHECK_NEAR(at(c.out[1], 0), 0.5, 0);
  }
  done(&c, (mt_tensor *[]){p, m, v, g}, 4);
}

/* SADAM-3 comes first: an int64 param with an empty gradient is returned
 * unchanged (torch skips before its arithmetic refuses the dtype); with an
 * entry the dtype is refused (SADAM-5). */
TEST(empty_gradient_skips_before_the_dtype_is_refused) {
  mt_tensor *p = dense(MT_int64, 1, SHAPE(3), VALS(1, 2, 3));
  mt_tensor *z = dense(MT_int64, 1, SHAPE(3), VALS(0, 0, 0));
  mt_tensor *z2 = dense(MT_int64, 1, SHAPE(3), VALS(0, 0, 0));
  mt_tensor *g0 = NULL, *g1 = NULL;
  if (mt_coo_new(MT_int64, 1, SHAPE(3), 1, 0, &g0, NULL) != MT_OK) abort();
  if (mt_coo_new(MT_int64, 1, SHAPE(3), 1, 1, &g1, NULL) != MT_OK) abort();
  g1->indices[0] = 2;
  ((int64_t *)g1->values)[0] = 1;
  mt_call c;
  mt_error e;
  CHECK_STATUS(adam(&c, &e, p, g0, z, z2, NULL), MT_OK);
  if (c.n_out == 3)
    for (int i = 0; i < 3; i++) CHECK_NEAR(at(c.out[0], i), i + 1.0, 0);
  done(&c, NULL, 0);
  CHECK_STATUS(adam(&c, &e, p, g1, z, z2, NULL), MT_DTYPE_MISMATCH);
  CHECK_HAS(e.msg, "can't be cast");
  done(&c, (mt_tensor *[]){p, z, z2, g0, g1}, 5);
}

/* ---- sgd ---------------------------------------------------------------- */

static mt_tensor *coo1(mt_dtype dt, int64_t n, int64_t nnz, const int64_t *idx, const double *v,
                       int coalesced) {
  mt_tensor *t = NULL;
  if (mt_coo_new(dt, 1, SHAPE(n), 1, nnz, &t, NULL) != MT_OK) abort();
  for (int64_t k = 0; k < nnz; k++) {
    t->indices[k] = idx[k];
    mt_set_f64(t->values, dt, k, v[k]);
  }
  t->coalesced = coalesced;
  return t;
}

/* param [1, 2, 3] float64, grad COO {0: 1, 2: -2}, buffer COO {2: 4}
 * (coalesced), lr 0.5, momentum 0.5:
 *   buf.mul_(0.5) -> {2: 2} (its coalesced flag cleared);
 *   buf.add_(grad) merges by index -> {0: 1, 2: 2 + -2 = 0}, not coalesced;
 *   param += -0.5 * buf -> [1 - 0.5, 2, 3 - 0] = [0.5, 2, 3].
 * With nesterov: grad + 0.5 * buf -> {0: 1 + 0.5, 2: -2 + 0} -> param
 *   [1 - 0.75, 2, 3 + 1] = [0.25, 2, 4]. */
TEST(sgd_momentum_by_hand_merges_sparse_buffers) {
  mt_tensor *p = dense(MT_float64, 1, SHAPE(3), VALS(1, 2, 3));
  mt_tensor *g = coo1(MT_float64, 3, 2, (const int64_t[]){0, 2}, VALS(1, -2), 1);
  mt_tensor *b = coo1(MT_float64, 3, 1, (const int64_t[]){2}, VALS(4), 1);
  mt_kwarg kv[] = {kw_float("lr", 0.5), kw_float("momentum", 0.5), kw_bool("nesterov", 0)};
  mt_kwargs kw = {3, kv};
  const mt_tensor *in[] = {p, g, b};
  mt_call c;
  mt_error e;
  CHECK_STATUS(run(mt_cpu_sgd, &c, &e, 3, in, &kw), MT_OK);
  CHECK_EQ_INT(c.n_out, 2);
  if (c.n_out == 2) {
    CHECK(at(c.out[0], 0) == 0.5 && at(c.out[0], 1) == 2 && at(c.out[0], 2) == 3);
    const mt_tensor *nb = c.out[1];
    CHECK(nb->kind == MT_KIND_COO && nb->nnz == 2 && !nb->coalesced);
    CHECK(nb->nnz == 2 && nb->indices[0] == 0 && nb->indices[1] == 2 && at(nb, 0) == 1 &&
          at(nb, 1) == 0);
  }
  done(&c, NULL, 0);
  kv[2] = kw_bool("nesterov", 1);
  CHECK_STATUS(run(mt_cpu_sgd, &c, &e, 3, in, &kw), MT_OK);
  if (c.n_out == 2) CHECK(at(c.out[0], 0) == 0.25 && at(c.out[0], 1) == 2 && at(c.out[0], 2) == 4);
  done(&c, (mt_tensor *[]){p, g, b}, 3);
}

/* int64 param [5, 5], COO grad {1: 3}: lr 0.5 -> alpha = (int64)-0.5 = 0:
 * the param stays [5, 5]; lr 2 -> alpha -2: [5, 5 - 6] = [5, -1]. An
 * integer sparse param is not implemented here (NOT_SUPPORTED, never a
 * wrong answer). */
TEST(sgd_integer_param_truncates_alpha) {
  mt_tensor *p = dense(MT_int64, 1, SHAPE(2), VALS(5, 5));
  mt_tensor *g = coo1(MT_int64, 2, 1, (const int64_t[]){1}, VALS(3), 1);
  mt_kwarg kv[] = {kw_float("lr", 0.5)};
  mt_kwargs kw = {1, kv};
  const mt_tensor *in[] = {p, g};
  mt_call c;
  mt_error e;
  CHECK_STATUS(run(mt_cpu_sgd, &c, &e, 2, in, &kw), MT_OK);
  if (c.n_out == 1) CHECK(at(c.out[0], 0) == 5 && at(c.out[0], 1) == 5);
  done(&c, NULL, 0);
  kv[0] = kw_float("lr", 2.0);
  CHECK_STATUS(run(mt_cpu_sgd, &c, &e, 2, in, &kw), MT_OK);
  if (c.n_out == 1) CHECK(at(c.out[0], 0) == 5 && at(c.out[0], 1) == -1);
  done(&c, NULL, 0);
  const mt_tensor *sp[] = {g, g};
  CHECK_STATUS(run(mt_cpu_sgd, &c, &e, 2, sp, NULL), MT_NOT_SUPPORTED);
  done(&c, (mt_tensor *[]){p, g}, 2);
}

/* SGD-5: COO param {0: 1, 2: 2} (coalesced), COO grad {1: 0.5, 2: 1}, lr
 * 0.5: param.add_(grad, alpha=-0.5) merges by index ->
 *   {0: 1, 1: -0.5 * 0.5 = -0.25, 2: 2 + -0.5 * 1 = 1.5},
 * coalesced only when the grad is too; a dense grad is refused; float16
 * has no sparse + sparse kernel unless the grad is empty (then the param
 * comes back as it was). */
TEST(sgd_sparse_param_merges_the_gradient) {
  mt_tensor *p = coo1(MT_float64, 3, 2, (const int64_t[]){0, 2}, VALS(1, 2), 1);
  mt_tensor *g = coo1(MT_float64, 3, 2, (const int64_t[]){1, 2}, VALS(0.5, 1), 1);
  mt_tensor *gu = coo1(MT_float64, 3, 2, (const int64_t[]){1, 2}, VALS(0.5, 1), 0);
  mt_tensor *gd = dense(MT_float64, 1, SHAPE(3), VALS(1, 1, 1));
  mt_tensor *h = coo1(MT_float16, 3, 1, (const int64_t[]){0}, VALS(1), 1);
  mt_tensor *h0 = coo1(MT_float16, 3, 0, NULL, NULL, 1);
  mt_kwarg kv[] = {kw_float("lr", 0.5)};
  mt_kwargs kw = {1, kv};
  mt_call c;
  mt_error e;
  CHECK_STATUS(run(mt_cpu_sgd, &c, &e, 2, (const mt_tensor *[]){p, g}, &kw), MT_OK);
  if (c.n_out == 1) {
    const mt_tensor *o = c.out[0];
    CHECK(o->kind == MT_KIND_COO && o->nnz == 3 && o->coalesced);
    CHECK(o->nnz == 3 && o->indices[0] == 0 && o->indices[1] == 1 && o->indices[2] == 2);
    CHECK(o->nnz == 3 && at(o, 0) == 1 && at(o, 1) == -0.25 && at(o, 2) == 1.5);
  }
  done(&c, NULL, 0);
  CHECK_STATUS(run(mt_cpu_sgd, &c, &e, 2, (const mt_tensor *[]){p, gu}, &kw), MT_OK);
  if (c.n_out == 1) CHECK(c.out[0]->nnz == 3 && !c.out[0]->coalesced);
  done(&c, NULL, 0);
  CHECK_STATUS(run(mt_cpu_sgd, &c, &e, 2, (const mt_tensor *[]){p, gd}, &kw), MT_LAYOUT_MISMATCH);
  CHECK_HAS(e.msg, "data of a different type");
  CHECK_STATUS(run(mt_cpu_sgd, &c, &e, 2, (const mt_tensor *[]){h, h}, &kw), MT_DTYPE_MISMATCH);
  CHECK_HAS(e.msg, "cadd_sparse");
  CHECK_STATUS(run(mt_cpu_sgd, &c, &e, 2, (const mt_tensor *[]){h, h0}, &kw), MT_OK);
  if (c.n_out == 1) CHECK(c.out[0]->nnz == 1 && at(c.out[0], 0) == 1);
  done(&c, (mt_tensor *[]){p, g, gu, gd, h, h0}, 6);
}

MT_TEST_MAIN(T(sgd_sparse_param_merges_the_gradient),
             T(sgd_momentum_by_hand_merges_sparse_buffers), T(sgd_integer_param_truncates_alpha),
             T(one_step_by_hand_moves_only_the_gradient_entry), T(tensor_lr_is_float32),
             T(state_inputs_must_match_the_param), T(betas_must_be_a_pair_and_may_be_ints),
             T(empty_gradient_skips_before_the_dtype_is_refused))

/* test_cpu_grad_unary.c - the backward kernels of the MaskedTensor unary ops
 * (impl/cpu/grad_unary.c through grad_ew.c): derivative values at the
 * specified elements only (GRAD-2), the input's mask and storage kept
 * (GRAD-1, GRAD-8), sgn's plain zeros (GRAD-7) and torch's refusals
 * (GRAD-5). Inputs are literals; expected values are derived by hand in the
 * comments (the goldens check torch's own numbers). */
#include <math.h>
#include <stdlib.h>

#include "cpu_fixtures.h"
#include "mt_test.h"

/* Runs backward kernel fn on the inputs with upstream gradient g. */
static mt_status back(mt_kernel_fn fn, mt_call *call, mt_error *err, int n_in,
                      const mt_tensor *const *in, const mt_tensor *g) {
  const mt_tensor *gs[1] = {g}; /* read only during the call */
  return run_backward(fn, call, err, n_in, in, NULL, 1, gs);
}

/* a masked float64 [n] with mask b */
static mt_tensor *m1(int n, const double *v, const int *b) {
  return masked(dense(MT_float64, 1, SHAPE(n), v), bools(1, SHAPE(n), b));
}

TEST(sin_gradient_is_g_cos_x_at_specified_elements_with_the_input_mask) {
  /* x = [0, pi, NaN(masked out)], g = [2, 3, NaN(masked out)]:
   * grad = [2 cos 0, 3 cos pi, -] = [2, -3, -], mask [1, 1, 0] */
  mt_tensor *x = m1(3, VALS(0, M_PI, NAN), BITS(1, 1, 0));
  mt_tensor *g = m1(3, VALS(2, 3, NAN), BITS(1, 1, 0));
  mt_call c;
  mt_error e;
  CHECK_STATUS(back(mt_cpu_grad_sin, &c, &e, 1, (const mt_tensor *[]){x}, g), MT_OK);
  CHECK_EQ_INT(c.n_out, 1);
  CHECK_EQ_INT(c.out[0]->kind, MT_KIND_MASKED);
  CHECK_EQ_INT(c.out[0]->data->dtype, MT_float64);
  CHECK_NEAR(at(c.out[0]->data, 0), 2, 1e-15);
  CHECK_NEAR(at(c.out[0]->data, 1), -3, 1e-15);
  CHECK_EQ_INT(bit(c.out[0]->mask, 0), 1);
  CHECK_EQ_INT(bit(c.out[0]->mask, 2), 0);
  CHECK(!isnan(at(c.out[0]->data, 2))); /* masked-out poison never read */
  done(&c, (mt_tensor *[]){x, g}, 2);
}

TEST(pow_gradient_is_g_e_x_to_the_e_minus_1_and_exponent_0_is_refused) {
  /* pow(x, 2.5) at x = [4, 0]: 2.5 x^1.5 = [20, 0], times g = [1, 5] */
  mt_tensor *x = m1(2, VALS(4, 0), BITS(1, 1));
  mt_tensor *g = m1(2, VALS(1, 5), BITS(1, 1));
  mt_tensor *e = number(2.5), *zero = number(0.0);
  mt_call c;
  mt_error err;
  CHECK_STATUS(back(mt_cpu_grad_pow, &c, &err, 2, (const mt_tensor *[]){x, e}, g), MT_OK);
  CHECK_EQ_INT(c.n_out, 2);
  CHECK(c.out[1] == NULL); /* a number exponent gets no gradient */
  CHECK_NEAR(at(c.out[0]->data, 0), 20, 1e-12);
  CHECK_NEAR(at(c.out[0]->data, 1), 0, 0);
  done(&c, NULL, 0);
  /* pow_backward's exponent 0 asks zeros_like, which MaskedTensor lacks */
  CHECK_STATUS(back(mt_cpu_grad_pow, &c, &err, 2, (const mt_tensor *[]){x, zero}, g),
               MT_LAYOUT_MISMATCH);
  CHECK_HAS(err.msg, "zeros_like");
  done(&c, (mt_tensor *[]){x, g, e, zero}, 4);
}

TEST(float32_gradient_is_rounded_once_and_keeps_negative_zero) {
  /* exp(-inf) = 0: g = -1 gives -0.0 (the sign survives: nothing is summed);
   * log(3) grad = 1/3 rounded once to float32 */
  mt_tensor *x = masked(dense(MT_float32, 1, SHAPE(2), VALS(-INFINITY, 3)),
                        bools(1, SHAPE(2), BITS(1, 1)));
  mt_tensor *g = masked(dense(MT_float32, 1, SHAPE(2), VALS(-1, 1)),
                        bools(1, SHAPE(2), BITS(1, 1)));
  mt_call c;
  mt_error e;
  CHECK_STATUS(back(mt_cpu_grad_exp, &c, &e, 1, (const mt_tensor *[]){x}, g), MT_OK);
  CHECK_EQ_INT(c.out[0]->data->dtype, MT_float32);
  CHECK(at(c.out[0]->data, 0) == 0 && signbit(at(c.out[0]->data, 0)));
  done(&c, NULL, 0);
  CHECK_STATUS(back(mt_cpu_grad_log, &c, &e, 1, (const mt_tensor *[]){x}, g), MT_OK);
  CHECK(at(c.out[0]->data, 1) == (double)(float)(1.0 / 3.0));
  done(&c, (mt_tensor *[]){x, g}, 2);
}

TEST(abs_and_nan_to_num_gradients_at_special_values) {
  /* abs: g sgn(x), sgn(NaN) = sgn(0) = 0: x = [-2, 0, NaN] -> [-g, 0, 0];
   * nan_to_num: g where x is finite: x = [1, inf, NaN] -> [g, 0, 0] */
  mt_tensor *x = m1(3, VALS(-2, 0, NAN), BITS(1, 1, 1));
  mt_tensor *y = m1(3, VALS(1, INFINITY, NAN), BITS(1, 1, 1));
  mt_tensor *g = m1(3, VALS(3, 3, 3), BITS(1, 1, 1));
  mt_call c;
  mt_error e;
  CHECK_STATUS(back(mt_cpu_grad_abs, &c, &e, 1, (const mt_tensor *[]){x}, g), MT_OK);
  CHECK_NEAR(at(c.out[0]->data, 0), -3, 0);
  CHECK_NEAR(at(c.out[0]->data, 1), 0, 0);
  CHECK_NEAR(at(c.out[0]->data, 2), 0, 0);
  done(&c, NULL, 0);
  CHECK_STATUS(back(mt_cpu_grad_nan_to_num, &c, &e, 1, (const mt_tensor *[]){y}, g), MT_OK);
  CHECK_NEAR(at(c.out[0]->data, 0), 3, 0);
  CHECK_NEAR(at(c.out[0]->data, 1), 0, 0);
  CHECK_NEAR(at(c.out[0]->data, 2), 0, 0);
  done(&c, (mt_tensor *[]){x, y, g}, 3);
}

TEST(coo_storage_gradient_is_coo_on_the_gradient_indices) {
  /* COO x with entries (0,1) = 1 (specified), (1,0) = 5 (masked out);
   * square: 2 x g = 2 * 1 * 3 = 6 at (0,1) */
  mt_tensor *x = masked(coo2(MT_float64, 2, 2, 2, (int64_t[]){0, 1}, (int64_t[]){1, 0},
                             VALS(1, 5), 1),
                        coo2(MT_bool, 2, 2, 2, (int64_t[]){0, 1}, (int64_t[]){1, 0}, VALS(1, 0),
                             1));
  mt_tensor *g = masked(coo2(MT_float64, 2, 2, 2, (int64_t[]){0, 1}, (int64_t[]){1, 0},
                             VALS(3, NAN), 1),
                        coo2(MT_bool, 2, 2, 2, (int64_t[]){0, 1}, (int64_t[]){1, 0}, VALS(1, 0),
                             1));
  mt_call c;
  mt_error e;
  CHECK_STATUS(back(mt_cpu_grad_square, &c, &e, 1, (const mt_tensor *[]){x}, g), MT_OK);
  CHECK_EQ_INT(c.out[0]->data->kind, MT_KIND_COO);
  CHECK_EQ_INT(c.out[0]->mask->kind, MT_KIND_COO);
  CHECK_EQ_INT(c.out[0]->data->nnz, 2);
  CHECK_NEAR(at(c.out[0]->data, 0), 6, 0);
  CHECK_EQ_INT(bit(c.out[0]->mask, 0), 1);
  CHECK_EQ_INT(bit(c.out[0]->mask, 1), 0);
  done(&c, NULL, 0);
  /* log1p's g / (x + 1) adds a dense 1 to sparse storage: torch refuses */
  CHECK_STATUS(back(mt_cpu_grad_log1p, &c, &e, 1, (const mt_tensor *[]){x}, g),
               MT_LAYOUT_MISMATCH);
  /* sgn's ZeroTensor has no sparse kernel */
  CHECK_STATUS(back(mt_cpu_grad_sgn, &c, &e, 1, (const mt_tensor *[]){x}, g),
               MT_LAYOUT_MISMATCH);
  done(&c, (mt_tensor *[]){x, g}, 2);
}

TEST(sgn_gradient_is_plain_dense_zeros) {
  /* GRAD-7: torch materializes sgn's ZeroTensor: dense zeros, no mask */
  mt_tensor *x = m1(2, VALS(-1, 2), BITS(1, 0));
  mt_tensor *g = m1(2, VALS(4, 4), BITS(1, 0));
  mt_call c;
  mt_error e;
  CHECK_STATUS(back(mt_cpu_grad_sgn, &c, &e, 1, (const mt_tensor *[]){x}, g), MT_OK);
  CHECK_EQ_INT(c.out[0]->kind, MT_KIND_DENSE);
  CHECK_NEAR(at(c.out[0], 0), 0, 0);
  CHECK_NEAR(at(c.out[0], 1), 0, 0);
  done(&c, (mt_tensor *[]){x, g}, 2);
}

TEST(refused_backwards_name_the_missing_handler) {
  /* tanh's derivative calls aten.tanh_backward, ceil's zeros_like: torch's
   * MaskedTensor has no handler (the goldens' LAYOUT_MISMATCH) */
  mt_tensor *x = m1(1, VALS(0.5), BITS(1));
  mt_tensor *g = m1(1, VALS(1), BITS(1));
  mt_call c;
  mt_error e;
  CHECK_STATUS(back(mt_cpu_grad_tanh, &c, &e, 1, (const mt_tensor *[]){x}, g),
               MT_LAYOUT_MISMATCH);
  CHECK_HAS(e.msg, "tanh_backward");
  CHECK_EQ_INT(c.n_out, 0);
  CHECK_STATUS(back(mt_cpu_grad_ceil, &c, &e, 1, (const mt_tensor *[]){x}, g),
               MT_LAYOUT_MISMATCH);
  CHECK_HAS(e.msg, "zeros_like");
  done(&c, (mt_tensor *[]){x, g}, 2);
}

TEST(plain_input_is_not_this_kernels) {
  /* a plain (not masked) input is grad_sparse.c's: NOT_SUPPORTED here */
  mt_tensor *x = dense(MT_float64, 1, SHAPE(1), VALS(1));
  mt_tensor *g = m1(1, VALS(1), BITS(1));
  mt_call c;
  mt_error e;
  CHECK_STATUS(back(mt_cpu_grad_sin, &c, &e, 1, (const mt_tensor *[]){x}, g), MT_NOT_SUPPORTED);
  done(&c, (mt_tensor *[]){x, g}, 2);
}

MT_TEST_MAIN(T(sin_gradient_is_g_cos_x_at_specified_elements_with_the_input_mask),
             T(pow_gradient_is_g_e_x_to_the_e_minus_1_and_exponent_0_is_refused),
             T(float32_gradient_is_rounded_once_and_keeps_negative_zero),
             T(abs_and_nan_to_num_gradients_at_special_values),
             T(coo_storage_gradient_is_coo_on_the_gradient_indices),
             T(sgn_gradient_is_plain_dense_zeros),
             T(refused_backwards_name_the_missing_handler),
             T(plain_input_is_not_this_kernels))

/* test_cpu_grad_reduce.c - the CPU backward kernels of the MaskedTensor
 * reductions (impl/cpu/grad_reduce.c): the gradient's mask (GRAD-1, GRAD-3),
 * mean's count, amax/amin's ties, prod's zeros and NaN, var/std's
 * correction, and the refusals. Inputs are literals; every expected value is
 * derived by hand in the comment above its check (torch 2.15 gives the same:
 * the grad_masked goldens hold cases of each rule). */
#include <math.h>
#include <stdlib.h>

#include "cpu_fixtures.h"
#include "mt_test.h"

/* A float64 masked tensor of shape (ndim, shape). */
static mt_tensor *m64(int ndim, const int64_t *shape, const double *v, const int *b) {
  return masked(dense(MT_float64, ndim, shape, v), bools(ndim, shape, b));
}

/* A 0-d masked upstream gradient v (specified). */
static mt_tensor *g0(double v) { return m64(0, NULL, VALS(v), BITS(1)); }

TEST(sum_over_dim_gives_each_element_its_rows_gradient_under_the_input_mask) {
  /* sum(x, dim=1, keepdim=True) of [[1, 2], [3, 4]], mask [[1, 0], [1, 1]];
   * upstream [[10], [20]]: every element of row r gets g[r], the mask is
   * the input's (GRAD-1) */
  mt_tensor *x = m64(2, SHAPE(2, 2), VALS(1, 2, 3, 4), BITS(1, 0, 1, 1));
  mt_tensor *g = m64(2, SHAPE(2, 1), VALS(10, 20), BITS(1, 1));
  mt_kwarg items[] = {kw_int("dim", 1), kw_bool("keepdim", 1)};
  mt_kwargs kw = {2, items};
  mt_call c;
  mt_error e;
  CHECK_STATUS(run_backward(mt_cpu_grad_sum, &c, &e, 1, (const mt_tensor *[]){x}, &kw, 1,
                        (const mt_tensor *[]){g}), MT_OK);
  CHECK_EQ_INT(c.n_out, 1);
  CHECK_EQ_INT(c.out[0]->kind, MT_KIND_MASKED);
  CHECK_NEAR(at(c.out[0]->data, 0), 10, 0);
  CHECK_NEAR(at(c.out[0]->data, 2), 20, 0);
  CHECK_NEAR(at(c.out[0]->data, 3), 20, 0);
  for (int i = 0; i < 4; i++) CHECK_EQ_INT(bit(c.out[0]->mask, i), i != 1);
  done(&c, (mt_tensor *[]){x, g}, 2);
}

TEST(mean_divides_by_the_count_of_specified_elements) {
  /* mean(x, dim=1) of [[1, 2, 3]], mask [[1, 0, 1]]: 2 specified, upstream
   * [6]: each specified element gets 6 / 2 = 3 */
  mt_tensor *x = m64(2, SHAPE(1, 3), VALS(1, NAN_POISON, 3), BITS(1, 0, 1));
  mt_tensor *g = m64(1, SHAPE(1), VALS(6), BITS(1));
  mt_kwarg items[] = {kw_int("dim", 1)};
  mt_kwargs kw = {1, items};
  mt_call c;
  mt_error e;
  CHECK_STATUS(run_backward(mt_cpu_grad_mean, &c, &e, 1, (const mt_tensor *[]){x}, &kw, 1,
                        (const mt_tensor *[]){g}), MT_OK);
  CHECK_NEAR(at(c.out[0]->data, 0), 3, 0);
  CHECK_NEAR(at(c.out[0]->data, 2), 3, 0);
  done(&c, (mt_tensor *[]){x, g}, 2);
}

TEST(amax_spreads_the_gradient_evenly_over_ties) {
  /* amax of [3, 3, 1, 3(masked out)]: the result 3 ties at 0 and 1 (the
   * masked-out 3 is the fill -inf): upstream 2 -> [1, 1, 0] */
  mt_tensor *x = m64(1, SHAPE(4), VALS(3, 3, 1, 3), BITS(1, 1, 1, 0));
  mt_tensor *g = g0(2);
  mt_call c;
  mt_error e;
  CHECK_STATUS(run_backward(mt_cpu_grad_amax, &c, &e, 1, (const mt_tensor *[]){x}, NULL, 1,
                        (const mt_tensor *[]){g}), MT_OK);
  CHECK_NEAR(at(c.out[0]->data, 0), 1, 0);
  CHECK_NEAR(at(c.out[0]->data, 1), 1, 0);
  CHECK_NEAR(at(c.out[0]->data, 2), 0, 0);
  done(&c, (mt_tensor *[]){x, g}, 2);
}

TEST(amin_of_a_nan_slice_gives_nan_everywhere_in_it) {
  /* amin of [1, NaN] is NaN, which equals no element: ties = 0 and
   * (g / 0) * 0 = NaN for both */
  mt_tensor *x = m64(1, SHAPE(2), VALS(1, NAN), BITS(1, 1));
  mt_tensor *g = g0(1);
  mt_call c;
  mt_error e;
  CHECK_STATUS(run_backward(mt_cpu_grad_amin, &c, &e, 1, (const mt_tensor *[]){x}, NULL, 1,
                        (const mt_tensor *[]){g}), MT_OK);
  CHECK(isnan(at(c.out[0]->data, 0)));
  CHECK(isnan(at(c.out[0]->data, 1)));
  done(&c, (mt_tensor *[]){x, g}, 2);
}

TEST(prod_with_a_zero_gives_the_product_of_the_others) {
  /* prod of [1, 0, 2, 3], upstream 2: only the zero's gradient is nonzero,
   * 2 * (1 * 2 * 3) = 12; the others' products hold the zero: 0 */
  mt_tensor *x = m64(1, SHAPE(4), VALS(1, 0, 2, 3), BITS(1, 1, 1, 1));
  mt_tensor *g = g0(2);
  mt_call c;
  mt_error e;
  CHECK_STATUS(run_backward(mt_cpu_grad_prod, &c, &e, 1, (const mt_tensor *[]){x}, NULL, 1,
                        (const mt_tensor *[]){g}), MT_OK);
  CHECK_NEAR(at(c.out[0]->data, 0), 0, 0);
  CHECK_NEAR(at(c.out[0]->data, 1), 12, 0);
  CHECK_NEAR(at(c.out[0]->data, 2), 0, 0);
  CHECK_NEAR(at(c.out[0]->data, 3), 0, 0);
  done(&c, (mt_tensor *[]){x, g}, 2);
}

TEST(prod_counts_a_masked_out_element_as_one) {
  /* prod of [1, 0(masked out), 2, 3] = 6, no specified zero: g * 6 / x with
   * g = 2 -> [12, -, 6, 4] */
  mt_tensor *x = m64(1, SHAPE(4), VALS(1, 0, 2, 3), BITS(1, 0, 1, 1));
  mt_tensor *g = g0(2);
  mt_call c;
  mt_error e;
  CHECK_STATUS(run_backward(mt_cpu_grad_prod, &c, &e, 1, (const mt_tensor *[]){x}, NULL, 1,
                        (const mt_tensor *[]){g}), MT_OK);
  CHECK_NEAR(at(c.out[0]->data, 0), 12, 0);
  CHECK_NEAR(at(c.out[0]->data, 2), 6, 0);
  CHECK_NEAR(at(c.out[0]->data, 3), 4, 0);
  CHECK_EQ_INT(bit(c.out[0]->mask, 1), 0);
  done(&c, (mt_tensor *[]){x, g}, 2);
}

TEST(prod_with_a_nan_and_no_zero_is_nan_everywhere) {
  /* no zero: g * (result / x) with result NaN -> NaN, the NaN itself too
   * (torch's formula, not the product of the others) */
  mt_tensor *x = m64(1, SHAPE(3), VALS(1, NAN, 2), BITS(1, 1, 1));
  mt_tensor *g = g0(1);
  mt_call c;
  mt_error e;
  CHECK_STATUS(run_backward(mt_cpu_grad_prod, &c, &e, 1, (const mt_tensor *[]){x}, NULL, 1,
                        (const mt_tensor *[]){g}), MT_OK);
  for (int i = 0; i < 3; i++) CHECK(isnan(at(c.out[0]->data, i)));
  done(&c, (mt_tensor *[]){x, g}, 2);
}

TEST(var_and_std_use_correction_one) {
  /* [1, 3(masked out poison), 3]: specified [1, 3], mean 2, d = [-1, 1],
   * var = 2 / (2 - 1) = 2. var's gradient 2 d / 1 = [-2, 2] (the mean's
   * share, -sum(2d)/2, is 0); std's: d / sqrt(2) = [-0.7071.., 0.7071..] */
  mt_tensor *x = m64(1, SHAPE(3), VALS(1, 1e30, 3), BITS(1, 0, 1));
  mt_tensor *g = g0(1);
  mt_call c;
  mt_error e;
  CHECK_STATUS(run_backward(mt_cpu_grad_var, &c, &e, 1, (const mt_tensor *[]){x}, NULL, 1,
                        (const mt_tensor *[]){g}), MT_OK);
  CHECK_NEAR(at(c.out[0]->data, 0), -2, 1e-15);
  CHECK_NEAR(at(c.out[0]->data, 2), 2, 1e-15);
  done(&c, NULL, 0);
  CHECK_STATUS(run_backward(mt_cpu_grad_std, &c, &e, 1, (const mt_tensor *[]){x}, NULL, 1,
                        (const mt_tensor *[]){g}), MT_OK);
  CHECK_NEAR(at(c.out[0]->data, 0), -1 / sqrt(2.0), 1e-15);
  CHECK_NEAR(at(c.out[0]->data, 2), 1 / sqrt(2.0), 1e-15);
  done(&c, (mt_tensor *[]){x, g}, 2);
}

TEST(var_of_one_specified_element_is_nan) {
  /* one element: var = 0 / max(1 - 1, 0) = NaN; its gradient (g / 0) * 2 *
   * 0 = NaN, as torch's */
  mt_tensor *x = m64(1, SHAPE(2), VALS(5, 7), BITS(1, 0));
  mt_tensor *g = g0(1);
  mt_call c;
  mt_error e;
  CHECK_STATUS(run_backward(mt_cpu_grad_var, &c, &e, 1, (const mt_tensor *[]){x}, NULL, 1,
                        (const mt_tensor *[]){g}), MT_OK);
  CHECK(isnan(at(c.out[0]->data, 0)));
  done(&c, (mt_tensor *[]){x, g}, 2);
}

TEST(a_fully_masked_input_gets_a_fully_masked_gradient) {
  /* GRAD-3: sum of an all-false mask; the upstream gradient is masked out
   * too (its poison never reaches a specified value: there is none) */
  mt_tensor *x = m64(1, SHAPE(3), VALS(1, 2, 3), BITS(0, 0, 0));
  mt_tensor *g = m64(0, NULL, VALS(NAN), BITS(0));
  mt_call c;
  mt_error e;
  CHECK_STATUS(run_backward(mt_cpu_grad_sum, &c, &e, 1, (const mt_tensor *[]){x}, NULL, 1,
                        (const mt_tensor *[]){g}), MT_OK);
  for (int i = 0; i < 3; i++) CHECK_EQ_INT(bit(c.out[0]->mask, i), 0);
  done(&c, (mt_tensor *[]){x, g}, 2);
}

TEST(a_float32_input_gets_a_float32_gradient_from_a_float64_upstream) {
  /* sum(x, 0, dtype=float64) of float32 x: the upstream gradient is float64,
   * the input's gradient float32 (0.1 rounded once to float) */
  mt_tensor *x = masked(dense(MT_float32, 1, SHAPE(2), VALS(1, 2)), bools(1, SHAPE(2), BITS(1, 1)));
  mt_tensor *g = g0(0.1);
  mt_kwarg items[] = {kw_int("dim", 0), {.name = "dtype", .type = MT_KW_STR, .s = "float64"}};
  mt_kwargs kw = {2, items};
  mt_call c;
  mt_error e;
  CHECK_STATUS(run_backward(mt_cpu_grad_sum, &c, &e, 1, (const mt_tensor *[]){x}, &kw, 1,
                        (const mt_tensor *[]){g}), MT_OK);
  CHECK_EQ_INT(c.out[0]->data->dtype, MT_float32);
  CHECK_NEAR(at(c.out[0]->data, 1), (double)0.1f, 0);
  done(&c, (mt_tensor *[]){x, g}, 2);
}

TEST(an_upstream_gradient_of_the_wrong_size_is_refused) {
  /* sum over dim 1 of a [2, 2] input has 2 outputs, not 3 */
  mt_tensor *x = m64(2, SHAPE(2, 2), VALS(1, 2, 3, 4), BITS(1, 1, 1, 1));
  mt_tensor *g = m64(1, SHAPE(3), VALS(1, 2, 3), BITS(1, 1, 1));
  mt_kwarg items[] = {kw_int("dim", 1)};
  mt_kwargs kw = {1, items};
  mt_call c;
  mt_error e;
  CHECK_STATUS(run_backward(mt_cpu_grad_sum, &c, &e, 1, (const mt_tensor *[]){x}, &kw, 1,
                        (const mt_tensor *[]){g}), MT_SHAPE_MISMATCH);
  CHECK_EQ_INT(c.n_out, 0);
  CHECK_HAS(e.msg, "upstream gradient");
  CHECK_STATUS(run_backward(mt_cpu_grad_sum, &c, &e, 1, (const mt_tensor *[]){x}, &kw, 0, NULL),
               MT_INVALID_ARGUMENT);
  done(&c, (mt_tensor *[]){x, g}, 2);
}

MT_TEST_MAIN(T(sum_over_dim_gives_each_element_its_rows_gradient_under_the_input_mask),
             T(mean_divides_by_the_count_of_specified_elements),
             T(amax_spreads_the_gradient_evenly_over_ties),
             T(amin_of_a_nan_slice_gives_nan_everywhere_in_it),
             T(prod_with_a_zero_gives_the_product_of_the_others),
             T(prod_counts_a_masked_out_element_as_one),
             T(prod_with_a_nan_and_no_zero_is_nan_everywhere),
             T(var_and_std_use_correction_one), T(var_of_one_specified_element_is_nan),
             T(a_fully_masked_input_gets_a_fully_masked_gradient),
             T(a_float32_input_gets_a_float32_gradient_from_a_float64_upstream),
             T(an_upstream_gradient_of_the_wrong_size_is_refused))

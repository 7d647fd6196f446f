/* test_npma.c - the reference backend's numpy_ma profile (impl/cpu/npma_*.c,
 * spec/SEMANTICS.md NPMA-*): kernels called directly on literal inputs;
 * every expected value is derived by hand in a comment (numpy.ma's rules,
 * our mask convention: true = specified). */
#include <math.h>
#include <stdlib.h>

#include "cpu/npma_util.h"
#include "cpu_fixtures.h"
#include "mt_test.h"

static int neg_zero(double v) { return v == 0.0 && signbit(v); }

TEST(promotion_follows_numpy_2_with_numbers_as_0d_arrays) {
  mt_dtype r = MT_bool;
  /* float32 with a Python float (a 0-d float64 array) -> float64 */
  CHECK_EQ_INT(npma_promote(MT_float32, MT_float64, &r), 0);
  CHECK_EQ_INT(r, MT_float64);
  /* int32 with float32: int32 needs float64 -> float64 */
  CHECK_EQ_INT(npma_promote(MT_int32, MT_float32, &r), 0);
  CHECK_EQ_INT(r, MT_float64);
  /* int8 with float16: int8 fits float16 -> float16 */
  CHECK_EQ_INT(npma_promote(MT_int8, MT_float16, &r), 0);
  CHECK_EQ_INT(r, MT_float16);
  /* uint8 with int32 -> int32; bool with int8 -> int8 */
  CHECK_EQ_INT(npma_promote(MT_uint8, MT_int32, &r), 0);
  CHECK_EQ_INT(r, MT_int32);
  CHECK_EQ_INT(npma_promote(MT_bool, MT_int8, &r), 0);
  CHECK_EQ_INT(r, MT_int8);
  /* uint8 with int8 is int16: no mtcs dtype */
  CHECK_EQ_INT(npma_promote(MT_uint8, MT_int8, &r), -1);
}

TEST(binary_result_is_specified_where_both_operands_are) {
  /* a = [1, 2, 4] specified [1, 0, 1]; b = [10, 20, 40] specified [1, 1, 0]
   * NPMA-2: mask = [1, 0, 0]; data [1 + 10, a's 2, a's 4] (NPMA-7) */
  mt_tensor *a = masked(dense(MT_float64, 1, SHAPE(3), VALS(1, 2, 4)),
                        bools(1, SHAPE(3), BITS(1, 0, 1)));
  mt_tensor *b = masked(dense(MT_float64, 1, SHAPE(3), VALS(10, 20, 40)),
                        bools(1, SHAPE(3), BITS(1, 1, 0)));
  const mt_tensor *in[] = {a, b};
  mt_call c;
  mt_error e;
  CHECK_STATUS(run(mt_npma_add, &c, &e, 2, in, NULL), MT_OK);
  if (c.n_out == 1) {
    mt_tensor *o = c.out[0];
    CHECK_EQ_INT(bit(o->mask, 0), 1);
    CHECK_EQ_INT(bit(o->mask, 1), 0);
    CHECK_EQ_INT(bit(o->mask, 2), 0);
    CHECK_NEAR(at(o->data, 0), 11, 0);
    CHECK_NEAR(at(o->data, 1), 2, 0);
    CHECK_NEAR(at(o->data, 2), 4, 0);
  }
  done(&c, (mt_tensor *[]){a, b}, 2);
}

TEST(divide_masks_zero_divisors_and_adds_zero_times_a) {
  /* a = [0, -0, 1.5, 6] specified [1, 1, 1, 0]; b = [-2, 2, 0, 3] all specified.
   * 0 / -2 = -0, then + 0 * 0 = +0 -> +0.0 (specified)
   * -0 / 2 = -0, then + 0 * -0 = -0 -> -0.0 (specified)
   * 1.5 / 0: |1.5| * tiny >= 0 -> masked (NPMA-3), data 0 + 1.5 = 1.5
   * a masked: masked, data 0 + 6 = 6 (NPMA-7) */
  mt_tensor *a = masked(dense(MT_float64, 1, SHAPE(4), VALS(0, -0.0, 1.5, 6)),
                        bools(1, SHAPE(4), BITS(1, 1, 1, 0)));
  mt_tensor *b = dense(MT_float64, 1, SHAPE(4), VALS(-2, 2, 0, 3));
  const mt_tensor *in[] = {a, b};
  mt_call c;
  mt_error e;
  CHECK_STATUS(run(mt_npma_div, &c, &e, 2, in, NULL), MT_OK);
  if (c.n_out == 1) {
    mt_tensor *o = c.out[0];
    CHECK(at(o->data, 0) == 0.0 && !signbit(at(o->data, 0)));
    CHECK(neg_zero(at(o->data, 1)));
    CHECK_EQ_INT(bit(o->mask, 0), 1);
    CHECK_EQ_INT(bit(o->mask, 1), 1);
    CHECK_EQ_INT(bit(o->mask, 2), 0);
    CHECK_EQ_INT(bit(o->mask, 3), 0);
    CHECK_NEAR(at(o->data, 2), 1.5, 0);
    CHECK_NEAR(at(o->data, 3), 6, 0);
  }
  done(&c, (mt_tensor *[]){a, b}, 2);
}

TEST(log_masks_its_domain_and_non_finite_results) {
  /* x = [-1, 0, 1, inf], all specified: log masks x <= 0 and log(inf) = inf
   * (not finite); log(1) = 0 stays. Masked-out data = the input. */
  mt_tensor *x = masked(dense(MT_float64, 1, SHAPE(4), VALS(-1, 0, 1, INFINITY)),
                        bools(1, SHAPE(4), BITS(1, 1, 1, 1)));
  const mt_tensor *in[] = {x};
  mt_call c;
  mt_error e;
  CHECK_STATUS(run(mt_npma_log, &c, &e, 1, in, NULL), MT_OK);
  if (c.n_out == 1) {
    mt_tensor *o = c.out[0];
    CHECK_EQ_INT(bit(o->mask, 0), 0);
    CHECK_EQ_INT(bit(o->mask, 1), 0);
    CHECK_EQ_INT(bit(o->mask, 2), 1);
    CHECK_EQ_INT(bit(o->mask, 3), 0);
    CHECK_NEAR(at(o->data, 0), -1, 0);
    CHECK_NEAR(at(o->data, 2), 0, 0);
  }
  done(&c, (mt_tensor *[]){x}, 1);
}

TEST(float32_plus_a_python_float_is_float64) {
  /* numpy.ma makes 0.1 a 0-d float64 array: float32 1 + 0.1 is computed in
   * double: 1.1 (float64), not float32(1.1) */
  mt_tensor *a = masked(dense(MT_float32, 1, SHAPE(1), VALS(1)), bools(1, SHAPE(1), BITS(1)));
  mt_tensor *n = number(0.1);
  const mt_tensor *in[] = {a, n};
  mt_call c;
  mt_error e;
  CHECK_STATUS(run(mt_npma_add, &c, &e, 2, in, NULL), MT_OK);
  if (c.n_out == 1) {
    CHECK_EQ_INT(c.out[0]->data->dtype, MT_float64);
    CHECK_NEAR(at(c.out[0]->data, 0), 1.0 + 0.1, 0);
  }
  done(&c, (mt_tensor *[]){a, n}, 2);
}

TEST(fully_masked_all_reduce_is_masked_with_data_zero_and_min_rows_hold_1e20) {
  /* sum of [[1, 2], [3, 4]] with nothing specified: np.ma.masked -> 0-d,
   * mask false, data 0 */
  mt_tensor *m = masked(dense(MT_float32, 2, SHAPE(2, 2), VALS(1, 2, 3, 4)),
                        bools(2, SHAPE(2, 2), BITS(0, 0, 0, 0)));
  const mt_tensor *in[] = {m};
  mt_call c;
  mt_error e;
  CHECK_STATUS(run(mt_npma_sum, &c, &e, 1, in, NULL), MT_OK);
  if (c.n_out == 1) {
    CHECK_EQ_INT(c.out[0]->ndim, 0);
    CHECK_EQ_INT(bit(c.out[0]->mask, 0), 0);
    CHECK_NEAR(at(c.out[0]->data, 0), 0, 0);
  }
  done(&c, NULL, 0);
  /* amin over dim 1 with row 0 fully masked: fill_value 1e20 (float32:
   * 1e20f), row 1 min(3, 4) = 3 if specified [.., 1, 1] */
  mt_tensor *m2 = masked(dense(MT_float32, 2, SHAPE(2, 2), VALS(1, 2, 3, 4)),
                         bools(2, SHAPE(2, 2), BITS(0, 0, 1, 1)));
  const mt_tensor *in2[] = {m2};
  mt_kwarg kv[] = {kw_int("dim", 1)};
  mt_kwargs kw = {1, kv};
  CHECK_STATUS(run(mt_npma_amin, &c, &e, 1, in2, &kw), MT_OK);
  if (c.n_out == 1) {
    CHECK_EQ_INT(bit(c.out[0]->mask, 0), 0);
    CHECK_NEAR(at(c.out[0]->data, 0), (double)1e20f, 0);
    CHECK_EQ_INT(bit(c.out[0]->mask, 1), 1);
    CHECK_NEAR(at(c.out[0]->data, 1), 3, 0);
  }
  done(&c, (mt_tensor *[]){m, m2}, 2);
}

TEST(arctanh_masks_within_1e15_of_one_in_float64) {
  /* x = [0.9999999999999995, 0.5, -1, 2] float64, all specified: np.ma.arctanh
   * masks x > 1 - 1e-15 (0.999999999999999 in float64) or x < -1 + 1e-15
   * (NPMA-8): [masked, atanh(0.5), masked, masked]; data under them = x */
  mt_tensor *x = masked(dense(MT_float64, 1, SHAPE(4), VALS(0.9999999999999995, 0.5, -1, 2)),
                        bools(1, SHAPE(4), BITS(1, 1, 1, 1)));
  const mt_tensor *in[] = {x};
  mt_call c;
  mt_error e;
  CHECK_STATUS(run(mt_npma_arctanh, &c, &e, 1, in, NULL), MT_OK);
  if (c.n_out == 1) {
    mt_tensor *o = c.out[0];
    CHECK_EQ_INT(bit(o->mask, 0), 0);
    CHECK_EQ_INT(bit(o->mask, 1), 1);
    CHECK_EQ_INT(bit(o->mask, 2), 0);
    CHECK_EQ_INT(bit(o->mask, 3), 0);
    CHECK_NEAR(at(o->data, 0), 0.9999999999999995, 0);
    CHECK_NEAR(at(o->data, 1), 0.5493061443340549, 1e-15); /* atanh(0.5) */
  }
  done(&c, (mt_tensor *[]){x}, 1);
}

TEST(maximum_is_where_a_greater_b_so_nan_in_a_loses) {
  /* a = [NaN, 1, -0.0], b = [1, NaN, 0.0], all specified (NPMA-11):
   * where(a > b, a, b) = [1, NaN, +0.0] */
  mt_tensor *a = masked(dense(MT_float64, 1, SHAPE(3), VALS(NAN, 1, -0.0)),
                        bools(1, SHAPE(3), BITS(1, 1, 1)));
  mt_tensor *b = masked(dense(MT_float64, 1, SHAPE(3), VALS(1, NAN, 0.0)),
                        bools(1, SHAPE(3), BITS(1, 1, 1)));
  const mt_tensor *in[] = {a, b};
  mt_call c;
  mt_error e;
  CHECK_STATUS(run(mt_npma_maximum, &c, &e, 2, in, NULL), MT_OK);
  if (c.n_out == 1) {
    mt_tensor *o = c.out[0];
    CHECK_NEAR(at(o->data, 0), 1, 0);
    CHECK(isnan(at(o->data, 1)));
    CHECK(at(o->data, 2) == 0.0 && !signbit(at(o->data, 2)));
  }
  done(&c, (mt_tensor *[]){a, b}, 2);
}

TEST(argmin_masked_element_ties_with_a_specified_inf_and_wins_first) {
  /* rows [inf, inf] specified [0, 1] and [5, 2] specified [0, 0] (NPMA-13):
   * filled with inf: row 0 [inf, inf] -> 0, row 1 fully masked -> 0;
   * a plain int64 tensor */
  mt_tensor *m = masked(dense(MT_float32, 2, SHAPE(2, 2), VALS(INFINITY, INFINITY, 5, 2)),
                        bools(2, SHAPE(2, 2), BITS(0, 1, 0, 0)));
  const mt_tensor *in[] = {m};
  mt_kwarg kv[] = {kw_int("dim", 1)};
  mt_kwargs kw = {1, kv};
  mt_call c;
  mt_error e;
  CHECK_STATUS(run(mt_npma_argmin, &c, &e, 1, in, &kw), MT_OK);
  if (c.n_out == 1) {
    CHECK_EQ_INT(c.out[0]->kind, MT_KIND_DENSE);
    CHECK_EQ_INT(c.out[0]->dtype, MT_int64);
    CHECK_NEAR(at(c.out[0], 0), 0, 0);
    CHECK_NEAR(at(c.out[0], 1), 0, 0);
  }
  done(&c, (mt_tensor *[]){m}, 1);
}

TEST(masked_tensor_takes_a_float_mask_nonzero_specified) {
  /* mask [0, 2.5, NaN]: logical_not gives numpy's [True, False, False], so
   * ours is [0, 1, 1] (NaN is nonzero) */
  mt_tensor *d = dense(MT_float64, 1, SHAPE(3), VALS(1, 2, 3));
  mt_tensor *k = dense(MT_float32, 1, SHAPE(3), VALS(0, 2.5, NAN));
  const mt_tensor *in[] = {d, k};
  mt_call c;
  mt_error e;
  CHECK_STATUS(run(mt_npma_masked_tensor, &c, &e, 2, in, NULL), MT_OK);
  if (c.n_out == 1) {
    CHECK_EQ_INT(bit(c.out[0]->mask, 0), 0);
    CHECK_EQ_INT(bit(c.out[0]->mask, 1), 1);
    CHECK_EQ_INT(bit(c.out[0]->mask, 2), 1);
  }
  done(&c, (mt_tensor *[]){d, k}, 2);
}

TEST(broadcast_column_and_row_operands_keep_their_masks) {
  /* NPMA-16: a (2,1) = [[1], [2]] specified [[1], [0]]; b (3,) = [10, 20, 30]
   * specified [1, 1, 0]. The result is (2,3): element (i,j) = a[i] + b[j],
   * specified where a[i] and b[j] are (NPMA-2):
   *   row 0: 11, 21 specified; (0,2) masked (b[2] is), data a's 1 (NPMA-7)
   *   row 1: all masked (a[1] is), data a's 2 */
  mt_tensor *a = masked(dense(MT_float64, 2, SHAPE(2, 1), VALS(1, 2)),
                        bools(2, SHAPE(2, 1), BITS(1, 0)));
  mt_tensor *b = masked(dense(MT_float64, 1, SHAPE(3), VALS(10, 20, 30)),
                        bools(1, SHAPE(3), BITS(1, 1, 0)));
  const mt_tensor *in[] = {a, b};
  mt_call c;
  mt_error e;
  CHECK_STATUS(run(mt_npma_add, &c, &e, 2, in, NULL), MT_OK);
  if (c.n_out == 1) {
    mt_tensor *o = c.out[0];
    CHECK_EQ_INT(o->data->ndim, 2);
    CHECK_EQ_INT(o->data->shape[0], 2);
    CHECK_EQ_INT(o->data->shape[1], 3);
    const double want[] = {11, 21, 1, 2, 2, 2};
    const int spec[] = {1, 1, 0, 0, 0, 0};
    for (int i = 0; i < 6; i++) {
      CHECK_NEAR(at(o->data, i), want[i], 0);
      CHECK_EQ_INT(bit(o->mask, i), spec[i]);
    }
  }
  done(&c, (mt_tensor *[]){a, b}, 2);
}

TEST(shift_refuses_operands_of_different_shapes) {
  /* NPMA-16 excludes np.ma.left_shift: it rebuilds the result with a's mask
   * alone (a MaskError when shapes differ), so the reference refuses it */
  mt_tensor *a = masked(dense(MT_int64, 2, SHAPE(2, 2), VALS(1, 2, 3, 4)),
                        bools(2, SHAPE(2, 2), BITS(1, 1, 1, 1)));
  mt_tensor *b = masked(dense(MT_int64, 1, SHAPE(2), VALS(1, 2)), bools(1, SHAPE(2), BITS(1, 1)));
  const mt_tensor *in[] = {a, b};
  mt_call c;
  mt_error e;
  CHECK_STATUS(run(mt_npma_bitwise_left_shift, &c, &e, 2, in, NULL), MT_NOT_SUPPORTED);
  done(&c, (mt_tensor *[]){a, b}, 2);
}

TEST(masked_var_correction_is_ddof_and_masks_count_minus_ddof_le_0) {
  /* NPMA-17: x = [[1, 2, 4], [1, 3, 5]] specified [[1, 1, 0], [1, 1, 1]],
   * dim=1, correction=2 (numpy's ddof=2):
   *   row 0: count 2, cnt = 0 -> masked; the data is np.ma.divide's 0 + the
   *          sum of squares: mean 1.5, deviations -0.5, 0.5 -> 0.25 + 0.25 = 0.5
   *   row 1: count 3, cnt = 1; mean 3, deviations -2, 0, 2 -> 8 / 1 = 8 */
  mt_tensor *x = dense(MT_float64, 2, SHAPE(2, 3), VALS(1, 2, 4, 1, 3, 5));
  mt_tensor *m = bools(2, SHAPE(2, 3), BITS(1, 1, 0, 1, 1, 1));
  const mt_tensor *in[] = {x, m};
  mt_kwarg items[] = {kw_int("dim", 1), kw_float("correction", 2)};
  mt_kwargs kw = {2, items};
  mt_call c;
  mt_error e;
  CHECK_STATUS(run(mt_npma_masked_var, &c, &e, 2, in, &kw), MT_OK);
  if (c.n_out == 1) {
    mt_tensor *o = c.out[0];
    CHECK_EQ_INT(bit(o->mask, 0), 0);
    CHECK_NEAR(at(o->data, 0), 0.5, 0);
    CHECK_EQ_INT(bit(o->mask, 1), 1);
    CHECK_NEAR(at(o->data, 1), 8, 0);
  }
  done(&c, (mt_tensor *[]){x, m}, 2);
}

#define T(name) {#name, name}
MT_TEST_MAIN(T(promotion_follows_numpy_2_with_numbers_as_0d_arrays),
             T(binary_result_is_specified_where_both_operands_are),
             T(divide_masks_zero_divisors_and_adds_zero_times_a),
             T(log_masks_its_domain_and_non_finite_results),
             T(float32_plus_a_python_float_is_float64),
             T(fully_masked_all_reduce_is_masked_with_data_zero_and_min_rows_hold_1e20),
             T(masked_tensor_takes_a_float_mask_nonzero_specified),
             T(arctanh_masks_within_1e15_of_one_in_float64),
             T(maximum_is_where_a_greater_b_so_nan_in_a_loses),
             T(argmin_masked_element_ties_with_a_specified_inf_and_wins_first),
             T(broadcast_column_and_row_operands_keep_their_masks),
             T(shift_refuses_operands_of_different_shapes),
             T(masked_var_correction_is_ddof_and_masks_count_minus_ddof_le_0))

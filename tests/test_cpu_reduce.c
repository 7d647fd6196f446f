/* test_cpu_reduce.c - the CPU kernels of masked reductions: sum mean prod
 * amin amax (RED-1 all-reduce, RED-2 dims/keepdim, RED-3 masked-out
 * elements take the identity; fully masked outputs are the exact fill).
 * Inputs are literals; expected values are derived by hand in comments. */
#include <stdlib.h>

#include "cpu_fixtures.h"
#include "mt_test.h"

/* fixtures: tests/cpu_fixtures.h */

/* The 2x3 input used by most tests (float64):
 *   data [[1, 2, 3],        mask [[1, 0, 1],
 *         [4, P, 6]]              [0, 0, 0]]     P = NaN poison
 * row 1 is fully masked out. */
static inline mt_tensor *sample(mt_dtype dt) {
  return masked(dense(dt, 2, SHAPE(2, 3), VALS(1, 2, 3, 4, NAN_POISON, 6)),
                bools(2, SHAPE(2, 3), BITS(1, 0, 1, 0, 0, 0)));
}

/* Runs op on sample() reducing dim 1 and checks the 2 outputs:
 * row 0 -> want0 (mask true), row 1 -> fill (mask false). */
static void check_dim1(int *mt__failed, mt_kernel_fn fn, double want0, double fill) {
  mt_tensor *m = sample(MT_float64);
  mt_kwarg kv[] = {kw_int("dim", 1)};
  mt_kwargs kw = {1, kv};
  const mt_tensor *in[] = {m};
  mt_call c;
  mt_error e;
  CHECK_STATUS(run(fn, &c, &e, 1, in, &kw), MT_OK);
  if (c.n_out == 1) {
    mt_tensor *o = c.out[0];
    CHECK_EQ_INT(o->kind, MT_KIND_MASKED);
    CHECK_EQ_INT(o->ndim, 1);
    CHECK_EQ_INT(o->shape[0], 2);
    CHECK_NEAR(at(o->data, 0), want0, 1e-15);
    CHECK_EQ_INT(bit(o->mask, 0), 1);
    CHECK_NEAR(at(o->data, 1), fill, 0); /* RED-3: exactly the fill */
    CHECK_EQ_INT(bit(o->mask, 1), 0);
  }
  done(&c, (mt_tensor *[]){m}, 1);
}

TEST(sum_fully_masked_row_is_masked_out_with_zero_fill) {
  /* row 0: 1 + 3 = 4 (2 is masked out); row 1: nothing -> 0, mask false */
  check_dim1(mt__failed, mt_cpu_sum, 4, 0);
}

TEST(mean_fully_masked_row_is_masked_out_with_nan_fill) {
  /* row 0: (1 + 3) / 2 = 2; row 1: 0 / 0 = NaN */
  check_dim1(mt__failed, mt_cpu_mean, 2, NAN);
}

TEST(prod_fully_masked_row_is_masked_out_with_one_fill) {
  /* row 0: 1 * 3 = 3; row 1: identity 1 */
  check_dim1(mt__failed, mt_cpu_prod, 3, 1);
}

TEST(amin_fully_masked_row_is_masked_out_with_pos_inf_fill) {
  /* row 0: min(1, 3) = 1; row 1: +inf */
  check_dim1(mt__failed, mt_cpu_amin, 1, INFINITY);
}

TEST(amax_fully_masked_row_is_masked_out_with_neg_inf_fill) {
  /* row 0: max(1, 3) = 3; row 1: -inf */
  check_dim1(mt__failed, mt_cpu_amax, 3, -INFINITY);
}

TEST(sum_dim0_reduces_columns_and_any_masks_them) {
  /* columns: [1+0, 0+0, 3+0] -> [1, 0, 3], mask [1, 0, 1] */
  mt_tensor *m = sample(MT_float32);
  mt_kwarg kv[] = {kw_int("dim", 0)};
  mt_kwargs kw = {1, kv};
  const mt_tensor *in[] = {m};
  mt_call c;
  mt_error e;
  CHECK_STATUS(run(mt_cpu_sum, &c, &e, 1, in, &kw), MT_OK);
  mt_tensor *o = c.out[0];
  CHECK_EQ_INT(o->data->dtype, MT_float32);
  const double want[] = {1, 0, 3};
  for (int i = 0; i < 3; i++) {
    CHECK_NEAR(at(o->data, i), want[i], 0);
    CHECK_EQ_INT(bit(o->mask, i), i != 1);
  }
  done(&c, (mt_tensor *[]){m}, 1);
}

TEST(sum_negative_dim_with_keepdim_keeps_a_size_one_dim) {
  /* dim=-1 == dim 1, keepdim -> shape [2, 1]: [[4], [0]] */
  mt_tensor *m = sample(MT_float64);
  mt_kwarg kv[] = {kw_int("dim", -1), kw_bool("keepdim", 1)};
  mt_kwargs kw = {2, kv};
  const mt_tensor *in[] = {m};
  mt_call c;
  mt_error e;
  CHECK_STATUS(run(mt_cpu_sum, &c, &e, 1, in, &kw), MT_OK);
  mt_tensor *o = c.out[0];
  CHECK_EQ_INT(o->ndim, 2);
  CHECK_EQ_INT(o->shape[0], 2);
  CHECK_EQ_INT(o->shape[1], 1);
  CHECK_EQ_INT(o->data->ndim, 2);
  CHECK_NEAR(at(o->data, 0), 4, 0);
  CHECK_NEAR(at(o->data, 1), 0, 0);
  done(&c, (mt_tensor *[]){m}, 1);
}

TEST(all_reduce_gives_a_0d_output_masked_by_any) {
  /* RED-1: sum over masked-in {1, 3} = 4, mask any = true, ndim 0;
   * fully masked input: amax -> -inf, mask false */
  mt_tensor *m = sample(MT_float64);
  mt_tensor *none =
      masked(dense(MT_float64, 1, SHAPE(2), VALS(5, 6)), bools(1, SHAPE(2), BITS(0, 0)));
  mt_call c;
  mt_error e;
  CHECK_STATUS(run(mt_cpu_sum, &c, &e, 1, (const mt_tensor *[]){m}, NULL), MT_OK);
  CHECK_EQ_INT(c.out[0]->ndim, 0);
  CHECK_EQ_INT(c.out[0]->data->ndim, 0);
  CHECK_NEAR(at(c.out[0]->data, 0), 4, 0);
  CHECK_EQ_INT(bit(c.out[0]->mask, 0), 1);
  done(&c, NULL, 0);
  CHECK_STATUS(run(mt_cpu_amax, &c, &e, 1, (const mt_tensor *[]){none}, NULL), MT_OK);
  CHECK_NEAR(at(c.out[0]->data, 0), -INFINITY, 0);
  CHECK_EQ_INT(bit(c.out[0]->mask, 0), 0);
  done(&c, NULL, 0);
  CHECK_STATUS(run(mt_cpu_mean, &c, &e, 1, (const mt_tensor *[]){none}, NULL), MT_OK);
  CHECK(isnan(at(c.out[0]->data, 0)));
  done(&c, (mt_tensor *[]){m, none}, 2);
}

TEST(sum_over_a_tuple_of_dims_of_a_3d_input) {
  /* shape [2,2,2], data = 0..7, mask all true except element 7:
   * dims (0, 2) leave dim 1: j=0 -> 0+1+4+5 = 10, j=1 -> 2+3+6 = 11 */
  mt_tensor *m = masked(dense(MT_float64, 3, SHAPE(2, 2, 2), VALS(0, 1, 2, 3, 4, 5, 6, 7)),
                        bools(3, SHAPE(2, 2, 2), BITS(1, 1, 1, 1, 1, 1, 1, 0)));
  mt_kwarg kv[] = {kw_ints("dim", 2, SHAPE(0, 2))};
  mt_kwargs kw = {1, kv};
  mt_call c;
  mt_error e;
  CHECK_STATUS(run(mt_cpu_sum, &c, &e, 1, (const mt_tensor *[]){m}, &kw), MT_OK);
  CHECK_EQ_INT(c.out[0]->ndim, 1);
  CHECK_NEAR(at(c.out[0]->data, 0), 10, 0);
  CHECK_NEAR(at(c.out[0]->data, 1), 11, 0);
  done(&c, (mt_tensor *[]){m}, 1);
}

TEST(prod_with_a_tuple_of_dims_is_invalid_argument) {
  /* torch.prod has no overload taking a tuple: TypeError in torch */
  mt_tensor *m = sample(MT_float64);
  mt_kwarg kv[] = {kw_ints("dim", 1, SHAPE(1))};
  mt_kwargs kw = {1, kv};
  mt_call c;
  mt_error e;
  CHECK_STATUS(run(mt_cpu_prod, &c, &e, 1, (const mt_tensor *[]){m}, &kw), MT_INVALID_ARGUMENT);
  CHECK(strstr(e.msg, "tuple") != NULL);
  done(&c, (mt_tensor *[]){m}, 1);
}

TEST(dim_out_of_range_and_repeated_dims_are_rejected) {
  /* ndim 2: dims must be in [-2, 1] */
  mt_tensor *m = sample(MT_float64);
  mt_kwarg k2[] = {kw_int("dim", 2)};
  mt_kwargs kw2 = {1, k2};
  mt_kwarg kr[] = {kw_ints("dim", 2, SHAPE(1, -1))};
  mt_kwargs kwr = {1, kr};
  mt_call c;
  mt_error e;
  CHECK_STATUS(run(mt_cpu_amin, &c, &e, 1, (const mt_tensor *[]){m}, &kw2), MT_INDEX_OUT_OF_RANGE);
  CHECK(strstr(e.msg, "[-2, 1], but got 2") != NULL);
  CHECK_STATUS(run(mt_cpu_sum, &c, &e, 1, (const mt_tensor *[]){m}, &kwr), MT_INVALID_ARGUMENT);
  CHECK(strstr(e.msg, "multiple times") != NULL);
  done(&c, (mt_tensor *[]){m}, 1);
}

TEST(zero_size_input_reduces_to_the_fill_and_amin_refuses_an_empty_dim) {
  /* shape [2, 0]: sum over dim 1 -> [0, 0] masked out; shape [0, 3] over
   * dim 1 -> shape [0]; amin over the empty dim 1 is an error in torch */
  mt_tensor *a = masked(dense(MT_float32, 2, SHAPE(2, 0), NULL), bools(2, SHAPE(2, 0), NULL));
  mt_tensor *b = masked(dense(MT_float32, 2, SHAPE(0, 3), NULL), bools(2, SHAPE(0, 3), NULL));
  mt_kwarg kv[] = {kw_int("dim", 1)};
  mt_kwargs kw = {1, kv};
  mt_call c;
  mt_error e;
  CHECK_STATUS(run(mt_cpu_prod, &c, &e, 1, (const mt_tensor *[]){a}, &kw), MT_OK);
  CHECK_EQ_INT(c.out[0]->shape[0], 2);
  CHECK_NEAR(at(c.out[0]->data, 0), 1, 0);
  CHECK_NEAR(at(c.out[0]->data, 1), 1, 0);
  CHECK_EQ_INT(bit(c.out[0]->mask, 0), 0);
  done(&c, NULL, 0);
  CHECK_STATUS(run(mt_cpu_mean, &c, &e, 1, (const mt_tensor *[]){b}, &kw), MT_OK);
  CHECK_EQ_INT(c.out[0]->ndim, 1);
  CHECK_EQ_INT(c.out[0]->shape[0], 0);
  done(&c, NULL, 0);
  /* torch raises IndexError ("Expected reduction dim 1 to have non-zero
   * size"): INDEX_OUT_OF_RANGE by DESIGN.md's table */
  CHECK_STATUS(run(mt_cpu_amin, &c, &e, 1, (const mt_tensor *[]){a}, &kw), MT_INDEX_OUT_OF_RANGE);
  CHECK(strstr(e.msg, "non-zero size") != NULL);
  done(&c, (mt_tensor *[]){a, b}, 2);
}

TEST(float32_sum_accumulates_in_double_and_rounds_once) {
  /* 2^24 + 1 + 1: float accumulation gives 16777216 (each +1 rounds away),
   * double gives 16777218, representable in float */
  mt_tensor *m = masked(dense(MT_float32, 1, SHAPE(3), VALS(16777216, 1, 1)),
                        bools(1, SHAPE(3), BITS(1, 1, 1)));
  mt_call c;
  mt_error e;
  CHECK_STATUS(run(mt_cpu_sum, &c, &e, 1, (const mt_tensor *[]){m}, NULL), MT_OK);
  CHECK_NEAR(at(c.out[0]->data, 0), 16777218, 0);
  done(&c, (mt_tensor *[]){m}, 1);
}

TEST(nan_at_masked_in_position_propagates_through_amax) {
  /* [1, NaN, 3] all masked in -> NaN; poison NaN masked out is ignored */
  mt_tensor *a =
      masked(dense(MT_float64, 1, SHAPE(3), VALS(1, NAN, 3)), bools(1, SHAPE(3), BITS(1, 1, 1)));
  mt_tensor *b =
      masked(dense(MT_float64, 1, SHAPE(3), VALS(1, NAN, 3)), bools(1, SHAPE(3), BITS(1, 0, 1)));
  mt_call c;
  mt_error e;
  CHECK_STATUS(run(mt_cpu_amax, &c, &e, 1, (const mt_tensor *[]){a}, NULL), MT_OK);
  CHECK(isnan(at(c.out[0]->data, 0)));
  done(&c, NULL, 0);
  CHECK_STATUS(run(mt_cpu_amax, &c, &e, 1, (const mt_tensor *[]){b}, NULL), MT_OK);
  CHECK_NEAR(at(c.out[0]->data, 0), 3, 0);
  done(&c, (mt_tensor *[]){a, b}, 2);
}

TEST(strided_input_reduces_in_logical_order) {
  /* storage [[1,2],[3,4]] transposed -> logical [[1,3],[2,4]]; sum dim 1
   * -> [4, 6] */
  mt_tensor *d = dense(MT_float64, 2, SHAPE(2, 2), VALS(1, 2, 3, 4));
  d->strides[0] = 1, d->strides[1] = 2;
  mt_tensor *m = masked(d, bools(2, SHAPE(2, 2), BITS(1, 1, 1, 1)));
  mt_kwarg kv[] = {kw_int("dim", 1)};
  mt_kwargs kw = {1, kv};
  mt_call c;
  mt_error e;
  CHECK_STATUS(run(mt_cpu_sum, &c, &e, 1, (const mt_tensor *[]){m}, &kw), MT_OK);
  CHECK_NEAR(at(c.out[0]->data, 0), 4, 0);
  CHECK_NEAR(at(c.out[0]->data, 1), 6, 0);
  done(&c, (mt_tensor *[]){m}, 1);
}

TEST(coo_storage_all_reduce_uses_the_stored_values_under_the_mask) {
  /* data {(0,1): 2, (1,2): 5, (1,3): 7}, mask values [1, 0, 1] -> 2 + 7 = 9 */
  mt_tensor *m = masked(coo2(MT_float64, 2, 4, 3, SHAPE(0, 1, 1), SHAPE(1, 2, 3), VALS(2, 5, 7), 1),
                        coo2(MT_bool, 2, 4, 3, SHAPE(0, 1, 1), SHAPE(1, 2, 3), VALS(1, 0, 1), 1));
  mt_call c;
  mt_error e;
  CHECK_STATUS(run(mt_cpu_sum, &c, &e, 1, (const mt_tensor *[]){m}, NULL), MT_OK);
  CHECK_EQ_INT(c.out[0]->ndim, 0);
  CHECK_NEAR(at(c.out[0]->data, 0), 9, 0);
  CHECK_EQ_INT(bit(c.out[0]->mask, 0), 1);
  done(&c, (mt_tensor *[]){m}, 1);
}

TEST(argmax_takes_the_first_tie_and_a_masked_out_fill_can_win) {
  /* RED-4. data [[1, 5, 5], [7, -inf, 2]], mask [[1, 1, 1], [0, 1, 0]]:
   * row 0: 1, 5, 5 -> first maximum at index 1;
   * row 1: the fill -inf at 0 and 2 (7 and 2 are masked out), -inf masked
   * in at 1: three equal -inf -> index 0, a masked-out index, as torch.
   * The index has the input dtype (float64). */
  mt_tensor *m = masked(dense(MT_float64, 2, SHAPE(2, 3), VALS(1, 5, 5, 7, -INFINITY, 2)),
                        bools(2, SHAPE(2, 3), BITS(1, 1, 1, 0, 1, 0)));
  mt_kwarg kv[] = {kw_int("dim", 1)};
  mt_kwargs kw = {1, kv};
  mt_call c;
  mt_error e;
  CHECK_STATUS(run(mt_cpu_argmax, &c, &e, 1, (const mt_tensor *[]){m}, &kw), MT_OK);
  CHECK_EQ_INT(c.out[0]->data->dtype, MT_float64);
  CHECK_NEAR(at(c.out[0]->data, 0), 1, 0);
  CHECK_NEAR(at(c.out[0]->data, 1), 0, 0);
  CHECK_EQ_INT(bit(c.out[0]->mask, 1), 1);
  done(&c, (mt_tensor *[]){m}, 1);
}

TEST(argmin_of_int8_gives_an_int8_flat_index_and_nan_wins_argmax) {
  /* RED-4. int8 [[3, -2], [-2, 9]], all masked in: all-reduce argmin = the
   * first -2 at flat index 1, stored as int8. float32 [1, NaN, 5, NaN]:
   * argmax = the first NaN, index 1. */
  mt_tensor *a = masked(dense(MT_int8, 2, SHAPE(2, 2), VALS(3, -2, -2, 9)),
                        bools(2, SHAPE(2, 2), BITS(1, 1, 1, 1)));
  mt_tensor *b = masked(dense(MT_float32, 1, SHAPE(4), VALS(1, NAN, 5, NAN)),
                        bools(1, SHAPE(4), BITS(1, 1, 1, 1)));
  mt_call c;
  mt_error e;
  CHECK_STATUS(run(mt_cpu_argmin, &c, &e, 1, (const mt_tensor *[]){a}, NULL), MT_OK);
  CHECK_EQ_INT(c.out[0]->data->dtype, MT_int8);
  CHECK_EQ_INT(c.out[0]->ndim, 0);
  CHECK_NEAR(at(c.out[0]->data, 0), 1, 0);
  done(&c, NULL, 0);
  CHECK_STATUS(run(mt_cpu_argmax, &c, &e, 1, (const mt_tensor *[]){b}, NULL), MT_OK);
  CHECK_NEAR(at(c.out[0]->data, 0), 1, 0);
  done(&c, (mt_tensor *[]){a, b}, 2);
}

TEST(var_divides_by_n_minus_one_and_one_element_is_a_specified_nan) {
  /* RED-5. data [[1, 3, P], [2, P, P], [P, P, P]], mask [[1, 1, 0], [1, 0, 0],
   * [0, 0, 0]], var over dim 1:
   * row 0: mean 2, squares 1 + 1 = 2, / (2 - 1) = 2; std sqrt(2);
   * row 1: one element: 0 / max(1 - 1, 0) = 0/0 = NaN, mask true;
   * row 2: none: NaN, mask false (RED-3). */
  mt_tensor *m = masked(dense(MT_float64, 2, SHAPE(3, 3),
                              VALS(1, 3, NAN_POISON, 2, NAN_POISON, NAN_POISON, NAN_POISON,
                                   NAN_POISON, NAN_POISON)),
                        bools(2, SHAPE(3, 3), BITS(1, 1, 0, 1, 0, 0, 0, 0, 0)));
  mt_kwarg kv[] = {kw_int("dim", 1)};
  mt_kwargs kw = {1, kv};
  mt_call c;
  mt_error e;
  CHECK_STATUS(run(mt_cpu_var, &c, &e, 1, (const mt_tensor *[]){m}, &kw), MT_OK);
  CHECK_NEAR(at(c.out[0]->data, 0), 2, 0);
  CHECK(isnan(at(c.out[0]->data, 1)));
  CHECK_EQ_INT(bit(c.out[0]->mask, 1), 1);
  CHECK(isnan(at(c.out[0]->data, 2)));
  CHECK_EQ_INT(bit(c.out[0]->mask, 2), 0);
  done(&c, NULL, 0);
  CHECK_STATUS(run(mt_cpu_std, &c, &e, 1, (const mt_tensor *[]){m}, &kw), MT_OK);
  CHECK_NEAR(at(c.out[0]->data, 0), sqrt(2.0), 0);
  done(&c, (mt_tensor *[]){m}, 1);
}

TEST(integer_sums_widen_to_int64_and_refused_dtypes_are_dtype_mismatch) {
  /* RED-7. int8 [100, 100, 100]: sum = 300 in int64 (not 44 in int8);
   * prod = 1000000. mean of int8: DTYPE_MISMATCH; amin of bool too;
   * var of int8 [1, 2, 3]: float32 output, mean 2, (1 + 0 + 1) / 2 = 1. */
  mt_tensor *a = masked(dense(MT_int8, 1, SHAPE(3), VALS(100, 100, 100)),
                        bools(1, SHAPE(3), BITS(1, 1, 1)));
  mt_tensor *b = masked(dense(MT_bool, 1, SHAPE(3), VALS(1, 0, 1)), bools(1, SHAPE(3), BITS(1, 1, 1)));
  mt_tensor *v = masked(dense(MT_int8, 1, SHAPE(3), VALS(1, 2, 3)), bools(1, SHAPE(3), BITS(1, 1, 1)));
  mt_call c;
  mt_error e;
  CHECK_STATUS(run(mt_cpu_sum, &c, &e, 1, (const mt_tensor *[]){a}, NULL), MT_OK);
  CHECK_EQ_INT(c.out[0]->data->dtype, MT_int64);
  CHECK_NEAR(at(c.out[0]->data, 0), 300, 0);
  done(&c, NULL, 0);
  CHECK_STATUS(run(mt_cpu_prod, &c, &e, 1, (const mt_tensor *[]){a}, NULL), MT_OK);
  CHECK_NEAR(at(c.out[0]->data, 0), 1000000, 0);
  done(&c, NULL, 0);
  CHECK_STATUS(run(mt_cpu_mean, &c, &e, 1, (const mt_tensor *[]){a}, NULL), MT_DTYPE_MISMATCH);
  done(&c, NULL, 0);
  CHECK_STATUS(run(mt_cpu_amin, &c, &e, 1, (const mt_tensor *[]){b}, NULL), MT_DTYPE_MISMATCH);
  done(&c, NULL, 0);
  CHECK_STATUS(run(mt_cpu_var, &c, &e, 1, (const mt_tensor *[]){v}, NULL), MT_OK);
  CHECK_EQ_INT(c.out[0]->data->dtype, MT_float32);
  CHECK_NEAR(at(c.out[0]->data, 0), 1, 0);
  done(&c, (mt_tensor *[]){a, b, v}, 3);
}

TEST(all_over_empty_dims_reduces_nothing_and_norm_is_refused) {
  /* RED-6, RED-2: all(m, dim=()) with data [0, 2, 0], mask [1, 1, 0] keeps
   * the shape: [0 != 0, 2 != 0, True (masked out)] = [0, 1, 1] under the
   * same mask; all(m) = False. sum(m, dim=()) is INVALID_ARGUMENT.
   * RED-8: norm(m) is INVALID_ARGUMENT. */
  mt_tensor *m = masked(dense(MT_float32, 1, SHAPE(3), VALS(0, 2, 0)), bools(1, SHAPE(3), BITS(1, 1, 0)));
  mt_kwarg kv[] = {kw_ints("dim", 0, NULL)};
  mt_kwargs kw = {1, kv};
  mt_call c;
  mt_error e;
  CHECK_STATUS(run(mt_cpu_all, &c, &e, 1, (const mt_tensor *[]){m}, &kw), MT_OK);
  CHECK_EQ_INT(c.out[0]->ndim, 1);
  CHECK_EQ_INT(c.out[0]->data->dtype, MT_bool);
  CHECK_EQ_INT(bit(c.out[0]->data, 0), 0);
  CHECK_EQ_INT(bit(c.out[0]->data, 1), 1);
  CHECK_EQ_INT(bit(c.out[0]->data, 2), 1);
  CHECK_EQ_INT(bit(c.out[0]->mask, 2), 0);
  done(&c, NULL, 0);
  CHECK_STATUS(run(mt_cpu_all, &c, &e, 1, (const mt_tensor *[]){m}, NULL), MT_OK);
  CHECK_EQ_INT(bit(c.out[0]->data, 0), 0);
  done(&c, NULL, 0);
  CHECK_STATUS(run(mt_cpu_sum, &c, &e, 1, (const mt_tensor *[]){m}, &kw), MT_INVALID_ARGUMENT);
  done(&c, NULL, 0);
  CHECK_STATUS(run(mt_cpu_norm, &c, &e, 1, (const mt_tensor *[]){m}, NULL), MT_INVALID_ARGUMENT);
  CHECK(strstr(e.msg, "unexpected keyword argument 'p'") != NULL);
  done(&c, (mt_tensor *[]){m}, 1);
}

TEST(dtype_kwarg_converts_first_and_needs_dim) {
  /* RED-7. float32 [1.7, -2.5, P], mask [1, 1, 0], sum(dim=0,
   * dtype='int32'): each element converted first, truncating: 1 + -2 = -1,
   * an int32 result. int8 [1, 2] mean(dim=0, dtype='float64') = 3 / 2 =
   * 1.5 (mean of integers is accepted with a floating dtype=);
   * mean(dtype='int64') is DTYPE_MISMATCH; sum(dtype=) without dim is
   * INVALID_ARGUMENT (torch: missing 'dim'). */
  mt_tensor *f = masked(dense(MT_float32, 1, SHAPE(3), VALS(1.7, -2.5, NAN_POISON)),
                        bools(1, SHAPE(3), BITS(1, 1, 0)));
  mt_tensor *i = masked(dense(MT_int8, 1, SHAPE(2), VALS(1, 2)), bools(1, SHAPE(2), BITS(1, 1)));
  mt_kwarg k32[] = {kw_int("dim", 0), {.name = "dtype", .type = MT_KW_STR, .s = "int32"}};
  mt_kwarg k64[] = {kw_int("dim", 0), {.name = "dtype", .type = MT_KW_STR, .s = "float64"}};
  mt_kwarg ki64[] = {kw_int("dim", 0), {.name = "dtype", .type = MT_KW_STR, .s = "int64"}};
  mt_kwarg knodim[] = {{.name = "dtype", .type = MT_KW_STR, .s = "float64"}};
  mt_kwargs kw32 = {2, k32}, kw64 = {2, k64}, kwi64 = {2, ki64}, kwnodim = {1, knodim};
  mt_call c;
  mt_error e;
  CHECK_STATUS(run(mt_cpu_sum, &c, &e, 1, (const mt_tensor *[]){f}, &kw32), MT_OK);
  CHECK_EQ_INT(c.out[0]->data->dtype, MT_int32);
  CHECK_NEAR(at(c.out[0]->data, 0), -1, 0);
  done(&c, NULL, 0);
  CHECK_STATUS(run(mt_cpu_mean, &c, &e, 1, (const mt_tensor *[]){i}, &kw64), MT_OK);
  CHECK_EQ_INT(c.out[0]->data->dtype, MT_float64);
  CHECK_NEAR(at(c.out[0]->data, 0), 1.5, 0);
  done(&c, NULL, 0);
  CHECK_STATUS(run(mt_cpu_mean, &c, &e, 1, (const mt_tensor *[]){f}, &kwi64), MT_DTYPE_MISMATCH);
  done(&c, NULL, 0);
  CHECK_STATUS(run(mt_cpu_sum, &c, &e, 1, (const mt_tensor *[]){f}, &kwnodim), MT_INVALID_ARGUMENT);
  done(&c, (mt_tensor *[]){f, i}, 2);
}

/* SP-3: COO [3, 4] storing (0,1) = 1, (1,2) = 2, (2,0) = 3, (2,3) = 4 with
 * mask 1, 1, 0, 1 (float64). mean = (1 + 2 + 4) / 4 stored = 7/4 = 1.75;
 * var centres on 1.75: (1-1.75)^2 + (2-1.75)^2 + (4-1.75)^2 = 0.5625 +
 * 0.0625 + 5.0625 = 5.6875, / (4 - 1) = 1.8958333...; argmin over the
 * stored values (the masked-out 3 sees +inf) is entry 0 at (0,1): COO
 * gives the flat index 0*4 + 1 = 1 as float32; argmax is entry 3 at (2,3):
 * 2*4 + 3 = 11; the same values in CSR give the stored positions 0 and 3
 * in float64. A dim reduction is LAYOUT_MISMATCH. all: 4 stored values
 * fit the last dim (4): LAYOUT_MISMATCH. */
TEST(sparse_mean_counts_stored_entries_and_argmin_indexes_them) {
  const int64_t ri[4] = {0, 1, 2, 2}, ci[4] = {1, 2, 0, 3};
  mt_tensor *coo = masked(coo2(MT_float64, 3, 4, 4, ri, ci, VALS(1, 2, 3, 4), 1),
                          coo2(MT_bool, 3, 4, 4, ri, ci, VALS(1, 1, 0, 1), 1));
  mt_tensor *csr = masked(csr2(MT_float64, 3, 4, 4, ri, ci, VALS(1, 2, 3, 4)),
                          csr2(MT_bool, 3, 4, 4, ri, ci, VALS(1, 1, 0, 1)));
  mt_call c;
  mt_error e;
  for (int k = 0; k < 2; k++) {
    const mt_tensor *in[] = {k ? csr : coo};
    CHECK_STATUS(run(mt_cpu_mean, &c, &e, 1, in, NULL), MT_OK);
    CHECK_NEAR(at(c.out[0]->data, 0), 1.75, 0);
    CHECK_EQ_INT(bit(c.out[0]->mask, 0), 1);
    done(&c, NULL, 0);
    CHECK_STATUS(run(mt_cpu_var, &c, &e, 1, in, NULL), MT_OK);
    CHECK_NEAR(at(c.out[0]->data, 0), 5.6875 / 3, 1e-15);
    done(&c, NULL, 0);
    CHECK_STATUS(run(mt_cpu_argmin, &c, &e, 1, in, NULL), MT_OK);
    CHECK_EQ_INT(c.out[0]->data->dtype, k ? MT_float64 : MT_float32);
    CHECK_NEAR(at(c.out[0]->data, 0), k ? 0 : 1, 0);
    done(&c, NULL, 0);
    CHECK_STATUS(run(mt_cpu_argmax, &c, &e, 1, in, NULL), MT_OK);
    CHECK_NEAR(at(c.out[0]->data, 0), k ? 3 : 11, 0);
    done(&c, NULL, 0);
    mt_kwarg kv[] = {kw_int("dim", 1)};
    mt_kwargs kw = {1, kv};
    CHECK_STATUS(run(mt_cpu_sum, &c, &e, 1, in, &kw), MT_LAYOUT_MISMATCH);
    CHECK_STATUS(run(mt_cpu_all, &c, &e, 1, in, NULL), MT_LAYOUT_MISMATCH);
  }
  done(&c, (mt_tensor *[]){coo, csr}, 2);
}

MT_TEST_MAIN(T(sparse_mean_counts_stored_entries_and_argmin_indexes_them),
             T(sum_fully_masked_row_is_masked_out_with_zero_fill),
             T(mean_fully_masked_row_is_masked_out_with_nan_fill),
             T(prod_fully_masked_row_is_masked_out_with_one_fill),
             T(amin_fully_masked_row_is_masked_out_with_pos_inf_fill),
             T(amax_fully_masked_row_is_masked_out_with_neg_inf_fill),
             T(sum_dim0_reduces_columns_and_any_masks_them),
             T(sum_negative_dim_with_keepdim_keeps_a_size_one_dim),
             T(all_reduce_gives_a_0d_output_masked_by_any),
             T(sum_over_a_tuple_of_dims_of_a_3d_input),
             T(prod_with_a_tuple_of_dims_is_invalid_argument),
             T(dim_out_of_range_and_repeated_dims_are_rejected),
             T(zero_size_input_reduces_to_the_fill_and_amin_refuses_an_empty_dim),
             T(float32_sum_accumulates_in_double_and_rounds_once),
             T(nan_at_masked_in_position_propagates_through_amax),
             T(strided_input_reduces_in_logical_order),
             T(coo_storage_all_reduce_uses_the_stored_values_under_the_mask),
             T(argmax_takes_the_first_tie_and_a_masked_out_fill_can_win),
             T(argmin_of_int8_gives_an_int8_flat_index_and_nan_wins_argmax),
             T(var_divides_by_n_minus_one_and_one_element_is_a_specified_nan),
             T(integer_sums_widen_to_int64_and_refused_dtypes_are_dtype_mismatch),
             T(all_over_empty_dims_reduces_nothing_and_norm_is_refused),
             T(dtype_kwarg_converts_first_and_needs_dim))

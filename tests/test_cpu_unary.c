/* test_cpu_unary.c - the CPU kernels of the unary family beyond MASK-4/5:
 * result dtypes (UN-1), refusals (UN-2), special values (UN-3), rounding
 * (UN-4), number arguments (UN-5) and in-place variants (UN-6). Inputs are
 * literals; expected values are derived by hand in the comments. */
#include <math.h>
#include <stdlib.h>

#include "cpu_fixtures.h"
#include "mt_test.h"

static mt_tensor *all_in(mt_dtype dt, int n, const double *v) {
  int b[16];
  for (int i = 0; i < n; i++) b[i] = 1;
  return masked(dense(dt, 1, SHAPE(n), v), bools(1, SHAPE(n), b));
}

TEST(float_ops_give_float32_for_int_and_bool_data) {
  /* sqrt(int32 [4, 9]) = float32 [2, 3]; sin(bool [true]) = float32 sin(1) */
  mt_tensor *a = all_in(MT_int32, 2, VALS(4, 9));
  mt_tensor *b = all_in(MT_bool, 1, VALS(1));
  mt_call c;
  mt_error e;
  CHECK_STATUS(run(mt_cpu_sqrt, &c, &e, 1, (const mt_tensor *[]){a}, NULL), MT_OK);
  CHECK_EQ_INT(c.out[0]->data->dtype, MT_float32);
  CHECK_NEAR(at(c.out[0]->data, 0), 2, 0);
  CHECK_NEAR(at(c.out[0]->data, 1), 3, 0);
  done(&c, NULL, 0);
  CHECK_STATUS(run(mt_cpu_sin, &c, &e, 1, (const mt_tensor *[]){b}, NULL), MT_OK);
  CHECK_EQ_INT(c.out[0]->data->dtype, MT_float32);
  CHECK_NEAR(at(c.out[0]->data, 0), (double)(float)sin(1.0), 0);
  done(&c, (mt_tensor *[]){a, b}, 2);
}

TEST(isnan_and_signbit_give_bool) {
  /* isnan([NaN, 1]) = [1, 0]; signbit([-0.0, 0.0]) = [1, 0] */
  mt_tensor *a = all_in(MT_float32, 2, VALS(NAN, 1));
  mt_tensor *b = all_in(MT_float64, 2, VALS(-0.0, 0.0));
  mt_call c;
  mt_error e;
  CHECK_STATUS(run(mt_cpu_isnan, &c, &e, 1, (const mt_tensor *[]){a}, NULL), MT_OK);
  CHECK_EQ_INT(c.out[0]->data->dtype, MT_bool);
  CHECK_EQ_INT(bit(c.out[0]->data, 0), 1);
  CHECK_EQ_INT(bit(c.out[0]->data, 1), 0);
  done(&c, NULL, 0);
  CHECK_STATUS(run(mt_cpu_signbit, &c, &e, 1, (const mt_tensor *[]){b}, NULL), MT_OK);
  CHECK_EQ_INT(bit(c.out[0]->data, 0), 1);
  CHECK_EQ_INT(bit(c.out[0]->data, 1), 0);
  done(&c, (mt_tensor *[]){a, b}, 2);
}

TEST(int8_abs_neg_square_wrap_at_the_width) {
  /* abs(-128) = 128 wraps to -128; neg(-128) = -128; square(100) = 10000 =
   * 39 * 256 + 16 -> 16 */
  mt_tensor *a = all_in(MT_int8, 2, VALS(-128, 100));
  mt_call c;
  mt_error e;
  CHECK_STATUS(run(mt_cpu_abs, &c, &e, 1, (const mt_tensor *[]){a}, NULL), MT_OK);
  CHECK_NEAR(at(c.out[0]->data, 0), -128, 0);
  done(&c, NULL, 0);
  CHECK_STATUS(run(mt_cpu_neg, &c, &e, 1, (const mt_tensor *[]){a}, NULL), MT_OK);
  CHECK_NEAR(at(c.out[0]->data, 0), -128, 0);
  CHECK_NEAR(at(c.out[0]->data, 1), -100, 0);
  done(&c, NULL, 0);
  CHECK_STATUS(run(mt_cpu_square, &c, &e, 1, (const mt_tensor *[]){a}, NULL), MT_OK);
  CHECK_EQ_INT(c.out[0]->data->dtype, MT_int8);
  CHECK_NEAR(at(c.out[0]->data, 1), 16, 0);
  done(&c, (mt_tensor *[]){a}, 1);
}

TEST(bool_refusals_and_bool_results) {
  /* abs/neg/round of bool: DTYPE_MISMATCH; bitwise_not(bool [1, 0]) =
   * [0, 1] (logical, not ~1 = -2); square(bool) is int64 */
  mt_tensor *a = all_in(MT_bool, 2, VALS(1, 0));
  mt_call c;
  mt_error e;
  CHECK_STATUS(run(mt_cpu_abs, &c, &e, 1, (const mt_tensor *[]){a}, NULL), MT_DTYPE_MISMATCH);
  CHECK_HAS(e.msg, "Bool");
  CHECK_STATUS(run(mt_cpu_neg, &c, &e, 1, (const mt_tensor *[]){a}, NULL), MT_DTYPE_MISMATCH);
  CHECK_STATUS(run(mt_cpu_round, &c, &e, 1, (const mt_tensor *[]){a}, NULL), MT_DTYPE_MISMATCH);
  CHECK_STATUS(run(mt_cpu_bitwise_not, &c, &e, 1, (const mt_tensor *[]){a}, NULL), MT_OK);
  CHECK_EQ_INT(c.out[0]->data->dtype, MT_bool);
  CHECK_EQ_INT(bit(c.out[0]->data, 0), 0);
  CHECK_EQ_INT(bit(c.out[0]->data, 1), 1);
  done(&c, NULL, 0);
  CHECK_STATUS(run(mt_cpu_square, &c, &e, 1, (const mt_tensor *[]){a}, NULL), MT_OK);
  CHECK_EQ_INT(c.out[0]->data->dtype, MT_int64);
  done(&c, (mt_tensor *[]){a}, 1);
}

TEST(bitwise_not_of_float_is_refused) {
  mt_tensor *a = all_in(MT_float32, 1, VALS(1));
  mt_call c;
  mt_error e;
  CHECK_STATUS(run(mt_cpu_bitwise_not, &c, &e, 1, (const mt_tensor *[]){a}, NULL),
               MT_DTYPE_MISMATCH);
  CHECK_HAS(e.msg, "'Float'");
  done(&c, (mt_tensor *[]){a}, 1);
}

TEST(special_values_follow_torch) {
  /* digamma(+0) = -inf, digamma(-0) = +inf, digamma(-1) = NaN;
   * sinc(0) = 1; rsqrt(-0) = -inf (1 / sqrt(-0) = 1 / -0);
   * sign(NaN) = 0 ((0 < x) - (x < 0) with both false) */
  mt_tensor *a = all_in(MT_float64, 3, VALS(0.0, -0.0, -1.0));
  mt_tensor *b = all_in(MT_float32, 2, VALS(0.0, NAN));
  mt_tensor *z = all_in(MT_float32, 1, VALS(-0.0));
  mt_call c;
  mt_error e;
  CHECK_STATUS(run(mt_cpu_digamma, &c, &e, 1, (const mt_tensor *[]){a}, NULL), MT_OK);
  CHECK(isinf(at(c.out[0]->data, 0)) && at(c.out[0]->data, 0) < 0);
  CHECK(isinf(at(c.out[0]->data, 1)) && at(c.out[0]->data, 1) > 0);
  CHECK(isnan(at(c.out[0]->data, 2)));
  done(&c, NULL, 0);
  CHECK_STATUS(run(mt_cpu_sinc, &c, &e, 1, (const mt_tensor *[]){b}, NULL), MT_OK);
  CHECK_NEAR(at(c.out[0]->data, 0), 1, 0);
  done(&c, NULL, 0);
  CHECK_STATUS(run(mt_cpu_sign, &c, &e, 1, (const mt_tensor *[]){b}, NULL), MT_OK);
  CHECK_NEAR(at(c.out[0]->data, 1), 0, 0);
  done(&c, NULL, 0);
  CHECK_STATUS(run(mt_cpu_rsqrt, &c, &e, 1, (const mt_tensor *[]){z}, NULL), MT_OK);
  CHECK(isinf(at(c.out[0]->data, 0)) && at(c.out[0]->data, 0) < 0);
  done(&c, (mt_tensor *[]){a, b, z}, 3);
}

TEST(round_is_half_to_even_and_keeps_signed_zeros) {
  /* round: 0.5 -> 0, 1.5 -> 2, 2.5 -> 2, -2.5 -> -2, -0.4 -> -0;
   * ceil(-0.5) = -0 */
  mt_tensor *a = all_in(MT_float32, 5, VALS(0.5, 1.5, 2.5, -2.5, -0.4));
  mt_call c;
  mt_error e;
  CHECK_STATUS(run(mt_cpu_round, &c, &e, 1, (const mt_tensor *[]){a}, NULL), MT_OK);
  CHECK_NEAR(at(c.out[0]->data, 0), 0, 0);
  CHECK_NEAR(at(c.out[0]->data, 1), 2, 0);
  CHECK_NEAR(at(c.out[0]->data, 2), 2, 0);
  CHECK_NEAR(at(c.out[0]->data, 3), -2, 0);
  CHECK(at(c.out[0]->data, 4) == 0 && signbit(at(c.out[0]->data, 4)));
  done(&c, NULL, 0);
  mt_tensor *b = all_in(MT_float64, 1, VALS(-0.5));
  CHECK_STATUS(run(mt_cpu_ceil, &c, &e, 1, (const mt_tensor *[]){b}, NULL), MT_OK);
  CHECK(at(c.out[0]->data, 0) == 0 && signbit(at(c.out[0]->data, 0)));
  done(&c, (mt_tensor *[]){a, b}, 2);
}

TEST(clamp_promotes_with_its_bounds_and_needs_one) {
  /* clamp(int32 [-5, 5], min=-3, max=2) = int32 [-3, 2];
   * clamp(int32 [-5, 5], min=0.5) = float32 [0.5, 5];
   * clamp without bounds: INVALID_ARGUMENT */
  mt_tensor *a = all_in(MT_int32, 2, VALS(-5, 5));
  mt_kwarg k1[] = {kw_int("min", -3), kw_int("max", 2)};
  mt_kwargs kw1 = {2, k1};
  mt_kwarg k2[] = {kw_float("min", 0.5)};
  mt_kwargs kw2 = {1, k2};
  mt_call c;
  mt_error e;
  CHECK_STATUS(run(mt_cpu_clamp, &c, &e, 1, (const mt_tensor *[]){a}, &kw1), MT_OK);
  CHECK_EQ_INT(c.out[0]->data->dtype, MT_int32);
  CHECK_NEAR(at(c.out[0]->data, 0), -3, 0);
  CHECK_NEAR(at(c.out[0]->data, 1), 2, 0);
  done(&c, NULL, 0);
  CHECK_STATUS(run(mt_cpu_clamp, &c, &e, 1, (const mt_tensor *[]){a}, &kw2), MT_OK);
  CHECK_EQ_INT(c.out[0]->data->dtype, MT_float32);
  CHECK_NEAR(at(c.out[0]->data, 0), 0.5, 0);
  CHECK_NEAR(at(c.out[0]->data, 1), 5, 0);
  done(&c, NULL, 0);
  CHECK_STATUS(run(mt_cpu_clamp, &c, &e, 1, (const mt_tensor *[]){a}, NULL), MT_INVALID_ARGUMENT);
  /* in place: clamp_(int32, min=0.5) would be float32 -> DTYPE_MISMATCH */
  CHECK_STATUS(run(mt_cpu_clamp_, &c, &e, 1, (const mt_tensor *[]){a}, &kw2), MT_DTYPE_MISMATCH);
  done(&c, (mt_tensor *[]){a}, 1);
}

TEST(pow_of_ints_is_exact_and_negative_exponents_are_refused) {
  /* pow(int64 [3, -2], 3) = [27, -8]; pow(int64, -1): DTYPE_MISMATCH */
  mt_tensor *a = all_in(MT_int64, 2, VALS(3, -2));
  mt_tensor *three = NULL, *m1 = NULL;
  if (mt_scalar_new(MT_int64, 3, &three, NULL) != MT_OK) abort();
  if (mt_scalar_new(MT_int64, -1, &m1, NULL) != MT_OK) abort();
  mt_call c;
  mt_error e;
  CHECK_STATUS(run(mt_cpu_pow, &c, &e, 2, (const mt_tensor *[]){a, three}, NULL), MT_OK);
  CHECK_EQ_INT(c.out[0]->data->dtype, MT_int64);
  CHECK_NEAR(at(c.out[0]->data, 0), 27, 0);
  CHECK_NEAR(at(c.out[0]->data, 1), -8, 0);
  done(&c, NULL, 0);
  CHECK_STATUS(run(mt_cpu_pow, &c, &e, 2, (const mt_tensor *[]){a, m1}, NULL), MT_DTYPE_MISMATCH);
  done(&c, (mt_tensor *[]){a, three, m1}, 3);
}

TEST(round_decimals_is_refused_as_masked_tensor_refuses_kwargs) {
  mt_tensor *a = all_in(MT_float32, 1, VALS(1.25));
  mt_kwarg k[] = {kw_int("decimals", 1)};
  mt_kwargs kw = {1, k};
  mt_call c;
  mt_error e;
  CHECK_STATUS(run(mt_cpu_round, &c, &e, 1, (const mt_tensor *[]){a}, &kw), MT_INVALID_ARGUMENT);
  CHECK_HAS(e.msg, "decimals");
  done(&c, (mt_tensor *[]){a}, 1);
}

TEST(in_place_variant_returns_a_new_tensor_and_leaves_the_input) {
  /* abs_([-2]) = [2] in a new tensor; the input still holds -2 */
  mt_tensor *a = all_in(MT_float32, 1, VALS(-2));
  mt_call c;
  mt_error e;
  CHECK_STATUS(run(mt_cpu_abs_, &c, &e, 1, (const mt_tensor *[]){a}, NULL), MT_OK);
  CHECK(c.out[0]->data->values != a->data->values);
  CHECK_NEAR(at(c.out[0]->data, 0), 2, 0);
  CHECK_NEAR(at(a->data, 0), -2, 0);
  done(&c, NULL, 0);
  /* sin_ of int64: the float32 result cannot be written back */
  mt_tensor *b = all_in(MT_int64, 1, VALS(1));
  CHECK_STATUS(run(mt_cpu_sin_, &c, &e, 1, (const mt_tensor *[]){b}, NULL), MT_DTYPE_MISMATCH);
  CHECK_HAS(e.msg, "can't be cast");
  done(&c, (mt_tensor *[]){a, b}, 2);
}

TEST(in_place_on_coo_storage_is_refused_as_torch_refuses_it) {
  /* abs_ of COO data {(0,1): -1} with mask {(0,1): 1}: LAYOUT_MISMATCH
   * (torch: "Cannot get indices on an uncoalesced tensor"); abs of the same
   * is COO {(0,1): 1} */
  mt_tensor *m = masked(coo2(MT_float32, 2, 2, 1, SHAPE(0), SHAPE(1), VALS(-1), 1),
                        coo2(MT_bool, 2, 2, 1, SHAPE(0), SHAPE(1), VALS(1), 1));
  mt_call c;
  mt_error e;
  CHECK_STATUS(run(mt_cpu_abs_, &c, &e, 1, (const mt_tensor *[]){m}, NULL), MT_LAYOUT_MISMATCH);
  CHECK_HAS(e.msg, "COO");
  CHECK_STATUS(run(mt_cpu_abs, &c, &e, 1, (const mt_tensor *[]){m}, NULL), MT_OK);
  CHECK_EQ_INT(c.out[0]->data->kind, MT_KIND_COO);
  CHECK_NEAR(at(c.out[0]->data, 0), 1, 0);
  done(&c, (mt_tensor *[]){m}, 1);
}

/* SP-1: CSR [2, 3] with entries (0,0) = 0 and (1,1) = 0, mask 1, 1: no
 * entry in column 2, so torch's rebuilt data would be [2, 2]: sin and sin_
 * are INVALID_ARGUMENT. With an entry (1,2) = 0 added, sin works: sin(0) =
 * 0 at each stored value, crow/col kept. */
TEST(csr_storage_whose_last_column_stores_nothing_is_refused) {
  mt_tensor *m = masked(csr2(MT_float32, 2, 3, 2, SHAPE(0, 1), SHAPE(0, 1), VALS(0, 0)),
                        csr2(MT_bool, 2, 3, 2, SHAPE(0, 1), SHAPE(0, 1), VALS(1, 1)));
  mt_tensor *full = masked(csr2(MT_float32, 2, 3, 3, SHAPE(0, 1, 1), SHAPE(0, 1, 2), VALS(0, 0, 0)),
                           csr2(MT_bool, 2, 3, 3, SHAPE(0, 1, 1), SHAPE(0, 1, 2), VALS(1, 1, 0)));
  mt_call c;
  mt_error e;
  CHECK_STATUS(run(mt_cpu_sin, &c, &e, 1, (const mt_tensor *[]){m}, NULL), MT_INVALID_ARGUMENT);
  CHECK_HAS(e.msg, "data.size() must equal mask.size()");
  CHECK_EQ_INT(c.n_out, 0);
  CHECK_STATUS(run(mt_cpu_sin_, &c, &e, 1, (const mt_tensor *[]){m}, NULL), MT_INVALID_ARGUMENT);
  CHECK_STATUS(run(mt_cpu_sin, &c, &e, 1, (const mt_tensor *[]){full}, NULL), MT_OK);
  CHECK_EQ_INT(c.out[0]->data->kind, MT_KIND_CSR);
  CHECK(c.out[0]->data->nnz == 3 && c.out[0]->data->col_indices[2] == 2);
  for (int k = 0; k < 3; k++) CHECK_NEAR(at(c.out[0]->data, k), 0, 0);
  done(&c, (mt_tensor *[]){m, full}, 2);
}

TEST(nan_to_num_of_bfloat16_uses_its_own_largest_finite_value) {
  /* torch: posinf/neginf default to the dtype's largest finite value; for
   * bfloat16 that is (2 - 2^-7) 2^127 = bits 0x7f7f, not float32's FLT_MAX
   * (0x7f7fffff), which rounds to nearest even up to inf in bfloat16 */
  mt_tensor *a = all_in(MT_bfloat16, 4, VALS(INFINITY, -INFINITY, NAN, 1.5));
  mt_call c;
  mt_error e;
  CHECK_STATUS(run(mt_cpu_nan_to_num, &c, &e, 1, (const mt_tensor *[]){a}, NULL), MT_OK);
  const uint16_t *v = c.out[0]->data->values;
  CHECK(c.out[0]->data->dtype == MT_bfloat16);
  CHECK_EQ_INT(v[0], 0x7f7f);
  CHECK_EQ_INT(v[1], 0xff7f);
  CHECK_EQ_INT(v[2], 0x0000); /* nan -> 0.0 */
  CHECK_EQ_INT(v[3], 0x3fc0); /* 1.5 = 0x3fc00000 kept */
  done(&c, (mt_tensor *[]){a}, 1);
}

/* SP-5: a plain COO tensor [2, 2] with (0,1) stored twice (0.5, 0.25) and
 * (1,0) = -1, not coalesced:
 *   abs   coalesces first: {(0,1): |0.5 + 0.25| = 0.75, (1,0): 1};
 *   neg   (linear) maps the entries as stored, uncoalesced: [-0.5, -0.25, 1]
 *         (torch 2.15: torch.neg(s).is_coalesced() is False, _nnz() 3);
 *   neg_  (linear, in place) the same;
 *   sin_  refuses it (torch: "sin_ requires coalesced input");
 *   cos   has no sparse kernel (LAYOUT_MISMATCH). */
TEST(plain_coo_tensors_follow_torchs_sparse_kernels) {
  mt_tensor *x = coo2(MT_float32, 2, 2, 3, SHAPE(0, 0, 1), SHAPE(1, 1, 0), VALS(0.5, 0.25, -1), 0);
  const mt_tensor *in[] = {x};
  mt_call c;
  mt_error e;
  CHECK_STATUS(run(mt_cpu_abs, &c, &e, 1, in, NULL), MT_OK);
  if (c.n_out == 1) {
    const mt_tensor *o = c.out[0];
    CHECK(o->kind == MT_KIND_COO && o->nnz == 2 && o->coalesced);
    CHECK(o->nnz == 2 && at(o, 0) == 0.75 && at(o, 1) == 1.0);
  }
  done(&c, NULL, 0);
  CHECK_STATUS(run(mt_cpu_neg, &c, &e, 1, in, NULL), MT_OK);
  if (c.n_out == 1)
    CHECK(c.out[0]->nnz == 3 && !c.out[0]->coalesced && at(c.out[0], 0) == -0.5 &&
          at(c.out[0], 1) == -0.25 && at(c.out[0], 2) == 1.0);
  done(&c, NULL, 0);
  CHECK_STATUS(run(mt_cpu_neg_, &c, &e, 1, in, NULL), MT_OK);
  if (c.n_out == 1)
    CHECK(c.out[0]->nnz == 3 && at(c.out[0], 0) == -0.5 && at(c.out[0], 1) == -0.25 &&
          at(c.out[0], 2) == 1.0);
  done(&c, NULL, 0);
  CHECK_STATUS(run(mt_cpu_sin_, &c, &e, 1, in, NULL), MT_LAYOUT_MISMATCH);
  CHECK_HAS(e.msg, "requires coalesced input");
  CHECK_STATUS(run(mt_cpu_cos, &c, &e, 1, in, NULL), MT_LAYOUT_MISMATCH);
  CHECK_HAS(e.msg, "SparseCPU");
  done(&c, (mt_tensor *[]){x}, 1);
}

/* SPP-1: the same uncoalesced x ((0,1): 0.5 and 0.25 stored apart, (1,0): -1):
 *   neg (out of place, linear) maps the entries as stored, uncoalesced:
 *       [-0.5, -0.25, 1] at (0,1), (0,1), (1,0), coalesced flag 0;
 *   pow(x, 0) and pow(x, 0.0): refused, 0 ** 0 = 1 would fill every
 *       unstored position (INVALID_ARGUMENT);
 *   pow(x, -1) maps the coalesced values: 1 / 0.75 = 1.3333334f at (0,1),
 *       1 / -1 = -1 at (1,0) (no inf where nothing is stored);
 *   square of a bool COO: torch's sparse pow keeps the dtype, int64 is
 *       refused (DTYPE_MISMATCH). */
TEST(plain_sparse_pow_zero_refused_and_neg_keeps_uncoalesced) {
  mt_tensor *x = coo2(MT_float32, 2, 2, 3, SHAPE(0, 0, 1), SHAPE(1, 1, 0), VALS(0.5, 0.25, -1), 0);
  mt_tensor *b = coo2(MT_bool, 2, 2, 1, SHAPE(0), SHAPE(1), VALS(1), 1);
  mt_tensor *zero = number(0.0), *m1 = number(-1.0), *izero = NULL;
  if (mt_scalar_new(MT_int64, 0, &izero, NULL) != MT_OK) abort();
  mt_call c;
  mt_error e;
  CHECK_STATUS(run(mt_cpu_neg, &c, &e, 1, (const mt_tensor *[]){x}, NULL), MT_OK);
  if (c.n_out == 1) {
    const mt_tensor *o = c.out[0];
    CHECK(o->kind == MT_KIND_COO && o->nnz == 3 && !o->coalesced);
    CHECK(o->nnz == 3 && at(o, 0) == -0.5 && at(o, 1) == -0.25 && at(o, 2) == 1.0);
  }
  done(&c, NULL, 0);
  CHECK_STATUS(run(mt_cpu_pow, &c, &e, 2, (const mt_tensor *[]){x, zero}, NULL),
               MT_INVALID_ARGUMENT);
  CHECK_HAS(e.msg, "zeroth power");
  CHECK_STATUS(run(mt_cpu_pow, &c, &e, 2, (const mt_tensor *[]){x, izero}, NULL),
               MT_INVALID_ARGUMENT);
  CHECK_STATUS(run(mt_cpu_pow, &c, &e, 2, (const mt_tensor *[]){x, m1}, NULL), MT_OK);
  if (c.n_out == 1) {
    const mt_tensor *o = c.out[0];
    CHECK(o->nnz == 2 && o->coalesced);
    CHECK(o->nnz == 2 && at(o, 0) == (double)(1.0f / 0.75f) && at(o, 1) == -1.0);
  }
  done(&c, NULL, 0);
  CHECK_STATUS(run(mt_cpu_square, &c, &e, 1, (const mt_tensor *[]){b}, NULL), MT_DTYPE_MISMATCH);
  done(&c, (mt_tensor *[]){x, b, zero, m1, izero}, 5);
}

MT_TEST_MAIN(T(plain_coo_tensors_follow_torchs_sparse_kernels),
             T(plain_sparse_pow_zero_refused_and_neg_keeps_uncoalesced),
             T(csr_storage_whose_last_column_stores_nothing_is_refused),
             T(nan_to_num_of_bfloat16_uses_its_own_largest_finite_value),
             T(in_place_on_coo_storage_is_refused_as_torch_refuses_it), T(float_ops_give_float32_for_int_and_bool_data), T(isnan_and_signbit_give_bool),
             T(int8_abs_neg_square_wrap_at_the_width), T(bool_refusals_and_bool_results),
             T(bitwise_not_of_float_is_refused), T(special_values_follow_torch),
             T(round_is_half_to_even_and_keeps_signed_zeros),
             T(clamp_promotes_with_its_bounds_and_needs_one),
             T(pow_of_ints_is_exact_and_negative_exponents_are_refused),
             T(round_decimals_is_refused_as_masked_tensor_refuses_kwargs),
             T(in_place_variant_returns_a_new_tensor_and_leaves_the_input))

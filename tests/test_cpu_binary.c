/* test_cpu_binary.c - the CPU kernels of the binary family beyond add sub
 * mul div in float (BIN-1..BIN-9): broadcasting, promotion, integer
 * division conventions, zero divisors, shifts, NaN in maximum/fmax.
 * Inputs are literals; expected values are derived by hand in comments. */
#include <stdlib.h>

#include "cpu_fixtures.h"
#include "mt_test.h"

static mt_tensor *int_number(int64_t v) {
  mt_tensor *t = NULL;
  if (mt_scalar_new(MT_int64, (double)v, &t, NULL) != MT_OK) abort();
  return t;
}

/* the int32 pair a = [-5, 5, -6, 7], b = [3, -3, 3, 2], all masked in */
static void int_pair(mt_tensor **a, mt_tensor **b) {
  *a = masked(dense(MT_int32, 1, SHAPE(4), VALS(-5, 5, -6, 7)), bools(1, SHAPE(4), BITS(1, 1, 1, 1)));
  *b = masked(dense(MT_int32, 1, SHAPE(4), VALS(3, -3, 3, 2)), bools(1, SHAPE(4), BITS(1, 1, 1, 1)));
}

TEST(integer_remainder_has_the_divisors_sign_fmod_the_dividends) {
  /* Python: -5 % 3 = 1, 5 % -3 = -1, -6 % 3 = 0, 7 % 2 = 1;
   * C fmod: -5 fmod 3 = -2, 5 fmod -3 = 2, -6 fmod 3 = 0, 7 fmod 2 = 1;
   * floor: -5 // 3 = -2 (-1.67 down), 5 // -3 = -2, -6 // 3 = -2, 7 // 2 = 3 */
  static const double rem[] = {1, -1, 0, 1}, fm[] = {-2, 2, 0, 1}, fl[] = {-2, -2, -2, 3};
  const mt_kernel_fn fns[] = {mt_cpu_remainder, mt_cpu_fmod, mt_cpu_floor_divide};
  const double *want[] = {rem, fm, fl};
  mt_tensor *a, *b;
  int_pair(&a, &b);
  for (int f = 0; f < 3; f++) {
    mt_call c;
    mt_error e;
    CHECK_STATUS(run(fns[f], &c, &e, 2, (const mt_tensor *[]){a, b}, NULL), MT_OK);
    CHECK_EQ_INT(c.out[0]->data->dtype, MT_int32);
    for (int i = 0; i < 4; i++) CHECK_NEAR(at(c.out[0]->data, i), want[f][i], 0);
    done(&c, NULL, 0);
  }
  mt_tensor_free(a);
  mt_tensor_free(b);
}

TEST(integer_zero_divisor_raises_only_where_masked_in) {
  /* 6 // [2, 0]: with the 0 masked out the result is [3, (anything)],
   * masked as the divisor; with it masked in torch raises ZeroDivisionError */
  mt_tensor *a = masked(dense(MT_int64, 1, SHAPE(2), VALS(6, 6)), bools(1, SHAPE(2), BITS(1, 0)));
  mt_tensor *b = masked(dense(MT_int64, 1, SHAPE(2), VALS(2, 0)), bools(1, SHAPE(2), BITS(1, 0)));
  mt_tensor *a1 = masked(dense(MT_int64, 1, SHAPE(2), VALS(6, 6)), bools(1, SHAPE(2), BITS(1, 1)));
  mt_tensor *b1 = masked(dense(MT_int64, 1, SHAPE(2), VALS(2, 0)), bools(1, SHAPE(2), BITS(1, 1)));
  mt_call c;
  mt_error e;
  CHECK_STATUS(run(mt_cpu_floor_divide, &c, &e, 2, (const mt_tensor *[]){a, b}, NULL), MT_OK);
  CHECK_NEAR(at(c.out[0]->data, 0), 3, 0);
  CHECK(bit(c.out[0]->mask, 0) && !bit(c.out[0]->mask, 1));
  done(&c, NULL, 0);
  CHECK_STATUS(run(mt_cpu_remainder, &c, &e, 2, (const mt_tensor *[]){a1, b1}, NULL),
               MT_INVALID_ARGUMENT);
  CHECK(strstr(e.msg, "ZeroDivisionError") != NULL);
  CHECK_EQ_INT(c.n_out, 0);
  done(&c, (mt_tensor *[]){a, b, a1, b1}, 4);
}

TEST(shifts_beyond_the_width_give_zero_or_the_sign) {
  /* int8: 1 << 8 = 0 (width 8), 1 << -1 = 0, 3 << 7 = 0x180 wraps to
   * -128; -128 >> 9 = -1 (sign fill), 100 >> 8 = 0, -5 >> 1 = -3 */
  mt_tensor *one = bools(1, SHAPE(3), BITS(1, 1, 1));
  mt_tensor *l = masked(dense(MT_int8, 1, SHAPE(3), VALS(1, 1, 3)), one);
  mt_tensor *ls = masked(dense(MT_int8, 1, SHAPE(3), VALS(8, -1, 7)), bools(1, SHAPE(3), BITS(1, 1, 1)));
  mt_tensor *r = masked(dense(MT_int8, 1, SHAPE(3), VALS(-128, 100, -5)), bools(1, SHAPE(3), BITS(1, 1, 1)));
  mt_tensor *rs = masked(dense(MT_int8, 1, SHAPE(3), VALS(9, 8, 1)), bools(1, SHAPE(3), BITS(1, 1, 1)));
  mt_call c;
  mt_error e;
  CHECK_STATUS(run(mt_cpu_bitwise_left_shift, &c, &e, 2, (const mt_tensor *[]){l, ls}, NULL), MT_OK);
  CHECK_NEAR(at(c.out[0]->data, 0), 0, 0);
  CHECK_NEAR(at(c.out[0]->data, 1), 0, 0);
  CHECK_NEAR(at(c.out[0]->data, 2), -128, 0);
  done(&c, NULL, 0);
  CHECK_STATUS(run(mt_cpu_bitwise_right_shift, &c, &e, 2, (const mt_tensor *[]){r, rs}, NULL), MT_OK);
  CHECK_NEAR(at(c.out[0]->data, 0), -1, 0);
  CHECK_NEAR(at(c.out[0]->data, 1), 0, 0);
  CHECK_NEAR(at(c.out[0]->data, 2), -3, 0);
  done(&c, (mt_tensor *[]){l, ls, r, rs}, 4);
}

TEST(plain_tensor_broadcasts_and_the_mask_is_expanded) {
  /* masked (2, 1) [[1], [2]] mask [[1], [0]] + dense (3,) [10, 20, 30]
   * -> (2, 3): row 0 = [11, 21, 31] masked in, row 1 masked out */
  mt_tensor *m = masked(dense(MT_float32, 2, SHAPE(2, 1), VALS(1, 2)), bools(2, SHAPE(2, 1), BITS(1, 0)));
  mt_tensor *t = dense(MT_float32, 1, SHAPE(3), VALS(10, 20, 30));
  mt_call c;
  mt_error e;
  CHECK_STATUS(run(mt_cpu_add, &c, &e, 2, (const mt_tensor *[]){m, t}, NULL), MT_OK);
  mt_tensor *o = c.out[0];
  CHECK_EQ_INT(o->ndim, 2);
  CHECK(o->shape[0] == 2 && o->shape[1] == 3);
  for (int i = 0; i < 3; i++) {
    CHECK_NEAR(at(o->data, i), 11 + 10 * i, 0);
    CHECK(bit(o->mask, i) && !bit(o->mask, 3 + i));
  }
  done(&c, (mt_tensor *[]){m, t}, 2);
}

TEST(int_data_with_a_float_number_promotes_to_float32_bool_with_int_to_int64) {
  /* int32 [3] + 2.5 -> float32 5.5; bool [True] + 3 -> int64 4;
   * int32 [7] / int32 [2] -> float32 3.5 (true division) */
  mt_tensor *i = masked(dense(MT_int32, 1, SHAPE(1), VALS(3)), bools(1, SHAPE(1), BITS(1)));
  mt_tensor *bo = masked(dense(MT_bool, 1, SHAPE(1), VALS(1)), bools(1, SHAPE(1), BITS(1)));
  mt_tensor *n = number(2.5), *k = int_number(3);
  mt_tensor *s = masked(dense(MT_int32, 1, SHAPE(1), VALS(7)), bools(1, SHAPE(1), BITS(1)));
  mt_tensor *d = dense(MT_int32, 1, SHAPE(1), VALS(2));
  mt_call c;
  mt_error e;
  CHECK_STATUS(run(mt_cpu_add, &c, &e, 2, (const mt_tensor *[]){i, n}, NULL), MT_OK);
  CHECK_EQ_INT(c.out[0]->data->dtype, MT_float32);
  CHECK_NEAR(at(c.out[0]->data, 0), 5.5, 0);
  done(&c, NULL, 0);
  CHECK_STATUS(run(mt_cpu_add, &c, &e, 2, (const mt_tensor *[]){bo, k}, NULL), MT_OK);
  CHECK_EQ_INT(c.out[0]->data->dtype, MT_int64);
  CHECK_NEAR(at(c.out[0]->data, 0), 4, 0);
  done(&c, NULL, 0);
  CHECK_STATUS(run(mt_cpu_true_divide, &c, &e, 2, (const mt_tensor *[]){s, d}, NULL), MT_OK);
  CHECK_EQ_INT(c.out[0]->data->dtype, MT_float32);
  CHECK_NEAR(at(c.out[0]->data, 0), 3.5, 0);
  done(&c, (mt_tensor *[]){i, bo, n, k, s, d}, 6);
}

TEST(maximum_propagates_nan_fmax_ignores_it_and_bitwise_refuses_floats) {
  /* maximum(NaN, 1) = NaN, fmax(NaN, 1) = 1; bitwise_and on float32 has
   * no kernel: DTYPE_MISMATCH naming torch's 'Float' */
  mt_tensor *a = masked(dense(MT_float32, 1, SHAPE(1), VALS(NAN)), bools(1, SHAPE(1), BITS(1)));
  mt_tensor *b = masked(dense(MT_float32, 1, SHAPE(1), VALS(1)), bools(1, SHAPE(1), BITS(1)));
  mt_call c;
  mt_error e;
  CHECK_STATUS(run(mt_cpu_maximum, &c, &e, 2, (const mt_tensor *[]){a, b}, NULL), MT_OK);
  CHECK(isnan(at(c.out[0]->data, 0)));
  done(&c, NULL, 0);
  CHECK_STATUS(run(mt_cpu_fmax, &c, &e, 2, (const mt_tensor *[]){a, b}, NULL), MT_OK);
  CHECK_NEAR(at(c.out[0]->data, 0), 1, 0);
  done(&c, NULL, 0);
  CHECK_STATUS(run(mt_cpu_bitwise_and, &c, &e, 2, (const mt_tensor *[]){a, b}, NULL),
               MT_DTYPE_MISMATCH);
  CHECK(strstr(e.msg, "'Float'") != NULL);
  done(&c, (mt_tensor *[]){a, b}, 2);
}

TEST(in_place_add_casts_to_self_and_refuses_what_self_cannot_hold) {
  /* int8 m.add_(int32 t): 127 + 1 = 128 computed in int32, cast to int8
   * wraps to -128; mask kept. int8 m.add_(2.5): float result into int8 is
   * refused (DTYPE_MISMATCH), as torch's can't-cast check */
  mt_tensor *m = masked(dense(MT_int8, 1, SHAPE(2), VALS(127, 5)), bools(1, SHAPE(2), BITS(1, 0)));
  mt_tensor *t = dense(MT_int32, 1, SHAPE(2), VALS(1, 1));
  mt_tensor *n = number(2.5);
  mt_call c;
  mt_error e;
  CHECK_STATUS(run(mt_cpu_add_, &c, &e, 2, (const mt_tensor *[]){m, t}, NULL), MT_OK);
  CHECK_EQ_INT(c.out[0]->data->dtype, MT_int8);
  CHECK_NEAR(at(c.out[0]->data, 0), -128, 0);
  CHECK(bit(c.out[0]->mask, 0) && !bit(c.out[0]->mask, 1));
  CHECK(at(m->data, 0) == 127); /* CALL-1: self is not written */
  done(&c, NULL, 0);
  CHECK_STATUS(run(mt_cpu_add_, &c, &e, 2, (const mt_tensor *[]){m, n}, NULL), MT_DTYPE_MISMATCH);
  CHECK(strstr(e.msg, "can't be cast") != NULL);
  CHECK_EQ_INT(c.n_out, 0);
  done(&c, (mt_tensor *[]){m, t, n}, 3);
}

/* Sparse storage keeps the structure and computes every stored value: a
 * [2, 4] COO pair at (0, 2), (1, 0), (1, 2) with data 3, 4, 5 and 1, 2, 3
 * and one mask 1, 0, 1: add gives 4, 6, 8 (the masked-out 6 too, as torch),
 * mask 1, 0, 1, coalesced; times the number 2 gives 6, 8, 10. A plain dense
 * operand meets the stored values as they are (SP-2): the [2, 4] tensor
 * cannot broadcast against 3 values (SHAPE_MISMATCH, torch's "size of
 * tensor a (3) must match the size of tensor b (4)"), a [3] tensor 10, 20,
 * 30 adds value by value: 3+10, 4+20, 5+30 = 13, 24, 35. add_ on COO
 * storage is refused (LAYOUT_MISMATCH: torch's uncoalesced rebuild). */
TEST(coo_storage_computes_the_stored_values_and_keeps_indices_and_mask) {
  const int64_t ri[3] = {0, 1, 1}, ci[3] = {2, 0, 2};
  mt_tensor *a = masked(coo2(MT_float32, 2, 4, 3, ri, ci, VALS(3, 4, 5), 1),
                        coo2(MT_bool, 2, 4, 3, ri, ci, VALS(1, 0, 1), 1));
  mt_tensor *b = masked(coo2(MT_float32, 2, 4, 3, ri, ci, VALS(1, 2, 3), 1),
                        coo2(MT_bool, 2, 4, 3, ri, ci, VALS(1, 0, 1), 1));
  mt_tensor *two = number(2), *t = dense(MT_float32, 2, SHAPE(2, 4), VALS(0, 0, 0, 0, 0, 0, 0, 0));
  mt_call c;
  mt_error e;
  CHECK_STATUS(run(mt_cpu_add, &c, &e, 2, (const mt_tensor *[]){a, b}, NULL), MT_OK);
  const mt_tensor *d = c.out[0]->data, *m = c.out[0]->mask;
  CHECK_EQ_INT(d->kind, MT_KIND_COO);
  CHECK(d->coalesced && d->nnz == 3 && m->nnz == 3);
  static const double sum[3] = {4, 6, 8}, twice[3] = {6, 8, 10};
  for (int k = 0; k < 3; k++) {
    CHECK(d->indices[k] == ri[k] && d->indices[3 + k] == ci[k]);
    CHECK_NEAR(at(d, k), sum[k], 0);
    CHECK_EQ_INT(bit(m, k), k != 1);
  }
  done(&c, NULL, 0);
  CHECK_STATUS(run(mt_cpu_mul, &c, &e, 2, (const mt_tensor *[]){a, two}, NULL), MT_OK);
  for (int k = 0; k < 3; k++) CHECK_NEAR(at(c.out[0]->data, k), twice[k], 0);
  done(&c, NULL, 0);
  CHECK_STATUS(run(mt_cpu_add, &c, &e, 2, (const mt_tensor *[]){a, t}, NULL), MT_SHAPE_MISMATCH);
  CHECK_EQ_INT(c.n_out, 0);
  mt_tensor *t3 = dense(MT_float32, 1, SHAPE(3), VALS(10, 20, 30));
  static const double plus_t3[3] = {13, 24, 35};
  CHECK_STATUS(run(mt_cpu_add, &c, &e, 2, (const mt_tensor *[]){a, t3}, NULL), MT_OK);
  for (int k = 0; k < 3; k++) CHECK_NEAR(at(c.out[0]->data, k), plus_t3[k], 0);
  done(&c, NULL, 0);
  CHECK_STATUS(run(mt_cpu_add_, &c, &e, 2, (const mt_tensor *[]){a, b}, NULL), MT_LAYOUT_MISMATCH);
  CHECK_EQ_INT(c.n_out, 0);
  done(&c, (mt_tensor *[]){a, b, two, t, t3}, 5);
}

MT_TEST_MAIN(T(in_place_add_casts_to_self_and_refuses_what_self_cannot_hold),
             T(coo_storage_computes_the_stored_values_and_keeps_indices_and_mask),
             T(integer_remainder_has_the_divisors_sign_fmod_the_dividends),
             T(integer_zero_divisor_raises_only_where_masked_in),
             T(shifts_beyond_the_width_give_zero_or_the_sign),
             T(plain_tensor_broadcasts_and_the_mask_is_expanded),
             T(int_data_with_a_float_number_promotes_to_float32_bool_with_int_to_int64),
             T(maximum_propagates_nan_fmax_ignores_it_and_bitwise_refuses_floats))

/* test_cpu_masked_fn.c - the CPU kernels of torch.masked's functional ops
 * (masked_sum ... masked_logaddexp; spec/SEMANTICS.md MFN-1..9): plain
 * tensor + bool mask in, plain tensor out (sparse in, sparse out). Inputs are literals; expected
 * values are derived by hand in comments. P marks a masked-out element
 * holding poison, which must not reach the result. */
#include <stdlib.h>

#include "cpu_fixtures.h"
#include "mt_test.h"

/* Runs fn on [x, m] (m NULL: [x]) with one int kwarg `dim`. */
static mt_status run_dim(mt_kernel_fn fn, mt_call *c, mt_error *e, const mt_tensor *x,
                         const mt_tensor *m, int64_t dim) {
  mt_kwarg kv[] = {kw_int("dim", dim)};
  mt_kwargs kw = {1, kv};
  const mt_tensor *in[] = {x, m};
  return run(fn, c, e, m ? 2 : 1, in, &kw); /* the kernel is done with in and kw */
}

TEST(softmax_masked_out_is_zero_and_a_fully_masked_row_is_nan) {
  /* data [[1, 1, P], [P, P, P]] (P = +inf), mask [[1, 1, 0], [0, 0, 0]],
   * dim 1. Row 0 after the -inf fill: [1, 1, -inf]; max 1; exp(v - 1) =
   * [1, 1, 0], sum 2 -> [0.5, 0.5, 0]. Row 1: all -inf; -inf - (-inf) =
   * NaN -> [NaN, NaN, NaN]. */
  mt_tensor *x = dense(MT_float64, 2, SHAPE(2, 3), VALS(1, 1, INFINITY, INFINITY, INFINITY,
                                                       INFINITY));
  mt_tensor *m = bools(2, SHAPE(2, 3), BITS(1, 1, 0, 0, 0, 0));
  mt_call c;
  mt_error e;
  CHECK_STATUS(run_dim(mt_cpu_masked_softmax, &c, &e, x, m, 1), MT_OK);
  if (c.n_out == 1) {
    mt_tensor *o = c.out[0];
    CHECK_EQ_INT(o->kind, MT_KIND_DENSE);
    CHECK_NEAR(at(o, 0), 0.5, 0);
    CHECK_NEAR(at(o, 1), 0.5, 0);
    CHECK_NEAR(at(o, 2), 0.0, 0);
    for (int k = 3; k < 6; k++) CHECK_EQ_INT(isnan(at(o, k)), 1);
  }
  done(&c, (mt_tensor *[]){x, m}, 2);
}

TEST(sum_broadcasts_a_smaller_mask) {
  /* data [[1, P, 3], [4, P, 6]] (P = NaN), mask [1, 0, 1] broadcast to
   * both rows, dim 1: [1 + 3, 4 + 6] = [4, 10]. */
  mt_tensor *x = dense(MT_float32, 2, SHAPE(2, 3), VALS(1, NAN, 3, 4, NAN, 6));
  mt_tensor *m = bools(1, SHAPE(3), BITS(1, 0, 1));
  mt_call c;
  mt_error e;
  CHECK_STATUS(run_dim(mt_cpu_masked_sum, &c, &e, x, m, 1), MT_OK);
  if (c.n_out == 1) {
    CHECK_EQ_INT(c.out[0]->dtype, MT_float32);
    CHECK_NEAR(at(c.out[0], 0), 4, 0);
    CHECK_NEAR(at(c.out[0], 1), 10, 0);
  }
  done(&c, (mt_tensor *[]){x, m}, 2);
}

TEST(mask_errors_follow_torch) {
  /* a 3-d mask on a 2-d input: torch's IndexError -> INDEX_OUT_OF_RANGE;
   * a (2, 2) mask on a (2, 3) input: RuntimeError -> SHAPE_MISMATCH. */
  mt_tensor *x = dense(MT_float64, 2, SHAPE(2, 3), VALS(1, 2, 3, 4, 5, 6));
  mt_tensor *m3 = bools(3, SHAPE(1, 2, 3), BITS(1, 1, 1, 1, 1, 1));
  mt_tensor *m2 = bools(2, SHAPE(2, 2), BITS(1, 1, 1, 1));
  mt_call c;
  mt_error e;
  CHECK_STATUS(run_dim(mt_cpu_masked_amax, &c, &e, x, m3, 1), MT_INDEX_OUT_OF_RANGE);
  CHECK_EQ_INT(c.n_out, 0);
  CHECK_STATUS(run_dim(mt_cpu_masked_amax, &c, &e, x, m2, 1), MT_SHAPE_MISMATCH);
  CHECK_EQ_INT(c.n_out, 0);
  done(&c, (mt_tensor *[]){x, m3, m2}, 3);
}

TEST(var_divides_by_the_specified_count_minus_one) {
  /* data [1, 2, P, 4] (P = 1e30), mask [1, 1, 0, 1], dim 0. count 3, mean
   * 7/3; deviations -4/3, -1/3, 5/3; squares 16/9 + 1/9 + 25/9 = 42/9;
   * / (3 - 1) = 7/3. mean itself: 7/3. */
  mt_tensor *x = dense(MT_float64, 1, SHAPE(4), VALS(1, 2, 1e30, 4));
  mt_tensor *m = bools(1, SHAPE(4), BITS(1, 1, 0, 1));
  mt_call c;
  mt_error e;
  CHECK_STATUS(run_dim(mt_cpu_masked_var, &c, &e, x, m, 0), MT_OK);
  if (c.n_out == 1) CHECK_NEAR(at(c.out[0], 0), 7.0 / 3.0, 1e-15);
  done(&c, NULL, 0);
  CHECK_STATUS(run_dim(mt_cpu_masked_mean, &c, &e, x, m, 0), MT_OK);
  if (c.n_out == 1) CHECK_NEAR(at(c.out[0], 0), 7.0 / 3.0, 1e-15);
  done(&c, (mt_tensor *[]){x, m}, 2);
}

TEST(median_skips_a_specified_nan) {
  /* data [NaN, 3, 1, 2], all masked in, dim 0: torch.nanmedian skips the
   * NaN; the lower median of [1, 2, 3] is 2. */
  mt_tensor *x = dense(MT_float32, 1, SHAPE(4), VALS(NAN, 3, 1, 2));
  mt_tensor *m = bools(1, SHAPE(4), BITS(1, 1, 1, 1));
  mt_call c;
  mt_error e;
  CHECK_STATUS(run_dim(mt_cpu_masked_median, &c, &e, x, m, 0), MT_OK);
  if (c.n_out == 1) CHECK_NEAR(at(c.out[0], 0), 2, 0);
  done(&c, (mt_tensor *[]){x, m}, 2);
}

TEST(int8_sum_gives_int64_without_wrapping) {
  /* int8 [100, 100, 100, P] (P = 127), mask [1, 1, 1, 0], dim 0: 300 in
   * int64 (int8 would wrap to 44). */
  mt_tensor *x = dense(MT_int8, 1, SHAPE(4), VALS(100, 100, 100, 127));
  mt_tensor *m = bools(1, SHAPE(4), BITS(1, 1, 1, 0));
  mt_call c;
  mt_error e;
  CHECK_STATUS(run_dim(mt_cpu_masked_sum, &c, &e, x, m, 0), MT_OK);
  if (c.n_out == 1) {
    CHECK_EQ_INT(c.out[0]->dtype, MT_int64);
    CHECK_EQ_INT(((const int64_t *)c.out[0]->values)[0], 300);
  }
  done(&c, (mt_tensor *[]){x, m}, 2);
}

TEST(normalize_of_a_fully_masked_row_is_zero_and_inputs_stay_unchanged) {
  /* data [[3, 4], [P, P]] (P = NaN), mask [[1, 1], [0, 0]], ord 2, dim 1.
   * Row 0: norm 5 -> [0.6, 0.8]; row 1: 0 / max(0, 1e-12) = [0, 0]. The
   * input buffer is bitwise the same afterwards (CALL-1). */
  mt_tensor *x = dense(MT_float64, 2, SHAPE(2, 2), VALS(3, 4, NAN, NAN));
  mt_tensor *m = bools(2, SHAPE(2, 2), BITS(1, 1, 0, 0));
  double before[4];
  memcpy(before, x->values, sizeof before);
  mt_kwarg kv[] = {kw_float("ord", 2.0), kw_int("dim", 1)};
  mt_kwargs kw = {2, kv};
  const mt_tensor *in[] = {x, m};
  mt_call c;
  mt_error e;
  CHECK_STATUS(run(mt_cpu_masked_normalize, &c, &e, 2, in, &kw), MT_OK);
  if (c.n_out == 1) {
    const double want[] = {0.6, 0.8, 0, 0};
    for (int k = 0; k < 4; k++) CHECK_NEAR(at(c.out[0], k), want[k], 1e-15);
    CHECK_EQ_INT(c.out[0]->values != x->values, 1);
  }
  CHECK_EQ_INT(memcmp(before, x->values, sizeof before), 0);
  done(&c, (mt_tensor *[]){x, m}, 2);
}

TEST(sum_dtype_int8_casts_each_element_before_summing) {
  /* MFN-8, no golden pair narrows an integer: int64 [200, 100, P] (P = 7),
   * mask [1, 1, 0], dim 0, dtype=int8. torch.sum(filled, dtype=int8) casts
   * first: 200 -> 200 - 256 = -56, 100 -> 100, the fill 0; -56 + 100 = 44,
   * an int8 (torch gives tensor(44, dtype=torch.int8)). */
  mt_tensor *x = dense(MT_int64, 1, SHAPE(3), VALS(200, 100, 7));
  mt_tensor *m = bools(1, SHAPE(3), BITS(1, 1, 0));
  mt_kwarg kv[] = {kw_int("dim", 0), {.name = "dtype", .type = MT_KW_STR, .s = "int8"}};
  mt_kwargs kw = {2, kv};
  const mt_tensor *in[] = {x, m};
  mt_call c;
  mt_error e;
  CHECK_STATUS(run(mt_cpu_masked_sum, &c, &e, 2, in, &kw), MT_OK);
  if (c.n_out == 1) {
    CHECK_EQ_INT(c.out[0]->dtype, MT_int8);
    CHECK_EQ_INT(((const int8_t *)c.out[0]->values)[0], 44);
  }
  done(&c, (mt_tensor *[]){x, m}, 2);
}

TEST(coo_mask_with_a_stored_false_masks_that_element_out) {
  /* MFN-9, golden masks store True entries only: COO input (2, 3) with
   * (0,0) = -1, (0,2) = -2, (1,1) = 5; COO mask storing (0,0) T, (0,1) T,
   * (1,1) F, (1,2) T; amax over dim 1. Row 0: masked in (0,0) = -1 and
   * (0,1), unstored -> 0: max 0. Row 1: (1,1) is a stored False, masked
   * out, so 5 is never read; (1,2) masked in, unstored -> 0: max 0. Result
   * COO entries (0) = 0, (1) = 0 (torch: indices [[0, 1]], values [0, 0]). */
  mt_tensor *x = coo2(MT_float32, 2, 3, 3, (int64_t[]){0, 0, 1}, (int64_t[]){0, 2, 1},
                      VALS(-1, -2, 5), 1);
  mt_tensor *m = coo2(MT_bool, 2, 3, 4, (int64_t[]){0, 0, 1, 1}, (int64_t[]){0, 1, 1, 2},
                      VALS(1, 1, 0, 1), 1);
  mt_call c;
  mt_error e;
  CHECK_STATUS(run_dim(mt_cpu_masked_amax, &c, &e, x, m, 1), MT_OK);
  if (c.n_out == 1) {
    mt_tensor *o = c.out[0];
    CHECK_EQ_INT(o->kind, MT_KIND_COO);
    CHECK_EQ_INT(o->nnz, 2);
    if (o->nnz == 2) {
      CHECK_EQ_INT(o->indices[0], 0);
      CHECK_EQ_INT(o->indices[1], 1);
      CHECK_NEAR(at(o, 0), 0, 0);
      CHECK_NEAR(at(o, 1), 0, 0);
    }
  }
  done(&c, (mt_tensor *[]){x, m}, 2);
}

/* masked_logaddexp of [x, y] or [x, y, mx, my] (no kwargs). */
static mt_status lae(mt_call *c, mt_error *e, const mt_tensor *x, const mt_tensor *y,
                     const mt_tensor *mx, const mt_tensor *my) {
  const mt_tensor *in[] = {x, y, mx, my};
  return run(mt_cpu_masked_logaddexp, c, e, mx ? 4 : 2, in, NULL);
}

TEST(logaddexp_promotes_operands_of_two_dtypes) {
  /* MFN-6/7: each operand is filled with its own dtype's identity, then
   * torch.logaddexp promotes them, and the result is .to(input dtype).
   * input float32 [1, 2, 3] (2 masked out: -inf), other int64 [1, 0, 5]
   * (5 masked out: INT64_MIN, -2^63 in float32): logaddexp(1, 1) =
   * 1 + log 2 = 1.6931472, logaddexp(-inf, 0) = 0, logaddexp(3, -2^63) = 3
   * (torch: [1.6931471824645996, 0.0, 3.0]). A uint8 other's fill is 0,
   * not -inf: logaddexp(3, 0) = 3 + log1p(e^-3) = 3.0485873 (torch
   * 3.0485873222351074). An int64 input and a float32 other: computed in
   * float32, truncated to int64: [1, 0, 3]. A bool operand with a mask has
   * no identity, int64 with int32 promotes to int64, which has no kernel:
   * DTYPE_MISMATCH. */
  mt_tensor *xf = dense(MT_float32, 1, SHAPE(3), VALS(1, NAN, 3));
  mt_tensor *xi = dense(MT_int64, 1, SHAPE(3), VALS(1, 9e18, 3));
  mt_tensor *yi = dense(MT_int64, 1, SHAPE(3), VALS(1, 0, 9e18));
  mt_tensor *yu = dense(MT_uint8, 1, SHAPE(3), VALS(1, 0, 255));
  mt_tensor *yf = dense(MT_float32, 1, SHAPE(3), VALS(1, 0, INFINITY));
  mt_tensor *yb = bools(1, SHAPE(3), BITS(1, 0, 1));
  mt_tensor *y32 = dense(MT_int32, 1, SHAPE(3), VALS(1, 0, 5));
  mt_tensor *mx = bools(1, SHAPE(3), BITS(1, 0, 1)), *my = bools(1, SHAPE(3), BITS(1, 1, 0));
  mt_call c;
  mt_error e;
  CHECK_STATUS(lae(&c, &e, xf, yi, mx, my), MT_OK);
  if (c.n_out == 1) {
    mt_tensor *o = c.out[0];
    CHECK_EQ_INT(o->dtype, MT_float32);
    CHECK_NEAR(at(o, 0), 1.6931471824645996, 0);
    CHECK_NEAR(at(o, 1), 0.0, 0);
    CHECK_NEAR(at(o, 2), 3.0, 0);
  }
  done(&c, NULL, 0);
  CHECK_STATUS(lae(&c, &e, xf, yu, mx, my), MT_OK);
  if (c.n_out == 1) CHECK_NEAR(at(c.out[0], 2), 3.0485873222351074, 0);
  done(&c, NULL, 0);
  CHECK_STATUS(lae(&c, &e, xi, yf, mx, my), MT_OK);
  if (c.n_out == 1) {
    CHECK_EQ_INT(c.out[0]->dtype, MT_int64);
    for (int k = 0; k < 3; k++)
      CHECK_EQ_INT(((const int64_t *)c.out[0]->values)[k], k == 1 ? 0 : k + 1);
  }
  done(&c, NULL, 0);
  CHECK_STATUS(lae(&c, &e, xf, yb, mx, my), MT_DTYPE_MISMATCH);
  CHECK_HAS(e.msg, "identity of logaddexp on torch.bool input");
  done(&c, NULL, 0);
  CHECK_STATUS(lae(&c, &e, xi, y32, NULL, NULL), MT_DTYPE_MISMATCH);
  CHECK_HAS(e.msg, "not implemented for 'Long'");
  done(&c, (mt_tensor *[]){xf, xi, yi, yu, yf, yb, y32, mx, my}, 9);
}

MT_TEST_MAIN(T(softmax_masked_out_is_zero_and_a_fully_masked_row_is_nan),
             T(sum_broadcasts_a_smaller_mask), T(mask_errors_follow_torch),
             T(var_divides_by_the_specified_count_minus_one), T(median_skips_a_specified_nan),
             T(int8_sum_gives_int64_without_wrapping),
             T(normalize_of_a_fully_masked_row_is_zero_and_inputs_stay_unchanged),
             T(sum_dtype_int8_casts_each_element_before_summing),
             T(coo_mask_with_a_stored_false_masks_that_element_out),
             T(logaddexp_promotes_operands_of_two_dtypes))

/* test_cpu_grad_binary.c - the backward kernels of the MaskedTensor binary
 * ops (impl/cpu/grad_binary.c through grad_ew.c): both operands' gradients
 * (GRAD-2), a plain operand's MaskedTensor gradient summed over the
 * broadcast dims with the OR of the mask (GRAD-4), none for a number, CSR
 * storage kept (GRAD-8), float16/bfloat16 gradients (GRAD-9) and torch's
 * refusals (GRAD-5). Inputs are literals;
 * expected values are derived by hand in the comments. */
#include <math.h>
#include <stdlib.h>

#include "cpu_fixtures.h"
#include "mt_test.h"

static mt_status back(mt_kernel_fn fn, mt_call *call, mt_error *err, int n_in,
                      const mt_tensor *const *in, const mt_tensor *g) {
  const mt_tensor *gs[1] = {g}; /* read only during the call */
  return run_backward(fn, call, err, n_in, in, NULL, 1, gs);
}

static mt_tensor *m1(int n, const double *v, const int *b) {
  return masked(dense(MT_float64, 1, SHAPE(n), v), bools(1, SHAPE(n), b));
}

TEST(div_gradients_are_g_over_b_and_minus_g_a_over_b_squared) {
  /* a = [6, NaN(masked out)], b = [2, 0(masked out)], g = [4, NaN]:
   * da = g / b = 2; db = -g ((a / b) / b) = -4 * 1.5 = -6 */
  mt_tensor *a = m1(2, VALS(6, NAN), BITS(1, 0));
  mt_tensor *b = m1(2, VALS(2, 0), BITS(1, 0));
  mt_tensor *g = m1(2, VALS(4, NAN), BITS(1, 0));
  mt_call c;
  mt_error e;
  CHECK_STATUS(back(mt_cpu_grad_div, &c, &e, 2, (const mt_tensor *[]){a, b}, g), MT_OK);
  CHECK_EQ_INT(c.n_out, 2);
  CHECK_NEAR(at(c.out[0]->data, 0), 2, 0);
  CHECK_NEAR(at(c.out[1]->data, 0), -6, 0);
  CHECK_EQ_INT(bit(c.out[0]->mask, 1), 0);
  CHECK_EQ_INT(bit(c.out[1]->mask, 1), 0);
  done(&c, (mt_tensor *[]){a, b, g}, 3);
}

TEST(plain_operand_gets_a_masked_gradient_summed_over_broadcast_dims) {
  /* add(t, m), t plain [2, 1], m masked [3] with mask [1, 0, 1]: the result
   * [2, 3] has m's mask in each row. t's gradient: the masked sum of g over
   * dim 1: row 0: 1 + 3 = 4, row 1: 4 + 6 = 10, mask [1, 1]. m's: the sum
   * over dim 0: [1 + 4, -, 3 + 6] = [5, -, 9], m's mask */
  mt_tensor *t = dense(MT_float64, 2, SHAPE(2, 1), VALS(0, 0));
  mt_tensor *m = m1(3, VALS(0, NAN, 0), BITS(1, 0, 1));
  mt_tensor *g = masked(dense(MT_float64, 2, SHAPE(2, 3), VALS(1, NAN, 3, 4, NAN, 6)),
                        bools(2, SHAPE(2, 3), BITS(1, 0, 1, 1, 0, 1)));
  mt_call c;
  mt_error e;
  CHECK_STATUS(back(mt_cpu_grad_add, &c, &e, 2, (const mt_tensor *[]){t, m}, g), MT_OK);
  CHECK_EQ_INT(c.out[0]->kind, MT_KIND_MASKED);
  CHECK_EQ_INT(c.out[0]->ndim, 2);
  CHECK_EQ_INT(c.out[0]->shape[0], 2);
  CHECK_EQ_INT(c.out[0]->shape[1], 1);
  CHECK_NEAR(at(c.out[0]->data, 0), 4, 0);
  CHECK_NEAR(at(c.out[0]->data, 1), 10, 0);
  CHECK_EQ_INT(bit(c.out[0]->mask, 0), 1);
  CHECK_NEAR(at(c.out[1]->data, 0), 5, 0);
  CHECK_NEAR(at(c.out[1]->data, 2), 9, 0);
  CHECK_EQ_INT(bit(c.out[1]->mask, 1), 0);
  done(&c, (mt_tensor *[]){t, m, g}, 3);
}

TEST(number_operand_gets_no_gradient) {
  /* mul(m, 2.5): dm = 2.5 g = 5; the number: NULL */
  mt_tensor *m = m1(1, VALS(7), BITS(1));
  mt_tensor *s = number(2.5);
  mt_tensor *g = m1(1, VALS(2), BITS(1));
  mt_call c;
  mt_error e;
  CHECK_STATUS(back(mt_cpu_grad_mul, &c, &e, 2, (const mt_tensor *[]){m, s}, g), MT_OK);
  CHECK_EQ_INT(c.n_out, 2);
  CHECK_NEAR(at(c.out[0]->data, 0), 5, 0);
  CHECK(c.out[1] == NULL);
  done(&c, (mt_tensor *[]){m, s, g}, 3);
}

TEST(csr_storage_gradient_is_csr_and_a_missing_last_column_refuses_sub) {
  /* CSR [2 x 2] storing (0,0) and (1,1): sub's db = -g = [-1, -2]. With only
   * (0,0) and (1,0) stored, torch rebuilds -g's data with 1 column: refused
   * (ValueError: data.size() must equal mask.size()) */
  int64_t r[] = {0, 1}, full[] = {0, 1}, narrow[] = {0, 0};
  mt_tensor *a = masked(csr2(MT_float64, 2, 2, 2, r, full, VALS(1, 1)),
                        csr2(MT_bool, 2, 2, 2, r, full, VALS(1, 1)));
  mt_tensor *g = masked(csr2(MT_float64, 2, 2, 2, r, full, VALS(1, 2)),
                        csr2(MT_bool, 2, 2, 2, r, full, VALS(1, 1)));
  mt_tensor *a2 = masked(csr2(MT_float64, 2, 2, 2, r, narrow, VALS(1, 1)),
                         csr2(MT_bool, 2, 2, 2, r, narrow, VALS(1, 1)));
  mt_tensor *g2 = masked(csr2(MT_float64, 2, 2, 2, r, narrow, VALS(1, 2)),
                         csr2(MT_bool, 2, 2, 2, r, narrow, VALS(1, 1)));
  mt_call c;
  mt_error e;
  CHECK_STATUS(back(mt_cpu_grad_sub, &c, &e, 2, (const mt_tensor *[]){a, a}, g), MT_OK);
  CHECK_EQ_INT(c.out[1]->data->kind, MT_KIND_CSR);
  CHECK_NEAR(at(c.out[1]->data, 0), -1, 0);
  CHECK_NEAR(at(c.out[1]->data, 1), -2, 0);
  done(&c, NULL, 0);
  CHECK_STATUS(back(mt_cpu_grad_sub, &c, &e, 2, (const mt_tensor *[]){a2, a2}, g2),
               MT_INVALID_ARGUMENT);
  CHECK_HAS(e.msg, "data.size() must equal mask.size()");
  /* mul runs no unary op: fine */
  CHECK_STATUS(back(mt_cpu_grad_mul, &c, &e, 2, (const mt_tensor *[]){a2, a2}, g2), MT_OK);
  done(&c, (mt_tensor *[]){a, g, a2, g2}, 4);
}

TEST(refusals_follow_torch) {
  /* floor_divide: no derivative (INVALID_ARGUMENT); fmod by a tensor: div
   * with rounding_mode= (INVALID_ARGUMENT), by a number: g; maximum:
   * LAYOUT_MISMATCH; mul by a masked operand of fewer dims than g:
   * MASK_MISMATCH */
  mt_tensor *m = m1(2, VALS(1, 2), BITS(1, 1));
  mt_tensor *s = number(1.5);
  mt_tensor *g = m1(2, VALS(3, 4), BITS(1, 1));
  mt_tensor *t = dense(MT_float64, 2, SHAPE(2, 2), VALS(1, 1, 1, 1));
  mt_tensor *g2 = masked(dense(MT_float64, 2, SHAPE(2, 2), VALS(1, 1, 1, 1)),
                         bools(2, SHAPE(2, 2), BITS(1, 1, 1, 1)));
  mt_call c;
  mt_error e;
  CHECK_STATUS(back(mt_cpu_grad_floor_divide, &c, &e, 2, (const mt_tensor *[]){m, m}, g),
               MT_INVALID_ARGUMENT);
  CHECK_STATUS(back(mt_cpu_grad_fmod, &c, &e, 2, (const mt_tensor *[]){m, m}, g),
               MT_INVALID_ARGUMENT);
  CHECK_HAS(e.msg, "len(kwargs) must equal 0");
  CHECK_STATUS(back(mt_cpu_grad_fmod, &c, &e, 2, (const mt_tensor *[]){m, s}, g), MT_OK);
  CHECK_NEAR(at(c.out[0]->data, 1), 4, 0);
  done(&c, NULL, 0);
  CHECK_STATUS(back(mt_cpu_grad_maximum, &c, &e, 2, (const mt_tensor *[]){m, m}, g),
               MT_LAYOUT_MISMATCH);
  CHECK_STATUS(back(mt_cpu_grad_mul, &c, &e, 2, (const mt_tensor *[]){t, m}, g2),
               MT_MASK_MISMATCH);
  /* add has no such product: t's gradient is g2 itself, m's g2 summed over
   * dim 0 = [2, 2] */
  CHECK_STATUS(back(mt_cpu_grad_add, &c, &e, 2, (const mt_tensor *[]){t, m}, g2), MT_OK);
  CHECK_NEAR(at(c.out[1]->data, 0), 2, 0);
  done(&c, (mt_tensor *[]){m, s, g, t, g2}, 5);
}

TEST(half_precision_gradients_keep_the_dtype_and_round_once) {
  /* div(a, b), a = [1], b = [3], g = [1] (GRAD-9). da = g / b = 1/3:
   * float16 keeps 10 bits after the leading one, 1/3 = 1.0101010101|0101...
   * x 2^-2 rounds down to (1 + 341/1024) / 4 = 1365/4096; bfloat16 keeps 7,
   * 1.0101010|1010... rounds up to (1 + 43/128) / 4 = 171/512.
   * db = -g a / b^2 = -1/9 = -1.1100011100|0111... x 2^-4: float16
   * -455/4096; bfloat16 -1.1100011|100... rounds up to -(1 + 100/128) / 16
   * = -57/512 (the dropped bits are 1 then not all zero). */
  static const mt_dtype dts[2] = {MT_float16, MT_bfloat16};
  static const double da[2] = {1365.0 / 4096, 171.0 / 512}, db[2] = {-455.0 / 4096, -57.0 / 512};
  for (int k = 0; k < 2; k++) {
    mt_tensor *a = masked(dense(dts[k], 1, SHAPE(1), VALS(1)), bools(1, SHAPE(1), BITS(1)));
    mt_tensor *b = masked(dense(dts[k], 1, SHAPE(1), VALS(3)), bools(1, SHAPE(1), BITS(1)));
    mt_tensor *g = masked(dense(dts[k], 1, SHAPE(1), VALS(1)), bools(1, SHAPE(1), BITS(1)));
    mt_call c;
    mt_error e;
    CHECK_STATUS(back(mt_cpu_grad_div, &c, &e, 2, (const mt_tensor *[]){a, b}, g), MT_OK);
    CHECK_EQ_INT(c.out[0]->data->dtype, dts[k]);
    CHECK_EQ_INT(c.out[1]->data->dtype, dts[k]);
    CHECK_NEAR(at(c.out[0]->data, 0), da[k], 0);
    CHECK_NEAR(at(c.out[1]->data, 0), db[k], 0);
    done(&c, (mt_tensor *[]){a, b, g}, 3);
  }
}

MT_TEST_MAIN(T(div_gradients_are_g_over_b_and_minus_g_a_over_b_squared),
             T(half_precision_gradients_keep_the_dtype_and_round_once),
             T(plain_operand_gets_a_masked_gradient_summed_over_broadcast_dims),
             T(number_operand_gets_no_gradient),
             T(csr_storage_gradient_is_csr_and_a_missing_last_column_refuses_sub),
             T(refusals_follow_torch))

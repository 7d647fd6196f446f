/* test_cpu_grad_masked_fn.c - the CPU backward kernels of torch.masked's
 * functional ops (impl/cpu/grad_masked_fn.c; MFG-*): +0 at masked-out
 * positions whatever the input holds there (MFG-2), torch's formulas
 * (amax ties, prod's zeros, softmax over the filled line), var's NaN leak
 * (MFG-3), the CSR refusal. Inputs are literals; expected values are
 * derived by hand in the comments (grad_masked_fn.h5 is the main check). */
#include <math.h>
#include <stdlib.h>

#include "cpu_fixtures.h"
#include "mt_test.h"

static mt_status run_grad(mt_kernel_fn fn, mt_call *call, mt_error *err, int n_in,
                         const mt_tensor *const *in, const mt_tensor *go, const mt_kwargs *kw) {
  static const mt_tensor *gos[1];
  gos[0] = go;
  return run_backward(fn, call, err, n_in, in, kw, 1, gos);
}

TEST(sum_gives_the_upstream_gradient_under_the_mask_and_zero_elsewhere) {
  /* x = [[1, NaN], [2, 3]], mask [[1, 0], [1, 1]], dim 1, go = [10, 20]:
   * [[10, +0], [20, 20]]; the mask gets no gradient */
  mt_tensor *x = dense(MT_float32, 2, SHAPE(2, 2), VALS(1, NAN, 2, 3));
  mt_tensor *m = bools(2, SHAPE(2, 2), BITS(1, 0, 1, 1));
  mt_tensor *go = dense(MT_float32, 1, SHAPE(2), VALS(10, 20));
  mt_kwarg d = kw_int("dim", 1);
  mt_kwargs kw = {1, &d};
  mt_call c;
  mt_error e;
  CHECK_STATUS(run_grad(mt_cpu_grad_masked_sum, &c, &e, 2, (const mt_tensor *[]){x, m}, go, &kw),
               MT_OK);
  CHECK_EQ_INT(c.n_out, 2);
  CHECK(c.out[1] == NULL);
  CHECK_EQ_INT(c.out[0]->kind, MT_KIND_DENSE);
  CHECK_EQ_INT(c.out[0]->dtype, MT_float32);
  CHECK_NEAR(at(c.out[0], 0), 10, 0);
  CHECK(at(c.out[0], 1) == 0.0 && !signbit(at(c.out[0], 1)));
  CHECK_NEAR(at(c.out[0], 2), 20, 0);
  CHECK_NEAR(at(c.out[0], 3), 20, 0);
  done(&c, (mt_tensor *[]){x, m, go}, 3);
}

TEST(amax_shares_the_gradient_among_ties) {
  /* x = [[3, 3, 1]], every element in, dim 1, go = [6]: the two maxima
   * get 6 / 2 each, the rest 0 */
  mt_tensor *x = dense(MT_float64, 2, SHAPE(1, 3), VALS(3, 3, 1));
  mt_tensor *go = dense(MT_float64, 1, SHAPE(1), VALS(6));
  mt_kwarg d = kw_int("dim", 1);
  mt_kwargs kw = {1, &d};
  mt_call c;
  mt_error e;
  CHECK_STATUS(run_grad(mt_cpu_grad_masked_amax, &c, &e, 1, (const mt_tensor *[]){x}, go, &kw),
               MT_OK);
  CHECK_NEAR(at(c.out[0], 0), 3, 0);
  CHECK_NEAR(at(c.out[0], 1), 3, 0);
  CHECK_NEAR(at(c.out[0], 2), 0, 0);
  done(&c, (mt_tensor *[]){x, go}, 2);
}

TEST(prod_gives_the_product_of_the_others_also_at_a_zero) {
  /* x = [[2, 0, 5]], go = [1]: the product of the others, [0, 10, 0]
   * (torch's safe path for zeros); x = [[2, 4]]: result 8, 8 / x = [4, 2] */
  mt_tensor *x = dense(MT_float64, 2, SHAPE(1, 3), VALS(2, 0, 5));
  mt_tensor *y = dense(MT_float64, 2, SHAPE(1, 2), VALS(2, 4));
  mt_tensor *go = dense(MT_float64, 1, SHAPE(1), VALS(1));
  mt_kwarg d = kw_int("dim", 1);
  mt_kwargs kw = {1, &d};
  mt_call c;
  mt_error e;
  CHECK_STATUS(run_grad(mt_cpu_grad_masked_prod, &c, &e, 1, (const mt_tensor *[]){x}, go, &kw),
               MT_OK);
  CHECK_NEAR(at(c.out[0], 0), 0, 0);
  CHECK_NEAR(at(c.out[0], 1), 10, 0);
  CHECK_NEAR(at(c.out[0], 2), 0, 0);
  done(&c, NULL, 0);
  CHECK_STATUS(run_grad(mt_cpu_grad_masked_prod, &c, &e, 1, (const mt_tensor *[]){y}, go, &kw),
               MT_OK);
  CHECK_NEAR(at(c.out[0], 0), 4, 0);
  CHECK_NEAR(at(c.out[0], 1), 2, 0);
  done(&c, (mt_tensor *[]){x, y, go}, 3);
}

TEST(var_reads_the_masked_out_deviation) {
  /* x = [[1, 3, p]], mask [1, 1, 0], dim 1, correction 1, go = [1]: mean 2,
   * count 2 - 1 = 1: 2 * (x - mean) / 1 = [-2, 2], +0 at p when p is finite
   * (p = 1e30). p = NaN: the masked-out deviation NaN * 0 = NaN, and through
   * the mean every masked-in gradient is NaN too (MFG-3, torch's leak) */
  mt_tensor *x = dense(MT_float64, 2, SHAPE(1, 3), VALS(1, 3, 1e30));
  mt_tensor *xn = dense(MT_float64, 2, SHAPE(1, 3), VALS(1, 3, NAN));
  mt_tensor *m = bools(2, SHAPE(1, 3), BITS(1, 1, 0));
  mt_tensor *go = dense(MT_float64, 1, SHAPE(1), VALS(1));
  mt_kwarg d = kw_int("dim", 1);
  mt_kwargs kw = {1, &d};
  mt_call c;
  mt_error e;
  CHECK_STATUS(run_grad(mt_cpu_grad_masked_var, &c, &e, 2, (const mt_tensor *[]){x, m}, go, &kw),
               MT_OK);
  CHECK_NEAR(at(c.out[0], 0), -2, 1e-12);
  CHECK_NEAR(at(c.out[0], 1), 2, 1e-12);
  CHECK_NEAR(at(c.out[0], 2), 0, 0);
  done(&c, NULL, 0);
  CHECK_STATUS(run_grad(mt_cpu_grad_masked_var, &c, &e, 2, (const mt_tensor *[]){xn, m}, go, &kw),
               MT_OK);
  CHECK(isnan(at(c.out[0], 0)) && isnan(at(c.out[0], 2)));
  done(&c, (mt_tensor *[]){x, xn, m, go}, 4);
}

TEST(softmax_runs_over_the_minus_inf_filled_line) {
  /* x = [[0, 0, 7]], mask [1, 1, 0], dim 1: y = [0.5, 0.5, 0]; go = [1, 3,
   * 100]: sum(go * y) = 2, y * (go - 2) = [-0.5, 0.5, 0] (0 masked out) */
  mt_tensor *x = dense(MT_float32, 2, SHAPE(1, 3), VALS(0, 0, 7));
  mt_tensor *m = bools(2, SHAPE(1, 3), BITS(1, 1, 0));
  mt_tensor *go = dense(MT_float32, 2, SHAPE(1, 3), VALS(1, 3, 100));
  mt_kwarg d = kw_int("dim", 1);
  mt_kwargs kw = {1, &d};
  mt_call c;
  mt_error e;
  CHECK_STATUS(run_grad(mt_cpu_grad_masked_softmax, &c, &e, 2, (const mt_tensor *[]){x, m}, go,
                        &kw),
               MT_OK);
  CHECK_NEAR(at(c.out[0], 0), -0.5, 1e-7);
  CHECK_NEAR(at(c.out[0], 1), 0.5, 1e-7);
  CHECK_NEAR(at(c.out[0], 2), 0, 0);
  done(&c, (mt_tensor *[]){x, m, go}, 3);
}

TEST(logaddexp_splits_the_gradient_between_the_operands) {
  /* a = b = 0 (both in): go / (1 + exp(0)) = go / 2 each, go = 4 -> 2, 2;
   * other masked out (-inf): the input takes go / (1 + 0) = 4, other 0 */
  mt_tensor *a = dense(MT_float64, 1, SHAPE(1), VALS(0));
  mt_tensor *b = dense(MT_float64, 1, SHAPE(1), VALS(0));
  mt_tensor *in = bools(1, SHAPE(1), BITS(1)), *out = bools(1, SHAPE(1), BITS(0));
  mt_tensor *go = dense(MT_float64, 1, SHAPE(1), VALS(4));
  mt_call c;
  mt_error e;
  CHECK_STATUS(run_grad(mt_cpu_grad_masked_logaddexp, &c, &e, 4,
                        (const mt_tensor *[]){a, b, in, in}, go, NULL),
               MT_OK);
  CHECK_EQ_INT(c.n_out, 4);
  CHECK_NEAR(at(c.out[0], 0), 2, 0);
  CHECK_NEAR(at(c.out[1], 0), 2, 0);
  CHECK(c.out[2] == NULL && c.out[3] == NULL);
  done(&c, NULL, 0);
  CHECK_STATUS(run_grad(mt_cpu_grad_masked_logaddexp, &c, &e, 4,
                        (const mt_tensor *[]){a, b, in, out}, go, NULL),
               MT_OK);
  CHECK_NEAR(at(c.out[0], 0), 4, 0);
  CHECK_NEAR(at(c.out[1], 0), 0, 0);
  done(&c, (mt_tensor *[]){a, b, in, out, go}, 5);
}

TEST(sum_of_a_csr_input_is_refused_as_torch_refuses_it) {
  /* "derivative for aten::_sparse_csr_sum is not implemented" */
  mt_tensor *x = csr2(MT_float32, 2, 2, 1, SHAPE(0), SHAPE(1), VALS(1));
  mt_tensor *m = csr2(MT_bool, 2, 2, 1, SHAPE(0), SHAPE(1), VALS(1));
  mt_tensor *go = dense(MT_float32, 2, SHAPE(2, 1), VALS(1, 1));
  mt_kwarg k[2] = {kw_int("dim", 1), kw_bool("keepdim", 1)};
  mt_kwargs kw = {2, k};
  mt_call c;
  mt_error e;
  CHECK_STATUS(run_grad(mt_cpu_grad_masked_sum, &c, &e, 2, (const mt_tensor *[]){x, m}, go, &kw),
               MT_LAYOUT_MISMATCH);
  CHECK_HAS(e.msg, "_sparse_csr_sum");
  done(&c, (mt_tensor *[]){x, m, go}, 3);
}

TEST(an_upstream_gradient_of_the_wrong_size_is_shape_mismatch) {
  /* a dim-1 reduction of 2x2 has 2 elements, not 3 */
  mt_tensor *x = dense(MT_float32, 2, SHAPE(2, 2), VALS(1, 2, 3, 4));
  mt_tensor *go = dense(MT_float32, 1, SHAPE(3), VALS(1, 1, 1));
  mt_kwarg d = kw_int("dim", 1);
  mt_kwargs kw = {1, &d};
  mt_call c;
  mt_error e;
  CHECK_STATUS(run_grad(mt_cpu_grad_masked_mean, &c, &e, 1, (const mt_tensor *[]){x}, go, &kw),
               MT_SHAPE_MISMATCH);
  done(&c, (mt_tensor *[]){x, go}, 2);
}

MT_TEST_MAIN(T(sum_gives_the_upstream_gradient_under_the_mask_and_zero_elsewhere),
             T(amax_shares_the_gradient_among_ties),
             T(prod_gives_the_product_of_the_others_also_at_a_zero),
             T(var_reads_the_masked_out_deviation), T(softmax_runs_over_the_minus_inf_filled_line),
             T(logaddexp_splits_the_gradient_between_the_operands),
             T(sum_of_a_csr_input_is_refused_as_torch_refuses_it),
             T(an_upstream_gradient_of_the_wrong_size_is_shape_mismatch))

/* test_cpu_grad_sparse.c - the CPU backward kernels of plain sparse calls
 * (impl/cpu/grad_sparse.c; SPG-*): the gradient's layout (dense, the
 * input's or the upstream gradient's stored elements, none, a product's
 * pattern), its values, torch's refusals and malformed calls. Inputs are
 * literals; expected values are derived by hand in the comments (the
 * goldens, grad_sparse.h5, are the main check). */
#include <math.h>
#include <stdlib.h>

#include "cpu/grad_sparse.h"
#include "cpu_fixtures.h"
#include "mt_test.h"

/* Runs backward kernel fn on the inputs and one upstream gradient. */
static mt_status run_grad(mt_kernel_fn fn, mt_call *call, mt_error *err, int n_in,
                         const mt_tensor *const *in, const mt_tensor *go, const mt_kwargs *kw) {
  static const mt_tensor *gos[1];
  gos[0] = go;
  return run_backward(fn, call, err, n_in, in, kw, 1, gos);
}

/* value of the COO entry at (r, c) of a coalesced COO, NAN when absent */
static double coo_at(const mt_tensor *t, int64_t r, int64_t c) {
  for (int64_t k = 0; k < t->nnz; k++)
    if (t->indices[k] == r && t->indices[t->nnz + k] == c) return at(t, k);
  return NAN;
}

TEST(neg_of_uncoalesced_coo_stores_the_input_elements) {
  /* x = {(0,1): 1, (0,1): 2, (1,2): 3} (duplicates); go = {(0,1): 5, (1,2): 7}:
   * d(-x) = -go at x's two elements, coalesced */
  mt_tensor *x = coo2(MT_float32, 2, 3, 3, SHAPE(0, 0, 1), SHAPE(1, 1, 2), VALS(1, 2, 3), 0);
  mt_tensor *go = coo2(MT_float32, 2, 3, 2, SHAPE(0, 1), SHAPE(1, 2), VALS(5, 7), 1);
  mt_call c;
  mt_error e;
  CHECK_STATUS(run_grad(mt__cpu_grad_neg_sparse, &c, &e, 1, (const mt_tensor *[]){x}, go, NULL),
               MT_OK);
  CHECK_EQ_INT(c.n_out, 1);
  CHECK_EQ_INT(c.out[0]->kind, MT_KIND_COO);
  CHECK_EQ_INT(c.out[0]->nnz, 2);
  CHECK_EQ_INT(c.out[0]->coalesced, 1);
  CHECK_NEAR(coo_at(c.out[0], 0, 1), -5, 0);
  CHECK_NEAR(coo_at(c.out[0], 1, 2), -7, 0);
  done(&c, (mt_tensor *[]){x, go}, 2);
}

TEST(ceil_of_csr_stores_nothing) {
  /* ceil is piecewise constant: torch gives an empty CSR of x's shape */
  mt_tensor *x = csr2(MT_float64, 2, 2, 2, SHAPE(0, 1), SHAPE(0, 1), VALS(1.5, 2.5));
  mt_tensor *go = csr2(MT_float64, 2, 2, 2, SHAPE(0, 1), SHAPE(0, 1), VALS(1, 1));
  mt_call c;
  mt_error e;
  CHECK_STATUS(run_grad(mt__cpu_grad_ceil_sparse, &c, &e, 1, (const mt_tensor *[]){x}, go, NULL),
               MT_OK);
  CHECK_EQ_INT(c.out[0]->kind, MT_KIND_CSR);
  CHECK_EQ_INT(c.out[0]->nnz, 0);
  CHECK_EQ_INT(c.out[0]->shape[1], 2);
  CHECK_EQ_INT(c.out[0]->crow_indices[2], 0);
  done(&c, (mt_tensor *[]){x, go}, 2);
}

TEST(mul_of_two_coo_stores_the_upstream_gradients_elements) {
  /* a = {(0,0): 2, (1,1): 3}, b = {(0,0): 5, (1,0): 4}: a * b stores (0,0);
   * go = {(0,0): 10}: ga = go * b = {(0,0): 50}, gb = go * a = {(0,0): 20} */
  mt_tensor *a = coo2(MT_float64, 2, 2, 2, SHAPE(0, 1), SHAPE(0, 1), VALS(2, 3), 1);
  mt_tensor *b = coo2(MT_float64, 2, 2, 2, SHAPE(0, 1), SHAPE(0, 0), VALS(5, 4), 1);
  mt_tensor *go = coo2(MT_float64, 2, 2, 1, SHAPE(0), SHAPE(0), VALS(10), 1);
  mt_call c;
  mt_error e;
  CHECK_STATUS(run_grad(mt__cpu_grad_mul_sparse, &c, &e, 2, (const mt_tensor *[]){a, b}, go,
                        NULL),
               MT_OK);
  CHECK_EQ_INT(c.n_out, 2);
  CHECK_EQ_INT(c.out[0]->nnz, 1);
  CHECK_NEAR(coo_at(c.out[0], 0, 0), 50, 0);
  CHECK_EQ_INT(c.out[1]->nnz, 1);
  CHECK_NEAR(coo_at(c.out[1], 0, 0), 20, 0);
  done(&c, (mt_tensor *[]){a, b, go}, 3);
}

TEST(mm_of_coo_and_dense_gives_dense_gradients) {
  /* A = {(0,1): 2} (2x2), B = [[3], [4]], go = [[1], [5]]:
   * gA = go @ B^T = [[3, 4], [15, 20]] (dense), gB = A^T @ go = [[0], [2]] */
  mt_tensor *a = coo2(MT_float32, 2, 2, 1, SHAPE(0), SHAPE(1), VALS(2), 1);
  mt_tensor *b = dense(MT_float32, 2, SHAPE(2, 1), VALS(3, 4));
  mt_tensor *go = dense(MT_float32, 2, SHAPE(2, 1), VALS(1, 5));
  mt_call c;
  mt_error e;
  CHECK_STATUS(run_grad(mt_cpu_grad_mm, &c, &e, 2, (const mt_tensor *[]){a, b}, go, NULL), MT_OK);
  CHECK_EQ_INT(c.out[0]->kind, MT_KIND_DENSE);
  CHECK_NEAR(at(c.out[0], 0), 3, 0);
  CHECK_NEAR(at(c.out[0], 1), 4, 0);
  CHECK_NEAR(at(c.out[0], 2), 15, 0);
  CHECK_NEAR(at(c.out[0], 3), 20, 0);
  CHECK_EQ_INT(c.out[1]->kind, MT_KIND_DENSE);
  CHECK_NEAR(at(c.out[1], 0), 0, 0);
  CHECK_NEAR(at(c.out[1], 1), 2, 0);
  done(&c, (mt_tensor *[]){a, b, go}, 3);
}

TEST(spmm_of_csr_and_dense_gives_dense_gradients) {
  /* torch.spmm's backward is torch.mm's (torch 2.15: dense, dense).
   * A = CSR {(0,1): 2} (2x2), B = [[3], [4]], go = [[1], [5]]: as mm above,
   * gA = go @ B^T = [[3, 4], [15, 20]] (dense, not A's CSR), gB = [[0], [2]] */
  mt_tensor *a = csr2(MT_float64, 2, 2, 1, SHAPE(0), SHAPE(1), VALS(2));
  mt_tensor *b = dense(MT_float64, 2, SHAPE(2, 1), VALS(3, 4));
  mt_tensor *go = dense(MT_float64, 2, SHAPE(2, 1), VALS(1, 5));
  mt_call c;
  mt_error e;
  CHECK_STATUS(run_grad(mt_cpu_grad_spmm, &c, &e, 2, (const mt_tensor *[]){a, b}, go, NULL),
               MT_OK);
  CHECK_EQ_INT(c.n_out, 2);
  if (c.n_out == 2) {
    CHECK_EQ_INT(c.out[0]->kind, MT_KIND_DENSE);
    const double want[] = {3, 4, 15, 20};
    for (int i = 0; i < 4; i++) CHECK_NEAR(at(c.out[0], i), want[i], 0);
    CHECK_EQ_INT(c.out[1]->kind, MT_KIND_DENSE);
    CHECK_NEAR(at(c.out[1], 0), 0, 0);
    CHECK_NEAR(at(c.out[1], 1), 2, 0);
  }
  done(&c, (mt_tensor *[]){a, b, go}, 3);
}

TEST(mm_of_two_coo_stores_the_products_pattern) {
  /* A = {(0,0): 1}, B = {(0,1): 2}; A @ B = {(0,1): 2}, go = {(0,1): 3}:
   * gA = go @ B^T over pattern {(0,1)} x {(1,0)} = {(0,0)}: 3 * 2 = 6;
   * gB = A^T @ go over {(0,0)} x {(0,1)} = {(0,1)}: 1 * 3 = 3 */
  mt_tensor *a = coo2(MT_float64, 2, 2, 1, SHAPE(0), SHAPE(0), VALS(1), 1);
  mt_tensor *b = coo2(MT_float64, 2, 2, 1, SHAPE(0), SHAPE(1), VALS(2), 1);
  mt_tensor *go = coo2(MT_float64, 2, 2, 1, SHAPE(0), SHAPE(1), VALS(3), 1);
  mt_call c;
  mt_error e;
  CHECK_STATUS(run_grad(mt_cpu_grad_mm, &c, &e, 2, (const mt_tensor *[]){a, b}, go, NULL), MT_OK);
  CHECK_EQ_INT(c.out[0]->kind, MT_KIND_COO);
  CHECK_EQ_INT(c.out[0]->nnz, 1);
  CHECK_NEAR(coo_at(c.out[0], 0, 0), 6, 0);
  CHECK_EQ_INT(c.out[1]->nnz, 1);
  CHECK_NEAR(coo_at(c.out[1], 0, 1), 3, 0);
  done(&c, (mt_tensor *[]){a, b, go}, 3);
}

TEST(sum_of_coo_is_dense_and_refused_with_a_sparse_result) {
  /* sum(x) (0-d) backward: a dense x-shaped tensor of go = 2.5; sum(x, dim=0)
   * of a 2-d COO is sparse, whose backward torch refuses ("expand is
   * unsupported for Sparse tensors"): LAYOUT_MISMATCH */
  mt_tensor *x = coo2(MT_float32, 2, 2, 1, SHAPE(1), SHAPE(0), VALS(7), 1);
  mt_tensor *go = dense(MT_float32, 0, NULL, VALS(2.5));
  mt_tensor *go_s = coo2(MT_float32, 1, 2, 1, SHAPE(0), SHAPE(0), VALS(1), 1);
  mt_call c;
  mt_error e;
  CHECK_STATUS(run_grad(mt__cpu_grad_sum_sparse, &c, &e, 1, (const mt_tensor *[]){x}, go, NULL),
               MT_OK);
  CHECK_EQ_INT(c.out[0]->kind, MT_KIND_DENSE);
  for (int i = 0; i < 4; i++) CHECK_NEAR(at(c.out[0], i), 2.5, 0);
  done(&c, NULL, 0);
  mt_kwarg d0 = kw_int("dim", 0);
  mt_kwargs kw = {1, &d0};
  CHECK_STATUS(run_grad(mt__cpu_grad_sum_sparse, &c, &e, 1, (const mt_tensor *[]){x}, go_s, &kw),
               MT_LAYOUT_MISMATCH);
  CHECK_HAS(e.msg, "expand is unsupported");
  CHECK_EQ_INT(c.n_out, 0);
  done(&c, (mt_tensor *[]){x, go, go_s}, 3);
}

TEST(derivatives_without_a_sparse_kernel_are_layout_mismatch) {
  /* sin's derivative multiplies by cos(x), which has no sparse kernel */
  mt_tensor *x = coo2(MT_float32, 2, 2, 1, SHAPE(0), SHAPE(0), VALS(1), 1);
  mt_tensor *go = coo2(MT_float32, 2, 2, 1, SHAPE(0), SHAPE(0), VALS(1), 1);
  mt_call c;
  mt_error e;
  CHECK_STATUS(run_grad(mt__cpu_grad_sin_sparse, &c, &e, 1, (const mt_tensor *[]){x}, go, NULL),
               MT_LAYOUT_MISMATCH);
  CHECK_HAS(e.msg, "SparseCPU");
  done(&c, (mt_tensor *[]){x, go}, 2);
}

TEST(sparse_softmax_with_a_negative_dim_pools_each_element_alone) {
  /* x = {(0,0): 0, (0,1): 0}: softmax over dim 1 is y = [0.5, 0.5]; go =
   * [1, 3]. dim=1: y * (go - sum(go * y)) = 0.5 * ([1, 3] - 2) = [-0.5, 0.5].
   * dim=-1 (torch 2.15's backward does not wrap it): y * (go - go * y) =
   * 0.5 * ([1, 3] - [0.5, 1.5]) = [0.25, 0.75] */
  mt_tensor *x = coo2(MT_float64, 1, 2, 2, SHAPE(0, 0), SHAPE(0, 1), VALS(0, 0), 1);
  mt_tensor *go = coo2(MT_float64, 1, 2, 2, SHAPE(0, 0), SHAPE(0, 1), VALS(1, 3), 1);
  mt_kwarg d1 = kw_int("dim", 1), dm1 = kw_int("dim", -1);
  mt_kwargs kw1 = {1, &d1}, kwm1 = {1, &dm1};
  mt_call c;
  mt_error e;
  CHECK_STATUS(run_grad(mt_cpu_grad_sparse_softmax, &c, &e, 1, (const mt_tensor *[]){x}, go,
                        &kw1),
               MT_OK);
  CHECK_NEAR(coo_at(c.out[0], 0, 0), -0.5, 1e-15);
  CHECK_NEAR(coo_at(c.out[0], 0, 1), 0.5, 1e-15);
  done(&c, NULL, 0);
  CHECK_STATUS(run_grad(mt_cpu_grad_sparse_softmax, &c, &e, 1, (const mt_tensor *[]){x}, go,
                        &kwm1),
               MT_OK);
  CHECK_NEAR(coo_at(c.out[0], 0, 0), 0.25, 1e-15);
  CHECK_NEAR(coo_at(c.out[0], 0, 1), 0.75, 1e-15);
  done(&c, (mt_tensor *[]){x, go}, 2);
}

TEST(values_of_csr_puts_the_upstream_gradient_back_in_place) {
  /* x = CSR {(0,1): 1, (1,0): 2}; values() backward with go = [8, 9]: a CSR
   * of x's structure holding [8, 9] */
  mt_tensor *x = csr2(MT_float32, 2, 2, 2, SHAPE(0, 1), SHAPE(1, 0), VALS(1, 2));
  mt_tensor *go = dense(MT_float32, 1, SHAPE(2), VALS(8, 9));
  mt_call c;
  mt_error e;
  CHECK_STATUS(run_grad(mt_cpu_grad_values, &c, &e, 1, (const mt_tensor *[]){x}, go, NULL),
               MT_OK);
  CHECK_EQ_INT(c.out[0]->kind, MT_KIND_CSR);
  CHECK_EQ_INT(c.out[0]->nnz, 2);
  CHECK_EQ_INT(c.out[0]->col_indices[0], 1);
  CHECK_NEAR(at(c.out[0], 0), 8, 0);
  CHECK_NEAR(at(c.out[0], 1), 9, 0);
  done(&c, (mt_tensor *[]){x, go}, 2);
}

TEST(a_wrong_upstream_gradient_is_shape_mismatch) {
  /* mm of 2x2 by 2x1 has a 2x1 output: a 3-element go is refused */
  mt_tensor *a = coo2(MT_float32, 2, 2, 1, SHAPE(0), SHAPE(1), VALS(2), 1);
  mt_tensor *b = dense(MT_float32, 2, SHAPE(2, 1), VALS(3, 4));
  mt_tensor *go = dense(MT_float32, 1, SHAPE(3), VALS(1, 5, 6));
  mt_call c;
  mt_error e;
  CHECK_STATUS(run_grad(mt_cpu_grad_mm, &c, &e, 2, (const mt_tensor *[]){a, b}, go, NULL),
               MT_SHAPE_MISMATCH);
  CHECK_HAS(e.msg, "grad_outputs/0");
  CHECK_EQ_INT(c.n_out, 0);
  done(&c, (mt_tensor *[]){a, b, go}, 3);
}

MT_TEST_MAIN(T(neg_of_uncoalesced_coo_stores_the_input_elements),
             T(ceil_of_csr_stores_nothing),
             T(mul_of_two_coo_stores_the_upstream_gradients_elements),
             T(mm_of_coo_and_dense_gives_dense_gradients),
             T(spmm_of_csr_and_dense_gives_dense_gradients),
             T(mm_of_two_coo_stores_the_products_pattern),
             T(sum_of_coo_is_dense_and_refused_with_a_sparse_result),
             T(derivatives_without_a_sparse_kernel_are_layout_mismatch),
             T(sparse_softmax_with_a_negative_dim_pools_each_element_alone),
             T(values_of_csr_puts_the_upstream_gradient_back_in_place),
             T(a_wrong_upstream_gradient_is_shape_mismatch))

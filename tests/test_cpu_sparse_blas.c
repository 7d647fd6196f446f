/* test_cpu_sparse_blas.c - the CPU sparse_blas kernels on inputs small
 * enough to multiply by hand: products over stored entries (SPB-2, SPB-6),
 * beta/alpha (SPB-3), the sparse results of smm and hspmm (SPB-4), linear
 * (SPB-5), BSR blocks, integer wrap-around and torch's refusals (SPB-1). */
#include <stdlib.h>

#include "cpu_fixtures.h"
#include "mt_test.h"

static mt_status call2(mt_kernel_fn fn, mt_call *c, mt_error *e, const mt_tensor *a,
                       const mt_tensor *b, const mt_kwargs *kw) {
  const mt_tensor *in[] = {a, b};
  return run(fn, c, e, 2, in, kw);
}
static mt_status call3(mt_kernel_fn fn, mt_call *c, mt_error *e, const mt_tensor *a,
                       const mt_tensor *b, const mt_tensor *d, const mt_kwargs *kw) {
  const mt_tensor *in[] = {a, b, d};
  return run(fn, c, e, 3, in, kw);
}

/* A = COO [2, 4], uncoalesced: (0, 1) = 2, (1, 0) = 1, (0, 1) = 3 (the index
 * again), (1, 2) = -1; as a dense matrix [[0, 5, 0, 0], [1, 0, -1, 0]]:
 * column 3 stores nothing. */
static mt_tensor *hand_a(void) {
  return coo2(MT_float64, 2, 4, 4, (const int64_t[]){0, 1, 0, 1}, (const int64_t[]){1, 0, 1, 2},
              VALS(2, 1, 3, -1), 0);
}
/* B = [[1, 2], [3, 4], [5, 6], [NaN, inf]]: row 3 meets no stored entry. */
static mt_tensor *hand_b(void) {
  return dense(MT_float64, 2, SHAPE(4, 2), VALS(1, 2, 3, 4, 5, 6, NAN, INFINITY));
}

/* A @ B: row 0 = 5 * [3, 4] = [15, 20] (the duplicates summed: 2 + 3 = 5);
 * row 1 = 1 * [1, 2] + (-1) * [5, 6] = [-4, -4]. B's NaN/inf row is never
 * read (no stored entry in column 3). */
TEST(coo_times_dense_by_hand) {
  mt_tensor *a = hand_a(), *b = hand_b();
  mt_call c;
  mt_error e;
  CHECK_STATUS(call2(mt_cpu_mm, &c, &e, a, b, NULL), MT_OK);
  CHECK_EQ_INT(c.n_out, 1);
  if (c.n_out == 1) {
    CHECK(c.out[0]->kind == MT_KIND_DENSE);
    const double want[] = {15, 20, -4, -4};
    for (int i = 0; i < 4; i++) CHECK_NEAR(at(c.out[0], i), want[i], 0);
  }
  mt_tensor *own[] = {a, b};
  done(&c, own, 2);
}

/* torch.spmm is torch.mm (torch 2.15 gives the same layouts, values and
 * refusals): spmm(A, B) is the dense [[15, 20], [-4, -4]] above (derived by
 * hand there); CSR [2, 4] (0, 1) = 1 @ CSR [4, 2] (1, 0) = 2, (1, 1) = 3 is
 * the CSR row 0 = [2, 3] (1 * row 1 of B), row 1 empty; bool and inner
 * sizes 4 vs 3 are refused as mm refuses them. */
TEST(spmm_is_mm_by_hand) {
  mt_tensor *a = hand_a(), *b = hand_b();
  mt_tensor *b_short = dense(MT_float64, 2, SHAPE(3, 2), VALS(1, 2, 3, 4, 5, 6));
  mt_tensor *ca = csr2(MT_float64, 2, 4, 1, (const int64_t[]){0}, (const int64_t[]){1}, VALS(1));
  mt_tensor *cb = csr2(MT_float64, 4, 2, 2, (const int64_t[]){1, 1}, (const int64_t[]){0, 1},
                       VALS(2, 3));
  mt_tensor *bool_a =
      coo2(MT_bool, 2, 2, 1, (const int64_t[]){0}, (const int64_t[]){0}, VALS(1), 1);
  mt_tensor *bool_b = dense(MT_bool, 2, SHAPE(2, 2), VALS(1, 0, 0, 1));
  mt_call c;
  mt_error e;
  CHECK_STATUS(call2(mt_cpu_spmm, &c, &e, a, b, NULL), MT_OK);
  CHECK_EQ_INT(c.n_out, 1);
  if (c.n_out == 1) {
    CHECK(c.out[0]->kind == MT_KIND_DENSE);
    const double want[] = {15, 20, -4, -4};
    for (int i = 0; i < 4; i++) CHECK_NEAR(at(c.out[0], i), want[i], 0);
  }
  done(&c, NULL, 0);
  CHECK_STATUS(call2(mt_cpu_spmm, &c, &e, ca, cb, NULL), MT_OK);
  CHECK_EQ_INT(c.n_out, 1);
  if (c.n_out == 1) {
    mt_tensor *o = c.out[0];
    CHECK(o->kind == MT_KIND_CSR);
    CHECK_EQ_INT(o->nnz, 2);
    if (o->nnz == 2) {
      CHECK_NEAR(at(o, 0), 2, 0);
      CHECK_NEAR(at(o, 1), 3, 0);
    }
  }
  done(&c, NULL, 0);
  CHECK_STATUS(call2(mt_cpu_spmm, &c, &e, a, b_short, NULL), MT_SHAPE_MISMATCH);
  CHECK_EQ_INT(c.n_out, 0);
  CHECK_HAS(e.msg, "spmm");
  CHECK_STATUS(call2(mt_cpu_spmm, &c, &e, bool_a, bool_b, NULL), MT_DTYPE_MISMATCH);
  CHECK_EQ_INT(c.n_out, 0);
  mt_tensor *own[] = {a, b, b_short, ca, cb, bool_a, bool_b};
  done(&c, own, 7);
}

/* A = COO [2, 2] (0, 0) = 1, (0, 1) = 1; B = COO (0, 0) = 1, (1, 0) = -1:
 * (A @ B)(0, 0) = 1 * 1 + 1 * (-1) = 0, still an entry (the structural
 * product: a_00 b_00 and a_01 b_10 meet there); nothing else meets. */
TEST(coo_times_coo_keeps_cancelled_entries) {
  mt_tensor *a = coo2(MT_float32, 2, 2, 2, (const int64_t[]){0, 0}, (const int64_t[]){0, 1},
                      VALS(1, 1), 1);
  mt_tensor *b = coo2(MT_float32, 2, 2, 2, (const int64_t[]){0, 1}, (const int64_t[]){0, 0},
                      VALS(1, -1), 1);
  mt_call c;
  mt_error e;
  CHECK_STATUS(call2(mt_cpu_mm, &c, &e, a, b, NULL), MT_OK);
  if (c.n_out == 1) {
    mt_tensor *o = c.out[0];
    CHECK(o->kind == MT_KIND_COO);
    CHECK_EQ_INT(o->nnz, 1);
    CHECK_EQ_INT(o->coalesced, 1);
    if (o->nnz == 1) {
      CHECK_EQ_INT(o->indices[0], 0);
      CHECK_EQ_INT(o->indices[1], 0);
      CHECK_NEAR(at(o, 0), 0.0, 0);
    }
  }
  mt_tensor *own[] = {a, b};
  done(&c, own, 2);
}

/* beta = 0, alpha = 2 with input [[NaN, inf], [1, 2]]: the input is ignored,
 * 2 * [[15, 20], [-4, -4]] = [[30, 40], [-8, -8]]. beta = 0.5, alpha = 1 with
 * input [[2, 4], [6, 8]]: [[1 + 15, 2 + 20], [3 - 4, 4 - 4]] = [[16, 22],
 * [-1, 0]]. */
TEST(addmm_beta_zero_ignores_nan_and_alpha_scales) {
  mt_tensor *a = hand_a(), *b = hand_b();
  mt_tensor *c1 = dense(MT_float64, 2, SHAPE(2, 2), VALS(NAN, INFINITY, 1, 2));
  mt_tensor *c2 = dense(MT_float64, 2, SHAPE(2, 2), VALS(2, 4, 6, 8));
  mt_kwarg k1[] = {kw_float("beta", 0.0), kw_float("alpha", 2.0)};
  mt_kwarg k2[] = {kw_float("beta", 0.5)};
  mt_kwargs kw1 = {2, k1}, kw2 = {1, k2};
  mt_call c;
  mt_error e;
  CHECK_STATUS(call3(mt_cpu_addmm, &c, &e, c1, a, b, &kw1), MT_OK);
  if (c.n_out == 1) {
    const double want[] = {30, 40, -8, -8};
    for (int i = 0; i < 4; i++) CHECK_NEAR(at(c.out[0], i), want[i], 0);
  }
  done(&c, NULL, 0);
  CHECK_STATUS(call3(mt_cpu_addmm, &c, &e, c2, a, b, &kw2), MT_OK);
  if (c.n_out == 1) {
    const double want[] = {16, 22, -1, 0};
    for (int i = 0; i < 4; i++) CHECK_NEAR(at(c.out[0], i), want[i], 0);
  }
  mt_tensor *own[] = {a, b, c1, c2};
  done(&c, own, 4);
}

/* int8 addmm: input [[1]], mat1 COO (0, 0) = 100, mat2 [[2]]: 1 + 100 * 2 =
 * 201, which wraps to 201 - 256 = -55 in int8, as torch's int8 arithmetic. */
TEST(int8_addmm_wraps_like_torch) {
  mt_tensor *in = dense(MT_int8, 2, SHAPE(1, 1), VALS(1));
  mt_tensor *a = coo2(MT_int8, 1, 1, 1, (const int64_t[]){0}, (const int64_t[]){0}, VALS(100), 1);
  mt_tensor *b = dense(MT_int8, 2, SHAPE(1, 1), VALS(2));
  mt_call c;
  mt_error e;
  CHECK_STATUS(call3(mt_cpu_addmm, &c, &e, in, a, b, NULL), MT_OK);
  if (c.n_out == 1) CHECK_NEAR(at(c.out[0], 0), -55, 0);
  mt_tensor *own[] = {in, a, b};
  done(&c, own, 3);
}

/* A = COO [3, 2]: (2, 0) = 2 and a stored zero (0, 1) = 0; B = [[1, 2], [3,
 * 4]]. smm: rows 0 and 2 store an entry, so both rows are whole in the
 * result: (0, 0) = (0, 1) = 0 * 3, 0 * 4 = 0; (2, 0), (2, 1) = 2 * [1, 2] =
 * [2, 4]; four entries, flagged uncoalesced. hspmm: the same rows as a
 * hybrid COO, indices [0, 2], values [[0, 0], [2, 4]]. */
TEST(smm_and_hspmm_keep_whole_rows) {
  mt_tensor *a = coo2(MT_float64, 3, 2, 2, (const int64_t[]){0, 2}, (const int64_t[]){1, 0},
                      VALS(0, 2), 1);
  mt_tensor *b = dense(MT_float64, 2, SHAPE(2, 2), VALS(1, 2, 3, 4));
  mt_call c;
  mt_error e;
  CHECK_STATUS(call2(mt_cpu_smm, &c, &e, a, b, NULL), MT_OK);
  if (c.n_out == 1) {
    mt_tensor *o = c.out[0];
    CHECK(o->kind == MT_KIND_COO && o->sparse_dim == 2);
    CHECK_EQ_INT(o->nnz, 4);
    CHECK_EQ_INT(o->coalesced, 0);
    const int64_t rows[] = {0, 0, 2, 2}, cols[] = {0, 1, 0, 1};
    const double want[] = {0, 0, 2, 4};
    for (int k = 0; k < 4 && o->nnz == 4; k++) {
      CHECK_EQ_INT(o->indices[k], rows[k]);
      CHECK_EQ_INT(o->indices[4 + k], cols[k]);
      CHECK_NEAR(at(o, k), want[k], 0);
    }
  }
  done(&c, NULL, 0);
  CHECK_STATUS(call2(mt_cpu_hspmm, &c, &e, a, b, NULL), MT_OK);
  if (c.n_out == 1) {
    mt_tensor *o = c.out[0];
    CHECK(o->kind == MT_KIND_COO && o->sparse_dim == 1 && o->ndim == 2);
    CHECK_EQ_INT(o->nnz, 2);
    if (o->nnz == 2) {
      CHECK_EQ_INT(o->indices[0], 0);
      CHECK_EQ_INT(o->indices[1], 2);
      const double want[] = {0, 0, 2, 4};
      for (int i = 0; i < 4; i++) CHECK_NEAR(at(o, i), want[i], 0);
    }
  }
  mt_tensor *own[] = {a, b};
  done(&c, own, 2);
}

/* linear(x, W): x = [1, 2, 3], W = COO [2, 3] (0, 2) = 1, (1, 0) = 2:
 * x @ W.T = [x_2 * 1, x_0 * 2] = [3, 2], a vector (the input's dims). */
TEST(linear_multiplies_by_the_transposed_weight) {
  mt_tensor *x = dense(MT_float32, 1, SHAPE(3), VALS(1, 2, 3));
  mt_tensor *w = coo2(MT_float32, 2, 3, 2, (const int64_t[]){0, 1}, (const int64_t[]){2, 0},
                      VALS(1, 2), 1);
  mt_call c;
  mt_error e;
  CHECK_STATUS(call2(mt_cpu_linear, &c, &e, x, w, NULL), MT_OK);
  if (c.n_out == 1) {
    CHECK_EQ_INT(c.out[0]->ndim, 1);
    CHECK_EQ_INT(c.out[0]->shape[0], 2);
    CHECK_NEAR(at(c.out[0], 0), 3, 0);
    CHECK_NEAR(at(c.out[0], 1), 2, 0);
  }
  mt_tensor *own[] = {x, w};
  done(&c, own, 2);
}

/* BSR [2, 4] with 2 x 2 blocks, one stored block at block column 1 holding
 * [[1, 2], [3, 4]] (row-major): dense [[0, 0, 1, 2], [0, 0, 3, 4]]. Times
 * v = [1, 1, 1, 10]: [1 + 2 * 10, 3 + 4 * 10] = [21, 43]. */
TEST(bsr_blocks_expand_row_major) {
  mt_tensor *a = NULL;
  if (mt_compressed_new(MT_KIND_BSR, MT_float64, 2, SHAPE(2, 4), 0, SHAPE(2, 2), 1, &a, NULL) !=
      MT_OK)
    abort();
  a->crow_indices[0] = 0;
  a->crow_indices[1] = 1;
  a->col_indices[0] = 1;
  for (int i = 0; i < 4; i++) mt_set_f64(a->values, MT_float64, i, (double)(i + 1));
  mt_tensor *v = dense(MT_float64, 1, SHAPE(4), VALS(1, 1, 1, 10));
  mt_call c;
  mt_error e;
  CHECK_STATUS(call2(mt_cpu_matmul, &c, &e, a, v, NULL), MT_OK);
  if (c.n_out == 1) {
    CHECK_NEAR(at(c.out[0], 0), 21, 0);
    CHECK_NEAR(at(c.out[0], 1), 43, 0);
  }
  mt_tensor *own[] = {a, v};
  done(&c, own, 2);
}

/* input CSR [2, 2]: (0, 1) = 1 and a stored zero (1, 0) = 0; mat1 = [[1, 2],
 * [3, 4]], mat2 = [[5, 6], [7, 8]]: mat1 @ mat2 = [[19, 22], [43, 50]].
 * beta = 2: (0, 1) = 2 * 1 + 22 = 24, (1, 0) = 2 * 0 + 43 = 43; (0, 0) and
 * (1, 1) stay unstored: two entries, the input's indices. */
TEST(sampled_addmm_fills_only_the_input_pattern) {
  mt_tensor *in = csr2(MT_float64, 2, 2, 2, (const int64_t[]){0, 1}, (const int64_t[]){1, 0},
                       VALS(1, 0));
  mt_tensor *m1 = dense(MT_float64, 2, SHAPE(2, 2), VALS(1, 2, 3, 4));
  mt_tensor *m2 = dense(MT_float64, 2, SHAPE(2, 2), VALS(5, 6, 7, 8));
  mt_kwarg kv[] = {kw_float("beta", 2.0)};
  mt_kwargs kw = {1, kv};
  mt_call c;
  mt_error e;
  CHECK_STATUS(call3(mt_cpu_sparse_sampled_addmm, &c, &e, in, m1, m2, &kw), MT_OK);
  if (c.n_out == 1) {
    mt_tensor *o = c.out[0];
    CHECK(o->kind == MT_KIND_CSR);
    CHECK_EQ_INT(o->nnz, 2);
    if (o->nnz == 2) {
      CHECK_EQ_INT(o->crow_indices[1], 1);
      CHECK_EQ_INT(o->col_indices[0], 1);
      CHECK_EQ_INT(o->col_indices[1], 0);
      CHECK_NEAR(at(o, 0), 24, 0);
      CHECK_NEAR(at(o, 1), 43, 0);
    }
  }
  mt_tensor *own[] = {in, m1, m2};
  done(&c, own, 3);
}

/* SPB-1: each refusal with torch's status and no output. */
TEST(refusals_follow_torchs_layouts_dtypes_and_shapes) {
  mt_tensor *a = hand_a(), *b = hand_b();
  mt_tensor *b_short = dense(MT_float64, 2, SHAPE(3, 2), VALS(1, 2, 3, 4, 5, 6));
  mt_tensor *a16 = coo2(MT_float16, 2, 2, 1, (const int64_t[]){0}, (const int64_t[]){0}, VALS(1), 1);
  mt_tensor *b16 = dense(MT_float16, 2, SHAPE(2, 2), VALS(1, 2, 3, 4));
  mt_tensor *csr = csr2(MT_float64, 2, 4, 1, (const int64_t[]){0}, (const int64_t[]){1}, VALS(1));
  mt_tensor *bool_a = coo2(MT_bool, 2, 2, 1, (const int64_t[]){0}, (const int64_t[]){0}, VALS(1), 1);
  mt_tensor *bool_b = dense(MT_bool, 2, SHAPE(2, 2), VALS(1, 0, 0, 1));
  mt_tensor *vec = dense(MT_float64, 1, SHAPE(4), VALS(1, 2, 3, 4));
  mt_tensor *vin = dense(MT_float64, 1, SHAPE(2), VALS(0, 0));
  mt_tensor *hyb = NULL;
  if (mt_coo_new(MT_float64, 2, SHAPE(2, 4), 1, 0, &hyb, NULL) != MT_OK) abort();
  hyb->coalesced = 1;
  mt_call c;
  mt_error e;
  /* inner sizes 4 and 3 */
  CHECK_STATUS(call2(mt_cpu_mm, &c, &e, a, b_short, NULL), MT_SHAPE_MISMATCH);
  CHECK_EQ_INT(c.n_out, 0);
  CHECK_HAS(e.msg, "cannot be multiplied");
  /* bool has no kernel; float16 COO @ dense has one, smm's sspmm has not */
  CHECK_STATUS(call2(mt_cpu_mm, &c, &e, bool_a, bool_b, NULL), MT_DTYPE_MISMATCH);
  CHECK_STATUS(call2(mt_cpu_mm, &c, &e, a16, b16, NULL), MT_OK);
  done(&c, NULL, 0);
  CHECK_STATUS(call2(mt_cpu_smm, &c, &e, a16, b16, NULL), MT_DTYPE_MISMATCH);
  /* COO @ CSR; smm of a CSR; addmv of a COO matrix */
  CHECK_STATUS(call2(mt_cpu_mm, &c, &e, a, csr, NULL), MT_LAYOUT_MISMATCH);
  CHECK_STATUS(call2(mt_cpu_smm, &c, &e, csr, b, NULL), MT_LAYOUT_MISMATCH);
  CHECK_STATUS(call3(mt_cpu_addmv, &c, &e, vin, a, vec, NULL), MT_LAYOUT_MISMATCH);
  /* a hybrid COO is not a matrix; operands of two dtypes */
  CHECK_STATUS(call2(mt_cpu_mm, &c, &e, hyb, b, NULL), MT_INVALID_ARGUMENT);
  CHECK_STATUS(call2(mt_cpu_mm, &c, &e, a16, b, NULL), MT_DTYPE_MISMATCH);
  CHECK_EQ_INT(c.n_out, 0);
  mt_tensor *own[] = {a, b, b_short, a16, b16, csr, bool_a, bool_b, vec, vin, hyb};
  done(&c, own, 11);
}

MT_TEST_MAIN({"coo_times_dense_by_hand", coo_times_dense_by_hand},
             {"coo_times_coo_keeps_cancelled_entries", coo_times_coo_keeps_cancelled_entries},
             {"spmm_is_mm_by_hand", spmm_is_mm_by_hand},
             {"addmm_beta_zero_ignores_nan_and_alpha_scales",
              addmm_beta_zero_ignores_nan_and_alpha_scales},
             {"int8_addmm_wraps_like_torch", int8_addmm_wraps_like_torch},
             {"smm_and_hspmm_keep_whole_rows", smm_and_hspmm_keep_whole_rows},
             {"linear_multiplies_by_the_transposed_weight",
              linear_multiplies_by_the_transposed_weight},
             {"bsr_blocks_expand_row_major", bsr_blocks_expand_row_major},
             {"sampled_addmm_fills_only_the_input_pattern",
              sampled_addmm_fills_only_the_input_pattern},
             {"refusals_follow_torchs_layouts_dtypes_and_shapes",
              refusals_follow_torchs_layouts_dtypes_and_shapes})

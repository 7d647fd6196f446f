/* test_cpu_masked.c - the CPU kernels of MaskedTensor construction and
 * elementwise semantics: masked_tensor, to_tensor (MASK-1..3), the unary
 * ops (MASK-4/5) and the binary ops (MASK-6..8). Inputs are literals;
 * expected values are derived by hand in the comments. */
#include <stdlib.h>

#include "cpu_fixtures.h"
#include "mt_test.h"

/* fixtures: tests/cpu_fixtures.h */

/* ---- masked_tensor (MASK-1, MASK-2) -------------------------------------- */

TEST(masked_tensor_copies_dense_data_and_mask) {
  mt_tensor *d = dense(MT_float32, 2, SHAPE(2, 2), VALS(1, 2, 3, 4));
  mt_tensor *m = bools(2, SHAPE(2, 2), BITS(1, 0, 0, 1));
  const mt_tensor *in[] = {d, m};
  mt_call c;
  mt_error e;
  CHECK_STATUS(run(mt_cpu_masked_tensor, &c, &e, 2, in, NULL), MT_OK);
  CHECK_EQ_INT(c.n_out, 1);
  mt_tensor *o = c.out[0];
  CHECK_EQ_INT(o->kind, MT_KIND_MASKED);
  CHECK_EQ_INT(o->data->dtype, MT_float32);
  CHECK_EQ_INT(o->ndim, 2);
  /* copies, not aliases: changing the input afterwards changes nothing */
  CHECK(o->data->values != d->values && o->mask->values != m->values);
  mt_set_f64(d->values, MT_float32, 0, 99);
  for (int i = 0; i < 4; i++) {
    CHECK_NEAR(at(o->data, i), (double)(i + 1), 0);
    CHECK_EQ_INT(bit(o->mask, i), i == 0 || i == 3);
  }
  done(&c, (mt_tensor *[]){d, m}, 2);
}

TEST(masked_tensor_makes_strided_data_contiguous) {
  /* storage [[1,2,3],[4,5,6]] viewed transposed (shape [3,2], strides [1,3])
   * reads row-major as 1,4,2,5,3,6 */
  mt_tensor *d = dense(MT_float64, 2, SHAPE(2, 3), VALS(1, 2, 3, 4, 5, 6));
  d->shape[0] = 3, d->shape[1] = 2, d->strides[0] = 1, d->strides[1] = 3;
  mt_tensor *m = bools(2, SHAPE(3, 2), BITS(1, 1, 1, 1, 1, 0));
  const mt_tensor *in[] = {d, m};
  mt_call c;
  mt_error e;
  CHECK_STATUS(run(mt_cpu_masked_tensor, &c, &e, 2, in, NULL), MT_OK);
  const double want[] = {1, 4, 2, 5, 3, 6};
  for (int i = 0; i < 6; i++) CHECK_NEAR(at(c.out[0]->data, i), want[i], 0);
  CHECK(mt_is_contiguous(c.out[0]->data));
  done(&c, (mt_tensor *[]){d, m}, 2);
}

TEST(masked_tensor_rejects_float_mask_as_dtype_mismatch) {
  mt_tensor *d = dense(MT_float32, 1, SHAPE(2), VALS(1, 2));
  mt_tensor *m = dense(MT_float32, 1, SHAPE(2), VALS(1, 0));
  const mt_tensor *in[] = {d, m};
  mt_call c;
  mt_error e;
  CHECK_STATUS(run(mt_cpu_masked_tensor, &c, &e, 2, in, NULL), MT_DTYPE_MISMATCH);
  CHECK(strstr(e.msg, "mask must have dtype bool") != NULL);
  CHECK_EQ_INT(c.n_out, 0);
  done(&c, (mt_tensor *[]){d, m}, 2);
}

TEST(masked_tensor_rejects_other_shape_as_shape_mismatch) {
  mt_tensor *d = dense(MT_float32, 2, SHAPE(1, 2), VALS(1, 2));
  mt_tensor *m = bools(2, SHAPE(1, 3), BITS(1, 0, 1));
  const mt_tensor *in[] = {d, m};
  mt_call c;
  mt_error e;
  CHECK_STATUS(run(mt_cpu_masked_tensor, &c, &e, 2, in, NULL), MT_SHAPE_MISMATCH);
  CHECK(strstr(e.msg, "data.size() must equal mask.size()") != NULL);
  CHECK(strstr(e.msg, "[1, 3]") != NULL);
  done(&c, (mt_tensor *[]){d, m}, 2);
}

TEST(masked_tensor_rejects_dense_data_with_coo_mask_as_layout_mismatch) {
  mt_tensor *d = dense(MT_float32, 2, SHAPE(2, 4), VALS(0, 0, 0, 0, 0, 0, 0, 0));
  mt_tensor *m = coo2(MT_bool, 2, 4, 1, SHAPE(0), SHAPE(2), VALS(1), 1);
  const mt_tensor *in[] = {d, m};
  mt_call c;
  mt_error e;
  CHECK_STATUS(run(mt_cpu_masked_tensor, &c, &e, 2, in, NULL), MT_LAYOUT_MISMATCH);
  CHECK(strstr(e.msg, "same layout") != NULL);
  done(&c, (mt_tensor *[]){d, m}, 2);
}

TEST(masked_tensor_coo_tutorial_keeps_indices_and_is_coalesced) {
  /* the tutorial: grad = sparse_coo_tensor([[0,1,1],[2,0,2]], [3,4,5], [2,4])
   * (not flagged coalesced), mask = (grad.to_dense() != 0).to_sparse() */
  mt_tensor *d = coo2(MT_float32, 2, 4, 3, SHAPE(0, 1, 1), SHAPE(2, 0, 2), VALS(3, 4, 5), 0);
  mt_tensor *m = coo2(MT_bool, 2, 4, 3, SHAPE(0, 1, 1), SHAPE(2, 0, 2), VALS(1, 1, 1), 1);
  const mt_tensor *in[] = {d, m};
  mt_call c;
  mt_error e;
  CHECK_STATUS(run(mt_cpu_masked_tensor, &c, &e, 2, in, NULL), MT_OK);
  mt_tensor *od = c.out[0]->data, *om = c.out[0]->mask;
  CHECK_EQ_INT(od->kind, MT_KIND_COO);
  CHECK_EQ_INT(om->kind, MT_KIND_COO);
  CHECK_EQ_INT(od->nnz, 3);
  CHECK_EQ_INT(od->coalesced, 1);
  CHECK_EQ_INT(om->coalesced, 1);
  for (int k = 0; k < 3; k++) {
    CHECK_NEAR(at(od, k), 3 + k, 0);
    CHECK_EQ_INT(od->indices[k], om->indices[k]);
    CHECK_EQ_INT(od->indices[3 + k], om->indices[3 + k]);
  }
  done(&c, (mt_tensor *[]){d, m}, 2);
}

TEST(masked_tensor_coo_restricts_data_to_the_masks_true_entries) {
  /* grad values [3,0,5] with an explicit zero at (1,0); mask = grad != 0
   * stores (0,2), (1,2) only -> nnz differ, so data keeps those 2 entries
   * (torch's _sparse_coo_where): values [3, 5] */
  mt_tensor *d = coo2(MT_float64, 2, 4, 3, SHAPE(0, 1, 1), SHAPE(2, 0, 2), VALS(3, 0, 5), 1);
  mt_tensor *m = coo2(MT_bool, 2, 4, 2, SHAPE(0, 1), SHAPE(2, 2), VALS(1, 1), 1);
  const mt_tensor *in[] = {d, m};
  mt_call c;
  mt_error e;
  CHECK_STATUS(run(mt_cpu_masked_tensor, &c, &e, 2, in, NULL), MT_OK);
  mt_tensor *od = c.out[0]->data;
  CHECK_EQ_INT(od->nnz, 2);
  CHECK_NEAR(at(od, 0), 3, 0);
  CHECK_NEAR(at(od, 1), 5, 0);
  CHECK_EQ_INT(od->indices[0], 0);
  CHECK_EQ_INT(od->indices[1], 1);
  CHECK_EQ_INT(od->indices[2], 2);
  CHECK_EQ_INT(od->indices[3], 2);
  done(&c, (mt_tensor *[]){d, m}, 2);
}

/* ---- to_tensor (MASK-3) -------------------------------------------------- */

TEST(to_tensor_fills_masked_out_with_the_value_and_never_reads_poison) {
  /* data [1, NaN(poison), 3], mask [1,0,1], value 7.5 -> [1, 7.5, 3] */
  mt_tensor *m = masked(dense(MT_float32, 1, SHAPE(3), VALS(1, NAN_POISON, 3)),
                        bools(1, SHAPE(3), BITS(1, 0, 1)));
  mt_tensor *v = number(7.5);
  const mt_tensor *in[] = {m, v};
  mt_call c;
  mt_error e;
  CHECK_STATUS(run(mt_cpu_to_tensor, &c, &e, 2, in, NULL), MT_OK);
  mt_tensor *o = c.out[0];
  CHECK_EQ_INT(o->kind, MT_KIND_DENSE);
  CHECK_EQ_INT(o->dtype, MT_float32);
  CHECK_NEAR(at(o, 0), 1, 0);
  CHECK_NEAR(at(o, 1), 7.5, 0);
  CHECK_NEAR(at(o, 2), 3, 0);
  done(&c, (mt_tensor *[]){m, v}, 2);
}

TEST(to_tensor_casts_the_fill_to_float32) {
  /* masked_fill casts 0.1 to float: 0.100000001490116... not 0.1 */
  mt_tensor *m =
      masked(dense(MT_float32, 1, SHAPE(2), VALS(1e30, 2)), bools(1, SHAPE(2), BITS(0, 1)));
  mt_tensor *v = number(0.1);
  const mt_tensor *in[] = {m, v};
  mt_call c;
  mt_error e;
  CHECK_STATUS(run(mt_cpu_to_tensor, &c, &e, 2, in, NULL), MT_OK);
  CHECK(at(c.out[0], 0) == (double)0.1f);
  CHECK_NEAR(at(c.out[0], 1), 2, 0);
  done(&c, (mt_tensor *[]){m, v}, 2);
}

TEST(to_tensor_on_coo_storage_is_refused_as_torch_refuses_it) {
  /* MASK-3: torch's to_tensor is data.masked_fill(~mask, v) and ~ has no
   * sparse kernel (NotImplementedError) -> LAYOUT_MISMATCH, no output */
  mt_tensor *m = masked(coo2(MT_float64, 2, 4, 2, SHAPE(0, 1), SHAPE(2, 0), VALS(3, 4), 1),
                        coo2(MT_bool, 2, 4, 2, SHAPE(0, 1), SHAPE(2, 0), VALS(1, 1), 1));
  mt_tensor *v = number(-INFINITY);
  const mt_tensor *in[] = {m, v};
  mt_call c;
  mt_error e;
  CHECK_STATUS(run(mt_cpu_to_tensor, &c, &e, 2, in, NULL), MT_LAYOUT_MISMATCH);
  CHECK(strstr(e.msg, "SparseCPU") != NULL);
  CHECK_EQ_INT(c.n_out, 0);
  done(&c, (mt_tensor *[]){m, v}, 2);
}

TEST(add_masks_of_equal_ndim_that_cannot_broadcast_are_a_shape_mismatch) {
  /* MASK-8: torch compares the masks with torch.eq, which raises on shapes
   * [2] vs [3] (equal ndim, no broadcast) before any mask difference */
  mt_tensor *a = masked(dense(MT_float64, 1, SHAPE(2), VALS(1, 2)), bools(1, SHAPE(2), BITS(1, 0)));
  mt_tensor *b =
      masked(dense(MT_float64, 1, SHAPE(3), VALS(1, 2, 3)), bools(1, SHAPE(3), BITS(1, 1, 1)));
  const mt_tensor *in[] = {a, b};
  mt_call c;
  mt_error e;
  CHECK_STATUS(run(mt_cpu_add, &c, &e, 2, in, NULL), MT_SHAPE_MISMATCH);
  CHECK(strstr(e.msg, "must match the size of tensor b") != NULL);
  CHECK_EQ_INT(c.n_out, 0);
  done(&c, (mt_tensor *[]){a, b}, 2);
}

/* ---- unary (MASK-4, MASK-5) ---------------------------------------------- */

TEST(log_of_zero_is_neg_inf_and_of_negative_is_nan_at_masked_in_positions) {
  /* MASK-5: log([0, -1, e, poison]) with mask [1,1,1,0] -> [-inf, NaN, 1, --] */
  mt_tensor *m = masked(dense(MT_float64, 1, SHAPE(4), VALS(0, -1, M_E, NAN_POISON)),
                        bools(1, SHAPE(4), BITS(1, 1, 1, 0)));
  const mt_tensor *in[] = {m};
  mt_call c;
  mt_error e;
  CHECK_STATUS(run(mt_cpu_log, &c, &e, 1, in, NULL), MT_OK);
  mt_tensor *o = c.out[0];
  CHECK(isinf(at(o->data, 0)) && at(o->data, 0) < 0);
  CHECK(isnan(at(o->data, 1)));
  CHECK_NEAR(at(o->data, 2), 1, 1e-15);
  for (int i = 0; i < 4; i++) CHECK_EQ_INT(bit(o->mask, i), i < 3); /* MASK-4: mask kept */
  done(&c, (mt_tensor *[]){m}, 1);
}

TEST(sqrt_of_negative_is_nan_and_float32_uses_sqrtf) {
  /* sqrt([-1, 2]) -> [NaN, sqrtf(2) = 1.41421354f] */
  mt_tensor *m =
      masked(dense(MT_float32, 1, SHAPE(2), VALS(-1, 2)), bools(1, SHAPE(2), BITS(1, 1)));
  const mt_tensor *in[] = {m};
  mt_call c;
  mt_error e;
  CHECK_STATUS(run(mt_cpu_sqrt, &c, &e, 1, in, NULL), MT_OK);
  CHECK(isnan(at(c.out[0]->data, 0)));
  CHECK(at(c.out[0]->data, 1) == (double)sqrtf(2.0f));
  done(&c, (mt_tensor *[]){m}, 1);
}

TEST(exp_neg_abs_apply_to_data_and_keep_the_mask) {
  /* x = [-2, 0.5], mask [0, 1]: neg -> [2, -0.5], abs -> [2, 0.5],
   * exp(0.5f) = expf(0.5f) = 1.64872122f */
  mt_tensor *m =
      masked(dense(MT_float32, 1, SHAPE(2), VALS(-2, 0.5)), bools(1, SHAPE(2), BITS(0, 1)));
  const mt_tensor *in[] = {m};
  mt_call c;
  mt_error e;
  CHECK_STATUS(run(mt_cpu_neg, &c, &e, 1, in, NULL), MT_OK);
  CHECK_NEAR(at(c.out[0]->data, 1), -0.5, 0);
  CHECK_EQ_INT(bit(c.out[0]->mask, 0), 0);
  CHECK_EQ_INT(bit(c.out[0]->mask, 1), 1);
  done(&c, NULL, 0);
  CHECK_STATUS(run(mt_cpu_abs, &c, &e, 1, in, NULL), MT_OK);
  CHECK_NEAR(at(c.out[0]->data, 1), 0.5, 0);
  done(&c, NULL, 0);
  CHECK_STATUS(run(mt_cpu_exp, &c, &e, 1, in, NULL), MT_OK);
  CHECK(at(c.out[0]->data, 1) == (double)expf(0.5f));
  done(&c, (mt_tensor *[]){m}, 1);
}

TEST(pow_special_exponents_follow_torch_kernels) {
  /* x = 3 (float64): e=2 -> 9 (x*x), e=0.5 -> sqrt(3), e=-1 -> 1/3,
   * e=3 -> 27, e=0 -> 1, e=1.5 -> pow(3, 1.5) = 5.196152422706632 */
  const double exps[] = {2, 0.5, -1, 3, 0, 1.5};
  const double want[] = {9, 1.7320508075688772, 1.0 / 3.0, 27, 1, 5.196152422706632};
  mt_tensor *m = masked(dense(MT_float64, 1, SHAPE(1), VALS(3)), bools(1, SHAPE(1), BITS(1)));
  for (int k = 0; k < 6; k++) {
    mt_tensor *x = NULL;
    /* integer exponents arrive as int64 numbers (Python ints) */
    if (mt_scalar_new(exps[k] == floor(exps[k]) ? MT_int64 : MT_float64, exps[k], &x, NULL) !=
        MT_OK)
      abort();
    const mt_tensor *in[] = {m, x};
    mt_call c;
    mt_error e;
    CHECK_STATUS(run(mt_cpu_pow, &c, &e, 2, in, NULL), MT_OK);
    CHECK_NEAR(at(c.out[0]->data, 0), want[k], 1e-15);
    done(&c, (mt_tensor *[]){x}, 1);
  }
  mt_tensor_free(m);
}

TEST(unary_on_coo_storage_maps_the_stored_values) {
  /* sqrt of COO data {(0,2): 9, (1,0): 16} -> {3, 4}, COO mask kept */
  mt_tensor *m = masked(coo2(MT_float32, 2, 4, 2, SHAPE(0, 1), SHAPE(2, 0), VALS(9, 16), 1),
                        coo2(MT_bool, 2, 4, 2, SHAPE(0, 1), SHAPE(2, 0), VALS(1, 1), 1));
  const mt_tensor *in[] = {m};
  mt_call c;
  mt_error e;
  CHECK_STATUS(run(mt_cpu_sqrt, &c, &e, 1, in, NULL), MT_OK);
  mt_tensor *o = c.out[0];
  CHECK_EQ_INT(o->data->kind, MT_KIND_COO);
  CHECK_EQ_INT(o->mask->kind, MT_KIND_COO);
  CHECK_NEAR(at(o->data, 0), 3, 0);
  CHECK_NEAR(at(o->data, 1), 4, 0);
  CHECK_EQ_INT(o->mask->nnz, 2);
  done(&c, (mt_tensor *[]){m}, 1);
}

TEST(unary_on_int_data_keeps_int_or_refuses_as_torch) {
  /* neg of int64 [3] -> int64 [-3] (UN-1); frac of int64 has no torch kernel
   * ("frac_cpu" not implemented for 'Long') -> DTYPE_MISMATCH (UN-2) */
  mt_tensor *m = masked(dense(MT_int64, 1, SHAPE(1), VALS(3)), bools(1, SHAPE(1), BITS(1)));
  const mt_tensor *in[] = {m};
  mt_call c;
  mt_error e;
  CHECK_STATUS(run(mt_cpu_neg, &c, &e, 1, in, NULL), MT_OK);
  CHECK_EQ_INT(c.out[0]->data->dtype, MT_int64);
  CHECK_NEAR(at(c.out[0]->data, 0), -3, 0);
  done(&c, NULL, 0);
  CHECK_STATUS(run(mt_cpu_frac, &c, &e, 1, in, NULL), MT_DTYPE_MISMATCH);
  CHECK(strstr(e.msg, "int64") != NULL);
  done(&c, (mt_tensor *[]){m}, 1);
}

/* ---- binary (MASK-6..8) -------------------------------------------------- */

TEST(add_masked_masked_with_same_mask_adds_data_and_keeps_mask) {
  /* [1, p, 3] + [10, p, 30] with mask [1,0,1] -> [11, --, 33] */
  mt_tensor *a = masked(dense(MT_float32, 1, SHAPE(3), VALS(1, NAN_POISON, 3)),
                        bools(1, SHAPE(3), BITS(1, 0, 1)));
  mt_tensor *b =
      masked(dense(MT_float32, 1, SHAPE(3), VALS(10, 1e30, 30)), bools(1, SHAPE(3), BITS(1, 0, 1)));
  const mt_tensor *in[] = {a, b};
  mt_call c;
  mt_error e;
  CHECK_STATUS(run(mt_cpu_add, &c, &e, 2, in, NULL), MT_OK);
  mt_tensor *o = c.out[0];
  CHECK_NEAR(at(o->data, 0), 11, 0);
  CHECK_NEAR(at(o->data, 2), 33, 0);
  for (int i = 0; i < 3; i++) CHECK_EQ_INT(bit(o->mask, i), i != 1);
  done(&c, (mt_tensor *[]){a, b}, 2);
}

TEST(add_masked_masked_with_different_masks_is_mask_mismatch) {
  /* MASK-8: masks [1,0] vs [1,1] differ at element 1 */
  mt_tensor *a = masked(dense(MT_float64, 1, SHAPE(2), VALS(1, 2)), bools(1, SHAPE(2), BITS(1, 0)));
  mt_tensor *b = masked(dense(MT_float64, 1, SHAPE(2), VALS(1, 2)), bools(1, SHAPE(2), BITS(1, 1)));
  const mt_tensor *in[] = {a, b};
  mt_call c;
  mt_error e;
  CHECK_STATUS(run(mt_cpu_add, &c, &e, 2, in, NULL), MT_MASK_MISMATCH);
  CHECK(strstr(e.msg, "Input masks must match") != NULL);
  CHECK(strstr(e.msg, "element 1") != NULL);
  CHECK_EQ_INT(c.n_out, 0);
  done(&c, (mt_tensor *[]){a, b}, 2);
}

TEST(sub_dense_minus_masked_takes_the_masked_operands_mask) {
  /* MASK-7: t - m = [5, 6] - [1, p] with mask [1,0] -> [4, --] */
  mt_tensor *t = dense(MT_float64, 1, SHAPE(2), VALS(5, 6));
  mt_tensor *m =
      masked(dense(MT_float64, 1, SHAPE(2), VALS(1, NAN_POISON)), bools(1, SHAPE(2), BITS(1, 0)));
  const mt_tensor *in[] = {t, m};
  mt_call c;
  mt_error e;
  CHECK_STATUS(run(mt_cpu_sub, &c, &e, 2, in, NULL), MT_OK);
  CHECK_NEAR(at(c.out[0]->data, 0), 4, 0);
  CHECK_EQ_INT(bit(c.out[0]->mask, 0), 1);
  CHECK_EQ_INT(bit(c.out[0]->mask, 1), 0);
  done(&c, (mt_tensor *[]){t, m}, 2);
}

TEST(div_masked_by_number_casts_the_number_to_float32_first) {
  /* 7 / 0.3 in float32: the number becomes 0.3f = 0.300000011920929, and
   * 7.0f / 0.3f = 23.333332f; dividing by the double 0.3 and rounding
   * would give 23.333334f (one ulp apart) */
  mt_tensor *m = masked(dense(MT_float32, 1, SHAPE(1), VALS(7)), bools(1, SHAPE(1), BITS(1)));
  mt_tensor *s = number(0.3);
  const mt_tensor *in[] = {m, s};
  mt_call c;
  mt_error e;
  CHECK_STATUS(run(mt_cpu_div, &c, &e, 2, in, NULL), MT_OK);
  CHECK(at(c.out[0]->data, 0) == (double)(7.0f / 0.3f));
  CHECK(at(c.out[0]->data, 0) != (double)(float)(7.0 / 0.3));
  done(&c, (mt_tensor *[]){m, s}, 2);
}

TEST(div_by_zero_gives_ieee_values_at_masked_in_positions) {
  /* [1.5, -1.5, 0] / [0, 0, 0] -> [inf, -inf, NaN] */
  mt_tensor *a =
      masked(dense(MT_float64, 1, SHAPE(3), VALS(1.5, -1.5, 0)), bools(1, SHAPE(3), BITS(1, 1, 1)));
  mt_tensor *b =
      masked(dense(MT_float64, 1, SHAPE(3), VALS(0, 0, 0)), bools(1, SHAPE(3), BITS(1, 1, 1)));
  const mt_tensor *in[] = {a, b};
  mt_call c;
  mt_error e;
  CHECK_STATUS(run(mt_cpu_div, &c, &e, 2, in, NULL), MT_OK);
  CHECK(isinf(at(c.out[0]->data, 0)) && at(c.out[0]->data, 0) > 0);
  CHECK(isinf(at(c.out[0]->data, 1)) && at(c.out[0]->data, 1) < 0);
  CHECK(isnan(at(c.out[0]->data, 2)));
  done(&c, (mt_tensor *[]){a, b}, 2);
}

TEST(mul_rejects_other_shape_and_promotes_other_dtype) {
  mt_tensor *m = masked(dense(MT_float32, 1, SHAPE(2), VALS(1, 2)), bools(1, SHAPE(2), BITS(1, 1)));
  mt_tensor *t3 = dense(MT_float32, 1, SHAPE(3), VALS(1, 2, 3));
  mt_tensor *t64 = dense(MT_float64, 1, SHAPE(2), VALS(1, 2));
  mt_call c;
  mt_error e;
  CHECK_STATUS(run(mt_cpu_mul, &c, &e, 2, (const mt_tensor *[]){m, t3}, NULL), MT_SHAPE_MISMATCH);
  CHECK(strstr(e.msg, "[3]") != NULL);
  /* BIN-2: float32 data (op) a float64 tensor promotes to float64:
   * [1, 2] * [1, 2] = [1*1, 2*2] = [1, 4], mask kept */
  CHECK_STATUS(run(mt_cpu_mul, &c, &e, 2, (const mt_tensor *[]){m, t64}, NULL), MT_OK);
  CHECK(c.out[0]->data->dtype == MT_float64);
  CHECK(at(c.out[0]->data, 0) == 1.0 && at(c.out[0]->data, 1) == 4.0);
  done(&c, (mt_tensor *[]){m, t3, t64}, 3);
}

TEST(mul_coo_storage_masked_by_masked_multiplies_stored_values) {
  /* data {(0,1): 2, (1,3): 3} squared entrywise -> {4, 9}, same indices */
  mt_tensor *a = masked(coo2(MT_float64, 2, 4, 2, SHAPE(0, 1), SHAPE(1, 3), VALS(2, 3), 1),
                        coo2(MT_bool, 2, 4, 2, SHAPE(0, 1), SHAPE(1, 3), VALS(1, 1), 1));
  const mt_tensor *in[] = {a, a};
  mt_call c;
  mt_error e;
  CHECK_STATUS(run(mt_cpu_mul, &c, &e, 2, in, NULL), MT_OK);
  CHECK_EQ_INT(c.out[0]->data->kind, MT_KIND_COO);
  CHECK_NEAR(at(c.out[0]->data, 0), 4, 0);
  CHECK_NEAR(at(c.out[0]->data, 1), 9, 0);
  done(&c, (mt_tensor *[]){a}, 1);
}

MT_TEST_MAIN(
    T(masked_tensor_copies_dense_data_and_mask), T(masked_tensor_makes_strided_data_contiguous),
    T(masked_tensor_rejects_float_mask_as_dtype_mismatch),
    T(masked_tensor_rejects_other_shape_as_shape_mismatch),
    T(masked_tensor_rejects_dense_data_with_coo_mask_as_layout_mismatch),
    T(masked_tensor_coo_tutorial_keeps_indices_and_is_coalesced),
    T(masked_tensor_coo_restricts_data_to_the_masks_true_entries),
    T(to_tensor_fills_masked_out_with_the_value_and_never_reads_poison),
    T(to_tensor_casts_the_fill_to_float32), T(to_tensor_on_coo_storage_is_refused_as_torch_refuses_it),
    T(add_masks_of_equal_ndim_that_cannot_broadcast_are_a_shape_mismatch),
    T(log_of_zero_is_neg_inf_and_of_negative_is_nan_at_masked_in_positions),
    T(sqrt_of_negative_is_nan_and_float32_uses_sqrtf),
    T(exp_neg_abs_apply_to_data_and_keep_the_mask), T(pow_special_exponents_follow_torch_kernels),
    T(unary_on_coo_storage_maps_the_stored_values), T(unary_on_int_data_keeps_int_or_refuses_as_torch),
    T(add_masked_masked_with_same_mask_adds_data_and_keeps_mask),
    T(add_masked_masked_with_different_masks_is_mask_mismatch),
    T(sub_dense_minus_masked_takes_the_masked_operands_mask),
    T(div_masked_by_number_casts_the_number_to_float32_first),
    T(div_by_zero_gives_ieee_values_at_masked_in_positions),
    T(mul_rejects_other_shape_and_promotes_other_dtype),
    T(mul_coo_storage_masked_by_masked_multiplies_stored_values))

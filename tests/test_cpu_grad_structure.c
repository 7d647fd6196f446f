/* test_cpu_grad_structure.c - the CPU backward kernels of MaskedTensor's
 * structure ops (impl/cpu/grad_structure.c) and to_tensor's
 * (grad_masked.c): the upstream gradient scattered back through the
 * forward's view with the mask it routes (GRAD-6), cat/split pieces,
 * where's split by cond (GRAD-4 for a plain branch), layout conversions
 * (GRAD-8) and torch's refusals. Inputs are literals; the expected values
 * are derived by hand in the comments (torch 2.15 gives the same: the
 * grad_masked goldens hold cases of each rule). */
#include <math.h>
#include <stdlib.h>

#include "cpu_fixtures.h"
#include "mt_test.h"

static mt_tensor *m64(int ndim, const int64_t *shape, const double *v, const int *b) {
  return masked(dense(MT_float64, ndim, shape, v), bools(ndim, shape, b));
}

/* The value (or -1 when masked out) of a masked gradient's element i, for
 * compact checks. */
static double val_or_out(const mt_tensor *g, int64_t i) {
  return bit(g->mask, i) ? at(g->data, i) : -1;
}

TEST(select_scatters_the_gradient_and_masks_out_the_other_rows) {
  /* select(dim=0, index=1) of a fully specified [2, 3]; upstream [7, 8, 9]
   * with mask [1, 0, 1]: row 1 gets [7, -, 9] with the upstream mask, row 0
   * no output came from: masked out (GRAD-6) */
  mt_tensor *x = m64(2, SHAPE(2, 3), VALS(1, 2, 3, 4, 5, 6), BITS(1, 1, 1, 1, 1, 1));
  mt_tensor *g = m64(1, SHAPE(3), VALS(7, NAN_POISON, 9), BITS(1, 0, 1));
  mt_kwarg items[] = {kw_int("dim", 0), kw_int("index", 1)};
  mt_kwargs kw = {2, items};
  mt_call c;
  mt_error e;
  CHECK_STATUS(run_backward(mt_cpu_grad_select, &c, &e, 1, (const mt_tensor *[]){x}, &kw, 1,
                        (const mt_tensor *[]){g}), MT_OK);
  const double want[6] = {-1, -1, -1, 7, -1, 9};
  for (int i = 0; i < 6; i++) CHECK_NEAR(val_or_out(c.out[0], i), want[i], 0);
  done(&c, (mt_tensor *[]){x, g}, 2);
}

TEST(expand_sums_the_specified_copies_and_ors_their_masks) {
  /* [2, 1] expanded to [2, 3]; upstream [[1, 2, 3(out)], [4(out), 5(out),
   * 6(out)]]: row 0 sums 1 + 2 = 3 (specified), row 1 has no specified
   * copy: masked out */
  mt_tensor *x = m64(2, SHAPE(2, 1), VALS(1, 2), BITS(1, 1));
  mt_tensor *g = m64(2, SHAPE(2, 3), VALS(1, 2, 1e30, 4, 5, 6), BITS(1, 1, 0, 0, 0, 0));
  const int64_t size[] = {2, 3};
  mt_kwarg items[] = {kw_ints("size", 2, size)};
  mt_kwargs kw = {1, items};
  mt_call c;
  mt_error e;
  CHECK_STATUS(run_backward(mt_cpu_grad_expand, &c, &e, 1, (const mt_tensor *[]){x}, &kw, 1,
                        (const mt_tensor *[]){g}), MT_OK);
  CHECK_NEAR(val_or_out(c.out[0], 0), 3, 0);
  CHECK_NEAR(val_or_out(c.out[0], 1), -1, 0);
  done(&c, (mt_tensor *[]){x, g}, 2);
}

TEST(unfold_masks_out_a_position_no_window_covers) {
  /* [5] unfolded with size 2, step 3: windows [0, 1] and [3, 4]; upstream
   * [[1, 2], [3, 4]]: position 2 is in no window (masked out) */
  mt_tensor *x = m64(1, SHAPE(5), VALS(0, 0, 0, 0, 0), BITS(1, 1, 1, 1, 1));
  mt_tensor *g = m64(2, SHAPE(2, 2), VALS(1, 2, 3, 4), BITS(1, 1, 1, 1));
  mt_kwarg items[] = {kw_int("dimension", 0), kw_int("size", 2), kw_int("step", 3)};
  mt_kwargs kw = {3, items};
  mt_call c;
  mt_error e;
  CHECK_STATUS(run_backward(mt_cpu_grad_unfold, &c, &e, 1, (const mt_tensor *[]){x}, &kw, 1,
                        (const mt_tensor *[]){g}), MT_OK);
  const double want[5] = {1, 2, -1, 3, 4};
  for (int i = 0; i < 5; i++) CHECK_NEAR(val_or_out(c.out[0], i), want[i], 0);
  done(&c, (mt_tensor *[]){x, g}, 2);
}

TEST(transpose_gives_the_upstream_gradient_transposed_back) {
  /* transpose(0, 1) of [2, 3]; upstream [3, 2] = [[1, 2], [3, 4], [5, 6]]:
   * grad[i][j] = g[j][i] = [[1, 3, 5], [2, 4, 6]] */
  mt_tensor *x = m64(2, SHAPE(2, 3), VALS(0, 0, 0, 0, 0, 0), BITS(1, 1, 1, 1, 1, 1));
  mt_tensor *g = m64(2, SHAPE(3, 2), VALS(1, 2, 3, 4, 5, 6), BITS(1, 1, 1, 1, 1, 1));
  mt_kwarg items[] = {kw_int("dim0", 0), kw_int("dim1", 1)};
  mt_kwargs kw = {2, items};
  mt_call c;
  mt_error e;
  CHECK_STATUS(run_backward(mt_cpu_grad_transpose, &c, &e, 1, (const mt_tensor *[]){x}, &kw, 1,
                        (const mt_tensor *[]){g}), MT_OK);
  const double want[6] = {1, 3, 5, 2, 4, 6};
  for (int i = 0; i < 6; i++) CHECK_NEAR(val_or_out(c.out[0], i), want[i], 0);
  done(&c, (mt_tensor *[]){x, g}, 2);
}

TEST(cat_hands_each_input_its_piece_and_split_joins_them) {
  /* cat([a [1, 2], b [1, 1]], dim=1), upstream [[1, 2, 3(out)]]: a gets
   * [1, 2], b [-] (masked out). split of [1, 3] by 2 along dim 1 with
   * upstream pieces [[5, 6]] and [[7]]: [5, 6, 7] */
  mt_tensor *a = m64(2, SHAPE(1, 2), VALS(0, 0), BITS(1, 1));
  mt_tensor *b = m64(2, SHAPE(1, 1), VALS(0), BITS(1));
  mt_tensor *g = m64(2, SHAPE(1, 3), VALS(1, 2, 3), BITS(1, 1, 0));
  mt_kwarg items[] = {kw_int("dim", 1), kw_int("split_size_or_sections", 2)};
  mt_kwargs cat_kw = {1, items};
  mt_call c;
  mt_error e;
  CHECK_STATUS(run_backward(mt_cpu_grad_cat, &c, &e, 2, (const mt_tensor *[]){a, b}, &cat_kw, 1,
                        (const mt_tensor *[]){g}), MT_OK);
  CHECK_EQ_INT(c.n_out, 2);
  CHECK_NEAR(val_or_out(c.out[0], 0), 1, 0);
  CHECK_NEAR(val_or_out(c.out[0], 1), 2, 0);
  CHECK_NEAR(val_or_out(c.out[1], 0), -1, 0);
  done(&c, NULL, 0);
  mt_tensor *x = m64(2, SHAPE(1, 3), VALS(0, 0, 0), BITS(1, 1, 1));
  mt_tensor *g0 = m64(2, SHAPE(1, 2), VALS(5, 6), BITS(1, 1));
  mt_tensor *g1 = m64(2, SHAPE(1, 1), VALS(7), BITS(1));
  mt_kwargs split_kw = {2, items};
  CHECK_STATUS(run_backward(mt_cpu_grad_split, &c, &e, 1, (const mt_tensor *[]){x}, &split_kw, 2,
                        (const mt_tensor *[]){g0, g1}), MT_OK);
  for (int i = 0; i < 3; i++) CHECK_NEAR(val_or_out(c.out[0], i), 5 + i, 0);
  done(&c, (mt_tensor *[]){a, b, g, x, g0, g1}, 6);
}

TEST(where_routes_the_gradient_by_cond_and_masks_a_plain_branchs_gradient) {
  /* where([1, 0], x masked, y plain) with upstream [5, 6]: x gets [5, -]
   * (mask cond), y a MASKED gradient [-, 6] (mask ~cond, GRAD-4); cond
   * gets none */
  mt_tensor *cond = bools(1, SHAPE(2), BITS(1, 0));
  mt_tensor *x = m64(1, SHAPE(2), VALS(1, 2), BITS(1, 1));
  mt_tensor *y = dense(MT_float64, 1, SHAPE(2), VALS(3, 4));
  mt_tensor *g = m64(1, SHAPE(2), VALS(5, 6), BITS(1, 1));
  mt_call c;
  mt_error e;
  CHECK_STATUS(run_backward(mt_cpu_grad_where, &c, &e, 3, (const mt_tensor *[]){cond, x, y}, NULL,
                        1, (const mt_tensor *[]){g}), MT_OK);
  CHECK_EQ_INT(c.n_out, 3);
  CHECK(c.out[0] == NULL);
  CHECK_NEAR(val_or_out(c.out[1], 0), 5, 0);
  CHECK_NEAR(val_or_out(c.out[1], 1), -1, 0);
  CHECK_EQ_INT(c.out[2]->kind, MT_KIND_MASKED);
  CHECK_NEAR(val_or_out(c.out[2], 0), -1, 0);
  CHECK_NEAR(val_or_out(c.out[2], 1), 6, 0);
  done(&c, (mt_tensor *[]){cond, x, y, g}, 4);
}

TEST(where_with_a_number_branch_is_refused_as_torch_refuses_it) {
  /* torch: _MaskedWhereBackward returns a gradient for the number at
   * position 3 -> RuntimeError, INVALID_ARGUMENT */
  mt_tensor *cond = bools(1, SHAPE(2), BITS(1, 0));
  mt_tensor *x = m64(1, SHAPE(2), VALS(1, 2), BITS(1, 1));
  mt_tensor *y = number(0.5);
  mt_tensor *g = m64(1, SHAPE(2), VALS(5, 6), BITS(1, 1));
  mt_call c;
  mt_error e;
  CHECK_STATUS(run_backward(mt_cpu_grad_where, &c, &e, 3, (const mt_tensor *[]){cond, x, y}, NULL,
                        1, (const mt_tensor *[]){g}), MT_INVALID_ARGUMENT);
  CHECK_HAS(e.msg, "position 3");
  done(&c, (mt_tensor *[]){cond, x, y, g}, 4);
}

TEST(unsqueeze_index_and_to_dense_of_dense_storage_are_refused) {
  /* torch's MaskedTensor has no squeeze (unsqueeze's backward) nor new_zeros
   * (index's), and _MaskedToDense's backward lacks ctx.layout for a strided
   * input: LAYOUT_MISMATCH each */
  mt_tensor *x = m64(1, SHAPE(2), VALS(1, 2), BITS(1, 1));
  mt_tensor *idx = dense(MT_int64, 1, SHAPE(1), VALS(0));
  mt_tensor *g2 = m64(2, SHAPE(2, 1), VALS(1, 2), BITS(1, 1));
  mt_tensor *g1 = m64(1, SHAPE(1), VALS(1), BITS(1));
  mt_tensor *g = m64(1, SHAPE(2), VALS(1, 2), BITS(1, 1));
  mt_kwarg items[] = {kw_int("dim", 1)};
  mt_kwargs kw = {1, items};
  mt_call c;
  mt_error e;
  CHECK_STATUS(run_backward(mt_cpu_grad_unsqueeze, &c, &e, 1, (const mt_tensor *[]){x}, &kw, 1,
                        (const mt_tensor *[]){g2}), MT_LAYOUT_MISMATCH);
  CHECK_HAS(e.msg, "squeeze");
  CHECK_STATUS(run_backward(mt_cpu_grad_index, &c, &e, 2, (const mt_tensor *[]){x, idx}, NULL, 1,
                        (const mt_tensor *[]){g1}), MT_LAYOUT_MISMATCH);
  CHECK_HAS(e.msg, "new_zeros");
  CHECK_STATUS(run_backward(mt_cpu_grad_to_dense, &c, &e, 1, (const mt_tensor *[]){x}, NULL, 1,
                        (const mt_tensor *[]){g}), MT_LAYOUT_MISMATCH);
  CHECK_HAS(e.msg, "layout");
  CHECK_EQ_INT(c.n_out, 0);
  done(&c, (mt_tensor *[]){x, idx, g2, g1, g}, 5);
}

TEST(transpose_of_coo_storage_gives_a_coo_gradient) {
  /* GRAD-8: t() of COO storage [2, 3] with entries (0, 2) and (1, 0); the
   * upstream gradient is COO [3, 2] with entries (2, 0) = 5, (0, 1) = 6:
   * the gradient holds (0, 2) = 5 and (1, 0) = 6 in COO storage */
  mt_tensor *x = masked(coo2(MT_float32, 2, 3, 2, (const int64_t[]){0, 1},
                             (const int64_t[]){2, 0}, VALS(1, 2), 1),
                        coo2(MT_bool, 2, 3, 2, (const int64_t[]){0, 1}, (const int64_t[]){2, 0},
                             VALS(1, 1), 1));
  mt_tensor *g = masked(coo2(MT_float32, 3, 2, 2, (const int64_t[]){0, 2},
                             (const int64_t[]){1, 0}, VALS(6, 5), 1),
                        coo2(MT_bool, 3, 2, 2, (const int64_t[]){0, 2}, (const int64_t[]){1, 0},
                             VALS(1, 1), 1));
  mt_call c;
  mt_error e;
  CHECK_STATUS(run_backward(mt_cpu_grad_t, &c, &e, 1, (const mt_tensor *[]){x}, NULL, 1,
                        (const mt_tensor *[]){g}), MT_OK);
  const mt_tensor *d = c.out[0]->data;
  CHECK_EQ_INT(d->kind, MT_KIND_COO);
  CHECK_EQ_INT(d->shape[0], 2);
  CHECK_EQ_INT(d->nnz, 2);
  for (int64_t k = 0; k < d->nnz; k++) { /* (0, 2) = 5 and (1, 0) = 6, any order */
    int64_t r = d->indices[k], col = d->indices[d->nnz + k];
    CHECK((r == 0 && col == 2 && at(d, k) == 5) || (r == 1 && col == 0 && at(d, k) == 6));
  }
  done(&c, (mt_tensor *[]){x, g}, 2);
}

TEST(to_tensor_keeps_the_upstream_gradient_under_the_inputs_mask) {
  /* m.to_tensor(0.0) with mask [1, 0], upstream plain [3, 4]: a masked
   * gradient [3, -] with m's mask; the number gets none */
  mt_tensor *x = m64(1, SHAPE(2), VALS(1, 2), BITS(1, 0));
  mt_tensor *v = number(0.0);
  mt_tensor *g = dense(MT_float64, 1, SHAPE(2), VALS(3, 4));
  mt_call c;
  mt_error e;
  CHECK_STATUS(run_backward(mt_cpu_grad_to_tensor, &c, &e, 2, (const mt_tensor *[]){x, v}, NULL, 1,
                        (const mt_tensor *[]){g}), MT_OK);
  CHECK_EQ_INT(c.n_out, 2);
  CHECK(c.out[1] == NULL);
  CHECK_NEAR(val_or_out(c.out[0], 0), 3, 0);
  CHECK_NEAR(val_or_out(c.out[0], 1), -1, 0);
  done(&c, (mt_tensor *[]){x, v, g}, 3);
}

MT_TEST_MAIN(T(select_scatters_the_gradient_and_masks_out_the_other_rows),
             T(expand_sums_the_specified_copies_and_ors_their_masks),
             T(unfold_masks_out_a_position_no_window_covers),
             T(transpose_gives_the_upstream_gradient_transposed_back),
             T(cat_hands_each_input_its_piece_and_split_joins_them),
             T(where_routes_the_gradient_by_cond_and_masks_a_plain_branchs_gradient),
             T(where_with_a_number_branch_is_refused_as_torch_refuses_it),
             T(unsqueeze_index_and_to_dense_of_dense_storage_are_refused),
             T(transpose_of_coo_storage_gives_a_coo_gradient),
             T(to_tensor_keeps_the_upstream_gradient_under_the_inputs_mask))

/* test_cpu_structure.c - the CPU kernels of the structure family
 * (STR-1..STR-7): data and mask move through one gather plan. Inputs are
 * literals; expected values are derived by hand in the comments. */
#include <stdlib.h>

#include "cpu_fixtures.h"
#include "mt_test.h"

TEST(transpose_of_a_strided_input_moves_data_and_mask_alike) {
  /* data storage [[1,2,3],[4,5,6]] read transposed (shape [3,2], strides
   * [1,3]) is the logical [[1,4],[2,5],[3,6]]; the mask [[1,0],[0,1],[1,1]]
   * is contiguous. transpose(0,1) gives data [[1,2,3],[4,5,6]] and mask
   * [[1,0,1],[0,1,1]]: each mask bit stays with its element. */
  mt_tensor *d = dense(MT_float32, 2, SHAPE(2, 3), VALS(1, 2, 3, 4, 5, 6));
  d->shape[0] = 3, d->shape[1] = 2, d->strides[0] = 1, d->strides[1] = 3;
  mt_tensor *m = masked(d, bools(2, SHAPE(3, 2), BITS(1, 0, 0, 1, 1, 1)));
  mt_kwarg kv[] = {kw_int("dim0", 0), kw_int("dim1", 1)};
  mt_kwargs kw = {2, kv};
  const mt_tensor *in[] = {m};
  mt_call c;
  mt_error e;
  CHECK_STATUS(run(mt_cpu_transpose, &c, &e, 1, in, &kw), MT_OK);
  mt_tensor *o = c.out[0];
  CHECK_EQ_INT(o->ndim, 2);
  CHECK_EQ_INT(o->shape[0], 2);
  CHECK_EQ_INT(o->shape[1], 3);
  const double want[] = {1, 2, 3, 4, 5, 6};
  const int bits[] = {1, 0, 1, 0, 1, 1};
  for (int i = 0; i < 6; i++) {
    CHECK_NEAR(at(o->data, i), want[i], 0);
    CHECK_EQ_INT(bit(o->mask, i), bits[i]);
  }
  done(&c, (mt_tensor *[]){m}, 1);
}

TEST(select_moves_int64_beyond_2_53_bit_for_bit) {
  /* 2^53 + 1 = 9007199254740993 has no double: a kernel that went through
   * double would give ...992. select(dim=0, index=-1) of [[7, x], [2^53+1, 5]]
   * with mask [[1,0],[1,1]] is data [2^53+1, 5], mask [1, 1]. */
  mt_tensor *d = dense(MT_int64, 2, SHAPE(2, 2), VALS(7, 0, 0, 5));
  ((int64_t *)d->values)[2] = 9007199254740993LL;
  mt_tensor *m = masked(d, bools(2, SHAPE(2, 2), BITS(1, 0, 1, 1)));
  mt_kwarg kv[] = {kw_int("dim", 0), kw_int("index", -1)};
  mt_kwargs kw = {2, kv};
  const mt_tensor *in[] = {m};
  mt_call c;
  mt_error e;
  CHECK_STATUS(run(mt_cpu_select, &c, &e, 1, in, &kw), MT_OK);
  CHECK_EQ_INT(c.out[0]->ndim, 1);
  CHECK(((const int64_t *)c.out[0]->data->values)[0] == 9007199254740993LL);
  CHECK(((const int64_t *)c.out[0]->data->values)[1] == 5);
  CHECK_EQ_INT(bit(c.out[0]->mask, 0), 1);
  CHECK_EQ_INT(bit(c.out[0]->mask, 1), 1);
  done(&c, (mt_tensor *[]){m}, 1);
}

TEST(split_by_2_of_5_columns_gives_parts_of_2_2_1_with_their_masks) {
  /* [[0,1,2,3,4]] mask [1,0,1,0,1] split by 2 along dim 1: [[0,1]] mask
   * [1,0], [[2,3]] mask [1,0], [[4]] mask [1]. */
  mt_tensor *m = masked(dense(MT_float64, 2, SHAPE(1, 5), VALS(0, 1, 2, 3, 4)),
                        bools(2, SHAPE(1, 5), BITS(1, 0, 1, 0, 1)));
  mt_kwarg kv[] = {kw_int("split_size_or_sections", 2), kw_int("dim", 1)};
  mt_kwargs kw = {2, kv};
  const mt_tensor *in[] = {m};
  mt_call c;
  mt_error e;
  CHECK_STATUS(run(mt_cpu_split, &c, &e, 1, in, &kw), MT_OK);
  CHECK_EQ_INT(c.n_out, 3);
  const int64_t cols[] = {2, 2, 1};
  for (int k = 0; k < 3; k++) {
    CHECK_EQ_INT(c.out[k]->shape[1], cols[k]);
    CHECK_NEAR(at(c.out[k]->data, 0), 2.0 * k, 0);
    CHECK_EQ_INT(bit(c.out[k]->mask, 0), 1);
    if (cols[k] == 2) CHECK_EQ_INT(bit(c.out[k]->mask, 1), 0);
  }
  done(&c, (mt_tensor *[]){m}, 1);
}

TEST(where_number_branch_is_specified_and_condition_broadcasts) {
  /* where([1,0], x, 9.0) with x = [[1,2],[3,4]] mask [[0,1],[1,0]]: the
   * condition broadcasts over rows; column 0 takes x (mask 0 then 1),
   * column 1 takes the number 9 (specified): data [[1,9],[3,9]], mask
   * [[0,1],[1,1]]. */
  mt_tensor *cond = bools(1, SHAPE(2), BITS(1, 0));
  mt_tensor *x = masked(dense(MT_float32, 2, SHAPE(2, 2), VALS(1, 2, 3, 4)),
                        bools(2, SHAPE(2, 2), BITS(0, 1, 1, 0)));
  mt_tensor *nine = number(9.0);
  const mt_tensor *in[] = {cond, x, nine};
  mt_call c;
  mt_error e;
  CHECK_STATUS(run(mt_cpu_where, &c, &e, 3, in, NULL), MT_OK);
  const double want[] = {1, 9, 3, 9};
  const int bits[] = {0, 1, 1, 1};
  for (int i = 0; i < 4; i++) {
    if (bits[i]) CHECK_NEAR(at(c.out[0]->data, i), want[i], 0);
    CHECK_EQ_INT(bit(c.out[0]->mask, i), bits[i]);
  }
  CHECK_EQ_INT(c.out[0]->data->dtype, MT_float32);
  done(&c, (mt_tensor *[]){cond, x, nine}, 3);
}

TEST(copy_keeps_dst_mask_and_takes_src_data) {
  /* dst [1,2,3] mask [1,0,1]; src [7,8,9] mask [1,1,1] (masks differ: torch
   * accepts it): result data [7,8,9], mask [1,0,1] (dst's). */
  mt_tensor *dst = masked(dense(MT_int8, 1, SHAPE(3), VALS(1, 2, 3)),
                          bools(1, SHAPE(3), BITS(1, 0, 1)));
  mt_tensor *src = masked(dense(MT_int8, 1, SHAPE(3), VALS(7, 8, 9)),
                          bools(1, SHAPE(3), BITS(1, 1, 1)));
  const mt_tensor *in[] = {dst, src};
  mt_call c;
  mt_error e;
  CHECK_STATUS(run(mt_cpu_copy_, &c, &e, 2, in, NULL), MT_OK);
  for (int i = 0; i < 3; i++) {
    CHECK_NEAR(at(c.out[0]->data, i), 7.0 + i, 0);
    CHECK_EQ_INT(bit(c.out[0]->mask, i), i != 1);
  }
  CHECK_NEAR(at(dst->data, 0), 1, 0); /* the input is untouched */
  done(&c, (mt_tensor *[]){dst, src}, 2);
}

TEST(to_sparse_csr_keeps_exactly_the_masked_in_entries) {
  /* [[1,2],[3,4]] mask [[0,1],[1,1]]: entries (0,1)=2, (1,0)=3, (1,1)=4;
   * crow [0,1,3], col [1,0,1]; the masked-out 1 is not stored. */
  mt_tensor *m = masked(dense(MT_float64, 2, SHAPE(2, 2), VALS(1, 2, 3, 4)),
                        bools(2, SHAPE(2, 2), BITS(0, 1, 1, 1)));
  const mt_tensor *in[] = {m};
  mt_call c;
  mt_error e;
  CHECK_STATUS(run(mt_cpu_to_sparse_csr, &c, &e, 1, in, NULL), MT_OK);
  const mt_tensor *d = c.out[0]->data;
  CHECK_EQ_INT(d->kind, MT_KIND_CSR);
  CHECK_EQ_INT(d->nnz, 3);
  const int64_t crow[] = {0, 1, 3}, col[] = {1, 0, 1};
  for (int i = 0; i < 3; i++) CHECK_EQ_INT(d->crow_indices[i], crow[i]);
  for (int i = 0; i < 3; i++) {
    CHECK_EQ_INT(d->col_indices[i], col[i]);
    CHECK_NEAR(at(d, i), 2.0 + i, 0);
    CHECK_EQ_INT(bit(c.out[0]->mask, i), 1);
  }
  done(&c, (mt_tensor *[]){m}, 1);
}

TEST(argument_errors_name_torchs_refusal_and_return_nothing) {
  /* select index 3 of a size-3 dim: INDEX_OUT_OF_RANGE; view [5,2] (10
   * elements) of a [3,2] tensor (6 elements): SHAPE_MISMATCH. */
  mt_tensor *m = masked(dense(MT_float32, 2, SHAPE(3, 2), VALS(1, 2, 3, 4, 5, 6)),
                        bools(2, SHAPE(3, 2), BITS(1, 1, 1, 1, 1, 1)));
  const mt_tensor *in[] = {m};
  mt_call c;
  mt_error e;
  mt_kwarg sk[] = {kw_int("dim", 0), kw_int("index", 3)};
  mt_kwargs skw = {2, sk};
  CHECK_STATUS(run(mt_cpu_select, &c, &e, 1, in, &skw), MT_INDEX_OUT_OF_RANGE);
  CHECK_HAS(e.msg, "index 3 out of range");
  CHECK_EQ_INT(c.n_out, 0);
  const int64_t size[] = {5, 2};
  mt_kwarg vk[] = {kw_ints("size", 2, size)};
  mt_kwargs vkw = {1, vk};
  CHECK_STATUS(run(mt_cpu_view, &c, &e, 1, in, &vkw), MT_SHAPE_MISMATCH);
  CHECK_HAS(e.msg, "shape '[5, 2]' is invalid for input of size 6");
  CHECK_EQ_INT(c.n_out, 0);
  done(&c, (mt_tensor *[]){m}, 1);
}

TEST(coo_transpose_moves_indices_of_data_and_mask_alike) {
  /* COO [2,3] entries (0,2)=5 mask true, (1,0)=6 mask false: transpose(0,1)
   * gives shape [3,2] with entries (2,0)=5 true and (0,1)=6 false, in the
   * input's entry order (not coalesced any more). */
  mt_tensor *d = coo2(MT_float32, 2, 3, 2, (const int64_t[]){0, 1}, (const int64_t[]){2, 0},
                      VALS(5, 6), 1);
  mt_tensor *k = coo2(MT_bool, 2, 3, 2, (const int64_t[]){0, 1}, (const int64_t[]){2, 0},
                      VALS(1, 0), 1);
  mt_tensor *m = masked(d, k);
  mt_kwarg kv[] = {kw_int("dim0", 0), kw_int("dim1", 1)};
  mt_kwargs kw = {2, kv};
  const mt_tensor *in[] = {m};
  mt_call c;
  mt_error e;
  CHECK_STATUS(run(mt_cpu_transpose, &c, &e, 1, in, &kw), MT_OK);
  const mt_tensor *od = c.out[0]->data, *om = c.out[0]->mask;
  CHECK_EQ_INT(od->kind, MT_KIND_COO);
  CHECK_EQ_INT(od->shape[0], 3);
  CHECK_EQ_INT(od->shape[1], 2);
  CHECK_EQ_INT(od->nnz, 2);
  const int64_t rows[] = {2, 0}, cols[] = {0, 1};
  for (int j = 0; j < 2; j++) {
    CHECK_EQ_INT(od->indices[j], rows[j]);
    CHECK_EQ_INT(od->indices[2 + j], cols[j]);
    CHECK_EQ_INT(om->indices[j], rows[j]);
    CHECK_EQ_INT(om->indices[2 + j], cols[j]);
    CHECK_NEAR(at(od, j), 5.0 + j, 0);
    CHECK_EQ_INT(bit(om, j), j == 0);
  }
  CHECK_EQ_INT(od->coalesced, 0);
  done(&c, (mt_tensor *[]){m}, 1);
}

/* SP-4: CSR [2, 3] storing (0,1) = 5, (1,0) = 6, (1,2) = 7 with mask 1,
 * 0, 1. select(dim=0, index=1) is row 1's entries as COO [3]: indices
 * [0, 2], data 6, 7, mask 0, 1. transpose and unsqueeze are refused
 * (LAYOUT_MISMATCH: torch's CSC data, no strides); ones_like keeps the
 * structure with every stored value 1. */
TEST(csr_select_gives_coo_and_csr_views_are_refused) {
  const int64_t ri[3] = {0, 1, 1}, ci[3] = {1, 0, 2};
  mt_tensor *m = masked(csr2(MT_float32, 2, 3, 3, ri, ci, VALS(5, 6, 7)),
                        csr2(MT_bool, 2, 3, 3, ri, ci, VALS(1, 0, 1)));
  const mt_tensor *in[] = {m};
  mt_kwarg kv[] = {kw_int("dim", 0), kw_int("index", 1)};
  mt_kwargs kw = {2, kv};
  mt_call c;
  mt_error e;
  CHECK_STATUS(run(mt_cpu_select, &c, &e, 1, in, &kw), MT_OK);
  const mt_tensor *d = c.out[0]->data, *k = c.out[0]->mask;
  CHECK_EQ_INT(d->kind, MT_KIND_COO);
  CHECK(d->ndim == 1 && d->shape[0] == 3 && d->nnz == 2);
  CHECK(d->indices[0] == 0 && d->indices[1] == 2);
  CHECK_NEAR(at(d, 0), 6, 0);
  CHECK_NEAR(at(d, 1), 7, 0);
  CHECK(bit(k, 0) == 0 && bit(k, 1) == 1);
  done(&c, NULL, 0);
  mt_kwarg tv[] = {kw_int("dim0", 0), kw_int("dim1", 1)};
  mt_kwargs tkw = {2, tv};
  CHECK_STATUS(run(mt_cpu_transpose, &c, &e, 1, in, &tkw), MT_LAYOUT_MISMATCH);
  CHECK_HAS(e.msg, "sparse_csc");
  mt_kwarg uv[] = {kw_int("dim", 1)};
  mt_kwargs ukw = {1, uv};
  CHECK_STATUS(run(mt_cpu_unsqueeze, &c, &e, 1, in, &ukw), MT_LAYOUT_MISMATCH);
  CHECK_STATUS(run(mt_cpu_ones_like, &c, &e, 1, in, NULL), MT_OK);
  CHECK_EQ_INT(c.out[0]->data->kind, MT_KIND_CSR);
  for (int j = 0; j < 3; j++) CHECK_NEAR(at(c.out[0]->data, j), 1, 0);
  done(&c, (mt_tensor *[]){m}, 1);
}

MT_TEST_MAIN(T(csr_select_gives_coo_and_csr_views_are_refused),
             T(transpose_of_a_strided_input_moves_data_and_mask_alike),
             T(select_moves_int64_beyond_2_53_bit_for_bit),
             T(split_by_2_of_5_columns_gives_parts_of_2_2_1_with_their_masks),
             T(where_number_branch_is_specified_and_condition_broadcasts),
             T(copy_keeps_dst_mask_and_takes_src_data),
             T(to_sparse_csr_keeps_exactly_the_masked_in_entries),
             T(argument_errors_name_torchs_refusal_and_return_nothing),
             T(coo_transpose_moves_indices_of_data_and_mask_alike))

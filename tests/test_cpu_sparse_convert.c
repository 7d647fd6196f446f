/* test_cpu_sparse_convert.c - the CPU sparse_convert kernels on inputs
 * small enough to derive by hand: CSR -> CSC order (SPC-4), CSR -> BSR block
 * filling with a stored zero (SPC-2, SPC-4), BSR -> COO expanding every cell
 * (SPC-2, SPC-3), dense -> COO dropping -0.0 and keeping NaN (SPC-1), and
 * the constructors' invariant messages naming the index (SPC-10, SPC-9). */
#include <math.h>
#include <stdlib.h>

#include "cpu_fixtures.h"
#include "mt_test.h"

static mt_status call1(mt_kernel_fn fn, mt_call *c, mt_error *e, const mt_tensor *x,
                       const mt_kwargs *kw) {
  const mt_tensor *in[] = {x};
  return run(fn, c, e, 1, in, kw);
}

/* CSR 2 x 3 [[0, 5, 6], [7, 0, 8]] (entries row-major: (0,1)=5 (0,2)=6
 * (1,0)=7 (1,2)=8) to CSC: columns in order, rows ascending within each:
 *   col 0: (1,0)=7; col 1: (0,1)=5; col 2: (0,2)=6, (1,2)=8
 *   ccol_indices [0, 1, 2, 4], row_indices [1, 0, 0, 1], values [7, 5, 6, 8]. */
TEST(csr_to_csc_orders_by_column_then_row) {
  mt_tensor *x = csr2(MT_float64, 2, 3, 4, (const int64_t[]){0, 0, 1, 1},
                      (const int64_t[]){1, 2, 0, 2}, VALS(5, 6, 7, 8));
  mt_call c;
  mt_error e;
  CHECK_STATUS(call1(mt_cpu_to_sparse_csc, &c, &e, x, NULL), MT_OK);
  if (c.n_out == 1) {
    const mt_tensor *o = c.out[0];
    const int64_t ccol[] = {0, 1, 2, 4}, row[] = {1, 0, 0, 1};
    const double v[] = {7, 5, 6, 8};
    CHECK(o->kind == MT_KIND_CSC && o->nnz == 4);
    for (int i = 0; i < 4; i++) CHECK_EQ_INT(o->crow_indices[i], ccol[i]);
    for (int k = 0; k < 4; k++) {
      CHECK_EQ_INT(o->col_indices[k], row[k]);
      CHECK_NEAR(at(o, k), v[k], 0);
    }
  }
  done(&c, (mt_tensor *[]){x}, 1);
}

/* CSR 2 x 4 with a stored zero at (0, 3) and 9 at (1, 0), to BSR with
 * blocks 2 x 2: block (0, 0) holds (1, 0) = 9, block (0, 1) holds the
 * stored zero, so both blocks are stored (SPC-2), block row 0 in column
 * order (SPC-4): crow [0, 2], col [0, 1], values
 *   block 0 = [[0, 0], [9, 0]], block 1 = [[0, 0], [0, 0]]. */
TEST(csr_to_bsr_stores_a_block_for_a_stored_zero) {
  mt_tensor *x = csr2(MT_float32, 2, 4, 2, (const int64_t[]){0, 1}, (const int64_t[]){3, 0},
                      VALS(0, 9));
  mt_kwarg kv[] = {kw_ints("blocksize", 2, SHAPE(2, 2))};
  mt_kwargs kw = {1, kv};
  mt_call c;
  mt_error e;
  CHECK_STATUS(call1(mt_cpu_to_sparse_bsr, &c, &e, x, &kw), MT_OK);
  if (c.n_out == 1) {
    const mt_tensor *o = c.out[0];
    const double v[] = {0, 0, 9, 0, 0, 0, 0, 0};
    CHECK(o->kind == MT_KIND_BSR && o->nnz == 2 && o->blocksize[0] == 2 && o->blocksize[1] == 2);
    CHECK_EQ_INT(o->crow_indices[0], 0);
    CHECK_EQ_INT(o->crow_indices[1], 2);
    CHECK_EQ_INT(o->col_indices[0], 0);
    CHECK_EQ_INT(o->col_indices[1], 1);
    for (int i = 0; i < 8; i++) CHECK_NEAR(at(o, i), v[i], 0);
  }
  done(&c, (mt_tensor *[]){x}, 1);
  /* blocks of 3 do not divide 2 rows: torch's refusal */
  mt_kwarg bad[] = {kw_ints("blocksize", 2, SHAPE(3, 2))};
  mt_kwargs kwb = {1, bad};
  x = csr2(MT_float32, 2, 4, 1, (const int64_t[]){1}, (const int64_t[]){0}, VALS(9));
  CHECK_STATUS(call1(mt_cpu_to_sparse_bsr, &c, &e, x, &kwb), MT_INVALID_ARGUMENT);
  CHECK_HAS(e.msg, "must be divisible by given blocksize (3,2)");
  CHECK(c.n_out == 0);
  done(&c, (mt_tensor *[]){x}, 1);
}

/* Dense [[-0.0, 2], [NaN, 0]] to COO: -0.0 and 0 are zero (dropped), NaN is
 * nonzero (kept): entries (0, 1) = 2 and (1, 0) = NaN, row-major,
 * coalesced. */
TEST(dense_to_coo_drops_negative_zero_and_keeps_nan) {
  mt_tensor *x = dense(MT_float32, 2, SHAPE(2, 2), VALS(-0.0, 2, NAN, 0));
  mt_call c;
  mt_error e;
  CHECK_STATUS(call1(mt_cpu_to_sparse_coo, &c, &e, x, NULL), MT_OK);
  if (c.n_out == 1) {
    const mt_tensor *o = c.out[0];
    CHECK(o->kind == MT_KIND_COO && o->nnz == 2 && o->coalesced == 1);
    if (o->nnz == 2) {
      CHECK_EQ_INT(o->indices[0], 0); /* rows [0, 1], cols [1, 0] */
      CHECK_EQ_INT(o->indices[1], 1);
      CHECK_EQ_INT(o->indices[2], 1);
      CHECK_EQ_INT(o->indices[3], 0);
      CHECK_NEAR(at(o, 0), 2, 0);
      CHECK(isnan(at(o, 1)));
    }
  }
  done(&c, (mt_tensor *[]){x}, 1);
}

/* BSR 2 x 4, blocks 2 x 2, one stored block at block column 1 holding
 * [[1, 0], [0, 2]]: to COO every cell of the block is an entry, zeros too
 * (SPC-2), in block order, cells row-major: (0,2)=1 (0,3)=0 (1,2)=0
 * (1,3)=2. torch flags COO from BSR uncoalesced unless the blocks have one
 * row or there is at most one block (SPC-3): here one block, so coalesced. */
TEST(bsr_to_coo_expands_every_cell_of_a_block) {
  mt_tensor *x = NULL;
  if (mt_compressed_new(MT_KIND_BSR, MT_float64, 2, SHAPE(2, 4), 0, SHAPE(2, 2), 1, &x, NULL) !=
      MT_OK)
    abort();
  x->crow_indices[0] = 0;
  x->crow_indices[1] = 1;
  x->col_indices[0] = 1;
  const double v[] = {1, 0, 0, 2};
  for (int i = 0; i < 4; i++) mt_set_f64(x->values, MT_float64, i, v[i]);
  mt_call c;
  mt_error e;
  CHECK_STATUS(call1(mt_cpu_to_sparse_coo, &c, &e, x, NULL), MT_OK);
  if (c.n_out == 1) {
    const mt_tensor *o = c.out[0];
    const int64_t r[] = {0, 0, 1, 1}, col[] = {2, 3, 2, 3};
    CHECK(o->kind == MT_KIND_COO && o->nnz == 4 && o->coalesced == 1);
    for (int k = 0; k < 4 && o->nnz == 4; k++) {
      CHECK_EQ_INT(o->indices[k], r[k]);
      CHECK_EQ_INT(o->indices[4 + k], col[k]);
      CHECK_NEAR(at(o, k), v[k], 0);
    }
  }
  done(&c, (mt_tensor *[]){x}, 1);
}

/* sparse_csr_tensor(crow, col, values, size=(2, 3)): each broken invariant
 * gives its status and a message naming the index and the value. */
TEST(csr_constructor_names_the_broken_index) {
  struct {
    int64_t crow[3], col[3];
    mt_status want;
    const char *msg;
  } bad[] = {
      {{1, 2, 3}, {0, 2, 1}, MT_INVALID_ARGUMENT, "crow_indices[..., 0] == 0"},
      {{0, 2, 2}, {0, 2, 1}, MT_INVALID_ARGUMENT, "crow_indices[..., -1] == nnz"},
      {{0, 2, 3}, {0, 3, 1}, MT_INDEX_OUT_OF_RANGE, "col_indices[1] = 3"},
      {{0, 2, 3}, {-1, 0, 1}, MT_INDEX_OUT_OF_RANGE, "col_indices[0] = -1"},
      {{0, 2, 3}, {2, 0, 1}, MT_INVALID_ARGUMENT, "col_indices[1] = 0 after 2"},
      {{0, 2, 3}, {1, 1, 1}, MT_INVALID_ARGUMENT, "not sorted and distinct"},
  };
  mt_kwarg kv[] = {kw_ints("size", 2, SHAPE(2, 3)), kw_bool("check_invariants", 1)};
  mt_kwargs kw = {2, kv};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    mt_tensor *crow =
        dense(MT_int64, 1, SHAPE(3),
              VALS((double)bad[i].crow[0], (double)bad[i].crow[1], (double)bad[i].crow[2]));
    mt_tensor *col = dense(MT_int64, 1, SHAPE(3), VALS((double)bad[i].col[0], (double)bad[i].col[1],
                                                       (double)bad[i].col[2]));
    mt_tensor *val = dense(MT_float32, 1, SHAPE(3), VALS(1, 2, 3));
    const mt_tensor *in[] = {crow, col, val};
    mt_call c;
    mt_error e;
    CHECK_STATUS(run(mt_cpu_sparse_csr_tensor, &c, &e, 3, in, &kw), bad[i].want);
    CHECK_HAS(e.msg, bad[i].msg);
    CHECK(c.n_out == 0);
    done(&c, (mt_tensor *[]){crow, col, val}, 3);
  }
}

/* sparse_coo_tensor(indices [[0, 2], [1, 0]], values [1, 2], size (2, 3)):
 * row index 2 is past dim 0 of size 2: INDEX_OUT_OF_RANGE naming
 * indices[0][1]; with is_coalesced=True and indices [[1, 0], [0, 0]]
 * (unsorted) torch refuses the flag. */
TEST(coo_constructor_checks_range_and_the_coalesced_flag) {
  mt_tensor *ind = dense(MT_int64, 2, SHAPE(2, 2), VALS(0, 2, 1, 0));
  mt_tensor *val = dense(MT_float64, 1, SHAPE(2), VALS(1, 2));
  const mt_tensor *in[] = {ind, val};
  mt_kwarg kv[] = {kw_ints("size", 2, SHAPE(2, 3)), kw_bool("is_coalesced", 1)};
  mt_kwargs kw = {1, kv};
  mt_call c;
  mt_error e;
  CHECK_STATUS(run(mt_cpu_sparse_coo_tensor, &c, &e, 2, in, &kw), MT_INDEX_OUT_OF_RANGE);
  CHECK_HAS(e.msg, "indices[0][1]");
  done(&c, (mt_tensor *[]){ind}, 1);
  ind = dense(MT_int64, 2, SHAPE(2, 2), VALS(1, 0, 0, 0));
  in[0] = ind;
  kw.n = 2;
  CHECK_STATUS(run(mt_cpu_sparse_coo_tensor, &c, &e, 2, in, &kw), MT_INVALID_ARGUMENT);
  CHECK_HAS(e.msg, "cannot set is_coalesced to true");
  kw.n = 1; /* the same indices without the flag: accepted, flagged uncoalesced (nnz 2) */
  CHECK_STATUS(run(mt_cpu_sparse_coo_tensor, &c, &e, 2, in, &kw), MT_OK);
  if (c.n_out == 1) CHECK(c.out[0]->coalesced == 0 && c.out[0]->nnz == 2);
  done(&c, (mt_tensor *[]){ind, val}, 2);
}

MT_TEST_MAIN(T(csr_to_csc_orders_by_column_then_row),
             T(csr_to_bsr_stores_a_block_for_a_stored_zero),
             T(dense_to_coo_drops_negative_zero_and_keeps_nan),
             T(bsr_to_coo_expands_every_cell_of_a_block),
             T(csr_constructor_names_the_broken_index),
             T(coo_constructor_checks_range_and_the_coalesced_flag))

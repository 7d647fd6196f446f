/* test_cpu_sparse_misc.c - the plain sparse kernels (SPS-0 .. SPS-7):
 * structure_sparse.c, reduce_sparse.c, sparse_misc.c on small literal
 * tensors, every expected value derived by hand in the comment above it. */
#include <math.h>
#include <stdlib.h>

#include "cpu_fixtures.h"
#include "mt_test.h"

/* index k of sparse dim d of a COO tensor */
static int64_t ix(const mt_tensor *t, int d, int64_t k) { return t->indices[(int64_t)d * t->nnz + k]; }

/* SPS-0: nonzero of COO has no kernel ("... 'SparseCPU' backend"); reshape
 * of CSR is "Sparse CSR tensors do not have is_contiguous"; norm of an
 * int64 CSR tensor is refused for its dtype before its layout. */
TEST(plain_sparse_refusals_name_torchs_layout) {
  mt_tensor *c = coo2(MT_float32, 2, 2, 1, SHAPE(0), SHAPE(1), VALS(1), 1);
  mt_tensor *r = csr2(MT_float32, 2, 2, 1, SHAPE(0), SHAPE(1), VALS(1));
  mt_tensor *ri = csr2(MT_int64, 2, 2, 1, SHAPE(0), SHAPE(1), VALS(1));
  mt_call call;
  mt_error e;
  CHECK_STATUS(run(mt_cpu_nonzero, &call, &e, 1, (const mt_tensor *[]){c}, NULL), MT_LAYOUT_MISMATCH);
  CHECK_HAS(e.msg, "'SparseCPU' backend");
  mt_kwarg kv[] = {kw_ints("shape", 1, SHAPE(-1))};
  mt_kwargs kw = {1, kv};
  CHECK_STATUS(run(mt_cpu_reshape, &call, &e, 1, (const mt_tensor *[]){r}, &kw), MT_LAYOUT_MISMATCH);
  CHECK_HAS(e.msg, "Sparse CSR tensors do not have is_contiguous");
  CHECK_STATUS(run(mt_cpu_norm, &call, &e, 1, (const mt_tensor *[]){ri}, NULL), MT_DTYPE_MISMATCH);
  CHECK_HAS(e.msg, "Got Long instead");
  done(&call, (mt_tensor *[]){c, r, ri}, 3);
}

/* SPS-1: dst float32 [2, 2] {(0,0) = 1}; src float64 uncoalesced {(1,1) =
 * 2.5, (1,1) = 0.25}: dst.copy_(src) is src's storage in float32: nnz 2,
 * not coalesced, values [2.5, 0.25] (both exact in float32). An int64 dst
 * takes -2.75 as -2 (toward zero). A non-empty [3, 3] dst refuses a [2, 2]
 * src (torch's resize_: shrinking sparse dims). */
TEST(copy_converts_and_keeps_the_source_storage) {
  mt_tensor *dst = coo2(MT_float32, 2, 2, 1, SHAPE(0), SHAPE(0), VALS(1), 1);
  mt_tensor *src = coo2(MT_float64, 2, 2, 2, SHAPE(1, 1), SHAPE(1, 1), VALS(2.5, 0.25), 0);
  mt_tensor *idst = coo2(MT_int64, 2, 2, 0, SHAPE(0), SHAPE(0), VALS(0), 1);
  mt_tensor *neg = coo2(MT_float64, 2, 2, 1, SHAPE(0), SHAPE(1), VALS(-2.75), 1);
  mt_tensor *big = coo2(MT_float32, 3, 3, 1, SHAPE(2), SHAPE(2), VALS(1), 1);
  mt_call call;
  mt_error e;
  CHECK_STATUS(run(mt_cpu_copy_, &call, &e, 2, (const mt_tensor *[]){dst, src}, NULL), MT_OK);
  if (call.n_out == 1) {
    const mt_tensor *o = call.out[0];
    CHECK(o->kind == MT_KIND_COO && o->dtype == MT_float32 && o->nnz == 2 && !o->coalesced);
    CHECK(o->nnz == 2 && at(o, 0) == 2.5 && at(o, 1) == 0.25 && ix(o, 0, 1) == 1 && ix(o, 1, 1) == 1);
  }
  done(&call, NULL, 0);
  CHECK_STATUS(run(mt_cpu_copy_, &call, &e, 2, (const mt_tensor *[]){idst, neg}, NULL), MT_OK);
  if (call.n_out == 1) CHECK(call.out[0]->dtype == MT_int64 && at(call.out[0], 0) == -2.0);
  done(&call, NULL, 0);
  CHECK_STATUS(run(mt_cpu_copy_, &call, &e, 2, (const mt_tensor *[]){big, src}, NULL),
               MT_INVALID_ARGUMENT);
  CHECK_HAS(e.msg, "shrinking the size of sparse dimensions");
  done(&call, (mt_tensor *[]){dst, src, idst, neg, big}, 5);
}

/* copy_ of float64 {NaN, +inf, -inf, -1e300} into an int64 dst: torch's
 * cast is undefined there (x86 answers INT64_MIN for each, a GPU's cvt 0
 * for NaN and saturates the rest), so no golden holds it; ours is defined
 * and the same on every backend (mt_hd_f64_to_i64): NaN 0, then
 * saturation: INT64_MAX, INT64_MIN, INT64_MIN. A plain cast here is what
 * the asan preset's float-cast-overflow stops, and on x86 it gives
 * INT64_MIN for NaN, which fails the first check. */
TEST(copy_to_an_integer_dtype_defines_nan_and_overflow) {
  mt_tensor *src = coo2(MT_float64, 2, 2, 4, SHAPE(0, 0, 1, 1), SHAPE(0, 1, 0, 1),
                        VALS(NAN, INFINITY, -INFINITY, -1e300), 1);
  mt_tensor *idst = coo2(MT_int64, 2, 2, 0, SHAPE(0), SHAPE(0), VALS(0), 1);
  mt_call call;
  mt_error e;
  CHECK_STATUS(run(mt_cpu_copy_, &call, &e, 2, (const mt_tensor *[]){idst, src}, NULL), MT_OK);
  if (call.n_out == 1 && call.out[0]->dtype == MT_int64 && call.out[0]->nnz == 4) {
    const int64_t *v = (const int64_t *)call.out[0]->values;
    CHECK(v[0] == 0);
    CHECK(v[1] == INT64_MAX);
    CHECK(v[2] == INT64_MIN && v[3] == INT64_MIN);
  } else {
    CHECK(!"copy_ gave no int64 result of 4 values");
  }
  done(&call, (mt_tensor *[]){src, idst}, 2);
}

/* SPS-2: COO [2, 3] coalesced {(0,2) = 1, (1,0) = 2}: t() is [3, 2] with
 * index rows swapped, entries in the input's order: rows [2, 0], cols
 * [0, 1], flag cleared. One coalesced entry: t() still clears the flag,
 * unsqueeze(0) sets it (fewer than 2 entries). CSR [2, 3] t() is CSC
 * [3, 2] over the same index arrays. */
TEST(transpose_and_unsqueeze_move_indices_and_flags) {
  mt_tensor *x = coo2(MT_float32, 2, 3, 2, SHAPE(0, 1), SHAPE(2, 0), VALS(1, 2), 1);
  mt_tensor *one = coo2(MT_float32, 2, 3, 1, SHAPE(1), SHAPE(0), VALS(2), 1);
  mt_tensor *r = csr2(MT_float32, 2, 3, 2, SHAPE(0, 1), SHAPE(2, 0), VALS(1, 2));
  mt_call call;
  mt_error e;
  CHECK_STATUS(run(mt_cpu_t, &call, &e, 1, (const mt_tensor *[]){x}, NULL), MT_OK);
  if (call.n_out == 1) {
    const mt_tensor *o = call.out[0];
    CHECK(o->shape[0] == 3 && o->shape[1] == 2 && !o->coalesced);
    CHECK(ix(o, 0, 0) == 2 && ix(o, 0, 1) == 0 && ix(o, 1, 0) == 0 && ix(o, 1, 1) == 1);
    CHECK(at(o, 0) == 1.0 && at(o, 1) == 2.0);
  }
  done(&call, NULL, 0);
  CHECK_STATUS(run(mt_cpu_t, &call, &e, 1, (const mt_tensor *[]){one}, NULL), MT_OK);
  if (call.n_out == 1) CHECK(!call.out[0]->coalesced);
  done(&call, NULL, 0);
  mt_kwarg kv[] = {kw_int("dim", 0)};
  mt_kwargs kw = {1, kv};
  CHECK_STATUS(run(mt_cpu_unsqueeze, &call, &e, 1, (const mt_tensor *[]){one}, &kw), MT_OK);
  if (call.n_out == 1) {
    const mt_tensor *o = call.out[0];
    CHECK(o->ndim == 3 && o->sparse_dim == 3 && o->coalesced && ix(o, 0, 0) == 0 && ix(o, 1, 0) == 1);
  }
  done(&call, NULL, 0);
  CHECK_STATUS(run(mt_cpu_t, &call, &e, 1, (const mt_tensor *[]){r}, NULL), MT_OK);
  if (call.n_out == 1) {
    const mt_tensor *o = call.out[0];
    CHECK(o->kind == MT_KIND_CSC && o->shape[0] == 3 && o->shape[1] == 2);
    CHECK(o->crow_indices[1] == 1 && o->col_indices[0] == 2 && o->col_indices[1] == 0);
  }
  done(&call, (mt_tensor *[]){x, one, r}, 3);
}

/* SPS-3: COO [2, 3] uncoalesced {(0,1) = 1, (1,1) = -1, (1,0) = 2}.
 * sum(dim=0): column 0 gets 2, column 1 gets 1 + -1 = 0, which stays an
 * entry: indices [0, 1], values [2, 0], coalesced. sum() = 2 (dense 0-d).
 * As int32: torch.sparse.sum(dim=0) keeps int32, torch.sum widens to int64. */
TEST(sums_group_kept_indices_and_keep_zero_sums) {
  mt_tensor *x = coo2(MT_float32, 2, 3, 3, SHAPE(0, 1, 1), SHAPE(1, 1, 0), VALS(1, -1, 2), 0);
  mt_tensor *xi = coo2(MT_int32, 2, 3, 3, SHAPE(0, 1, 1), SHAPE(1, 1, 0), VALS(1, -1, 2), 0);
  mt_kwarg kv[] = {kw_int("dim", 0)};
  mt_kwargs kw = {1, kv};
  mt_call call;
  mt_error e;
  CHECK_STATUS(run(mt_cpu_sum, &call, &e, 1, (const mt_tensor *[]){x}, &kw), MT_OK);
  if (call.n_out == 1) {
    const mt_tensor *o = call.out[0];
    CHECK(o->kind == MT_KIND_COO && o->ndim == 1 && o->shape[0] == 3 && o->nnz == 2 && o->coalesced);
    CHECK(o->nnz == 2 && ix(o, 0, 0) == 0 && ix(o, 0, 1) == 1 && at(o, 0) == 2.0 && at(o, 1) == 0.0);
  }
  done(&call, NULL, 0);
  CHECK_STATUS(run(mt_cpu_sum, &call, &e, 1, (const mt_tensor *[]){x}, NULL), MT_OK);
  if (call.n_out == 1) CHECK(call.out[0]->kind == MT_KIND_DENSE && at(call.out[0], 0) == 2.0);
  done(&call, NULL, 0);
  CHECK_STATUS(run(mt_cpu_sparse_sum, &call, &e, 1, (const mt_tensor *[]){xi}, &kw), MT_OK);
  if (call.n_out == 1) CHECK(call.out[0]->dtype == MT_int32);
  done(&call, NULL, 0);
  CHECK_STATUS(run(mt_cpu_sum, &call, &e, 1, (const mt_tensor *[]){xi}, &kw), MT_OK);
  if (call.n_out == 1) CHECK(call.out[0]->dtype == MT_int64);
  done(&call, (mt_tensor *[]){x, xi}, 2);
}

/* SPS-3: an int64 COO [1, 2] {INT64_MAX, 1}: sum() is INT64_MAX + 1, which
 * torch's int64 accumulation wraps to INT64_MIN (two's complement, derived
 * by hand). The sum is unsigned, so the wrap is defined: a signed int64
 * accumulator overflows there, which UBSan (the asan preset) stops. */
TEST(an_integer_sum_wraps_as_torchs_does) {
  mt_tensor *x = coo2(MT_int64, 1, 2, 2, SHAPE(0, 0), SHAPE(0, 1), VALS(0, 1), 1);
  ((int64_t *)x->values)[0] = INT64_MAX;
  mt_call call;
  mt_error e;
  CHECK_STATUS(run(mt_cpu_sum, &call, &e, 1, (const mt_tensor *[]){x}, NULL), MT_OK);
  if (call.n_out == 1 && call.out[0]->dtype == MT_int64)
    CHECK(((const int64_t *)call.out[0]->values)[0] == INT64_MIN);
  else
    CHECK(!"sum gave no int64 result");
  done(&call, (mt_tensor *[]){x}, 1);
}

/* SPS-4: COO [1, 2] uncoalesced {(0,0) = 2, (0,0) = 3, (0,1) = 0}: the
 * coalesced values are [5, 0], so norm() = 5 (not sqrt(4 + 9)) and
 * norm(p=0) = 1 (the stored zero does not count). */
TEST(norm_coalesces_first) {
  mt_tensor *x = coo2(MT_float64, 1, 2, 3, SHAPE(0, 0, 0), SHAPE(0, 0, 1), VALS(2, 3, 0), 0);
  mt_kwarg kv[] = {kw_float("p", 0.0)};
  mt_kwargs kw = {1, kv};
  mt_call call;
  mt_error e;
  CHECK_STATUS(run(mt_cpu_norm, &call, &e, 1, (const mt_tensor *[]){x}, NULL), MT_OK);
  if (call.n_out == 1) CHECK(at(call.out[0], 0) == 5.0);
  done(&call, NULL, 0);
  CHECK_STATUS(run(mt_cpu_norm, &call, &e, 1, (const mt_tensor *[]){x}, &kw), MT_OK);
  if (call.n_out == 1) CHECK(at(call.out[0], 0) == 1.0);
  done(&call, (mt_tensor *[]){x}, 1);
}

/* SPS-5: COO [2, 3] {(0,0) = 0, (0,2) = 0, (1,1) = 5}, softmax over dim 1:
 * row 0 has two stored values, equal: 1/2 each (the unstored (0,1) takes
 * no share); row 1 one value: exp(0)/exp(0) = 1. log_softmax: log(1/2)
 * and 0. */
TEST(softmax_runs_over_stored_entries_only) {
  mt_tensor *x = coo2(MT_float64, 2, 3, 3, SHAPE(0, 0, 1), SHAPE(0, 2, 1), VALS(0, 0, 5), 1);
  mt_kwarg kv[] = {kw_int("dim", 1)};
  mt_kwargs kw = {1, kv};
  mt_call call;
  mt_error e;
  CHECK_STATUS(run(mt_cpu_sparse_softmax, &call, &e, 1, (const mt_tensor *[]){x}, &kw), MT_OK);
  if (call.n_out == 1) {
    const mt_tensor *o = call.out[0];
    CHECK(o->nnz == 3 && at(o, 0) == 0.5 && at(o, 1) == 0.5 && at(o, 2) == 1.0 && o->coalesced);
  }
  done(&call, NULL, 0);
  CHECK_STATUS(run(mt_cpu_sparse_log_softmax, &call, &e, 1, (const mt_tensor *[]){x}, &kw), MT_OK);
  if (call.n_out == 1)
    CHECK(fabs(at(call.out[0], 0) - log(0.5)) < 1e-15 && at(call.out[0], 2) == 0.0);
  done(&call, (mt_tensor *[]){x}, 1);
}

/* SPS-6: COO [3, 2] {(0,1) = 7, (2,0) = 8}; index_select(dim 0, [2, 2, 1])
 * is [3, 2] with row 2's entry once per naming: (0,0) = 8, (1,0) = 8,
 * nothing from row 1; 2 entries: flag cleared. index [0]: 1 entry,
 * (0,1) = 7, flag set. */
TEST(index_select_repeats_entries_named_twice) {
  mt_tensor *x = coo2(MT_float32, 3, 2, 2, SHAPE(0, 2), SHAPE(1, 0), VALS(7, 8), 1);
  mt_tensor *i3 = dense(MT_int64, 1, SHAPE(3), VALS(2, 2, 1));
  mt_tensor *i1 = dense(MT_int64, 1, SHAPE(1), VALS(0));
  mt_kwarg kv[] = {kw_int("dim", 0)};
  mt_kwargs kw = {1, kv};
  mt_call call;
  mt_error e;
  CHECK_STATUS(run(mt_cpu_index_select, &call, &e, 2, (const mt_tensor *[]){x, i3}, &kw), MT_OK);
  if (call.n_out == 1) {
    const mt_tensor *o = call.out[0];
    CHECK(o->shape[0] == 3 && o->nnz == 2 && !o->coalesced);
    CHECK(o->nnz == 2 && ix(o, 0, 0) == 0 && ix(o, 0, 1) == 1 && ix(o, 1, 0) == 0 &&
          at(o, 0) == 8.0 && at(o, 1) == 8.0);
  }
  done(&call, NULL, 0);
  CHECK_STATUS(run(mt_cpu_index_select, &call, &e, 2, (const mt_tensor *[]){x, i1}, &kw), MT_OK);
  if (call.n_out == 1)
    CHECK(call.out[0]->nnz == 1 && call.out[0]->coalesced && at(call.out[0], 0) == 7.0);
  done(&call, (mt_tensor *[]){x, i3, i1}, 3);
}

/* SPS-7: COO [3, 3] {(2,2) = 1}: sparse_resize_((2, 3), 2, 0) shrinks a
 * sparse dim of a non-empty tensor (refused); ((4, 5), 2, 0) grows it: the
 * entry stays. sparse_resize_and_clear_((2, 2), 2, 0): nothing stored. */
TEST(resize_refuses_to_shrink_a_non_empty_tensor) {
  mt_tensor *x = coo2(MT_float32, 3, 3, 1, SHAPE(2), SHAPE(2), VALS(1), 1);
  mt_kwarg shrink[] = {kw_ints("size", 2, SHAPE(2, 3)), kw_int("sparse_dim", 2), kw_int("dense_dim", 0)};
  mt_kwarg grow[] = {kw_ints("size", 2, SHAPE(4, 5)), kw_int("sparse_dim", 2), kw_int("dense_dim", 0)};
  mt_kwarg small[] = {kw_ints("size", 2, SHAPE(2, 2)), kw_int("sparse_dim", 2), kw_int("dense_dim", 0)};
  mt_kwargs ks = {3, shrink}, kg = {3, grow}, kc = {3, small};
  mt_call call;
  mt_error e;
  CHECK_STATUS(run(mt_cpu_sparse_resize_, &call, &e, 1, (const mt_tensor *[]){x}, &ks),
               MT_INVALID_ARGUMENT);
  CHECK_HAS(e.msg, "shrinking the size of sparse dimensions");
  CHECK_STATUS(run(mt_cpu_sparse_resize_, &call, &e, 1, (const mt_tensor *[]){x}, &kg), MT_OK);
  if (call.n_out == 1)
    CHECK(call.out[0]->shape[0] == 4 && call.out[0]->shape[1] == 5 && call.out[0]->nnz == 1 &&
          at(call.out[0], 0) == 1.0);
  done(&call, NULL, 0);
  CHECK_STATUS(run(mt_cpu_sparse_resize_and_clear_, &call, &e, 1, (const mt_tensor *[]){x}, &kc),
               MT_OK);
  if (call.n_out == 1) CHECK(call.out[0]->nnz == 0 && call.out[0]->shape[0] == 2);
  done(&call, (mt_tensor *[]){x}, 1);
}

MT_TEST_MAIN(T(plain_sparse_refusals_name_torchs_layout),
             T(copy_converts_and_keeps_the_source_storage),
             T(copy_to_an_integer_dtype_defines_nan_and_overflow),
             T(transpose_and_unsqueeze_move_indices_and_flags),
             T(sums_group_kept_indices_and_keep_zero_sums), T(an_integer_sum_wraps_as_torchs_does),
             T(norm_coalesces_first),
             T(softmax_runs_over_stored_entries_only), T(index_select_repeats_entries_named_twice),
             T(resize_refuses_to_shrink_a_non_empty_tensor))

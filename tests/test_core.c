/* test_core.c - the shared core: layout validation (spec/SEMANTICS.md
 * ERR-1..ERR-4), allocation limits, coalescing, float16 conversion,
 * names and dispatch through old or partial implementation tables. */
#include <stdint.h>
#include <stdlib.h>

#include "mt_core.h"
#include "mt_test.h"

static mt_tensor *coo_2x4(const int64_t *idx, const float *vals, int64_t nnz) {
  mt_tensor *t = NULL;
  mt_error e;
  if (mt_coo_new(MT_float32, 2, (const int64_t[]){2, 4}, 2, nnz, &t, &e) != MT_OK) abort();
  memcpy(t->indices, idx, (size_t)(2 * nnz) * sizeof(int64_t));
  memcpy(t->values, vals, (size_t)nnz * sizeof(float));
  t->coalesced = 0;
  return t;
}

/* ---- ERR-1: COO ------------------------------------------------------------------ */

TEST(coo_index_out_of_range_names_index_value_dim_and_size) {
  /* the tutorial's indices with column 2 of entry 2 changed to 9 */
  mt_tensor *t = coo_2x4((const int64_t[]){0, 1, 1, 2, 0, 9}, (const float[]){3, 4, 5}, 3);
  mt_error e = {0};
  CHECK_STATUS(mt_tensor_validate(t, "inputs/1", &e), MT_INDEX_OUT_OF_RANGE);
  CHECK_HAS(e.msg, "inputs/1: COO indices[1][2] = 9 is out of range for dim 1 of size 4");
  t->indices[5] = -1;
  CHECK_STATUS(mt_tensor_validate(t, "g", &e), MT_INDEX_OUT_OF_RANGE);
  CHECK_HAS(e.msg, "indices[1][2] = -1");
  mt_tensor_free(t);
}

TEST(coo_flagged_coalesced_must_be_sorted_and_unique) {
  mt_tensor *t = coo_2x4((const int64_t[]){1, 0, 0, 0}, (const float[]){1, 2}, 2);
  mt_error e = {0};
  CHECK_STATUS(mt_tensor_validate(t, "g", &e), MT_OK); /* unsorted is fine unflagged */
  t->coalesced = 1;
  CHECK_STATUS(mt_tensor_validate(t, "g", &e), MT_INVALID_ARGUMENT);
  CHECK_HAS(e.msg, "flagged coalesced but entry 1 is ordered before entry 0");
  t->indices[0] = 0; /* now (0,0) twice */
  CHECK_STATUS(mt_tensor_validate(t, "g", &e), MT_INVALID_ARGUMENT);
  CHECK_HAS(e.msg, "a duplicate of");
  mt_tensor_free(t);
}

TEST(coo_dims_must_add_up) {
  mt_tensor *t = coo_2x4((const int64_t[]){0, 0}, (const float[]){1}, 1);
  mt_error e = {0};
  t->dense_dim = 1;
  CHECK_STATUS(mt_tensor_validate(t, "g", &e), MT_INVALID_ARGUMENT);
  CHECK_HAS(e.msg, "sparse_dim (2) + dense_dim (1) must equal ndim (2)");
  mt_tensor_free(t);
}

TEST(coalesce_sorts_sums_duplicates_and_keeps_hybrid_rows) {
  /* entries (1,0)=1 (0,3)=2 (1,0)=4 (0,3)=-2: sorted (0,3)=0 (1,0)=5; the
   * cancelled (0,3) stays an explicit zero, as torch.coalesce keeps it */
  mt_tensor *t = coo_2x4((const int64_t[]){1, 0, 1, 0, 0, 3, 0, 3}, (const float[]){1, 2, 4, -2},
                         4);
  mt_tensor *c = NULL;
  mt_error e = {0};
  CHECK_STATUS(mt_coo_coalesce(t, &c, &e), MT_OK);
  CHECK_EQ_INT(c->nnz, 2);
  CHECK(c->coalesced);
  CHECK_EQ_INT(c->indices[0], 0);
  CHECK_EQ_INT(c->indices[1], 1);
  CHECK_EQ_INT(c->indices[2], 3);
  CHECK_EQ_INT(c->indices[3], 0);
  CHECK_NEAR(((float *)c->values)[0], 0.0, 0);
  CHECK_NEAR(((float *)c->values)[1], 5.0, 0);
  CHECK_STATUS(mt_tensor_validate(c, "c", &e), MT_OK);
  mt_tensor_free(c);
  mt_tensor_free(t);

  /* hybrid: sparse_dim 1 over shape [3, 2]; rows 2 and 0, row 2 twice */
  mt_tensor *h = NULL, *d = NULL;
  CHECK_STATUS(mt_coo_new(MT_float64, 2, (const int64_t[]){3, 2}, 1, 3, &h, &e), MT_OK);
  const int64_t hi[] = {2, 0, 2};
  const double hv[] = {1, 2, 3, 4, 10, 20};
  memcpy(h->indices, hi, sizeof hi);
  memcpy(h->values, hv, sizeof hv);
  h->coalesced = 0;
  CHECK_STATUS(mt_to_dense(h, &d, &e), MT_OK);
  const double want[] = {3, 4, 0, 0, 11, 22}; /* row 0 = (3,4); row 2 = (1+10, 2+20) */
  for (int i = 0; i < 6; i++) CHECK_NEAR(((double *)d->values)[i], want[i], 0);
  mt_tensor_free(d);
  mt_tensor_free(h);
}

/* ---- ERR-2: CSR ------------------------------------------------------------------ */

TEST(csr_invariants_each_give_a_message_naming_the_field) {
  mt_tensor *t = NULL;
  mt_error e = {0};
  /* [[0, 1, 0], [2, 0, 3]]: crow [0, 1, 3], col [1, 0, 2] */
  CHECK_STATUS(mt_csr_new(MT_float32, 2, 3, 3, &t, &e), MT_OK);
  memcpy(t->crow_indices, (const int64_t[]){0, 1, 3}, 3 * sizeof(int64_t));
  memcpy(t->col_indices, (const int64_t[]){1, 0, 2}, 3 * sizeof(int64_t));
  CHECK_STATUS(mt_tensor_validate(t, "a", &e), MT_OK);
  t->crow_indices[0] = 1;
  CHECK_STATUS(mt_tensor_validate(t, "a", &e), MT_INVALID_ARGUMENT);
  CHECK_HAS(e.msg, "a: CSR crow_indices[0] = 1, must be 0");
  t->crow_indices[0] = 0;
  t->crow_indices[1] = 4;
  CHECK_STATUS(mt_tensor_validate(t, "a", &e), MT_INVALID_ARGUMENT);
  CHECK_HAS(e.msg, "crow_indices[2] = 3 is less than crow_indices[1] = 4");
  t->crow_indices[1] = 1;
  t->crow_indices[2] = 2;
  CHECK_STATUS(mt_tensor_validate(t, "a", &e), MT_INVALID_ARGUMENT);
  CHECK_HAS(e.msg, "crow_indices[2] = 2, must equal nnz = 3");
  t->crow_indices[2] = 3;
  t->col_indices[2] = 3;
  CHECK_STATUS(mt_tensor_validate(t, "a", &e), MT_INDEX_OUT_OF_RANGE);
  CHECK_HAS(e.msg, "col_indices[2] = 3 is out of range for 3 columns");
  t->col_indices[2] = 0;
  CHECK_STATUS(mt_tensor_validate(t, "a", &e), MT_INVALID_ARGUMENT);
  CHECK_HAS(e.msg, "columns must be sorted and unique per row");
  mt_tensor_free(t);
}

/* ---- ERR-3: masked members -------------------------------------------------------- */

TEST(masked_members_must_agree_in_layout_shape_and_mask_dtype) {
  mt_tensor *d = NULL, *m = NULL, *t = NULL;
  mt_error e = {0};
  CHECK_STATUS(mt_dense_new(MT_float32, 2, (const int64_t[]){2, 3}, &d, &e), MT_OK);
  CHECK_STATUS(mt_dense_new(MT_float32, 2, (const int64_t[]){2, 3}, &m, &e), MT_OK);
  CHECK_STATUS(mt_masked_new(d, m, &t, &e), MT_OK);
  CHECK_STATUS(mt_tensor_validate(t, "inputs/0", &e), MT_DTYPE_MISMATCH);
  CHECK_HAS(e.msg, "inputs/0: mask dtype is float32, must be bool");
  t->mask->dtype = MT_bool; /* same byte size is not needed: just the header check */
  t->mask->shape[1] = 2;
  CHECK_STATUS(mt_tensor_validate(t, "inputs/0", &e), MT_SHAPE_MISMATCH);
  CHECK_HAS(e.msg, "data shape [2, 3] differs from mask shape [2, 2]");
  t->mask->kind = MT_KIND_COO;
  CHECK_STATUS(mt_tensor_validate(t, "inputs/0", &e), MT_LAYOUT_MISMATCH);
  CHECK_HAS(e.msg, "data is dense but mask is coo");
  t->mask->kind = MT_KIND_DENSE;
  t->mask->shape[1] = 3;
  t->data->strides[0] = -3;
  CHECK_STATUS(mt_tensor_validate(t, "inputs/0", &e), MT_INVALID_ARGUMENT);
  CHECK_HAS(e.msg, "inputs/0/data: strides[0] = -3 is negative");
  mt_tensor_free(t);
  /* masked_new takes ownership even when it refuses */
  CHECK_STATUS(mt_dense_new(MT_float32, 1, (const int64_t[]){2}, &d, &e), MT_OK);
  CHECK_STATUS(mt_masked_new(d, NULL, &t, &e), MT_INVALID_ARGUMENT);
  CHECK(t == NULL);
}

/* ---- ERR-4: shapes ------------------------------------------------------------------ */

TEST(zero_size_and_0d_tensors_are_valid_negative_and_huge_are_not) {
  mt_tensor *t = NULL;
  mt_error e = {0};
  CHECK_STATUS(mt_dense_new(MT_float64, 2, (const int64_t[]){0, 4}, &t, &e), MT_OK);
  CHECK_EQ_INT(mt_numel(t), 0);
  CHECK_STATUS(mt_tensor_validate(t, "z", &e), MT_OK);
  mt_tensor_free(t);
  CHECK_STATUS(mt_dense_new(MT_float64, 0, NULL, &t, &e), MT_OK);
  CHECK_EQ_INT(mt_numel(t), 1);
  mt_tensor_free(t);
  CHECK_STATUS(mt_dense_new(MT_float32, 2, (const int64_t[]){3, -1}, &t, &e),
               MT_INVALID_ARGUMENT);
  CHECK_HAS(e.msg, "shape[1] = -1 is negative");
  CHECK_STATUS(
      mt_dense_new(MT_float32, 3, (const int64_t[]){1LL << 40, 1LL << 40, 1LL << 40}, &t, &e),
      MT_INVALID_ARGUMENT);
  CHECK_HAS(e.msg, "more than 2^63 elements");
  CHECK_STATUS(mt_dense_new(MT_float64, 2, (const int64_t[]){1LL << 31, 1LL << 31}, &t, &e),
               MT_OUT_OF_MEMORY); /* 2^62 elements x 8 bytes does not fit in size_t */
  CHECK(t == NULL);
  CHECK_STATUS(mt_dense_new(MT_float32, 9, (const int64_t[]){1, 1, 1, 1, 1, 1, 1, 1, 1}, &t, &e),
               MT_INVALID_ARGUMENT);
  CHECK_HAS(e.msg, "ndim = 9 is outside [0, 8]");
}

TEST(hand_built_views_are_never_freed) {
  float v[2] = {1, 2};
  mt_tensor view = {.kind = MT_KIND_DENSE, .dtype = MT_float32, .ndim = 1, .shape = {2},
                    .strides = {1}, .values = v};
  mt_tensor_free(&view); /* owner is NULL: a no-op, ASan would catch a free */
  mt_tensor_free(NULL);
  CHECK_NEAR(v[1], 2.0, 0);
}

TEST(clone_of_a_strided_int64_view_is_exact_and_contiguous) {
  /* a 2x2 transposed view of [[2^53+1, 1], [2, 3]]: a copy through double
   * would round 2^53+1 to 2^53 */
  int64_t v[4] = {(1LL << 53) + 1, 1, 2, 3};
  mt_tensor view = {.kind = MT_KIND_DENSE, .dtype = MT_int64, .ndim = 2, .shape = {2, 2},
                    .strides = {1, 2}, .values = v};
  mt_tensor *c = NULL;
  mt_error e = {0};
  CHECK_STATUS(mt_tensor_clone(&view, &c, &e), MT_OK);
  CHECK(mt_is_contiguous(c));
  const int64_t want[4] = {(1LL << 53) + 1, 2, 1, 3}; /* transposed */
  for (int i = 0; i < 4; i++) CHECK_EQ_INT(((int64_t *)c->values)[i], want[i]);
  mt_tensor_free(c);
}

/* ---- float16 ------------------------------------------------------------------------ */

TEST(float16_round_trips_and_rounds_to_nearest_even) {
  /* bit patterns from IEEE 754 binary16 */
  CHECK_NEAR(mt_half_to_float(0x3c00), 1.0, 0);
  CHECK_NEAR(mt_half_to_float(0xc000), -2.0, 0);
  CHECK_NEAR(mt_half_to_float(0x7bff), 65504.0, 0);
  CHECK_NEAR(mt_half_to_float(0x0001), 0x1p-24, 0); /* smallest subnormal */
  CHECK(isinf(mt_half_to_float(0x7c00)));
  CHECK(isnan(mt_half_to_float(0x7e00)));
  for (uint32_t h = 0; h < 0x7c00; h++) /* every finite non-negative half */
    if (mt_float_to_half(mt_half_to_float((uint16_t)h)) != h) {
      CHECK_EQ_INT(mt_float_to_half(mt_half_to_float((uint16_t)h)), h);
      break;
    }
  /* 1 + 2^-11 is halfway between 1 and 1 + 2^-10: ties to even (1.0) */
  CHECK_EQ_INT(mt_float_to_half(1.0f + 0x1p-11f), 0x3c00);
  /* 1 + 3*2^-11 is halfway between 1+2^-10 (odd) and 1+2^-9: rounds up */
  CHECK_EQ_INT(mt_float_to_half(1.0f + 3 * 0x1p-11f), 0x3c02);
  CHECK_EQ_INT(mt_float_to_half(65520.0f), 0x7c00); /* overflows to inf */
  CHECK_EQ_INT(mt_float_to_half(65519.0f), 0x7bff);
  CHECK_EQ_INT(mt_float_to_half(0x1p-25f), 0x0000); /* tie to even: 0 */
  CHECK_EQ_INT(mt_float_to_half(0x1.8p-25f), 0x0001);
}

/* ---- bfloat16 ----------------------------------------------------------------------- */

static uint16_t bf(uint32_t float_bits) {
  float f;
  memcpy(&f, &float_bits, sizeof f);
  return mt_float_to_bfloat16(f);
}

TEST(bfloat16_rounds_to_nearest_even) {
  /* widening is exact: the bits become a float32's upper half */
  CHECK_NEAR(mt_bfloat16_to_float(0x3f80), 1.0, 0);  /* 0x3f800000 */
  CHECK_NEAR(mt_bfloat16_to_float(0xc040), -3.0, 0); /* -1.5 * 2^1: 0xc0400000 */
  CHECK_NEAR(mt_bfloat16_to_float(0x0001), 0x1p-133, 0); /* smallest subnormal: 2^-126 * 2^-7 */
  CHECK(isinf(mt_bfloat16_to_float(0x7f80)) && isnan(mt_bfloat16_to_float(0x7fc0)));
  for (uint32_t b = 0; b < 0x7f80; b++) /* every finite non-negative bfloat16 round-trips */
    if (bf(b << 16) != b || mt_float_to_bfloat16(mt_bfloat16_to_float((uint16_t)b)) != b) {
      CHECK_EQ_INT(bf(b << 16), b);
      break;
    }
  /* ties: 0x3f808000 = 1 + 2^-8, halfway between 1.0 (0x3f80, even) and
   * 1 + 2^-7 (0x3f81): to even, 0x3f80. 0x3f818000 = 1 + 3*2^-8, halfway
   * between 0x3f81 (odd) and 0x3f82 (1 + 2^-6): up to even, 0x3f82 */
  CHECK_EQ_INT(bf(0x3f808000u), 0x3f80);
  CHECK_EQ_INT(bf(0x3f818000u), 0x3f82);
  CHECK_EQ_INT(bf(0x3f808001u), 0x3f81); /* just above the tie: up */
  CHECK_EQ_INT(bf(0x3f817fffu), 0x3f81); /* just below the tie: down */
  CHECK_EQ_INT(bf(0xbf818000u), 0xbf82); /* the sign does not change the rounding */
  /* NaN stays NaN, quiet, sign kept: 0x7f800001 has its payload in the low
   * bits only, so rounding its bits blindly would give 0x7f80 (inf) */
  CHECK_EQ_INT(bf(0x7f800001u), 0x7fc0);
  CHECK_EQ_INT(bf(0xffc00000u), 0xffc0);
  CHECK_EQ_INT(bf(0x7fffffffu), 0x7fc0);
  /* infinities and overflow: FLT_MAX 0x7f7fffff is above the tie between
   * 0x7f7f (the largest finite bfloat16, (2 - 2^-7) 2^127) and 0x7f80:
   * inf; 0x7f7f8000 is the tie with 0x7f7f odd: inf; 0x7f7f7fff stays */
  CHECK_EQ_INT(bf(0x7f800000u), 0x7f80);
  CHECK_EQ_INT(bf(0xff800000u), 0xff80);
  CHECK_EQ_INT(bf(0x7f7fffffu), 0x7f80);
  CHECK_EQ_INT(bf(0xff7f8000u), 0xff80);
  CHECK_EQ_INT(bf(0x7f7f7fffu), 0x7f7f);
  /* signed zeros */
  CHECK_EQ_INT(bf(0x00000000u), 0x0000);
  CHECK_EQ_INT(bf(0x80000000u), 0x8000);
  /* subnormals: 0x00008000 = 2^-134, halfway between 0 and 0x0001
   * (2^-133): to even, 0; 0x00018000 = 3 * 2^-134, halfway between 0x0001
   * and 0x0002: to 0x0002; 0x80008001 is just above the tie: -2^-133 */
  CHECK_EQ_INT(bf(0x00008000u), 0x0000);
  CHECK_EQ_INT(bf(0x00018000u), 0x0002);
  CHECK_EQ_INT(bf(0x80008001u), 0x8001);
  CHECK_EQ_INT(bf(0x007fffffu), 0x0080); /* the largest float subnormal rounds to 2^-126 */
  /* a double goes double -> float -> bfloat16, as torch: 1 + 2^-8 + 2^-40
   * is 1 + 2^-8 in float (2^-40 is below half a float ulp, 2^-24), a tie
   * that goes to 1.0; rounding the double directly would give 0x3f81 */
  uint16_t v = 0;
  mt_set_f64(&v, MT_bfloat16, 0, 1.0 + 0x1p-8 + 0x1p-40);
  CHECK_EQ_INT(v, 0x3f80);
  CHECK_NEAR(mt_get_f64(&v, MT_bfloat16, 0), 1.0, 0);
  /* the dtype: appended after bool (ABI 1 keeps the older values) */
  mt_dtype d;
  CHECK(mt_dtype_from_name("bfloat16", &d) == 0 && d == MT_bfloat16 && mt_dtype_size(d) == 2);
  CHECK_EQ_INT((int)MT_bfloat16, (int)MT_bool + 1);
  CHECK(mt_dtype_is_float(MT_bfloat16));
}

/* ---- names ------------------------------------------------------------------------- */

TEST(names_round_trip_through_the_tables) {
  mt_op op;
  mt_status s;
  mt_dtype d;
  mt_kind k;
  CHECK(mt_op_from_name("adagrad_sparse", &op) == 0 && op == MT_OP_adagrad_sparse);
  CHECK(strcmp(mt_op_family(MT_OP_amax), "reduce") == 0);
  CHECK(mt_op_from_name("nope", &op) != 0);
  CHECK(mt_op_name((mt_op)999) == NULL);
  CHECK(mt_status_from_name("MASK_MISMATCH", &s) == 0 && s == MT_MASK_MISMATCH);
  CHECK(strcmp(mt_status_name((mt_status)99), "?") == 0);
  CHECK(mt_dtype_from_name("float16", &d) == 0 && mt_dtype_size(d) == 2);
  CHECK(mt_kind_from_name("csr", &k) == 0 && k == MT_KIND_CSR);
  mt_error e = {0};
  mt_err(&e, MT_SHAPE_MISMATCH, NULL);
  CHECK_HAS(e.msg, "shapes do not match");
  mt_err_prefix(&e, "case %s", "x.y");
  CHECK_HAS(e.msg, "case x.y: shapes do not match");
  CHECK_EQ_INT(e.status, MT_SHAPE_MISMATCH);
}

/* ---- dispatch ----------------------------------------------------------------------- */

static mt_status k_neg_ok(mt_call *c, mt_error *e) {
  c->n_out = 0;
  return MT_OK;
}
static mt_status k_silent_fail(mt_call *c, mt_error *e) { return MT_DTYPE_MISMATCH; }

static mt_status k_neg_other(mt_call *c, mt_error *e) {
  (void)c;
  return mt_err(e, MT_INDEX_OUT_OF_RANGE, "the numpy_ma kernel ran");
}

/* A case of profile P runs the impl's table for P; a profile the impl does
 * not list (or an older table that ends before the profiles) is
 * NOT_SUPPORTED, never the torch kernels. */
TEST(dispatch_picks_the_profile_table) {
  mt_kernel_fn k[MT_OP_neg + 1] = {0}, kn[MT_OP_neg + 1] = {0};
  k[MT_OP_neg] = k_neg_ok;
  kn[MT_OP_neg] = k_neg_other;
  mt_profile_kernels prof[1] = {{"numpy_ma", MT_OP_neg + 1, kn}};
  mt_impl impl = {MT_ABI_VERSION, sizeof(mt_impl), "two", NULL, NULL, MT_OP_neg + 1, k, 1, prof, 0, NULL};
  mt_call c = {.op = MT_OP_neg};
  mt_error e = {0};
  CHECK_STATUS(mt_dispatch_profile(&impl, NULL, &c, &e), MT_OK);
  CHECK_STATUS(mt_dispatch_profile(&impl, "torch", &c, &e), MT_OK);
  CHECK_STATUS(mt_dispatch_profile(&impl, "numpy_ma", &c, &e), MT_INDEX_OUT_OF_RANGE);
  CHECK_HAS(e.msg, "the numpy_ma kernel ran");
  CHECK_STATUS(mt_dispatch_profile(&impl, "other", &c, &e), MT_NOT_SUPPORTED);
  CHECK_HAS(e.msg, "two: profile other is not implemented");
  kn[MT_OP_neg] = NULL;
  CHECK_STATUS(mt_dispatch_profile(&impl, "numpy_ma", &c, &e), MT_NOT_SUPPORTED);
  CHECK_HAS(e.msg, "two: no kernel for op neg in profile numpy_ma");
  kn[MT_OP_neg] = k_neg_other;
  impl.struct_size = (uint32_t)offsetof(mt_impl, n_profiles); /* built before profiles */
  CHECK_STATUS(mt_dispatch_profile(&impl, "numpy_ma", &c, &e), MT_NOT_SUPPORTED);
  CHECK_STATUS(mt_dispatch_profile(&impl, "torch", &c, &e), MT_OK);
}

TEST(dispatch_reads_only_what_an_old_table_has) {
  mt_kernel_fn k[MT_OP_neg + 1] = {0};
  k[MT_OP_neg] = k_neg_ok;
  mt_impl old = {MT_ABI_VERSION, sizeof(mt_impl), "old", NULL, NULL, MT_OP_neg + 1, k, 0, NULL, 0, NULL};
  mt_call c = {.op = MT_OP_neg};
  mt_error e = {0};
  CHECK_STATUS(mt_dispatch(&old, &c, &e), MT_OK);
  c.op = MT_OP_adagrad_masked; /* beyond n_kernels: a newer op */
  CHECK_STATUS(mt_dispatch(&old, &c, &e), MT_NOT_SUPPORTED);
  CHECK_HAS(e.msg, "old: no kernel for op adagrad_masked");
  old.struct_size = (uint32_t)offsetof(mt_impl, n_kernels); /* table ends before kernels */
  c.op = MT_OP_neg;
  CHECK_STATUS(mt_dispatch(&old, &c, &e), MT_NOT_SUPPORTED);
  old.struct_size = sizeof(mt_impl);
  old.abi_version = MT_ABI_VERSION + 1;
  CHECK_STATUS(mt_dispatch(&old, &c, &e), MT_INVALID_ARGUMENT);
  CHECK_HAS(e.msg, "built for ABI 2");
  old.abi_version = MT_ABI_VERSION;
  k[MT_OP_neg] = k_silent_fail; /* a kernel that forgets to fill err */
  CHECK_STATUS(mt_dispatch(&old, &c, &e), MT_DTYPE_MISMATCH);
  CHECK_EQ_INT(e.status, MT_DTYPE_MISMATCH);
  CHECK_HAS(e.msg, "dtypes do not match");
}

TEST(cuda_backend_is_absent_or_explains_why_it_cannot_run) {
  const mt_impl *cu = mt_backend_cuda();
  if (!cu) return; /* built without nvcc: nothing to check here */
  char why[256] = "";
  if (cu->unavailable && cu->unavailable(why, sizeof why)) CHECK(strlen(why) > 0);
  CHECK(strcmp(cu->name, "cuda") == 0);
}

MT_TEST_MAIN(T(coo_index_out_of_range_names_index_value_dim_and_size),
             T(coo_flagged_coalesced_must_be_sorted_and_unique), T(coo_dims_must_add_up),
             T(coalesce_sorts_sums_duplicates_and_keeps_hybrid_rows),
             T(csr_invariants_each_give_a_message_naming_the_field),
             T(masked_members_must_agree_in_layout_shape_and_mask_dtype),
             T(zero_size_and_0d_tensors_are_valid_negative_and_huge_are_not),
             T(hand_built_views_are_never_freed),
             T(clone_of_a_strided_int64_view_is_exact_and_contiguous), T(float16_round_trips_and_rounds_to_nearest_even),
             T(bfloat16_rounds_to_nearest_even),
             T(names_round_trip_through_the_tables), T(dispatch_reads_only_what_an_old_table_has),
             T(dispatch_picks_the_profile_table),
             T(cuda_backend_is_absent_or_explains_why_it_cannot_run))

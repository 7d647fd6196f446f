/* test_compare.c - tolerances and output comparison (conformance/compare.c).
 * Every expected value is derived by hand in the comment beside it. */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "compare.h"
#include "mt_core.h"
#include "mt_test.h"

#define HAS(s, sub) (strstr((s), (sub)) != NULL)
static mt_tolerance tol(const char *s) {
  mt_tolerance t;
  mt_error err = {0};
  if (mt_tolerance_parse(s, &t, &err) != MT_OK) fprintf(stderr, "bad tolerance %s\n", s);
  return t;
}

static mt_tensor *dense_f32(int ndim, const int64_t *shape, const float *v) {
  mt_tensor *t = NULL;
  mt_error err = {0};
  if (mt_dense_new(MT_float32, ndim, shape, &t, &err) != MT_OK) return NULL;
  memcpy(t->values, v, (size_t)mt_numel(t) * sizeof *v);
  return t;
}

static mt_tensor *dense_bool(int ndim, const int64_t *shape, const uint8_t *v) {
  mt_tensor *t = NULL;
  mt_error err = {0};
  if (mt_dense_new(MT_bool, ndim, shape, &t, &err) != MT_OK) return NULL;
  memcpy(t->values, v, (size_t)mt_numel(t));
  return t;
}

static mt_tensor *masked_f32(int ndim, const int64_t *shape, const float *data, const uint8_t *mask) {
  mt_tensor *t = NULL;
  mt_error err = {0};
  if (mt_masked_new(dense_f32(ndim, shape, data), dense_bool(ndim, shape, mask), &t, &err) != MT_OK)
    return NULL;
  return t;
}

/* COO float32 [rows, cols] with nnz entries (row, col, value). */
static mt_tensor *coo_f32(int64_t rows, int64_t cols, int64_t nnz, const int64_t *r,
                          const int64_t *c, const float *v, int coalesced) {
  mt_tensor *t = NULL;
  mt_error err = {0};
  int64_t shape[2] = {rows, cols};
  if (mt_coo_new(MT_float32, 2, shape, 2, nnz, &t, &err) != MT_OK) return NULL;
  memcpy(t->indices, r, (size_t)nnz * sizeof *r);
  memcpy(t->indices + nnz, c, (size_t)nnz * sizeof *c);
  memcpy(t->values, v, (size_t)nnz * sizeof *v);
  t->coalesced = coalesced;
  return t;
}

static int cmp(const mt_tensor *e, const mt_tensor *g, const char *tols, int cmo, char *why,
               size_t len) {
  mt_compare_opts o = {tol(tols), cmo, 0, NULL};
  mt_error err = {0};
  int eq = -1;
  if (mt_compare_tensor(e, g, &o, &eq, why, len, &err) != MT_OK) {
    snprintf(why, len, "comparison error: %.400s", err.msg);
    return -1;
  }
  return eq;
}

/* ---- tolerances ------------------------------------------------------------ */

TEST(tolerance_parse_accepts_the_four_forms) {
  mt_tolerance t;
  mt_error err = {0};
  CHECK_STATUS(mt_tolerance_parse("exact", &t, &err), MT_OK);
  CHECK_EQ_INT(t.kind, MT_TOL_EXACT);
  CHECK_STATUS(mt_tolerance_parse("ulp:4", &t, &err), MT_OK);
  CHECK_EQ_INT(t.kind, MT_TOL_ULP);
  CHECK(t.x == 4.0);
  CHECK_STATUS(mt_tolerance_parse("abs:1e-5", &t, &err), MT_OK);
  CHECK_EQ_INT(t.kind, MT_TOL_ABS);
  CHECK(t.x == 1e-5);
  CHECK_STATUS(mt_tolerance_parse("rel:0.01", &t, &err), MT_OK);
  CHECK_EQ_INT(t.kind, MT_TOL_REL);
  CHECK(t.x == 0.01);
  CHECK(strcmp(t.text, "rel:0.01") == 0);
}

TEST(tolerance_parse_rejects_malformed_strings_naming_them) {
  static const char *bad[] = {"ulp", "ulp:", "ulp:-1", "abs:x", "fuzzy:1", "exact:1",
                              "ulp:nan", "rel:inf", "", "abs:1e-5x"};
  for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
    mt_tolerance t;
    mt_error err = {0};
    CHECK_STATUS(mt_tolerance_parse(bad[k], &t, &err), MT_INVALID_FORMAT);
    CHECK_HAS(err.msg, bad[k]);
  }
  mt_tolerance t;
  mt_error err = {0};
  mt_tolerance_parse("fuzzy:1", &t, &err);
  CHECK_HAS(err.msg, "unknown tolerance 'fuzzy:1'");
}

TEST(ulp_is_computed_in_the_output_dtype) {
  CHECK(mt_ulp(1.0, MT_float32) == ldexp(1.0, -23)); /* 24-bit significand */
  CHECK(mt_ulp(1.0, MT_float64) == ldexp(1.0, -52)); /* 53-bit significand */
  CHECK(mt_ulp(1.0, MT_float16) == ldexp(1.0, -10)); /* 11-bit significand */
  CHECK(mt_ulp(-1.0, MT_float32) == ldexp(1.0, -23)); /* sign does not matter */
  CHECK(mt_ulp(0.0, MT_float32) == ldexp(1.0, -149)); /* smallest subnormal float */
  CHECK(mt_ulp(0.0, MT_float16) == ldexp(1.0, -24));  /* smallest subnormal half */
  /* FLT_MAX = (2 - 2^-23) 2^127: the spacing below it is 2^(127-23) */
  CHECK(mt_ulp(FLT_MAX, MT_float32) == ldexp(1.0, 104));
  CHECK(mt_ulp(65504.0, MT_float16) == 32.0); /* largest half: 2^15 * 2^-10 */
  CHECK(mt_ulp(1.0, MT_bfloat16) == ldexp(1.0, -7));   /* 8-bit significand */
  CHECK(mt_ulp(-3.0, MT_bfloat16) == ldexp(1.0, -6));  /* 3 = 1.5 * 2^1 */
  CHECK(mt_ulp(0.0, MT_bfloat16) == ldexp(1.0, -133)); /* smallest subnormal: 2^-126 * 2^-7 */
  /* the largest bfloat16 (2 - 2^-7) 2^127: the spacing below it, 2^(127-7) */
  CHECK(mt_ulp(0x1.fep127, MT_bfloat16) == ldexp(1.0, 120));
  CHECK(mt_ulp(3.0, MT_int64) == 1.0);
}

TEST(elem_match_nan_equals_nan_and_infinities_match_only_themselves) {
  mt_tolerance ex = tol("exact"), big = tol("abs:1e300");
  CHECK(mt_elem_match(NAN, NAN, &ex, MT_float32));
  CHECK(mt_elem_match(NAN, -NAN, &ex, MT_float64)); /* any NaN */
  CHECK(!mt_elem_match(NAN, 1.0, &big, MT_float32));
  CHECK(!mt_elem_match(1.0, NAN, &big, MT_float32));
  CHECK(mt_elem_match(INFINITY, INFINITY, &ex, MT_float32));
  CHECK(mt_elem_match(-INFINITY, -INFINITY, &ex, MT_float32));
  CHECK(!mt_elem_match(INFINITY, -INFINITY, &big, MT_float32));
  CHECK(!mt_elem_match(INFINITY, FLT_MAX, &big, MT_float32)); /* inf is not "close" */
  CHECK(!mt_elem_match(FLT_MAX, INFINITY, &big, MT_float32));
}

TEST(elem_match_sign_of_zero_counts_under_exact_and_ulp_only) {
  mt_tolerance ex = tol("exact"), u4 = tol("ulp:4"), a = tol("abs:1e-5"), r = tol("rel:0.1");
  CHECK(!mt_elem_match(-0.0, 0.0, &ex, MT_float32)); /* sqrt(-0.0) is -0.0, not +0 */
  CHECK(!mt_elem_match(0.0, -0.0, &ex, MT_float64));
  CHECK(!mt_elem_match(-0.0, 0.0, &u4, MT_float16));
  CHECK(mt_elem_match(-0.0, -0.0, &ex, MT_float32));
  CHECK(mt_elem_match(0.0, 0.0, &u4, MT_float64));
  CHECK(mt_elem_match(-0.0, 0.0, &a, MT_float32)); /* abs/rel: a zero is a zero */
  CHECK(mt_elem_match(0.0, -0.0, &r, MT_float64));
  /* ulp:N still accepts a tiny value of either sign near a zero: |x| <= N * ulp(0) */
  CHECK(mt_elem_match(0.0, -ldexp(1.0, -149), &u4, MT_float32));
}

TEST(elem_match_integers_and_bools_are_exact_whatever_the_tolerance) {
  mt_tolerance u2 = tol("ulp:2"), a = tol("abs:10"), r = tol("rel:0.5");
  CHECK(!mt_elem_match(5, 6, &u2, MT_int64)); /* ulp of an integer would be 1 */
  CHECK(!mt_elem_match(5, 7, &a, MT_int32));
  CHECK(!mt_elem_match(100, 120, &r, MT_int8));
  CHECK(!mt_elem_match(0, 1, &a, MT_bool));
  CHECK(mt_elem_match(-3, -3, &a, MT_int64));
}

TEST(elem_match_ulp_abs_rel_bounds) {
  mt_tolerance u1 = tol("ulp:1"), u2 = tol("ulp:2"), a = tol("abs:0.5"), r = tol("rel:0.1");
  double one_up = 1.0 + ldexp(1.0, -23), two_up = 1.0 + ldexp(1.0, -22);
  CHECK(mt_elem_match(1.0, one_up, &u1, MT_float32));  /* 1 ulp */
  CHECK(!mt_elem_match(1.0, two_up, &u1, MT_float32)); /* 2 ulp > 1 */
  CHECK(mt_elem_match(1.0, two_up, &u2, MT_float32));
  CHECK(mt_elem_match(1.0, 1.0 - ldexp(1.0, -24), &u1, MT_float32)); /* the float below 1 */
  CHECK(!mt_elem_match(1.0, one_up, &u1, MT_float64)); /* 2^-23 is 2^29 float64 ulps */
  CHECK(mt_elem_match(1.0, 1.5, &a, MT_float64));
  CHECK(!mt_elem_match(1.0, 1.6, &a, MT_float64));
  CHECK(mt_elem_match(10.0, 11.0, &r, MT_float64));  /* |1| <= 0.1 * 10 */
  CHECK(!mt_elem_match(10.0, 11.5, &r, MT_float64)); /* 1.5 > 1 */
  CHECK(!mt_elem_match(0.0, 1e-30, &r, MT_float64)); /* rel of 0 is 0 */
  CHECK(!mt_elem_match(1.0, 1.0 + 1e-7, &(mt_tolerance){MT_TOL_EXACT, 0, "exact"}, MT_float64));
}

/* ---- dense ----------------------------------------------------------------- */

TEST(dense_mismatch_names_first_index_values_tolerance_and_count) {
  int64_t s[2] = {2, 3};
  float e[6] = {0, 1, 2, 3, 4, 5}, g[6] = {0, 1, 2, 3, 4, 5.5f};
  mt_tensor *te = dense_f32(2, s, e), *tg = dense_f32(2, s, g);
  char why[512];
  CHECK_EQ_INT(cmp(te, te, "exact", 0, why, sizeof why), 1);
  CHECK_EQ_INT(cmp(te, tg, "exact", 0, why, sizeof why), 0);
  CHECK_HAS(why, "values[1, 2]"); /* linear 5 of [2, 3] */
  CHECK_HAS(why, "expected 5, got 5.5");
  CHECK_HAS(why, "tolerance exact");
  CHECK_HAS(why, "1 of 6");
  CHECK_EQ_INT(cmp(te, tg, "abs:0.5", 0, why, sizeof why), 1);
  CHECK_EQ_INT(cmp(te, tg, "abs:0.4", 0, why, sizeof why), 0);
  CHECK_HAS(why, "tolerance abs:0.4");
  CHECK_EQ_INT(cmp(te, tg, "rel:0.1", 0, why, sizeof why), 1); /* 0.5 <= 0.1 * 5 */
  mt_tensor_free(te);
  mt_tensor_free(tg);
}

/* int64 values beyond 2^53 share a double with their neighbours: 2^53 + 1
 * rounds to 2^53, INT64_MIN + 1 to INT64_MIN (masked amax's fill of a fully
 * masked int64 row). Compared through doubles, a result off by one there
 * would pass; they are compared as int64, under any tolerance. */
TEST(int64_beyond_2_pow_53_is_compared_exactly) {
  int64_t s[1] = {3};
  const int64_t e[3] = {(INT64_C(1) << 53), INT64_MIN, INT64_C(9200000000000000003)};
  const int64_t g[3][3] = {{(INT64_C(1) << 53) + 1, INT64_MIN, INT64_C(9200000000000000003)},
                           {(INT64_C(1) << 53), INT64_MIN + 1, INT64_C(9200000000000000003)},
                           {(INT64_C(1) << 53), INT64_MIN, INT64_C(9200000000000000002)}};
  const char *want[3] = {"values[0]: expected 9007199254740992, got 9007199254740993",
                         "values[1]: expected -9223372036854775808, got -9223372036854775807",
                         "values[2]: expected 9200000000000000003, got 9200000000000000002"};
  mt_tensor *te = NULL, *tg = NULL;
  mt_error err = {0};
  char why[512];
  CHECK_STATUS(mt_dense_new(MT_int64, 1, s, &te, &err), MT_OK);
  CHECK_STATUS(mt_dense_new(MT_int64, 1, s, &tg, &err), MT_OK);
  memcpy(te->values, e, sizeof e);
  memcpy(tg->values, e, sizeof e);
  CHECK_EQ_INT(cmp(te, tg, "exact", 0, why, sizeof why), 1);
  for (int k = 0; k < 3; k++) {
    memcpy(tg->values, g[k], sizeof g[k]);
    CHECK((double)g[k][k] == (double)e[k]); /* the same double: only int64 tells them apart */
    CHECK_EQ_INT(cmp(te, tg, "rel:0.5", 0, why, sizeof why), 0);
    CHECK_HAS(why, want[k]);
    CHECK_HAS(why, "1 of 3");
  }
  mt_tensor_free(te);
  mt_tensor_free(tg);
}

TEST(dense_kind_dtype_and_shape_must_match_exactly) {
  int64_t s23[2] = {2, 3}, s32[2] = {3, 2};
  float v[6] = {0};
  mt_tensor *a = dense_f32(2, s23, v), *b = dense_f32(2, s32, v), *d = NULL;
  mt_error err = {0};
  char why[512];
  CHECK_EQ_INT(cmp(a, b, "exact", 0, why, sizeof why), 0);
  CHECK_HAS(why, "shape [3, 2], expected [2, 3]");
  CHECK_STATUS(mt_dense_new(MT_float64, 2, s23, &d, &err), MT_OK);
  CHECK_EQ_INT(cmp(a, d, "abs:1", 0, why, sizeof why), 0);
  CHECK_HAS(why, "dtype float64, expected float32");
  int64_t r[1] = {0}, c[1] = {0};
  float one[1] = {0};
  mt_tensor *coo = coo_f32(2, 3, 1, r, c, one, 1);
  CHECK_EQ_INT(cmp(a, coo, "exact", 0, why, sizeof why), 0);
  CHECK_HAS(why, "kind coo, expected dense");
  mt_tensor_free(a);
  mt_tensor_free(b);
  mt_tensor_free(d);
  mt_tensor_free(coo);
}

TEST(dense_nan_in_both_matches_nan_against_number_does_not) {
  int64_t s[1] = {3};
  float e[3] = {NAN, INFINITY, 1}, g[3] = {NAN, INFINITY, 1}, h[3] = {NAN, -INFINITY, 1};
  mt_tensor *te = dense_f32(1, s, e), *tg = dense_f32(1, s, g), *th = dense_f32(1, s, h);
  char why[512];
  CHECK_EQ_INT(cmp(te, tg, "exact", 0, why, sizeof why), 1);
  CHECK_EQ_INT(cmp(te, th, "abs:1e30", 0, why, sizeof why), 0);
  CHECK_HAS(why, "values[1]: expected inf, got -inf");
  mt_tensor_free(te);
  mt_tensor_free(tg);
  mt_tensor_free(th);
}

TEST(dense_strided_result_is_read_through_its_strides) {
  /* expected [[0, 1, 2], [3, 4, 5]]; the result stores it column-major:
   * buffer {0, 3, 1, 4, 2, 5} with strides {1, 2}. */
  int64_t s[2] = {2, 3};
  float e[6] = {0, 1, 2, 3, 4, 5}, colmajor[6] = {0, 3, 1, 4, 2, 5};
  mt_tensor *te = dense_f32(2, s, e), *tg = dense_f32(2, s, colmajor);
  tg->strides[0] = 1;
  tg->strides[1] = 2;
  char why[512];
  CHECK_EQ_INT(cmp(te, tg, "exact", 0, why, sizeof why), 1);
  ((float *)tg->values)[4] = 9; /* element [0, 2] */
  CHECK_EQ_INT(cmp(te, tg, "exact", 0, why, sizeof why), 0);
  CHECK_HAS(why, "values[0, 2]: expected 2, got 9");
  mt_tensor_free(te);
  mt_tensor_free(tg);
}

TEST(float16_compares_in_half_precision) {
  int64_t s[1] = {2};
  mt_tensor *te = NULL, *tg = NULL;
  mt_error err = {0};
  CHECK_STATUS(mt_dense_new(MT_float16, 1, s, &te, &err), MT_OK);
  CHECK_STATUS(mt_dense_new(MT_float16, 1, s, &tg, &err), MT_OK);
  uint16_t *e = te->values, *g = tg->values;
  e[0] = 0x3c00; /* 1.0 */
  e[1] = 0xc000; /* -2.0 */
  g[0] = 0x3c01; /* 1 + 2^-10: one half ulp above 1 */
  g[1] = 0xc000;
  char why[512];
  CHECK_EQ_INT(cmp(te, tg, "ulp:1", 0, why, sizeof why), 1);
  CHECK_EQ_INT(cmp(te, tg, "exact", 0, why, sizeof why), 0);
  CHECK_HAS(why, "values[0]: expected 1, got 1.00097656"); /* 1 + 1/1024, %.9g */
  mt_tensor_free(te);
  mt_tensor_free(tg);
}

/* ---- masked ------------------------------------------------------------------ */

TEST(masked_compares_values_only_where_the_mask_is_true) {
  int64_t s[1] = {3};
  float e[3] = {1, NAN, 3}, g[3] = {1, 7, 3};
  uint8_t m[3] = {1, 0, 1};
  mt_tensor *te = masked_f32(1, s, e, m), *tg = masked_f32(1, s, g, m);
  char why[512];
  CHECK_EQ_INT(cmp(te, tg, "exact", 0, why, sizeof why), 1); /* [1] is masked out */
  CHECK_EQ_INT(cmp(te, tg, "exact", 1, why, sizeof why), 0); /* check_masked_out */
  CHECK_HAS(why, "data[1]: expected nan, got 7");
  ((float *)tg->data->values)[1] = NAN;
  CHECK_EQ_INT(cmp(te, tg, "exact", 1, why, sizeof why), 1); /* NaN == NaN */
  ((float *)tg->data->values)[2] = 4;
  CHECK_EQ_INT(cmp(te, tg, "exact", 0, why, sizeof why), 0); /* [2] is masked in */
  CHECK_HAS(why, "data[2]: expected 3, got 4");
  CHECK_HAS(why, "1 of 2 compared"); /* two mask-true positions */
  mt_tensor_free(te);
  mt_tensor_free(tg);
}

TEST(masked_masks_must_match_exactly) {
  int64_t s[2] = {1, 3};
  float v[3] = {1, 2, 3};
  uint8_t m[3] = {1, 0, 1}, m2[3] = {1, 1, 1};
  mt_tensor *te = masked_f32(2, s, v, m), *tg = masked_f32(2, s, v, m2);
  char why[512];
  CHECK_EQ_INT(cmp(te, tg, "abs:100", 0, why, sizeof why), 0);
  CHECK_HAS(why, "mask[0, 1]: expected false, got true");
  mt_tensor_free(te);
  mt_tensor_free(tg);
}

TEST(masked_storage_kind_must_match) {
  /* expected: masked with COO storage; result: the same values densely */
  int64_t r[1] = {0}, c[1] = {1}, s[2] = {1, 2};
  float v[1] = {5};
  uint8_t one[1] = {1};
  mt_tensor *data = coo_f32(1, 2, 1, r, c, v, 1);
  mt_tensor *mask = NULL, *te = NULL;
  mt_error err = {0};
  int64_t shape[2] = {1, 2};
  CHECK_STATUS(mt_coo_new(MT_bool, 2, shape, 2, 1, &mask, &err), MT_OK);
  mask->indices[0] = 0;
  mask->indices[1] = 1;
  ((uint8_t *)mask->values)[0] = one[0];
  mask->coalesced = 1;
  CHECK_STATUS(mt_masked_new(data, mask, &te, &err), MT_OK);
  float dv[2] = {0, 5};
  uint8_t dm[2] = {0, 1};
  mt_tensor *tg = masked_f32(2, s, dv, dm);
  char why[512];
  CHECK_EQ_INT(cmp(te, tg, "exact", 0, why, sizeof why), 0);
  CHECK_HAS(why, "masked storage is dense, expected coo");
  CHECK_EQ_INT(cmp(te, te, "exact", 0, why, sizeof why), 1); /* densified data and mask */
  mt_tensor_free(te);
  mt_tensor_free(tg);
}

/* ---- COO ------------------------------------------------------------------ */

TEST(coo_is_compared_after_coalescing) {
  /* expected {(0,2): 3, (1,0): 4}, coalesced; the result lists (1,0) first
   * and (0,2) twice as 1 + 2: coalesced it is the same tensor. */
  int64_t er[2] = {0, 1}, ec[2] = {2, 0}, gr[3] = {1, 0, 0}, gc[3] = {0, 2, 2};
  float ev[2] = {3, 4}, gv[3] = {4, 1, 2};
  mt_tensor *te = coo_f32(2, 3, 2, er, ec, ev, 1), *tg = coo_f32(2, 3, 3, gr, gc, gv, 0);
  char why[512];
  CHECK_EQ_INT(cmp(te, tg, "exact", 0, why, sizeof why), 1);
  ((float *)tg->values)[0] = 5; /* (1,0) = 5 */
  CHECK_EQ_INT(cmp(te, tg, "exact", 0, why, sizeof why), 0);
  CHECK_HAS(why, "values[1, 0]: expected 4, got 5");
  mt_tensor_free(tg);
  /* a different index: (0,1) instead of (0,2) */
  int64_t hc[2] = {1, 0};
  tg = coo_f32(2, 3, 2, er, hc, ev, 1);
  CHECK_EQ_INT(cmp(te, tg, "exact", 0, why, sizeof why), 0);
  CHECK_HAS(why, "indices of coalesced entry 0: expected [0, 2], got [0, 1]");
  mt_tensor_free(tg);
  /* a missing entry */
  tg = coo_f32(2, 3, 1, er, ec, ev, 1);
  CHECK_EQ_INT(cmp(te, tg, "exact", 0, why, sizeof why), 0);
  CHECK_HAS(why, "nnz after coalescing 1, expected 2");
  mt_tensor_free(tg);
  mt_tensor_free(te);
}

TEST(structure_compares_coo_as_stored) {
  /* the same tensor twice: expected uncoalesced {(0,2): 1, (0,2): 2} as
   * torch stores it (an index twice), got coalesced {(0,2): 3} */
  int64_t er[2] = {0, 0}, ec[2] = {2, 2}, gr[1] = {0}, gc[1] = {2};
  float ev[2] = {1, 2}, gv[1] = {3};
  mt_tensor *te = coo_f32(2, 3, 2, er, ec, ev, 0), *tg = coo_f32(2, 3, 1, gr, gc, gv, 1);
  mt_compare_opts o = {tol("exact"), 0, 0, NULL};
  mt_error err = {0};
  char why[512];
  int eq = -1;
  CHECK_STATUS(mt_compare_tensor(te, tg, &o, &eq, why, sizeof why, &err), MT_OK);
  CHECK_EQ_INT(eq, 1); /* without check_structure: equal once coalesced */
  o.check_structure = 1;
  CHECK_STATUS(mt_compare_tensor(te, tg, &o, &eq, why, sizeof why, &err), MT_OK);
  CHECK_EQ_INT(eq, 0);
  CHECK_HAS(why, "is_coalesced() True, expected False");
  tg->coalesced = 0; /* flagged right, but the duplicates are gone */
  CHECK_STATUS(mt_compare_tensor(te, tg, &o, &eq, why, sizeof why, &err), MT_OK);
  CHECK_EQ_INT(eq, 0);
  CHECK_HAS(why, "stores 1 entries, expected 2");
  mt_tensor_free(tg);
  tg = coo_f32(2, 3, 2, er, ec, ev, 0); /* as torch stores it */
  CHECK_STATUS(mt_compare_tensor(te, tg, &o, &eq, why, sizeof why, &err), MT_OK);
  CHECK_EQ_INT(eq, 1);
  mt_tensor_free(tg);
  float sv[2] = {2, 1}; /* the two duplicates swapped: the same sum, another storage */
  tg = coo_f32(2, 3, 2, er, ec, sv, 0);
  CHECK_STATUS(mt_compare_tensor(te, tg, &o, &eq, why, sizeof why, &err), MT_OK);
  CHECK_EQ_INT(eq, 0);
  CHECK_HAS(why, "values[0, 2]: expected 1, got 2");
  mt_tensor_free(tg);
  mt_tensor_free(te);
  /* stored order of distinct entries: (1,0) before (0,2) is unsorted */
  int64_t ur[2] = {1, 0}, uc[2] = {0, 2}, sr[2] = {0, 1}, sc[2] = {2, 0};
  te = coo_f32(2, 3, 2, ur, uc, ev, 0);
  tg = coo_f32(2, 3, 2, sr, sc, (float[]){2, 1}, 0);
  CHECK_STATUS(mt_compare_tensor(te, tg, &o, &eq, why, sizeof why, &err), MT_OK);
  CHECK_EQ_INT(eq, 0);
  CHECK_HAS(why, "indices (stored order)[0]: expected 1, got 0");
  o.check_structure = 0;
  CHECK_STATUS(mt_compare_tensor(te, tg, &o, &eq, why, sizeof why, &err), MT_OK);
  CHECK_EQ_INT(eq, 1);
  mt_tensor_free(tg);
  mt_tensor_free(te);
}

/* BSR [2 batches, 4, 4] with blocksize (2, 2), one block per batch: batch 0
 * holds block (1, 0), batch 1 block (0, 1); values 1..8 in storage order. */
static mt_tensor *bsr_2x4x4(void) {
  mt_tensor *t = NULL;
  int64_t shape[3] = {2, 4, 4}, bs[2] = {2, 2};
  if (mt_compressed_new(MT_KIND_BSR, MT_float32, 3, shape, 0, bs, 1, &t, NULL) != MT_OK)
    return NULL;
  int64_t crow[6] = {0, 0, 1, /* batch 1 */ 0, 1, 1}, col[2] = {0, 1};
  memcpy(t->crow_indices, crow, sizeof crow);
  memcpy(t->col_indices, col, sizeof col);
  for (int i = 0; i < 8; i++) ((float *)t->values)[i] = (float)(i + 1);
  return t;
}

TEST(compressed_structure_exact_values_by_position) {
  mt_tensor *te = bsr_2x4x4(), *tg = bsr_2x4x4();
  char why[512];
  CHECK(te && tg);
  CHECK_EQ_INT(cmp(te, tg, "exact", 0, why, sizeof why), 1);
  /* value 7 is batch 1, entry 0, cell (1, 0) of block (0, 1): element
   * [1, 0*2 + 1, 1*2 + 0] = [1, 1, 2] */
  ((float *)tg->values)[6] = 70;
  CHECK_EQ_INT(cmp(te, tg, "exact", 0, why, sizeof why), 0);
  CHECK_HAS(why, "values[1, 1, 2]: expected 7, got 70");
  ((float *)tg->values)[6] = 7;
  tg->col_indices[1] = 0; /* batch 1's block moves to block column 0 */
  CHECK_EQ_INT(cmp(te, tg, "exact", 0, why, sizeof why), 0);
  CHECK_HAS(why, "col_indices[1]: expected 1, got 0");
  tg->col_indices[1] = 1;
  tg->blocksize[1] = 4; /* (2, 4) blocks: 1 block column, batch 1's block 1 is out */
  CHECK_EQ_INT(cmp(te, tg, "exact", 0, why, sizeof why), 0);
  CHECK_HAS(why, "is not a valid tensor: result: batch 1: BSR col_indices[0] = 1 is out of range");
  mt_tensor_free(tg);
  /* densified: batch 0 rows 2-3 cols 0-1 hold 1 2 / 3 4 */
  mt_tensor *d = NULL;
  CHECK_STATUS(mt_to_dense(te, &d, NULL), MT_OK);
  const float *dv = d->values;
  CHECK_EQ_INT((int)dv[2 * 4 + 0], 1);
  CHECK_EQ_INT((int)dv[3 * 4 + 1], 4);
  CHECK_EQ_INT((int)dv[16 + 1 * 4 + 2], 7); /* [1, 1, 2] as above */
  CHECK_EQ_INT((int)dv[0], 0);
  mt_tensor_free(d);
  mt_tensor_free(te);
}

/* A hybrid CSR (a dense dim of 2 per stored entry) and a batched one: the
 * position in a message is the element's [batch..., row, col, dense...]. */
TEST(compressed_value_position_names_batch_and_dense_dims) {
  int64_t shape[4] = {2, 2, 3, 2}; /* 2 batches of 2 x 3, each element 2 values */
  const int64_t crow[6] = {0, 1, 2, /* batch 1 */ 0, 0, 2}, col[4] = {2, 0, /* b1 */ 1, 2};
  mt_tensor *te = NULL, *tg = NULL;
  char why[512];
  CHECK_STATUS(mt_compressed_new(MT_KIND_CSR, MT_float32, 4, shape, 1, NULL, 2, &te, NULL), MT_OK);
  CHECK_STATUS(mt_compressed_new(MT_KIND_CSR, MT_float32, 4, shape, 1, NULL, 2, &tg, NULL), MT_OK);
  for (mt_tensor *t = te; t; t = t == te ? tg : NULL) {
    memcpy(t->crow_indices, crow, sizeof crow);
    memcpy(t->col_indices, col, sizeof col);
    for (int i = 0; i < 8; i++) ((float *)t->values)[i] = (float)(i + 1);
  }
  CHECK_EQ_INT(cmp(te, tg, "exact", 0, why, sizeof why), 1);
  ((float *)tg->values)[3] = 40; /* batch 0, entry 1 (row 1, col 0), dense 1 */
  CHECK_EQ_INT(cmp(te, tg, "exact", 0, why, sizeof why), 0);
  CHECK_HAS(why, "values[0, 1, 0, 1]: expected 4, got 40");
  ((float *)tg->values)[3] = 4;
  ((float *)tg->values)[6] = 70; /* batch 1, entry 1 (row 1, col 2), dense 0 */
  CHECK_EQ_INT(cmp(te, tg, "exact", 0, why, sizeof why), 0);
  CHECK_HAS(why, "values[1, 1, 2, 0]: expected 7, got 70");
  mt_tensor_free(te);
  mt_tensor_free(tg);
}

TEST(compressed_invariants_are_checked_per_batch) {
  mt_tensor *t = bsr_2x4x4();
  mt_error e = {0};
  CHECK(t);
  CHECK_STATUS(mt_tensor_validate(t, "x", &e), MT_OK);
  t->crow_indices[4] = 2; /* batch 1: crow [0, 2, 1] */
  CHECK_STATUS(mt_tensor_validate(t, "x", &e), MT_INVALID_ARGUMENT);
  CHECK_HAS(e.msg, "x: batch 1: BSR crow_indices[2] = 1 is less than crow_indices[1] = 2");
  t->crow_indices[4] = 1;
  t->col_indices[1] = 2; /* 4 columns / 2 = 2 block columns */
  CHECK_STATUS(mt_tensor_validate(t, "x", &e), MT_INDEX_OUT_OF_RANGE);
  CHECK_HAS(e.msg, "BSR col_indices[0] = 2 is out of range for 2 block columns");
  t->col_indices[1] = 1;
  t->kind = MT_KIND_BSC; /* the same arrays read as BSC: ccol/row_indices */
  CHECK_STATUS(mt_tensor_validate(t, "x", &e), MT_OK);
  t->blocksize[0] = 3; /* 3 does not divide 4 rows */
  CHECK_STATUS(mt_tensor_validate(t, "x", &e), MT_INVALID_ARGUMENT);
  CHECK_HAS(e.msg, "BSC blocksize (3, 2) does not divide the sparse dims (4, 4)");
  mt_tensor_free(t);
}

TEST(invalid_result_is_a_difference_not_a_crash) {
  int64_t r[1] = {0}, c[1] = {7}; /* column 7 of a 2x3 tensor */
  float v[1] = {1};
  mt_tensor *te = coo_f32(2, 3, 1, r, r, v, 1), *tg = coo_f32(2, 3, 1, r, c, v, 1);
  char why[512];
  CHECK_EQ_INT(cmp(te, tg, "exact", 0, why, sizeof why), 0);
  CHECK_HAS(why, "is not a valid tensor");
  CHECK_EQ_INT(cmp(te, NULL, "exact", 0, why, sizeof why), 0);
  CHECK_HAS(why, "is NULL");
  mt_tensor_free(te);
  mt_tensor_free(tg);
}

TEST(outputs_count_and_index_are_reported) {
  int64_t s[1] = {2};
  float a[2] = {1, 2}, b[2] = {1, 3};
  mt_tensor *x = dense_f32(1, s, a), *y = dense_f32(1, s, b);
  mt_tensor *exp2[2] = {x, x}, *got1[1] = {x}, *got2[2] = {x, y};
  mt_compare_opts o = {tol("exact"), 0, 0, NULL};
  mt_error err = {0};
  char why[512];
  int eq = -1;
  CHECK_STATUS(mt_compare_outputs(2, exp2, 1, got1, &o, &eq, why, sizeof why, &err), MT_OK);
  CHECK_EQ_INT(eq, 0);
  CHECK_HAS(why, "1 outputs, expected 2");
  CHECK_STATUS(mt_compare_outputs(2, exp2, 2, got2, &o, &eq, why, sizeof why, &err), MT_OK);
  CHECK_EQ_INT(eq, 0);
  CHECK_HAS(why, "output 1: values[1]: expected 2, got 3");
  mt_tensor_free(x);
  mt_tensor_free(y);
}

MT_TEST_MAIN(T(tolerance_parse_accepts_the_four_forms),
             T(tolerance_parse_rejects_malformed_strings_naming_them),
             T(ulp_is_computed_in_the_output_dtype),
             T(elem_match_nan_equals_nan_and_infinities_match_only_themselves),
             T(elem_match_ulp_abs_rel_bounds),
             T(elem_match_sign_of_zero_counts_under_exact_and_ulp_only),
             T(elem_match_integers_and_bools_are_exact_whatever_the_tolerance),
             T(dense_mismatch_names_first_index_values_tolerance_and_count),
             T(int64_beyond_2_pow_53_is_compared_exactly),
             T(dense_kind_dtype_and_shape_must_match_exactly),
             T(dense_nan_in_both_matches_nan_against_number_does_not),
             T(dense_strided_result_is_read_through_its_strides),
             T(float16_compares_in_half_precision),
             T(masked_compares_values_only_where_the_mask_is_true),
             T(masked_masks_must_match_exactly), T(masked_storage_kind_must_match),
             T(coo_is_compared_after_coalescing), T(structure_compares_coo_as_stored),
             T(compressed_structure_exact_values_by_position),
             T(compressed_value_position_names_batch_and_dense_dims),
             T(compressed_invariants_are_checked_per_batch),
             T(invalid_result_is_a_difference_not_a_crash),
             T(outputs_count_and_index_are_reported))

/* test_coalesce.c - COO coalescing (common/coalesce_math.h) as the CPU
 * reference (impl/convert.c's mt_coo_coalesce) and the CUDA backend's
 * emulation (impl/cuda/coalesce.cu through the cuda-emu exec: keys, radix
 * sort, run heads, runs) run it: hand-derived small cases (order, sums in
 * input order in double with one rounding, from the first value as torch's
 * do, signed zeros, bool or-ed, hybrid rows, empty),
 * and large random inputs with many duplicates held to an independent
 * O(nnz * uniq) reference, bit for bit, on both. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/exec.h"
#include "cpu_fixtures.h"
#include "mt_test.h"

extern const mt_exec mt_cuemu_exec; /* impl/cuda/table.c, built as the emulation */

typedef mt_status (*coal_fn)(const mt_tensor *coo, mt_tensor **out, mt_error *err);
static mt_status coal_cpu(const mt_tensor *coo, mt_tensor **out, mt_error *err) {
  return mt_coo_coalesce(coo, out, err);
}
static mt_status coal_emu(const mt_tensor *coo, mt_tensor **out, mt_error *err) {
  return mt_cuemu_exec.coalesce(coo, out, err);
}
static const struct {
  const char *name;
  coal_fn fn;
} IMPLS[] = {{"cpu", coal_cpu}, {"cuda-emu", coal_emu}};
#define N_IMPLS ((int)(sizeof IMPLS / sizeof IMPLS[0]))

/* 2 x 3 COO, entries in input order (1,2)=1 (0,1)=2 (1,2)=4 (0,1)=8 (0,0)=16.
 * Linear keys (row * 3 + col): 5, 1, 5, 1, 0. Coalesced, by key:
 *   key 0 (0,0) = 16; key 1 (0,1) = 2 + 8 = 10; key 5 (1,2) = 1 + 4 = 5. */
TEST(orders_by_linear_key_and_sums_duplicates) {
  for (int m = 0; m < N_IMPLS; m++) {
    mt_tensor *x = coo2(MT_float64, 2, 3, 5, (const int64_t[]){1, 0, 1, 0, 0},
                        (const int64_t[]){2, 1, 2, 1, 0}, VALS(1, 2, 4, 8, 16), 0);
    mt_tensor *o = NULL;
    mt_error e;
    CHECK_STATUS(IMPLS[m].fn(x, &o, &e), MT_OK);
    if (o) {
      const int64_t r[] = {0, 0, 1}, c[] = {0, 1, 2};
      const double v[] = {16, 10, 5};
      CHECK(o->coalesced == 1);
      CHECK_EQ_INT(o->nnz, 3);
      for (int k = 0; k < 3 && o->nnz == 3; k++) {
        CHECK_EQ_INT(o->indices[k], r[k]);
        CHECK_EQ_INT(o->indices[3 + k], c[k]);
        CHECK_NEAR(at(o, k), v[k], 0);
      }
    }
    if (o == NULL || o->nnz != 3) fprintf(stderr, "  (%s)\n", IMPLS[m].name);
    mt_tensor_free(o);
    mt_tensor_free(x);
  }
}

/* float32 duplicates 1, 2^-24, 2^-24 at one index: torch 2.15's coalesce
 * sums them in float32, entry by entry (an axpy of scalar_t): 1 + 2^-24 is
 * a tie that rounds to even, 1, twice: 1.0 (torch: [1.0]). A sum in double
 * rounded once would give 1 + 2^-23, which float32 holds. int64 duplicates
 * 2^62, 2^62, 5 wrap in int64: INT64_MIN + 5 = -9223372036854775803 (torch:
 * the same; a sum through double saturates or loses the 5). bool
 * duplicates true, false, true are or-ed: true. */
TEST(sums_in_the_dtype_rounding_each_addition_integers_wrap_bool_ors) {
  for (int m = 0; m < N_IMPLS; m++) {
    const double tiny = 1.0 / 16777216.0; /* 2^-24 */
    mt_tensor *x = coo2(MT_float32, 1, 2, 3, (const int64_t[]){0, 0, 0},
                        (const int64_t[]){1, 1, 1}, VALS(1, tiny, tiny), 0);
    mt_tensor *b = coo2(MT_bool, 1, 2, 3, (const int64_t[]){0, 0, 0},
                        (const int64_t[]){0, 0, 0}, VALS(1, 0, 1), 0);
    mt_tensor *i = coo2(MT_int64, 1, 2, 3, (const int64_t[]){0, 0, 0},
                        (const int64_t[]){1, 1, 1}, VALS(0x1p62, 0x1p62, 5), 0);
    mt_tensor *o = NULL, *ob = NULL, *oi = NULL;
    mt_error e;
    CHECK_STATUS(IMPLS[m].fn(x, &o, &e), MT_OK);
    CHECK_STATUS(IMPLS[m].fn(b, &ob, &e), MT_OK);
    CHECK_STATUS(IMPLS[m].fn(i, &oi, &e), MT_OK);
    if (o && o->nnz == 1) CHECK(((const float *)o->values)[0] == 1.0f);
    else CHECK(0);
    if (ob && ob->nnz == 1) CHECK_EQ_INT(((const uint8_t *)ob->values)[0], 1);
    else CHECK(0);
    if (oi && oi->nnz == 1) CHECK(((const int64_t *)oi->values)[0] == INT64_MIN + 5);
    else CHECK(0);
    mt_tensor_free(o);
    mt_tensor_free(ob);
    mt_tensor_free(oi);
    mt_tensor_free(x);
    mt_tensor_free(b);
    mt_tensor_free(i);
  }
}

/* Signed zeros: float32 1 x 4, entries (0,0)=-0.0 (0,1)=-0.0 (0,1)=-0.0
 * (0,2)=-0.0 (0,2)=+0.0 (0,3)=+0.0 (0,3)=-0.0. torch 2.15's coalesce sums
 * each run from its first value: (0,0) -0.0, (0,1) -0.0 + -0.0 = -0.0,
 * (0,2) -0.0 + 0.0 = +0.0, (0,3) 0.0 + -0.0 = +0.0 (a sum started from
 * +0.0 would make the first two +0.0). */
TEST(a_run_of_negative_zeros_stays_negative) {
  for (int m = 0; m < N_IMPLS; m++) {
    mt_tensor *x = coo2(MT_float32, 1, 4, 7, (const int64_t[]){0, 0, 0, 0, 0, 0, 0},
                        (const int64_t[]){0, 1, 1, 2, 2, 3, 3},
                        VALS(-0.0, -0.0, -0.0, -0.0, 0.0, 0.0, -0.0), 0);
    mt_tensor *o = NULL;
    mt_error e;
    CHECK_STATUS(IMPLS[m].fn(x, &o, &e), MT_OK);
    const int neg[] = {1, 1, 0, 0};
    if (o && o->nnz == 4)
      for (int k = 0; k < 4; k++) {
        float v = ((const float *)o->values)[k];
        CHECK(v == 0.0f);
        CHECK_EQ_INT(!!signbit(v), neg[k]);
      }
    else CHECK(0);
    if (o == NULL || o->nnz != 4) fprintf(stderr, "  (%s)\n", IMPLS[m].name);
    mt_tensor_free(o);
    mt_tensor_free(x);
  }
}

/* Hybrid: shape (3, 2), sparse_dim 1, entries (2)=[1, 2] (0)=[3, 4]
 * (2)=[5, 6]: rows summed elementwise, (0)=[3, 4] (2)=[6, 8]. And an empty
 * COO (nnz 0) coalesces to nnz 0, flagged coalesced. */
TEST(hybrid_rows_and_empty) {
  for (int m = 0; m < N_IMPLS; m++) {
    mt_tensor *x = NULL, *z = NULL, *o = NULL, *oz = NULL;
    mt_error e;
    if (mt_coo_new(MT_float64, 2, SHAPE(3, 2), 1, 3, &x, NULL) != MT_OK ||
        mt_coo_new(MT_float64, 2, SHAPE(3, 2), 1, 0, &z, NULL) != MT_OK)
      abort();
    const int64_t idx[] = {2, 0, 2};
    const double v[] = {1, 2, 3, 4, 5, 6};
    for (int k = 0; k < 3; k++) x->indices[k] = idx[k];
    for (int i = 0; i < 6; i++) mt_set_f64(x->values, MT_float64, i, v[i]);
    CHECK_STATUS(IMPLS[m].fn(x, &o, &e), MT_OK);
    CHECK_STATUS(IMPLS[m].fn(z, &oz, &e), MT_OK);
    if (o && o->nnz == 2) {
      const double w[] = {3, 4, 6, 8};
      CHECK_EQ_INT(o->indices[0], 0);
      CHECK_EQ_INT(o->indices[1], 2);
      for (int i = 0; i < 4; i++) CHECK_NEAR(at(o, i), w[i], 0);
    } else {
      CHECK(0);
    }
    CHECK(oz && oz->nnz == 0 && oz->coalesced == 1);
    mt_tensor_free(o);
    mt_tensor_free(oz);
    mt_tensor_free(x);
    mt_tensor_free(z);
  }
}

static uint64_t lcg(uint64_t *s) {
  *s = *s * 6364136223846793005ULL + 1442695040888963407ULL;
  return *s >> 11;
}

/* n entries over sparse dims 7 x 5 x 3 (105 keys, so ~n/105 duplicates
 * each) with a dense dim of 2, values in [-1, 1) of the dtype (or bits). */
static mt_tensor *random_coo(mt_dtype dt, int64_t n, uint64_t seed) {
  mt_tensor *t = NULL;
  if (mt_coo_new(dt, 4, SHAPE(7, 5, 3, 2), 3, n, &t, NULL) != MT_OK) abort();
  const int64_t dims[] = {7, 5, 3};
  for (int64_t k = 0; k < n; k++)
    for (int d = 0; d < 3; d++) t->indices[d * n + k] = (int64_t)(lcg(&seed) % (uint64_t)dims[d]);
  for (int64_t i = 0; i < 2 * n; i++) {
    double u = (double)(lcg(&seed) >> 11) / 4503599627370496.0 * 2 - 1; /* 2^52 */
    if (dt == MT_bool) ((uint8_t *)t->values)[i] = u > 0.5;
    else mt_set_f64(t->values, dt, i, u);
  }
  return t;
}

/* The independent reference: for each key 0..104 in order, if any entry
 * has it, one output entry whose row sums (or ors) the entries' rows in
 * input order from the first, each addition rounded to the dtype (a
 * store and load through mt_set_f64 / mt_get_f64). */
static mt_tensor *naive(const mt_tensor *x) {
  int64_t n = x->nnz, uniq = 0, keyof[105];
  for (int key = 0; key < 105; key++) {
    keyof[key] = -1;
    for (int64_t k = 0; k < n && keyof[key] < 0; k++)
      if ((x->indices[k] * 5 + x->indices[n + k]) * 3 + x->indices[2 * n + k] == key)
        keyof[key] = uniq++;
  }
  mt_tensor *t = NULL;
  if (mt_coo_new(x->dtype, 4, x->shape, 3, uniq, &t, NULL) != MT_OK) abort();
  for (int key = 0; key < 105; key++) {
    int64_t u = keyof[key];
    if (u < 0) continue;
    t->indices[u] = key / 15, t->indices[uniq + u] = key / 3 % 5, t->indices[2 * uniq + u] = key % 3;
    for (int j = 0; j < 2; j++) {
      double acc = 0.0;
      int first = 1;
      for (int64_t k = 0; k < n; k++)
        if ((x->indices[k] * 5 + x->indices[n + k]) * 3 + x->indices[2 * n + k] == key) {
          double v = mt_get_f64(x->values, x->dtype, k * 2 + j);
          acc = first ? v : x->dtype == MT_bool ? (double)(acc != 0 || v != 0) : acc + v;
          mt_set_f64(t->values, x->dtype, u * 2 + j, acc); /* rounded to the dtype */
          acc = mt_get_f64(t->values, x->dtype, u * 2 + j);
          first = 0;
        }
      mt_set_f64(t->values, x->dtype, u * 2 + j, acc);
    }
  }
  return t;
}

/* 20000 entries (about 190 per key) of float64, float32, float16 and bool:
 * both implementations give the reference's indices and value bytes. */
TEST(random_duplicates_match_the_reference_bit_for_bit) {
  const mt_dtype dts[] = {MT_float64, MT_float32, MT_float16, MT_bool};
  for (int d = 0; d < 4; d++) {
    mt_tensor *x = random_coo(dts[d], 20000, 12345 + (uint64_t)d), *ref = naive(x);
    for (int m = 0; m < N_IMPLS; m++) {
      mt_tensor *o = NULL;
      mt_error e;
      CHECK_STATUS(IMPLS[m].fn(x, &o, &e), MT_OK);
      int same = o && o->nnz == ref->nnz && o->coalesced &&
                 !memcmp(o->indices, ref->indices, (size_t)(3 * ref->nnz) * 8) &&
                 !memcmp(o->values, ref->values, (size_t)(2 * ref->nnz) * mt_dtype_size(x->dtype));
      if (!same) fprintf(stderr, "  %s, dtype %d: differs from the reference\n", IMPLS[m].name, d);
      CHECK(same);
      mt_tensor_free(o);
    }
    mt_tensor_free(ref);
    mt_tensor_free(x);
  }
}

MT_TEST_MAIN(T(orders_by_linear_key_and_sums_duplicates),
             T(sums_in_the_dtype_rounding_each_addition_integers_wrap_bool_ors), T(a_run_of_negative_zeros_stays_negative),
             T(hybrid_rows_and_empty),
             T(random_duplicates_match_the_reference_bit_for_bit))

/* test_poison.c - poison.c: which inputs the MASK-9 re-runs reach and what
 * they write there. Expected values are the poison table's, by hand. */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "cpu_fixtures.h"
#include "mt_core.h"
#include "mt_test.h"
#include "poison.h"

/* A masked [4] tensor of dtype dt: data 1, 2, 3, 4; mask 1, 0, 1, 0 (all 1
 * with all_true). */
static mt_tensor *masked4(mt_dtype dt, int all_true) {
  int b = all_true != 0;
  return masked(dense(dt, 1, SHAPE(4), VALS(1, 2, 3, 4)), bools(1, SHAPE(4), BITS(1, b, 1, b)));
}

TEST(only_masked_tensors_with_a_masked_out_element_are_poisoned) {
  mt_tensor *some = masked4(MT_float32, 0), *all = masked4(MT_float32, 1);
  CHECK(mt_poison_applies(some));
  CHECK(!mt_poison_applies(all));    /* nothing masked out: nothing to poison */
  CHECK(!mt_poison_applies(some->data)); /* a plain tensor has no masked-out data */
  CHECK(!mt_poison_applies(NULL));
  mt_tensor_free(some);
  mt_tensor_free(all);
}

TEST(every_poison_lands_on_masked_out_data_only) {
  mt_tensor *t = masked4(MT_float64, 0);
  for (int p = 0; p < MT_POISON__COUNT; p++) {
    mt_tensor *c = NULL;
    mt_error err = {0};
    CHECK_STATUS(mt_poison_copy(t, (mt_poison)p, 42, &c, &err), MT_OK);
    const double *v = c->data->values;
    CHECK(v[0] == 1.0 && v[2] == 3.0); /* masked in: untouched */
    CHECK(!memcmp(c->mask->values, t->mask->values, 4)); /* the mask is kept */
    switch ((mt_poison)p) {
      case MT_POISON_NAN: CHECK(isnan(v[1]) && isnan(v[3])); break;
      case MT_POISON_POS_INF: CHECK(v[1] == INFINITY && v[3] == INFINITY); break;
      case MT_POISON_NEG_INF: CHECK(v[1] == -INFINITY && v[3] == -INFINITY); break;
      case MT_POISON_POS_BIG: CHECK(v[1] == 1e30 && v[3] == 1e30); break;
      case MT_POISON_NEG_BIG: CHECK(v[1] == -1e30 && v[3] == -1e30); break;
      case MT_POISON_NEG_ZERO: CHECK(v[1] == 0 && signbit(v[1]) && signbit(v[3])); break;
      default: break;
    }
    mt_tensor_free(c);
  }
  mt_tensor_free(t);
}

TEST(random_pattern_follows_the_seed) {
  /* a bigger tensor, so that the 2 masked-out elements of masked4 do not
   * decide it: 64 elements, every odd one masked out */
  mt_error err = {0};
  int64_t shape[1] = {64};
  mt_tensor *d = NULL, *m = NULL, *t = NULL, *a = NULL, *b = NULL, *c = NULL;
  CHECK_STATUS(mt_dense_new(MT_float32, 1, shape, &d, &err), MT_OK);
  CHECK_STATUS(mt_dense_new(MT_bool, 1, shape, &m, &err), MT_OK);
  for (int i = 0; i < 64; i++) ((uint8_t *)m->values)[i] = i % 2 == 0;
  CHECK_STATUS(mt_masked_new(d, m, &t, &err), MT_OK);
  CHECK_STATUS(mt_poison_copy(t, MT_POISON_RANDOM, 7, &a, &err), MT_OK);
  CHECK_STATUS(mt_poison_copy(t, MT_POISON_RANDOM, 7, &b, &err), MT_OK);
  CHECK_STATUS(mt_poison_copy(t, MT_POISON_RANDOM, 8, &c, &err), MT_OK);
  CHECK(!memcmp(a->data->values, b->data->values, 64 * sizeof(float))); /* same seed */
  CHECK(memcmp(a->data->values, c->data->values, 64 * sizeof(float)) != 0);
  int specials = 0, ordinary = 0;
  for (int i = 1; i < 64; i += 2) {
    float v = ((const float *)a->data->values)[i];
    if (isnan(v) || isinf(v) || fabsf(v) > 1e29f || (v == 0 && signbit(v))) specials++;
    else ordinary++;
  }
  CHECK(specials > 0 && ordinary > 0); /* a mix, not one value */
  mt_tensor_free(t);
  mt_tensor_free(a);
  mt_tensor_free(b);
  mt_tensor_free(c);
}

TEST(integer_and_half_data_get_the_ends_of_their_range) {
  mt_tensor *t = masked4(MT_int32, 0), *h = masked4(MT_float16, 0), *c = NULL;
  mt_error err = {0};
  CHECK_STATUS(mt_poison_copy(t, MT_POISON_POS_INF, 1, &c, &err), MT_OK);
  CHECK(((const int32_t *)c->data->values)[1] == INT32_MAX);
  CHECK(((const int32_t *)c->data->values)[0] == 1);
  mt_tensor_free(c);
  CHECK_STATUS(mt_poison_copy(t, MT_POISON_NEG_BIG, 1, &c, &err), MT_OK);
  CHECK(((const int32_t *)c->data->values)[3] == INT32_MIN);
  mt_tensor_free(c);
  /* 1e30 does not fit a half: the largest finite half, 65504, instead of inf */
  CHECK_STATUS(mt_poison_copy(h, MT_POISON_POS_BIG, 1, &c, &err), MT_OK);
  CHECK(mt_half_to_float(((const uint16_t *)c->data->values)[1]) == 65504.0f);
  mt_tensor_free(c);
  /* bfloat16 holds float32's range: 1e30 (float32 0x7149f2ca) rounds to
   * nearest even, 0x714a (low bits 0xf2ca are above the tie 0x8000), as
   * torch's fill and golden/mtgen/poison.py's cast_poison do */
  mt_tensor *bh = masked4(MT_bfloat16, 0);
  CHECK_STATUS(mt_poison_copy(bh, MT_POISON_POS_BIG, 1, &c, &err), MT_OK);
  CHECK_EQ_INT(((const uint16_t *)c->data->values)[1], 0x714a);
  CHECK_EQ_INT(((const uint16_t *)c->data->values)[0], 0x3f80); /* specified 1.0 kept */
  mt_tensor_free(c);
  mt_tensor_free(bh);
  mt_tensor_free(t);
  mt_tensor_free(h);
}

TEST(seed_is_stable_per_case_id) {
  CHECK(mt_poison_seed("sum.masked.f32.all") == mt_poison_seed("sum.masked.f32.all"));
  CHECK(mt_poison_seed("sum.masked.f32.all") != mt_poison_seed("sum.masked.f64.all"));
  CHECK(!strcmp(mt_poison_label(MT_POISON_NEG_ZERO), "-0.0"));
}

/* input_masks: a plain [2, 3] int32 input masked by a [3] bool mask
 * (broadcast over rows; columns 0 and 2 specified): only column 1 of each
 * row is poisoned, and a mask that does not broadcast is refused. */
TEST(plain_input_is_poisoned_where_its_broadcast_mask_is_false) {
  mt_tensor *t = dense(MT_int32, 2, SHAPE(2, 3), VALS(1, 2, 3, 4, 5, 6));
  mt_tensor *m = bools(1, SHAPE(3), BITS(1, 0, 1));
  mt_tensor *all = bools(1, SHAPE(3), BITS(1, 1, 1));
  mt_tensor *bad = bools(1, SHAPE(2), BITS(1, 0));
  mt_tensor *p = NULL;
  mt_error err = {0};
  CHECK(mt_poison_applies_where(t, m));
  CHECK(!mt_poison_applies_where(t, all)); /* nothing masked out: no re-run */
  CHECK(!mt_poison_applies_where(t, bad));
  CHECK_STATUS(mt_poison_copy_where(t, m, MT_POISON_NEG_INF, 1, &p, &err), MT_OK);
  const int32_t *v = p->values;
  CHECK(v[0] == 1 && v[2] == 3 && v[3] == 4 && v[5] == 6);
  CHECK(v[1] == INT32_MIN && v[4] == INT32_MIN); /* -inf: the bottom of int32 */
  CHECK(((const int32_t *)t->values)[1] == 2);    /* a copy: t is unchanged */
  mt_tensor_free(p);
  CHECK_STATUS(mt_poison_copy_where(t, bad, MT_POISON_NAN, 1, &p, &err), MT_INVALID_ARGUMENT);
  mt_tensor_free(t);
  mt_tensor_free(m);
  mt_tensor_free(all);
  mt_tensor_free(bad);
}

/* CSR storage: a [2, 3] masked tensor with 3 stored entries (crow 0 2 3,
 * cols 0 2 1), mask values 1 0 1: only the second stored datum is
 * poisoned; a mask of another structure leaves the data alone. */
TEST(csr_storage_is_poisoned_where_the_mask_values_are_false) {
  mt_tensor *d = NULL, *m = NULL, *md = NULL, *p = NULL;
  mt_error err = {0};
  CHECK_STATUS(mt_csr_new(MT_float32, 2, 3, 3, &d, &err), MT_OK);
  CHECK_STATUS(mt_csr_new(MT_bool, 2, 3, 3, &m, &err), MT_OK);
  const int64_t crow[3] = {0, 2, 3}, col[3] = {0, 2, 1};
  memcpy(d->crow_indices, crow, sizeof crow);
  memcpy(m->crow_indices, crow, sizeof crow);
  memcpy(d->col_indices, col, sizeof col);
  memcpy(m->col_indices, col, sizeof col);
  const float v[3] = {1, 2, 3};
  const uint8_t b[3] = {1, 0, 1};
  memcpy(d->values, v, sizeof v);
  memcpy(m->values, b, sizeof b);
  CHECK_STATUS(mt_masked_new(d, m, &md, &err), MT_OK);
  CHECK(mt_poison_applies(md));
  CHECK_STATUS(mt_poison_copy(md, MT_POISON_POS_BIG, 1, &p, &err), MT_OK);
  const float *pv = p->data->values;
  CHECK(pv[0] == 1.0f && pv[1] == 1e30f && pv[2] == 3.0f);
  mt_tensor_free(p);
  ((int64_t *)md->mask->col_indices)[2] = 2; /* another structure: unreachable */
  CHECK(!mt_poison_applies(md));
  mt_tensor_free(md);
}

MT_TEST_MAIN(T(only_masked_tensors_with_a_masked_out_element_are_poisoned),
             T(every_poison_lands_on_masked_out_data_only), T(random_pattern_follows_the_seed),
             T(integer_and_half_data_get_the_ends_of_their_range), T(seed_is_stable_per_case_id),
             T(plain_input_is_poisoned_where_its_broadcast_mask_is_false),
             T(csr_storage_is_poisoned_where_the_mask_values_are_false))

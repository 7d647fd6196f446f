/* test_cpu_binary_sparse.c - add/sub/mul/div on plain sparse operands
 * (impl/cpu/binary_sparse.c, spec/SEMANTICS.md SPP-2 .. SPP-6). Every
 * expected value is derived by hand in the comment above its test. */
#include <math.h>
#include <stdlib.h>

#include "cpu_fixtures.h"
#include "mt_test.h"

static mt_tensor *inumber(int64_t v) {
  mt_tensor *t = NULL;
  if (mt_scalar_new(MT_int64, (double)v, &t, NULL) != MT_OK) abort();
  return t;
}

/* SPP-2: a = coalesced {(0,0): 1, (1,1): 2}, u = uncoalesced, stored
 * (1,1): 10, (0,0): 20, (0,0): 30, all [2, 2] float32. add(a, u, alpha=2)
 * walks both lists in stored order, the smaller row-major index first:
 *   a(0,0)=lin 0 vs u(1,1)=lin 3 -> a's (0,0): 1
 *   a(1,1)=lin 3 vs u(1,1)=lin 3 -> equal: 2 + 2*10 = 22
 *   a done -> u's (0,0): 2*20 = 40, u's (0,0): 2*30 = 60
 * = entries (0,0), (1,1), (0,0), (0,0) with values 1, 22, 40, 60, flagged
 * uncoalesced (u is). add(a, a, alpha=-1): both coalesced, every index
 * equal: (0,0): 0, (1,1): 0, explicit zeros kept, coalesced. */
TEST(coo_add_merges_in_stored_order_and_keeps_duplicates) {
  mt_tensor *a = coo2(MT_float32, 2, 2, 2, SHAPE(0, 1), SHAPE(0, 1), VALS(1, 2), 1);
  mt_tensor *u = coo2(MT_float32, 2, 2, 3, SHAPE(1, 0, 0), SHAPE(1, 0, 0), VALS(10, 20, 30), 0);
  mt_kwarg k2 = kw_int("alpha", 2), km1 = kw_int("alpha", -1);
  mt_kwargs kw2 = {1, &k2}, kwm1 = {1, &km1};
  mt_call c;
  mt_error e;
  CHECK_STATUS(run(mt_cpu_add, &c, &e, 2, (const mt_tensor *[]){a, u}, &kw2), MT_OK);
  if (c.n_out == 1) {
    const mt_tensor *o = c.out[0];
    CHECK(o->kind == MT_KIND_COO && o->nnz == 4 && !o->coalesced);
    if (o->nnz == 4) {
      CHECK(o->indices[0] == 0 && o->indices[1] == 1 && o->indices[2] == 0 && o->indices[3] == 0);
      CHECK(at(o, 0) == 1 && at(o, 1) == 22 && at(o, 2) == 40 && at(o, 3) == 60);
    }
  }
  done(&c, NULL, 0);
  CHECK_STATUS(run(mt_cpu_add, &c, &e, 2, (const mt_tensor *[]){a, a}, &kwm1), MT_OK);
  if (c.n_out == 1)
    CHECK(c.out[0]->nnz == 2 && c.out[0]->coalesced && at(c.out[0], 0) == 0 &&
          at(c.out[0], 1) == 0);
  done(&c, NULL, 0);
  /* sub of two CSR tensors: torch has no kernel */
  mt_tensor *ca = csr2(MT_float32, 2, 2, 2, SHAPE(0, 1), SHAPE(0, 1), VALS(1, 2));
  CHECK_STATUS(run(mt_cpu_sub, &c, &e, 2, (const mt_tensor *[]){ca, ca}, NULL), MT_LAYOUT_MISMATCH);
  CHECK_HAS(e.msg, "SparseCsr");
  done(&c, (mt_tensor *[]){a, u, ca}, 3);
}

/* SPP-3: d = [[1, 2], [3, 4]] float32, s = COO {(0,1): 10, (1,0): 20}.
 * add(d, s, alpha=0.5) = [[1, 2 + 5], [3 + 10, 4]] = [[1, 7], [13, 4]],
 * dense. add(s, d) is refused (LAYOUT_MISMATCH, "add(sparse, dense)");
 * sub(d, s) = [[1, -8], [-17, 4]]. */
TEST(dense_plus_sparse_is_dense_and_sparse_plus_dense_refused) {
  mt_tensor *d = dense(MT_float32, 2, SHAPE(2, 2), VALS(1, 2, 3, 4));
  mt_tensor *s = coo2(MT_float32, 2, 2, 2, SHAPE(0, 1), SHAPE(1, 0), VALS(10, 20), 1);
  mt_kwarg kh = kw_float("alpha", 0.5);
  mt_kwargs kw = {1, &kh};
  mt_call c;
  mt_error e;
  CHECK_STATUS(run(mt_cpu_add, &c, &e, 2, (const mt_tensor *[]){d, s}, &kw), MT_OK);
  if (c.n_out == 1) {
    const mt_tensor *o = c.out[0];
    CHECK(o->kind == MT_KIND_DENSE);
    CHECK(at(o, 0) == 1 && at(o, 1) == 7 && at(o, 2) == 13 && at(o, 3) == 4);
  }
  done(&c, NULL, 0);
  CHECK_STATUS(run(mt_cpu_sub, &c, &e, 2, (const mt_tensor *[]){d, s}, NULL), MT_OK);
  if (c.n_out == 1)
    CHECK(at(c.out[0], 0) == 1 && at(c.out[0], 1) == -8 && at(c.out[0], 2) == -17 &&
          at(c.out[0], 3) == 4);
  done(&c, NULL, 0);
  CHECK_STATUS(run(mt_cpu_add, &c, &e, 2, (const mt_tensor *[]){s, d}, NULL), MT_LAYOUT_MISMATCH);
  CHECK_HAS(e.msg, "add(sparse, dense)");
  done(&c, (mt_tensor *[]){d, s}, 2);
}

/* SPP-4: p = coalesced {(0,0): 2, (1,1): 3}; v = uncoalesced, stored
 * (1,1): 5, (0,1): 7 (same nnz 2). mul(p, v): exactly one coalesced, so p
 * is searched and v is the source: (1,1): 5 * 3 = 15, (0,1): found nowhere
 * -> 0; both kept in v's order, uncoalesced. mul(p, q) with q = coalesced
 * {(0,1): 4, (1,1): 6}: both coalesced, p (nnz 2 >= 2, the left) is
 * searched, q the source: (0,1) not in p -> dropped, (1,1): 6 * 3 = 18;
 * one entry, coalesced. */
TEST(coo_mul_keeps_the_source_entries_unless_both_coalesced) {
  mt_tensor *p = coo2(MT_float32, 2, 2, 2, SHAPE(0, 1), SHAPE(0, 1), VALS(2, 3), 1);
  mt_tensor *v = coo2(MT_float32, 2, 2, 2, SHAPE(1, 0), SHAPE(1, 1), VALS(5, 7), 0);
  mt_tensor *q = coo2(MT_float32, 2, 2, 2, SHAPE(0, 1), SHAPE(1, 1), VALS(4, 6), 1);
  mt_call c;
  mt_error e;
  CHECK_STATUS(run(mt_cpu_mul, &c, &e, 2, (const mt_tensor *[]){p, v}, NULL), MT_OK);
  if (c.n_out == 1) {
    const mt_tensor *o = c.out[0];
    CHECK(o->kind == MT_KIND_COO && o->nnz == 2 && !o->coalesced);
    if (o->nnz == 2) {
      CHECK(o->indices[0] == 1 && o->indices[2] == 1); /* (1,1) first */
      CHECK(at(o, 0) == 15 && at(o, 1) == 0);
    }
  }
  done(&c, NULL, 0);
  CHECK_STATUS(run(mt_cpu_mul, &c, &e, 2, (const mt_tensor *[]){p, q}, NULL), MT_OK);
  if (c.n_out == 1) CHECK(c.out[0]->nnz == 1 && c.out[0]->coalesced && at(c.out[0], 0) == 18);
  done(&c, (mt_tensor *[]){p, v, q}, 3);
}

/* SPP-5: a = coalesced {(0,0): 3, (1,1): -1} float32. a.mul_(2): values
 * 6, -2, indices kept, flagged uncoalesced (torch's in-place mul by a
 * number); a.div_(2): 1.5, -0.5, still coalesced; mul(a, 2) out of
 * place: 6, -2, coalesced. div(a, a) is refused (LAYOUT_MISMATCH). */
TEST(mul_inplace_by_number_clears_the_coalesced_flag) {
  mt_tensor *a = coo2(MT_float32, 2, 2, 2, SHAPE(0, 1), SHAPE(0, 1), VALS(3, -1), 1);
  mt_tensor *two = number(2.0);
  mt_call c;
  mt_error e;
  CHECK_STATUS(run(mt_cpu_mul_, &c, &e, 2, (const mt_tensor *[]){a, two}, NULL), MT_OK);
  if (c.n_out == 1)
    CHECK(c.out[0]->nnz == 2 && !c.out[0]->coalesced && at(c.out[0], 0) == 6 &&
          at(c.out[0], 1) == -2);
  done(&c, NULL, 0);
  CHECK_STATUS(run(mt_cpu_div_, &c, &e, 2, (const mt_tensor *[]){a, two}, NULL), MT_OK);
  if (c.n_out == 1) CHECK(c.out[0]->coalesced && at(c.out[0], 0) == 1.5 && at(c.out[0], 1) == -0.5);
  done(&c, NULL, 0);
  CHECK_STATUS(run(mt_cpu_mul, &c, &e, 2, (const mt_tensor *[]){a, two}, NULL), MT_OK);
  if (c.n_out == 1) CHECK(c.out[0]->coalesced && at(c.out[0], 0) == 6);
  done(&c, NULL, 0);
  CHECK_STATUS(run(mt_cpu_div, &c, &e, 2, (const mt_tensor *[]){a, a}, NULL), MT_LAYOUT_MISMATCH);
  done(&c, (mt_tensor *[]){a, two}, 2);
}

/* SPP-6: i = int64 COO {(0,0): 3, (1,1): -4}. div(i, 2) is true division:
 * float32 1.5, -2. mul(i, 2) stays int64: 6, -8. add(i, i, alpha=0.5) is
 * refused (a float alpha, integral result: INVALID_ARGUMENT); i.div_(2)
 * is refused (a float result into an int64 self: DTYPE_MISMATCH); a
 * float16 COO + COO has no kernel (DTYPE_MISMATCH). */
TEST(result_dtypes_and_refusals_follow_torch) {
  mt_tensor *i = coo2(MT_int64, 2, 2, 2, SHAPE(0, 1), SHAPE(0, 1), VALS(3, -4), 1);
  mt_tensor *h = coo2(MT_float16, 2, 2, 2, SHAPE(0, 1), SHAPE(0, 1), VALS(3, -4), 1);
  mt_tensor *two = inumber(2);
  mt_kwarg kh = kw_float("alpha", 0.5);
  mt_kwargs kw = {1, &kh};
  mt_call c;
  mt_error e;
  CHECK_STATUS(run(mt_cpu_div, &c, &e, 2, (const mt_tensor *[]){i, two}, NULL), MT_OK);
  if (c.n_out == 1)
    CHECK(c.out[0]->dtype == MT_float32 && at(c.out[0], 0) == 1.5 && at(c.out[0], 1) == -2);
  done(&c, NULL, 0);
  CHECK_STATUS(run(mt_cpu_mul, &c, &e, 2, (const mt_tensor *[]){i, two}, NULL), MT_OK);
  if (c.n_out == 1)
    CHECK(c.out[0]->dtype == MT_int64 && at(c.out[0], 0) == 6 && at(c.out[0], 1) == -8);
  done(&c, NULL, 0);
  CHECK_STATUS(run(mt_cpu_add, &c, &e, 2, (const mt_tensor *[]){i, i}, &kw), MT_INVALID_ARGUMENT);
  CHECK_HAS(e.msg, "alpha must not be a floating point");
  CHECK_STATUS(run(mt_cpu_div_, &c, &e, 2, (const mt_tensor *[]){i, two}, NULL), MT_DTYPE_MISMATCH);
  CHECK_STATUS(run(mt_cpu_add, &c, &e, 2, (const mt_tensor *[]){h, h}, NULL), MT_DTYPE_MISMATCH);
  CHECK_HAS(e.msg, "Half");
  done(&c, (mt_tensor *[]){i, h, two}, 3);
}

/* 2 x 2 CSC with ccol_indices ccol[3], row_indices rows[nnz], values v. */
static mt_tensor *csc2(int64_t nnz, const int64_t *ccol, const int64_t *rows, const double *v) {
  mt_tensor *t = NULL;
  if (mt_compressed_new(MT_KIND_CSC, MT_float32, 2, SHAPE(2, 2), 0, NULL, nnz, &t, NULL) != MT_OK)
    abort();
  memcpy(t->crow_indices, ccol, 3 * sizeof(int64_t));
  for (int64_t k = 0; k < nnz; k++) {
    t->col_indices[k] = rows[k];
    mt_set_f64(t->values, MT_float32, k, v[k]);
  }
  return t;
}

/* SPP-7: a = CSC {col 0: (0,0) = 1; col 1: (1,1) = 2}, b = CSC {col 0:
 * (1,0) = 10; col 1: (1,1) = 20}. add(a, b) and add(a, b, alpha=0.5):
 * refused (torch's add of two CSC tensors takes its CSR-only path,
 * LAYOUT_MISMATCH); mul(a, b): no CSC kernel (LAYOUT_MISMATCH); mul(a, 3)
 * maps the values, structure kept: [3, 6]; add(d, a) with d = [[1, 2],
 * [3, 4]] is dense: [[1 + 1, 2], [3, 4 + 2]] = [[2, 2], [3, 6]]. */
TEST(csc_add_and_mul_of_two_are_refused_mul_by_number_runs) {
  mt_tensor *a = csc2(2, SHAPE(0, 1, 2), SHAPE(0, 1), VALS(1, 2));
  mt_tensor *b = csc2(2, SHAPE(0, 1, 2), SHAPE(1, 1), VALS(10, 20));
  mt_tensor *d = dense(MT_float32, 2, SHAPE(2, 2), VALS(1, 2, 3, 4));
  mt_tensor *three = number(3.0);
  mt_kwarg kh = kw_float("alpha", 0.5);
  mt_kwargs kw = {1, &kh};
  mt_call c;
  mt_error e;
  CHECK_STATUS(run(mt_cpu_add, &c, &e, 2, (const mt_tensor *[]){a, b}, &kw), MT_LAYOUT_MISMATCH);
  CHECK_STATUS(run(mt_cpu_add, &c, &e, 2, (const mt_tensor *[]){a, b}, NULL), MT_LAYOUT_MISMATCH);
  CHECK_STATUS(run(mt_cpu_mul, &c, &e, 2, (const mt_tensor *[]){a, b}, NULL), MT_LAYOUT_MISMATCH);
  CHECK_STATUS(run(mt_cpu_mul, &c, &e, 2, (const mt_tensor *[]){a, three}, NULL), MT_OK);
  if (c.n_out == 1)
    CHECK(c.out[0]->kind == MT_KIND_CSC && at(c.out[0], 0) == 3 && at(c.out[0], 1) == 6);
  done(&c, NULL, 0);
  CHECK_STATUS(run(mt_cpu_add, &c, &e, 2, (const mt_tensor *[]){d, a}, NULL), MT_OK);
  if (c.n_out == 1)
    CHECK(c.out[0]->kind == MT_KIND_DENSE && at(c.out[0], 0) == 2 && at(c.out[0], 1) == 2 &&
          at(c.out[0], 2) == 3 && at(c.out[0], 3) == 6);
  done(&c, (mt_tensor *[]){a, b, d, three}, 4);
}

MT_TEST_MAIN(T(csc_add_and_mul_of_two_are_refused_mul_by_number_runs),
             T(coo_add_merges_in_stored_order_and_keeps_duplicates),
             T(dense_plus_sparse_is_dense_and_sparse_plus_dense_refused),
             T(coo_mul_keeps_the_source_entries_unless_both_coalesced),
             T(mul_inplace_by_number_clears_the_coalesced_flag),
             T(result_dtypes_and_refusals_follow_torch))

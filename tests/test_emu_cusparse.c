/* test_emu_cusparse.c - the backend's cuSPARSE calls (impl/cuda/cusparse_lib.cu)
 * on the emulated library (impl/cuda/cusparse_emu.h), called directly on
 * the call's device memory, at shapes sparse_blas.h5 does not reach: an
 * SpGEMM whose C has no element (A's columns meet only empty rows of B: C's
 * columns and values are then zero-length arrays, still device pointers),
 * and the refusals a caller of cuSPARSE must turn into the case's error.
 * Expected values are derived by hand in the comments. */
#define MT_CUDA_EMU 1
#include <stdint.h>
#include <string.h>

#include "cuda/cuda_compat.h"
#include "mt_test.h"

/* One call's device memory: room for the buffers below, each uploaded. */
typedef struct {
  mtc_arena a;
  size_t total;
} dev;
static void *up(dev *d, const void *host, int64_t n, size_t size, mt_error *e) {
  void *p = mt_cuemu_arena_take(&d->a, n, size);
  if (host && mt_cuemu_upload(&d->a, p, host, (size_t)n * size, e) != MT_OK) return NULL;
  return p;
}
static int open_dev(dev *d, mt_error *e) {
  d->total = 0;
  for (int i = 0; i < 12; i++) mt_cuemu_arena_add(&d->total, 16, 8);
  return mt_cuemu_arena_open(&d->a, d->total, "test", e) == MT_OK;
}

TEST(spgemm_with_an_empty_product_gives_zeros) {
  dev d;
  mt_error e;
  if (!open_dev(&d, &e)) {
    CHECK(0);
    return;
  }
  /* A = [[0, 3], [0, 0]], B = [[5, 0], [0, 0]]: A's one element (column 1) meets B's row 1,
     which is empty, so A B stores nothing and is the zero matrix */
  const int32_t ar[] = {0, 1, 1}, ac[] = {1}, br[] = {0, 1, 1}, bc[] = {0};
  const double av[] = {3}, bv[] = {5};
  double c[4] = {-1, -1, -1, -1};
  void *dar = up(&d, ar, 3, 4, &e), *dac = up(&d, ac, 1, 4, &e), *dav = up(&d, av, 1, 8, &e);
  void *dbr = up(&d, br, 3, 4, &e), *dbc = up(&d, bc, 1, 4, &e), *dbv = up(&d, bv, 1, 8, &e);
  void *dc = up(&d, NULL, 4, 8, &e);
  CHECK_STATUS(mt_cuemu_csr_spgemm(&d.a, MT_float64, 2, 2, 2, 1, dar, dac, dav, 1, dbr, dbc, dbv,
                                   dc, &e),
               MT_OK);
  CHECK_STATUS(mt_cuemu_download(&d.a, c, dc, sizeof c, &e), MT_OK);
  CHECK(c[0] == 0 && c[1] == 0 && c[2] == 0 && c[3] == 0 && !signbit(c[0]));
  mt_cuemu_arena_close(&d.a);
}

TEST(spgemm_and_spmm_give_the_hand_products_column_major) {
  dev d;
  mt_error e;
  if (!open_dev(&d, &e)) {
    CHECK(0);
    return;
  }
  /* A = [[1, 2], [0, 3]], B = [[4, 0], [0, 5]]: A B = [[4, 10], [0, 15]] */
  const int32_t ar[] = {0, 2, 3}, ac[] = {0, 1, 1}, br[] = {0, 1, 2}, bc[] = {0, 1};
  const double av[] = {1, 2, 3}, bv[] = {4, 5};
  void *dar = up(&d, ar, 3, 4, &e), *dac = up(&d, ac, 3, 4, &e), *dav = up(&d, av, 3, 8, &e);
  void *dbr = up(&d, br, 3, 4, &e), *dbc = up(&d, bc, 2, 4, &e), *dbv = up(&d, bv, 2, 8, &e);
  double c[6];
  void *dc = up(&d, NULL, 6, 8, &e);
  CHECK_STATUS(mt_cuemu_csr_spgemm(&d.a, MT_float64, 2, 2, 2, 3, dar, dac, dav, 2, dbr, dbc, dbv,
                                   dc, &e),
               MT_OK);
  CHECK_STATUS(mt_cuemu_download(&d.a, c, dc, 4 * sizeof(double), &e), MT_OK);
  CHECK(c[0] == 4 && c[1] == 0 && c[2] == 10 && c[3] == 15);
  /* dense B = [[1, 2, 3], [4, 5, 6]] column-major: A B = [[9, 12, 15], [12, 15, 18]] */
  const double b[] = {1, 4, 2, 5, 3, 6};
  void *db = up(&d, b, 6, 8, &e);
  CHECK_STATUS(mt_cuemu_csr_mm(&d.a, MT_float64, 2, 2, 3, 3, dar, dac, dav, db, dc, &e), MT_OK);
  CHECK_STATUS(mt_cuemu_download(&d.a, c, dc, sizeof c, &e), MT_OK);
  CHECK(c[0] == 9 && c[1] == 12 && c[2] == 12 && c[3] == 15 && c[4] == 15 && c[5] == 18);
  /* one column (cusparseSpMV): b = [1, 4], A b = [9, 12] */
  CHECK_STATUS(mt_cuemu_csr_mm(&d.a, MT_float64, 2, 2, 1, 3, dar, dac, dav, db, dc, &e), MT_OK);
  CHECK_STATUS(mt_cuemu_download(&d.a, c, dc, 2 * sizeof(double), &e), MT_OK);
  CHECK(c[0] == 9 && c[1] == 12);
  mt_cuemu_arena_close(&d.a);
}

TEST(the_library_s_refusals_are_the_case_s_error_with_the_reason) {
  dev d;
  mt_error e;
  if (!open_dev(&d, &e)) {
    CHECK(0);
    return;
  }
  /* A's row 0 with columns {1, 0}: not the sorted CSR cuSPARSE assumes */
  const int32_t ar[] = {0, 2, 3}, ac[] = {1, 0, 1};
  const double av[] = {1, 2, 3}, b[] = {1, 1};
  void *dar = up(&d, ar, 3, 4, &e), *dac = up(&d, ac, 3, 4, &e), *dav = up(&d, av, 3, 8, &e);
  void *db = up(&d, b, 2, 8, &e), *dc = up(&d, NULL, 2, 8, &e);
  CHECK_STATUS(mt_cuemu_csr_mm(&d.a, MT_float64, 2, 2, 1, 3, dar, dac, dav, db, dc, &e),
               MT_DEVICE_ERROR);
  CHECK_HAS(e.msg, "test: cusparseSpMV_bufferSize: invalid value (CUSPARSE_STATUS_INVALID_VALUE");
  CHECK_HAS(e.msg, "sorted, unique columns");
  /* with sorted columns, B in host memory: the library would fault on a GPU */
  const int32_t sorted[] = {0, 1, 1};
  void *dsorted = up(&d, sorted, 3, 4, &e);
  double host_b[2] = {1, 1};
  CHECK_STATUS(mt_cuemu_csr_mm(&d.a, MT_float64, 2, 2, 1, 3, dar, dsorted, dav, host_b, dc, &e),
               MT_DEVICE_ERROR);
  CHECK_HAS(e.msg, "X's values (16 bytes) is not (wholly) device memory");
  /* an integer product is not cuSPARSE's */
  CHECK_STATUS(mt_cuemu_csr_mm(&d.a, MT_int64, 2, 2, 1, 3, dar, dac, dav, db, dc, &e),
               MT_NOT_SUPPORTED);
  mt_cuemu_arena_close(&d.a);
}

MT_TEST_MAIN(T(spgemm_with_an_empty_product_gives_zeros),
             T(spgemm_and_spmm_give_the_hand_products_column_major),
             T(the_library_s_refusals_are_the_case_s_error_with_the_reason))

/* test_cusparse_emu.cc - impl/cuda/cusparse_emu.h, the emulation's cuSPARSE:
 * the products' values (derived by hand in the comments), and each check of
 * the contract the backend's calls (impl/cuda/cusparse_lib.cu) are held to
 * in CI: a check that could not fail here would let a call sequence pass
 * the emulation and fail on a GPU. Device memory is a region of this file
 * (the memory hook), so that "a host pointer" can be tested. */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "cuda/cusparse_emu.h"
#include "mt_test.h"

/* the "device": an aligned region; everything else is host memory */
struct dev_mem {
  alignas(256) unsigned char bytes[8192];
  size_t used;
  int reach_on, reach_calls;
};
static int dev_in(const void *ctx, const void *p, size_t n) {
  const dev_mem *d = (const dev_mem *)ctx;
  const unsigned char *q = (const unsigned char *)p;
  return q >= d->bytes && n <= sizeof d->bytes && (size_t)(q - d->bytes) <= sizeof d->bytes - n;
}
static void dev_reach(const void *ctx, int on) {
  dev_mem *d = (dev_mem *)ctx;
  d->reach_on += on ? 1 : -1;
  d->reach_calls++;
}
/* n bytes of the device, 64-byte aligned */
static void *dev_take(dev_mem *d, size_t n) {
  void *p = d->bytes + d->used;
  d->used += (n + 63) / 64 * 64;
  return p;
}
static cusparseHandle_t handle_on(dev_mem *d) {
  cusparseHandle_t h = NULL;
  mt_csp_emu_mem m = {dev_in, dev_reach, d};
  memset(d, 0, sizeof *d);
  if (cusparseCreate(&h) != CUSPARSE_STATUS_SUCCESS) return NULL;
  mt_csp_emu_memory(h, &m);
  return h;
}
template <typename T> static T *dev_copy(dev_mem *d, const T *src, size_t n) {
  T *p = (T *)dev_take(d, n * sizeof(T));
  memcpy(p, src, n * sizeof(T));
  return p;
}

/* A = [[1, 0, 2], [0, 3, 0]] (2 x 3, CSR) */
static const int32_t A_RP[] = {0, 2, 3}, A_CI[] = {0, 2, 1};
static const double A_V[] = {1, 2, 3};
static cusparseConstSpMatDescr_t make_a(dev_mem *d) {
  cusparseConstSpMatDescr_t a = NULL;
  cusparseCreateConstCsr(&a, 2, 3, 3, dev_copy(d, A_RP, 3), dev_copy(d, A_CI, 3),
                         dev_copy(d, A_V, 3), CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I,
                         CUSPARSE_INDEX_BASE_ZERO, CUDA_R_64F);
  return a;
}

TEST(spmm_computes_alpha_a_b_plus_beta_c_column_major) {
  dev_mem d;
  cusparseHandle_t h = handle_on(&d);
  cusparseConstSpMatDescr_t a = make_a(&d);
  /* B = [[1, 2], [3, 4], [5, 6]] column-major: A B = [[1 + 2*5, 2 + 2*6], [3*3, 3*4]]
     = [[11, 14], [9, 12]] */
  const double bh[] = {1, 3, 5, 2, 4, 6}, nan4[] = {NAN, NAN, NAN, NAN}, one4[] = {1, 1, 1, 1};
  double *b = dev_copy(&d, bh, 6), *c = dev_copy(&d, nan4, 4);
  cusparseConstDnMatDescr_t B = NULL;
  cusparseDnMatDescr_t C = NULL;
  CHECK(cusparseCreateConstDnMat(&B, 3, 2, 3, b, CUDA_R_64F, CUSPARSE_ORDER_COL) == 0);
  CHECK(cusparseCreateDnMat(&C, 2, 2, 2, c, CUDA_R_64F, CUSPARSE_ORDER_COL) == 0);
  const double one = 1, zero = 0, two = 2, half = 0.5;
  const cusparseOperation_t N = CUSPARSE_OPERATION_NON_TRANSPOSE;
  size_t bytes = 0;
  CHECK(cusparseSpMM_bufferSize(h, N, N, &one, a, B, &zero, C, CUDA_R_64F,
                                CUSPARSE_SPMM_CSR_ALG1, &bytes) == 0);
  CHECK(bytes > 0);
  void *ws = dev_take(&d, bytes);
  /* beta 0: C's NaNs are not read */
  CHECK(cusparseSpMM(h, N, N, &one, a, B, &zero, C, CUDA_R_64F, CUSPARSE_SPMM_CSR_ALG1, ws) == 0);
  CHECK(c[0] == 11 && c[1] == 9 && c[2] == 14 && c[3] == 12);
  /* alpha 2, beta 0.5 on C = 1: 2 A B + 0.5 */
  memcpy(c, one4, sizeof one4);
  CHECK(cusparseSpMM(h, N, N, &two, a, B, &half, C, CUDA_R_64F, CUSPARSE_SPMM_CSR_ALG1, ws) == 0);
  CHECK(c[0] == 22.5 && c[1] == 18.5 && c[2] == 28.5 && c[3] == 24.5);
  /* the library wrote its whole workspace, and on device memory it had reach of */
  CHECK(((unsigned char *)ws)[bytes - 1] == MT_CSP_EMU_WS);
  CHECK(d.reach_on == 0 && d.reach_calls > 0);
  cusparseDestroyDnMat(B), cusparseDestroyDnMat(C), cusparseDestroySpMat(a), cusparseDestroy(h);
}

TEST(spmv_computes_a_x) {
  dev_mem d;
  cusparseHandle_t h = handle_on(&d);
  cusparseConstSpMatDescr_t a = make_a(&d);
  /* x = [1, 10, 100]: A x = [1 + 200, 30] */
  const double xh[] = {1, 10, 100}, yh[] = {NAN, NAN};
  double *x = dev_copy(&d, xh, 3), *y = dev_copy(&d, yh, 2);
  cusparseConstDnVecDescr_t X = NULL;
  cusparseDnVecDescr_t Y = NULL;
  cusparseCreateConstDnVec(&X, 3, x, CUDA_R_64F), cusparseCreateDnVec(&Y, 2, y, CUDA_R_64F);
  const double one = 1, zero = 0;
  size_t bytes = 0;
  const cusparseOperation_t N = CUSPARSE_OPERATION_NON_TRANSPOSE;
  CHECK(cusparseSpMV_bufferSize(h, N, &one, a, X, &zero, Y, CUDA_R_64F, CUSPARSE_SPMV_CSR_ALG1,
                                &bytes) == 0);
  CHECK(cusparseSpMV(h, N, &one, a, X, &zero, Y, CUDA_R_64F, CUSPARSE_SPMV_CSR_ALG1,
                     dev_take(&d, bytes)) == 0);
  CHECK(y[0] == 201 && y[1] == 30);
  /* the workspace is required: NULL when bytes were asked for */
  CHECK(cusparseSpMV(h, N, &one, a, X, &zero, Y, CUDA_R_64F, CUSPARSE_SPMV_CSR_ALG1, NULL) ==
        CUSPARSE_STATUS_INVALID_VALUE);
  CHECK_HAS(mt_csp_emu_why(h), "externalBuffer is NULL");
  /* ... and device memory, all of it: here 8 bytes short of the region's end */
  CHECK(cusparseSpMV(h, N, &one, a, X, &zero, Y, CUDA_R_64F, CUSPARSE_SPMV_CSR_ALG1,
                     d.bytes + sizeof d.bytes - bytes + 8) == CUSPARSE_STATUS_INVALID_VALUE);
  CHECK_HAS(mt_csp_emu_why(h), "externalBuffer");
  CHECK_HAS(mt_csp_emu_why(h), "not (wholly) device memory");
  cusparseDestroyDnVec(X), cusparseDestroyDnVec(Y), cusparseDestroySpMat(a), cusparseDestroy(h);
}

/* SpGEMM's operands: A above, B = [[1, 0], [0, 2], [3, 0]] (3 x 2):
   A B = [[1*1 + 2*3, 0], [0, 3*2]] = [[7, 0], [0, 6]] */
struct spgemm_case {
  cusparseConstSpMatDescr_t a, b;
  cusparseSpMatDescr_t c;
  cusparseSpGEMMDescr_t g;
};
static spgemm_case spgemm_make(dev_mem *d) {
  static const int32_t b_rp[] = {0, 1, 2, 3}, b_ci[] = {0, 1, 0};
  static const double b_v[] = {1, 2, 3};
  spgemm_case s = {make_a(d), NULL, NULL, NULL};
  cusparseCreateConstCsr(&s.b, 3, 2, 3, dev_copy(d, b_rp, 4), dev_copy(d, b_ci, 3),
                         dev_copy(d, b_v, 3), CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I,
                         CUSPARSE_INDEX_BASE_ZERO, CUDA_R_64F);
  cusparseCreateCsr(&s.c, 2, 2, 0, NULL, NULL, NULL, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I,
                    CUSPARSE_INDEX_BASE_ZERO, CUDA_R_64F);
  cusparseSpGEMM_createDescr(&s.g);
  return s;
}
static void spgemm_free(spgemm_case *s) {
  cusparseSpGEMM_destroyDescr(s->g), cusparseDestroySpMat(s->c), cusparseDestroySpMat(s->b);
  cusparseDestroySpMat(s->a);
}
#define SPGEMM_ARGS(h, s, one, zero)                                                               \
  h, CUSPARSE_OPERATION_NON_TRANSPOSE, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, s.a, s.b, &zero, \
      s.c, CUDA_R_64F, CUSPARSE_SPGEMM_ALG1, s.g

TEST(spgemm_runs_its_phases_in_order) {
  dev_mem d;
  cusparseHandle_t h = handle_on(&d);
  spgemm_case s = spgemm_make(&d);
  const double one = 1, zero = 0;
  size_t b1 = 0, b2 = 0;
  int64_t r, c, nnz = -1;
  CHECK(cusparseSpGEMM_workEstimation(SPGEMM_ARGS(h, s, one, zero), &b1, NULL) == 0);
  /* a NULL buffer only asks its size: compute is still out of order */
  CHECK(cusparseSpGEMM_compute(SPGEMM_ARGS(h, s, one, zero), &b2, NULL) ==
        CUSPARSE_STATUS_INVALID_VALUE);
  CHECK_HAS(mt_csp_emu_why(h), "before cusparseSpGEMM_workEstimation with its buffer");
  void *w1 = dev_take(&d, b1);
  CHECK(cusparseSpGEMM_workEstimation(SPGEMM_ARGS(h, s, one, zero), &b1, w1) == 0);
  CHECK(cusparseSpGEMM_copy(SPGEMM_ARGS(h, s, one, zero)) == CUSPARSE_STATUS_INVALID_VALUE);
  CHECK_HAS(mt_csp_emu_why(h), "before cusparseSpGEMM_compute");
  CHECK(cusparseSpGEMM_compute(SPGEMM_ARGS(h, s, one, zero), &b2, NULL) == 0);
  void *w2 = dev_take(&d, b2);
  CHECK(cusparseSpGEMM_compute(SPGEMM_ARGS(h, s, one, zero), &b2, w2) == 0);
  CHECK(cusparseSpMatGetSize(s.c, &r, &c, &nnz) == 0);
  CHECK(r == 2 && c == 2 && nnz == 2);
  int32_t *rp = (int32_t *)dev_take(&d, 12), *ci = (int32_t *)dev_take(&d, 8);
  double *v = (double *)dev_take(&d, 16);
  CHECK(cusparseCsrSetPointers(s.c, rp, ci, v) == 0);
  CHECK(cusparseSpGEMM_copy(SPGEMM_ARGS(h, s, one, zero)) == 0);
  CHECK(rp[0] == 0 && rp[1] == 1 && rp[2] == 2 && ci[0] == 0 && ci[1] == 1);
  CHECK(v[0] == 7 && v[1] == 6);
  spgemm_free(&s);
  cusparseDestroy(h);
}

TEST(spgemm_needs_its_buffers_kept_until_the_phase_after) {
  dev_mem d;
  cusparseHandle_t h = handle_on(&d);
  spgemm_case s = spgemm_make(&d);
  const double one = 1, zero = 0;
  size_t b1 = 0, b2 = 0;
  cusparseSpGEMM_workEstimation(SPGEMM_ARGS(h, s, one, zero), &b1, NULL);
  unsigned char *w1 = (unsigned char *)dev_take(&d, b1);
  /* a buffer smaller than asked */
  size_t short1 = b1 - 1;
  CHECK(cusparseSpGEMM_workEstimation(SPGEMM_ARGS(h, s, one, zero), &short1, w1) ==
        CUSPARSE_STATUS_INVALID_VALUE);
  CHECK(cusparseSpGEMM_workEstimation(SPGEMM_ARGS(h, s, one, zero), &b1, w1) == 0);
  w1[b1 / 2] = 0; /* the caller reused buffer 1 before compute */
  CHECK(cusparseSpGEMM_compute(SPGEMM_ARGS(h, s, one, zero), &b2, NULL) ==
        CUSPARSE_STATUS_INVALID_VALUE);
  CHECK_HAS(mt_csp_emu_why(h), "externalBuffer1 changed");
  w1[b1 / 2] = MT_CSP_EMU_WS;
  CHECK(cusparseSpGEMM_compute(SPGEMM_ARGS(h, s, one, zero), &b2, NULL) == 0);
  unsigned char *w2 = (unsigned char *)dev_take(&d, b2);
  CHECK(cusparseSpGEMM_compute(SPGEMM_ARGS(h, s, one, zero), &b2, w2) == 0);
  int32_t *rp = (int32_t *)dev_take(&d, 12), *ci = (int32_t *)dev_take(&d, 8);
  double *v = (double *)dev_take(&d, 16);
  cusparseCsrSetPointers(s.c, rp, ci, v);
  w2[0] = 1; /* ... and buffer 2 before copy */
  CHECK(cusparseSpGEMM_copy(SPGEMM_ARGS(h, s, one, zero)) == CUSPARSE_STATUS_INVALID_VALUE);
  CHECK_HAS(mt_csp_emu_why(h), "externalBuffer2 changed");
  /* C's arrays on the host: the copy would write host memory */
  w2[0] = MT_CSP_EMU_WS;
  int32_t host_rp[3];
  cusparseCsrSetPointers(s.c, host_rp, ci, v);
  CHECK(cusparseSpGEMM_copy(SPGEMM_ARGS(h, s, one, zero)) == CUSPARSE_STATUS_INVALID_VALUE);
  CHECK_HAS(mt_csp_emu_why(h), "C's row offsets");
  spgemm_free(&s);
  cusparseDestroy(h);
}

TEST(spgemm_takes_what_the_emulation_implements_and_nothing_else) {
  dev_mem d;
  cusparseHandle_t h = handle_on(&d);
  spgemm_case s = spgemm_make(&d);
  const double one = 1, zero = 0, half = 0.5;
  size_t b1 = 0;
  /* beta != 0 */
  CHECK(cusparseSpGEMM_workEstimation(SPGEMM_ARGS(h, s, one, half), &b1, NULL) ==
        CUSPARSE_STATUS_NOT_SUPPORTED);
  CHECK_HAS(mt_csp_emu_why(h), "beta");
  /* ALG3 */
  CHECK(cusparseSpGEMM_workEstimation(h, CUSPARSE_OPERATION_NON_TRANSPOSE,
                                      CUSPARSE_OPERATION_NON_TRANSPOSE, &one, s.a, s.b, &zero,
                                      s.c, CUDA_R_64F, CUSPARSE_SPGEMM_ALG3, s.g, &b1,
                                      NULL) == CUSPARSE_STATUS_NOT_SUPPORTED);
  /* the compute type not the operands' */
  CHECK(cusparseSpGEMM_workEstimation(h, CUSPARSE_OPERATION_NON_TRANSPOSE,
                                      CUSPARSE_OPERATION_NON_TRANSPOSE, &one, s.a, s.b, &zero,
                                      s.c, CUDA_R_32F, CUSPARSE_SPGEMM_ALG1, s.g, &b1,
                                      NULL) == CUSPARSE_STATUS_NOT_SUPPORTED);
  /* a later phase with other operands than the work estimation's */
  CHECK(cusparseSpGEMM_workEstimation(SPGEMM_ARGS(h, s, one, zero), &b1, NULL) == 0);
  CHECK(cusparseSpGEMM_workEstimation(SPGEMM_ARGS(h, s, one, zero), &b1, dev_take(&d, b1)) == 0);
  spgemm_case t = spgemm_make(&d);
  cusparseSpGEMM_destroyDescr(t.g);
  t.g = s.g;
  size_t b2 = 0;
  CHECK(cusparseSpGEMM_compute(SPGEMM_ARGS(h, t, one, zero), &b2, NULL) ==
        CUSPARSE_STATUS_INVALID_VALUE);
  CHECK_HAS(mt_csp_emu_why(h), "not those of the work estimation");
  cusparseDestroySpMat(t.c), cusparseDestroySpMat(t.b), cusparseDestroySpMat(t.a);
  spgemm_free(&s);
  cusparseDestroy(h);
}

TEST(operands_must_agree_and_be_device_memory) {
  dev_mem d;
  cusparseHandle_t h = handle_on(&d);
  cusparseConstSpMatDescr_t a = make_a(&d);
  const double one = 1, zero = 0;
  const cusparseOperation_t N = CUSPARSE_OPERATION_NON_TRANSPOSE;
  double *b = (double *)dev_take(&d, 6 * 8), *c = (double *)dev_take(&d, 4 * 8), host[6] = {0};
  cusparseConstDnMatDescr_t B2 = NULL, Bh = NULL;
  cusparseDnMatDescr_t C = NULL;
  size_t bytes;
  /* B 2 x 2 where A has 3 columns */
  cusparseCreateConstDnMat(&B2, 2, 2, 2, b, CUDA_R_64F, CUSPARSE_ORDER_COL);
  cusparseCreateDnMat(&C, 2, 2, 2, c, CUDA_R_64F, CUSPARSE_ORDER_COL);
  CHECK(cusparseSpMM_bufferSize(h, N, N, &one, a, B2, &zero, C, CUDA_R_64F,
                                CUSPARSE_SPMM_CSR_ALG1, &bytes) == CUSPARSE_STATUS_INVALID_VALUE);
  CHECK_HAS(mt_csp_emu_why(h), "do not agree");
  /* B in host memory */
  cusparseCreateConstDnMat(&Bh, 3, 2, 3, host, CUDA_R_64F, CUSPARSE_ORDER_COL);
  CHECK(cusparseSpMM_bufferSize(h, N, N, &one, a, Bh, &zero, C, CUDA_R_64F,
                                CUSPARSE_SPMM_CSR_ALG1, &bytes) == CUSPARSE_STATUS_INVALID_VALUE);
  CHECK_HAS(mt_csp_emu_why(h), "B's values");
  /* a transposed operand, an algorithm not implemented, no alpha */
  CHECK(cusparseSpMM_bufferSize(h, CUSPARSE_OPERATION_TRANSPOSE, N, &one, a, Bh, &zero, C,
                                CUDA_R_64F, CUSPARSE_SPMM_CSR_ALG1,
                                &bytes) == CUSPARSE_STATUS_NOT_SUPPORTED);
  CHECK(cusparseSpMM_bufferSize(h, N, N, &one, a, Bh, &zero, C, CUDA_R_64F,
                                CUSPARSE_SPMM_CSR_ALG3, &bytes) == CUSPARSE_STATUS_NOT_SUPPORTED);
  CHECK(cusparseSpMM_bufferSize(h, N, N, NULL, a, Bh, &zero, C, CUDA_R_64F,
                                CUSPARSE_SPMM_CSR_ALG1, &bytes) == CUSPARSE_STATUS_INVALID_VALUE);
  /* no handle */
  CHECK(cusparseSpMM_bufferSize(NULL, N, N, &one, a, Bh, &zero, C, CUDA_R_64F,
                                CUSPARSE_SPMM_CSR_ALG1, &bytes) == CUSPARSE_STATUS_NOT_INITIALIZED);
  cusparseDestroyDnMat(B2), cusparseDestroyDnMat(Bh), cusparseDestroyDnMat(C);
  cusparseDestroySpMat(a), cusparseDestroy(h);
}

TEST(descriptors_check_sizes_leading_dimensions_and_alignment) {
  double v[4] = {0};
  int32_t i[4] = {0};
  cusparseConstDnMatDescr_t m = NULL;
  cusparseConstSpMatDescr_t s = NULL;
  cusparseConstDnVecDescr_t x = NULL;
  /* a column-major 3 x 2 needs ld >= 3; a row-major one ld >= 2 */
  CHECK(cusparseCreateConstDnMat(&m, 3, 2, 2, v, CUDA_R_64F, CUSPARSE_ORDER_COL) ==
        CUSPARSE_STATUS_INVALID_VALUE);
  CHECK(m == NULL);
  CHECK(cusparseCreateConstDnMat(&m, 3, 2, 2, v, CUDA_R_64F, CUSPARSE_ORDER_ROW) == 0);
  cusparseDestroyDnMat(m);
  /* values not aligned to their type */
  CHECK(cusparseCreateConstDnVec(&x, 2, (const char *)v + 4, CUDA_R_64F) ==
        CUSPARSE_STATUS_INVALID_VALUE);
  CHECK(cusparseCreateConstCsr(&s, 2, 2, 1, i, (const char *)i + 2, v, CUSPARSE_INDEX_32I,
                               CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO, CUDA_R_64F) ==
        CUSPARSE_STATUS_INVALID_VALUE);
  /* stored elements without their arrays; negative sizes */
  CHECK(cusparseCreateConstCsr(&s, 2, 2, 1, i, NULL, v, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I,
                               CUSPARSE_INDEX_BASE_ZERO, CUDA_R_64F) ==
        CUSPARSE_STATUS_INVALID_VALUE);
  CHECK(cusparseCreateConstDnVec(&x, -1, v, CUDA_R_64F) == CUSPARSE_STATUS_INVALID_VALUE);
  /* an empty C waiting for its pointers is fine */
  cusparseSpMatDescr_t c = NULL;
  CHECK(cusparseCreateCsr(&c, 2, 2, 0, NULL, NULL, NULL, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I,
                          CUSPARSE_INDEX_BASE_ZERO, CUDA_R_64F) == 0);
  cusparseDestroySpMat(c);
}

TEST(a_csr_operand_must_be_sorted_unique_and_in_range) {
  dev_mem d;
  cusparseHandle_t h = handle_on(&d);
  const double one = 1, zero = 0, xv[] = {1, 1, 1};
  double *x = dev_copy(&d, xv, 3), *y = (double *)dev_take(&d, 16);
  cusparseConstDnVecDescr_t X = NULL;
  cusparseDnVecDescr_t Y = NULL;
  cusparseCreateConstDnVec(&X, 3, x, CUDA_R_64F), cusparseCreateDnVec(&Y, 2, y, CUDA_R_64F);
  /* row 0's columns {2, 0} (unsorted), {0, 0} (a duplicate), {0, 3} (out of range), and row
     offsets ending at 2 for 3 stored elements */
  const int32_t bad_ci[][3] = {{2, 0, 1}, {0, 0, 1}, {0, 3, 1}};
  const int32_t rp[] = {0, 2, 3}, short_rp[] = {0, 2, 2};
  for (int t = 0; t < 4; t++) {
    cusparseConstSpMatDescr_t a = NULL;
    cusparseCreateConstCsr(&a, 2, 3, 3, dev_copy(&d, t < 3 ? rp : short_rp, 3),
                           dev_copy(&d, t < 3 ? bad_ci[t] : A_CI, 3), dev_copy(&d, A_V, 3),
                           CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO,
                           CUDA_R_64F);
    size_t bytes = 0;
    CHECK(cusparseSpMV_bufferSize(h, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, a, X, &zero, Y,
                                  CUDA_R_64F, CUSPARSE_SPMV_CSR_ALG1,
                                  &bytes) == CUSPARSE_STATUS_INVALID_VALUE);
    CHECK_HAS(mt_csp_emu_why(h), t < 3 ? "sorted, unique columns" : "row offsets do not run");
    cusparseDestroySpMat(a);
  }
  cusparseDestroyDnVec(X), cusparseDestroyDnVec(Y), cusparseDestroy(h);
}

MT_TEST_MAIN(T(spmm_computes_alpha_a_b_plus_beta_c_column_major), T(spmv_computes_a_x),
             T(spgemm_runs_its_phases_in_order),
             T(spgemm_needs_its_buffers_kept_until_the_phase_after),
             T(spgemm_takes_what_the_emulation_implements_and_nothing_else),
             T(operands_must_agree_and_be_device_memory),
             T(descriptors_check_sizes_leading_dimensions_and_alignment),
             T(a_csr_operand_must_be_sorted_unique_and_in_range))

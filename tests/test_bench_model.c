/* test_bench_model.c - the benchmark's byte model and size rules
 * (perf/adagrad_cases.c: bc_model_bytes*, bc_model_crossover_pct*,
 * bc_size_ok) and the names that select its cases (bc_path_from_name,
 * bc_opt_from_name: mtcs_bench --paths, --opts, --case), which turn a measured time into the fraction of the copy
 * bandwidth a step reaches and the density where a sparse step stops paying:
 * a wrong model is a wrong performance verdict with every step right. The
 * expected values are derived by hand from the tables in perf/README.md
 * ("Byte model"; SparseAdam and SGD under "Other optimizers"), each in the
 * comment above its check. */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "adagrad_cases.h"
#include "mt_test.h"

enum { N20 = 1 << 20 };

TEST(dense_bytes_are_five_arrays_of_n) {
  /* dense and stream: read p, s, g and write p, s: 5 T n */
  CHECK(bc_model_bytes(BC_DENSE, 0, 1000, 1.0, 1000) == 20000.0);
  CHECK(bc_model_bytes(BC_DENSE, 1, 1000, 1.0, 1000) == 40000.0);
  CHECK(bc_model_bytes(BC_STREAM, 0, 1000, 0.5, 0) == 20000.0);
  /* masked_dense: the mask bytes (n) and, once more than 1/32 of the
   * 16-element blocks hold a set byte, all of p, s, g in and out: at d = 1,
   * 1000 + 20000; at d = 0 no block, the mask alone */
  CHECK(bc_model_bytes(BC_MASKED_DENSE, 0, 1000, 1.0, 1000) == 21000.0);
  CHECK(bc_model_bytes(BC_MASKED_DENSE, 0, 1000, 0.0, 0) == 1000.0);
}

TEST(sparse_bytes_are_entries_and_touched_lines) {
  /* sparse_coo f32, n = 1600, d = 1/2, e = 800: T = 4, L = 16;
   * 800 (8 + 4) + 4 * 4 * 1600 (1 - 2^-16) = 9600 + 25600 - 0.390625 =
   * 35199.609375 (every term exact in binary) */
  CHECK(bc_model_bytes(BC_SPARSE_COO, 0, 1600, 0.5, 800) == 35199.609375);
  CHECK(bc_model_bytes(BC_MASKED_SPARSE, 0, 1600, 0.5, 800) == 35199.609375);
  CHECK(bc_model_bytes(BC_TOUCH, 0, 1600, 0.5, 800) == 35199.609375);
  CHECK(bc_model_bytes(BC_SPARSE_COO_DUP, 0, 1600, 0.5, 800) == 35199.609375);
  /* f64: T = 8, L = 8; 800 * 16 + 32 * 1600 * (1 - 2^-8) = 12800 + 51000 */
  CHECK(bc_model_bytes(BC_SPARSE_COO, 1, 1600, 0.5, 800) == 63800.0);
  /* sparse_csr f32, 2 rows of 1024 at d = 1/2, e = 1024: the COO bytes
   * 1024 * 12 + 16 * 2048 (1 - 2^-16) = 12288 + 32767.5, and crow's
   * 8 (2 + 1) = 24 */
  CHECK(bc_model_bytes(BC_SPARSE_CSR, 0, 2048, 0.5, 1024) == 45079.5);
  /* hybrid_coo f32, 10 rows of 64: 10 (8 + 5 * 4 * 64) = 12880 */
  CHECK(bc_model_bytes(BC_HYBRID_COO, 0, 640, 1.0, 10) == 12880.0);
}

TEST(optimizer_bytes_follow_their_table) {
  /* dense steps, f32, n = 1000: sparse_adam T + 2 * 3 T = 28 per element,
   * sgd T + 2 T = 12, sgd_momentum 12 + the buffer 2 T = 20 */
  CHECK(bc_model_bytes_opt(BC_OPT_SPARSE_ADAM, BC_DENSE, 0, 1000, 1.0, 1000) == 28000.0);
  CHECK(bc_model_bytes_opt(BC_OPT_SGD, BC_DENSE, 0, 1000, 1.0, 1000) == 12000.0);
  CHECK(bc_model_bytes_opt(BC_OPT_SGD_MOMENTUM, BC_DENSE, 0, 1000, 1.0, 1000) == 20000.0);
  /* sgd on sparse_coo f32, n = 1600, d = 1/2, e = 800:
   * 800 (8 + 4) + 2 * 1 * 4 * 1600 (1 - 2^-16) = 9600 + 12800 - 0.1953125;
   * with momentum each entry's buffer value in and out, 800 * 8 more */
  CHECK(bc_model_bytes_opt(BC_OPT_SGD, BC_SPARSE_COO, 0, 1600, 0.5, 800) == 22399.8046875);
  CHECK(bc_model_bytes_opt(BC_OPT_SGD_MOMENTUM, BC_SPARSE_COO, 0, 1600, 0.5, 800) ==
        28799.8046875);
  /* sparse_adam on hybrid_coo f32, 10 rows: 10 (8 + 64 (4 + 2 * 3 * 4)) = 18000 */
  CHECK(bc_model_bytes_opt(BC_OPT_SPARSE_ADAM, BC_HYBRID_COO, 0, 640, 1.0, 10) == 18000.0);
  /* Adagrad's bytes are bc_model_bytes' */
  CHECK(bc_model_bytes_opt(BC_OPT_ADAGRAD, BC_SPARSE_CSR, 0, 2048, 0.5, 1024) == 45079.5);
}

/* index entries per unit of density: each element once (hybrid: each row
 * of 64); sparse_coo_dup's elements twice (BC_DUP_COPIES entries each) */
static double units(bc_path path, int64_t n) {
  if (path == BC_HYBRID_COO) return (double)n / BC_HYBRID_DIM;
  return path == BC_SPARSE_COO_DUP ? 2.0 * (double)n : (double)n;
}

static double bytes_at(bc_opt opt, bc_path path, int f64, int64_t n, double d) {
  return bc_model_bytes_opt(opt, path, f64, n, d, (int64_t)(d * units(path, n)));
}

TEST(the_crossover_is_where_the_sparse_bytes_reach_the_dense_bytes) {
  /* below the crossover density the path moves fewer bytes than its dense
   * step, at and above it as many or more (bytes grow with d): one part in
   * 10^9 to either side of the returned density */
  static const bc_path ada[] = {BC_SPARSE_COO, BC_MASKED_SPARSE,  BC_TOUCH,
                                BC_SPARSE_CSR, BC_SPARSE_COO_DUP, BC_HYBRID_COO};
  static const bc_opt opts[] = {BC_OPT_ADAGRAD, BC_OPT_SPARSE_ADAM, BC_OPT_SGD,
                                BC_OPT_SGD_MOMENTUM};
  for (size_t o = 0; o < sizeof opts / sizeof opts[0]; o++)
    for (size_t k = 0; k < sizeof ada / sizeof ada[0]; k++)
      for (int f64 = 0; f64 <= 1; f64++) {
        bc_opt opt = opts[o];
        bc_path path = ada[k];
        if (opt != BC_OPT_ADAGRAD && path != BC_SPARSE_COO && path != BC_HYBRID_COO) continue;
        double pct = bc_model_crossover_pct_opt(opt, path, f64, N20);
        double dense = bc_model_bytes_opt(opt, BC_DENSE, f64, N20, 1.0, N20), d = pct / 100;
        int ok = pct > 0 && pct < 100 && bytes_at(opt, path, f64, N20, d * (1 - 1e-9)) < dense &&
                 bytes_at(opt, path, f64, N20, d * (1 + 1e-9)) >= dense;
        if (!ok)
          fprintf(stderr, "  %s %s %s: crossover %.9g%%: bytes %.17g below, %.17g above, "
                          "dense %.17g\n",
                  bc_opt_name(opt), bc_path_name(path), f64 ? "f64" : "f32", pct,
                  bytes_at(opt, path, f64, N20, d * (1 - 1e-9)),
                  bytes_at(opt, path, f64, N20, d * (1 + 1e-9)), dense);
        CHECK(ok);
        if (opt == BC_OPT_ADAGRAD) /* the same bisection either way */
          CHECK(pct == bc_model_crossover_pct(path, f64, N20));
      }
  CHECK(bc_model_crossover_pct(BC_DENSE, 0, N20) == 100.0);
  CHECK(bc_model_crossover_pct(BC_STREAM, 1, N20) == 100.0);
}

TEST(the_crossovers_perf_readme_quotes) {
  /* sparse_coo: 12 d + 16 (1 - (1 - d)^16) = 20 (f32), whose left side is
   * 19.999989 at d = 0.33527 and 20.000114 at 0.33528; f64:
   * 16 d + 32 (1 - (1 - d)^8) = 40, 39.999977 at 0.50698 and 40.000155 at
   * 0.50699. sparse_coo_dup's e = 2 d n: 24 d + 16 (1 - (1 - d)^16) = 20,
   * 19.999797 at 0.18969, 20.000146 at 0.18970 (f64: 32 d + ..., 39.999849
   * at 0.30465, 40.000370 at 0.30466) */
  double c = bc_model_crossover_pct(BC_SPARSE_COO, 0, N20);
  CHECK(c > 33.527 && c < 33.528);
  c = bc_model_crossover_pct(BC_SPARSE_COO, 1, N20);
  CHECK(c > 50.698 && c < 50.699);
  c = bc_model_crossover_pct(BC_SPARSE_COO_DUP, 0, N20);
  CHECK(c > 18.969 && c < 18.970);
  c = bc_model_crossover_pct(BC_SPARSE_COO_DUP, 1, N20);
  CHECK(c > 30.465 && c < 30.466);
  /* masked_dense streams everything once more than 1/32 of its 16-element
   * blocks hold a set mask byte, 1 - (1 - d)^16 > 1/32, that is past
   * d = 1 - (31/32)^(1/16) = 0.0019823: there its bytes jump from under
   * dense's (n + 5 T n / 32) to over (n + 5 T n) */
  c = bc_model_crossover_pct(BC_MASKED_DENSE, 0, N20);
  CHECK(c > 0.19823 && c < 0.19824);
  /* hybrid_coo f32 at n = 2^20: e whole rows of 1288 bytes against
   * 20 * 2^20 = 20971520: 16282 rows are 20971216 bytes, 16283 are
   * 20972504, so the crossover is 16283 / 16384 rows = 99.383544921875% */
  c = bc_model_crossover_pct(BC_HYBRID_COO, 0, N20);
  CHECK(fabs(c - 99.383544921875) < 1e-9);
  /* sgd with momentum on sparse_coo f32: 20 d + 8 (1 - (1 - d)^16) = 20,
   * 19.9999966 at d = 0.6 (0.4^16 = 4.3e-7), 20.0000166 at 0.600001 */
  c = bc_model_crossover_pct_opt(BC_OPT_SGD_MOMENTUM, BC_SPARSE_COO, 0, N20);
  CHECK(c > 60.0 && c < 60.0001);
}

TEST(sizes_fit_the_shapes_of_csr_and_hybrid_params) {
  /* CSR params are (n / 1024) x 1024, hybrid ones (n / 64) x 64; no path
   * takes an empty or negative size */
  CHECK(bc_size_ok(BC_SPARSE_CSR, 3 * 1024));
  CHECK(!bc_size_ok(BC_SPARSE_CSR, 3 * 1024 + 1));
  CHECK(!bc_size_ok(BC_SPARSE_CSR, 512));
  CHECK(bc_size_ok(BC_HYBRID_COO, 5 * 64));
  CHECK(!bc_size_ok(BC_HYBRID_COO, 5 * 64 + 32));
  CHECK(bc_size_ok(BC_SPARSE_COO, 1001));
  CHECK(bc_size_ok(BC_DENSE, 1));
  CHECK(!bc_size_ok(BC_DENSE, 0));
  CHECK(!bc_size_ok(BC_SPARSE_CSR, 0));
  CHECK(!bc_size_ok(BC_SPARSE_COO, -1024));
}

TEST(every_path_and_optimizer_name_parses_back_and_no_other) {
  /* each enum value's name parses to that value (the first, "dense", and
   * the last included); a name of neither table, a prefix or an empty
   * string is refused and leaves the output as it was */
  for (int p = 0; p < BC__COUNT; p++) {
    bc_path got = (bc_path)-1;
    CHECK_EQ_INT(bc_path_from_name(bc_path_name((bc_path)p), &got), 0);
    CHECK_EQ_INT(got, p);
  }
  for (int o = 0; o < BC_OPT__COUNT; o++) {
    bc_opt got = (bc_opt)-1;
    CHECK_EQ_INT(bc_opt_from_name(bc_opt_name((bc_opt)o), &got), 0);
    CHECK_EQ_INT(got, o);
  }
  CHECK(strcmp(bc_path_name(BC_DENSE), "dense") == 0);
  CHECK(strcmp(bc_opt_name(BC_OPT_SGD_MOMENTUM), "sgd_momentum") == 0);
  static const char *bad[] = {"", "sparse", "sparse_coo_", "Dense", "adagrad_dense", "sgd "};
  for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
    bc_path p = BC_HYBRID_COO;
    bc_opt o = BC_OPT_SGD;
    CHECK_EQ_INT(bc_path_from_name(bad[k], &p), -1);
    CHECK_EQ_INT(bc_opt_from_name(bad[k], &o), -1);
    CHECK(p == BC_HYBRID_COO && o == BC_OPT_SGD);
  }
  CHECK(strcmp(bc_path_name(BC__COUNT), "?") == 0);
}

MT_TEST_MAIN(T(dense_bytes_are_five_arrays_of_n), T(sparse_bytes_are_entries_and_touched_lines),
             T(optimizer_bytes_follow_their_table),
             T(the_crossover_is_where_the_sparse_bytes_reach_the_dense_bytes),
             T(the_crossovers_perf_readme_quotes),
             T(sizes_fit_the_shapes_of_csr_and_hybrid_params),
             T(every_path_and_optimizer_name_parses_back_and_no_other))

/* adagrad_cases.h - the data, the byte model, the correctness check and the
 * timed step of one Adagrad benchmark case (path x dtype x n x density),
 * shared by the Google Benchmark driver and the callgrind probe in
 * adagrad_bench.c. See perf/README.md for the byte model. */
#ifndef MTB_ADAGRAD_CASES_H
#define MTB_ADAGRAD_CASES_H

#include <stddef.h>
#include <stdint.h>

#include "adagrad_step.h"

typedef enum {
  BC_DENSE,
  BC_SPARSE_COO,
  BC_SPARSE_CSR,
  BC_MASKED_DENSE,
  BC_MASKED_SPARSE,
  BC_HYBRID_COO,
  BC_STREAM,
  BC_TOUCH, /* the sparse step's access pattern without its arithmetic */
  BC__COUNT
} bc_path;

/* "dense", "sparse_coo", ... (the path: segment; "stream" for the kernel) */
const char *bc_path_name(bc_path p);
int bc_path_from_name(const char *s, bc_path *out); /* 0 = found */

#define BC_CSR_COLS 1024 /* CSR params are (n / 1024) x 1024 */
#define BC_HYBRID_DIM 64 /* hybrid params are (n / 64) x 64 */

/* Param, state_sum and a dense grad of n elements (f32 or f64). */
typedef struct {
  int64_t n;
  int f64;
  void *p, *s, *g;
} bc_base;

/* One gradient of a path at a density (fraction in (0, 1]). Sparse
 * entries are sorted (coalesced); idx are linear element indices (row 1),
 * row indices (hybrid), or CSR col with crow. */
typedef struct {
  bc_path path;
  int f64;
  int64_t n;
  double density;
  int64_t entries;   /* index entries (COO/CSR nnz, hybrid rows); n for dense */
  int64_t specified; /* elements updated: entries * row; mask count */
  int64_t row;       /* elements per entry */
  int64_t rows, cols;
  int64_t *idx, *crow, *col;
  void *vals;
  uint8_t *mask;
} bc_grad;

/* Is n usable for path (CSR: a multiple of 1024, hybrid: of 64)? */
int bc_size_ok(bc_path path, int64_t n);

/* Allocation: 0 = ok, -1 = out of memory (message in why). Deterministic
 * from seed. bc_*_free accept zeroed structs. */
int bc_base_make(bc_base *b, int64_t n, int f64, uint64_t seed, char *why, size_t len);
void bc_base_free(bc_base *b);
int bc_grad_make(bc_grad *g, bc_path path, int f64, int64_t n, double density, uint64_t seed,
                 char *why, size_t len);
void bc_grad_free(bc_grad *g);

/* The hyper-parameters of every benchmark step (torch's defaults: lr 0.01,
 * eps 1e-10, step 1) with nthreads. */
mt_adagrad_hparams bc_hparams(int nthreads);

/* One in-place step of the fast kernel of g's path on b (g->path ==
 * BC_STREAM: the bandwidth kernel). */
mt_status bc_step(const bc_base *b, const bc_grad *g, int nthreads, mt_error *err);

/* The stream kernel's factor: p += g * BC_STREAM_K, s += g. */
#define BC_STREAM_K (-0.01)

/* The fast kernel of `path` on explicit arrays: p, s and the dense grad gd
 * of n elements, g's entries [0, entries) (rows: CSR rows). bc_step is this
 * on the whole of b and g. */
mt_status bc_step_on(bc_path path, int f64, void *p, void *s, const void *gd, int64_t n,
                     const bc_grad *g, int64_t entries, int64_t rows, int nthreads,
                     mt_error *err);

/* The prefix sub-problem the checks use: its first m elements (about 32k),
 * the grad entries [0, entries) that fall in them and, for CSR / hybrid,
 * rows rows (else 1). */
void bc_prefix(const bc_base *b, const bc_grad *g, int64_t *m, int64_t *entries, int64_t *rows);

/* 0 when p, s (m elements) equal the expected ep, eq bit for bit; else -1
 * with "<what> differs from <expected>: param[i] = v, <expected> e<ctx>"
 * in why, naming the first differing element (param first). */
int bc_compare(const void *p, const void *s, const void *ep, const void *eq, int64_t m, int f64,
               const char *what, const char *expected, const char *ctx, char *why, size_t len);

/* Runs the fast kernel and the reference op (mt_dispatch on the CPU
 * backend) on a prefix sub-problem of b/g (about 32k elements, copies) and
 * compares param and state_sum bit for bit; stream is compared with a plain
 * loop. 0 = identical; -1 with a message naming the first differing element.
 * *checked = elements compared. */
int bc_check(const bc_base *b, const bc_grad *g, int nthreads, int64_t *checked, char *why,
             size_t len);

/* The byte model (perf/README.md): bytes one step moves, and the density
 * (percent) at which the path's bytes equal the dense path's. */
double bc_model_bytes(bc_path path, int f64, int64_t n, double density, int64_t entries);
double bc_model_crossover_pct(bc_path path, int f64, int64_t n);

#endif /* MTB_ADAGRAD_CASES_H */

/* adagrad_cases.h - the data, the byte model, the correctness check and the
 * timed step of one Adagrad benchmark case (path x dtype x n x density),
 * shared by the Google Benchmark driver and the callgrind probe in
 * adagrad_bench.c. See perf/README.md for the byte model. */
#ifndef MTB_ADAGRAD_CASES_H
#define MTB_ADAGRAD_CASES_H

#include <stddef.h>
#include <stdint.h>

#include "adagrad_step.h"
#include "sparse_optim_step.h"

typedef enum {
  BC_DENSE,
  BC_SPARSE_COO,
  BC_SPARSE_CSR,
  BC_MASKED_DENSE,
  BC_MASKED_SPARSE,
  BC_HYBRID_COO,
  BC_STREAM,
  BC_TOUCH, /* the sparse step's access pattern without its arithmetic */
  BC_SPARSE_COO_DUP, /* an uncoalesced element COO grad: duplicates, input order */
  BC__COUNT
} bc_path;

/* "dense", "sparse_coo", ... (the path: segment; "stream" for the kernel) */
const char *bc_path_name(bc_path p);
int bc_path_from_name(const char *s, bc_path *out); /* 0 = found */

/* The optimizer a case steps (the name's first segment). Adagrad runs
 * every path; SparseAdam and sparse SGD (kernels/sparse_optim_step.h) the
 * sparse COO paths: sparse_coo (element entries) and hybrid_coo
 * (embedding rows x 64). sgd_momentum is SGD's steady-state step with a
 * momentum buffer on the grad's entries (bc_grad.buf). */
#define BC_OPTS(X)                                                                                 \
  X(ADAGRAD, "adagrad")                                                                            \
  X(SPARSE_ADAM, "sparse_adam")                                                                    \
  X(SGD, "sgd")                                                                                    \
  X(SGD_MOMENTUM, "sgd_momentum")
typedef enum {
#define BC_OPT_ENUM(id, name) BC_OPT_##id,
  BC_OPTS(BC_OPT_ENUM)
#undef BC_OPT_ENUM
  BC_OPT__COUNT
} bc_opt;
const char *bc_opt_name(bc_opt o);
int bc_opt_from_name(const char *s, bc_opt *out); /* 0 = found */
int bc_opt_path_ok(bc_opt o, bc_path p);          /* does o run path p? */

/* The benchmark steps' hyper-parameters (torch's defaults; SGD lr 0.01,
 * momentum 0.9). */
#define BC_ADAM_LR 1e-3
#define BC_ADAM_BETA1 0.9
#define BC_ADAM_BETA2 0.999
#define BC_ADAM_EPS 1e-8
#define BC_ADAM_STEP 1
#define BC_SGD_LR 0.01
#define BC_SGD_MOMENTUM 0.9
#define BC_SGD_DAMPENING 0.0

#define BC_CSR_COLS 1024 /* CSR params are (n / 1024) x 1024 */
/* A sparse_coo_dup grad: the distinct elements drawn as sparse_coo's (the
 * same seed: the same elements), each touched by BC_DUP_COPIES entries with
 * values of their own, the entries shuffled with a fixed seed (the input
 * order of an embedding backward's grad, not sorted). */
#define BC_DUP_COPIES 2
#define BC_HYBRID_DIM 64 /* hybrid params are (n / 64) x 64 */

/* Param, state_sum and a dense grad of n elements (f32 or f64). SparseAdam
 * uses s as exp_avg_sq and m (bc_base_need_m; NULL until then) as exp_avg,
 * both zeros at first like torch's state. */
typedef struct {
  int64_t n;
  int f64;
  void *p, *s, *g;
  void *m;
} bc_base;

/* One gradient of a path at a density (fraction in (0, 1]). Sparse
 * entries are sorted (coalesced); idx are linear element indices (row 1),
 * row indices (hybrid), or CSR col with crow. sparse_coo_dup: idx, vals are
 * the uncoalesced entries in input order (entries of them), uidx the
 * distinct elements sorted (specified of them) and cvals their coalesced
 * values (the reference's sums: the paired sparse_coo step's grad), dup the
 * CPU step's sort scratch (made with the grad, not per step). */
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
  bc_opt opt; /* the optimizer stepping it (bc_grad_set_opt; 0: Adagrad) */
  void *buf;  /* sgd_momentum: the momentum buffer's values on the entries
               * (entries * row, updated by each step) */
  int64_t *uidx; /* sparse_coo_dup */
  void *cvals;
  mt_adagrad_dup *dup;
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
/* A sparse_coo_dup grad of the given entries (copied; linear indices in
 * [0, n), any order, duplicates), for tests: 0 = ok, -1 with why. */
int bc_grad_dup_from(bc_grad *g, int f64, int64_t n, const int64_t *idx, const void *vals,
                     int64_t entries, char *why, size_t len);
/* The coalesced form of a sparse_coo_dup grad as a sparse_coo grad (a view
 * of g's uidx and cvals: the step it is paired with); any other grad as it
 * is. */
bc_grad bc_grad_coalesced(const bc_grad *g);
/* Bytes the CPU step of g allocates beyond its inputs (the sort's scratch
 * of sparse_coo_dup; 0 for the in-place steps). */
int64_t bc_grad_extra_bytes(const bc_grad *g);
/* The optimizer of g (sparse_coo or hybrid_coo grads for all but Adagrad).
 * sgd_momentum: allocates the buffer as torch's first step leaves it
 * (buf = grad.clone()), so that every timed step is the steady-state one.
 * 0 = ok; -1 with why. */
int bc_grad_set_opt(bc_grad *g, bc_opt opt, char *why, size_t len);
/* Allocates b->m (zeros) if absent: 0 = ok, -1 with why. */
int bc_base_need_m(bc_base *b, char *why, size_t len);

/* The hyper-parameters of every benchmark step (torch's defaults: lr 0.01,
 * eps 1e-10, step 1) with nthreads. */
mt_adagrad_hparams bc_hparams(int nthreads);

/* One in-place step of the fast kernel of g's path on b (g->path ==
 * BC_STREAM: the bandwidth kernel). */
mt_status bc_step(const bc_base *b, const bc_grad *g, int nthreads, mt_error *err);

/* The stream kernel's factor: p += g * BC_STREAM_K, s += g. */
#define BC_STREAM_K (-0.01)

/* ---- verification ----------------------------------------------------
 * A case is timed only after its kernel's first step on the case's whole
 * data has been compared, bit for bit, with the reference op (mt_dispatch on
 * the CPU backend: adagrad_dense / _sparse / _masked; a plain loop for
 * stream and touch). The reference runs on the elements the step updates
 * ("touched": every element for dense and stream, the set mask bytes for
 * masked_dense, the grad's entries otherwise), gathered into compact
 * problems of up to 1M elements (the ops are elementwise). The other
 * elements must keep their values: all of them when n <= BC_VERIFY_ALL_N
 * or the step touches at least half of them, else a seeded sample of one
 * element per n / BC_VERIFY_SAMPLE stratum plus the untouched neighbours
 * (i - 1, i + 1) of up to BC_VERIFY_SAMPLE touched elements (hybrid: rows),
 * spread evenly over them. */
#define BC_VERIFY_ALL_N ((int64_t)1 << 24) /* 16M */
#define BC_VERIFY_SAMPLE ((int64_t)1 << 16)
#define BC_VERIFY_SEED 0x76657269667921ull

/* What one step must leave in param and state_sum, computed before it. */
typedef struct {
  const bc_grad *g; /* the step's grad (not owned; must outlive this) */
  int f64;
  int64_t n;
  int all;          /* every element: ep, eq hold n elements */
  int64_t touched;  /* elements the step updates */
  int64_t n_sample; /* not all: untouched elements checked, positions in sample (sorted) */
  int64_t *sample;
  void *ep, *eq; /* all: n elements; else the touched ones (g's order), then the sample's */
  /* sparse_adam: exp_avg expected (em, laid out as ep) and the live array
   * checked (m_live = b->m); sgd_momentum: the buffer expected (eb, entries
   * x row) and live (b_live = g->buf). NULL otherwise. */
  void *em, *eb;
  const void *m_live, *b_live;
} bc_expect;

/* What a check compared: elements of param (and as many of state_sum),
 * how many of them the step updates, and whether that was every element. */
typedef struct {
  int64_t elements, touched;
  int all;
} bc_verified;

/* The expected values after one step of g's path from param p and
 * state_sum s (n elements each; the dense grad is b->g, the other
 * arrays of b are not read). all_max_n: BC_VERIFY_ALL_N (tests pass 0 to
 * get the sampled form at small n); seed: the sample's. 0 = ok; -1 with
 * why (the reference failed, out of memory). bc_expect_free accepts a
 * zeroed struct. */
int bc_expect_make(bc_expect *e, const void *p, const void *s, const bc_base *b, const bc_grad *g,
                   int64_t all_max_n, uint64_t seed, char *why, size_t len);
void bc_expect_free(bc_expect *e);
void bc_expect_summary(const bc_expect *e, bc_verified *v);

/* 0 when p and s (n elements: a kernel's output after the step) hold the
 * expected values bit for bit at every checked element; else -1 with
 * "<what> differs from <reference>: param[i] = v, expected x (an updated
 * element | an element the step must leave unchanged; ...)" in why, for the
 * first differing element (in g's order, then the sample's). */
int bc_verify(const bc_expect *e, const void *p, const void *s, const char *what, char *why,
              size_t len);

/* The untimed first step of a case, verified: expected values from b, one
 * step of the fast kernel in place on b with nthreads, bc_verify. 0 =
 * identical; -1 with the message. *v: what was compared. */
int bc_check(const bc_base *b, const bc_grad *g, int nthreads, bc_verified *v, char *why,
             size_t len);

/* The byte model (perf/README.md): bytes one step moves, and the density
 * (percent) at which the path's bytes equal the dense path's. */
double bc_model_bytes(bc_path path, int f64, int64_t n, double density, int64_t entries);
double bc_model_crossover_pct(bc_path path, int f64, int64_t n);
/* The same for any optimizer (Adagrad: the two above). The crossover is
 * against the optimizer's own dense step: SparseAdam 7 T n (p, m, v in and
 * out, g in), SGD 3 T n, SGD with momentum 5 T n. */
double bc_model_bytes_opt(bc_opt opt, bc_path path, int f64, int64_t n, double density,
                          int64_t entries);
double bc_model_crossover_pct_opt(bc_opt opt, bc_path path, int f64, int64_t n);

#endif /* MTB_ADAGRAD_CASES_H */

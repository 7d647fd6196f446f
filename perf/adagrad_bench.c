/* adagrad_bench.c - mtcs_bench: the C Adagrad kernels (perf/kernels/
 * adagrad_step.c) and the bandwidth reference kernel under Google Benchmark
 * (through mtb.h), plus a callgrind probe for the CI instruction-count check.
 *
 * Names (parsed by reports/; torch peers use impl:torch_<...> with the
 * same other segments):
 *   adagrad/impl:c/path:<path>/dev:<cpu1|cpuN|cuda>/dtype:<f32|f64>/n:<elements>/
 *     density:<percent %g>/cache:<warm|cold>
 *     (path sparse_coo_dup: an uncoalesced grad, BC_DUP_COPIES entries per element
 *     in input order; density: of the distinct elements)
 *   adagrad/impl:cusparse/path:sparse_coo/dev:cuda/...   (the cuSPARSE gather/scatter
 *     pipeline, kernels/adagrad_gs.cu: the fused step's baseline, listed with a device)
 *   stream/impl:c/dev:<cpu1|cpuN|cuda>/dtype:<f32|f64>/n:<elements>/cache:<warm|cold>
 *   touch/impl:c/dev:<cpu1|cpuN>/dtype:<f32|f64>/n:<elements>/density:<percent %g>/
 *     cache:<warm|cold>
 *   <sparse_adam|sgd|sgd_momentum>/impl:c/path:<sparse_coo|hybrid_coo>/dev:<cpu1|cpuN>/
 *     dtype:<f32|f64>/n:<elements>/density:<percent %g>/cache:<warm|cold>
 *   probe/impl:c/kind:<gap|random|entry>/dev:<cpu1|cpuN>/dtype:<f32|f64>/n:<elements>/
 *     gap:<lines %g>/cache:warm   (--paths=probe; the prefetch-aware model's probes)
 * Usage: mtcs_bench [--quick] [--sizes=1M,16M] [--dtypes=f32,f64]
 *   [--paths=dense,sparse_coo,...] [--opts=adagrad,sparse_adam,sgd,sgd_momentum]
 *   [--densities=0.1,1,100] [--devs=cpu1,cpuN,cuda]
 *   [--caches=warm,cold] [--no-pair] [--list]
 *   [--callgrind-probe=[<opt>/]<path>:<dtype>:<n>:<density>[,...]]
 *   [--benchmark_* flags of Google Benchmark]
 * Every case's first (untimed) step is checked bit for bit against the
 * reference op on the whole data (bc_check, bc_dev_check) before it is
 * timed; a mismatch reports error_occurred and the exit status is 1. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#ifdef _OPENMP
#include <omp.h>
#endif
#if defined(MTB_HAVE_CALLGRIND_H)
#include <valgrind/callgrind.h>
#endif

#include "adagrad_cases.h"
#include "adagrad_cases_cuda.h"
#include "mtb.h"
#include "probe.h"

#ifndef MTB_BUILD_TYPE
#define MTB_BUILD_TYPE "unknown"
#endif

/* ---- the selection ------------------------------------------------------- */

#define DEV_CUDA (-1) /* in options.threads: the CUDA device */
#define GPU_BIG_N ((int64_t)1 << 28) /* 256M: the GPU bandwidth target's size */
#define BC_DUP_MAX_DEFAULT_PCT 10.0  /* sparse_coo_dup's densities in the full default matrix */

#define MAX_LIST 16

typedef struct {
  int quick, list, no_pair;
  int64_t sizes[MAX_LIST];
  int n_sizes;
  int f64[2], n_dtypes;
  int paths[BC__COUNT], n_paths;
  int opts[BC_OPT__COUNT], n_opts;
  double dens[MAX_LIST]; /* percent */
  int n_dens;
  int threads[3], n_devs; /* 1, N (0) and/or DEV_CUDA */
  int default_sizes;      /* no --sizes: the device also gets 256M */
  int cold[2], n_caches;
  const char *probe;
  int64_t copy_bytes; /* the device copy-bandwidth measure's size (--copy-bytes; 0: 1 GiB) */
  int paths_set; /* --paths given */
  int dens_set;  /* --densities given */
  int probes;    /* the probe family (--paths=probe, or no --paths) */
} options;

/* "1M" = 1 << 20 elements, "64K", "16777216" */
static int parse_size(const char *s, int64_t *out) {
  char *end;
  errno = 0;
  long long v = strtoll(s, &end, 10);
  if (errno || end == s || v <= 0) return -1;
  int shift = 0;
  if (*end == 'K' || *end == 'k') shift = 10, end++;
  else if (*end == 'M' || *end == 'm') shift = 20, end++;
  else if (*end == 'G' || *end == 'g') shift = 30, end++;
  if (*end || v > (INT64_MAX >> shift)) return -1;
  *out = (int64_t)v << shift;
  return 0;
}

/* Splits v, a comma list, into items (copied to buf): the count, or -1 with
 * why said for an empty list, more than max items or a value longer than
 * buf (a cut list could end in a shorter valid item). */
static int split_list(const char *v, char *buf, size_t cap, char **items, int max, char *why,
                      size_t len) {
  if (strlen(v) >= cap) {
    snprintf(why, len, "longer than %zu characters", cap - 1);
    return -1;
  }
  snprintf(buf, cap, "%s", v);
  int n = 0;
  for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
    if (n == max) {
      snprintf(why, len, "more than %d values", max);
      return -1;
    }
    items[n++] = tok;
  }
  if (!n) snprintf(why, len, "no value");
  return n ? n : -1;
}

/* -1 (why says) when a[n - 1], just parsed from item, equals an earlier
 * value of a[0..n) bit for bit: a value given twice would list its cases
 * twice. Else 0. */
static int given_twice(const void *a, int n, size_t size, const char *item, char *why,
                       size_t len) {
  const unsigned char *p = a, *last = p + (size_t)(n - 1) * size;
  for (int j = 0; j < n - 1; j++)
    if (!memcmp(p + (size_t)j * size, last, size)) {
      snprintf(why, len, "'%s' given twice", item);
      return -1;
    }
  return 0;
}

/* A comma list of words from names[] (each meaning values[]) into out[]:
 * the count, or -1 (why says) on an unknown or repeated word. */
static int parse_words(const char *v, const char *const *names, const int *values, int n_names,
                       int *out, int max, char *why, size_t len) {
  char buf[512], *items[MAX_LIST];
  int n = split_list(v, buf, sizeof buf, items, max < MAX_LIST ? max : MAX_LIST, why, len);
  for (int i = 0; i < n; i++) {
    int k = 0;
    while (k < n_names && strcmp(items[i], names[k])) k++;
    if (k == n_names) {
      char *w = why;
      size_t left = len;
      int used = snprintf(w, left, "'%s' is none of", items[i]);
      for (int j = 0; j < n_names && used >= 0 && (size_t)used < left; j++)
        w += used, left -= (size_t)used, used = snprintf(w, left, " %s", names[j]);
      return -1;
    }
    out[i] = values[k];
    if (given_twice(out, i + 1, sizeof *out, items[i], why, len)) return -1;
  }
  return n;
}

/* One of our options into o: 0, 1 when arg is not ours, -1 (why says) when
 * it is ours and bad. */
static int parse_opt(options *o, const char *arg, char *why, size_t len) {
  char buf[512], *items[MAX_LIST];
  int n;
#define VAL(flag) (strncmp(arg, flag "=", sizeof flag) == 0 ? arg + sizeof flag : NULL)
  const char *v;
  if (strcmp(arg, "--quick") == 0) {
    o->quick = 1;
    return 0;
  }
  if (strcmp(arg, "--list") == 0) {
    o->list = 1;
    return 0;
  }
  if (strcmp(arg, "--no-pair") == 0) {
    o->no_pair = 1;
    return 0;
  }
  if ((v = VAL("--callgrind-probe"))) {
    o->probe = v;
    return 0;
  }
  if ((v = VAL("--copy-bytes"))) {
    if (parse_size(v, &o->copy_bytes)) {
      snprintf(why, len, "'%s' is not a size in bytes (K, M, G: powers of 1024)", v);
      return -1;
    }
    return 0;
  }
  if ((v = VAL("--sizes"))) {
    if ((n = split_list(v, buf, sizeof buf, items, MAX_LIST, why, len)) < 0) return -1;
    for (int i = 0; i < n; i++)
      if (parse_size(items[i], &o->sizes[i])) {
        snprintf(why, len, "'%s' is not a size (a positive integer, K, M or G: 1024, 1024^2, "
                           "1024^3 times, up to 2^63 - 1)", items[i]);
        return -1;
      } else if (given_twice(o->sizes, i + 1, sizeof *o->sizes, items[i], why, len)) {
        return -1;
      }
    o->n_sizes = n;
    return 0;
  }
  if ((v = VAL("--dtypes"))) {
    static const char *const names[] = {"f32", "f64"};
    static const int f64[] = {0, 1};
    return (o->n_dtypes = parse_words(v, names, f64, 2, o->f64, 2, why, len)) < 0 ? -1 : 0;
  }
  if ((v = VAL("--paths"))) {
    if ((n = split_list(v, buf, sizeof buf, items, MAX_LIST, why, len)) < 0) return -1;
    o->n_paths = 0;
    o->paths_set = 1;
    o->probes = 0; /* the last --paths holds */
    int got[MAX_LIST]; /* each item's path, BC__COUNT for "probe" */
    for (int i = 0; i < n; i++) {
      bc_path p = BC__COUNT;
      if (strcmp(items[i], "probe") != 0 && bc_path_from_name(items[i], &p)) {
        snprintf(why, len, "'%s' is not a path (perf/README.md, Names)", items[i]);
        return -1;
      }
      got[i] = p;
      if (given_twice(got, i + 1, sizeof *got, items[i], why, len)) return -1;
      if (p == BC__COUNT)
        o->probes = 1;
      else
        o->paths[o->n_paths++] = p; /* distinct: at most BC__COUNT */
    }
    return 0;
  }
  if ((v = VAL("--opts"))) {
    if ((n = split_list(v, buf, sizeof buf, items, BC_OPT__COUNT, why, len)) < 0) return -1;
    for (int i = 0; i < n; i++) {
      bc_opt op;
      if (bc_opt_from_name(items[i], &op)) {
        snprintf(why, len, "'%s' is not an optimizer", items[i]);
        return -1;
      }
      o->opts[i] = op;
      if (given_twice(o->opts, i + 1, sizeof *o->opts, items[i], why, len)) return -1;
    }
    o->n_opts = n;
    return 0;
  }
  if ((v = VAL("--densities"))) {
    if ((n = split_list(v, buf, sizeof buf, items, MAX_LIST, why, len)) < 0) return -1;
    o->dens_set = 1;
    for (int i = 0; i < n; i++) {
      char *end;
      double d = strtod(items[i], &end);
      if (end == items[i] || *end || !(d > 0 && d <= 100)) {
        snprintf(why, len, "'%s' is not a density (a percentage in (0, 100])", items[i]);
        return -1;
      }
      o->dens[i] = d;
      if (given_twice(o->dens, i + 1, sizeof *o->dens, items[i], why, len)) return -1;
    }
    o->n_dens = n;
    return 0;
  }
  if ((v = VAL("--devs"))) {
    static const char *const names[] = {"cpu1", "cpuN", "cuda"};
    static const int threads[] = {1, 0 /* all */, DEV_CUDA};
    return (o->n_devs = parse_words(v, names, threads, 3, o->threads, 3, why, len)) < 0 ? -1 : 0;
  }
  if ((v = VAL("--caches"))) {
    static const char *const names[] = {"warm", "cold"};
    static const int cold[] = {0, 1};
    return (o->n_caches = parse_words(v, names, cold, 2, o->cold, 2, why, len)) < 0 ? -1 : 0;
  }
#undef VAL
  return 1; /* not ours */
}

static void defaults(options *o) {
  static const double full_d[] = {0.01, 0.1, 1, 10, 30, 50, 100}, quick_d[] = {0.1, 1, 10, 100};
  if (!o->n_sizes) {
    o->default_sizes = 1;
    if (o->quick)
      o->sizes[o->n_sizes++] = 1 << 20;
    else
      o->sizes[0] = 1 << 20, o->sizes[1] = 1 << 24, o->sizes[2] = 1 << 26, o->n_sizes = 3;
  }
  if (!o->n_dtypes) {
    o->f64[o->n_dtypes++] = 0;
    if (!o->quick) o->f64[o->n_dtypes++] = 1;
  }
  if (!o->paths_set) o->probes = 1;
  if (!o->n_paths && !o->paths_set) {
    static const bc_path order[] = {BC_STREAM,        BC_DENSE,        BC_SPARSE_COO,
                                    BC_TOUCH,         BC_SPARSE_CSR,   BC_MASKED_DENSE,
                                    BC_MASKED_SPARSE, BC_HYBRID_COO,   BC_SPARSE_COO_DUP};
    for (int i = 0; i < BC__COUNT; i++) o->paths[o->n_paths++] = order[i];
  }
  if (!o->n_opts)
    for (int i = 0; i < BC_OPT__COUNT; i++) o->opts[o->n_opts++] = i;
  if (!o->n_dens) {
    const double *d = o->quick ? quick_d : full_d;
    int n = o->quick ? 4 : 7;
    for (int i = 0; i < n; i++) o->dens[o->n_dens++] = d[i];
  }
  if (!o->n_devs) o->threads[0] = 1, o->threads[1] = 0, o->threads[2] = DEV_CUDA, o->n_devs = 3;
  if (!o->n_caches) {
    o->cold[o->n_caches++] = 0;
    o->cold[o->n_caches++] = 1; /* quick: cold only for dense and stream (below) */
  }
}

/* ---- the process context ------------------------------------------------- */

typedef struct bench_ctx bench_ctx;

/* One registered benchmark. */
typedef struct {
  bc_path path;
  bc_opt opt; /* the optimizer (adagrad for stream, touch) */
  int f64, threads, cold;
  int cuda; /* on the device (threads unused) */
  int gs;   /* device sparse_coo through the cuSPARSE gather/scatter pipeline
             * (impl:cusparse): the baseline of the fused step (impl:c) */
  int64_t n;
  double dens_pct;
  int probe;           /* a probe case (kind, gap; path unused) */
  mt_probe_kind kind;
  double gap;          /* lines (random: the mean gap) */
  int in_cache;        /* the in-cache entry probe (PROBE_ENTRY_N; no pair) */
  char name[192];
  bench_ctx *cx;
  /* its first step passed the check (on data made from the same seeds):
   * a later run of the case (a repetition, maybe interleaved with other
   * cases) steps once untimed and is not checked again */
  int passed;
  bc_verified ver;
  int runs; /* prepared so far (the progress line counts the first ones) */
} bcase;

struct bench_ctx {
  bc_base base;
  bc_grad grad;
  int have_base, have_grad;
  const bcase *current; /* prepared case */
  int current_ok;
  bc_verified verified; /* by the prepared case's first step */
  const bcase *checked; /* the last case whose check passed, on the current data */
  char msg[512];
  unsigned char *evict;
  size_t evict_bytes;
  int max_threads, n_cases, prepared, errors;
  int pair; /* time each case's pair step too (--no-pair: 0) */
  bc_dev *dev; /* device copies of base and grad (dev:cuda cases) */
  int dev_ok;  /* a usable device: bc_dev_probe */
  char dev_info[256];
  /* the probe cases' data (probe_prepare): own p and s, the pattern's
   * entries; the paired stream step runs on base */
  void *pp, *ps, *pvals;
  int64_t *pidx, pn, pm, plines;
};

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Last-level cache size: /sys (what this core sees), else sysconf, else
 * 64 MiB (sysconf reports the whole package on some VMs). */
static size_t llc_bytes(void) {
  for (int i = 0; i < 8; i++) {
    char path[96], buf[64];
    snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/level", i);
    FILE *f = fopen(path, "r");
    if (!f) continue;
    int level = fgets(buf, sizeof buf, f) ? atoi(buf) : 0;
    fclose(f);
    if (level != 3) continue;
    snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/size", i);
    if (!(f = fopen(path, "r"))) continue;
    size_t v = 0;
    if (fgets(buf, sizeof buf, f)) {
      char *end;
      v = (size_t)strtoull(buf, &end, 10);
      if (*end == 'K') v <<= 10;
      else if (*end == 'M') v <<= 20;
    }
    fclose(f);
    if (v) return v;
  }
  long v = sysconf(_SC_LEVEL3_CACHE_SIZE);
  return v > 0 ? (size_t)v : (size_t)64 << 20;
}

/* Streams through 2 x LLC with every thread (each core's private caches and
 * the shared LLC lose the benchmark's lines). */
static void evict(bench_ctx *cx) {
  int64_t lines = (int64_t)(cx->evict_bytes / 64);
  unsigned char *b = cx->evict;
#ifdef _OPENMP
#pragma omp parallel for schedule(static) num_threads(cx->max_threads)
#endif
  for (int64_t i = 0; i < lines; i++) b[i * 64] += 1;
}

static double peak_rss(void) {
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  return (double)ru.ru_maxrss * 1024.0;
}

static uint64_t case_seed(const bcase *c) {
  /* touch draws sparse_coo's entries: the same access pattern; sparse_coo_dup
   * its elements (the step it is paired with runs on them) */
  uint64_t path = c->path == BC_TOUCH || c->path == BC_SPARSE_COO_DUP ? BC_SPARSE_COO : c->path;
  return 0x6d74637362656e63ull ^ (path << 56) ^ ((uint64_t)c->f64 << 48) ^
         (uint64_t)c->n ^ (uint64_t)(c->dens_pct * 1e4) << 20;
}

/* Data for c (reused while consecutive cases share it), the reference
 * check, one untimed step. Sets cx->current_ok / cx->msg. */
static void prepare(bench_ctx *cx, bcase *c) {
  double t0 = now();
  cx->current = c;
  cx->current_ok = 0;
  cx->msg[0] = '\0';
  if (c->cuda && !cx->dev_ok) { /* the row says so; dev_info has the reason */
    snprintf(cx->msg, sizeof cx->msg, "no device");
    goto done;
  }
  if (!cx->have_base || cx->base.n != c->n || cx->base.f64 != c->f64) {
    bc_grad_free(&cx->grad);
    bc_base_free(&cx->base);
    cx->have_grad = cx->have_base = 0;
    cx->checked = NULL;
    if (bc_base_make(&cx->base, c->n, c->f64, 0x1234u + (uint64_t)c->n, cx->msg, sizeof cx->msg))
      goto done;
    cx->have_base = 1;
  }
  double d = c->dens_pct / 100.0;
  if (!cx->have_grad || cx->grad.path != c->path || cx->grad.f64 != c->f64 ||
      cx->grad.n != c->n || cx->grad.density != d || cx->grad.opt != c->opt) {
    bc_grad_free(&cx->grad);
    cx->have_grad = 0;
    cx->checked = NULL;
    if (bc_grad_make(&cx->grad, c->path, c->f64, c->n, d, case_seed(c), cx->msg, sizeof cx->msg) ||
        bc_grad_set_opt(&cx->grad, c->opt, cx->msg, sizeof cx->msg))
      goto done;
    cx->have_grad = 1;
  }
  if (c->opt == BC_OPT_SPARSE_ADAM && bc_base_need_m(&cx->base, cx->msg, sizeof cx->msg)) goto done;
  /* the untimed first step, verified against the reference op, unless the
   * case before ran the same kernel (path, threads, device) on the same
   * data and passed: the cold case after its warm one */
  double t1 = now();
  /* a device case is loaded and checked again: its device copy may hold
   * another case's data by now */
  const bcase *k = c->passed && !c->cuda ? c : cx->checked;
  if (k && k->path == c->path && k->opt == c->opt && k->f64 == c->f64 && k->n == c->n &&
      k->dens_pct == c->dens_pct && k->threads == c->threads && k->cuda == c->cuda &&
      k->gs == c->gs) {
    mt_error err = {0};
    double sec;
    if ((c->cuda ? bc_dev_step(cx->dev, c->path, c->gs, &sec, &err)
                 : bc_step(&cx->base, &cx->grad, c->threads, &err)) != MT_OK) {
      snprintf(cx->msg, sizeof cx->msg, "step failed: %.400s", err.msg);
      cx->errors++;
      goto done;
    }
    cx->current_ok = 1;
    if (k != c) c->ver = k->ver, c->passed = 1;
    snprintf(cx->msg, sizeof cx->msg, "verified by %s", k == c ? "its first run" : k->name);
    goto done;
  }
  cx->checked = NULL;
  if (c->cuda ? bc_dev_load(&cx->dev, &cx->base, &cx->grad, cx->msg, sizeof cx->msg) ||
                    bc_dev_check(cx->dev, &cx->base, &cx->grad, c->gs, &cx->verified, cx->msg,
                                 sizeof cx->msg)
              : bc_check(&cx->base, &cx->grad, c->threads, &cx->verified, cx->msg,
                         sizeof cx->msg)) {
    cx->errors++;
    goto done;
  }
  cx->current_ok = 1;
  cx->checked = c;
  c->passed = 1;
  c->ver = cx->verified;
  snprintf(cx->msg, sizeof cx->msg, "verified %lld elements%s, %lld updated (%.2f s)",
           (long long)cx->verified.elements, cx->verified.all ? " (all)" : "",
           (long long)cx->verified.touched, now() - t1);
done:
  if (!c->runs++) cx->prepared++;
  fprintf(stderr, "[%d/%d%s] %s: %s (setup %.2f s)\n", cx->prepared, cx->n_cases,
          c->runs > 1 ? ", again" : "", c->name, cx->msg,
          now() - t0);
}

/* The paired step: the path a case's ratio target compares it with (see
 * perf/README.md, "Paired ratios"); BC__COUNT for none. SparseAdam and
 * sparse SGD pair with Adagrad's dense step (the matrix's dense path). */
static bc_path pair_of(bc_opt o, bc_path p) {
  if (o != BC_OPT_ADAGRAD) return BC_DENSE;
  switch (p) {
  case BC_DENSE: return BC_STREAM;
  case BC_SPARSE_COO:
  case BC_SPARSE_CSR:
  case BC_MASKED_DENSE:
  case BC_HYBRID_COO: return BC_DENSE;
  case BC_MASKED_SPARSE: return BC_SPARSE_COO; /* on the same entries */
  case BC_SPARSE_COO_DUP: return BC_SPARSE_COO; /* on its coalesced grad: the cost of coalescing */
  case BC_TOUCH: return BC_SPARSE_COO;         /* the step it is the pattern of */
  default: return BC__COUNT;
  }
}

/* One step of g's path for case c, in seconds: wall time on the CPU (after
 * an eviction for cold cases), event time on the device (the cuSPARSE
 * pipeline for an impl:cusparse case's own path, not for its pair). */
static double timed_step(bench_ctx *cx, const bcase *c, const bc_grad *g, mt_status *s,
                         mt_error *err) {
  if (c->cuda) {
    double sec = 0;
    *s |= bc_dev_step(cx->dev, g->path, c->gs && g->path == c->path, &sec, err);
    return sec;
  }
  if (c->cold) evict(cx);
  double t0 = now();
  *s |= bc_step(&cx->base, g, c->threads, err);
  return now() - t0;
}

static void bm_case(mtb_state *st, void *user) {
  bcase *c = user;
  bench_ctx *cx = c->cx;
  if (cx->current != c) prepare(cx, c);
  if (!cx->current_ok) {
    mtb_skip(st, cx->msg);
    return;
  }
  mt_error err = {0};
  mt_status s = MT_OK;
  /* The pair runs interleaved with the case, on the same param and state
   * (a shallow copy of the grad: dense and stream read the base's dense
   * grad; sparse_coo reads masked_sparse's entries, or sparse_coo_dup's
   * coalesced grad). It runs when its total time is behind the case's (at
   * least 3 times), so the two totals stay about equal and a cheap case is
   * not drowned by a dense pair. */
  bc_grad pg = bc_grad_coalesced(&cx->grad);
  pg.path = cx->pair ? pair_of(c->opt, c->path) : BC__COUNT;
  pg.opt = BC_OPT_ADAGRAD;
  if (c->cuda && !bc_dev_path_ok(pg.path)) pg.path = BC__COUNT;
  double tc = 0, tp = 0;
  int64_t np = 0;
  while (mtb_loop(st)) {
    double t = timed_step(cx, c, &cx->grad, &s, &err);
    mtb_set_iteration_time(st, t);
    tc += t;
    if (pg.path != BC__COUNT && (np < 3 || tp < tc)) {
      tp += timed_step(cx, c, &pg, &s, &err);
      np++;
    }
  }
  if (s != MT_OK) {
    mtb_skip(st, err.msg);
    return;
  }
  const bc_grad *g = &cx->grad;
  int64_t it = mtb_iterations(st);
  if (np > 0 && it > 0 && tc > 0) {
    double per_pair = tp / (double)np, per_case = tc / (double)it;
    mtb_counter(st, "pair_time_ns", per_pair * 1e9, MTB_COUNTER_PLAIN);
    mtb_counter(st, "pair_ratio", per_pair / per_case, MTB_COUNTER_PLAIN);
    mtb_counter(st, "pair_steps", (double)np, MTB_COUNTER_PLAIN);
  }
  double bytes = bc_model_bytes_opt(c->opt, c->path, c->f64, c->n, g->density, g->entries);
  mtb_set_bytes_processed(st, (int64_t)(bytes * (double)it));
  mtb_set_items_processed(st, g->specified * it);
  mtb_counter(st, "elements", (double)c->n, MTB_COUNTER_PLAIN);
  mtb_counter(st, "nnz", (double)g->specified, MTB_COUNTER_PLAIN);
  mtb_counter(st, "entries", (double)g->entries, MTB_COUNTER_PLAIN);
  if (!c->cuda)
    mtb_counter(st, "threads", (double)mt_adagrad_threads(c->threads), MTB_COUNTER_PLAIN);
  mtb_counter(st, "model_bytes", bytes, MTB_COUNTER_PLAIN);
  /* in place, no temporaries; sparse_coo_dup: its sort's scratch, made once per grad */
  mtb_counter(st, "extra_bytes",
              (double)(c->cuda ? bc_dev_extra_bytes(cx->dev) : bc_grad_extra_bytes(g)),
              MTB_COUNTER_PLAIN);
  mtb_counter(st, "peak_rss_bytes", peak_rss(), MTB_COUNTER_PLAIN);
  /* what the first step's check compared (perf/README.md, "Method") */
  mtb_counter(st, "verified_elements", (double)c->ver.elements, MTB_COUNTER_PLAIN);
  mtb_counter(st, "verified_touched", (double)c->ver.touched, MTB_COUNTER_PLAIN);
  mtb_counter(st, "verified_all", (double)c->ver.all, MTB_COUNTER_PLAIN);
  if (c->path != BC_DENSE && c->path != BC_STREAM)
    mtb_counter(st, "model_crossover_density",
                bc_model_crossover_pct_opt(c->opt, c->path, c->f64, c->n), MTB_COUNTER_PLAIN);
  mtb_label(st, c->cuda                     ? "cuda"
                : c->opt != BC_OPT_ADAGRAD ? mt_sparse_optim_isa_name(MT_ADAGRAD_ISA_AUTO)
                                           : mt_adagrad_isa_name(MT_ADAGRAD_ISA_AUTO));
}

static void case_name(bcase *c, int max_threads) {
  /* stream has no path or density segment; touch no path segment */
  const char *fam = c->path == BC_STREAM  ? "stream"
                    : c->path == BC_TOUCH ? "touch"
                                          : bc_opt_name(c->opt);
  char dev[16], path[48] = "", dens[32] = "";
  if (c->cuda)
    snprintf(dev, sizeof dev, "cuda");
  else
    snprintf(dev, sizeof dev, "cpu%d", c->threads == 1 ? 1 : max_threads);
  if (c->path != BC_STREAM && c->path != BC_TOUCH)
    snprintf(path, sizeof path, "/path:%s", bc_path_name(c->path));
  if (c->path != BC_STREAM) snprintf(dens, sizeof dens, "/density:%g", c->dens_pct);
  snprintf(c->name, sizeof c->name, "%s/impl:%s%s/dev:%s/dtype:%s/n:%lld%s/cache:%s", fam,
           c->gs ? "cusparse" : "c", path, dev, c->f64 ? "f64" : "f32", (long long)c->n, dens,
           c->cold ? "cold" : "warm");
}

static int enumerate_probes(const options *o, int si, int ti, int max_threads, bcase *out,
                            int n);

/* The cases of the selection, in run order: cases sharing data are
 * adjacent (size, dtype, path, density; then dev, cache). The device gets
 * the paths it runs (bc_dev_path_ok), warm cache only, and with the default
 * sizes 256M too; without a usable device (dev_ok 0) only its stream and
 * dense rows are listed, each reporting "no device". Returns the count; out
 * may be NULL to count. */
static int enumerate(const options *o, int max_threads, int dev_ok, bcase *out) {
  int n = 0;
  int64_t sizes[MAX_LIST + 1];
  int n_sizes = o->n_sizes;
  memcpy(sizes, o->sizes, sizeof o->sizes);
  int gpu_extra = o->default_sizes && !o->quick && dev_ok;
  if (gpu_extra) sizes[n_sizes++] = GPU_BIG_N;
  for (int si = 0; si < n_sizes; si++)
    for (int ti = 0; ti < o->n_dtypes; ti++) {
      for (int oi = 0; oi < o->n_opts; oi++)
      for (int pi = 0; pi < o->n_paths; pi++) {
        bc_path path = (bc_path)o->paths[pi];
        bc_opt opt = (bc_opt)o->opts[oi];
        if (!bc_size_ok(path, sizes[si])) continue;
        /* stream and touch are Adagrad's references: listed once */
        if (path == BC_STREAM || path == BC_TOUCH ? oi != 0 : !bc_opt_path_ok(opt, path))
          continue;
        int dense_like = path == BC_DENSE || path == BC_STREAM;
        for (int di = 0; di < (dense_like ? 1 : o->n_dens); di++)
          for (int vi = 0; vi < o->n_devs; vi++) {
            int threads = o->threads[vi], cuda = threads == DEV_CUDA;
            if (threads == 0 && max_threads == 1) continue; /* cpuN would be cpu1 again */
            /* --quick: SparseAdam and SGD on one thread only (the smoke's budget) */
            if (o->quick && opt != BC_OPT_ADAGRAD && path != BC_STREAM && path != BC_TOUCH &&
                threads != 1)
              continue;
            /* --quick: the coalescing step not on cpuN (its CPU sort is serial); the
             * full default matrix runs it up to 10% only (an embedding grad's range:
             * at 64M, 50% one step sorts 67M entries), --densities as given */
            if (path == BC_SPARSE_COO_DUP &&
                ((o->quick && threads == 0) ||
                 (!o->quick && !o->dens_set && o->dens[di] > BC_DUP_MAX_DEFAULT_PCT)))
              continue;
            if (!cuda && gpu_extra && si == n_sizes - 1) continue; /* 256M: device only */
            if (cuda && (opt != BC_OPT_ADAGRAD || !bc_dev_path_ok(path) || (!dev_ok && !dense_like)))
              continue;
            /* device sparse_coo: the fused step (c) and the cuSPARSE pipeline */
            int n_gs = cuda && dev_ok && path == BC_SPARSE_COO ? 2 : 1;
            for (int ci = 0; ci < o->n_caches; ci++)
            for (int gs = 0; gs < n_gs; gs++) {
              if (o->cold[ci] && ((o->quick && !dense_like) || cuda)) continue;
              if (out) {
                bcase *c = &out[n];
                memset(c, 0, sizeof *c);
                c->path = path;
                c->opt = path == BC_STREAM || path == BC_TOUCH ? BC_OPT_ADAGRAD : opt;
                c->f64 = o->f64[ti];
                c->n = sizes[si];
                c->dens_pct = dense_like ? 100.0 : o->dens[di];
                c->cuda = cuda;
                c->gs = gs;
                c->threads = cuda ? 1 : threads == 0 ? max_threads : 1;
                c->cold = o->cold[ci];
                case_name(c, max_threads);
              }
              n++;
            }
          }
      }
      if (!(gpu_extra && si == n_sizes - 1)) n = enumerate_probes(o, si, ti, max_threads, out, n);
    }
  return n;
}

/* ---- the probe family (perf/README.md, "Byte model"; kernels/probe.h) ---- */

/* The gaps (lines) of the probes. gap: one element every gap lines; random:
 * Bernoulli lines at 1 / gap (1 is the same as gap's 1, so it starts
 * above). --quick keeps what reports/model.py needs: every random gap and
 * the entry probes, and four gap probes to show the prefetch distance. */
static const double PROBE_GAPS[] = {1, 2, 3, 4, 6, 8, 12, 16, 32, 64};
static const double PROBE_GAPS_QUICK[] = {1, 4, 16, 64};
static const double PROBE_RANDOM[] = {1.25, 1.5, 2, 3, 4, 6, 8, 12, 16, 32, 64, 128};
/* entry: k = 2, 4, 8 (and 16, f32) entries on every line; in cache only every element */
static const double PROBE_ENTRY[] = {0.5, 0.25, 0.125, 0.0625};
#define PROBE_ENTRY_N ((int64_t)1 << 16) /* in cache: p, s, idx, vals ~1.3 MiB (f32) */
#define PROBE_MIN_N ((int64_t)1 << 24)   /* 16M: reports/model.py judges n >= 16M */
#define PROBE_VAL 0x1p-10                /* every entry's value: exact in f32 and f64 */
#define NELEM(a) ((int)(sizeof(a) / sizeof *(a)))

static void probe_name(bcase *c, int max_threads) {
  snprintf(c->name, sizeof c->name,
           "probe/impl:c/kind:%s/dev:cpu%d/dtype:%s/n:%lld/gap:%g/cache:warm",
           mt_probe_kind_name(c->kind), c->threads == 1 ? 1 : max_threads,
           c->f64 ? "f64" : "f32", (long long)c->n, c->gap);
}

/* The probe cases of one (size, dtype) of the selection, warm only, after
 * its other cases (appended at out[n], out may be NULL): gap, random, the
 * entry probes at the size, and with the first size probed the every-element
 * entry probe in cache (PROBE_ENTRY_N, unless that is a selected size).
 * Sizes under PROBE_MIN_N get none when the selection has a bigger one.
 * Returns the new count. */
static int enumerate_probes(const options *o, int si, int ti, int max_threads, bcase *out,
                            int n) {
  int warm = 0;
  for (int ci = 0; ci < o->n_caches; ci++) warm |= !o->cold[ci];
  if (!o->probes || !warm) return n;
  const double *gaps = o->quick ? PROBE_GAPS_QUICK : PROBE_GAPS;
  int n_gaps = o->quick ? NELEM(PROBE_GAPS_QUICK) : NELEM(PROBE_GAPS);
  /* the model is judged where the data is out of cache: only the sizes of at
   * least PROBE_MIN_N when the selection has one (the default's 16M and 64M) */
  int big = 0, first = -1;
  for (int k = 0; k < o->n_sizes; k++) big |= o->sizes[k] >= PROBE_MIN_N;
  if (big && o->sizes[si] < PROBE_MIN_N) return n;
  for (int k = 0; k < o->n_sizes && first < 0; k++)
    if (!big || o->sizes[k] >= PROBE_MIN_N) first = k;
  int in_cache = si == first;
  for (int k = 0; k < o->n_sizes; k++) in_cache &= o->sizes[k] != PROBE_ENTRY_N;
  for (int vi = 0; vi < o->n_devs; vi++) {
    int threads = o->threads[vi];
    if (threads == DEV_CUDA || (threads == 0 && max_threads == 1)) continue;
    for (int kind = 0; kind < 4; kind++) {
      int n_entry = NELEM(PROBE_ENTRY) - o->f64[ti]; /* f64: 8 per line at most */
      int count = kind == MT_PROBE_GAP      ? n_gaps
                  : kind == MT_PROBE_RANDOM ? NELEM(PROBE_RANDOM)
                  : kind == MT_PROBE_ENTRY  ? n_entry + in_cache
                                            : in_cache; /* math: in cache only */
      for (int k = 0; k < count; k++, n++) {
        if (!out) continue;
        bcase *c = &out[n];
        memset(c, 0, sizeof *c);
        c->probe = 1;
        c->path = BC__COUNT;
        c->kind = (mt_probe_kind)kind;
        c->in_cache = (kind == MT_PROBE_ENTRY && k == n_entry) || kind == MT_PROBE_MATH;
        c->gap = kind == MT_PROBE_GAP      ? gaps[k]
                 : kind == MT_PROBE_RANDOM ? PROBE_RANDOM[k]
                 : c->in_cache             ? PROBE_ENTRY[n_entry - 1] /* every element */
                                           : PROBE_ENTRY[k];
        c->f64 = o->f64[ti];
        c->n = c->in_cache ? PROBE_ENTRY_N : o->sizes[si];
        c->threads = threads == 0 ? max_threads : 1;
        probe_name(c, max_threads);
      }
    }
  }
  return n;
}

static void probe_free(bench_ctx *cx) {
  free(cx->pp);
  free(cx->ps);
  free(cx->pvals);
  free(cx->pidx);
  cx->pp = cx->ps = cx->pvals = NULL;
  cx->pidx = NULL;
  cx->pn = cx->pm = 0;
}

/* p and s of the probe (n elements: p = 1, s = 0.5, as bits exact) and the
 * pattern's entries; base (the paired stream step's data) at c's size
 * unless the in-cache entry probe. Checks the first, untimed step on every
 * element: an entry's p and s updated exactly as documented (s + v, p + v k
 * in the dtype), every other element unchanged. Sets cx->current_ok, cx->msg. */
static double probe_step(bench_ctx *cx, const bcase *c);

static void probe_prepare(bench_ctx *cx, bcase *c) {
  double t0 = now();
  size_t es = c->f64 ? 8 : 4;
  cx->current = c;
  cx->current_ok = 0;
  cx->checked = NULL;
  probe_free(cx);
  if (!c->in_cache &&
      (!cx->have_base || cx->base.n != c->n || cx->base.f64 != c->f64)) {
    bc_grad_free(&cx->grad);
    bc_base_free(&cx->base);
    cx->have_grad = cx->have_base = 0;
    if (bc_base_make(&cx->base, c->n, c->f64, 0x1234u + (uint64_t)c->n, cx->msg, sizeof cx->msg))
      goto done;
    cx->have_base = 1;
  }
  int64_t cap = mt_probe_max_count(c->kind, c->n, (int)es, c->gap);
  size_t bytes = ((size_t)c->n * es + 63) / 64 * 64;
  if (posix_memalign(&cx->pp, 64, bytes) || posix_memalign(&cx->ps, 64, bytes) ||
      !(cx->pidx = malloc((size_t)(cap ? cap : 1) * sizeof *cx->pidx)) ||
      !(cx->pvals = malloc((size_t)(cap ? cap : 1) * es))) {
    snprintf(cx->msg, sizeof cx->msg, "out of memory for the probe (n %lld)", (long long)c->n);
    goto done;
  }
  cx->pm = mt_probe_indices(c->kind, c->n, (int)es, c->gap, case_seed(c) ^ (uint64_t)(c->gap * 64),
                            cx->pidx);
  cx->pn = c->n;
  if (cx->pm < 1) {
    snprintf(cx->msg, sizeof cx->msg, "the probe pattern is empty (n %lld, gap %g)",
             (long long)c->n, c->gap);
    goto done;
  }
  cx->plines = mt_probe_lines(cx->pidx, cx->pm, (int)es);
  for (int64_t i = 0; i < c->n; i++) {
    if (c->f64) ((double *)cx->pp)[i] = 1.0, ((double *)cx->ps)[i] = 0.5;
    else ((float *)cx->pp)[i] = 1.0f, ((float *)cx->ps)[i] = 0.5f;
  }
  for (int64_t k = 0; k < cx->pm; k++) {
    if (c->f64) ((double *)cx->pvals)[k] = PROBE_VAL;
    else ((float *)cx->pvals)[k] = (float)PROBE_VAL;
  }
  probe_step(cx, c);
  if (c->passed) { /* the same data from the same seed: checked on its first run */
    cx->current_ok = 1;
    snprintf(cx->msg, sizeof cx->msg, "checked by its first run");
    goto done;
  }
  int math = c->kind == MT_PROBE_MATH; /* s + v v exact; p moved (its value not checked) */
  int64_t changed = 0;
  for (int64_t k = 0, j = 0; k < c->n; k++) { /* every element: updated iff in the pattern */
    int in = j < cx->pm && cx->pidx[j] == k;
    int ok;
    if (c->f64) {
      double p = ((double *)cx->pp)[k], s = ((double *)cx->ps)[k];
      ok = !in ? p == 1.0 && s == 0.5
           : math ? p != 1.0 && s == 0.5 + PROBE_VAL * PROBE_VAL
                  : p == 1.0 + PROBE_VAL * BC_STREAM_K && s == 0.5 + PROBE_VAL;
    } else {
      float p = ((float *)cx->pp)[k], s = ((float *)cx->ps)[k];
      float v = (float)PROBE_VAL;
      ok = !in ? p == 1.0f && s == 0.5f
           : math ? p != 1.0f && s == 0.5f + v * v
                  : p == 1.0f + v * (float)BC_STREAM_K && s == 0.5f + v;
    }
    if (!ok) {
      snprintf(cx->msg, sizeof cx->msg, "probe check: element %lld (%s) has the wrong value",
               (long long)k, in ? "an entry" : "not an entry");
      cx->errors++;
      goto done;
    }
    changed += in;
    j += in;
  }
  cx->current_ok = 1;
  c->passed = 1;
  snprintf(cx->msg, sizeof cx->msg, "checked all %lld elements, %lld entries on %lld lines",
           (long long)c->n, (long long)changed, (long long)cx->plines);
done:
  if (!c->runs++) cx->prepared++;
  fprintf(stderr, "[%d/%d%s] %s: %s (setup %.2f s)\n", cx->prepared, cx->n_cases,
          c->runs > 1 ? ", again" : "", c->name, cx->msg, now() - t0);
}

static double probe_step(bench_ctx *cx, const bcase *c) {
  double t0 = now();
  if (c->kind == MT_PROBE_MATH && c->f64)
    mt_probe_math_step_f64(cx->pp, cx->ps, cx->pidx, cx->pvals, cx->pm, c->threads);
  else if (c->kind == MT_PROBE_MATH)
    mt_probe_math_step_f32(cx->pp, cx->ps, cx->pidx, cx->pvals, cx->pm, c->threads);
  else if (c->f64)
    mt_probe_step_f64(cx->pp, cx->ps, cx->pidx, cx->pvals, cx->pm, BC_STREAM_K, c->threads,
                      MT_ADAGRAD_ISA_AUTO);
  else
    mt_probe_step_f32(cx->pp, cx->ps, cx->pidx, cx->pvals, cx->pm, (float)BC_STREAM_K,
                      c->threads, MT_ADAGRAD_ISA_AUTO);
  return now() - t0;
}

/* A probe: its steps, with the stream kernel on base at the same size and
 * threads interleaved as its pair (pair_ratio = stream time / probe time;
 * not for the in-cache entry probe). Counters: lines_touched, entries,
 * bytes (the probe's model bytes: entries * (8 + T) + lines * 4 * 64, p and
 * s lines read and written back), seconds_per_line. */
static void bm_probe(mtb_state *st, void *user) {
  bcase *c = user;
  bench_ctx *cx = c->cx;
  if (cx->current != c) probe_prepare(cx, c);
  if (!cx->current_ok) {
    mtb_skip(st, cx->msg);
    return;
  }
  bc_grad sg;
  memset(&sg, 0, sizeof sg);
  sg.path = BC_STREAM;
  sg.opt = BC_OPT_ADAGRAD;
  sg.f64 = c->f64;
  sg.n = c->n;
  int pair = cx->pair && !c->in_cache;
  mt_error err = {0};
  mt_status s = MT_OK;
  double tc = 0, tp = 0;
  int64_t np = 0;
  while (mtb_loop(st)) {
    double t = probe_step(cx, c);
    mtb_set_iteration_time(st, t);
    tc += t;
    if (pair && (np < 3 || tp < tc)) {
      double t0 = now();
      s |= bc_step(&cx->base, &sg, c->threads, &err);
      tp += now() - t0;
      np++;
    }
  }
  if (s != MT_OK) {
    mtb_skip(st, err.msg);
    return;
  }
  int64_t it = mtb_iterations(st);
  double es = c->f64 ? 8 : 4, bytes = (double)cx->pm * (8 + es) + (double)cx->plines * 256.0;
  if (np > 0 && it > 0 && tc > 0) {
    mtb_counter(st, "pair_time_ns", tp / (double)np * 1e9, MTB_COUNTER_PLAIN);
    mtb_counter(st, "pair_ratio", (tp / (double)np) / (tc / (double)it), MTB_COUNTER_PLAIN);
    mtb_counter(st, "pair_steps", (double)np, MTB_COUNTER_PLAIN);
  }
  mtb_set_bytes_processed(st, (int64_t)(bytes * (double)it));
  mtb_set_items_processed(st, cx->pm * it);
  mtb_counter(st, "elements", (double)c->n, MTB_COUNTER_PLAIN);
  mtb_counter(st, "entries", (double)cx->pm, MTB_COUNTER_PLAIN);
  mtb_counter(st, "lines_touched", (double)cx->plines, MTB_COUNTER_PLAIN);
  mtb_counter(st, "model_bytes", bytes, MTB_COUNTER_PLAIN);
  mtb_counter(st, "threads", (double)mt_adagrad_threads(c->threads), MTB_COUNTER_PLAIN);
  if (it > 0)
    mtb_counter(st, "seconds_per_line", tc / (double)it / (double)cx->plines, MTB_COUNTER_PLAIN);
  mtb_label(st, mt_adagrad_isa_name(MT_ADAGRAD_ISA_AUTO));
}

/* ---- callgrind probe ------------------------------------------------------ */

/* The one step callgrind measures (not inlined, so that
 * --toggle-collect=mtb_probe_step works without callgrind.h). */
__attribute__((noinline)) mt_status mtb_probe_step(const bc_base *b, const bc_grad *g,
                                                   mt_error *err) {
#if defined(MTB_HAVE_CALLGRIND_H)
  CALLGRIND_TOGGLE_COLLECT;
#endif
  mt_status st = bc_step(b, g, 1, err);
#if defined(MTB_HAVE_CALLGRIND_H)
  CALLGRIND_TOGGLE_COLLECT;
#endif
  return st;
}

/* [<opt>/]<path>:<dtype>:<n>:<density percent>: setup + one untimed step,
 * then exactly one measured warm step, serial: one call of mtb_probe_step
 * per probe, which perf/callgrind_check.sh dumps after (--dump-after).
 * run 0: only the spec's check (2 when it is bad, else 0). */
static int probe(const char *spec, int run) {
  char buf[128], *f[4];
  snprintf(buf, sizeof buf, "%s", spec);
  /* the fields; 5 for 5 or more, or a spec longer than buf (refused) */
  int k = strlen(spec) < sizeof buf ? 0 : 5;
  for (char *save = NULL, *tok = strtok_r(buf, ":", &save); tok && k < 5;
       tok = strtok_r(NULL, ":", &save))
    if (k++ < 4) f[k - 1] = tok;
  bc_path path;
  bc_opt opt = BC_OPT_ADAGRAD;
  int64_t n;
  char *end = NULL;
  double dens = k == 4 ? strtod(f[3], &end) : 0;
  if (k == 4 && (end == f[3] || *end)) dens = 0; /* "1x": not a density */
  char *slash = k == 4 ? strchr(f[0], '/') : NULL; /* <opt>/<path> */
  if (slash) {
    *slash = '\0';
    if (bc_opt_from_name(f[0], &opt)) k = 0;
    f[0] = slash + 1;
  }
  if (k != 4 || bc_path_from_name(f[0], &path) || !bc_opt_path_ok(opt, path) || (strcmp(f[1], "f32") && strcmp(f[1], "f64")) ||
      parse_size(f[2], &n) || !(dens > 0 && dens <= 100) || !bc_size_ok(path, n)) {
    fprintf(stderr, "mtcs_bench: bad --callgrind-probe=%s (want [<opt>/]<path>:<f32|f64>:<n>:<density%%>)\n",
            spec);
    return 2;
  }
  if (!run) return 0;
  int f64 = strcmp(f[1], "f64") == 0;
  bc_base b;
  bc_grad g;
  char why[256];
  mt_error err = {0};
  int rc = 1;
  memset(&b, 0, sizeof b);
  memset(&g, 0, sizeof g);
  if (bc_base_make(&b, n, f64, 0x1234u + (uint64_t)n, why, sizeof why) ||
      bc_grad_make(&g, path, f64, n, dens / 100.0, 42, why, sizeof why) ||
      bc_grad_set_opt(&g, opt, why, sizeof why) ||
      (opt == BC_OPT_SPARSE_ADAM && bc_base_need_m(&b, why, sizeof why))) {
    fprintf(stderr, "mtcs_bench: %s\n", why);
    goto done;
  }
  rc = 0;
  if (bc_step(&b, &g, 1, &err) != MT_OK || mtb_probe_step(&b, &g, &err) != MT_OK) {
    fprintf(stderr, "mtcs_bench: step failed: %s\n", err.msg);
    rc = 1;
  }
  printf("probe opt=%s path=%s dtype=%s n=%lld density=%g entries=%lld specified=%lld isa=%s\n",
         bc_opt_name(opt), bc_path_name(path), f64 ? "f64" : "f32", (long long)n, dens, (long long)g.entries,
         (long long)g.specified,
         opt == BC_OPT_ADAGRAD ? mt_adagrad_isa_name(MT_ADAGRAD_ISA_AUTO)
                               : mt_sparse_optim_isa_name(MT_ADAGRAD_ISA_AUTO));
done:
  bc_grad_free(&g);
  bc_base_free(&b);
  return rc;
}

/* ---- main ------------------------------------------------------------------ */

static const char USAGE[] =
    "mtcs_bench - the Adagrad (and SparseAdam, sparse SGD) steps under Google Benchmark\n"
    "\n"
    "usage: mtcs_bench [options] [--benchmark_* flags of Google Benchmark]\n"
    "  --quick               the CI smoke's matrix (small sizes, fewer densities)\n"
    "  --sizes=1M,16M        param sizes (K, M, G suffixes: powers of 2)\n"
    "  --dtypes=f32,f64      element types\n"
    "  --paths=dense,sparse_coo,sparse_csr,masked_dense,masked_sparse,hybrid_coo,stream,touch,\n"
    "          sparse_coo_dup,probe\n"
    "                        sparse_coo_dup: an uncoalesced grad (2 entries per element,\n"
    "                        in input order), coalesced inside the step\n"
    "  --opts=adagrad,sparse_adam,sgd,sgd_momentum\n"
    "  --densities=0.1,1,100 percent of the elements the grad holds (sparse paths)\n"
    "  --devs=cpu1,cpuN,cuda one thread, all threads, the CUDA device (with a device,\n"
    "                        sparse_coo runs twice: the fused step, impl:c, and the\n"
    "                        cuSPARSE gather/scatter pipeline, impl:cusparse)\n"
    "  --caches=warm,cold    cold: the caches evicted before each CPU step\n"
    "  --no-pair             do not time each case's paired step (its ratio target)\n"
    "  --copy-bytes=1G       the device copy-bandwidth measure's size (with a device)\n"
    "  --list                print the selected cases' names and exit\n"
    "  --callgrind-probe=[<opt>/]<path>:<dtype>:<n>:<density>[,...]\n"
    "                        one step under callgrind (perf/callgrind_check.sh), for\n"
    "                        each spec of the list in turn\n"
    "Every case's first step is checked bit for bit against the reference op\n"
    "before it is timed; a mismatch is an error row and exit status 1. A bad\n"
    "option (an unknown word, a value given twice, a bad size or density) is\n"
    "exit status 2 with the reason, before anything runs.\n"
    "Names, methods and the report: perf/README.md. Google Benchmark's flags:\n"
    "--benchmark_help.\n";

int main(int argc, char **argv) {
  for (int i = 1; i < argc; i++)
    if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
      fputs(USAGE, stdout);
      return 0;
    }
  options o;
  memset(&o, 0, sizeof o);
  /* our flags out, the rest (argv[0] + --benchmark_*) for Google Benchmark */
  char **rest = calloc((size_t)argc + 2, sizeof *rest);
  int n_rest = 0, reps = 1;
  const char *user_min_time = NULL; /* --benchmark_min_time's value */
  if (!rest) return 1;
  rest[n_rest++] = argv[0];
  for (int i = 1; i < argc; i++) {
    char why[256] = "not an option of mtcs_bench or Google Benchmark";
    int r = parse_opt(&o, argv[i], why, sizeof why);
    /* not ours: Google Benchmark's only (it would run the cases anyway) */
    if (r > 0 && strncmp(argv[i], "--benchmark_", 12) != 0 && strcmp(argv[i], "--v") != 0 &&
        strncmp(argv[i], "--v=", 4) != 0)
      r = -1;
    if (r < 0) {
      fprintf(stderr, "mtcs_bench: bad option %s (%s; try --help)\n", argv[i], why);
      free(rest);
      return 2;
    }
    if (r > 0) {
      if (strncmp(argv[i], "--benchmark_min_time=", 21) == 0) user_min_time = argv[i] + 21;
      if (strncmp(argv[i], "--benchmark_repetitions=", 24) == 0) reps = atoi(argv[i] + 24);
      rest[n_rest++] = argv[i];
    }
  }
  if (o.probe) { /* each spec of the comma-separated list, in order, in this process */
    /* every spec checked before any runs: a bad one late in the list must
     * not cost the runs before it, nor leave their dumps behind */
    int rc = 0, specs = 0;
    for (int run = 0; run < 2 && rc != 2; run++) {
      char *list = strdup(o.probe); /* whole: a cut list could end in a shorter valid spec */
      if (!list) {
        fprintf(stderr, "mtcs_bench: out of memory\n");
        rc = 1;
        break;
      }
      for (char *save = NULL, *spec = strtok_r(list, ",", &save); spec && rc != 2;
           spec = strtok_r(NULL, ",", &save)) {
        int r = probe(spec, run);
        specs++;
        if (r > rc) rc = r;
      }
      free(list);
    }
    if (!specs) {
      fprintf(stderr, "mtcs_bench: bad option --callgrind-probe=%s (no spec; try --help)\n",
              o.probe);
      rc = 2;
    }
    free(rest);
    return rc;
  }
  defaults(&o);
  /* the manual time counts the case's steps only; a paired case takes
   * about twice its min_time of wall time. With --benchmark_repetitions=N
   * each repetition gets 1/N of it (and of a cold case's budget), so that
   * the run takes about as long as one repetition did. */
  if (reps < 1) reps = 1;
  double budget = (o.quick ? 0.05 : 0.25) / reps;
  char min_time[64], min_time_ctx[128];
  snprintf(min_time, sizeof min_time, "--benchmark_min_time=%g", budget);
  /* one decision for what Google Benchmark gets and what the context says */
  int ours = !user_min_time;
  if (ours) {
    rest[n_rest++] = min_time; /* after the user's flags: Google Benchmark takes the last */
    snprintf(min_time_ctx, sizeof min_time_ctx, "%g (default: %g s over %d repetition%s)", budget,
             o.quick ? 0.05 : 0.25, reps, reps > 1 ? "s" : "");
  } else {
    snprintf(min_time_ctx, sizeof min_time_ctx, "%.64s (--benchmark_min_time)", user_min_time);
  }

  bench_ctx cx;
  memset(&cx, 0, sizeof cx);
  cx.max_threads = mt_adagrad_threads(0);
  cx.pair = !o.no_pair;
  cx.dev_ok = bc_dev_probe(cx.dev_info, sizeof cx.dev_info) == 0;
  cx.n_cases = enumerate(&o, cx.max_threads, cx.dev_ok, NULL);
  bcase *cases = calloc((size_t)cx.n_cases + 1, sizeof *cases);
  if (!cases) return 1;
  enumerate(&o, cx.max_threads, cx.dev_ok, cases);
  if (o.list || !cx.n_cases) {
    for (int i = 0; i < cx.n_cases; i++) printf("%s\n", cases[i].name);
    if (!o.list) /* a run of nothing is a selection mistake, not a success */
      fprintf(stderr, "mtcs_bench: the selection holds no case (size rules, the device's "
                      "paths and warm-only rows, or --caches=cold with only probes can drop "
                      "every one; --list shows what is selected)\n");
    free(cases);
    free(rest);
    return o.list ? 0 : 2;
  }

  cx.evict_bytes = 2 * llc_bytes();
  cx.evict = malloc(cx.evict_bytes);
  if (!cx.evict) return 1;
  memset(cx.evict, 1, cx.evict_bytes);

  for (int i = 0; i < cx.n_cases; i++) {
    bcase *c = &cases[i];
    c->cx = &cx;
    mtb_bench *b = mtb_register(c->name, c->probe ? bm_probe : bm_case, c);
    if (c->cold) {
      /* fixed iterations: each pays an eviction (about 2 x LLC of traffic)
       * outside the timed step; aim at ~0.25 s of steps (0.05 s quick) at
       * a nominal 8 GB/s, 3..30 iterations */
      double bytes = bc_model_bytes_opt(c->opt, c->path, c->f64, c->n, c->dens_pct / 100.0,
                                    (int64_t)((double)c->n * c->dens_pct / 100.0));
      double t = bytes / 8e9 + 2e-6;
      int64_t it = (int64_t)(budget / t);
      mtb_fixed_iterations(mtb_flags(b, MTB_MANUAL_TIME), it < 3 ? 3 : it > 30 ? 30 : it);
    } else {
      mtb_flags(b, MTB_MANUAL_TIME); /* the case's steps, not its pair's */
    }
    mtb_unit(b, MTB_US);
  }

  char v[64];
  mtb_context("mtcs_isa", mt_adagrad_isa_name(MT_ADAGRAD_ISA_AUTO));
  snprintf(v, sizeof v, "%d", cx.max_threads);
  mtb_context("mtcs_threads_max", v);
#ifdef _OPENMP
  mtb_context("mtcs_openmp", "yes");
#else
  mtb_context("mtcs_openmp", "no");
#endif
  snprintf(v, sizeof v, "%zu", cx.evict_bytes / 2);
  mtb_context("mtcs_llc_bytes", v);
  snprintf(v, sizeof v, "%zu", cx.evict_bytes);
  mtb_context("mtcs_evict_bytes", v);
  mtb_context("mtcs_build_type", MTB_BUILD_TYPE);
  mtb_context("mtcs_selection", o.quick ? "quick" : "full");
  mtb_context("mtcs_min_time", min_time_ctx); /* each case's own steps, seconds */
  mtb_context("mtcs_cuda", cx.dev_ok ? cx.dev_info : "no device");
  if (!cx.dev_ok) mtb_context("mtcs_cuda_why", cx.dev_info);
  if (cx.dev_ok) {
    size_t copy = o.copy_bytes ? (size_t)o.copy_bytes : (size_t)1 << 30;
    snprintf(v, sizeof v, "%.4g", bc_dev_copy_bandwidth(copy));
    mtb_context("mtcs_cuda_copy_bytes_per_second", v); /* memcpy D2D, read + write */
    snprintf(v, sizeof v, "%zu", copy);
    mtb_context("mtcs_cuda_copy_bytes", v);
  }
  mtb_context("mtcs_pairs", cx.pair ? "dense:stream sparse_coo:dense sparse_csr:dense "
                                      "masked_dense:dense hybrid_coo:dense "
                                      "masked_sparse:sparse_coo touch:sparse_coo sparse_coo_dup:sparse_coo "
                                      "sparse_adam,sgd,sgd_momentum:adagrad dense"
                                    : "none (--no-pair)");
  snprintf(v, sizeof v, "%lld", (long long)BC_VERIFY_ALL_N);
  mtb_context("mtcs_verify_all_max_n", v);
  mtb_context("mtcs_verify",
              "first step of every case vs the reference op, bit for bit, on the whole data: "
              "every updated element; every other element unchanged when n <= "
              "mtcs_verify_all_max_n or >= half are updated, else a seeded sample (one per "
              "n/65536 stratum + untouched neighbours of up to 65536 updated elements); "
              "counters verified_elements, verified_touched, verified_all");
  mtb_context("mtcs_byte_model", "perf/README.md: dense 5*T*n; sparse per entry 8+T, "
                                 "p and s lines 4*T*n*(1-(1-d)^(64/T))");

  double t0 = now();
  int rc = mtb_main(n_rest, rest);
  fprintf(stderr, "mtcs_bench: %d cases in %.1f s, %d failed verification\n", cx.n_cases,
          now() - t0, cx.errors);
  bc_dev_free(cx.dev);
  probe_free(&cx);
  bc_grad_free(&cx.grad);
  bc_base_free(&cx.base);
  free(cx.evict);
  free(cases);
  free(rest);
  return rc ? rc : cx.errors ? 1 : 0;
}

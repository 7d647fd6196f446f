/* mtb.h - a small C API over Google Benchmark (>= 1.7), so that the
 * benchmarks of mtcs are written in C.
 *
 *   static void bm_copy(mtb_state *st, void *user) {
 *     struct buf *b = user;
 *     if (!b->data) { mtb_skip(st, "no data"); return; }
 *     while (mtb_loop(st)) memcpy(b->dst, b->src, b->n);
 *     mtb_set_bytes_processed(st, 2 * b->n * mtb_iterations(st));
 *     mtb_counter(st, "n", (double)b->n, MTB_COUNTER_PLAIN);
 *   }
 *   int main(int argc, char **argv) {
 *     mtb_register("copy/n:4096", bm_copy, &buf);
 *     return mtb_main(argc, argv);
 *   }
 *
 * A benchmark function may be called several times per benchmark (Google
 * Benchmark grows the iteration count until the minimum time is reached):
 * keep setup idempotent and cheap on repeat calls.
 *
 * Load: every run also reports the counters load_others (runnable tasks
 * other than this process's at the run's start, from /proc/stat's
 * procs_running) and load1 (/proc/loadavg), read before the benchmark
 * function is called; absent where /proc is. reports/render.py leaves a run
 * that had a neighbour out of its targets.
 *
 * Names: a benchmark is reported under exactly the name it was registered
 * with (plus "/<arg>" per argument): mtb_main strips the "/real_time",
 * "/manual_time", "/iterations:N", "/min_time:X" and "/repeats:N" segments
 * Google Benchmark would append, so that names stay a clean key:value path.
 *
 * The handles are opaque: an mtb_state is the running benchmark::State, an
 * mtb_bench the registered benchmark. Nothing here keeps global mutable
 * state beyond Google Benchmark's own registry. */
#ifndef MTB_H
#define MTB_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct mtb_state mtb_state; /* a running benchmark */
typedef struct mtb_bench mtb_bench; /* a registered benchmark */
typedef void (*mtb_fn)(mtb_state *st, void *user);

/* Registration flags (mtb_flags). */
enum {
  MTB_REAL_TIME = 1u << 0,        /* iteration count and rates from wall time */
  MTB_MANUAL_TIME = 1u << 1,      /* time = sum of mtb_set_iteration_time */
  MTB_PROCESS_CPU_TIME = 1u << 2, /* cpu_time of all threads of the process */
};

/* Time units for reporting (mtb_unit). */
enum { MTB_NS = 0, MTB_US = 1, MTB_MS = 2, MTB_S = 3 };

/* Counter flags (mtb_counter). */
enum {
  MTB_COUNTER_PLAIN = 0,          /* reported as given */
  MTB_COUNTER_RATE = 1u << 0,     /* divided by the measured time: per second */
  MTB_COUNTER_PER_ITER = 1u << 1, /* divided by the iteration count */
  MTB_COUNTER_1024 = 1u << 2,     /* k/M/G are powers of 1024 in the console */
};

/* ---- registration -------------------------------------------------------- */
/* Registers fn under name (copied); user is passed to every call and must
 * outlive mtb_main. Returns the benchmark for the setters below (which
 * return it again, for chaining), or NULL when name or fn is NULL. */
mtb_bench *mtb_register(const char *name, mtb_fn fn, void *user);
/* Adds one argument tuple (n values); each tuple is a separate benchmark
 * named "<name>/<a0>/<a1>...". Read them with mtb_arg. */
mtb_bench *mtb_args(mtb_bench *b, const int64_t *args, int n);
mtb_bench *mtb_flags(mtb_bench *b, unsigned flags);
/* Fixed iteration count (instead of growing to the minimum time). */
mtb_bench *mtb_fixed_iterations(mtb_bench *b, int64_t n);
mtb_bench *mtb_min_time(mtb_bench *b, double seconds);
mtb_bench *mtb_repetitions(mtb_bench *b, int n);
mtb_bench *mtb_unit(mtb_bench *b, int unit);

/* A key/value pair for the "context" block of the JSON output. */
void mtb_context(const char *key, const char *value);

/* ---- inside a benchmark ------------------------------------------------- */
/* while (mtb_loop(st)) { ...one iteration... }  Nonzero while iterations
 * remain; 0 at once after mtb_skip. */
int mtb_loop(mtb_state *st);
int64_t mtb_arg(const mtb_state *st, int i);
/* Iterations run so far (after the loop: all of them). */
int64_t mtb_iterations(const mtb_state *st);
/* Exclude setup inside the loop from the timing. */
void mtb_pause(mtb_state *st);
void mtb_resume(mtb_state *st);
/* MTB_MANUAL_TIME: the duration of this iteration, measured by the caller
 * (e.g. with CUDA events). */
void mtb_set_iteration_time(mtb_state *st, double seconds);
/* A user counter in the report (name copied). */
void mtb_counter(mtb_state *st, const char *name, double value, unsigned flags);
/* Total bytes / items over all iterations: reported as bytes_per_second /
 * items_per_second. */
void mtb_set_bytes_processed(mtb_state *st, int64_t bytes);
void mtb_set_items_processed(mtb_state *st, int64_t items);
void mtb_label(mtb_state *st, const char *label);
/* Marks the benchmark as failed/skipped with msg (reported as
 * error_occurred + error_message); call before the loop or break out of it
 * after. */
void mtb_skip(mtb_state *st, const char *msg);
int mtb_skipped(const mtb_state *st);

/* ---- running ------------------------------------------------------------ */
/* Initializes Google Benchmark from argv (its --benchmark_* flags), runs
 * the selected benchmarks, shuts down. Returns 0, or 1 on an unknown
 * argument. */
int mtb_main(int argc, char **argv);

#ifdef __cplusplus
}
#endif
#endif /* MTB_H */

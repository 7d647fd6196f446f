/* probe.h - probe kernels for the prefetch-aware byte model (perf/README.md,
 * "Byte model"; reports/model.py). Each probe is the sparse step's access
 * pattern (the touch kernel, mt_touch_step_*: per entry s[i] = s[i] + v;
 * p[i] = p[i] + v * k, with the sparse step's batching, software prefetch
 * and threading) on a synthetic index pattern that isolates one cost:
 *
 *   MT_PROBE_GAP     element 0 of every gap-th 64-byte line (lines 0, gap,
 *                    2 gap, ...): the time per touched line against gap shows
 *                    the prefetch distance (skipped lines fetched anyway at
 *                    small gaps, a separate miss per line at large ones)
 *   MT_PROBE_RANDOM  one element per line, each line drawn independently
 *                    with probability 1 / gap (gap = the mean gap in lines,
 *                    >= 1), the element within the line drawn too: the
 *                    sparse paths' Bernoulli pattern with one entry per line,
 *                    i.e. random-line bandwidth at that line density
 *   MT_PROBE_ENTRY   k = 1 / gap entries on every line, gap < 1 a fraction
 *                    of a line (gap * 64 / elsize elements apart: gap 1/L is
 *                    every element): the cost of the entries beyond a line's
 *                    first; on an in-cache array, their instruction cost
 *
 * Lines are 64-byte lines of p and s (both arrays are assumed 64-byte
 * aligned); elsize is 4 (f32) or 8 (f64), so a line holds 64 / elsize
 * elements. Index lists are sorted, unique and < n. */
#ifndef MT_PROBE_H
#define MT_PROBE_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum { MT_PROBE_GAP, MT_PROBE_RANDOM, MT_PROBE_ENTRY, MT_PROBE_MATH } mt_probe_kind;

/* "gap", "random", "entry", "math" (MATH: ENTRY's pattern, stepped by
 * mt_probe_math_step_*: the arithmetic's cost against ENTRY in cache) */
const char *mt_probe_kind_name(mt_probe_kind kind);

/* The size idx must have: mt_probe_indices' count for GAP, ENTRY and MATH,
 * the number of lines for RANDOM (its most: every line drawn); 0 for bad
 * arguments. */
int64_t mt_probe_max_count(mt_probe_kind kind, int64_t n, int elsize, double gap);

/* Writes the pattern's sorted element indices into idx (NULL: count only)
 * and returns their count; -1 for bad arguments (an unknown kind, n < 1,
 * elsize not 4 or 8; GAP: gap an integer from 1 to 1e12; RANDOM: gap from 1
 * to 1e12; ENTRY and MATH: gap * 64 / elsize an integer from 1 to
 * 64 / elsize). Deterministic from seed (RANDOM only). */
int64_t mt_probe_indices(mt_probe_kind kind, int64_t n, int elsize, double gap, uint64_t seed,
                         int64_t *idx);

/* The distinct 64-byte lines (of one array) that m sorted indices touch. */
int64_t mt_probe_lines(const int64_t *idx, int64_t m, int elsize);

/* One probe step: the touch kernel on the m entries (idx, vals); isa as
 * the Adagrad steps' (MT_ADAGRAD_ISA_AUTO = 0), nthreads <= 0 all. */
void mt_probe_step_f32(float *p, float *s, const int64_t *idx, const float *vals, int64_t m,
                       float k, int nthreads, int isa);
void mt_probe_step_f64(double *p, double *s, const int64_t *idx, const double *vals, int64_t m,
                       double k, int nthreads, int isa);

/* The MATH probe's step: the sparse Adagrad step itself (mt_adagrad_step_coo,
 * lr 0.01, eps 1e-10, step 1: s = s + v v, p = p - clr v / (sqrt(s) + eps)) on
 * the m entries, so that its time minus the touch step's is the arithmetic. */
int mt_probe_math_step_f32(float *p, float *s, const int64_t *idx, const float *vals, int64_t m,
                           int nthreads);
int mt_probe_math_step_f64(double *p, double *s, const int64_t *idx, const double *vals,
                           int64_t m, int nthreads);

#ifdef __cplusplus
}
#endif

#endif

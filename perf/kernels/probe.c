/* probe.c - the probe kernels' index patterns (probe.h). The step itself is
 * the touch kernel of adagrad_step.c, so that a probe costs exactly what the
 * sparse step's memory access costs on its pattern. */
#include "probe.h"

#include <math.h>

#include "adagrad_step.h"

const char *mt_probe_kind_name(mt_probe_kind kind) {
  switch (kind) {
  case MT_PROBE_GAP: return "gap";
  case MT_PROBE_RANDOM: return "random";
  case MT_PROBE_ENTRY: return "entry";
  case MT_PROBE_MATH: return "math";
  }
  return "?";
}

static uint64_t splitmix(uint64_t *x) {
  uint64_t z = (*x += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

/* ENTRY: the stride in elements, gap * 64 / elsize (0 if not an integer
 * in [1, 64 / elsize]) */
static int64_t entry_stride(double gap, int elsize) {
  double s = gap * (double)(64 / elsize);
  if (!(s >= 1) || s > 64 / elsize || s != floor(s)) return 0;
  return (int64_t)s;
}

static int bad_args(mt_probe_kind kind, int64_t n, int elsize, double gap) {
  if ((unsigned)kind > MT_PROBE_MATH || n < 1 || (elsize != 4 && elsize != 8)) return 1;
  if (kind == MT_PROBE_ENTRY || kind == MT_PROBE_MATH) return entry_stride(gap, elsize) == 0;
  if (!(gap >= 1) || gap > 1e12) return 1;
  return kind == MT_PROBE_GAP && gap != floor(gap);
}

int64_t mt_probe_max_count(mt_probe_kind kind, int64_t n, int elsize, double gap) {
  if (bad_args(kind, n, elsize, gap)) return 0;
  int64_t per_line = 64 / elsize, lines = (n + per_line - 1) / per_line;
  if (kind == MT_PROBE_ENTRY || kind == MT_PROBE_MATH) {
    int64_t stride = entry_stride(gap, elsize);
    return (n + stride - 1) / stride;
  }
  if (kind == MT_PROBE_GAP) return (lines + (int64_t)gap - 1) / (int64_t)gap;
  return lines;
}

int64_t mt_probe_indices(mt_probe_kind kind, int64_t n, int elsize, double gap, uint64_t seed,
                         int64_t *idx) {
  if (bad_args(kind, n, elsize, gap)) return -1;
  int64_t per_line = 64 / elsize, lines = (n + per_line - 1) / per_line, m = 0;
  switch (kind) {
  case MT_PROBE_ENTRY:
  case MT_PROBE_MATH: {
    int64_t stride = entry_stride(gap, elsize);
    for (int64_t i = 0; i < n; i += stride, m++)
      if (idx) idx[m] = i;
    return m;
  }
  case MT_PROBE_GAP:
    for (int64_t l = 0; l < lines; l += (int64_t)gap, m++)
      if (idx) idx[m] = l * per_line;
    return m;
  case MT_PROBE_RANDOM: {
    /* line l is drawn when the top 53 bits of its draw, as a fraction, are
     * below 1 / gap; the low bits place the element in the line */
    double q = 1.0 / gap;
    uint64_t x = seed;
    for (int64_t l = 0; l < lines; l++) {
      uint64_t u = splitmix(&x);
      if ((double)(u >> 11) * 0x1p-53 >= q) continue;
      int64_t i = l * per_line + (int64_t)(u & (uint64_t)(per_line - 1));
      if (i >= n) i = n - 1; /* the last, partial line */
      if (idx) idx[m] = i;
      m++;
    }
    return m;
  }
  }
  return -1;
}

int64_t mt_probe_lines(const int64_t *idx, int64_t m, int elsize) {
  int64_t per_line = 64 / elsize, count = 0, last = -1;
  for (int64_t k = 0; k < m; k++) {
    int64_t l = idx[k] / per_line;
    if (l != last) count++, last = l;
  }
  return count;
}

void mt_probe_step_f32(float *p, float *s, const int64_t *idx, const float *vals, int64_t m,
                       float k, int nthreads, int isa) {
  mt_touch_step_f32(p, s, idx, vals, m, k, nthreads, isa);
}

void mt_probe_step_f64(double *p, double *s, const int64_t *idx, const double *vals, int64_t m,
                       double k, int nthreads, int isa) {
  mt_touch_step_f64(p, s, idx, vals, m, k, nthreads, isa);
}

static mt_adagrad_hparams math_hparams(int nthreads) {
  return (mt_adagrad_hparams){.clr = mt_adagrad_clr(0.01, 0.0, 1.0), .eps = 1e-10,
                              .nthreads = nthreads, .isa = MT_ADAGRAD_ISA_AUTO};
}

int mt_probe_math_step_f32(float *p, float *s, const int64_t *idx, const float *vals, int64_t m,
                           int nthreads) {
  mt_adagrad_hparams hp = math_hparams(nthreads);
  mt_error err = {0};
  return mt_adagrad_step_coo_f32(p, s, idx, vals, m, 1, &hp, &err) == MT_OK ? 0 : -1;
}

int mt_probe_math_step_f64(double *p, double *s, const int64_t *idx, const double *vals,
                           int64_t m, int nthreads) {
  mt_adagrad_hparams hp = math_hparams(nthreads);
  mt_error err = {0};
  return mt_adagrad_step_coo_f64(p, s, idx, vals, m, 1, &hp, &err) == MT_OK ? 0 : -1;
}

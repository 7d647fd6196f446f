/* grad_reduce_math.h - the math of the MaskedTensor reductions' backward
 * (impl/cpu/grad_reduce.c plans each call; CUDA: impl/cuda/grad_reduce.cu):
 * one output element's group, the input elements that reduce into it in
 * increasing (row-major) order, and every gradient element of the group
 * (mt_gr_group). The group's statistics (count, extremum, sum, mean, sum of
 * squares, products) are folded in that order, as the CPU reference's
 * loops over the whole input did, computed in double and rounded once to
 * the input's dtype; masked-out elements get 0 and the input's mask
 * (GRAD-1). See grad_reduce.c for torch's formulas. */
#ifndef MT_GRAD_REDUCE_MATH_H
#define MT_GRAD_REDUCE_MATH_H

#include "common/mt_hd.h"

typedef enum { GR_SUM, GR_MEAN, GR_PROD, GR_AMIN, GR_AMAX, GR_VAR, GR_STD } mt_gr_kind;

/* One call, planned on the host. */
typedef struct mt_gr_par {
  mt_gr_kind kind;
  mt_dtype dtype; /* the gradient's (the input's) */
  int scalar;     /* a 0-d input: prod's gradient is the upstream one */
  int64_t n;      /* input elements */
  int64_t n_out;  /* output elements: groups */
} mt_gr_par;

/* the value the reduction sees: x where specified, the op's identity elsewhere */
MT_HD double mt__gr_fill(mt_gr_kind k) {
  return k == GR_PROD ? 1.0 : k == GR_AMAX ? -INFINITY : k == GR_AMIN ? INFINITY : 0.0;
}

MT_HD double mt__gr_v(mt_gr_kind k, const double *x, const uint8_t *spec, int64_t i) {
  return spec[i] ? x[i] : mt__gr_fill(k);
}

/* Group o: input elements idx[off[o]] .. idx[off[o + 1] - 1] (increasing);
 * x, spec: the input's values (as doubles) and mask bits, g: the upstream
 * gradient's values. Writes data[i] (p->dtype) and mask[i] of each. */
MT_HD void mt_gr_group(const mt_gr_par *p, const double *x, const uint8_t *spec, const double *g,
                       const int64_t *off, const int64_t *idx, void *data, uint8_t *mask,
                       int64_t o) {
  mt_gr_kind k = p->kind;
  int64_t a = off[o], b = off[o + 1];
  double go = g[o], c = 0.0, s = 0.0, r = k == GR_PROD ? 1.0 : mt__gr_fill(k);
  int zeros = 0;
  switch (k) {
  case GR_MEAN:
    for (int64_t t = a; t < b; t++) c += spec[idx[t]];
    break;
  case GR_AMIN:
  case GR_AMAX:
    for (int64_t t = a; t < b; t++) { /* torch's max/min: NaN wins */
      double v = mt__gr_v(k, x, spec, idx[t]);
      if (isnan(v) || (!isnan(r) && (k == GR_AMAX ? v > r : v < r))) r = v;
    }
    for (int64_t t = a; t < b; t++) c += mt__gr_v(k, x, spec, idx[t]) == r;
    break;
  case GR_PROD:
    for (int64_t i = 0; i < p->n; i++) zeros |= mt__gr_v(k, x, spec, i) == 0.0;
    if (!zeros)
      for (int64_t t = a; t < b; t++) r *= mt__gr_v(k, x, spec, idx[t]);
    break;
  case GR_VAR:
  case GR_STD: {
    for (int64_t t = a; t < b; t++)
      if (spec[idx[t]]) {
        c += 1.0;
        s += x[idx[t]];
      }
    s /= c; /* the mean */
    double sq = 0.0;
    for (int64_t t = a; t < b; t++) {
      double d = spec[idx[t]] ? x[idx[t]] - s : 0.0;
      sq += d * d; /* the sum of squares */
    }
    double den = c - 1.0 > 0.0 ? c - 1.0 : 0.0, gv = go;
    if (k == GR_STD) gv = gv / (2.0 * sqrt(sq / den));
    r = gv / den; /* the gradient of the sum of squares */
    break;
  }
  default: break;
  }
  /* var/std: the mean's share, -sum(gd) / count */
  double share = 0.0;
  if (k == GR_VAR || k == GR_STD)
    for (int64_t t = a; t < b; t++)
      if (spec[idx[t]]) share += r * 2.0 * (x[idx[t]] - s);
  for (int64_t t = a; t < b; t++) {
    int64_t i = idx[t];
    double v = mt__gr_v(k, x, spec, i), acc = 0.0;
    switch (k) {
    case GR_SUM: acc = go; break;
    case GR_MEAN: acc = go / c; break;
    case GR_AMIN:
    case GR_AMAX: acc = go / c * (v == r ? 1.0 : 0.0); break;
    case GR_PROD:
      if (p->scalar) {
        acc = go;
      } else if (!zeros) {
        acc = go * (r / v);
      } else { /* torch's zero-safe path: the products before and after */
        double pre = 1.0, suf = 1.0;
        for (int64_t u = a; u < t; u++) pre *= mt__gr_v(k, x, spec, idx[u]);
        for (int64_t u = b - 1; u > t; u--) suf *= mt__gr_v(k, x, spec, idx[u]);
        acc = pre * suf * go;
      }
      break;
    case GR_VAR:
    case GR_STD:
      if (spec[i]) acc = r * 2.0 * (x[i] - s) - share / c;
      break;
    }
    mt_hd_set_f64(data, p->dtype, i, spec[i] ? acc : 0.0);
    mask[i] = spec[i];
  }
}

#endif /* MT_GRAD_REDUCE_MATH_H */

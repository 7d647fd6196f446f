/* npma_masked_fn_math.h - the per-element math of the numpy_ma profile's
 * masked_fn family that is not a reduction (those are
 * common/npma_reduce_math.h's), shared by the CPU reference
 * (impl/cpu/npma_masked_fn.c, its host plan: inputs, the mask broadcast to
 * flags, axes, dtypes, outputs) and the CUDA kernels
 * (impl/cuda/npma_masked_fn.cu): masked_cumsum/masked_cumprod (NPMA-17) and
 * masked_median (NPMA-20), one slice (outer, inner: the elements along dim)
 * each (mt_npm_slice). The rules are npma_masked_fn.c's header. */
#ifndef MT_NPMA_MASKED_FN_MATH_H
#define MT_NPMA_MASKED_FN_MATH_H

#include <math.h>

#include "common/mt_hd.h"
#include "common/npma_math.h"

/* the family's ops (impl/cpu/npma_ops.def's lines of npma_masked_fn.c): the
 * CUDA table's slots */
#define NPMA_MASKED_FN_OPS(X)                                                            \
  X(masked_sum) X(masked_prod) X(masked_amin) X(masked_amax) X(masked_mean)               \
  X(masked_argmin) X(masked_argmax) X(masked_var) X(masked_std) X(masked_cumsum)          \
  X(masked_cumprod) X(masked_median)

enum { NPM_SCAN, NPM_MEDIAN };

/* One call, planned on the host (npma_masked_fn.c). */
typedef struct mt_npm_par {
  int kind;       /* NPM_SCAN, NPM_MEDIAN */
  int prod;       /* NPM_SCAN: cumprod (filled with 1) */
  mt_dtype in;    /* the input's dtype */
  mt_dtype rt;    /* the result dtype */
  int64_t outer, len, inner; /* the slices: element (p * len + j) * inner + q */
} mt_npm_par;

/* NPMA-17: m.cumsum/cumprod(axis=dim) of slice s: filled(0 / 1) scanned in
 * the result dtype, the mask kept */
MT_HD void mt_npm_scan(const mt_npm_par *p, const void *x, const uint8_t *mask, void *out,
                       uint8_t *mask_out, int64_t s) {
  int64_t po = s / p->inner, q = s % p->inner;
  int prod = p->prod, is_int = !mt_hd_is_float(p->in);
  mt_dtype rt = p->rt;
  for (int64_t j = 0; j < p->len; j++) {
    int64_t i = (po * p->len + j) * p->inner + q;
    int spec = mask[i] != 0;
    mask_out[i] = (uint8_t)spec;
    if (is_int) {
      int64_t v = spec ? mt_hd_ldi(x, p->in, i) : prod;
      int64_t prev = j ? mt_hd_ldi(out, rt, i - p->inner) : prod;
      uint64_t r = prod ? (uint64_t)prev * (uint64_t)v : (uint64_t)prev + (uint64_t)v;
      mt_hd_sti(out, rt, i, j ? (int64_t)r : v);
    } else {
      double v = spec ? mt_hd_get_f64(x, p->in, i) : (double)prod;
      double prev = j ? mt_hd_get_f64(out, rt, i - p->inner) : 0.0;
      double r = j ? (prod ? prev * v : prev + v) : v;
      mt_hd_set_f64(out, rt, i, mt_hd_round(rt, mt_np_calc(rt, r)));
    }
  }
}

/* NPMA-20: np.ma.median of slice s into out[s], mask_out[s]; vals: the
 * slice's scratch (p->len doubles), sorted by insertion (stable, as the
 * CPU's qsort of the specified values: equal values keep their order) */
MT_HD void mt_npm_median(const mt_npm_par *p, const void *x, const uint8_t *mask, void *out,
                         uint8_t *mask_out, double *vals, int64_t s) {
  int64_t po = s / p->inner, q = s % p->inner, n = 0;
  mt_dtype rt = p->rt;
  int nan = 0;
  for (int64_t j = 0; j < p->len; j++) {
    int64_t i = (po * p->len + j) * p->inner + q;
    if (!mask[i]) continue;
    double v = mt_hd_get_f64(x, p->in, i);
    nan |= isnan(v);
    int64_t k = n++;
    while (k > 0 && vals[k - 1] > v) { /* insertion */
      vals[k] = vals[k - 1];
      k--;
    }
    vals[k] = v;
  }
  mask_out[s] = (uint8_t)(n > 0);
  if (n == 0) { /* np.ma.sum of two masked elements: data 0 */
    mt_hd_set_f64(out, rt, s, 0.0);
    return;
  }
  if (nan) { /* numpy's _median_nancheck */
    mt_hd_set_f64(out, rt, s, NAN);
    return;
  }
  int64_t h = n / 2, l = n % 2 ? h : h - 1;
  double r;
  if (mt_hd_is_float(p->in)) { /* np.ma.sum([lo, hi]) in the dtype, then / 2 in the dtype */
    double sum = mt_hd_round(rt, mt_np_calc(rt, vals[l] + vals[h]));
    r = mt_hd_round(rt, mt_np_calc(rt, sum / 2.0));
  } else { /* np.ma.mean: the float64 sum * 1. / 2 */
    r = (vals[l] + vals[h]) * 1.0 / 2.0;
  }
  mt_hd_set_f64(out, rt, s, r);
}

/* Slice s of the call; scratch: p->len doubles per slice (median) */
MT_HD void mt_npm_slice(const mt_npm_par *p, const void *x, const uint8_t *mask, void *out,
                        uint8_t *mask_out, double *scratch, int64_t s) {
  if (p->kind == NPM_SCAN)
    mt_npm_scan(p, x, mask, out, mask_out, s);
  else
    mt_npm_median(p, x, mask, out, mask_out, scratch + s * p->len, s);
}

#endif /* MT_NPMA_MASKED_FN_MATH_H */


/* masked_fn_math.h - the per-element math of the masked_fn family (MFN-2 ..
 * MFN-8), shared by the CPU reference (impl/cpu/masked_fn.c, which plans
 * each call: dims, dtypes, refusals, mask broadcasting, outputs) and the
 * CUDA kernels (impl/cuda/masked_fn.cu).
 *
 * A call runs in two steps, each one thread per element:
 *  - mt_mfn_fill, per input element: the input with masked-out elements
 *    replaced by the op's identity (MFN-2) and, for dtype= of CAST_PRE ops,
 *    cast to that dtype (MFN-8), as a double and an exact int64, with the
 *    broadcast mask; written in slice order (slice so's element k at so * L
 *    + k), so each slice is contiguous;
 *  - mt_mfn_slice_out, per slice (one output element of a reduction, one
 *    row of a scan): the op over the slice's L elements in row-major order
 *    of the reduced dims, as the CPU reference always visited them, so
 *    every sum has one order on any backend, stored once to the output
 *    dtype.
 * masked_logaddexp is one thread per result element (mt_mfn_lae_out); a
 * sparse input's reduction (MFN-9) one thread per output element over the
 * entries the host planned for it (mt_mfn_sp_out). */
#ifndef MT_MASKED_FN_MATH_H
#define MT_MASKED_FN_MATH_H

#include "common/mt_hd.h"

/* The identity that replaces masked-out elements (MFN-2). */
typedef enum {
  MFN_ID_ZERO, MFN_ID_ONE, MFN_ID_NEG_INF, MFN_ID_POS_INF, MFN_ID_NAN, MFN_ID_NORM, MFN_ID_NONE
} mt_mfn_identity;

/* The op's per-slice math (common/masked_fn_ops.h names one per op). */
typedef enum {
  MFK_SUM, MFK_PROD, MFK_AMIN, MFK_AMAX, MFK_ARGMIN, MFK_ARGMAX, MFK_MEAN, MFK_MEDIAN, MFK_NORM,
  MFK_VAR, MFK_STD, MFK_LOGSUMEXP, MFK_CUMSUM, MFK_CUMPROD, MFK_SOFTMAX, MFK_LOG_SOFTMAX,
  MFK_SOFTMIN, MFK_NORMALIZE, MFK_LOGADDEXP
} mt_mfn_kind;

/* One call, planned on the host. The input and the mask are contiguous
 * (row-major); the mask broadcasts to the input through mstride. */
typedef struct mt_mfn_par {
  mt_mfn_kind kind;
  int scan;       /* 1: an output per input element (cumsum .. normalize) */
  mt_dtype xdt;   /* the input's dtype */
  int has_mask;   /* 0: every element specified */
  mt_dtype mdt;   /* the mask's dtype */
  int ndim;
  int64_t shape[MT_MAX_DIMS];
  int64_t mstride[MT_MAX_DIMS]; /* the mask's step per input dim; 0 where it broadcasts */
  int red[MT_MAX_DIMS];         /* 1: reduced (a scan's dim) */
  int64_t n_in, L, n_slices;    /* input elements, elements per slice, slices */
  mt_mfn_identity fill;
  int cast;        /* MFN-8 CAST_PRE: the filled input is cast to cast_to */
  int neg_first;   /* softmin of an integer input: negated in its dtype (wrapping)
                      before the cast, then a softmax */
  mt_dtype cast_to;
  /* the slice's arithmetic */
  mt_dtype in_dt; /* the dtype computed in (after a CAST_PRE cast) */
  mt_dtype ct;    /* the dtype torch rounds intermediates to */
  int is_int;     /* integer/bool input computed exactly in vi */
  mt_dtype to;    /* var/std: the dtype= (default: the input's, float32 for integers) */
  double ord, eps, correction;
  mt_dtype odt; /* the output's dtype */
  int nat_int;  /* the output takes the integer result (else the double) */
} mt_mfn_par;

MT_HD int mt_mfn_is_intlike(mt_dtype d) {
  return d == MT_int64 || d == MT_int32 || d == MT_int8 || d == MT_uint8 || d == MT_bool;
}

/* The dtype's [lo, hi] (bool: [0, 1]). */
MT_HD void mt__mfn_int_limits(mt_dtype d, int64_t *lo, int64_t *hi) {
  switch (d) {
  case MT_int64: *lo = INT64_MIN; *hi = INT64_MAX; break;
  case MT_int32: *lo = INT32_MIN; *hi = INT32_MAX; break;
  case MT_int8: *lo = INT8_MIN; *hi = INT8_MAX; break;
  case MT_uint8: *lo = 0; *hi = UINT8_MAX; break;
  default: *lo = 0; *hi = 1; break;
  }
}

/* The identity of MFN-2 as double (floats) and as int64 (integer inputs:
 * the dtype's min/max for amax/amin). */
MT_HD void mt_mfn_identity_of(mt_mfn_identity id, mt_dtype d, double ord, double *fd,
                              int64_t *fi) {
  int64_t lo, hi;
  mt__mfn_int_limits(d, &lo, &hi);
  switch (id) {
  case MFN_ID_ONE: *fd = 1.0; *fi = 1; break;
  case MFN_ID_NEG_INF: *fd = mt_mfn_is_intlike(d) ? (double)lo : -INFINITY; *fi = lo; break;
  case MFN_ID_POS_INF: *fd = mt_mfn_is_intlike(d) ? (double)hi : INFINITY; *fi = hi; break;
  case MFN_ID_NAN: *fd = NAN; *fi = 0; break;
  case MFN_ID_NORM: *fd = ord == -INFINITY ? INFINITY : 0.0; *fi = 0; break;
  default: *fd = 0.0; *fi = 0; break;
  }
}

/* Mask element mi specified: bool reads any nonzero byte, other dtypes v != 0. */
MT_HD uint8_t mt__mfn_mask_in(const void *mask, mt_dtype mdt, int64_t mi) {
  return mt_hd_get_f64(mask, mdt, mi) != 0.0;
}

/* ---- slices ------------------------------------------------------------- */

/* Input element i's slice (its kept coordinates, row-major) and, in *k, its
 * place in the slice (its reduced coordinates, row-major). */
MT_HD int64_t mt__mfn_slice_of(const mt_mfn_par *p, int64_t i, int64_t *k) {
  int64_t rem = i, so = 0, scale = 1, kk = 0, kscale = 1;
  for (int d = p->ndim - 1; d >= 0; d--) {
    int64_t c = rem % p->shape[d];
    rem /= p->shape[d];
    if (p->red[d]) {
      kk += c * kscale;
      kscale *= p->shape[d];
    } else {
      so += c * scale;
      scale *= p->shape[d];
    }
  }
  *k = kk;
  return so;
}

/* The input element at place k of slice so (mt__mfn_slice_of's inverse). */
MT_HD int64_t mt__mfn_index_of(const mt_mfn_par *p, int64_t so, int64_t k) {
  int64_t i = 0, st = 1;
  for (int d = p->ndim - 1; d >= 0; d--) {
    int64_t c;
    if (p->red[d]) {
      c = k % p->shape[d];
      k /= p->shape[d];
    } else {
      c = so % p->shape[d];
      so /= p->shape[d];
    }
    i += c * st;
    st *= p->shape[d];
  }
  return i;
}

/* MFN-8, CAST_PRE: a filled element cast to dtype= `to` (a float dtype
 * rounds; an integer one truncates floats and wraps integers). */
MT_HD void mt__mfn_cast(int in_int, mt_dtype to, double *xd, int64_t *xi) {
  mt_hd_slot tmp;
  if (mt_hd_is_float(to)) {
    *xd = mt_hd_round(to, *xd);
    return;
  }
  if (in_int)
    mt_hd_sti(&tmp, to, 0, *xi);
  else
    mt_hd_set_f64(&tmp, to, 0, *xd);
  *xi = mt_hd_ldi(&tmp, to, 0);
  *xd = (double)*xi;
}

/* Input element i, filled (MFN-2) and cast (MFN-8), into its slice place
 * of xd (floats; masked-out = the identity, median's NaN), xi (integer
 * inputs) and mk (the broadcast mask, 1 without one). Masked-out data is
 * never read. */
MT_HD void mt_mfn_fill(const mt_mfn_par *p, const void *x, const void *mask, double *xd,
                       int64_t *xi, uint8_t *mk, int64_t i) {
  int64_t k, so = mt__mfn_slice_of(p, i, &k), g = so * p->L + k;
  uint8_t in = 1;
  if (p->has_mask) {
    int64_t rem = i, mi = 0;
    for (int d = p->ndim - 1; d >= 0; d--) {
      mi += (rem % p->shape[d]) * p->mstride[d];
      rem /= p->shape[d];
    }
    in = mt__mfn_mask_in(mask, p->mdt, mi);
  }
  double fd, vd;
  int64_t fi, vi;
  mt_mfn_identity_of(p->fill, p->xdt, p->ord, &fd, &fi);
  int intl = mt_mfn_is_intlike(p->xdt);
  if (intl) {
    vi = in ? mt_hd_ldi(x, p->xdt, i) : fi;
    vd = in ? (double)vi : fd;
  } else {
    vi = 0;
    vd = in ? mt_hd_get_f64(x, p->xdt, i) : fd;
  }
  if (p->neg_first && intl) { /* (-input) in the input's dtype: wraps */
    mt_hd_slot tmp;
    mt_hd_sti(&tmp, p->xdt, 0, (int64_t)(0u - (uint64_t)vi));
    vi = mt_hd_ldi(&tmp, p->xdt, 0);
    vd = (double)vi;
  }
  if (p->cast) mt__mfn_cast(intl, p->cast_to, &vd, &vi);
  xd[g] = vd;
  xi[g] = vi;
  mk[g] = in;
}

/* ---- one slice's op (reductions write od[0]/oi[0], scans od[k]/oi[k]) ---- */

MT_HD double mt__mfn_r(const mt_mfn_par *p, double v) { return mt_hd_round(p->ct, v); }

MT_HD int64_t mt__mfn_count_in(const uint8_t *mk, int64_t L) {
  int64_t c = 0;
  for (int64_t k = 0; k < L; k++) c += mk[k] != 0;
  return c;
}

/* amax (sign 1) / amin (sign -1): NaN propagates as torch.amax. */
MT_HD void mt__mfn_ext(const mt_mfn_par *p, const double *v, const int64_t *vi, double *od,
                       int64_t *oi, int sign) {
  if (p->is_int) {
    int64_t a = vi[0];
    for (int64_t k = 1; k < p->L; k++)
      if (sign > 0 ? vi[k] > a : vi[k] < a) a = vi[k];
    oi[0] = a;
    return;
  }
  double a = v[0];
  for (int64_t k = 1; k < p->L && !isnan(a); k++)
    if (isnan(v[k]) || (sign > 0 ? v[k] > a : v[k] < a)) a = v[k];
  od[0] = a;
}

/* argmax/argmin: the first extreme, a NaN counting as the extreme (torch);
 * the index goes out in both forms (the output dtype picks one). */
MT_HD void mt__mfn_arg(const mt_mfn_par *p, const double *v, const int64_t *vi, double *od,
                       int64_t *oi, int sign) {
  int64_t b = 0;
  for (int64_t k = 1; k < p->L; k++) {
    if (p->is_int) {
      if (sign > 0 ? vi[k] > vi[b] : vi[k] < vi[b]) b = k;
    } else {
      if (isnan(v[b])) break;
      if (isnan(v[k]) || (sign > 0 ? v[k] > v[b] : v[k] < v[b])) b = k;
    }
  }
  oi[0] = b;
  od[0] = (double)b;
}

/* median = torch.nanmedian over the NaN-filled slice: the lower median of
 * the non-NaN values, NaN when there are none; t: room for L values. */
MT_HD void mt__mfn_median(const mt_mfn_par *p, const double *v, double *od, int64_t *oi,
                          double *t) {
  int64_t n = 0;
  for (int64_t k = 0; k < p->L; k++)
    if (!isnan(v[k])) t[n++] = v[k];
  for (int64_t j = 1; j < n; j++) { /* insertion sort, ascending, stable */
    double x = t[j];
    int64_t i = j - 1;
    while (i >= 0 && t[i] > x) {
      t[i + 1] = t[i];
      i--;
    }
    t[i + 1] = x;
  }
  od[0] = n ? t[(n - 1) / 2] : NAN;
  /* integers: torch takes the median of input.to(float32) and casts back
   * (the host refuses a fully masked slice: mt_mfn_slice_out) */
  if (p->is_int) od[0] = mt__mfn_r(p, od[0]);
  oi[0] = p->is_int && n ? (int64_t)od[0] : 0;
}

/* torch.linalg.vector_norm of the filled slice; with mk, masked-out
 * elements count as `fill` (normalize's norm fills with its own identity). */
MT_HD double mt__mfn_vnorm(const double *v, const uint8_t *mk, double fill, int64_t L,
                           double ord) {
  double a;
  if (isinf(ord)) {
    a = ord > 0 ? 0.0 : INFINITY;
    for (int64_t k = 0; k < L; k++) {
      double x = fabs(mk && !mk[k] ? fill : v[k]);
      if (isnan(x)) return NAN;
      if (ord > 0 ? x > a : x < a) a = x;
    }
    return a;
  }
  a = 0.0;
  for (int64_t k = 0; k < L; k++) {
    double x = fabs(mk && !mk[k] ? fill : v[k]);
    if (ord == 0.0)
      a += x != 0.0;
    else if (ord == 1.0)
      a += x;
    else if (ord == 2.0)
      a += x * x;
    else
      a += pow(x, ord);
  }
  if (ord == 0.0 || ord == 1.0) return a;
  if (ord == 2.0) return sqrt(a);
  return pow(a, 1.0 / ord);
}

/* var/std, as torch.masked._std_var with dtype D = p->to (MFN-3, MFN-8):
 * the mean sums the input cast to D (an integer D truncates) and divides
 * in D (integer D: float32); deviations and squares are rounded to the
 * promotion of the input dtype and the mean's; their masked sum, the count
 * minus the correction and the quotient in C = D (integer D: float32); an
 * integer D truncates the quotient, and std's root of it is float32. */
MT_HD mt_dtype mt__mfn_wider(mt_dtype a, mt_dtype b) {
  if (a == MT_float64 || b == MT_float64) return MT_float64;
  if (a == MT_float32 || b == MT_float32) return MT_float32;
  return a;
}

MT_HD void mt__mfn_var_std(const mt_mfn_par *p, const double *v, const uint8_t *mk, double *od,
                           int64_t *oi, int take_sqrt) {
  mt_dtype D = p->to;
  int fD = mt_hd_is_float(D);
  mt_dtype M = fD ? D : MT_float32, C = M;
  mt_dtype P = mt_mfn_is_intlike(p->in_dt) ? M : mt__mfn_wider(p->in_dt, M);
  double tot = 0.0, sq = 0.0;
  int64_t c = mt__mfn_count_in(mk, p->L);
  for (int64_t k = 0; k < p->L; k++)
    if (mk[k]) tot += fD ? mt_hd_round(D, v[k]) : trunc(v[k]);
  if (fD) tot = mt_hd_round(D, tot);
  double mean = mt_hd_round(M, tot / (double)c);
  for (int64_t k = 0; k < p->L; k++)
    if (mk[k]) {
      double x = mt_hd_round(P, v[k] - mean);
      sq += mt_hd_round(C, mt_hd_round(P, x * x));
    }
  double n = (double)c;
  if (p->correction != 0.0) {
    n = mt_hd_round(C, n);
    n = mt_hd_round(C, fmax(mt_hd_round(C, n - p->correction), 0.0));
  }
  double out = mt_hd_round(C, mt_hd_round(C, sq) / n);
  if (!fD) { /* .to(D) truncates; std: sqrt of the integer in float32 */
    mt_hd_slot tmp;
    mt_hd_set_f64(&tmp, D, 0, out);
    oi[0] = mt_hd_ldi(&tmp, D, 0);
    out = (double)oi[0];
    od[0] = take_sqrt ? mt_hd_round(MT_float32, sqrt(out)) : out;
    return;
  }
  od[0] = take_sqrt ? mt_hd_round(D, sqrt(out)) : out;
}

/* torch.logsumexp: m = max (an infinite max counts as 0), log(sum(exp(v -
 * m))) + m. Integers: computed in float32 on the dtype's identity fill,
 * then truncated to the input dtype. */
MT_HD void mt__mfn_logsumexp(const mt_mfn_par *p, const double *v, double *od, int64_t *oi) {
  double m = -INFINITY, a = 0.0;
  for (int64_t k = 0; k < p->L; k++)
    if (isnan(v[k]) || v[k] > m) m = v[k];
  if (isinf(m)) m = 0.0;
  for (int64_t k = 0; k < p->L; k++) a += exp(v[k] - m);
  od[0] = mt__mfn_r(p, log(a) + m);
  if (p->is_int) oi[0] = isfinite(od[0]) ? (int64_t)od[0] : 0;
}

/* cumsum (prod 0) / cumprod (prod 1): integers wrap. */
MT_HD void mt__mfn_scan(const mt_mfn_par *p, const double *v, const int64_t *vi, double *od,
                        int64_t *oi, int prod) {
  uint64_t ai = prod ? 1 : 0;
  double a = prod ? 1.0 : 0.0;
  for (int64_t k = 0; k < p->L; k++) {
    if (p->is_int) {
      ai = prod ? ai * (uint64_t)vi[k] : ai + (uint64_t)vi[k];
      oi[k] = (int64_t)ai;
    } else {
      a = prod ? a * v[k] : a + v[k];
      od[k] = a;
    }
  }
}

/* softmax over the filled slice as torch: m = max, e = exp(v - m); a slice
 * of only -inf gives (-inf) - (-inf) = NaN everywhere. sign -1: softmin =
 * softmax(-v) (the fill was +inf). lg: log_softmax. */
MT_HD void mt__mfn_soft(const mt_mfn_par *p, const double *v, double *od, int sign, int lg) {
  double m = -INFINITY, a = 0.0;
  for (int64_t k = 0; k < p->L && !isnan(m); k++) {
    double x = sign * v[k];
    if (isnan(x) || x > m) m = x;
  }
  for (int64_t k = 0; k < p->L; k++) a += exp(sign * v[k] - m);
  for (int64_t k = 0; k < p->L; k++) {
    double d = sign * v[k] - m;
    od[k] = lg ? d - log(a) : exp(d) / a;
  }
}

/* normalize: (0-filled input) / max(masked norm, eps); the norm fills with
 * its own identity (ord=-inf: +inf). torch.maximum propagates NaN. */
MT_HD void mt__mfn_normalize(const mt_mfn_par *p, const double *v, const uint8_t *mk, double *od) {
  double fill = p->ord == -INFINITY ? INFINITY : 0.0;
  double nrm = mt__mfn_r(p, mt__mfn_vnorm(v, mk, fill, p->L, p->ord)), eps = mt__mfn_r(p, p->eps);
  double den = isnan(nrm) ? nrm : fmax(nrm, eps);
  for (int64_t k = 0; k < p->L; k++) od[k] = (mk[k] ? v[k] : 0.0) / den;
}

/* The op over one slice of L filled elements v (floats), vi (integers),
 * mk (the mask): a reduction's result in od[0] / oi[0], a scan's in od[k]
 * / oi[k]; t: room for L doubles (median). */
MT_HD void mt_mfn_slice(const mt_mfn_par *p, const double *v, const int64_t *vi, const uint8_t *mk,
                        double *od, int64_t *oi, double *t) {
  switch (p->kind) {
  case MFK_SUM:
    if (p->is_int) {
      uint64_t a = 0;
      for (int64_t k = 0; k < p->L; k++) a += (uint64_t)vi[k];
      oi[0] = (int64_t)a;
    } else {
      double a = 0.0;
      for (int64_t k = 0; k < p->L; k++) a += v[k];
      od[0] = mt__mfn_r(p, a);
    }
    break;
  case MFK_PROD:
    if (p->is_int) {
      uint64_t a = 1;
      for (int64_t k = 0; k < p->L; k++) a *= (uint64_t)vi[k];
      oi[0] = (int64_t)a;
    } else {
      double a = 1.0;
      for (int64_t k = 0; k < p->L; k++) a *= v[k];
      od[0] = mt__mfn_r(p, a);
    }
    break;
  case MFK_AMAX: mt__mfn_ext(p, v, vi, od, oi, 1); break;
  case MFK_AMIN: mt__mfn_ext(p, v, vi, od, oi, -1); break;
  case MFK_ARGMAX: mt__mfn_arg(p, v, vi, od, oi, 1); break;
  case MFK_ARGMIN: mt__mfn_arg(p, v, vi, od, oi, -1); break;
  case MFK_MEAN: { /* mean = R(R(masked sum) / count): torch's `total / count` */
    double a = 0.0;
    for (int64_t k = 0; k < p->L; k++) a += v[k]; /* masked-out = 0 */
    od[0] = mt__mfn_r(p, mt__mfn_r(p, a) / (double)mt__mfn_count_in(mk, p->L));
    break;
  }
  case MFK_MEDIAN: mt__mfn_median(p, v, od, oi, t); break;
  case MFK_NORM: od[0] = mt__mfn_r(p, mt__mfn_vnorm(v, NULL, 0.0, p->L, p->ord)); break;
  case MFK_VAR: mt__mfn_var_std(p, v, mk, od, oi, 0); break;
  case MFK_STD: mt__mfn_var_std(p, v, mk, od, oi, 1); break;
  case MFK_LOGSUMEXP: mt__mfn_logsumexp(p, v, od, oi); break;
  case MFK_CUMSUM: mt__mfn_scan(p, v, vi, od, oi, 0); break;
  case MFK_CUMPROD: mt__mfn_scan(p, v, vi, od, oi, 1); break;
  case MFK_SOFTMAX: mt__mfn_soft(p, v, od, 1, 0); break;
  case MFK_LOG_SOFTMAX: mt__mfn_soft(p, v, od, 1, 1); break;
  case MFK_SOFTMIN: mt__mfn_soft(p, v, od, p->neg_first ? 1 : -1, 0); break;
  case MFK_NORMALIZE: mt__mfn_normalize(p, v, mk, od); break;
  case MFK_LOGADDEXP: break; /* mt_mfn_lae_out */
  }
}

/* Output element k from the op's own result: the exact integer vi
 * (nat_int) or the double vd, converted once to the output dtype (a float
 * rounds, an integer truncates and wraps: the .to(dtype) of MFN-8). */
MT_HD void mt__mfn_store(const mt_mfn_par *p, void *out, int64_t k, double vd, int64_t vi) {
  if (p->nat_int)
    mt_hd_sti(out, p->odt, k, vi);
  else
    mt_hd_set_f64(out, p->odt, k, vd);
}

/* Slice so of the filled arrays (mt_mfn_fill) into out: a reduction's
 * output element so, a scan's output elements at the slice's input
 * indices. td / ti: room for n_in values each (a scan's results, median's
 * sort). Returns 1, writing nothing, for a fully masked slice of an
 * integer median (MFN-7: torch refuses it; the host reports the call's
 * error), else 0. */
MT_HD int mt_mfn_slice_out(const mt_mfn_par *p, const double *xd, const int64_t *xi,
                           const uint8_t *mk, double *td, int64_t *ti, void *out, int64_t so) {
  int64_t L = p->L, b = so * L;
  if (p->kind == MFK_MEDIAN && p->is_int && L > 0 && mt__mfn_count_in(mk + b, L) == 0) return 1;
  if (!p->scan) {
    double rd = 0.0;
    int64_t ri = 0;
    mt_mfn_slice(p, xd + b, xi + b, mk + b, &rd, &ri, td + b);
    mt__mfn_store(p, out, so, rd, ri);
    return 0;
  }
  mt_mfn_slice(p, xd + b, xi + b, mk + b, td + b, ti + b, NULL);
  for (int64_t k = 0; k < L; k++)
    mt__mfn_store(p, out, mt__mfn_index_of(p, so, k), td[b + k], ti[b + k]);
  return 0;
}

/* ---- masked_logaddexp (MFN-6) ---------------------------------------------- */

/* One call: operands 0 (input) and 1 (other), contiguous, broadcast to the
 * result's shape; each with its own dtype and its own mask broadcast to it.
 * torch.logaddexp promotes the filled operands (torch.result_type: float
 * with an integer is the float, float16 with bfloat16 float32) and the
 * result is .to(dtype), the input's dtype by default (MFN-6, MFN-8). */
typedef struct mt_mfn_lae_par {
  mt_dtype vdt[2]; /* operand j's dtype */
  mt_dtype ct;     /* the promoted dtype logaddexp computes in (floating) */
  mt_dtype odt;    /* the result's (dtype=, default the input's) */
  int ndim;
  int64_t shape[MT_MAX_DIMS];      /* the result's */
  int64_t step[2][MT_MAX_DIMS];    /* operand j's step per result dim; 0 where it broadcasts */
  int opnd_ndim[2];
  int64_t opnd_shape[2][MT_MAX_DIMS];
  int has_mask[2];
  mt_dtype mdt[2];
  int64_t mstride[2][MT_MAX_DIMS]; /* mask j's step per dim of operand j */
} mt_mfn_lae_par;

/* v of dtype vd converted to the floating dtype ct as torch converts: an
 * integer goes to float first where ct is float32 or narrower (c10's
 * static_cast<float>: one rounding of an int64, not two). */
MT_HD double mt_mfn_to_compute(mt_dtype vd, mt_dtype ct, const void *v, int64_t i, int in,
                               double fill_f, int64_t fill_i) {
  if (!mt_mfn_is_intlike(vd)) return mt_hd_round(ct, in ? mt_hd_get_f64(v, vd, i) : fill_f);
  int64_t vi = in ? mt_hd_ldi(v, vd, i) : fill_i;
  return ct == MT_float64 ? (double)vi : mt_hd_round(ct, (double)(float)vi);
}

/* Element i of operand j, where(mask, v, identity) in the compute dtype:
 * -inf, an integer operand its dtype's min (uint8: 0) (MFN-6). */
MT_HD double mt__mfn_lae_operand(const mt_mfn_lae_par *p, int j, const void *v, const void *mask,
                                 int64_t i) {
  uint8_t in = 1;
  if (p->has_mask[j]) {
    int64_t rem = i, mi = 0;
    for (int d = p->opnd_ndim[j] - 1; d >= 0; d--) {
      mi += (rem % p->opnd_shape[j][d]) * p->mstride[j][d];
      rem /= p->opnd_shape[j][d];
    }
    in = mt__mfn_mask_in(mask, p->mdt[j], mi);
  }
  double fd;
  int64_t fi;
  mt_mfn_identity_of(MFN_ID_NEG_INF, p->vdt[j], 0.0, &fd, &fi);
  return mt_mfn_to_compute(p->vdt[j], p->ct, v, i, in, fd, fi);
}

/* torch's logaddexp of a and b: equal infinities give themselves, else
 * max + log1p(exp(-|a-b|)). */
MT_HD double mt_mfn_logaddexp(double a, double b) {
  if (isinf(a) && a == b) return a;
  if (isnan(a) || isnan(b)) return NAN;
  return fmax(a, b) + log1p(exp(-fabs(a - b)));
}

/* Result element i: the filled operands' logaddexp rounded to the compute
 * dtype, then .to(dtype) (MFN-8). */
MT_HD void mt_mfn_lae_out(const mt_mfn_lae_par *p, const void *x, const void *y, const void *mx,
                          const void *my, void *out, int64_t i) {
  int64_t rem = i, ix = 0, iy = 0;
  for (int d = p->ndim - 1; d >= 0; d--) {
    int64_t c = rem % p->shape[d];
    rem /= p->shape[d];
    ix += c * p->step[0][d];
    iy += c * p->step[1][d];
  }
  double a = mt__mfn_lae_operand(p, 0, x, mx, ix), b = mt__mfn_lae_operand(p, 1, y, my, iy);
  mt_hd_set_f64(out, p->odt, i, mt_hd_round(p->ct, mt_mfn_logaddexp(a, b)));
}

/* ---- sparse inputs (MFN-9) -------------------------------------------------- */

/* One call over a COO or CSR input, planned on the host: the input's
 * stored values in groups (group g: the value indices src[off[g] ..
 * off[g+1]), an uncoalesced COO's duplicates in input order, else one) and
 * each output's entries (output i: the groups ent_grp[ent_off[i] ..
 * ent_off[i+1]), -1 for a masked-in position the input stores no value at,
 * in linear order). */
typedef struct mt_mfn_sp_par {
  mt_mfn_kind kind; /* MFK_SUM, MFK_PROD, MFK_AMAX, MFK_AMIN, MFK_MEAN */
  mt_dtype dt;      /* the input's values, the output's (float32/float64) */
  int coalesce;     /* a group's value is its values' sum, as coalescing gives it */
  int64_t n_vals, n_grp, n_ent, n_out;
} mt_mfn_sp_par;

/* The value of group g (-1: 0). */
MT_HD double mt__mfn_sp_value(const mt_mfn_sp_par *p, const void *vals, const int64_t *off,
                              const int64_t *src, int64_t g) {
  if (g < 0) return 0.0;
  if (!p->coalesce) return mt_hd_get_f64(vals, p->dt, src[off[g]]);
  double a = 0.0;
  for (int64_t j = off[g]; j < off[g + 1]; j++) a += mt_hd_get_f64(vals, p->dt, src[j]);
  return mt_hd_round(p->dt, a);
}

/* Output i: its entries reduced from the op's identity in linear order
 * (mean: the sum rounded, / the entries), rounded once to the dtype. */
MT_HD void mt_mfn_sp_out(const mt_mfn_sp_par *p, const void *vals, const int64_t *off,
                         const int64_t *src, const int64_t *ent_off, const int64_t *ent_grp,
                         void *out, int64_t i) {
  mt_mfn_kind k = p->kind;
  double a = k == MFK_PROD ? 1.0 : k == MFK_AMAX ? -INFINITY : k == MFK_AMIN ? INFINITY : 0.0;
  for (int64_t e = ent_off[i]; e < ent_off[i + 1]; e++) {
    double v = mt__mfn_sp_value(p, vals, off, src, ent_grp[e]);
    if (k == MFK_PROD)
      a *= v;
    else if (k == MFK_AMAX)
      a = isnan(a) || isnan(v) ? NAN : fmax(a, v);
    else if (k == MFK_AMIN)
      a = isnan(a) || isnan(v) ? NAN : fmin(a, v);
    else
      a += v;
  }
  if (k == MFK_MEAN)
    a = mt_hd_round(p->dt, mt_hd_round(p->dt, a) / (double)(ent_off[i + 1] - ent_off[i]));
  mt_hd_set_f64(out, p->dt, i, mt_hd_round(p->dt, a));
}

#endif /* MT_MASKED_FN_MATH_H */

/* grad_ew_math.h - the per-element math of the elementwise backward engine
 * (impl/cpu/grad_ew.c, for the MaskedTensor unary and binary ops; CUDA:
 * impl/cuda/grad_ew.cu): torch's derivative formulas
 * (tools/autograd/derivatives.yaml; the list in impl/cpu/grad_unary.c and
 * grad_binary.c) by code, each in double, and one gradient element of one
 * operand (mt_ew_elem): the masked sum over the broadcast dims of the
 * partials at every specified upstream-gradient element mapping to it, in
 * increasing order of that element (the order the CPU's scatter loop had),
 * rounded once to the operand's dtype. */
#ifndef MT_GRAD_EW_MATH_H
#define MT_GRAD_EW_MATH_H

#include "common/unary_math.h"

#define MT__EW_LN2 0.693147180559945309417232121458176568
#define MT__EW_LN10 2.30258509299404568401799145468436421
#define MT__EW_TWO_OVER_SQRT_PI 1.12837916709551257389615890312154517

/* The derivatives: EW_NONE for an op torch refuses to differentiate. */
#define MT_EW_CODES(X)                                                                         \
  X(NONE) X(abs) X(acos) X(acosh) X(asin) X(asinh) X(atan) X(id) X(cos) X(cosh) X(deg2rad)    \
  X(rad2deg) X(erf) X(erfc) X(erfinv) X(exp) X(exp2) X(expm1) X(lgamma) X(log) X(log10)       \
  X(log1p) X(log2) X(nan_to_num) X(neg) X(reciprocal) X(rsqrt) X(sin) X(sinh) X(sqrt)         \
  X(square) X(tan) X(pow) X(add) X(sub) X(mul) X(div) X(logaddexp) X(first)

typedef enum {
#define MT_EW_X(name) EW_##name,
  MT_EW_CODES(MT_EW_X)
#undef MT_EW_X
  EW__COUNT
} mt_ew_code;

#define MT__EW_MAX_IN 3

/* dx[k] = g * d(op)/d(x_k) at x (x[k]: operand k's value; a number
 * operand's value for a number, whose dx is ignored). */
MT_HD void mt_ew_deriv(mt_ew_code c, const double *xs, double g, double *dx) {
  double x = xs[0];
  switch (c) {
  case EW_abs: dx[0] = g * (double)((0 < x) - (x < 0)); break;
  case EW_acos: dx[0] = g * -(1.0 / sqrt(-x * x + 1.0)); break;
  case EW_acosh: dx[0] = g * (1.0 / sqrt(x * x - 1.0)); break;
  case EW_asin: dx[0] = g * (1.0 / sqrt(-x * x + 1.0)); break;
  case EW_asinh: dx[0] = g * (1.0 / sqrt(x * x + 1.0)); break;
  case EW_atan: dx[0] = g / (x * x + 1.0); break;
  case EW_id: dx[0] = g; break;
  case EW_cos: dx[0] = g * -sin(x); break;
  case EW_cosh: dx[0] = g * sinh(x); break;
  case EW_deg2rad: dx[0] = g * (MT__UN_PI / 180.0); break;
  case EW_rad2deg: dx[0] = g * (180.0 / MT__UN_PI); break;
  case EW_erf: dx[0] = MT__EW_TWO_OVER_SQRT_PI * exp(-(x * x)) * g; break;
  case EW_erfc: dx[0] = -MT__EW_TWO_OVER_SQRT_PI * exp(-(x * x)) * g; break;
  case EW_erfinv:
    dx[0] = 0.5 * sqrt(MT__UN_PI) * exp(mt__un_erfinv(x) * mt__un_erfinv(x)) * g;
    break;
  case EW_exp: dx[0] = g * exp(x); break;
  case EW_exp2: dx[0] = g * exp2(x) * MT__EW_LN2; break;
  case EW_expm1: dx[0] = g * (expm1(x) + 1.0); break;
  case EW_lgamma: dx[0] = g * mt__un_digamma(x); break;
  case EW_log: dx[0] = g / x; break;
  case EW_log10: dx[0] = g / (x * MT__EW_LN10); break;
  case EW_log1p: dx[0] = g / (x + 1.0); break;
  case EW_log2: dx[0] = g / (x * MT__EW_LN2); break;
  case EW_nan_to_num: dx[0] = isfinite(x) ? g * 1.0 : g * 0.0; break;
  case EW_neg: dx[0] = -g; break;
  case EW_reciprocal: dx[0] = -g * ((1.0 / x) * (1.0 / x)); break;
  case EW_rsqrt: dx[0] = -0.5 * g * pow(1.0 / sqrt(x), 3.0); break;
  case EW_sin: dx[0] = g * cos(x); break;
  case EW_sinh: dx[0] = g * cosh(x); break;
  case EW_sqrt: dx[0] = g / (2.0 * sqrt(x)); break;
  case EW_square: dx[0] = g * (2.0 * x); break;
  case EW_tan: dx[0] = g * (1.0 + tan(x) * tan(x)); break;
  /* pow(x, e): x[1] is the exponent (a number operand, no gradient) */
  case EW_pow: dx[0] = g * (xs[1] * pow(xs[0], xs[1] - 1.0)); break;
  case EW_add: dx[0] = g; dx[1] = g; break;
  case EW_sub: dx[0] = g; dx[1] = -g; break;
  case EW_mul: dx[0] = g * xs[1]; dx[1] = g * xs[0]; break;
  case EW_div: dx[0] = g / xs[1]; dx[1] = -g * ((xs[0] / xs[1]) / xs[1]); break;
  case EW_logaddexp:
    dx[0] = g / (1.0 + exp(xs[1] - xs[0]));
    dx[1] = g / (1.0 + exp(xs[0] - xs[1]));
    break;
  /* fmod/remainder(a, number): a - trunc/floor(a / b) b, piecewise a + c */
  case EW_first: dx[0] = g; dx[1] = 0.0; break;
  default: break;
  }
}

/* One call of the engine, planned on the host: the upstream gradient's
 * shape, and per operand its broadcast strides against it (0 along a
 * broadcast dim), whether it is a number (its value) and whether it gets a
 * gradient (of its dtype). */
typedef struct mt_ew_par {
  mt_ew_code code;
  int n_in;
  int ndim;
  int64_t shape[MT_MAX_DIMS]; /* the upstream gradient's */
  int64_t bstride[MT__EW_MAX_IN][MT_MAX_DIMS];
  int number[MT__EW_MAX_IN];
  double value[MT__EW_MAX_IN];
  int grad[MT__EW_MAX_IN];
  mt_dtype dtype[MT__EW_MAX_IN];
} mt_ew_par;

/* Gradient element j of operand k: data[j] (operand k's dtype) and
 * mask[j]. x[k]: operand k's values (row-major, as doubles; NULL for a
 * number), gx/gm: the upstream gradient's values and mask. The first term
 * is stored, not added to 0: a -0.0 keeps its sign where nothing is summed
 * (same shapes: torch sums nothing). */
MT_HD void mt_ew_elem(const mt_ew_par *p, int k, const double *const *x, const double *gx,
                      const uint8_t *gm, void *data, uint8_t *mask, int64_t j) {
  int64_t gst[MT_MAX_DIMS], s = 1, base = 0, nb = 1;
  for (int d = p->ndim - 1; d >= 0; d--) {
    gst[d] = s;
    s *= p->shape[d];
  }
  /* the upstream coordinates operand element j fixes; nb: the others' count */
  for (int d = 0; d < p->ndim; d++) {
    if (p->bstride[k][d])
      base += ((j / p->bstride[k][d]) % p->shape[d]) * gst[d];
    else
      nb *= p->shape[d];
  }
  double acc = 0.0;
  int any = 0;
  for (int64_t r = 0; r < nb; r++) {
    int64_t i = base, rem = r;
    for (int d = p->ndim - 1; d >= 0; d--) {
      if (p->bstride[k][d]) continue;
      i += (rem % p->shape[d]) * gst[d];
      rem /= p->shape[d];
    }
    if (!gm[i]) continue;
    double xs[MT__EW_MAX_IN], dx[MT__EW_MAX_IN] = {0, 0, 0};
    for (int q = 0; q < p->n_in; q++) {
      if (p->number[q]) {
        xs[q] = p->value[q];
        continue;
      }
      int64_t off = 0, c = i;
      for (int d = p->ndim - 1; d >= 0; d--) {
        off += (c % p->shape[d]) * p->bstride[q][d];
        c /= p->shape[d];
      }
      xs[q] = x[q][off];
    }
    mt_ew_deriv(p->code, xs, gx[i], dx);
    acc = any ? acc + dx[k] : dx[k];
    any = 1;
  }
  mt_hd_set_f64(data, p->dtype[k], j, any ? acc : 0.0);
  mask[j] = (uint8_t)any;
}

#endif /* MT_GRAD_EW_MATH_H */

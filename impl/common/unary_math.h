/* unary_math.h - the per-element math of the unary family, shared by the
 * CPU reference (impl/cpu/unary.c) and the CUDA kernels (impl/cuda/unary.cu):
 * the parameters of one call (mt_un_par, planned on the host by unary.c),
 * the base ops (MT_UN_BASES), and one element's result (mt_un_elem).
 *
 * The special functions of the unary family that C's libm lacks, in double, ported from torch's ATen/native/Math.h (Cephes-derived:
 * see the 3-clause BSD note there, Copyright (c) 2018, Steven Moshier) so
 * that the special values (poles, signed infinities) are torch's.
 * float16/float32 results are these double results rounded once: within
 * the ulp tolerances of the goldens (mtgen checks torch's float32 against
 * its float64 with half the tolerance). */
#ifndef MT_UNARY_MATH_H
#define MT_UNARY_MATH_H

#include <math.h>
#include <stddef.h>

#include "common/mt_hd.h"

#define MT__UN_PI 3.14159265358979323846

MT_HD double mt__un_polevl(double x, const double *a, size_t len) {
  double r = 0.0;
  for (size_t i = 0; i <= len; i++) r = r * x + a[i];
  return r;
}

/* torch's calc_digamma (double): digamma(+-0) = -+inf, negative integers
 * NaN, reflection for the other negatives (into mt__un_digamma_pos, so
 * that no device function recurses). */
MT_HD double mt__un_digamma_pos(double x) {
  const double psi_10 = 2.25175258906672110764;
  const double a[] = {8.33333333333333333333E-2, -2.10927960927960927961E-2,
                      7.57575757575757575758E-3, -4.16666666666666666667E-3,
                      3.96825396825396825397E-3, -8.33333333333333333333E-3,
                      8.33333333333333333333E-2};
  double result = 0;
  while (x < 10) {
    result -= 1 / x;
    x += 1;
  }
  if (x == 10) return result + psi_10;
  double y = 0;
  if (x < 1.0e17) {
    double z = 1.0 / (x * x);
    y = z * mt__un_polevl(z, a, 6);
  }
  return result + log(x) - (0.5 / x) - y;
}
MT_HD double mt__un_digamma(double x) {
  if (x == 0) return copysign(INFINITY, -x);
  if (x < 0) {
    if (x == trunc(x)) return NAN;
    double q, r = modf(x, &q);
    return mt__un_digamma_pos(1 - x) - MT__UN_PI / tan(MT__UN_PI * r);
  }
  return mt__un_digamma_pos(x);
}

/* torch's calc_erfinv: a rational first guess and two Newton steps;
 * |y| > 1 -> NaN, +-1 -> +-inf. */
MT_HD double mt__un_erfinv(double y) {
  const double a[4] = {0.886226899, -1.645349621, 0.914624893, -0.140543331};
  const double b[4] = {-2.118377725, 1.442710462, -0.329097515, 0.012229801};
  const double c[4] = {-1.970840454, -1.624906493, 3.429567803, 1.641345311};
  const double d[2] = {3.543889200, 1.637067800};
  double x, z, num, dem, y_abs = fabs(y);
  if (y_abs > 1.0) return NAN;
  if (y_abs == 1.0) return copysign(INFINITY, y);
  if (y_abs <= 0.7) {
    z = y * y;
    num = (((a[3] * z + a[2]) * z + a[1]) * z + a[0]);
    dem = ((((b[3] * z + b[2]) * z + b[1]) * z + b[0]) * z + 1.0);
    x = y * num / dem;
  } else {
    z = sqrt(-log((1.0 - y_abs) / 2.0));
    num = ((c[3] * z + c[2]) * z + c[1]) * z + c[0];
    dem = (d[1] * z + d[0]) * z + 1.0;
    x = copysign(num, y) / dem;
  }
  const double two_over_sqrt_pi = 1.12837916709551257390;
  x = x - (erf(x) - y) / (two_over_sqrt_pi * exp(-x * x));
  x = x - (erf(x) - y) / (two_over_sqrt_pi * exp(-x * x));
  return x;
}

MT_HD double mt__un_chbevl(double x, const double *a, size_t len) {
  double b0 = a[0], b1 = 0.0, b2 = 0.0;
  for (size_t i = 1; i < len; i++) {
    b2 = b1;
    b1 = b0;
    b0 = x * b1 - b2 + a[i];
  }
  return 0.5 * (b0 - b2);
}

/* torch's calc_i0: the modified Bessel function of order 0 (even). */
MT_HD double mt__un_i0(double x) {
  const double A[] = {
      -4.41534164647933937950E-18, 3.33079451882223809783E-17, -2.43127984654795469359E-16,
      1.71539128555513303061E-15,  -1.16853328779934516808E-14, 7.67618549860493561688E-14,
      -4.85644678311192946090E-13, 2.95505266312963983461E-12, -1.72682629144155570723E-11,
      9.67580903537323691224E-11,  -5.18979560163526290666E-10, 2.65982372468238665035E-9,
      -1.30002500998624804212E-8,  6.04699502254191894932E-8,  -2.67079385394061173391E-7,
      1.11738753912010371815E-6,   -4.41673835845875056359E-6, 1.64484480707288970893E-5,
      -5.75419501008210370398E-5,  1.88502885095841655729E-4,  -5.76375574538582365885E-4,
      1.63947561694133579842E-3,   -4.32430999505057594430E-3, 1.05464603945949983183E-2,
      -2.37374148058994688156E-2,  4.93052842396707084878E-2,  -9.49010970480476444210E-2,
      1.71620901522208775349E-1,   -3.04682672343198398683E-1, 6.76795274409476084995E-1};
  const double B[] = {
      -7.23318048787475395456E-18, -4.83050448594418207126E-18, 4.46562142029675999901E-17,
      3.46122286769746109310E-17,  -2.82762398051658348494E-16, -3.42548561967721913462E-16,
      1.77256013305652638360E-15,  3.81168066935262242075E-15,  -9.55484669882830764870E-15,
      -4.15056934728722208663E-14, 1.54008621752140982691E-14,  3.85277838274214270114E-13,
      7.18012445138366623367E-13,  -1.79417853150680611778E-12, -1.32158118404477131188E-11,
      -3.14991652796324136454E-11, 1.18891471078464383424E-11,  4.94060238822496958910E-10,
      3.39623202570838634515E-9,   2.26666899049817806459E-8,   2.04891858946906374183E-7,
      2.89137052083475648297E-6,   6.88975834691682398426E-5,   3.36911647825569408990E-3,
      8.04490411014108831608E-1};
  x = fabs(x);
  if (x <= 8.0) return exp(x) * mt__un_chbevl(x / 2.0 - 2.0, A, 30);
  return exp(x) * mt__un_chbevl(32.0 / x - 2.0, B, 25) / sqrt(x);
}

/* torch's sinc: 1 at 0, sin(pi x) / (pi x) elsewhere (NaN stays NaN). */
MT_HD double mt__un_sinc(double x) {
  if (x == 0) return 1.0;
  double p = MT__UN_PI * x;
  return sin(p) / p;
}

/* ---- one call's parameters (planned on the host by impl/cpu/unary.c) ---- */

/* The base ops: MT_UN_BASES(X), X(base, class, bool rule, torch kernel name,
 * torch's bool message); the class and the names are the host's planning
 * (unary.c), the base picks the math below. */
#define MT_UN_NEG_BOOL_MSG                                                                   \
  "Negation, the `-` operator, on a bool tensor is not supported. If you are trying to " \
  "invert a mask, use the `~` or `logical_not()` operator instead."
#define MT_UN_BASES(X)                                                     \
  X(abs, UN_KEEP, B_REFUSE, "abs_cpu", NULL)                               \
  X(acos, UN_FLOAT, B_KEEP, NULL, NULL)                                    \
  X(acosh, UN_FLOAT, B_KEEP, NULL, NULL)                                   \
  X(angle, UN_FLOAT, B_KEEP, NULL, NULL)                                   \
  X(asin, UN_FLOAT, B_KEEP, NULL, NULL)                                    \
  X(asinh, UN_FLOAT, B_KEEP, NULL, NULL)                                   \
  X(atan, UN_FLOAT, B_KEEP, NULL, NULL)                                    \
  X(atanh, UN_FLOAT, B_KEEP, NULL, NULL)                                   \
  X(bitwise_not, UN_IONLY, B_KEEP, "bitwise_not_cpu", NULL)                \
  X(ceil, UN_KEEP, B_REFUSE, "ceil_vml_cpu", NULL)                         \
  X(clamp, UN_CLAMP, B_KEEP, NULL, NULL)                                   \
  X(conj_physical, UN_KEEP, B_KEEP, NULL, NULL)                            \
  X(cos, UN_FLOAT, B_KEEP, NULL, NULL)                                     \
  X(cosh, UN_FLOAT, B_KEEP, NULL, NULL)                                    \
  X(deg2rad, UN_FLOAT, B_KEEP, NULL, NULL)                                 \
  X(digamma, UN_FLOAT, B_KEEP, NULL, NULL)                                 \
  X(erf, UN_FLOAT, B_KEEP, NULL, NULL)                                     \
  X(erfc, UN_FLOAT, B_KEEP, NULL, NULL)                                    \
  X(erfinv, UN_FLOAT, B_KEEP, NULL, NULL)                                  \
  X(exp, UN_FLOAT, B_KEEP, NULL, NULL)                                     \
  X(exp2, UN_FLOAT, B_KEEP, NULL, NULL)                                    \
  X(expm1, UN_FLOAT, B_KEEP, NULL, NULL)                                   \
  X(floor, UN_KEEP, B_REFUSE, "floor_vml_cpu", NULL)                       \
  X(frac, UN_FONLY, B_REFUSE, "frac_cpu", NULL)                            \
  X(lgamma, UN_FLOAT, B_KEEP, NULL, NULL)                                  \
  X(log, UN_FLOAT, B_KEEP, NULL, NULL)                                     \
  X(log10, UN_FLOAT, B_KEEP, NULL, NULL)                                   \
  X(log1p, UN_FLOAT, B_KEEP, NULL, NULL)                                   \
  X(log2, UN_FLOAT, B_KEEP, NULL, NULL)                                    \
  X(logit, UN_FLOAT, B_KEEP, NULL, NULL)                                   \
  X(i0, UN_FLOAT, B_KEEP, NULL, NULL)                                      \
  X(isnan, UN_PRED, B_KEEP, NULL, NULL)                                    \
  X(nan_to_num, UN_KEEP, B_KEEP, NULL, NULL)                               \
  X(neg, UN_KEEP, B_REFUSE, NULL, MT_UN_NEG_BOOL_MSG)                      \
  X(positive, UN_KEEP, B_REFUSE, NULL,                                     \
    "The `+` operator, on a bool tensor is not supported.")                \
  X(pow, UN_POW, B_KEEP, NULL, NULL)                                       \
  X(rad2deg, UN_FLOAT, B_KEEP, NULL, NULL)                                 \
  X(reciprocal, UN_FLOAT, B_KEEP, NULL, NULL)                              \
  X(round, UN_KEEP, B_REFUSE, "round_vml_cpu", NULL)                       \
  X(rsqrt, UN_FLOAT, B_KEEP, NULL, NULL)                                   \
  X(sigmoid, UN_FLOAT, B_KEEP, NULL, NULL)                                 \
  X(sign, UN_KEEP, B_KEEP, NULL, NULL)                                     \
  X(signbit, UN_PRED, B_KEEP, NULL, NULL)                                  \
  X(sin, UN_FLOAT, B_KEEP, NULL, NULL)                                     \
  X(sinc, UN_FLOAT, B_KEEP, NULL, NULL)                                    \
  X(sinh, UN_FLOAT, B_KEEP, NULL, NULL)                                    \
  X(sqrt, UN_FLOAT, B_KEEP, NULL, NULL)                                    \
  X(square, UN_KEEP, B_I64, NULL, NULL)                                    \
  X(tan, UN_FLOAT, B_KEEP, NULL, NULL)                                     \
  X(tanh, UN_FLOAT, B_KEEP, NULL, NULL)                                    \
  X(trunc, UN_KEEP, B_REFUSE, "trunc_vml_cpu", NULL)

typedef enum {
#define MT_UN_X(base, cls, b, k, m) UN_##base,
  MT_UN_BASES(MT_UN_X)
#undef MT_UN_X
  UN__COUNT
} mt_un_base;

typedef struct mt_un_par {
  mt_un_base base;
  mt_dtype in, out; /* input and result dtype */
  int int_path;     /* exact integer math (result not floating, not a predicate) */
  int to_float;     /* integer input, float32/16 result: converted to float32 first */
  double e;         /* pow: the exponent */
  int64_t ie;       /* pow: the exponent, integer path */
  int has_lo, has_hi;
  double lo, hi; /* clamp bounds, rounded to the result dtype */
  int64_t ilo, ihi;
  double nan, posinf, neginf; /* nan_to_num replacements */
  int has_eps;
  double eps_lo, eps_hi; /* logit clamp, in the compute dtype */
  double c;              /* deg2rad/rad2deg factor, in the compute dtype */
} mt_un_par;

/* ---- the floating path: double in, double out ----------------------------- */

/* pow's exponent special cases, as torch's pow_tensor_scalar dispatch:
 * 0 -> fill 1, 1 -> copy, 0.5 -> sqrt, -0.5 -> rsqrt, -1 -> reciprocal,
 * 2 -> x*x, 3 -> x*x*x, -2 -> 1/(x*x), otherwise std::pow(x, (double)e).
 * Computed in float for float16/float32, as torch (the signs of zero
 * depend on it). */
MT_HD float mt__un_pow_f32(float x, double e) {
  if (e == 0.0) return 1.0f;
  if (e == 1.0) return x;
  if (e == 0.5) return sqrtf(x);
  if (e == -0.5) return 1.0f / sqrtf(x);
  if (e == -1.0) return 1.0f / x;
  if (e == 2.0) return x * x;
  if (e == 3.0) return x * x * x;
  if (e == -2.0) return 1.0f / (x * x);
  return (float)pow((double)x, e);
}
MT_HD double mt__un_pow_f64(double x, double e) {
  if (e == 0.0) return 1.0;
  if (e == 1.0) return x;
  if (e == 0.5) return sqrt(x);
  if (e == -0.5) return 1.0 / sqrt(x);
  if (e == -1.0) return 1.0 / x;
  if (e == 2.0) return x * x;
  if (e == 3.0) return x * x * x;
  if (e == -2.0) return 1.0 / (x * x);
  return pow(x, e);
}

MT_HD double mt_un_f(const mt_un_par *p, double x) {
  switch (p->base) {
  case UN_abs: return fabs(x);
  case UN_acos: return acos(x);
  case UN_acosh: return acosh(x);
  /* angle of a real: pi for x < 0, NaN for NaN, else 0 (also for -0.0) */
  case UN_angle: return isnan(x) ? x : x < 0 ? MT__UN_PI : 0.0;
  case UN_asin: return asin(x);
  case UN_asinh: return asinh(x);
  case UN_atan: return atan(x);
  case UN_atanh: return atanh(x);
  case UN_ceil: return ceil(x);
  /* torch's clamp_scalar: NaN propagates, min(max(x, lo), hi), so hi wins
   * when lo > hi */
  case UN_clamp:
    if (isnan(x)) return x;
    if (p->has_lo && x < p->lo) x = p->lo;
    if (p->has_hi && x > p->hi) x = p->hi;
    return x;
  case UN_conj_physical: return x;
  case UN_cos: return cos(x);
  case UN_cosh: return cosh(x);
  /* x * c, c = pi/180 or 180/pi rounded to the compute dtype, one rounding:
   * the product of two floats is exact in double */
  case UN_deg2rad:
  case UN_rad2deg: return x * p->c;
  case UN_digamma: return mt__un_digamma(x);
  case UN_erf: return erf(x);
  case UN_erfc: return erfc(x);
  case UN_erfinv: return mt__un_erfinv(x);
  case UN_exp: return exp(x);
  case UN_exp2: return exp2(x);
  case UN_expm1: return expm1(x);
  case UN_floor: return floor(x);
  /* torch: x - trunc(x) (exact; frac(+-inf) = NaN, frac(-2.0) = +0) */
  case UN_frac: return x - trunc(x);
  case UN_lgamma: return lgamma(x);
  case UN_log: return log(x);
  case UN_log10: return log10(x);
  case UN_log1p: return log1p(x);
  case UN_log2: return log2(x);
  /* torch: x clamped to [eps, 1 - eps] when eps is given, then log(x / (1 - x)),
   * each op in the result dtype: 1 - x and the quotient rounded to it (near
   * x = 0.5 the quotient's rounding is the result's error: float32 0.49..
   * is up to ~900 ulps from the exact logit, float16 20; the log of the
   * rounded quotient, rounded once, is torch's within 1 ulp, found by
   * golden/reseed.py on `logit_.masked.f16.basic`) */
  case UN_logit: {
    if (p->has_eps) x = x < p->eps_lo ? p->eps_lo : (x > p->eps_hi ? p->eps_hi : x);
    double d = mt_hd_round(p->out, 1.0 - x);
    return log(mt_hd_round(p->out, x / d));
  }
  case UN_i0: return mt__un_i0(x);
  case UN_isnan: return isnan(x) ? 1.0 : 0.0;
  case UN_nan_to_num:
    if (isnan(x)) return p->nan;
    if (isinf(x)) return x > 0 ? p->posinf : p->neginf;
    return x;
  case UN_neg: return -x;
  case UN_positive: return x;
  case UN_pow:
    return p->out == MT_float64 ? mt__un_pow_f64(x, p->e) : (double)mt__un_pow_f32((float)x, p->e);
  case UN_reciprocal: return 1.0 / x;
  /* round half to even (the default rounding mode), as torch's nearbyint */
  case UN_round: return nearbyint(x);
  case UN_rsqrt: return 1.0 / sqrt(x);
  case UN_sigmoid: return 1.0 / (1.0 + exp(-x));
  /* torch: (0 < x) - (x < 0): sign(NaN) = 0, sign(-0.0) = +0 */
  case UN_sign: return (double)((0 < x) - (x < 0));
  case UN_signbit: return signbit(x) ? 1.0 : 0.0;
  case UN_sin: return sin(x);
  case UN_sinc: return mt__un_sinc(x);
  case UN_sinh: return sinh(x);
  case UN_sqrt: return sqrt(x);
  case UN_square: return x * x;
  case UN_tan: return tan(x);
  case UN_tanh: return tanh(x);
  case UN_trunc: return trunc(x);
  default: return NAN; /* bitwise_not has no floating path (refused first) */
  }
}

/* ---- the integer path: exact, wrapping to the result width ----------------
 * (unsigned arithmetic, so abs/neg of the minimum wrap instead of
 * overflowing); ops without one keep the value (ceil, floor, round, trunc,
 * conj_physical, positive, nan_to_num of an integer). */
MT_HD int64_t mt_un_i(const mt_un_par *p, int64_t x) {
  switch (p->base) {
  case UN_abs: return x < 0 ? (int64_t)(0 - (uint64_t)x) : x;
  case UN_neg: return (int64_t)(0 - (uint64_t)x);
  case UN_sign: return (0 < x) - (x < 0);
  case UN_square: return (int64_t)((uint64_t)x * (uint64_t)x);
  case UN_bitwise_not: return p->out == MT_bool ? !x : ~x;
  case UN_clamp:
    if (p->has_lo && x < p->ilo) x = p->ilo;
    if (p->has_hi && x > p->ihi) x = p->ihi;
    return x;
  case UN_pow: { /* x ** ie by squaring, ie >= 0 (negative exponents are refused first) */
    uint64_t r = 1, b = (uint64_t)x;
    for (int64_t e = p->ie; e > 0; e >>= 1) {
      if (e & 1) r *= b;
      b *= b;
    }
    return (int64_t)r;
  }
  default: return x;
  }
}

/* out[k] = op(in[k]): one element, either path. */
MT_HD void mt_un_elem(const mt_un_par *p, const void *in, void *out, int64_t k) {
  if (p->int_path) {
    mt_hd_sti(out, p->out, k, mt_un_i(p, mt_hd_ldi(in, p->in, k)));
  } else {
    double x = mt_hd_get_f64(in, p->in, k);
    if (p->to_float) x = (double)(float)x; /* integers are converted to float32 first */
    mt_hd_set_f64(out, p->out, k, mt_un_f(p, x));
  }
}

#endif /* MT_UNARY_MATH_H */

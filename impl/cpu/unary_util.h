/* unary_util.h - the special functions of the unary family that C's libm
 * lacks, in double, ported from torch's ATen/native/Math.h (Cephes-derived:
 * see the 3-clause BSD note there, Copyright (c) 2018, Steven Moshier) so
 * that the special values (poles, signed infinities) are torch's.
 * float16/float32 results are these double results rounded once: within
 * the ulp tolerances of the goldens (mtgen checks torch's float32 against
 * its float64 with half the tolerance). */
#ifndef MT_UNARY_UTIL_H
#define MT_UNARY_UTIL_H

#include <math.h>
#include <stddef.h>

#define MT__UN_PI 3.14159265358979323846

static inline double mt__un_polevl(double x, const double *a, size_t len) {
  double r = 0.0;
  for (size_t i = 0; i <= len; i++) r = r * x + a[i];
  return r;
}

/* torch's calc_digamma (double): digamma(+-0) = -+inf, negative integers
 * NaN, reflection for the other negatives. */
static inline double mt__un_digamma(double x) {
  static const double psi_10 = 2.25175258906672110764;
  static const double a[] = {8.33333333333333333333E-2, -2.10927960927960927961E-2,
                             7.57575757575757575758E-3, -4.16666666666666666667E-3,
                             3.96825396825396825397E-3, -8.33333333333333333333E-3,
                             8.33333333333333333333E-2};
  if (x == 0) return copysign(INFINITY, -x);
  if (x < 0) {
    if (x == trunc(x)) return NAN;
    double q, r = modf(x, &q);
    return mt__un_digamma(1 - x) - MT__UN_PI / tan(MT__UN_PI * r);
  }
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

/* torch's calc_erfinv: a rational first guess and two Newton steps;
 * |y| > 1 -> NaN, +-1 -> +-inf. */
static inline double mt__un_erfinv(double y) {
  static const double a[4] = {0.886226899, -1.645349621, 0.914624893, -0.140543331};
  static const double b[4] = {-2.118377725, 1.442710462, -0.329097515, 0.012229801};
  static const double c[4] = {-1.970840454, -1.624906493, 3.429567803, 1.641345311};
  static const double d[2] = {3.543889200, 1.637067800};
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

static inline double mt__un_chbevl(double x, const double *a, size_t len) {
  double b0 = a[0], b1 = 0.0, b2 = 0.0;
  for (size_t i = 1; i < len; i++) {
    b2 = b1;
    b1 = b0;
    b0 = x * b1 - b2 + a[i];
  }
  return 0.5 * (b0 - b2);
}

/* torch's calc_i0: the modified Bessel function of order 0 (even). */
static inline double mt__un_i0(double x) {
  static const double A[] = {
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
  static const double B[] = {
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
static inline double mt__un_sinc(double x) {
  if (x == 0) return 1.0;
  double p = MT__UN_PI * x;
  return sin(p) / p;
}

#endif /* MT_UNARY_UTIL_H */

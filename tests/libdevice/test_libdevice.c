/* test_libdevice.c - libdevice compiled for the host (to_x86.py + shim.c)
 * is CUDA's math and computes what it should: the functions the emulation
 * sends to it agree with glibc within a few ulp over a sweep of arguments
 * (a wrong shim, say d2i.hi and d2i.lo swapped or fma rounded twice, is
 * off by far more), and lgamma at -2.5 shows the difference that made
 * float64 lgamma's golden tolerance ulp:16 (tests/libdevice/README.md). */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "mt_test.h"

double __nv_exp(double), __nv_log(double), __nv_sin(double), __nv_cos(double);
double __nv_tan(double), __nv_expm1(double), __nv_log1p(double), __nv_tanh(double);
double __nv_atan(double), __nv_cbrt(double), __nv_erf(double), __nv_lgamma(double);
double __nv_pow(double, double);
float __nv_expf(float), __nv_logf(float), __nv_sinf(float);

/* the distance in representable doubles between a and b (0 when equal,
 * both NaN included) */
static double ulps(double a, double b) {
  if (a == b || (isnan(a) && isnan(b))) return 0;
  if (isnan(a) || isnan(b) || isinf(a) || isinf(b)) return INFINITY;
  int64_t x, y;
  memcpy(&x, &a, 8), memcpy(&y, &b, 8);
  if (x < 0) x = INT64_MIN - x; /* the sign-magnitude order as one integer line */
  if (y < 0) y = INT64_MIN - y;
  /* exact in 64 bits (a double would round a difference of 2^62-sized keys) */
  uint64_t d = x > y ? (uint64_t)x - (uint64_t)y : (uint64_t)y - (uint64_t)x;
  return (double)d;
}

static double ulpsf(float a, float b) {
  if (a == b || (isnan(a) && isnan(b))) return 0;
  if (isnan(a) || isnan(b) || isinf(a) || isinf(b)) return INFINITY;
  int32_t x, y;
  memcpy(&x, &a, 4), memcpy(&y, &b, 4);
  if (x < 0) x = INT32_MIN - x;
  if (y < 0) y = INT32_MIN - y;
  return fabs((double)x - (double)y);
}

typedef struct {
  const char *name;
  double (*dev)(double), (*host)(double);
  double lo, hi;
} fn1;

/* The CUDA Math API bounds these (double) within 2 ulp of the correctly
 * rounded result, glibc within 1 or 2: 4 between them. */
TEST(double_functions_agree_with_glibc_within_4_ulp) {
  static const fn1 fns[] = {
      {"exp", __nv_exp, exp, -700, 700},       {"log", __nv_log, log, 1e-300, 1e300},
      {"sin", __nv_sin, sin, -1e4, 1e4},       {"cos", __nv_cos, cos, -1e4, 1e4},
      {"tan", __nv_tan, tan, -1e3, 1e3},       {"expm1", __nv_expm1, expm1, -40, 700},
      {"log1p", __nv_log1p, log1p, -0.99, 1e6}, {"tanh", __nv_tanh, tanh, -20, 20},
      {"atan", __nv_atan, atan, -1e6, 1e6},    {"cbrt", __nv_cbrt, cbrt, -1e9, 1e9},
      {"erf", __nv_erf, erf, -6, 6},           {"lgamma", __nv_lgamma, lgamma, 2.5, 1e6},
  };
  for (size_t f = 0; f < sizeof fns / sizeof *fns; f++) {
    double worst = 0, at = 0;
    int n = 20000;
    for (int i = 0; i <= n; i++) {
      double x;
      if (fns[f].lo > 0) /* log-spaced: every binade */
        x = exp(log(fns[f].lo) + (log(fns[f].hi) - log(fns[f].lo)) * i / n);
      else
        x = fns[f].lo + (fns[f].hi - fns[f].lo) * i / n;
      double u = ulps(fns[f].dev(x), fns[f].host(x));
      if (u > worst) worst = u, at = x;
    }
    if (worst > 4) fprintf(stderr, "  %s: %.0f ulp at %.17g\n", fns[f].name, worst, at);
    CHECK(worst <= 4);
  }
  double worst = 0;
  for (int i = 0; i <= 2000; i++) { /* pow(x, y) over x in (0, 10], y in [-20, 20] */
    double x = 10.0 * (i + 1) / 2001, y = -20 + 40.0 * ((i * 7919) % 2001) / 2000;
    double u = ulps(__nv_pow(x, y), pow(x, y));
    if (u > worst) worst = u;
  }
  CHECK(worst <= 4);
}

/* float: the functions built on the approximate ex2/lg2 units, which
 * shim.c computes exactly; CUDA bounds them within 2 ulp, glibc within 1. */
TEST(float_functions_agree_with_glibc_within_3_ulp) {
  double worst = 0;
  for (int i = 0; i <= 20000; i++) {
    float x = -80.0f + 160.0f * (float)i / 20000.0f;
    float p = (float)(1e-30 * pow(1e60, (double)i / 20000.0)); /* every binade of (1e-30, 1e30) */
    double u = ulpsf(__nv_expf(x), expf(x));
    u = fmax(u, ulpsf(__nv_logf(p), logf(p)));
    u = fmax(u, ulpsf(__nv_sinf(x), sinf(x)));
    if (u > worst) worst = u;
  }
  CHECK(worst <= 3);
}

/* lgamma(-2.5) = log(|Gamma(-2.5)|) = log(8 sqrt(pi) / 15)
 * = -0.05624371649767405067259... (mpmath at 40 digits), whose double is
 * -0.056243716497674054 (ulp 2^-57). torch's golden value is 1 ulp from it,
 * glibc 2. libdevice, inside the interval (-11.0001, -2.2637) where the
 * CUDA Math API gives its lgamma no bound, is more than 8 ulp from it (the
 * golden tolerance before) and within 15 (so within ulp:16 of torch's).
 * A libdevice that fixes this fails the first check on it: then DEVICE
 * in golden/mtgen/families/unary.py may go. */
TEST(lgamma_inside_the_unbounded_interval_needs_ulp_16) {
  const double want = -0.056243716497674054;
  CHECK(ulps(lgamma(-2.5), want) <= 2);
  double u = ulps(__nv_lgamma(-2.5), want);
  if (!(u > 8 && u <= 15))
    fprintf(stderr, "  lgamma(-2.5): libdevice %.17g: %.0f ulp from %.17g\n", __nv_lgamma(-2.5),
            u, want);
  CHECK(u > 8);
  CHECK(u <= 15);
}

MT_TEST_MAIN(T(double_functions_agree_with_glibc_within_4_ulp),
             T(float_functions_agree_with_glibc_within_3_ulp),
             T(lgamma_inside_the_unbounded_interval_needs_ulp_16))

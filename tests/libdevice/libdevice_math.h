/* libdevice_math.h - force-included (-include) into the emulation's C++
 * sources by the cuda_emu_libdevice plugin (tests/libdevice/README.md): every
 * call of a C math function whose result can differ between CUDA's
 * libdevice and glibc (the transcendental ones; sqrt, fma, floor, fabs and
 * the like are correctly rounded on both) goes to libdevice's own code,
 * compiled for the host by to_x86.py, with the overloads CUDA's device code
 * has: a float argument calls the float function (__nv_expf), a double or
 * an integer the double one (__nv_exp), as nvcc resolves them.
 *
 * The system headers the sources use come first, so that the macros below
 * rename only the calls in our own code. Host code in a .cu file calls
 * glibc on a real machine; here it calls libdevice too (no .cu file calls
 * one itself: the math is in impl/common's MT_HD headers, which the kernels
 * call). */
#ifndef MT_LIBDEVICE_MATH_H
#define MT_LIBDEVICE_MATH_H

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <algorithm>
#include <cmath>
#include <type_traits>

#define MT_LDV_FUNCS1(X)                                                                      \
  X(acos) X(acosh) X(asin) X(asinh) X(atan) X(atanh) X(cbrt) X(cos) X(cosh) X(erf) X(erfc)   \
  X(exp) X(exp2) X(exp10) X(expm1) X(lgamma) X(log) X(log10) X(log1p) X(log2) X(sin)         \
  X(sinh) X(tan) X(tanh) X(tgamma)
#define MT_LDV_FUNCS2(X) X(atan2) X(hypot) X(pow)

extern "C" {
#define MT_LDV_DECL1(fn) double __nv_##fn(double); float __nv_##fn##f(float);
#define MT_LDV_DECL2(fn) double __nv_##fn(double, double); float __nv_##fn##f(float, float);
MT_LDV_FUNCS1(MT_LDV_DECL1)
MT_LDV_FUNCS2(MT_LDV_DECL2)
#undef MT_LDV_DECL1
#undef MT_LDV_DECL2
}

/* one argument: float -> the float function; double or an integer -> the
 * double one */
#define MT_LDV_OVL1(fn)                                                                        \
  static inline double mt_ldv_##fn(double x) { return __nv_##fn(x); }                           \
  static inline float mt_ldv_##fn(float x) { return __nv_##fn##f(x); }                          \
  template <class T, class = typename std::enable_if<std::is_integral<T>::value>::type>       \
  static inline double mt_ldv_##fn(T x) { return __nv_##fn((double)x); }
/* two: both float -> the float function; else the double one (C++'s
 * promotion, which CUDA's overloads follow) */
#define MT_LDV_OVL2(fn)                                                                        \
  static inline float mt_ldv_##fn(float x, float y) { return __nv_##fn##f(x, y); }              \
  template <class A, class B>                                                                 \
  static inline double mt_ldv_##fn(A x, B y) { return __nv_##fn((double)x, (double)y); }
MT_LDV_FUNCS1(MT_LDV_OVL1)
MT_LDV_FUNCS2(MT_LDV_OVL2)
#undef MT_LDV_OVL1
#undef MT_LDV_OVL2

/* the float names (expf) and the generic ones (exp) */
#define acos(x) mt_ldv_acos(x)
#define acosh(x) mt_ldv_acosh(x)
#define asin(x) mt_ldv_asin(x)
#define asinh(x) mt_ldv_asinh(x)
#define atan(x) mt_ldv_atan(x)
#define atanh(x) mt_ldv_atanh(x)
#define cbrt(x) mt_ldv_cbrt(x)
#define cos(x) mt_ldv_cos(x)
#define cosh(x) mt_ldv_cosh(x)
#define erf(x) mt_ldv_erf(x)
#define erfc(x) mt_ldv_erfc(x)
#define exp(x) mt_ldv_exp(x)
#define exp2(x) mt_ldv_exp2(x)
#define exp10(x) mt_ldv_exp10(x)
#define expm1(x) mt_ldv_expm1(x)
#define lgamma(x) mt_ldv_lgamma(x)
#define log(x) mt_ldv_log(x)
#define log10(x) mt_ldv_log10(x)
#define log1p(x) mt_ldv_log1p(x)
#define log2(x) mt_ldv_log2(x)
#define sin(x) mt_ldv_sin(x)
#define sinh(x) mt_ldv_sinh(x)
#define tan(x) mt_ldv_tan(x)
#define tanh(x) mt_ldv_tanh(x)
#define tgamma(x) mt_ldv_tgamma(x)
#define atan2(y, x) mt_ldv_atan2(y, x)
#define hypot(x, y) mt_ldv_hypot(x, y)
#define pow(x, y) mt_ldv_pow(x, y)
#define acosf(x) __nv_acosf(x)
#define acoshf(x) __nv_acoshf(x)
#define asinf(x) __nv_asinf(x)
#define asinhf(x) __nv_asinhf(x)
#define atanf(x) __nv_atanf(x)
#define atanhf(x) __nv_atanhf(x)
#define cbrtf(x) __nv_cbrtf(x)
#define cosf(x) __nv_cosf(x)
#define coshf(x) __nv_coshf(x)
#define erff(x) __nv_erff(x)
#define erfcf(x) __nv_erfcf(x)
#define expf(x) __nv_expf(x)
#define exp2f(x) __nv_exp2f(x)
#define exp10f(x) __nv_exp10f(x)
#define expm1f(x) __nv_expm1f(x)
#define lgammaf(x) __nv_lgammaf(x)
#define logf(x) __nv_logf(x)
#define log10f(x) __nv_log10f(x)
#define log1pf(x) __nv_log1pf(x)
#define log2f(x) __nv_log2f(x)
#define sinf(x) __nv_sinf(x)
#define sinhf(x) __nv_sinhf(x)
#define tanf(x) __nv_tanf(x)
#define tanhf(x) __nv_tanhf(x)
#define tgammaf(x) __nv_tgammaf(x)
#define atan2f(y, x) __nv_atan2f(y, x)
#define hypotf(x, y) __nv_hypotf(x, y)
#define powf(x, y) __nv_powf(x, y)

#endif

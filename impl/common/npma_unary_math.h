/* npma_unary_math.h - the per-element math of the numpy_ma profile's unary
 * family, shared by the CPU reference (impl/cpu/npma_unary.c, its host
 * plan: checks, numpy's dtype rules, outputs) and the CUDA kernels
 * (impl/cuda/npma_unary.cu): the parameters of one call (mt_npu_par), the
 * ops (NPU_* codes, switched on: no function pointers), numpy.ma's domains
 * and fill_value, and one element's data and mask (mt_npu_elem). The rules
 * (NPMA-3, -4, -7, -8, -21, -23) are npma_unary.c's header. */
#ifndef MT_NPMA_UNARY_MATH_H
#define MT_NPMA_UNARY_MATH_H

#include <math.h>

#include "common/mt_hd.h"
#include "common/npma_math.h"

/* the family's ops (impl/cpu/npma_ops.def's lines of npma_unary.c): the
 * CUDA table's slots */
#define NPMA_UNARY_OPS(X)                                                                       \
  X(neg) X(negative) X(abs) X(absolute) X(exp) X(log) X(log2) X(log10) X(sqrt) X(sin) X(cos)  \
  X(tan) X(arcsin) X(asin) X(arccos) X(acos) X(arctan) X(atan) X(sinh) X(cosh) X(tanh)        \
  X(arcsinh) X(asinh) X(arccosh) X(acosh) X(arctanh) X(atanh) X(floor) X(ceil) X(pow) X(pow_) \
  X(clamp) X(clip) X(round) X(angle) X(conj_physical)

/* the kinds of element loop */
enum { NPU_FN, NPU_POW, NPU_CLIP, NPU_ROUND, NPU_ANGLE, NPU_CONJ };

/* the float functions of NPU_FN (NPU_NEG: no libm call) */
enum {
  NPU_NEG, NPU_ABS, NPU_EXP, NPU_LOG, NPU_LOG2, NPU_LOG10, NPU_SQRT, NPU_SIN, NPU_COS,
  NPU_TAN, NPU_ASIN, NPU_ACOS, NPU_ATAN, NPU_SINH, NPU_COSH, NPU_TANH, NPU_ASINH,
  NPU_ACOSH, NPU_ATANH, NPU_FLOOR, NPU_CEIL
};

/* numpy.ma's domains (np.ma's _Domain* objects), tested on the input data:
 * 1 = outside, masked. */
enum {
  NPU_DOM_NONE,     /* sin cos arctan sinh cosh tanh arcsinh floor ceil exp ... */
  NPU_DOM_GT0,      /* log log2 log10: _DomainGreater(0): masks x <= 0 */
  NPU_DOM_GE0,      /* sqrt: _DomainGreaterEqual(0): masks x < 0 */
  NPU_DOM_GE1,      /* arccosh: _DomainGreaterEqual(1): masks x < 1 */
  NPU_DOM_UNIT,     /* arcsin arccos: _DomainCheckInterval(-1, 1): masks |x| > 1 */
  NPU_DOM_UNIT_EPS, /* arctanh: _DomainCheckInterval(-1 + 1e-15, 1 - 1e-15) */
  NPU_DOM_TAN       /* tan: _DomainTan(1e-35): masks |cos(x)| < 1e-35 */
};

/* One call, planned on the host (npma_unary.c). */
typedef struct mt_npu_par {
  int kind;           /* NPU_FN ... */
  int fn;             /* NPU_FN: the function */
  int domain;         /* NPU_FN: NPU_DOM_* */
  int is_abs;         /* NPU_FN: abs/absolute (integers: wrapping |x|) */
  mt_dtype in, out;   /* the input data's dtype, the result's (rt) */
  mt_dtype pt;        /* NPU_POW: numpy's promotion of the operands */
  int is_int;         /* integer element loop (the result dtype not a float) */
  int inplace;        /* NPU_POW: pow_ */
  int64_t ei;         /* NPU_POW: the integer exponent */
  double e;           /* NPU_POW: the exponent */
  int has_lo, has_hi; /* NPU_CLIP: the bounds given */
  int64_t lo_i, hi_i; /* NPU_CLIP: integer bounds */
  double lo_f, hi_f;  /* NPU_CLIP: float bounds */
  int64_t dec;        /* NPU_ROUND: decimals */
} mt_npu_par;

/* numpy's float loop of fn: float16 and float32 in float, float64 in double */
MT_HD double mt_npu_float_fn(int fn, mt_dtype rt, double x) {
  int f = rt != MT_float64;
  float xf = (float)x;
  switch (fn) {
  case NPU_NEG: return -x;
  case NPU_ABS: return f ? (double)fabsf(xf) : fabs(x);
  case NPU_EXP: return f ? (double)expf(xf) : exp(x);
  case NPU_LOG: return f ? (double)logf(xf) : log(x);
  case NPU_LOG2: return f ? (double)log2f(xf) : log2(x);
  case NPU_LOG10: return f ? (double)log10f(xf) : log10(x);
  case NPU_SQRT: return f ? (double)sqrtf(xf) : sqrt(x);
  case NPU_SIN: return f ? (double)sinf(xf) : sin(x);
  case NPU_COS: return f ? (double)cosf(xf) : cos(x);
  case NPU_TAN: return f ? (double)tanf(xf) : tan(x);
  case NPU_ASIN: return f ? (double)asinf(xf) : asin(x);
  case NPU_ACOS: return f ? (double)acosf(xf) : acos(x);
  case NPU_ATAN: return f ? (double)atanf(xf) : atan(x);
  case NPU_SINH: return f ? (double)sinhf(xf) : sinh(x);
  case NPU_COSH: return f ? (double)coshf(xf) : cosh(x);
  case NPU_TANH: return f ? (double)tanhf(xf) : tanh(x);
  case NPU_ASINH: return f ? (double)asinhf(xf) : asinh(x);
  case NPU_ACOSH: return f ? (double)acoshf(xf) : acosh(x);
  case NPU_ATANH: return f ? (double)atanhf(xf) : atanh(x);
  case NPU_FLOOR: return f ? (double)floorf(xf) : floor(x);
  case NPU_CEIL: return f ? (double)ceilf(xf) : ceil(x);
  default: return NAN;
  }
}

/* numpy.ma's domain test of input element x (data dtype dt): the bounds
 * are Python floats, so numpy compares in the data's dtype for floats
 * (1 - 1e-15 is 1.0 in float32 and float16) and in float64 for integers;
 * tan's |cos(x)| is computed in the float loop's dtype rt. */
MT_HD int mt_npu_out_of_domain(int domain, mt_dtype dt, mt_dtype rt, double x) {
  mt_dtype cmp = mt_hd_is_float(dt) ? dt : MT_float64;
  switch (domain) {
  case NPU_DOM_GT0: return x <= 0.0;
  case NPU_DOM_GE0: return x < 0.0;
  case NPU_DOM_GE1: return x < 1.0;
  case NPU_DOM_UNIT: return x > 1.0 || x < -1.0;
  case NPU_DOM_UNIT_EPS:
    return x > mt_hd_round(cmp, 1.0 - 1e-15) || x < mt_hd_round(cmp, -1.0 + 1e-15);
  case NPU_DOM_TAN: {
    double c = mt_hd_round(rt, rt != MT_float64 ? (double)cosf((float)x) : cos(x));
    return fabs(c) < mt_hd_round(rt, 1e-35);
  }
  default: return 0;
  }
}

/* numpy's float64 power with a scalar exponent: its fast paths (x**0.5 is
 * sqrt: (-0.0)**0.5 = -0.0, x**2 = x*x, x**-1 = 1/x), else C's pow. */
MT_HD double mt_npu_pow_f(double x, double e) {
  if (e == 0.5) return sqrt(x);
  if (e == 2.0) return x * x;
  if (e == -1.0) return 1.0 / x;
  if (e == 1.0) return x;
  if (e == 0.0) return 1.0;
  return pow(x, e);
}

/* Integer power by squaring, wrapping as numpy's int64 loop; e >= 0. */
MT_HD int64_t mt_npu_pow_i(int64_t x, int64_t e) {
  uint64_t r = 1, b = (uint64_t)x;
  while (e > 0) {
    if (e & 1) r *= b;
    b *= b;
    e >>= 1;
  }
  return (int64_t)r;
}

MT_HD double mt_npu_rint_in(mt_dtype rt, double v) {
  return rt == MT_float64 ? nearbyint(v) : (double)nearbyintf((float)v);
}

/* m.round(d) of one float element in dtype rt (each step rounded to rt) */
MT_HD double mt_npu_round_dec(mt_dtype rt, double x, int64_t d) {
  if (d == 0) return mt_npu_rint_in(rt, x);
  double f = mt_hd_round(rt, pow(10.0, (double)(d > 0 ? d : -d)));
  double y = mt_hd_round(rt, mt_np_calc(rt, d > 0 ? x * f : x / f));
  y = mt_npu_rint_in(rt, y);
  return mt_hd_round(rt, mt_np_calc(rt, d > 0 ? y / f : y * f));
}

/* Element i: out[i] (dtype p->out) and mask_out[i] from the input's data
 * in (dtype p->in) and mask (one flag per element). */
MT_HD void mt_npu_elem(const mt_npu_par *p, const void *in, const uint8_t *mask, void *out,
                       uint8_t *mask_out, int64_t i) {
  int spec = mask[i] != 0;
  mt_dtype rt = p->out;
  switch (p->kind) {
  case NPU_FN:
    if (p->is_int) { /* neg/abs of integers and bool, wrapping; floor/ceil: x */
      int64_t x = mt_hd_ldi(in, p->in, i), r = x;
      if (p->fn == NPU_NEG) r = (int64_t)(0 - (uint64_t)x);
      if (p->is_abs && x < 0) r = (int64_t)(0 - (uint64_t)x);
      mt_hd_sti(out, rt, i, spec ? r : x);
    } else {
      double x = mt_hd_get_f64(in, p->in, i);
      double r = mt_npu_float_fn(p->fn, rt, x);
      if (p->domain != NPU_DOM_NONE) {
        /* NPMA-3, NPMA-8: the domain and the non-finite results (in the
         * result dtype) */
        double rr = mt_hd_round(rt, r);
        if (mt_npu_out_of_domain(p->domain, p->in, rt, x) || !isfinite(rr)) spec = 0;
      }
      mt_hd_set_f64(out, rt, i, spec ? r : x); /* NPMA-7: input data under masked-out */
    }
    break;
  case NPU_POW:
    if (p->is_int) {
      int64_t x = mt_hd_ldi(in, p->in, i);
      mt_hd_sti(out, rt, i, spec ? mt_npu_pow_i(x, p->ei) : x);
    } else {
      double x = mt_hd_get_f64(in, p->in, i), r;
      if (p->inplace)
        r = mt_hd_round(rt, mt_np_calc(p->pt, spec ? pow(x, p->e) : x)); /* x ** 1 */
      else
        r = spec ? mt_hd_round(rt, mt_np_calc(rt, mt_npu_pow_f(x, p->e))) : mt_hd_round(rt, x);
      if (!isfinite(r)) {
        spec = 0;
        mt_np_store_fill_value(out, rt, i);
      } else {
        mt_hd_set_f64(out, rt, i, r);
      }
    }
    break;
  default: /* NPMA-21: clip, round, angle, conj keep the mask */
    if (p->is_int) { /* clip of integers by integers, round and conj of integers */
      int64_t x = mt_hd_ldi(in, p->in, i);
      if (p->kind == NPU_CLIP) {
        if (p->has_lo && x < p->lo_i) x = p->lo_i;
        if (p->has_hi && x > p->hi_i) x = p->hi_i;
      }
      mt_hd_sti(out, rt, i, x);
    } else {
      double x = mt_hd_round(rt, mt_hd_get_f64(in, p->in, i)), r = x;
      if (p->kind == NPU_CLIP) {
        /* NaN propagates. Both bounds: np.clip's loop, min(max(x, min), max),
         * keeps x on a ±0 tie (-0.0 at min 0.0 is -0.0). One bound: numpy's
         * _clip is np.maximum(x, min) / np.minimum(x, max), whose float32
         * and float64 loops give the bound on a tie (x86's max/min take the
         * second operand) and float16's loop gives x. */
        int tie_b = !(p->has_lo && p->has_hi) && rt != MT_float16;
        if (p->has_lo) {
          double b = mt_hd_round(rt, p->lo_f);
          r = (isnan(r) || isnan(b)) ? NAN : ((tie_b ? r <= b : r < b) ? b : r);
        }
        if (p->has_hi) {
          double b = mt_hd_round(rt, p->hi_f);
          r = (isnan(r) || isnan(b)) ? NAN : ((tie_b ? r >= b : r > b) ? b : r);
        }
      } else if (p->kind == NPU_ROUND) {
        r = mt_npu_round_dec(rt, x, p->dec);
      } else if (p->kind == NPU_ANGLE) {
        r = spec ? (rt == MT_float64 ? atan2(0.0, x) : (double)atan2f(0.0f, (float)x)) : x;
      }
      mt_hd_set_f64(out, rt, i, r);
    }
    break;
  }
  mask_out[i] = (uint8_t)spec;
}

#endif /* MT_NPMA_UNARY_MATH_H */

/* npma_unary.c - the numpy_ma profile's unary family: neg/negative
 * abs/absolute exp log log2 log10 sqrt sin cos tan arcsin/asin arccos/acos
 * arctan/atan sinh cosh tanh arcsinh/asinh arccosh/acosh arctanh/atanh
 * floor ceil (np.ma's ufuncs of those names) and pow(m, number)
 * (np.ma.power).
 *
 * NPMA-3: domains are masked. np.ma.log masks x <= 0 and every non-finite
 *   result (log(inf), log(NaN)); np.ma.sqrt masks x < 0 and every
 *   non-finite result (sqrt(-0.0) = -0.0 stays specified); np.ma.power masks
 *   every non-finite result (NaN, overflow, 0 to a negative power).
 * NPMA-8: the other domained ufuncs: log2/log10 mask x <= 0, arcsin/arccos
 *   |x| > 1, arccosh x < 1, arctanh x outside [-1 + 1e-15, 1 - 1e-15] (the
 *   bounds in the data's float dtype: +-1 in float32/float16), tan
 *   |cos(x)| < 1e-35; each also masks every non-finite result. The others
 *   (sin cos arctan sinh cosh tanh arcsinh floor ceil, like exp) mask
 *   nothing: cosh(1000) = inf and sin(inf) = NaN stay specified.
 * NPMA-4: dtypes. neg/abs keep the dtype (bool neg is numpy's TypeError ->
 *   DTYPE_MISMATCH), floor/ceil too (numpy 2: integers and bool); the
 *   other float functions of integers are float16 (int8, uint8,
 *   bool) or float64 (int32, int64); pow's number is a 0-d float64/int64
 *   array, so float inputs give float64 and integers int64 (float64 for a
 *   float exponent); integers to a negative integer power are numpy's
 *   ValueError -> DTYPE_MISMATCH.
 * NPMA-7 (strict): under a masked-out output numpy.ma leaves the input data
 *   (cast to the result dtype), np.ma.power its fill_value 1e20 where the
 *   value (result or input data) is not finite. */
#include "npma_util.h"

/* numpy.ma's domains (np.ma's _Domain* objects), tested on the input data:
 * 1 = outside, masked. */
enum {
  DOM_NONE,     /* sin cos arctan sinh cosh tanh arcsinh floor ceil exp ... */
  DOM_GT0,      /* log log2 log10: _DomainGreater(0): masks x <= 0 */
  DOM_GE0,      /* sqrt: _DomainGreaterEqual(0): masks x < 0 */
  DOM_GE1,      /* arccosh: _DomainGreaterEqual(1): masks x < 1 */
  DOM_UNIT,     /* arcsin arccos: _DomainCheckInterval(-1, 1): masks |x| > 1 */
  DOM_UNIT_EPS, /* arctanh: _DomainCheckInterval(-1 + 1e-15, 1 - 1e-15) */
  DOM_TAN       /* tan: _DomainTan(1e-35): masks |cos(x)| < 1e-35 */
};

/* One unary op: numpy's float loop (float16 and float32 in float, float64
 * in double), its domain, and whether integers keep their dtype (numpy 2's
 * floor/ceil of integers and bool, neg/abs) instead of becoming floats. */
typedef struct {
  mt_op op;
  float (*ff)(float);
  double (*fd)(double);
  int domain;
  int keeps_int;
} npma_unary_fn;

static const npma_unary_fn UNARY_FNS[] = {
    {MT_OP_neg, NULL, NULL, DOM_NONE, 1},
    {MT_OP_negative, NULL, NULL, DOM_NONE, 1},
    {MT_OP_abs, fabsf, fabs, DOM_NONE, 1},
    {MT_OP_absolute, fabsf, fabs, DOM_NONE, 1},
    {MT_OP_exp, expf, exp, DOM_NONE, 0},
    {MT_OP_log, logf, log, DOM_GT0, 0},
    {MT_OP_log2, log2f, log2, DOM_GT0, 0},
    {MT_OP_log10, log10f, log10, DOM_GT0, 0},
    {MT_OP_sqrt, sqrtf, sqrt, DOM_GE0, 0},
    {MT_OP_sin, sinf, sin, DOM_NONE, 0},
    {MT_OP_cos, cosf, cos, DOM_NONE, 0},
    {MT_OP_tan, tanf, tan, DOM_TAN, 0},
    {MT_OP_arcsin, asinf, asin, DOM_UNIT, 0},
    {MT_OP_asin, asinf, asin, DOM_UNIT, 0},
    {MT_OP_arccos, acosf, acos, DOM_UNIT, 0},
    {MT_OP_acos, acosf, acos, DOM_UNIT, 0},
    {MT_OP_arctan, atanf, atan, DOM_NONE, 0},
    {MT_OP_atan, atanf, atan, DOM_NONE, 0},
    {MT_OP_sinh, sinhf, sinh, DOM_NONE, 0},
    {MT_OP_cosh, coshf, cosh, DOM_NONE, 0},
    {MT_OP_tanh, tanhf, tanh, DOM_NONE, 0},
    {MT_OP_arcsinh, asinhf, asinh, DOM_NONE, 0},
    {MT_OP_asinh, asinhf, asinh, DOM_NONE, 0},
    {MT_OP_arccosh, acoshf, acosh, DOM_GE1, 0},
    {MT_OP_acosh, acoshf, acosh, DOM_GE1, 0},
    {MT_OP_arctanh, atanhf, atanh, DOM_UNIT_EPS, 0},
    {MT_OP_atanh, atanhf, atanh, DOM_UNIT_EPS, 0},
    {MT_OP_floor, floorf, floor, DOM_NONE, 1},
    {MT_OP_ceil, ceilf, ceil, DOM_NONE, 1},
};

static const npma_unary_fn *unary_fn(mt_op op) {
  for (size_t i = 0; i < sizeof UNARY_FNS / sizeof UNARY_FNS[0]; i++)
    if (UNARY_FNS[i].op == op) return &UNARY_FNS[i];
  return NULL;
}

static double float_fn(const npma_unary_fn *f, mt_dtype rt, double x) {
  if (!f->fd) return -x; /* neg */
  return rt != MT_float64 ? (double)f->ff((float)x) : f->fd(x);
}

/* numpy.ma's domain test of input element x (data dtype dt): the bounds
 * are Python floats, so numpy compares in the data's dtype for floats
 * (1 - 1e-15 is 1.0 in float32 and float16) and in float64 for integers;
 * tan's |cos(x)| is computed in the float loop's dtype rt. */
static int out_of_domain(const npma_unary_fn *f, mt_dtype dt, mt_dtype rt, double x) {
  mt_dtype cmp = npma_kind(dt) == 'f' ? dt : MT_float64;
  switch (f->domain) {
  case DOM_GT0: return x <= 0.0;
  case DOM_GE0: return x < 0.0;
  case DOM_GE1: return x < 1.0;
  case DOM_UNIT: return x > 1.0 || x < -1.0;
  case DOM_UNIT_EPS:
    return x > mt__cpu_round(cmp, 1.0 - 1e-15) || x < mt__cpu_round(cmp, -1.0 + 1e-15);
  case DOM_TAN: {
    double c = mt__cpu_round(rt, rt != MT_float64 ? (double)cosf((float)x) : cos(x));
    return fabs(c) < mt__cpu_round(rt, 1e-35);
  }
  default: return 0;
  }
}

static mt_status unary(mt_call *call, mt_op op, mt_error *err) {
  const char *name = mt_op_name(op);
  const npma_unary_fn *f = unary_fn(op);
  npma_arg a = {0};
  void *od = NULL;
  uint8_t *om = NULL;
  mt_status st;

  if ((st = npma_begin(call, op, err)) != MT_OK) return st;
  if ((st = npma_arg_open(call, 0, name, &a, err)) != MT_OK) goto out;
  if (!a.is_masked) {
    st = mt_err(err, MT_NOT_SUPPORTED, "%s: inputs/0 must be a masked tensor", name);
    goto out;
  }
  int is_neg = f->fd == NULL;
  if (is_neg && a.dt == MT_bool) {
    st = mt_err(err, MT_DTYPE_MISMATCH,
                "%s: The numpy boolean negative, the `-` operator, is not supported (bool input)",
                name);
    goto out;
  }
  mt_dtype rt = f->keeps_int ? a.dt : npma_float_of(a.dt);
  const mt_tensor *t = a.t;
  if ((st = npma_new_out(call, rt, t->ndim, t->shape, &od, &om, err)) != MT_OK) goto out;
  int is_int = npma_kind(rt) != 'f';
  for (int64_t i = 0; i < mt_numel(t); i++) {
    int spec = a.mask[i];
    if (is_int) { /* neg/abs of integers and bool, wrapping; floor/ceil: x */
      int64_t x = npma_ldi(&a, i);
      int64_t r = x;
      if (is_neg) r = (int64_t)(0 - (uint64_t)x);
      if ((op == MT_OP_abs || op == MT_OP_absolute) && x < 0) r = (int64_t)(0 - (uint64_t)x);
      mt__cpu_sti(od, rt, i, spec ? r : x);
      om[i] = (uint8_t)spec;
      continue;
    }
    double x = npma_ld(&a, i);
    double r = float_fn(f, rt, x);
    if (f->domain != DOM_NONE) {
      /* NPMA-3, NPMA-8: the domain and the non-finite results (in the
       * result dtype) */
      double rr = mt__cpu_round(rt, r);
      if (out_of_domain(f, a.dt, rt, x) || !isfinite(rr)) spec = 0;
    }
    mt__cpu_st(od, rt, i, spec ? r : x); /* NPMA-7: input data under masked-out */
    om[i] = (uint8_t)spec;
  }
out:
  if (st != MT_OK) mt__cpu_drop_outputs(call);
  npma_arg_close(&a);
  return st;
}

#define NPMA_UNARY_KERNEL(name) \
  mt_status mt_npma_##name(mt_call *call, mt_error *err) { return unary(call, MT_OP_##name, err); }
NPMA_UNARY_KERNEL(neg)
NPMA_UNARY_KERNEL(negative)
NPMA_UNARY_KERNEL(abs)
NPMA_UNARY_KERNEL(absolute)
NPMA_UNARY_KERNEL(exp)
NPMA_UNARY_KERNEL(log)
NPMA_UNARY_KERNEL(log2)
NPMA_UNARY_KERNEL(log10)
NPMA_UNARY_KERNEL(sqrt)
NPMA_UNARY_KERNEL(sin)
NPMA_UNARY_KERNEL(cos)
NPMA_UNARY_KERNEL(tan)
NPMA_UNARY_KERNEL(arcsin)
NPMA_UNARY_KERNEL(asin)
NPMA_UNARY_KERNEL(arccos)
NPMA_UNARY_KERNEL(acos)
NPMA_UNARY_KERNEL(arctan)
NPMA_UNARY_KERNEL(atan)
NPMA_UNARY_KERNEL(sinh)
NPMA_UNARY_KERNEL(cosh)
NPMA_UNARY_KERNEL(tanh)
NPMA_UNARY_KERNEL(arcsinh)
NPMA_UNARY_KERNEL(asinh)
NPMA_UNARY_KERNEL(arccosh)
NPMA_UNARY_KERNEL(acosh)
NPMA_UNARY_KERNEL(arctanh)
NPMA_UNARY_KERNEL(atanh)
NPMA_UNARY_KERNEL(floor)
NPMA_UNARY_KERNEL(ceil)

/* ---- pow ------------------------------------------------------------------ */

/* numpy's float64 power with a scalar exponent: its fast paths (x**0.5 is
 * sqrt: (-0.0)**0.5 = -0.0, x**2 = x*x, x**-1 = 1/x), else C's pow. */
static double pow_f(double x, double e) {
  if (e == 0.5) return sqrt(x);
  if (e == 2.0) return x * x;
  if (e == -1.0) return 1.0 / x;
  if (e == 1.0) return x;
  if (e == 0.0) return 1.0;
  return pow(x, e);
}

/* Integer power by squaring, wrapping as numpy's int64 loop; e >= 0. */
static int64_t pow_i(int64_t x, int64_t e) {
  uint64_t r = 1, b = (uint64_t)x;
  while (e > 0) {
    if (e & 1) r *= b;
    b *= b;
    e >>= 1;
  }
  return (int64_t)r;
}

/* The elements of pow (inplace 0) and pow_ (inplace 1) into od/om of dtype
 * rt: integers by squaring, masked-out elements keep a's data; floats as
 * pow's np.where(m, data, power(data, e)) (numpy's scalar fast paths,
 * computed in rt) or pow_'s x ** e with e = 1 under masked-out elements (C's
 * pow, computed in the promoted dtype pt); then every non-finite value is
 * masked and holds fill_value 1e20 (NPMA-3, NPMA-7, NPMA-23). */
static void pow_elements(const npma_arg *a, mt_dtype rt, mt_dtype pt, int is_int, int64_t ei,
                         double e, int inplace, void *od, uint8_t *om) {
  for (int64_t i = 0; i < mt_numel(a->t); i++) {
    int spec = a->mask[i];
    if (is_int) {
      int64_t x = npma_ldi(a, i);
      mt__cpu_sti(od, rt, i, spec ? pow_i(x, ei) : x);
      om[i] = (uint8_t)spec;
      continue;
    }
    double x = npma_ld(a, i), r;
    if (inplace)
      r = mt__cpu_round(rt, npma_calc(pt, spec ? pow(x, e) : x)); /* x ** 1 */
    else
      r = spec ? mt__cpu_round(rt, npma_calc(rt, pow_f(x, e))) : mt__cpu_round(rt, x);
    if (!isfinite(r)) {
      spec = 0;
      npma_store_fill_value(od, rt, i);
    } else {
      mt__cpu_st(od, rt, i, r);
    }
    om[i] = (uint8_t)spec;
  }
}

/* pow (inplace 0) and pow_ (inplace 1, NPMA-23 below): a masked tensor to a
 * number, in numpy 2's promotion pt of the two (bool ** bool is int8); pow's
 * result has dtype pt, pow_'s keeps a's, which pt must cast to with
 * 'same_kind'. */
static mt_status power(mt_call *call, mt_op op, int inplace, mt_error *err) {
  const char *name = mt_op_name(op);
  npma_arg a = {0}, b = {0};
  void *od = NULL;
  uint8_t *om = NULL;
  mt_status st;
  mt_dtype pt;

  if ((st = npma_begin(call, op, err)) != MT_OK) return st;
  if ((st = npma_arg_open(call, 0, name, &a, err)) != MT_OK) goto out;
  if ((st = npma_arg_open(call, 1, name, &b, err)) != MT_OK) goto out;
  if (!a.is_masked || !b.is_number) {
    st = mt_err(err, MT_NOT_SUPPORTED, "%s: only a masked tensor to a number is implemented",
                name);
    goto out;
  }
  if ((st = npma_promote_checked(name, a.dt, b.dt, &pt, err)) != MT_OK) goto out;
  if (pt == MT_bool) pt = MT_int8; /* numpy: bool ** bool is int8 */
  if (inplace && !npma_same_kind(pt, a.dt)) {
    st = mt_err(err, MT_DTYPE_MISMATCH,
                "%s: Cannot cast ufunc 'power' output from dtype %s to dtype %s with casting "
                "rule 'same_kind' (numpy's UFuncTypeError)", name, mt_dtype_name(pt),
                mt_dtype_name(a.dt));
    goto out;
  }
  int is_int = npma_kind(pt) != 'f';
  int64_t ei = is_int ? npma_ldi(&b, 0) : 0;
  double e = npma_ld(&b, 0);
  if (is_int && ei < 0) {
    st = mt_err(err, MT_DTYPE_MISMATCH,
                "%s: Integers to negative integer powers are not allowed (%s ** %lld)", name,
                mt_dtype_name(a.dt), (long long)ei);
    goto out;
  }
  mt_dtype rt = inplace ? a.dt : pt;
  const mt_tensor *t = a.t;
  if ((st = npma_new_out(call, rt, t->ndim, t->shape, &od, &om, err)) != MT_OK) goto out;
  pow_elements(&a, rt, pt, is_int, ei, e, inplace, od, om);
out:
  if (st != MT_OK) mt__cpu_drop_outputs(call);
  npma_arg_close(&a);
  npma_arg_close(&b);
  return st;
}

mt_status mt_npma_pow(mt_call *call, mt_error *err) { return power(call, MT_OP_pow, 0, err); }

/* ---- clamp/clip, round, angle, conj_physical ------------------------------
 *
 * NPMA-21: the MaskedArray methods and np.ma functions that work on the data
 *   of every element and keep the mask:
 *   clamp/clip(min, max) are np.ma.clip(m, min, max): np.clip of the data
 *     (masked-out elements too), NaN propagating; the bounds are Python
 *     numbers passed to the ufunc (NEP 50's weak scalars): an integer tensor
 *     with a float bound is float64, else the dtype is kept.
 *   round(decimals) is m.round(decimals): the data rounded half to even,
 *     floats as numpy does (x * 10**d, rint, / 10**d in the dtype; d < 0:
 *     x / 10**-d, rint, * 10**-d); integers with d >= 0 unchanged.
 *   angle is np.ma.angle: arctan2(0, x) in the float dtype of x with a weak
 *     0 (int8/uint8 -> float16, int32/int64 -> float64, bool -> float64):
 *     0 for x >= +0, pi for x < 0 and x = -0.0, NaN for NaN; masked-out
 *     elements keep the input data.
 *   conj_physical is np.ma.conjugate: the data itself; bool becomes int8
 *     (numpy's conjugate has no bool loop). */

typedef enum { X_CLIP, X_ROUND, X_ANGLE, X_CONJ } npma_extra_kind;

static double rint_in(mt_dtype rt, double v) {
  return rt == MT_float64 ? nearbyint(v) : (double)nearbyintf((float)v);
}

/* m.round(d) of one float element in dtype rt (each step rounded to rt) */
static double round_dec(mt_dtype rt, double x, int64_t d) {
  if (d == 0) return rint_in(rt, x);
  double f = mt__cpu_round(rt, pow(10.0, (double)(d > 0 ? d : -d)));
  double y = mt__cpu_round(rt, npma_calc(rt, d > 0 ? x * f : x / f));
  y = rint_in(rt, y);
  return mt__cpu_round(rt, npma_calc(rt, d > 0 ? y / f : y * f));
}

static mt_status unary_extra(mt_call *call, mt_op op, npma_extra_kind kind, mt_error *err) {
  const char *name = mt_op_name(op);
  npma_arg a = {0};
  void *od = NULL;
  uint8_t *om = NULL;
  mt_status st;

  if ((st = npma_begin(call, op, err)) != MT_OK) return st;
  if ((st = npma_arg_open(call, 0, name, &a, err)) != MT_OK) goto out;
  if (!a.is_masked) {
    st = mt_err(err, MT_NOT_SUPPORTED, "%s: inputs/0 must be a masked tensor", name);
    goto out;
  }
  const mt_kwarg *lo = mt_kw_find(call->kw, "min"), *hi = mt_kw_find(call->kw, "max");
  int64_t dec = mt_kw_int(call->kw, "decimals", 0);
  int in_int = npma_kind(a.dt) != 'f';
  mt_dtype rt = a.dt;
  switch (kind) {
  case X_CLIP:
    if (!lo && !hi) {
      st = mt_err(err, MT_INVALID_ARGUMENT, "%s: One of max or min must be given", name);
      goto out;
    }
    if (a.dt == MT_bool || a.dt == MT_uint8) {
      st = mt_err(err, MT_NOT_SUPPORTED, "%s: %s is not implemented", name,
                  mt_dtype_name(a.dt));
      goto out;
    }
    if (in_int && ((lo && lo->type == MT_KW_FLOAT) || (hi && hi->type == MT_KW_FLOAT)))
      rt = MT_float64; /* NEP 50: an integer array with a Python float */
    break;
  case X_ROUND:
    if (a.dt == MT_bool || (in_int && dec < 0)) {
      st = mt_err(err, MT_NOT_SUPPORTED, "%s: %s with decimals=%lld is not implemented", name,
                  mt_dtype_name(a.dt), (long long)dec);
      goto out;
    }
    break;
  case X_ANGLE: rt = a.dt == MT_bool ? MT_float64 : npma_float_of(a.dt); break;
  case X_CONJ: rt = a.dt == MT_bool ? MT_int8 : a.dt; break;
  }
  const mt_tensor *t = a.t;
  if ((st = npma_new_out(call, rt, t->ndim, t->shape, &od, &om, err)) != MT_OK) goto out;
  int out_int = npma_kind(rt) != 'f';
  for (int64_t i = 0; i < mt_numel(t); i++) {
    int spec = a.mask[i];
    om[i] = (uint8_t)spec;
    if (out_int) { /* clip of integers by integers, round and conj of integers */
      int64_t x = npma_ldi(&a, i);
      if (kind == X_CLIP) {
        if (lo && x < lo->i) x = lo->i;
        if (hi && x > hi->i) x = hi->i;
      }
      mt__cpu_sti(od, rt, i, x);
      continue;
    }
    double x = mt__cpu_round(rt, npma_ld(&a, i)), r = x;
    switch (kind) {
    case X_CLIP: /* np.minimum(np.maximum(x, min), max): NaN propagates */
      if (lo) {
        double b = mt__cpu_round(rt, lo->f);
        r = (isnan(r) || isnan(b)) ? NAN : (r < b ? b : r);
      }
      if (hi) {
        double b = mt__cpu_round(rt, hi->f);
        r = (isnan(r) || isnan(b)) ? NAN : (r > b ? b : r);
      }
      break;
    case X_ROUND: r = round_dec(rt, x, dec); break;
    case X_ANGLE:
      r = spec ? (rt == MT_float64 ? atan2(0.0, x) : (double)atan2f(0.0f, (float)x)) : x;
      break;
    case X_CONJ: break;
    }
    mt__cpu_st(od, rt, i, r);
  }
out:
  if (st != MT_OK) mt__cpu_drop_outputs(call);
  npma_arg_close(&a);
  return st;
}

mt_status mt_npma_clamp(mt_call *call, mt_error *err) {
  return unary_extra(call, MT_OP_clamp, X_CLIP, err);
}
mt_status mt_npma_clip(mt_call *call, mt_error *err) {
  return unary_extra(call, MT_OP_clip, X_CLIP, err);
}
mt_status mt_npma_round(mt_call *call, mt_error *err) {
  return unary_extra(call, MT_OP_round, X_ROUND, err);
}
mt_status mt_npma_angle(mt_call *call, mt_error *err) {
  return unary_extra(call, MT_OP_angle, X_ANGLE, err);
}
mt_status mt_npma_conj_physical(mt_call *call, mt_error *err) {
  return unary_extra(call, MT_OP_conj_physical, X_CONJ, err);
}

/* ---- pow_ ------------------------------------------------------------------
 *
 * NPMA-23: m.pow_(e) is MaskedArray's __ipow__, `m **= e`: the exponent is
 *   replaced by 1 under a's masked-out elements (x ** 1 = x), the power is
 *   taken in numpy 2's promotion of a and e (a number: a 0-d float64/int64
 *   array, NPMA-4; an array exponent, so C's pow without numpy's scalar fast
 *   paths: (-0.0) ** 0.5 = +0.0) and cast to a's dtype; then every
 *   non-finite element (a masked-out inf or NaN included) is masked and
 *   holds fill_value (1e20: inf in float16). A promotion that does not cast
 *   back with 'same_kind' (an integer a with a float exponent, bool) and
 *   integers to a negative power are DTYPE_MISMATCH. */
mt_status mt_npma_pow_(mt_call *call, mt_error *err) { return power(call, MT_OP_pow_, 1, err); }

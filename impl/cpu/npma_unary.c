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
#include "common/exec.h"
#include "common/npma_unary_math.h"
#include "npma_util.h"

/* One unary op: its function (common/npma_unary_math.h's NPU_*, numpy's
 * float loop), its domain, and whether integers keep their dtype (numpy 2's
 * floor/ceil of integers and bool, neg/abs) instead of becoming floats. */
typedef struct {
  mt_op op;
  int fn;
  int domain;
  int keeps_int;
} npma_unary_fn;

static const npma_unary_fn UNARY_FNS[] = {
    {MT_OP_neg, NPU_NEG, NPU_DOM_NONE, 1},
    {MT_OP_negative, NPU_NEG, NPU_DOM_NONE, 1},
    {MT_OP_abs, NPU_ABS, NPU_DOM_NONE, 1},
    {MT_OP_absolute, NPU_ABS, NPU_DOM_NONE, 1},
    {MT_OP_exp, NPU_EXP, NPU_DOM_NONE, 0},
    {MT_OP_log, NPU_LOG, NPU_DOM_GT0, 0},
    {MT_OP_log2, NPU_LOG2, NPU_DOM_GT0, 0},
    {MT_OP_log10, NPU_LOG10, NPU_DOM_GT0, 0},
    {MT_OP_sqrt, NPU_SQRT, NPU_DOM_GE0, 0},
    {MT_OP_sin, NPU_SIN, NPU_DOM_NONE, 0},
    {MT_OP_cos, NPU_COS, NPU_DOM_NONE, 0},
    {MT_OP_tan, NPU_TAN, NPU_DOM_TAN, 0},
    {MT_OP_arcsin, NPU_ASIN, NPU_DOM_UNIT, 0},
    {MT_OP_asin, NPU_ASIN, NPU_DOM_UNIT, 0},
    {MT_OP_arccos, NPU_ACOS, NPU_DOM_UNIT, 0},
    {MT_OP_acos, NPU_ACOS, NPU_DOM_UNIT, 0},
    {MT_OP_arctan, NPU_ATAN, NPU_DOM_NONE, 0},
    {MT_OP_atan, NPU_ATAN, NPU_DOM_NONE, 0},
    {MT_OP_sinh, NPU_SINH, NPU_DOM_NONE, 0},
    {MT_OP_cosh, NPU_COSH, NPU_DOM_NONE, 0},
    {MT_OP_tanh, NPU_TANH, NPU_DOM_NONE, 0},
    {MT_OP_arcsinh, NPU_ASINH, NPU_DOM_NONE, 0},
    {MT_OP_asinh, NPU_ASINH, NPU_DOM_NONE, 0},
    {MT_OP_arccosh, NPU_ACOSH, NPU_DOM_GE1, 0},
    {MT_OP_acosh, NPU_ACOSH, NPU_DOM_GE1, 0},
    {MT_OP_arctanh, NPU_ATANH, NPU_DOM_UNIT_EPS, 0},
    {MT_OP_atanh, NPU_ATANH, NPU_DOM_UNIT_EPS, 0},
    {MT_OP_floor, NPU_FLOOR, NPU_DOM_NONE, 1},
    {MT_OP_ceil, NPU_CEIL, NPU_DOM_NONE, 1},
};

static const npma_unary_fn *unary_fn(mt_op op) {
  for (size_t i = 0; i < sizeof UNARY_FNS / sizeof UNARY_FNS[0]; i++)
    if (UNARY_FNS[i].op == op) return &UNARY_FNS[i];
  return NULL;
}

/* The elements of the call on ex: out/mask_out from a's data and mask. */
static mt_status run_elems(const mt_exec *ex, const char *name, const mt_npu_par *p,
                           const npma_arg *a, void *od, uint8_t *om, mt_error *err) {
  if (!ex->npma_unary)
    return mt_err(err, MT_NOT_SUPPORTED, "%s: the %s backend has no numpy_ma unary kernels",
                  name, ex->name);
  int64_t n = mt_numel(a->t);
  if (n == 0) return MT_OK;
  return ex->npma_unary(p, a->data, a->mask, od, om, n, err);
}

static mt_status unary(mt_call *call, mt_op op, const mt_exec *ex, mt_error *err) {
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
  int is_neg = f->fn == NPU_NEG;
  if (is_neg && a.dt == MT_bool) {
    st = mt_err(err, MT_DTYPE_MISMATCH,
                "%s: The numpy boolean negative, the `-` operator, is not supported (bool input)",
                name);
    goto out;
  }
  mt_dtype rt = f->keeps_int ? a.dt : npma_float_of(a.dt);
  const mt_tensor *t = a.t;
  if ((st = npma_new_out(call, rt, t->ndim, t->shape, &od, &om, err)) != MT_OK) goto out;
  mt_npu_par p = {.kind = NPU_FN, .fn = f->fn, .domain = f->domain,
                   .is_abs = op == MT_OP_abs || op == MT_OP_absolute, .in = a.dt, .out = rt,
                   .pt = rt, .is_int = npma_kind(rt) != 'f'};
  st = run_elems(ex, name, &p, &a, od, om, err);
out:
  if (st != MT_OK) mt__cpu_drop_outputs(call);
  npma_arg_close(&a);
  return st;
}

#define NPMA_UNARY_KERNEL(name) \
  mt_status mt_npma_##name(mt_call *call, mt_error *err) { \
    return mt__npma_unary_run(call, MT_OP_##name, &mt_cpu_exec, err); \
  }
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

/* pow (inplace 0) and pow_ (inplace 1, NPMA-23 below): a masked tensor to a
 * number, in numpy 2's promotion pt of the two (bool ** bool is int8); pow's
 * result has dtype pt, pow_'s keeps a's, which pt must cast to with
 * 'same_kind'. */
static mt_status power(mt_call *call, mt_op op, int inplace, const mt_exec *ex,
                       mt_error *err) {
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
  /* the elements: integers by squaring, masked-out elements keep a's data;
   * floats as pow's np.where(m, data, power(data, e)) (numpy's scalar fast
   * paths, computed in rt) or pow_'s x ** e with e = 1 under masked-out
   * elements (C's pow, computed in pt); then every non-finite value is
   * masked and holds fill_value 1e20 (NPMA-3, NPMA-7, NPMA-23) */
  mt_npu_par p = {.kind = NPU_POW, .in = a.dt, .out = rt, .pt = pt, .is_int = is_int,
                   .inplace = inplace, .ei = ei, .e = e};
  st = run_elems(ex, name, &p, &a, od, om, err);
out:
  if (st != MT_OK) mt__cpu_drop_outputs(call);
  npma_arg_close(&a);
  npma_arg_close(&b);
  return st;
}

mt_status mt_npma_pow(mt_call *call, mt_error *err) {
  return mt__npma_unary_run(call, MT_OP_pow, &mt_cpu_exec, err);
}

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

static mt_status unary_extra(mt_call *call, mt_op op, npma_extra_kind kind, const mt_exec *ex,
                             mt_error *err) {
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
  static const int KINDS[] = {[X_CLIP] = NPU_CLIP, [X_ROUND] = NPU_ROUND, [X_ANGLE] = NPU_ANGLE,
                               [X_CONJ] = NPU_CONJ};
  mt_npu_par p = {.kind = KINDS[kind], .in = a.dt, .out = rt, .pt = rt,
                   .is_int = npma_kind(rt) != 'f', .has_lo = lo != NULL, .has_hi = hi != NULL,
                   .lo_i = lo ? lo->i : 0, .hi_i = hi ? hi->i : 0, .lo_f = lo ? lo->f : 0.0,
                   .hi_f = hi ? hi->f : 0.0, .dec = dec};
  st = run_elems(ex, name, &p, &a, od, om, err);
out:
  if (st != MT_OK) mt__cpu_drop_outputs(call);
  npma_arg_close(&a);
  return st;
}

mt_status mt_npma_clamp(mt_call *call, mt_error *err) {
  return mt__npma_unary_run(call, MT_OP_clamp, &mt_cpu_exec, err);
}
mt_status mt_npma_clip(mt_call *call, mt_error *err) {
  return mt__npma_unary_run(call, MT_OP_clip, &mt_cpu_exec, err);
}
mt_status mt_npma_round(mt_call *call, mt_error *err) {
  return mt__npma_unary_run(call, MT_OP_round, &mt_cpu_exec, err);
}
mt_status mt_npma_angle(mt_call *call, mt_error *err) {
  return mt__npma_unary_run(call, MT_OP_angle, &mt_cpu_exec, err);
}
mt_status mt_npma_conj_physical(mt_call *call, mt_error *err) {
  return mt__npma_unary_run(call, MT_OP_conj_physical, &mt_cpu_exec, err);
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
mt_status mt_npma_pow_(mt_call *call, mt_error *err) {
  return mt__npma_unary_run(call, MT_OP_pow_, &mt_cpu_exec, err);
}

/* ---- the family's entry (common/exec.h) ----------------------------------- */

mt_status mt__npma_unary_run(mt_call *call, mt_op op, const mt_exec *ex, mt_error *err) {
  switch (op) {
  case MT_OP_pow: return power(call, op, 0, ex, err);
  case MT_OP_pow_: return power(call, op, 1, ex, err);
  case MT_OP_clamp:
  case MT_OP_clip: return unary_extra(call, op, X_CLIP, ex, err);
  case MT_OP_round: return unary_extra(call, op, X_ROUND, ex, err);
  case MT_OP_angle: return unary_extra(call, op, X_ANGLE, ex, err);
  case MT_OP_conj_physical: return unary_extra(call, op, X_CONJ, ex, err);
  default:
    if (!unary_fn(op))
      return mt_err(err, MT_NOT_SUPPORTED, "%s: not a numpy_ma unary op", mt_op_name(op));
    return unary(call, op, ex, err);
  }
}

/* npma_unary.c - the numpy_ma profile's unary family: neg abs exp log sqrt
 * (np.ma.negative, absolute, exp, log, sqrt) and pow(m, number)
 * (np.ma.power).
 *
 * NPMA-3: domains are masked. np.ma.log masks x <= 0 and every non-finite
 *   result (log(inf), log(NaN)); np.ma.sqrt masks x < 0 and every
 *   non-finite result (sqrt(-0.0) = -0.0 stays specified); np.ma.power masks
 *   every non-finite result (NaN, overflow, 0 to a negative power).
 * NPMA-4: dtypes. neg/abs keep the dtype (bool neg is numpy's TypeError ->
 *   DTYPE_MISMATCH); exp/log/sqrt of integers are float16 (int8, uint8,
 *   bool) or float64 (int32, int64); pow's number is a 0-d float64/int64
 *   array, so float inputs give float64 and integers int64 (float64 for a
 *   float exponent); integers to a negative integer power are numpy's
 *   ValueError -> DTYPE_MISMATCH.
 * NPMA-7 (strict): under a masked-out output numpy.ma leaves the input data
 *   (cast to the result dtype), np.ma.power its fill_value 1e20 where the
 *   value (result or input data) is not finite. */
#include "npma_util.h"

/* numpy's float loops: float16 and float32 in float, float64 in double. */
#define NPMA_UNARY_FLOAT(X) \
  X(exp, expf, exp)         \
  X(log, logf, log)         \
  X(sqrt, sqrtf, sqrt)

static double float_fn(mt_op op, mt_dtype rt, double x) {
  int f = rt != MT_float64;
  switch (op) {
#define X(name, ff, fd) \
  case MT_OP_##name: return f ? (double)ff((float)x) : fd(x);
    NPMA_UNARY_FLOAT(X)
#undef X
  default: return x;
  }
}

/* numpy's domain of np.ma.log / np.ma.sqrt: 1 = outside (masked). */
static int out_of_domain(mt_op op, double x) {
  if (op == MT_OP_log) return x <= 0.0;
  if (op == MT_OP_sqrt) return x < 0.0;
  return 0;
}

static mt_status unary(mt_call *call, mt_op op, mt_error *err) {
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
  int elementwise_int = op == MT_OP_neg || op == MT_OP_abs;
  if (op == MT_OP_neg && a.dt == MT_bool) {
    st = mt_err(err, MT_DTYPE_MISMATCH,
                "%s: The numpy boolean negative, the `-` operator, is not supported (bool input)",
                name);
    goto out;
  }
  mt_dtype rt = elementwise_int ? a.dt : npma_float_of(a.dt);
  const mt_tensor *t = a.t;
  if ((st = npma_new_out(call, rt, t->ndim, t->shape, &od, &om, err)) != MT_OK) goto out;
  int is_int = npma_kind(rt) != 'f';
  for (int64_t i = 0; i < mt_numel(t); i++) {
    int spec = a.mask[i];
    if (is_int) { /* neg/abs of integers and bool, wrapping */
      int64_t x = npma_ldi(&a, i);
      int64_t r = x;
      if (op == MT_OP_neg) r = (int64_t)(0 - (uint64_t)x);
      if (op == MT_OP_abs && x < 0) r = (int64_t)(0 - (uint64_t)x);
      mt__cpu_sti(od, rt, i, spec ? r : x);
      om[i] = (uint8_t)spec;
      continue;
    }
    double x = npma_ld(&a, i);
    double r = op == MT_OP_neg ? -x : op == MT_OP_abs ? fabs(x) : float_fn(op, rt, x);
    if (op == MT_OP_log || op == MT_OP_sqrt) {
      /* NPMA-3: the domain and the non-finite results (in the result dtype) */
      double rr = mt__cpu_round(rt, r);
      if (out_of_domain(op, x) || !isfinite(rr)) spec = 0;
    }
    mt__cpu_st(od, rt, i, spec ? r : x); /* NPMA-7: input data under masked-out */
    om[i] = (uint8_t)spec;
  }
out:
  if (st != MT_OK) mt__cpu_drop_outputs(call);
  npma_arg_close(&a);
  return st;
}

mt_status mt_npma_neg(mt_call *call, mt_error *err) { return unary(call, MT_OP_neg, err); }
mt_status mt_npma_abs(mt_call *call, mt_error *err) { return unary(call, MT_OP_abs, err); }
mt_status mt_npma_exp(mt_call *call, mt_error *err) { return unary(call, MT_OP_exp, err); }
mt_status mt_npma_log(mt_call *call, mt_error *err) { return unary(call, MT_OP_log, err); }
mt_status mt_npma_sqrt(mt_call *call, mt_error *err) { return unary(call, MT_OP_sqrt, err); }

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

mt_status mt_npma_pow(mt_call *call, mt_error *err) {
  static const char *name = "pow";
  npma_arg a = {0}, b = {0};
  void *od = NULL;
  uint8_t *om = NULL;
  mt_status st;

  if ((st = npma_begin(call, MT_OP_pow, err)) != MT_OK) return st;
  if ((st = npma_arg_open(call, 0, name, &a, err)) != MT_OK) goto out;
  if ((st = npma_arg_open(call, 1, name, &b, err)) != MT_OK) goto out;
  if (!a.is_masked || !b.is_number) {
    st = mt_err(err, MT_NOT_SUPPORTED, "%s: only a masked tensor to a number is implemented",
                name);
    goto out;
  }
  mt_dtype rt;
  if (npma_promote(a.dt, b.dt, &rt) != 0) {
    st = mt_err(err, MT_NOT_SUPPORTED, "%s: %s with %s gives int16, which mtcs has no name for",
                name, mt_dtype_name(a.dt), mt_dtype_name(b.dt));
    goto out;
  }
  if (rt == MT_bool) rt = MT_int8; /* numpy: bool ** bool is int8 */
  int is_int = npma_kind(rt) != 'f';
  int64_t ei = is_int ? npma_ldi(&b, 0) : 0;
  double e = npma_ld(&b, 0);
  if (is_int && ei < 0) {
    st = mt_err(err, MT_DTYPE_MISMATCH,
                "%s: Integers to negative integer powers are not allowed (%s ** %lld)", name,
                mt_dtype_name(a.dt), (long long)ei);
    goto out;
  }
  const mt_tensor *t = a.t;
  if ((st = npma_new_out(call, rt, t->ndim, t->shape, &od, &om, err)) != MT_OK) goto out;
  for (int64_t i = 0; i < mt_numel(t); i++) {
    int spec = a.mask[i];
    if (is_int) {
      int64_t x = npma_ldi(&a, i);
      mt__cpu_sti(od, rt, i, spec ? pow_i(x, ei) : x);
      om[i] = (uint8_t)spec;
      continue;
    }
    /* np.where(m, data, power(data, e)); then every non-finite value is
     * masked and holds fill_value 1e20 (NPMA-3, NPMA-7) */
    double x = npma_ld(&a, i);
    double r = spec ? mt__cpu_round(rt, npma_calc(rt, pow_f(x, e))) : mt__cpu_round(rt, x);
    if (!isfinite(r)) {
      spec = 0;
      npma_store_fill_value(od, rt, i);
    } else {
      mt__cpu_st(od, rt, i, r);
    }
    om[i] = (uint8_t)spec;
  }
out:
  if (st != MT_OK) mt__cpu_drop_outputs(call);
  npma_arg_close(&a);
  npma_arg_close(&b);
  return st;
}

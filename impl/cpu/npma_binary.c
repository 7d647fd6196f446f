/* npma_binary.c - the numpy_ma profile's binary family: add sub mul div
 * (np.ma.add, subtract, multiply, divide) on masked tensors, plain dense
 * tensors and numbers, in either order.
 *
 * NPMA-2: a result element is specified only where both operands are (numpy
 *   ORs its masks): masks that differ are no error.
 * NPMA-3: np.ma.divide also masks where |a| * tiny >= |b| (tiny = the
 *   smallest normal double: division by zero, and by numbers that small
 *   relative to a) and every non-finite quotient.
 * NPMA-4: the result dtype is numpy 2's promotion of the operands, a number
 *   being a 0-d float64/int64/bool array (float32 + 2.5 is float64); divide
 *   of integers or bools is float64; bool - bool is numpy's TypeError ->
 *   DTYPE_MISMATCH. Integers wrap; bool + is or, bool * is and.
 * NPMA-7 (strict): under a masked-out output add/sub/mul leave a's data (cast
 *   to the result dtype), divide 0 + a's data; divide's specified results
 *   are q + 0 * a (so 0 / -2 is +0.0). */
#include "npma_util.h"

static int both_spec(const npma_arg *a, const npma_arg *b, int64_t i) {
  return npma_spec(a, i) && npma_spec(b, i);
}

/* The elementwise op in the result dtype rt. */
static double op_f(mt_op op, mt_dtype rt, double x, double y) {
  double r;
  if (rt != MT_float64) {
    float fx = (float)x, fy = (float)y;
    switch (op) {
    case MT_OP_add: r = fx + fy; break;
    case MT_OP_sub: r = fx - fy; break;
    case MT_OP_mul: r = fx * fy; break;
    default: r = fx / fy; break;
    }
    return mt__cpu_round(rt, r);
  }
  switch (op) {
  case MT_OP_add: return x + y;
  case MT_OP_sub: return x - y;
  case MT_OP_mul: return x * y;
  default: return x / y;
  }
}

static int64_t op_i(mt_op op, mt_dtype rt, int64_t x, int64_t y) {
  if (rt == MT_bool) return op == MT_OP_add ? (x || y) : (x && y);
  uint64_t ux = (uint64_t)x, uy = (uint64_t)y;
  switch (op) {
  case MT_OP_add: return (int64_t)(ux + uy);
  case MT_OP_sub: return (int64_t)(ux - uy);
  default: return (int64_t)(ux * uy);
  }
}

static mt_status binary(mt_call *call, mt_op op, mt_error *err) {
  const char *name = mt_op_name(op);
  npma_arg a = {0}, b = {0};
  void *od = NULL;
  uint8_t *om = NULL;
  mt_status st;
  char sa[64], sb[64];

  if ((st = npma_begin(call, op, err)) != MT_OK) return st;
  if ((st = npma_arg_open(call, 0, name, &a, err)) != MT_OK) goto out;
  if ((st = npma_arg_open(call, 1, name, &b, err)) != MT_OK) goto out;
  if (a.is_number && b.is_number) {
    st = mt_err(err, MT_NOT_SUPPORTED, "%s: two numbers: no tensor operand", name);
    goto out;
  }
  const mt_tensor *shape_of = a.is_number ? b.t : a.t;
  if (!a.is_number && !b.is_number && !mt_shape_equal(a.t, b.t)) {
    st = mt_err(err, MT_NOT_SUPPORTED,
                "%s: shapes %s and %s: broadcasting is not implemented by the numpy_ma profile",
                name, mt_shape_str(a.t->ndim, a.t->shape, sa, sizeof sa),
                mt_shape_str(b.t->ndim, b.t->shape, sb, sizeof sb));
    goto out;
  }
  mt_dtype rt;
  if (npma_promote(a.dt, b.dt, &rt) != 0) {
    st = mt_err(err, MT_NOT_SUPPORTED, "%s: %s with %s gives int16, which mtcs has no name for",
                name, mt_dtype_name(a.dt), mt_dtype_name(b.dt));
    goto out;
  }
  if (op == MT_OP_sub && rt == MT_bool) {
    st = mt_err(err, MT_DTYPE_MISMATCH,
                "%s: numpy boolean subtract, the `-` operator, is not supported (bool - bool)",
                name);
    goto out;
  }
  if (op == MT_OP_div && npma_kind(rt) != 'f') rt = MT_float64; /* true_divide */
  int is_int = npma_kind(rt) != 'f';
  if ((st = npma_new_out(call, rt, shape_of->ndim, shape_of->shape, &od, &om, err)) != MT_OK)
    goto out;
  for (int64_t i = 0; i < mt_numel(shape_of); i++) {
    int spec = both_spec(&a, &b, i);
    if (is_int) {
      int64_t x = npma_ldi(&a, i), y = npma_ldi(&b, i);
      mt__cpu_sti(od, rt, i, spec ? op_i(op, rt, x, y) : x); /* NPMA-7: a's data */
      om[i] = (uint8_t)spec;
      continue;
    }
    double x = npma_ld(&a, i), y = npma_ld(&b, i);
    if (op != MT_OP_div) {
      mt__cpu_st(od, rt, i, spec ? op_f(op, rt, x, y) : mt__cpu_round(rt, x));
      om[i] = (uint8_t)spec;
      continue;
    }
    /* NPMA-3: np.ma.divide's domain (in double: numpy's tiny is a float64)
     * and its non-finite quotients */
    double q = op_f(op, rt, x, y);
    if (fabs(x) * DBL_MIN >= fabs(y) || !isfinite(q)) spec = 0;
    /* NPMA-7: copyto(result, 0, where=m); result += m * a */
    double za = npma_kind(a.dt) == 'f' ? (spec ? 0.0 * x : x) : (spec ? 0.0 : x);
    double r = spec ? q : 0.0;
    mt__cpu_st(od, rt, i, npma_calc(rt, r + za));
    om[i] = (uint8_t)spec;
  }
out:
  if (st != MT_OK) mt__cpu_drop_outputs(call);
  npma_arg_close(&a);
  npma_arg_close(&b);
  return st;
}

mt_status mt_npma_add(mt_call *call, mt_error *err) { return binary(call, MT_OP_add, err); }
mt_status mt_npma_sub(mt_call *call, mt_error *err) { return binary(call, MT_OP_sub, err); }
mt_status mt_npma_mul(mt_call *call, mt_error *err) { return binary(call, MT_OP_mul, err); }
mt_status mt_npma_div(mt_call *call, mt_error *err) { return binary(call, MT_OP_div, err); }

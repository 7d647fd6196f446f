/* npma_binary.c - the numpy_ma profile's binary family: add sub mul div
 * (np.ma.add, subtract, multiply, divide), floor_divide remainder fmod
 * atan2/arctan2 bitwise_and/or/xor, the comparisons eq ne lt le gt ge (and
 * their aliases: not_equal less ...) and maximum minimum on masked tensors,
 * plain dense tensors and numbers, in either order.
 * NPMA-9: comparisons are bool, bool(a's data) under masked-out elements.
 * NPMA-10: floor_divide/remainder/fmod mask as divide does (NPMA-3); bool
 *   inputs give int8; integers divide as Python (floor) or C (fmod).
 * NPMA-15: bitwise_left_shift/right_shift (np.ma.left_shift/right_shift)
 *   shift filled(a, 0) by b's data (masked or not): specified where both
 *   are; a Python int shift keeps a's dtype (NEP 50); numpy's shifts by a
 *   negative amount or the width give 0 (-1 right of a negative).
 * NPMA-11: maximum/minimum are where(a > b, a, b) (a < b): NaN in a loses,
 *   in b wins; b's data under masked-out elements.
 *
 * NPMA-2: a result element is specified only where both operands are (numpy
 *   ORs its masks): masks that differ are no error.
 * NPMA-16: the operands broadcast as numpy's arrays do, masks with their
 *   data (a plain tensor or a number: all specified); shapes that do not
 *   broadcast are SHAPE_MISMATCH.
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
#include "common/exec.h"
#include "common/npma_binary_math.h"
#include "npma_util.h"

/* The n elements of the call on ex (p's operands a and b: their data and
 * masks, a number's one element). */
static mt_status run_elems(const mt_exec *ex, const char *name, mt_npb_par *p,
                           const npma_arg *a, const npma_arg *b, void *od, uint8_t *om,
                           int64_t n, mt_error *err) {
  if (!ex->npma_binary)
    return mt_err(err, MT_NOT_SUPPORTED, "%s: the %s backend has no numpy_ma binary kernels",
                  name, ex->name);
  if (n == 0) return MT_OK;
  npma_opnd_of(a, &p->a);
  npma_opnd_of(b, &p->b);
  return ex->npma_binary(p, a->data, npma_opnd_len(a), a->mask, b->data, npma_opnd_len(b),
                         b->mask, od, om, n, err);
}

/* How numpy.ma builds each op's result: common/npma_binary_math.h's NPB_* */
enum { K_ARITH = NPB_ARITH, K_CMP = NPB_CMP, K_DOMAIN = NPB_DOMAIN, K_EXTREMA = NPB_EXTREMA,
       K_SHIFT = NPB_SHIFT };

/* What an op computes. `dt_rule`: the result dtype from numpy 2's promotion
 * rt: 0 = rt, 'f' = a float (npma_float_of; true_divide of integers is
 * float64), 'b' = bool, 'i' = rt (integers and bool only: floats are
 * numpy's TypeError), '8' = rt, int8 for bool (floor_divide etc.). */
typedef struct {
  mt_op op;
  int kind;
  char dt_rule;
} npma_binary_fn;

static const npma_binary_fn BINARY_FNS[] = {
    {MT_OP_add, K_ARITH, 0},           {MT_OP_sub, K_ARITH, 0},
    {MT_OP_mul, K_ARITH, 0},           {MT_OP_div, K_DOMAIN, 'd'},
    {MT_OP_floor_divide, K_DOMAIN, '8'}, {MT_OP_remainder, K_DOMAIN, '8'},
    {MT_OP_fmod, K_DOMAIN, '8'},       {MT_OP_atan2, K_ARITH, 'f'},
    {MT_OP_arctan2, K_ARITH, 'f'},     {MT_OP_bitwise_and, K_ARITH, 'i'},
    {MT_OP_bitwise_or, K_ARITH, 'i'},  {MT_OP_bitwise_xor, K_ARITH, 'i'},
    {MT_OP_eq, K_CMP, 'b'},            {MT_OP_ne, K_CMP, 'b'},
    {MT_OP_not_equal, K_CMP, 'b'},     {MT_OP_lt, K_CMP, 'b'},
    {MT_OP_less, K_CMP, 'b'},          {MT_OP_le, K_CMP, 'b'},
    {MT_OP_less_equal, K_CMP, 'b'},    {MT_OP_gt, K_CMP, 'b'},
    {MT_OP_greater, K_CMP, 'b'},       {MT_OP_ge, K_CMP, 'b'},
    {MT_OP_greater_equal, K_CMP, 'b'}, {MT_OP_maximum, K_EXTREMA, 0},
    {MT_OP_minimum, K_EXTREMA, 0},     {MT_OP_bitwise_left_shift, K_SHIFT, 'i'},
    {MT_OP_bitwise_right_shift, K_SHIFT, 'i'},
    /* torch's aliases: np.ma.subtract, multiply, divide, true_divide */
    {MT_OP_subtract, K_ARITH, 0},      {MT_OP_multiply, K_ARITH, 0},
    {MT_OP_divide, K_DOMAIN, 'd'},     {MT_OP_true_divide, K_DOMAIN, 'd'},
};

static const npma_binary_fn *binary_fn(mt_op op) {
  for (size_t i = 0; i < sizeof BINARY_FNS / sizeof BINARY_FNS[0]; i++)
    if (BINARY_FNS[i].op == op) return &BINARY_FNS[i];
  return NULL;
}

/* An alias's op (subtract -> sub, ...): one arithmetic for both names. */
static mt_op base_op(mt_op op) {
  switch (op) {
  case MT_OP_subtract: return MT_OP_sub;
  case MT_OP_multiply: return MT_OP_mul;
  case MT_OP_divide:
  case MT_OP_true_divide: return MT_OP_div;
  default: return op;
  }
}

static mt_status binary(mt_call *call, mt_op alias, const mt_exec *ex, mt_error *err) {
  const char *name = mt_op_name(alias);
  const npma_binary_fn *fn = binary_fn(alias);
  mt_op op = base_op(alias);
  npma_arg a = {0}, b = {0};
  void *od = NULL;
  uint8_t *om = NULL;
  mt_status st;

  if ((st = npma_begin(call, alias, err)) != MT_OK) return st;
  if ((st = npma_arg_open(call, 0, name, &a, err)) != MT_OK) goto out;
  if ((st = npma_arg_open(call, 1, name, &b, err)) != MT_OK) goto out;
  if (a.is_number && b.is_number) {
    st = mt_err(err, MT_NOT_SUPPORTED, "%s: two numbers: no tensor operand", name);
    goto out;
  }
  int ndim = 0;
  int64_t shape[MT_MAX_DIMS];
  npma_arg *both[2] = {&a, &b};
  if (fn->kind == K_SHIFT && !b.is_number && !mt_shape_equal(a.t, b.t)) {
    st = mt_err(err, MT_NOT_SUPPORTED,
                "%s: np.ma's shifts build masked_array(d, mask=a's mask): broadcasting is "
                "numpy's MaskError or a mask of a's shape; not implemented", name);
    goto out;
  }
  if ((st = npma_broadcast(both, 2, name, &ndim, shape, err)) != MT_OK) goto out; /* NPMA-16 */
  npma_arg_bcast(&a, ndim, shape);
  npma_arg_bcast(&b, ndim, shape);
  mt_dtype rt;
  if (fn->kind == K_SHIFT && !a.is_masked) {
    st = mt_err(err, MT_NOT_SUPPORTED, "%s: only a masked tensor shifted is implemented", name);
    goto out;
  }
  if (fn->kind == K_SHIFT && b.is_number && b.t->kind == MT_KIND_SCALAR &&
      npma_kind(a.dt) != 'b' && npma_kind(b.dt) != 'f') {
    rt = a.dt; /* np.ma's shifts pass a Python int to the ufunc: NEP 50's weak scalar */
  } else if ((st = npma_promote_checked(name, a.dt, b.dt, &rt, err)) != MT_OK) {
    goto out;
  }
  if (op == MT_OP_sub && rt == MT_bool) {
    st = mt_err(err, MT_DTYPE_MISMATCH,
                "%s: numpy boolean subtract, the `-` operator, is not supported (bool - bool)",
                name);
    goto out;
  }
  if (fn->dt_rule == 'i' && npma_kind(rt) == 'f') {
    st = mt_err(err, MT_DTYPE_MISMATCH,
                "%s: ufunc '%s' not supported for the input types (%s, %s)", name, name,
                mt_dtype_name(a.dt), mt_dtype_name(b.dt));
    goto out;
  }
  mt_dtype ct = rt; /* the dtype numpy computes (and compares) in */
  if (fn->dt_rule == 'd' && npma_kind(rt) != 'f') rt = ct = MT_float64; /* true_divide */
  if (fn->dt_rule == 'f') rt = ct = npma_float_of(rt);
  if ((fn->dt_rule == '8' || fn->kind == K_SHIFT) && rt == MT_bool) rt = ct = MT_int8;
  if (fn->dt_rule == 'b') rt = MT_bool;
  if ((st = npma_new_out(call, rt, ndim, shape, &od, &om, err)) != MT_OK) goto out;
  mt_npb_par p = {.op = op, .kind = fn->kind, .rt = rt, .ct = ct};
  st = run_elems(ex, name, &p, &a, &b, od, om, mt_shape_numel(ndim, shape), err);
out:
  if (st != MT_OK) mt__cpu_drop_outputs(call);
  npma_arg_close(&a);
  npma_arg_close(&b);
  return st;
}

#define NPMA_BINARY_KERNEL(name) \
  mt_status mt_npma_##name(mt_call *call, mt_error *err) { \
    return mt__npma_binary_run(call, MT_OP_##name, &mt_cpu_exec, err); \
  }
NPMA_BINARY_KERNEL(add)
NPMA_BINARY_KERNEL(sub)
NPMA_BINARY_KERNEL(mul)
NPMA_BINARY_KERNEL(div)
NPMA_BINARY_KERNEL(floor_divide)
NPMA_BINARY_KERNEL(remainder)
NPMA_BINARY_KERNEL(fmod)
NPMA_BINARY_KERNEL(atan2)
NPMA_BINARY_KERNEL(arctan2)
NPMA_BINARY_KERNEL(bitwise_and)
NPMA_BINARY_KERNEL(bitwise_or)
NPMA_BINARY_KERNEL(bitwise_xor)
NPMA_BINARY_KERNEL(eq)
NPMA_BINARY_KERNEL(ne)
NPMA_BINARY_KERNEL(not_equal)
NPMA_BINARY_KERNEL(lt)
NPMA_BINARY_KERNEL(less)
NPMA_BINARY_KERNEL(le)
NPMA_BINARY_KERNEL(less_equal)
NPMA_BINARY_KERNEL(gt)
NPMA_BINARY_KERNEL(greater)
NPMA_BINARY_KERNEL(ge)
NPMA_BINARY_KERNEL(greater_equal)
NPMA_BINARY_KERNEL(maximum)
NPMA_BINARY_KERNEL(minimum)
NPMA_BINARY_KERNEL(bitwise_left_shift)
NPMA_BINARY_KERNEL(bitwise_right_shift)
NPMA_BINARY_KERNEL(subtract)
NPMA_BINARY_KERNEL(multiply)
NPMA_BINARY_KERNEL(divide)
NPMA_BINARY_KERNEL(true_divide)

/* ---- in place: a += b, a -= b, a *= b, a /= b ----------------------------
 *
 * NPMA-22: add_ sub_ mul_ div_ floor_divide_ (and subtract_ multiply_
 *   divide_ true_divide_) are MaskedArray's __iadd__ __isub__ __imul__
 *   __itruediv__ __ifloordiv__:
 *   a's mask ORs b's (specified where both are), then b's data is replaced
 *   by 0 (1 for *=, /= and //=) wherever the new mask is masked, so masked-out
 *   elements keep a's data (a + 0: -0.0 becomes +0.0). /= also masks np.ma.divide's domain (|a| * tiny >= |b|,
 *   on the data; //= too) but, unlike np.ma.divide, not the non-finite quotients:
 *   1 / 0 is masked, inf / 2 and 1e300 / 1e-300 (inf) stay specified.
 *   The result keeps a's dtype and shape: b broadcasts to a's shape (else
 *   numpy's non-broadcastable output: SHAPE_MISMATCH); a promoted dtype
 *   that does not cast to a's with 'same_kind' (an integer a with a float
 *   b, /= of integers, bool with integers, bool -= bool) is numpy's
 *   UFuncTypeError -> DTYPE_MISMATCH. Values are computed in the promoted
 *   dtype (NPMA-4) and cast to a's (integers wrap). */
static mt_status inplace(mt_call *call, mt_op alias, const mt_exec *ex, mt_error *err) {
  const char *name = mt_op_name(alias);
  mt_op op;
  switch (alias) {
  case MT_OP_add_: op = MT_OP_add; break;
  case MT_OP_sub_:
  case MT_OP_subtract_: op = MT_OP_sub; break;
  case MT_OP_mul_:
  case MT_OP_multiply_: op = MT_OP_mul; break;
  case MT_OP_floor_divide_: op = MT_OP_floor_divide; break;
  default: op = MT_OP_div; break;
  }
  npma_arg a = {0}, b = {0};
  void *od = NULL;
  uint8_t *om = NULL;
  mt_status st;
  mt_dtype pt;
  if ((st = npma_begin(call, alias, err)) != MT_OK) return st;
  if ((st = npma_arg_open(call, 0, name, &a, err)) != MT_OK) goto out;
  if ((st = npma_arg_open(call, 1, name, &b, err)) != MT_OK) goto out;
  if (!a.is_masked) {
    st = mt_err(err, MT_NOT_SUPPORTED, "%s: inputs/0 must be a masked tensor", name);
    goto out;
  }
  const mt_tensor *t = a.t;
  int ndim = 0;
  int64_t shape[MT_MAX_DIMS];
  npma_arg *both[2] = {&a, &b};
  if ((st = npma_broadcast(both, 2, name, &ndim, shape, err)) != MT_OK) goto out;
  if (ndim != t->ndim || memcmp(shape, t->shape, sizeof *shape * (size_t)ndim) != 0) {
    st = mt_err(err, MT_SHAPE_MISMATCH,
                "%s: non-broadcastable output operand: b does not broadcast to a's shape", name);
    goto out;
  }
  npma_arg_bcast(&b, ndim, shape);
  if ((st = npma_promote_checked(name, a.dt, b.dt, &pt, err)) != MT_OK) goto out;
  if (op == MT_OP_div && npma_kind(pt) != 'f') pt = MT_float64; /* true_divide */
  if (op == MT_OP_floor_divide && pt == MT_bool) pt = MT_int8; /* numpy's bool // bool */
  /* numpy's 'same_kind' cast of the result to a's dtype */
  if (!npma_same_kind(pt, a.dt) || (op == MT_OP_sub && pt == MT_bool)) {
    st = mt_err(err, MT_DTYPE_MISMATCH,
                "%s: Cannot cast ufunc output from dtype %s to dtype %s with casting rule "
                "'same_kind' (numpy's UFuncTypeError)", name, mt_dtype_name(pt),
                mt_dtype_name(a.dt));
    goto out;
  }
  mt_dtype rt = a.dt;
  if ((st = npma_new_out(call, rt, t->ndim, t->shape, &od, &om, err)) != MT_OK) goto out;
  mt_npb_par p = {.op = op, .kind = K_ARITH, .inplace = 1, .rt = rt, .ct = pt};
  st = run_elems(ex, name, &p, &a, &b, od, om, mt_numel(t), err);
out:
  if (st != MT_OK) mt__cpu_drop_outputs(call);
  npma_arg_close(&a);
  npma_arg_close(&b);
  return st;
}

#define NPMA_INPLACE_KERNEL(name) NPMA_BINARY_KERNEL(name)
NPMA_INPLACE_KERNEL(add_)
NPMA_INPLACE_KERNEL(sub_)
NPMA_INPLACE_KERNEL(subtract_)
NPMA_INPLACE_KERNEL(mul_)
NPMA_INPLACE_KERNEL(multiply_)
NPMA_INPLACE_KERNEL(div_)
NPMA_INPLACE_KERNEL(divide_)
NPMA_INPLACE_KERNEL(true_divide_)
NPMA_INPLACE_KERNEL(floor_divide_)

/* ---- the family's entry (common/exec.h) ----------------------------------- */

mt_status mt__npma_binary_run(mt_call *call, mt_op op, const mt_exec *ex, mt_error *err) {
  switch (op) {
  case MT_OP_add_:
  case MT_OP_sub_:
  case MT_OP_subtract_:
  case MT_OP_mul_:
  case MT_OP_multiply_:
  case MT_OP_div_:
  case MT_OP_divide_:
  case MT_OP_true_divide_:
  case MT_OP_floor_divide_: return inplace(call, op, ex, err);
  default:
    if (!binary_fn(op))
      return mt_err(err, MT_NOT_SUPPORTED, "%s: not a numpy_ma binary op", mt_op_name(op));
    return binary(call, op, ex, err);
  }
}

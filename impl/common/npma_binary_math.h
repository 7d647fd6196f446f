/* npma_binary_math.h - the per-element math of the numpy_ma profile's
 * binary family, shared by the CPU reference (impl/cpu/npma_binary.c, its
 * host plan: checks, numpy's promotion, broadcasting, outputs) and the CUDA
 * kernels (impl/cuda/npma_binary.cu): the parameters of one call
 * (mt_npb_par: the ops are switched on their mt_op code), numpy's integer
 * and float loops, and one element's data and mask (mt_npb_elem). The
 * rules (NPMA-2, -3, -4, -7, -9, -10, -11, -15, -16, -22) are
 * npma_binary.c's header. */
#ifndef MT_NPMA_BINARY_MATH_H
#define MT_NPMA_BINARY_MATH_H

#include <float.h>
#include <math.h>

#include "common/mt_hd.h"
#include "common/npma_math.h"

/* the family's ops (impl/cpu/npma_ops.def's lines of npma_binary.c): the
 * CUDA table's slots */
#define NPMA_BINARY_OPS(X)                                                                    \
  X(add) X(sub) X(mul) X(div) X(floor_divide) X(remainder) X(fmod) X(atan2) X(arctan2)       \
  X(bitwise_and) X(bitwise_or) X(bitwise_xor) X(eq) X(ne) X(not_equal) X(lt) X(less) X(le)  \
  X(less_equal) X(gt) X(greater) X(ge) X(greater_equal) X(maximum) X(minimum)              \
  X(bitwise_left_shift) X(bitwise_right_shift) X(subtract) X(multiply) X(divide)           \
  X(true_divide) X(add_) X(sub_) X(subtract_) X(mul_) X(multiply_) X(div_) X(divide_)       \
  X(true_divide_) X(floor_divide_)

/* How numpy.ma builds each op's result (np.ma's operation classes). */
enum {
  NPB_ARITH,   /* _MaskedBinaryOperation: add sub mul arctan2 bitwise_*: a's data */
  NPB_CMP,     /* comparisons: bool, bool(a's data) under masked-out elements */
  NPB_DOMAIN,  /* _DomainedBinaryOperation: div floor_divide remainder fmod */
  NPB_EXTREMA, /* _extrema_operation: where(compare(a, b), a, b) */
  NPB_SHIFT    /* np.ma.left_shift/right_shift: plain functions of filled(a, 0) */
};

/* One operand: a number (its one element) or a tensor (contiguous data,
 * a mask or none: all specified), broadcast as npma_util.h's npma_arg_bcast
 * says: element i of the result reads sum(coord_k * bstride[k]). */
typedef struct mt_npb_opnd {
  mt_dtype dt;
  int is_number;
  int bcast, bndim;
  int64_t bshape[MT_MAX_DIMS], bstride[MT_MAX_DIMS];
} mt_npb_opnd;

/* One call, planned on the host (npma_binary.c). */
typedef struct mt_npb_par {
  mt_op op;      /* the base op (aliases resolved: subtract -> sub ...) */
  int kind;      /* NPB_*; the in-place ops: inplace */
  int inplace;   /* add_ .. floor_divide_ (NPMA-22) */
  mt_dtype rt;   /* the result dtype */
  mt_dtype ct;   /* the dtype numpy computes in (in place: the promotion pt) */
  mt_npb_opnd a, b;
} mt_npb_par;

MT_HD int64_t mt_npb_idx(const mt_npb_opnd *a, int64_t i) {
  return mt_np_bcast_idx(a->is_number, a->bcast, a->bndim, a->bshape, a->bstride, i);
}

/* numpy's npy_lshift/npy_rshift in a dtype of `bits` bits: a shift by a
 * negative amount or by the width or more gives 0 (right: -1 for a < 0). */
MT_HD int64_t mt_npb_shift_i(mt_op op, int64_t x, int64_t n, int bits) {
  if ((uint64_t)n >= (uint64_t)bits) return op == MT_OP_bitwise_left_shift ? 0 : (x < 0 ? -1 : 0);
  return op == MT_OP_bitwise_left_shift ? (int64_t)((uint64_t)x << n) : x >> n;
}

MT_HD int mt_npb_bits_of(mt_dtype d) {
  switch (d) {
  case MT_bool:
  case MT_int8:
  case MT_uint8: return 8;
  case MT_int32: return 32;
  default: return 64;
  }
}

/* The comparison x OP y (on exact values: numpy compares in the promoted
 * dtype, which holds both); NaN compares false except for ne. */
MT_HD int mt_npb_cmp(mt_op op, double x, double y) {
  switch (op) {
  case MT_OP_eq: return x == y;
  case MT_OP_ne:
  case MT_OP_not_equal: return x != y;
  case MT_OP_lt:
  case MT_OP_less:
  case MT_OP_minimum: return x < y;
  case MT_OP_le:
  case MT_OP_less_equal: return x <= y;
  case MT_OP_gt:
  case MT_OP_greater:
  case MT_OP_maximum: return x > y;
  default: return x >= y;
  }
}

MT_HD int mt_npb_cmp_i(mt_op op, int64_t x, int64_t y) {
  return mt_npb_cmp(op, x < y ? -1.0 : x > y ? 1.0 : 0.0, 0.0);
}

/* numpy's npy_divmod (Python's floor division and modulo for floats), in
 * double or float (float16/float32). */
MT_HD double mt_npb_divmod_f(double a, double b, double *mod, int f) {
  double m = f ? (double)fmodf((float)a, (float)b) : fmod(a, b);
  if (b == 0.0) {
    *mod = m;
    return f ? (double)((float)a / (float)b) : a / b;
  }
  double div = f ? (double)(((float)a - (float)m) / (float)b) : (a - m) / b;
  if (m != 0.0) {
    if ((b < 0) != (m < 0)) {
      m = f ? (double)((float)m + (float)b) : m + b;
      div -= 1.0;
    }
  } else {
    m = copysign(0.0, b);
  }
  double fd;
  if (div != 0.0) {
    fd = floor(div);
    if (div - fd > 0.5) fd += 1.0;
  } else {
    fd = copysign(0.0, f ? (double)((float)a / (float)b) : a / b);
  }
  *mod = m;
  return fd;
}

/* The elementwise op in the float result dtype rt. */
MT_HD double mt_npb_op_f(mt_op op, mt_dtype rt, double x, double y) {
  int f = rt != MT_float64;
  double r, mod;
  if (f) {
    x = (double)(float)x;
    y = (double)(float)y;
  }
  switch (op) {
  case MT_OP_add: r = x + y; break;
  case MT_OP_sub: r = x - y; break;
  case MT_OP_mul: r = x * y; break;
  case MT_OP_atan2:
  case MT_OP_arctan2: r = f ? (double)atan2f((float)x, (float)y) : atan2(x, y); break;
  case MT_OP_fmod: r = f ? (double)fmodf((float)x, (float)y) : fmod(x, y); break;
  case MT_OP_floor_divide: r = mt_npb_divmod_f(x, y, &mod, f); break;
  case MT_OP_remainder:
    (void)mt_npb_divmod_f(x, y, &mod, f);
    r = mod;
    break;
  default: r = x / y; break;
  }
  return mt_hd_round(rt, mt_np_calc(rt, r));
}

MT_HD int64_t mt_npb_op_i(mt_op op, mt_dtype rt, int64_t x, int64_t y) {
  if (rt == MT_bool) {
    switch (op) {
    case MT_OP_add:
    case MT_OP_bitwise_or: return x || y;
    case MT_OP_bitwise_xor: return (x != 0) != (y != 0);
    default: return x && y;
    }
  }
  uint64_t ux = (uint64_t)x, uy = (uint64_t)y;
  switch (op) {
  case MT_OP_add: return (int64_t)(ux + uy);
  case MT_OP_sub: return (int64_t)(ux - uy);
  case MT_OP_bitwise_and: return x & y;
  case MT_OP_bitwise_or: return x | y;
  case MT_OP_bitwise_xor: return x ^ y;
  default: break;
  }
  if (op == MT_OP_mul) return (int64_t)(ux * uy);
  if (y == 0) return 0;
  if (y == -1) return op == MT_OP_floor_divide ? (int64_t)(0 - ux) : 0; /* no INT_MIN / -1 trap */
  int64_t q = x / y, m = x % y;
  if (op == MT_OP_fmod) return m;
  int adjust = m != 0 && ((m < 0) != (y < 0));
  if (op == MT_OP_remainder) return adjust ? m + y : m;
  return adjust ? q - 1 : q; /* floor_divide */
}

/* Element i of the result: out[i] (p->rt) and mask_out[i] from the
 * operands' data a, b and masks ma, mb (NULL: all specified). */
MT_HD void mt_npb_elem(const mt_npb_par *p, const void *a, const uint8_t *ma, const void *b,
                       const uint8_t *mb, void *out, uint8_t *mask_out, int64_t i) {
  int64_t ia = mt_npb_idx(&p->a, i), ib = mt_npb_idx(&p->b, i);
  int spec_a = !ma || ma[ia], spec = spec_a && (!mb || mb[ib]);
  mt_op op = p->op;
  mt_dtype rt = p->rt, adt = p->a.dt, bdt = p->b.dt;
  int is_int = !mt_hd_is_float(p->ct);
  if (p->inplace) { /* NPMA-22 */
    mt_dtype pt = p->ct;
    int is_div = op == MT_OP_div || op == MT_OP_floor_divide;
    if (is_int) {
      int64_t x = mt_hd_ldi(a, adt, ia), y = mt_hd_ldi(b, bdt, ib);
      if (is_div && y == 0) spec = 0; /* |a| * tiny >= |0| */
      mt_hd_sti(out, rt, i, spec ? mt_npb_op_i(op, pt, x, y) : x); /* x // 1 = x */
    } else {
      double x = mt_hd_get_f64(a, adt, ia), y = mt_hd_get_f64(b, bdt, ib);
      if (is_div && fabs(x) * DBL_MIN >= fabs(y)) spec = 0; /* the domain only */
      /* masked-out: b's data replaced by the identity, so -0.0 + 0 is +0.0 */
      double ident = (op == MT_OP_add || op == MT_OP_sub) ? 0.0 : 1.0;
      double r = mt_npb_op_f(op, pt, x, spec ? y : ident);
      mt_hd_set_f64(out, rt, i, mt_hd_round(rt, r));
    }
    mask_out[i] = (uint8_t)spec;
    return;
  }
  if (p->kind == NPB_CMP) { /* NPMA-9 */
    int r = is_int ? mt_npb_cmp_i(op, mt_hd_ldi(a, adt, ia), mt_hd_ldi(b, bdt, ib))
                   : mt_npb_cmp(op, mt_hd_get_f64(a, adt, ia), mt_hd_get_f64(b, bdt, ib));
    mt_hd_sti(out, rt, i, spec ? r : mt_hd_get_f64(a, adt, ia) != 0.0); /* NPMA-7: bool(a) */
  } else if (p->kind == NPB_EXTREMA) { /* NPMA-11: where(spec && a > b, a, b) */
    int take_a =
        spec && (is_int ? mt_npb_cmp_i(op, mt_hd_ldi(a, adt, ia), mt_hd_ldi(b, bdt, ib))
                        : mt_npb_cmp(op, mt_hd_get_f64(a, adt, ia), mt_hd_get_f64(b, bdt, ib)));
    const void *w = take_a ? a : b;
    mt_dtype wd = take_a ? adt : bdt;
    int64_t wi = take_a ? ia : ib;
    if (is_int)
      mt_hd_sti(out, rt, i, mt_hd_ldi(w, wd, wi));
    else
      mt_hd_set_f64(out, rt, i, mt_hd_get_f64(w, wd, wi));
  } else if (p->kind == NPB_SHIFT) { /* NPMA-15: filled(a, 0) shifted by b's data */
    int64_t x = spec_a ? mt_hd_ldi(a, adt, ia) : 0;
    int64_t y = mt_hd_ldi(b, bdt, ib); /* b cast to ct: mtcs's values fit */
    mt_hd_sti(out, rt, i, mt_npb_shift_i(op, x, y, mt_npb_bits_of(p->ct)));
  } else if (is_int) {
    int64_t x = mt_hd_ldi(a, adt, ia), y = mt_hd_ldi(b, bdt, ib);
    if (p->kind == NPB_DOMAIN && y == 0) spec = 0; /* |a| * tiny >= |0| */
    mt_hd_sti(out, rt, i, spec ? mt_npb_op_i(op, rt, x, y) : x); /* NPMA-7: a's data */
  } else {
    double x = mt_hd_get_f64(a, adt, ia), y = mt_hd_get_f64(b, bdt, ib);
    if (p->kind != NPB_DOMAIN) {
      mt_hd_set_f64(out, rt, i, spec ? mt_npb_op_f(op, rt, x, y) : mt_hd_round(rt, x));
    } else {
      /* NPMA-3, NPMA-10: np.ma's safe-divide domain (in double: numpy's
       * tiny is a float64) and the non-finite results */
      double q = mt_npb_op_f(op, rt, x, y);
      if (fabs(x) * DBL_MIN >= fabs(y) || !isfinite(q)) spec = 0;
      /* NPMA-7: copyto(result, 0, where=m); result += m * a */
      double za = mt_hd_is_float(adt) ? (spec ? 0.0 * x : x) : (spec ? 0.0 : x);
      double r = spec ? q : 0.0;
      mt_hd_set_f64(out, rt, i, mt_np_calc(rt, r + za));
    }
  }
  mask_out[i] = (uint8_t)spec;
}

#endif /* MT_NPMA_BINARY_MATH_H */

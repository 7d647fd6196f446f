/* binary_math.h - the per-element math of the binary family, shared by the
 * CPU reference (impl/cpu/binary.c, which plans each call: promotion, mask
 * checks, broadcasting, layouts) and the CUDA kernels (impl/cuda/binary.cu):
 * the op codes, a op b in the computation dtype (floats: float for
 * float16/bfloat16/float32, double for float64; integers exact in int64,
 * wrapping at the store), operand loads with torch's casts, and one result
 * element of a broadcast loop (mt_bin_elem). */
#ifndef MT_BINARY_MATH_H
#define MT_BINARY_MATH_H

#include "common/mt_hd.h"

typedef enum {
  K_ADD, K_SUB, K_MUL, K_DIV, K_ATAN2, K_AND, K_OR, K_XOR, K_SHL, K_SHR, K_FLOORDIV, K_FMOD,
  K_REM, K_LAE, K_LAE2, K_NEXT, K_EQ, K_NE, K_LE, K_GE, K_GT, K_LT, K_MAX, K_MIN, K_FMAX, K_FMIN
} mt_bin_code;

/* What one call computes, planned on the host. */
typedef struct mt_bin_par {
  mt_bin_code code;
  mt_dtype ct;        /* computation dtype */
  mt_dtype rt;        /* result dtype */
  mt_dtype nt;        /* what a number operand is rounded to first */
  int fl;             /* ct is a float dtype */
  mt_dtype dt[2];     /* the operands' element dtypes (tensor operands) */
  int number[2];      /* operand k is a Python number */
  double f[2];        /* a number's value */
  int64_t i[2];       /* a number's exact integer value */
  int b_masked;       /* the right operand is masked: a zero integer divisor
                         at a masked-out position is no error (MASK-9) */
} mt_bin_par;

/* The broadcast loop of one call: the result's shape, and each operand's
 * element strides along it (0 along a broadcast dim); sm: the mask's. */
typedef struct mt_bin_loop {
  int ndim;
  int64_t shape[MT_MAX_DIMS];
  int64_t sa[MT_MAX_DIMS], sb[MT_MAX_DIMS], sm[MT_MAX_DIMS];
  int64_t n; /* result elements */
} mt_bin_loop;

#define MT__BIN_INV_LN2 1.4426950408889634 /* 1 / ln 2, as torch's inv_log_2 */

/* torch's div_floor_floating (c10/util/generic_math.h), in double. */
MT_HD double mt__bin_floordiv_d(double a, double b) {
  if (b == 0) return a / b;
  double mod = fmod(a, b), div = (a - mod) / b;
  if (mod != 0 && (b < 0) != (mod < 0)) div -= 1;
  if (div == 0) return copysign(0.0, a / b);
  double fl = floor(div);
  if (div - fl > 0.5) fl += 1.0;
  return fl;
}
MT_HD float mt__bin_floordiv_f(float a, float b) {
  if (b == 0) return a / b;
  float mod = fmodf(a, b), div = (a - mod) / b;
  if (mod != 0 && (b < 0) != (mod < 0)) div -= 1;
  if (div == 0) return copysignf(0.0f, a / b);
  float fl = floorf(div);
  if (div - fl > 0.5f) fl += 1.0f;
  return fl;
}

/* float16 / bfloat16 nextafter on the bit pattern (x, y already values of
 * ct); from zero the smallest subnormal, 2^-24 (half) or 2^-133 (bfloat16). */
MT_HD double mt__bin_next_half(double x, double y, mt_dtype ct) {
  if (isnan(x) || isnan(y)) return NAN;
  if (x == y) return y;
  if (x == 0) return copysign(ldexp(1.0, ct == MT_bfloat16 ? -133 : -24), y);
  int bf = ct == MT_bfloat16;
  uint16_t h = bf ? mt_hd_float_to_bfloat16((float)x) : mt_hd_float_to_half((float)x);
  if ((x < y) == (x > 0))
    h++;
  else
    h--;
  return bf ? mt_hd_bfloat16_to_float(h) : mt_hd_half_to_float(h);
}

/* a op b for float computation dtypes (operands already rounded to it);
 * single: float16/bfloat16/float32, computed in float. */
MT_HD double mt_bin_fop(mt_bin_code k, double a, double b, mt_dtype ct) {
  int single = ct != MT_float64;
  float x = (float)a, y = (float)b;
  switch (k) {
  case K_ADD: return single ? (double)(x + y) : a + b;
  case K_SUB: return single ? (double)(x - y) : a - b;
  case K_MUL: return single ? (double)(x * y) : a * b;
  case K_DIV: return single ? (double)(x / y) : a / b;
  case K_ATAN2: return single ? (double)atan2f(x, y) : atan2(a, b);
  case K_FLOORDIV: return single ? (double)mt__bin_floordiv_f(x, y) : mt__bin_floordiv_d(a, b);
  case K_FMOD: return single ? (double)fmodf(x, y) : fmod(a, b);
  case K_REM: {
    if (single) {
      float m = fmodf(x, y);
      if (m != 0 && (y < 0) != (m < 0)) m += y;
      return m;
    }
    double m = fmod(a, b);
    if (m != 0 && (b < 0) != (m < 0)) m += b;
    return m;
  }
  case K_LAE:
    if (isinf(a) && a == b) return a;
    if (single) {
      float m = x > y ? x : y;
      if (isnan(x)) m = x;
      return (double)(m + log1pf(expf(-fabsf(x - y))));
    }
    {
      double m = a > b ? a : b;
      if (isnan(a)) m = a;
      return m + log1p(exp(-fabs(a - b)));
    }
  case K_LAE2:
    if (isinf(a) && a == b) return a;
    if (single) {
      float m = x > y ? x : y;
      if (isnan(x)) m = x;
      return (double)(m + log1pf(exp2f(-fabsf(x - y))) * (float)MT__BIN_INV_LN2);
    }
    {
      double m = a > b ? a : b;
      if (isnan(a)) m = a;
      return m + log1p(exp2(-fabs(a - b))) * MT__BIN_INV_LN2;
    }
  case K_NEXT:
    if (ct == MT_float16 || ct == MT_bfloat16) return mt__bin_next_half(a, b, ct);
    return single ? (double)nextafterf(x, y) : nextafter(a, b);
  case K_MAX:
    if (isnan(a) || isnan(b)) return NAN;
    return a < b ? b : a;
  case K_MIN:
    if (isnan(a) || isnan(b)) return NAN;
    return a > b ? b : a;
  case K_FMAX:
    if (isnan(a)) return b;
    if (isnan(b)) return a;
    return a < b ? b : a;
  case K_FMIN:
    if (isnan(a)) return b;
    if (isnan(b)) return a;
    return a > b ? b : a;
  case K_EQ: return a == b;
  case K_NE: return a != b;
  case K_LE: return a <= b;
  case K_GE: return a >= b;
  case K_GT: return a > b;
  case K_LT: return a < b;
  default: return NAN; /* bitwise ops have no float kernel (refused before) */
  }
}

/* a op b for integer and bool computation dtypes, exact, wrapping at the
 * store. Division by zero is the caller's (mt_bin_elem checks it first). */
MT_HD int64_t mt_bin_iop(mt_bin_code k, int64_t a, int64_t b, mt_dtype ct) {
  uint64_t ua = (uint64_t)a, ub = (uint64_t)b;
  int bits = ct == MT_int64 ? 64 : ct == MT_int32 ? 32 : 8;
  switch (k) {
  case K_ADD: return (int64_t)(ua + ub);
  case K_SUB: return (int64_t)(ua - ub);
  case K_MUL: return (int64_t)(ua * ub);
  case K_AND: return a & b;
  case K_OR: return a | b;
  case K_XOR: return a ^ b;
  case K_SHL: return (b < 0 || b >= bits) ? 0 : (int64_t)(ua << b);
  case K_SHR: /* a is sign-correct in int64: >> fills with its sign */
    return (b < 0 || b >= bits) ? (a < 0 ? -1 : 0) : (a >> b);
  case K_FLOORDIV: {
    if (b == -1) return (int64_t)(0 - ua);
    int64_t q = a / b;
    if (a % b != 0 && (a < 0) != (b < 0)) q--;
    return q;
  }
  case K_FMOD: return b == -1 ? 0 : a % b;
  case K_REM: {
    if (b == -1) return 0;
    int64_t r = a % b;
    if (r != 0 && (r < 0) != (b < 0)) r += b;
    return r;
  }
  case K_MAX: case K_FMAX: return a < b ? b : a;
  case K_MIN: case K_FMIN: return a > b ? b : a;
  case K_EQ: return a == b;
  case K_NE: return a != b;
  case K_LE: return a <= b;
  case K_GE: return a >= b;
  case K_GT: return a > b;
  case K_LT: return a < b;
  default: return 0; /* float-only ops (refused before) */
  }
}

MT_HD int mt_bin_is_int_division(mt_bin_code k) {
  return k == K_FLOORDIV || k == K_FMOD || k == K_REM;
}

/* Operand k's element at storage offset off (a number ignores it), as torch
 * casts it: floats rounded to the computation dtype (a number to nt),
 * integers wrapped to it. */
MT_HD double mt__bin_ld_f(const mt_bin_par *p, int k, const void *vals, int64_t off) {
  if (p->number[k]) return mt_hd_round(p->nt, p->f[k]);
  return mt_hd_round(p->ct, mt_hd_get_f64(vals, p->dt[k], off));
}
MT_HD int64_t mt__bin_ld_i(const mt_bin_par *p, int k, const void *vals, int64_t off) {
  mt_hd_slot tmp;
  int64_t v = p->number[k] ? p->i[k] : mt_hd_ldi(vals, p->dt[k], off);
  mt_hd_sti(&tmp, p->ct, 0, v); /* wrap to the computation dtype */
  return mt_hd_ldi(&tmp, p->ct, 0);
}

/* Storage offset of result element i along strides s (row-major index). */
MT_HD int64_t mt_bin_offset(const mt_bin_loop *l, const int64_t *s, int64_t i) {
  int64_t off = 0;
  for (int d = l->ndim - 1; d >= 0; d--) {
    int64_t n = l->shape[d];
    off += (i % n) * s[d];
    i /= n;
  }
  return off;
}

/* Result element i of the loop: out[i] = a op b, mask_out[i] = the mask
 * (when mask_out is given; the mask is read at strides sm). Returns 1 when
 * a zero integer divisor sits at a specified position (BIN-5: the call
 * fails there), 0 otherwise; a masked-out one stores 0 (MASK-9). */
MT_HD int mt_bin_elem(const mt_bin_par *p, const mt_bin_loop *l, const void *va, const void *vb,
                      const uint8_t *mask, void *out, uint8_t *mask_out, int64_t i) {
  int64_t oa = p->number[0] ? 0 : mt_bin_offset(l, l->sa, i);
  int64_t ob = p->number[1] ? 0 : mt_bin_offset(l, l->sb, i);
  int spec = mask[mt_bin_offset(l, l->sm, i)] != 0;
  if (mask_out) mask_out[i] = (uint8_t)spec;
  if (p->fl) {
    double r = mt_bin_fop(p->code, mt__bin_ld_f(p, 0, va, oa), mt__bin_ld_f(p, 1, vb, ob), p->ct);
    mt_hd_set_f64(out, p->rt, i, r);
    return 0;
  }
  int64_t a = mt__bin_ld_i(p, 0, va, oa), b = mt__bin_ld_i(p, 1, vb, ob);
  if (mt_bin_is_int_division(p->code) && b == 0) {
    mt_hd_sti(out, p->rt, i, 0); /* masked out: any value, no error */
    return spec || !p->b_masked;
  }
  mt_hd_sti(out, p->rt, i, mt_bin_iop(p->code, a, b, p->ct));
  return 0;
}

#endif /* MT_BINARY_MATH_H */

/* access.c - element access in any dtype, as double; IEEE binary16 and
 * bfloat16 conversions. */
#include <math.h>
#include <string.h>

#include "mt_core.h"

float mt_half_to_float(uint16_t h) {
  uint32_t sign = (uint32_t)(h & 0x8000u) << 16, exp = (h >> 10) & 0x1fu, man = h & 0x3ffu;
  uint32_t bits;
  if (exp == 0x1f) { /* inf / nan */
    bits = sign | 0x7f800000u | (man << 13);
  } else if (exp == 0) {
    if (man == 0) {
      bits = sign;
    } else { /* subnormal: value = man * 2^-24, exact in float */
      float f = (float)man * 0x1p-24f;
      memcpy(&bits, &f, sizeof bits);
      bits |= sign;
    }
  } else {
    bits = sign | ((exp + 112u) << 23) | (man << 13);
  }
  float f;
  memcpy(&f, &bits, sizeof f);
  return f;
}

/* Round to nearest even, overflow to inf, NaN kept quiet. */
uint16_t mt_float_to_half(float f) {
  uint32_t x;
  memcpy(&x, &f, sizeof x);
  uint16_t sign = (uint16_t)((x >> 16) & 0x8000u);
  uint32_t absx = x & 0x7fffffffu;
  if (absx >= 0x7f800000u) /* inf or nan */
    return sign | (absx > 0x7f800000u ? 0x7e00u : 0x7c00u);
  if (absx >= 0x477ff000u) return sign | 0x7c00u; /* rounds to >= 65520: inf */
  if (absx < 0x38800000u) {                         /* below 2^-14: subnormal or zero */
    float a;
    memcpy(&a, &absx, sizeof a);
    /* a * 2^24 in [0, 1024); rint rounds to nearest even in the default mode */
    return sign | (uint16_t)rintf(a * 0x1p24f);
  }
  uint32_t mant = absx & 0x7fffffu, exp = (absx >> 23) - 112u;
  uint32_t h = (exp << 10) | (mant >> 13), rest = mant & 0x1fffu;
  if (rest > 0x1000u || (rest == 0x1000u && (h & 1u))) h++; /* carry into exp is correct */
  return sign | (uint16_t)h;
}

/* bfloat16 is the upper half of a float32: widening is exact. */
float mt_bfloat16_to_float(uint16_t b) {
  uint32_t bits = (uint32_t)b << 16;
  float f;
  memcpy(&f, &bits, sizeof f);
  return f;
}

/* Round to nearest even on the 16 dropped bits, as c10::BFloat16's
 * round_to_nearest_even: add 0x7fff plus the kept lsb, then truncate. A
 * carry out of the mantissa bumps the exponent, which is the correct
 * rounding (the largest finite values round up to inf). NaN becomes the
 * quiet NaN 0x7fc0 with the input's sign (c10 returns 0x7fc0 without the
 * sign; torch's own NaN outputs are what goldens compare, and NaN equals
 * NaN whatever its sign). */
uint16_t mt_float_to_bfloat16(float f) {
  uint32_t x;
  memcpy(&x, &f, sizeof x);
  if ((x & 0x7fffffffu) > 0x7f800000u) return (uint16_t)(((x >> 16) & 0x8000u) | 0x7fc0u);
  uint32_t lsb = (x >> 16) & 1u;
  return (uint16_t)((x + 0x7fffu + lsb) >> 16);
}

double mt_get_f64(const void *buf, mt_dtype dtype, int64_t i) {
  switch (dtype) {
  case MT_float32: return ((const float *)buf)[i];
  case MT_float64: return ((const double *)buf)[i];
  case MT_float16: return mt_half_to_float(((const uint16_t *)buf)[i]);
  case MT_bfloat16: return mt_bfloat16_to_float(((const uint16_t *)buf)[i]);
  case MT_int64: return (double)((const int64_t *)buf)[i];
  case MT_int32: return ((const int32_t *)buf)[i];
  case MT_int8: return ((const int8_t *)buf)[i];
  case MT_uint8: return ((const uint8_t *)buf)[i];
  case MT_bool: return ((const uint8_t *)buf)[i] != 0;
  default: return NAN;
  }
}

/* double -> int64 without undefined behaviour: NaN is 0, out of range
 * saturates. Narrower integer dtypes then wrap, as torch's integer sums do
 * (coalescing uint8 duplicates 250 + 256 gives 250; found by fuzz_tensor). */
static int64_t f64_to_i64(double v) {
  if (v != v) return 0;
  if (v >= 0x1p63) return INT64_MAX;
  if (v < -0x1p63) return INT64_MIN;
  return (int64_t)v;
}

void mt_set_f64(void *buf, mt_dtype dtype, int64_t i, double v) {
  switch (dtype) {
  case MT_float32: ((float *)buf)[i] = (float)v; break;
  case MT_float64: ((double *)buf)[i] = v; break;
  case MT_float16: ((uint16_t *)buf)[i] = mt_float_to_half((float)v); break;
  case MT_bfloat16: ((uint16_t *)buf)[i] = mt_float_to_bfloat16((float)v); break;
  case MT_int64: ((int64_t *)buf)[i] = f64_to_i64(v); break;
  case MT_int32: ((int32_t *)buf)[i] = (int32_t)(uint32_t)(uint64_t)f64_to_i64(v); break;
  case MT_int8: ((int8_t *)buf)[i] = (int8_t)(uint8_t)(uint64_t)f64_to_i64(v); break;
  case MT_uint8: ((uint8_t *)buf)[i] = (uint8_t)(uint64_t)f64_to_i64(v); break;
  case MT_bool: ((uint8_t *)buf)[i] = v != 0; break;
  default: break;
  }
}

int64_t mt_dense_offset(const mt_tensor *t, int64_t linear) {
  int64_t off = 0;
  for (int d = t->ndim - 1; d >= 0; d--) {
    int64_t n = t->shape[d];
    if (n <= 0) return 0;
    off += (linear % n) * t->strides[d];
    linear /= n;
  }
  return off;
}

double mt_dense_get(const mt_tensor *t, int64_t linear) {
  return mt_numel(t) > 0 ? mt_get_f64(t->values, t->dtype, mt_dense_offset(t, linear)) : NAN;
}

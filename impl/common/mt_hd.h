/* mt_hd.h - what the CPU reference and the CUDA backend compute alike:
 * MT_HD marks a function for both (__host__ __device__ under nvcc, plain
 * static inline under a C or C++ compiler, the CUDA emulation included),
 * and the element access of every dtype: loads widen to double (or to
 * int64 exactly), stores round once; IEEE binary16 and bfloat16
 * conversions. impl/access.c's mt_get_f64/mt_set_f64 and the half
 * conversions are these functions, so every golden the CPU passes checks
 * them (spec/cuda-backend.md "Shared per-element math"). */
#ifndef MT_HD_H
#define MT_HD_H

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "mt/mt.h"

#if defined(__CUDACC__)
#define MT_HD static inline __host__ __device__
#else
#define MT_HD static inline
#endif

MT_HD float mt_hd_half_to_float(uint16_t h) {
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
MT_HD uint16_t mt_hd_float_to_half(float f) {
  uint32_t x;
  memcpy(&x, &f, sizeof x);
  uint16_t sign = (uint16_t)((x >> 16) & 0x8000u);
  uint32_t absx = x & 0x7fffffffu;
  if (absx >= 0x7f800000u) /* inf or nan */
    return (uint16_t)(sign | (absx > 0x7f800000u ? 0x7e00u : 0x7c00u));
  if (absx >= 0x477ff000u) return (uint16_t)(sign | 0x7c00u); /* rounds to >= 65520: inf */
  if (absx < 0x38800000u) {                                     /* below 2^-14: subnormal or zero */
    float a;
    memcpy(&a, &absx, sizeof a);
    /* a * 2^24 in [0, 1024); rint rounds to nearest even in the default mode */
    return (uint16_t)(sign | (uint16_t)rintf(a * 0x1p24f));
  }
  uint32_t mant = absx & 0x7fffffu, exp = (absx >> 23) - 112u;
  uint32_t h = (exp << 10) | (mant >> 13), rest = mant & 0x1fffu;
  if (rest > 0x1000u || (rest == 0x1000u && (h & 1u))) h++; /* carry into exp is correct */
  return (uint16_t)(sign | (uint16_t)h);
}

/* bfloat16 is the upper half of a float32: widening is exact. */
MT_HD float mt_hd_bfloat16_to_float(uint16_t b) {
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
MT_HD uint16_t mt_hd_float_to_bfloat16(float f) {
  uint32_t x;
  memcpy(&x, &f, sizeof x);
  if ((x & 0x7fffffffu) > 0x7f800000u) return (uint16_t)(((x >> 16) & 0x8000u) | 0x7fc0u);
  uint32_t lsb = (x >> 16) & 1u;
  return (uint16_t)((x + 0x7fffu + lsb) >> 16);
}

MT_HD double mt_hd_get_f64(const void *buf, mt_dtype dtype, int64_t i) {
  switch (dtype) {
  case MT_float32: return ((const float *)buf)[i];
  case MT_float64: return ((const double *)buf)[i];
  case MT_float16: return mt_hd_half_to_float(((const uint16_t *)buf)[i]);
  case MT_bfloat16: return mt_hd_bfloat16_to_float(((const uint16_t *)buf)[i]);
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
MT_HD int64_t mt_hd_f64_to_i64(double v) {
  if (v != v) return 0;
  if (v >= 0x1p63) return INT64_MAX;
  if (v < -0x1p63) return INT64_MIN;
  return (int64_t)v;
}

/* Stores v rounded once to dtype (float16 and bfloat16 through float, as
 * torch computes them in float; integers truncate toward zero and wrap to
 * their width, NaN gives 0; bool is v != 0). */
MT_HD void mt_hd_set_f64(void *buf, mt_dtype dtype, int64_t i, double v) {
  switch (dtype) {
  case MT_float32: ((float *)buf)[i] = (float)v; break;
  case MT_float64: ((double *)buf)[i] = v; break;
  case MT_float16: ((uint16_t *)buf)[i] = mt_hd_float_to_half((float)v); break;
  case MT_bfloat16: ((uint16_t *)buf)[i] = mt_hd_float_to_bfloat16((float)v); break;
  case MT_int64: ((int64_t *)buf)[i] = mt_hd_f64_to_i64(v); break;
  case MT_int32: ((int32_t *)buf)[i] = (int32_t)(uint32_t)(uint64_t)mt_hd_f64_to_i64(v); break;
  case MT_int8: ((int8_t *)buf)[i] = (int8_t)(uint8_t)(uint64_t)mt_hd_f64_to_i64(v); break;
  case MT_uint8: ((uint8_t *)buf)[i] = (uint8_t)(uint64_t)mt_hd_f64_to_i64(v); break;
  case MT_bool: ((uint8_t *)buf)[i] = v != 0; break;
  default: break;
  }
}

/* Exact integer access for the integer dtypes and bool (0/1). */
MT_HD int64_t mt_hd_ldi(const void *buf, mt_dtype d, int64_t i) {
  switch (d) {
  case MT_int64: return ((const int64_t *)buf)[i];
  case MT_int32: return ((const int32_t *)buf)[i];
  case MT_int8: return ((const int8_t *)buf)[i];
  case MT_uint8: return ((const uint8_t *)buf)[i];
  case MT_bool: return ((const uint8_t *)buf)[i] != 0;
  default: return mt_hd_f64_to_i64(mt_hd_get_f64(buf, d, i));
  }
}

/* Stores v wrapped to d's width (two's complement, as torch's integer ops). */
MT_HD void mt_hd_sti(void *buf, mt_dtype d, int64_t i, int64_t v) {
  switch (d) {
  case MT_int64: ((int64_t *)buf)[i] = v; break;
  case MT_int32: ((int32_t *)buf)[i] = (int32_t)(uint32_t)(uint64_t)v; break;
  case MT_int8: ((int8_t *)buf)[i] = (int8_t)(uint8_t)(uint64_t)v; break;
  case MT_uint8: ((uint8_t *)buf)[i] = (uint8_t)(uint64_t)v; break;
  case MT_bool: ((uint8_t *)buf)[i] = v != 0; break;
  default: mt_hd_set_f64(buf, d, i, (double)v); break;
  }
}

/* v rounded to dtype d and read back (the "cast to the tensor dtype first"
 * of scalar operands): exact for the integer dtypes' wrap, once-rounded for
 * the floats. */
/* One element of any dtype, 8-byte aligned, for a value stored in one dtype
 * and read back in the same (a local char array is not aligned: an int64 or
 * double stored into one can fault on a device; an int64_t declared and
 * read as float breaks type-based aliasing). */
typedef union {
  double f64;
  int64_t i64;
  unsigned char b[8];
} mt_hd_slot;

MT_HD double mt_hd_round(mt_dtype d, double v) {
  if (d == MT_float64) return v;
  if (d == MT_float32) return (double)(float)v;
  mt_hd_slot tmp;
  mt_hd_set_f64(&tmp, d, 0, v);
  return mt_hd_get_f64(&tmp, d, 0);
}

MT_HD int mt_hd_is_float(mt_dtype d) {
  return d == MT_float32 || d == MT_float64 || d == MT_float16 || d == MT_bfloat16;
}

#endif /* MT_HD_H */

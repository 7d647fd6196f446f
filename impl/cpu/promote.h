/* promote.h - torch's type promotion over mtcs's dtypes (internal): the
 * binary family's result_type (BIN-2) and masked.logaddexp's operands
 * (MFN-6) promote the same way, so the rules live here once.
 *
 * Dtypes are ints so that two values outside mt_dtype fit: MT__DT_NONE (no
 * operand yet, c10's Undefined) and MT__DT_INT16 (int8 with uint8: a dtype
 * torch has and mtcs does not). */
#ifndef MT_CPU_PROMOTE_H
#define MT_CPU_PROMOTE_H

#include "cpu.h"

#define MT__DT_NONE ((int)-1)
#define MT__DT_INT16 ((int)-2)

/* 0 bool, 1 integer, 2 floating (c10's category) */
static inline int mt__pr_category(int d) {
  if (d == MT_bool) return 0;
  if (mt_dtype_is_float((mt_dtype)d)) return 2;
  return 1;
}
static inline int mt__pr_fwidth(int d) {
  return d == MT_float16 || d == MT_bfloat16 ? 0 : d == MT_float32 ? 1 : 2;
}
static inline int mt__pr_iwidth(int d) {
  return d == MT_int8 || d == MT_uint8 ? 1 : d == MT_int32 ? 4 : 8;
}

/* torch.promote_types over mtcs's dtypes (int8 with uint8 is int16). */
static inline int mt__pr_promote(int a, int b) {
  if (a == MT__DT_NONE) return b;
  if (b == MT__DT_NONE || a == b) return a;
  if (a == MT__DT_INT16 || b == MT__DT_INT16) return MT__DT_INT16;
  int ca = mt__pr_category(a), cb = mt__pr_category(b);
  if (ca != cb) return ca > cb ? a : b;
  /* float16 with bfloat16: neither holds the other, torch gives float32 */
  if (ca == 2 && mt__pr_fwidth(a) == 0 && mt__pr_fwidth(b) == 0) return MT_float32;
  if (ca == 2) return mt__pr_fwidth(a) >= mt__pr_fwidth(b) ? a : b;
  /* integers: uint8 with a signed type needs room for both */
  if (a == MT_uint8 || b == MT_uint8) {
    int s = a == MT_uint8 ? b : a;
    return s == MT_int8 ? MT__DT_INT16 : s;
  }
  return mt__pr_iwidth(a) >= mt__pr_iwidth(b) ? a : b;
}

/* c10's combine_categories(higher, lower). */
static inline int mt__pr_combine(int higher, int lower) {
  if (higher == MT__DT_NONE) return lower;
  if (mt__pr_category(higher) == 2) return higher;
  if (higher == MT_bool || (lower != MT__DT_NONE && mt__pr_category(lower) == 2))
    return mt__pr_promote(higher, lower);
  return higher;
}

/* torch.result_type of n plain tensors: those with dims first, 0-d ones
 * only where they are of a higher category (MT__DT_INT16 possible). */
static inline int mt__pr_result_type(const mt_tensor *const *t, int n) {
  int dims = MT__DT_NONE, zero = MT__DT_NONE;
  for (int k = 0; k < n; k++) {
    if (t[k]->ndim == 0)
      zero = mt__pr_promote(zero, (int)t[k]->dtype);
    else
      dims = mt__pr_promote(dims, (int)t[k]->dtype);
  }
  return mt__pr_combine(dims, zero);
}

#endif /* MT_CPU_PROMOTE_H */

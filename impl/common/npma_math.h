/* npma_math.h - what every numpy_ma family's per-element math shares
 * (common/npma_<family>_math.h; the CPU's impl/cpu/npma_util.h too): MT_HD,
 * so the CUDA backend's kernels and the CPU reference run the same. */
#ifndef MT_NPMA_MATH_H
#define MT_NPMA_MATH_H

#include "common/mt_hd.h"

/* v rounded to the precision numpy computes dtype d in: float16 and float32
 * in float32 (numpy's float16 loops compute in float), the rest in double */
MT_HD double mt_np_calc(mt_dtype d, double v) {
  return (d == MT_float16 || d == MT_float32) ? (double)(float)v : v;
}

/* numpy.ma's default fill_value for a dtype (np.ma.default_fill_value):
 * 1e20 for floats (float16: inf), 999999 for integers (wrapped to the
 * width: 63 for int8 and uint8), True for bool. */
MT_HD void mt_np_store_fill_value(void *buf, mt_dtype d, int64_t i) {
  if (d == MT_bool)
    mt_hd_sti(buf, d, i, 1);
  else if (mt_hd_is_float(d))
    mt_hd_set_f64(buf, d, i, 1e20);
  else
    mt_hd_sti(buf, d, i, 999999);
}

/* NPMA-16 broadcasting: the element of an operand that element i of the
 * broadcast shape bshape (bndim dims) reads, sum(coord_k * bstride[k]); a
 * number is its one element, an operand of the broadcast shape element i. */
MT_HD int64_t mt_np_bcast_idx(int is_number, int bcast, int bndim, const int64_t *bshape,
                              const int64_t *bstride, int64_t i) {
  if (is_number) return 0;
  if (!bcast) return i;
  int64_t src = 0;
  for (int k = bndim - 1; k >= 0; k--) {
    src += (i % bshape[k]) * bstride[k];
    i /= bshape[k];
  }
  return src;
}

#endif /* MT_NPMA_MATH_H */

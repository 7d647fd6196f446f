/* sparse_convert_math.h - the sparse_convert family's per-element math
 * (impl/cpu/sparse_convert.c's host plan; impl/cpu/exec.c and
 * impl/cuda/sparse_convert.cu run it). A conversion's values are copies
 * (the exec's gather); the one thing computed from them is which cells of
 * a dense input are stored (SPC-1): a cell of `run` elements is stored
 * when one of them is nonzero (NaN is nonzero, -0.0 is zero). */
#ifndef MT_SPARSE_CONVERT_MATH_H
#define MT_SPARSE_CONVERT_MATH_H

#include "common/mt_hd.h"

/* 1 when one of the run elements c * run .. c * run + run - 1 of x is nonzero */
MT_HD uint8_t mt_spc_nonzero(mt_dtype dt, const void *x, int64_t run, int64_t c) {
  for (int64_t j = 0; j < run; j++) {
    int64_t i = c * run + j;
    if (!mt_hd_is_float(dt)) {
      if (mt_hd_ldi(x, dt, i) != 0) return 1;
    } else {
      double v = mt_hd_get_f64(x, dt, i);
      if (v != 0.0 || v != v) return 1;
    }
  }
  return 0;
}

/* y[i] = element from of x converted from dtype in to out, as torch's
 * copy_ converts: integers and bool exactly (wrapping to the width), floats
 * rounded once, float -> integer truncated toward zero, anything -> bool
 * is != 0 */
MT_HD void mt_spc_convert(mt_dtype in, const void *x, int64_t from, mt_dtype out, void *y,
                          int64_t i) {
  if (!mt_hd_is_float(in) && !mt_hd_is_float(out))
    mt_hd_sti(y, out, i, mt_hd_ldi(x, in, from));
  else
    mt_hd_set_f64(y, out, i, mt_hd_get_f64(x, in, from));
}

#endif /* MT_SPARSE_CONVERT_MATH_H */

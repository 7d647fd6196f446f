/* access.c - element access in any dtype, as double; IEEE binary16 and
 * bfloat16 conversions. The conversions are common/mt_hd.h's, which the
 * CUDA kernels use too. */
#include <math.h>
#include <string.h>

#include "common/mt_hd.h"
#include "mt_core.h"

float mt_half_to_float(uint16_t h) { return mt_hd_half_to_float(h); }
uint16_t mt_float_to_half(float f) { return mt_hd_float_to_half(f); }
float mt_bfloat16_to_float(uint16_t b) { return mt_hd_bfloat16_to_float(b); }
uint16_t mt_float_to_bfloat16(float f) { return mt_hd_float_to_bfloat16(f); }
double mt_get_f64(const void *buf, mt_dtype dtype, int64_t i) { return mt_hd_get_f64(buf, dtype, i); }
void mt_set_f64(void *buf, mt_dtype dtype, int64_t i, double v) { mt_hd_set_f64(buf, dtype, i, v); }
int64_t mt_get_i64(const void *buf, mt_dtype dtype, int64_t i) { return mt_hd_ldi(buf, dtype, i); }

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

/* h5util.c - HDF5 pieces shared by the golden reader and writer: error
 * text, quiet mode, and the memory types of mtcs dtypes. */
#include "h5util.h"

#include <stdio.h>
#include <string.h>

void mt__h5_quiet(void) { H5Eset_auto2(H5E_DEFAULT, NULL, NULL); }

typedef struct h5_text {
  char *buf;
  size_t len;
} h5_text;

static herr_t h5_walk_cb(unsigned n, const H5E_error2_t *e, void *data) {
  h5_text *t = data;
  if (n == 0 && e && e->desc) snprintf(t->buf, t->len, "%s", e->desc);
  return 0;
}

/* The most specific message on HDF5's error stack (then cleared). */
void mt__h5_error_text(char *buf, size_t len) {
  h5_text t = {buf, len};
  buf[0] = 0;
  H5Ewalk2(H5E_DEFAULT, H5E_WALK_UPWARD, h5_walk_cb, &t);
  H5Eclear2(H5E_DEFAULT);
}

/* IEEE binary16 in native byte order. */
hid_t mt__h5_half_type(void) {
  hid_t t = H5Tcopy(H5T_NATIVE_FLOAT);
  if (t < 0) return -1;
  if (H5Tset_fields(t, 15, 10, 5, 0, 10) < 0 || H5Tset_size(t, 2) < 0 || H5Tset_ebias(t, 15) < 0) {
    H5Tclose(t);
    return -1;
  }
  return t;
}

/* Enum bool with uint8 storage, as h5py writes numpy bools. */
hid_t mt__h5_enum_bool_type(void) {
  hid_t t = H5Tenum_create(H5T_NATIVE_UINT8);
  uint8_t f = 0, tr = 1;
  if (t < 0) return -1;
  if (H5Tenum_insert(t, "FALSE", &f) < 0 || H5Tenum_insert(t, "TRUE", &tr) < 0) {
    H5Tclose(t);
    return -1;
  }
  return t;
}

/* The memory type for dtype (a copy: close it). bfloat16 has no HDF5 type:
 * its datasets hold float32 and are read and written through a float
 * buffer (mt__h5_bf16_*), so its memory type is float32's. */
hid_t mt__h5_mem_type(mt_dtype dt) {
  switch (dt) {
    case MT_bfloat16:
    case MT_float32: return H5Tcopy(H5T_NATIVE_FLOAT);
    case MT_float64: return H5Tcopy(H5T_NATIVE_DOUBLE);
    case MT_float16: return mt__h5_half_type();
    case MT_int64: return H5Tcopy(H5T_NATIVE_INT64);
    case MT_int32: return H5Tcopy(H5T_NATIVE_INT32);
    case MT_int8: return H5Tcopy(H5T_NATIVE_INT8);
    case MT_uint8: return H5Tcopy(H5T_NATIVE_UINT8);
    case MT_bool: return H5Tcopy(H5T_NATIVE_UINT8);
    default: return -1;
  }
}


void mt__h5_bf16_widen(const uint16_t *b, float *f, int64_t n) {
  for (int64_t i = 0; i < n; i++) f[i] = mt_bfloat16_to_float(b[i]);
}

int64_t mt__h5_bf16_narrow(const double *v, uint16_t *b, int64_t n) {
  for (int64_t i = 0; i < n; i++) {
    float f = (float)v[i];
    uint32_t x;
    memcpy(&x, &f, sizeof x);
    if (v[i] != v[i]) { /* NaN: the quiet bfloat16 NaN of its sign */
      b[i] = (uint16_t)(((x >> 16) & 0x8000u) | 0x7fc0u);
      continue;
    }
    if ((double)f != v[i] || (x & 0xffffu)) return i;
    b[i] = (uint16_t)(x >> 16);
  }
  return -1;
}

/* h5util.h - internal HDF5 helpers of the golden reader (golden_io.c) and
 * writer (golden_write.c). */
#ifndef MT_H5UTIL_H
#define MT_H5UTIL_H
#include <stddef.h>

#include <hdf5.h>

#include "mt_core.h"

/* Turns off HDF5's own printing of its error stack (we report it). */
void mt__h5_quiet(void);
/* The most specific message on HDF5's error stack (then cleared); "" if none. */
void mt__h5_error_text(char *buf, size_t len);
/* IEEE binary16 in native byte order (close it). */
hid_t mt__h5_half_type(void);
/* Enum bool with uint8 storage, as h5py writes numpy bools (close it). */
hid_t mt__h5_enum_bool_type(void);
/* The memory type of an mtcs dtype (a copy: close it); -1 if unknown.
 * bfloat16 gives float32: its datasets are float32 (golden-format.md). */
hid_t mt__h5_mem_type(mt_dtype dt);
/* bfloat16 bits -> float32 values (exact), for writing a bfloat16 dataset. */
void mt__h5_bf16_widen(const uint16_t *b, float *f, int64_t n);
/* Values read from a bfloat16 dataset (as double, whatever its float type)
 * -> bfloat16 bits; returns the index of the first value that is not
 * exactly a bfloat16 (not a float32, or a float32 whose low 16 bits are not
 * zero), or -1. NaN is the quiet bfloat16 NaN of its sign. */
int64_t mt__h5_bf16_narrow(const double *v, uint16_t *b, int64_t n);

#endif

/* golden_io.c - reading HDF5 golden files (format version 1) into mt_tensor
 * views with every size and type checked (writing: golden_write.c). See
 * golden_io.h. Nothing read from a file is trusted: element counts are
 * checked against shapes before anything is allocated, products are
 * overflow-checked, integer conversions that would clip abort the read. */
#include "golden_io.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <hdf5.h>

#include "h5util.h"
#include "mt/kwargs.h"

#define MAX_STRING_ATTR ((size_t)1 << 20)

/* ---- error reporting ----------------------------------------------------------- */

/* Where we are, for messages: "<file>: case <id>: <path>: <what>". */
typedef struct rd {
  const char *file;
  const char *case_id; /* NULL outside a case */
  mt_error *err;
} rd;

static mt_status rd_vfail(const rd *r, const char *path, mt_status s, int with_h5, const char *fmt,
                          va_list ap) {
  char msg[MT_MSG_LEN], h5[200] = "";
  vsnprintf(msg, sizeof msg, fmt, ap);
  if (with_h5) mt__h5_error_text(h5, sizeof h5);
  const char *sep = h5[0] ? " (HDF5: " : "", *end = h5[0] ? ")" : "";
  int have_path = path && path[0];
  if (r->case_id)
    return mt_err(r->err, s, "%s: case %s: %s%s%s%s%s%s", r->file, r->case_id,
                  have_path ? path : "", have_path ? ": " : "", msg, sep, h5, end);
  return mt_err(r->err, s, "%s: %s%s%s%s%s%s", r->file, have_path ? path : "",
                have_path ? ": " : "", msg, sep, h5, end);
}

/* A format problem (INVALID_FORMAT). */
static mt_status rd_fail(const rd *r, const char *path, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static mt_status rd_fail(const rd *r, const char *path, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  mt_status s = rd_vfail(r, path, MT_INVALID_FORMAT, 0, fmt, ap);
  va_end(ap);
  return s;
}

/* An HDF5 call failed: adds HDF5's own message. */
static mt_status rd_h5fail(const rd *r, const char *path, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static mt_status rd_h5fail(const rd *r, const char *path, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  mt_status s = rd_vfail(r, path, MT_INVALID_FORMAT, 1, fmt, ap);
  va_end(ap);
  return s;
}

/* Prefixes an error from the core (allocation, validation) with the place. */
static mt_status rd_prefix(const rd *r, const char *path) {
  if (r->case_id)
    return mt_err_prefix(r->err, "%s: case %s: %s", r->file, r->case_id, path);
  return mt_err_prefix(r->err, "%s: %s", r->file, path);
}

static char *xstrdup(const char *s) {
  if (!s) return NULL;
  size_t n = strlen(s) + 1;
  char *p = malloc(n);
  if (p) memcpy(p, s, n);
  return p;
}

static mt_status rd_oom(const rd *r, const char *path) {
  mt_err(r->err, MT_OUT_OF_MEMORY, NULL);
  return rd_prefix(r, path);
}

static void join_path(char *out, size_t len, const char *a, const char *b) {
  if (a && a[0])
    snprintf(out, len, "%s/%s", a, b);
  else
    snprintf(out, len, "%s", b);
}

static const char *class_name(H5T_class_t c) {
  switch (c) {
    case H5T_INTEGER: return "an integer";
    case H5T_FLOAT: return "a float";
    case H5T_STRING: return "a string";
    case H5T_ENUM: return "an enum";
    case H5T_COMPOUND: return "a compound";
    case H5T_ARRAY: return "an array";
    case H5T_VLEN: return "a variable-length sequence";
    default: return "an unsupported type";
  }
}

/* ---- attributes ------------------------------------------------------------------- */

typedef struct attr_h {
  hid_t a, t, s;
} attr_h;

static void attr_close(attr_h *h) {
  if (h->s >= 0) H5Sclose(h->s);
  if (h->t >= 0) H5Tclose(h->t);
  if (h->a >= 0) H5Aclose(h->a);
  h->a = h->t = h->s = -1;
}

/* 1 = opened, 0 = absent (an error when required), <0 = failed (err set). */
static int attr_open(const rd *r, hid_t obj, const char *path, const char *name, int required,
                     attr_h *h) {
  h->a = h->t = h->s = -1;
  htri_t ex = H5Aexists(obj, name);
  if (ex < 0) {
    rd_h5fail(r, path, "cannot look up attribute '%s'", name);
    return -1;
  }
  if (ex == 0) {
    if (!required) return 0;
    rd_fail(r, path, "missing attribute '%s'", name);
    return -1;
  }
  if ((h->a = H5Aopen(obj, name, H5P_DEFAULT)) < 0 || (h->t = H5Aget_type(h->a)) < 0 ||
      (h->s = H5Aget_space(h->a)) < 0) {
    rd_h5fail(r, path, "cannot open attribute '%s'", name);
    attr_close(h);
    return -1;
  }
  return 1;
}

/* Elements of a dataspace; a null dataspace has none. */
static hssize_t space_npoints(hid_t s) {
  if (H5Sget_simple_extent_type(s) == H5S_NULL) return 0;
  return H5Sget_simple_extent_npoints(s);
}

/* A string attribute (variable- or fixed-length, any padding and cset).
 * *out = NULL when absent and not required. */
static mt_status attr_string(const rd *r, hid_t obj, const char *path, const char *name,
                             int required, char **out) {
  mt_status st = MT_OK;
  attr_h h;
  hid_t mem = -1;
  char *buf = NULL;
  *out = NULL;
  int o = attr_open(r, obj, path, name, required, &h);
  if (o <= 0) return o < 0 ? r->err->status : MT_OK;
  if (H5Tget_class(h.t) != H5T_STRING) {
    st = rd_fail(r, path, "attribute '%s' is %s, expected a string", name,
                 class_name(H5Tget_class(h.t)));
    goto out;
  }
  if (space_npoints(h.s) != 1) {
    st = rd_fail(r, path, "attribute '%s' holds %lld strings, expected one", name,
                 (long long)space_npoints(h.s));
    goto out;
  }
  if ((mem = H5Tcopy(H5T_C_S1)) < 0 || H5Tset_cset(mem, H5Tget_cset(h.t)) < 0) {
    st = rd_h5fail(r, path, "attribute '%s': cannot make a string type", name);
    goto out;
  }
  if (H5Tis_variable_str(h.t) > 0) {
    char *p = NULL;
    if (H5Tset_size(mem, H5T_VARIABLE) < 0 || H5Aread(h.a, mem, &p) < 0) {
      st = rd_h5fail(r, path, "cannot read attribute '%s'", name);
      goto out;
    }
    *out = xstrdup(p ? p : "");
    if (p) H5free_memory(p);
  } else {
    size_t size = H5Tget_size(h.t);
    if (size == 0 || size > MAX_STRING_ATTR) {
      st = rd_fail(r, path, "attribute '%s' is a string of %zu bytes", name, size);
      goto out;
    }
    /* One byte more, null-terminated: HDF5 strips the file's padding. */
    if (!(buf = calloc(1, size + 1))) {
      st = rd_oom(r, path);
      goto out;
    }
    if (H5Tset_size(mem, size + 1) < 0 || H5Tset_strpad(mem, H5T_STR_NULLTERM) < 0 ||
        H5Aread(h.a, mem, buf) < 0) {
      st = rd_h5fail(r, path, "cannot read attribute '%s'", name);
      goto out;
    }
    buf[size] = 0;
    *out = xstrdup(buf);
  }
  if (!*out) st = rd_oom(r, path);
out:
  free(buf);
  if (mem >= 0) H5Tclose(mem);
  attr_close(&h);
  return st;
}

/* An enum element that is a bool (h5py: FALSE=0, TRUE=1): 0/1, or -1. */
static int enum_bool_value(hid_t t, const void *raw) {
  char nm[16] = "";
  if (H5Tenum_nameof(t, raw, nm, sizeof nm) < 0) {
    H5Eclear2(H5E_DEFAULT);
    return -1;
  }
  if (strcmp(nm, "TRUE") == 0 || strcmp(nm, "true") == 0 || strcmp(nm, "True") == 0) return 1;
  if (strcmp(nm, "FALSE") == 0 || strcmp(nm, "false") == 0 || strcmp(nm, "False") == 0) return 0;
  return -1;
}

typedef enum { AV_INT, AV_BOOL_ENUM } attr_int_kind;

/* A scalar integer or bool attribute (any integer width, or h5py's enum
 * bool). *present = 0 when absent and not required. */
static mt_status attr_int(const rd *r, hid_t obj, const char *path, const char *name,
                          int required, int64_t *out, int *present, attr_int_kind *kind) {
  mt_status st = MT_OK;
  attr_h h;
  *present = 0;
  int o = attr_open(r, obj, path, name, required, &h);
  if (o <= 0) return o < 0 ? r->err->status : MT_OK;
  if (space_npoints(h.s) != 1) {
    st = rd_fail(r, path, "attribute '%s' holds %lld values, expected one", name,
                 (long long)space_npoints(h.s));
    goto out;
  }
  H5T_class_t c = H5Tget_class(h.t);
  if (c == H5T_INTEGER) {
    int64_t v = 0;
    if (H5Aread(h.a, H5T_NATIVE_INT64, &v) < 0) {
      st = rd_h5fail(r, path, "cannot read attribute '%s'", name);
      goto out;
    }
    *out = v;
    if (kind) *kind = AV_INT;
  } else if (c == H5T_ENUM) {
    unsigned char raw[16] = {0};
    if (H5Tget_size(h.t) > sizeof raw || H5Aread(h.a, h.t, raw) < 0) {
      st = rd_h5fail(r, path, "cannot read enum attribute '%s'", name);
      goto out;
    }
    int b = enum_bool_value(h.t, raw);
    if (b < 0) {
      st = rd_fail(r, path, "attribute '%s' is an enum that is not a bool (FALSE/TRUE)", name);
      goto out;
    }
    *out = b;
    if (kind) *kind = AV_BOOL_ENUM;
  } else {
    st = rd_fail(r, path, "attribute '%s' is %s, expected an integer or a bool", name,
                 class_name(c));
    goto out;
  }
  *present = 1;
out:
  attr_close(&h);
  return st;
}

static mt_status attr_bool(const rd *r, hid_t obj, const char *path, const char *name, int dflt,
                           int *out) {
  int64_t v = dflt;
  int present = 0;
  mt_status st = attr_int(r, obj, path, name, 0, &v, &present, NULL);
  if (st != MT_OK) return st;
  if (present && v != 0 && v != 1)
    return rd_fail(r, path, "attribute '%s' = %" PRId64 ", expected a bool (0 or 1)", name, v);
  *out = present ? (int)v : dflt;
  return MT_OK;
}

/* An integer array attribute of at most max elements. A null dataspace or a
 * zero-size simple one is empty; a scalar is one element. */
static mt_status attr_ints(const rd *r, hid_t obj, const char *path, const char *name,
                           int required, int max, int64_t *out, int *n, int *present) {
  mt_status st = MT_OK;
  attr_h h;
  *n = 0;
  *present = 0;
  int o = attr_open(r, obj, path, name, required, &h);
  if (o <= 0) return o < 0 ? r->err->status : MT_OK;
  H5T_class_t c = H5Tget_class(h.t);
  if (c != H5T_INTEGER) {
    st = rd_fail(r, path, "attribute '%s' is %s, expected integers", name, class_name(c));
    goto out;
  }
  H5S_class_t sc = H5Sget_simple_extent_type(h.s);
  if (sc == H5S_SIMPLE && H5Sget_simple_extent_ndims(h.s) > 1) {
    st = rd_fail(r, path, "attribute '%s' has %d dimensions, expected a 1-d array", name,
                 H5Sget_simple_extent_ndims(h.s));
    goto out;
  }
  hssize_t np = space_npoints(h.s);
  if (np < 0 || np > max) {
    st = rd_fail(r, path, "attribute '%s' has %lld elements, at most %d allowed", name,
                 (long long)np, max);
    goto out;
  }
  if (np > 0 && H5Aread(h.a, H5T_NATIVE_INT64, out) < 0) {
    st = rd_h5fail(r, path, "cannot read attribute '%s'", name);
    goto out;
  }
  *n = (int)np;
  *present = 1;
out:
  attr_close(&h);
  return st;
}

/* Names of the attributes of obj, in name order. */
typedef struct name_list {
  int n, cap;
  char **v;
} name_list;

static void names_free(name_list *l) {
  for (int i = 0; i < l->n; i++) free(l->v[i]);
  free(l->v);
  l->n = l->cap = 0;
  l->v = NULL;
}

static int names_push(name_list *l, const char *s) {
  if (l->n == l->cap) {
    int cap = l->cap ? 2 * l->cap : 16;
    char **v = realloc(l->v, (size_t)cap * sizeof *v);
    if (!v) return -1;
    l->v = v;
    l->cap = cap;
  }
  if (!(l->v[l->n] = xstrdup(s))) return -1;
  l->n++;
  return 0;
}

static herr_t attr_name_cb(hid_t loc, const char *name, const H5A_info_t *info, void *data) {
  (void)loc;
  (void)info;
  return names_push(data, name) < 0 ? -1 : 0;
}

static mt_status attr_names(const rd *r, hid_t obj, const char *path, name_list *out) {
  hsize_t idx = 0;
  if (H5Aiterate2(obj, H5_INDEX_NAME, H5_ITER_INC, &idx, attr_name_cb, out) < 0) {
    names_free(out);
    return rd_h5fail(r, path, "cannot list attributes");
  }
  return MT_OK;
}

/* Names of the links of group g, in name order: one H5Literate pass
 * (H5Lget_name_by_idx per index rebuilds the sorted name table each call:
 * quadratic in the group's size). */
static herr_t link_name_cb(hid_t g, const char *name, const H5L_info_t *info, void *data) {
  (void)g;
  (void)info;
  return names_push(data, name) < 0 ? -1 : 0;
}

static mt_status link_names(const rd *r, hid_t g, const char *path, name_list *out) {
  hsize_t idx = 0;
  if (H5Literate(g, H5_INDEX_NAME, H5_ITER_INC, &idx, link_name_cb, out) < 0) {
    names_free(out);
    return rd_h5fail(r, path, "cannot list the group");
  }
  return MT_OK;
}

/* ---- objects ----------------------------------------------------------------------- */

/* Opens member `name` of g, which must be a group (want H5I_GROUP) or a
 * dataset (H5I_DATASET). 1 = opened, 0 = absent (error when required),
 * <0 = failed. */
static int obj_open(const rd *r, hid_t g, const char *path, const char *name, H5I_type_t want,
                    int required, hid_t *out) {
  char full[256];
  join_path(full, sizeof full, path, name);
  *out = -1;
  htri_t ex = H5Lexists(g, name, H5P_DEFAULT);
  if (ex < 0) {
    rd_h5fail(r, full, "cannot look up");
    return -1;
  }
  if (ex == 0) {
    if (!required) return 0;
    rd_fail(r, full, "missing %s", want == H5I_GROUP ? "group" : "dataset");
    return -1;
  }
  hid_t o = H5Oopen(g, name, H5P_DEFAULT);
  if (o < 0) {
    rd_h5fail(r, full, "cannot open");
    return -1;
  }
  if (H5Iget_type(o) != want) {
    H5Oclose(o);
    rd_fail(r, full, "is not a %s", want == H5I_GROUP ? "group" : "dataset");
    return -1;
  }
  *out = o;
  return 1;
}

/* ---- datasets --------------------------------------------------------------------- */

/* Abort conversions that would clip a value (out of range for the dtype). */
static H5T_conv_ret_t conv_cb(H5T_conv_except_t except, hid_t src, hid_t dst, void *src_buf,
                              void *dst_buf, void *data) {
  (void)src, (void)dst, (void)src_buf, (void)dst_buf, (void)data;
  if (except == H5T_CONV_EXCEPT_RANGE_HI || except == H5T_CONV_EXCEPT_RANGE_LOW)
    return H5T_CONV_ABORT;
  return H5T_CONV_UNHANDLED;
}

typedef struct ds_h {
  hid_t d, t, s;
  int rank;
  hsize_t dims[H5S_MAX_RANK];
  int64_t npoints;
  char path[256];
} ds_h;

static void ds_close(ds_h *h) {
  if (h->s >= 0) H5Sclose(h->s);
  if (h->t >= 0) H5Tclose(h->t);
  if (h->d >= 0) H5Dclose(h->d);
  h->d = h->t = h->s = -1;
}

/* Opens dataset `name` of g and reads its shape; dtype's type class is
 * checked (floats for float dtypes, integers for integer dtypes, integers
 * or an enum bool for bool). */
static mt_status ds_open(const rd *r, hid_t g, const char *gpath, const char *name, mt_dtype dt,
                         ds_h *h) {
  h->d = h->t = h->s = -1;
  join_path(h->path, sizeof h->path, gpath, name);
  int o = obj_open(r, g, gpath, name, H5I_DATASET, 1, &h->d);
  if (o <= 0) return r->err->status;
  if ((h->t = H5Dget_type(h->d)) < 0 || (h->s = H5Dget_space(h->d)) < 0) {
    mt_status st = rd_h5fail(r, h->path, "cannot read the type and dataspace");
    ds_close(h);
    return st;
  }
  H5T_class_t c = H5Tget_class(h->t);
  int ok = mt_dtype_is_float(dt) ? c == H5T_FLOAT
           : dt == MT_bool      ? (c == H5T_INTEGER || c == H5T_ENUM)
                                : c == H5T_INTEGER;
  if (!ok) {
    mt_status st = rd_fail(r, h->path, "dataset is %s, which cannot hold dtype %s",
                           class_name(c), mt_dtype_name(dt));
    ds_close(h);
    return st;
  }
  H5S_class_t sc = H5Sget_simple_extent_type(h->s);
  h->rank = sc == H5S_SIMPLE ? H5Sget_simple_extent_ndims(h->s) : 0;
  if (h->rank < 0 || h->rank > H5S_MAX_RANK ||
      (h->rank > 0 && H5Sget_simple_extent_dims(h->s, h->dims, NULL) < 0)) {
    mt_status st = rd_h5fail(r, h->path, "cannot read the dataspace");
    ds_close(h);
    return st;
  }
  hssize_t np = space_npoints(h->s);
  if (np < 0) {
    mt_status st = rd_h5fail(r, h->path, "cannot count the elements");
    ds_close(h);
    return st;
  }
  h->npoints = (int64_t)np;
  return MT_OK;
}

/* Reads all of h into buf (npoints elements of dt); bools must be 0/1;
 * bfloat16 values must be exact (float32 with 16 zero low bits). */
static mt_status ds_read(const rd *r, ds_h *h, mt_dtype dt, void *buf) {
  mt_status st = MT_OK;
  hid_t mem = -1, dxpl = -1;
  double *wide = NULL;
  if (h->npoints == 0) return MT_OK;
  int is_enum = H5Tget_class(h->t) == H5T_ENUM;
  if (is_enum) {
    if (H5Tget_size(h->t) > 8) {
      st = rd_fail(r, h->path, "enum of %zu bytes is not a bool", H5Tget_size(h->t));
      goto out;
    }
    mem = mt__h5_enum_bool_type();
  } else {
    /* bfloat16 is stored widened (float32): read as double, so a value of
     * any float dataset is checked as it is, never rounded by HDF5 first */
    mem = dt == MT_bfloat16 ? H5Tcopy(H5T_NATIVE_DOUBLE) : mt__h5_mem_type(dt);
  }
  if (mem < 0 || (dxpl = H5Pcreate(H5P_DATASET_XFER)) < 0 ||
      H5Pset_type_conv_cb(dxpl, conv_cb, NULL) < 0) {
    st = rd_h5fail(r, h->path, "cannot set up reading %s", mt_dtype_name(dt));
    goto out;
  }
  if (dt == MT_bfloat16 && !(wide = malloc((size_t)h->npoints * sizeof *wide))) {
    st = rd_fail(r, h->path, "cannot allocate %" PRId64 " doubles", h->npoints);
    goto out;
  }
  if (H5Dread(h->d, mem, H5S_ALL, H5S_ALL, dxpl, wide ? (void *)wide : buf) < 0) {
    st = rd_h5fail(r, h->path, "cannot read %" PRId64 " elements as %s%s", h->npoints,
                   mt_dtype_name(dt), is_enum ? " (an enum that is not FALSE/TRUE?)" : "");
    goto out;
  }
  if (wide) {
    int64_t bad = mt__h5_bf16_narrow(wide, buf, h->npoints);
    if (bad >= 0) {
      st = rd_fail(r, h->path,
                   "element %" PRId64 " = %.17g is not a bfloat16: a bfloat16 dataset holds "
                   "float32 values whose low 16 bits are zero",
                   bad, wide[bad]);
      goto out;
    }
  }
  if (dt == MT_bool) {
    const uint8_t *b = buf;
    for (int64_t i = 0; i < h->npoints; i++)
      if (b[i] > 1) {
        st = rd_fail(r, h->path, "element %" PRId64 " = %u is not a bool (0 or 1)", i, b[i]);
        goto out;
      }
  }
out:
  free(wide);
  if (dxpl >= 0) H5Pclose(dxpl);
  if (mem >= 0) H5Tclose(mem);
  return st;
}

/* ---- tensors ------------------------------------------------------------------------ */

/* Checks a shape from the file and returns its element count; refuses
 * tensors above the size limit before anything is allocated. */
static mt_status check_shape(const rd *r, const char *path, mt_dtype dt, int ndim,
                             const int64_t *shape, int64_t *numel) {
  char s[160];
  int64_t n = 1, nz = 1; /* nz: product of the non-zero dims, so every sub-product fits */
  for (int d = 0; d < ndim; d++) {
    if (shape[d] < 0)
      return rd_fail(r, path, "shape[%d] = %" PRId64 " is negative", d, shape[d]);
    if (__builtin_mul_overflow(nz, shape[d] ? shape[d] : 1, &nz) ||
        nz > MT_GOLDEN_MAX_TENSOR_BYTES)
      return rd_fail(r, path, "shape %s: absurd size (more than %" PRId64 " elements)",
                     mt_shape_str(ndim, shape, s, sizeof s), (int64_t)MT_GOLDEN_MAX_TENSOR_BYTES);
    n *= shape[d];
  }
  int64_t bytes;
  if (__builtin_mul_overflow(n, (int64_t)mt_dtype_size(dt), &bytes) ||
      bytes > MT_GOLDEN_MAX_TENSOR_BYTES)
    return rd_fail(r, path,
                   "shape %s has %" PRId64 " elements of %s, more than the %" PRId64
                   "-byte limit for a golden tensor",
                   mt_shape_str(ndim, shape, s, sizeof s), n, mt_dtype_name(dt),
                   (int64_t)MT_GOLDEN_MAX_TENSOR_BYTES);
  *numel = n;
  return MT_OK;
}

static mt_status count_mismatch(const rd *r, const ds_h *h, int ndim, const int64_t *shape,
                                int64_t need, const char *what) {
  char s[160];
  return rd_fail(r, h->path, "dataset has %" PRId64 " elements, %s %s needs %" PRId64, h->npoints,
                 what, mt_shape_str(ndim, shape, s, sizeof s), need);
}

static mt_status read_tensor(const rd *r, hid_t parent, const char *ppath, const char *name,
                             int depth, mt_tensor **out);

static mt_status read_dense(const rd *r, hid_t g, const char *path, mt_dtype dt, int ndim,
                            const int64_t *shape, mt_tensor **out) {
  mt_status st;
  int64_t numel = 0;
  ds_h v;
  if ((st = check_shape(r, path, dt, ndim, shape, &numel)) != MT_OK) return st;
  if ((st = ds_open(r, g, path, "values", dt, &v)) != MT_OK) return st;
  if (v.npoints != numel) {
    st = count_mismatch(r, &v, ndim, shape, numel, "shape");
    goto out;
  }
  if ((st = mt_dense_new(dt, ndim, shape, out, r->err)) != MT_OK) {
    rd_prefix(r, path);
    goto out;
  }
  st = ds_read(r, &v, dt, (*out)->values);
out:
  ds_close(&v);
  return st;
}

static mt_status read_coo(const rd *r, hid_t g, const char *path, mt_dtype dt, int ndim,
                          const int64_t *shape, mt_tensor **out) {
  mt_status st;
  int64_t numel = 0;
  int coalesced = 0;
  ds_h ix = {.d = -1, .t = -1, .s = -1}, v = {.d = -1, .t = -1, .s = -1};
  char s[160];
  if ((st = check_shape(r, path, dt, ndim, shape, &numel)) != MT_OK) return st;
  if ((st = attr_bool(r, g, path, "coalesced", 0, &coalesced)) != MT_OK) return st;
  if ((st = ds_open(r, g, path, "indices", MT_int64, &ix)) != MT_OK) goto out;
  if (ix.rank != 2) {
    st = rd_fail(r, ix.path, "has %d dimensions, expected 2 ([sparse_dim, nnz])", ix.rank);
    goto out;
  }
  int64_t sd = (int64_t)ix.dims[0], nnz = (int64_t)ix.dims[1];
  if (sd > ndim || (sd == 0 && ndim > 0)) {
    st = rd_fail(r, ix.path, "has %" PRId64 " rows (sparse dims), shape %s has %d dims", sd,
                 mt_shape_str(ndim, shape, s, sizeof s), ndim);
    goto out;
  }
  int64_t row = 1, nvals, idx_bytes;
  /* check_shape bounds every sub-product of shape by 2^30: no overflow here */
  for (int d = (int)sd; d < ndim; d++) row *= shape[d];
  int64_t per_entry = sd * 8 + (int64_t)mt_dtype_size(dt) * row;
  if (__builtin_mul_overflow(nnz, row, &nvals) ||
      __builtin_mul_overflow(nnz, per_entry, &idx_bytes) ||
      idx_bytes > MT_GOLDEN_MAX_TENSOR_BYTES) {
    st = rd_fail(r, ix.path, "nnz %" PRId64 " is more than a golden tensor may hold", nnz);
    goto out;
  }
  if ((st = ds_open(r, g, path, "values", dt, &v)) != MT_OK) goto out;
  if (v.npoints != nvals) {
    st = rd_fail(r, v.path,
                 "dataset has %" PRId64 " elements, nnz %" PRId64 " x %" PRId64
                 " elements per entry needs %" PRId64,
                 v.npoints, nnz, row, nvals);
    goto out;
  }
  if ((st = mt_coo_new(dt, ndim, shape, (int)sd, nnz, out, r->err)) != MT_OK) {
    rd_prefix(r, path);
    goto out;
  }
  if ((st = ds_read(r, &ix, MT_int64, (*out)->indices)) != MT_OK) goto out;
  if ((st = ds_read(r, &v, dt, (*out)->values)) != MT_OK) goto out;
  (*out)->coalesced = coalesced;
out:
  ds_close(&ix);
  ds_close(&v);
  return st;
}

/* csr, csc, bsr, bsc (golden-format.md, version 2): compressed indices
 * [batch..., ncompressed + 1], plain indices [batch..., nnz], values
 * [batch..., nnz, (bh, bw), dense...]; the invariants between them are
 * mt_tensor_validate's (read_tensor runs it). */
static mt_status read_compressed(const rd *r, hid_t g, const char *path, mt_kind kind,
                                 mt_dtype dt, int ndim, const int64_t *shape, mt_tensor **out) {
  mt_status st;
  int64_t numel = 0, dense_dim = 0, bs[2] = {1, 1};
  int present = 0, nbs = 0, blocked = mt_kind_is_blocked(kind);
  const char *cn = mt_compressed_name(kind), *pn = mt_plain_name(kind), *k = mt_kind_name(kind);
  ds_h cr = {.d = -1, .t = -1, .s = -1}, co = cr, v = cr;
  char s[160];
  if ((st = check_shape(r, path, dt, ndim, shape, &numel)) != MT_OK) return st;
  if ((st = attr_int(r, g, path, "dense_dim", 0, &dense_dim, &present, NULL)) != MT_OK) return st;
  if (dense_dim < 0 || ndim - 2 - dense_dim < 0)
    return rd_fail(r, path, "%s tensor with shape %s and dense_dim %" PRId64
                   " has no room for its 2 sparse dims", k, mt_shape_str(ndim, shape, s, sizeof s),
                   dense_dim);
  if (blocked) {
    if ((st = attr_ints(r, g, path, "blocksize", 1, 2, bs, &nbs, &present)) != MT_OK) return st;
    if (nbs != 2) return rd_fail(r, path, "blocksize has %d values, expected 2", nbs);
  }
  int nb = ndim - 2 - (int)dense_dim;
  int64_t batches = 1, dense = 1, rows = shape[nb], cols = shape[nb + 1];
  for (int d = 0; d < nb; d++) batches *= shape[d];
  for (int d = nb + 2; d < ndim; d++) dense *= shape[d];
  if (bs[0] < 1 || bs[1] < 1 || rows % bs[0] || cols % bs[1])
    return rd_fail(r, path, "blocksize (%" PRId64 ", %" PRId64 ") does not divide the sparse "
                   "dims (%" PRId64 ", %" PRId64 ")", bs[0], bs[1], rows, cols);
  int by_col = kind == MT_KIND_CSC || kind == MT_KIND_BSC;
  int64_t ncomp = by_col ? cols / bs[1] : rows / bs[0], nplain = by_col ? rows / bs[0] : cols / bs[1];
  if ((st = ds_open(r, g, path, cn, MT_int64, &cr)) != MT_OK) goto out;
  if (cr.rank != nb + 1 || cr.npoints != batches * (ncomp + 1)) {
    st = rd_fail(r, cr.path, "has %d dims and %" PRId64 " elements; %d batch dims of %" PRId64
                 " compressed slots need %d dims, %" PRId64 " elements", cr.rank, cr.npoints, nb,
                 ncomp, nb + 1, batches * (ncomp + 1));
    goto out;
  }
  if ((st = ds_open(r, g, path, pn, MT_int64, &co)) != MT_OK) goto out;
  if (co.rank != nb + 1) {
    st = rd_fail(r, co.path, "has %d dims, %d batch dims need %d", co.rank, nb, nb + 1);
    goto out;
  }
  int64_t nnz = (int64_t)co.dims[nb], entry = bs[0] * bs[1] * dense, nvals, bytes;
  if (nnz > ncomp * nplain) {
    st = rd_fail(r, co.path, "nnz %" PRId64 " is more than the %" PRId64 " %s of shape %s", nnz,
                 ncomp * nplain, blocked ? "blocks" : "elements",
                 mt_shape_str(ndim, shape, s, sizeof s));
    goto out;
  }
  /* check_shape bounds every sub-product of shape by 2^30, nnz by rows x cols */
  if (__builtin_mul_overflow(batches * nnz, entry, &nvals) ||
      __builtin_mul_overflow(nvals, (int64_t)mt_dtype_size(dt) + 16, &bytes) ||
      bytes > MT_GOLDEN_MAX_TENSOR_BYTES) {
    st = rd_fail(r, co.path, "nnz %" PRId64 " is more than a golden tensor may hold", nnz);
    goto out;
  }
  if ((st = ds_open(r, g, path, "values", dt, &v)) != MT_OK) goto out;
  if (v.npoints != nvals) {
    st = rd_fail(r, v.path, "has %" PRId64 " elements, %" PRId64 " x %" PRId64 " entries of %" PRId64
                 " elements need %" PRId64, v.npoints, batches, nnz, entry, nvals);
    goto out;
  }
  if ((st = mt_compressed_new(kind, dt, ndim, shape, (int)dense_dim, bs, nnz, out, r->err)) !=
      MT_OK) {
    rd_prefix(r, path);
    goto out;
  }
  if ((st = ds_read(r, &cr, MT_int64, (*out)->crow_indices)) != MT_OK) goto out;
  if ((st = ds_read(r, &co, MT_int64, (*out)->col_indices)) != MT_OK) goto out;
  st = ds_read(r, &v, dt, (*out)->values);
out:
  ds_close(&cr);
  ds_close(&co);
  ds_close(&v);
  return st;
}

static mt_status read_masked(const rd *r, hid_t g, const char *path, mt_dtype dt, int ndim,
                             const int64_t *shape, int depth, mt_tensor **out) {
  mt_status st;
  mt_tensor *data = NULL, *mask = NULL;
  char s1[160], s2[160];
  if (depth > 0) return rd_fail(r, path, "a masked tensor inside a masked tensor");
  if ((st = read_tensor(r, g, path, "data", depth + 1, &data)) != MT_OK) goto fail;
  if ((st = read_tensor(r, g, path, "mask", depth + 1, &mask)) != MT_OK) goto fail;
  if (data->kind != MT_KIND_DENSE && data->kind != MT_KIND_COO && data->kind != MT_KIND_CSR) {
    st = rd_fail(r, path, "data is %s, expected dense, coo or csr storage",
                 mt_kind_name(data->kind));
    goto fail;
  }
  if ((data->kind == MT_KIND_CSR && (data->ndim != 2 || data->dense_dim)) ||
      (mask->kind == MT_KIND_CSR && (mask->ndim != 2 || mask->dense_dim))) {
    st = rd_fail(r, path, "csr storage of a masked tensor is 2-d, without batch or dense dims "
                 "(MaskedTensor's)");
    goto fail;
  }
  if (data->dtype != dt) {
    st = rd_fail(r, path, "data has dtype %s, the masked tensor says %s",
                 mt_dtype_name(data->dtype), mt_dtype_name(dt));
    goto fail;
  }
  if (data->ndim != ndim || memcmp(data->shape, shape, (size_t)ndim * sizeof *shape) != 0) {
    st = rd_fail(r, path, "data has shape %s, the masked tensor says %s",
                 mt_shape_str(data->ndim, data->shape, s1, sizeof s1),
                 mt_shape_str(ndim, shape, s2, sizeof s2));
    goto fail;
  }
  if (mask->dtype != MT_bool) {
    st = rd_fail(r, path, "mask has dtype %s, expected bool", mt_dtype_name(mask->dtype));
    goto fail;
  }
  st = mt_masked_new(data, mask, out, r->err); /* takes data and mask */
  if (st != MT_OK) rd_prefix(r, path);
  return st;
fail:
  mt_tensor_free(data);
  mt_tensor_free(mask);
  return st;
}

static mt_status read_scalar(const rd *r, hid_t g, const char *path, mt_dtype dt, int ndim,
                             const int64_t *shape, mt_tensor **out) {
  mt_status st;
  ds_h v;
  char s[160];
  if (ndim != 0)
    return rd_fail(r, path, "scalar with shape %s, expected []",
                   mt_shape_str(ndim, shape, s, sizeof s));
  if ((st = ds_open(r, g, path, "value", dt, &v)) != MT_OK) return st;
  if (v.npoints != 1) {
    st = rd_fail(r, v.path, "has %" PRId64 " elements, a scalar needs 1", v.npoints);
    goto out;
  }
  if ((st = mt_scalar_new(dt, 0.0, out, r->err)) != MT_OK) {
    rd_prefix(r, path);
    goto out;
  }
  st = ds_read(r, &v, dt, (*out)->values);
out:
  ds_close(&v);
  return st;
}

/* The tensor group parent/name; `ppath` names parent in messages. */
static mt_status read_tensor(const rd *r, hid_t parent, const char *ppath, const char *name,
                             int depth, mt_tensor **out) {
  mt_status st = MT_OK;
  hid_t g = -1;
  char path[256], *kind_s = NULL, *dtype_s = NULL;
  int64_t shape[MT_MAX_DIMS] = {0};
  int ndim = 0, present = 0;
  mt_kind kind;
  mt_dtype dt;
  *out = NULL;
  join_path(path, sizeof path, ppath, name);
  if (obj_open(r, parent, ppath, name, H5I_GROUP, 1, &g) <= 0) return r->err->status;
  if ((st = attr_string(r, g, path, "kind", 1, &kind_s)) != MT_OK) goto out;
  if ((st = attr_string(r, g, path, "dtype", 1, &dtype_s)) != MT_OK) goto out;
  if (mt_kind_from_name(kind_s, &kind) != 0) {
    st = rd_fail(r, path, "unknown kind '%s' (expected dense, coo, csr, csc, bsr, bsc, masked or scalar)", kind_s);
    goto out;
  }
  if (mt_dtype_from_name(dtype_s, &dt) != 0) {
    st = rd_fail(r, path,
                 "unknown dtype '%s' (expected float32, float64, float16, int64, int32, int8, "
                 "uint8, bool or bfloat16)",
                 dtype_s);
    goto out;
  }
  if ((st = attr_ints(r, g, path, "shape", 1, MT_MAX_DIMS, shape, &ndim, &present)) != MT_OK)
    goto out;
  switch (kind) {
    case MT_KIND_DENSE: st = read_dense(r, g, path, dt, ndim, shape, out); break;
    case MT_KIND_COO: st = read_coo(r, g, path, dt, ndim, shape, out); break;
    case MT_KIND_CSR:
    case MT_KIND_CSC:
    case MT_KIND_BSR:
    case MT_KIND_BSC: st = read_compressed(r, g, path, kind, dt, ndim, shape, out); break;
    case MT_KIND_MASKED: st = read_masked(r, g, path, dt, ndim, shape, depth, out); break;
    case MT_KIND_SCALAR: st = read_scalar(r, g, path, dt, ndim, shape, out); break;
    default: st = rd_fail(r, path, "unsupported kind '%s'", kind_s); break;
  }
  if (st == MT_OK && depth == 0 && (st = mt_tensor_validate(*out, path, r->err)) != MT_OK) {
    if (r->case_id)
      mt_err_prefix(r->err, "%s: case %s: invalid tensor", r->file, r->case_id);
    else
      mt_err_prefix(r->err, "%s: invalid tensor", r->file);
  }
out:
  if (st != MT_OK) {
    mt_tensor_free(*out);
    *out = NULL;
  }
  free(kind_s);
  free(dtype_s);
  if (g >= 0) H5Oclose(g);
  return st;
}

/* A list group (inputs, outputs, outputs@...): members named 0..n-1. */
static mt_status read_list(const rd *r, hid_t cg, const char *name, int required, int max,
                           int *n_out, mt_tensor ***out) {
  mt_status st = MT_OK;
  hid_t g = -1;
  name_list names = {0};
  mt_tensor **v = NULL;
  int n = 0;
  *n_out = 0;
  *out = NULL;
  int o = obj_open(r, cg, "", name, H5I_GROUP, required, &g);
  if (o <= 0) return o < 0 ? r->err->status : MT_OK;
  if ((st = link_names(r, g, name, &names)) != MT_OK) goto out;
  if (names.n > max) {
    st = rd_fail(r, name, "has %d members, at most %d allowed", names.n, max);
    goto out;
  }
  if (names.n && !(v = calloc((size_t)names.n, sizeof *v))) {
    st = rd_oom(r, name);
    goto out;
  }
  for (n = 0; n < names.n; n++) {
    char k[16];
    snprintf(k, sizeof k, "%d", n);
    htri_t ex = H5Lexists(g, k, H5P_DEFAULT);
    if (ex <= 0) {
      st = rd_fail(r, name, "has %d members but none named '%s' (members are named 0..%d)",
                   names.n, k, names.n - 1);
      goto out;
    }
    if ((st = read_tensor(r, g, name, k, 0, &v[n])) != MT_OK) goto out;
  }
out:
  if (st != MT_OK) {
    for (int k = 0; k < n; k++) mt_tensor_free(v[k]);
    free(v);
  } else {
    *n_out = names.n;
    *out = v;
  }
  names_free(&names);
  if (g >= 0) H5Oclose(g);
  return st;
}

static void kwargs_free(mt_kwargs *kw) {
  mt_kwarg *items = (mt_kwarg *)kw->items;
  for (int k = 0; k < kw->n; k++) {
    free((char *)items[k].name);
    free((char *)items[k].s);
    free((int64_t *)items[k].ints); /* or .floats: one pointer (a union) */
  }
  free(items);
  kw->n = 0;
  kw->items = NULL;
}

/* One kwarg attribute: enum bool or uint8 scalar -> BOOL, integer scalar ->
 * INT, float scalar -> FLOAT, string -> STR, integer array -> INTS.
 * *plain_int = 1 for an integer scalar (not an enum): a bool or an int,
 * which the op's schema decides (kwarg_retype). */
static mt_status read_kwarg(const rd *r, hid_t g, const char *name, mt_kwarg *kw,
                            int *plain_int) {
  mt_status st = MT_OK;
  attr_h h;
  char path[256];
  join_path(path, sizeof path, "kwargs", name);
  if (attr_open(r, g, "kwargs", name, 1, &h) < 0) return r->err->status;
  H5T_class_t c = H5Tget_class(h.t);
  H5S_class_t sc = H5Sget_simple_extent_type(h.s);
  int is_scalar = sc == H5S_SCALAR;
  memset(kw, 0, sizeof *kw);
  *plain_int = c == H5T_INTEGER && is_scalar;
  if (!(kw->name = xstrdup(name))) {
    st = rd_oom(r, path);
    goto out;
  }
  if (c == H5T_STRING) {
    attr_close(&h);
    kw->type = MT_KW_STR;
    char *s = NULL;
    if ((st = attr_string(r, g, "kwargs", name, 1, &s)) != MT_OK) goto out;
    kw->s = s;
  } else if (c == H5T_FLOAT && is_scalar) {
    kw->type = MT_KW_FLOAT;
    if (H5Aread(h.a, H5T_NATIVE_DOUBLE, &kw->f) < 0) st = rd_h5fail(r, path, "cannot read");
  } else if (c == H5T_FLOAT) { /* a tuple of floats: a 1-d array */
    hssize_t np = space_npoints(h.s);
    double *floats = NULL;
    if (H5Sget_simple_extent_ndims(h.s) > 1) {
      st = rd_fail(r, path, "float array kwarg has %d dimensions, expected a 1-d array",
                   H5Sget_simple_extent_ndims(h.s));
      goto out;
    }
    if (np < 0 || np > MT_GOLDEN_MAX_KWARGS) {
      st = rd_fail(r, path, "float array kwarg has %lld elements, at most %d allowed",
                   (long long)np, MT_GOLDEN_MAX_KWARGS);
      goto out;
    }
    if (!(floats = malloc((size_t)(np ? np : 1) * sizeof *floats))) {
      st = rd_oom(r, path);
      goto out;
    }
    kw->floats = floats; /* kwargs_free frees it (the ints/floats union) */
    kw->type = MT_KW_FLOATS;
    kw->n = (int)np;
    if (np > 0 && H5Aread(h.a, H5T_NATIVE_DOUBLE, floats) < 0)
      st = rd_h5fail(r, path, "cannot read");
  } else if ((c == H5T_INTEGER || c == H5T_ENUM) && is_scalar) {
    int is_u8 = c == H5T_INTEGER && H5Tget_size(h.t) == 1 && H5Tget_sign(h.t) == H5T_SGN_NONE;
    attr_close(&h);
    int64_t v = 0;
    int present = 0;
    attr_int_kind ak = AV_INT;
    if ((st = attr_int(r, g, "kwargs", name, 1, &v, &present, &ak)) != MT_OK) goto out;
    kw->type = (ak == AV_BOOL_ENUM || (is_u8 && (v == 0 || v == 1))) ? MT_KW_BOOL : MT_KW_INT;
    kw->i = v;
    kw->f = (double)v;
  } else if (c == H5T_INTEGER) {
    attr_close(&h);
    int64_t *ints = malloc(MT_GOLDEN_MAX_KWARGS * sizeof *ints);
    int n = 0, present = 0;
    if (!ints) {
      st = rd_oom(r, path);
      goto out;
    }
    kw->ints = ints;
    kw->type = MT_KW_INTS;
    if ((st = attr_ints(r, g, "kwargs", name, 1, MT_GOLDEN_MAX_KWARGS, ints, &n, &present)) !=
        MT_OK)
      goto out;
    kw->n = n;
  } else {
    st = rd_fail(r, path, "kwarg is %s, expected a bool, int, float, string, int array or float array",
                 class_name(c));
  }
out:
  attr_close(&h);
  return st;
}

/* The format stores a bool as h5py's enum or as any integer holding 0 or 1,
 * an int as an integer: for a plain integer the op's schema says which. */
static void kwarg_retype(mt_op op, mt_kwarg *a) {
  const mt_kw_schema *s = mt_kw_schema_find(op, a->name);
  if (!s) return;
  if (s->type == MT_KWS_BOOL && (a->i == 0 || a->i == 1))
    a->type = MT_KW_BOOL;
  else if (s->type != MT_KWS_BOOL)
    a->type = MT_KW_INT;
}

/* A case's kwargs must be those its op takes, with values of the types it
 * accepts (kwargs.def; spec/golden-format.md "Keyword arguments"): else an
 * input error naming the kwarg. Not checked: cases whose op is not in
 * ops.def (never run), and error cases of class INVALID_ARGUMENT, whose
 * point may be a kwarg that torch refuses (an unexpected keyword, a tuple
 * dim for prod): those go to the kernel, which must refuse them. */
static mt_status check_kwargs(const rd *r, const mt_golden_case *c) {
  const char *bad = "";
  char why[MT_MSG_LEN / 2], path[256];
  if (c->op == MT_OP__NONE) return MT_OK;
  if (c->expect_error && c->error_class && strcmp(c->error_class, "INVALID_ARGUMENT") == 0)
    return MT_OK;
  if (!mt_kw_validate(c->op, &c->kw, &bad, why, sizeof why)) return MT_OK;
  join_path(path, sizeof path, "kwargs", bad);
  return rd_fail(r, path, "%s", why);
}

static mt_status read_kwargs(const rd *r, hid_t cg, mt_golden_case *c) {
  mt_status st = MT_OK;
  hid_t g = -1;
  name_list names = {0};
  mt_kwarg *items = NULL;
  mt_kwargs *kw = &c->kw;
  kw->n = 0;
  kw->items = NULL;
  int o = obj_open(r, cg, "", "kwargs", H5I_GROUP, 0, &g);
  if (o <= 0) return o < 0 ? r->err->status : MT_OK;
  if ((st = attr_names(r, g, "kwargs", &names)) != MT_OK) goto out;
  if (names.n > MT_GOLDEN_MAX_KWARGS) {
    st = rd_fail(r, "kwargs", "has %d attributes, at most %d allowed", names.n,
                 MT_GOLDEN_MAX_KWARGS);
    goto out;
  }
  if (names.n && !(items = calloc((size_t)names.n, sizeof *items))) {
    st = rd_oom(r, "kwargs");
    goto out;
  }
  kw->items = items;
  for (int k = 0; k < names.n; k++) {
    int plain_int = 0;
    kw->n = k + 1; /* so kwargs_free frees what read_kwarg allocated */
    if ((st = read_kwarg(r, g, names.v[k], &items[k], &plain_int)) != MT_OK) goto out;
    if (plain_int && c->op != MT_OP__NONE) kwarg_retype(c->op, &items[k]);
  }
  st = check_kwargs(r, c);
out:
  if (st != MT_OK) kwargs_free(kw);
  names_free(&names);
  if (g >= 0) H5Oclose(g);
  return st;
}

/* ---- cases ---------------------------------------------------------------------------- */

static void free_list(int n, mt_tensor **v) {
  for (int k = 0; k < n; k++) mt_tensor_free(v[k]);
  free(v);
}

void mt_golden_unload(mt_golden_case *c) {
  if (!c) return;
  free_list(c->n_in, c->in);
  free_list(c->n_out, c->out);
  kwargs_free(&c->kw);
  for (int k = 0; k < c->n_variants; k++) {
    free(c->variants[k].label);
    free_list(c->variants[k].n_out, c->variants[k].out);
  }
  free(c->variants);
  c->n_in = c->n_out = c->n_variants = c->n_fwd_in = c->n_grad_out = 0;
  c->in = c->out = NULL;
  c->variants = NULL;
  c->loaded = 0;
}

static void header_free(mt_golden_case *c) {
  mt_golden_unload(c);
  free(c->id);
  free(c->op_name);
  free(c->profile);
  free(c->rules);
  free(c->tolerance_str);
  free(c->error_class);
  free(c->torch_error);
  free(c->torch_call);
  free(c->poison);
  for (int k = 0; k < c->n_labels; k++) free(c->labels[k]);
  free(c->labels);
  for (int k = 0; k < c->n_error_variants; k++) {
    free(c->error_variants[k].label);
    free(c->error_variants[k].error_class);
  }
  free(c->error_variants);
  memset(c, 0, sizeof *c);
}

static mt_status open_case_group(const rd *r, hid_t file, const char *id, hid_t *g) {
  char path[1024];
  snprintf(path, sizeof path, "/cases/%s", id);
  if ((*g = H5Gopen2(file, path, H5P_DEFAULT)) < 0) return rd_h5fail(r, "", "cannot open %s", path);
  return MT_OK;
}

/* `input_masks`: "k:j" pairs, comma-separated (input k is specified where
 * input j is true). Indices are checked against the inputs at load time. */
static mt_status parse_input_masks(const rd *r, const char *s, mt_golden_case *c) {
  const char *p = s;
  while (*p) {
    char *end;
    long k = strtol(p, &end, 10);
    if (end == p || *end != ':') goto bad;
    p = end + 1;
    long j = strtol(p, &end, 10);
    if (end == p || (*end && *end != ',')) goto bad;
    if (k < 0 || j < 0 || k >= MT_GOLDEN_MAX_INPUTS || j >= MT_GOLDEN_MAX_INPUTS || k == j ||
        c->input_mask_of[k] > 0)
      goto bad;
    c->input_mask_of[k] = (int)j + 1;
    p = *end ? end + 1 : end;
  }
  return MT_OK;
bad:
  return rd_fail(r, "", "attribute 'input_masks' is '%s', expected pairs '<input>:<mask input>' "
                        "separated by commas (each input once, never its own mask)", s);
}

static mt_status label_error(const rd *r, const char *nm, const char *label) {
  return rd_fail(r, nm,
                 "output variant label '%s' does not name a torch version (expected "
                 "torch-<version> as torch.__version__ writes it, e.g. torch-2.4.1, "
                 "torch-2.6.0.dev20241112+cpu; spec/golden-format.md)",
                 label);
}

/* c->labels += label (no duplicates); 0, or -1 out of memory. */
static int label_push(mt_golden_case *c, const char *label) {
  for (int k = 0; k < c->n_labels; k++)
    if (!strcmp(c->labels[k], label)) return 0;
  char **v = realloc(c->labels, (size_t)(c->n_labels + 1) * sizeof *v);
  if (!v) return -1;
  c->labels = v;
  if (!(v[c->n_labels] = xstrdup(label))) return -1;
  c->n_labels++;
  return 0;
}

/* The torch versions the case records besides the file's own: the labels
 * of its outputs@<label> groups and error@<label> attributes (header). */
static mt_status read_versions(const rd *r, hid_t g, mt_golden_case *c) {
  mt_status st = MT_OK;
  name_list links = {0}, attrs = {0};
  if ((st = link_names(r, g, "", &links)) != MT_OK) goto out;
  if ((st = attr_names(r, g, "", &attrs)) != MT_OK) goto out;
  for (int k = 0; k < links.n; k++) {
    const char *nm = links.v[k];
    if (strncmp(nm, "outputs@", 8) != 0) continue;
    if (!mt_golden_variant_label_valid(nm + 8)) {
      st = label_error(r, nm, nm + 8);
      goto out;
    }
    if (label_push(c, nm + 8)) goto oom;
  }
  for (int k = 0; k < attrs.n; k++) {
    const char *nm = attrs.v[k];
    mt_status dummy;
    if (strncmp(nm, "error@", 6) != 0) continue;
    if (!mt_golden_variant_label_valid(nm + 6)) {
      st = label_error(r, nm, nm + 6);
      goto out;
    }
    for (int j = 0; j < c->n_labels; j++)
      if (!strcmp(c->labels[j], nm + 6)) {
        st = rd_fail(r, nm, "the case has both outputs@%s and error@%s: a version either "
                            "returns outputs or raises", nm + 6, nm + 6);
        goto out;
      }
    if (c->n_error_variants == MT_GOLDEN_MAX_VARIANTS) {
      st = rd_fail(r, nm, "more than %d error variants", MT_GOLDEN_MAX_VARIANTS);
      goto out;
    }
    mt_golden_error_variant *v =
        realloc(c->error_variants, (size_t)(c->n_error_variants + 1) * sizeof *v);
    if (!v) goto oom;
    c->error_variants = v;
    v = &c->error_variants[c->n_error_variants];
    memset(v, 0, sizeof *v);
    c->n_error_variants++;
    if (!(v->label = xstrdup(nm + 6))) goto oom;
    if ((st = attr_string(r, g, "", nm, 1, &v->error_class)) != MT_OK) goto out;
    if (mt_status_from_name(v->error_class, &dummy) != 0 || dummy == MT_OK) {
      st = rd_fail(r, nm, "'%s' is not an error status of this mtcs (status.def)",
                   v->error_class);
      goto out;
    }
    if (label_push(c, nm + 6)) goto oom;
  }
out:
  names_free(&links);
  names_free(&attrs);
  return st;
oom:
  st = rd_oom(r, "");
  goto out;
}

static mt_status read_header(const rd *r, hid_t g, mt_golden_case *c) {
  mt_status st;
  char *expect = NULL, *input_masks = NULL;
  mt_status dummy;
  if ((st = attr_string(r, g, "", "op", 1, &c->op_name)) != MT_OK) goto out;
  if (mt_op_from_name(c->op_name, &c->op) != 0) c->op = MT_OP__NONE;
  if ((st = attr_string(r, g, "", "profile", 0, &c->profile)) != MT_OK) goto out;
  if ((st = attr_string(r, g, "", "rules", 0, &c->rules)) != MT_OK) goto out;
  if ((st = attr_string(r, g, "", "tolerance", 0, &c->tolerance_str)) != MT_OK) goto out;
  if ((st = attr_string(r, g, "", "expect", 0, &expect)) != MT_OK) goto out;
  if ((st = attr_string(r, g, "", "error_class", 0, &c->error_class)) != MT_OK) goto out;
  if ((st = attr_string(r, g, "", "torch_error", 0, &c->torch_error)) != MT_OK) goto out;
  if ((st = attr_string(r, g, "", "torch_call", 0, &c->torch_call)) != MT_OK) goto out;
  if ((st = attr_string(r, g, "", "poison", 0, &c->poison)) != MT_OK) goto out;
  if ((st = attr_bool(r, g, "", "check_masked_out", 0, &c->check_masked_out)) != MT_OK) goto out;
  if ((st = attr_bool(r, g, "", "check_structure", 0, &c->check_structure)) != MT_OK) goto out;
  if ((st = attr_bool(r, g, "", "backward", 0, &c->backward)) != MT_OK) goto out;
  if ((st = attr_string(r, g, "", "input_masks", 0, &input_masks)) != MT_OK) goto out;
  if (input_masks && (st = parse_input_masks(r, input_masks, c)) != MT_OK) goto out;
  if (!c->profile && !(c->profile = xstrdup("torch"))) goto oom;
  if (!c->rules && !(c->rules = xstrdup(""))) goto oom;
  if (!c->tolerance_str && !(c->tolerance_str = xstrdup("exact"))) goto oom;
  if (expect && strcmp(expect, "error") == 0) {
    c->expect_error = 1;
  } else if (expect && strcmp(expect, "ok") != 0) {
    st = rd_fail(r, "", "attribute 'expect' is '%s', expected 'ok' or 'error'", expect);
    goto out;
  }
  if (c->expect_error && !c->error_class) {
    st = rd_fail(r, "", "expect is 'error' but attribute 'error_class' is missing");
    goto out;
  }
  if (c->expect_error && mt_status_from_name(c->error_class, &dummy) != 0) {
    st = rd_fail(r, "", "error_class '%s' is not a status of this mtcs (status.def)",
                 c->error_class);
    goto out;
  }
  if (mt_tolerance_parse(c->tolerance_str, &c->tolerance, r->err) != MT_OK) {
    char why[MT_MSG_LEN];
    snprintf(why, sizeof why, "%s", r->err->msg);
    st = rd_fail(r, "", "attribute 'tolerance': %s", why);
    goto out;
  }
  st = read_versions(r, g, c);
out:
  free(expect);
  free(input_masks);
  return st;
oom:
  free(expect);
  free(input_masks);
  return rd_oom(r, "");
}

/* ---- output variants: outputs@torch-<version> ---------------------------------------- */

/* Skips the digits at *p; 1 when there was at least one. */
static int digits(const char **p) {
  const char *q = *p;
  while (**p >= '0' && **p <= '9') (*p)++;
  return *p > q;
}

static int lower_alnum(char ch) { return (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9'); }

/* The grammar of spec/golden-format.md, "Output variants" (a PEP 440
 * version in the normalized form torch.__version__ has):
 *   label   = "torch-" release [pre] [post] [dev] [local]
 *   release = 1*DIGIT *("." 1*DIGIT)
 *   pre     = ("a" / "b" / "rc") 1*DIGIT
 *   post    = ".post" 1*DIGIT
 *   dev     = ".dev" 1*DIGIT
 *   local   = "+" 1*(%x61-7A / DIGIT) *("." 1*(%x61-7A / DIGIT)) */
int mt_golden_variant_label_valid(const char *label) {
  const char *p = label;
  if (!p || strncmp(p, "torch-", 6) != 0) return 0;
  p += 6;
  if (!digits(&p)) return 0;
  while (p[0] == '.' && p[1] >= '0' && p[1] <= '9') {
    p++;
    digits(&p);
  }
  if (p[0] == 'a' || p[0] == 'b' || (p[0] == 'r' && p[1] == 'c')) {
    p += p[0] == 'r' ? 2 : 1;
    if (!digits(&p)) return 0;
  }
  if (strncmp(p, ".post", 5) == 0) {
    p += 5;
    if (!digits(&p)) return 0;
  }
  if (strncmp(p, ".dev", 4) == 0) {
    p += 4;
    if (!digits(&p)) return 0;
  }
  if (*p == '+') {
    do {
      p++;
      if (!lower_alnum(*p)) return 0;
      while (lower_alnum(*p)) p++;
    } while (*p == '.');
  }
  return *p == 0;
}

/* A gradient case's grad_outputs/0..: appended to c->in (format 3). */
static mt_status read_grad_outputs(const rd *r, hid_t g, mt_golden_case *c) {
  int n = 0;
  mt_tensor **v = NULL;
  mt_status st = read_list(r, g, "grad_outputs", 1, MT_MAX_OUTPUTS, &n, &v);
  if (st != MT_OK) return st;
  if (n == 0) {
    free(v);
    return rd_fail(r, "grad_outputs", "is empty: a gradient case needs one upstream gradient "
                                      "per forward output");
  }
  if (c->n_in + n > MT_GOLDEN_MAX_INPUTS) {
    free_list(n, v);
    return rd_fail(r, "grad_outputs", "%d inputs and %d upstream gradients: at most %d in all",
                   c->n_in, n, MT_GOLDEN_MAX_INPUTS);
  }
  mt_tensor **all = realloc(c->in, (size_t)(c->n_in + n) * sizeof *all);
  if (!all) {
    free_list(n, v);
    return rd_oom(r, "grad_outputs");
  }
  memcpy(all + c->n_in, v, (size_t)n * sizeof *v);
  free(v);
  c->in = all;
  c->n_fwd_in = c->n_in;
  c->n_grad_out = n;
  c->n_in += n;
  return MT_OK;
}

/* grads/<k> of group cg (a case, or a response's root): n_slots slots,
 * NULL where the group has no member k (no gradient for input k); *n_max
 * is one past the largest k present (0 when none). The group must exist
 * when required; an ok expectation needs at least one member. */
static mt_status read_grad_slots(const rd *r, hid_t cg, int n_slots, int required, int need_one,
                                 mt_tensor ***out, int *n_max) {
  mt_status st = MT_OK;
  hid_t g = -1;
  name_list names = {0};
  mt_tensor **v = calloc((size_t)(n_slots > 0 ? n_slots : 1), sizeof *v);
  *out = NULL;
  *n_max = 0;
  if (!v) return rd_oom(r, "grads");
  int o = obj_open(r, cg, "", "grads", H5I_GROUP, required, &g);
  if (o < 0) {
    st = r->err->status;
    goto out;
  }
  if (o > 0) {
    if ((st = link_names(r, g, "grads", &names)) != MT_OK) goto out;
    for (int j = 0; j < names.n; j++) {
      char *end, canon[16];
      long k = strtol(names.v[j], &end, 10);
      if (*end || end == names.v[j] || k < 0 || k >= n_slots) {
        st = rd_fail(r, "grads", "member '%s' names no input (grads/0..%d)", names.v[j],
                     n_slots - 1);
        goto out;
      }
      snprintf(canon, sizeof canon, "%ld", k);
      if (strcmp(canon, names.v[j]) != 0) {
        st = rd_fail(r, "grads", "member '%s' is not spelled as an input index ('%s')",
                     names.v[j], canon);
        goto out;
      }
      if ((st = read_tensor(r, g, "grads", names.v[j], 0, &v[k])) != MT_OK) goto out;
      if (k + 1 > *n_max) *n_max = (int)k + 1;
    }
  }
  if (need_one && names.n == 0)
    st = rd_fail(r, "grads", "is empty, but some input must get a gradient (status OK)");
out:
  names_free(&names);
  if (g >= 0) H5Oclose(g);
  if (st != MT_OK) {
    free_list(n_slots, v);
    *n_max = 0;
    return st;
  }
  *out = v;
  return MT_OK;
}

/* A gradient case's grads/<k>: one slot per forward input. */
static mt_status read_grads(const rd *r, hid_t cg, mt_golden_case *c) {
  int n_max;
  mt_status st = read_grad_slots(r, cg, c->n_fwd_in, !c->expect_error, !c->expect_error,
                                 &c->out, &n_max);
  if (st == MT_OK) c->n_out = c->n_fwd_in;
  return st;
}

/* mt_golden_load (with_outputs) and mt_golden_load_inputs (without). */
static mt_status load_case(mt_golden_file *f, mt_golden_case *c, int with_outputs,
                           mt_error *err) {
  mt_status st = MT_OK;
  hid_t g = -1;
  name_list names = {0};
  mt_error local;
  if (!err) err = &local;
  rd r = {f->path, c->id, err};
  if (c->loaded) return MT_OK;
  mt__h5_quiet();
  if ((st = open_case_group(&r, (hid_t)f->h5, c->id, &g)) != MT_OK) return st;
  if ((st = read_list(&r, g, "inputs", 1, MT_GOLDEN_MAX_INPUTS, &c->n_in, &c->in)) != MT_OK)
    goto out;
  if ((st = read_kwargs(&r, g, c)) != MT_OK) goto out;
  for (int k = 0; k < MT_GOLDEN_MAX_INPUTS; k++) {
    int j = c->input_mask_of[k] - 1;
    if (j < 0) continue;
    const mt_tensor *t = k < c->n_in ? c->in[k] : NULL, *m = j < c->n_in ? c->in[j] : NULL;
    int ok = t && m && t->kind == MT_KIND_DENSE && m->kind == MT_KIND_DENSE &&
             m->dtype == MT_bool && m->ndim <= t->ndim;
    for (int d = t ? t->ndim - 1 : 0, md = m ? m->ndim - 1 : -1; ok && md >= 0; d--, md--)
      ok = m->shape[md] == t->shape[d] || m->shape[md] == 1;
    if (!ok) {
      st = rd_fail(&r, "", "input_masks %d:%d: input %d must be a dense tensor and input %d a "
                           "dense bool tensor that broadcasts to it (the case has %d inputs)",
                   k, j, k, j, c->n_in);
      goto out;
    }
  }
  if (c->backward) {
    if (c->n_in > MT_MAX_OUTPUTS) {
      st = rd_fail(&r, "inputs", "a gradient case has at most %d inputs (one gradient each), "
                                 "this one %d", MT_MAX_OUTPUTS, c->n_in);
      goto out;
    }
    if ((st = read_grad_outputs(&r, g, c)) != MT_OK) goto out;
  }
  if (!with_outputs) { /* a request of the adapter protocol: no outputs */
    c->loaded = 1;
    goto out;
  }
  if (c->backward) { /* format 3: grads/<k>, no outputs, no outputs@ variants */
    if ((st = read_grads(&r, g, c)) != MT_OK) goto out;
    if (c->n_labels) {
      st = rd_fail(&r, "", "a gradient case records no torch-version variants (it has %s)",
                   c->labels[0]);
      goto out;
    }
    c->loaded = 1;
    goto out;
  }
  if ((st = read_list(&r, g, "outputs", !c->expect_error, MT_MAX_OUTPUTS, &c->n_out, &c->out)) !=
      MT_OK)
    goto out;
  if (!c->expect_error && c->n_out == 0) {
    st = rd_fail(&r, "outputs", "is empty, but the case expects 'ok'");
    goto out;
  }
  /* outputs@<label>: what another torch version gives. */
  if ((st = link_names(&r, g, "", &names)) != MT_OK) goto out;
  for (int k = 0; k < names.n; k++) {
    const char *nm = names.v[k];
    if (strncmp(nm, "outputs@", 8) != 0) continue;
    if (!mt_golden_variant_label_valid(nm + 8)) {
      st = label_error(&r, nm, nm + 8);
      goto out;
    }
    if (c->n_variants == MT_GOLDEN_MAX_VARIANTS) {
      st = rd_fail(&r, nm, "more than %d output variants", MT_GOLDEN_MAX_VARIANTS);
      goto out;
    }
    mt_golden_variant *v = realloc(c->variants, (size_t)(c->n_variants + 1) * sizeof *v);
    if (!v) {
      st = rd_oom(&r, nm);
      goto out;
    }
    c->variants = v;
    v = &c->variants[c->n_variants];
    memset(v, 0, sizeof *v);
    if (!(v->label = xstrdup(nm + 8))) {
      st = rd_oom(&r, nm);
      goto out;
    }
    c->n_variants++;
    if ((st = read_list(&r, g, nm, 1, MT_MAX_OUTPUTS, &v->n_out, &v->out)) != MT_OK) goto out;
  }
  c->loaded = 1;
out:
  names_free(&names);
  if (g >= 0) H5Gclose(g);
  if (st != MT_OK) mt_golden_unload(c);
  return st;
}

mt_status mt_golden_load(mt_golden_file *f, mt_golden_case *c, mt_error *err) {
  return load_case(f, c, 1, err);
}

mt_status mt_golden_load_inputs(mt_golden_file *f, mt_golden_case *c, mt_error *err) {
  return load_case(f, c, 0, err);
}

/* ---- files ------------------------------------------------------------------------------- */

static void meta_free(mt_golden_meta *m) {
  free(m->format);
  free(m->generator);
  free(m->generator_sha256);
  free(m->torch_version);
  free(m->numpy_version);
  free(m->created_utc);
  memset(m, 0, sizeof *m);
}

void mt_golden_close(mt_golden_file *f) {
  if (!f) return;
  for (int k = 0; k < f->n_cases; k++) header_free(&f->cases[k]);
  free(f->cases);
  meta_free(&f->meta);
  if (f->h5 >= 0) H5Fclose((hid_t)f->h5);
  free(f->path);
  free(f);
}

static int valid_case_id(const char *id) {
  if (!id[0]) return 0;
  for (const unsigned char *p = (const unsigned char *)id; *p; p++)
    if (*p <= ' ' || *p == 0x7f) return 0;
  return 1;
}

/* How a file to open is named in its errors (each message is
 * before + path + after), and which kinds are refused before HDF5 sees them. */
typedef struct h5_file_kind {
  const char *no_stat[2]; /* then ": <strerror>" */
  const char *refused[2]; /* a directory (golden) / not a regular file (response) */
  int regular_only;       /* refuse every non-regular file, not only directories */
  const char *no_read[2]; /* then ": <strerror>" */
} h5_file_kind;

static const h5_file_kind GOLDEN_FILE = {{"cannot open golden file ", ""},
                                         {"golden file ", " is a directory"}, 0,
                                         {"cannot read golden file ", ""}};
static const h5_file_kind RESPONSE_FILE = {{"", ""}, {"", ": not a regular file"}, 1,
                                           {"", ": cannot read it"}};

/* r->file exists, is readable, is not refused by kind, carries the HDF5
 * signature, and opens read-only: *fid. IO_ERROR or INVALID_FORMAT naming
 * the file otherwise. */
static mt_status h5_open_checked(const rd *r, const h5_file_kind *kind, hid_t *fid) {
  const char *path = r->file;
  struct stat sb;
  *fid = -1;
  mt__h5_quiet();
  if (stat(path, &sb) != 0)
    return mt_err(r->err, MT_IO_ERROR, "%s%s%s: %s", kind->no_stat[0], path, kind->no_stat[1],
                  strerror(errno));
  if (kind->regular_only ? !S_ISREG(sb.st_mode) : S_ISDIR(sb.st_mode))
    return mt_err(r->err, MT_IO_ERROR, "%s%s%s", kind->refused[0], path, kind->refused[1]);
  if (access(path, R_OK) != 0)
    return mt_err(r->err, MT_IO_ERROR, "%s%s%s: %s", kind->no_read[0], path, kind->no_read[1],
                  strerror(errno));
  if (H5Fis_hdf5(path) <= 0) {
    H5Eclear2(H5E_DEFAULT);
    return mt_err(r->err, MT_INVALID_FORMAT,
                  "%s: not an HDF5 file (no HDF5 signature; %lld bytes)", path,
                  (long long)sb.st_size);
  }
  if ((*fid = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT)) < 0)
    return rd_h5fail(r, "", "cannot open as HDF5 (corrupt or truncated file?)");
  return MT_OK;
}

mt_status mt_golden_open(const char *path, mt_golden_file **out, mt_error *err) {
  mt_status st = MT_OK;
  mt_golden_file *f = NULL;
  hid_t cases = -1;
  name_list ids = {0};
  mt_error local;
  if (!err) err = &local;
  rd r = {path, NULL, err};
  *out = NULL;
  if (!(f = calloc(1, sizeof *f)) || !(f->path = xstrdup(path))) {
    free(f);
    return mt_err(err, MT_OUT_OF_MEMORY, "%s: out of memory", path);
  }
  f->h5 = -1;
  hid_t fid;
  if ((st = h5_open_checked(&r, &GOLDEN_FILE, &fid)) != MT_OK) goto out;
  f->h5 = (int64_t)fid;
  /* Root attributes. */
  if ((st = attr_string(&r, fid, "/", "format", 0, &f->meta.format)) != MT_OK) goto out;
  if (!f->meta.format) {
    st = rd_fail(&r, "", "not an mtcs golden file (no root attribute 'format')");
    goto out;
  }
  if (strcmp(f->meta.format, MT_GOLDEN_FORMAT) != 0) {
    st = rd_fail(&r, "", "not an mtcs golden file (root attribute format is '%s', expected '%s')",
                 f->meta.format, MT_GOLDEN_FORMAT);
    goto out;
  }
  int present = 0;
  if ((st = attr_int(&r, fid, "/", "format_version", 1, &f->meta.format_version, &present,
                     NULL)) != MT_OK)
    goto out;
  if (f->meta.format_version < MT_GOLDEN_FORMAT_VERSION_MIN ||
      f->meta.format_version > MT_GOLDEN_FORMAT_VERSION) {
    st = rd_fail(&r, "", "unsupported format_version %" PRId64 " (this mtcs reads %d to %d)",
                 f->meta.format_version, MT_GOLDEN_FORMAT_VERSION_MIN, MT_GOLDEN_FORMAT_VERSION);
    goto out;
  }
  if ((st = attr_string(&r, fid, "/", "generator", 0, &f->meta.generator)) != MT_OK ||
      (st = attr_string(&r, fid, "/", "generator_sha256", 0, &f->meta.generator_sha256)) != MT_OK ||
      (st = attr_string(&r, fid, "/", "torch_version", 0, &f->meta.torch_version)) != MT_OK ||
      (st = attr_string(&r, fid, "/", "numpy_version", 0, &f->meta.numpy_version)) != MT_OK ||
      (st = attr_string(&r, fid, "/", "created_utc", 0, &f->meta.created_utc)) != MT_OK)
    goto out;
  /* Case headers. */
  if (obj_open(&r, fid, "", "cases", H5I_GROUP, 1, &cases) <= 0) {
    st = err->status;
    goto out;
  }
  if ((st = link_names(&r, cases, "cases", &ids)) != MT_OK) goto out;
  if (ids.n && !(f->cases = calloc((size_t)ids.n, sizeof *f->cases))) {
    st = rd_oom(&r, "cases");
    goto out;
  }
  for (int k = 0; k < ids.n; k++) {
    mt_golden_case *c = &f->cases[k];
    f->n_cases = k + 1;
    c->id = ids.v[k];
    ids.v[k] = NULL;
    if (!valid_case_id(c->id)) {
      st = rd_fail(&r, "cases", "case id '%s' is empty or holds spaces or control characters",
                   c->id);
      goto out;
    }
    rd cr = {path, c->id, err};
    hid_t g = -1;
    if ((st = open_case_group(&cr, fid, c->id, &g)) != MT_OK) goto out;
    st = read_header(&cr, g, c);
    H5Gclose(g);
    c->file_torch_version = f->meta.torch_version;
    if (st != MT_OK) goto out;
  }
out:
  names_free(&ids);
  if (cases >= 0) H5Oclose(cases);
  if (st != MT_OK) {
    mt_golden_close(f);
    return st;
  }
  *out = f;
  return MT_OK;
}


/* ---- adapter responses --------------------------------------------------------------- */

mt_status mt_golden_read_outputs(const char *path, int *n_out, mt_tensor ***out, mt_error *err) {
  mt_status st = MT_OK;
  mt_error local;
  if (!err) err = &local;
  rd r = {path, NULL, err};
  *n_out = 0;
  *out = NULL;
  hid_t fid;
  if ((st = h5_open_checked(&r, &RESPONSE_FILE, &fid)) != MT_OK) return st;
  if (H5Lexists(fid, "outputs", H5P_DEFAULT) <= 0 && H5Lexists(fid, "grads", H5P_DEFAULT) > 0) {
    /* a gradient response: grads/<k>, NULL slots below the largest k */
    st = read_grad_slots(&r, fid, MT_MAX_OUTPUTS, 1, 1, out, n_out);
    H5Fclose(fid);
    return st;
  }
  st = read_list(&r, fid, "outputs", 1, MT_MAX_OUTPUTS, n_out, out);
  if (st == MT_OK && *n_out == 0) {
    free(*out);
    *out = NULL;
    st = rd_fail(&r, "outputs", "is empty: status OK needs at least one output");
  }
  H5Fclose(fid);
  return st;
}

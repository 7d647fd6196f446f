/* npma_util.h - helpers shared by the numpy_ma profile's kernels
 * (impl/cpu/npma_*.c, spec/SEMANTICS.md "The numpy_ma profile").
 *
 * numpy.ma's rules, in mtcs's convention (mask true = specified):
 *   - operands: masked tensors (dense storage), plain dense tensors (all
 *     specified) and Python numbers, which numpy.ma turns into 0-d arrays of
 *     float64, int64 or bool (np.ma's getdata: not NEP 50's weak scalars);
 *   - result dtypes: numpy 2's promotion of those (npma_promote), and the
 *     ufunc loops' rules for unary float functions of integers (npma_float_of);
 *   - every element is computed in its result dtype: float16 and float32
 *     results in float (numpy's half loops go through float), float64 in
 *     double, integers in wrapping int64, bool as bool.
 * Everything is static inline (one header, included by the npma_*.c files). */
#ifndef MT_NPMA_UTIL_H
#define MT_NPMA_UTIL_H

#include <float.h>

#include "common/npma_binary_math.h"
#include "common/npma_math.h"
#include "cpu_util.h"
#include "npma.h"

/* ---- dtypes --------------------------------------------------------------- */

/* numpy's kinds: b(ool), u(nsigned), i(nt), f(loat) */
static inline char npma_kind(mt_dtype d) {
  switch (d) {
  case MT_bool: return 'b';
  case MT_uint8: return 'u';
  case MT_int8:
  case MT_int32:
  case MT_int64: return 'i';
  default: return 'f';
  }
}

/* The smallest float dtype numpy converts an integer dtype to in a mixed
 * operation or a float ufunc: int8/uint8/bool -> float16, int32/int64 ->
 * float64 (int16 -> float32 has no mtcs dtype). Floats map to themselves. */
static inline mt_dtype npma_float_of(mt_dtype d) {
  switch (d) {
  case MT_bool:
  case MT_int8:
  case MT_uint8: return MT_float16;
  case MT_int32:
  case MT_int64: return MT_float64;
  default: return d;
  }
}

/* Rank of a float dtype (float16 < float32 < float64) or of a signed int
 * dtype by width. */
static inline int npma_rank(mt_dtype d) {
  switch (d) {
  case MT_float16:
  case MT_int8: return 1;
  case MT_float32:
  case MT_int32: return 2;
  default: return 3;
  }
}

/* numpy 2's result type of two (non-weak) dtypes; 0 with *out set, or -1
 * when the result (int16 for int8 with uint8) has no mtcs dtype. */
static inline int npma_promote(mt_dtype a, mt_dtype b, mt_dtype *out) {
  char ka = npma_kind(a), kb = npma_kind(b);
  if (a == b || kb == 'b') {
    *out = a;
    return 0;
  }
  if (ka == 'b') {
    *out = b;
    return 0;
  }
  if (ka == 'f' || kb == 'f') {
    mt_dtype fa = npma_float_of(a), fb = npma_float_of(b);
    *out = npma_rank(fa) >= npma_rank(fb) ? fa : fb;
    return 0;
  }
  if (ka == 'u' || kb == 'u') { /* uint8 with a signed int */
    mt_dtype s = ka == 'u' ? b : a;
    if (s == MT_int8) return -1; /* int16 */
    *out = s;
    return 0;
  }
  *out = npma_rank(a) >= npma_rank(b) ? a : b;
  return 0;
}

/* npma_promote, with the error (naming op) where the result has no mtcs
 * dtype: NOT_SUPPORTED. */
static inline mt_status npma_promote_checked(const char *op, mt_dtype a, mt_dtype b, mt_dtype *out,
                                             mt_error *err) {
  *out = a; /* set on the error path too (the callers' -Wmaybe-uninitialized) */
  if (npma_promote(a, b, out) != 0)
    return mt_err(err, MT_NOT_SUPPORTED, "%s: %s with %s gives int16, which mtcs has no name for",
                  op, mt_dtype_name(a), mt_dtype_name(b));
  return MT_OK;
}

/* numpy's can_cast(from, to, 'same_kind') for mtcs's dtypes: bool to any
 * dtype, integers (signed or not) to integers and floats, floats to floats. */
static inline int npma_same_kind(mt_dtype from, mt_dtype to) {
  char kf = npma_kind(from), kt = npma_kind(to);
  return kt == 'f' || kf == 'b' || (kt != 'b' && kf != 'f');
}

/* numpy's normalize_axis_index: axis v of an array of ndim dimensions (a 0-d
 * array takes 0 and -1, as a 1-d one), counted from the end when negative;
 * out of range is numpy's AxisError (INDEX_OUT_OF_RANGE, naming op). */
static inline mt_status npma_axis(const char *op, int64_t v, int ndim, int64_t *out,
                                  mt_error *err) {
  int64_t nd = ndim ? ndim : 1;
  *out = v; /* set on the error path too (the callers' -Wmaybe-uninitialized) */
  if (v < -nd || v >= nd)
    return mt_err(err, MT_INDEX_OUT_OF_RANGE,
                  "%s: axis %lld is out of bounds for array of dimension %d (numpy's AxisError)",
                  op, (long long)v, ndim);
  *out = v < 0 ? v + nd : v;
  return MT_OK;
}

/* ---- operands ------------------------------------------------------------- */

/* One operand of an elementwise op: contiguous data and the specified flags
 * (NULL = every element specified), or a number. */
typedef struct {
  mt_dtype dt;
  int is_number;        /* a Python number (kind scalar) or a 0-d dense tensor */
  int is_masked;
  const void *data;     /* contiguous; for a number: its value buffer */
  const uint8_t *mask;  /* NULL: all specified */
  mt__cpu_mview mv;     /* masked inputs */
  mt_tensor *tmp;       /* a non-contiguous dense input's copy */
  const mt_tensor *t;
  /* NPMA-16 broadcasting (npma_arg_bcast): element i of the broadcast
   * shape bshape reads the operand's element sum(coord_k * bstride[k]) */
  int bcast, bndim;
  int64_t bshape[MT_MAX_DIMS], bstride[MT_MAX_DIMS];
} npma_arg;

static inline void npma_arg_close(npma_arg *a) {
  mt__cpu_mview_close(&a->mv);
  mt_tensor_free(a->tmp);
  a->tmp = NULL;
}

/* Opens input i of the call as an operand. Masked tensors need dense
 * storage (COO: NOT_SUPPORTED: numpy.ma has no sparse layout). */
static inline mt_status npma_arg_open(const mt_call *call, int i, const char *op, npma_arg *a,
                                      mt_error *err) {
  const mt_tensor *t = NULL;
  mt_status st;
  char name[32];
  memset(a, 0, sizeof *a);
  if ((st = mt__cpu_input(call, i, op, &t, err)) != MT_OK) return st;
  a->t = t;
  if ((st = mt_tensor_validate(t, mt__cpu_in_name(i, name, sizeof name), err)) != MT_OK) return st;
  if (t->kind == MT_KIND_SCALAR) {
    a->is_number = 1;
    a->dt = t->dtype;
    a->data = t->values;
    return MT_OK;
  }
  if (t->kind == MT_KIND_MASKED) {
    if (t->data->kind != MT_KIND_DENSE)
      return mt_err(err, MT_NOT_SUPPORTED,
                    "%s: inputs/%d has %s storage; numpy.ma has dense arrays only", op, i,
                    mt_kind_name(t->data->kind));
    if ((st = mt__cpu_mview_open(t, &a->mv, err)) != MT_OK) return st;
    a->is_masked = 1;
    a->dt = t->data->dtype;
    a->data = a->mv.data->values;
    a->mask = a->mv.mask->values;
    return MT_OK;
  }
  if (t->kind == MT_KIND_DENSE && t->ndim == 0) { /* a 0-d array broadcasts like a number */
    a->is_number = 1;
    a->dt = t->dtype;
    a->data = t->values;
    return MT_OK;
  }
  if (t->kind == MT_KIND_DENSE) {
    const mt_tensor *v = NULL;
    if ((st = mt__cpu_contig(t, &v, &a->tmp, err)) != MT_OK) return st;
    a->dt = t->dtype;
    a->data = v->values;
    return MT_OK;
  }
  return mt_err(err, MT_NOT_SUPPORTED, "%s: inputs/%d has kind %s; numpy.ma has dense arrays only",
                op, i, mt_kind_name(t->kind));
}

/* Element i (a number: its one value; a broadcast operand: the element
 * that element i of the broadcast shape reads). */
static inline int64_t npma_idx(const npma_arg *a, int64_t i) {
  return mt_np_bcast_idx(a->is_number, a->bcast, a->bndim, a->bshape, a->bstride, i);
}

/* NPMA-16: numpy's broadcasting of the n operands (numbers are 0-d): the
 * shapes right-aligned, a dim of size 1 stretches to the other's size
 * (0 included). Returns 0 with *ndim/shape set, or SHAPE_MISMATCH (numpy's
 * "operands could not be broadcast together"). */
static inline mt_status npma_broadcast(npma_arg *const *args, int n, const char *op, int *ndim,
                                       int64_t *shape, mt_error *err) {
  int nd = 0;
  for (int j = 0; j < n; j++)
    if (!args[j]->is_number && args[j]->t->ndim > nd) nd = args[j]->t->ndim;
  for (int k = 0; k < nd; k++) shape[k] = 1;
  for (int j = 0; j < n; j++) {
    if (args[j]->is_number) continue;
    const mt_tensor *t = args[j]->t;
    for (int k = 0; k < t->ndim; k++) {
      int64_t s = t->shape[k], *o = &shape[nd - t->ndim + k];
      if (s == *o || s == 1) continue;
      if (*o != 1) {
        char sa[64], sb[64];
        return mt_err(err, MT_SHAPE_MISMATCH,
                      "%s: operands could not be broadcast together: inputs/%d has shape %s, "
                      "the others broadcast to %s (numpy's ValueError)",
                      op, j, mt_shape_str(t->ndim, t->shape, sa, sizeof sa),
                      mt_shape_str(nd, shape, sb, sizeof sb));
      }
      *o = s;
    }
  }
  *ndim = nd;
  return MT_OK;
}

/* Binds operand a to the broadcast shape (ndim, shape) of npma_broadcast:
 * npma_idx then maps the broadcast shape's linear indices to a's. */
static inline void npma_arg_bcast(npma_arg *a, int ndim, const int64_t *shape) {
  if (a->is_number) return;
  const mt_tensor *t = a->t;
  int same = t->ndim == ndim;
  for (int k = 0; same && k < ndim; k++) same = t->shape[k] == shape[k];
  if (same) return;
  a->bcast = 1;
  a->bndim = ndim;
  int64_t stride = 1;
  for (int k = ndim - 1; k >= 0; k--) {
    int tk = k - (ndim - t->ndim);
    int64_t s = tk >= 0 ? t->shape[tk] : 1;
    a->bshape[k] = shape[k];
    a->bstride[k] = s == 1 ? 0 : stride;
    stride *= s;
  }
}
/* An operand's part of a device call's parameters (common/npma_binary_math.h's
 * mt_npb_opnd: its dtype, whether a number, its broadcast strides), and the
 * elements its buffer holds (a number: 1). */
static inline void npma_opnd_of(const npma_arg *a, mt_npb_opnd *o) {
  memset(o, 0, sizeof *o);
  o->dt = a->dt;
  o->is_number = a->is_number;
  o->bcast = a->bcast;
  o->bndim = a->bndim;
  memcpy(o->bshape, a->bshape, sizeof o->bshape);
  memcpy(o->bstride, a->bstride, sizeof o->bstride);
}
static inline int64_t npma_opnd_len(const npma_arg *a) {
  return a->is_number ? 1 : mt_numel(a->t);
}

static inline double npma_ld(const npma_arg *a, int64_t i) {
  return mt__cpu_ld(a->data, a->dt, npma_idx(a, i));
}
static inline int64_t npma_ldi(const npma_arg *a, int64_t i) {
  return mt__cpu_ldi(a->data, a->dt, npma_idx(a, i));
}
static inline int npma_spec(const npma_arg *a, int64_t i) {
  return !a->mask || a->mask[npma_idx(a, i)];
}

/* ---- values ------------------------------------------------------------- */

/* Stores an element of any dtype: integers from an exact int64 (wrapping),
 * floats from a double. `is_int`: v is held in vi. */
static inline void npma_st(void *buf, mt_dtype d, int64_t i, double v, int64_t vi, int is_int) {
  if (is_int)
    mt__cpu_sti(buf, d, i, vi);
  else
    mt__cpu_st(buf, d, i, v);
}

/* A masked output of dtype dt and the given shape. */
static inline mt_status npma_new_out(mt_call *call, mt_dtype dt, int ndim, const int64_t *shape,
                                     void **data, uint8_t **mask, mt_error *err) {
  mt_tensor *o = NULL, *d = NULL, *m = NULL;
  mt_status st = mt__cpu_new_masked_dense(mt__cpu_host(call), dt, ndim, shape, &o, &d, &m, err);
  if (st != MT_OK) return st;
  call->out[0] = o;
  call->n_out = 1;
  *data = d->values;
  *mask = m->values;
  return MT_OK;
}

/* Refuses kwargs the op does not take (ERR-6) and starts the call. */
static inline mt_status npma_begin(mt_call *call, mt_op op, mt_error *err) {
  mt__cpu_begin(call);
  return mt__kw_check(op, call->kw, err);
}

/* ---- reductions (npma_reduce.c), shared with npma_masked_fn.c ---------- */

/* The reductions of numpy.ma on the operand a (its mask must be set,
 * one flag per element; a->t gives the shape) with the call's kwargs `dim`
 * and `keepdim`; kwargs already checked; the values computed on ex. mt__npma_reduce: sum mean prod
 * amin amax (NPMA-5); mt__npma_reduce2: all argmin argmax var std (NPMA-12..14),
 * var/std dividing by count - ddof (NPMA-17). `name` names the op in errors. */
struct mt_exec;
mt_status mt__npma_reduce(mt_call *call, mt_op op, const char *name, const npma_arg *a,
                          const struct mt_exec *ex, mt_error *err);
mt_status mt__npma_reduce2(mt_call *call, mt_op op, const char *name, const npma_arg *a,
                           double ddof, const struct mt_exec *ex, mt_error *err);

#endif /* MT_NPMA_UTIL_H */

/* structure_util.h - strided views and gather plans for the structure family
 * (impl/cpu/structure.c; internal).
 *
 * A view (st_view) describes an op's result as shape + strides + offset in
 * elements over a contiguous source; a plan (st_plan) lists, for every
 * output element in row-major order, the source it comes from and its
 * element offset there. structure.c copies a masked tensor's data and its
 * mask through one plan, so both always move alike (STR-1). */
#ifndef MT_STRUCTURE_UTIL_H
#define MT_STRUCTURE_UTIL_H

#include "cpu_util.h"

#define ST_MAX_INPUTS 16 /* tensors of one cat/stack call */

typedef struct {
  int ndim;
  int64_t shape[MT_MAX_DIMS];
  int64_t strides[MT_MAX_DIMS];
  int64_t offset;
} st_view;

typedef struct {
  int64_t n;
  int *src;     /* which source, per output element */
  int64_t *off; /* element offset in that source */
} st_plan;

/* The contiguous row-major view of shape (ndim, shape); shape may be NULL
 * for ndim 0. */
static inline void st_view_init(st_view *v, int ndim, const int64_t *shape) {
  memset(v, 0, sizeof *v);
  v->ndim = ndim;
  int64_t s = 1;
  for (int d = ndim - 1; d >= 0; d--) {
    v->shape[d] = shape[d];
    v->strides[d] = s;
    s *= shape[d];
  }
}

static inline void st_view_drop(st_view *v, int d) {
  for (int i = d; i + 1 < v->ndim; i++) {
    v->shape[i] = v->shape[i + 1];
    v->strides[i] = v->strides[i + 1];
  }
  v->ndim--;
}

/* A new dim of (size, stride) at position d (0..ndim); ndim < MT_MAX_DIMS. */
static inline void st_view_insert(st_view *v, int d, int64_t size, int64_t stride) {
  for (int i = v->ndim; i > d; i--) {
    v->shape[i] = v->shape[i - 1];
    v->strides[i] = v->strides[i - 1];
  }
  v->shape[d] = size;
  v->strides[d] = stride;
  v->ndim++;
}

static inline void st_view_swap(st_view *v, int a, int b) {
  int64_t s = v->shape[a], t = v->strides[a];
  v->shape[a] = v->shape[b];
  v->strides[a] = v->strides[b];
  v->shape[b] = s;
  v->strides[b] = t;
}

static inline int st_view_same_shape(const st_view *a, const st_view *b) {
  return a->ndim == b->ndim &&
         memcmp(a->shape, b->shape, (size_t)a->ndim * sizeof(int64_t)) == 0;
}

/* v broadcast to (ndim, shape): leading dims and size-1 dims get stride 0.
 * 0 when v cannot be broadcast to that shape (v unchanged then). */
static inline int st_view_broadcast_to(st_view *v, int ndim, const int64_t *shape) {
  if (v->ndim > ndim) return 0;
  st_view b = {.ndim = ndim, .offset = v->offset};
  int lead = ndim - v->ndim;
  for (int i = 0; i < ndim; i++) {
    b.shape[i] = shape[i];
    if (i < lead) continue; /* stride 0 */
    int64_t have = v->shape[i - lead];
    if (have == shape[i])
      b.strides[i] = v->strides[i - lead];
    else if (have != 1)
      return 0;
  }
  *v = b;
  return 1;
}
static inline void st_view_broadcast(st_view *v, int ndim, const int64_t *shape) {
  (void)st_view_broadcast_to(v, ndim, shape);
}

/* The broadcast shape of n views (torch's rules); SHAPE_MISMATCH naming the
 * first dim that does not combine. */
static inline mt_status st_broadcast_shape(const char *op, const st_view *const *v, int n,
                                           int64_t *shape, int *ndim, mt_error *err) {
  int nd = 0;
  for (int k = 0; k < n; k++)
    if (v[k]->ndim > nd) nd = v[k]->ndim;
  for (int i = 0; i < nd; i++) shape[i] = 1;
  for (int k = 0; k < n; k++) {
    int lead = nd - v[k]->ndim;
    for (int i = lead; i < nd; i++) {
      int64_t s = v[k]->shape[i - lead];
      if (s == shape[i] || s == 1) continue;
      if (shape[i] != 1)
        return mt_err(err, MT_SHAPE_MISMATCH,
                      "%s: The size of tensor a (%lld) must match the size of tensor b (%lld) at "
                      "non-singleton dimension %d", op, (long long)shape[i], (long long)s, i);
      shape[i] = s;
    }
  }
  *ndim = nd;
  return MT_OK;
}

/* torch's maybe_wrap_dim: dim in [-ndim, ndim-1] (a 0-d tensor takes
 * [-1, 0]); INDEX_OUT_OF_RANGE with torch's message otherwise. */
static inline mt_status st_wrap_dim(int64_t dim, int ndim, const char *op, int *out,
                                    mt_error *err) {
  int n = ndim > 0 ? ndim : 1;
  if (dim < -n || dim >= n)
    return mt_err(err, MT_INDEX_OUT_OF_RANGE,
                  "%s: Dimension out of range (expected to be in range of [%d, %d], but got %lld)",
                  op, -n, n - 1, (long long)dim);
  *out = (int)(dim < 0 ? dim + n : dim);
  return MT_OK;
}

/* A Python slice bound: negative counts from the end, clamped to [0, n]. */
static inline int64_t st_clamp_pos(int64_t i, int64_t n) {
  if (i < 0) i += n;
  if (i < 0) return 0;
  return i > n ? n : i;
}

/* A DIMS kwarg (an int or a tuple of ints) as a list; required. */
static inline mt_status st_kw_dims(const mt_kwargs *kw, const char *name, const char *op,
                                   int64_t *out, int *n, mt_error *err) {
  const mt_kwarg *a = mt_kw_find(kw, name);
  if (!a) return mt_err(err, MT_INVALID_ARGUMENT, "%s: kwargs/%s is required", op, name);
  if (a->type == MT_KW_INT) {
    out[0] = a->i;
    *n = 1;
    return MT_OK;
  }
  if (a->n > MT_MAX_DIMS)
    return mt_err(err, MT_NOT_SUPPORTED, "%s: kwargs/%s has %d dims; at most %d are supported",
                  op, name, a->n, MT_MAX_DIMS);
  for (int i = 0; i < a->n; i++) out[i] = a->ints[i];
  *n = a->n;
  return MT_OK;
}

/* view/reshape's shape check: one -1 inferred from numel, the product must
 * equal numel (torch's infer_size). */
static inline mt_status st_infer_shape(const char *op, int64_t numel, int64_t *shape, int n,
                                       mt_error *err) {
  int infer = -1;
  int64_t prod = 1;
  char sh[128];
  for (int i = 0; i < n; i++) {
    if (shape[i] == -1) {
      if (infer >= 0)
        return mt_err(err, MT_INVALID_ARGUMENT, "%s: only one dimension can be inferred", op);
      infer = i;
    } else if (shape[i] < 0) {
      return mt_err(err, MT_INVALID_ARGUMENT, "%s: invalid shape dimension %lld", op,
                    (long long)shape[i]);
    } else {
      prod *= shape[i];
    }
  }
  if (infer >= 0 && prod != 0 && numel % prod == 0) {
    shape[infer] = numel / prod;
    return MT_OK;
  }
  if (infer < 0 && prod == numel) return MT_OK;
  return mt_err(err, MT_SHAPE_MISMATCH, "%s: shape '%s' is invalid for input of size %lld", op,
                mt_shape_str(n, shape, sh, sizeof sh), (long long)numel);
}

static inline void st_plan_free(st_plan *p) {
  free(p->src);
  free(p->off);
  memset(p, 0, sizeof *p);
}

static inline mt_status st_plan_alloc(st_plan *p, int64_t n, const char *op, mt_error *err) {
  memset(p, 0, sizeof *p);
  p->src = malloc((size_t)(n > 0 ? n : 1) * sizeof(int));
  p->off = malloc((size_t)(n > 0 ? n : 1) * sizeof(int64_t));
  if (!p->src || !p->off) {
    st_plan_free(p);
    return mt_err(err, MT_OUT_OF_MEMORY, "%s: no memory for a gather plan of %lld elements", op,
                  (long long)n);
  }
  p->n = n;
  return MT_OK;
}

/* The output of view op opid (select, slice, transpose, t, view, reshape,
 * expand, unsqueeze, unfold; contiguous and clone: the identity) as a view
 * of its input: v holds the input's contiguous view on entry. The kwargs
 * are checked as the forward checks them (structure.c). */
mt_status mt__cpu_view_geometry(mt_op opid, const mt_call *call, st_view *v, mt_error *err);

#endif /* MT_STRUCTURE_UTIL_H */

/* reduce_mutant.h - for reduce-family mutants: which output element each
 * input element of a dense, contiguous masked input reduces into, read from
 * the call's `dim` (absent = all-reduce; an int or a tuple of ints). */
#ifndef MT_REDUCE_MUTANT_H
#define MT_REDUCE_MUTANT_H
#include "mutant.h"

typedef struct {
  int red[MT_MAX_DIMS]; /* 1 = this dim is reduced */
  int all;              /* no `dim`: every dim, indices are flat */
} mt__rm_dims;

/* 0 when the call is not a plain dense masked reduction (the mutant then
 * defers to the reference kernel). */
static inline int mt__rm_parse(const mt_call *call, const mt_tensor *x, mt__rm_dims *d) {
  const mt_kwarg *a = mt_kw_find(call->kw, "dim");
  memset(d, 0, sizeof *d);
  if (!mt__mutant_dense_masked(x)) return 0;
  int nd = x->ndim;
  if (!a) {
    d->all = 1;
    for (int k = 0; k < nd; k++) d->red[k] = 1;
    return 1;
  }
  int n = a->type == MT_KW_INT ? 1 : a->type == MT_KW_INTS ? a->n : 0;
  if (n == 0 || nd == 0) return 0;
  for (int k = 0; k < n; k++) {
    int64_t v = a->type == MT_KW_INT ? a->i : a->ints[k];
    if (v < 0) v += nd;
    if (v < 0 || v >= nd) return 0;
    d->red[v] = 1;
  }
  return 1;
}

/* Output element of input element i; *pos its index along the reduction
 * (the coordinate on the reduced dim, or i for an all-reduce). */
static inline int64_t mt__rm_out(const mt_tensor *x, const mt__rm_dims *d, int64_t i,
                                 int64_t *pos) {
  int64_t rem = i, o = 0, scale = 1;
  *pos = d->all ? i : 0;
  for (int k = x->ndim - 1; k >= 0; k--) {
    int64_t c = rem % x->shape[k];
    rem /= x->shape[k];
    if (!d->red[k]) {
      o += c * scale;
      scale *= x->shape[k];
    } else if (!d->all) {
      *pos = c;
    }
  }
  return o;
}
#endif

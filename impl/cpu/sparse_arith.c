/* sparse_arith.c - the sparse additions that torch's add/add_ run, shared by
 * the optimizers (sparse_optim.c: SGD-1) and the plain sparse binary ops
 * (binary_sparse.c: SPP-2). Moved here from sparse_optim.c unchanged. */
#include "sparse_arith.h"

/* dense d += alpha * s (s COO), entry by entry in stored order (duplicates
 * are not summed first), alpha cast to the dtype (torch's dense + sparse
 * add: `r[i] += value.to<scalar_t>() * v`). Whether the product is rounded
 * before the sum depends on torch's path: a coalesced gradient without
 * dense dims rounds it; an uncoalesced or hybrid one is one fused
 * multiply-add (float and double). float16/bfloat16 always round both.
 * Found on 200 random float32 cases of each of the four kinds, bit for bit
 * (golden/mtgen/families/sparse_optim.py's cases confirm it for both). */
void mt__cpu_dense_add_coo(mt_tensor *d, double alpha, const mt_tensor *s) {
  mt_dtype dt = d->dtype;
  double a = mt__cpu_round(dt, alpha);
  int fused = (dt == MT_float32 || dt == MT_float64) && (!s->coalesced || s->ndim > s->sparse_dim);
  int64_t row = mt_coo_row_numel(s);
  for (int64_t k = 0; k < s->nnz; k++)
    for (int64_t j = 0; j < row; j++) {
      int64_t i = mt_coo_linear(s, k) * row + j;
      double v = mt__cpu_ld(s->values, dt, k * row + j), r = mt__cpu_ld(d->values, dt, i);
      mt__cpu_st(d->values, dt, i, fused ? fma(a, v, r) : r + mt__cpu_round(dt, a * v));
    }
}

/* *t = t + alpha * s, both COO (torch's sparse + sparse add): one
 * two-pointer merge over both entry lists in their stored order, whatever
 * their coalesced flags: the entry with the smaller linear index goes
 * first; equal indices give one entry t + alpha * s (a fused multiply-add);
 * an entry of s alone is alpha * s (rounded). On unsorted input the merge
 * keeps walking (its output is then neither sorted nor summed), as torch's
 * does. The result is flagged coalesced only when both inputs are. An
 * empty operand short-cuts as in torch's add_out_sparse_cpu: s empty gives
 * t as it is, t empty gives alpha * s with s's indices and flag (no merge,
 * so no sparse add kernel either: float16 works then). */
mt_status mt__cpu_coo_add(const mt_host *h, const char *name, mt_tensor **t, double alpha,
                          const mt_tensor *s, mt_error *err) {
  mt_tensor *a = *t, *r = NULL;
  mt_dtype dt = a->dtype;
  int64_t row = mt_coo_row_numel(a), nnz = a->nnz + s->nnz, ka = 0, ks = 0, n = 0;
  double m = mt__cpu_op_scalar(dt, alpha);
  mt_status st;
  if (s->nnz == 0) return MT_OK;
  if (a->nnz == 0) {
    if ((st = mt_tensor_clone_host(h, s, &r, err)) != MT_OK) return st;
    if (alpha != 1.0)
      for (int64_t i = 0; i < s->nnz * row; i++)
        mt__cpu_st(r->values, dt, i, mt__cpu_ld(s->values, dt, i) * m);
    h->free(a);
    *t = r;
    return MT_OK;
  }
  if (dt == MT_float16 || dt == MT_bool)
    return mt_err(err, MT_DTYPE_MISMATCH, "%s: \"cadd_sparse\" not implemented for '%s'", name,
                  dt == MT_bool ? "Bool" : "Half");
  if ((st = h->coo_new(dt, a->ndim, a->shape, a->sparse_dim, nnz, &r, err)) != MT_OK) return st;
  /* entries in output order: from a (src 0), from s (src 1), or both */
  while (ka < a->nnz || ks < s->nnz) {
    int64_t la = ka < a->nnz ? mt_coo_linear(a, ka) : INT64_MAX;
    int64_t ls = ks < s->nnz ? mt_coo_linear(s, ks) : INT64_MAX;
    int take_a = la <= ls, take_s = ls <= la;
    const mt_tensor *src = take_a ? a : s;
    int64_t k = take_a ? ka : ks;
    for (int d = 0; d < a->sparse_dim; d++)
      r->indices[d * nnz + n] = src->indices[d * src->nnz + k];
    for (int64_t j = 0; j < row; j++) {
      double va = take_a ? mt__cpu_ld(a->values, dt, ka * row + j) : 0.0;
      double vs = take_s ? mt__cpu_ld(s->values, dt, ks * row + j) : 0.0;
      double v = !take_s ? va : !take_a ? (alpha == 1.0 ? vs : vs * m) : fma(m, vs, va);
      mt__cpu_st(r->values, dt, n * row + j, v);
    }
    ka += take_a;
    ks += take_s;
    n++;
  }
  if (n < nnz) { /* merged entries: shrink (indices are [sparse_dim, nnz] rows) */
    for (int d = 1; d < a->sparse_dim; d++)
      memmove(r->indices + d * n, r->indices + d * nnz, (size_t)n * sizeof(int64_t));
    r->nnz = n;
  }
  r->coalesced = a->coalesced && s->coalesced;
  h->free(a);
  *t = r;
  return MT_OK;
}

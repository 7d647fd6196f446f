/* binary_sparse.c - add, sub, mul, div and their in-place forms on plain
 * (not masked) sparse operands, as torch 2.15's sparse kernels compute them
 * (spec/SEMANTICS.md "Plain sparse pointwise", SPP-2 .. SPP-6).
 *
 * SPP-2  add/sub(S, S, alpha): one merge of both entry lists in stored
 *        order (sparse_arith.c), explicit zeros kept, the result flagged
 *        coalesced only when both operands are; CSR + CSR: the sorted union
 *        per row, a + round(alpha * b).
 * SPP-3  add/sub(D, S, alpha) -> dense (CSR too, on either side); S + D and
 *        S + number are refused (LAYOUT_MISMATCH).
 * SPP-4  mul(S, S): torch's intersection (below); mul(S, D), mul(D, S):
 *        S's structure in stored order; D.mul_(S) makes D dense.
 * SPP-5  mul/div by a number or a 0-d tensor: values mapped, structure kept;
 *        S.mul_ clears the coalesced flag, S.div_ keeps it; div by anything
 *        else is refused; CSR: mul only.
 * SPP-6  dtypes: torch's result type; the dtypes each sparse kernel lacks;
 *        in place keeps self's dtype.
 *
 * Values are computed in double from operands rounded to the compute type
 * (float for float32/float16/bfloat16, double for float64) and rounded once,
 * half types through float; integers wrap. The CPU reference is CSR-only
 * among the compressed layouts: CSC/BSR/BSC operands are NOT_SUPPORTED. */
#include "binary_sparse.h"

#include <inttypes.h>

#include "cpu_util.h"
#include "sparse_arith.h"

typedef enum { K_ADD, K_SUB, K_MUL, K_DIV } bs_kind;

/* X(op, kind, in place) */
#define BS_OPS(X)                                                                        \
  X(add, K_ADD, 0)                                                                       \
  X(sub, K_SUB, 0) X(mul, K_MUL, 0) X(div, K_DIV, 0) X(add_, K_ADD, 1) X(sub_, K_SUB, 1) \
      X(mul_, K_MUL, 1) X(div_, K_DIV, 1)

static int find_op(mt_op op, bs_kind *k, int *inplace) {
#define X(o, kk, ip)     \
  if (op == MT_OP_##o) { \
    *k = kk;             \
    *inplace = ip;       \
    return 1;            \
  }
  BS_OPS(X)
#undef X
  return 0;
}

static int is_sparse(const mt_tensor *t) {
  return t->kind == MT_KIND_COO || mt_kind_is_compressed(t->kind);
}
/* a 2-d CSR tensor: the compressed operand of mul (torch has no other) */
static int plain_csr(const mt_tensor *t) {
  return t->kind == MT_KIND_CSR && t->ndim == 2 && t->dense_dim == 0;
}
/* torch's layout names, as "unsupported tensor layout: Sparse<...>" spells them */
static const char *layout_name(mt_kind k) {
  switch (k) {
  case MT_KIND_CSC:
    return "unsupported tensor layout: SparseCsc";
  case MT_KIND_BSR:
    return "unsupported tensor layout: SparseBsr";
  case MT_KIND_BSC:
    return "unsupported tensor layout: SparseBsc";
  default:
    return "unsupported tensor layout: SparseCsr";
  }
}

int mt__cpu_binary_is_plain_sparse(const mt_call *call) {
  if (call->n_in < 2 || !call->in || !call->in[0] || !call->in[1]) return 0;
  const mt_tensor *a = call->in[0], *b = call->in[1];
  if (a->kind == MT_KIND_MASKED || b->kind == MT_KIND_MASKED) return 0;
  return is_sparse(a) || is_sparse(b);
}

/* ---- dtypes (SPP-6) ------------------------------------------------------ */

static int cat(mt_dtype d) { return d == MT_bool ? 0 : mt_dtype_is_float(d) ? 2 : 1; }
static int width(mt_dtype d) {
  switch (d) {
  case MT_float64:
  case MT_int64:
    return 3;
  case MT_float32:
  case MT_int32:
    return 2;
  default:
    return 1;
  }
}

static mt_dtype promote(mt_dtype a, mt_dtype b) {
  if (a == b) return a;
  if (cat(a) != cat(b)) return cat(a) > cat(b) ? a : b;
  if ((a == MT_float16 && b == MT_bfloat16) || (a == MT_bfloat16 && b == MT_float16))
    return MT_float32;
  return width(a) >= width(b) ? a : b;
}

/* torch.result_type: tensors with dims, then 0-d tensors, then Python
 * numbers (a float number counts as float32, an int as int64) each win
 * only with a higher category. */
static mt_dtype result_type(const mt_tensor *a, const mt_tensor *b) {
  const mt_tensor *t[2] = {a, b};
  int have[3] = {0, 0, 0};
  mt_dtype cls[3] = {MT_bool, MT_bool, MT_bool};
  for (int k = 0; k < 2; k++) {
    int level = t[k]->kind == MT_KIND_SCALAR ? 2 : (t[k]->kind == MT_KIND_DENSE && t[k]->ndim == 0);
    mt_dtype d = t[k]->dtype;
    if (level == 2) d = mt_dtype_is_float(d) ? MT_float32 : d == MT_bool ? MT_bool : MT_int64;
    cls[level] = have[level] ? promote(cls[level], d) : d;
    have[level] = 1;
  }
  mt_dtype r = have[0] ? cls[0] : have[1] ? cls[1] : cls[2];
  for (int l = 1; l < 3; l++)
    if (have[l] && cat(cls[l]) > cat(r)) r = cls[l];
  return r;
}

/* ---- elements ------------------------------------------------------------ */

/* v rounded to the compute type of result dtype rt */
static double ct(mt_dtype rt, double v) { return rt == MT_float64 ? v : (double)(float)v; }

static void cast_elem(void *out, mt_dtype ot, int64_t i, const void *in, mt_dtype it, int64_t j) {
  if (mt_dtype_is_float(ot))
    mt__cpu_st(out, ot, i, mt__cpu_ld(in, it, j));
  else
    mt__cpu_sti(out, ot, i, mt__cpu_ldi(in, it, j));
}

/* out[i] = a[ia] * b[ib] (or /) in result dtype rt */
static void put(void *out, mt_dtype rt, int64_t i, bs_kind k, const void *a, mt_dtype at,
                int64_t ia, const void *b, mt_dtype bt, int64_t ib) {
  if (mt_dtype_is_float(rt)) {
    double x = ct(rt, mt__cpu_ld(a, at, ia)), y = ct(rt, mt__cpu_ld(b, bt, ib));
    mt__cpu_st(out, rt, i, ct(rt, k == K_DIV ? x / y : x * y));
  } else if (rt == MT_bool) {
    mt__cpu_sti(out, rt, i, mt__cpu_ldi(a, at, ia) && mt__cpu_ldi(b, bt, ib));
  } else {
    uint64_t x = (uint64_t)mt__cpu_ldi(a, at, ia), y = (uint64_t)mt__cpu_ldi(b, bt, ib);
    mt__cpu_sti(out, rt, i, (int64_t)(x * y));
  }
}

static int64_t n_values(const mt_tensor *t) {
  mt_cgeom g;
  if (mt_kind_is_compressed(t->kind)) return mt_cgeom_of(t, &g) ? g.batches * t->nnz * g.entry : 0;
  return t->kind == MT_KIND_COO ? t->nnz * mt_coo_row_numel(t) : mt_numel(t);
}


/* A copy of t (COO, CSR or dense) with its values cast to dt, allocated by h. */
static mt_status cast_copy(const mt_host *h, const mt_tensor *t, mt_dtype dt, mt_tensor **out,
                           mt_error *err) {
  const mt_tensor *v = t;
  mt_tensor *tmp = NULL;
  mt_status st;
  *out = NULL;
  if (t->kind == MT_KIND_COO) {
    st = h->coo_new(dt, t->ndim, t->shape, t->sparse_dim, t->nnz, out, err);
    if (st == MT_OK && t->nnz && t->sparse_dim)
      memcpy((*out)->indices, t->indices, (size_t)t->sparse_dim * (size_t)t->nnz * sizeof(int64_t));
    if (st == MT_OK) (*out)->coalesced = t->coalesced;
  } else if (mt_kind_is_compressed(t->kind)) {
    st = mt__cpu_compressed_like(h, t, dt, out, err);
  } else {
    if ((st = mt__cpu_contig(t, &v, &tmp, err)) == MT_OK)
      st = h->dense_new(dt, t->ndim, t->shape, out, err);
  }
  if (st != MT_OK) goto out;
  for (int64_t i = 0; i < n_values(v); i++)
    cast_elem((*out)->values, dt, i, v->values, v->dtype, i);
out:
  mt_tensor_free(tmp);
  return st;
}

/* *t cast to dt in place of itself (the in-place forms keep self's dtype) */
static mt_status recast(const mt_host *h, mt_tensor **t, mt_dtype dt, mt_error *err) {
  if ((*t)->dtype == dt) return MT_OK;
  mt_tensor *r = NULL;
  mt_status st = cast_copy(h, *t, dt, &r, err);
  if (st != MT_OK) return st;
  h->free(*t);
  *t = r;
  return MT_OK;
}

static int same_shape(const mt_tensor *a, const mt_tensor *b) {
  return a->ndim == b->ndim && !memcmp(a->shape, b->shape, (size_t)a->ndim * sizeof a->shape[0]);
}

static mt_status layout_refused(const char *name, const char *why, mt_error *err) {
  return mt_err(err, MT_LAYOUT_MISMATCH, "%s: %s", name, why);
}

#define ADD_SD "add(sparse, dense) is not supported. Use add(dense, sparse) instead."
#define CSR_LAYOUT "unsupported tensor layout: SparseCsr"
#define DIV_SD "Sparse division requires a scalar or zero-dim dense tensor divisor"

/* ---- add / sub (SPP-2, SPP-3) ------------------------------------------------ */

static mt_status coo_coo_add(const mt_host *h, const char *name, const mt_tensor *a,
                             const mt_tensor *b, double alpha, mt_dtype rt, mt_tensor **out,
                             mt_error *err) {
  char s0[64], s1[64];
  mt_tensor *s = NULL;
  mt_status st;
  if (!same_shape(a, b))
    return mt_err(err, MT_SHAPE_MISMATCH,
                  "%s: expected sizes of 'self' and 'other' to match, but %s != %s", name,
                  mt_shape_str(a->ndim, a->shape, s0, sizeof s0),
                  mt_shape_str(b->ndim, b->shape, s1, sizeof s1));
  if (a->sparse_dim != b->sparse_dim)
    return mt_err(err, MT_INVALID_ARGUMENT,
                  "%s: expected 'self' and 'other' to have same density, but 'self' has %d sparse "
                  "dimensions while 'other' has %d sparse dimensions",
                  name, a->sparse_dim, b->sparse_dim);
  if ((st = cast_copy(h, a, rt, out, err)) != MT_OK) return st;
  if ((st = cast_copy(h, b, rt, &s, err)) != MT_OK) goto out;
  st = mt__cpu_coo_add(h, name, out, alpha, s, err); /* float16/bool: refused unless empty */
out:
  if (s) h->free(s);
  return st;
}

/* compressed + alpha compressed, one kind (CSR, CSC, BSR, BSC, batched):
 * per batch and compressed slot the sorted union of the plain indices;
 * entries of both give a + round(alpha * b) (each value of a block or
 * dense row), of b alone round(alpha * b) (torch's CPU kernel, float and
 * double only, one dtype). */
static mt_status cmp_add(const mt_host *h, const char *name, const mt_tensor *a, const mt_tensor *b,
                         double alpha, mt_tensor **out, mt_error *err) {
  char s0[64], s1[64];
  mt_dtype dt = a->dtype;
  mt_cgeom ga, gb;
  if (!same_shape(a, b) || !mt_cgeom_of(a, &ga) || !mt_cgeom_of(b, &gb) || ga.bh != gb.bh ||
      ga.bw != gb.bw || a->dense_dim != b->dense_dim)
    return mt_err(err, MT_SHAPE_MISMATCH,
                  "%s: Expected input tensors to have the same shape, but got tensor `self` with "
                  "shape %s and tensor `other` with shape %s",
                  name, mt_shape_str(a->ndim, a->shape, s0, sizeof s0),
                  mt_shape_str(b->ndim, b->shape, s1, sizeof s1));
  if (!mt__cpu_is_f(a->dtype) || !mt__cpu_is_f(b->dtype))
    return mt_err(err, MT_DTYPE_MISMATCH,
                  "%s: \"add_out_sparse_csr_impl_mkl\" not implemented for '%s'", name,
                  mt__cpu_torch_type(mt__cpu_is_f(a->dtype) ? b->dtype : a->dtype));
  if (a->dtype != b->dtype)
    return mt_err(err, MT_DTYPE_MISMATCH, "%s: expected scalar type %s but found %s", name,
                  mt__cpu_torch_type(b->dtype), mt__cpu_torch_type(a->dtype));
  int64_t E = ga.entry, nnz = 0;
  double m = ct(dt, alpha);
  for (int pass = 0; pass < 2; pass++) {
    int64_t most = 0;
    for (int64_t bt = 0; bt < ga.batches; bt++) {
      const int64_t *ca = a->crow_indices + bt * (ga.ncomp + 1),
                    *cb = b->crow_indices + bt * (ga.ncomp + 1);
      const int64_t *pa = a->col_indices + bt * a->nnz, *pb = b->col_indices + bt * b->nnz;
      int64_t n = 0;
      for (int64_t r = 0; r < ga.ncomp; r++) {
        int64_t i = ca[r], ie = ca[r + 1], j = cb[r], je = cb[r + 1];
        while (i < ie || j < je) {
          int64_t xa = i < ie ? pa[i] : INT64_MAX, xb = j < je ? pb[j] : INT64_MAX;
          int ta = xa <= xb, tb = xb <= xa;
          if (pass) {
            int64_t o = bt * nnz + n;
            (*out)->col_indices[o] = ta ? xa : xb;
            for (int64_t e = 0; e < E; e++) {
              double va = ta ? mt__cpu_ld(a->values, dt, (bt * a->nnz + i) * E + e) : 0.0;
              double vb =
                  tb ? ct(dt, m * mt__cpu_ld(b->values, dt, (bt * b->nnz + j) * E + e)) : 0.0;
              mt__cpu_st((*out)->values, dt, o * E + e, !tb ? va : !ta ? vb : va + vb);
            }
          }
          i += ta;
          j += tb;
          n++;
        }
        if (pass) (*out)->crow_indices[bt * (ga.ncomp + 1) + r + 1] = n;
      }
      if (n > most) most = n;
      if (pass) (*out)->crow_indices[bt * (ga.ncomp + 1)] = 0;
    }
    if (!pass) {
      /* torch's batches share one nnz: the union has it per batch here (the
       * batches of one pattern give one count) */
      nnz = most;
      mt_status st = h->compressed_new(a->kind, dt, a->ndim, a->shape, a->dense_dim, a->blocksize,
                                       nnz, out, err);
      if (st != MT_OK) return st;
    }
  }
  return MT_OK;
}

/* dense d + alpha * s, s COO or CSR of d's shape: dense (SPP-3) */
static mt_status dense_add_sparse(const mt_host *h, const char *name, const mt_tensor *d,
                                  const mt_tensor *s, double alpha, mt_dtype rt, mt_tensor **out,
                                  mt_error *err) {
  char s0[64], s1[64];
  mt_tensor *sc = NULL;
  mt_status st;
  if (!same_shape(d, s))
    return mt_err(err, MT_SHAPE_MISMATCH,
                  "%s: expected 'self' and 'other' to have same size, but self has size %s while "
                  "other has size %s (FYI: dense-sparse addition does not currently support "
                  "broadcasting)",
                  name, mt_shape_str(d->ndim, d->shape, s0, sizeof s0),
                  mt_shape_str(s->ndim, s->shape, s1, sizeof s1));
  if ((st = cast_copy(h, d, rt, out, err)) != MT_OK) return st;
  if ((st = cast_copy(h, s, rt, &sc, err)) != MT_OK) goto out;
  if (s->kind == MT_KIND_COO) {
    mt__cpu_dense_add_coo(*out, alpha, sc);
  } else {
    /* CSR, CSC, batched (torch refuses BSR/BSC before): r + round(alpha *
     * v), entry by entry; dense elements d of an entry are contiguous */
    double m = ct(rt, alpha);
    mt_cgeom g;
    if (!mt_cgeom_of(sc, &g)) goto out;
    for (int64_t bt = 0; bt < g.batches; bt++)
      for (int64_t r = 0; r < g.ncomp; r++) {
        const int64_t *crow = sc->crow_indices + bt * (g.ncomp + 1);
        for (int64_t k = crow[r]; k < crow[r + 1]; k++) {
          int64_t plain = sc->col_indices[bt * sc->nnz + k];
          int64_t row = g.by_col ? plain : r, col = g.by_col ? r : plain;
          for (int64_t e = 0; e < g.dense; e++) {
            int64_t i = ((bt * g.rows + row) * g.cols + col) * g.dense + e;
            int64_t iv = (bt * sc->nnz + k) * g.dense + e;
            if (mt_dtype_is_float(rt))
              mt__cpu_st((*out)->values, rt, i,
                         ct(rt, mt__cpu_ld((*out)->values, rt, i) +
                                    ct(rt, m * mt__cpu_ld(sc->values, rt, iv))));
            else
              mt__cpu_sti((*out)->values, rt, i,
                          mt__cpu_ldi((*out)->values, rt, i) +
                              (int64_t)alpha * mt__cpu_ldi(sc->values, rt, iv));
          }
        }
      }
  }
out:
  if (sc) h->free(sc);
  return st;
}

/* ---- mul (SPP-4) ------------------------------------------------------------ */

/* mul(x, y), both COO: torch's sparse_binary_op_intersection. An empty
 * operand gives an empty coalesced result. The `source` is the one whose
 * entries the result keeps (in its stored order), `pc` the one searched:
 * with exactly one operand coalesced, pc is that one; else pc is the
 * larger by nnz (x on a tie). Both coalesced: only source entries found in
 * pc are kept (the result is coalesced). Otherwise every source entry is
 * kept, uncoalesced: found ones get source * (sum of pc's matches), the
 * others 0. */
static mt_status coo_mul(const mt_host *h, const char *name, const mt_tensor *x, const mt_tensor *y,
                         mt_dtype rt, mt_tensor **out, mt_error *err) {
  mt_tensor *xc = NULL, *yc = NULL, *acc = NULL;
  mt_status st;
  if (!same_shape(x, y) || x->sparse_dim != y->sparse_dim)
    return mt_err(err, MT_SHAPE_MISMATCH,
                  "%s: sparse_binary_op_intersection_cpu(): expects sparse inputs with equal "
                  "dimensionality, number of sparse dimensions, and shape of sparse dimensions",
                  name);
  /* both coalesced: torch's mul_out_sparse, which has no bool kernel (the
   * intersection kernel of the other cases has one) */
  if (rt == MT_bool && x->coalesced && y->coalesced)
    return mt_err(err, MT_DTYPE_MISMATCH, "%s: \"mul_out_sparse\" not implemented for 'Bool'",
                  name);
  if (x->nnz == 0 || y->nnz == 0) {
    if ((st = h->coo_new(rt, x->ndim, x->shape, x->sparse_dim, 0, out, err)) == MT_OK)
      (*out)->coalesced = 1;
    return st;
  }
  if ((st = cast_copy(h, x, rt, &xc, err)) != MT_OK) goto out;
  if ((st = cast_copy(h, y, rt, &yc, err)) != MT_OK) goto out;
  int both = x->coalesced && y->coalesced;
  const mt_tensor *pc, *src;
  if (x->coalesced != y->coalesced) {
    pc = x->coalesced ? xc : yc;
  } else {
    pc = x->nnz >= y->nnz ? xc : yc;
  }
  src = pc == xc ? yc : xc;
  int64_t row = mt_coo_row_numel(src), n = 0;
  if ((st = h->dense_new(rt, 1, &row, &acc, err)) != MT_OK) goto out;
  int64_t cap = src->nnz;
  if ((st = h->coo_new(rt, src->ndim, src->shape, src->sparse_dim, cap, out, err)) != MT_OK)
    goto out;
  for (int64_t k = 0; k < src->nnz; k++) {
    int64_t lin = mt_coo_linear(src, k), found = 0;
    for (int64_t j = 0; j < row; j++) mt__cpu_st(acc->values, rt, j, 0.0);
    for (int64_t q = 0; q < pc->nnz; q++) {
      if (mt_coo_linear(pc, q) != lin) continue;
      for (int64_t j = 0; j < row; j++) {
        if (mt_dtype_is_float(rt))
          mt__cpu_st(
              acc->values, rt, j,
              ct(rt, mt__cpu_ld(acc->values, rt, j) + mt__cpu_ld(pc->values, rt, q * row + j)));
        else
          mt__cpu_sti(acc->values, rt, j,
                      mt__cpu_ldi(acc->values, rt, j) + mt__cpu_ldi(pc->values, rt, q * row + j));
      }
      found = 1;
    }
    if (!found && both) continue;
    for (int d = 0; d < src->sparse_dim; d++)
      (*out)->indices[(int64_t)d * cap + n] = src->indices[(int64_t)d * src->nnz + k];
    for (int64_t j = 0; j < row; j++) {
      if (found)
        put((*out)->values, rt, n * row + j, K_MUL, src->values, rt, k * row + j, acc->values, rt,
            j);
      else
        mt__cpu_st((*out)->values, rt, n * row + j, 0.0);
    }
    n++;
  }
  if (n < cap) { /* filtered: shrink (indices are [sparse_dim, nnz] rows) */
    for (int d = 1; d < src->sparse_dim; d++)
      memmove((*out)->indices + (int64_t)d * n, (*out)->indices + (int64_t)d * cap,
              (size_t)n * sizeof(int64_t));
    (*out)->nnz = n;
  }
  (*out)->coalesced = both;
out:
  if (xc) h->free(xc);
  if (yc) h->free(yc);
  if (acc) h->free(acc);
  return st;
}

/* The flat index into contiguous dense d (broadcast against shape of ndim
 * dims: d's dims align right, size-1 dims repeat) of the full coords c. */
static int64_t bcast_index(const mt_tensor *d, int ndim, const int64_t *c) {
  int64_t i = 0, off = ndim - d->ndim;
  for (int k = 0; k < d->ndim; k++) i = i * d->shape[k] + (d->shape[k] == 1 ? 0 : c[k + off]);
  return i;
}

/* d broadcasts to s's shape without growing it: SHAPE_MISMATCH as torch
 * words it, NOT_SUPPORTED where torch would broadcast s (no case). */
static mt_status check_bcast(const char *name, const mt_tensor *s, const mt_tensor *d,
                             mt_error *err) {
  if (d->ndim > s->ndim)
    return mt_err(err, MT_NOT_SUPPORTED,
                  "%s: a dense operand of more dims than the sparse one: not implemented by the "
                  "CPU backend",
                  name);
  for (int k = 0; k < d->ndim; k++) {
    int64_t ds = d->shape[d->ndim - 1 - k], ss = s->shape[s->ndim - 1 - k];
    if (ds == ss || ds == 1) continue;
    if (ss == 1)
      return mt_err(err, MT_NOT_SUPPORTED,
                    "%s: a dense operand that broadcasts the sparse one: not implemented by the "
                    "CPU backend",
                    name);
    return mt_err(err, MT_SHAPE_MISMATCH,
                  "%s: The size of tensor a (%" PRId64 ") must match the size of tensor b (%" PRId64
                  ") at non-singleton dimension %d",
                  name, ss, ds, s->ndim - 1 - k);
  }
  return MT_OK;
}

/* mul(S, D) / mul(D, S) with S COO: S's indices in stored order, values
 * S * D at each entry's coordinates. dense_out: D.mul_(S), the dense
 * tensor D becomes (zero where S stores nothing, duplicates summed). */
static mt_status coo_mul_dense(const mt_host *h, const char *name, const mt_tensor *s,
                               const mt_tensor *d, mt_dtype rt, int dense_out, mt_tensor **out,
                               mt_error *err) {
  const mt_tensor *dv = NULL;
  mt_tensor *dtmp = NULL, *r = NULL;
  mt_status st;
  if ((st = check_bcast(name, s, d, err)) != MT_OK) return st;
  if ((st = mt__cpu_contig(d, &dv, &dtmp, err)) != MT_OK) return st;
  if ((st = h->coo_new(rt, s->ndim, s->shape, s->sparse_dim, s->nnz, &r, err)) != MT_OK) goto out;
  if (s->nnz && s->sparse_dim)
    memcpy(r->indices, s->indices, (size_t)s->sparse_dim * (size_t)s->nnz * sizeof(int64_t));
  r->coalesced = s->coalesced;
  int64_t row = mt_coo_row_numel(s), c[MT_MAX_DIMS] = {0};
  for (int64_t k = 0; k < s->nnz; k++)
    for (int64_t j = 0; j < row; j++) {
      for (int q = 0; q < s->sparse_dim; q++) c[q] = s->indices[(int64_t)q * s->nnz + k];
      int64_t rem = j;
      for (int q = s->ndim - 1; q >= s->sparse_dim; q--) {
        c[q] = rem % s->shape[q];
        rem /= s->shape[q];
      }
      put(r->values, rt, k * row + j, K_MUL, s->values, s->dtype, k * row + j, dv->values,
          dv->dtype, bcast_index(dv, s->ndim, c));
    }
  if (dense_out) {
    st = mt_to_dense(r, out, err); /* core-allocated: re-home it through h */
    if (st == MT_OK) {
      mt_tensor *hd = NULL;
      st = cast_copy(h, *out, rt, &hd, err);
      mt_tensor_free(*out);
      *out = hd;
    }
    h->free(r);
    r = NULL;
  } else {
    *out = r;
    r = NULL;
  }
out:
  mt_tensor_free(dtmp);
  if (r) h->free(r);
  return st;
}

/* mul of two CSR tensors: per row the columns both store (torch's
 * intersection; CSR is always coalesced). */
static mt_status csr_mul(const mt_host *h, const char *name, const mt_tensor *a, const mt_tensor *b,
                         mt_dtype rt, mt_tensor **out, mt_error *err) {
  if (!same_shape(a, b))
    return mt_err(err, MT_SHAPE_MISMATCH,
                  "%s: sparse_binary_op_intersection_cpu(): expects sparse inputs with equal "
                  "dimensionality, number of sparse dimensions, and shape of sparse dimensions",
                  name);
  if (rt == MT_bool)
    return mt_err(err, MT_DTYPE_MISMATCH, "%s: \"mul_out_sparse\" not implemented for 'Bool'",
                  name);
  int64_t rows = a->shape[0];
  for (int pass = 0; pass < 2; pass++) {
    int64_t n = 0;
    for (int64_t r = 0; r < rows; r++) {
      for (int64_t i = a->crow_indices[r]; i < a->crow_indices[r + 1]; i++)
        for (int64_t j = b->crow_indices[r]; j < b->crow_indices[r + 1]; j++) {
          if (a->col_indices[i] != b->col_indices[j]) continue;
          if (pass) {
            (*out)->col_indices[n] = a->col_indices[i];
            put((*out)->values, rt, n, K_MUL, a->values, a->dtype, i, b->values, b->dtype, j);
          }
          n++;
        }
      if (pass) (*out)->crow_indices[r + 1] = n;
    }
    if (!pass) {
      mt_status st = h->csr_new(rt, rows, a->shape[1], n, out, err);
      if (st != MT_OK) return st;
      (*out)->crow_indices[0] = 0;
    }
  }
  return MT_OK;
}

/* mul(CSR, D) / mul(D, CSR): the CSR structure, values times D at each
 * entry (D of the CSR's shape: torch's sparse_mask refuses others). */
static mt_status csr_mul_dense(const mt_host *h, const char *name, const mt_tensor *s,
                               const mt_tensor *d, mt_dtype rt, mt_tensor **out, mt_error *err) {
  const mt_tensor *dv = NULL;
  mt_tensor *dtmp = NULL;
  char s0[64], s1[64];
  mt_status st;
  if (!same_shape(s, d))
    return mt_err(err, MT_SHAPE_MISMATCH,
                  "%s: sparse_mask(): operands have incompatible sizes; self has size %s but mask "
                  "has size %s",
                  name, mt_shape_str(d->ndim, d->shape, s0, sizeof s0),
                  mt_shape_str(s->ndim, s->shape, s1, sizeof s1));
  if ((st = mt__cpu_contig(d, &dv, &dtmp, err)) != MT_OK) return st;
  if ((st = mt__cpu_compressed_like(h, s, rt, out, err)) != MT_OK) goto out;
  for (int64_t r = 0; r < s->shape[0]; r++)
    for (int64_t k = s->crow_indices[r]; k < s->crow_indices[r + 1]; k++)
      put((*out)->values, rt, k, K_MUL, s->values, s->dtype, k, dv->values, dv->dtype,
          r * s->shape[1] + s->col_indices[k]);
out:
  mt_tensor_free(dtmp);
  return st;
}

/* ---- by a number (SPP-5) ------------------------------------------------------ */

/* S (op) number, or a 0-d tensor: the structure kept, each value mapped. */
static mt_status scale(const mt_host *h, const mt_tensor *s, bs_kind k, const mt_tensor *num,
                       mt_dtype rt, mt_tensor **out, mt_error *err) {
  mt_status st;
  if (mt_kind_is_compressed(s->kind)) {
    st = mt__cpu_compressed_like(h, s, rt, out, err);
  } else {
    st = h->coo_new(rt, s->ndim, s->shape, s->sparse_dim, s->nnz, out, err);
    if (st == MT_OK && s->nnz && s->sparse_dim)
      memcpy((*out)->indices, s->indices, (size_t)s->sparse_dim * (size_t)s->nnz * sizeof(int64_t));
    if (st == MT_OK) (*out)->coalesced = s->coalesced;
  }
  if (st != MT_OK) return st;
  for (int64_t i = 0; i < n_values(s); i++)
    put((*out)->values, rt, i, k, s->values, s->dtype, i, num->values, num->dtype, 0);
  return MT_OK;
}

/* ---- the kernel ------------------------------------------------------------------ */

static int is_number(const mt_tensor *t) {
  return t->kind == MT_KIND_SCALAR || (t->kind == MT_KIND_DENSE && t->ndim == 0);
}

mt_status mt__cpu_binary_sparse(mt_call *call, mt_op op, mt_error *err) {
  const char *name = mt_op_name(op);
  const mt_host *h = mt__cpu_host(call);
  mt_tensor *out = NULL;
  bs_kind k;
  int ip = 0;
  char what[32];
  mt_status st;

  mt__cpu_begin(call);
  if (!find_op(op, &k, &ip))
    return mt_err(err, MT_NOT_SUPPORTED,
                  "%s: plain sparse operands: the CPU backend implements add, sub, mul, div and "
                  "their in-place forms",
                  name);
  if ((st = mt__kw_check(op, call->kw, err)) != MT_OK) return st;
  const mt_tensor *a = call->in[0], *b = call->in[1];
  for (int i = 0; i < 2; i++)
    if (call->in[i]->kind != MT_KIND_SCALAR &&
        (st = mt_tensor_validate(call->in[i], mt__cpu_in_name(i, what, sizeof what), err)) != MT_OK)
      return st;
  if (a->kind == MT_KIND_SCALAR)
    return mt_err(err, MT_NOT_SUPPORTED,
                  "%s: a number as the left operand of a sparse tensor: "
                  "not implemented by the CPU backend",
                  name);
  const mt_kwarg *ak = mt_kw_find(call->kw, "alpha");
  double alpha = mt_kw_float(call->kw, "alpha", 1.0);
  if (k == K_SUB) alpha = -alpha;
  mt_dtype rt = result_type(a, b);
  /* true division: integer and bool operands give the default float32 */
  if (k == K_DIV && !mt_dtype_is_float(rt)) rt = MT_float32;
  if (ak && ak->type == MT_KW_FLOAT && !mt_dtype_is_float(rt))
    return mt_err(err, MT_INVALID_ARGUMENT,
                  "%s: For integral input tensors, argument alpha must not be a floating point "
                  "number.",
                  name);
  /* SPP-6: in place, self keeps its dtype: a result of a higher category
   * is refused (torch's wording differs per path) */
  if (ip && cat(rt) > cat(a->dtype))
    return mt_err(err, MT_DTYPE_MISMATCH,
                  "%s: result type %s can't be cast to the desired output "
                  "type %s",
                  name, mt__cpu_torch_type(rt), mt__cpu_torch_type(a->dtype));
  int sa = is_sparse(a), sb = is_sparse(b);
  if (sa && sb && a->kind != b->kind)
    return layout_refused(name, "operands of two sparse layouts: torch refuses the mix", err);
  const mt_tensor *sp = sa ? a : b;
  int cmp = mt_kind_is_compressed(sp->kind);
  /* SPP-7: of the compressed kinds only 2-d CSR multiplies; none divides
   * or subtracts; BSR/BSC do not meet a dense tensor in add */
  if (cmp && (k == K_SUB || k == K_DIV)) return layout_refused(name, layout_name(sp->kind), err);
  if (cmp && k == K_MUL && !plain_csr(sp) && !(is_number(a) || is_number(b)))
    return layout_refused(
        name,
        sp->kind == MT_KIND_CSC ? "Expected result Tensor to be of format CSR"
        : sp->kind == MT_KIND_CSR
            ? "coo_to_sparse_csr: conversion from Sparse to SparseCsr for input tensors with "
              "sparse_dim() != 2"
            : "empty_sparse_compressed expected sparse compressed (non-block) tensor layout",
        err);
  if (cmp && k == K_ADD && !(sa && sb) && mt_kind_is_blocked(sp->kind))
    return layout_refused(
        name, "src.layout() == kSparseCsr || src.layout() == kSparseCsc INTERNAL ASSERT FAILED",
        err);

  if (k == K_ADD || k == K_SUB) {
    if (sa && !sb) {
      /* CSR + dense out of place is dense, as D + CSR; S + number, COO +
       * dense and every in-place form on sparse self are refused */
      if (cmp && b->kind == MT_KIND_DENSE && !ip && k == K_ADD) {
        if (alpha != 1.0)
          return mt_err(err, MT_NOT_SUPPORTED,
                        "%s: CSR + alpha * dense, alpha != 1: not implemented by the CPU backend",
                        name);
        st = dense_add_sparse(h, name, b, a, 1.0, rt, &out, err);
        goto done;
      }
      return layout_refused(name,
                            cmp && ip && b->kind == MT_KIND_DENSE
                                ? "Sparse CSR tensors do not have is_contiguous"
                            : a->kind == MT_KIND_CSR && k == K_SUB ? CSR_LAYOUT
                                                                   : ADD_SD,
                            err);
    }
    if (k == K_SUB && (a->kind == MT_KIND_CSR || b->kind == MT_KIND_CSR))
      return layout_refused(name, CSR_LAYOUT, err);
    if (a->kind == MT_KIND_COO)
      st = coo_coo_add(h, name, a, b, alpha, rt, &out, err);
    else if (mt_kind_is_compressed(a->kind) && a->kind != MT_KIND_CSR)
      /* SPP-7: two CSC/BSR/BSC tensors take torch's CSR-only MKL path
       * ("crow_indices expected sparse row compressed tensor layout", an
       * MKL error for BSR); only add(x, x) of one tensor object runs */
      return layout_refused(name, "add of two CSC/BSR/BSC tensors: torch's add path is CSR only",
                            err);
    else if (mt_kind_is_compressed(a->kind))
      st = cmp_add(h, name, a, b, alpha, &out, err);
    else
      st = dense_add_sparse(h, name, a, b, alpha, rt, &out, err);
  } else if (k == K_MUL) {
    if (sa && sb) {
      st = a->kind == MT_KIND_COO ? coo_mul(h, name, a, b, rt, &out, err)
                                  : csr_mul(h, name, a, b, rt, &out, err);
    } else if (is_number(b) && sa) {
      if (ip && rt != a->dtype)
        return mt_err(err, MT_DTYPE_MISMATCH,
                      "%s: dtype of values (%s) must match dtype of sparse tensor (%s)", name,
                      mt__cpu_torch_type(rt), mt__cpu_torch_type(a->dtype));
      st = scale(h, a, K_MUL, b, rt, &out, err);
    } else if (is_number(a) && sb) {
      st = scale(h, b, K_MUL, a, rt, &out, err);
    } else {
      const mt_tensor *s = sa ? a : b, *d = sa ? b : a;
      if (cmp && ip && !sa)
        return layout_refused(name, "Expected result Tensor to be of format CSR", err);
      st = s->kind == MT_KIND_COO ? coo_mul_dense(h, name, s, d, rt, ip && !sa, &out, err)
                                  : csr_mul_dense(h, name, s, d, rt, &out, err);
    }
    /* SPP-5: S.mul_ leaves self flagged uncoalesced (torch's in-place
     * sparse mul rebuilds self without the flag) */
    if (st == MT_OK && ip && sa && out->kind == MT_KIND_COO && !sb) out->coalesced = 0;
  } else { /* K_DIV */
    if (!sa || !is_number(b)) return layout_refused(name, DIV_SD, err);
    if (a->kind == MT_KIND_CSR) return layout_refused(name, CSR_LAYOUT, err);
    st = scale(h, a, K_DIV, b, rt, &out, err);
  }
done:
  if (st != MT_OK) goto fail;
  if (ip && (st = recast(h, &out, a->dtype, err)) != MT_OK) goto fail;
  call->out[0] = out;
  call->n_out = 1;
  return MT_OK;
fail:
  if (out) h->free(out);
  return st;
}

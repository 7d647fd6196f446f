/* binary_sparse.c - add, sub, mul, div and their in-place forms on plain
 * (not masked) sparse operands, as torch 2.15's sparse kernels compute them
 * (spec/SEMANTICS.md "Plain sparse pointwise", SPP-2 .. SPP-6).
 *
 * SPP-2  add/sub(S, S, alpha): one merge of both entry lists in stored
 *        order (mt__sps_coo_add), explicit zeros kept, the result flagged
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
 * among the compressed layouts: CSC/BSR/BSC operands are NOT_SUPPORTED.
 *
 * The merges, intersections and unions are host bookkeeping; every value
 * is computed on the call's exec (common/sparse_vals_math.h: the CPU loop,
 * or sparse_vals.cu's kernel), from a plan of the operand elements each
 * result value reads, in the CPU's order. */
#include "binary_sparse.h"

#include <inttypes.h>

#include "common/exec.h"
#include "common/sparse_vals_math.h"
#include "cpu_util.h"
#include "sps_util.h"

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
static double ct(mt_dtype rt, double v) { return mt_spv_ct(rt, v); }

/* ---- value plans (common/sparse_vals_math.h) ------------------------------ */

/* Every value of a result comes from the exec (the CPU loop, or a device
 * kernel): the host plans, per output value o, the element ia[o] of operand
 * a and the terms ib[off[o] .. off[o + 1] - 1] of operand b. */
typedef struct {
  int64_t *ia, *off, *ib;
  int64_t n, nt; /* outputs, terms */
} vplan;

static void vp_free(vplan *v) {
  free(v->ia);
  free(v->off);
  free(v->ib);
  memset(v, 0, sizeof *v);
}

/* room for n outputs (ia, off) and cap terms */
static mt_status vp_new(vplan *v, int64_t n, int64_t cap, mt_error *err) {
  memset(v, 0, sizeof *v);
  v->n = n;
  v->ia = malloc((size_t)(n > 0 ? n : 1) * sizeof(int64_t));
  v->off = calloc((size_t)n + 1, sizeof(int64_t));
  v->ib = malloc((size_t)(cap > 0 ? cap : 1) * sizeof(int64_t));
  if (!v->ia || !v->off || !v->ib) {
    vp_free(v);
    return mt_err(err, MT_OUT_OF_MEMORY, "out of memory for a plan of %lld values", (long long)n);
  }
  return MT_OK;
}

/* output o's element of a (-1: none) and at most one term of b (-1: none);
 * call in order of o */
static void vp_one(vplan *v, int64_t o, int64_t ia, int64_t ib) {
  v->ia[o] = ia;
  if (ib >= 0) v->ib[v->nt++] = ib;
  v->off[o + 1] = v->nt;
}

/* runs p over the plan: out gets v->n values */
static mt_status vp_run(const mt_exec *ex, mt_spv_par *p, const void *a, const void *b,
                        const vplan *v, void *out, mt_error *err) {
  int64_t na = 0, nb = 0;
  if (!v->n) return MT_OK;
  if (!ex->sparse_vals)
    return mt_err(err, MT_NOT_SUPPORTED, "the %s backend has no plain sparse kernels", ex->name);
  for (int64_t o = 0; o < v->n; o++)
    if (v->ia[o] + 1 > na) na = v->ia[o] + 1;
  for (int64_t t = 0; t < v->nt; t++)
    if (v->ib[t] + 1 > nb) nb = v->ib[t] + 1;
  p->n_out = v->n;
  p->n_terms = v->nt;
  p->na = na;
  p->nb = nb;
  return ex->sparse_vals(p, na ? a : NULL, nb ? b : NULL, v->ia, v->off, v->ib, out, err);
}

static void vp_par(mt_spv_par *p, int op, mt_dtype at, mt_dtype bt, mt_dtype ot) {
  memset(p, 0, sizeof *p);
  p->op = op;
  p->at = at;
  p->bt = bt;
  p->ot = ot;
}

/* the CPU reference's hook (common/exec.h) */
mt_status mt__cpu_sparse_vals_exec(const struct mt_spv_par *p, const void *a, const void *b,
                                   const int64_t *ia, const int64_t *off, const int64_t *ib,
                                   void *out, mt_error *err) {
  (void)err;
  for (int64_t o = 0; o < p->n_out; o++) mt_spv_out(p, a, b, ia, off, ib, out, o);
  return MT_OK;
}

static int64_t n_values(const mt_tensor *t) {
  mt_cgeom g;
  if (mt_kind_is_compressed(t->kind)) return mt_cgeom_of(t, &g) ? g.batches * t->nnz * g.entry : 0;
  return t->kind == MT_KIND_COO ? t->nnz * mt_coo_row_numel(t) : mt_numel(t);
}


/* A copy of t (COO, CSR or dense) with its values cast to dt, allocated by
 * h (the values on ex; a strided dense t read in place). */
static mt_status cast_copy(const mt_host *h, const mt_exec *ex, const mt_tensor *t, mt_dtype dt,
                           mt_tensor **out, mt_error *err) {
  vplan v = {0};
  mt_spv_par p;
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
    st = h->dense_new(dt, t->ndim, t->shape, out, err);
  }
  int64_t n = n_values(t);
  if (st == MT_OK && (st = vp_new(&v, n, 0, err)) == MT_OK) {
    for (int64_t i = 0; i < n; i++)
      vp_one(&v, i, t->kind == MT_KIND_DENSE ? mt_dense_offset(t, i) : i, -1);
    vp_par(&p, SPV_CAST, t->dtype, t->dtype, dt);
    st = vp_run(ex, &p, t->values, NULL, &v, (*out)->values, err);
    vp_free(&v);
  }
  if (st != MT_OK && *out) {
    h->free(*out);
    *out = NULL;
  }
  return st;
}

/* *t cast to dt in place of itself (the in-place forms keep self's dtype) */
static mt_status recast(const mt_host *h, const mt_exec *ex, mt_tensor **t, mt_dtype dt,
                        mt_error *err) {
  if ((*t)->dtype == dt) return MT_OK;
  mt_tensor *r = NULL;
  mt_status st = cast_copy(h, ex, *t, dt, &r, err);
  if (st != MT_OK) return st;
  h->free(*t);
  *t = r;
  return MT_OK;
}

static mt_status layout_refused(const char *name, const char *why, mt_error *err) {
  return mt_err(err, MT_LAYOUT_MISMATCH, "%s: %s", name, why);
}

#define ADD_SD "add(sparse, dense) is not supported. Use add(dense, sparse) instead."
#define CSR_LAYOUT "unsupported tensor layout: SparseCsr"
#define DIV_SD "Sparse division requires a scalar or zero-dim dense tensor divisor"

/* ---- add / sub (SPP-2, SPP-3) ------------------------------------------------ */

/* binary_sparse.h: torch's sparse + sparse merge (one two-pointer walk over
 * both entry lists in stored order; the empty short-cuts), the values on ex */
mt_status mt__sps_coo_add(const mt_host *h, const mt_exec *ex, const char *name, mt_tensor **t,
                          double alpha, const mt_tensor *s, mt_error *err) {
  mt_tensor *a = *t, *r = NULL;
  mt_dtype dt = a->dtype;
  int64_t row = mt_coo_row_numel(a), nnz = a->nnz + s->nnz, ka = 0, ks = 0, n = 0;
  vplan v = {0};
  mt_spv_par p;
  mt_status st;
  if (s->nnz == 0) return MT_OK;
  vp_par(&p, SPV_COO_ADD, dt, dt, dt);
  p.alpha = alpha;
  p.m = ct(dt, alpha);
  if (a->nnz == 0) { /* alpha * s, s's indices and flag (alpha 1: s's values exactly) */
    if ((st = h->coo_new(dt, s->ndim, s->shape, s->sparse_dim, s->nnz, &r, err)) != MT_OK)
      return st;
    if (s->sparse_dim)
      memcpy(r->indices, s->indices, (size_t)s->sparse_dim * (size_t)s->nnz * sizeof(int64_t));
    r->coalesced = s->coalesced;
    if ((st = vp_new(&v, s->nnz * row, s->nnz * row, err)) != MT_OK) goto fail;
    for (int64_t i = 0; i < s->nnz * row; i++) vp_one(&v, i, alpha == 1.0 ? i : -1, i);
    if (alpha == 1.0) p.op = SPV_CAST;
    if ((st = vp_run(ex, &p, s->values, s->values, &v, r->values, err)) != MT_OK) goto fail;
    goto done;
  }
  if (dt == MT_float16 || dt == MT_bool)
    return mt_err(err, MT_DTYPE_MISMATCH, "%s: \"cadd_sparse\" not implemented for '%s'", name,
                  dt == MT_bool ? "Bool" : "Half");
  if ((st = h->coo_new(dt, a->ndim, a->shape, a->sparse_dim, nnz, &r, err)) != MT_OK) return st;
  if ((st = vp_new(&v, nnz * row, nnz * row, err)) != MT_OK) goto fail;
  while (ka < a->nnz || ks < s->nnz) {
    int64_t la = ka < a->nnz ? mt_coo_linear(a, ka) : INT64_MAX;
    int64_t ls = ks < s->nnz ? mt_coo_linear(s, ks) : INT64_MAX;
    int take_a = la <= ls, take_s = ls <= la;
    const mt_tensor *src = take_a ? a : s;
    int64_t k = take_a ? ka : ks;
    for (int d = 0; d < a->sparse_dim; d++)
      r->indices[d * nnz + n] = src->indices[d * src->nnz + k];
    for (int64_t j = 0; j < row; j++)
      vp_one(&v, n * row + j, take_a ? ka * row + j : -1, take_s ? ks * row + j : -1);
    ka += take_a;
    ks += take_s;
    n++;
  }
  v.n = n * row;
  if ((st = vp_run(ex, &p, a->values, s->values, &v, r->values, err)) != MT_OK) goto fail;
  if (n < nnz) { /* merged entries: shrink (indices are [sparse_dim, nnz] rows) */
    for (int d = 1; d < a->sparse_dim; d++)
      memmove(r->indices + d * n, r->indices + d * nnz, (size_t)n * sizeof(int64_t));
    r->nnz = n;
  }
  r->coalesced = a->coalesced && s->coalesced;
done:
  vp_free(&v);
  h->free(a);
  *t = r;
  return MT_OK;
fail:
  vp_free(&v);
  h->free(r);
  return st;
}

static mt_status coo_coo_add(const mt_host *h, const mt_exec *ex, const char *name,
                             const mt_tensor *a, const mt_tensor *b, double alpha, mt_dtype rt,
                             mt_tensor **out, mt_error *err) {
  char s0[64], s1[64];
  mt_tensor *s = NULL;
  mt_status st;
  if (!mt_shape_equal(a, b))
    return mt_err(err, MT_SHAPE_MISMATCH,
                  "%s: expected sizes of 'self' and 'other' to match, but %s != %s", name,
                  mt_shape_str(a->ndim, a->shape, s0, sizeof s0),
                  mt_shape_str(b->ndim, b->shape, s1, sizeof s1));
  if (a->sparse_dim != b->sparse_dim)
    return mt_err(err, MT_INVALID_ARGUMENT,
                  "%s: expected 'self' and 'other' to have same density, but 'self' has %d sparse "
                  "dimensions while 'other' has %d sparse dimensions",
                  name, a->sparse_dim, b->sparse_dim);
  if ((st = cast_copy(h, ex, a, rt, out, err)) != MT_OK) return st;
  if ((st = cast_copy(h, ex, b, rt, &s, err)) != MT_OK) goto out;
  st = mt__sps_coo_add(h, ex, name, out, alpha, s, err); /* float16/bool: refused unless empty */
out:
  if (s) h->free(s);
  return st;
}

/* compressed + alpha compressed, one kind (CSR, CSC, BSR, BSC, batched):
 * per batch and compressed slot the sorted union of the plain indices;
 * entries of both give a + round(alpha * b) (each value of a block or
 * dense row), of b alone round(alpha * b) (torch's CPU kernel, float and
 * double only, one dtype). */
static mt_status cmp_add(const mt_host *h, const mt_exec *ex, const char *name, const mt_tensor *a,
                         const mt_tensor *b, double alpha, mt_tensor **out, mt_error *err) {
  char s0[64], s1[64];
  vplan v = {0};
  mt_spv_par p;
  mt_status st;
  mt_dtype dt = a->dtype;
  mt_cgeom ga, gb;
  if (!mt_shape_equal(a, b) || !mt_cgeom_of(a, &ga) || !mt_cgeom_of(b, &gb) || ga.bh != gb.bh ||
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
  vp_par(&p, SPV_CMP_ADD, dt, dt, dt);
  p.alpha = alpha;
  p.m = ct(dt, alpha);
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
              v.ia[o * E + e] = ta ? (bt * a->nnz + i) * E + e : -1;
              v.ib[o * E + e] = tb ? (bt * b->nnz + j) * E + e : -1;
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
      st = h->compressed_new(a->kind, dt, a->ndim, a->shape, a->dense_dim, a->blocksize, nnz, out,
                             err);
      if (st != MT_OK) return st;
      /* every value slot planned: a slot no entry fills is 0 */
      if ((st = vp_new(&v, ga.batches * nnz * E, ga.batches * nnz * E, err)) != MT_OK) return st;
      for (int64_t o = 0; o < v.n; o++) v.ia[o] = v.ib[o] = -1;
    }
  }
  { /* the terms in order: one or none per slot */
    int64_t n = v.n;
    for (int64_t o = 0; o < n; o++) vp_one(&v, o, v.ia[o], v.ib[o]);
  }
  st = vp_run(ex, &p, a->values, b->values, &v, (*out)->values, err);
  vp_free(&v);
  return st;
}

/* dense d + alpha * s, s COO or CSR of d's shape: dense (SPP-3). Each
 * dense element is d's, cast to rt, then each stored value of s at its
 * coordinates (cast to rt) added in stored order: COO as torch's dense +
 * sparse add (the fused multiply-add or the rounded
 * product, as sparse_optim.c's SGD step adds a COO grad: SGD-1), CSR r + round(alpha * v). */
static mt_status dense_add_sparse(const mt_host *h, const mt_exec *ex, const char *name,
                                  const mt_tensor *d, const mt_tensor *s, double alpha, mt_dtype rt,
                                  mt_tensor **out, mt_error *err) {
  char s0[64], s1[64];
  int64_t *cnt = NULL, nd = mt_numel(d);
  vplan v = {0};
  mt_spv_par p;
  mt_cgeom g;
  mt_status st;
  if (!mt_shape_equal(d, s))
    return mt_err(err, MT_SHAPE_MISMATCH,
                  "%s: expected 'self' and 'other' to have same size, but self has size %s while "
                  "other has size %s (FYI: dense-sparse addition does not currently support "
                  "broadcasting)",
                  name, mt_shape_str(d->ndim, d->shape, s0, sizeof s0),
                  mt_shape_str(s->ndim, s->shape, s1, sizeof s1));
  if ((st = h->dense_new(rt, d->ndim, d->shape, out, err)) != MT_OK) return st;
  int coo = s->kind == MT_KIND_COO, geom = coo || mt_cgeom_of(s, &g);
  int64_t nv = geom ? n_values(s) : 0, row = coo ? mt_coo_row_numel(s) : 0;
  /* the dense element of each stored value (-1: none) */
  int64_t *dst = malloc((size_t)(nv > 0 ? nv : 1) * sizeof(int64_t));
  cnt = calloc((size_t)nd + 1, sizeof(int64_t));
  if (!dst || !cnt) {
    st = mt_err(err, MT_OUT_OF_MEMORY, "%s: out of memory for %lld values", name, (long long)nv);
    goto out;
  }
  if (coo) {
    for (int64_t k = 0; k < s->nnz; k++)
      for (int64_t j = 0; j < row; j++) dst[k * row + j] = mt_coo_linear(s, k) * row + j;
  } else if (geom) {
    for (int64_t i = 0; i < nv; i++) dst[i] = -1;
    for (int64_t bt = 0; bt < g.batches; bt++)
      for (int64_t r = 0; r < g.ncomp; r++) {
        const int64_t *crow = s->crow_indices + bt * (g.ncomp + 1);
        for (int64_t k = crow[r]; k < crow[r + 1]; k++) {
          int64_t plain = s->col_indices[bt * s->nnz + k];
          int64_t rw = g.by_col ? plain : r, col = g.by_col ? r : plain;
          for (int64_t e = 0; e < g.dense; e++)
            dst[(bt * s->nnz + k) * g.dense + e] = ((bt * g.rows + rw) * g.cols + col) * g.dense + e;
        }
      }
  }
  /* terms grouped by dense element, each group in stored order (the CPU's) */
  for (int64_t i = 0; i < nv; i++)
    if (dst[i] >= 0) cnt[dst[i] + 1]++;
  if ((st = vp_new(&v, nd, nv, err)) != MT_OK) goto out;
  for (int64_t o = 0; o < nd; o++) {
    v.ia[o] = mt_dense_offset(d, o);
    v.off[o + 1] = v.off[o] + cnt[o + 1];
    cnt[o + 1] = v.off[o];
  }
  v.nt = v.off[nd];
  for (int64_t i = 0; i < nv; i++)
    if (dst[i] >= 0) v.ib[cnt[dst[i] + 1]++] = i;
  if (coo) {
    vp_par(&p, SPV_DENSE_COO, d->dtype, s->dtype, rt);
    p.m = mt__cpu_round(rt, alpha);
    p.fused = (rt == MT_float32 || rt == MT_float64) && (!s->coalesced || s->ndim > s->sparse_dim);
  } else {
    vp_par(&p, SPV_DENSE_CSR, d->dtype, s->dtype, rt);
    p.m = ct(rt, alpha);
    p.alpha_i = (int64_t)alpha;
  }
  st = vp_run(ex, &p, d->values, s->values, &v, (*out)->values, err);
out:
  free(dst);
  free(cnt);
  vp_free(&v);
  return st;
}

/* ---- mul (SPP-4) ------------------------------------------------------------ */

/* mul(x, y), both COO: torch's sparse_binary_op_intersection. An empty
 * operand gives an empty coalesced result. The `source` is the one whose
 * entries the result keeps (in its stored order), `pc` the one searched:
 * with exactly one operand coalesced, pc is that one; else pc is the
 * larger by nnz (x on a tie). Both coalesced: only source entries found in
 * pc are kept (the result is coalesced). Otherwise every source entry is
 * kept, uncoalesced: found ones get the sum of source * each of pc's
 * matches (torch's accumulated matches, SPV_MUL_ACC), the others 0. */
static mt_status coo_mul(const mt_host *h, const mt_exec *ex, const char *name, const mt_tensor *x,
                         const mt_tensor *y, mt_dtype rt, mt_tensor **out, mt_error *err) {
  mt_tensor *xc = NULL, *yc = NULL;
  vplan v = {0};
  mt_spv_par p;
  mt_status st;
  if (!mt_shape_equal(x, y) || x->sparse_dim != y->sparse_dim)
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
  if ((st = cast_copy(h, ex, x, rt, &xc, err)) != MT_OK) goto out;
  if ((st = cast_copy(h, ex, y, rt, &yc, err)) != MT_OK) goto out;
  int both = x->coalesced && y->coalesced;
  const mt_tensor *pc, *src;
  if (x->coalesced != y->coalesced) {
    pc = x->coalesced ? xc : yc;
  } else {
    pc = x->nnz >= y->nnz ? xc : yc;
  }
  src = pc == xc ? yc : xc;
  int64_t row = mt_coo_row_numel(src), n = 0, nm = 0;
  int64_t cap = src->nnz;
  /* the matches of every source entry in pc, in pc's order */
  for (int64_t k = 0; k < src->nnz; k++) {
    int64_t lin = mt_coo_linear(src, k);
    for (int64_t q = 0; q < pc->nnz; q++) nm += mt_coo_linear(pc, q) == lin;
  }
  if ((st = h->coo_new(rt, src->ndim, src->shape, src->sparse_dim, cap, out, err)) != MT_OK)
    goto out;
  if ((st = vp_new(&v, cap * row, nm * row, err)) != MT_OK) goto out;
  for (int64_t k = 0; k < src->nnz; k++) {
    int64_t lin = mt_coo_linear(src, k), found = 0;
    for (int64_t q = 0; q < pc->nnz; q++) found += mt_coo_linear(pc, q) == lin;
    if (!found && both) continue;
    for (int d = 0; d < src->sparse_dim; d++)
      (*out)->indices[(int64_t)d * cap + n] = src->indices[(int64_t)d * src->nnz + k];
    for (int64_t j = 0; j < row; j++) {
      v.ia[n * row + j] = k * row + j;
      for (int64_t q = 0; q < pc->nnz; q++)
        if (mt_coo_linear(pc, q) == lin) v.ib[v.nt++] = q * row + j;
      v.off[n * row + j + 1] = v.nt;
    }
    n++;
  }
  /* each value: the sum of src * each of pc's matches, or 0 when none matches */
  v.n = n * row;
  vp_par(&p, SPV_MUL_ACC, rt, rt, rt);
  if ((st = vp_run(ex, &p, src->values, pc->values, &v, (*out)->values, err)) != MT_OK) goto out;
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
  vp_free(&v);
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
 * tensor D becomes (zero where S stores nothing, duplicates summed: the
 * exec's coalesce, then a copy). */
static mt_status coo_mul_dense(const mt_host *h, const mt_exec *ex, const char *name,
                               const mt_tensor *s, const mt_tensor *d, mt_dtype rt, int dense_out,
                               mt_tensor **out, mt_error *err) {
  mt_tensor *r = NULL, *ctmp = NULL;
  const mt_tensor *c = NULL;
  int *gsrc = NULL;
  int64_t *goff = NULL;
  vplan v = {0};
  mt_spv_par p;
  mt_status st;
  if ((st = check_bcast(name, s, d, err)) != MT_OK) return st;
  if ((st = h->coo_new(rt, s->ndim, s->shape, s->sparse_dim, s->nnz, &r, err)) != MT_OK) goto out;
  if (s->nnz && s->sparse_dim)
    memcpy(r->indices, s->indices, (size_t)s->sparse_dim * (size_t)s->nnz * sizeof(int64_t));
  r->coalesced = s->coalesced;
  int64_t row = mt_coo_row_numel(s), c_[MT_MAX_DIMS] = {0};
  if ((st = vp_new(&v, s->nnz * row, s->nnz * row, err)) != MT_OK) goto out;
  for (int64_t k = 0; k < s->nnz; k++)
    for (int64_t j = 0; j < row; j++) {
      for (int q = 0; q < s->sparse_dim; q++) c_[q] = s->indices[(int64_t)q * s->nnz + k];
      int64_t rem = j;
      for (int q = s->ndim - 1; q >= s->sparse_dim; q--) {
        c_[q] = rem % s->shape[q];
        rem /= s->shape[q];
      }
      vp_one(&v, k * row + j, k * row + j, mt_dense_offset(d, bcast_index(d, s->ndim, c_)));
    }
  vp_par(&p, SPV_MUL, s->dtype, d->dtype, rt);
  if ((st = vp_run(ex, &p, s->values, d->values, &v, r->values, err)) != MT_OK) goto out;
  if (!dense_out) {
    *out = r;
    r = NULL;
    goto out;
  }
  /* to dense: the coalesced entries' rows at their places, zeros elsewhere */
  if ((st = mt__exec_coalesced(ex, r, &c, &ctmp, err)) != MT_OK) goto out;
  if ((st = h->dense_new(rt, s->ndim, s->shape, out, err)) != MT_OK) goto out;
  int64_t nd = mt_numel(s), crow = mt_coo_row_numel(c), zero = 0;
  if (!nd) goto out;
  gsrc = malloc((size_t)nd * sizeof *gsrc);
  goff = malloc((size_t)nd * sizeof *goff);
  if (!gsrc || !goff) {
    st = mt_err(err, MT_OUT_OF_MEMORY, "%s: out of memory for %lld elements", name, (long long)nd);
    goto out;
  }
  for (int64_t i = 0; i < nd; i++) gsrc[i] = 1, goff[i] = 0;
  for (int64_t k = 0; k < c->nnz; k++)
    for (int64_t j = 0; j < crow; j++) {
      gsrc[mt_coo_linear(c, k) * crow + j] = 0;
      goff[mt_coo_linear(c, k) * crow + j] = k * crow + j;
    }
  {
    const void *srcs[2] = {c->values, &zero};
    st = sps_gather(ex, gsrc, goff, nd, 2, srcs, mt_dtype_size(rt), (*out)->values, err);
  }
out:
  free(gsrc);
  free(goff);
  mt_tensor_free(ctmp);
  if (r) h->free(r);
  vp_free(&v);
  return st;
}

/* mul of two CSR tensors: per row the columns both store (torch's
 * intersection; CSR is always coalesced). */
static mt_status csr_mul(const mt_host *h, const mt_exec *ex, const char *name, const mt_tensor *a,
                         const mt_tensor *b, mt_dtype rt, mt_tensor **out, mt_error *err) {
  vplan v = {0};
  mt_spv_par p;
  mt_status st = MT_OK;
  if (!mt_shape_equal(a, b))
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
            vp_one(&v, n, i, j);
          }
          n++;
        }
      if (pass) (*out)->crow_indices[r + 1] = n;
    }
    if (!pass) {
      if ((st = h->csr_new(rt, rows, a->shape[1], n, out, err)) != MT_OK) return st;
      (*out)->crow_indices[0] = 0;
      if ((st = vp_new(&v, n, n, err)) != MT_OK) return st;
    }
  }
  vp_par(&p, SPV_MUL, a->dtype, b->dtype, rt);
  st = vp_run(ex, &p, a->values, b->values, &v, (*out)->values, err);
  vp_free(&v);
  return st;
}

/* mul(CSR, D) / mul(D, CSR): the CSR structure, values times D at each
 * entry (D of the CSR's shape: torch's sparse_mask refuses others). */
static mt_status csr_mul_dense(const mt_host *h, const mt_exec *ex, const char *name,
                               const mt_tensor *s, const mt_tensor *d, mt_dtype rt,
                               mt_tensor **out, mt_error *err) {
  char s0[64], s1[64];
  vplan v = {0};
  mt_spv_par p;
  mt_status st;
  if (!mt_shape_equal(s, d))
    return mt_err(err, MT_SHAPE_MISMATCH,
                  "%s: sparse_mask(): operands have incompatible sizes; self has size %s but mask "
                  "has size %s",
                  name, mt_shape_str(d->ndim, d->shape, s0, sizeof s0),
                  mt_shape_str(s->ndim, s->shape, s1, sizeof s1));
  if ((st = mt__cpu_compressed_like(h, s, rt, out, err)) != MT_OK) return st;
  int64_t nnz = s->crow_indices[s->shape[0]];
  if ((st = vp_new(&v, nnz, nnz, err)) != MT_OK) return st;
  for (int64_t r = 0; r < s->shape[0]; r++)
    for (int64_t k = s->crow_indices[r]; k < s->crow_indices[r + 1]; k++)
      vp_one(&v, k, k, mt_dense_offset(d, r * s->shape[1] + s->col_indices[k]));
  vp_par(&p, SPV_MUL, s->dtype, d->dtype, rt);
  st = vp_run(ex, &p, s->values, d->values, &v, (*out)->values, err);
  vp_free(&v);
  return st;
}

/* ---- by a number (SPP-5) ------------------------------------------------------ */

/* S (op) number, or a 0-d tensor: the structure kept, each value mapped. */
static mt_status scale(const mt_host *h, const mt_exec *ex, const mt_tensor *s, bs_kind k,
                       const mt_tensor *num, mt_dtype rt, mt_tensor **out, mt_error *err) {
  vplan v = {0};
  mt_spv_par p;
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
  int64_t n = n_values(s);
  if ((st = vp_new(&v, n, n, err)) != MT_OK) return st;
  for (int64_t i = 0; i < n; i++) vp_one(&v, i, i, 0);
  vp_par(&p, k == K_DIV ? SPV_DIV : SPV_MUL, s->dtype, num->dtype, rt);
  st = vp_run(ex, &p, s->values, num->values, &v, (*out)->values, err);
  vp_free(&v);
  return st;
}

/* ---- the kernel ------------------------------------------------------------------ */

static int is_number(const mt_tensor *t) {
  return t->kind == MT_KIND_SCALAR || (t->kind == MT_KIND_DENSE && t->ndim == 0);
}

mt_status mt__cpu_binary_sparse(mt_call *call, mt_op op, const mt_exec *ex, mt_error *err) {
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
        st = dense_add_sparse(h, ex, name, b, a, 1.0, rt, &out, err);
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
      st = coo_coo_add(h, ex, name, a, b, alpha, rt, &out, err);
    else if (mt_kind_is_compressed(a->kind) && a->kind != MT_KIND_CSR)
      /* SPP-7: two CSC/BSR/BSC tensors take torch's CSR-only MKL path
       * ("crow_indices expected sparse row compressed tensor layout", an
       * MKL error for BSR); only add(x, x) of one tensor object runs */
      return layout_refused(name, "add of two CSC/BSR/BSC tensors: torch's add path is CSR only",
                            err);
    else if (mt_kind_is_compressed(a->kind))
      st = cmp_add(h, ex, name, a, b, alpha, &out, err);
    else
      st = dense_add_sparse(h, ex, name, a, b, alpha, rt, &out, err);
  } else if (k == K_MUL) {
    if (sa && sb) {
      st = a->kind == MT_KIND_COO ? coo_mul(h, ex, name, a, b, rt, &out, err)
                                  : csr_mul(h, ex, name, a, b, rt, &out, err);
    } else if (is_number(b) && sa) {
      if (ip && rt != a->dtype)
        return mt_err(err, MT_DTYPE_MISMATCH,
                      "%s: dtype of values (%s) must match dtype of sparse tensor (%s)", name,
                      mt__cpu_torch_type(rt), mt__cpu_torch_type(a->dtype));
      st = scale(h, ex, a, K_MUL, b, rt, &out, err);
    } else if (is_number(a) && sb) {
      st = scale(h, ex, b, K_MUL, a, rt, &out, err);
    } else {
      const mt_tensor *s = sa ? a : b, *d = sa ? b : a;
      if (cmp && ip && !sa)
        return layout_refused(name, "Expected result Tensor to be of format CSR", err);
      st = s->kind == MT_KIND_COO ? coo_mul_dense(h, ex, name, s, d, rt, ip && !sa, &out, err)
                                  : csr_mul_dense(h, ex, name, s, d, rt, &out, err);
    }
    /* SPP-5: S.mul_ leaves self flagged uncoalesced (torch's in-place
     * sparse mul rebuilds self without the flag) */
    if (st == MT_OK && ip && sa && out->kind == MT_KIND_COO && !sb) out->coalesced = 0;
  } else { /* K_DIV */
    if (!sa || !is_number(b)) return layout_refused(name, DIV_SD, err);
    if (a->kind == MT_KIND_CSR) return layout_refused(name, CSR_LAYOUT, err);
    st = scale(h, ex, a, K_DIV, b, rt, &out, err);
  }
done:
  if (st != MT_OK) goto fail;
  if (ip && (st = recast(h, ex, &out, a->dtype, err)) != MT_OK) goto fail;
  call->out[0] = out;
  call->n_out = 1;
  return MT_OK;
fail:
  if (out) h->free(out);
  return st;
}

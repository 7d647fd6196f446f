/* binary.c - CPU kernels of the binary family: MaskedTensor's whole binary
 * list (torch/masked/maskedtensor/binary.py BINARY_NAMES), aliases sharing
 * one kernel.
 *
 * torch.masked's _binary_helper, step by step:
 * BIN-7   any keyword argument ("len(kwargs) must equal 0"), a number where
 *         torch has Tensor overloads only, a number on the left
 *         (torch.add(2, m)) are refused.
 * MASK-8  two masked operands: masks must be identical (kind, shape, every
 *         element) -> MASK_MISMATCH; masks of equal ndim whose shapes cannot
 *         broadcast are SHAPE_MISMATCH (torch.eq on the masks raises first).
 * BIN-1   the op runs on the data with torch's broadcasting against a plain
 *         tensor; the result's mask is the masked operand's, expanded to the
 *         result's shape.
 * BIN-2   torch.result_type promotion (dim tensors, 0-d tensors, numbers);
 *         true division and atan2 of integers compute in float32; a number
 *         is cast to the computation dtype first (MASK-7).
 * BIN-3   an op with no kernel for the computation dtype -> DTYPE_MISMATCH.
 * BIN-4   comparisons give bool.
 * BIN-5   floor_divide / remainder / fmod conventions; an integer zero
 *         divisor -> INVALID_ARGUMENT (ZeroDivisionError), except where it
 *         is masked-out data (MASK-9).
 * BIN-6   shifts by a negative amount or by the width or more.
 * BIN-8   nextafter steps to the adjacent representable value of the dtype.
 * BIN-9   maximum/minimum propagate NaN, fmax/fmin ignore it.
 * BIN-10  in-place variants (add_ ...): self's shape, dtype and mask.
 * float16 and float32 compute in float (float16 rounds once at the store),
 * float64 in double, integers and bool exactly in int64 and wrap.
 *
 * This file plans each call (checks, promotion, masks, broadcasting,
 * layouts, outputs); the per-element math is common/binary_math.h and runs
 * where the mt_exec says (common/exec.h): here for the CPU reference, on
 * the device for the CUDA backend (impl/cuda/binary.cu). */
#include "binary_sparse.h"
#include "common/binary_math.h"
#include "common/binary_ops.h"
#include "common/exec.h"
#include "cpu_util.h"
#include "promote.h"

/* ---- the op table --------------------------------------------------------- */

typedef mt_bin_code kcode; /* common/binary_math.h */

/* Which computation dtypes torch has a kernel for. */
enum { A_FLOAT = 1, A_INT = 2, A_BOOL = 4, A_ALL = 7 };
/* What the result dtype is: the computation dtype, float32 for integer
 * operands (true division, atan2), or bool (comparisons). */
typedef enum { R_SAME, R_FLOAT, R_BOOL } rkind;

typedef struct {
  kcode code;
  int accepts;
  rkind result;
  const char *kernel;
} binop;

static int find_op(mt_op op, binop *out) {
  switch (op) {
#define X(name, code, acc, res, kname) \
  case MT_OP_##name:                   \
    *out = (binop){code, acc, res, kname}; \
    return 1;
    BINARY_OPS(X)
#undef X
  default: return 0;
  }
}

/* Ops whose torch signatures take Tensor `other` only (no Scalar overload). */
static int tensors_only(kcode k) {
  return k == K_MAX || k == K_MIN || k == K_FMAX || k == K_FMIN || k == K_ATAN2 || k == K_LAE ||
         k == K_LAE2 || k == K_NEXT;
}

/* type promotion (BIN-2): promote.h */

/* ---- operands ----------------------------------------------------------------- */

typedef struct {
  const mt_tensor *t;  /* the call's input */
  const mt_tensor *d;  /* the values: masked data, the dense tensor; NULL for a number */
  int masked;
  int number;          /* a Python number (kind SCALAR) */
  double f;            /* a number's value */
  int64_t i;           /* a number's exact integer value */
} operand;

/* Element strides of t broadcast to (ndim, shape): 0 along broadcast dims. */
static void bstrides(const mt_tensor *t, int ndim, const int64_t *shape, int64_t *st) {
  int off = ndim - t->ndim;
  for (int d = 0; d < ndim; d++)
    st[d] = (d < off || (t->shape[d - off] == 1 && shape[d] != 1)) ? 0 : t->strides[d - off];
}

/* ---- masks (MASK-6/8) ------------------------------------------------------------ */

/* SP-2: torch's _tensors_match of two sparse masks compares their stored
 * arrays with torch.eq(...).all(): rows rows of n0 and n1 elements (COO
 * indices: sparse_dim rows of nnz; values, crow, col: one row) broadcast
 * along the row, so lengths that differ and are not 1 raise torch's shape
 * error before any difference is seen. 1: equal, 0: differ. */
static mt_status stored_match(const char *name, const char *what, const void *a, const void *b,
                              int is_bool, int64_t rows, int64_t n0, int64_t n1, int *equal,
                              mt_error *err) {
  *equal = 1;
  if (n0 != n1 && n0 != 1 && n1 != 1)
    return mt_err(err, MT_SHAPE_MISMATCH,
                  "%s: The size of tensor a (%lld) must match the size of tensor b (%lld) at "
                  "non-singleton dimension %d (comparing the %s of the sparse masks)",
                  name, (long long)n0, (long long)n1, rows > 1 ? 1 : 0, what);
  int64_t n = n0 > n1 ? n0 : n1;
  if (n0 == 0 || n1 == 0) n = 0;
  for (int64_t r = 0; r < rows && *equal; r++)
    for (int64_t i = 0; i < n && *equal; i++) {
      int64_t i0 = r * n0 + (n0 == 1 ? 0 : i), i1 = r * n1 + (n1 == 1 ? 0 : i);
      *equal = is_bool ? mt__cpu_ldb(a, i0) == mt__cpu_ldb(b, i1)
                       : ((const int64_t *)a)[i0] == ((const int64_t *)b)[i1];
    }
  return MT_OK;
}

/* SP-2: sparse masks as torch compares them: COO values then indices
 * (coalesced), CSR crow, col, values; masks of two layouts are refused
 * ("`a` and `b` must have the same layout"). */
static mt_status sparse_masks_match(const char *name, const mt_exec *ex, const mt_tensor *ma,
                                    const mt_tensor *mb, mt_error *err) {
  const mt_tensor *ca = NULL, *cb = NULL;
  mt_tensor *xa = NULL, *xb = NULL;
  mt_status st = MT_OK;
  int eq = 1;
  if (ma->kind != mb->kind)
    return mt_err(err, MT_LAYOUT_MISMATCH,
                  "%s: `a` and `b` must have the same layout (inputs/0 mask is %s, inputs/1 mask "
                  "is %s)",
                  name, mt_kind_name(ma->kind), mt_kind_name(mb->kind));
  if (ma->kind == MT_KIND_COO) {
    if ((st = mt__exec_coalesced(ex, ma, &ca, &xa, err)) != MT_OK) goto out;
    if ((st = mt__exec_coalesced(ex, mb, &cb, &xb, err)) != MT_OK) goto out;
    if ((st = stored_match(name, "values", ca->values, cb->values, 1, 1, ca->nnz, cb->nnz, &eq,
                           err)) != MT_OK || !eq)
      goto out;
    if (ca->sparse_dim != cb->sparse_dim) {
      eq = 0;
      goto out;
    }
    st = stored_match(name, "indices", ca->indices, cb->indices, 0, ca->sparse_dim, ca->nnz,
                      cb->nnz, &eq, err);
  } else {
    if ((st = stored_match(name, "crow_indices", ma->crow_indices, mb->crow_indices, 0, 1,
                           ma->shape[0] + 1, mb->shape[0] + 1, &eq, err)) != MT_OK || !eq)
      goto out;
    if ((st = stored_match(name, "col_indices", ma->col_indices, mb->col_indices, 0, 1, ma->nnz,
                           mb->nnz, &eq, err)) != MT_OK || !eq)
      goto out;
    st = stored_match(name, "values", ma->values, mb->values, 1, 1, ma->nnz, mb->nnz, &eq, err);
  }
out:
  mt_tensor_free(xa);
  mt_tensor_free(xb);
  if (st == MT_OK && !eq)
    st = mt_err(err, MT_MASK_MISMATCH, "%s: Input masks must match (%s masks differ)", name,
                mt_kind_name(ma->kind));
  return st;
}

/* Masks of two masked tensors must be identical (storage, shape, every
 * element; sparse: sparse_masks_match). */
static mt_status masks_match(const char *name, const mt_exec *ex, const mt_tensor *a,
                             const mt_tensor *b, mt_error *err) {
  const mt_tensor *ma = a->mask, *mb = b->mask;
  char sa[64], sb[64];
  if (ma->kind != MT_KIND_DENSE || mb->kind != MT_KIND_DENSE)
    return sparse_masks_match(name, ex, ma, mb, err);
  /* torch compares the masks with torch.eq: masks of equal ndim whose
   * shapes cannot broadcast make eq raise ("The size of tensor a (4) must
   * match the size of tensor b (5)") before any mask difference is seen. */
  if (ma->ndim == mb->ndim)
    for (int d = ma->ndim - 1; d >= 0; d--)
      if (ma->shape[d] != mb->shape[d] && ma->shape[d] != 1 && mb->shape[d] != 1)
        return mt_err(err, MT_SHAPE_MISMATCH,
                      "%s: The size of tensor a (%lld) must match the size of tensor b (%lld) at "
                      "non-singleton dimension %d (comparing the masks of inputs/0 and inputs/1)",
                      name, (long long)ma->shape[d], (long long)mb->shape[d], d);
  if (ma->ndim != mb->ndim)
    return mt_err(err, MT_MASK_MISMATCH,
                  "%s: Input masks must match (inputs/0 mask shape %s, inputs/1 mask shape %s)",
                  name, mt_shape_str(ma->ndim, ma->shape, sa, sizeof sa),
                  mt_shape_str(mb->ndim, mb->shape, sb, sizeof sb));
  if (ma->kind == MT_KIND_DENSE) {
    /* torch.eq(mask_a, mask_b).all(): masks that broadcast match when they
     * agree at every broadcast position (BIN-1) */
    int nd = ma->ndim;
    int64_t shape[MT_MAX_DIMS], s0[MT_MAX_DIMS], s1[MT_MAX_DIMS], idx[MT_MAX_DIMS] = {0};
    int64_t o0 = 0, o1 = 0, n = 1;
    for (int d = 0; d < nd; d++) {
      shape[d] = ma->shape[d] == 1 ? mb->shape[d] : ma->shape[d];
      n *= shape[d];
    }
    bstrides(ma, nd, shape, s0);
    bstrides(mb, nd, shape, s1);
    for (int64_t i = 0; i < n; i++) {
      int va = mt__cpu_ldb(ma->values, o0), vb = mt__cpu_ldb(mb->values, o1);
      if (va != vb)
        return mt_err(err, MT_MASK_MISMATCH,
                      "%s: Input masks must match (broadcast mask element %lld: inputs/0 %d, "
                      "inputs/1 %d)",
                      name, (long long)i, va, vb);
      for (int d = nd - 1; d >= 0; d--) {
        o0 += s0[d];
        o1 += s1[d];
        if (++idx[d] < shape[d]) break;
        o0 -= s0[d] * shape[d];
        o1 -= s1[d] * shape[d];
        idx[d] = 0;
      }
    }
  }
  return MT_OK;
}

/* ---- the elementwise loop ---------------------------------------------------------- */

/* What one call computes. */
typedef struct {
  binop op;
  mt_dtype ct;   /* computation dtype */
  mt_dtype rt;   /* result dtype */
  int fl;        /* ct is a float dtype */
  mt_dtype nt;   /* what a number operand is rounded to first */
} plan;

/* The per-element parameters of a call (common/binary_math.h). */
static mt_bin_par bin_par(const plan *p, const operand *o) {
  mt_bin_par bp;
  memset(&bp, 0, sizeof bp);
  bp.code = p->op.code;
  bp.ct = p->ct;
  bp.rt = p->rt;
  bp.nt = p->nt;
  bp.fl = p->fl;
  for (int k = 0; k < 2; k++) {
    bp.number[k] = o[k].number;
    bp.f[k] = o[k].f;
    bp.i[k] = o[k].i;
    bp.dt[k] = o[k].d ? o[k].d->dtype : MT_float64;
  }
  bp.b_masked = o[1].masked;
  return bp;
}

/* Elements a strided view reaches: 1 + sum (shape - 1) * stride (0 when
 * empty); what a device must upload of it. */
static int64_t extent(const mt_tensor *t) {
  int64_t e = 1;
  for (int d = 0; d < t->ndim; d++) {
    if (t->shape[d] == 0) return 0;
    e += (t->shape[d] - 1) * t->strides[d];
  }
  return e;
}

/* The loop l over the operands' values va/vb (na/nb elements) and the mask
 * (nm), on ex: out and mask_out (NULL: not written) filled, or BIN-5's
 * error at the first specified zero integer divisor. */
static mt_status run_loop(const mt_exec *ex, const plan *p, const operand *o,
                          const mt_bin_loop *l, const void *va, int64_t na, const void *vb,
                          int64_t nb, const uint8_t *mask, int64_t nm, void *out,
                          uint8_t *mask_out, const char *name, mt_error *err) {
  mt_bin_par bp = bin_par(p, o);
  int64_t at = -1;
  mt_status st;
  if (!ex->binary)
    return mt_err(err, MT_NOT_SUPPORTED, "%s: the %s backend has no binary kernels", name,
                  ex->name);
  if (l->n == 0) return MT_OK;
  if ((st = ex->binary(&bp, l, va, na, vb, nb, mask, nm, out, mask_out, &at, err)) != MT_OK) {
    mt_err_prefix(err, "%s", name); /* keeps st: err may be NULL */
    return st;
  }
  if (at >= 0)
    return mt_err(err, MT_INVALID_ARGUMENT,
                  "%s: ZeroDivisionError (integer division by a zero divisor at result element "
                  "%lld)",
                  name, (long long)at);
  return MT_OK;
}

/* ---- sparse storage ----------------------------------------------------------------- */

/* What COO and CSR storage share: data's n stored values computed from the
 * operands' values (d[k] NULL for a number; step[k] 1 for stored values,
 * 0 for a one-element dense operand broadcast over them), then the masked
 * result of data and a copy of mask_src (the masked operand's mask, of
 * data's structure). Takes data, also on failure. */
static mt_status stored_values_op(mt_call *call, const mt_exec *ex, const plan *p,
                                  const operand *o, const mt_tensor *const d[2],
                                  const int step[2], const mt_tensor *mask_src, mt_tensor *data,
                                  int64_t n, const char *name, mt_error *err) {
  const mt_host *h = mt__cpu_host(call);
  mt_tensor *mask = NULL, *out = NULL;
  mt_bin_loop l;
  memset(&l, 0, sizeof l);
  l.ndim = 1;
  l.shape[0] = l.n = n;
  l.sa[0] = step[0];
  l.sb[0] = step[1];
  l.sm[0] = 1;
  mt_status st = run_loop(ex, p, o, &l, d[0] ? d[0]->values : NULL, d[0] ? (step[0] ? n : 1) : 0,
                          d[1] ? d[1]->values : NULL, d[1] ? (step[1] ? n : 1) : 0,
                          (const uint8_t *)mask_src->values, n, data->values, NULL, name, err);
  if (st == MT_OK) st = mt_tensor_clone_host(h, mask_src, &mask, err);
  if (st != MT_OK) {
    h->free(data);
    return st;
  }
  if ((st = h->masked_new(data, mask, &out, err)) != MT_OK) return st; /* took both */
  call->out[0] = out;
  call->n_out = 1;
  return MT_OK;
}

/* SP-2: the other operand of a sparse-storage masked tensor m (inputs/0)
 * whose n stored values torch hands to the op: a masked tensor or a plain
 * tensor of m's layout gives its stored values (their structure checked
 * by the caller), a dense tensor is broadcast against the values as they
 * are (shape (n,)): one element or n elements along its last dim, else
 * torch's shape error. *step: 1 per stored value, 0 for one element. */
static mt_status sparse_other(const operand *o, mt_kind layout, int64_t n, const char *name,
                              int *step, mt_error *err) {
  const mt_tensor *t = o->t;
  *step = 1;
  if (o->masked || t->kind == layout) return MT_OK;
  if (t->kind != MT_KIND_DENSE)
    return mt_err(err, MT_NOT_SUPPORTED,
                  "%s: a %s-storage masked tensor and a %s tensor: not implemented by the CPU "
                  "backend",
                  name, mt_kind_name(layout), mt_kind_name(t->kind));
  int64_t last = t->ndim ? t->shape[t->ndim - 1] : 1;
  if (last != n && last != 1 && n != 1)
    return mt_err(err, MT_SHAPE_MISMATCH,
                  "%s: The size of tensor a (%lld) must match the size of tensor b (%lld) at "
                  "non-singleton dimension %d (the stored values against inputs/1)",
                  name, (long long)n, (long long)last, t->ndim > 1 ? t->ndim - 1 : 0);
  for (int dd = 0; dd + 1 < t->ndim; dd++)
    if (t->shape[dd] != 1) last = -1;
  if (last < 0 || (n == 1 && last != 1))
    return mt_err(err, MT_NOT_SUPPORTED,
                  "%s: a dense operand that broadcasts the stored values to a larger shape: not "
                  "implemented by the CPU backend",
                  name);
  *step = last == 1 ? 0 : 1;
  return MT_OK;
}

/* ---- COO storage ------------------------------------------------------------------ */

/* masked (op) masked of the same indices, or masked (op) number: the
 * result keeps the (coalesced) indices. */
static mt_status binary_coo(mt_call *call, const mt_exec *ex, const plan *p, const operand *o,
                            const char *name, mt_error *err) {
  const mt_host *h = mt__cpu_host(call);
  const operand *m = &o[0];
  const mt_tensor *cd[2] = {NULL, NULL}, *cm = NULL;
  mt_tensor *tmp[2] = {NULL, NULL}, *tm = NULL, *data = NULL;
  int step[2] = {1, 1};
  mt_status st;
  if ((st = mt__exec_coalesced(ex, o[0].t->data, &cd[0], &tmp[0], err)) != MT_OK) goto out;
  const mt_tensor *src = cd[0];
  int64_t n = src->nnz * mt_coo_row_numel(src);
  if (!o[1].number) {
    if ((st = sparse_other(&o[1], MT_KIND_COO, n, name, &step[1], err)) != MT_OK) goto out;
    const mt_tensor *t1 = o[1].masked ? o[1].t->data : o[1].t;
    if (t1->kind == MT_KIND_COO) {
      int eq;
      if ((st = mt__exec_coalesced(ex, t1, &cd[1], &tmp[1], err)) != MT_OK) goto out;
      /* torch: _tensors_match(indices) (torch.eq), then the sizes */
      if ((st = stored_match(name, "indices", src->indices, cd[1]->indices, 0, src->sparse_dim,
                             src->nnz, cd[1]->nnz, &eq, err)) != MT_OK)
        goto out;
      if (!eq || src->sparse_dim != cd[1]->sparse_dim) {
        st = mt_err(err, MT_INVALID_ARGUMENT,
                    "%s: sparse_coo indices must match (data of inputs/0 and inputs/1)", name);
        goto out;
      }
      if (!mt_shape_equal(src, cd[1])) {
        st = mt_err(err, MT_INVALID_ARGUMENT,
                    "%s: input1 and input2 must have the same size for binary functions.", name);
        goto out;
      }
    } else {
      cd[1] = t1; /* a dense operand, broadcast (step) */
    }
  }
  if ((st = h->coo_new(p->rt, src->ndim, src->shape, src->sparse_dim, src->nnz, &data, err)) !=
      MT_OK)
    goto out;
  if (src->nnz) memcpy(data->indices, src->indices, (size_t)(src->sparse_dim * src->nnz) * 8);
  data->coalesced = 1;
  if ((st = mt__exec_coalesced(ex, m->t->mask, &cm, &tm, err)) != MT_OK) goto out;
  st = stored_values_op(call, ex, p, o, cd, step, cm, data, n, name, err);
  data = NULL; /* taken */
out:
  for (int k = 0; k < 2; k++) mt_tensor_free(tmp[k]);
  mt_tensor_free(tm);
  if (data) h->free(data);
  return st;
}

/* ---- CSR storage ------------------------------------------------------------------ */

/* masked (op) masked of one structure, or masked (op) number: the result
 * keeps the data's crow/col indices (torch applies the op to the values). */
static mt_status binary_csr(mt_call *call, const mt_exec *ex, const plan *p, const operand *o,
                            const char *name, mt_error *err) {
  const mt_host *h = mt__cpu_host(call);
  const mt_tensor *d[2] = {o[0].t->data, NULL}, *src = o[0].t->data, *cm = o[0].t->mask;
  int step[2] = {1, 1};
  mt_tensor *data = NULL;
  mt_status st;
  if (!o[1].number) {
    if ((st = sparse_other(&o[1], MT_KIND_CSR, src->nnz, name, &step[1], err)) != MT_OK)
      return st;
    d[1] = o[1].masked ? o[1].t->data : o[1].t;
    if (d[1]->kind == MT_KIND_CSR) {
      /* torch: _tensors_match(crow) and _tensors_match(col) (torch.eq) */
      int eq;
      if ((st = stored_match(name, "crow_indices", src->crow_indices, d[1]->crow_indices, 0, 1,
                             src->shape[0] + 1, d[1]->shape[0] + 1, &eq, err)) != MT_OK)
        return st;
      if (eq && (st = stored_match(name, "col_indices", src->col_indices, d[1]->col_indices, 0,
                                   1, src->nnz, d[1]->nnz, &eq, err)) != MT_OK)
        return st;
      if (!eq)
        return mt_err(err, MT_INVALID_ARGUMENT,
                      "%s: sparse_csr indices must match (data of inputs/0 and inputs/1)", name);
    }
  }
  if (!mt__cpu_csr_same_structure(src, cm))
    return mt_err(err, MT_INVALID_ARGUMENT,
                  "%s: the CSR data and mask of a masked operand have different structures", name);
  if ((st = mt__cpu_compressed_like(h, src, p->rt, &data, err)) != MT_OK) return st;
  return stored_values_op(call, ex, p, o, d, step, cm, data, src->nnz, name, err);
}

/* ---- the kernel ------------------------------------------------------------------- */

/* Broadcast shape of the tensor operands (BIN-1); SHAPE_MISMATCH with
 * torch's message when they cannot broadcast. */
static mt_status broadcast(const operand *o, const char *name, int *ndim, int64_t *shape,
                           mt_error *err) {
  *ndim = 0;
  for (int k = 0; k < 2; k++)
    if (o[k].d && o[k].d->ndim > *ndim) *ndim = o[k].d->ndim;
  for (int d = 0; d < *ndim; d++) shape[d] = 1;
  for (int k = 0; k < 2; k++) {
    if (!o[k].d) continue;
    int off = *ndim - o[k].d->ndim;
    for (int d = 0; d < o[k].d->ndim; d++) {
      int64_t s = o[k].d->shape[d], *r = &shape[off + d];
      if (s == *r || s == 1) continue;
      if (*r == 1) {
        *r = s;
        continue;
      }
    {
      char s0[64], s1[64];
      return mt_err(err, MT_SHAPE_MISMATCH,
                    "%s: The size of tensor a (%lld) must match the size of tensor b (%lld) at "
                    "non-singleton dimension %d (inputs/0 %s, inputs/1 %s)",
                    name, (long long)(k ? *r : s), (long long)(k ? s : *r), off + d,
                    o[0].d ? mt_shape_str(o[0].d->ndim, o[0].d->shape, s0, sizeof s0) : "number",
                    o[1].d ? mt_shape_str(o[1].d->ndim, o[1].d->shape, s1, sizeof s1) : "number");
    }
    }
  }
  return MT_OK;
}

/* Plain sparse operands (SPP-2 .. SPP-6, binary_sparse.c): the merges
 * and intersections planned on the host, every value on ex (sparse_vals). */
static mt_status plain_sparse(mt_call *call, mt_op opid, const mt_exec *ex, mt_error *err) {
  return mt__cpu_binary_sparse(call, opid, ex, err);
}

static mt_status binary(mt_call *call, mt_op opid, mt_op base, const mt_exec *ex,
                        mt_error *err) {
  const char *name = mt_op_name(opid);
  const mt_host *h = mt__cpu_host(call);
  operand o[2];
  plan p;
  mt_tensor *out = NULL, *data = NULL, *mask = NULL;
  char what[32];
  mt_status st;

  mt__cpu_begin(call);
  memset(o, 0, sizeof o);
  /* plain sparse operands: torch's sparse kernels (SPP-2 .. SPP-6) */
  if (mt__cpu_binary_is_plain_sparse(call)) return plain_sparse(call, opid, ex, err);
  if (!find_op(base, &p.op))
    return mt_err(err, MT_NOT_SUPPORTED, "%s: not a binary op", name);
  /* BIN-7: torch.masked refuses every keyword argument ("len(kwargs) must
   * equal 0"): kwargs.def lists none for binary ops, so the check refuses
   * any. (With a number where torch has Tensor overloads only, torch's
   * argument parser would raise first: INVALID_ARGUMENT all the same.) */
  if ((st = mt__kw_check(opid, call->kw, err)) != MT_OK) return st;
  /* kwargs.def lists alpha for add/sub (the plain sparse path): torch.masked
   * still refuses it */
  if (call->kw && call->kw->n > 0)
    return mt_err(err, MT_INVALID_ARGUMENT,
                  "%s: kwargs/%s: MaskedTensor binary ops require that len(kwargs) == 0", name,
                  call->kw->items[0].name);
  for (int k = 0; k < 2; k++) {
    if ((st = mt__cpu_input(call, k, name, &o[k].t, err)) != MT_OK) return st;
    o[k].masked = o[k].t->kind == MT_KIND_MASKED;
    o[k].number = o[k].t->kind == MT_KIND_SCALAR;
    if (!o[k].number &&
        (st = mt_tensor_validate(o[k].t, mt__cpu_in_name(k, what, sizeof what), err)) != MT_OK)
      return st;
  }
  /* BIN-7: ops with Tensor overloads only refuse a number (Python's
   * argument parser) */
  if (o[1].number && tensors_only(p.op.code))
    return mt_err(err, MT_INVALID_ARGUMENT,
                  "%s: argument 'other' (position 2) must be Tensor, not a number", name);
  if (!o[0].masked && !o[1].masked)
    return mt_err(err, MT_NOT_SUPPORTED,
                  "%s: neither operand is a masked tensor (%s, %s); the CPU backend implements "
                  "masked semantics only",
                  name, mt_kind_name(o[0].t->kind), mt_kind_name(o[1].t->kind));
  /* BIN-7: torch.masked reads the left operand's layout: a number there
   * raises AttributeError ('int' object has no attribute 'layout'). */
  if (o[0].number) {
    mt_dtype nd = o[0].t->dtype;
    return mt_err(err, MT_INVALID_ARGUMENT,
                  "%s: a number as the left operand is refused by torch.masked ('%s' object has "
                  "no attribute 'layout')",
                  name, mt_dtype_is_float(nd) ? "float" : nd == MT_bool ? "bool" : "int");
  }
  /* a plain sparse operand meets a masked tensor of its storage (SP-2) */
  for (int k = 0; k < 2; k++)
    if (!o[k].number && !o[k].masked && o[k].t->kind != MT_KIND_DENSE &&
        !(k == 1 && o[0].masked && o[0].t->data->kind == o[1].t->kind))
      return mt_err(err, MT_NOT_SUPPORTED,
                    "%s: inputs/%d has kind %s; a masked tensor combines with a masked tensor, a "
                    "dense tensor or a number",
                    name, k, mt_kind_name(o[k].t->kind));

  /* MASK-6/8: identical masks first, as torch checks them before anything. */
  if (o[0].masked && o[1].masked && (st = masks_match(name, ex, o[0].t, o[1].t, err)) != MT_OK)
    return st;

  /* BIN-2: torch.result_type over dim tensors, 0-d tensors and numbers. */
  int dims = MT__DT_NONE, zero = MT__DT_NONE, wrapped = MT__DT_NONE;
  for (int k = 0; k < 2; k++) {
    if (o[k].number) {
      mt_dtype sd = o[k].t->dtype;
      o[k].f = mt_get_f64(o[k].t->values, sd, 0);
      /* a float number only meets float computation dtypes: no integer value */
      o[k].i = mt_dtype_is_float(sd) ? 0 : mt__cpu_ldi(o[k].t->values, sd, 0);
      /* a float number counts as the default dtype, an int as int64 */
      int wd = mt_dtype_is_float(sd) ? MT_float32 : sd == MT_bool ? MT_bool : MT_int64;
      wrapped = mt__pr_promote(wrapped, wd);
      continue;
    }
    o[k].d = o[k].masked ? o[k].t->data : o[k].t;
    if (o[k].d->ndim == 0)
      zero = mt__pr_promote(zero, (int)o[k].d->dtype);
    else
      dims = mt__pr_promote(dims, (int)o[k].d->dtype);
  }
  int ct = mt__pr_combine(dims, mt__pr_combine(zero, wrapped));
  if (ct < 0)
    return mt_err(err, MT_NOT_SUPPORTED,
                  "%s: the operands promote to int16, which is not an mtcs dtype", name);
  p.ct = (mt_dtype)ct;
  if (p.op.result == R_FLOAT && !mt_dtype_is_float(p.ct)) p.ct = MT_float32;
  p.fl = mt_dtype_is_float(p.ct);
  /* BIN-2: a number is cast to the computation dtype first, except that
   * torch's float16 (and bfloat16) mul, div and floor_divide kernels take a CPU scalar in
   * float (their opmath type): m * 0.1 in float16 is float(x) * 0.1f,
   * m + 0.1 is float(x) + float(half(0.1)) */
  p.nt = p.ct;
  if ((p.ct == MT_float16 || p.ct == MT_bfloat16) &&
      (p.op.code == K_MUL || p.op.code == K_DIV || p.op.code == K_FLOORDIV))
    p.nt = MT_float32;
  p.rt = p.op.result == R_BOOL ? MT_bool : p.ct;
  /* BIN-3: sub refuses any bool operand (torch's sub_check), before the
   * kernel lookup. */
  if (p.op.code == K_SUB) {
    int nb = 0;
    for (int k = 0; k < 2; k++)
      nb += (o[k].number ? o[k].t->dtype : o[k].d->dtype) == MT_bool;
    if (nb)
      return mt_err(err, MT_DTYPE_MISMATCH,
                    "%s: Subtraction, the `-` operator, with %s is not supported.", name,
                    nb == 2 ? "two bool tensors" : "a bool tensor");
  }
  /* BIN-3: no kernel for the computation dtype. */
  int acc = p.fl ? A_FLOAT : p.ct == MT_bool ? A_BOOL : A_INT;
  if (!(p.op.accepts & acc))
    return mt_err(err, MT_DTYPE_MISMATCH, "%s: \"%s\" not implemented for '%s'", name,
                  p.op.kernel, mt__cpu_torch_type(p.ct));

  const mt_tensor *m = o[0].masked ? o[0].t : o[1].t;
  /* SP-2: t (op) m with a plain dense t of m's shape: torch computes the
   * dense result, then expands m's sparse mask to it: refused */
  if ((m->data->kind == MT_KIND_COO || m->data->kind == MT_KIND_CSR) && !o[0].masked &&
      o[0].t->kind == MT_KIND_DENSE && mt_shape_equal(o[0].t, m))
    return mt_err(err, MT_LAYOUT_MISMATCH,
                  "%s: expand is unsupported for %s tensors (the sparse mask of inputs/1 "
                  "expanded to the dense result)",
                  name, m->data->kind == MT_KIND_COO ? "Sparse" : "SparseCsr");
  if ((m->data->kind == MT_KIND_COO || m->data->kind == MT_KIND_CSR) && !o[0].masked)
    return mt_err(err, MT_NOT_SUPPORTED,
                  "%s: a plain tensor (op) a sparse-storage masked tensor: not implemented by the "
                  "CPU backend",
                  name);
  if (m->data->kind == MT_KIND_COO) return binary_coo(call, ex, &p, o, name, err);
  if (m->data->kind == MT_KIND_CSR) return binary_csr(call, ex, &p, o, name, err);
  for (int k = 0; k < 2; k++)
    if (o[k].masked &&
        (o[k].t->data->kind != MT_KIND_DENSE || o[k].t->mask->kind != MT_KIND_DENSE))
      return mt_err(err, MT_NOT_SUPPORTED,
                    "%s: inputs/%d mixes storages; the CPU backend combines dense-storage masked "
                    "tensors",
                    name, k);

  /* BIN-1: broadcast data and plain tensors; the mask follows. */
  mt_bin_loop l;
  memset(&l, 0, sizeof l);
  if ((st = broadcast(o, name, &l.ndim, l.shape, err)) != MT_OK) return st;
  if (o[0].d) bstrides(o[0].d, l.ndim, l.shape, l.sa);
  if (o[1].d) bstrides(o[1].d, l.ndim, l.shape, l.sb);
  bstrides(m->mask, l.ndim, l.shape, l.sm);
  if ((st = mt__cpu_new_masked_dense(h, p.rt, l.ndim, l.shape, &out, &data, &mask, err)) != MT_OK)
    return st;
  l.n = mt_numel(data);
  /* a zero divisor raises unless it is masked-out data (MASK-9) */
  if ((st = run_loop(ex, &p, o, &l, o[0].d ? o[0].d->values : NULL, o[0].d ? extent(o[0].d) : 0,
                     o[1].d ? o[1].d->values : NULL, o[1].d ? extent(o[1].d) : 0,
                     (const uint8_t *)m->mask->values, extent(m->mask), data->values,
                     (uint8_t *)mask->values, name, err)) != MT_OK)
    goto fail;
  /* BIN-2: torch.masked wraps the result in a MaskedTensor, which refuses
   * uint8 and bfloat16 data (bool m + uint8 t, int32 m + bfloat16 t); the
   * in-place variants store into self instead (BIN-10) */
  if ((p.rt == MT_uint8 || p.rt == MT_bfloat16) && opid == base) {
    st = mt_err(err, MT_DTYPE_MISMATCH,
                "%s: the result is %s: torch.%s is not supported in MaskedTensor.", name,
                mt_dtype_name(p.rt), mt_dtype_name(p.rt));
    goto fail;
  }
  call->out[0] = out;
  call->n_out = 1;
  return MT_OK;
fail:
  h->free(out);
  return st;
}

#define X(name, code, acc, res, kname)                                 \
  mt_status mt_cpu_##name(mt_call *call, mt_error *err) {                \
    return binary(call, MT_OP_##name, MT_OP_##name, &mt_cpu_exec, err);  \
  }
BINARY_OPS(X)
#undef X

/* ---- in-place variants (BIN-10) ----------------------------------------------------- */

/* torch.masked's in-place binary ops: the out-of-place result (promotion,
 * broadcasting, masks as above) must have self's shape and be castable to
 * self's dtype (no float to integer, nothing but bool to bool); the result
 * is self's new value: the data cast to self's dtype, self's mask. mtcs
 * never writes an input (CALL-1): the updated self is a new output. */
static mt_status binary_inplace(mt_call *call, mt_op opid, mt_op base, const mt_exec *ex,
                                mt_error *err) {
  const char *name = mt_op_name(opid);
  const mt_host *h = mt__cpu_host(call);
  mt_tensor *d = NULL, *m = NULL, *r = NULL;
  char s0[64], s1[64];
  if (mt__cpu_binary_is_plain_sparse(call)) return plain_sparse(call, opid, ex, err);
  mt_status st = binary(call, opid, base, ex, err);
  if (st != MT_OK) return st;
  const mt_tensor *self = call->in[0], *o = call->out[0];
  if (self->kind != MT_KIND_MASKED) {
    st = mt_err(err, MT_INVALID_ARGUMENT,
                "%s: inputs/0 is a %s tensor: 'Tensor' object has no attribute "
                "'_set_data_mask' (in-place ops update a masked tensor)",
                name, mt_kind_name(self->kind));
    goto fail;
  }
  if (!mt_shape_equal(o, self)) {
    st = mt_err(err, MT_SHAPE_MISMATCH,
                "%s: output with shape %s doesn't match the broadcast shape %s", name,
                mt_shape_str(self->ndim, self->shape, s0, sizeof s0),
                mt_shape_str(o->ndim, o->shape, s1, sizeof s1));
    goto fail;
  }
  mt_dtype sd = self->data->dtype, rd = o->data->dtype;
  if (mt__pr_category((int)rd) > mt__pr_category((int)sd)) {
    st = mt_err(err, MT_DTYPE_MISMATCH,
                "%s: result type %s can't be cast to the desired output type %s", name,
                mt__cpu_torch_type(rd), mt__cpu_torch_type(sd));
    goto fail;
  }
  if (self->data->kind == MT_KIND_COO) {
    /* SP-2: torch rebuilds self's data uncoalesced, then its validation
     * asks for the indices (as for the unary ops, UN-6) */
    st = mt_err(err, MT_LAYOUT_MISMATCH,
                "%s: in place on COO storage: torch refuses it (RuntimeError: Cannot get indices "
                "on an uncoalesced tensor, please call .coalesce() first)",
                name);
    goto fail;
  }
  if (rd == sd) return MT_OK;
  /* the op runs in place on self's values: the result keeps self's dtype
   * (CSR: self's structure) */
  if (o->data->kind == MT_KIND_CSR)
    st = mt__cpu_compressed_like(h, o->data, sd, &d, err);
  else
    st = h->dense_new(sd, o->ndim, o->shape, &d, err);
  if (st != MT_OK) goto fail;
  int64_t nv = o->data->kind == MT_KIND_CSR ? o->data->nnz : mt_numel(d);
  for (int64_t i = 0; i < nv; i++) {
    if (mt_dtype_is_float(sd))
      mt__cpu_st(d->values, sd, i, mt__cpu_ld(o->data->values, rd, i));
    else
      mt__cpu_sti(d->values, sd, i, mt__cpu_ldi(o->data->values, rd, i));
  }
  if ((st = mt_tensor_clone_host(h, o->mask, &m, err)) != MT_OK) goto fail;
  st = h->masked_new(d, m, &r, err); /* takes d and m */
  d = m = NULL;
  if (st != MT_OK) goto fail;
  h->free(call->out[0]);
  call->out[0] = r;
  return MT_OK;
fail:
  if (d) h->free(d);
  if (m) h->free(m);
  mt__cpu_drop_outputs(call);
  return st;
}

#define X(name, base)                                                             \
  mt_status mt_cpu_##name(mt_call *call, mt_error *err) {                         \
    return binary_inplace(call, MT_OP_##name, MT_OP_##base, &mt_cpu_exec, err);   \
  }
INPLACE_OPS(X)
#undef X

/* ---- the family's kernels with another backend's compute (common/exec.h) ---------- */

mt_status mt__binary_run(mt_call *call, mt_op op, const mt_exec *ex, mt_error *err) {
  switch (op) {
#define X(name, code, acc, res, kname) \
  case MT_OP_##name: return binary(call, op, op, ex, err);
    BINARY_OPS(X)
#undef X
#define X(name, base) \
  case MT_OP_##name: return binary_inplace(call, op, MT_OP_##base, ex, err);
    INPLACE_OPS(X)
#undef X
  default: return mt_err(err, MT_NOT_SUPPORTED, "%s: not a binary op", mt_op_name(op));
  }
}

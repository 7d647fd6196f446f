/* sparse_convert.c - CPU kernels of the sparse_convert family: plain sparse
 * conversions, accessors and constructors (spec/SEMANTICS.md SPC-1 ..
 * SPC-11), and the plain forms of to_dense, to_sparse, to_sparse_csr.
 *
 * Every conversion goes through one engine: the input's stored elements as
 * a list of entries (batch, row, col, pointer to the element's dense
 * values), then one builder per result layout:
 *   dense  -> entries: the elements (cells of `dense` values) with a
 *             nonzero value (SPC-1);
 *   COO    -> entries: the coalesced entries, stored zeros included (SPC-2);
 *   CSR/CSC/BSR/BSC -> entries: every cell of every stored block, zeros
 *             inside a block included (SPC-2).
 * The compressed builder groups entries into blocks (bh x bw; 1 x 1 for
 * CSR and CSC), sorted by batch, compressed index, plain index (SPC-4); a
 * block is stored when an entry falls in it. Results are allocated through
 * the call's host; temporaries are freed on every path (goto out).
 *
 * torch's refusals (SPC-5, SPC-8, SPC-9, SPC-10) give the status its
 * golden records, with torch's message where one exists. */
#include "sparse_convert.h"

#include "cpu_util.h"
#include "mt/kwargs.h"

/* torch's names of the layouts, as its messages spell them */
static const char *torch_layout(mt_kind k) {
  switch (k) {
  case MT_KIND_DENSE: return "Strided";
  case MT_KIND_COO: return "Sparse";
  case MT_KIND_CSR: return "SparseCsr";
  case MT_KIND_CSC: return "SparseCsc";
  case MT_KIND_BSR: return "SparseBsr";
  case MT_KIND_BSC: return "SparseBsc";
  default: return mt_kind_name(k);
  }
}

/* Plain dense or sparse input i, validated. */
static mt_status plain_input(const mt_call *call, int i, const char *op, const mt_tensor **t,
                             mt_error *err) {
  char what[32];
  mt_status st = mt__cpu_input(call, i, op, t, err);
  if (st != MT_OK) return st;
  mt_kind k = (*t)->kind;
  if (k == MT_KIND_MASKED) /* torch.masked has no handler for these ops (SPC-5, SPC-8) */
    return mt_err(err, MT_LAYOUT_MISMATCH,
                  "%s: inputs/%d is a MaskedTensor: all __torch_dispatch__ handlers returned "
                  "NotImplemented", op, i);
  if (k == MT_KIND_SCALAR)
    return mt_err(err, MT_NOT_SUPPORTED, "%s: inputs/%d has kind %s; expected a plain tensor", op,
                  i, mt_kind_name(k));
  if ((st = mt_tensor_validate(*t, mt__cpu_in_name(i, what, sizeof what), err)) != MT_OK) {
    mt_err_prefix(err, "%s", op); /* keeps st: err may be NULL (mt_err_prefix gives MT_OK then) */
    return st;
  }
  return MT_OK;
}

/* ---- entries ------------------------------------------------------------- */

typedef struct {
  int64_t b, r, c;  /* batch (flat), row, col (elements) */
  const char *src;  /* the element's `dense` values */
} spc_entry;

typedef struct {
  spc_entry *e;
  int64_t n, cap;
} spc_list;

static mt_status list_push(spc_list *l, int64_t b, int64_t r, int64_t c, const char *src,
                           mt_error *err) {
  if (l->n == l->cap) {
    int64_t cap = l->cap ? 2 * l->cap : 64;
    spc_entry *e = realloc(l->e, (size_t)cap * sizeof *e);
    if (!e) return mt_err(err, MT_OUT_OF_MEMORY, "sparse conversion: cannot hold %lld entries",
                          (long long)cap);
    l->e = e;
    l->cap = cap;
  }
  l->e[l->n++] = (spc_entry){b, r, c, src};
  return MT_OK;
}

/* SPC-1: an element is stored when one of its `dense` values is nonzero
 * (NaN is nonzero, -0.0 is zero). */
static int nonzero_run(const char *p, mt_dtype dt, int64_t n) {
  for (int64_t j = 0; j < n; j++) {
    if (mt__cpu_is_int(dt) || dt == MT_bool) {
      if (mt__cpu_ldi(p, dt, j) != 0) return 1;
    } else if (mt__cpu_ld(p, dt, j) != 0.0 || isnan(mt__cpu_ld(p, dt, j))) {
      return 1;
    }
  }
  return 0;
}

/* A dense (contiguous) tensor of nb batch dims, 2 sparse dims, dd dense
 * dims, cut in bh x bw blocks (1 x 1: elements): every cell of each block
 * that holds a nonzero, the block's zeros (-0.0 too) as the dense holds them. */
static mt_status entries_from_dense(const mt_tensor *x, int nb, int dd, int64_t bh, int64_t bw,
                                    spc_list *l, mt_error *err) {
  int64_t batches = mt_shape_numel(nb, x->shape), rows = x->shape[nb], cols = x->shape[nb + 1];
  int64_t dense = mt_shape_numel(dd, x->shape + nb + 2);
  size_t es = mt_dtype_size(x->dtype);
  mt_status st;
#define SPC_CELL(b, r, c)                                                                          \
  ((const char *)x->values + (size_t)((((b) * rows + (r)) * cols + (c)) * dense) * es)
  for (int64_t b = 0; b < batches; b++)
    for (int64_t br = 0; br < rows / bh; br++)
      for (int64_t bc = 0; bc < cols / bw; bc++) {
        int any = 0;
        for (int64_t u = 0; u < bh && !any; u++)
          for (int64_t v = 0; v < bw && !any; v++)
            any = nonzero_run(SPC_CELL(b, br * bh + u, bc * bw + v), x->dtype, dense);
        for (int64_t u = 0; any && u < bh; u++)
          for (int64_t v = 0; v < bw; v++) {
            int64_t r = br * bh + u, c = bc * bw + v;
            if ((st = list_push(l, b, r, c, SPC_CELL(b, r, c), err)) != MT_OK) return st;
          }
      }
#undef SPC_CELL
  return MT_OK;
}

/* A coalesced COO tensor of sparse_dim 2: every entry (stored zeros too). */
static mt_status entries_from_coo(const mt_tensor *x, spc_list *l, mt_error *err) {
  int64_t row = mt_coo_row_numel(x);
  size_t es = mt_dtype_size(x->dtype);
  mt_status st;
  for (int64_t k = 0; k < x->nnz; k++)
    if ((st = list_push(l, 0, x->indices[k], x->indices[x->nnz + k],
                        (const char *)x->values + (size_t)(k * row) * es, err)) != MT_OK)
      return st;
  return MT_OK;
}

/* A compressed tensor: every cell of every stored block, in storage order
 * (batch, compressed slot, entry, cell row-major). */
static mt_status entries_from_compressed(const mt_tensor *x, spc_list *l, mt_error *err) {
  mt_cgeom g = {0};
  size_t es = mt_dtype_size(x->dtype);
  mt_status st;
  if (!mt_cgeom_of(x, &g))
    return mt_err(err, MT_INVALID_ARGUMENT, "sparse conversion: a malformed %s input",
                  mt_kind_name(x->kind));
  for (int64_t b = 0; b < g.batches; b++)
    MT_CGEOM_FOR_EACH_CELL(x, &g, b, r, c, at)
      if ((st = list_push(l, b, r, c, (const char *)x->values + (size_t)at * es, err)) != MT_OK)
        return st;
  return MT_OK;
}

/* ---- the compressed builder (SPC-4) -------------------------------------- */

typedef struct {
  int64_t b, comp, plain, r, c;
  const char *src;
} spc_key;

static int key_cmp(const void *pa, const void *pb) {
  const spc_key *a = pa, *b = pb;
  int64_t x[5] = {a->b, a->comp, a->plain, a->r, a->c},
          y[5] = {b->b, b->comp, b->plain, b->r, b->c};
  for (int k = 0; k < 5; k++)
    if (x[k] != y[k]) return x[k] < y[k] ? -1 : 1;
  return 0;
}

/* A compressed result of kind (bh x bw blocks; 1 x 1 for CSR/CSC) holding
 * the entries of l: blocks sorted by batch, compressed, plain index. */
static mt_status build_compressed(const mt_host *h, mt_kind kind, mt_dtype dt, int ndim,
                                  const int64_t *shape, int dd, int64_t bh, int64_t bw,
                                  const spc_list *l, mt_tensor **out, mt_error *err) {
  mt_status st = MT_OK;
  spc_key *keys = NULL;
  int64_t *per_batch = NULL;
  int nb = ndim - 2 - dd;
  int by_col = kind == MT_KIND_CSC || kind == MT_KIND_BSC;
  int64_t batches = mt_shape_numel(nb, shape), dense = mt_shape_numel(dd, shape + nb + 2);
  size_t es = mt_dtype_size(dt);
  *out = NULL;
  keys = malloc((size_t)(l->n ? l->n : 1) * sizeof *keys);
  per_batch = calloc((size_t)(batches ? batches : 1), sizeof *per_batch);
  if (!keys || !per_batch) {
    st = mt_err(err, MT_OUT_OF_MEMORY, "sparse conversion: cannot sort %lld entries",
                (long long)l->n);
    goto out;
  }
  for (int64_t k = 0; k < l->n; k++) {
    const spc_entry *e = &l->e[k];
    int64_t br = e->r / bh, bc = e->c / bw;
    keys[k] = (spc_key){e->b, by_col ? bc : br, by_col ? br : bc, e->r, e->c, e->src};
  }
  qsort(keys, (size_t)l->n, sizeof *keys, key_cmp);
  for (int64_t k = 0; k < l->n; k++)
    if (k == 0 || keys[k].b != keys[k - 1].b || keys[k].comp != keys[k - 1].comp ||
        keys[k].plain != keys[k - 1].plain)
      per_batch[keys[k].b]++;
  int64_t nnz = batches ? per_batch[0] : 0;
  for (int64_t b = 1; b < batches; b++)
    if (per_batch[b] != nnz) {
      st = mt_err(err, MT_INVALID_ARGUMENT,
                  "Expect the same number of specified elements per batch. (batch 0 has %lld, "
                  "batch %lld has %lld)",
                  (long long)nnz, (long long)b, (long long)per_batch[b]);
      goto out;
    }
  int64_t blocksize[2] = {bh, bw};
  if ((st = h->compressed_new(kind, dt, ndim, shape, dd,
                              mt_kind_is_blocked(kind) ? blocksize : NULL, nnz, out, err)) != MT_OK)
    goto out;
  mt_cgeom g = {0};
  mt_cgeom_of(*out, &g);
  for (int64_t k = 0, slot = -1; k < l->n; k++) {
    const spc_key *q = &keys[k];
    if (k == 0 || q->b != keys[k - 1].b) slot = -1;
    if (k == 0 || q->b != keys[k - 1].b || q->comp != keys[k - 1].comp ||
        q->plain != keys[k - 1].plain) {
      slot++;
      (*out)->crow_indices[q->b * (g.ncomp + 1) + q->comp + 1]++;
      (*out)->col_indices[q->b * nnz + slot] = q->plain;
    }
    int64_t u = q->r % bh, v = q->c % bw;
    memcpy((char *)(*out)->values +
               (size_t)((q->b * nnz + slot) * g.entry + (u * bw + v) * dense) * es,
           q->src, (size_t)dense * es);
  }
  for (int64_t b = 0; b < batches; b++)
    for (int64_t i = 0; i < g.ncomp; i++)
      (*out)->crow_indices[b * (g.ncomp + 1) + i + 1] +=
          (*out)->crow_indices[b * (g.ncomp + 1) + i];
out:
  free(keys);
  free(per_batch);
  if (st != MT_OK && *out) {
    h->free(*out);
    *out = NULL;
  }
  return st;
}

/* ---- COO results (SPC-1, SPC-3) ------------------------------------------- */

/* SPC-1: a dense tensor with sparse_dim sparse dims: the positions whose
 * value row holds a nonzero, row-major, coalesced. */
static mt_status dense_to_coo(const mt_host *h, const mt_tensor *x, int sd, mt_tensor **out,
                              mt_error *err) {
  int64_t npos = mt_shape_numel(sd, x->shape), row = mt_shape_numel(x->ndim - sd, x->shape + sd);
  size_t es = mt_dtype_size(x->dtype);
  int64_t nnz = 0;
  mt_status st;
  for (int64_t p = 0; p < npos; p++)
    nnz += nonzero_run((const char *)x->values + (size_t)(p * row) * es, x->dtype, row);
  if ((st = h->coo_new(x->dtype, x->ndim, x->shape, sd, nnz, out, err)) != MT_OK) return st;
  for (int64_t p = 0, k = 0; p < npos; p++) {
    const char *src = (const char *)x->values + (size_t)(p * row) * es;
    if (!nonzero_run(src, x->dtype, row)) continue;
    int64_t rem = p;
    for (int d = sd - 1; d >= 0; d--) {
      (*out)->indices[d * nnz + k] = rem % x->shape[d];
      rem /= x->shape[d];
    }
    memcpy((char *)(*out)->values + (size_t)(k * row) * es, src, (size_t)row * es);
    k++;
  }
  (*out)->coalesced = 1;
  return MT_OK;
}

/* SPC-3: a compressed tensor as COO: every cell of every stored block in
 * storage order; coalesced only from CSR (row-major order). */
static mt_status compressed_to_coo(const mt_host *h, const mt_tensor *x, mt_tensor **out,
                                   mt_error *err) {
  spc_list l = {0};
  mt_status st;
  mt_cgeom g = {0};
  size_t es = mt_dtype_size(x->dtype);
  if ((st = entries_from_compressed(x, &l, err)) != MT_OK) goto out;
  mt_cgeom_of(x, &g);
  int sd = g.nb + 2;
  if ((st = h->coo_new(x->dtype, x->ndim, x->shape, sd, l.n, out, err)) != MT_OK) goto out;
  for (int64_t k = 0; k < l.n; k++) {
    const spc_entry *e = &l.e[k];
    int64_t rem = e->b;
    for (int d = g.nb - 1; d >= 0; d--) {
      (*out)->indices[d * l.n + k] = rem % x->shape[d];
      rem /= x->shape[d];
    }
    (*out)->indices[g.nb * l.n + k] = e->r;
    (*out)->indices[(g.nb + 1) * l.n + k] = e->c;
    memcpy((char *)(*out)->values + (size_t)(k * g.dense) * es, e->src, (size_t)g.dense * es);
  }
  /* torch's flag: true from CSR, from BSR with one-row blocks (both row-major)
   * and from at most one stored block; false otherwise, though no index
   * repeats (SPC-3) */
  (*out)->coalesced = x->kind == MT_KIND_CSR || (x->kind == MT_KIND_BSR && g.bh == 1) ||
                      g.batches * g.nnz <= 1;
out:
  free(l.e);
  return st;
}

/* ---- dense results (SPC-11) ----------------------------------------------- */

/* A dense contiguous core copy of any plain layout (COO duplicates summed). */
static mt_status densify(const mt_tensor *x, mt_tensor **out, mt_error *err) {
  return mt_to_dense(x, out, err);
}

static mt_status to_dense_out(mt_call *call, const mt_tensor *x, mt_error *err) {
  mt_tensor *d = NULL;
  mt_status st = densify(x, &d, err);
  if (st == MT_OK) st = mt_tensor_clone_host(mt__cpu_host(call), d, &call->out[0], err);
  if (st == MT_OK) call->n_out = 1;
  mt_tensor_free(d);
  return st;
}

/* ---- conversions (SPC-1 .. SPC-5) ----------------------------------------- */

typedef struct {
  mt_kind target;
  int has_sparse_dim, has_dense_dim, has_blocksize;
  int64_t sparse_dim, dense_dim, bh, bw;
} spc_args;

static mt_status read_blocksize(const char *op, const mt_kwargs *kw, spc_args *a, mt_error *err) {
  const mt_kwarg *bs = mt_kw_find(kw, "blocksize");
  if (!bs) return MT_OK;
  if (bs->type != MT_KW_INTS || bs->n != 2 || bs->ints[0] < 1 || bs->ints[1] < 1)
    return mt_err(err, MT_INVALID_ARGUMENT, "%s: blocksize must be a pair of positive ints", op);
  a->has_blocksize = 1;
  a->bh = bs->ints[0];
  a->bw = bs->ints[1];
  return MT_OK;
}

/* COO result (SPC-1, SPC-3). */
static mt_status convert_to_coo(mt_call *call, const char *op, const mt_tensor *x,
                                const spc_args *a, mt_error *err) {
  const mt_host *h = mt__cpu_host(call);
  mt_status st;
  if (a->has_blocksize)
    return mt_err(err, MT_INVALID_ARGUMENT,
                  "%s: conversion from %s to Sparse with blocksize argument given is not supported",
                  op, torch_layout(x->kind));
  if (x->kind == MT_KIND_DENSE) {
    int64_t sd = x->ndim;
    if (a->has_sparse_dim) sd = a->sparse_dim;
    else if (a->has_dense_dim) {
      if (a->dense_dim < 0 || a->dense_dim > x->ndim)
        return mt_err(err, MT_INVALID_ARGUMENT,
                      "%s: dense_dim argument must be in [0,%d] range, but %lld is given", op,
                      x->ndim, (long long)a->dense_dim);
      sd = x->ndim - a->dense_dim;
    }
    if (sd < 0 || sd > x->ndim)
      return mt_err(err, MT_INVALID_ARGUMENT,
                    "%s: sparse_dim argument must be in [0,%d] range, but %lld is given", op,
                    x->ndim, (long long)sd);
    if (sd == 0 && x->ndim > 0)
      return mt_err(err, MT_INVALID_ARGUMENT,
                    "%s: sparse_dim argument must be in >0 when self.dim()>0", op);
    const mt_tensor *v;
    mt_tensor *tmp = NULL;
    if ((st = mt__cpu_contig(x, &v, &tmp, err)) == MT_OK)
      st = dense_to_coo(h, v, (int)sd, &call->out[0], err);
    mt_tensor_free(tmp);
    if (st == MT_OK) call->n_out = 1;
    return st;
  }
  if (a->has_dense_dim)
    return mt_err(err, MT_INVALID_ARGUMENT,
                  "%s: conversion from %s to Sparse with dense_dim argument given is not supported",
                  op, torch_layout(x->kind));
  if (x->kind == MT_KIND_COO) {
    if (a->has_sparse_dim && a->sparse_dim != x->sparse_dim)
      return mt_err(err, MT_INVALID_ARGUMENT,
                    "%s: conversion from Sparse to Sparse with sparse_dim argument "
                    "!=self.sparse_dim() is not supported (%lld != %d)",
                    op, (long long)a->sparse_dim, x->sparse_dim);
    /* SPC-3: the tensor itself (a copy), its coalesced flag kept */
    st = mt__cpu_copy(h, x, &call->out[0], err);
    if (st == MT_OK) call->n_out = 1;
    return st;
  }
  if (a->has_sparse_dim && a->sparse_dim != 2)
    return mt_err(err, MT_INVALID_ARGUMENT,
                  "%s: conversion from %s to Sparse with sparse_dim argument !=2 is not supported",
                  op, torch_layout(x->kind));
  st = compressed_to_coo(h, x, &call->out[0], err);
  if (st == MT_OK) call->n_out = 1;
  return st;
}

/* Compressed result (SPC-1, SPC-2, SPC-4, SPC-5). */
static mt_status convert_to_compressed(mt_call *call, const char *op, const mt_tensor *x,
                                       const spc_args *a, mt_error *err) {
  const mt_host *h = mt__cpu_host(call);
  const char *tl = torch_layout(a->target);
  int blocked = mt_kind_is_blocked(a->target);
  int64_t bh = blocked ? a->bh : 1, bw = blocked ? a->bw : 1;
  spc_list l = {0};
  mt_tensor *tmp = NULL;
  const mt_tensor *v = NULL;
  mt_status st = MT_OK;
  int nb = 0, dd = 0;
  if (blocked && !a->has_blocksize)
    return mt_err(err, MT_INVALID_ARGUMENT,
                  "%s: conversion from %s to %s without blocksize argument given is not supported",
                  op, torch_layout(x->kind), tl);
  if (!blocked && a->has_blocksize)
    return mt_err(err, MT_INVALID_ARGUMENT,
                  "%s: conversion from %s to %s with blocksize argument given is not supported", op,
                  torch_layout(x->kind), tl);
  if (x->kind == MT_KIND_DENSE) {
    if (x->ndim < 2) /* torch selects dim 1 of the tensor viewed as [n, 1] */
      return mt_err(err, MT_INDEX_OUT_OF_RANGE,
                    "%s: select(): index 1 out of range for a %d-d tensor (to %s needs 2 dims)",
                    op, x->ndim, tl);
    dd = a->has_dense_dim ? (int)a->dense_dim : 0;
    if (blocked && dd > x->ndim - 2) /* torch's blocked path indexes dim -(dd + 2) first */
      return mt_err(err, MT_INDEX_OUT_OF_RANGE,
                    "%s: Dimension out of range (expected to be in range of [%d, %d], but got %d)",
                    op, -x->ndim, x->ndim - 1, -(dd + 2));
    if (a->dense_dim < 0 || dd > x->ndim - 2)
      return mt_err(err, MT_INVALID_ARGUMENT,
                    "%s: dense_dim argument must be in [0,%d] range, but %lld is given", op,
                    x->ndim - 2, (long long)a->dense_dim);
    nb = x->ndim - 2 - dd;
  } else {
    if (a->has_dense_dim)
      return mt_err(err, MT_INVALID_ARGUMENT,
                    "%s: conversion from %s to %s with dense_dim argument given is not supported",
                    op, torch_layout(x->kind), tl);
    if (x->kind == MT_KIND_COO) {
      if (x->sparse_dim != 2)
        return mt_err(err, MT_INVALID_ARGUMENT,
                      "%s: conversion from Sparse to %s for input tensors with sparse_dim()!=2 is "
                      "not supported (sparse_dim %d)",
                      op, tl, x->sparse_dim);
      dd = x->ndim - 2;
    } else {
      dd = x->dense_dim;
      nb = x->ndim - 2 - dd;
      if (mt_kind_is_blocked(x->kind) && !blocked)
        return mt_err(err, MT_LAYOUT_MISMATCH,
                      "%s: expected SparseCsr or SparseCsc layout but got %s", op,
                      torch_layout(x->kind));
      if (mt_kind_is_blocked(x->kind) && (x->blocksize[0] != bh || x->blocksize[1] != bw))
        return mt_err(err, MT_INVALID_ARGUMENT,
                      "%s: conversion from %s to %s with blocksize changed from [%lld, %lld] to "
                      "[%lld, %lld] is not supported",
                      op, torch_layout(x->kind), tl, (long long)x->blocksize[0],
                      (long long)x->blocksize[1], (long long)bh, (long long)bw);
      if (!mt_kind_is_blocked(x->kind) && blocked && nb > 0)
        return mt_err(err, MT_INVALID_ARGUMENT,
                      "%s: conversion from %s to %s for batched inputs is not supported", op,
                      torch_layout(x->kind), tl);
    }
  }
  int64_t rows = x->shape[nb], cols = x->shape[nb + 1];
  if (rows % bh || cols % bw)
    return mt_err(err, MT_INVALID_ARGUMENT,
                  "%s: tensor sparse size (%lld,%lld) must be divisible by given blocksize "
                  "(%lld,%lld)",
                  op, (long long)rows, (long long)cols, (long long)bh, (long long)bw);
  if (x->kind == MT_KIND_DENSE) {
    if ((st = mt__cpu_contig(x, &v, &tmp, err)) != MT_OK) goto out;
    st = entries_from_dense(v, nb, dd, bh, bw, &l, err);
  } else if (x->kind == MT_KIND_COO) {
    if ((st = mt__cpu_coalesced(x, &v, &tmp, err)) != MT_OK) goto out; /* SPC-2: summed first */
    st = entries_from_coo(v, &l, err);
  } else {
    st = entries_from_compressed(x, &l, err);
  }
  if (st != MT_OK) goto out;
  if ((st = build_compressed(h, a->target, x->dtype, x->ndim, x->shape, dd, bh, bw, &l,
                             &call->out[0], err)) == MT_OK)
    call->n_out = 1;
out:
  free(l.e);
  mt_tensor_free(tmp);
  return st;
}

/* Every conversion op: target = the op's layout (to_sparse: its layout=). */
static mt_status convert(mt_call *call, mt_op opid, mt_kind target, mt_error *err) {
  const char *op = mt_op_name(opid);
  const mt_tensor *x;
  spc_args a = {.target = target};
  mt_status st;
  mt__cpu_begin(call);
  if ((st = mt__kw_check(opid, call->kw, err)) != MT_OK) return st;
  if (opid == MT_OP_to_sparse_coo && call->n_in > 0 && call->in && call->in[0] &&
      call->in[0]->kind == MT_KIND_MASKED)
    return mt_cpu_to_sparse(call, err); /* torch.masked: to_sparse_coo is to_sparse (STR-6) */
  if ((st = plain_input(call, 0, op, &x, err)) != MT_OK) return st;
  const mt_kwarg *lay = mt_kw_find(call->kw, "layout"), *sd = mt_kw_find(call->kw, "sparse_dim"),
                 *dd = mt_kw_find(call->kw, "dense_dim");
  if (lay && sd)
    return mt_err(err, MT_INVALID_ARGUMENT,
                  "%s: to_sparse() takes 0 positional arguments but 1 was given (sparse_dim "
                  "with layout=)", op);
  if (lay) mt_kw_layout_parse(lay->s, &a.target);
  if (sd) a.has_sparse_dim = 1, a.sparse_dim = sd->i;
  if (dd) a.has_dense_dim = 1, a.dense_dim = dd->i;
  if ((st = read_blocksize(op, call->kw, &a, err)) != MT_OK) return st;
  if (a.target == MT_KIND_DENSE) return to_dense_out(call, x, err);
  if (a.target == MT_KIND_COO) return convert_to_coo(call, op, x, &a, err);
  return convert_to_compressed(call, op, x, &a, err);
}

mt_status mt_cpu_to_sparse_coo(mt_call *c, mt_error *e) {
  return convert(c, MT_OP_to_sparse_coo, MT_KIND_COO, e);
}
mt_status mt_cpu_to_sparse_csc(mt_call *c, mt_error *e) {
  return convert(c, MT_OP_to_sparse_csc, MT_KIND_CSC, e);
}
mt_status mt_cpu_to_sparse_bsr(mt_call *c, mt_error *e) {
  return convert(c, MT_OP_to_sparse_bsr, MT_KIND_BSR, e);
}
mt_status mt_cpu_to_sparse_bsc(mt_call *c, mt_error *e) {
  return convert(c, MT_OP_to_sparse_bsc, MT_KIND_BSC, e);
}
mt_status mt__spc_to_sparse(mt_call *c, mt_error *e) {
  return convert(c, MT_OP_to_sparse, MT_KIND_COO, e);
}
mt_status mt__spc_to_sparse_csr(mt_call *c, mt_error *e) {
  return convert(c, MT_OP_to_sparse_csr, MT_KIND_CSR, e);
}

/* SPC-11: to_dense of every layout (COO duplicates summed). */
mt_status mt__spc_to_dense(mt_call *call, mt_error *err) {
  const mt_tensor *x;
  mt_status st;
  mt__cpu_begin(call);
  if ((st = mt__kw_check(MT_OP_to_dense, call->kw, err)) != MT_OK) return st;
  if ((st = plain_input(call, 0, "to_dense", &x, err)) != MT_OK) return st;
  return to_dense_out(call, x, err);
}

/* ---- coalesce (SPC-6) ------------------------------------------------------ */

mt_status mt_cpu_coalesce(mt_call *call, mt_error *err) {
  const mt_tensor *x;
  mt_status st;
  mt__cpu_begin(call);
  if ((st = mt__kw_check(MT_OP_coalesce, call->kw, err)) != MT_OK) return st;
  if ((st = plain_input(call, 0, "coalesce", &x, err)) != MT_OK) return st;
  if (x->kind != MT_KIND_COO)
    return mt_err(err, MT_LAYOUT_MISMATCH,
                  "coalesce: coalesce expected sparse coordinate tensor layout but got %s",
                  torch_layout(x->kind));
  st = mt__cpu_coalesced_copy(mt__cpu_host(call), x, &call->out[0], err);
  if (st == MT_OK) call->n_out = 1;
  return st;
}

/* ---- sparse_mask (SPC-7) ---------------------------------------------------- */

/* SPC-7, a compressed self: its blocks that the mask (same layout, same
 * blocksize) also stores, with self's values: an intersection. */
static mt_status compressed_intersection(mt_call *call, const mt_tensor *x, const mt_tensor *m,
                                         mt_error *err) {
  mt_cgeom gx = {0}, gm = {0};
  spc_list lx = {0}, lm = {0}, keep = {0};
  uint8_t *in_mask = NULL;
  mt_status st = MT_OK;
  if (m->kind != x->kind)
    return mt_err(err, MT_LAYOUT_MISMATCH,
                  "sparse_mask: sparse_mask_sparse_compressed expects mask to have sparse "
                  "compressed layout %s like self, got %s", torch_layout(x->kind),
                  torch_layout(m->kind));
  if (!mt_cgeom_of(x, &gx) || !mt_cgeom_of(m, &gm) || gx.bh != gm.bh || gx.bw != gm.bw ||
      gx.batches != gm.batches || x->dense_dim != m->dense_dim)
    return mt_err(err, MT_INVALID_ARGUMENT,
                  "sparse_mask: self and mask differ in blocksize, batch or dense dims");
  int64_t nblocks = gx.batches * gx.ncomp * gx.nplain;
  in_mask = calloc((size_t)(nblocks ? nblocks : 1), 1);
  if (!in_mask)
    return mt_err(err, MT_OUT_OF_MEMORY, "sparse_mask: %lld blocks", (long long)nblocks);
  if ((st = entries_from_compressed(m, &lm, err)) != MT_OK) goto out;
  if ((st = entries_from_compressed(x, &lx, err)) != MT_OK) goto out;
#define SPC_BLOCK(e) \
  (((e)->b * gx.ncomp + (gx.by_col ? (e)->c / gx.bw : (e)->r / gx.bh)) * gx.nplain + \
   (gx.by_col ? (e)->r / gx.bh : (e)->c / gx.bw))
  for (int64_t k = 0; k < lm.n; k++) in_mask[SPC_BLOCK(&lm.e[k])] = 1;
  for (int64_t k = 0; k < lx.n; k++)
    if (in_mask[SPC_BLOCK(&lx.e[k])] &&
        (st = list_push(&keep, lx.e[k].b, lx.e[k].r, lx.e[k].c, lx.e[k].src, err)) != MT_OK)
      goto out;
#undef SPC_BLOCK
  if ((st = build_compressed(mt__cpu_host(call), x->kind, x->dtype, x->ndim, x->shape,
                             x->dense_dim, gx.bh, gx.bw, &keep, &call->out[0], err)) == MT_OK)
    call->n_out = 1;
out:
  free(in_mask);
  free(lx.e);
  free(lm.e);
  free(keep.e);
  return st;
}

/* x.sparse_mask(mask): mask's structure as stored (its indices, its
 * coalesced flag, its blocks), x's values there (x coalesced first). */
mt_status mt_cpu_sparse_mask(mt_call *call, mt_error *err) {
  static const char *op = "sparse_mask";
  const mt_host *h = mt__cpu_host(call);
  const mt_tensor *x, *m;
  mt_tensor *xd = NULL, *o = NULL;
  spc_list l = {0};
  char a[96], b[96];
  mt_status st;
  mt__cpu_begin(call);
  if ((st = mt__kw_check(MT_OP_sparse_mask, call->kw, err)) != MT_OK) return st;
  if ((st = plain_input(call, 0, op, &x, err)) != MT_OK) return st;
  if ((st = plain_input(call, 1, op, &m, err)) != MT_OK) return st;
  if (m->kind == MT_KIND_DENSE)
    return mt_err(err, MT_LAYOUT_MISMATCH,
                  "%s: Could not run 'aten::sparse_mask' with arguments from the 'CPU' backend "
                  "(a dense mask)", op);
  if (m->kind == MT_KIND_COO && mt_kind_is_compressed(x->kind))
    return mt_err(err, MT_LAYOUT_MISMATCH,
                  "%s: sparse_mask_sparse_compressed expects mask to have sparse compressed "
                  "layout, got Sparse", op);
  if (m->ndim != x->ndim || !mt_shape_equal(m, x))
    return mt_err(err, MT_SHAPE_MISMATCH, "%s: the mask's shape %s differs from self's %s", op,
                  mt_shape_str(m->ndim, m->shape, a, sizeof a),
                  mt_shape_str(x->ndim, x->shape, b, sizeof b));
  if (mt_kind_is_compressed(x->kind)) {
    st = compressed_intersection(call, x, m, err);
    goto out;
  }
  if (x->kind == MT_KIND_COO && mt_kind_is_compressed(m->kind) && !mt_dtype_is_float(x->dtype)) {
    /* torch computes this pair through a float multiply by the mask */
    st = mt_err(err, MT_DTYPE_MISMATCH,
                "%s: Can't convert result type Float to output %s (a %s COO self with a %s mask)",
                op, mt_dtype_name(x->dtype), mt_dtype_name(x->dtype), mt_kind_name(m->kind));
    goto out;
  }
  if (x->kind == MT_KIND_COO && m->kind == MT_KIND_COO && x->sparse_dim != m->sparse_dim) {
    st = mt_err(err, MT_INVALID_ARGUMENT,
                "%s: the number of sparse dimensions in `self` should match that of the `mask`. "
                "Got `self.sparse_dim() == %d` != `mask.sparse_dim() == %d`.",
                op, x->sparse_dim, m->sparse_dim);
    goto out;
  }
  if ((st = densify(x, &xd, err)) != MT_OK) goto out;
  size_t es = mt_dtype_size(x->dtype);
  if (m->kind == MT_KIND_COO) {
    int64_t row = mt_coo_row_numel(m);
    if ((st = h->coo_new(x->dtype, m->ndim, m->shape, m->sparse_dim, m->nnz, &o, err)) != MT_OK)
      goto out;
    if (m->nnz) memcpy(o->indices, m->indices, (size_t)(m->sparse_dim * m->nnz) * sizeof(int64_t));
    for (int64_t k = 0; k < m->nnz; k++)
      memcpy((char *)o->values + (size_t)(k * row) * es,
             (const char *)xd->values + (size_t)(mt_coo_linear(m, k) * row) * es, (size_t)row * es);
    o->coalesced = m->coalesced;
  } else {
    mt_cgeom g = {0};
    if ((st = entries_from_compressed(m, &l, err)) != MT_OK) goto out;
    mt_cgeom_of(m, &g);
    if ((st = mt__cpu_compressed_like(h, m, x->dtype, &o, err)) != MT_OK) goto out;
    /* entries come in storage order: entry k is cell k of the values */
    for (int64_t k = 0; k < l.n; k++) {
      const spc_entry *e = &l.e[k];
      memcpy((char *)o->values + (size_t)(k * g.dense) * es,
             (const char *)xd->values +
                 (size_t)(((e->b * g.rows + e->r) * g.cols + e->c) * g.dense) * es,
             (size_t)g.dense * es);
    }
  }
  call->out[0] = o;
  call->n_out = 1;
  o = NULL;
out:
  free(l.e);
  mt_tensor_free(xd);
  if (o) h->free(o);
  return st;
}

/* ---- accessors (SPC-8) ------------------------------------------------------ */

/* A dense result of dtype dt and shape (ndim, shape) holding n bytes of src. */
static mt_status dense_out(mt_call *call, mt_dtype dt, int ndim, const int64_t *shape,
                           const void *src, mt_error *err) {
  mt_status st = mt__cpu_host(call)->dense_new(dt, ndim, shape, &call->out[0], err);
  if (st != MT_OK) return st;
  size_t n = (size_t)mt_shape_numel(ndim, shape) * mt_dtype_size(dt);
  if (n) memcpy(call->out[0]->values, src, n);
  call->n_out = 1;
  return MT_OK;
}

typedef enum { ACC_VALUES, ACC_INDICES, ACC_RAW_INDICES, ACC_RAW_VALUES, ACC_CROW, ACC_COL,
               ACC_CCOL, ACC_ROW } spc_acc;

static mt_status accessor(mt_call *call, mt_op opid, spc_acc what, mt_error *err) {
  const char *op = mt_op_name(opid);
  const mt_tensor *x;
  int64_t shape[MT_MAX_DIMS];
  mt_status st;
  mt__cpu_begin(call);
  if ((st = mt__kw_check(opid, call->kw, err)) != MT_OK) return st;
  if ((st = plain_input(call, 0, op, &x, err)) != MT_OK) return st;
  mt_kind k = x->kind;
  if (what == ACC_VALUES || what == ACC_INDICES || what == ACC_RAW_INDICES ||
      what == ACC_RAW_VALUES) {
    int idx = what == ACC_INDICES || what == ACC_RAW_INDICES;
    int raw = what == ACC_RAW_INDICES || what == ACC_RAW_VALUES;
    if (k == MT_KIND_COO) {
      if (!raw && !x->coalesced)
        return mt_err(err, MT_LAYOUT_MISMATCH,
                      "%s: Cannot get %s on an uncoalesced tensor, please call .coalesce() first",
                      op, idx ? "indices" : "values");
      if (idx) {
        shape[0] = x->sparse_dim;
        shape[1] = x->nnz;
        return dense_out(call, MT_int64, 2, shape, x->indices, err);
      }
      if (1 + x->ndim - x->sparse_dim > MT_MAX_DIMS)
        return mt_err(err, MT_NOT_SUPPORTED, "%s: values would have %d dims (at most %d)", op,
                      1 + x->ndim - x->sparse_dim, MT_MAX_DIMS);
      shape[0] = x->nnz;
      for (int d = x->sparse_dim; d < x->ndim; d++) shape[1 + d - x->sparse_dim] = x->shape[d];
      return dense_out(call, x->dtype, 1 + x->ndim - x->sparse_dim, shape, x->values, err);
    }
    if (what == ACC_VALUES && mt_kind_is_compressed(k)) {
      mt_cgeom g = {0};
      mt_cgeom_of(x, &g);
      if (x->ndim - 1 + (mt_kind_is_blocked(k) ? 2 : 0) > MT_MAX_DIMS)
        return mt_err(err, MT_NOT_SUPPORTED, "%s: values would have %d dims (at most %d)", op,
                      x->ndim + 1, MT_MAX_DIMS);
      int n = 0;
      for (int d = 0; d < g.nb; d++) shape[n++] = x->shape[d];
      shape[n++] = x->nnz;
      if (mt_kind_is_blocked(k)) shape[n++] = g.bh, shape[n++] = g.bw;
      for (int d = g.nb + 2; d < x->ndim; d++) shape[n++] = x->shape[d];
      return dense_out(call, x->dtype, n, shape, x->values, err);
    }
    if (raw)
      return mt_err(err, MT_LAYOUT_MISMATCH,
                    "%s: Could not run 'aten::%s' with arguments from the '%s' backend", op, op,
                    k == MT_KIND_DENSE ? "CPU" : "SparseCsrCPU");
    return mt_err(err, MT_LAYOUT_MISMATCH, "%s: %s expected sparse %stensor layout but got %s", op,
                  op, idx ? "coordinate " : "", torch_layout(k));
  }
  /* compressed index accessors: crow/col of CSR and BSR, ccol/row of CSC and BSC */
  int want_col_layout = what == ACC_CCOL || what == ACC_ROW;
  int ok = want_col_layout ? (k == MT_KIND_CSC || k == MT_KIND_BSC)
                           : (k == MT_KIND_CSR || k == MT_KIND_BSR);
  if (!ok)
    return mt_err(err, MT_LAYOUT_MISMATCH,
                  "%s: %s expected sparse %s compressed tensor layout but got %s", op, op,
                  want_col_layout ? "column" : "row", torch_layout(k));
  mt_cgeom g = {0};
  mt_cgeom_of(x, &g);
  for (int d = 0; d < g.nb; d++) shape[d] = x->shape[d];
  int comp = what == ACC_CROW || what == ACC_CCOL;
  shape[g.nb] = comp ? g.ncomp + 1 : x->nnz;
  return dense_out(call, MT_int64, g.nb + 1, shape, comp ? x->crow_indices : x->col_indices, err);
}

mt_status mt_cpu_values(mt_call *c, mt_error *e) {
  return accessor(c, MT_OP_values, ACC_VALUES, e);
}
mt_status mt_cpu_indices(mt_call *c, mt_error *e) {
  return accessor(c, MT_OP_indices, ACC_INDICES, e);
}
mt_status mt_cpu__indices(mt_call *c, mt_error *e) {
  return accessor(c, MT_OP__indices, ACC_RAW_INDICES, e);
}
mt_status mt_cpu__values(mt_call *c, mt_error *e) {
  return accessor(c, MT_OP__values, ACC_RAW_VALUES, e);
}
mt_status mt_cpu_crow_indices(mt_call *c, mt_error *e) {
  return accessor(c, MT_OP_crow_indices, ACC_CROW, e);
}
mt_status mt_cpu_col_indices(mt_call *c, mt_error *e) {
  return accessor(c, MT_OP_col_indices, ACC_COL, e);
}
mt_status mt_cpu_ccol_indices(mt_call *c, mt_error *e) {
  return accessor(c, MT_OP_ccol_indices, ACC_CCOL, e);
}
mt_status mt_cpu_row_indices(mt_call *c, mt_error *e) {
  return accessor(c, MT_OP_row_indices, ACC_ROW, e);
}

/* ---- constructors (SPC-9, SPC-10) ------------------------------------------- */

/* An index tensor: dense, integer (int32/int64; torch converts others). */
static mt_status index_input(const mt_call *call, int i, const char *op, const mt_tensor **t,
                             const mt_tensor **view, mt_tensor **tmp, mt_error *err) {
  mt_status st = plain_input(call, i, op, t, err);
  if (st != MT_OK) return st;
  if ((*t)->kind != MT_KIND_DENSE)
    return mt_err(err, MT_INVALID_ARGUMENT, "%s: inputs/%d must be a dense index tensor, got %s",
                  op, i, mt_kind_name((*t)->kind));
  return mt__cpu_contig(*t, view, tmp, err);
}

static int64_t idx_at(const mt_tensor *t, int64_t i) { return mt__cpu_ldi(t->values, t->dtype, i); }

/* SPC-9: torch.sparse_coo_tensor(indices, values, size, is_coalesced=,
 * check_invariants=True). */
mt_status mt_cpu_sparse_coo_tensor(mt_call *call, mt_error *err) {
  static const char *op = "sparse_coo_tensor";
  const mt_host *h = mt__cpu_host(call);
  const mt_tensor *ind = NULL, *iv = NULL, *val = NULL, *vv = NULL;
  mt_tensor *itmp = NULL, *vtmp = NULL, *o = NULL;
  int64_t shape[MT_MAX_DIMS];
  char sh[96];
  mt_status st;
  mt__cpu_begin(call);
  if ((st = mt__kw_check(MT_OP_sparse_coo_tensor, call->kw, err)) != MT_OK) return st;
  if ((st = index_input(call, 0, op, &ind, &iv, &itmp, err)) != MT_OK) goto out;
  if ((st = plain_input(call, 1, op, &val, err)) != MT_OK) goto out;
  if ((st = mt__cpu_contig(val, &vv, &vtmp, err)) != MT_OK) goto out;
  if (!mt__cpu_is_int(ind->dtype)) { /* torch casts float indices; no case does */
    st = mt_err(err, MT_NOT_SUPPORTED, "%s: indices of dtype %s (the CPU backend takes integer "
                "indices)", op, mt_dtype_name(ind->dtype));
    goto out;
  }
  if (ind->ndim != 2) {
    st = mt_err(err, MT_INVALID_ARGUMENT, "%s: indices must be sparse_dim x nnz, but got: %s", op,
                mt_shape_str(ind->ndim, ind->shape, sh, sizeof sh));
    goto out;
  }
  int sd = (int)ind->shape[0], dd = vv->ndim - 1;
  int64_t nnz = ind->shape[1];
  if (vv->ndim < 1 || vv->shape[0] != nnz) {
    st = mt_err(err, MT_INVALID_ARGUMENT,
                "%s: indices and values must have same nnz, but got nnz from indices: %lld, nnz "
                "from values: %lld", op, (long long)nnz, (long long)(vv->ndim ? vv->shape[0] : 1));
    goto out;
  }
  const mt_kwarg *size = mt_kw_find(call->kw, "size");
  int ndim = sd + dd;
  if (size) {
    int n = size->type == MT_KW_INTS ? size->n : 1;
    if (n != ndim || n > MT_MAX_DIMS) {
      st = mt_err(err, MT_INVALID_ARGUMENT,
                  "%s: 'len(size) == sparse_dim + dense_dim' is not satisfied: len(size) = %d, "
                  "sparse_dim = %d, dense_dim = %d", op, n, sd, dd);
      goto out;
    }
    for (int d = 0; d < n; d++) shape[d] = size->type == MT_KW_INTS ? size->ints[d] : size->i;
    for (int d = 0; d < dd; d++)
      if (shape[sd + d] != vv->shape[1 + d]) {
        st = mt_err(err, MT_INVALID_ARGUMENT,
                    "%s: dense dim %d of size is %lld, values have %lld", op, sd + d,
                    (long long)shape[sd + d], (long long)vv->shape[1 + d]);
        goto out;
      }
  } else { /* inferred: max index + 1 per sparse dim */
    if (ndim > MT_MAX_DIMS) {
      st = mt_err(err, MT_INVALID_ARGUMENT, "%s: %d dims", op, ndim);
      goto out;
    }
    for (int d = 0; d < sd; d++) {
      shape[d] = 0;
      for (int64_t k = 0; k < nnz; k++)
        if (idx_at(iv, d * nnz + k) + 1 > shape[d]) shape[d] = idx_at(iv, d * nnz + k) + 1;
    }
    for (int d = 0; d < dd; d++) shape[sd + d] = vv->shape[1 + d];
  }
  for (int d = 0; d < sd; d++)
    for (int64_t k = 0; k < nnz; k++) {
      int64_t i = idx_at(iv, d * nnz + k);
      if (i < 0) {
        st = mt_err(err, MT_INDEX_OUT_OF_RANGE,
                    "%s: found negative index %lld for dim %d (indices[%d][%lld])", op,
                    (long long)i, d, d, (long long)k);
        goto out;
      }
      if (i >= shape[d]) {
        st = mt_err(err, MT_INDEX_OUT_OF_RANGE,
                    "%s: size is inconsistent with indices: for dim %d, size is %lld but found "
                    "index %lld (indices[%d][%lld])",
                    op, d, (long long)shape[d], (long long)i, d, (long long)k);
        goto out;
      }
    }
  if ((st = h->coo_new(vv->dtype, ndim, shape, sd, nnz, &o, err)) != MT_OK) goto out;
  for (int64_t q = 0; q < (int64_t)sd * nnz; q++) o->indices[q] = idx_at(iv, q);
  size_t nb = (size_t)(mt_numel(vv)) * mt_dtype_size(vv->dtype);
  if (nb) memcpy(o->values, vv->values, nb);
  const mt_kwarg *ic = mt_kw_find(call->kw, "is_coalesced");
  o->coalesced = ic ? (int)ic->i : nnz <= 1;
  if (ic && ic->i)
    for (int64_t k = 1; k < nnz; k++)
      if (mt_coo_linear(o, k) <= mt_coo_linear(o, k - 1)) {
        st = mt_err(err, MT_INVALID_ARGUMENT,
                    "%s: cannot set is_coalesced to true if indices correspond to uncoalesced COO "
                    "tensor (entry %lld is not after entry %lld)",
                    op, (long long)k, (long long)(k - 1));
        goto out;
      }
  call->out[0] = o;
  call->n_out = 1;
  o = NULL;
out:
  mt_tensor_free(itmp);
  mt_tensor_free(vtmp);
  if (o) h->free(o);
  return st;
}

/* SPC-10: torch.sparse_{csr,csc,bsr,bsc}_tensor(compressed, plain, values,
 * size, check_invariants=True), torch's checks in its order. */
static mt_status compressed_ctor(mt_call *call, mt_op opid, mt_kind kind, mt_error *err) {
  const char *op = mt_op_name(opid);
  const mt_host *h = mt__cpu_host(call);
  const char *cn = mt_compressed_name(kind), *pn = mt_plain_name(kind);
  const mt_tensor *ci = NULL, *cv = NULL, *pi = NULL, *pv = NULL, *val = NULL, *vv = NULL;
  mt_tensor *ctmp = NULL, *ptmp = NULL, *vtmp = NULL, *o = NULL;
  int64_t shape[MT_MAX_DIMS];
  int blocked = mt_kind_is_blocked(kind), by_col = kind == MT_KIND_CSC || kind == MT_KIND_BSC;
  mt_status st;
  mt__cpu_begin(call);
  if ((st = mt__kw_check(opid, call->kw, err)) != MT_OK) return st;
  if ((st = index_input(call, 0, op, &ci, &cv, &ctmp, err)) != MT_OK) goto out;
  if ((st = index_input(call, 1, op, &pi, &pv, &ptmp, err)) != MT_OK) goto out;
  if ((st = plain_input(call, 2, op, &val, err)) != MT_OK) goto out;
  if ((st = mt__cpu_contig(val, &vv, &vtmp, err)) != MT_OK) goto out;
  if (ci->dtype != pi->dtype || (ci->dtype != MT_int64 && ci->dtype != MT_int32)) {
    st = mt_err(err, MT_INVALID_ARGUMENT,
                "%s: %s and %s must have the same dtype, int32 or int64, got %s and %s", op, cn,
                pn, mt_dtype_name(ci->dtype), mt_dtype_name(pi->dtype));
    goto out;
  }
  if (ci->ndim != pi->ndim || ci->ndim < 1) {
    st = mt_err(err, MT_INVALID_ARGUMENT,
                "%s: %s and %s dimensionalities must be equal but got %d and %d, respectively", op,
                cn, pn, ci->ndim, pi->ndim);
    goto out;
  }
  int nb = ci->ndim - 1, base = blocked ? 2 : 0;
  if (vv->ndim <= nb + base) {
    st = mt_err(err, MT_INVALID_ARGUMENT,
                "%s: values must have dimensionality > sum of batch and block dimensionalities "
                "(=%d + %d) but got %d", op, nb, base, vv->ndim);
    goto out;
  }
  int dd = vv->ndim - nb - 1 - base;
  const mt_kwarg *size = mt_kw_find(call->kw, "size");
  int n = size ? (size->type == MT_KW_INTS ? size->n : 1) : -1;
  if (!size) {
    st = mt_err(err, MT_NOT_SUPPORTED, "%s: a size is required by the CPU backend", op);
    goto out;
  }
  if (n != nb + 2 + dd || n > MT_MAX_DIMS) {
    st = mt_err(err, MT_INVALID_ARGUMENT,
                "%s: tensor dimensionality must be sum of batch, base, and dense "
                "dimensionalities (=%d + 2 + %d) but got %d", op, nb, dd, n);
    goto out;
  }
  for (int d = 0; d < n; d++) shape[d] = size->type == MT_KW_INTS ? size->ints[d] : size->i;
  int64_t bs[2] = {blocked ? vv->shape[nb + 1] : 1, blocked ? vv->shape[nb + 2] : 1};
  for (int q = 0; q < 2; q++)
    if (bs[q] < 1 || shape[nb + q] % bs[q]) {
      st = mt_err(err, MT_INVALID_ARGUMENT,
                  "%s: tensor shape[%d] (=%lld) must be divisible with blocksize[%d] (=%lld) as "
                  "defined by values shape",
                  op, nb + q, (long long)shape[nb + q], q, (long long)bs[q]);
      goto out;
    }
  for (int d = 0; d < nb; d++)
    if (ci->shape[d] != shape[d] || pi->shape[d] != shape[d] || vv->shape[d] != shape[d]) {
      st = mt_err(err, MT_INVALID_ARGUMENT, "%s: batch dim %d of %s, %s or values is not %lld", op,
                  d, cn, pn, (long long)shape[d]);
      goto out;
    }
  for (int d = 0; d < dd; d++)
    if (vv->shape[nb + 1 + base + d] != shape[nb + 2 + d]) {
      st = mt_err(err, MT_INVALID_ARGUMENT, "%s: dense dim %d of values is not %lld", op, d,
                  (long long)shape[nb + 2 + d]);
      goto out;
    }
  int64_t ncomp = by_col ? shape[nb + 1] / bs[1] : shape[nb] / bs[0];
  int64_t nplain = by_col ? shape[nb] / bs[0] : shape[nb + 1] / bs[1];
  int64_t nnz = vv->shape[nb];
  if (ci->shape[nb] != ncomp + 1) {
    st = mt_err(
        err, MT_INVALID_ARGUMENT,
        "%s: %s.shape[-1] must be equal to the number of %s + 1 (=%lld), but got %lld", op, cn,
        by_col ? (blocked ? "column blocks" : "columns") : (blocked ? "row blocks" : "rows"),
        (long long)(ncomp + 1), (long long)ci->shape[nb]);
    goto out;
  }
  if (pi->shape[nb] != nnz) {
    st = mt_err(err, MT_INVALID_ARGUMENT,
                "%s: %s.shape[-1] must be equal to nnz (=%lld) as defined by values.shape[%d], "
                "but got %lld", op, pn, (long long)nnz, nb, (long long)pi->shape[nb]);
    goto out;
  }
  int64_t batches = mt_shape_numel(nb, shape);
  for (int64_t b = 0; b < batches; b++) {
    int64_t c0 = idx_at(cv, b * (ncomp + 1)), cl = idx_at(cv, b * (ncomp + 1) + ncomp);
    if (c0 != 0) {
      st = mt_err(err, MT_INVALID_ARGUMENT,
                  "%s: `%s[..., 0] == 0` is not satisfied (batch %lld: %lld)", op, cn,
                  (long long)b, (long long)c0);
      goto out;
    }
    if (cl != nnz) {
      st = mt_err(err, MT_INVALID_ARGUMENT,
                  "%s: `%s[..., -1] == nnz` is not satisfied (batch %lld: %lld, nnz %lld)", op, cn,
                  (long long)b, (long long)cl, (long long)nnz);
      goto out;
    }
    for (int64_t i = 0; i < ncomp; i++) {
      int64_t lo = idx_at(cv, b * (ncomp + 1) + i), hi = idx_at(cv, b * (ncomp + 1) + i + 1);
      if (hi < lo) {
        st = mt_err(err, MT_INVALID_ARGUMENT,
                    "%s: %s[%lld] = %lld is less than %s[%lld] = %lld (batch %lld): must not "
                    "decrease", op, cn, (long long)(i + 1), (long long)hi, cn, (long long)i,
                    (long long)lo, (long long)b);
        goto out;
      }
    }
    for (int64_t k = 0; k < nnz; k++) {
      int64_t p = idx_at(pv, b * nnz + k);
      if (p < 0 || p >= nplain) {
        st = mt_err(err, MT_INDEX_OUT_OF_RANGE,
                    "%s: `0 <= %s < %s` is not satisfied: %s[%lld] = %lld (batch %lld), limit "
                    "%lld", op, pn, by_col ? "nrows" : "ncols", pn, (long long)k, (long long)p,
                    (long long)b, (long long)nplain);
        goto out;
      }
    }
    for (int64_t i = 0; i < ncomp; i++) {
      int64_t lo = idx_at(cv, b * (ncomp + 1) + i), hi = idx_at(cv, b * (ncomp + 1) + i + 1);
      for (int64_t k = lo + 1; k < hi; k++)
        if (idx_at(pv, b * nnz + k) <= idx_at(pv, b * nnz + k - 1)) {
          st = mt_err(err, MT_INVALID_ARGUMENT,
                      "%s: %s in slot %lld are not sorted and distinct: %s[%lld] = %lld after "
                      "%lld (batch %lld)", op, pn, (long long)i, pn, (long long)k,
                      (long long)idx_at(pv, b * nnz + k), (long long)idx_at(pv, b * nnz + k - 1),
                      (long long)b);
          goto out;
        }
    }
  }
  if ((st = h->compressed_new(kind, vv->dtype, n, shape, dd, blocked ? bs : NULL, nnz, &o, err)) !=
      MT_OK)
    goto out;
  for (int64_t q = 0; q < batches * (ncomp + 1); q++) o->crow_indices[q] = idx_at(cv, q);
  for (int64_t q = 0; q < batches * nnz; q++) o->col_indices[q] = idx_at(pv, q);
  size_t nbytes = (size_t)mt_numel(vv) * mt_dtype_size(vv->dtype);
  if (nbytes) memcpy(o->values, vv->values, nbytes);
  call->out[0] = o;
  call->n_out = 1;
  o = NULL;
out:
  mt_tensor_free(ctmp);
  mt_tensor_free(ptmp);
  mt_tensor_free(vtmp);
  if (o) h->free(o);
  return st;
}

mt_status mt_cpu_sparse_csr_tensor(mt_call *c, mt_error *e) {
  return compressed_ctor(c, MT_OP_sparse_csr_tensor, MT_KIND_CSR, e);
}
mt_status mt_cpu_sparse_csc_tensor(mt_call *c, mt_error *e) {
  return compressed_ctor(c, MT_OP_sparse_csc_tensor, MT_KIND_CSC, e);
}
mt_status mt_cpu_sparse_bsr_tensor(mt_call *c, mt_error *e) {
  return compressed_ctor(c, MT_OP_sparse_bsr_tensor, MT_KIND_BSR, e);
}
mt_status mt_cpu_sparse_bsc_tensor(mt_call *c, mt_error *e) {
  return compressed_ctor(c, MT_OP_sparse_bsc_tensor, MT_KIND_BSC, e);
}

/* structure_sparse.c - structure ops on plain sparse tensors (SPS-0,
 * SPS-1, SPS-2): clone, copy_, t, transpose, unsqueeze, reshape, cat of a
 * COO or compressed tensor that is not a masked tensor's storage, as torch
 * 2.15 runs them. structure.c hands these calls here (mt__sps_call).
 *
 * COO results keep every stored entry as stored (duplicates and explicit
 * zeros), in the input's entry order; t, transpose, unsqueeze and cat
 * clear the coalesced flag (torch's, even on a coalesced input; SPS-2). */
#include "common/sparse_vals_math.h"
#include "sps_util.h"

/* ---- clone, copy_ ----------------------------------------------------- */

static mt_status sps_clone_op(mt_call *call, const mt_exec *ex, mt_error *err) {
  const mt_tensor *x = NULL;
  mt_tensor *out = NULL;
  mt_status st;
  if ((st = sps_begin(call, MT_OP_clone, &x, err)) != MT_OK) return st;
  if ((st = sps_clone(mt__cpu_host(call), ex, x, &out, err)) != MT_OK) return st;
  return sps_out(call, &out);
}

static void shape_text(int n, const int64_t *s, char *buf, size_t len) {
  mt_shape_str(n, s, buf, len);
}

/* torch's SparseTensorImpl::resize_ checks (SPS-7): a non-empty tensor
 * keeps its sparse_dim and dense_dim and does not shrink any dim. */
mt_status mt__sps_resize_check(const char *op, const mt_tensor *x, int ndim, const int64_t *shape,
                               int sparse_dim, mt_error *err) {
  int dense_dim = ndim - sparse_dim, xd = x->ndim - x->sparse_dim;
  char a[128], b[128];
  if (x->nnz == 0) return MT_OK;
  if (sparse_dim != x->sparse_dim)
    return mt_err(err, MT_INVALID_ARGUMENT,
                  "%s: changing the number of sparse dimensions (from %d to %d) on a non-empty "
                  "sparse tensor is not supported.", op, x->sparse_dim, sparse_dim);
  if (dense_dim != xd)
    return mt_err(err, MT_INVALID_ARGUMENT,
                  "%s: changing the number of dense dimensions (from %d to %d) on a non-empty "
                  "sparse tensor is not supported.", op, xd, dense_dim);
  for (int d = 0; d < sparse_dim; d++)
    if (shape[d] < x->shape[d]) {
      shape_text(sparse_dim, x->shape, a, sizeof a);
      shape_text(sparse_dim, shape, b, sizeof b);
      return mt_err(err, MT_INVALID_ARGUMENT,
                    "%s: shrinking the size of sparse dimensions (from %s to %s) on a non-empty "
                    "sparse tensor is not supported.", op, a, b);
    }
  for (int d = sparse_dim; d < ndim; d++)
    if (shape[d] < x->shape[d]) {
      shape_text(dense_dim, x->shape + sparse_dim, a, sizeof a);
      shape_text(dense_dim, shape + sparse_dim, b, sizeof b);
      return mt_err(err, MT_INVALID_ARGUMENT,
                    "%s: shrinking the size of dense dimensions (from %s to %s) on a non-empty "
                    "sparse tensor is not supported.", op, a, b);
    }
  return MT_OK;
}

/* dst[i] = src[i] converted from it to ot for i < n (sps_convert's rules), on ex */
static mt_status convert_vals(const mt_exec *ex, void *dst, mt_dtype ot, const void *src,
                              mt_dtype it, int64_t n, mt_error *err) {
  int64_t *ia = NULL;
  mt_spv_par p;
  mt_status st;
  if (n <= 0) return MT_OK;
  if (!ex->sparse_vals)
    return mt_err(err, MT_NOT_SUPPORTED, "copy_: the %s backend has no plain sparse kernels",
                  ex->name);
  if (!(ia = malloc((size_t)n * sizeof *ia)))
    return mt_err(err, MT_OUT_OF_MEMORY, "copy_: %lld values", (long long)n);
  for (int64_t i = 0; i < n; i++) ia[i] = i;
  memset(&p, 0, sizeof p);
  p.op = SPV_CONVERT;
  p.at = p.bt = it;
  p.ot = ot;
  p.n_out = p.na = n;
  st = ex->sparse_vals(&p, src, NULL, ia, NULL, NULL, dst, err);
  free(ia);
  return st;
}

/* copy_(dst, src) (SPS-2): dst takes src's shape, indices and coalesced
 * flag, and src's values converted to dst's dtype. COO: torch resizes dst
 * as src first (a non-empty dst keeps its sparse/dense dims and does not
 * shrink: SPS-7); compressed: the same layout and nnz only. */
static mt_status sps_copy_(mt_call *call, const mt_exec *ex, mt_error *err) {
  static const char *op = "copy_";
  const mt_host *h = mt__cpu_host(call);
  const mt_tensor *dst = NULL, *src = NULL;
  mt_tensor *out = NULL;
  mt_status st;
  if ((st = sps_begin(call, MT_OP_copy_, &dst, err)) != MT_OK) return st;
  if ((st = mt__cpu_input(call, 1, op, &src, err)) != MT_OK) return st;
  if (!mt__sps_is_plain(src))
    return mt_err(err, MT_LAYOUT_MISMATCH,
                  "copy_: copy_() between dense and sparse Tensors is not implemented! (inputs/1 "
                  "has kind %s)", mt_kind_name(src->kind));
  if ((st = mt_tensor_validate(src, "inputs/1", err)) != MT_OK) return st;
  if ((dst->kind == MT_KIND_COO) != (src->kind == MT_KIND_COO))
    return mt_err(err, MT_LAYOUT_MISMATCH,
                  "copy_: copy_sparse_compressed_ expected sparse compressed tensor layout but "
                  "got Sparse (inputs/0 %s, inputs/1 %s)", sps_layout(dst), sps_layout(src));
  if (dst->kind != src->kind)
    return mt_err(err, MT_LAYOUT_MISMATCH,
                  "copy_: copy of sparse compressed tensors having different layouts is not "
                  "supported. self layout is %s and src layout is %s", sps_layout(dst),
                  sps_layout(src));
  if (dst->kind == MT_KIND_COO) {
    if ((st = mt__sps_resize_check(op, dst, src->ndim, src->shape, src->sparse_dim, err)) != MT_OK)
      return st;
    if ((st = sps_coo_new(h, dst->dtype, src->ndim, src->shape, src->sparse_dim, src->nnz, &out,
                          err)) != MT_OK)
      return st;
    if (src->nnz)
      memcpy(out->indices, src->indices, (size_t)src->sparse_dim * (size_t)src->nnz * sizeof(int64_t));
    out->coalesced = src->coalesced;
    if ((st = convert_vals(ex, out->values, dst->dtype, src->values, src->dtype,
                           src->nnz * mt_coo_row_numel(src), err)) != MT_OK) {
      h->free(out);
      return st;
    }
    return sps_out(call, &out);
  }
  mt_cgeom gd, gs;
  if (!mt_cgeom_of(dst, &gd) || !mt_cgeom_of(src, &gs))
    return mt_err(err, MT_INVALID_ARGUMENT, "copy_: compressed tensor of inconsistent geometry");
  if (dst->nnz != src->nnz)
    return mt_err(err, MT_INVALID_ARGUMENT,
                  "copy_: torch.copy_: only sparse compressed tensors with the same number of "
                  "specified elements are supported (inputs/0 nnz %lld, inputs/1 nnz %lld)",
                  (long long)dst->nnz, (long long)src->nnz);
  if (!mt_shape_equal(dst, src) || dst->blocksize[0] != src->blocksize[0] ||
      dst->blocksize[1] != src->blocksize[1])
    return mt_err(err, MT_SHAPE_MISMATCH, "copy_: the shapes or block sizes of dst and src differ");
  /* src's structure, its values in dst's dtype (one dtype: bytes) */
  if ((st = mt__cpu_compressed_like(h, src, dst->dtype, &out, err)) != MT_OK) return st;
  if ((st = convert_vals(ex, out->values, dst->dtype, src->values, src->dtype,
                         gs.batches * src->nnz * gs.entry, err)) != MT_OK)
    goto out;
  st = sps_out(call, &out);
out:
  if (out) h->free(out);
  return st;
}

/* ---- t, transpose ------------------------------------------------------ */

/* A COO tensor with sparse dims a and b swapped: indices rows and shape;
 * entries in the input's order, coalesced flag cleared (SPS-2) unless
 * nothing is stored. */
static mt_status coo_swap(const mt_host *h, const mt_exec *ex, const mt_tensor *x, int a, int b,
                         mt_tensor **out, mt_error *err) {
  int64_t shape[MT_MAX_DIMS];
  mt_status st;
  memcpy(shape, x->shape, sizeof shape);
  shape[a] = x->shape[b];
  shape[b] = x->shape[a];
  if ((st = sps_coo_new(h, x->dtype, x->ndim, shape, x->sparse_dim, x->nnz, out, err)) != MT_OK)
    return st;
  for (int d = 0; d < x->sparse_dim; d++) {
    int s = d == a ? b : d == b ? a : d;
    if (x->nnz) memcpy((*out)->indices + (int64_t)d * x->nnz, x->indices + (int64_t)s * x->nnz,
                       (size_t)x->nnz * sizeof(int64_t));
  }
  (*out)->coalesced = x->nnz == 0; /* torch: cleared even for one entry (SPS-2) */
  if ((st = sps_copy_vals(ex, (*out)->values, x->values, x->nnz * mt_coo_row_numel(x),
                          mt_dtype_size(x->dtype), err)) != MT_OK) {
    h->free(*out);
    *out = NULL;
  }
  return st;
}

/* The two sparse dims of a compressed tensor swapped (SPS-2): CSR <-> CSC,
 * BSR <-> BSC over the same index arrays, shape and blocksize swapped,
 * each block's cells transposed. */
static mt_status compressed_swap(const mt_host *h, const mt_exec *ex, const mt_tensor *x,
                                 mt_tensor **out, mt_error *err) {
  static const mt_kind flip[MT_KIND__COUNT] = {
      [MT_KIND_CSR] = MT_KIND_CSC, [MT_KIND_CSC] = MT_KIND_CSR,
      [MT_KIND_BSR] = MT_KIND_BSC, [MT_KIND_BSC] = MT_KIND_BSR};
  mt_cgeom g;
  mt_status st;
  if (!mt_cgeom_of(x, &g))
    return mt_err(err, MT_INVALID_ARGUMENT, "transpose: compressed tensor of inconsistent geometry");
  int64_t shape[MT_MAX_DIMS], bs[2] = {x->blocksize[1], x->blocksize[0]};
  memcpy(shape, x->shape, sizeof shape);
  shape[g.nb] = x->shape[g.nb + 1];
  shape[g.nb + 1] = x->shape[g.nb];
  if ((st = h->compressed_new(flip[x->kind], x->dtype, x->ndim, shape, x->dense_dim, bs, x->nnz,
                              out, err)) != MT_OK)
    return st;
  memcpy((*out)->crow_indices, x->crow_indices, (size_t)(g.batches * (g.ncomp + 1)) * sizeof(int64_t));
  if (g.batches * x->nnz != 0)
    memcpy((*out)->col_indices, x->col_indices, (size_t)(g.batches * x->nnz) * sizeof(int64_t));
  /* block e: cell (r, c) -> (c, r): a copy plan, the values moved on ex */
  int64_t n = g.batches * x->nnz * g.entry;
  int *src = calloc((size_t)(n > 0 ? n : 1), sizeof *src);
  int64_t *off = malloc((size_t)(n > 0 ? n : 1) * sizeof *off);
  if (!src || !off) {
    st = mt_err(err, MT_OUT_OF_MEMORY, "transpose: out of memory for %lld values", (long long)n);
  } else {
    for (int64_t e = 0; e < g.batches * x->nnz; e++)
      for (int64_t r = 0; r < g.bh; r++)
        for (int64_t c = 0; c < g.bw; c++)
          for (int64_t k = 0; k < g.dense; k++)
            off[e * g.entry + (c * g.bh + r) * g.dense + k] = e * g.entry + (r * g.bw + c) * g.dense + k;
    const void *srcs[1] = {x->values};
    st = sps_gather(ex, src, off, n, 1, srcs, mt_dtype_size(x->dtype), (*out)->values, err);
  }
  free(src);
  free(off);
  if (st != MT_OK) {
    h->free(*out);
    *out = NULL;
  }
  return st;
}

/* t / t_ (SPS-2): a COO tensor of at most 2 sparse and no dense dims, a
 * compressed one of 2 dims; fewer than 2 dims: itself. t_ on a compressed
 * tensor is refused (torch has no in-place transposition for it). */
mt_status mt__sps_t(mt_call *call, mt_op opid, int inplace, const mt_exec *ex, mt_error *err) {
  const char *op = mt_op_name(opid), *tn = inplace ? "t_()" : "t()";
  const mt_host *h = mt__cpu_host(call);
  const mt_tensor *x = NULL;
  mt_tensor *out = NULL;
  mt_status st;
  if ((st = sps_begin(call, opid, &x, err)) != MT_OK) return st;
  if (x->kind == MT_KIND_COO) {
    if (x->sparse_dim > 2 || x->ndim != x->sparse_dim)
      return mt_err(err, MT_INVALID_ARGUMENT,
                    "%s: %s expects a tensor with <= 2 sparse and 0 dense dimensions, but got %d "
                    "sparse and %d dense dimensions", op, tn, x->sparse_dim, x->ndim - x->sparse_dim);
    st = x->ndim < 2 ? sps_clone(h, ex, x, &out, err) : coo_swap(h, ex, x, 0, 1, &out, err);
  } else {
    if (x->ndim > 2)
      return mt_err(err, MT_INVALID_ARGUMENT, "%s: %s expects a tensor with <= 2 dimensions, but "
                    "self is %dD", op, tn, x->ndim);
    if (inplace)
      return mt_err(err, MT_LAYOUT_MISMATCH, "%s: torch.transpose_: in-place transposition is not "
                    "supported for %s layout", op, sps_layout(x));
    st = compressed_swap(h, ex, x, &out, err);
  }
  if (st != MT_OK) return st;
  return sps_out(call, &out);
}

static mt_status sps_transpose(mt_call *call, const mt_exec *ex, mt_error *err) {
  static const char *op = "transpose";
  const mt_host *h = mt__cpu_host(call);
  const mt_tensor *x = NULL;
  mt_tensor *out = NULL;
  mt_status st;
  int a = 0, b = 0;
  if ((st = sps_begin(call, MT_OP_transpose, &x, err)) != MT_OK) return st;
  if ((st = sps_wrap_dim(op, mt_kw_int(call->kw, "dim0", 0), x->ndim, &a, err)) != MT_OK ||
      (st = sps_wrap_dim(op, mt_kw_int(call->kw, "dim1", 0), x->ndim, &b, err)) != MT_OK)
    return st;
  if (a == b) {
    st = sps_clone(h, ex, x, &out, err);
  } else if (x->kind == MT_KIND_COO) {
    if (a >= x->sparse_dim || b >= x->sparse_dim)
      return mt_err(err, MT_INVALID_ARGUMENT, "transpose: sparse transpose: transposed dimensions "
                    "must be sparse Got sparse_dim: %d, d0: %d, d1: %d", x->sparse_dim, a, b);
    st = coo_swap(h, ex, x, a, b, &out, err);
  } else {
    mt_cgeom g;
    if (!mt_cgeom_of(x, &g))
      return mt_err(err, MT_INVALID_ARGUMENT, "transpose: compressed tensor of inconsistent geometry");
    static const char *const type[] = {"Batch", "Sparse", "Dense"};
    int ta = a < g.nb ? 0 : a < g.nb + 2 ? 1 : 2, tb = b < g.nb ? 0 : b < g.nb + 2 ? 1 : 2;
    if (ta != tb)
      return mt_err(err, MT_INVALID_ARGUMENT, "transpose: transpose(): can only transpose "
                    "dimensions of the same type (Batch, Sparse, Dense), got %d(%s) and %d(%s)",
                    a, type[ta], b, type[tb]);
    if (ta != 1)
      return mt_err(err, MT_NOT_SUPPORTED, "transpose: of two %s dims of a %s tensor", type[ta],
                    sps_layout(x));
    st = compressed_swap(h, ex, x, &out, err);
  }
  if (st != MT_OK) return st;
  return sps_out(call, &out);
}

/* ---- unsqueeze, reshape ------------------------------------------------ */

/* A size-1 dim at d: a sparse dim (index 0 in every entry) when d <=
 * sparse_dim, else a dense dim (the values gain a 1); coalesced only when
 * fewer than 2 entries are stored (SPS-2). */
mt_status mt__sps_unsqueeze_coo(const mt_host *h, const mt_exec *ex, const mt_tensor *x, int d,
                                mt_tensor **out, mt_error *err) {
  int64_t shape[MT_MAX_DIMS];
  int sd = x->sparse_dim + (d <= x->sparse_dim);
  mt_status st;
  if (x->ndim + 1 > MT_MAX_DIMS)
    return mt_err(err, MT_NOT_SUPPORTED, "unsqueeze: more than %d dims", MT_MAX_DIMS);
  for (int k = 0, j = 0; k < x->ndim + 1; k++) shape[k] = k == d ? 1 : x->shape[j++];
  if ((st = sps_coo_new(h, x->dtype, x->ndim + 1, shape, sd, x->nnz, out, err)) != MT_OK) return st;
  for (int r = 0, j = 0; r < sd; r++) {
    if (sd != x->sparse_dim && r == d) continue; /* the new row: zeros (buffers are zeroed) */
    if (x->nnz) memcpy((*out)->indices + (int64_t)r * x->nnz, x->indices + (int64_t)j * x->nnz,
                       (size_t)x->nnz * sizeof(int64_t));
    j++;
  }
  (*out)->coalesced = sps_built_flag(x->nnz);
  if ((st = sps_copy_vals(ex, (*out)->values, x->values, x->nnz * mt_coo_row_numel(x),
                          mt_dtype_size(x->dtype), err)) != MT_OK) {
    h->free(*out);
    *out = NULL;
  }
  return st;
}

static mt_status sps_unsqueeze(mt_call *call, const mt_exec *ex, mt_error *err) {
  const mt_tensor *x = NULL;
  mt_tensor *out = NULL;
  mt_status st;
  int d = 0;
  if ((st = sps_begin(call, MT_OP_unsqueeze, &x, err)) != MT_OK) return st;
  if (x->kind != MT_KIND_COO)
    return mt_err(err, MT_LAYOUT_MISMATCH, "unsqueeze: Sparse %s tensors do not have strides",
                  sps_upper(x));
  if ((st = sps_wrap_dim("unsqueeze", mt_kw_int(call->kw, "dim", 0), x->ndim + 1, &d, err)) != MT_OK)
    return st;
  if ((st = mt__sps_unsqueeze_coo(mt__cpu_host(call), ex, x, d, &out, err)) != MT_OK) return st;
  return sps_out(call, &out);
}

static mt_status sps_reshape(mt_call *call, mt_error *err) {
  const mt_tensor *x = NULL;
  mt_status st;
  if ((st = sps_begin(call, MT_OP_reshape, &x, err)) != MT_OK) return st;
  if (x->kind == MT_KIND_COO)
    return mt_err(err, MT_LAYOUT_MISMATCH, "reshape: reshape is not implemented for sparse tensors");
  return mt_err(err, MT_LAYOUT_MISMATCH, "reshape: Sparse %s tensors do not have is_contiguous",
                sps_upper(x));
}

/* ---- cat ----------------------------------------------------------------- */

/* cat of COO tensors along d (SPS-2): the entries of every input in turn,
 * an input's indices along d shifted by the sizes before it; along a dense
 * dim each input's values land in their own slice of the wider values
 * (zeros elsewhere). Every input stays as stored: duplicates and explicit
 * zeros kept; coalesced only when fewer than 2 entries are stored. */
static mt_status sps_cat(mt_call *call, const mt_exec *ex, mt_error *err) {
  static const char *op = "cat";
  const mt_host *h = mt__cpu_host(call);
  const mt_tensor *x0 = NULL;
  mt_tensor *out = NULL;
  mt_status st;
  int d = 0;
  char a[128], b[128];
  if ((st = sps_begin(call, MT_OP_cat, &x0, err)) != MT_OK) return st;
  if (x0->kind != MT_KIND_COO)
    return mt_err(err, MT_LAYOUT_MISMATCH, "cat: Sparse %s tensors do not have is_contiguous",
                  sps_upper(x0));
  for (int k = 1; k < call->n_in; k++) {
    const mt_tensor *x = NULL;
    char what[32];
    if ((st = mt__cpu_input(call, k, op, &x, err)) != MT_OK) return st;
    if (x->kind != MT_KIND_COO)
      return mt_err(err, MT_LAYOUT_MISMATCH, "cat: Concatenating sparse tensors, but a dense "
                    "tensor was found at position %d (kind %s).", k, mt_kind_name(x->kind));
    if ((st = mt_tensor_validate(x, mt__cpu_in_name(k, what, sizeof what), err)) != MT_OK)
      return st;
  }
  if ((st = sps_wrap_dim(op, mt_kw_int(call->kw, "dim", 0), x0->ndim, &d, err)) != MT_OK) return st;
  int64_t shape[MT_MAX_DIMS], nnz = 0;
  memcpy(shape, x0->shape, sizeof shape);
  shape[d] = 0;
  for (int k = 0; k < call->n_in; k++) {
    const mt_tensor *x = call->in[k];
    if (x->sparse_dim != x0->sparse_dim || x->ndim != x0->ndim)
      return mt_err(err, MT_SHAPE_MISMATCH,
                    "cat: All tensors must have the same sparse_dim and dense_dim: %d, %d, but "
                    "tensor at position %d has %d, %d.", x0->sparse_dim, x0->ndim - x0->sparse_dim,
                    k, x->sparse_dim, x->ndim - x->sparse_dim);
    for (int q = 0; q < x0->ndim; q++)
      if (q != d && x->shape[q] != x0->shape[q]) {
        mt_shape_str(x0->ndim, x0->shape, a, sizeof a);
        mt_shape_str(x->ndim, x->shape, b, sizeof b);
        return mt_err(err, MT_SHAPE_MISMATCH,
                      "cat: All tensors must have the same shape: %s (except in the concatenating "
                      "dimension), but found shape: %s at position %d.", a, b, k);
      }
    if (x->dtype != x0->dtype)
      return mt_err(err, MT_NOT_SUPPORTED, "cat: inputs of dtypes %s and %s (type promotion)",
                    mt_dtype_name(x0->dtype), mt_dtype_name(x->dtype));
    shape[d] += x->shape[d];
    nnz += x->nnz;
  }
  if ((st = sps_coo_new(h, x0->dtype, x0->ndim, shape, x0->sparse_dim, nnz, &out, err)) != MT_OK)
    return st;
  int sd = x0->sparse_dim;
  size_t es = mt_dtype_size(x0->dtype);
  int64_t off = 0, at = 0;
  /* along a dense dim: value rows of shape[sd:], the input's block at off */
  int64_t outer = 1, inner = 1;
  for (int q = sd; q < d; q++) outer *= shape[q];
  for (int q = d + 1; q < x0->ndim; q++) inner *= shape[q];
  int64_t orow = mt_coo_row_numel(out), nv = nnz * orow, zero = 0;
  /* the values' copy plan: input k's value, or (source n_in) a zero */
  int *gs = calloc((size_t)(nv > 0 ? nv : 1), sizeof *gs);
  int64_t *go = calloc((size_t)(nv > 0 ? nv : 1), sizeof *go);
  const void *srcs[17];
  if (!gs || !go || call->n_in > 16) {
    st = !gs || !go ? mt_err(err, MT_OUT_OF_MEMORY, "cat: out of memory for %lld values",
                             (long long)nv)
                    : mt_err(err, MT_NOT_SUPPORTED, "cat: more than 16 sparse inputs");
    goto out;
  }
  for (int64_t i = 0; i < nv; i++) gs[i] = call->n_in;
  for (int k = 0; k < call->n_in; k++) {
    const mt_tensor *x = call->in[k];
    int64_t xrow = mt_coo_row_numel(x);
    srcs[k] = x->values;
    for (int64_t e = 0; e < x->nnz; e++) {
      for (int r = 0; r < sd; r++)
        out->indices[(int64_t)r * nnz + at + e] = x->indices[(int64_t)r * x->nnz + e] + (r == d ? off : 0);
      if (d < sd) {
        for (int64_t j = 0; j < xrow; j++)
          gs[(at + e) * orow + j] = k, go[(at + e) * orow + j] = e * xrow + j;
      } else {
        for (int64_t o = 0; o < outer; o++)
          for (int64_t j = 0; j < x->shape[d] * inner; j++) {
            int64_t i = (at + e) * orow + (o * shape[d] + off) * inner + j;
            gs[i] = k;
            go[i] = e * xrow + o * x->shape[d] * inner + j;
          }
      }
    }
    at += x->nnz;
    off += x->shape[d];
  }
  srcs[call->n_in] = &zero;
  if ((st = sps_gather(ex, gs, go, nv, call->n_in + 1, srcs, es, out->values, err)) != MT_OK)
    goto out;
  out->coalesced = sps_built_flag(nnz);
  st = sps_out(call, &out);
out:
  free(gs);
  free(go);
  if (out) h->free(out);
  return st;
}

/* ---- the entry ------------------------------------------------------------ */

mt_status mt__sps_structure_run(mt_call *call, mt_op op, const mt_exec *ex, mt_error *err) {
  switch (op) {
    case MT_OP_clone: return sps_clone_op(call, ex, err);
    case MT_OP_copy_: return sps_copy_(call, ex, err);
    case MT_OP_t: return mt__sps_t(call, op, 0, ex, err);
    case MT_OP_transpose: return sps_transpose(call, ex, err);
    case MT_OP_unsqueeze: return sps_unsqueeze(call, ex, err);
    case MT_OP_reshape: return sps_reshape(call, err);
    case MT_OP_cat: return sps_cat(call, ex, err);
    default:
      mt__cpu_begin(call);
      return mt_err(err, MT_NOT_SUPPORTED, "%s: not a plain sparse structure op", mt_op_name(op));
  }
}

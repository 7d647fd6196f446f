/* sparse_misc.c - family sparse_misc: the plain sparse ops of torch's
 * sparse table that MaskedTensor has no op for (SPS-*): zero_, t_,
 * nonzero, narrow, narrow_copy, index_select, torch.sparse.softmax /
 * log_softmax, torch.sparse.sum, torch.max, sparse_resize_ and
 * sparse_resize_and_clear_, as torch 2.15 runs them on COO and on the
 * compressed layouts. A dense input is not these ops' business here
 * (NOT_SUPPORTED). */
#include "common/exec.h"
#include "common/sparse_misc_math.h"
#include "sps_util.h"

/* The values of out (n elements): element i is element off[i] of x's
 * values, copied by ex (the device's gather; the CPU copies them here). */
static mt_status misc_gather(const mt_exec *ex, const mt_tensor *x, mt_tensor *out,
                             const int64_t *off, int64_t n, const char *op, mt_error *err) {
  size_t es = mt_dtype_size(x->dtype);
  if (!n) return MT_OK;
  if (ex == &mt_cpu_exec) {
    for (int64_t i = 0; i < n; i++)
      memcpy((char *)out->values + (size_t)i * es, (const char *)x->values + (size_t)off[i] * es,
             es);
    return MT_OK;
  }
  if (!ex->gather)
    return mt_err(err, MT_NOT_SUPPORTED, "%s: the %s backend has no gather kernel", op, ex->name);
  int *src = calloc((size_t)n, sizeof *src);
  if (!src) return mt_err(err, MT_OUT_OF_MEMORY, "%s: a gather of %lld values", op, (long long)n);
  const void *srcs[1] = {x->values};
  int64_t len = x->nnz * mt_coo_row_numel(x);
  mt_status st = ex->gather(src, off, n, 1, srcs, &len, es, out->values, err);
  free(src);
  return st;
}

/* n offsets for a gather plan */
static mt_status misc_offsets(int64_t n, int64_t **off, const char *op, mt_error *err) {
  *off = malloc((size_t)(n > 0 ? n : 1) * sizeof **off);
  if (!*off) return mt_err(err, MT_OUT_OF_MEMORY, "%s: a gather of %lld values", op, (long long)n);
  return MT_OK;
}

/* input 0 of a sparse_misc op: a valid plain sparse tensor */
static mt_status misc_begin(mt_call *call, mt_op op, const mt_tensor **x, mt_error *err) {
  mt_status st;
  mt__cpu_begin(call);
  if ((st = mt__kw_check(op, call->kw, err)) != MT_OK) return st; /* kwargs first, as every kernel */
  if (!mt__sps_call(call)) {
    if (call->n_in < 1 || !call->in || !call->in[0])
      return mt_err(err, MT_INVALID_ARGUMENT, "%s: expected a tensor input", mt_op_name(op));
    return mt_err(err, MT_NOT_SUPPORTED, "%s: the CPU backend implements %s on plain sparse "
                  "tensors only (inputs/0 has kind %s)", mt_op_name(op), mt_op_name(op),
                  mt_kind_name(call->in[0]->kind));
  }
  if ((st = sps_begin(call, op, x, err)) != MT_OK) return st;
  return MT_OK;
}

/* ---- zero_, t_ --------------------------------------------------------------- */

/* zero_ (SPS-6): every layout keeps its shape, dims and blocksize and
 * stores nothing (nnz 0; a COO result is coalesced). */
mt_status mt_cpu_zero_(mt_call *call, mt_error *err) {
  const mt_host *h = mt__cpu_host(call);
  const mt_tensor *x = NULL;
  mt_tensor *out = NULL;
  mt_status st;
  if ((st = misc_begin(call, MT_OP_zero_, &x, err)) != MT_OK) return st;
  if (x->kind == MT_KIND_COO) {
    if ((st = sps_coo_new(h, x->dtype, x->ndim, x->shape, x->sparse_dim, 0, &out, err)) != MT_OK)
      return st;
    out->coalesced = 1;
  } else if ((st = h->compressed_new(x->kind, x->dtype, x->ndim, x->shape, x->dense_dim,
                                     x->blocksize, 0, &out, err)) != MT_OK) {
    return st;
  }
  return sps_out(call, &out);
}

static mt_status t_(mt_call *call, const mt_exec *ex, mt_error *err) {
  const mt_tensor *x = NULL;
  mt_status st;
  if ((st = misc_begin(call, MT_OP_t_, &x, err)) != MT_OK) return st;
  return mt__sps_t(call, MT_OP_t_, 1, ex, err);
}

mt_status mt_cpu_t_(mt_call *call, mt_error *err) { return t_(call, &mt_cpu_exec, err); }

/* ---- the ops torch refuses on every plain sparse layout (SPS-0) ------------- */

mt_status mt_cpu_nonzero(mt_call *call, mt_error *err) {
  const mt_tensor *x = NULL;
  mt_status st;
  if ((st = misc_begin(call, MT_OP_nonzero, &x, err)) != MT_OK) return st;
  return sps_no_kernel(err, "nonzero", "nonzero", x);
}

mt_status mt_cpu_narrow(mt_call *call, mt_error *err) {
  const mt_tensor *x = NULL;
  mt_status st;
  if ((st = misc_begin(call, MT_OP_narrow, &x, err)) != MT_OK) return st;
  if (x->kind == MT_KIND_COO) return sps_no_kernel(err, "narrow", "as_strided", x);
  return mt_err(err, MT_LAYOUT_MISMATCH, "narrow: Sparse %s tensors do not have strides",
                sps_upper(x));
}

mt_status mt_cpu_max(mt_call *call, mt_error *err) {
  const mt_tensor *x = NULL;
  mt_status st;
  if ((st = misc_begin(call, MT_OP_max, &x, err)) != MT_OK) return st;
  int dim = mt_kw_find(call->kw, "dim") != NULL;
  if (x->kind != MT_KIND_COO && dim)
    return mt_err(err, MT_LAYOUT_MISMATCH, "max: torch.empty: Only batched sparse compressed "
                  "(non-block) tensors are supported (the values/indices result of max(dim))");
  return sps_no_kernel(err, "max", dim ? "max.dim" : "max", x);
}

/* ---- narrow_copy, index_select --------------------------------------------- */

/* narrow_copy (SPS-6): COO only; the entries whose index along a sparse
 * dim lies in [start, start + length), shifted by -start, or every entry's
 * values sliced along a dense dim; the coalesced flag kept. torch does not
 * wrap a negative start here. */
static mt_status narrow_copy(mt_call *call, const mt_exec *ex, mt_error *err) {
  const mt_host *h = mt__cpu_host(call);
  const mt_tensor *x = NULL;
  mt_tensor *out = NULL;
  int64_t *off = NULL;
  mt_status st;
  if ((st = misc_begin(call, MT_OP_narrow_copy, &x, err)) != MT_OK) return st;
  if (x->kind != MT_KIND_COO)
    return mt_err(err, MT_LAYOUT_MISMATCH, "narrow_copy: Sparse %s tensors do not have strides",
                  sps_upper(x));
  int64_t d = mt_kw_int(call->kw, "dim", 0), start = mt_kw_int(call->kw, "start", 0),
          len = mt_kw_int(call->kw, "length", 0);
  if (d < 0) d += x->ndim;
  if (d < 0 || d >= x->ndim)
    return mt_err(err, MT_INDEX_OUT_OF_RANGE, "narrow_copy: Dimension %lld out of range. "
                  "Expecting 0 <= dim < %d.", (long long)mt_kw_int(call->kw, "dim", 0), x->ndim);
  if (start < 0 || len < 0 || start + len > x->shape[d])
    return mt_err(err, MT_INVALID_ARGUMENT, "narrow_copy: Invalid range to narrow. range(start, "
                  "start+length) must be a subset of range(0, %lld).", (long long)x->shape[d]);
  int64_t shape[MT_MAX_DIMS], nnz = 0;
  memcpy(shape, x->shape, sizeof shape);
  shape[d] = len;
  int sd = x->sparse_dim;
  if (d < sd) {
    for (int64_t e = 0; e < x->nnz; e++) {
      int64_t i = x->indices[d * x->nnz + e];
      nnz += i >= start && i < start + len;
    }
  } else {
    nnz = x->nnz;
  }
  if ((st = sps_coo_new(h, x->dtype, x->ndim, shape, sd, nnz, &out, err)) != MT_OK) return st;
  int64_t outer = 1, inner = 1, orow = mt_coo_row_numel(out), row = mt_coo_row_numel(x);
  for (int q = sd; q < d; q++) outer *= x->shape[q];
  for (int q = (int)d + 1; q < x->ndim; q++) inner *= x->shape[q];
  /* the values: a gather plan (which element of x each one copies) */
  if ((st = misc_offsets(nnz * orow, &off, "narrow_copy", err)) != MT_OK) goto out;
  for (int64_t e = 0, k = 0; e < x->nnz; e++) {
    if (d < sd) {
      int64_t i = x->indices[d * x->nnz + e];
      if (i < start || i >= start + len) continue;
      for (int r = 0; r < sd; r++)
        out->indices[(int64_t)r * nnz + k] = x->indices[(int64_t)r * x->nnz + e] - (r == d ? start : 0);
      for (int64_t t = 0; t < row; t++) off[k * orow + t] = e * row + t;
    } else {
      for (int r = 0; r < sd; r++) out->indices[(int64_t)r * nnz + k] = x->indices[(int64_t)r * x->nnz + e];
      for (int64_t o = 0; o < outer; o++)
        for (int64_t t = 0; t < len * inner; t++)
          off[k * orow + o * len * inner + t] = e * row + (o * x->shape[d] + start) * inner + t;
    }
    k++;
  }
  if ((st = misc_gather(ex, x, out, off, nnz * orow, "narrow_copy", err)) != MT_OK) goto out;
  out->coalesced = x->coalesced;
  st = sps_out(call, &out);
out:
  free(off);
  if (out) h->free(out);
  return st;
}

/* index_select(S, index, dim) (SPS-6): COO only, index a 1-d int64 dense
 * tensor. Along a sparse dim: for each position j of the index, every
 * entry whose index along dim is index[j], re-indexed j (an entry is
 * repeated as often as the index names it); along a dense dim: every
 * entry, its values gathered. Coalesced only when fewer than 2 entries
 * are stored (SPS-2). */
static mt_status index_select(mt_call *call, const mt_exec *ex, mt_error *err) {
  static const char *op = "index_select";
  const mt_host *h = mt__cpu_host(call);
  const mt_tensor *x = NULL, *ix = NULL;
  mt_tensor *out = NULL;
  mt_status st;
  int d = 0;
  char sh[128];
  if ((st = misc_begin(call, MT_OP_index_select, &x, err)) != MT_OK) return st;
  if (x->kind != MT_KIND_COO) return sps_no_kernel(err, op, "index_select", x);
  if ((st = mt__cpu_input(call, 1, op, &ix, err)) != MT_OK) return st;
  if (ix->kind != MT_KIND_DENSE || ix->ndim > 1 || ix->dtype != MT_int64)
    return mt_err(err, MT_INDEX_OUT_OF_RANGE, "index_select: index_select() argument index must be "
                  "1-D strided (non-sparse) long-tensor (inputs/1: %s %s)", mt_kind_name(ix->kind),
                  mt_dtype_name(ix->dtype));
  if ((st = sps_wrap_dim(op, mt_kw_int(call->kw, "dim", 0), x->ndim, &d, err)) != MT_OK) return st;
  int64_t m = mt_numel(ix), *idx = NULL, nnz = 0, *off = NULL;
  if (m && !(idx = malloc((size_t)m * sizeof *idx)))
    return mt_err(err, MT_OUT_OF_MEMORY, "index_select: %lld indices", (long long)m);
  for (int64_t j = 0; j < m; j++) {
    idx[j] = (int64_t)mt_dense_get(ix, j);
    int64_t v = idx[j] < 0 ? idx[j] + x->shape[d] : idx[j];
    if (v < 0 || v >= x->shape[d]) {
      mt_shape_str(x->ndim, x->shape, sh, sizeof sh);
      st = mt_err(err, MT_INDEX_OUT_OF_RANGE, "index_select: index_select(): index contains %lld "
                  "that is out of range for tensor of size %s at dimension %d", (long long)idx[j],
                  sh, d);
      goto out;
    }
    idx[j] = v;
  }
  int sd = x->sparse_dim;
  if (d < sd) {
    for (int64_t j = 0; j < m; j++)
      for (int64_t e = 0; e < x->nnz; e++) nnz += x->indices[(int64_t)d * x->nnz + e] == idx[j];
  } else {
    nnz = x->nnz;
  }
  int64_t shape[MT_MAX_DIMS];
  memcpy(shape, x->shape, sizeof shape);
  shape[d] = m;
  if ((st = sps_coo_new(h, x->dtype, x->ndim, shape, sd, nnz, &out, err)) != MT_OK) goto out;
  int64_t orow = mt_coo_row_numel(out), row = mt_coo_row_numel(x);
  /* the values: a gather plan (which element of x each one copies) */
  if ((st = misc_offsets(nnz * orow, &off, op, err)) != MT_OK) goto out;
  if (d < sd) {
    int64_t k = 0;
    for (int64_t j = 0; j < m; j++)
      for (int64_t e = 0; e < x->nnz; e++) {
        if (x->indices[(int64_t)d * x->nnz + e] != idx[j]) continue;
        for (int r = 0; r < sd; r++)
          out->indices[(int64_t)r * nnz + k] = r == d ? j : x->indices[(int64_t)r * x->nnz + e];
        for (int64_t t = 0; t < row; t++) off[k * orow + t] = e * row + t;
        k++;
      }
  } else {
    int64_t outer = 1, inner = 1;
    for (int q = sd; q < d; q++) outer *= x->shape[q];
    for (int q = d + 1; q < x->ndim; q++) inner *= x->shape[q];
    for (int64_t e = 0; e < x->nnz; e++) {
      for (int r = 0; r < sd; r++) out->indices[(int64_t)r * nnz + e] = x->indices[(int64_t)r * x->nnz + e];
      for (int64_t o = 0; o < outer; o++)
        for (int64_t j = 0; j < m; j++)
          for (int64_t t = 0; t < inner; t++)
            off[e * orow + (o * m + j) * inner + t] =
                e * row + (o * x->shape[d] + idx[j]) * inner + t;
    }
  }
  if ((st = misc_gather(ex, x, out, off, nnz * orow, op, err)) != MT_OK) goto out;
  out->coalesced = sps_built_flag(nnz);
  st = sps_out(call, &out);
out:
  free(idx);
  free(off);
  if (out) h->free(out);
  return st;
}

/* ---- torch.sparse.softmax / log_softmax -------------------------------------- */

/* (SPS-5) COO only, float32/float64 (after dtype=). The input coalesced
 * first; along a sparse dim, each slice is the set of entries that share
 * every other sparse index, and the softmax runs over the stored values
 * only (an unstored element is -inf, not 0: it gets nothing and is not
 * stored); along a dense dim, each entry's values. The result keeps the
 * coalesced indices. */
static mt_status sparse_softmax(mt_call *call, mt_op opid, int log_, const mt_exec *ex,
                                mt_error *err) {
  const char *op = mt_op_name(opid);
  const mt_host *h = mt__cpu_host(call);
  const mt_tensor *x = NULL, *c = NULL;
  mt_tensor *ctmp = NULL, *out = NULL;
  int64_t *grp = NULL, *ptr = NULL, *off = NULL, *sl = NULL;
  mt_status st;
  int d = 0;
  if ((st = misc_begin(call, opid, &x, err)) != MT_OK) return st;
  if (x->kind != MT_KIND_COO)
    return sps_no_kernel(err, op, log_ ? "_sparse_log_softmax" : "_sparse_softmax", x);
  mt_dtype odt = x->dtype;
  const mt_kwarg *dk = mt_kw_find(call->kw, "dtype");
  if (dk) mt_kw_dtype_parse(dk->s, &odt);
  if (odt != MT_float32 && odt != MT_float64)
    return mt_err(err, MT_DTYPE_MISMATCH, "%s: \"%s\" not implemented for '%s'", op,
                  log_ ? "log_softmax" : "softmax", mt__cpu_torch_type(odt));
  if ((st = sps_wrap_dim(op, mt_kw_int(call->kw, "dim", 0), x->ndim, &d, err)) != MT_OK) return st;
  if ((st = mt__exec_coalesced(ex, x, &c, &ctmp, err)) != MT_OK) goto out;
  int sd = c->sparse_dim;
  int64_t nnz = c->nnz, row = mt_coo_row_numel(c), nv = nnz * row;
  if ((st = sps_coo_new(h, odt, c->ndim, c->shape, sd, nnz, &out, err)) != MT_OK) goto out;
  if (nnz) memcpy(out->indices, c->indices, (size_t)sd * (size_t)nnz * sizeof(int64_t));
  out->coalesced = 1;
  /* the plan: each result value's slice (sl), each slice's input values in
   * the CPU's order (ptr, off); the exec computes every value
   * (common/sparse_misc_math.h) */
  size_t k8 = (size_t)(nv > 0 ? nv : 1) * sizeof(int64_t);
  grp = malloc((size_t)(nnz > 0 ? nnz : 1) * sizeof *grp);
  ptr = malloc(k8 + sizeof(int64_t));
  off = malloc(k8);
  sl = malloc(k8);
  if (!grp || !ptr || !off || !sl) {
    st = mt_err(err, MT_OUT_OF_MEMORY, "%s: %lld entries", op, (long long)nnz);
    goto out;
  }
  int64_t ns = 0, no = 0;
  ptr[0] = 0;
  if (d < sd) {
    /* entries e, f in one slice when every sparse index but d agrees: the
     * first such entry names the slice (quadratic: reference, small n) */
    for (int64_t e = 0; e < nnz; e++) {
      grp[e] = e;
      for (int64_t f = 0; f < e; f++) {
        int same = 1;
        for (int r = 0; r < sd && same; r++)
          if (r != d && c->indices[(int64_t)r * nnz + e] != c->indices[(int64_t)r * nnz + f]) same = 0;
        if (same) {
          grp[e] = grp[f];
          break;
        }
      }
    }
    for (int64_t e = 0; e < nnz; e++) {
      if (grp[e] != e) continue;
      for (int64_t j = 0; j < row; j++, ns++) { /* one dense position of slice e */
        for (int64_t f = e; f < nnz; f++)
          if (grp[f] == e) {
            off[no++] = f * row + j;
            sl[f * row + j] = ns;
          }
        ptr[ns + 1] = no;
      }
    }
  } else {
    int64_t outer = 1, inner = 1, n = c->shape[d];
    for (int q = sd; q < d; q++) outer *= c->shape[q];
    for (int q = d + 1; q < c->ndim; q++) inner *= c->shape[q];
    for (int64_t e = 0; e < nnz; e++)
      for (int64_t o = 0; o < outer; o++)
        for (int64_t i = 0; i < inner; i++, ns++) {
          int64_t b = e * row + o * n * inner + i;
          for (int64_t k = 0; k < n; k++) {
            off[no++] = b + k * inner;
            sl[b + k * inner] = ns;
          }
          ptr[ns + 1] = no;
        }
  }
  if (nv) {
    if (!ex->sparse_softmax) {
      st = mt_err(err, MT_NOT_SUPPORTED, "%s: the %s backend has no sparse softmax", op, ex->name);
      goto out;
    }
    mt_smx_par p = {.in_dt = c->dtype, .out_dt = odt, .log_ = log_, .n_out = nv, .n_slices = ns,
                    .n_off = no};
    if ((st = ex->sparse_softmax(&p, c->values, ptr, off, sl, out->values, err)) != MT_OK) goto out;
  }
  st = sps_out(call, &out);
out:
  free(grp);
  free(ptr);
  free(off);
  free(sl);
  mt_tensor_free(ctmp);
  if (out) h->free(out);
  return st;
}

/* The CPU's compute of the softmax plan: mt_smx_out for every value. */
mt_status mt__cpu_sparse_softmax_exec(const struct mt_smx_par *p, const void *vals,
                                      const int64_t *ptr, const int64_t *off, const int64_t *sl,
                                      void *out, mt_error *err) {
  (void)err;
  for (int64_t o = 0; o < p->n_out; o++) mt_smx_out(p, vals, ptr, off, sl, out, o);
  return MT_OK;
}

mt_status mt_cpu_sparse_softmax(mt_call *c, mt_error *e) {
  return sparse_softmax(c, MT_OP_sparse_softmax, 0, &mt_cpu_exec, e);
}
mt_status mt_cpu_sparse_log_softmax(mt_call *c, mt_error *e) {
  return sparse_softmax(c, MT_OP_sparse_log_softmax, 1, &mt_cpu_exec, e);
}

/* ---- torch.sparse.sum --------------------------------------------------------- */

static mt_status sparse_sum(mt_call *call, const mt_exec *ex, mt_error *err) {
  const mt_tensor *x = NULL;
  mt_status st;
  if ((st = misc_begin(call, MT_OP_sparse_sum, &x, err)) != MT_OK) return st;
  return mt__sps_sum(call, MT_OP_sparse_sum, 1, ex, err);
}

mt_status mt_cpu_sparse_sum(mt_call *call, mt_error *err) {
  return sparse_sum(call, &mt_cpu_exec, err);
}

/* ---- sparse_resize_, sparse_resize_and_clear_ (SPS-7) ------------------------- */

static mt_status sparse_resize(mt_call *call, mt_op opid, int clear, const mt_exec *ex,
                               mt_error *err) {
  const char *op = mt_op_name(opid);
  const mt_host *h = mt__cpu_host(call);
  const mt_tensor *x = NULL;
  mt_tensor *out = NULL;
  mt_status st;
  if ((st = misc_begin(call, opid, &x, err)) != MT_OK) return st;
  if (x->kind != MT_KIND_COO) return sps_no_kernel(err, op, op, x);
  const mt_kwarg *sz = mt_kw_find(call->kw, "size");
  int64_t shape[MT_MAX_DIMS];
  int n = !sz ? 0 : sz->type == MT_KW_INTS ? sz->n : 1;
  int sd = (int)mt_kw_int(call->kw, "sparse_dim", 0), dd = (int)mt_kw_int(call->kw, "dense_dim", 0);
  if (n > MT_MAX_DIMS) return mt_err(err, MT_NOT_SUPPORTED, "%s: more than %d dims", op, MT_MAX_DIMS);
  for (int k = 0; k < n; k++) shape[k] = sz->type == MT_KW_INTS ? sz->ints[k] : sz->i;
  if (n != sd + dd)
    return mt_err(err, MT_INVALID_ARGUMENT, "%s: 'len(size) == sparse_dim + dense_dim' is not "
                  "satisfied: len(size) = %d, sparse_dim = %d, dense_dim = %d", op, n, sd, dd);
  if (!clear && (st = mt__sps_resize_check(op, x, n, shape, sd, err)) != MT_OK) return st;
  int64_t nnz = clear ? 0 : x->nnz;
  if ((st = sps_coo_new(h, x->dtype, n, shape, sd, nnz, &out, err)) != MT_OK) return st;
  if (nnz) { /* same sparse/dense dims, no dim shrunk: indices and values as stored */
    memcpy(out->indices, x->indices, (size_t)sd * (size_t)nnz * sizeof(int64_t));
    int64_t row = mt_coo_row_numel(x), orow = mt_coo_row_numel(out);
    if (row != orow) {
      h->free(out);
      return mt_err(err, MT_NOT_SUPPORTED, "%s: growing a dense dim of a non-empty tensor (torch "
                    "leaves the new values uninitialized)", op);
    }
    int64_t *off = NULL;
    if ((st = misc_offsets(nnz * row, &off, op, err)) == MT_OK) {
      for (int64_t i = 0; i < nnz * row; i++) off[i] = i; /* the values as stored */
      st = misc_gather(ex, x, out, off, nnz * row, op, err);
      free(off);
    }
    if (st != MT_OK) {
      h->free(out);
      return st;
    }
  }
  out->coalesced = clear ? 1 : x->coalesced;
  return sps_out(call, &out);
}

mt_status mt_cpu_sparse_resize_(mt_call *c, mt_error *e) {
  return sparse_resize(c, MT_OP_sparse_resize_, 0, &mt_cpu_exec, e);
}
mt_status mt_cpu_sparse_resize_and_clear_(mt_call *c, mt_error *e) {
  return sparse_resize(c, MT_OP_sparse_resize_and_clear_, 1, &mt_cpu_exec, e);
}

mt_status mt_cpu_narrow_copy(mt_call *call, mt_error *err) {
  return narrow_copy(call, &mt_cpu_exec, err);
}
mt_status mt_cpu_index_select(mt_call *call, mt_error *err) {
  return index_select(call, &mt_cpu_exec, err);
}

/* The family's kernels with their compute on ex (the CUDA backend's slots):
 * zero_, nonzero, narrow and max store no values (or refuse, as torch);
 * narrow_copy, index_select and sparse_resize_ copy values through ex's
 * gather; the softmaxes compute on ex. t_ and torch.sparse.sum run the
 * structure and reduce families' plain sparse kernels (structure_sparse.c,
 * reduce_sparse.c) with their values on ex. */
mt_status mt__sparse_misc_run(mt_call *call, mt_op op, const mt_exec *ex, mt_error *err) {
  switch (op) {
  case MT_OP_zero_: return mt_cpu_zero_(call, err);
  case MT_OP_nonzero: return mt_cpu_nonzero(call, err);
  case MT_OP_narrow: return mt_cpu_narrow(call, err);
  case MT_OP_max: return mt_cpu_max(call, err);
  case MT_OP_narrow_copy: return narrow_copy(call, ex, err);
  case MT_OP_index_select: return index_select(call, ex, err);
  case MT_OP_sparse_softmax: return sparse_softmax(call, op, 0, ex, err);
  case MT_OP_sparse_log_softmax: return sparse_softmax(call, op, 1, ex, err);
  case MT_OP_sparse_resize_: return sparse_resize(call, op, 0, ex, err);
  case MT_OP_sparse_resize_and_clear_: return sparse_resize(call, op, 1, ex, err);
  case MT_OP_t_: return t_(call, ex, err);
  case MT_OP_sparse_sum: return sparse_sum(call, ex, err);
  default: return mt_err(err, MT_NOT_SUPPORTED, "%s: not a sparse_misc op", mt_op_name(op));
  }
}

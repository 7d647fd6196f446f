/* reduce_sparse.c - reductions of plain sparse tensors (SPS-3, SPS-4):
 * torch.sum (all, dim=, keepdim=, dtype=), torch.amax and torch.norm of a
 * COO or compressed tensor that is not a masked tensor's storage, and
 * torch.sparse.sum (sparse_misc.c calls mt__sps_sum). reduce.c hands the
 * plain sparse calls here (mt__sps_call).
 *
 * Sums accumulate in float64 (floats) or int64 (integers, bool) and round
 * once to the result dtype; integer and bool inputs sum to int64 as
 * torch's. */
#include "common/sparse_vals_math.h"
#include "sps_util.h"

/* ---- sum ------------------------------------------------------------------ */

static mt_dtype sum_dtype(mt_dtype in, const mt_kwargs *kw) {
  const mt_kwarg *a = mt_kw_find(kw, "dtype");
  mt_dtype d = in;
  if (a && mt_kw_dtype_parse(a->s, &d) == 0) return d;
  return mt__cpu_is_float(in) ? in : MT_int64;
}

/* The sums on ex (common/sparse_vals_math.h, SPV_SUM: double for float
 * results, int64 otherwise, rounded once): out[o] for o < n_out is the sum
 * of the values vi[t] of x whose slot vs[t] is o, in the order of t (the
 * CPU's visiting order; vs[t] = -1: none). */
static mt_status sum_run(const mt_exec *ex, const mt_tensor *x, mt_dtype odt, int64_t n_out,
                         const int64_t *vi, const int64_t *vs, int64_t nv, void *out,
                         mt_error *err) {
  int64_t *off = NULL, *ib = NULL, *at = NULL, nb = 0;
  mt_spv_par p;
  mt_status st = MT_OK;
  if (n_out <= 0) return MT_OK;
  if (!ex->sparse_vals)
    return mt_err(err, MT_NOT_SUPPORTED, "sum: the %s backend has no plain sparse kernels",
                  ex->name);
  off = calloc((size_t)n_out + 1, sizeof *off);
  at = malloc((size_t)n_out * sizeof *at);
  ib = malloc((size_t)(nv > 0 ? nv : 1) * sizeof *ib);
  if (!off || !at || !ib) {
    st = mt_err(err, MT_OUT_OF_MEMORY, "sum: %lld accumulators", (long long)n_out);
    goto out;
  }
  for (int64_t t = 0; t < nv; t++)
    if (vs[t] >= 0) off[vs[t] + 1]++;
  for (int64_t o = 0; o < n_out; o++) off[o + 1] += off[o], at[o] = off[o];
  for (int64_t t = 0; t < nv; t++)
    if (vs[t] >= 0) {
      ib[at[vs[t]]++] = vi[t];
      if (vi[t] + 1 > nb) nb = vi[t] + 1;
    }
  memset(&p, 0, sizeof p);
  p.op = SPV_SUM;
  p.at = p.bt = x->dtype;
  p.ot = odt;
  p.n_out = n_out;
  p.n_terms = off[n_out];
  p.nb = nb;
  st = ex->sparse_vals(&p, NULL, nb ? x->values : NULL, NULL, off, ib, out, err);
out:
  free(off);
  free(at);
  free(ib);
  return st;
}

/* The sum of every stored value (duplicates, explicit zeros and all) as a
 * dense 0-d tensor of odt (SPS-3). */
static mt_status sum_all(const mt_host *h, const mt_exec *ex, const mt_tensor *x, mt_dtype odt,
                         mt_tensor **out, mt_error *err) {
  int64_t n, *vi = NULL, *vs = NULL;
  mt_cgeom g;
  mt_status st;
  if (x->kind == MT_KIND_COO) {
    n = x->nnz * mt_coo_row_numel(x);
  } else {
    if (!mt_cgeom_of(x, &g))
      return mt_err(err, MT_INVALID_ARGUMENT, "sum: compressed tensor of inconsistent geometry");
    n = g.batches * x->nnz * g.entry;
  }
  if ((st = h->dense_new(odt, 0, NULL, out, err)) != MT_OK) return st;
  vi = malloc((size_t)(n > 0 ? n : 1) * sizeof *vi);
  vs = calloc((size_t)(n > 0 ? n : 1), sizeof *vs);
  if (!vi || !vs)
    st = mt_err(err, MT_OUT_OF_MEMORY, "sum: %lld values", (long long)n);
  else {
    for (int64_t i = 0; i < n; i++) vi[i] = i;
    st = sum_run(ex, x, odt, 1, vi, vs, n, (*out)->values, err);
  }
  free(vi);
  free(vs);
  return st;
}

/* entry e's kept sparse indices, for sorting */
typedef struct {
  int64_t key[MT_MAX_DIMS];
  int64_t e;
  int n;
} sum_key;

static int key_cmp(const void *pa, const void *pb) {
  const sum_key *a = pa, *b = pb;
  for (int q = 0; q < a->n; q++)
    if (a->key[q] != b->key[q]) return a->key[q] < b->key[q] ? -1 : 1;
  return a->e < b->e ? -1 : a->e > b->e;
}

/* COO sum over the dims red[] (SPS-3): entries grouped by their kept
 * sparse indices (sorted, duplicates summed, explicit zeros and zero sums
 * kept: coalesced); value rows summed over the reduced dense dims. No kept
 * sparse dim: a dense result of the kept dense dims. */
static mt_status coo_sum_dims(const mt_host *h, const mt_exec *ex, const mt_tensor *x,
                               const int *red, mt_dtype odt, mt_tensor **out, mt_error *err) {
  int sd = x->sparse_dim, keep_s[MT_MAX_DIMS], nks = 0, nkd = 0;
  int64_t oshape[MT_MAX_DIMS];
  for (int q = 0; q < sd; q++)
    if (!red[q]) keep_s[nks] = q, oshape[nks++] = x->shape[q];
  for (int q = sd; q < x->ndim; q++)
    if (!red[q]) oshape[nks + nkd++] = x->shape[q];
  /* value row element j -> output row element: strides over the kept dense dims */
  int64_t row = mt_coo_row_numel(x), orow = 1, ostride[MT_MAX_DIMS];
  for (int q = x->ndim - 1; q >= sd; q--) {
    ostride[q] = red[q] ? 0 : orow;
    if (!red[q]) orow *= x->shape[q];
  }
  sum_key *keys = NULL;
  int64_t *grp = NULL, ngrp = 0, *vi = NULL, *vs = NULL, nv = x->nnz * row;
  mt_status st = MT_OK;
  if (x->nnz && (!(keys = malloc((size_t)x->nnz * sizeof *keys)) ||
                 !(grp = malloc((size_t)x->nnz * sizeof *grp)))) {
    st = mt_err(err, MT_OUT_OF_MEMORY, "sum: %lld entries", (long long)x->nnz);
    goto out;
  }
  for (int64_t e = 0; e < x->nnz; e++) {
    keys[e].n = nks;
    keys[e].e = e;
    for (int q = 0; q < nks; q++) keys[e].key[q] = x->indices[(int64_t)keep_s[q] * x->nnz + e];
  }
  if (nks && x->nnz) qsort(keys, (size_t)x->nnz, sizeof *keys, key_cmp);
  for (int64_t k = 0; k < x->nnz; k++) { /* group of sorted entry k */
    if (k == 0 || !nks || memcmp(keys[k].key, keys[k - 1].key, (size_t)nks * sizeof(int64_t)))
      ngrp++;
    grp[k] = nks ? ngrp - 1 : 0;
  }
  if (!nks) ngrp = 1;
  if (!(vi = malloc((size_t)(nv > 0 ? nv : 1) * sizeof *vi)) ||
      !(vs = malloc((size_t)(nv > 0 ? nv : 1) * sizeof *vs))) {
    st = mt_err(err, MT_OUT_OF_MEMORY, "sum: %lld values", (long long)nv);
    goto out;
  }
  /* the values in the CPU's order: sorted entries, then each row */
  for (int64_t k = 0; k < x->nnz; k++) {
    int64_t e = keys[k].e;
    for (int64_t j = 0; j < row; j++) {
      int64_t rem = j, o = 0;
      for (int q = x->ndim - 1; q >= sd; q--) {
        o += (rem % x->shape[q]) * ostride[q];
        rem /= x->shape[q];
      }
      vi[k * row + j] = e * row + j;
      vs[k * row + j] = grp[k] * orow + o;
    }
  }
  if (!nks) { /* every sparse dim reduced: dense */
    if ((st = h->dense_new(odt, nkd, oshape, out, err)) != MT_OK) goto out;
    st = sum_run(ex, x, odt, orow, vi, vs, nv, (*out)->values, err);
    goto out;
  }
  if ((st = sps_coo_new(h, odt, nks + nkd, oshape, nks, ngrp, out, err)) != MT_OK) goto out;
  for (int64_t k = 0, g = -1; k < x->nnz; k++) {
    if (grp[k] == g) continue;
    g = grp[k];
    for (int q = 0; q < nks; q++) (*out)->indices[(int64_t)q * ngrp + g] = keys[k].key[q];
  }
  if ((st = sum_run(ex, x, odt, ngrp * orow, vi, vs, nv, (*out)->values, err)) != MT_OK) goto out;
  (*out)->coalesced = 1;
out:
  free(keys);
  free(grp);
  free(vi);
  free(vs);
  return st;
}

/* CSR sum with keepdim=True (SPS-3): dim 0 -> (1, cols) with one entry per
 * column that stores anything; dim 1 -> (rows, 1), one entry per row that
 * stores anything; both -> (1, 1), one entry when anything is stored. */
static mt_status csr_sum_keepdim(const mt_host *h, const mt_exec *ex, const mt_tensor *x,
                                 const int *red, mt_dtype odt, mt_tensor **out, mt_error *err) {
  int64_t rows = x->shape[0], cols = x->shape[1];
  int64_t orows = red[0] ? 1 : rows, ocols = red[1] ? 1 : cols;
  int64_t nslot = orows * ocols, nv = x->crow_indices[rows];
  int64_t *pos = NULL, *vi = NULL, *vs = NULL;
  mt_status st = MT_OK;
  pos = malloc((size_t)(nslot > 0 ? nslot : 1) * sizeof *pos);
  vi = malloc((size_t)(nv > 0 ? nv : 1) * sizeof *vi);
  vs = malloc((size_t)(nv > 0 ? nv : 1) * sizeof *vs);
  if (!pos || !vi || !vs) {
    st = mt_err(err, MT_OUT_OF_MEMORY, "sum: %lld slots", (long long)nslot);
    goto out;
  }
  for (int64_t o = 0; o < nslot; o++) pos[o] = -1;
  for (int64_t r = 0; r < rows; r++)
    for (int64_t k = x->crow_indices[r]; k < x->crow_indices[r + 1]; k++)
      pos[(red[0] ? 0 : r) * ocols + (red[1] ? 0 : x->col_indices[k])] = 0; /* used */
  int64_t nnz = 0;
  for (int64_t o = 0; o < nslot; o++)
    if (pos[o] >= 0) pos[o] = nnz++; /* a used slot's value, row-major */
  int64_t shape[2] = {orows, ocols};
  if ((st = h->compressed_new(MT_KIND_CSR, odt, 2, shape, 0, NULL, nnz, out, err)) != MT_OK) goto out;
  for (int64_t r = 0, k = 0; r < orows; r++) {
    for (int64_t c = 0; c < ocols; c++)
      if (pos[r * ocols + c] >= 0) (*out)->col_indices[k++] = c;
    (*out)->crow_indices[r + 1] = k;
  }
  for (int64_t r = 0, t = 0; r < rows; r++)
    for (int64_t k = x->crow_indices[r]; k < x->crow_indices[r + 1]; k++, t++) {
      vi[t] = k;
      vs[t] = pos[(red[0] ? 0 : r) * ocols + (red[1] ? 0 : x->col_indices[k])];
    }
  st = sum_run(ex, x, odt, nnz, vi, vs, nv, (*out)->values, err);
out:
  free(pos);
  free(vi);
  free(vs);
  return st;
}

/* torch.sum (sparse = 0) and torch.sparse.sum (sparse = 1) of a plain
 * sparse tensor (SPS-3). */
mt_status mt__sps_sum(mt_call *call, mt_op opid, int sparse, const mt_exec *ex, mt_error *err) {
  const char *op = mt_op_name(opid);
  const mt_host *h = mt__cpu_host(call);
  const mt_tensor *x = NULL;
  mt_tensor *out = NULL, *tmp = NULL;
  int red[MT_MAX_DIMS], n;
  mt_status st;
  if ((st = sps_begin(call, opid, &x, err)) != MT_OK) return st;
  int keepdim = mt_kw_int(call->kw, "keepdim", 0) != 0;
  mt_dtype odt = sum_dtype(x->dtype, call->kw);
  if (sparse && x->kind != MT_KIND_COO) {
    if (!mt_kw_find(call->kw, "dim"))
      return mt_err(err, MT_LAYOUT_MISMATCH, "%s: coalesce expected sparse coordinate tensor "
                    "layout but got %s", op, sps_layout(x));
    return sps_no_kernel(err, op, "_indices", x);
  }
  if ((st = sps_dims(op, call->kw, x->ndim, red, &n, err)) != MT_OK) return st;
  if (n < 0) {
    if ((st = sum_all(h, ex, x, odt, &out, err)) != MT_OK) goto out;
    return sps_out(call, &out);
  }
  if (x->kind != MT_KIND_COO) {
    if (x->kind != MT_KIND_CSR)
      return mt_err(err, MT_LAYOUT_MISMATCH, "%s: Currently the only compressed sparse format "
                    "supported for sum.dim_IntList is CSR, but got layout %s", op, sps_layout(x));
    if (x->dtype == MT_bool)
      return mt_err(err, MT_DTYPE_MISMATCH, "%s: \"_sparse_csr_sum_cpu\" not implemented for 'Bool'",
                    op);
    if (!keepdim)
      return mt_err(err, MT_INVALID_ARGUMENT, "%s: reduction operations on CSR tensors with "
                    "keepdim=False is unsupported", op);
    if (x->ndim != 2)
      return mt_err(err, MT_INVALID_ARGUMENT, "%s: input_dim == 2 INTERNAL ASSERT FAILED (a %dD "
                    "CSR tensor: torch asserts)", op, x->ndim);
    if ((st = csr_sum_keepdim(h, ex, x, red, odt, &out, err)) != MT_OK) goto out;
    return sps_out(call, &out);
  }
  /* torch.sparse.sum over some dims keeps an integer or bool dtype (only
   * the full sum widens to int64, as torch.sum always does; SPS-3) */
  if (sparse && n < x->ndim && !mt_kw_find(call->kw, "dtype")) odt = x->dtype;
  if ((st = coo_sum_dims(h, ex, x, red, odt, &out, err)) != MT_OK) goto out;
  if (keepdim) { /* torch: the sum, then each reduced dim unsqueezed in turn */
    for (int d = 0; d < x->ndim; d++) {
      if (!red[d]) continue;
      if (out->kind == MT_KIND_DENSE) {
        for (int q = out->ndim; q > d; q--) out->shape[q] = out->shape[q - 1];
        out->shape[d] = 1;
        out->ndim++;
        for (int q = out->ndim - 1, s = 1; q >= 0; q--) out->strides[q] = s, s *= (int)out->shape[q];
        continue;
      }
      if ((st = mt__sps_unsqueeze_coo(h, ex, out, d, &tmp, err)) != MT_OK) goto out;
      h->free(out);
      out = tmp;
      tmp = NULL;
    }
  }
  st = sps_out(call, &out);
out:
  if (out) h->free(out);
  return st;
}

/* ---- amax, norm ------------------------------------------------------------ */

/* amax (SPS-4): torch has no kernel for any plain sparse layout. */
static mt_status sps_amax(mt_call *call, mt_error *err) {
  const mt_tensor *x = NULL;
  mt_status st;
  if ((st = sps_begin(call, MT_OP_amax, &x, err)) != MT_OK) return st;
  if (x->kind == MT_KIND_COO) return sps_no_kernel(err, "amax", "amax", x);
  if (mt_kw_find(call->kw, "dim"))
    return mt_err(err, MT_LAYOUT_MISMATCH, "amax: resize_reduction: support for output with %s "
                  "layout is not implemented yet", sps_layout(x));
  return sps_no_kernel(err, "amax", "amax.out", x);
}

/* norm (SPS-4): floats only (checked first), COO only, the full reduction only; the
 * vector p-norm of the coalesced values (duplicates summed first). */
static mt_status sps_norm(mt_call *call, const mt_exec *ex, mt_error *err) {
  static const char *op = "norm";
  const mt_host *h = mt__cpu_host(call);
  const mt_tensor *x = NULL, *c = NULL;
  mt_tensor *ctmp = NULL, *out = NULL;
  int red[MT_MAX_DIMS], n;
  mt_status st;
  if ((st = sps_begin(call, MT_OP_norm, &x, err)) != MT_OK) return st;
  if (!mt__cpu_is_float(x->dtype)) /* torch checks the dtype first, on every layout */
    return mt_err(err, MT_DTYPE_MISMATCH, "norm: norm(): input dtype should be either floating "
                  "point or complex. Got %s instead.", mt__cpu_torch_type(x->dtype));
  if (x->kind != MT_KIND_COO) return sps_no_kernel(err, op, "norm.out", x);
  if ((st = sps_dims(op, call->kw, x->ndim, red, &n, err)) != MT_OK) return st;
  if (n >= 0 && n != x->ndim)
    return mt_err(err, MT_INVALID_ARGUMENT, "norm: norm_sparse currently only supports full "
                  "reductions, so 'dim' must either be empty or contain all dimensions of the input");
  double p = mt_kw_float(call->kw, "p", 2.0);
  if ((st = mt__exec_coalesced(ex, x, &c, &ctmp, err)) != MT_OK) return st;
  int64_t m = c->nnz * mt_coo_row_numel(c);
  if (isinf(p) && m == 0) {
    st = mt_err(err, MT_INVALID_ARGUMENT, "norm: linalg.vector_norm cannot compute the %s norm on "
                "an empty tensor because the operation does not have an identity",
                p > 0 ? "inf" : "-inf");
    goto out;
  }
  if ((st = h->dense_new(x->dtype, 0, NULL, &out, err)) != MT_OK) goto out;
  if (!ex->sparse_vals) {
    st = mt_err(err, MT_NOT_SUPPORTED, "norm: the %s backend has no plain sparse kernels",
                ex->name);
    goto out;
  }
  { /* the vector p-norm of the m coalesced values, in order, on ex */
    int64_t off[2] = {0, m}, *ib = malloc((size_t)(m > 0 ? m : 1) * sizeof *ib);
    mt_spv_par sp;
    if (!ib) {
      st = mt_err(err, MT_OUT_OF_MEMORY, "norm: %lld values", (long long)m);
      goto out;
    }
    for (int64_t i = 0; i < m; i++) ib[i] = i;
    memset(&sp, 0, sizeof sp);
    sp.op = SPV_NORM;
    sp.at = sp.bt = c->dtype;
    sp.ot = x->dtype;
    sp.n_out = 1;
    sp.n_terms = m;
    sp.nb = m;
    sp.p = p;
    st = ex->sparse_vals(&sp, NULL, m ? c->values : NULL, NULL, off, ib, out->values, err);
    free(ib);
    if (st != MT_OK) goto out;
  }
  st = sps_out(call, &out);
out:
  mt_tensor_free(ctmp);
  if (out) h->free(out);
  return st;
}

mt_status mt__sps_reduce(mt_call *call, mt_op op, const mt_exec *ex, mt_error *err) {
  switch (op) {
    case MT_OP_sum: return mt__sps_sum(call, op, 0, ex, err);
    case MT_OP_amax: return sps_amax(call, err);
    case MT_OP_norm: return sps_norm(call, ex, err);
    default:
      mt__cpu_begin(call);
      return mt_err(err, MT_NOT_SUPPORTED, "%s: not a plain sparse reduction", mt_op_name(op));
  }
}

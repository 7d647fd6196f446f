/* grad_sparse.c - CPU backward kernels of plain sparse ops (COO, CSR, CSC,
 * BSR, BSC inputs; golden format 3's gradient cases in grad_sparse.h5;
 * spec/SEMANTICS.md SPG-*), as torch 2.15 records them.
 *
 * Every gradient is computed densely in double from densified inputs and
 * upstream gradients (an unstored element is 0), then laid out the way
 * torch gives it (SPG-1): dense for a dense input and for the products and
 * reductions that densify (mm of a sparse and a dense matrix, sum ...); for
 * a sparse input mostly over the input's own stored elements, over the
 * upstream gradient's for the elementwise binary ops and sparse_mask, none
 * for the piecewise constant ops (ceil, sign ...), over the product's
 * pattern for mm of two sparse matrices. Values are rounded once to the
 * input's dtype. The backward refusals of torch (SPG-2: a derivative that
 * runs an op with no sparse kernel, CSC/BSR/BSC inputs, batched CSR ...)
 * are LAYOUT_MISMATCH with torch's message.
 *
 * The host plan here (refusals, densifying, which upstream elements reach
 * each gradient element in this file's order, the layout) hands each
 * gradient's values to its exec (mt__grad_sparse_run, with mt_cpu_exec for
 * the CPU reference): common/grad_sparse_math.h's mt_gsp_elem, one
 * gradient element at a time, rounded once (CUDA: impl/cuda/grad_sparse.cu).
 * On another exec a COO tensor's duplicates are summed by its coalesce. */
#include "grad_sparse.h"

#include "common/grad_sparse_math.h"
#include "common/grad_sparse_ops.h"
#include "mt/compressed.h"
#include "sps_util.h"

/* ---- the dense engine ------------------------------------------------------- */

/* A dense row-major double copy of t (any kind; COO duplicates summed). */
static mt_status dense_f64(const mt_tensor *t, double **out, mt_error *err) {
  mt_tensor *d = NULL;
  mt_status st = mt_to_dense(t, &d, err);
  *out = NULL;
  if (st != MT_OK) return st;
  int64_t n = mt_numel(d);
  double *v = malloc(sizeof *v * (size_t)(n ? n : 1));
  if (!v) {
    mt_tensor_free(d);
    return mt_err(err, MT_OUT_OF_MEMORY, "backward: no memory for %lld elements", (long long)n);
  }
  for (int64_t i = 0; i < n; i++) v[i] = mt_get_f64(d->values, d->dtype, i);
  mt_tensor_free(d);
  *out = v;
  return MT_OK;
}

/* dense_f64 for a host plan computing on ex: a COO tensor's duplicates are
 * summed by ex's coalesce (the densifying is then a copy) */
static mt_status dense_f64_on(const mt_exec *ex, const mt_tensor *t, double **out,
                              mt_error *err) {
  const mt_tensor *v = t;
  mt_tensor *tmp = NULL;
  mt_status st;
  if (ex != &mt_cpu_exec && t->kind == MT_KIND_MASKED) v = t->data;
  if (ex == &mt_cpu_exec || v->kind != MT_KIND_COO) return dense_f64(t, out, err);
  *out = NULL;
  /* (a device's indices are checked there before the host follows them) */
  if ((st = mt__exec_coalesced(ex, v, &v, &tmp, err)) != MT_OK) {
    mt_tensor_free(tmp);
    return st;
  }
  st = dense_f64(v, out, err);
  mt_tensor_free(tmp);
  return st;
}

int mt__cpu_grad_sparse_takes(const mt_call *call) {
  for (int k = 0; k < call->n_in; k++)
    if (call->in && call->in[k] && call->in[k]->kind == MT_KIND_MASKED) return 0;
  return 1;
}

void mt__gs_close(mt__gs_ctx *c) {
  for (int k = 0; k < MT__GS_MAX_IN; k++) {
    free(c->x[k]);
    free(c->g[k]);
  }
  for (int j = 0; j < MT_MAX_OUTPUTS; j++) free(c->go[j]);
  memset(c, 0, sizeof *c);
}

mt_status mt__gs_open_on(mt__gs_ctx *c, mt_call *call, mt_op op, const mt_exec *ex,
                         mt_error *err) {
  mt_status st;
  char what[32];
  memset(c, 0, sizeof *c);
  c->ex = ex;
  c->call = call;
  c->op = op;
  c->name = mt_op_name(op);
  mt__cpu_begin(call);
  if ((st = mt__kw_check(op, call->kw, err)) != MT_OK) return st;
  if (call->n_in < 1 || call->n_in > MT__GS_MAX_IN || !call->in)
    return mt_err(err, MT_INVALID_ARGUMENT, "%s backward: expected 1 to %d inputs, got %d",
                  c->name, MT__GS_MAX_IN, call->n_in);
  if (call->n_grad_out < 1 || call->n_grad_out > MT_MAX_OUTPUTS || !call->grad_out)
    return mt_err(err, MT_INVALID_ARGUMENT, "%s backward: expected upstream gradients, got %d",
                  c->name, call->n_grad_out);
  c->n_in = call->n_in;
  c->n_go = call->n_grad_out;
  for (int k = 0; k < c->n_in; k++) {
    if ((st = mt__cpu_input(call, k, c->name, &c->in[k], err)) != MT_OK) goto fail;
    if ((st = mt_tensor_validate(c->in[k], mt__cpu_in_name(k, what, sizeof what), err)) != MT_OK)
      goto fail;
    c->n[k] = mt_numel(c->in[k]);
    if ((st = dense_f64_on(ex, c->in[k], &c->x[k], err)) != MT_OK) goto fail;
  }
  for (int j = 0; j < c->n_go; j++) {
    c->gt[j] = call->grad_out[j];
    if (!c->gt[j]) {
      st = mt_err(err, MT_INVALID_ARGUMENT, "%s backward: grad_outputs/%d is missing", c->name, j);
      goto fail;
    }
    snprintf(what, sizeof what, "grad_outputs/%d", j);
    if ((st = mt_tensor_validate(c->gt[j], what, err)) != MT_OK) goto fail;
    if ((st = dense_f64_on(ex, c->gt[j], &c->go[j], err)) != MT_OK) goto fail;
  }
  return MT_OK;
fail:
  mt__gs_close(c);
  return st;
}

mt_status mt__gs_want(mt__gs_ctx *c, int k, mt_error *err) {
  free(c->g[k]);
  c->g[k] = calloc((size_t)(c->n[k] ? c->n[k] : 1), sizeof(double));
  if (!c->g[k])
    return mt_err(err, MT_OUT_OF_MEMORY, "%s backward: no memory for the gradient of inputs/%d",
                  c->name, k);
  return MT_OK;
}

mt_status mt__gs_go_numel(const mt__gs_ctx *c, int64_t n, mt_error *err) {
  int64_t have = mt_numel(c->gt[0]);
  if (have == n) return MT_OK;
  return mt_err(err, MT_SHAPE_MISMATCH, "%s backward: grad_outputs/0 has %lld elements, the "
                "forward's output %lld", c->name, (long long)have, (long long)n);
}

/* SHAPE_MISMATCH unless input k broadcasts to the upstream gradient's
 * shape (a Python number always does). */
static mt_status bcast_to_go(const mt__gs_ctx *c, int k, mt_error *err) {
  const mt_tensor *t = c->in[k], *go = c->gt[0];
  if (t->kind == MT_KIND_SCALAR) return MT_OK;
  int ok = t->ndim <= go->ndim;
  for (int e = t->ndim - 1, d = go->ndim - 1; ok && e >= 0; e--, d--)
    ok = t->shape[e] == 1 || t->shape[e] == go->shape[d];
  if (ok) return MT_OK;
  char ts[128], gs[128];
  return mt_err(err, MT_SHAPE_MISMATCH, "%s backward: inputs/%d of shape %s does not broadcast "
                "to grad_outputs/0's %s", c->name, k,
                mt_shape_str(t->ndim, t->shape, ts, sizeof ts),
                mt_shape_str(go->ndim, go->shape, gs, sizeof gs));
}

int mt__gs_float_input(const mt__gs_ctx *c, int k) {
  const mt_tensor *t = c->in[k];
  if (t->kind == MT_KIND_SCALAR) return 0;
  return mt__cpu_is_float(t->kind == MT_KIND_MASKED ? t->data->dtype : t->dtype);
}

void mt__gs_stored(const mt_tensor *t, uint8_t *pat) {
  int64_t n = mt_numel(t);
  if (t->kind == MT_KIND_COO) {
    memset(pat, 0, (size_t)n);
    int64_t row = mt_coo_row_numel(t);
    for (int64_t k = 0; k < t->nnz; k++) {
      int64_t lin = mt_coo_linear(t, k);
      memset(pat + lin * row, 1, (size_t)row);
    }
    return;
  }
  mt_cgeom g;
  if (mt_cgeom_of(t, &g)) {
    memset(pat, 0, (size_t)n);
    for (int64_t b = 0; b < g.batches; b++)
      MT_CGEOM_FOR_EACH_CELL(t, &g, b, row, col, at) {
        (void)at;
        memset(pat + ((b * g.rows + row) * g.cols + col) * g.dense, 1, (size_t)g.dense);
      }
    return;
  }
  if (t->kind == MT_KIND_MASKED) {
    mt__gs_stored(t->data, pat);
    return;
  }
  memset(pat, 1, (size_t)n);
}

/* A dense gradient of input x's shape and dtype. */
static mt_status emit_dense(const mt_host *h, const mt_tensor *x, mt_dtype dt, const double *g,
                            mt_tensor **out, mt_error *err) {
  mt_status st = h->dense_new(dt, x->ndim, x->shape, out, err);
  if (st != MT_OK) return st;
  for (int64_t i = 0, n = mt_numel(x); i < n; i++) mt__cpu_st((*out)->values, dt, i, g[i]);
  return MT_OK;
}

/* A coalesced COO gradient of x's shape with sparse_dim sd, storing each
 * sparse index that has a stored element in pat. */
static mt_status emit_coo(const mt_host *h, const mt_tensor *x, int sd, mt_dtype dt,
                          const double *g, const uint8_t *pat, mt_tensor **out, mt_error *err) {
  int64_t nrow = mt__gs_span(x->shape, 0, sd), row = mt__gs_span(x->shape, sd, x->ndim), nnz = 0;
  for (int64_t r = 0; r < nrow; r++)
    for (int64_t j = 0; j < row; j++)
      if (pat[r * row + j]) {
        nnz++;
        break;
      }
  mt_status st = h->coo_new(dt, x->ndim, x->shape, sd, nnz, out, err);
  if (st != MT_OK) return st;
  int64_t k = 0;
  for (int64_t r = 0; r < nrow; r++) {
    int any = 0;
    for (int64_t j = 0; j < row && !any; j++) any = pat[r * row + j];
    if (!any) continue;
    int64_t q = r;
    for (int d = sd - 1; d >= 0; d--) {
      (*out)->indices[(int64_t)d * nnz + k] = q % x->shape[d];
      q /= x->shape[d];
    }
    for (int64_t j = 0; j < row; j++) mt__cpu_st((*out)->values, dt, k * row + j, g[r * row + j]);
    k++;
  }
  (*out)->coalesced = 1;
  return MT_OK;
}

/* A compressed gradient in template x's kind, blocksize and dense dims,
 * storing each block that has a stored element in pat (every batch must
 * store as many). */
static mt_status emit_compressed(const mt_host *h, const char *name, const mt_tensor *x,
                                 mt_dtype dt, const double *g, const uint8_t *pat,
                                 mt_tensor **out, mt_error *err) {
  mt_cgeom G;
  if (!mt_cgeom_of(x, &G))
    return mt_err(err, MT_INVALID_ARGUMENT, "%s backward: inconsistent %s geometry", name,
                  mt_kind_name(x->kind));
  /* block (b, slot, plain) holds element (row, col) */
  int64_t nnz = -1;
  for (int64_t b = 0; b < G.batches; b++) {
    int64_t cnt = 0;
    for (int64_t s = 0; s < G.ncomp; s++)
      for (int64_t p = 0; p < G.nplain; p++) {
        int64_t br = G.by_col ? p : s, bc = G.by_col ? s : p, any = 0;
        for (int64_t i = 0; i < G.bh * G.bw * G.dense && !any; i++) {
          int64_t cell = i / G.dense, r = br * G.bh + cell / G.bw, cc = bc * G.bw + cell % G.bw;
          any = pat[((b * G.rows + r) * G.cols + cc) * G.dense + i % G.dense];
        }
        cnt += any != 0;
      }
    if (nnz >= 0 && cnt != nnz)
      return mt_err(err, MT_NOT_SUPPORTED, "%s backward: a batched %s gradient whose batches "
                    "store %lld and %lld blocks", name, mt_kind_name(x->kind), (long long)nnz,
                    (long long)cnt);
    nnz = cnt;
  }
  if (nnz < 0) nnz = 0;
  mt_status st = h->compressed_new(x->kind, dt, x->ndim, x->shape, x->dense_dim,
                                   mt_kind_is_blocked(x->kind) ? x->blocksize : NULL, nnz, out,
                                   err);
  if (st != MT_OK) return st;
  mt_tensor *o = *out;
  for (int64_t b = 0; b < G.batches; b++) {
    int64_t k = 0;
    for (int64_t s = 0; s < G.ncomp; s++) {
      o->crow_indices[b * (G.ncomp + 1) + s] = k;
      for (int64_t p = 0; p < G.nplain; p++) {
        int64_t br = G.by_col ? p : s, bc = G.by_col ? s : p, any = 0;
        for (int64_t i = 0; i < G.bh * G.bw * G.dense && !any; i++) {
          int64_t cell = i / G.dense, r = br * G.bh + cell / G.bw, cc = bc * G.bw + cell % G.bw;
          any = pat[((b * G.rows + r) * G.cols + cc) * G.dense + i % G.dense];
        }
        if (!any) continue;
        o->col_indices[b * nnz + k] = p;
        for (int64_t i = 0; i < G.bh * G.bw * G.dense; i++) {
          int64_t cell = i / G.dense, r = br * G.bh + cell / G.bw, cc = bc * G.bw + cell % G.bw;
          mt__cpu_st(o->values, dt, (b * nnz + k) * G.entry + i,
                     g[((b * G.rows + r) * G.cols + cc) * G.dense + i % G.dense]);
        }
        k++;
      }
    }
    o->crow_indices[b * (G.ncomp + 1) + G.ncomp] = k;
  }
  return MT_OK;
}

/* A masked gradient of masked input x (dense storage): x's mask, the
 * gradient under it, 0 elsewhere. */
static mt_status emit_masked(const mt_exec *ex, const mt_host *h, const char *name,
                             const mt_tensor *x, mt_dtype dt, const double *g, mt_tensor **out,
                             mt_error *err) {
  mt_tensor *data, *mask;
  double *m = NULL;
  mt_status st;
  if (x->data->kind != MT_KIND_DENSE || x->mask->kind != MT_KIND_DENSE)
    return mt_err(err, MT_NOT_SUPPORTED, "%s backward: a masked input of %s storage is not "
                  "implemented by the CPU backend", name, mt_kind_name(x->data->kind));
  if ((st = dense_f64(x->mask, &m, err)) != MT_OK) return st;
  if ((st = mt__cpu_new_masked_dense(h, dt, x->ndim, x->shape, out, &data, &mask, err)) != MT_OK) {
    free(m);
    return st;
  }
  int64_t n = mt_numel(x);
  if (ex == &mt_cpu_exec) {
    for (int64_t i = 0; i < n; i++) {
      mt__cpu_st(mask->values, MT_bool, i, m[i] != 0.0);
      mt__cpu_st(data->values, dt, i, m[i] != 0.0 ? g[i] : 0.0);
    }
  } else if (n > 0) {
    /* the device's gradient (0 where masked out: grad_to_sparse_coo), and
     * the input's mask copied by ex's gather */
    for (int64_t i = 0; i < n; i++) mt__cpu_st(data->values, dt, i, g[i]);
    int *src = calloc((size_t)n, sizeof *src);
    int64_t *off = malloc((size_t)n * sizeof *off), len = 0;
    if (!src || !off) {
      st = mt_err(err, MT_OUT_OF_MEMORY, "%s backward: no memory for a copy plan", name);
    } else if (!ex->gather) {
      st = mt_err(err, MT_NOT_SUPPORTED, "%s backward: the %s backend has no gather kernel", name,
                  ex->name);
    } else {
      for (int64_t i = 0; i < n; i++) {
        off[i] = mt_dense_offset(x->mask, i);
        if (off[i] + 1 > len) len = off[i] + 1;
      }
      const void *srcs[1] = {x->mask->values};
      st = ex->gather(src, off, n, 1, srcs, &len, 1, mask->values, err);
    }
    free(src);
    free(off);
    if (st != MT_OK) {
      h->free(*out);
      *out = NULL;
    }
  }
  free(m);
  return st;
}

/* The pattern of a product a @ b of two matrices' stored patterns (m x q
 * times q x n), into out (m x n). */
static void pattern_mm(const uint8_t *a, const uint8_t *b, int64_t m, int64_t q, int64_t n,
                       uint8_t *out) {
  memset(out, 0, (size_t)(m * n));
  for (int64_t i = 0; i < m; i++)
    for (int64_t p = 0; p < q; p++)
      if (a[i * q + p])
        for (int64_t j = 0; j < n; j++) out[i * n + j] |= b[p * n + j];
}

/* The stored pattern of t transposed (a matrix). */
static void pattern_t(const mt_tensor *t, uint8_t *tmp, uint8_t *out) {
  int64_t r = t->shape[0], cols = t->shape[1];
  mt__gs_stored(t, tmp);
  for (int64_t i = 0; i < r; i++)
    for (int64_t j = 0; j < cols; j++) out[j * r + i] = tmp[i * cols + j];
}

/* The pattern of a sparse gradient k (MT__GS_PROD: mm of two sparse
 * matrices, gA = go @ B^T, gB = A^T @ go). */
static mt_status gradient_pattern(const mt__gs_ctx *c, int k, mt__gs_pattern p, uint8_t *pat,
                                  mt_error *err) {
  const mt_tensor *x = c->in[k];
  int64_t n = c->n[k];
  switch (p) {
    case MT__GS_IN: mt__gs_stored(x, pat); return MT_OK;
    case MT__GS_GO:
      if (mt_numel(c->gt[0]) != n)
        return mt_err(err, MT_SHAPE_MISMATCH, "%s backward: the upstream gradient has %lld "
                      "elements, inputs/%d %lld", c->name, (long long)mt_numel(c->gt[0]), k,
                      (long long)n);
      mt__gs_stored(c->gt[0], pat);
      return MT_OK;
    case MT__GS_NONE: memset(pat, 0, (size_t)n); return MT_OK;
    case MT__GS_NONZERO:
      for (int64_t i = 0; i < n; i++) pat[i] = c->g[k][i] != 0.0;
      return MT_OK;
    case MT__GS_PROD:
    case MT__GS_MASK_LIKE: {
      const mt_tensor *a = c->in[0], *b = c->in[1], *go = c->gt[0];
      int64_t m = a->shape[0], q = a->shape[1], nn = b->shape[1];
      int64_t most = m * nn > q * nn ? m * nn : q * nn;
      size_t big = (size_t)((most > m * q ? most : m * q) + 1); /* each matrix fits */
      uint8_t *t1 = malloc(big * 2), *t2 = malloc(big * 2);
      if (!t1 || !t2) {
        free(t1);
        free(t2);
        return mt_err(err, MT_OUT_OF_MEMORY, "%s backward: no memory for a pattern", c->name);
      }
      if (k == 0) { /* go (m x n) @ B^T (n x q) */
        mt__gs_stored(go, t1);
        pattern_t(b, t2 + big, t2);
        pattern_mm(t1, t2, m, nn, q, pat);
      } else { /* A^T (q x m) @ go (m x n) */
        pattern_t(a, t1 + big, t1);
        mt__gs_stored(go, t2);
        pattern_mm(t1, t2, q, m, nn, pat);
      }
      free(t1);
      free(t2);
      return MT_OK;
    }
    case MT__GS_DENSE: break;
  }
  memset(pat, 1, (size_t)n);
  return MT_OK;
}

mt_status mt__gs_emit(mt__gs_ctx *c, const mt__gs_pattern *pattern, mt_error *err) {
  const mt_host *h = mt__cpu_host(c->call);
  mt_status st = MT_OK;
  uint8_t *pat = NULL;
  for (int k = 0; k < c->n_in; k++) {
    if (!c->g[k]) continue;
    const mt_tensor *x = c->in[k];
    mt_dtype dt = x->kind == MT_KIND_MASKED ? x->data->dtype : x->dtype;
    mt__gs_pattern p = pattern[k];
    if (x->kind == MT_KIND_MASKED) {
      if ((st = emit_masked(c->ex, h, c->name, x, dt, c->g[k], &c->call->out[k], err)) != MT_OK)
        goto fail;
      continue;
    }
    if (p == MT__GS_DENSE) {
      if ((st = emit_dense(h, x, dt, c->g[k], &c->call->out[k], err)) != MT_OK) goto fail;
      continue;
    }
    /* the template: the input, or for a dense input the upstream gradient */
    const mt_tensor *tpl = x->kind == MT_KIND_DENSE ? c->gt[0] : x;
    free(pat);
    if (!(pat = malloc((size_t)(c->n[k] ? c->n[k] : 1)))) {
      st = mt_err(err, MT_OUT_OF_MEMORY, "%s backward: no memory for a pattern", c->name);
      goto fail;
    }
    if ((st = gradient_pattern(c, k, p, pat, err)) != MT_OK) goto fail;
    if (p == MT__GS_MASK_LIKE) {
      /* sparse_mask_like_grad(x, P): P (coalesced) projected on x (P's
       * pattern, 0 where x stores nothing) when x is uncoalesced or stores
       * at least as many as P, else P.sparse_mask(x) (x's pattern) */
      uint8_t *in_pat = malloc((size_t)(c->n[k] ? c->n[k] : 1));
      if (!in_pat) {
        st = mt_err(err, MT_OUT_OF_MEMORY, "%s backward: no memory for a pattern", c->name);
        goto fail;
      }
      mt__gs_stored(x, in_pat);
      int64_t n_prod = 0;
      for (int64_t i = 0; i < c->n[k]; i++) n_prod += pat[i] != 0;
      int project = !x->coalesced || x->nnz >= n_prod;
      for (int64_t i = 0; i < c->n[k]; i++) {
        if (!in_pat[i]) c->g[k][i] = 0.0;
        if (!project) pat[i] = in_pat[i];
      }
      free(in_pat);
    }
    /* torch's dense.to_sparse() of a gradient that was dense: every dim sparse */
    int sd = p == MT__GS_NONZERO ? x->ndim : tpl->sparse_dim;
    if (tpl->kind == MT_KIND_COO)
      st = emit_coo(h, x, sd, dt, c->g[k], pat, &c->call->out[k], err);
    else if (mt_kind_is_compressed(tpl->kind))
      st = emit_compressed(h, c->name, tpl, dt, c->g[k], pat, &c->call->out[k], err);
    else
      st = emit_dense(h, x, dt, c->g[k], &c->call->out[k], err);
    if (st != MT_OK) goto fail;
  }
  free(pat);
  c->call->n_out = c->n_in;
  return MT_OK;
fail:
  free(pat);
  mt__cpu_drop_outputs(c->call);
  return st;
}

/* ---- the compute: one gradient at a time on c->ex (common/grad_sparse_math.h) ---- */

/* (gradient element, upstream element) pairs in the CPU reference's order */
typedef struct gs_pairs {
  int64_t *dst, *src;
  int64_t n, cap;
  int oom;
} gs_pairs;

static void pairs_add(gs_pairs *q, int64_t d, int64_t s) {
  if (q->oom) return;
  if (q->n == q->cap) {
    int64_t cap = q->cap ? 2 * q->cap : 64;
    int64_t *nd = realloc(q->dst, sizeof *nd * (size_t)cap);
    if (nd) q->dst = nd;
    int64_t *ns = nd ? realloc(q->src, sizeof *ns * (size_t)cap) : NULL;
    if (ns) q->src = ns;
    if (!nd || !ns) {
      q->oom = 1;
      return;
    }
    q->cap = cap;
  }
  q->dst[q->n] = d;
  q->src[q->n++] = s;
}

static void pairs_free(gs_pairs *q) {
  free(q->dst);
  free(q->src);
  memset(q, 0, sizeof *q);
}

/* Runs gradient k's compute (p, b) on c->ex into c->g[k]: every value
 * comes from the exec's kernel (a non-float input's gradient, dropped by
 * the emit, is not computed). */
static mt_status gs_exec(mt__gs_ctx *c, int k, mt_gsp_par *p, mt_gsp_bufs *b, mt_error *err) {
  const mt_tensor *x = c->in[k];
  p->n = c->n[k];
  p->dtype = x->kind == MT_KIND_MASKED ? x->data->dtype : x->dtype;
  if (!b->go) {
    b->go = c->go[0];
    b->n_go = mt_numel(c->gt[0]);
  }
  if (p->n == 0 || !c->g[k] || !mt__gs_float_input(c, k)) return MT_OK;
  if (!c->ex->grad_sparse)
    return mt_err(err, MT_NOT_SUPPORTED, "%s backward: the %s backend has no kernels for it yet",
                  c->name, c->ex->name);
  mt_status st = c->ex->grad_sparse(p, b, c->g[k], err);
  if (st != MT_OK) mt_err_prefix(err, "%s backward", c->name);
  return st;
}

/* An elementwise gradient of input 0: f(x[i], go[i]) */
static mt_status gs_ew(mt__gs_ctx *c, int k, int sub, double s1, mt_error *err) {
  mt_gsp_par p;
  mt_gsp_bufs b;
  memset(&p, 0, sizeof p);
  memset(&b, 0, sizeof b);
  p.code = GSP_EW;
  p.sub = sub;
  p.s1 = s1;
  b.xa = c->x[k];
  b.n_xa = c->n[k];
  return gs_exec(c, k, &p, &b, err);
}

/* Gradient k from the pairs q (bucketed by gradient element, each bucket in
 * q's order): the terms sub of its upstream elements combined as add
 * says (GSP_ADD_*: summed from 0.0 or from the first, or the last one's) */
static mt_status gs_list(mt__gs_ctx *c, int k, gs_pairs *q, int sub, int add, double s1,
                         double s2, const int64_t *ia, const int64_t *ib, mt_error *err) {
  int64_t n = c->n[k];
  mt_status st;
  if (q->oom) return mt_err(err, MT_OUT_OF_MEMORY, "%s backward: no memory for a plan", c->name);
  int64_t *off = calloc((size_t)n + 2, sizeof *off);
  int64_t *src = malloc(sizeof *src * (size_t)(q->n ? q->n : 1));
  if (!off || !src) {
    free(off);
    free(src);
    return mt_err(err, MT_OUT_OF_MEMORY, "%s backward: no memory for a plan", c->name);
  }
  for (int64_t t = 0; t < q->n; t++) off[q->dst[t] + 2]++;
  for (int64_t i = 0; i < n; i++) off[i + 2] += off[i + 1];
  for (int64_t t = 0; t < q->n; t++) src[off[q->dst[t] + 1]++] = q->src[t];
  /* off[i] .. off[i + 1]: element i's */
  mt_gsp_par p;
  mt_gsp_bufs b;
  memset(&p, 0, sizeof p);
  memset(&b, 0, sizeof b);
  p.code = GSP_LIST;
  p.sub = sub;
  p.k = k;
  p.add = add;
  p.s1 = s1;
  p.s2 = s2;
  b.off = off;
  b.src = src;
  b.n_src = q->n;
  b.ia = ia;
  b.ib = ib;
  if (sub == GSP_T_SGN) {
    b.xa = c->x[k];
    b.n_xa = c->n[k];
  }
  if (sub == GSP_T_MUL || sub == GSP_T_DIV) {
    b.xa = c->x[0];
    b.n_xa = c->n[0];
    b.xb = c->x[1];
    b.n_xb = c->n[1];
  }
  st = gs_exec(c, k, &p, &b, err);
  free(off);
  free(src);
  return st;
}

/* the pairs of a sum over the broadcast: (the element of x that element i
 * of go reads, i) */
static void pairs_sum_to(gs_pairs *q, const mt_tensor *x, const mt_tensor *go) {
  for (int64_t i = 0, n = mt_numel(go); i < n; i++)
    pairs_add(q, mt__gs_bcast_src(i, go->ndim, go->shape, x->ndim, x->shape), i);
}

/* g[k] = the terms sub of go summed over the broadcast to input k's shape:
 * torch's sum_to, which copies when the shapes agree (an upstream -0.0
 * stays -0.0) and reduces from 0.0 when they do not (-0.0 terms give 0.0) */
static mt_status gs_sum_to(mt__gs_ctx *c, int k, int sub, double s1, double s2,
                           const int64_t *ia, const int64_t *ib, mt_error *err) {
  gs_pairs q = {0};
  pairs_sum_to(&q, c->in[k], c->gt[0]);
  int add = mt_shape_equal(c->in[k], c->gt[0]) ? GSP_ADD_FIRST : GSP_ADD_ZERO;
  mt_status st = gs_list(c, k, &q, sub, add, s1, s2, ia, ib, err);
  pairs_free(&q);
  return st;
}

/* The element of input t that element i of the broadcast shape (nd, sd)
 * reads; a Python number's one value everywhere. */
static int64_t at_bcast(const mt_tensor *t, int64_t i, int nd, const int64_t *sd) {
  if (t->kind == MT_KIND_SCALAR) return 0;
  return mt__gs_bcast_src(i, nd, sd, t->ndim, t->shape);
}

/* ---- per-op dense gradients ----------------------------------------------------- */

typedef mt_status (*gs_grad_fn)(mt__gs_ctx *c, mt_error *err);

/* Input 0 of a unary op gets f'(x) * go, elementwise (same shapes). */
#define GS_UNARY(X)                                                                       \
  X(abs, GSP_U_ABS)                                                                       \
  X(neg, GSP_U_NEG)                                                                       \
  X(positive, GSP_U_GO) X(conj_physical, GSP_U_GO) X(clone, GSP_U_GO)                     \
  X(coalesce, GSP_U_GO) X(to_dense, GSP_U_GO) X(to_sparse, GSP_U_GO)                      \
  X(to_sparse_csr, GSP_U_GO) X(to_sparse_csc, GSP_U_GO)        \
  X(to_sparse_bsr, GSP_U_GO) X(to_sparse_bsc, GSP_U_GO) X(frac, GSP_U_GO)                 \
  X(deg2rad, GSP_U_D2R)                                                                   \
  X(rad2deg, GSP_U_R2D)                                                                   \
  X(log1p, GSP_U_LOG1P)                                                                   \
  X(square, GSP_U_SQUARE)                                                                 \
  X(ceil, GSP_U_ZERO) X(floor, GSP_U_ZERO) X(round, GSP_U_ZERO) X(sign, GSP_U_ZERO)       \
  X(trunc, GSP_U_ZERO) X(angle, GSP_U_ZERO)

#define GS_X(name, sub)                                                             \
  static mt_status grad_##name(mt__gs_ctx *c, mt_error *err) {                      \
    mt_status st = mt__gs_go_numel(c, c->n[0], err);                                \
    if (st == MT_OK) st = mt__gs_want(c, 0, err);                                   \
    if (st != MT_OK) return st;                                                     \
    return gs_ew(c, 0, sub, 0.0, err);                                              \
  }
GS_UNARY(GS_X)
#undef GS_X

/* to_sparse_coo: go; a MaskedTensor input (dense storage) gets it where its
 * mask is, 0 elsewhere (emit_masked lays it out) */
static mt_status grad_to_sparse_coo(mt__gs_ctx *c, mt_error *err) {
  mt_status st = mt__gs_go_numel(c, c->n[0], err);
  if (st == MT_OK) st = mt__gs_want(c, 0, err);
  if (st != MT_OK) return st;
  const mt_tensor *x = c->in[0];
  if (x->kind != MT_KIND_MASKED || x->mask->kind != MT_KIND_DENSE)
    return gs_ew(c, 0, GSP_U_GO, 0.0, err);
  gs_pairs q = {0};
  for (int64_t i = 0; i < c->n[0]; i++)
    if (mt_get_f64(x->mask->values, x->mask->dtype, mt_dense_offset(x->mask, i)) != 0.0)
      pairs_add(&q, i, i);
  st = gs_list(c, 0, &q, GSP_T_GO, GSP_ADD_NONE, 0.0, 0.0, NULL, NULL, err);
  pairs_free(&q);
  return st;
}

/* pow(x, e): e * x^(e-1) * go; 0 for e = 0 (torch's pow_backward) */
static mt_status grad_pow(mt__gs_ctx *c, mt_error *err) {
  mt_status st = c->n_in < 2 || c->n[1] != 1
                     ? mt_err(err, MT_INVALID_ARGUMENT, "pow backward: expected a number exponent")
                     : mt__gs_go_numel(c, c->n[0], err);
  if (st == MT_OK) st = mt__gs_want(c, 0, err);
  if (st != MT_OK) return st;
  return gs_ew(c, 0, GSP_U_POW, c->x[1][0], err);
}

/* A binary op's two operands, each broadcasting to the upstream gradient. */
static mt_status two_operands(const mt__gs_ctx *c, mt_error *err) {
  mt_status st;
  if (c->n_in != 2)
    return mt_err(err, MT_INVALID_ARGUMENT, "%s backward: expected 2 inputs, got %d", c->name,
                  c->n_in);
  for (int k = 0; k < 2; k++)
    if ((st = bcast_to_go(c, k, err)) != MT_OK) return st;
  return MT_OK;
}

/* add/sub(a, b, alpha): go, +-alpha * go (summed over broadcast dims) */
static mt_status grad_addsub(mt__gs_ctx *c, double sign, mt_error *err) {
  mt_status st;
  double alpha = mt_kw_float(c->call->kw, "alpha", 1.0);
  if ((st = two_operands(c, err)) != MT_OK) return st;
  for (int k = 0; k < 2; k++) {
    if (!mt__gs_float_input(c, k)) continue;
    if ((st = mt__gs_want(c, k, err)) != MT_OK) return st;
    if ((st = gs_sum_to(c, k, k == 0 ? GSP_T_GO : GSP_T_SCALED, sign, alpha, NULL, NULL, err)) !=
        MT_OK)
      return st;
  }
  return MT_OK;
}
static mt_status grad_add(mt__gs_ctx *c, mt_error *err) { return grad_addsub(c, 1.0, err); }
static mt_status grad_sub(mt__gs_ctx *c, mt_error *err) { return grad_addsub(c, -1.0, err); }

/* mul(a, b): go * b, go * a; div(a, b): go / b, -go * a / b^2 */
static mt_status grad_muldiv(mt__gs_ctx *c, int div, mt_error *err) {
  mt_status st;
  const mt_tensor *go = c->gt[0];
  if ((st = two_operands(c, err)) != MT_OK) return st;
  int64_t n = mt_numel(go);
  int64_t *ia = malloc(sizeof *ia * (size_t)(n ? n : 1)), *ib = malloc(sizeof *ib * (size_t)(n ? n : 1));
  if (!ia || !ib) {
    free(ia);
    free(ib);
    return mt_err(err, MT_OUT_OF_MEMORY, "%s backward: no memory", c->name);
  }
  for (int64_t i = 0; i < n; i++) {
    ia[i] = at_bcast(c->in[0], i, go->ndim, go->shape);
    ib[i] = at_bcast(c->in[1], i, go->ndim, go->shape);
  }
  st = MT_OK;
  for (int k = 0; k < 2 && st == MT_OK; k++) {
    if (!mt__gs_float_input(c, k)) continue;
    if ((st = mt__gs_want(c, k, err)) != MT_OK) break;
    st = gs_sum_to(c, k, div ? GSP_T_DIV : GSP_T_MUL, 0.0, 0.0, ia, ib, err);
  }
  free(ia);
  free(ib);
  return st;
}
static mt_status grad_mul(mt__gs_ctx *c, mt_error *err) { return grad_muldiv(c, 0, err); }
static mt_status grad_div(mt__gs_ctx *c, mt_error *err) { return grad_muldiv(c, 1, err); }

/* transpose(x, dim0, dim1) and t: the upstream gradient transposed back */
static mt_status grad_swap(mt__gs_ctx *c, int d0, int d1, mt_error *err) {
  mt_status st = mt__gs_go_numel(c, c->n[0], err);
  if (st == MT_OK) st = mt__gs_want(c, 0, err);
  if (st != MT_OK) return st;
  const mt_tensor *x = c->in[0];
  int64_t gs[MT_MAX_DIMS], co[MT_MAX_DIMS];
  gs_pairs q = {0};
  memcpy(gs, x->shape, sizeof gs);
  gs[d0] = x->shape[d1];
  gs[d1] = x->shape[d0];
  for (int64_t i = 0; i < c->n[0]; i++) {
    int64_t r = i;
    for (int d = x->ndim - 1; d >= 0; d--) {
      co[d] = r % x->shape[d];
      r /= x->shape[d];
    }
    int64_t tmp = co[d0];
    co[d0] = co[d1];
    co[d1] = tmp;
    int64_t j = 0;
    for (int d = 0; d < x->ndim; d++) j = j * gs[d] + co[d];
    pairs_add(&q, i, j);
  }
  st = gs_list(c, 0, &q, GSP_T_GO, GSP_ADD_NONE, 0.0, 0.0, NULL, NULL, err);
  pairs_free(&q);
  return st;
}
static mt_status grad_t(mt__gs_ctx *c, mt_error *err) {
  return grad_swap(c, 0, c->in[0]->ndim > 1 ? 1 : 0, err);
}
static mt_status grad_transpose(mt__gs_ctx *c, mt_error *err) {
  int n = c->in[0]->ndim, d0 = 0, d1 = 0;
  mt_status st;
  if ((st = sps_wrap_dim(c->name, mt_kw_int(c->call->kw, "dim0", 0), n, &d0, err)) != MT_OK)
    return st;
  if ((st = sps_wrap_dim(c->name, mt_kw_int(c->call->kw, "dim1", 0), n, &d1, err)) != MT_OK)
    return st;
  return grad_swap(c, d0, d1, err);
}

/* sum / sparse_sum / norm(p=1): the upstream gradient broadcast back over
 * the reduced dims (times sign(x) for the 1-norm) */
static mt_status grad_reduce(mt__gs_ctx *c, int l1, mt_error *err) {
  int red[MT_MAX_DIMS], nred;
  const mt_tensor *x = c->in[0];
  mt_status st = sps_dims(c->name, c->call->kw, x->ndim, red, &nred, err);
  if (st != MT_OK) return st;
  if (nred <= 0)
    for (int d = 0; d < x->ndim; d++) red[d] = 1;
  int64_t nout = 1;
  for (int d = 0; d < x->ndim; d++) nout *= red[d] ? 1 : x->shape[d];
  if ((st = mt__gs_go_numel(c, nout, err)) != MT_OK) return st;
  if ((st = mt__gs_want(c, 0, err)) != MT_OK) return st;
  gs_pairs q = {0};
  for (int64_t i = 0; i < c->n[0]; i++)
    pairs_add(&q, i, mt__gs_reduced_index(i, x->ndim, x->shape, red));
  st = gs_list(c, 0, &q, l1 ? GSP_T_SGN : GSP_T_GO, GSP_ADD_NONE, 0.0, 0.0, NULL, NULL, err);
  pairs_free(&q);
  return st;
}
static mt_status grad_sum(mt__gs_ctx *c, mt_error *err) { return grad_reduce(c, 0, err); }
static mt_status grad_sparse_sum(mt__gs_ctx *c, mt_error *err) { return grad_reduce(c, 0, err); }
static mt_status grad_norm(mt__gs_ctx *c, mt_error *err) { return grad_reduce(c, 1, err); }

/* the gradient buffers of inputs k0.. that are floating tensors */
static mt_status want_floats(mt__gs_ctx *c, int k0, mt_error *err) {
  mt_status st;
  for (int k = k0; k < c->n_in; k++)
    if (mt__gs_float_input(c, k) && (st = mt__gs_want(c, k, err)) != MT_OK) return st;
  return MT_OK;
}

/* mm(A, B) (also sparse_mm, and matmul / bmm of matrices): batched over
 * A's leading dims; B a vector for matmul's matrix-vector case;
 * ga = s * go @ B^T, gb = s * A^T @ go */
static mt_status grad_mm_at(mt__gs_ctx *c, int ia, double s, mt_error *err) {
  if (c->n_in < ia + 2 || c->in[ia]->ndim < 2 || c->in[ia + 1]->ndim < 1)
    return mt_err(err, MT_INVALID_ARGUMENT, "%s backward: expected a matrix times a matrix or "
                  "a vector at inputs/%d", c->name, ia);
  const mt_tensor *a = c->in[ia], *b = c->in[ia + 1];
  int nb = a->ndim - 2;
  int64_t batches = mt__gs_span(a->shape, 0, nb), m = a->shape[nb], q = a->shape[nb + 1];
  int64_t n = b->ndim == 1 ? 1 : b->shape[b->ndim - 1];
  if (c->n[ia + 1] != batches * q * n || (b->ndim > 1 && b->shape[b->ndim - 2] != q))
    return mt_err(err, MT_SHAPE_MISMATCH, "%s backward: inputs/%d and inputs/%d do not multiply",
                  c->name, ia, ia + 1);
  mt_status st = mt__gs_go_numel(c, batches * m * n, err);
  if (st != MT_OK) return st;
  for (int side = 0; side < 2; side++) {
    mt_gsp_par p;
    mt_gsp_bufs bf;
    memset(&p, 0, sizeof p);
    memset(&bf, 0, sizeof bf);
    p.code = side ? GSP_MM_B : GSP_MM_A;
    p.s1 = s;
    p.batches = batches;
    p.m = m;
    p.q = q;
    p.nn = n;
    bf.xa = c->x[ia];
    bf.n_xa = c->n[ia];
    bf.xb = c->x[ia + 1];
    bf.n_xb = c->n[ia + 1];
    if ((st = gs_exec(c, ia + side, &p, &bf, err)) != MT_OK) return st;
  }
  return MT_OK;
}
static mt_status grad_mm(mt__gs_ctx *c, mt_error *err) {
  mt_status st = want_floats(c, 0, err);
  return st != MT_OK ? st : grad_mm_at(c, 0, 1.0, err);
}

/* addmm(M, A, B) / addmv(v, A, x) / sparse_addmm: beta * go summed to M's
 * shape, alpha times mm's gradients */
static mt_status grad_addmm(mt__gs_ctx *c, mt_error *err) {
  mt_status st = want_floats(c, 0, err);
  if (st != MT_OK) return st;
  double beta = mt_kw_float(c->call->kw, "beta", 1.0);
  double alpha = mt_kw_float(c->call->kw, "alpha", 1.0);
  if ((st = bcast_to_go(c, 0, err)) != MT_OK) return st;
  if (c->g[0] && (st = gs_sum_to(c, 0, GSP_T_BETA, beta, 0.0, NULL, NULL, err)) != MT_OK)
    return st;
  return grad_mm_at(c, 1, alpha, err);
}

/* linear(x, W, b): y = x @ W^T + b over x's leading dims */
static mt_status grad_linear(mt__gs_ctx *c, mt_error *err) {
  mt_status st = want_floats(c, 0, err);
  if (st != MT_OK) return st;
  const mt_tensor *x = c->in[0], *w = c->in[1];
  if (c->n_in < 2 || w->ndim != 2 || x->ndim < 1 || x->shape[x->ndim - 1] != w->shape[1] ||
      (c->n_in > 2 && c->n[2] != w->shape[0] && c->n[2] != 1))
    return mt_err(err, MT_SHAPE_MISMATCH, "linear backward: inputs/0 (.., in), inputs/1 (out, "
                  "in) and the bias (out) do not fit");
  int64_t o = w->shape[0], q = w->shape[1], rows = c->n[0] / (q ? q : 1);
  if ((st = mt__gs_go_numel(c, rows * o, err)) != MT_OK) return st;
  for (int k = 0; k < c->n_in && k < 3; k++) {
    mt_gsp_par p;
    mt_gsp_bufs bf;
    memset(&p, 0, sizeof p);
    memset(&bf, 0, sizeof bf);
    p.code = k == 0 ? GSP_LIN_X : k == 1 ? GSP_LIN_W : GSP_LIN_B;
    p.m = rows;
    p.q = q;
    p.nn = o;
    p.b_all = k == 2 && c->n[2] <= 1;
    bf.xa = c->x[0];
    bf.n_xa = c->n[0];
    bf.xb = c->x[1];
    bf.n_xb = c->n[1];
    if ((st = gs_exec(c, k, &p, &bf, err)) != MT_OK) return st;
  }
  return MT_OK;
}

/* sparse_sampled_addmm(C, A, B): beta * go at C's elements; alpha times
 * mm's gradients of the (sampled) upstream gradient */
static mt_status grad_sampled_addmm(mt__gs_ctx *c, mt_error *err) {
  mt_status st = want_floats(c, 0, err);
  if (st != MT_OK) return st;
  double beta = mt_kw_float(c->call->kw, "beta", 1.0);
  double alpha = mt_kw_float(c->call->kw, "alpha", 1.0);
  if ((st = mt__gs_go_numel(c, c->n[0], err)) != MT_OK) return st;
  if (c->g[0] && (st = gs_ew(c, 0, GSP_U_S1, beta, err)) != MT_OK) return st;
  return grad_mm_at(c, 1, alpha, err);
}

/* torch.sparse.softmax / log_softmax(x, dim) of a COO tensor: over the
 * stored elements of each line along dim (an unstored one is -inf) */
static mt_status grad_softmax_any(mt__gs_ctx *c, int logsm, mt_error *err) {
  const mt_tensor *x = c->in[0];
  int dim = 0;
  int64_t dim_kw = mt_kw_int(c->call->kw, "dim", 0);
  mt_status st = sps_wrap_dim(c->name, dim_kw, x->ndim, &dim, err);
  if (st != MT_OK) return st;
  if ((st = mt__gs_go_numel(c, c->n[0], err)) != MT_OK) return st;
  if ((st = mt__gs_want(c, 0, err)) != MT_OK) return st;
  uint8_t *pat = malloc((size_t)(c->n[0] ? c->n[0] : 1));
  if (!pat) return mt_err(err, MT_OUT_OF_MEMORY, "%s backward: no memory", c->name);
  mt__gs_stored(x, pat);
  mt_gsp_par p;
  mt_gsp_bufs b;
  memset(&p, 0, sizeof p);
  memset(&b, 0, sizeof b);
  p.code = GSP_SOFTMAX;
  p.logsm = logsm;
  /* torch 2.15's backward does not wrap a negative dim: its pools then
   * hold one stored element each, so the sums over the line are the
   * element's own term (the forward's line is right) */
  p.own = dim_kw < 0;
  p.outer = mt__gs_span(x->shape, 0, dim);
  p.len = x->shape[dim];
  p.inner = mt__gs_span(x->shape, dim + 1, x->ndim);
  b.xa = c->x[0];
  b.n_xa = c->n[0];
  b.pat = pat;
  st = gs_exec(c, 0, &p, &b, err);
  free(pat);
  return st;
}
static mt_status grad_sparse_softmax(mt__gs_ctx *c, mt_error *err) {
  return grad_softmax_any(c, 0, err);
}
static mt_status grad_sparse_log_softmax(mt__gs_ctx *c, mt_error *err) {
  return grad_softmax_any(c, 1, err);
}

/* sparse_mask(x, mask): the upstream gradient (stored where mask is);
 * the mask gets none */
static mt_status grad_sparse_mask(mt__gs_ctx *c, mt_error *err) {
  const mt_tensor *mask = c->in[1];
  mt_status st = c->n_in < 2 || c->n[1] != c->n[0]
                     ? mt_err(err, MT_SHAPE_MISMATCH, "sparse_mask backward: the mask's shape "
                              "is not the input's")
                     : mt__gs_go_numel(c, c->n[0], err);
  if (st == MT_OK) st = mt__gs_want(c, 0, err);
  if (st != MT_OK) return st;
  if (c->in[0]->kind != MT_KIND_DENSE || mask->kind != MT_KIND_COO)
    return gs_ew(c, 0, GSP_U_GO, 0.0, err);
  /* a dense input: torch masks the densified upstream gradient with the
   * mask as stored and densifies again, so an element the mask stores m
   * times gets m times the (duplicates summed) upstream gradient */
  int64_t row = mt_coo_row_numel(mask);
  gs_pairs q = {0};
  for (int64_t k = 0; k < mask->nnz; k++)
    for (int64_t j = 0; j < row; j++) {
      int64_t i = mt_coo_linear(mask, k) * row + j;
      pairs_add(&q, i, i);
    }
  st = gs_list(c, 0, &q, GSP_T_GO, GSP_ADD_ZERO, 0.0, 0.0, NULL, NULL, err);
  pairs_free(&q);
  return st;
}

/* copy_(self, src): self is overwritten (a zero gradient), src gets go */
static mt_status grad_copy_(mt__gs_ctx *c, mt_error *err) {
  mt_status st = c->n_in < 2 ? mt_err(err, MT_INVALID_ARGUMENT, "copy_ backward: expected 2 "
                                      "inputs")
                             : bcast_to_go(c, 1, err);
  if (st == MT_OK) st = want_floats(c, 0, err);
  if (st != MT_OK) return st;
  if (c->g[0] && (st = gs_ew(c, 0, GSP_U_ZERO, 0.0, err)) != MT_OK) return st;
  if (c->g[1]) return gs_sum_to(c, 1, GSP_T_GO, 0.0, 0.0, NULL, NULL, err);
  return MT_OK;
}

/* cat(a, b, ..., dim): each input's slice of the upstream gradient */
static mt_status grad_cat(mt__gs_ctx *c, mt_error *err) {
  mt_status st = want_floats(c, 0, err);
  if (st != MT_OK) return st;
  const mt_tensor *go = c->gt[0];
  int dim = 0;
  if ((st = sps_wrap_dim(c->name, mt_kw_int(c->call->kw, "dim", 0), go->ndim, &dim, err)) != MT_OK)
    return st;
  int64_t outer = mt__gs_span(go->shape, 0, dim);
  int64_t inner = mt__gs_span(go->shape, dim + 1, go->ndim), off = 0;
  for (int k = 0; k < c->n_in; k++) off += c->in[k]->ndim > dim ? c->in[k]->shape[dim] : 0;
  for (int k = 0; k < c->n_in; k++)
    if (c->n[k] != outer * (c->in[k]->ndim > dim ? c->in[k]->shape[dim] : 0) * inner &&
        c->n[k] != 0)
      off = -1;
  if (off != go->shape[dim])
    return mt_err(err, MT_SHAPE_MISMATCH, "cat backward: the inputs do not make up "
                  "grad_outputs/0 along dim %d", dim);
  off = 0;
  for (int k = 0; k < c->n_in; k++) {
    int64_t len = c->in[k]->ndim > dim ? c->in[k]->shape[dim] : 0;
    if (c->g[k]) {
      gs_pairs q = {0};
      for (int64_t o = 0; o < outer; o++)
        for (int64_t j = 0; j < len * inner; j++)
          pairs_add(&q, o * len * inner + j, (o * go->shape[dim] + off) * inner + j);
      st = gs_list(c, k, &q, GSP_T_GO, GSP_ADD_NONE, 0.0, 0.0, NULL, NULL, err);
      pairs_free(&q);
      if (st != MT_OK) return st;
    }
    off += len;
  }
  return MT_OK;
}

/* values(x): the upstream gradient scattered to x's stored entries */
static mt_status grad_values(mt__gs_ctx *c, mt_error *err) {
  const mt_tensor *x = c->in[0];
  mt_status st = mt__gs_want(c, 0, err);
  gs_pairs q = {0};
  if (st != MT_OK) return st;
  if (x->kind == MT_KIND_COO) {
    int64_t row = mt_coo_row_numel(x);
    if ((st = mt__gs_go_numel(c, x->nnz * row, err)) != MT_OK) return st;
    for (int64_t k = 0; k < x->nnz; k++)
      for (int64_t j = 0; j < row; j++) pairs_add(&q, mt_coo_linear(x, k) * row + j, k * row + j);
  } else {
    mt_cgeom g;
    if (!mt_cgeom_of(x, &g))
      return mt_err(err, MT_INVALID_ARGUMENT, "%s backward: inconsistent geometry", c->name);
    if ((st = mt__gs_go_numel(c, g.batches * g.nnz * g.entry, err)) != MT_OK) return st;
    for (int64_t b = 0; b < g.batches; b++)
      MT_CGEOM_FOR_EACH_CELL(x, &g, b, row, col, at) {
        for (int64_t d = 0; d < g.dense; d++)
          pairs_add(&q, ((b * g.rows + row) * g.cols + col) * g.dense + d, at + d);
      }
  }
  st = gs_list(c, 0, &q, GSP_T_GO, GSP_ADD_FIRST, 0.0, 0.0, NULL, NULL, err);
  pairs_free(&q);
  return st;
}

/* sparse_coo_tensor(indices, values) and the compressed constructors
 * (compressed, plain, values): each stored value's element of the
 * upstream gradient (a COO one densified: duplicates summed) */
static mt_status grad_sparse_ctor(mt__gs_ctx *c, mt_error *err) {
  const mt_tensor *go = c->gt[0];
  int kv = c->n_in - 1;
  mt_status st = mt__gs_want(c, kv, err);
  gs_pairs q = {0};
  if (st != MT_OK) return st;
  if (go->kind == MT_KIND_COO) {
    int64_t row = mt_coo_row_numel(go);
    for (int64_t k = 0; k < go->nnz && k * row < c->n[kv]; k++)
      for (int64_t j = 0; j < row; j++) pairs_add(&q, k * row + j, mt_coo_linear(go, k) * row + j);
  } else {
    mt_cgeom g;
    if (!mt_cgeom_of(go, &g))
      return mt_err(err, MT_INVALID_ARGUMENT, "%s backward: grad_outputs/0 is not sparse", c->name);
    for (int64_t b = 0; b < g.batches; b++)
      MT_CGEOM_FOR_EACH_CELL(go, &g, b, row, col, at) {
        for (int64_t d = 0; d < g.dense && at + d < c->n[kv]; d++)
          pairs_add(&q, at + d, ((b * g.rows + row) * g.cols + col) * g.dense + d);
      }
  }
  st = gs_list(c, kv, &q, GSP_T_GO, GSP_ADD_NONE, 0.0, 0.0, NULL, NULL, err);
  pairs_free(&q);
  return st;
}
/* ---- refusals (SPG-2) ----------------------------------------------------------- */

static int is_sparse(const mt_tensor *t) { return mt__sps_is_plain(t); }
static int any_kind(const mt__gs_ctx *c, mt_kind k) {
  for (int i = 0; i < c->n_in; i++)
    if (c->in[i]->kind == k) return 1;
  return 0;
}
static int any_sparse(const mt__gs_ctx *c) {
  for (int i = 0; i < c->n_in; i++)
    if (is_sparse(c->in[i])) return 1;
  return 0;
}
static int batched_csr(const mt_tensor *t) {
  return t->kind == MT_KIND_CSR && t->ndim - 2 - t->dense_dim > 0;
}

/* The refusal flags of an op's table row. */
enum {
  GS_CSC_OK = 1u << 0,     /* takes CSC inputs */
  GS_BLOCK_OK = 1u << 1,   /* takes BSR/BSC inputs */
  GS_NO_SPARSE = 1u << 2,  /* the derivative has no sparse kernel at all */
  GS_NO_BATCHED = 1u << 3, /* refuses a batched CSR input */
  GS_MASKED_OK = 1u << 4,  /* takes a masked input whose data it never reads (to_sparse_coo) */
};

/* torch's refusal of the backward, or NULL. */
static const char *refusal(const mt__gs_ctx *c, unsigned flags) {
  if (!(flags & GS_BLOCK_OK) && (any_kind(c, MT_KIND_BSR) || any_kind(c, MT_KIND_BSC)))
    return any_kind(c, MT_KIND_BSR) ? "Sparse BSR tensors do not have is_contiguous"
                                    : "Sparse BSC tensors do not have is_contiguous";
  if (!(flags & GS_CSC_OK) && any_kind(c, MT_KIND_CSC))
    return "Sparse CSC tensors do not have is_contiguous";
  if ((flags & GS_NO_SPARSE) && any_sparse(c))
    return any_kind(c, MT_KIND_COO) ? "Could not run the derivative's op with arguments from "
                                      "the 'SparseCPU' backend"
                                    : "unsupported tensor layout: SparseCsr";
  if (flags & GS_NO_BATCHED)
    for (int i = 0; i < c->n_in; i++)
      if (batched_csr(c->in[i]))
        return "conversion from Sparse to SparseCsr for input tensors with sparse_dim()!=2 is "
               "not supported";
  switch (c->op) {
    case MT_OP_copy_:
      if (any_kind(c, MT_KIND_COO)) return "memory format option is only supported by strided "
                                           "tensors";
      break;
    case MT_OP_cat:
      for (int i = 0; i < c->n_in; i++)
        if (c->in[i]->kind == MT_KIND_COO && c->n[i] > 0)
          return "Could not run 'aten::as_strided' with arguments from the 'SparseCPU' backend.";
      break;
    case MT_OP_norm: {
      const mt_kwarg *p = mt_kw_find(c->call->kw, "p");
      if (!p || p->type == MT_KW_STR || p->f != 1.0)
        return "Could not run 'aten::masked_fill_.Scalar' with arguments from the 'SparseCPU' "
               "backend.";
      break;
    }
    case MT_OP_sum:
      if (mt_kw_find(c->call->kw, "dim") && c->gt[0]->kind != MT_KIND_DENSE)
        return c->in[0]->kind == MT_KIND_COO ? "expand is unsupported for Sparse tensors"
                                             : "expand is unsupported for SparseCsr tensors";
      break;
    case MT_OP_mul: {
      const mt_tensor *a = c->in[0], *b = c->in[1];
      for (int k = 0; k < 2; k++) {
        const mt_tensor *s = k ? b : a, *d = k ? a : b;
        if (d->kind != MT_KIND_DENSE || d->ndim == 0) continue;
        if (s->kind == MT_KIND_CSR)
          return "Function MulBackward0 returned an invalid gradient - expected layout Strided "
                 "but got SparseCsr";
        if (s->kind == MT_KIND_COO && !mt_shape_equal(s, d))
          return "Could not run 'aten::view' with arguments from the 'SparseCPU' backend.";
      }
      break;
    }
    case MT_OP_sparse_mask:
      if (mt_kind_is_compressed(c->in[0]->kind) || mt_kind_is_compressed(c->in[1]->kind))
        return "is_coalesced expected sparse coordinate tensor layout";
      break;
    case MT_OP_to_sparse_bsr:
    case MT_OP_to_sparse_bsc:
      if (mt_kind_is_compressed(c->in[0]->kind))
        return c->op == MT_OP_to_sparse_bsr
                   ? "sparse_compressed_to_sparse_csr: expected SparseCsr or SparseCsc layout "
                     "but got SparseBsr"
                   : "sparse_compressed_to_sparse_csr: expected SparseCsr or SparseCsc layout "
                     "but got SparseBsc";
      break;
    case MT_OP_to_sparse: {
      const mt_kwarg *l = mt_kw_find(c->call->kw, "layout");
      if (batched_csr(c->in[0]) && !(l && l->s && strcmp(l->s, "strided") == 0))
        return "sparse_coo_to_sparse: conversion from Sparse to SparseCsr for input tensors "
               "with sparse_dim()!=2 is not supported";
      break;
    }
    default: break;
  }
  return NULL;
}

/* ---- layouts of the gradients (SPG-1) -------------------------------------------- */

enum {
  GS_L_IN,       /* a sparse input's own stored elements (the default) */
  GS_L_GO,       /* elementwise binary: the upstream gradient's, when it is sparse */
  GS_L_MASK,     /* sparse_mask: a COO input gets the upstream gradient's */
  GS_L_NONE,     /* piecewise constant: none stored */
  GS_L_DENSE,    /* every gradient dense */
  GS_L_MM,       /* mm/matmul: dense, or the product's pattern for two sparse inputs */
  GS_L_SPMM,     /* sparse.mm: an input's own; of two COO inputs MT__GS_MASK_LIKE */
  GS_L_TOSPARSE, /* to_sparse*: the conversions' own rules */
  GS_L_COPY      /* copy_: self none, src its own */
};

static mt__gs_pattern layout_of(const mt__gs_ctx *c, int layout, int k) {
  const mt_tensor *x = c->in[k], *go = c->gt[0];
  int sparse = is_sparse(x), go_sparse = is_sparse(go);
  switch (layout) {
    case GS_L_GO:
      return go_sparse && mt_shape_equal(x, go) ? MT__GS_GO : MT__GS_DENSE;
    case GS_L_MASK: return sparse ? MT__GS_GO : MT__GS_DENSE;
    case GS_L_NONE: return sparse ? MT__GS_NONE : MT__GS_DENSE;
    case GS_L_DENSE: return MT__GS_DENSE;
    case GS_L_MM:
      return is_sparse(c->in[0]) && is_sparse(c->in[1]) ? MT__GS_PROD : MT__GS_DENSE;
    case GS_L_SPMM:
      if (c->in[0]->kind == MT_KIND_COO && c->in[1]->kind == MT_KIND_COO)
        return MT__GS_MASK_LIKE;
      return sparse ? MT__GS_IN : MT__GS_DENSE;
    case GS_L_COPY: return !sparse ? MT__GS_DENSE : k == 0 ? MT__GS_NONE : MT__GS_IN;
    case GS_L_TOSPARSE: {
      const mt_kwarg *l = mt_kw_find(c->call->kw, "layout");
      if (!sparse) return MT__GS_DENSE;
      if (l && l->s && strcmp(l->s, "strided") == 0) return MT__GS_NONZERO;
      if (x->kind == MT_KIND_COO &&
          (c->op == MT_OP_to_sparse_bsr || c->op == MT_OP_to_sparse_bsc))
        return MT__GS_GO;
      return MT__GS_IN;
    }
    default: return sparse ? MT__GS_IN : MT__GS_DENSE;
  }
}

/* ---- the op table ------------------------------------------------------------------ */

/* GS_OP(op, gradient, layout, refusal flags) */
#define GS_OPS(X)                                                             \
  X(abs, grad_abs, GS_L_IN, GS_NO_BATCHED)                                    \
  X(neg, grad_neg, GS_L_IN, 0)                                                \
  X(positive, grad_positive, GS_L_IN, 0)                                      \
  X(conj_physical, grad_conj_physical, GS_L_IN, 0)                            \
  X(clone, grad_clone, GS_L_IN, 0)                                            \
  X(coalesce, grad_coalesce, GS_L_IN, 0)                                      \
  X(frac, grad_frac, GS_L_IN, 0)                                              \
  X(deg2rad, grad_deg2rad, GS_L_IN, 0)                                        \
  X(rad2deg, grad_rad2deg, GS_L_IN, 0)                                        \
  X(log1p, grad_log1p, GS_L_IN, 0)                                            \
  X(square, grad_square, GS_L_IN, 0)                                          \
  X(pow, grad_pow, GS_L_IN, 0)                                                \
  X(ceil, grad_ceil, GS_L_NONE, 0)                                            \
  X(floor, grad_floor, GS_L_NONE, 0)                                          \
  X(round, grad_round, GS_L_NONE, 0)                                          \
  X(sign, grad_sign, GS_L_NONE, 0)                                            \
  X(trunc, grad_trunc, GS_L_NONE, 0)                                          \
  X(angle, grad_angle, GS_L_NONE, 0)                                          \
  X(asin, NULL, GS_L_IN, GS_NO_SPARSE)                                        \
  X(asinh, NULL, GS_L_IN, GS_NO_SPARSE)                                       \
  X(atan, NULL, GS_L_IN, GS_NO_SPARSE)                                        \
  X(atanh, NULL, GS_L_IN, GS_NO_SPARSE)                                       \
  X(erf, NULL, GS_L_IN, GS_NO_SPARSE)                                         \
  X(erfinv, NULL, GS_L_IN, GS_NO_SPARSE)                                      \
  X(expm1, NULL, GS_L_IN, GS_NO_SPARSE)                                       \
  X(nan_to_num, NULL, GS_L_IN, GS_NO_SPARSE)                                  \
  X(sin, NULL, GS_L_IN, GS_NO_SPARSE)                                         \
  X(sinh, NULL, GS_L_IN, GS_NO_SPARSE)                                        \
  X(sqrt, NULL, GS_L_IN, GS_NO_SPARSE)                                        \
  X(tan, NULL, GS_L_IN, GS_NO_SPARSE)                                         \
  X(tanh, NULL, GS_L_IN, GS_NO_SPARSE)                                        \
  X(unsqueeze, NULL, GS_L_IN, GS_NO_SPARSE)                                   \
  X(narrow_copy, NULL, GS_L_IN, GS_NO_SPARSE)                                 \
  X(index_select, NULL, GS_L_IN, GS_NO_SPARSE)                                \
  X(hspmm, NULL, GS_L_IN, GS_NO_SPARSE)                                       \
  X(smm, NULL, GS_L_IN, GS_NO_SPARSE)                                         \
  X(sspaddmm, NULL, GS_L_IN, GS_NO_SPARSE)                                    \
  X(add, grad_add, GS_L_GO, GS_CSC_OK)                                        \
  X(sub, grad_sub, GS_L_GO, 0)                                                \
  X(mul, grad_mul, GS_L_GO, 0)                                                \
  X(div, grad_div, GS_L_GO, 0)                                                \
  X(t, grad_t, GS_L_IN, 0)                                                    \
  X(transpose, grad_transpose, GS_L_IN, 0)                                    \
  X(sum, grad_sum, GS_L_DENSE, GS_CSC_OK | GS_BLOCK_OK)                       \
  X(sparse_sum, grad_sparse_sum, GS_L_IN, 0)                                  \
  X(norm, grad_norm, GS_L_IN, 0)                                              \
  X(mm, grad_mm, GS_L_MM, GS_CSC_OK)                                          \
  X(matmul, grad_mm, GS_L_MM, GS_CSC_OK)                                      \
  X(spmm, grad_mm, GS_L_MM, GS_CSC_OK)                                        \
  X(bmm, grad_mm, GS_L_DENSE, 0)                                              \
  X(sparse_mm, grad_mm, GS_L_SPMM, 0)                                         \
  X(addmm, grad_addmm, GS_L_DENSE, GS_CSC_OK)                                 \
  X(addmv, grad_addmm, GS_L_DENSE, GS_CSC_OK)                                 \
  X(sparse_addmm, grad_addmm, GS_L_IN, 0)                                     \
  X(sparse_sampled_addmm, grad_sampled_addmm, GS_L_IN, GS_NO_BATCHED)         \
  X(linear, grad_linear, GS_L_DENSE, GS_CSC_OK)                               \
  X(sparse_softmax, grad_sparse_softmax, GS_L_IN, 0)                          \
  X(sparse_log_softmax, grad_sparse_log_softmax, GS_L_IN, 0)                  \
  X(sparse_mask, grad_sparse_mask, GS_L_MASK, 0)                              \
  X(copy_, grad_copy_, GS_L_COPY, 0)                                          \
  X(cat, grad_cat, GS_L_IN, 0)                                                \
  X(values, grad_values, GS_L_IN, 0)                                          \
  X(to_dense, grad_to_dense, GS_L_IN, GS_NO_BATCHED)                          \
  X(to_sparse, grad_to_sparse, GS_L_TOSPARSE, 0)                              \
  X(to_sparse_coo, grad_to_sparse_coo, GS_L_TOSPARSE, GS_NO_BATCHED | GS_MASKED_OK) \
  X(to_sparse_csr, grad_to_sparse_csr, GS_L_TOSPARSE, 0)                      \
  X(to_sparse_csc, grad_to_sparse_csc, GS_L_TOSPARSE, 0)                      \
  X(to_sparse_bsr, grad_to_sparse_bsr, GS_L_TOSPARSE, 0)                      \
  X(to_sparse_bsc, grad_to_sparse_bsc, GS_L_TOSPARSE, 0)                      \
  X(sparse_coo_tensor, grad_sparse_ctor, GS_L_DENSE, 0)                       \
  X(sparse_csr_tensor, grad_sparse_ctor, GS_L_DENSE, 0)                       \
  X(sparse_csc_tensor, grad_sparse_ctor, GS_L_DENSE, 0)                       \
  X(sparse_bsr_tensor, grad_sparse_ctor, GS_L_DENSE, 0)                       \
  X(sparse_bsc_tensor, grad_sparse_ctor, GS_L_DENSE, 0)

typedef struct gs_op {
  mt_op op;
  gs_grad_fn grad; /* NULL: torch refuses every sparse call (GS_NO_SPARSE) */
  int layout;
  unsigned flags;
} gs_op;

static const gs_op gs_ops[] = {
#define GS_ROW(name, fn, layout, flags) {MT_OP_##name, fn, layout, flags},
    GS_OPS(GS_ROW)
#undef GS_ROW
};

/* The backward of op on a plain (sparse or dense) call. */
static mt_status grad_sparse(mt_call *call, mt_op op, int shared, const mt_exec *ex,
                             mt_error *err) {
  const gs_op *row = NULL;
  for (size_t i = 0; i < sizeof gs_ops / sizeof gs_ops[0]; i++)
    if (gs_ops[i].op == op) row = &gs_ops[i];
  mt__gs_ctx c;
  mt_status st;
  if (!row) {
    mt__cpu_begin(call);
    return mt_err(err, MT_NOT_SUPPORTED, "%s backward: the CPU backend has no backward of it on "
                  "plain (sparse or dense) inputs", mt_op_name(op));
  }
  if ((shared || !(row->flags & GS_MASKED_OK)) && !mt__cpu_grad_sparse_takes(call)) {
    mt__cpu_begin(call);
    return mt_err(err, MT_NOT_SUPPORTED, "%s backward: a masked input is not the sparse "
                  "backward's (grad_sparse.c)", mt_op_name(op));
  }
  if ((st = mt__gs_open_on(&c, call, op, ex, err)) != MT_OK) return st;
  const char *why = refusal(&c, row->flags);
  if (why) {
    st = mt_err(err, MT_LAYOUT_MISMATCH, "%s backward: %s", c.name, why);
    goto out;
  }
  if (!row->grad) {
    st = mt_err(err, MT_NOT_SUPPORTED, "%s backward: the CPU backend implements it on sparse "
                "inputs only (torch refuses those)", c.name);
    goto out;
  }
  if ((st = row->grad(&c, err)) != MT_OK) goto out;
  mt__gs_pattern pattern[MT__GS_MAX_IN];
  for (int k = 0; k < c.n_in; k++) {
    pattern[k] = layout_of(&c, row->layout, k);
    if (c.g[k] && !mt__gs_float_input(&c, k)) {
      free(c.g[k]);
      c.g[k] = NULL;
    }
  }
  st = mt__gs_emit(&c, pattern, err);
out:
  mt__gs_close(&c);
  return st;
}

mt_status mt__grad_sparse_run(mt_call *call, mt_op op, const mt_exec *ex, mt_error *err) {
  return grad_sparse(call, op, 1, ex, err);
}

mt_status mt__grad_sparse_own_run(mt_call *call, mt_op op, const mt_exec *ex, mt_error *err) {
  return grad_sparse(call, op, 0, ex, err);
}

/* the ops the MaskedTensor kernels share: mt__cpu_grad_<op>_sparse */
#define GS_SHARED(name)                                                       \
  mt_status mt__cpu_grad_##name##_sparse(mt_call *call, mt_error *err) {      \
    return grad_sparse(call, MT_OP_##name, 1, &mt_cpu_exec, err);                           \
  }
MT__GRAD_SPARSE_SHARED(GS_SHARED)
#undef GS_SHARED

/* the ops only this file has: mt_cpu_grad_<op> (common/grad_sparse_ops.h) */
#define GS_DEF(name)                                                    \
  mt_status mt_cpu_grad_##name(mt_call *call, mt_error *err) {          \
    return grad_sparse(call, MT_OP_##name, 0, &mt_cpu_exec, err);                     \
  }
GRAD_SPARSE_OWN_OPS(GS_DEF)
#undef GS_DEF

/* sparse_blas.c - CPU kernels of the sparse_blas family: matrix products
 * with a sparse operand (torch.mm, torch.sparse.mm, addmm, torch.sparse.addmm,
 * smm, sspaddmm, hspmm, bmm, F.linear with a sparse weight, matmul, addmv).
 *
 * Every sparse operand (COO, CSR, CSC, BSR, BSC; one batch of a 3-d COO for
 * bmm) is first listed as its stored cells in stored order (blocks expanded
 * cell by cell, COO duplicates kept: they are summed by the accumulation).
 * The product then loops over those cells: row r of the result gets v times
 * row c of the dense operand (SPB-1). Float dtypes accumulate in double and
 * round once to the dtype at the end (torch accumulates in the dtype, in
 * its own order: the goldens' tolerances come from the reduction length,
 * golden/mtgen/families/sparse_blas.py); integer dtypes accumulate in int64
 * and wrap to their width at the end (wrapping commutes with + and *, so it
 * equals torch's arithmetic in the narrow type). The row update
 * acc[r, :] += v * B[c, :] is a BLAS axpy (OpenBLAS's cblas_daxpy when
 * MT_HAVE_BLAS, a plain loop otherwise).
 *
 * SPB-1  layouts and dtypes torch refuses, shapes that cannot combine.
 * SPB-2  mm: sparse x dense and dense x sparse give dense; sparse x sparse
 *        gives the structural product (every (i, j) with a stored a_ik and a
 *        stored b_kj, zeros that cancel included) in the operands' layout
 *        (CSC x CSC is CSR under torch.mm, CSC under torch.sparse.mm).
 *        torch.spmm is torch.mm under another name (same results, layouts,
 *        refusals and messages in torch 2.15).
 * SPB-3  beta * input + alpha * product: beta = 0 ignores the input of addmm
 *        and addmv (NaN and inf too); sspaddmm multiplies (0 * inf = NaN);
 *        alpha = 0 still multiplies the product.
 * SPB-4  sparse results: smm and sspaddmm store every column of each row
 *        that has a stored entry, hspmm is a hybrid COO of those rows.
 * SPB-5  bmm per batch; linear = input @ weight.T (+ bias); matmul of a
 *        vector. */
#include "common/exec.h"
#include "common/sparse_blas_math.h"
#include "common/sparse_blas_ops.h"
#include "cpu_util.h"

#ifdef MT_HAVE_BLAS
#include <cblas.h>
#endif

/* ---- the plan: the sparse operand's cells as per-row terms ----------------
 * The host plan lists the sparse operand's stored cells in stored order
 * (blocks expanded cell by cell, COO duplicates kept) with the index of
 * each cell's value, groups them by accumulator row (a stable sort, so each
 * row keeps stored order), and lists B's elements as offsets into its
 * values (a sparse B: each element's stored duplicates). Every value is
 * then computed by the exec (common/sparse_blas_math.h): the CPU's loop
 * below, or a device kernel (impl/cuda/sparse_blas.cu). */

typedef struct {
  int64_t m, n;             /* the accumulator */
  int64_t nc, cap;          /* cells collected */
  int64_t *cr, *ca, *cb;    /* a cell's accumulator row, A value index, B row */
  int64_t *rptr, *ta, *tb;  /* the terms by row (m + 1, nc, nc) */
  int64_t nbe, nbo;         /* B's elements (rows * n) and offsets */
  int64_t *bptr, *boff;     /* b_sum: element e's list; else boff[e] */
  int b_sum;
  const mt_tensor *A, *B;   /* the value sources */
  uint8_t *row_hit;         /* row r has a term */
  int transposed;           /* the accumulator holds (A @ B)^T */
} product;

static void product_free(product *p) {
  free(p->cr);
  free(p->ca);
  free(p->cb);
  free(p->rptr);
  free(p->ta);
  free(p->tb);
  free(p->bptr);
  free(p->boff);
  free(p->row_hit);
  memset(p, 0, sizeof *p);
}

static mt_status oom(const char *op, mt_error *err) {
  return mt_err(err, MT_OUT_OF_MEMORY, "%s: out of memory for the product's plan", op);
}

static mt_status cells_room(product *p, int64_t more, const char *op, mt_error *err) {
  if (p->nc + more <= p->cap) return MT_OK;
  int64_t cap = p->nc + more;
  size_t k = (size_t)(cap > 0 ? cap : 1) * sizeof(int64_t);
  int64_t *r = realloc(p->cr, k);
  if (r) p->cr = r;
  int64_t *a = realloc(p->ca, k);
  if (a) p->ca = a;
  int64_t *b = realloc(p->cb, k);
  if (b) p->cb = b;
  if (!r || !a || !b) return oom(op, err);
  p->cap = cap;
  return MT_OK;
}

/* The cells of a 2-d sparse t, or of batch b of a 3-d COO (bmm), appended
 * with accumulator row ro + row and B row bo + col (with transpose, of t's
 * transpose: linear's weight.T, dense @ sparse). *rows, *cols: the
 * (transposed) matrix's shape. */
static mt_status add_cells(product *p, const mt_tensor *t, int64_t b, int transpose, int64_t ro,
                           int64_t bo, int64_t *rows, int64_t *cols, const char *op,
                           mt_error *err) {
  mt_status st;
  if (t->kind == MT_KIND_COO) {
    int off = t->sparse_dim == 3 ? 1 : 0; /* bmm: dim 0 is the batch */
    if ((st = cells_room(p, t->nnz, op, err)) != MT_OK) return st;
    *rows = t->shape[off];
    *cols = t->shape[off + 1];
    for (int64_t k = 0; k < t->nnz; k++) {
      if (off && t->indices[k] != b) continue;
      int64_t r = t->indices[off * t->nnz + k], c = t->indices[(off + 1) * t->nnz + k];
      p->cr[p->nc] = ro + (transpose ? c : r);
      p->cb[p->nc] = bo + (transpose ? r : c);
      p->ca[p->nc++] = k;
    }
  } else {
    mt_cgeom g;
    if (!mt_cgeom_of(t, &g) || g.dense != 1)
      return mt_err(err, MT_INVALID_ARGUMENT, "%s: a %s operand with dense dims is not a matrix",
                    op, mt_kind_name(t->kind));
    if ((st = cells_room(p, g.nnz * g.bh * g.bw, op, err)) != MT_OK) return st;
    *rows = g.rows;
    *cols = g.cols;
    MT_CGEOM_FOR_EACH_CELL(t, &g, b, r, c, at) {
      p->cr[p->nc] = ro + (transpose ? c : r);
      p->cb[p->nc] = bo + (transpose ? r : c);
      p->ca[p->nc++] = at;
    }
  }
  if (transpose) {
    int64_t d = *rows;
    *rows = *cols;
    *cols = d;
  }
  return MT_OK;
}

/* A dense operand as a [k, n] matrix: a matrix (batch b of a 3-d one), a
 * vector as one column, or, with transpose, the transpose of a [n, k] one
 * (any leading dims flattened into n: linear's input). */
static void dmat_dims(const mt_tensor *t, int transpose, int64_t *k, int64_t *n) {
  int64_t last = t->ndim ? t->shape[t->ndim - 1] : 1, numel = mt_numel(t);
  if (t->ndim == 1) {
    *k = last;
    *n = 1;
  } else if (transpose) {
    *k = last;
    *n = last ? numel / last : 0;
  } else {
    *k = t->shape[t->ndim - 2];
    *n = last;
  }
}

/* dst[r * n + c]: the offset in t->values of element (r, c) of batch b */
static void dmat_offsets(const mt_tensor *t, int64_t b, int transpose, int64_t k, int64_t n,
                         int64_t *dst) {
  int64_t base = t->ndim > 1 && !transpose ? b * k * n : 0;
  for (int64_t r = 0; r < k; r++)
    for (int64_t c = 0; c < n; c++) {
      int64_t lin = transpose && t->ndim > 1 ? c * k + r : base + r * n + c;
      dst[r * n + c] = mt_dense_offset(t, lin);
    }
}

/* B as a dense operand of nb batches of [k, n] (B rows batch * k + r). */
static mt_status b_dense(product *p, const mt_tensor *t, int64_t nb, int transpose, int64_t *k,
                         const char *op, mt_error *err) {
  int64_t n;
  dmat_dims(t, transpose, k, &n);
  p->n = n;
  p->B = t;
  p->nbe = p->nbo = nb * *k * n;
  p->boff = malloc((size_t)(p->nbo > 0 ? p->nbo : 1) * sizeof(int64_t));
  if (!p->boff) return oom(op, err);
  for (int64_t b = 0; b < nb; b++) dmat_offsets(t, b, transpose, *k, n, p->boff + b * *k * n);
  return MT_OK;
}

/* B a sparse matrix: element (r, c)'s stored duplicates, in stored order
 * (summed from zero by the exec; SPB-2's structure: an element without
 * one is no term). */
static mt_status b_sparse(product *p, const mt_tensor *t, int64_t *k, const char *op,
                          mt_error *err) {
  product s = {0};
  int64_t rows = 0, cols = 0;
  mt_status st = add_cells(&s, t, 0, 0, 0, 0, &rows, &cols, op, err);
  if (st != MT_OK) goto out;
  *k = rows;
  p->n = cols;
  p->B = t;
  p->b_sum = 1;
  p->nbe = rows * cols;
  p->nbo = s.nc;
  p->bptr = calloc((size_t)(p->nbe + 2), sizeof(int64_t)); /* + 1: the fill's cursors */
  p->boff = malloc((size_t)(s.nc > 0 ? s.nc : 1) * sizeof(int64_t));
  if (!p->bptr || !p->boff) {
    st = oom(op, err);
    goto out;
  }
  for (int64_t q = 0; q < s.nc; q++) p->bptr[s.cr[q] * cols + s.cb[q] + 2]++;
  for (int64_t e = 0; e < p->nbe; e++) p->bptr[e + 2] += p->bptr[e + 1];
  for (int64_t q = 0; q < s.nc; q++) p->boff[p->bptr[s.cr[q] * cols + s.cb[q] + 1]++] = s.ca[q];
out:
  product_free(&s);
  return st;
}

/* The collected cells grouped by accumulator row, stored order kept. */
static mt_status terms(product *p, int64_t m, const char *op, mt_error *err) {
  p->m = m;
  p->rptr = calloc((size_t)(m + 2), sizeof(int64_t));
  p->ta = malloc((size_t)(p->nc > 0 ? p->nc : 1) * sizeof(int64_t));
  p->tb = malloc((size_t)(p->nc > 0 ? p->nc : 1) * sizeof(int64_t));
  p->row_hit = calloc((size_t)(m > 0 ? m : 1), 1);
  if (!p->rptr || !p->ta || !p->tb || !p->row_hit) return oom(op, err);
  for (int64_t q = 0; q < p->nc; q++) p->rptr[p->cr[q] + 2]++;
  for (int64_t r = 0; r < m; r++) p->rptr[r + 2] += p->rptr[r + 1];
  for (int64_t q = 0; q < p->nc; q++) {
    int64_t t = p->rptr[p->cr[q] + 1]++;
    p->ta[t] = p->ca[q];
    p->tb[t] = p->cb[q];
  }
  for (int64_t r = 0; r < m; r++) p->row_hit[r] = p->rptr[r + 1] > p->rptr[r];
  return MT_OK;
}

/* ---- running the plan on an exec --------------------------------------------- */

static int64_t max_plus1(const int64_t *v, int64_t n) {
  int64_t m = 0;
  for (int64_t i = 0; i < n; i++)
    if (v[i] + 1 > m) m = v[i] + 1;
  return m;
}

/* The result values out (n_out of dtype dt): output o is alpha * acc[oq[o]]
 * + beta * C's value oc[o] (either -1: absent), computed on ex. */
static mt_status run_plan(const mt_exec *ex, const product *p, mt_dtype dt, double alpha,
                          double beta, const mt_tensor *c, const int64_t *oq, const int64_t *oc,
                          int64_t n_out, void *out, const char *op, mt_error *err) {
  if (!ex->sparse_blas)
    return mt_err(err, MT_NOT_SUPPORTED, "%s: the %s backend has no sparse_blas compute", op,
                  ex->name);
  mt_spb_par par = {.dt = dt,
                    .is_int = !mt__cpu_is_float(dt),
                    .b_sum = p->b_sum,
                    .alpha = alpha,
                    .beta = beta,
                    .ialpha = (int64_t)alpha,
                    .ibeta = (int64_t)beta,
                    .m = p->m,
                    .n = p->n,
                    .n_out = n_out};
  int64_t nt = p->rptr ? p->rptr[p->m] : 0;
  mt_spb_bufs b = {.a = p->A ? p->A->values : NULL,
                   .b = p->B ? p->B->values : NULL,
                   .c = c ? c->values : NULL,
                   .rptr = p->rptr,
                   .ta = p->ta,
                   .tb = p->tb,
                   .bptr = p->bptr,
                   .boff = p->boff,
                   .oq = oq,
                   .oc = oc,
                   .out = out,
                   .na = max_plus1(p->ta, nt),
                   .nb = max_plus1(p->boff, p->nbo),
                   .nc = max_plus1(oc, n_out),
                   .nt = nt,
                   .nbe = p->nbe,
                   .nbo = p->nbo};
  if (!n_out) return MT_OK;
  return ex->sparse_blas(&par, &b, err);
}

/* The CPU's compute: mt_spb_out for every output; a float product with a
 * dense B runs its rows through BLAS's axpy (acc[r, :] += v * B[c, :], the
 * accumulation order of mt_spb_acc_f), as the CPU reference always has. */
static void axpy(int64_t n, double v, const double *x, double *y) {
#ifdef MT_HAVE_BLAS
  cblas_daxpy((int)n, v, x, 1, y, 1);
#else
  for (int64_t j = 0; j < n; j++) y[j] += v * x[j];
#endif
}

mt_status mt__cpu_sparse_blas_exec(const struct mt_spb_par *p, const struct mt_spb_bufs *b,
                                   mt_error *err) {
  if (p->is_int || p->b_sum || p->m * p->n == 0) {
    for (int64_t o = 0; o < p->n_out; o++) mt_spb_out(p, b, o);
    return MT_OK;
  }
  int64_t n = p->n;
  double *acc = calloc((size_t)(p->m * n), sizeof *acc), *row = malloc((size_t)n * sizeof *row);
  if (!acc || !row) {
    free(acc);
    free(row);
    return mt_err(err, MT_OUT_OF_MEMORY, "sparse_blas: out of memory for a %lld x %lld result",
                  (long long)p->m, (long long)n);
  }
  for (int64_t r = 0; r < p->m; r++)
    for (int64_t t = b->rptr[r]; t < b->rptr[r + 1]; t++) {
      for (int64_t j = 0; j < n; j++)
        row[j] = mt_hd_get_f64(b->b, p->dt, b->boff[b->tb[t] * n + j]);
      axpy(n, mt_hd_get_f64(b->a, p->dt, b->ta[t]), row, acc + r * n);
    }
  for (int64_t o = 0; o < p->n_out; o++)
    mt_spb_store(p, b, o, b->oq[o] >= 0 ? acc[b->oq[o]] : 0.0, 0);
  free(acc);
  free(row);
  return MT_OK;
}

/* ---- argument checks (SPB-1) ------------------------------------------------- */

static int is_sparse(const mt_tensor *t) {
  return t->kind == MT_KIND_COO || mt_kind_is_compressed(t->kind);
}

static mt_status inputs(mt_call *call, int lo, int hi, const char *op, const mt_tensor **in,
                        mt_error *err) {
  char what[32];
  mt_status st;
  if (call->n_in < lo || call->n_in > hi)
    return mt_err(err, MT_INVALID_ARGUMENT, "%s: expected %d to %d inputs, got %d", op, lo, hi,
                  call->n_in);
  for (int k = 0; k < call->n_in; k++) {
    if ((st = mt__cpu_input(call, k, op, &in[k], err)) != MT_OK) return st;
    if (in[k]->kind != MT_KIND_DENSE && !is_sparse(in[k]))
      return mt_err(err, MT_LAYOUT_MISMATCH, "%s: inputs/%d has kind %s", op, k,
                    mt_kind_name(in[k]->kind));
    if ((st = mt_tensor_validate(in[k], mt__cpu_in_name(k, what, sizeof what), err)) != MT_OK)
      return st;
  }
  return MT_OK;
}

/* A sparse matrix operand: 2-d, no dense dims, no batch (torch: "matrices
 * expected, got 1D tensor" for a hybrid COO's values, "self must be a
 * matrix" for a batched CSR). */
static mt_status check_matrix(const mt_tensor *t, int k, const char *op, mt_error *err) {
  if (t->ndim != 2 || (t->kind == MT_KIND_COO && t->sparse_dim != 2) ||
      (t->kind != MT_KIND_COO && t->kind != MT_KIND_DENSE && t->dense_dim != 0))
    return mt_err(err, MT_INVALID_ARGUMENT,
                  "%s: inputs/%d must be a matrix without dense or batch dims (kind %s, %d dims, "
                  "%d dense)",
                  op, k, mt_kind_name(t->kind), t->ndim,
                  t->kind == MT_KIND_COO ? t->ndim - t->sparse_dim : t->dense_dim);
  return MT_OK;
}

/* The dtypes torch's kernels have (SPB-1): COO x dense every number type
 * but bool; everything else (sparse x sparse, the compressed layouts'
 * MKL kernels, sspmm's float16/bfloat16) float32 and float64 only. */
static mt_status check_dtype(mt_dtype dt, int wide, const char *op, const char *kernel,
                             mt_error *err) {
  if (dt == MT_float32 || dt == MT_float64) return MT_OK;
  if (wide && dt != MT_bool) return MT_OK;
  return mt_err(err, MT_DTYPE_MISMATCH, "%s: \"%s\" not implemented for '%s'", op, kernel,
                mt_dtype_name(dt));
}

static mt_status same_dtype(const mt_tensor *const *in, int n, const char *op, mt_error *err) {
  for (int k = 1; k < n; k++)
    if (in[k]->dtype != in[0]->dtype)
      return mt_err(err, MT_DTYPE_MISMATCH, "%s: expected scalar type %s but found %s (inputs/%d)",
                    op, mt_dtype_name(in[0]->dtype), mt_dtype_name(in[k]->dtype), k);
  return MT_OK;
}

static mt_status inner_mismatch(const char *op, int64_t a, int64_t b, mt_error *err) {
  return mt_err(err, MT_SHAPE_MISMATCH,
                "%s: mat1 and mat2 shapes cannot be multiplied (inner sizes %lld and %lld)", op,
                (long long)a, (long long)b);
}

/* The compressed layouts torch's CPU kernels take as the sparse operand of
 * sparse @ dense (`left`) or dense @ sparse: CSR and CSC both ways; BSR on
 * the left with square blocks; BSC on the right. */
static mt_status check_compressed(const mt_tensor *s, int left, const char *op, mt_error *err) {
  if (s->kind == MT_KIND_CSR || s->kind == MT_KIND_CSC) return MT_OK;
  if (left && s->kind == MT_KIND_BSR) {
    if (s->blocksize[0] != s->blocksize[1])
      return mt_err(err, MT_LAYOUT_MISMATCH,
                    "%s: MKL Sparse doesn't support matrices with non-square blocks (%lld x %lld)",
                    op, (long long)s->blocksize[0], (long long)s->blocksize[1]);
    return MT_OK;
  }
  if (!left && s->kind == MT_KIND_BSC) {
    if (s->blocksize[0] != s->blocksize[1])
      return mt_err(err, MT_LAYOUT_MISMATCH,
                    "%s: MKL Sparse doesn't support matrices with non-square blocks (%lld x %lld)",
                    op, (long long)s->blocksize[0], (long long)s->blocksize[1]);
    return MT_OK;
  }
  return mt_err(err, MT_LAYOUT_MISMATCH,
                "%s: computation on CPU is not implemented for a %s operand on the %s", op,
                mt_kind_name(s->kind), left ? "left" : "right");
}

/* ---- results ------------------------------------------------------------------ */

/* C's element broadcast to (i, j) of an [m, n] result (C of shape (), (n,),
 * (1, n), (m, 1) or (m, n)); addmv's (m,) or (1,) vector as a column. */
static int64_t bcast_index(const mt_tensor *c, int64_t i, int64_t j, int vec) {
  if (c->ndim == 0) return 0;
  if (c->ndim == 1) return vec ? (c->shape[0] == 1 ? 0 : i) : (c->shape[0] == 1 ? 0 : j);
  return (c->shape[0] == 1 ? 0 : i) * c->shape[1] + (c->shape[1] == 1 ? 0 : j);
}

static mt_status check_bcast(const mt_tensor *c, int64_t m, int64_t n, int vec, const char *op,
                             mt_error *err) {
  int ok;
  if (vec && c->ndim > 1) /* torch's addmv takes a 0-d or 1-d input only (SPB-1) */
    return mt_err(err, MT_INVALID_ARGUMENT,
                  "%s: vector + matrix @ vector expected, got %d, 2, 1 (the input has %d dims)",
                  op, c->ndim, c->ndim);
  if (vec)
    ok = c->ndim == 0 || (c->ndim == 1 && (c->shape[0] == m || c->shape[0] == 1));
  else
    ok = c->ndim == 0 || (c->ndim == 1 && (c->shape[0] == n || c->shape[0] == 1)) ||
         (c->ndim == 2 && (c->shape[0] == m || c->shape[0] == 1) &&
          (c->shape[1] == n || c->shape[1] == 1));
  if (ok) return MT_OK;
  char sa[64];
  return mt_err(err, MT_SHAPE_MISMATCH,
                "%s: the input of shape %s must broadcast to the result [%lld, %lld]", op,
                mt_shape_str(c->ndim, c->shape, sa, sizeof sa), (long long)m, (long long)(vec ? 1 : n));
}

/* A dense result of shape (ndim, shape) = beta * C + alpha * acc, or acc's
 * transpose (transpose_out: linear, dense @ sparse). beta = 0 ignores C
 * (SPB-3); C NULL: no input term. */
/* A dense result of shape (ndim, shape) = beta * C + alpha * acc, or acc's
 * transpose (transpose_out: linear, dense @ sparse). beta = 0 ignores C
 * (SPB-3); C NULL: no input term. The host lays out which accumulator and
 * C element each output takes; ex computes the values. */
static mt_status dense_result(const mt_exec *ex, const mt_host *h, mt_dtype dt, int ndim,
                              const int64_t *shape, const product *p, int transpose_out,
                              const mt_tensor *c, int vec, double beta, double alpha,
                              mt_tensor **out, const char *op, mt_error *err) {
  mt_status st = h->dense_new(dt, ndim, shape, out, err);
  if (st != MT_OK) return st;
  int64_t rm = transpose_out ? p->n : p->m, rn = transpose_out ? p->m : p->n, no = rm * rn;
  int64_t *oq = malloc((size_t)(no > 0 ? no : 1) * sizeof *oq);
  int64_t *oc = malloc((size_t)(no > 0 ? no : 1) * sizeof *oc);
  if (!oq || !oc) {
    st = oom(op, err);
    goto out;
  }
  int use_c = c && beta != 0.0;
  for (int64_t i = 0; i < rm; i++)
    for (int64_t j = 0; j < rn; j++) {
      int64_t o = i * rn + j;
      oq[o] = transpose_out ? j * p->n + i : i * p->n + j;
      oc[o] = use_c ? mt_dense_offset(c, bcast_index(c, i, j, vec)) : -1;
    }
  st = run_plan(ex, p, dt, alpha, beta, use_c ? c : NULL, oq, oc, no, (*out)->values, op, err);
out:
  free(oq);
  free(oc);
  return st;
}

/* SPB-2's structure: accumulator element (r, j) is hit when a term of row
 * r meets a stored entry of B (every column of the row for a dense B). */
static int hit(const product *p, int64_t r, int64_t j) {
  if (!p->b_sum) return p->row_hit[r];
  for (int64_t t = p->rptr[r]; t < p->rptr[r + 1]; t++) {
    int64_t e = p->tb[t] * p->n + j;
    if (p->bptr[e + 1] > p->bptr[e]) return 1;
  }
  return 0;
}

/* sparse @ sparse (SPB-2): the hit pattern in `kind`, row-major for COO
 * (coalesced) and CSR, column-major for CSC. */
static mt_status sparse_result(const mt_exec *ex, const mt_host *h, mt_dtype dt, mt_kind kind,
                               const product *p, mt_tensor **out, const char *op,
                               mt_error *err) {
  int64_t nnz = 0, shape[2] = {p->m, p->n}, mn = p->m * p->n;
  uint8_t *hm = malloc((size_t)(mn > 0 ? mn : 1));
  int64_t *oq = NULL, *oc = NULL;
  mt_status st = MT_OK;
  if (!hm) return oom(op, err);
  for (int64_t q = 0; q < mn; q++) nnz += hm[q] = (uint8_t)hit(p, q / p->n, q % p->n);
  oq = malloc((size_t)(nnz > 0 ? nnz : 1) * sizeof *oq);
  oc = malloc((size_t)(nnz > 0 ? nnz : 1) * sizeof *oc);
  if (!oq || !oc) {
    st = oom(op, err);
    goto out;
  }
  for (int64_t k = 0; k < nnz; k++) oc[k] = -1;
  if (kind == MT_KIND_COO) {
    if ((st = h->coo_new(dt, 2, shape, 2, nnz, out, err)) != MT_OK) goto out;
    int64_t k = 0;
    for (int64_t q = 0; q < mn; q++) {
      if (!hm[q]) continue;
      (*out)->indices[k] = q / p->n;
      (*out)->indices[nnz + k] = q % p->n;
      oq[k++] = q;
    }
    (*out)->coalesced = 1;
  } else {
    if (h->struct_size < offsetof(mt_host, compressed_new) + sizeof h->compressed_new ||
        !h->compressed_new) {
      st = mt_err(err, MT_NOT_SUPPORTED, "the host cannot allocate %s results",
                  mt_kind_name(kind));
      goto out;
    }
    if ((st = h->compressed_new(kind, dt, 2, shape, 0, NULL, nnz, out, err)) != MT_OK) goto out;
    int by_col = kind == MT_KIND_CSC;
    int64_t outer = by_col ? p->n : p->m, inner = by_col ? p->m : p->n, k = 0;
    (*out)->crow_indices[0] = 0;
    for (int64_t o = 0; o < outer; o++) {
      for (int64_t i = 0; i < inner; i++) {
        int64_t q = by_col ? i * p->n + o : o * p->n + i;
        if (!hm[q]) continue;
        (*out)->col_indices[k] = i;
        oq[k++] = q;
      }
      (*out)->crow_indices[o + 1] = k;
    }
  }
  st = run_plan(ex, p, dt, 1.0, 0.0, NULL, oq, oc, nnz, (*out)->values, op, err);
out:
  free(hm);
  free(oq);
  free(oc);
  return st;
}

/* smm / sspaddmm's product part (SPB-4): every column of each row of A
 * that stores a cell, row-major, after `lead` entries (whose oq is -1). */
static int64_t rows_hit(const product *p) {
  int64_t n = 0;
  for (int64_t i = 0; i < p->m; i++) n += p->row_hit[i];
  return n;
}

static void fill_rows(mt_tensor *o, int64_t lead, const product *p, int64_t *oq) {
  int64_t k = lead;
  for (int64_t i = 0; i < p->m; i++) {
    if (!p->row_hit[i]) continue;
    for (int64_t j = 0; j < p->n; j++) {
      o->indices[k] = i;
      o->indices[o->nnz + k] = j;
      oq[k++] = i * p->n + j;
    }
  }
}

/* Output arrays of n entries: oq -1 and oc -1 (filled by the caller). */
static mt_status out_maps(int64_t n, int64_t **oq, int64_t **oc, const char *op, mt_error *err) {
  *oq = malloc((size_t)(n > 0 ? n : 1) * sizeof **oq);
  *oc = malloc((size_t)(n > 0 ? n : 1) * sizeof **oc);
  if (!*oq || !*oc) {
    free(*oq);
    free(*oc);
    *oq = *oc = NULL;
    return oom(op, err);
  }
  for (int64_t k = 0; k < n; k++) (*oq)[k] = (*oc)[k] = -1;
  return MT_OK;
}

/* ---- the shared driver: acc = A @ B for a 2-d sparse A and 2-d dense or
 * sparse B, or dense A and sparse B (transposed into B^T @ A^T) ---------- */

static mt_status product_of(const mt_tensor *a, const mt_tensor *b, const char *op, product *p,
                            mt_error *err) {
  int64_t rows = 0, cols = 0, k = 0;
  mt_status st;
  memset(p, 0, sizeof *p);
  if (is_sparse(a)) {
    p->A = a;
    if ((st = add_cells(p, a, 0, 0, 0, 0, &rows, &cols, op, err)) != MT_OK) return st;
    st = is_sparse(b) ? b_sparse(p, b, &k, op, err) : b_dense(p, b, 1, 0, &k, op, err);
  } else { /* dense @ sparse = (sparse^T @ dense^T)^T */
    p->transposed = 1;
    p->A = b;
    if ((st = add_cells(p, b, 0, 1, 0, 0, &rows, &cols, op, err)) != MT_OK) return st;
    st = b_dense(p, a, 1, 1, &k, op, err);
  }
  if (st != MT_OK) return st;
  return terms(p, rows, op, err);
}

/* ---- mm, sparse_mm ------------------------------------------------------------------ */

/* The checks of mm(a, b) (SPB-1), in torch's order: layouts, dims, dtypes,
 * inner sizes. torch.sparse.mm (`namespaced`) of CSR @ CSC is refused
 * after the dims and inner sizes and before any dtype: it adds the product
 * to zeros in mat2's layout, and torch's CPU addmm has no CSC + CSR @ CSC,
 * which it finds before it looks at a dtype (sparse_mm.csr_csc.*.error_order*). */
static mt_status mm_check(const mt_tensor *a, const mt_tensor *b, const char *op, int namespaced,
                          mt_error *err) {
  const mt_tensor *in[2] = {a, b};
  mt_status st;
  if (!is_sparse(a) && !is_sparse(b))
    return mt_err(err, MT_NOT_SUPPORTED, "%s: dense @ dense is not a sparse_blas case", op);
  if (is_sparse(a) && is_sparse(b)) {
    int ca = mt_kind_is_compressed(a->kind), cb = mt_kind_is_compressed(b->kind);
    if (mt_kind_is_blocked(a->kind) || mt_kind_is_blocked(b->kind))
      return mt_err(err, MT_LAYOUT_MISMATCH,
                    "%s: zeros_sparse_compressed expected sparse compressed (non-block) tensor "
                    "layout (%s @ %s)",
                    op, mt_kind_name(a->kind), mt_kind_name(b->kind));
    if (ca != cb)
      return mt_err(err, MT_LAYOUT_MISMATCH,
                    "%s: computation on CPU is not implemented for %s @ %s", op,
                    mt_kind_name(a->kind), mt_kind_name(b->kind));
  } else if (mt_kind_is_compressed(a->kind) || mt_kind_is_compressed(b->kind)) {
    const mt_tensor *s = is_sparse(a) ? a : b;
    if ((st = check_compressed(s, is_sparse(a), op, err)) != MT_OK) return st;
  }
  for (int k = 0; k < 2; k++)
    if ((st = check_matrix(in[k], k, op, err)) != MT_OK) return st;
  int refused = namespaced && a->kind == MT_KIND_CSR && b->kind == MT_KIND_CSC;
  int wide = !(is_sparse(a) && is_sparse(b)) && !mt_kind_is_compressed(a->kind) &&
             !mt_kind_is_compressed(b->kind);
  if (!refused &&
      (st = check_dtype(a->dtype, wide, op, wide ? "addmm_sparse_dense" : "sparse_matmul", err)) !=
          MT_OK)
    return st;
  if (!refused && (st = same_dtype(in, 2, op, err)) != MT_OK) return st;
  if (a->shape[1] != b->shape[0]) return inner_mismatch(op, a->shape[1], b->shape[0], err);
  if (refused)
    return mt_err(err, MT_LAYOUT_MISMATCH,
                  "%s: addmm: computation on CPU is not implemented for SparseCsc + SparseCsr @ "
                  "SparseCsc (torch.sparse.mm's zero accumulator takes mat2's layout)",
                  op);
  return MT_OK;
}

static mt_status mm_common(mt_call *call, mt_op opid, const char *op, int namespaced,
                           const mt_exec *ex, mt_error *err) {
  const mt_host *h = mt__cpu_host(call);
  const mt_tensor *in[2];
  product p = {0};
  mt_status st;
  mt__cpu_begin(call);
  if ((st = mt__kw_check(opid, call->kw, err)) != MT_OK) return st;
  if ((st = inputs(call, 2, 2, op, in, err)) != MT_OK) return st;
  if ((st = mm_check(in[0], in[1], op, namespaced, err)) != MT_OK) return st;
  if ((st = product_of(in[0], in[1], op, &p, err)) != MT_OK) goto out;
  mt_dtype dt = in[0]->dtype;
  if (is_sparse(in[0]) && is_sparse(in[1])) {
    /* SPB-2: torch.mm(CSC, CSC) is CSR, torch.sparse.mm keeps CSC */
    mt_kind k = in[0]->kind;
    if (k == MT_KIND_CSC && !(namespaced && in[1]->kind == MT_KIND_CSC)) k = MT_KIND_CSR;
    st = sparse_result(ex, h, dt, k, &p, &call->out[0], op, err);
  } else {
    int64_t shape[2] = {in[0]->shape[0], in[1]->shape[1]};
    st = dense_result(ex, h, dt, 2, shape, &p, p.transposed, NULL, 0, 0.0, 1.0, &call->out[0],
                      op, err);
  }
  if (st == MT_OK) call->n_out = 1;
out:
  product_free(&p);
  if (st != MT_OK) mt__cpu_drop_outputs(call);
  return st;
}

/* ---- addmm, sparse_addmm: beta * input + alpha * (mat1 @ mat2) (SPB-3) ---- */

static mt_status addmm_common(mt_call *call, mt_op opid, const char *op, const mt_exec *ex,
                              mt_error *err) {
  const mt_host *h = mt__cpu_host(call);
  const mt_tensor *in[3];
  product p = {0};
  mt_status st;
  mt__cpu_begin(call);
  if ((st = mt__kw_check(opid, call->kw, err)) != MT_OK) return st;
  if ((st = inputs(call, 3, 3, op, in, err)) != MT_OK) return st;
  double beta = mt_kw_float(call->kw, "beta", 1.0), alpha = mt_kw_float(call->kw, "alpha", 1.0);
  const mt_tensor *c = in[0], *a = in[1], *b = in[2];
  if (c->kind != MT_KIND_DENSE)
    return mt_err(err, MT_LAYOUT_MISMATCH,
                  "%s: addmm_sparse_dense: expected strided result tensor, got a %s input", op,
                  mt_kind_name(c->kind));
  /* sparse @ dense, or dense @ a compressed layout (torch's addmm of a
   * strided mat1 goes to the compressed kernels; COO there is refused) */
  if (is_sparse(a) == is_sparse(b) || (is_sparse(b) && !mt_kind_is_compressed(b->kind)))
    return mt_err(err, MT_LAYOUT_MISMATCH,
                  "%s: expected either 'mat1' to have sparse layout and 'mat2' to have strided "
                  "layout (got %s and %s)",
                  op, mt_kind_name(a->kind), mt_kind_name(b->kind));
  if ((st = mm_check(a, b, op, 0, err)) != MT_OK) return st;
  if ((st = same_dtype(in, 3, op, err)) != MT_OK) return st;
  if ((st = check_bcast(c, a->shape[0], b->shape[1], 0, op, err)) != MT_OK) return st;
  if ((st = product_of(a, b, op, &p, err)) != MT_OK) goto out;
  int64_t shape[2] = {a->shape[0], b->shape[1]};
  st = dense_result(ex, h, a->dtype, 2, shape, &p, p.transposed, c, 0, beta, alpha,
                    &call->out[0], op, err);
  if (st == MT_OK) call->n_out = 1;
out:
  product_free(&p);
  if (st != MT_OK) mt__cpu_drop_outputs(call);
  return st;
}

/* ---- smm, sspaddmm, hspmm: COO @ dense with a sparse result (SPB-4) -------- */

static mt_status coo_dense_check(const mt_tensor *a, const mt_tensor *b, const char *op,
                                 const char *kernel, int halves, mt_error *err) {
  const mt_tensor *in[2] = {a, b};
  mt_status st;
  if (a->kind != MT_KIND_COO || b->kind != MT_KIND_DENSE)
    return mt_err(err, MT_LAYOUT_MISMATCH,
                  "%s: takes a COO matrix and a dense matrix (got %s and %s)", op,
                  mt_kind_name(a->kind), mt_kind_name(b->kind));
  for (int k = 0; k < 2; k++)
    if ((st = check_matrix(in[k], k, op, err)) != MT_OK) return st;
  mt_dtype dt = a->dtype;
  if (dt == MT_bool || (!halves && (dt == MT_float16 || dt == MT_bfloat16)))
    return mt_err(err, MT_DTYPE_MISMATCH, "%s: \"%s\" not implemented for '%s'", op, kernel,
                  mt_dtype_name(dt));
  if ((st = same_dtype(in, 2, op, err)) != MT_OK) return st;
  if (a->shape[1] != b->shape[0]) return inner_mismatch(op, a->shape[1], b->shape[0], err);
  return MT_OK;
}

static mt_status smm_run(mt_call *call, const mt_exec *ex, mt_error *err) {
  const mt_host *h = mt__cpu_host(call);
  const mt_tensor *in[2];
  product p = {0};
  int64_t *oq = NULL, *oc = NULL;
  mt_status st;
  mt__cpu_begin(call);
  if ((st = mt__kw_check(MT_OP_smm, call->kw, err)) != MT_OK) return st;
  if ((st = inputs(call, 2, 2, "smm", in, err)) != MT_OK) return st;
  if ((st = coo_dense_check(in[0], in[1], "smm", "sspmm", 0, err)) != MT_OK) return st;
  if ((st = product_of(in[0], in[1], "smm", &p, err)) != MT_OK) goto out;
  int64_t shape[2] = {p.m, p.n}, no = rows_hit(&p) * p.n;
  if ((st = out_maps(no, &oq, &oc, "smm", err)) != MT_OK) goto out;
  if ((st = h->coo_new(in[0]->dtype, 2, shape, 2, no, &call->out[0], err)) != MT_OK) goto out;
  fill_rows(call->out[0], 0, &p, oq);
  if ((st = run_plan(ex, &p, in[0]->dtype, 1.0, 0.0, NULL, oq, oc, no, call->out[0]->values, "smm",
                     err)) != MT_OK)
    goto out;
  /* torch flags it uncoalesced, even sorted; empty results are coalesced */
  call->out[0]->coalesced = call->out[0]->nnz == 0;
  call->n_out = 1;
out:
  product_free(&p);
  free(oq);
  free(oc);
  if (st != MT_OK) mt__cpu_drop_outputs(call);
  return st;
}

static mt_status sspaddmm_run(mt_call *call, const mt_exec *ex, mt_error *err) {
  const mt_host *h = mt__cpu_host(call);
  const mt_tensor *in[3];
  product p = {0};
  int64_t *oq = NULL, *oc = NULL;
  mt_status st;
  mt__cpu_begin(call);
  if ((st = mt__kw_check(MT_OP_sspaddmm, call->kw, err)) != MT_OK) return st;
  if ((st = inputs(call, 3, 3, "sspaddmm", in, err)) != MT_OK) return st;
  double beta = mt_kw_float(call->kw, "beta", 1.0), alpha = mt_kw_float(call->kw, "alpha", 1.0);
  const mt_tensor *c = in[0];
  if (c->kind != MT_KIND_COO)
    return mt_err(err, MT_LAYOUT_MISMATCH, "%s: the input must be a COO tensor, got %s",
                  "sspaddmm", mt_kind_name(c->kind));
  if ((st = coo_dense_check(in[1], in[2], "sspaddmm", "sspmm", 0, err)) != MT_OK) return st;
  if ((st = check_matrix(c, 0, "sspaddmm", err)) != MT_OK) return st;
  if ((st = same_dtype(in, 3, "sspaddmm", err)) != MT_OK) return st;
  if (c->shape[0] != in[1]->shape[0] || c->shape[1] != in[2]->shape[1])
    return mt_err(err, MT_SHAPE_MISMATCH,
                  "sspaddmm: the input is %lld x %lld, the product %lld x %lld",
                  (long long)c->shape[0], (long long)c->shape[1], (long long)in[1]->shape[0],
                  (long long)in[2]->shape[1]);
  if ((st = product_of(in[1], in[2], "sspaddmm", &p, err)) != MT_OK) goto out;
  int64_t shape[2] = {p.m, p.n}, lead = c->nnz, no = lead + rows_hit(&p) * p.n;
  mt_dtype dt = c->dtype;
  if ((st = out_maps(no, &oq, &oc, "sspaddmm", err)) != MT_OK) goto out;
  if ((st = h->coo_new(dt, 2, shape, 2, no, &call->out[0], err)) != MT_OK) goto out;
  mt_tensor *o = call->out[0];
  /* beta * input: its entries as stored, every one multiplied (0 * inf = NaN) */
  for (int64_t k = 0; k < lead; k++) {
    o->indices[k] = c->indices[k];
    o->indices[o->nnz + k] = c->indices[c->nnz + k];
    oc[k] = k;
  }
  fill_rows(o, lead, &p, oq); /* alpha * the product */
  if ((st = run_plan(ex, &p, dt, alpha, beta, c, oq, oc, no, o->values, "sspaddmm", err)) != MT_OK)
    goto out;
  o->coalesced = o->nnz == 0;
  call->n_out = 1;
out:
  product_free(&p);
  free(oq);
  free(oc);
  if (st != MT_OK) mt__cpu_drop_outputs(call);
  return st;
}

static mt_status hspmm_run(mt_call *call, const mt_exec *ex, mt_error *err) {
  const mt_host *h = mt__cpu_host(call);
  const mt_tensor *in[2];
  product p = {0};
  int64_t *oq = NULL, *oc = NULL;
  mt_status st;
  mt__cpu_begin(call);
  if ((st = mt__kw_check(MT_OP_hspmm, call->kw, err)) != MT_OK) return st;
  if ((st = inputs(call, 2, 2, "hspmm", in, err)) != MT_OK) return st;
  if ((st = coo_dense_check(in[0], in[1], "hspmm", "addmm_sparse_dense", 1, err)) != MT_OK)
    return st;
  if ((st = product_of(in[0], in[1], "hspmm", &p, err)) != MT_OK) goto out;
  /* a hybrid COO: sparse_dim 1 over the rows that store a cell (sorted),
   * each value a dense row of n */
  int64_t shape[2] = {p.m, p.n}, nr = rows_hit(&p);
  if ((st = out_maps(nr * p.n, &oq, &oc, "hspmm", err)) != MT_OK) goto out;
  if ((st = h->coo_new(in[0]->dtype, 2, shape, 1, nr, &call->out[0], err)) != MT_OK) goto out;
  mt_tensor *o = call->out[0];
  for (int64_t i = 0, k = 0; i < p.m; i++) {
    if (!p.row_hit[i]) continue;
    o->indices[k] = i;
    for (int64_t j = 0; j < p.n; j++) oq[k * p.n + j] = i * p.n + j;
    k++;
  }
  if ((st = run_plan(ex, &p, o->dtype, 1.0, 0.0, NULL, oq, oc, nr * p.n, o->values, "hspmm",
                     err)) != MT_OK)
    goto out;
  o->coalesced = nr == 0;
  call->n_out = 1;
out:
  product_free(&p);
  free(oq);
  free(oc);
  if (st != MT_OK) mt__cpu_drop_outputs(call);
  return st;
}

/* ---- bmm: a 3-d COO (sparse_dim 3) @ a 3-d dense, batch by batch (SPB-5) -- */

static mt_status bmm_run(mt_call *call, const mt_exec *ex, mt_error *err) {
  const mt_host *h = mt__cpu_host(call);
  const mt_tensor *in[2];
  product p = {0};
  mt_status st;
  mt__cpu_begin(call);
  if ((st = mt__kw_check(MT_OP_bmm, call->kw, err)) != MT_OK) return st;
  if ((st = inputs(call, 2, 2, "bmm", in, err)) != MT_OK) return st;
  const mt_tensor *a = in[0], *b = in[1];
  if (a->kind != MT_KIND_COO)
    return mt_err(err, MT_LAYOUT_MISMATCH, "bmm: a %s batch of matrices is not implemented",
                  mt_kind_name(a->kind));
  if (b->kind != MT_KIND_DENSE)
    return mt_err(err, MT_LAYOUT_MISMATCH, "bmm: bmm_sparse: Tensor 'mat2' must be dense");
  if (a->sparse_dim != 3 || a->ndim != 3)
    return mt_err(err, MT_INVALID_ARGUMENT,
                  "bmm: bmm_sparse: Tensor 'self' must have 3 sparse dims, but has %d",
                  a->sparse_dim);
  if (b->ndim != 3)
    return mt_err(err, MT_INVALID_ARGUMENT, "bmm: Tensor 'mat2' must have 3 dims, has %d", b->ndim);
  if ((st = check_dtype(a->dtype, 1, "bmm", "bmm_sparse_dense", err)) != MT_OK) return st;
  if (a->dtype == MT_float16 || a->dtype == MT_bfloat16)
    return mt_err(err, MT_DTYPE_MISMATCH, "bmm: \"bmm_sparse_dense\" not implemented for '%s'",
                  mt_dtype_name(a->dtype));
  if ((st = same_dtype(in, 2, "bmm", err)) != MT_OK) return st;
  if (a->shape[0] != b->shape[0])
    return mt_err(err, MT_SHAPE_MISMATCH, "bmm: 'self.size(0)' and 'mat2.size(0)' must match");
  if (a->shape[2] != b->shape[1])
    return mt_err(err, MT_SHAPE_MISMATCH, "bmm: 'self.size(2)' and 'mat2.size(1)' must match");
  int64_t nb = a->shape[0], m = a->shape[1], n = b->shape[2], kb = 0, rows, cols;
  /* batch bi's rows are accumulator rows bi * m + r, its B rows bi * k + c */
  p.A = a;
  if ((st = b_dense(&p, b, nb, 0, &kb, "bmm", err)) != MT_OK) goto out;
  for (int64_t bi = 0; bi < nb; bi++)
    if ((st = add_cells(&p, a, bi, 0, bi * m, bi * kb, &rows, &cols, "bmm", err)) != MT_OK)
      goto out;
  if ((st = terms(&p, nb * m, "bmm", err)) != MT_OK) goto out;
  int64_t shape[3] = {nb, m, n};
  if ((st = dense_result(ex, h, a->dtype, 3, shape, &p, 0, NULL, 0, 0.0, 1.0, &call->out[0], "bmm",
                         err)) == MT_OK)
    call->n_out = 1;
out:
  product_free(&p);
  if (st != MT_OK) mt__cpu_drop_outputs(call);
  return st;
}

/* ---- linear: input @ weight.T (+ bias), a sparse weight (SPB-5) ----------- */

static mt_status linear_run(mt_call *call, const mt_exec *ex, mt_error *err) {
  const mt_host *h = mt__cpu_host(call);
  const mt_tensor *in[3] = {NULL, NULL, NULL};
  product p = {0};
  mt_status st;
  mt__cpu_begin(call);
  if ((st = mt__kw_check(MT_OP_linear, call->kw, err)) != MT_OK) return st;
  if ((st = inputs(call, 2, 3, "linear", in, err)) != MT_OK) return st;
  const mt_tensor *x = in[0], *w = in[1], *bias = in[2];
  if (x->kind != MT_KIND_DENSE || !is_sparse(w) || (bias && bias->kind != MT_KIND_DENSE))
    return mt_err(err, MT_NOT_SUPPORTED,
                  "linear: the CPU backend implements a dense input and bias with a sparse weight");
  /* torch: weight.T is the right operand of addmm/matmul (a BSR weight's
   * transpose is BSC, which the right side takes with square blocks; a BSC
   * weight's is BSR, which it does not take) */
  if (mt_kind_is_compressed(w->kind) && w->kind != MT_KIND_CSR && w->kind != MT_KIND_CSC) {
    if (w->kind == MT_KIND_BSC)
      return mt_err(err, MT_LAYOUT_MISMATCH,
                    "linear: computation on CPU is not implemented for Strided + Strided @ "
                    "SparseBsr (a BSC weight)");
    if (w->blocksize[0] != w->blocksize[1])
      return mt_err(err, MT_LAYOUT_MISMATCH,
                    "linear: MKL Sparse doesn't support matrices with non-square blocks");
  }
  if (w->kind == MT_KIND_COO && bias)
    return mt_err(err, MT_LAYOUT_MISMATCH,
                  "linear: addmm_sparse_dense: expected either 'mat1' to have sparse layout and "
                  "'mat2' to have strided layout (a bias with a COO weight)");
  if ((st = check_matrix(w, 1, "linear", err)) != MT_OK) return st;
  if (x->ndim < 1)
    return mt_err(err, MT_INVALID_ARGUMENT, "linear: the input must have at least 1 dim");
  int wide = w->kind == MT_KIND_COO;
  if ((st = check_dtype(w->dtype, wide, "linear",
                        wide ? "addmm_sparse_dense" : "addmm_out_sparse_csr_impl_mkl", err)) !=
      MT_OK)
    return st;
  if ((st = same_dtype(in, bias ? 3 : 2, "linear", err)) != MT_OK) return st;
  int64_t k = x->shape[x->ndim - 1], nout = w->shape[0];
  if (w->shape[1] != k) return inner_mismatch("linear", k, w->shape[1], err);
  if (bias && (st = check_bcast(bias, 1, nout, 0, "linear", err)) != MT_OK) return st;
  /* out^T [nout, rows] = W [nout, k] @ X^T [k, rows] */
  int64_t rows, cols, kx;
  p.A = w;
  if ((st = add_cells(&p, w, 0, 0, 0, 0, &rows, &cols, "linear", err)) != MT_OK) goto out;
  if ((st = b_dense(&p, x, 1, 1, &kx, "linear", err)) != MT_OK) goto out;
  if ((st = terms(&p, nout, "linear", err)) != MT_OK) goto out;
  int64_t shape[MT_MAX_DIMS];
  memcpy(shape, x->shape, sizeof shape);
  shape[x->ndim - 1] = nout;
  st = dense_result(ex, h, w->dtype, x->ndim, shape, &p, 1, bias, 0, 1.0, 1.0, &call->out[0],
                    "linear", err);
  if (st == MT_OK) call->n_out = 1;
out:
  product_free(&p);
  if (st != MT_OK) mt__cpu_drop_outputs(call);
  return st;
}

/* ---- matmul, addmv: matrix @ vector (SPB-5) --------------------------------- */

/* beta * c + alpha * (a @ v), a sparse [m, k], v dense [k]; c NULL for matmul */
static mt_status mv(mt_call *call, const char *op, const mt_tensor *c, const mt_tensor *a,
                    const mt_tensor *v, double beta, double alpha, const mt_exec *ex,
                    mt_error *err) {
  const mt_host *h = mt__cpu_host(call);
  product p = {0};
  mt_status st;
  if (mt_kind_is_compressed(a->kind) && (st = check_compressed(a, 1, op, err)) != MT_OK) return st;
  if (c && a->kind == MT_KIND_COO)
    return mt_err(err, MT_LAYOUT_MISMATCH,
                  "%s: Could not run 'aten::addmv' with arguments from the 'SparseCPU' backend", op);
  if ((st = check_matrix(a, 1, op, err)) != MT_OK) return st;
  int wide = a->kind == MT_KIND_COO;
  if ((st = check_dtype(a->dtype, wide, op,
                        wide ? "addmm_sparse_dense" : "addmv_out_sparse_csr_impl_mkl", err)) !=
      MT_OK)
    return st;
  const mt_tensor *in[3] = {a, v, c};
  if ((st = same_dtype(in, c ? 3 : 2, op, err)) != MT_OK) return st;
  if (a->shape[1] != v->shape[0])
    return mt_err(err, MT_SHAPE_MISMATCH, "%s: size mismatch, mat (%lld x %lld), vec (%lld)", op,
                  (long long)a->shape[0], (long long)a->shape[1], (long long)v->shape[0]);
  if (c && (st = check_bcast(c, a->shape[0], 1, 1, op, err)) != MT_OK) return st;
  if ((st = product_of(a, v, op, &p, err)) != MT_OK) goto out;
  int64_t shape[1] = {a->shape[0]};
  st = dense_result(ex, h, a->dtype, 1, shape, &p, 0, c, 1, beta, alpha, &call->out[0], op, err);
  if (st == MT_OK) call->n_out = 1;
out:
  product_free(&p);
  return st;
}

static mt_status matmul_run(mt_call *call, const mt_exec *ex, mt_error *err) {
  const mt_tensor *in[2];
  mt_status st;
  mt__cpu_begin(call);
  if ((st = mt__kw_check(MT_OP_matmul, call->kw, err)) != MT_OK) return st;
  if ((st = inputs(call, 2, 2, "matmul", in, err)) != MT_OK) return st;
  const mt_tensor *a = in[0], *b = in[1];
  if (is_sparse(a) && b->kind == MT_KIND_DENSE && b->ndim == 1) {
    st = mv(call, "matmul", NULL, a, b, 0.0, 1.0, ex, err);
  } else if ((is_sparse(a) || is_sparse(b)) && a->ndim == 2 && b->ndim == 2) {
    return mm_common(call, MT_OP_mm, "matmul", 0, ex, err); /* no kwargs either way */
  } else if (is_sparse(a) && b->kind == MT_KIND_DENSE && b->ndim > 2) {
    return mt_err(err, MT_LAYOUT_MISMATCH, "matmul: expand is unsupported for %s tensors",
                  mt_kind_name(a->kind));
  } else {
    return mt_err(err, MT_NOT_SUPPORTED,
                  "matmul: the CPU backend implements sparse @ matrix, sparse @ vector and "
                  "dense @ sparse matrices");
  }
  if (st != MT_OK) mt__cpu_drop_outputs(call);
  return st;
}

static mt_status addmv_run(mt_call *call, const mt_exec *ex, mt_error *err) {
  const mt_tensor *in[3];
  mt_status st;
  mt__cpu_begin(call);
  if ((st = mt__kw_check(MT_OP_addmv, call->kw, err)) != MT_OK) return st;
  if ((st = inputs(call, 3, 3, "addmv", in, err)) != MT_OK) return st;
  if (in[0]->kind != MT_KIND_DENSE || !is_sparse(in[1]) || in[2]->kind != MT_KIND_DENSE)
    return mt_err(err, MT_NOT_SUPPORTED,
                  "addmv: the CPU backend implements a dense input and vector with a sparse matrix");
  if (in[2]->ndim != 1)
    return mt_err(err, MT_INVALID_ARGUMENT, "addmv: vec must be 1-d, got %d dims", in[2]->ndim);
  st = mv(call, "addmv", in[0], in[1], in[2], mt_kw_float(call->kw, "beta", 1.0),
          mt_kw_float(call->kw, "alpha", 1.0), ex, err);
  if (st != MT_OK) mt__cpu_drop_outputs(call);
  return st;
}

/* ---- sparse_sampled_addmm: torch.sparse.sampled_addmm (SPB-7) --------------
 * beta * input + alpha * (mat1 @ mat2) at the stored entries of the CSR
 * input only: the result has the input's structure (crow and col indices,
 * per batch), each value beta * c + alpha * (row i of mat1 . column j of
 * mat2), beta multiplying literally (0 * NaN = NaN). */

static mt_status sampled_check(const mt_tensor *c, const mt_tensor *m1, const mt_tensor *m2,
                               mt_error *err) {
  static const char *const op = "sparse_sampled_addmm";
  const mt_tensor *in[3] = {c, m1, m2};
  mt_status st;
  if (c->kind != MT_KIND_CSR)
    return mt_err(err, MT_LAYOUT_MISMATCH,
                  "%s: Expected result to have sparse csr layout, but the input is %s", op,
                  mt_kind_name(c->kind));
  for (int k = 1; k < 3; k++)
    if (in[k]->kind != MT_KIND_DENSE)
      return mt_err(err, MT_LAYOUT_MISMATCH, "%s: Expected mat%d to have strided layout, got %s",
                    op, k, mt_kind_name(in[k]->kind));
  if (c->dense_dim != 0)
    return mt_err(err, MT_INVALID_ARGUMENT, "%s: a CSR input with dense dims", op);
  if (c->dtype != MT_float32 && c->dtype != MT_float64)
    return mt_err(err, MT_DTYPE_MISMATCH,
                  "%s: Expected self to be a floating-point or complex tensor, but got %s", op,
                  mt_dtype_name(c->dtype));
  if ((st = same_dtype(in, 3, op, err)) != MT_OK) return st;
  int nd = c->ndim;
  if (m1->ndim != nd || m2->ndim != nd)
    return mt_err(err, MT_SHAPE_MISMATCH, "%s: input, mat1 and mat2 have %d, %d and %d dims", op,
                  nd, m1->ndim, m2->ndim);
  for (int d = 0; d < nd - 2; d++)
    if (m1->shape[d] != c->shape[d] || m2->shape[d] != c->shape[d])
      return mt_err(err, MT_SHAPE_MISMATCH, "%s: batch dim %d differs", op, d);
  if (m1->shape[nd - 1] != m2->shape[nd - 2])
    return inner_mismatch(op, m1->shape[nd - 1], m2->shape[nd - 2], err);
  if (c->shape[nd - 2] != m1->shape[nd - 2] || c->shape[nd - 1] != m2->shape[nd - 1])
    return mt_err(err, MT_SHAPE_MISMATCH,
                  "%s: the input is %lld x %lld, the product %lld x %lld", op,
                  (long long)c->shape[nd - 2], (long long)c->shape[nd - 1],
                  (long long)m1->shape[nd - 2], (long long)m2->shape[nd - 1]);
  return MT_OK;
}

static mt_status sparse_sampled_addmm_run(mt_call *call, const mt_exec *ex, mt_error *err) {
  static const char *const op = "sparse_sampled_addmm";
  const mt_host *h = mt__cpu_host(call);
  const mt_tensor *in[3];
  mt_status st;
  mt__cpu_begin(call);
  if ((st = mt__kw_check(MT_OP_sparse_sampled_addmm, call->kw, err)) != MT_OK) return st;
  if ((st = inputs(call, 3, 3, op, in, err)) != MT_OK) return st;
  const mt_tensor *c = in[0], *m1 = in[1], *m2 = in[2];
  if ((st = sampled_check(c, m1, m2, err)) != MT_OK) return st;
  double beta = mt_kw_float(call->kw, "beta", 1.0), alpha = mt_kw_float(call->kw, "alpha", 1.0);
  mt_cgeom g;
  if (!mt_cgeom_of(c, &g)) return mt_err(err, MT_INVALID_ARGUMENT, "%s: a malformed CSR input", op);
  if (h->struct_size < offsetof(mt_host, compressed_new) + sizeof h->compressed_new ||
      !h->compressed_new)
    return mt_err(err, MT_NOT_SUPPORTED, "%s: the host cannot allocate CSR results", op);
  if ((st = h->compressed_new(MT_KIND_CSR, c->dtype, c->ndim, c->shape, 0, NULL, g.nnz,
                              &call->out[0], err)) != MT_OK)
    return st;
  mt_tensor *o = call->out[0];
  memcpy(o->crow_indices, c->crow_indices, (size_t)(g.batches * (g.ncomp + 1)) * sizeof(int64_t));
  if (g.nnz)
    memcpy(o->col_indices, c->col_indices, (size_t)(g.batches * g.nnz) * sizeof(int64_t));
  /* the plan: output q (entry k of batch b at (i, j)) is accumulator row q
   * (n = 1) with the terms mat1[b, i, t] * mat2[b, t, j], t < kk, summed
   * from zero in t's order; mat2's elements are B's rows (one-entry lists,
   * b_sum, whose sum from zero is the element: the zero's sign cannot reach
   * the dot product) */
  int64_t kk = m1->shape[m1->ndim - 1], no = g.batches * g.nnz, n2 = mt_numel(m2);
  product p = {0};
  int64_t *oq = NULL, *oc = NULL;
  p.A = m1;
  p.B = m2;
  p.m = no;
  p.n = 1;
  p.b_sum = 1;
  p.nbe = p.nbo = n2;
  p.rptr = malloc((size_t)(no + 1) * sizeof(int64_t));
  p.ta = malloc((size_t)(no * kk > 0 ? no * kk : 1) * sizeof(int64_t));
  p.tb = malloc((size_t)(no * kk > 0 ? no * kk : 1) * sizeof(int64_t));
  p.bptr = malloc((size_t)(n2 + 1) * sizeof(int64_t));
  p.boff = malloc((size_t)(n2 > 0 ? n2 : 1) * sizeof(int64_t));
  if (!p.rptr || !p.ta || !p.tb || !p.bptr || !p.boff) {
    st = oom(op, err);
    goto out;
  }
  if ((st = out_maps(no, &oq, &oc, op, err)) != MT_OK) goto out;
  for (int64_t e = 0; e <= n2; e++) p.bptr[e] = e;
  for (int64_t e = 0; e < n2; e++) p.boff[e] = mt_dense_offset(m2, e);
  p.rptr[0] = 0;
  for (int64_t b = 0; b < g.batches; b++) {
    const int64_t *crow = c->crow_indices + b * (g.ncomp + 1), *col = c->col_indices + b * g.nnz;
    for (int64_t i = 0; i < g.rows; i++)
      for (int64_t k = crow[i]; k < crow[i + 1]; k++) {
        int64_t j = col[k], q = b * g.nnz + k;
        for (int64_t t = 0; t < kk; t++) { /* mat1[b, i, t] * mat2[b, t, j] */
          p.ta[q * kk + t] = mt_dense_offset(m1, (b * g.rows + i) * kk + t);
          p.tb[q * kk + t] = (b * kk + t) * g.cols + j;
        }
        p.rptr[q + 1] = (q + 1) * kk;
        oq[q] = q;
        oc[q] = q;
      }
  }
  if ((st = run_plan(ex, &p, o->dtype, alpha, beta, c, oq, oc, no, o->values, op, err)) == MT_OK)
    call->n_out = 1;
out:
  product_free(&p);
  free(oq);
  free(oc);
  if (st != MT_OK) mt__cpu_drop_outputs(call);
  return st;
}

mt_status mt__sparse_blas_run(mt_call *call, mt_op op, const mt_exec *ex, mt_error *err) {
  switch (op) {
  case MT_OP_mm: return mm_common(call, MT_OP_mm, "mm", 0, ex, err);
  case MT_OP_sparse_mm: return mm_common(call, MT_OP_sparse_mm, "sparse_mm", 1, ex, err);
  /* torch.spmm: torch.mm's code path (not torch.sparse.mm's: CSC x CSC is CSR) */
  case MT_OP_spmm: return mm_common(call, MT_OP_spmm, "spmm", 0, ex, err);
  case MT_OP_addmm: return addmm_common(call, MT_OP_addmm, "addmm", ex, err);
  case MT_OP_sparse_addmm: return addmm_common(call, MT_OP_sparse_addmm, "sparse_addmm", ex, err);
  case MT_OP_smm: return smm_run(call, ex, err);
  case MT_OP_sspaddmm: return sspaddmm_run(call, ex, err);
  case MT_OP_hspmm: return hspmm_run(call, ex, err);
  case MT_OP_bmm: return bmm_run(call, ex, err);
  case MT_OP_linear: return linear_run(call, ex, err);
  case MT_OP_matmul: return matmul_run(call, ex, err);
  case MT_OP_addmv: return addmv_run(call, ex, err);
  case MT_OP_sparse_sampled_addmm: return sparse_sampled_addmm_run(call, ex, err);
  default: return mt_err(err, MT_NOT_SUPPORTED, "%s: not a sparse_blas op", mt_op_name(op));
  }
}

#define X(name)                                                   \
  mt_status mt_cpu_##name(mt_call *call, mt_error *err) {         \
    return mt__sparse_blas_run(call, MT_OP_##name, &mt_cpu_exec, err); \
  }
SPB_OPS(X)
#undef X

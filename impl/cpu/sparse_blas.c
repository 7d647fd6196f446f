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
#include "cpu_util.h"

#ifdef MT_HAVE_BLAS
#include <cblas.h>
#endif

/* ---- the sparse operand as cells ---------------------------------------- */

typedef struct {
  int64_t rows, cols, n; /* the matrix's shape; stored cells */
  int64_t *r, *c;        /* cell coordinates, stored order */
  double *v;             /* float dtypes */
  int64_t *iv;           /* integer dtypes (exact) */
} cells;

static void cells_free(cells *s) {
  free(s->r);
  free(s->c);
  free(s->v);
  free(s->iv);
  memset(s, 0, sizeof *s);
}

static mt_status cells_alloc(cells *s, int64_t n, int is_int, const char *op, mt_error *err) {
  size_t k = (size_t)(n > 0 ? n : 1);
  s->n = n;
  s->r = malloc(k * sizeof *s->r);
  s->c = malloc(k * sizeof *s->c);
  if (is_int)
    s->iv = malloc(k * sizeof *s->iv);
  else
    s->v = malloc(k * sizeof *s->v);
  if (!s->r || !s->c || (!s->iv && !s->v)) {
    cells_free(s);
    return mt_err(err, MT_OUT_OF_MEMORY, "%s: out of memory for %lld stored cells", op,
                  (long long)n);
  }
  return MT_OK;
}

static void cell_set(cells *s, int64_t q, int64_t r, int64_t c, const mt_tensor *t, int64_t vi) {
  s->r[q] = r;
  s->c[q] = c;
  if (s->iv)
    s->iv[q] = mt__cpu_ldi(t->values, t->dtype, vi);
  else
    s->v[q] = mt__cpu_ld(t->values, t->dtype, vi);
}

/* The cells of a 2-d sparse t, or of batch b of a 3-d COO (bmm); with
 * transpose, of t's transpose (linear's weight.T, dense @ sparse). */
static mt_status cells_of(const mt_tensor *t, int64_t b, int transpose, const char *op,
                          cells *s, mt_error *err) {
  int is_int = !mt__cpu_is_float(t->dtype);
  mt_status st;
  memset(s, 0, sizeof *s);
  if (t->kind == MT_KIND_COO) {
    int off = t->sparse_dim == 3 ? 1 : 0; /* bmm: dim 0 is the batch */
    int64_t n = 0;
    for (int64_t k = 0; k < t->nnz; k++) n += !off || t->indices[k] == b;
    if ((st = cells_alloc(s, n, is_int, op, err)) != MT_OK) return st;
    s->rows = t->shape[off];
    s->cols = t->shape[off + 1];
    for (int64_t k = 0, q = 0; k < t->nnz; k++) {
      if (off && t->indices[k] != b) continue;
      cell_set(s, q++, t->indices[(off) * t->nnz + k], t->indices[(off + 1) * t->nnz + k], t, k);
    }
  } else {
    mt_cgeom g;
    if (!mt_cgeom_of(t, &g) || g.dense != 1)
      return mt_err(err, MT_INVALID_ARGUMENT, "%s: a %s operand with dense dims is not a matrix",
                    op, mt_kind_name(t->kind));
    if ((st = cells_alloc(s, g.nnz * g.bh * g.bw, is_int, op, err)) != MT_OK) return st;
    s->rows = g.rows;
    s->cols = g.cols;
    int64_t q = 0;
    MT_CGEOM_FOR_EACH_CELL(t, &g, b, r, c, at) cell_set(s, q++, r, c, t, at);
  }
  if (transpose) {
    int64_t *tmp = s->r, d = s->rows;
    s->r = s->c;
    s->c = tmp;
    s->rows = s->cols;
    s->cols = d;
  }
  return MT_OK;
}

/* ---- dense operands as matrices ------------------------------------------- */

/* A dense operand as a [k, n] row-major matrix (double or int64): a matrix
 * (batch b of a 3-d one), a vector as one column (vec), or, with
 * transpose, the transpose of a [n, k] one (any leading dims flattened
 * into n: linear's input). */
typedef struct {
  int64_t k, n;
  double *d;
  int64_t *i;
} dmat;

static void dmat_free(dmat *m) {
  free(m->d);
  free(m->i);
  memset(m, 0, sizeof *m);
}

static mt_status dmat_of(const mt_tensor *t, int64_t b, int transpose, const char *op, dmat *m,
                         mt_error *err) {
  int is_int = !mt__cpu_is_float(t->dtype);
  memset(m, 0, sizeof *m);
  int64_t last = t->ndim ? t->shape[t->ndim - 1] : 1, numel = mt_numel(t);
  int64_t base = 0;
  if (t->ndim == 1) {
    m->k = last;
    m->n = 1;
  } else if (transpose) {
    m->k = last;
    m->n = last ? numel / last : 0;
  } else {
    m->k = t->shape[t->ndim - 2];
    m->n = last;
    base = b * m->k * m->n;
  }
  size_t cnt = (size_t)(m->k * m->n > 0 ? m->k * m->n : 1);
  if (is_int)
    m->i = malloc(cnt * sizeof *m->i);
  else
    m->d = malloc(cnt * sizeof *m->d);
  if (!m->i && !m->d) return mt_err(err, MT_OUT_OF_MEMORY, "%s: out of memory", op);
  for (int64_t r = 0; r < m->k; r++)
    for (int64_t c = 0; c < m->n; c++) {
      /* element (r, c) of the matrix: t[base + r * n + c], or t[c, r] transposed */
      int64_t lin = transpose && t->ndim > 1 ? c * m->k + r : base + r * m->n + c;
      int64_t off = mt_dense_offset(t, lin);
      if (is_int)
        m->i[r * m->n + c] = mt__cpu_ldi(t->values, t->dtype, off);
      else
        m->d[r * m->n + c] = mt__cpu_ld(t->values, t->dtype, off);
    }
  return MT_OK;
}

/* ---- the accumulation ------------------------------------------------------- */

/* acc [m, n]: the product; hit[i * n + j] = 1 where a stored cell of A met a
 * stored entry of B (the structural pattern of SPB-2; every column of a row
 * with a stored cell when B is dense); row_hit[i]: row i of A stores a cell. */
typedef struct {
  int64_t m, n;
  double *d;
  int64_t *i;
  uint8_t *hit, *row_hit;
} acc_t;

static void acc_free(acc_t *a) {
  free(a->d);
  free(a->i);
  free(a->hit);
  free(a->row_hit);
  memset(a, 0, sizeof *a);
}

static mt_status acc_new(acc_t *a, int64_t m, int64_t n, int is_int, const char *op,
                         mt_error *err) {
  size_t cnt = (size_t)(m * n > 0 ? m * n : 1);
  memset(a, 0, sizeof *a);
  a->m = m;
  a->n = n;
  if (is_int)
    a->i = calloc(cnt, sizeof *a->i);
  else
    a->d = calloc(cnt, sizeof *a->d);
  a->hit = calloc(cnt, 1);
  a->row_hit = calloc((size_t)(m > 0 ? m : 1), 1);
  if ((!a->i && !a->d) || !a->hit || !a->row_hit) {
    acc_free(a);
    return mt_err(err, MT_OUT_OF_MEMORY, "%s: out of memory for a %lld x %lld result", op,
                  (long long)m, (long long)n);
  }
  return MT_OK;
}

/* y += v * x over n doubles: BLAS's axpy */
static void axpy(int64_t n, double v, const double *x, double *y) {
#ifdef MT_HAVE_BLAS
  cblas_daxpy((int)n, v, x, 1, y, 1);
#else
  for (int64_t j = 0; j < n; j++) y[j] += v * x[j];
#endif
}

/* acc (+)= A @ B, A as cells [m, k], B [k, n] dense (present = NULL) or the
 * densified sparse B with its stored-entry map `present` (SPB-2). Row
 * offset `ro` places A's rows in acc (bmm's batches). */
static void accumulate(acc_t *a, int64_t ro, const cells *A, const dmat *B,
                       const uint8_t *present) {
  int64_t n = a->n;
  for (int64_t q = 0; q < A->n; q++) {
    int64_t r = ro + A->r[q], c = A->c[q];
    a->row_hit[r] = 1;
    if (!present && a->d) {
      axpy(n, A->v[q], B->d + c * n, a->d + r * n);
      memset(a->hit + r * n, 1, (size_t)n);
      continue;
    }
    for (int64_t j = 0; j < n; j++) {
      if (present && !present[c * n + j]) continue;
      a->hit[r * n + j] = 1;
      if (a->i)
        a->i[r * n + j] = (int64_t)((uint64_t)a->i[r * n + j] +
                                    (uint64_t)A->iv[q] * (uint64_t)B->i[c * n + j]);
      else
        a->d[r * n + j] += A->v[q] * B->d[c * n + j];
    }
  }
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
static mt_status dense_result(const mt_host *h, mt_dtype dt, int ndim, const int64_t *shape,
                              const acc_t *a, int transpose_out, const mt_tensor *c, int vec,
                              double beta, double alpha, mt_tensor **out, mt_error *err) {
  mt_status st = h->dense_new(dt, ndim, shape, out, err);
  if (st != MT_OK) return st;
  int is_int = a->i != NULL;
  int64_t rm = transpose_out ? a->n : a->m, rn = transpose_out ? a->m : a->n;
  for (int64_t i = 0; i < rm; i++)
    for (int64_t j = 0; j < rn; j++) {
      int64_t q = transpose_out ? j * a->n + i : i * a->n + j, o = i * rn + j;
      int use_c = c && beta != 0.0;
      if (is_int) {
        uint64_t v = (uint64_t)((int64_t)alpha) * (uint64_t)a->i[q];
        if (use_c)
          v += (uint64_t)((int64_t)beta) *
               (uint64_t)mt__cpu_ldi(c->values, dt, mt_dense_offset(c, bcast_index(c, i, j, vec)));
        mt__cpu_sti((*out)->values, dt, o, (int64_t)v);
      } else {
        double v = alpha * a->d[q];
        if (use_c) v += beta * mt_dense_get(c, bcast_index(c, i, j, vec));
        mt__cpu_st((*out)->values, dt, o, v);
      }
    }
  return MT_OK;
}

static double acc_get(const acc_t *a, int64_t q) { return a->i ? (double)a->i[q] : a->d[q]; }

static void store_scaled(void *buf, mt_dtype dt, int64_t o, const acc_t *a, int64_t q,
                         double alpha) {
  if (a->i)
    mt__cpu_sti(buf, dt, o, (int64_t)((uint64_t)(int64_t)alpha * (uint64_t)a->i[q]));
  else
    mt__cpu_st(buf, dt, o, alpha * acc_get(a, q));
}

/* sparse @ sparse (SPB-2): the hit pattern in `kind`, row-major for COO
 * (coalesced) and CSR, column-major for CSC. */
static mt_status sparse_result(const mt_host *h, mt_dtype dt, mt_kind kind, const acc_t *a,
                               mt_tensor **out, mt_error *err) {
  int64_t nnz = 0, shape[2] = {a->m, a->n};
  for (int64_t q = 0; q < a->m * a->n; q++) nnz += a->hit[q];
  mt_status st;
  if (kind == MT_KIND_COO) {
    if ((st = h->coo_new(dt, 2, shape, 2, nnz, out, err)) != MT_OK) return st;
    int64_t k = 0;
    for (int64_t q = 0; q < a->m * a->n; q++) {
      if (!a->hit[q]) continue;
      (*out)->indices[k] = q / a->n;
      (*out)->indices[nnz + k] = q % a->n;
      store_scaled((*out)->values, dt, k++, a, q, 1.0);
    }
    (*out)->coalesced = 1;
    return MT_OK;
  }
  if (h->struct_size < offsetof(mt_host, compressed_new) + sizeof h->compressed_new ||
      !h->compressed_new)
    return mt_err(err, MT_NOT_SUPPORTED, "the host cannot allocate %s results",
                  mt_kind_name(kind));
  if ((st = h->compressed_new(kind, dt, 2, shape, 0, NULL, nnz, out, err)) != MT_OK) return st;
  int by_col = kind == MT_KIND_CSC;
  int64_t outer = by_col ? a->n : a->m, inner = by_col ? a->m : a->n, k = 0;
  (*out)->crow_indices[0] = 0;
  for (int64_t o = 0; o < outer; o++) {
    for (int64_t p = 0; p < inner; p++) {
      int64_t q = by_col ? p * a->n + o : o * a->n + p;
      if (!a->hit[q]) continue;
      (*out)->col_indices[k] = p;
      store_scaled((*out)->values, dt, k++, a, q, 1.0);
    }
    (*out)->crow_indices[o + 1] = k;
  }
  return MT_OK;
}

/* smm / sspaddmm's product part (SPB-4): every column of each row of A
 * that stores a cell, row-major, times alpha, after `lead` entries the
 * caller fills. */
static int64_t rows_hit(const acc_t *a) {
  int64_t n = 0;
  for (int64_t i = 0; i < a->m; i++) n += a->row_hit[i];
  return n;
}

static void fill_rows(mt_tensor *o, int64_t lead, const acc_t *a, double alpha) {
  int64_t k = lead;
  for (int64_t i = 0; i < a->m; i++) {
    if (!a->row_hit[i]) continue;
    for (int64_t j = 0; j < a->n; j++) {
      o->indices[k] = i;
      o->indices[o->nnz + k] = j;
      store_scaled(o->values, o->dtype, k++, a, i * a->n + j, alpha);
    }
  }
}

/* ---- the shared driver: acc = A @ B for a 2-d sparse A and 2-d dense or
 * sparse B, or dense A and sparse B (transposed into B^T @ A^T) ---------- */

typedef struct {
  acc_t acc;
  int transposed; /* acc holds (A @ B)^T */
} product;

static void product_free(product *p) { acc_free(&p->acc); }

/* A dense copy of sparse b as a dmat plus its stored-entry map. */
static mt_status densify(const mt_tensor *b, const char *op, dmat *m, uint8_t **present,
                         mt_error *err) {
  cells s;
  mt_status st = cells_of(b, 0, 0, op, &s, err);
  if (st != MT_OK) return st;
  int is_int = s.iv != NULL;
  size_t cnt = (size_t)(s.rows * s.cols > 0 ? s.rows * s.cols : 1);
  memset(m, 0, sizeof *m);
  m->k = s.rows;
  m->n = s.cols;
  if (is_int)
    m->i = calloc(cnt, sizeof *m->i);
  else
    m->d = calloc(cnt, sizeof *m->d);
  *present = calloc(cnt, 1);
  if ((!m->i && !m->d) || !*present) {
    cells_free(&s);
    dmat_free(m);
    free(*present);
    *present = NULL;
    return mt_err(err, MT_OUT_OF_MEMORY, "%s: out of memory", op);
  }
  for (int64_t q = 0; q < s.n; q++) { /* duplicates summed */
    int64_t o = s.r[q] * s.cols + s.c[q];
    if (is_int)
      m->i[o] = (int64_t)((uint64_t)m->i[o] + (uint64_t)s.iv[q]);
    else
      m->d[o] += s.v[q];
    (*present)[o] = 1;
  }
  cells_free(&s);
  return MT_OK;
}

static mt_status product_of(const mt_tensor *a, const mt_tensor *b, const char *op, product *p,
                            mt_error *err) {
  cells A = {0};
  dmat B = {0};
  uint8_t *present = NULL;
  mt_status st;
  memset(p, 0, sizeof *p);
  int is_int = !mt__cpu_is_float(a->dtype);
  if (is_sparse(a)) {
    if ((st = cells_of(a, 0, 0, op, &A, err)) != MT_OK) goto out;
    if (is_sparse(b))
      st = densify(b, op, &B, &present, err);
    else
      st = dmat_of(b, 0, 0, op, &B, err);
  } else { /* dense @ sparse = (sparse^T @ dense^T)^T */
    p->transposed = 1;
    if ((st = cells_of(b, 0, 1, op, &A, err)) != MT_OK) goto out;
    st = dmat_of(a, 0, 1, op, &B, err);
  }
  if (st != MT_OK) goto out;
  if ((st = acc_new(&p->acc, A.rows, B.n, is_int, op, err)) != MT_OK) goto out;
  accumulate(&p->acc, 0, &A, &B, present);
out:
  cells_free(&A);
  dmat_free(&B);
  free(present);
  return st;
}

/* ---- mm, sparse_mm ------------------------------------------------------------------ */

/* The checks of mm(a, b) (SPB-1), in torch's order: layouts, dims, dtypes,
 * inner sizes. */
static mt_status mm_check(const mt_tensor *a, const mt_tensor *b, const char *op, mt_error *err) {
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
  int wide = !(is_sparse(a) && is_sparse(b)) && !mt_kind_is_compressed(a->kind) &&
             !mt_kind_is_compressed(b->kind);
  if ((st = check_dtype(a->dtype, wide, op, wide ? "addmm_sparse_dense" : "sparse_matmul", err)) !=
      MT_OK)
    return st;
  if ((st = same_dtype(in, 2, op, err)) != MT_OK) return st;
  if (a->shape[1] != b->shape[0]) return inner_mismatch(op, a->shape[1], b->shape[0], err);
  return MT_OK;
}

static mt_status mm_common(mt_call *call, mt_op opid, const char *op, int namespaced,
                           mt_error *err) {
  const mt_host *h = mt__cpu_host(call);
  const mt_tensor *in[2];
  product p = {0};
  mt_status st;
  mt__cpu_begin(call);
  if ((st = mt__kw_check(opid, call->kw, err)) != MT_OK) return st;
  if ((st = inputs(call, 2, 2, op, in, err)) != MT_OK) return st;
  if ((st = mm_check(in[0], in[1], op, err)) != MT_OK) return st;
  if ((st = product_of(in[0], in[1], op, &p, err)) != MT_OK) goto out;
  mt_dtype dt = in[0]->dtype;
  if (is_sparse(in[0]) && is_sparse(in[1])) {
    /* SPB-2: torch.mm(CSC, CSC) is CSR, torch.sparse.mm keeps CSC */
    mt_kind k = in[0]->kind;
    if (k == MT_KIND_CSC && !(namespaced && in[1]->kind == MT_KIND_CSC)) k = MT_KIND_CSR;
    st = sparse_result(h, dt, k, &p.acc, &call->out[0], err);
  } else {
    int64_t shape[2] = {in[0]->shape[0], in[1]->shape[1]};
    st = dense_result(h, dt, 2, shape, &p.acc, p.transposed, NULL, 0, 0.0, 1.0, &call->out[0],
                      err);
  }
  if (st == MT_OK) call->n_out = 1;
out:
  product_free(&p);
  if (st != MT_OK) mt__cpu_drop_outputs(call);
  return st;
}

mt_status mt_cpu_mm(mt_call *call, mt_error *err) {
  return mm_common(call, MT_OP_mm, "mm", 0, err);
}

mt_status mt_cpu_sparse_mm(mt_call *call, mt_error *err) {
  return mm_common(call, MT_OP_sparse_mm, "sparse_mm", 1, err);
}

/* torch.spmm: torch.mm's code path (not torch.sparse.mm's: CSC x CSC is CSR) */
mt_status mt_cpu_spmm(mt_call *call, mt_error *err) {
  return mm_common(call, MT_OP_spmm, "spmm", 0, err);
}

/* ---- addmm, sparse_addmm: beta * input + alpha * (mat1 @ mat2) (SPB-3) ---- */

static mt_status addmm_common(mt_call *call, mt_op opid, const char *op, mt_error *err) {
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
  if ((st = mm_check(a, b, op, err)) != MT_OK) return st;
  if ((st = same_dtype(in, 3, op, err)) != MT_OK) return st;
  if ((st = check_bcast(c, a->shape[0], b->shape[1], 0, op, err)) != MT_OK) return st;
  if ((st = product_of(a, b, op, &p, err)) != MT_OK) goto out;
  int64_t shape[2] = {a->shape[0], b->shape[1]};
  st = dense_result(h, a->dtype, 2, shape, &p.acc, p.transposed, c, 0, beta, alpha,
                    &call->out[0], err);
  if (st == MT_OK) call->n_out = 1;
out:
  product_free(&p);
  if (st != MT_OK) mt__cpu_drop_outputs(call);
  return st;
}

mt_status mt_cpu_addmm(mt_call *call, mt_error *err) {
  return addmm_common(call, MT_OP_addmm, "addmm", err);
}

mt_status mt_cpu_sparse_addmm(mt_call *call, mt_error *err) {
  return addmm_common(call, MT_OP_sparse_addmm, "sparse_addmm", err);
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

mt_status mt_cpu_smm(mt_call *call, mt_error *err) {
  const mt_host *h = mt__cpu_host(call);
  const mt_tensor *in[2];
  product p = {0};
  mt_status st;
  mt__cpu_begin(call);
  if ((st = mt__kw_check(MT_OP_smm, call->kw, err)) != MT_OK) return st;
  if ((st = inputs(call, 2, 2, "smm", in, err)) != MT_OK) return st;
  if ((st = coo_dense_check(in[0], in[1], "smm", "sspmm", 0, err)) != MT_OK) return st;
  if ((st = product_of(in[0], in[1], "smm", &p, err)) != MT_OK) goto out;
  int64_t shape[2] = {p.acc.m, p.acc.n};
  if ((st = h->coo_new(in[0]->dtype, 2, shape, 2, rows_hit(&p.acc) * p.acc.n, &call->out[0],
                       err)) != MT_OK)
    goto out;
  fill_rows(call->out[0], 0, &p.acc, 1.0);
  /* torch flags it uncoalesced, even sorted; empty results are coalesced */
  call->out[0]->coalesced = call->out[0]->nnz == 0;
  call->n_out = 1;
out:
  product_free(&p);
  if (st != MT_OK) mt__cpu_drop_outputs(call);
  return st;
}

mt_status mt_cpu_sspaddmm(mt_call *call, mt_error *err) {
  const mt_host *h = mt__cpu_host(call);
  const mt_tensor *in[3];
  product p = {0};
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
  int64_t shape[2] = {p.acc.m, p.acc.n}, lead = c->nnz;
  mt_dtype dt = c->dtype;
  if ((st = h->coo_new(dt, 2, shape, 2, lead + rows_hit(&p.acc) * p.acc.n, &call->out[0], err)) !=
      MT_OK)
    goto out;
  mt_tensor *o = call->out[0];
  /* beta * input: its entries as stored, every one multiplied (0 * inf = NaN) */
  for (int64_t k = 0; k < lead; k++) {
    o->indices[k] = c->indices[k];
    o->indices[o->nnz + k] = c->indices[c->nnz + k];
    if (mt__cpu_is_float(dt))
      mt__cpu_st(o->values, dt, k, beta * mt__cpu_ld(c->values, dt, k));
    else
      mt__cpu_sti(o->values, dt, k,
                  (int64_t)((uint64_t)(int64_t)beta * (uint64_t)mt__cpu_ldi(c->values, dt, k)));
  }
  fill_rows(o, lead, &p.acc, alpha);
  o->coalesced = o->nnz == 0;
  call->n_out = 1;
out:
  product_free(&p);
  if (st != MT_OK) mt__cpu_drop_outputs(call);
  return st;
}

mt_status mt_cpu_hspmm(mt_call *call, mt_error *err) {
  const mt_host *h = mt__cpu_host(call);
  const mt_tensor *in[2];
  product p = {0};
  mt_status st;
  mt__cpu_begin(call);
  if ((st = mt__kw_check(MT_OP_hspmm, call->kw, err)) != MT_OK) return st;
  if ((st = inputs(call, 2, 2, "hspmm", in, err)) != MT_OK) return st;
  if ((st = coo_dense_check(in[0], in[1], "hspmm", "addmm_sparse_dense", 1, err)) != MT_OK)
    return st;
  if ((st = product_of(in[0], in[1], "hspmm", &p, err)) != MT_OK) goto out;
  /* a hybrid COO: sparse_dim 1 over the rows that store a cell (sorted),
   * each value a dense row of n */
  int64_t shape[2] = {p.acc.m, p.acc.n}, nr = rows_hit(&p.acc);
  if ((st = h->coo_new(in[0]->dtype, 2, shape, 1, nr, &call->out[0], err)) != MT_OK) goto out;
  mt_tensor *o = call->out[0];
  for (int64_t i = 0, k = 0; i < p.acc.m; i++) {
    if (!p.acc.row_hit[i]) continue;
    o->indices[k] = i;
    for (int64_t j = 0; j < p.acc.n; j++)
      store_scaled(o->values, o->dtype, k * p.acc.n + j, &p.acc, i * p.acc.n + j, 1.0);
    k++;
  }
  o->coalesced = nr == 0;
  call->n_out = 1;
out:
  product_free(&p);
  if (st != MT_OK) mt__cpu_drop_outputs(call);
  return st;
}

/* ---- bmm: a 3-d COO (sparse_dim 3) @ a 3-d dense, batch by batch (SPB-5) -- */

mt_status mt_cpu_bmm(mt_call *call, mt_error *err) {
  const mt_host *h = mt__cpu_host(call);
  const mt_tensor *in[2];
  cells A = {0};
  dmat B = {0};
  acc_t acc = {0};
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
  int64_t nb = a->shape[0], m = a->shape[1], n = b->shape[2];
  if ((st = acc_new(&acc, nb * m, n, !mt__cpu_is_float(a->dtype), "bmm", err)) != MT_OK) goto out;
  for (int64_t bi = 0; bi < nb; bi++) {
    if ((st = cells_of(a, bi, 0, "bmm", &A, err)) != MT_OK) goto out;
    if ((st = dmat_of(b, bi, 0, "bmm", &B, err)) != MT_OK) goto out;
    accumulate(&acc, bi * m, &A, &B, NULL);
    cells_free(&A);
    dmat_free(&B);
  }
  int64_t shape[3] = {nb, m, n};
  if ((st = dense_result(h, a->dtype, 3, shape, &acc, 0, NULL, 0, 0.0, 1.0, &call->out[0], err)) ==
      MT_OK)
    call->n_out = 1;
out:
  cells_free(&A);
  dmat_free(&B);
  acc_free(&acc);
  if (st != MT_OK) mt__cpu_drop_outputs(call);
  return st;
}

/* ---- linear: input @ weight.T (+ bias), a sparse weight (SPB-5) ----------- */

mt_status mt_cpu_linear(mt_call *call, mt_error *err) {
  const mt_host *h = mt__cpu_host(call);
  const mt_tensor *in[3] = {NULL, NULL, NULL};
  cells W = {0};
  dmat X = {0};
  acc_t acc = {0};
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
  if ((st = cells_of(w, 0, 0, "linear", &W, err)) != MT_OK) goto out;
  if ((st = dmat_of(x, 0, 1, "linear", &X, err)) != MT_OK) goto out;
  if ((st = acc_new(&acc, nout, X.n, !mt__cpu_is_float(w->dtype), "linear", err)) != MT_OK)
    goto out;
  accumulate(&acc, 0, &W, &X, NULL);
  int64_t shape[MT_MAX_DIMS];
  memcpy(shape, x->shape, sizeof shape);
  shape[x->ndim - 1] = nout;
  st = dense_result(h, w->dtype, x->ndim, shape, &acc, 1, bias, 0, 1.0, 1.0, &call->out[0], err);
  if (st == MT_OK) call->n_out = 1;
out:
  cells_free(&W);
  dmat_free(&X);
  acc_free(&acc);
  if (st != MT_OK) mt__cpu_drop_outputs(call);
  return st;
}

/* ---- matmul, addmv: matrix @ vector (SPB-5) --------------------------------- */

/* beta * c + alpha * (a @ v), a sparse [m, k], v dense [k]; c NULL for matmul */
static mt_status mv(mt_call *call, const char *op, const mt_tensor *c, const mt_tensor *a,
                    const mt_tensor *v, double beta, double alpha, mt_error *err) {
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
  st = dense_result(h, a->dtype, 1, shape, &p.acc, 0, c, 1, beta, alpha, &call->out[0], err);
  if (st == MT_OK) call->n_out = 1;
out:
  product_free(&p);
  return st;
}

mt_status mt_cpu_matmul(mt_call *call, mt_error *err) {
  const mt_tensor *in[2];
  mt_status st;
  mt__cpu_begin(call);
  if ((st = mt__kw_check(MT_OP_matmul, call->kw, err)) != MT_OK) return st;
  if ((st = inputs(call, 2, 2, "matmul", in, err)) != MT_OK) return st;
  const mt_tensor *a = in[0], *b = in[1];
  if (is_sparse(a) && b->kind == MT_KIND_DENSE && b->ndim == 1) {
    st = mv(call, "matmul", NULL, a, b, 0.0, 1.0, err);
  } else if ((is_sparse(a) || is_sparse(b)) && a->ndim == 2 && b->ndim == 2) {
    return mm_common(call, MT_OP_mm, "matmul", 0, err); /* no kwargs either way */
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

mt_status mt_cpu_addmv(mt_call *call, mt_error *err) {
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
          mt_kw_float(call->kw, "alpha", 1.0), err);
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

mt_status mt_cpu_sparse_sampled_addmm(mt_call *call, mt_error *err) {
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
  int64_t kk = m1->shape[m1->ndim - 1];
  for (int64_t b = 0; b < g.batches; b++) {
    const int64_t *crow = c->crow_indices + b * (g.ncomp + 1), *col = c->col_indices + b * g.nnz;
    for (int64_t i = 0; i < g.rows; i++)
      for (int64_t k = crow[i]; k < crow[i + 1]; k++) {
        int64_t j = col[k], q = b * g.nnz + k;
        double dot = 0.0;
        for (int64_t t = 0; t < kk; t++) /* mat1[b, i, t] * mat2[b, t, j] */
          dot += mt_dense_get(m1, (b * g.rows + i) * kk + t) *
                 mt_dense_get(m2, (b * kk + t) * g.cols + j);
        mt__cpu_st(o->values, o->dtype, q, beta * mt__cpu_ld(c->values, c->dtype, q) + alpha * dot);
      }
  }
  call->n_out = 1;
  return MT_OK;
}

/* mt/compressed.h - the geometry of torch's compressed sparse layouts (CSR,
 * CSC, BSR, BSC) as mt_tensor stores them (mt.h), for kernels and plugins.
 *
 *   CSR  crow_indices [batch..., rows + 1]        col_indices [batch..., nnz]
 *   CSC  ccol_indices [batch..., cols + 1]        row_indices [batch..., nnz]
 *   BSR  crow_indices [batch..., rows/bh + 1]     col_indices (block columns)
 *   BSC  ccol_indices [batch..., cols/bw + 1]     row_indices (block rows)
 *   values [batch..., nnz, (bh, bw for BSR/BSC), dense...]
 *
 * mt_tensor keeps the compressed indices in crow_indices and the plain
 * indices in col_indices whatever the layout. Entry k of batch b, in
 * compressed slot c (crow[c] <= k < crow[c+1]) with plain index p, is the
 * block at (row, col) = (c, p) for CSR/BSR and (p, c) for CSC/BSC, in units
 * of blocks; each block holds bh x bw row-major cells, each cell `dense`
 * elements. Header-only, C standard library only. */
#ifndef MT_COMPRESSED_H
#define MT_COMPRESSED_H

#include "mt/mt.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct mt_cgeom {
  int nb;               /* batch dims */
  int64_t batches;      /* product of the batch dims (1 when nb = 0) */
  int64_t rows, cols;   /* the two sparse dims, in elements */
  int64_t bh, bw;       /* block size ({1, 1} for CSR, CSC) */
  int64_t ncomp;        /* compressed slots: rows/bh (CSR, BSR) or cols/bw (CSC, BSC) */
  int64_t nplain;       /* plain index range: cols/bw (CSR, BSR) or rows/bh (CSC, BSC) */
  int64_t dense;        /* elements per cell: product of the dense dims */
  int64_t entry;        /* elements per stored entry: bh * bw * dense */
  int64_t nnz;          /* entries per batch */
  int by_col;           /* 1 for CSC, BSC: the compressed dim is the column */
} mt_cgeom;

static inline int mt_kind_is_compressed(mt_kind k) {
  return k == MT_KIND_CSR || k == MT_KIND_CSC || k == MT_KIND_BSR || k == MT_KIND_BSC;
}

static inline int mt_kind_is_blocked(mt_kind k) {
  return k == MT_KIND_BSR || k == MT_KIND_BSC;
}

/* torch's dataset names of the two index arrays of a compressed kind */
static inline const char *mt_compressed_name(mt_kind k) {
  return (k == MT_KIND_CSC || k == MT_KIND_BSC) ? "ccol_indices" : "crow_indices";
}
static inline const char *mt_plain_name(mt_kind k) {
  return (k == MT_KIND_CSC || k == MT_KIND_BSC) ? "row_indices" : "col_indices";
}

/* Fills g from t's kind, shape, dense_dim, blocksize and nnz. Returns 0 when
 * t is not compressed or its dims do not add up (ndim < 2 + dense_dim, a
 * block size < 1 or not dividing its dim); the validator (mt_validate)
 * says which. */
static inline int mt_cgeom_of(const mt_tensor *t, mt_cgeom *g) {
  if (!t || !mt_kind_is_compressed(t->kind)) return 0;
  int blocked = mt_kind_is_blocked(t->kind);
  g->nb = t->ndim - 2 - t->dense_dim;
  if (t->dense_dim < 0 || g->nb < 0) return 0;
  g->batches = 1;
  for (int d = 0; d < g->nb; d++) g->batches *= t->shape[d];
  g->rows = t->shape[g->nb];
  g->cols = t->shape[g->nb + 1];
  g->bh = blocked ? t->blocksize[0] : 1;
  g->bw = blocked ? t->blocksize[1] : 1;
  if (g->bh < 1 || g->bw < 1 || g->rows % g->bh || g->cols % g->bw) return 0;
  g->by_col = t->kind == MT_KIND_CSC || t->kind == MT_KIND_BSC;
  g->ncomp = g->by_col ? g->cols / g->bw : g->rows / g->bh;
  g->nplain = g->by_col ? g->rows / g->bh : g->cols / g->bw;
  g->dense = 1;
  for (int d = g->nb + 2; d < t->ndim; d++) g->dense *= t->shape[d];
  g->entry = g->bh * g->bw * g->dense;
  g->nnz = t->nnz;
  return 1;
}

/* A loop header over every cell of every stored block of batch b of the
 * compressed tensor t (geometry g from mt_cgeom_of), in storage order
 * (compressed slot, entry, cell row-major). The body sees int64_t row and
 * col, the cell's element in the two sparse dims, and at, the offset in
 * t->values of the cell's first element (its g->dense elements follow).
 * `break` leaves the innermost of the nested loops only; `return` is fine.
 *   for (int64_t b = 0; b < g.batches; b++)
 *     MT_CGEOM_FOR_EACH_CELL(t, &g, b, row, col, at) { ... } */
#define MT_CGEOM_FOR_EACH_CELL(t, g, b, row, col, at)                                          \
  for (int64_t mt_c_ = 0; mt_c_ < (g)->ncomp; mt_c_++)                                         \
    for (int64_t mt_k_ = (t)->crow_indices[(b) * ((g)->ncomp + 1) + mt_c_],                    \
                 mt_e_ = (t)->crow_indices[(b) * ((g)->ncomp + 1) + mt_c_ + 1];                 \
         mt_k_ < mt_e_; mt_k_++)                                                               \
      for (int64_t mt_p_ = (t)->col_indices[(b) * (g)->nnz + mt_k_], mt_n_ = 0;                \
           mt_n_ < (g)->bh * (g)->bw; mt_n_++)                                                 \
        for (int64_t row = ((g)->by_col ? mt_p_ : mt_c_) * (g)->bh + mt_n_ / (g)->bw,          \
                     col = ((g)->by_col ? mt_c_ : mt_p_) * (g)->bw + mt_n_ % (g)->bw,          \
                     at = (((b) * (g)->nnz + mt_k_) * (g)->bh * (g)->bw + mt_n_) * (g)->dense, \
                     mt_once_ = 1;                                                             \
             mt_once_; mt_once_ = 0)

#ifdef __cplusplus
}
#endif
#endif /* MT_COMPRESSED_H */

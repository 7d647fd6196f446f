/* sparse_blas_math.h - the per-output math of the sparse_blas family,
 * shared by the CPU reference (impl/cpu/sparse_blas.c, which plans each
 * call: torch's checks and messages, the sparse operand's stored cells as
 * per-row term lists, the dense operand's element offsets, the result's
 * structure) and the CUDA kernels (impl/cuda/sparse_blas.cu).
 *
 * A product's accumulator is [m, n]: element (r, j) is the sum, over the
 * terms t of row r in the sparse operand's stored order (rptr[r] ..
 * rptr[r + 1]), of A's value ta[t] times element (tb[t], j) of B. B's
 * element (row, j) is e = row * n + j: b[boff[e]] (a dense B), or, for a
 * sparse B (b_sum), the sum from zero of b[boff[bptr[e] .. bptr[e + 1])]
 * (its duplicates, in stored order), a term skipped when that list is
 * empty (SPB-2's structural product). Floats accumulate in double from
 * 0.0 and round once to the dtype; integers in uint64 (wrapping), stored
 * wrapped to their width. An output o takes accumulator element oq[o]
 * (-1: none) and C's element oc[o] (-1: none):
 *   alpha * acc + beta * c, alpha * acc, or beta * c alone. */
#ifndef MT_SPARSE_BLAS_MATH_H
#define MT_SPARSE_BLAS_MATH_H

#include "common/mt_hd.h"

/* One call, planned on the host. */
typedef struct mt_spb_par {
  mt_dtype dt;           /* every operand's and the result's dtype */
  int is_int;            /* integer dtypes: exact uint64 arithmetic */
  int b_sum;             /* B's elements are lists (a sparse B), else one offset each */
  double alpha, beta;    /* float dtypes */
  int64_t ialpha, ibeta; /* integer dtypes: (int64_t)alpha, (int64_t)beta */
  int64_t m, n;          /* accumulator rows and columns */
  int64_t n_out;         /* result values */
} mt_spb_par;

/* The buffers of one call (host pointers for the CPU, device ones in a
 * kernel). na, nb, nc: elements of the value buffers a kernel may read. */
typedef struct mt_spb_bufs {
  const void *a, *b, *c;     /* values of A, B and C (c NULL: none) */
  const int64_t *rptr;       /* m + 1: row r's terms */
  const int64_t *ta, *tb;    /* nt: a term's A value index, B row */
  const int64_t *bptr;       /* b_sum: B element e's list is boff[bptr[e] .. bptr[e + 1]) */
  const int64_t *boff;       /* nbo offsets into b */
  const int64_t *oq, *oc;    /* n_out: accumulator element, C element (-1: none) */
  void *out;                 /* n_out values of dt */
  int64_t na, nb, nc, nt, nbe, nbo;
} mt_spb_bufs;

/* Element (row, j) of a float B; *has = 0 when a sparse B stores none there. */
MT_HD double mt_spb_bf(const mt_spb_par *p, const mt_spb_bufs *b, int64_t row, int64_t j,
                       int *has) {
  int64_t e = row * p->n + j;
  *has = 1;
  if (!p->b_sum) return mt_hd_get_f64(b->b, p->dt, b->boff[e]);
  if (b->bptr[e] == b->bptr[e + 1]) {
    *has = 0;
    return 0.0;
  }
  double s = 0.0;
  for (int64_t k = b->bptr[e]; k < b->bptr[e + 1]; k++) s += mt_hd_get_f64(b->b, p->dt, b->boff[k]);
  return s;
}

MT_HD uint64_t mt_spb_bi(const mt_spb_par *p, const mt_spb_bufs *b, int64_t row, int64_t j,
                         int *has) {
  int64_t e = row * p->n + j;
  *has = 1;
  if (!p->b_sum) return (uint64_t)mt_hd_ldi(b->b, p->dt, b->boff[e]);
  if (b->bptr[e] == b->bptr[e + 1]) {
    *has = 0;
    return 0;
  }
  uint64_t s = 0;
  for (int64_t k = b->bptr[e]; k < b->bptr[e + 1]; k++)
    s += (uint64_t)mt_hd_ldi(b->b, p->dt, b->boff[k]);
  return s;
}

/* Accumulator element q = r * n + j: the row's terms in stored order. */
MT_HD double mt_spb_acc_f(const mt_spb_par *p, const mt_spb_bufs *b, int64_t q) {
  int64_t r = q / p->n, j = q % p->n;
  double acc = 0.0;
  for (int64_t t = b->rptr[r]; t < b->rptr[r + 1]; t++) {
    int has;
    double bv = mt_spb_bf(p, b, b->tb[t], j, &has);
    if (has) acc += mt_hd_get_f64(b->a, p->dt, b->ta[t]) * bv;
  }
  return acc;
}

MT_HD uint64_t mt_spb_acc_i(const mt_spb_par *p, const mt_spb_bufs *b, int64_t q) {
  int64_t r = q / p->n, j = q % p->n;
  uint64_t acc = 0;
  for (int64_t t = b->rptr[r]; t < b->rptr[r + 1]; t++) {
    int has;
    uint64_t bv = mt_spb_bi(p, b, b->tb[t], j, &has);
    if (has) acc += (uint64_t)mt_hd_ldi(b->a, p->dt, b->ta[t]) * bv;
  }
  return acc;
}

/* Output o from its accumulator value (accf or acci, unused when oq[o] < 0). */
MT_HD void mt_spb_store(const mt_spb_par *p, const mt_spb_bufs *b, int64_t o, double accf,
                        uint64_t acci) {
  int64_t q = b->oq[o], ci = b->oc[o];
  if (p->is_int) {
    uint64_t v = 0;
    if (q >= 0) v = (uint64_t)p->ialpha * acci;
    if (ci >= 0) v += (uint64_t)p->ibeta * (uint64_t)mt_hd_ldi(b->c, p->dt, ci);
    mt_hd_sti(b->out, p->dt, o, (int64_t)v);
  } else {
    double v;
    if (q >= 0) {
      v = p->alpha * accf;
      if (ci >= 0) v += p->beta * mt_hd_get_f64(b->c, p->dt, ci);
    } else {
      v = ci >= 0 ? p->beta * mt_hd_get_f64(b->c, p->dt, ci) : 0.0;
    }
    mt_hd_set_f64(b->out, p->dt, o, v);
  }
}

/* Output o: one thread's work. */
MT_HD void mt_spb_out(const mt_spb_par *p, const mt_spb_bufs *b, int64_t o) {
  int64_t q = b->oq[o];
  if (p->is_int)
    mt_spb_store(p, b, o, 0.0, q >= 0 ? mt_spb_acc_i(p, b, q) : 0);
  else
    mt_spb_store(p, b, o, q >= 0 ? mt_spb_acc_f(p, b, q) : 0.0, 0);
}

/* ---- the cuSPARSE form (impl/cuda/sparse_blas.cu) --------------------------
 * A float32/float64 product is also acc = A B for cuSPARSE (SpMM for a
 * dense B, b_sum 0; SpGEMM for a sparse one): A the m x k CSR of the terms,
 * each row's terms sorted by B row and those of one B row merged into one
 * stored value (cuSPARSE's CSR has sorted, unique columns per row; a COO
 * operand's rows need not); a dense B's k = nbo / n rows gathered
 * column-major, a sparse B's stored elements (duplicates summed) as a CSR;
 * acc m x n column-major in the dtype. cuSPARSE sums in an order and
 * precision of its own; these ops' golden tolerances bound every order
 * (golden/mtgen/families/sparse_blas.py, "Tolerances": 2 (K + 2) eps B, B
 * summing a COO operand's duplicates as absolute values, so merging them
 * first stays within it). */

/* CSR value u: A's values of terms perm[tptr[u] .. tptr[u + 1]) (one row's
 * terms on one B row, in stored order); one term is copied, several summed
 * in double from the first and rounded once. */
MT_HD void mt_spb_gather_a(const mt_spb_par *p, const mt_spb_bufs *b, const int64_t *perm,
                           const int64_t *tptr, int64_t u, void *av) {
  int64_t i = tptr[u];
  double v = mt_hd_get_f64(b->a, p->dt, b->ta[perm[i]]);
  for (i++; i < tptr[u + 1]; i++) v += mt_hd_get_f64(b->a, p->dt, b->ta[perm[i]]);
  mt_hd_set_f64(av, p->dt, u, v);
}

/* A sparse B's stored value v (SpGEMM): element bel[v]'s duplicates, in
 * stored order; one is copied, several summed in double from the first and
 * rounded once. */
MT_HD void mt_spb_gather_bs(const mt_spb_par *p, const mt_spb_bufs *b, const int64_t *bel,
                            int64_t v, void *bv) {
  int64_t e = bel[v], i = b->bptr[e];
  double s = mt_hd_get_f64(b->b, p->dt, b->boff[i]);
  for (i++; i < b->bptr[e + 1]; i++) s += mt_hd_get_f64(b->b, p->dt, b->boff[i]);
  mt_hd_set_f64(bv, p->dt, v, s);
}

/* B's element e = row * n + j, into column-major bcm (k rows). */
MT_HD void mt_spb_gather_b(const mt_spb_par *p, const mt_spb_bufs *b, int64_t k, int64_t e,
                           void *bcm) {
  int64_t row = e / p->n, j = e % p->n;
  mt_hd_set_f64(bcm, p->dt, j * k + row, mt_hd_get_f64(b->b, p->dt, b->boff[e]));
}

/* Output o from the column-major accumulator acc. + 0.0: a sum whose terms
 * are all -0 is +0 there, as mt_spb_acc_f's sum from +0.0 makes it (an
 * exact-tolerance golden holds the sign of a zero). */
MT_HD void mt_spb_out_cm(const mt_spb_par *p, const mt_spb_bufs *b, const void *acc, int64_t o) {
  int64_t q = b->oq[o];
  double v = q >= 0 ? mt_hd_get_f64(acc, p->dt, (q % p->n) * p->m + q / p->n) + 0.0 : 0.0;
  mt_spb_store(p, b, o, v, 0);
}

#endif /* MT_SPARSE_BLAS_MATH_H */

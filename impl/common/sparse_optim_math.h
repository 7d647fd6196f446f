/* sparse_optim_math.h - the per-element math of the sparse_optim family
 * (SparseAdam, SADAM-1/2, and SGD's tensor arithmetic, SGD-1/2), shared by
 * the CPU reference (impl/cpu/sparse_optim.c, which plans each call:
 * hyper-parameters, torch's checks and messages, coalescing, the entry
 * bookkeeping of its sparse adds, outputs) and the CUDA kernels
 * (impl/cuda/sparse_optim.cu). Loads widen to double, every tensor op's
 * result is rounded to the dtype (float16/bfloat16 through float, as torch
 * computes them), in torch's order; each line cites the torch expression
 * it mirrors. */
#ifndef MT_SPARSE_OPTIM_MATH_H
#define MT_SPARSE_OPTIM_MATH_H

#include "common/mt_hd.h"

/* ---- SparseAdam (SADAM-1/2) --------------------------------------------- */

/* One call, planned on the host: the scalars as torch casts them. */
typedef struct mt_sadam_par {
  mt_dtype dt;
  int maximize;
  double c1, c2;  /* 1 - beta1, 1 - beta2, in the op's compute type */
  double eps_s;   /* eps, likewise */
  double nstep;   /* -step_size, likewise */
  int64_t row;    /* elements per COO entry */
  int64_t n, nnz; /* param's elements, the coalesced grad's entries */
} mt_sadam_par;

/* Element e of the coalesced gradient's values (entry k = e / row at dense
 * offset lin[k] * row + j): the update of param p and the moments m, v.
 * The coalesced gradient's indices are unique, so no two elements update
 * one param element; an index outside param writes nothing. */
MT_HD void mt_sadam_elem(const mt_sadam_par *q, int64_t e, const void *gvals, const int64_t *lin,
                         void *p, void *m, void *v) {
  mt_dtype dt = q->dt;
  int64_t k = e / q->row, j = e % q->row, i = lin[k] * q->row + j;
  if (i < 0 || i >= q->n) return;
  /* grad = -grad if maximize (negation is exact: before or after
   * coalescing gives the same values) */
  double gv = mt_hd_get_f64(gvals, dt, e);
  if (q->maximize) gv = -gv;
  double m_old = mt_hd_get_f64(m, dt, i), v_old = mt_hd_get_f64(v, dt, i);
  /* exp_avg_update_values = grad_values.sub(old_exp_avg_values).mul_(1 - beta1) */
  double mu = mt_hd_round(dt, mt_hd_round(dt, gv - m_old) * q->c1);
  /* exp_avg.add_(make_sparse(exp_avg_update_values)) */
  mt_hd_set_f64(m, dt, i, m_old + mu);
  /* exp_avg_sq_update_values = grad_values.pow(2).sub_(old).mul_(1 - beta2) */
  double vu = mt_hd_round(dt, mt_hd_round(dt, mt_hd_round(dt, gv * gv) - v_old) * q->c2);
  /* exp_avg_sq.add_(make_sparse(exp_avg_sq_update_values)) */
  mt_hd_set_f64(v, dt, i, v_old + vu);
  /* numer = exp_avg_update_values.add_(old_exp_avg_values) */
  double numer = mt_hd_round(dt, mu + m_old);
  /* denom = exp_avg_sq_update_values.add_(old).sqrt_().add_(eps) */
  double denom = mt_hd_round(dt, mt_hd_round(dt, sqrt(mt_hd_round(dt, vu + v_old))) + q->eps_s);
  /* param.add_(make_sparse(-step_size * numer.div_(denom))) */
  double upd = mt_hd_round(dt, mt_hd_round(dt, numer / denom) * q->nstep);
  mt_hd_set_f64(p, dt, i, mt_hd_get_f64(p, dt, i) + upd);
}

/* ---- SGD's tensor arithmetic (SGD-1/2) ------------------------------------ */

/* The tensor ops torch's SGD step runs, one call each. */
typedef enum {
  SGD_SCALE,   /* t = t * a: mul_ by a number (a cast to the op's compute type) */
  SGD_AXPY,    /* dense t += alpha * x (x dense): add(x, alpha) */
  SGD_ADD_COO, /* dense t += alpha * s (s COO), entry by entry in stored order */
  SGD_INT_ADD  /* SGD_ADD_COO on an integer or bool param, alpha as the dtype */
} mt_sgd_code;

/* One op, planned on the host. */
typedef struct mt_sgd_par {
  mt_sgd_code code;
  mt_dtype dt;
  double a;    /* SCALE: the factor; AXPY, ADD_COO: alpha as the CPU casts it */
  int fused;   /* AXPY, ADD_COO: one fused multiply-add (else the product is rounded first) */
  int64_t ai;  /* INT_ADD: alpha converted to the dtype (bool: 0/1) */
  int64_t row; /* ADD_COO, INT_ADD: elements per COO entry */
  /* bounds: elements of t and x; entries of s */
  int64_t nt, nx, nnz;
} mt_sgd_par;

/* The buffers of one op (host memory; common/exec.h's sgd hook). */
typedef struct mt_sgd_bufs {
  void *t;              /* updated in place */
  const void *x;        /* AXPY: the dense operand; ADD_COO, INT_ADD: s's values */
  const int64_t *lin;   /* ADD_COO, INT_ADD: destination d's dense linear index (of nd) */
  const int64_t *first; /* ADD_COO, INT_ADD: destination d's entries are
                           order[first[d] .. first[d + 1]) (nd + 1) */
  const int64_t *order; /* ADD_COO, INT_ADD: s's entries by destination, in stored order */
  int64_t nt, nx;       /* elements of t, x */
  int64_t nd;           /* ADD_COO, INT_ADD: destinations */
  int64_t nnz;          /* ADD_COO, INT_ADD: s's entries */
} mt_sgd_bufs;

/* r + a * v rounded to dt: one fma, or the product rounded first. */
MT_HD double mt__sgd_axpy1(mt_dtype dt, int fused, double a, double v, double r) {
  return fused ? fma(a, v, r) : r + mt_hd_round(dt, a * v);
}

/* Thread e of an op (mt_sgd_threads of them). */
MT_HD void mt_sgd_elem(const mt_sgd_par *q, int64_t e, void *t, const void *x,
                       const int64_t *lin, const int64_t *first, const int64_t *order) {
  mt_dtype dt = q->dt;
  switch (q->code) {
  case SGD_SCALE:
    /* t.mul_(a) */
    mt_hd_set_f64(t, dt, e, mt_hd_get_f64(t, dt, e) * q->a);
    break;
  case SGD_AXPY:
    /* t.add_(x, alpha=a) */
    mt_hd_set_f64(
        t, dt, e,
        mt__sgd_axpy1(dt, q->fused, q->a, mt_hd_get_f64(x, dt, e), mt_hd_get_f64(t, dt, e)));
    break;
  case SGD_ADD_COO:
  case SGD_INT_ADD: {
    /* `r[i] += value.to<scalar_t>() * v` for each entry of s in stored
     * order: one thread per destination element walks its entries */
    int64_t d = e / q->row, j = e % q->row, i = lin[d] * q->row + j;
    if (i < 0 || i >= q->nt) return;
    for (int64_t f = first[d]; f < first[d + 1]; f++) {
      int64_t k = order[f];
      if (k < 0 || k >= q->nnz) return;
      if (q->code == SGD_INT_ADD) {
        int64_t v = mt_hd_ldi(x, dt, k * q->row + j), r = mt_hd_ldi(t, dt, i);
        if (dt == MT_bool)
          mt_hd_sti(t, dt, i, r || (q->ai && v));
        else
          mt_hd_sti(t, dt, i, (int64_t)((uint64_t)r + (uint64_t)q->ai * (uint64_t)v));
      } else {
        mt_hd_set_f64(t, dt, i,
                      mt__sgd_axpy1(dt, q->fused, q->a, mt_hd_get_f64(x, dt, k * q->row + j),
                                    mt_hd_get_f64(t, dt, i)));
      }
    }
    break;
  }
  }
}

/* Threads of an op: elements of t, or destinations times the row. */
MT_HD int64_t mt_sgd_threads(const mt_sgd_par *q, const mt_sgd_bufs *b) {
  return q->code == SGD_SCALE || q->code == SGD_AXPY ? b->nt : b->nd * q->row;
}

#endif /* MT_SPARSE_OPTIM_MATH_H */

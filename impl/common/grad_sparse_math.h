/* grad_sparse_math.h - the math of the plain sparse ops' backward
 * (impl/cpu/grad_sparse.c plans each call; CUDA: impl/cuda/grad_sparse.cu):
 * one element of one input's dense gradient (mt_gsp_elem) from the
 * densified inputs and upstream gradient (doubles, an unstored element 0),
 * in the CPU reference's order, rounded once to the input's dtype. The host
 * lays the rounded doubles out (dense, or over a sparse pattern).
 *
 * Codes:
 *   GSP_EW       elementwise: f(x[i], go[i]) (sub: GSP_U_*)
 *   GSP_LIST     a list of upstream elements per gradient element (the host
 *                plan's off/src, in the CPU's order): their terms summed
 *                (add: GSP_ADD_ZERO from 0.0, as torch's reductions and
 *                scatters into zeros do, so -0.0 terms sum to 0.0;
 *                GSP_ADD_FIRST from the first term, as torch's copies and
 *                coalesce do, so a lone -0.0 stays -0.0), or the last
 *                one's term (GSP_ADD_NONE: a gather); 0.0 for none;
 *                sub: GSP_T_* (the term of upstream element s)
 *   GSP_MM_A/B   mm's gradients: s1 * (go @ B^T), s1 * (A^T @ go), batched
 *   GSP_LIN_X/W/B linear's: go @ W, go^T @ x, go summed over rows
 *   GSP_SOFTMAX  torch.sparse.(log_)softmax's over the stored elements of
 *                each line along the dim (pat) */
#ifndef MT_GRAD_SPARSE_MATH_H
#define MT_GRAD_SPARSE_MATH_H

#include "common/mt_hd.h"

enum { GSP_EW, GSP_LIST, GSP_MM_A, GSP_MM_B, GSP_LIN_X, GSP_LIN_W, GSP_LIN_B, GSP_SOFTMAX };

/* GSP_EW's functions of x and go */
enum {
  GSP_U_ABS,    /* go * sgn(x) */
  GSP_U_NEG,    /* -go */
  GSP_U_GO,     /* go */
  GSP_U_D2R,    /* go * (pi / 180) */
  GSP_U_R2D,    /* go * (180 / pi) */
  GSP_U_LOG1P,  /* go / (1 + x) */
  GSP_U_SQUARE, /* 2 * x * go */
  GSP_U_ZERO,   /* 0 */
  GSP_U_POW,    /* s1 * x^(s1 - 1) * go; 0 for s1 = 0 */
  GSP_U_S1      /* s1 * go */
};

/* GSP_LIST's ways of combining an element's terms */
enum { GSP_ADD_NONE, GSP_ADD_ZERO, GSP_ADD_FIRST };

/* GSP_LIST's terms of upstream element s (gradient element i) */
enum {
  GSP_T_GO,     /* go[s] */
  GSP_T_SCALED, /* s1 * s2 * go[s] */
  GSP_T_BETA,   /* s1 == 0 ? 0 : s1 * go[s] */
  GSP_T_SGN,    /* sgn(xa[i]) * go[s] */
  GSP_T_MUL,    /* go[s] * (b (k == 0) or a), a = xa[ia[s]], b = xb[ib[s]] */
  GSP_T_DIV     /* go[s] / b (k == 0), -go[s] * a / (b * b) */
};

/* One gradient, planned on the host. */
typedef struct mt_gsp_par {
  int code, sub;
  int k;          /* GSP_T_MUL/DIV: which operand's gradient */
  int add;        /* GSP_LIST: GSP_ADD_* */
  mt_dtype dtype; /* the gradient's */
  int64_t n;      /* gradient elements */
  double s1, s2;
  /* GSP_MM_*: batches of a (m x q) @ b (q x nn); GSP_LIN_*: m rows of x
   * (m x q), w (nn x q), b_all: a one-element bias */
  int64_t batches, m, q, nn;
  int b_all;
  /* GSP_SOFTMAX: the lines (outer x len x inner), log_softmax, own: the
   * sums over a line are each element's own term (torch's unwrapped
   * negative dim) */
  int64_t outer, len, inner;
  int logsm, own;
} mt_gsp_par;

/* Its buffers (NULL: unused; n_*: element counts, for the device's upload) */
typedef struct mt_gsp_bufs {
  const double *xa, *xb, *go;
  const int64_t *off, *src; /* GSP_LIST: n + 1 offsets, n_src upstream indices */
  const int64_t *ia, *ib;   /* GSP_T_MUL/DIV: n_go indices into xa, xb */
  const uint8_t *pat;       /* GSP_SOFTMAX: n stored flags */
  int64_t n_xa, n_xb, n_go, n_src;
} mt_gsp_bufs;

#define MT_GSP_PI 3.14159265358979323846

MT_HD double mt_gsp_sgn(double v) { return v > 0 ? 1.0 : v < 0 ? -1.0 : v == v ? 0.0 : v; }

MT_HD double mt_gsp_term(const mt_gsp_par *p, const mt_gsp_bufs *b, int64_t i, int64_t s) {
  double g = b->go[s];
  switch (p->sub) {
    case GSP_T_SCALED: return p->s1 * p->s2 * g;
    case GSP_T_BETA: return p->s1 == 0.0 ? 0.0 : p->s1 * g;
    case GSP_T_SGN: return mt_gsp_sgn(b->xa[i]) * g;
    case GSP_T_MUL: return g * (p->k == 0 ? b->xb[b->ib[s]] : b->xa[b->ia[s]]);
    case GSP_T_DIV: {
      double x = b->xa[b->ia[s]], y = b->xb[b->ib[s]];
      return p->k == 0 ? g / y : -g * x / (y * y);
    }
    default: return g;
  }
}

MT_HD double mt_gsp_ew(const mt_gsp_par *p, double x, double go) {
  switch (p->sub) {
    case GSP_U_ABS: return go * mt_gsp_sgn(x);
    case GSP_U_NEG: return -go;
    case GSP_U_D2R: return go * (MT_GSP_PI / 180.0);
    case GSP_U_R2D: return go * (180.0 / MT_GSP_PI);
    case GSP_U_LOG1P: return go / (1.0 + x);
    case GSP_U_SQUARE: return 2.0 * x * go;
    case GSP_U_ZERO: return 0.0;
    case GSP_U_POW: return p->s1 == 0.0 ? 0.0 : p->s1 * pow(x, p->s1 - 1.0) * go;
    case GSP_U_S1: return p->s1 * go;
    default: return go;
  }
}

/* torch.sparse.(log_)softmax's gradient at element i (stored) */
MT_HD double mt_gsp_softmax(const mt_gsp_par *p, const mt_gsp_bufs *b, int64_t i) {
  const double *x = b->xa, *go = b->go;
  int64_t o = i / (p->len * p->inner), in = i % p->inner;
  int64_t base = o * p->len * p->inner + in;
  double mx = -INFINITY, se = 0, sg = 0, sgy = 0;
  for (int64_t j = 0; j < p->len; j++)
    if (b->pat[base + j * p->inner] && x[base + j * p->inner] > mx) mx = x[base + j * p->inner];
  for (int64_t j = 0; j < p->len; j++)
    if (b->pat[base + j * p->inner]) se += exp(x[base + j * p->inner] - mx);
  for (int64_t j = 0; j < p->len; j++) {
    int64_t e = base + j * p->inner;
    if (!b->pat[e]) continue;
    double y = exp(x[e] - mx) / se;
    sg += go[e];
    sgy += go[e] * y;
  }
  double y = exp(x[i] - mx) / se;
  double s1 = p->own ? go[i] : sg, sy = p->own ? go[i] * y : sgy;
  return p->logsm ? go[i] - y * s1 : y * (go[i] - sy);
}

/* Gradient element i into g (a double rounded to p->dtype). */
MT_HD void mt_gsp_elem(const mt_gsp_par *p, const mt_gsp_bufs *b, double *g, int64_t i) {
  double v = 0.0;
  switch (p->code) {
    case GSP_EW: v = mt_gsp_ew(p, b->xa ? b->xa[i] : 0.0, b->go[i]); break;
    case GSP_LIST: {
      int64_t a = b->off[i], e = b->off[i + 1];
      if (p->add == GSP_ADD_FIRST && e > a)
        v = mt_gsp_term(p, b, i, b->src[a++]);
      if (p->add != GSP_ADD_NONE)
        for (int64_t t = a; t < e; t++) v += mt_gsp_term(p, b, i, b->src[t]);
      else if (e > a)
        v = mt_gsp_term(p, b, i, b->src[e - 1]);
      break;
    }
    case GSP_MM_A: { /* ga (m x q) = s1 * go (m x nn) @ B^T (nn x q) */
      int64_t t = i / (p->m * p->q), r = i % (p->m * p->q), row = r / p->q, c = r % p->q;
      const double *go = b->go + t * p->m * p->nn, *bb = b->xb + t * p->q * p->nn;
      double acc = 0;
      for (int64_t j = 0; j < p->nn; j++) acc += go[row * p->nn + j] * bb[c * p->nn + j];
      v += p->s1 * acc;
      break;
    }
    case GSP_MM_B: { /* gb (q x nn) = s1 * A^T (q x m) @ go (m x nn) */
      int64_t t = i / (p->q * p->nn), r = i % (p->q * p->nn), row = r / p->nn, j = r % p->nn;
      const double *go = b->go + t * p->m * p->nn, *a = b->xa + t * p->m * p->q;
      double acc = 0;
      for (int64_t s = 0; s < p->m; s++) acc += a[s * p->q + row] * go[s * p->nn + j];
      v += p->s1 * acc;
      break;
    }
    case GSP_LIN_X: { /* gx[r, c] = sum_j go[r, j] * w[j, c] */
      int64_t r = i / p->q, c = i % p->q;
      for (int64_t j = 0; j < p->nn; j++) v += b->go[r * p->nn + j] * b->xb[j * p->q + c];
      break;
    }
    case GSP_LIN_W: { /* gw[j, c] = sum_r go[r, j] * x[r, c] */
      int64_t j = i / p->q, c = i % p->q;
      for (int64_t r = 0; r < p->m; r++) v += b->go[r * p->nn + j] * b->xa[r * p->q + c];
      break;
    }
    case GSP_LIN_B: /* gb[j] = sum_r go[r, j]; a one-element bias: every go */
      if (p->b_all)
        for (int64_t r = 0; r < p->m * p->nn; r++) v += b->go[r];
      else
        for (int64_t r = 0; r < p->m; r++) v += b->go[r * p->nn + i];
      break;
    case GSP_SOFTMAX:
      if (b->pat[i]) v = mt_gsp_softmax(p, b, i);
      break;
    default: break;
  }
  g[i] = mt_hd_round(p->dtype, v);
}

#endif /* MT_GRAD_SPARSE_MATH_H */

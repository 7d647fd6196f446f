/* grad_masked_fn_math.h - the math of torch.masked's functional ops'
 * backward (impl/cpu/grad_masked_fn.c plans each call: checks, the mask
 * broadcast to the input, the dims; CUDA: impl/cuda/grad_masked_fn.cu).
 * A group is one output element of a reduction, or one line along the dim
 * of a scan, softmax, normalize or median: its input elements in
 * increasing (row-major) order, the order the CPU reference's loops fold
 * them in. mt_mfg_group writes every gradient element of one group, in
 * double, rounded once to the input's dtype (the host lays the doubles out
 * as torch does: the conversion is then exact). masked_logaddexp: one
 * group per element, two operands. See grad_masked_fn.c for torch's
 * formulas (MFG-*). */
#ifndef MT_GRAD_MASKED_FN_MATH_H
#define MT_GRAD_MASKED_FN_MATH_H

#include "common/mt_hd.h"

/* the ops (the op, its code) */
#define MFG_OPS(X)                                                                          \
  X(masked_sum, MFG_SUM) X(masked_prod, MFG_PROD) X(masked_amax, MFG_AMAX)                  \
  X(masked_amin, MFG_AMIN) X(masked_mean, MFG_MEAN) X(masked_median, MFG_MEDIAN)            \
  X(masked_norm, MFG_NORM) X(masked_var, MFG_VAR) X(masked_std, MFG_STD)                    \
  X(masked_logsumexp, MFG_LOGSUMEXP) X(masked_cumsum, MFG_CUMSUM)                           \
  X(masked_cumprod, MFG_CUMPROD) X(masked_softmax, MFG_SOFTMAX)                             \
  X(masked_log_softmax, MFG_LOG_SOFTMAX) X(masked_softmin, MFG_SOFTMIN)                     \
  X(masked_normalize, MFG_NORMALIZE)

typedef enum {
  MFG_SUM, MFG_PROD, MFG_AMAX, MFG_AMIN, MFG_MEAN, MFG_MEDIAN, MFG_NORM, MFG_VAR, MFG_STD,
  MFG_LOGSUMEXP, MFG_CUMSUM, MFG_CUMPROD, MFG_SOFTMAX, MFG_LOG_SOFTMAX, MFG_SOFTMIN,
  MFG_NORMALIZE, MFG_LOGADDEXP
} mt_mfg_code;

/* One call, planned on the host. */
typedef struct mt_mfg_par {
  mt_mfg_code code;
  int n_ops;          /* operands: 1, or 2 (logaddexp) */
  int64_t n;          /* elements of each operand */
  int64_t n_grp;      /* groups (threads) */
  double ord, eps;    /* norm / normalize */
  double corr;        /* var / std's correction */
  mt_dtype dtype[2];  /* the operands' (their gradients') */
  mt_dtype ct;        /* logaddexp: the promoted dtype torch computes in */
  double fill[2];     /* logaddexp: operand k's identity in ct (-inf; an integer's min) */
} mt_mfg_par;

MT_HD double mt__mfg_sgn(double v) { return v > 0 ? 1.0 : v < 0 ? -1.0 : v == v ? 0.0 : v; }

MT_HD double mt__mfg_filled(const double *x, const uint8_t *in, int64_t i, double fill) {
  return in[i] ? x[i] : fill;
}

/* the p-norm of a slice's elements (already filled: 0 masked out) */
MT_HD double mt__mfg_pnorm_acc(double acc, double v, double p) {
  double a = fabs(v);
  if (isinf(p)) return p > 0 ? (a > acc || a != a ? a : acc) : (a < acc || a != a ? a : acc);
  if (p == 0) return acc + (v != 0.0);
  return acc + pow(a, p);
}
MT_HD double mt__mfg_pnorm_init(double p) { return isinf(p) ? (p > 0 ? 0.0 : INFINITY) : 0.0; }
MT_HD double mt__mfg_pnorm_fin(double acc, double p) {
  if (isinf(p) || p == 0) return acc;
  if (p == 1) return acc;
  return pow(acc, 1.0 / p);
}

/* torch's norm_backward (grad_masked_fn.c) */
MT_HD double mt__mfg_pnorm_grad(double v, double nr, double p, double gr, double count) {
  if (p == 0) return 0.0;
  if (p == 1) return mt__mfg_sgn(v) * gr;
  if (p == 2) return nr == 0 ? 0.0 * v : gr * (v / nr);
  if (isinf(p)) return fabs(v) == nr ? mt__mfg_sgn(v) * gr / count : 0.0;
  if (p < 1) {
    double s = v == 0 ? 0.0 : mt__mfg_sgn(v) * pow(fabs(v), p - 1);
    return s * gr * pow(nr, 1 - p);
  }
  double sv = nr == 0 ? 0.0 : gr / pow(nr, p - 1);
  if (p < 2) return mt__mfg_sgn(v) * pow(fabs(v), p - 1) * sv;
  return v * pow(fabs(v), p - 2) * sv;
}

/* Group o (idx[off[o]] .. idx[off[o + 1] - 1]); a reduction's upstream
 * gradient is go[o], a line op's go[i]. x0/in0: the input and its mask,
 * g0 its gradient (every element of the group written). */
MT_HD void mt__mfg_one(const mt_mfg_par *p, const double *x, const uint8_t *in, const double *go,
                       const int64_t *off, const int64_t *idx, double *g, int64_t o) {
  mt_mfg_code c = p->code;
  int64_t a = off[o], b = off[o + 1];
  switch (c) {
  case MFG_SUM:
    for (int64_t t = a; t < b; t++) g[idx[t]] = in[idx[t]] ? go[o] : 0.0;
    break;
  case MFG_MEAN: {
    double cnt = 0.0;
    for (int64_t t = a; t < b; t++) cnt += in[idx[t]];
    for (int64_t t = a; t < b; t++) g[idx[t]] = in[idx[t]] ? go[o] / cnt : 0.0;
    break;
  }
  case MFG_PROD: { /* torch's prod_backward */
    int zero = 0;
    double r = 1.0;
    for (int64_t i = 0; i < p->n; i++) zero |= mt__mfg_filled(x, in, i, 1.0) == 0.0;
    for (int64_t t = a; t < b; t++) r *= mt__mfg_filled(x, in, idx[t], 1.0);
    for (int64_t t = a; t < b; t++) {
      int64_t i = idx[t];
      if (!in[i]) {
        g[i] = 0.0;
      } else if (!zero) {
        g[i] = go[o] * (r / x[i]);
      } else {
        double others = 1.0;
        for (int64_t u = a; u < b; u++)
          if (u != t) others *= mt__mfg_filled(x, in, idx[u], 1.0);
        g[i] = go[o] * others;
      }
    }
    break;
  }
  case MFG_AMAX:
  case MFG_AMIN: {
    int max = c == MFG_AMAX;
    double fill = max ? -INFINITY : INFINITY, r = fill, cnt = 0.0;
    for (int64_t t = a; t < b; t++) {
      double v = mt__mfg_filled(x, in, idx[t], fill);
      if (v != v || r != r)
        r = NAN;
      else if (max ? v > r : v < r)
        r = v;
    }
    for (int64_t t = a; t < b; t++) cnt += mt__mfg_filled(x, in, idx[t], fill) == r;
    for (int64_t t = a; t < b; t++) {
      int64_t i = idx[t];
      g[i] = in[i] ? (go[o] / cnt) * (mt__mfg_filled(x, in, i, fill) == r) : 0.0;
    }
    break;
  }
  case MFG_LOGSUMEXP: {
    double mx = -INFINITY, se = 0.0;
    for (int64_t t = a; t < b; t++) {
      double v = mt__mfg_filled(x, in, idx[t], -INFINITY);
      if (v > mx || v != v) mx = v;
    }
    double m = isinf(mx) ? 0.0 : mx;
    for (int64_t t = a; t < b; t++) se += exp(mt__mfg_filled(x, in, idx[t], -INFINITY) - m);
    double r = log(se) + (isinf(mx) ? 0.0 : mx);
    if (isinf(mx)) r = mx > 0 || se != se ? mx : log(se);
    for (int64_t t = a; t < b; t++) {
      int64_t i = idx[t];
      g[i] = in[i] ? go[o] * exp(x[i] - r) : 0.0;
    }
    break;
  }
  case MFG_NORM: {
    double pp = p->ord, fill = isinf(pp) && pp < 0 ? INFINITY : 0.0, cnt = 0.0;
    double nr = mt__mfg_pnorm_init(pp);
    for (int64_t t = a; t < b; t++)
      nr = mt__mfg_pnorm_acc(nr, mt__mfg_filled(x, in, idx[t], fill), pp);
    nr = mt__mfg_pnorm_fin(nr, pp);
    for (int64_t t = a; t < b; t++) cnt += fabs(mt__mfg_filled(x, in, idx[t], fill)) == nr;
    for (int64_t t = a; t < b; t++) {
      int64_t i = idx[t];
      g[i] = in[i] ? mt__mfg_pnorm_grad(x[i], nr, pp, go[o], cnt) : 0.0;
    }
    break;
  }
  case MFG_NORMALIZE: {
    /* torch: input filled with 0 (sum's identity) over norm(input, ord,
     * mask), whose masked-out elements are filled as norm's: +inf for
     * ord = -inf (a 0 there would make every norm 0), else 0 */
    double pp = p->ord, eps = p->eps, nr = mt__mfg_pnorm_init(pp), dot = 0, cnt = 0;
    double nfill = isinf(pp) && pp < 0 ? INFINITY : 0.0;
    for (int64_t t = a; t < b; t++)
      nr = mt__mfg_pnorm_acc(nr, mt__mfg_filled(x, in, idx[t], nfill), pp);
    nr = mt__mfg_pnorm_fin(nr, pp);
    double den = nr < eps ? eps : nr;
    for (int64_t t = a; t < b; t++) {
      int64_t i = idx[t];
      dot += go[i] * mt__mfg_filled(x, in, i, 0.0);
      cnt += fabs(mt__mfg_filled(x, in, i, nfill)) == nr;
    }
    /* den = maximum(norm, eps): its backward gives the norm the whole
     * gradient above eps and half of it at a tie (torch's maximum) */
    double gden = -dot / (den * den), gnr = nr > eps ? gden : nr == eps ? gden / 2 : 0.0;
    for (int64_t t = a; t < b; t++) {
      int64_t i = idx[t];
      g[i] = in[i] ? go[i] / den + mt__mfg_pnorm_grad(x[i], nr, pp, gnr, cnt) : 0.0;
    }
    break;
  }
  case MFG_VAR:
  case MFG_STD: { /* MFG-3: the masked-out deviations times a zero */
    double sum = 0.0, cnt = 0.0, tot = 0.0, dm = 0.0, corr = p->corr;
    for (int64_t t = a; t < b; t++) {
      sum += mt__mfg_filled(x, in, idx[t], 0.0);
      cnt += in[idx[t]];
    }
    for (int64_t t = a; t < b; t++) {
      double d = x[idx[t]] - sum / cnt;
      if (in[idx[t]]) tot += d * d;
    }
    double cc = cnt - corr;
    if (corr != 0 && cc < 0) cc = 0;
    double gvar = go[o] / cc;
    if (c == MFG_STD) gvar = go[o] / (2.0 * sqrt(tot / cc)) / cc;
    for (int64_t t = a; t < b; t++) {
      int64_t i = idx[t];
      double d = x[i] - sum / cnt;
      g[i] = 2.0 * d * (in[i] ? gvar : 0.0);
      dm -= g[i];
    }
    for (int64_t t = a; t < b; t++)
      if (in[idx[t]]) g[idx[t]] += dm / cnt;
    break;
  }
  case MFG_MEDIAN: { /* the element of rank (n - 1) / 2 among the masked-in non-NaN values
                        sorted stably (ties by position) */
    int64_t n = 0;
    for (int64_t t = a; t < b; t++) {
      int64_t i = idx[t];
      g[i] = 0.0;
      n += in[i] && x[i] == x[i];
    }
    for (int64_t t = a; t < b && n > 0; t++) {
      int64_t i = idx[t], rank = 0;
      if (!(in[i] && x[i] == x[i])) continue;
      for (int64_t u = a; u < b; u++) {
        int64_t j = idx[u];
        if (u != t && in[j] && x[j] == x[j] && (x[j] < x[i] || (x[j] == x[i] && u < t))) rank++;
      }
      if (rank == (n - 1) / 2) g[i] = go[o];
    }
    break;
  }
  case MFG_CUMSUM:
  case MFG_CUMPROD: {
    int prod = c == MFG_CUMPROD;
    double fill = prod ? 1.0 : 0.0;
    for (int64_t t = a; t < b; t++) {
      double acc = 0;
      for (int64_t u = t; u < b; u++) {
        double term = go[idx[u]];
        if (prod)
          for (int64_t k = a; k <= u; k++)
            if (k != t) term *= mt__mfg_filled(x, in, idx[k], fill);
        acc += term;
      }
      g[idx[t]] = in[idx[t]] ? acc : 0.0;
    }
    break;
  }
  case MFG_SOFTMAX:
  case MFG_LOG_SOFTMAX:
  case MFG_SOFTMIN: {
    double sgnz = c == MFG_SOFTMIN ? -1.0 : 1.0, mx = -INFINITY, se = 0, sg = 0, sgy = 0;
    for (int64_t t = a; t < b; t++) {
      double z = sgnz * mt__mfg_filled(x, in, idx[t], sgnz * -INFINITY);
      if (z > mx || z != z) mx = z;
    }
    for (int64_t t = a; t < b; t++)
      se += exp(sgnz * mt__mfg_filled(x, in, idx[t], sgnz * -INFINITY) - mx);
    for (int64_t t = a; t < b; t++) {
      int64_t i = idx[t];
      double y = exp(sgnz * mt__mfg_filled(x, in, i, sgnz * -INFINITY) - mx) / se;
      sg += go[i];
      sgy += go[i] * y;
    }
    for (int64_t t = a; t < b; t++) {
      int64_t i = idx[t];
      double y = exp(sgnz * mt__mfg_filled(x, in, i, sgnz * -INFINITY) - mx) / se;
      double gi = c == MFG_LOG_SOFTMAX ? go[i] - y * sg : sgnz * y * (go[i] - sgy);
      g[i] = in[i] ? gi : 0.0;
    }
    break;
  }
  default: break;
  }
  for (int64_t t = a; t < b; t++) g[idx[t]] = mt_hd_round(p->dtype[0], g[idx[t]]);
}

/* Group o of the call: mt__mfg_one, or masked_logaddexp's element o (the
 * filled operands promoted to ct; grad / (1 + exp(other - self)), each
 * selected by its operand's mask). */
MT_HD void mt_mfg_group(const mt_mfg_par *p, const double *const *x, const uint8_t *const *in,
                        const double *go, const int64_t *off, const int64_t *idx,
                        double *const *g, int64_t o) {
  if (p->code != MFG_LOGADDEXP) {
    mt__mfg_one(p, x[0], in[0], go, off, idx, g[0], o);
    return;
  }
  double va = in[0][o] ? mt_hd_round(p->ct, x[0][o]) : p->fill[0];
  double vb = in[1][o] ? mt_hd_round(p->ct, x[1][o]) : p->fill[1];
  if (g[0]) g[0][o] = mt_hd_round(p->dtype[0], in[0][o] ? go[o] / (1.0 + exp(vb - va)) : 0.0);
  if (g[1]) g[1][o] = mt_hd_round(p->dtype[1], in[1][o] ? go[o] / (1.0 + exp(va - vb)) : 0.0);
}

#endif /* MT_GRAD_MASKED_FN_MATH_H */

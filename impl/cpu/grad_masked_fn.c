/* grad_masked_fn.c - CPU backward kernels of torch.masked's functional ops
 * on a plain tensor and a bool mask (family masked_fn; golden format 3's
 * gradient cases in grad_masked_fn.h5; spec/SEMANTICS.md MFG-*).
 *
 * torch.masked builds each op as torch.where(mask, input, fill) followed by
 * the plain op (MFN-2..6), so the gradient is the plain op's derivative at
 * the filled input, selected by the mask (MFG-2): exactly +0.0 at every
 * masked-out position, and nothing of the masked-out data reaches a
 * masked-in one. Except masked.var and masked.std, whose backward
 * multiplies the masked-out deviations (input - mean) by a zero (MFG-3): a
 * non-finite deviation gives NaN there and, through the mean, at the
 * slice's masked-in positions. The derivatives follow torch's formulas
 * where they differ from the textbook (prod's zero handling, amax/amin's
 * ties, the p-norms), computed in double (also under dtype=, MFN-8) and
 * rounded once to the input's dtype; the bool masks get no gradient.
 * A CSR input's gradient (amax, amin, mean) keeps the input's structure
 * (MFG-1); torch refuses the backward of masked.sum/prod of a CSR input
 * ("derivative for aten::_sparse_csr_sum is not implemented"). */
#include "grad_sparse.h"

#include "sps_util.h"

/* ---- the call: input, mask, dims -------------------------------------------------- */

typedef struct mfg {
  mt__gs_ctx c;
  const mt_tensor *x;
  const double *v;   /* the input, densified */
  const double *go;  /* upstream gradient 0, densified */
  double *g;         /* the input's gradient */
  uint8_t *in;       /* 1 = masked-in (the mask broadcast to the input) */
  int64_t n;
  int red[MT_MAX_DIMS]; /* reduced dims (reductions) */
  int dim;              /* the dim (scans, softmax, normalize, median) */
  int64_t nout;         /* elements of the reduced result */
} mfg;

/* mask k (a bool tensor broadcast to input xi) into in */
static mt_status mfg_mask(mfg *f, int km, int xi, uint8_t *in, mt_error *err) {
  const mt_tensor *x = f->c.in[xi];
  int64_t n = f->c.n[xi];
  if (km >= f->c.n_in) {
    memset(in, 1, (size_t)n);
    return MT_OK;
  }
  const mt_tensor *m = f->c.in[km];
  if (m->ndim > x->ndim)
    return mt_err(err, MT_INDEX_OUT_OF_RANGE, "%s backward: the mask has %d dims, the input %d",
                  f->c.name, m->ndim, x->ndim);
  for (int64_t i = 0; i < n; i++)
    in[i] = f->c.x[km][mt__gs_bcast_src(i, x->ndim, x->shape, m->ndim, m->shape)] != 0.0;
  return MT_OK;
}

static void mfg_close(mfg *f) {
  free(f->in);
  mt__gs_close(&f->c);
}

/* The call of a one-input op: [input] or [input, mask]; dims from the
 * dim kwarg (reductions: absent or () = all; dim_default: the dim of an
 * op that takes one, INT64_MIN = required). */
static mt_status mfg_open(mfg *f, mt_call *call, mt_op op, mt_error *err) {
  mt_status st;
  memset(f, 0, sizeof *f);
  if ((st = mt__gs_open(&f->c, call, op, err)) != MT_OK) return st;
  f->x = f->c.in[0];
  f->v = f->c.x[0];
  f->go = f->c.go[0];
  f->n = f->c.n[0];
  if (!mt__cpu_grad_sparse_takes(call)) {
    st = mt_err(err, MT_NOT_SUPPORTED, "%s backward: a MaskedTensor input is not implemented by "
                "the CPU backend (torch.masked takes it; these cases pass a plain tensor and a "
                "mask)", f->c.name);
    goto fail;
  }
  if (!mt__gs_float_input(&f->c, 0)) {
    st = mt_err(err, MT_NOT_SUPPORTED, "%s backward: inputs/0 has dtype %s; the CPU backend "
                "differentiates float32 and float64", f->c.name, mt_dtype_name(f->x->dtype));
    goto fail;
  }
  if (!(f->in = malloc((size_t)(f->n ? f->n : 1)))) {
    st = mt_err(err, MT_OUT_OF_MEMORY, "%s backward: no memory for the mask", f->c.name);
    goto fail;
  }
  if ((st = mfg_mask(f, 1, 0, f->in, err)) != MT_OK) goto fail;
  if ((st = mt__gs_want(&f->c, 0, err)) != MT_OK) goto fail;
  f->g = f->c.g[0];
  return MT_OK;
fail:
  mfg_close(f);
  return st;
}

/* The reduced dims (absent or () = every dim) and the result's numel. */
static mt_status mfg_reduce_dims(mfg *f, mt_error *err) {
  int nred;
  mt_status st = sps_dims(f->c.name, f->c.call->kw, f->x->ndim, f->red, &nred, err);
  if (st != MT_OK) return st;
  if (nred <= 0)
    for (int d = 0; d < f->x->ndim; d++) f->red[d] = 1;
  f->nout = 1;
  for (int d = 0; d < f->x->ndim; d++)
    if (!f->red[d]) f->nout *= f->x->shape[d];
  return mt__gs_go_numel(&f->c, f->nout, err);
}

/* The one dim of a scan/softmax/normalize/median (dflt when absent). */
static mt_status mfg_one_dim(mfg *f, int64_t dflt, mt_error *err) {
  mt_status st = sps_wrap_dim(f->c.name, mt_kw_int(f->c.call->kw, "dim", dflt), f->x->ndim,
                              &f->dim, err);
  if (st != MT_OK || f->c.op == MT_OP_masked_median) return st;
  return mt__gs_go_numel(&f->c, f->n, err); /* a scan, softmax or normalize: x's shape */
}

static mt_status mfg_emit(mfg *f, mt_error *err) {
  mt__gs_pattern p[MT__GS_MAX_IN];
  for (int k = 0; k < f->c.n_in; k++)
    p[k] = mt__sps_is_plain(f->c.in[k]) ? MT__GS_IN : MT__GS_DENSE;
  return mt__gs_emit(&f->c, p, err);
}

/* per-result-element scratch of nout doubles (zeroed) */
static mt_status scratch(mfg *f, double **out, mt_error *err) {
  *out = calloc((size_t)(f->nout ? f->nout : 1), sizeof(double));
  return *out ? MT_OK
              : mt_err(err, MT_OUT_OF_MEMORY, "%s backward: no memory", f->c.name);
}

static double sgn_of(double v) { return v > 0 ? 1.0 : v < 0 ? -1.0 : v == v ? 0.0 : v; }

/* the filled input: x where masked-in, fill elsewhere */
static double filled(const mfg *f, int64_t i, double fill) { return f->in[i] ? f->v[i] : fill; }
static int64_t out_of(const mfg *f, int64_t i) {
  return mt__gs_reduced_index(i, f->x->ndim, f->x->shape, f->red);
}

/* ---- reductions --------------------------------------------------------------------- */

typedef mt_status (*mfg_fn)(mfg *f, mt_error *err);

static mt_status g_sum(mfg *f, mt_error *err) {
  mt_status st = mfg_reduce_dims(f, err);
  if (st != MT_OK) return st;
  for (int64_t i = 0; i < f->n; i++) f->g[i] = f->in[i] ? f->go[out_of(f, i)] : 0.0;
  return MT_OK;
}

static mt_status g_mean(mfg *f, mt_error *err) {
  double *cnt;
  mt_status st = mfg_reduce_dims(f, err);
  if (st == MT_OK) st = scratch(f, &cnt, err);
  if (st != MT_OK) return st;
  for (int64_t i = 0; i < f->n; i++) cnt[out_of(f, i)] += f->in[i];
  for (int64_t i = 0; i < f->n; i++) {
    int64_t o = out_of(f, i);
    f->g[i] = f->in[i] ? f->go[o] / cnt[o] : 0.0;
  }
  free(cnt);
  return MT_OK;
}

/* torch's prod_backward: without a zero anywhere in the (filled) input,
 * go * result / x; else the product of the slice's other elements */
static mt_status g_prod(mfg *f, mt_error *err) {
  double *r;
  mt_status st = mfg_reduce_dims(f, err);
  if (st == MT_OK) st = scratch(f, &r, err);
  if (st != MT_OK) return st;
  int zero = 0;
  for (int64_t o = 0; o < f->nout; o++) r[o] = 1.0;
  for (int64_t i = 0; i < f->n; i++) {
    double v = filled(f, i, 1.0);
    r[out_of(f, i)] *= v;
    zero |= v == 0.0;
  }
  for (int64_t i = 0; i < f->n; i++) {
    if (!f->in[i]) {
      f->g[i] = 0.0;
      continue;
    }
    int64_t o = out_of(f, i);
    if (!zero) {
      f->g[i] = f->go[o] * (r[o] / f->v[i]);
      continue;
    }
    double others = 1.0;
    for (int64_t j = 0; j < f->n; j++)
      if (j != i && out_of(f, j) == o) others *= filled(f, j, 1.0);
    f->g[i] = f->go[o] * others;
  }
  free(r);
  return MT_OK;
}

/* amax / amin: the upstream gradient shared by the elements equal to the
 * result, (go / count) * (x == result) as torch computes it */
static mt_status g_amaxmin(mfg *f, int max, mt_error *err) {
  double *r, *cnt;
  double fill = max ? -INFINITY : INFINITY;
  mt_status st = mfg_reduce_dims(f, err);
  if (st == MT_OK) st = scratch(f, &r, err);
  if (st != MT_OK) return st;
  if ((st = scratch(f, &cnt, err)) != MT_OK) {
    free(r);
    return st;
  }
  for (int64_t o = 0; o < f->nout; o++) r[o] = fill;
  for (int64_t i = 0; i < f->n; i++) {
    double v = filled(f, i, fill), *ro = &r[out_of(f, i)];
    if (v != v || *ro != *ro)
      *ro = NAN;
    else if (max ? v > *ro : v < *ro)
      *ro = v;
  }
  for (int64_t i = 0; i < f->n; i++) cnt[out_of(f, i)] += filled(f, i, fill) == r[out_of(f, i)];
  for (int64_t i = 0; i < f->n; i++) {
    int64_t o = out_of(f, i);
    f->g[i] = f->in[i] ? (f->go[o] / cnt[o]) * (filled(f, i, fill) == r[o]) : 0.0;
  }
  free(r);
  free(cnt);
  return MT_OK;
}
static mt_status g_amax(mfg *f, mt_error *err) { return g_amaxmin(f, 1, err); }
static mt_status g_amin(mfg *f, mt_error *err) { return g_amaxmin(f, 0, err); }

/* logsumexp: go * exp(x - result) */
static mt_status g_logsumexp(mfg *f, mt_error *err) {
  double *mx, *se;
  mt_status st = mfg_reduce_dims(f, err);
  if (st == MT_OK) st = scratch(f, &mx, err);
  if (st != MT_OK) return st;
  if ((st = scratch(f, &se, err)) != MT_OK) {
    free(mx);
    return st;
  }
  for (int64_t o = 0; o < f->nout; o++) mx[o] = -INFINITY;
  for (int64_t i = 0; i < f->n; i++) {
    double v = filled(f, i, -INFINITY);
    if (v > mx[out_of(f, i)] || v != v) mx[out_of(f, i)] = v;
  }
  for (int64_t i = 0; i < f->n; i++) {
    int64_t o = out_of(f, i);
    double m = isinf(mx[o]) ? 0.0 : mx[o];
    se[o] += exp(filled(f, i, -INFINITY) - m);
  }
  for (int64_t i = 0; i < f->n; i++) {
    int64_t o = out_of(f, i);
    double r = log(se[o]) + (isinf(mx[o]) ? 0.0 : mx[o]);
    if (isinf(mx[o])) r = mx[o] > 0 || se[o] != se[o] ? mx[o] : log(se[o]);
    f->g[i] = f->in[i] ? f->go[o] * exp(f->v[i] - r) : 0.0;
  }
  free(mx);
  free(se);
  return MT_OK;
}

/* ---- the vector norm (masked.norm, normalize) ------------------------------------- */

/* the p-norm of the slice elements (already filled: 0 masked out) */
static double pnorm_acc(double acc, double v, double p) {
  double a = fabs(v);
  if (isinf(p)) return p > 0 ? (a > acc || a != a ? a : acc) : (a < acc || a != a ? a : acc);
  if (p == 0) return acc + (v != 0.0);
  return acc + pow(a, p);
}
static double pnorm_init(double p) { return isinf(p) ? (p > 0 ? 0.0 : INFINITY) : 0.0; }
static double pnorm_fin(double acc, double p) {
  if (isinf(p) || p == 0) return acc;
  if (p == 1) return acc;
  return pow(acc, 1.0 / p);
}

/* torch's norm_backward: d norm / d x_i (times gr, the norm's upstream
 * gradient) for element value v of a slice of norm nr (count: the slice's
 * elements equal to the norm, for p = +-inf) */
static double pnorm_grad(double v, double nr, double p, double gr, double count) {
  if (p == 0) return 0.0;
  if (p == 1) return sgn_of(v) * gr;
  if (p == 2) return nr == 0 ? 0.0 * v : gr * (v / nr);
  if (isinf(p)) return fabs(v) == nr ? sgn_of(v) * gr / count : 0.0;
  if (p < 1) {
    double s = v == 0 ? 0.0 : sgn_of(v) * pow(fabs(v), p - 1);
    return s * gr * pow(nr, 1 - p);
  }
  double sv = nr == 0 ? 0.0 : gr / pow(nr, p - 1);
  if (p < 2) return sgn_of(v) * pow(fabs(v), p - 1) * sv;
  return v * pow(fabs(v), p - 2) * sv;
}

static double kw_ord(const mfg *f, double dflt) {
  return mt_kw_float(f->c.call->kw, "ord", dflt);
}

/* masked.norm(ord, dim): the 0-filled input's vector norm */
static mt_status g_norm(mfg *f, mt_error *err) {
  double *nr, *cnt, p = kw_ord(f, 2.0);
  mt_status st = mfg_reduce_dims(f, err);
  if (st == MT_OK) st = scratch(f, &nr, err);
  if (st != MT_OK) return st;
  if ((st = scratch(f, &cnt, err)) != MT_OK) {
    free(nr);
    return st;
  }
  double fill = isinf(p) && p < 0 ? INFINITY : 0.0;
  for (int64_t o = 0; o < f->nout; o++) nr[o] = pnorm_init(p);
  for (int64_t i = 0; i < f->n; i++)
    nr[out_of(f, i)] = pnorm_acc(nr[out_of(f, i)], filled(f, i, fill), p);
  for (int64_t o = 0; o < f->nout; o++) nr[o] = pnorm_fin(nr[o], p);
  for (int64_t i = 0; i < f->n; i++)
    cnt[out_of(f, i)] += fabs(filled(f, i, fill)) == nr[out_of(f, i)];
  for (int64_t i = 0; i < f->n; i++) {
    int64_t o = out_of(f, i);
    f->g[i] = f->in[i] ? pnorm_grad(f->v[i], nr[o], p, f->go[o], cnt[o]) : 0.0;
  }
  free(nr);
  free(cnt);
  return MT_OK;
}

/* masked.normalize(ord, dim, eps): x / clamp(norm, min=eps), over the
 * 0-filled input; the clamp passes the gradient where norm >= eps */
static mt_status g_normalize(mfg *f, mt_error *err) {
  double p = kw_ord(f, 2.0), eps = mt_kw_float(f->c.call->kw, "eps", 1e-12);
  mt_status st = mfg_one_dim(f, 0, err);
  if (st != MT_OK) return st;
  const mt_tensor *x = f->x;
  int64_t outer = x->ndim ? mt__gs_span(x->shape, 0, f->dim) : 1,
          len = x->ndim ? x->shape[f->dim] : 1,
          inner = x->ndim ? mt__gs_span(x->shape, f->dim + 1, x->ndim) : 1;
  for (int64_t o = 0; o < outer; o++)
    for (int64_t q = 0; q < inner; q++) {
      int64_t base = o * len * inner + q;
      double nr = pnorm_init(p), dot = 0, cnt = 0;
      for (int64_t j = 0; j < len; j++) nr = pnorm_acc(nr, filled(f, base + j * inner, 0.0), p);
      nr = pnorm_fin(nr, p);
      double den = nr < eps ? eps : nr;
      for (int64_t j = 0; j < len; j++) {
        int64_t i = base + j * inner;
        dot += f->go[i] * filled(f, i, 0.0);
        cnt += fabs(filled(f, i, 0.0)) == nr;
      }
      double gden = -dot / (den * den), gnr = nr >= eps ? gden : 0.0;
      for (int64_t j = 0; j < len; j++) {
        int64_t i = base + j * inner;
        f->g[i] = f->in[i] ? f->go[i] / den + pnorm_grad(f->v[i], nr, p, gnr, cnt) : 0.0;
      }
    }
  return MT_OK;
}

/* masked.var / std (correction): torch.masked's formula run backward
 * (MFG-3): the deviations x - mean of every element, a zero upstream
 * gradient at the masked-out ones (NaN where the deviation is not finite),
 * and the mean's gradient back to the masked-in ones */
static mt_status g_var_any(mfg *f, int take_sqrt, mt_error *err) {
  double *sum, *cnt, *tot, *dm;
  double corr = mt_kw_float(f->c.call->kw, "correction",
                            mt_kw_find(f->c.call->kw, "unbiased")
                                ? (mt_kw_int(f->c.call->kw, "unbiased", 1) ? 1.0 : 0.0)
                                : 1.0);
  mt_status st = mfg_reduce_dims(f, err);
  if (st != MT_OK) return st;
  double **bufs[] = {&sum, &cnt, &tot, &dm};
  for (size_t b = 0; b < 4; b++)
    if ((st = scratch(f, bufs[b], err)) != MT_OK) {
      for (size_t q = 0; q < b; q++) free(*bufs[q]);
      return st;
    }
  for (int64_t i = 0; i < f->n; i++) {
    int64_t o = out_of(f, i);
    sum[o] += filled(f, i, 0.0);
    cnt[o] += f->in[i];
  }
  for (int64_t i = 0; i < f->n; i++) {
    int64_t o = out_of(f, i);
    double d = f->v[i] - sum[o] / cnt[o];
    if (f->in[i]) tot[o] += d * d;
  }
  for (int64_t i = 0; i < f->n; i++) {
    int64_t o = out_of(f, i);
    double c = cnt[o] - corr;
    if (corr != 0 && c < 0) c = 0;
    double gvar = f->go[o] / c; /* d(total / count) */
    if (take_sqrt) gvar = f->go[o] / (2.0 * sqrt(tot[o] / c)) / c;
    double d = f->v[i] - sum[o] / cnt[o];
    f->g[i] = 2.0 * d * (f->in[i] ? gvar : 0.0); /* d(x * x), selected by the mask */
    dm[o] -= f->g[i];
  }
  for (int64_t i = 0; i < f->n; i++)
    if (f->in[i]) f->g[i] += dm[out_of(f, i)] / cnt[out_of(f, i)];
  for (size_t b = 0; b < 4; b++) free(*bufs[b]);
  return MT_OK;
}
static mt_status g_var(mfg *f, mt_error *err) { return g_var_any(f, 0, err); }
static mt_status g_std(mfg *f, mt_error *err) { return g_var_any(f, 1, err); }

/* masked.median(dim): torch.nanmedian of the NaN-filled input; the
 * upstream gradient goes to the element it picks (the lower middle of the
 * slice's masked-in non-NaN values, sorted, ties by position) */
static mt_status g_median(mfg *f, mt_error *err) {
  mt_status st = mfg_one_dim(f, -1, err);
  if (st != MT_OK) return st;
  const mt_tensor *x = f->x;
  int64_t outer = x->ndim ? mt__gs_span(x->shape, 0, f->dim) : 1,
          len = x->ndim ? x->shape[f->dim] : 1,
          inner = x->ndim ? mt__gs_span(x->shape, f->dim + 1, x->ndim) : 1;
  if ((st = mt__gs_go_numel(&f->c, outer * inner, err)) != MT_OK) return st;
  int64_t *idx = malloc(sizeof *idx * (size_t)(len ? len : 1));
  if (!idx) return mt_err(err, MT_OUT_OF_MEMORY, "%s backward: no memory", f->c.name);
  for (int64_t o = 0; o < outer; o++)
    for (int64_t q = 0; q < inner; q++) {
      int64_t base = o * len * inner + q, n = 0;
      for (int64_t j = 0; j < len; j++) {
        int64_t i = base + j * inner;
        if (f->in[i] && f->v[i] == f->v[i]) idx[n++] = i;
      }
      for (int64_t a = 1; a < n; a++) /* insertion sort by value, stable */
        for (int64_t b = a; b > 0 && f->v[idx[b - 1]] > f->v[idx[b]]; b--) {
          int64_t t = idx[b];
          idx[b] = idx[b - 1];
          idx[b - 1] = t;
        }
      if (n > 0) f->g[idx[(n - 1) / 2]] = f->go[o * inner + q];
    }
  free(idx);
  return MT_OK;
}

/* ---- scans and softmax along one dim ---------------------------------------------- */

/* cumsum: the reversed cumulative sum of go; cumprod: sum over j >= i of
 * go_j times the product of the filled elements up to j but i */
static mt_status g_scan(mfg *f, int prod, mt_error *err) {
  mt_status st = mfg_one_dim(f, 0, err);
  if (st != MT_OK) return st;
  const mt_tensor *x = f->x;
  int64_t outer = mt__gs_span(x->shape, 0, f->dim), len = x->ndim ? x->shape[f->dim] : 1,
          inner = x->ndim ? mt__gs_span(x->shape, f->dim + 1, x->ndim) : 1;
  double fill = prod ? 1.0 : 0.0;
  for (int64_t o = 0; o < outer; o++)
    for (int64_t q = 0; q < inner; q++) {
      int64_t base = o * len * inner + q;
      for (int64_t a = 0; a < len; a++) {
        int64_t i = base + a * inner;
        double acc = 0;
        for (int64_t b = a; b < len; b++) {
          double term = f->go[base + b * inner];
          if (prod)
            for (int64_t k = 0; k <= b; k++)
              if (k != a) term *= filled(f, base + k * inner, fill);
          acc += term;
        }
        f->g[i] = f->in[i] ? acc : 0.0;
      }
    }
  return MT_OK;
}
static mt_status g_cumsum(mfg *f, mt_error *err) { return g_scan(f, 0, err); }
static mt_status g_cumprod(mfg *f, mt_error *err) { return g_scan(f, 1, err); }

/* softmax (kind 0), log_softmax (1), softmin (2) of the -inf (softmin
 * +inf) filled input: torch's softmax_backward y * (go - sum(go * y)) and
 * log_softmax_backward go - exp(y) * sum(go), over the whole line */
static mt_status g_softmax_any(mfg *f, int kind, mt_error *err) {
  mt_status st = mfg_one_dim(f, 0, err);
  if (st != MT_OK) return st;
  const mt_tensor *x = f->x;
  int64_t outer = x->ndim ? mt__gs_span(x->shape, 0, f->dim) : 1,
          len = x->ndim ? x->shape[f->dim] : 1,
          inner = x->ndim ? mt__gs_span(x->shape, f->dim + 1, x->ndim) : 1;
  double sgnz = kind == 2 ? -1.0 : 1.0;
  for (int64_t o = 0; o < outer; o++)
    for (int64_t q = 0; q < inner; q++) {
      int64_t base = o * len * inner + q;
      double mx = -INFINITY, se = 0, sg = 0, sgy = 0;
      for (int64_t j = 0; j < len; j++) {
        double z = sgnz * filled(f, base + j * inner, sgnz * -INFINITY);
        if (z > mx || z != z) mx = z;
      }
      for (int64_t j = 0; j < len; j++)
        se += exp(sgnz * filled(f, base + j * inner, sgnz * -INFINITY) - mx);
      for (int64_t j = 0; j < len; j++) {
        int64_t i = base + j * inner;
        double y = exp(sgnz * filled(f, i, sgnz * -INFINITY) - mx) / se;
        sg += f->go[i];
        sgy += f->go[i] * y;
      }
      for (int64_t j = 0; j < len; j++) {
        int64_t i = base + j * inner;
        double y = exp(sgnz * filled(f, i, sgnz * -INFINITY) - mx) / se;
        double g = kind == 1 ? f->go[i] - y * sg : sgnz * y * (f->go[i] - sgy);
        f->g[i] = f->in[i] ? g : 0.0;
      }
    }
  return MT_OK;
}
static mt_status g_softmax(mfg *f, mt_error *err) { return g_softmax_any(f, 0, err); }
static mt_status g_log_softmax(mfg *f, mt_error *err) { return g_softmax_any(f, 1, err); }
static mt_status g_softmin(mfg *f, mt_error *err) { return g_softmax_any(f, 2, err); }

/* ---- the op table ------------------------------------------------------------------- */

/* MFG_OP(op, gradient, CSR input: 1 = its gradient keeps the structure,
 * 0 = refused) */
#define MFG_OPS(X)                                                                  \
  X(masked_sum, g_sum, 0) X(masked_prod, g_prod, 0) X(masked_amax, g_amax, 1)       \
  X(masked_amin, g_amin, 1) X(masked_mean, g_mean, 1) X(masked_median, g_median, 0) \
  X(masked_norm, g_norm, 0) X(masked_var, g_var, 0) X(masked_std, g_std, 0)         \
  X(masked_logsumexp, g_logsumexp, 0) X(masked_cumsum, g_cumsum, 0)                 \
  X(masked_cumprod, g_cumprod, 0) X(masked_softmax, g_softmax, 0)                   \
  X(masked_log_softmax, g_log_softmax, 0) X(masked_softmin, g_softmin, 0)           \
  X(masked_normalize, g_normalize, 0)

static mt_status mfg_run(mt_call *call, mt_op op, mfg_fn fn, int csr_ok, mt_error *err) {
  mfg f;
  mt_status st = mfg_open(&f, call, op, err);
  if (st != MT_OK) return st;
  if (mt__sps_is_plain(f.x) && !(csr_ok && f.x->kind == MT_KIND_CSR)) {
    if (f.x->kind == MT_KIND_CSR && (op == MT_OP_masked_sum || op == MT_OP_masked_prod))
      st = mt_err(err, MT_LAYOUT_MISMATCH, "%s backward: derivative for aten::_sparse_csr_%s is "
                  "not implemented", f.c.name, op == MT_OP_masked_sum ? "sum" : "prod");
    else
      st = mt_err(err, MT_NOT_SUPPORTED, "%s backward: a %s input is not implemented by the CPU "
                  "backend", f.c.name, mt_kind_name(f.x->kind));
    goto out;
  }
  if ((st = fn(&f, err)) != MT_OK) goto out;
  st = mfg_emit(&f, err);
out:
  mfg_close(&f);
  return st;
}

#define MFG_DEF(name, fn, csr_ok)                                     \
  mt_status mt_cpu_grad_##name(mt_call *call, mt_error *err) {        \
    return mfg_run(call, MT_OP_##name, fn, csr_ok, err);              \
  }
MFG_OPS(MFG_DEF)
#undef MFG_DEF

/* masked.logaddexp(input, other[, input_mask, other_mask]): the -inf
 * filled operands' logaddexp; torch's grad / (1 + exp(other - self)) and
 * its mirror, selected by each operand's mask */
mt_status mt_cpu_grad_masked_logaddexp(mt_call *call, mt_error *err) {
  mt__gs_ctx c;
  uint8_t *in[2] = {NULL, NULL};
  mt_status st = mt__gs_open(&c, call, MT_OP_masked_logaddexp, err);
  if (st != MT_OK) return st;
  if (!mt__cpu_grad_sparse_takes(call)) {
    mt__gs_close(&c);
    return mt_err(err, MT_NOT_SUPPORTED, "masked_logaddexp backward: a MaskedTensor input is "
                  "not implemented by the CPU backend");
  }
  mfg f;
  memset(&f, 0, sizeof f);
  f.c = c;
  if (c.n_in < 2 || !mt_shape_equal(c.in[0], c.in[1]) || !mt_shape_equal(c.in[0], c.gt[0])) {
    st = mt_err(err, MT_NOT_SUPPORTED, "%s backward: broadcast operands are not implemented by "
                "the CPU backend", c.name);
    goto out;
  }
  int64_t n = c.n[0];
  for (int k = 0; k < 2; k++) {
    if (!(in[k] = malloc((size_t)(n ? n : 1)))) {
      st = mt_err(err, MT_OUT_OF_MEMORY, "%s backward: no memory", c.name);
      goto out;
    }
    if ((st = mfg_mask(&f, k + 2, k, in[k], err)) != MT_OK) goto out;
    if (mt__gs_float_input(&f.c, k) && (st = mt__gs_want(&f.c, k, err)) != MT_OK) goto out;
  }
  for (int64_t i = 0; i < n; i++) {
    double a = in[0][i] ? f.c.x[0][i] : -INFINITY, b = in[1][i] ? f.c.x[1][i] : -INFINITY;
    double go = f.c.go[0][i];
    if (f.c.g[0]) f.c.g[0][i] = in[0][i] ? go / (1.0 + exp(b - a)) : 0.0;
    if (f.c.g[1]) f.c.g[1][i] = in[1][i] ? go / (1.0 + exp(a - b)) : 0.0;
  }
  st = mfg_emit(&f, err);
out:
  free(in[0]);
  free(in[1]);
  mt__gs_close(&f.c);
  return st;
}

/* grad_reduce.c - CPU backward kernels of the MaskedTensor reductions
 * (golden format 3's gradient cases; spec/SEMANTICS.md GRAD-*; the
 * forward is reduce.c, RED-1 .. RED-7).
 *
 * torch's MaskedTensor reduces through torch.masked: the input with its
 * masked-out elements replaced by the op's identity (v = where(mask, x,
 * fill)), reduced by the plain op, so the gradient is the plain op's
 * derivative at v, under the input's mask (GRAD-1: the gradient carries
 * the input's mask; its data under a false mask is unspecified, left 0
 * here). With o the output element an input element reduces into and g
 * the upstream gradient:
 *   sum   g[o]
 *   mean  g[o] / count[o], count = masked-in elements of the slice
 *   amax, amin   (g[o] / ties[o]) * (v == r[o]): torch spreads the
 *         gradient evenly over the elements equal to the result (ties;
 *         a masked-out fill that equals the result counts too); a NaN
 *         result has no tie, so the slice gets NaN
 *   prod  no zero in the whole of v: g[o] * (r[o] / v), so one NaN makes
 *         the slice NaN; otherwise torch's zero-safe path: g[o] times the
 *         product of the slice's elements before and after (exclusive
 *         cumulative products), masked-out elements count as 1
 *   var   torch.masked's steps (RED-5): mean = sum / count, d = x - mean,
 *         var = sum(d^2) / max(count - 1, 0); backward of each step:
 *         gd = (g / den) * 2d under the mask, then the mean's share
 *         -sum(gd) / count; so one masked-in element (den 0) gives NaN
 *   std   var's with g / (2 * std) for g.
 * Values are computed in double and rounded once to the input's dtype
 * (the gradient's dtype, also under sum/mean/prod's dtype=). A call
 * without a masked input (torch.sum of a COO tensor) is handed on to
 * the sparse engine (mt__cpu_grad_sparse, grad_sparse.c). */
#include "grad_util.h"

typedef enum { GR_SUM, GR_MEAN, GR_PROD, GR_AMIN, GR_AMAX, GR_VAR, GR_STD } gr_kind;

/* Which output element each input element reduces into. */
typedef struct {
  int64_t n, no; /* input and output elements */
  int64_t *o;    /* o[i]: the output element of input element i (row-major) */
  int red[MT_MAX_DIMS];
  int all; /* no dim: every element into one */
} gr_geom;

static void geom_free(gr_geom *gm) {
  free(gm->o);
  gm->o = NULL;
}

/* The reduced dims of the call's `dim` (absent: all; torch wraps the dims
 * of a 0-d tensor as 1-d, and a 0-d tensor reduces to itself), and o[]. */
static mt_status geom_of(const char *op, const mt_tensor *x, const mt_kwargs *kw, gr_geom *gm,
                         mt_error *err) {
  const mt_kwarg *a = mt_kw_find(kw, "dim");
  int ndim_eff = x->ndim > 0 ? x->ndim : 1;
  memset(gm, 0, sizeof *gm);
  if (!a) {
    gm->all = 1;
    for (int d = 0; d < x->ndim; d++) gm->red[d] = 1;
  } else {
    int n = a->type == MT_KW_INT ? 1 : a->n;
    if (n == 0)
      return mt_err(err, MT_INVALID_ARGUMENT, "%s backward: dim=() is refused by the forward",
                    op);
    for (int j = 0; j < n; j++) {
      int64_t d = a->type == MT_KW_INT ? a->i : a->ints[j];
      if (d < -ndim_eff || d >= ndim_eff)
        return mt_err(err, MT_INDEX_OUT_OF_RANGE,
                      "%s backward: Dimension out of range (expected to be in range of [%d, %d], "
                      "but got %lld)", op, -ndim_eff, ndim_eff - 1, (long long)d);
      int w = (int)(d < 0 ? d + ndim_eff : d);
      if (gm->red[w])
        return mt_err(err, MT_INVALID_ARGUMENT,
                      "%s backward: dim=%lld appears multiple times in the list of dims", op,
                      (long long)d);
      gm->red[w] = 1;
    }
    if (x->ndim == 0) gm->red[0] = 0;
  }
  gm->n = mt_numel(x);
  gm->no = 1;
  for (int d = 0; d < x->ndim; d++)
    if (!gm->red[d]) gm->no *= x->shape[d];
  gm->o = malloc((size_t)(gm->n > 0 ? gm->n : 1) * sizeof(int64_t));
  if (!gm->o)
    return mt_err(err, MT_OUT_OF_MEMORY, "%s backward: no memory for %lld indices", op,
                  (long long)gm->n);
  int64_t idx[MT_MAX_DIMS] = {0};
  for (int64_t i = 0; i < gm->n; i++) {
    int64_t o = 0;
    for (int d = 0; d < x->ndim; d++)
      if (!gm->red[d]) o = o * x->shape[d] + idx[d];
    gm->o[i] = o;
    mt__grad_next(idx, x->ndim, x->shape);
  }
  return MT_OK;
}

/* prod's zero-safe path (torch's prod_safe_zeros_backward): ex[i] = the
 * product of the elements of i's slice before it times those after it.
 * The slices run along one dim (len elements `stride` apart), or, for a
 * full reduction, over the whole row-major tensor. */
static void prod_exclusive(const mt_tensor *x, const gr_geom *gm, const double *v, double *ex) {
  int d = -1;
  for (int k = 0; k < x->ndim && !gm->all; k++)
    if (gm->red[k]) d = k;
  int64_t len = gm->n, stride = 1, outer = 1;
  if (d >= 0) {
    len = x->shape[d];
    stride = mt_shape_numel(x->ndim - d - 1, x->shape + d + 1);
    outer = mt_shape_numel(d, x->shape);
  }
  for (int64_t a = 0; a < outer; a++)
    for (int64_t b = 0; b < stride; b++) {
      int64_t base = a * len * stride + b;
      double pre = 1.0, suf = 1.0;
      for (int64_t k = 0; k < len; k++) {
        ex[base + k * stride] = pre;
        pre *= v[base + k * stride];
      }
      for (int64_t k = len - 1; k >= 0; k--) {
        ex[base + k * stride] *= suf;
        suf *= v[base + k * stride];
      }
    }
}

/* acc[i] = the gradient of input element i (masked-in ones; the caller
 * zeroes the rest). v: scratch of n doubles; r, c, s: of no doubles. */
static void grad_values(gr_kind k, const mt_tensor *x, const mt_tensor *g, const gr_geom *gm,
                        double *acc, double *v, double *r, double *c, double *s) {
  int64_t n = gm->n, no = gm->no;
  const int64_t *o = gm->o;
  double fill = k == GR_PROD ? 1.0 : k == GR_AMAX ? -INFINITY : k == GR_AMIN ? INFINITY : 0.0;
  for (int64_t i = 0; i < n; i++) v[i] = mt__grad_spec(x, i) ? mt__grad_at(x, i) : fill;
  for (int64_t j = 0; j < no; j++) {
    c[j] = 0.0;
    s[j] = 0.0;
    r[j] = k == GR_PROD ? 1.0 : fill;
  }
  switch (k) {
  case GR_SUM:
    for (int64_t i = 0; i < n; i++) acc[i] = mt__grad_at(g, o[i]);
    break;
  case GR_MEAN:
    for (int64_t i = 0; i < n; i++) c[o[i]] += mt__grad_spec(x, i);
    for (int64_t i = 0; i < n; i++) acc[i] = mt__grad_at(g, o[i]) / c[o[i]];
    break;
  case GR_AMIN:
  case GR_AMAX:
    for (int64_t i = 0; i < n; i++) { /* torch's max/min: NaN wins */
      double *m = &r[o[i]];
      if (isnan(v[i]) || (!isnan(*m) && (k == GR_AMAX ? v[i] > *m : v[i] < *m))) *m = v[i];
    }
    for (int64_t i = 0; i < n; i++) c[o[i]] += v[i] == r[o[i]];
    for (int64_t i = 0; i < n; i++)
      acc[i] = mt__grad_at(g, o[i]) / c[o[i]] * (v[i] == r[o[i]] ? 1.0 : 0.0);
    break;
  case GR_PROD: {
    int zeros = 0;
    for (int64_t i = 0; i < n; i++) zeros |= v[i] == 0.0;
    if (x->ndim == 0) { /* torch: a 0-d input's gradient is the upstream one */
      acc[0] = mt__grad_at(g, 0);
    } else if (!zeros) {
      for (int64_t i = 0; i < n; i++) r[o[i]] *= v[i];
      for (int64_t i = 0; i < n; i++) acc[i] = mt__grad_at(g, o[i]) * (r[o[i]] / v[i]);
    } else {
      prod_exclusive(x, gm, v, acc);
      for (int64_t i = 0; i < n; i++) acc[i] *= mt__grad_at(g, o[i]);
    }
    break;
  }
  case GR_VAR:
  case GR_STD:
    for (int64_t i = 0; i < n; i++)
      if (mt__grad_spec(x, i)) {
        c[o[i]] += 1.0;
        s[o[i]] += v[i];
      }
    for (int64_t j = 0; j < no; j++) s[j] /= c[j]; /* the mean */
    for (int64_t i = 0; i < n; i++) v[i] = mt__grad_spec(x, i) ? v[i] - s[o[i]] : 0.0;
    for (int64_t j = 0; j < no; j++) r[j] = 0.0;
    for (int64_t i = 0; i < n; i++) r[o[i]] += v[i] * v[i]; /* sum of squares */
    for (int64_t j = 0; j < no; j++) {
      double den = c[j] - 1.0 > 0.0 ? c[j] - 1.0 : 0.0, gv = mt__grad_at(g, j);
      if (k == GR_STD) gv = gv / (2.0 * sqrt(r[j] / den));
      r[j] = gv / den; /* the gradient of the sum of squares */
      s[j] = 0.0;
    }
    for (int64_t i = 0; i < n; i++)
      if (mt__grad_spec(x, i)) {
        acc[i] = r[o[i]] * 2.0 * v[i];
        s[o[i]] += acc[i];
      }
    for (int64_t i = 0; i < n; i++)
      if (mt__grad_spec(x, i)) acc[i] -= s[o[i]] / c[o[i]];
    break;
  }
}

static mt_status reduce_backward(mt_call *call, mt_op opid, gr_kind k, mt_error *err) {
  const char *op = mt_op_name(opid);
  const mt_tensor *x, *g;
  mt_tensor *data = NULL;
  gr_geom gm = {0};
  double *acc = NULL, *v = NULL, *r = NULL, *c = NULL, *s = NULL;
  mt_status st;
  mt__cpu_begin(call);
  if (mt__cpu_grad_sparse_takes(call)) return mt__cpu_grad_sparse(call, opid, err);
  if ((st = mt__kw_check(opid, call->kw, err)) != MT_OK) return st;
  if ((st = mt__cpu_input(call, 0, op, &x, err)) != MT_OK) return st;
  if ((st = mt__grad_masked_dense(x, "inputs/0", op, err)) != MT_OK) return st;
  if ((st = mt_tensor_validate(x, "inputs/0", err)) != MT_OK) return st;
  if ((st = mt__grad_out(call, 0, op, &g, err)) != MT_OK) return st;
  if ((st = mt__grad_masked_dense(g, "grad_outputs/0", op, err)) != MT_OK) return st;
  if ((st = geom_of(op, x, call->kw, &gm, err)) != MT_OK) goto out;
  if (mt_numel(g) != gm.no) {
    st = mt_err(err, MT_SHAPE_MISMATCH,
                "%s backward: the upstream gradient has %lld elements, the reduction %lld", op,
                (long long)mt_numel(g), (long long)gm.no);
    goto out;
  }
  if ((st = mt__grad_doubles(gm.n, op, &acc, err)) != MT_OK ||
      (st = mt__grad_doubles(gm.n, op, &v, err)) != MT_OK ||
      (st = mt__grad_doubles(gm.no, op, &r, err)) != MT_OK ||
      (st = mt__grad_doubles(gm.no, op, &c, err)) != MT_OK ||
      (st = mt__grad_doubles(gm.no, op, &s, err)) != MT_OK)
    goto out;
  grad_values(k, x, g, &gm, acc, v, r, c, s);
  for (int64_t i = 0; i < gm.n; i++)
    if (!mt__grad_spec(x, i)) acc[i] = 0.0;
  if ((st = mt__grad_like_input(mt__cpu_host(call), x, x->data->dtype, &call->out[0], &data,
                                err)) != MT_OK)
    goto out;
  mt__grad_store(data, acc, gm.n);
  mt__grad_done(call);
out:
  geom_free(&gm);
  free(acc);
  free(v);
  free(r);
  free(c);
  free(s);
  if (st != MT_OK) mt__cpu_drop_outputs(call);
  return st;
}

#define GRAD_RED_OPS(X) \
  X(sum, GR_SUM)        \
  X(mean, GR_MEAN)      \
  X(prod, GR_PROD)      \
  X(amin, GR_AMIN)      \
  X(amax, GR_AMAX)      \
  X(var, GR_VAR)        \
  X(std, GR_STD)

#define X(name, kind)                                               \
  mt_status mt_cpu_grad_##name(mt_call *call, mt_error *err) {      \
    return reduce_backward(call, MT_OP_##name, kind, err);         \
  }
GRAD_RED_OPS(X)
#undef X

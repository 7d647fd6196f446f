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
 * the sparse engine (mt__grad_sparse_run, grad_sparse.c). */
#include "common/exec.h"
#include "common/grad_reduce_math.h"
#include "common/grad_reduce_ops.h"
#include "grad_util.h"

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

/* The groups of the reduction: output element o's input elements are
 * idx[off[o]] .. idx[off[o + 1] - 1], in increasing order (a stable
 * counting sort of o[]: index bookkeeping, no values). */
static mt_status groups_of(const char *op, const gr_geom *gm, int64_t **off, int64_t **idx,
                           mt_error *err) {
  *off = calloc((size_t)gm->no + 2, sizeof(int64_t));
  *idx = malloc((size_t)(gm->n > 0 ? gm->n : 1) * sizeof(int64_t));
  if (!*off || !*idx)
    return mt_err(err, MT_OUT_OF_MEMORY, "%s backward: no memory for %lld indices", op,
                  (long long)gm->n);
  for (int64_t i = 0; i < gm->n; i++) (*off)[gm->o[i] + 2]++;
  for (int64_t j = 0; j < gm->no; j++) (*off)[j + 2] += (*off)[j + 1];
  for (int64_t i = 0; i < gm->n; i++) (*idx)[(*off)[gm->o[i] + 1]++] = i;
  return MT_OK;
}

static mt_status reduce_backward(mt_call *call, mt_op opid, mt_gr_kind k, const mt_exec *ex,
                                 mt_error *err) {
  const char *op = mt_op_name(opid);
  const mt_tensor *x, *g;
  mt_tensor *out = NULL, *data = NULL, *mask = NULL;
  gr_geom gm = {0};
  double *xd = NULL, *gd = NULL;
  uint8_t *spec = NULL;
  int64_t *off = NULL, *idx = NULL;
  mt_status st;
  mt__cpu_begin(call);
  if (mt__cpu_grad_sparse_takes(call)) {
    return mt__grad_sparse_run(call, opid, ex, err);
  }
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
  if (!ex->grad_reduce) {
    st = mt_err(err, MT_NOT_SUPPORTED, "%s backward: the %s backend has no kernels for it yet",
                op, ex->name);
    goto out;
  }
  /* the operands as the device reads them: values widened to double, mask bits */
  if ((st = mt__grad_doubles(gm.n, op, &xd, err)) != MT_OK ||
      (st = mt__grad_doubles(gm.no, op, &gd, err)) != MT_OK ||
      (st = groups_of(op, &gm, &off, &idx, err)) != MT_OK)
    goto out;
  if (!(spec = malloc((size_t)(gm.n > 0 ? gm.n : 1)))) {
    st = mt_err(err, MT_OUT_OF_MEMORY, "%s backward: no memory for the mask", op);
    goto out;
  }
  for (int64_t i = 0; i < gm.n; i++) {
    spec[i] = (uint8_t)mt__grad_spec(x, i);
    xd[i] = mt__grad_at(x, i);
  }
  for (int64_t j = 0; j < gm.no; j++) gd[j] = mt__grad_at(g, j);
  if ((st = mt__cpu_new_masked_dense(mt__cpu_host(call), x->data->dtype, x->ndim, x->shape, &out,
                                     &data, &mask, err)) != MT_OK)
    goto out;
  call->out[0] = out;
  mt_gr_par p = {k, x->data->dtype, x->ndim == 0, gm.n, gm.no};
  if ((st = ex->grad_reduce(&p, xd, spec, gd, off, idx, data->values, mask->values, err)) !=
      MT_OK) {
    mt_err_prefix(err, "%s backward", op);
    goto out;
  }
  mt__grad_done(call);
out:
  geom_free(&gm);
  free(xd);
  free(gd);
  free(spec);
  free(off);
  free(idx);
  if (st != MT_OK) mt__cpu_drop_outputs(call);
  return st;
}

mt_status mt__grad_reduce_run(mt_call *call, mt_op op, const mt_exec *ex, mt_error *err) {
  switch (op) {
#define X(name, kind) \
  case MT_OP_##name: return reduce_backward(call, op, kind, ex, err);
    GRAD_RED_OPS(X)
#undef X
  default:
    return mt_err(err, MT_NOT_SUPPORTED, "%s backward: not a reduction", mt_op_name(op));
  }
}

#define X(name, kind)                                                  \
  mt_status mt_cpu_grad_##name(mt_call *call, mt_error *err) {         \
    return mt__grad_reduce_run(call, MT_OP_##name, &mt_cpu_exec, err); \
  }
GRAD_RED_OPS(X)
#undef X

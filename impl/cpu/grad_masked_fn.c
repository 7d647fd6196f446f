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

#include "common/exec.h"
#include "common/grad_masked_fn_math.h"
#include "common/masked_fn_math.h"
#include "promote.h"
#include "sps_util.h"

/* ---- the call: input, mask, dims -------------------------------------------------- */

typedef struct mfg {
  mt__gs_ctx c;
  const mt_tensor *x;
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
static mt_status mfg_open(mfg *f, mt_call *call, mt_op op, const mt_exec *ex, mt_error *err) {
  mt_status st;
  memset(f, 0, sizeof *f);
  if ((st = mt__gs_open_on(&f->c, call, op, ex, err)) != MT_OK) return st;
  f->x = f->c.in[0];
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

/* ---- the compute: one group per output element or line ---------------------------- */

/* groups of the elements by reduced index over red[] (a reduction's dims,
 * a line op's one dim, none: one group per element), each in increasing
 * order (a stable counting sort: index bookkeeping, no values) */
static mt_status mfg_groups(const mfg *f, const int *red, int64_t *n_grp, int64_t **off,
                            int64_t **idx, mt_error *err) {
  const mt_tensor *x = f->x;
  int64_t ng = 1;
  for (int d = 0; d < x->ndim; d++)
    if (!red[d]) ng *= x->shape[d];
  *n_grp = ng;
  *off = calloc((size_t)ng + 2, sizeof(int64_t));
  *idx = malloc((size_t)(f->n ? f->n : 1) * sizeof(int64_t));
  if (!*off || !*idx) return mt_err(err, MT_OUT_OF_MEMORY, "%s backward: no memory", f->c.name);
  for (int64_t i = 0; i < f->n; i++) (*off)[mt__gs_reduced_index(i, x->ndim, x->shape, red) + 2]++;
  for (int64_t j = 0; j < ng; j++) (*off)[j + 2] += (*off)[j + 1];
  for (int64_t i = 0; i < f->n; i++)
    (*idx)[(*off)[mt__gs_reduced_index(i, x->ndim, x->shape, red) + 1]++] = i;
  return MT_OK;
}

/* the call's dims and parameters, then the gradient on ex (f->c.g[0], and
 * g1 for logaddexp's second operand) */
static mt_status mfg_compute(mfg *f, mt_mfg_code code, const uint8_t *in1, const mt_exec *ex,
                             mt_error *err) {
  const mt_kwargs *kw = f->c.call->kw;
  int red[MT_MAX_DIMS] = {0};
  int64_t *off = NULL, *idx = NULL;
  mt_mfg_par p;
  mt_status st = MT_OK;
  memset(&p, 0, sizeof p);
  p.code = code;
  p.n_ops = code == MFG_LOGADDEXP ? 2 : 1;
  p.n = f->n;
  p.ord = mt_kw_float(kw, "ord", 2.0);
  p.eps = mt_kw_float(kw, "eps", 1e-12);
  p.corr = mt_kw_float(kw, "correction",
                       mt_kw_find(kw, "unbiased") ? (mt_kw_int(kw, "unbiased", 1) ? 1.0 : 0.0)
                                                  : 1.0);
  for (int k = 0; k < p.n_ops; k++) {
    const mt_tensor *t = f->c.in[k];
    p.dtype[k] = t->kind == MT_KIND_MASKED ? t->data->dtype : t->dtype;
  }
  switch (code) {
  case MFG_LOGADDEXP: {
    /* MFN-6: the operands promoted (torch.result_type), each filled with
     * its dtype's identity (the forward refused what has none) */
    int ct = mt__pr_result_type((const mt_tensor *const *)f->c.in, 2);
    if (ct < 0 || !mt_dtype_is_float((mt_dtype)ct))
      return mt_err(err, MT_DTYPE_MISMATCH, "%s backward: inputs/0 (%s) and inputs/1 (%s) "
                    "promote to no floating dtype", f->c.name, mt_dtype_name(p.dtype[0]),
                    mt_dtype_name(p.dtype[1]));
    p.ct = (mt_dtype)ct;
    for (int k = 0; k < 2; k++) {
      double fd;
      int64_t fi;
      mt_mfn_identity_of(MFN_ID_NEG_INF, p.dtype[k], 0.0, &fd, &fi);
      p.fill[k] = mt_mfn_to_compute(p.dtype[k], p.ct, NULL, 0, 0, fd, fi);
    }
    break;
  }
  case MFG_MEDIAN:
  case MFG_NORMALIZE:
  case MFG_CUMSUM:
  case MFG_CUMPROD:
  case MFG_SOFTMAX:
  case MFG_LOG_SOFTMAX:
  case MFG_SOFTMIN:
    st = mfg_one_dim(f, code == MFG_MEDIAN ? -1 : 0, err);
    if (st == MT_OK && f->x->ndim) red[f->dim] = 1;
    if (st == MT_OK && code == MFG_MEDIAN) {
      const mt_tensor *x = f->x;
      st = mt__gs_go_numel(&f->c, x->ndim ? mt__gs_span(x->shape, 0, f->dim) *
                                                mt__gs_span(x->shape, f->dim + 1, x->ndim)
                                          : 1, err);
    }
    break;
  default:
    st = mfg_reduce_dims(f, err);
    memcpy(red, f->red, sizeof red);
    break;
  }
  if (st != MT_OK) return st;
  if (!ex->grad_masked_fn)
    return mt_err(err, MT_NOT_SUPPORTED, "%s backward: the %s backend has no kernels for it yet",
                  f->c.name, ex->name);
  if ((st = mfg_groups(f, red, &p.n_grp, &off, &idx, err)) == MT_OK) {
    const double *xs[2] = {f->c.x[0], p.n_ops > 1 ? f->c.x[1] : NULL};
    const uint8_t *ins[2] = {f->in, in1};
    double *gs[2] = {f->c.g[0], p.n_ops > 1 ? f->c.g[1] : NULL};
    st = ex->grad_masked_fn(&p, xs, ins, f->c.go[0], mt_numel(f->c.gt[0]), off, idx, gs, err);
    if (st != MT_OK) mt_err_prefix(err, "%s backward", f->c.name);
  }
  free(off);
  free(idx);
  return st;
}

/* ---- the op table ------------------------------------------------------------------- */

/* CSR input: 1 = its gradient keeps the structure (amax, amin, mean), 0 = refused */
static int csr_ok_of(mt_mfg_code code) {
  return code == MFG_AMAX || code == MFG_AMIN || code == MFG_MEAN;
}

static mt_status mfg_run(mt_call *call, mt_op op, mt_mfg_code code, const mt_exec *ex,
                         mt_error *err) {
  int csr_ok = csr_ok_of(code);
  mfg f;
  mt_status st = mfg_open(&f, call, op, ex, err);
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
  if ((st = mfg_compute(&f, code, NULL, ex, err)) != MT_OK) goto out;
  st = mfg_emit(&f, err);
out:
  mfg_close(&f);
  return st;
}

/* masked.logaddexp(input, other[, input_mask, other_mask]): the -inf
 * filled operands' logaddexp; torch's grad / (1 + exp(other - self)) and
 * its mirror, selected by each operand's mask */
static mt_status logaddexp_run(mt_call *call, const mt_exec *ex, mt_error *err) {
  mt__gs_ctx c;
  uint8_t *in[2] = {NULL, NULL};
  mt_status st = mt__gs_open_on(&c, call, MT_OP_masked_logaddexp, ex, err);
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
  f.x = c.in[0];
  f.n = n;
  f.in = in[0];
  st = mfg_compute(&f, MFG_LOGADDEXP, in[1], ex, err);
  f.in = NULL;
  if (st == MT_OK) st = mfg_emit(&f, err);
out:
  free(in[0]);
  free(in[1]);
  mt__gs_close(&f.c);
  return st;
}

mt_status mt__grad_masked_fn_run(mt_call *call, mt_op op, const mt_exec *ex, mt_error *err) {
  switch (op) {
#define X(name, code) \
  case MT_OP_##name: return mfg_run(call, op, code, ex, err);
    MFG_OPS(X)
#undef X
  case MT_OP_masked_logaddexp: return logaddexp_run(call, ex, err);
  default:
    return mt_err(err, MT_NOT_SUPPORTED, "%s backward: not a torch.masked op", mt_op_name(op));
  }
}

#define X(name, code)                                                    \
  mt_status mt_cpu_grad_##name(mt_call *call, mt_error *err) {           \
    return mt__grad_masked_fn_run(call, MT_OP_##name, &mt_cpu_exec, err); \
  }
MFG_OPS(X)
X(masked_logaddexp, MFG_LOGADDEXP)
#undef X

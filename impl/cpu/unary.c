/* unary.c - CPU kernels of the unary family: neg abs exp log sqrt pow.
 *
 * MASK-4: a unary op on a masked tensor applies to the data and keeps the
 * mask (torch.masked's _unary_helper); the result has the input's storage
 * (dense, or COO with the coalesced data's indices).
 * MASK-5: log(0) = -inf, log(-1) = NaN, sqrt(-1) = NaN are ordinary values
 * at masked-in positions, not errors.
 * float32 data is computed with the float functions (expf, logf, ...), as
 * torch computes float32 in float. */
#include "cpu_util.h"

/* pow's exponent special cases, as torch's pow_tensor_scalar dispatch:
 * 0 -> fill 1, 1 -> copy, 0.5 -> sqrt, -0.5 -> rsqrt, -1 -> reciprocal,
 * 2 -> x*x, 3 -> x*x*x, -2 -> 1/(x*x), otherwise std::pow(x, (double)e). */
static float pow_f32(float x, double e) {
  if (e == 0.0) return 1.0f;
  if (e == 1.0) return x;
  if (e == 0.5) return sqrtf(x);
  if (e == -0.5) return 1.0f / sqrtf(x);
  if (e == -1.0) return 1.0f / x;
  if (e == 2.0) return x * x;
  if (e == 3.0) return x * x * x;
  if (e == -2.0) return 1.0f / (x * x);
  return (float)pow((double)x, e);
}

static double pow_f64(double x, double e) {
  if (e == 0.0) return 1.0;
  if (e == 1.0) return x;
  if (e == 0.5) return sqrt(x);
  if (e == -0.5) return 1.0 / sqrt(x);
  if (e == -1.0) return 1.0 / x;
  if (e == 2.0) return x * x;
  if (e == 3.0) return x * x * x;
  if (e == -2.0) return 1.0 / (x * x);
  return pow(x, e);
}

/* One element; the result is exactly representable in dtype. */
static double apply(mt_op op, mt_dtype dt, double v, double e) {
  if (dt == MT_float32) {
    float x = (float)v;
    switch (op) {
    case MT_OP_neg: return -x;
    case MT_OP_abs: return fabsf(x);
    case MT_OP_exp: return expf(x);
    case MT_OP_log: return logf(x);
    case MT_OP_sqrt: return sqrtf(x);
    default: return pow_f32(x, e);
    }
  }
  switch (op) {
  case MT_OP_neg: return -v;
  case MT_OP_abs: return fabs(v);
  case MT_OP_exp: return exp(v);
  case MT_OP_log: return log(v);
  case MT_OP_sqrt: return sqrt(v);
  default: return pow_f64(v, e);
  }
}

/* out[i] = op(in[i]) over n contiguous elements. Masked-out elements are
 * transformed too (as torch does); they stay masked out. */
static void apply_all(mt_op op, mt_dtype dt, const void *in, void *out, int64_t n, double e) {
  for (int64_t i = 0; i < n; i++) mt__cpu_st(out, dt, i, apply(op, dt, mt__cpu_ld(in, dt, i), e));
}

static mt_status unary(mt_call *call, mt_op op, mt_error *err) {
  const char *name = mt_op_name(op);
  const mt_host *h = mt__cpu_host(call);
  const mt_tensor *m = NULL;
  mt_tensor *data = NULL, *mask = NULL, *out = NULL, *dtmp = NULL, *mtmp = NULL;
  mt__cpu_mview mv = {0};
  double e = 0.0;
  mt_status st;

  mt__cpu_begin(call);
  if ((st = mt__kw_check(op, call->kw, err)) != MT_OK) return st;
  if ((st = mt__cpu_masked_input0(call, name, &m, err)) != MT_OK) return st;
  if (op == MT_OP_pow) {
    const mt_tensor *x = NULL;
    if ((st = mt__cpu_input(call, 1, name, &x, err)) != MT_OK) return st;
    if (x->kind == MT_KIND_MASKED || (x->kind == MT_KIND_DENSE && x->ndim > 0))
      return mt_err(err, MT_NOT_SUPPORTED,
                    "%s: inputs/1 (exponent) has kind %s; only a number exponent is supported",
                    name, mt_kind_name(x->kind));
    if ((st = mt__cpu_scalar_value(x, "inputs/1 (exponent)", name, &e, err)) != MT_OK) return st;
  }
  mt_dtype dt = m->data->dtype;

  if (m->data->kind == MT_KIND_DENSE) {
    /* MASK-4, dense storage */
    if ((st = mt__cpu_mview_open(m, &mv, err)) != MT_OK) goto out;
    if ((st = h->dense_new(dt, m->ndim, m->shape, &data, err)) != MT_OK) goto out;
    apply_all(op, dt, mv.data->values, data->values, mt_numel(m), e);
    if ((st = mt__cpu_copy(h, mv.mask, &mask, err)) != MT_OK) goto out;
  } else if (m->data->kind == MT_KIND_COO) {
    /* MASK-4, COO storage: torch coalesces the data and maps its values. */
    const mt_tensor *cd, *cm;
    if ((st = mt__cpu_coalesced(m->data, &cd, &dtmp, err)) != MT_OK) goto out;
    if ((st = mt__cpu_coalesced(m->mask, &cm, &mtmp, err)) != MT_OK) goto out;
    if ((st = mt__cpu_copy(h, cd, &data, err)) != MT_OK) goto out;
    apply_all(op, dt, cd->values, data->values, cd->nnz * mt_coo_row_numel(cd), e);
    data->coalesced = 1;
    if ((st = mt__cpu_copy(h, cm, &mask, err)) != MT_OK) goto out;
  } else {
    st = mt_err(err, MT_NOT_SUPPORTED, "%s: %s storage is not supported by the CPU backend", name,
                mt_kind_name(m->data->kind));
    goto out;
  }
  st = h->masked_new(data, mask, &out, err);
  data = mask = NULL; /* owned by masked_new, also on failure */
  if (st != MT_OK) goto out;
  call->out[0] = out;
  call->n_out = 1;
out:
  mt__cpu_mview_close(&mv);
  mt_tensor_free(dtmp);
  mt_tensor_free(mtmp);
  if (data) h->free(data);
  if (mask) h->free(mask);
  return st;
}

mt_status mt_cpu_neg(mt_call *call, mt_error *err) { return unary(call, MT_OP_neg, err); }
mt_status mt_cpu_abs(mt_call *call, mt_error *err) { return unary(call, MT_OP_abs, err); }
mt_status mt_cpu_exp(mt_call *call, mt_error *err) { return unary(call, MT_OP_exp, err); }
mt_status mt_cpu_log(mt_call *call, mt_error *err) { return unary(call, MT_OP_log, err); }
mt_status mt_cpu_sqrt(mt_call *call, mt_error *err) { return unary(call, MT_OP_sqrt, err); }
mt_status mt_cpu_pow(mt_call *call, mt_error *err) { return unary(call, MT_OP_pow, err); }

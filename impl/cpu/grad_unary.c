/* grad_unary.c - CPU backward kernels of the MaskedTensor unary ops
 * (ops.def family unary; golden format 3's gradient cases, spec/SEMANTICS.md
 * GRAD-*; mt_impl.backward). The engine (grad_ew.c) does the masking and
 * the storages; this file holds torch's derivative formulas
 * (tools/autograd/derivatives.yaml), each evaluated in double on the
 * specified elements and rounded once to the input's dtype:
 *
 *   abs     g * sgn(x)            (sgn(NaN) = 0, as torch's sign)
 *   acos    -g / sqrt(1 - x^2)    acosh  g / sqrt(x^2 - 1)
 *   asin    g / sqrt(1 - x^2)     asinh  g / sqrt(x^2 + 1)
 *   atan    g / (x^2 + 1)         cos    -g sin(x)    cosh   g sinh(x)
 *   deg2rad g pi/180              rad2deg g 180/pi
 *   erf     g 2/sqrt(pi) e^-x^2   erfc   -g 2/sqrt(pi) e^-x^2
 *   erfinv  g sqrt(pi)/2 e^(erfinv(x)^2)
 *   exp     g e^x    exp2  g 2^x ln2    expm1  g (expm1(x) + 1)
 *   lgamma  g digamma(x)
 *   log     g / x    log10  g / (x ln10)    log2  g / (x ln2)    log1p  g / (x + 1)
 *   nan_to_num  g where x is finite, else 0
 *   neg     -g       positive, conj_physical, frac  g
 *   pow(x, e)   g e x^(e-1)
 *   reciprocal  -g / x^2      rsqrt  -g / (2 x^(3/2))    sqrt  g / (2 sqrt(x))
 *   sin     g cos(x)          sinh   g cosh(x)           square  2 g x
 *   tan     g (1 + tan(x)^2)
 *   sgn     a plain dense tensor of zeros (GRAD-7: torch's ZeroTensor)
 *
 * GRAD-5: where torch's MaskedTensor cannot run the derivative formula the
 * backward is refused, whatever the values: the formula calls an aten op
 * MaskedTensor has no __torch_dispatch__ handler for (tanh_backward,
 * zeros_like for the piecewise-constant ops, polygamma ...; the golden's
 * LAYOUT_MISMATCH), log1p's formula adds a dense 1 to sparse storage, sgn's
 * ZeroTensor has no sparse kernel, pow(x, 0) asks zeros_like. */
#include "common/grad_ew_ops.h"
#include "grad_ew.h"

/* ---- the table ---------------------------------------------------------------- */

/* X(base, derivative, aten op whose missing MaskedTensor handler refuses the
 *   backward (NULL: torch computes it), torch's exception for it) */
#define NO_HANDLER(aten) \
  "TypeError: Multiple dispatch failed for 'torch._ops.aten." aten "'; all __torch_dispatch__ " \
  "handlers returned NotImplemented"
#define GU_BASES(X)                                                                          \
  X(abs, EW_abs, NULL, NULL)                                                                  \
  X(acos, EW_acos, NULL, NULL)                                                                \
  X(acosh, EW_acosh, NULL, NULL)                                                              \
  X(angle, EW_NONE, "zeros_like", NO_HANDLER("zeros_like.default"))                             \
  X(asin, EW_asin, NULL, NULL)                                                                \
  X(asinh, EW_asinh, NULL, NULL)                                                              \
  X(atan, EW_atan, NULL, NULL)                                                                \
  X(atanh, EW_NONE, "empty_like", NO_HANDLER("empty_like.default"))                             \
  X(ceil, EW_NONE, "zeros_like", NO_HANDLER("zeros_like.default"))                              \
  X(clamp, EW_NONE, "logical_and_", NO_HANDLER("logical_and_.default"))                         \
  X(conj_physical, EW_id, NULL, NULL)                                                         \
  X(cos, EW_cos, NULL, NULL)                                                                  \
  X(cosh, EW_cosh, NULL, NULL)                                                                \
  X(deg2rad, EW_deg2rad, NULL, NULL)                                                          \
  X(digamma, EW_NONE, "polygamma", NO_HANDLER("polygamma.default"))                             \
  X(erf, EW_erf, NULL, NULL)                                                                  \
  X(erfc, EW_erfc, NULL, NULL)                                                                \
  X(erfinv, EW_erfinv, NULL, NULL)                                                            \
  X(exp, EW_exp, NULL, NULL)                                                                  \
  X(exp2, EW_exp2, NULL, NULL)                                                                \
  X(expm1, EW_expm1, NULL, NULL)                                                              \
  X(floor, EW_NONE, "zeros_like", NO_HANDLER("zeros_like.default"))                             \
  X(frac, EW_id, NULL, NULL)                                                                  \
  X(lgamma, EW_lgamma, NULL, NULL)                                                            \
  X(log, EW_log, NULL, NULL)                                                                  \
  X(log10, EW_log10, NULL, NULL)                                                              \
  X(log1p, EW_log1p, NULL, NULL)                                                              \
  X(log2, EW_log2, NULL, NULL)                                                                \
  X(logit, EW_NONE, "logit_backward", NO_HANDLER("logit_backward.default"))                     \
  X(i0, EW_NONE, "special_i1", NO_HANDLER("special_i1.default"))                                \
  X(nan_to_num, EW_nan_to_num, NULL, NULL)                                                    \
  X(neg, EW_neg, NULL, NULL)                                                                  \
  X(positive, EW_id, NULL, NULL)                                                              \
  X(pow, EW_pow, NULL, NULL)                                                                  \
  X(rad2deg, EW_rad2deg, NULL, NULL)                                                          \
  X(reciprocal, EW_reciprocal, NULL, NULL)                                                    \
  X(round, EW_NONE, "zeros_like", NO_HANDLER("zeros_like.default"))                             \
  X(rsqrt, EW_rsqrt, NULL, NULL)                                                              \
  X(sigmoid, EW_NONE, "sigmoid_backward", NO_HANDLER("sigmoid_backward.default"))               \
  X(sign, EW_NONE, "zeros_like", NO_HANDLER("zeros_like.default"))                              \
  X(sgn, EW_NONE, NULL, NULL)                                                                   \
  X(sin, EW_sin, NULL, NULL)                                                                  \
  X(sinc, EW_NONE, "fill_", "RecursionError: maximum recursion depth exceeded (dense storage); " \
    "NotImplementedError: Could not run 'aten::fill_.Scalar' with arguments from the "       \
    "'SparseCPU' backend (sparse storage)")                                                  \
  X(sinh, EW_sinh, NULL, NULL)                                                                \
  X(sqrt, EW_sqrt, NULL, NULL)                                                                \
  X(square, EW_square, NULL, NULL)                                                            \
  X(tan, EW_tan, NULL, NULL)                                                                  \
  X(tanh, EW_NONE, "tanh_backward", NO_HANDLER("tanh_backward.default"))                        \
  X(trunc, EW_NONE, "zeros_like", NO_HANDLER("zeros_like.default"))

typedef enum {
#define GU_X(base, d, aten, why) GU_##base,
  GU_BASES(GU_X)
#undef GU_X
  GU__COUNT
} gu_base;

typedef struct {
  mt_ew_code d;
  const char *aten, *why;
} gu_row;

static const gu_row ROWS[GU__COUNT] = {
#define GU_X(base, d, aten, why) [GU_##base] = {d, aten, why},
    GU_BASES(GU_X)
#undef GU_X
};

/* ---- the kernel ----------------------------------------------------------------- */

static int sparse_storage(const mt_tensor *m) { return m->data->kind != MT_KIND_DENSE; }

/* GRAD-7: sgn's gradient is torch's ZeroTensor materialized: plain dense
 * zeros of the input's shape and dtype, not a MaskedTensor. On sparse
 * storage torch has no kernel for the ZeroTensor (refused). On another
 * exec than the reference's the zeros are written by ex (a gather of one
 * zero element into every one), so on the CUDA path they come from the
 * device like every other result value, not from the host's allocation. */
static mt_status grad_sgn(mt_call *call, const char *name, const mt_tensor *m, const mt_exec *ex,
                          mt_error *err) {
  static const uint8_t zero[16]; /* all bits zero: 0, +0.0 or false in every dtype */
  if (sparse_storage(m))
    return mt_err(err, MT_LAYOUT_MISMATCH, "%s backward: %s storage: torch refuses it "
                  "(NotImplementedError: Could not run 'aten::_efficientzerotensor' with "
                  "arguments from the 'Sparse%sCPU' backend)", name, mt_kind_name(m->data->kind),
                  m->data->kind == MT_KIND_COO ? "" : "Csr");
  mt_status st = mt__cpu_host(call)->dense_new(m->data->dtype, m->ndim, m->shape, &call->out[0],
                                               err);
  if (st != MT_OK) return st;
  call->n_out = call->n_in;
  int64_t n = mt_numel(call->out[0]), len = 1;
  if (n == 0 || ex == &mt_cpu_exec) return MT_OK; /* the reference: the allocation's zeros */
  if (!ex->gather)
    return mt_err(err, MT_NOT_SUPPORTED, "%s backward: the %s backend has no gather kernel", name,
                  ex->name);
  int *src = calloc((size_t)n, sizeof *src);
  int64_t *off = calloc((size_t)n, sizeof *off);
  const void *srcs[1] = {zero};
  if (!src || !off)
    st = mt_err(err, MT_OUT_OF_MEMORY, "%s backward: out of memory for %lld zeros", name,
                (long long)n);
  else
    st = ex->gather(src, off, n, 1, srcs, &len, mt_dtype_size(m->data->dtype),
                    call->out[0]->values, err);
  free(src);
  free(off);
  return st;
}

static mt_status grad_unary(mt_call *call, mt_op op, gu_base base, const mt_exec *ex,
                            mt_error *err) {
  /* plain sparse operands (grad_sparse.h5): the sparse engine */
  if (mt__cpu_grad_sparse_takes(call)) {
    return mt__grad_sparse_run(call, op, ex, err);
  }
  const gu_row *r = &ROWS[base];
  const char *name = mt_op_name(op);
  const mt_tensor *m;
  mt_status st;

  mt__cpu_begin(call);
  if ((st = mt__kw_check(op, call->kw, err)) != MT_OK) return st;
  if ((st = mt__cpu_input(call, 0, name, &m, err)) != MT_OK) return st;
  if (m->kind != MT_KIND_MASKED)
    return mt_err(err, MT_NOT_SUPPORTED, "%s backward: inputs/0 is %s; this kernel differentiates "
                  "MaskedTensors (plain sparse gradients: grad_sparse.c)", name,
                  mt_kind_name(m->kind));
  if ((st = mt_tensor_validate(m, "inputs/0", err)) != MT_OK) return st;
  if (r->aten)
    return mt_err(err, MT_LAYOUT_MISMATCH, "%s backward: torch's derivative of %s calls aten.%s, "
                  "which MaskedTensor does not implement (%s)", name, name, r->aten, r->why);
  if (base == GU_sgn) return grad_sgn(call, name, m, ex, err);
  /* log1p's formula is g / (x + 1): MaskedTensor's add of a sparse-storage
   * x and the dense 1 compares layouts and refuses */
  if (base == GU_log1p && sparse_storage(m))
    return mt_err(err, MT_LAYOUT_MISMATCH, "%s backward: %s storage: torch refuses it "
                  "(ValueError: `a` and `b` must have the same layout. Got torch.sparse_%s and "
                  "torch.strided)", name, mt_kind_name(m->data->kind),
                  m->data->kind == MT_KIND_COO ? "coo" : "csr");
  int n_in = 1;
  if (base == GU_pow) {
    const mt_tensor *e;
    double ev;
    if ((st = mt__cpu_input(call, 1, name, &e, err)) != MT_OK) return st;
    if (e->kind != MT_KIND_SCALAR)
      return mt_err(err, MT_NOT_SUPPORTED, "%s backward: inputs/1 (exponent) is %s; this kernel "
                    "takes a number exponent", name, mt_kind_name(e->kind));
    if ((st = mt__cpu_scalar_value(e, "inputs/1 (exponent)", name, &ev, err)) != MT_OK) return st;
    /* pow_backward: exponent 0 gives zeros_like(self), which MaskedTensor lacks */
    if (ev == 0.0)
      return mt_err(err, MT_LAYOUT_MISMATCH, "%s backward: exponent 0: torch's derivative calls "
                    "aten.zeros_like, which MaskedTensor does not implement (%s)", name,
                    NO_HANDLER("zeros_like.default"));
    n_in = 2;
  }
  mt__ew_spec s = {name, n_in, r->d};
  return mt__cpu_grad_ew(call, &s, ex, err);
}

/* ---- the kernels: ops.def's unary ops with gradient cases (aliases share the
 * base's formula; the in-place `<op>_` have none: torch refuses in place on
 * a leaf that requires grad) ------------------------------------------------------ */

#define GU_KERNEL(op, base)                                           \
  mt_status mt_cpu_grad_##op(mt_call *call, mt_error *err) {          \
    return grad_unary(call, MT_OP_##op, GU_##base, &mt_cpu_exec, err); \
  }
GU_OPS(GU_KERNEL)
#undef GU_KERNEL

mt_status mt__grad_unary_run(mt_call *call, mt_op op, const mt_exec *ex, mt_error *err) {
  switch (op) {
#define GU_CASE(o, base) \
  case MT_OP_##o: return grad_unary(call, op, GU_##base, ex, err);
    GU_OPS(GU_CASE)
#undef GU_CASE
  default: return mt_err(err, MT_NOT_SUPPORTED, "%s: no unary backward", mt_op_name(op));
  }
}

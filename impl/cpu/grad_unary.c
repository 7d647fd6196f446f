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
#include "grad_ew.h"
#include "common/unary_math.h"

#define LN2 0.693147180559945309417232121458176568
#define LN10 2.30258509299404568401799145468436421
#define TWO_OVER_SQRT_PI 1.12837916709551257389615890312154517

/* ---- derivatives: dx[0] = g * d(op)/dx at x[0] ----------------------------- */

#define D1(name, expr)                                                     \
  static void d_##name(const double *xs, double g, const void *par, double *dx) { \
    double x = xs[0];                                                      \
    (void)par;                                                             \
    (void)x;                                                               \
    dx[0] = (expr);                                                        \
  }
D1(abs, g * (double)((0 < x) - (x < 0)))
D1(acos, g * -(1.0 / sqrt(-x * x + 1.0)))
D1(acosh, g * (1.0 / sqrt(x * x - 1.0)))
D1(asin, g * (1.0 / sqrt(-x * x + 1.0)))
D1(asinh, g * (1.0 / sqrt(x * x + 1.0)))
D1(atan, g / (x * x + 1.0))
D1(id, g)
D1(cos, g * -sin(x))
D1(cosh, g * sinh(x))
D1(deg2rad, g * (MT__UN_PI / 180.0))
D1(rad2deg, g * (180.0 / MT__UN_PI))
D1(erf, TWO_OVER_SQRT_PI * exp(-(x * x)) * g)
D1(erfc, -TWO_OVER_SQRT_PI * exp(-(x * x)) * g)
D1(erfinv, 0.5 * sqrt(MT__UN_PI) * exp(mt__un_erfinv(x) * mt__un_erfinv(x)) * g)
D1(exp, g * exp(x))
D1(exp2, g * exp2(x) * LN2)
D1(expm1, g * (expm1(x) + 1.0))
D1(lgamma, g * mt__un_digamma(x))
D1(log, g / x)
D1(log10, g / (x * LN10))
D1(log1p, g / (x + 1.0))
D1(log2, g / (x * LN2))
D1(nan_to_num, isfinite(x) ? g * 1.0 : g * 0.0)
D1(neg, -g)
D1(reciprocal, -g * ((1.0 / x) * (1.0 / x)))
D1(rsqrt, -0.5 * g * pow(1.0 / sqrt(x), 3.0))
D1(sin, g * cos(x))
D1(sinh, g * cosh(x))
D1(sqrt, g / (2.0 * sqrt(x)))
D1(square, g * (2.0 * x))
D1(tan, g * (1.0 + tan(x) * tan(x)))
#undef D1

/* pow(x, e): x[1] is the exponent (a number operand, no gradient) */
static void d_pow(const double *x, double g, const void *par, double *dx) {
  (void)par;
  dx[0] = g * (x[1] * pow(x[0], x[1] - 1.0));
}

/* ---- the table ---------------------------------------------------------------- */

/* X(base, derivative, aten op whose missing MaskedTensor handler refuses the
 *   backward (NULL: torch computes it), torch's exception for it) */
#define NO_HANDLER(aten) \
  "TypeError: Multiple dispatch failed for 'torch._ops.aten." aten "'; all __torch_dispatch__ " \
  "handlers returned NotImplemented"
#define GU_BASES(X)                                                                          \
  X(abs, d_abs, NULL, NULL)                                                                  \
  X(acos, d_acos, NULL, NULL)                                                                \
  X(acosh, d_acosh, NULL, NULL)                                                              \
  X(angle, NULL, "zeros_like", NO_HANDLER("zeros_like.default"))                             \
  X(asin, d_asin, NULL, NULL)                                                                \
  X(asinh, d_asinh, NULL, NULL)                                                              \
  X(atan, d_atan, NULL, NULL)                                                                \
  X(atanh, NULL, "empty_like", NO_HANDLER("empty_like.default"))                             \
  X(ceil, NULL, "zeros_like", NO_HANDLER("zeros_like.default"))                              \
  X(clamp, NULL, "logical_and_", NO_HANDLER("logical_and_.default"))                         \
  X(conj_physical, d_id, NULL, NULL)                                                         \
  X(cos, d_cos, NULL, NULL)                                                                  \
  X(cosh, d_cosh, NULL, NULL)                                                                \
  X(deg2rad, d_deg2rad, NULL, NULL)                                                          \
  X(digamma, NULL, "polygamma", NO_HANDLER("polygamma.default"))                             \
  X(erf, d_erf, NULL, NULL)                                                                  \
  X(erfc, d_erfc, NULL, NULL)                                                                \
  X(erfinv, d_erfinv, NULL, NULL)                                                            \
  X(exp, d_exp, NULL, NULL)                                                                  \
  X(exp2, d_exp2, NULL, NULL)                                                                \
  X(expm1, d_expm1, NULL, NULL)                                                              \
  X(floor, NULL, "zeros_like", NO_HANDLER("zeros_like.default"))                             \
  X(frac, d_id, NULL, NULL)                                                                  \
  X(lgamma, d_lgamma, NULL, NULL)                                                            \
  X(log, d_log, NULL, NULL)                                                                  \
  X(log10, d_log10, NULL, NULL)                                                              \
  X(log1p, d_log1p, NULL, NULL)                                                              \
  X(log2, d_log2, NULL, NULL)                                                                \
  X(logit, NULL, "logit_backward", NO_HANDLER("logit_backward.default"))                     \
  X(i0, NULL, "special_i1", NO_HANDLER("special_i1.default"))                                \
  X(nan_to_num, d_nan_to_num, NULL, NULL)                                                    \
  X(neg, d_neg, NULL, NULL)                                                                  \
  X(positive, d_id, NULL, NULL)                                                              \
  X(pow, d_pow, NULL, NULL)                                                                  \
  X(rad2deg, d_rad2deg, NULL, NULL)                                                          \
  X(reciprocal, d_reciprocal, NULL, NULL)                                                    \
  X(round, NULL, "zeros_like", NO_HANDLER("zeros_like.default"))                             \
  X(rsqrt, d_rsqrt, NULL, NULL)                                                              \
  X(sigmoid, NULL, "sigmoid_backward", NO_HANDLER("sigmoid_backward.default"))               \
  X(sign, NULL, "zeros_like", NO_HANDLER("zeros_like.default"))                              \
  X(sgn, NULL, NULL, NULL)                                                                   \
  X(sin, d_sin, NULL, NULL)                                                                  \
  X(sinc, NULL, "fill_", "RecursionError: maximum recursion depth exceeded (dense storage); " \
    "NotImplementedError: Could not run 'aten::fill_.Scalar' with arguments from the "       \
    "'SparseCPU' backend (sparse storage)")                                                  \
  X(sinh, d_sinh, NULL, NULL)                                                                \
  X(sqrt, d_sqrt, NULL, NULL)                                                                \
  X(square, d_square, NULL, NULL)                                                            \
  X(tan, d_tan, NULL, NULL)                                                                  \
  X(tanh, NULL, "tanh_backward", NO_HANDLER("tanh_backward.default"))                        \
  X(trunc, NULL, "zeros_like", NO_HANDLER("zeros_like.default"))

typedef enum {
#define GU_X(base, d, aten, why) GU_##base,
  GU_BASES(GU_X)
#undef GU_X
  GU__COUNT
} gu_base;

typedef struct {
  mt__ew_dfn d;
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
 * storage torch has no kernel for the ZeroTensor (refused). */
static mt_status grad_sgn(mt_call *call, const char *name, const mt_tensor *m, mt_error *err) {
  if (sparse_storage(m))
    return mt_err(err, MT_LAYOUT_MISMATCH, "%s backward: %s storage: torch refuses it "
                  "(NotImplementedError: Could not run 'aten::_efficientzerotensor' with "
                  "arguments from the 'Sparse%sCPU' backend)", name, mt_kind_name(m->data->kind),
                  m->data->kind == MT_KIND_COO ? "" : "Csr");
  mt_status st = mt__cpu_host(call)->dense_new(m->data->dtype, m->ndim, m->shape, &call->out[0],
                                               err);
  if (st != MT_OK) return st;
  call->n_out = call->n_in;
  return MT_OK;
}

static mt_status grad_unary(mt_call *call, mt_op op, gu_base base, mt_error *err) {
  /* plain sparse operands (grad_sparse.h5): the sparse engine */
  if (mt__cpu_grad_sparse_takes(call)) return mt__cpu_grad_sparse(call, op, err);
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
  if (base == GU_sgn) return grad_sgn(call, name, m, err);
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
  mt__ew_spec s = {name, n_in, r->d, NULL};
  return mt__cpu_grad_ew(call, &s, err);
}

/* ---- the kernels: ops.def's unary ops with gradient cases (aliases share the
 * base's formula; the in-place `<op>_` have none: torch refuses in place on
 * a leaf that requires grad) ------------------------------------------------------ */

/* X(op, base) */
#define GU_OPS(X)                                                                              \
  X(abs, abs) X(absolute, abs) X(acos, acos) X(arccos, acos) X(acosh, acosh)                   \
  X(arccosh, acosh) X(angle, angle) X(asin, asin) X(arcsin, asin) X(asinh, asinh)              \
  X(arcsinh, asinh) X(atan, atan) X(arctan, atan) X(atanh, atanh) X(arctanh, atanh)            \
  X(ceil, ceil) X(clamp, clamp) X(clip, clamp) X(conj_physical, conj_physical) X(cos, cos)     \
  X(cosh, cosh) X(deg2rad, deg2rad) X(digamma, digamma) X(erf, erf) X(erfc, erfc)              \
  X(erfinv, erfinv) X(exp, exp) X(exp2, exp2) X(expm1, expm1) X(fix, trunc) X(floor, floor)    \
  X(frac, frac) X(lgamma, lgamma) X(log, log) X(log10, log10) X(log1p, log1p) X(log2, log2)    \
  X(logit, logit) X(i0, i0) X(nan_to_num, nan_to_num) X(neg, neg) X(negative, neg)             \
  X(positive, positive) X(pow, pow) X(rad2deg, rad2deg) X(reciprocal, reciprocal)              \
  X(round, round) X(rsqrt, rsqrt) X(sigmoid, sigmoid) X(sign, sign) X(sgn, sgn) X(sin, sin)    \
  X(sinc, sinc) X(sinh, sinh) X(sqrt, sqrt) X(square, square) X(tan, tan) X(tanh, tanh)        \
  X(trunc, trunc)

#define GU_KERNEL(op, base)                                     \
  mt_status mt_cpu_grad_##op(mt_call *call, mt_error *err) {    \
    return grad_unary(call, MT_OP_##op, GU_##base, err);        \
  }
GU_OPS(GU_KERNEL)
#undef GU_KERNEL

/* unary.c - CPU kernels of the unary family: MaskedTensor's complete unary
 * list (torch/masked/maskedtensor/unary.py UNARY_NAMES), aliases and the
 * in-place variants `<op>_`.
 *
 * MASK-4: a unary op on a masked tensor applies to the data and keeps the
 * mask (torch.masked's _unary_helper); the result has the input's storage
 * (dense, or COO with the coalesced data's indices).
 * MASK-5: domain edges (log(0), sqrt(-1), acos(2), atanh(1), ...) are
 * ordinary values at masked-in positions, not errors or masks.
 * UN-1: result dtypes as torch: floating ops give float32 for integer and
 * bool inputs; isnan/signbit give bool; the others keep the dtype; pow and
 * clamp promote with their Python-number arguments.
 * UN-2: the dtypes torch refuses per op (DTYPE_MISMATCH).
 * UN-3: torch's special values (digamma poles, sinc(0) = 1, sign(NaN) = 0).
 * UN-4: rounding ops (round half to even, signed zeros).
 * UN-5: number arguments (clamp/clip min max, nan_to_num, logit eps, pow's
 * exponent); MaskedTensor refuses keyword-only arguments and tensor args.
 * UN-6: in-place variants: the result is the tensor the input would become
 * (same dtype, else DTYPE_MISMATCH); the kernel never writes its input.
 *
 * Floating results are computed in double from the input (integers first
 * converted to float32, as torch does) and rounded once to the result
 * dtype, except pow, computed in float for float16/float32 as torch's
 * pow_tensor_scalar special cases (the signs of zero depend on it). */
#include <float.h>

#include "cpu_util.h"
#include "unary_util.h"

/* ---- parameters of one call -------------------------------------------- */

typedef struct {
  mt_dtype in, out; /* input and result dtype */
  double e;         /* pow: the exponent */
  int64_t ie;       /* pow: the exponent, integer path */
  int has_lo, has_hi;
  double lo, hi; /* clamp bounds, rounded to the result dtype */
  int64_t ilo, ihi;
  double nan, posinf, neginf; /* nan_to_num replacements */
  int has_eps;
  double eps_lo, eps_hi; /* logit clamp, in the compute dtype */
  double c;              /* deg2rad/rad2deg factor, in the compute dtype */
} un_par;

typedef double (*un_f)(double x, const un_par *p);
typedef int64_t (*un_i)(int64_t x, const un_par *p);

typedef enum {
  UN_FLOAT, /* floating math: float dtypes kept, integers and bool -> float32 */
  UN_KEEP,  /* dtype kept: floats by f, integers by i, bool per un_bool */
  UN_FONLY, /* floats only (frac) */
  UN_IONLY, /* integers and bool only (bitwise_not) */
  UN_PRED,  /* bool result (isnan, signbit) */
  UN_CLAMP, /* promoted with the min/max kwargs */
  UN_POW    /* promoted with the exponent (inputs/1) */
} un_cls;

typedef enum { B_REFUSE, B_KEEP, B_I64 } un_bool; /* bool inputs of UN_KEEP */

typedef struct {
  un_cls cls;
  un_bool b;
  un_f f;
  un_i i;
  const char *kernel; /* torch's kernel name in its "not implemented" message */
  const char *bool_msg; /* torch's own message for a bool input, if any */
} un_row;

/* ---- elementwise functions ---------------------------------------------- */

static int is_half_or_float(mt_dtype d) {
  return d == MT_float32 || d == MT_float16 || d == MT_bfloat16;
}

static double f_abs(double x, const un_par *p) { (void)p; return fabs(x); }
static double f_acos(double x, const un_par *p) { (void)p; return acos(x); }
static double f_acosh(double x, const un_par *p) { (void)p; return acosh(x); }
/* angle of a real: pi for x < 0, NaN for NaN, else 0 (also for -0.0) */
static double f_angle(double x, const un_par *p) {
  (void)p;
  return isnan(x) ? x : x < 0 ? MT__UN_PI : 0.0;
}
static double f_asin(double x, const un_par *p) { (void)p; return asin(x); }
static double f_asinh(double x, const un_par *p) { (void)p; return asinh(x); }
static double f_atan(double x, const un_par *p) { (void)p; return atan(x); }
static double f_atanh(double x, const un_par *p) { (void)p; return atanh(x); }
static double f_ceil(double x, const un_par *p) { (void)p; return ceil(x); }
/* torch's clamp_scalar: NaN propagates, min(max(x, lo), hi), so hi wins
 * when lo > hi. */
static double f_clamp(double x, const un_par *p) {
  if (isnan(x)) return x;
  if (p->has_lo && x < p->lo) x = p->lo;
  if (p->has_hi && x > p->hi) x = p->hi;
  return x;
}
static double f_id(double x, const un_par *p) { (void)p; return x; }
static double f_cos(double x, const un_par *p) { (void)p; return cos(x); }
static double f_cosh(double x, const un_par *p) { (void)p; return cosh(x); }
/* x * c, c = pi/180 or 180/pi rounded to the compute dtype, one rounding:
 * the product of two floats is exact in double. */
static double f_scale(double x, const un_par *p) { return x * p->c; }
static double f_digamma(double x, const un_par *p) { (void)p; return mt__un_digamma(x); }
static double f_erf(double x, const un_par *p) { (void)p; return erf(x); }
static double f_erfc(double x, const un_par *p) { (void)p; return erfc(x); }
static double f_erfinv(double x, const un_par *p) { (void)p; return mt__un_erfinv(x); }
static double f_exp(double x, const un_par *p) { (void)p; return exp(x); }
static double f_exp2(double x, const un_par *p) { (void)p; return exp2(x); }
static double f_expm1(double x, const un_par *p) { (void)p; return expm1(x); }
static double f_floor(double x, const un_par *p) { (void)p; return floor(x); }
/* torch: x - trunc(x) (exact; frac(+-inf) = NaN, frac(-2.0) = +0) */
static double f_frac(double x, const un_par *p) { (void)p; return x - trunc(x); }
static double f_lgamma(double x, const un_par *p) { (void)p; return lgamma(x); }
static double f_log(double x, const un_par *p) { (void)p; return log(x); }
static double f_log10(double x, const un_par *p) { (void)p; return log10(x); }
static double f_log1p(double x, const un_par *p) { (void)p; return log1p(x); }
static double f_log2(double x, const un_par *p) { (void)p; return log2(x); }
/* torch: x clamped to [eps, 1 - eps] when eps is given, then log(x / (1 - x)) */
static double f_logit(double x, const un_par *p) {
  if (p->has_eps) x = x < p->eps_lo ? p->eps_lo : (x > p->eps_hi ? p->eps_hi : x);
  return log(x / (1.0 - x));
}
static double f_i0(double x, const un_par *p) { (void)p; return mt__un_i0(x); }
static double f_isnan(double x, const un_par *p) { (void)p; return isnan(x) ? 1.0 : 0.0; }
static double f_nan_to_num(double x, const un_par *p) {
  if (isnan(x)) return p->nan;
  if (isinf(x)) return x > 0 ? p->posinf : p->neginf;
  return x;
}
static double f_neg(double x, const un_par *p) { (void)p; return -x; }

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
static double f_pow(double x, const un_par *p) {
  return p->out == MT_float64 ? pow_f64(x, p->e) : (double)pow_f32((float)x, p->e);
}
static double f_reciprocal(double x, const un_par *p) { (void)p; return 1.0 / x; }
/* round half to even (the default rounding mode), as torch's nearbyint */
static double f_round(double x, const un_par *p) { (void)p; return nearbyint(x); }
static double f_rsqrt(double x, const un_par *p) { (void)p; return 1.0 / sqrt(x); }
static double f_sigmoid(double x, const un_par *p) { (void)p; return 1.0 / (1.0 + exp(-x)); }
/* torch: (0 < x) - (x < 0): sign(NaN) = 0, sign(-0.0) = +0 */
static double f_sign(double x, const un_par *p) {
  (void)p;
  return (double)((0 < x) - (x < 0));
}
static double f_signbit(double x, const un_par *p) { (void)p; return signbit(x) ? 1.0 : 0.0; }
static double f_sin(double x, const un_par *p) { (void)p; return sin(x); }
static double f_sinc(double x, const un_par *p) { (void)p; return mt__un_sinc(x); }
static double f_sinh(double x, const un_par *p) { (void)p; return sinh(x); }
static double f_sqrt(double x, const un_par *p) { (void)p; return sqrt(x); }
static double f_square(double x, const un_par *p) { (void)p; return x * x; }
static double f_tan(double x, const un_par *p) { (void)p; return tan(x); }
static double f_tanh(double x, const un_par *p) { (void)p; return tanh(x); }
static double f_trunc(double x, const un_par *p) { (void)p; return trunc(x); }

/* integer path: exact, wrapping to the result width (unsigned arithmetic,
 * so abs/neg of the minimum wrap instead of overflowing) */
static int64_t i_id(int64_t x, const un_par *p) { (void)p; return x; }
static int64_t i_abs(int64_t x, const un_par *p) {
  (void)p;
  return x < 0 ? (int64_t)(0 - (uint64_t)x) : x;
}
static int64_t i_neg(int64_t x, const un_par *p) { (void)p; return (int64_t)(0 - (uint64_t)x); }
static int64_t i_sign(int64_t x, const un_par *p) { (void)p; return (0 < x) - (x < 0); }
static int64_t i_square(int64_t x, const un_par *p) {
  (void)p;
  return (int64_t)((uint64_t)x * (uint64_t)x);
}
static int64_t i_not(int64_t x, const un_par *p) { return p->out == MT_bool ? !x : ~x; }
static int64_t i_clamp(int64_t x, const un_par *p) {
  if (p->has_lo && x < p->ilo) x = p->ilo;
  if (p->has_hi && x > p->ihi) x = p->ihi;
  return x;
}
/* x ** ie by squaring, ie >= 0 (negative exponents are refused first) */
static int64_t i_pow(int64_t x, const un_par *p) {
  uint64_t r = 1, b = (uint64_t)x;
  for (int64_t e = p->ie; e > 0; e >>= 1) {
    if (e & 1) r *= b;
    b *= b;
  }
  return (int64_t)r;
}

/* ---- the table ----------------------------------------------------------- */

/* X(base, class, bool rule, f, i, torch kernel name, torch's bool message) */
#define NEG_BOOL_MSG                                                                         \
  "Negation, the `-` operator, on a bool tensor is not supported. If you are trying to " \
  "invert a mask, use the `~` or `logical_not()` operator instead."
#define UN_BASES(X)                                                                     \
  X(abs, UN_KEEP, B_REFUSE, f_abs, i_abs, "abs_cpu", NULL)                               \
  X(acos, UN_FLOAT, B_KEEP, f_acos, NULL, NULL, NULL)                                    \
  X(acosh, UN_FLOAT, B_KEEP, f_acosh, NULL, NULL, NULL)                                  \
  X(angle, UN_FLOAT, B_KEEP, f_angle, NULL, NULL, NULL)                                  \
  X(asin, UN_FLOAT, B_KEEP, f_asin, NULL, NULL, NULL)                                    \
  X(asinh, UN_FLOAT, B_KEEP, f_asinh, NULL, NULL, NULL)                                  \
  X(atan, UN_FLOAT, B_KEEP, f_atan, NULL, NULL, NULL)                                    \
  X(atanh, UN_FLOAT, B_KEEP, f_atanh, NULL, NULL, NULL)                                  \
  X(bitwise_not, UN_IONLY, B_KEEP, NULL, i_not, "bitwise_not_cpu", NULL)                 \
  X(ceil, UN_KEEP, B_REFUSE, f_ceil, i_id, "ceil_vml_cpu", NULL)                         \
  X(clamp, UN_CLAMP, B_KEEP, f_clamp, i_clamp, NULL, NULL)                               \
  X(conj_physical, UN_KEEP, B_KEEP, f_id, i_id, NULL, NULL)                              \
  X(cos, UN_FLOAT, B_KEEP, f_cos, NULL, NULL, NULL)                                      \
  X(cosh, UN_FLOAT, B_KEEP, f_cosh, NULL, NULL, NULL)                                    \
  X(deg2rad, UN_FLOAT, B_KEEP, f_scale, NULL, NULL, NULL)                                \
  X(digamma, UN_FLOAT, B_KEEP, f_digamma, NULL, NULL, NULL)                              \
  X(erf, UN_FLOAT, B_KEEP, f_erf, NULL, NULL, NULL)                                      \
  X(erfc, UN_FLOAT, B_KEEP, f_erfc, NULL, NULL, NULL)                                    \
  X(erfinv, UN_FLOAT, B_KEEP, f_erfinv, NULL, NULL, NULL)                                \
  X(exp, UN_FLOAT, B_KEEP, f_exp, NULL, NULL, NULL)                                      \
  X(exp2, UN_FLOAT, B_KEEP, f_exp2, NULL, NULL, NULL)                                    \
  X(expm1, UN_FLOAT, B_KEEP, f_expm1, NULL, NULL, NULL)                                  \
  X(floor, UN_KEEP, B_REFUSE, f_floor, i_id, "floor_vml_cpu", NULL)                      \
  X(frac, UN_FONLY, B_REFUSE, f_frac, NULL, "frac_cpu", NULL)                            \
  X(lgamma, UN_FLOAT, B_KEEP, f_lgamma, NULL, NULL, NULL)                                \
  X(log, UN_FLOAT, B_KEEP, f_log, NULL, NULL, NULL)                                      \
  X(log10, UN_FLOAT, B_KEEP, f_log10, NULL, NULL, NULL)                                  \
  X(log1p, UN_FLOAT, B_KEEP, f_log1p, NULL, NULL, NULL)                                  \
  X(log2, UN_FLOAT, B_KEEP, f_log2, NULL, NULL, NULL)                                    \
  X(logit, UN_FLOAT, B_KEEP, f_logit, NULL, NULL, NULL)                                  \
  X(i0, UN_FLOAT, B_KEEP, f_i0, NULL, NULL, NULL)                                        \
  X(isnan, UN_PRED, B_KEEP, f_isnan, NULL, NULL, NULL)                                   \
  X(nan_to_num, UN_KEEP, B_KEEP, f_nan_to_num, i_id, NULL, NULL)                         \
  X(neg, UN_KEEP, B_REFUSE, f_neg, i_neg, NULL, NEG_BOOL_MSG)                            \
  X(positive, UN_KEEP, B_REFUSE, f_id, i_id, NULL,                                       \
    "The `+` operator, on a bool tensor is not supported.")                              \
  X(pow, UN_POW, B_KEEP, f_pow, i_pow, NULL, NULL)                                       \
  X(rad2deg, UN_FLOAT, B_KEEP, f_scale, NULL, NULL, NULL)                                \
  X(reciprocal, UN_FLOAT, B_KEEP, f_reciprocal, NULL, NULL, NULL)                        \
  X(round, UN_KEEP, B_REFUSE, f_round, i_id, "round_vml_cpu", NULL)                      \
  X(rsqrt, UN_FLOAT, B_KEEP, f_rsqrt, NULL, NULL, NULL)                                  \
  X(sigmoid, UN_FLOAT, B_KEEP, f_sigmoid, NULL, NULL, NULL)                              \
  X(sign, UN_KEEP, B_KEEP, f_sign, i_sign, NULL, NULL)                                   \
  X(signbit, UN_PRED, B_KEEP, f_signbit, NULL, NULL, NULL)                               \
  X(sin, UN_FLOAT, B_KEEP, f_sin, NULL, NULL, NULL)                                      \
  X(sinc, UN_FLOAT, B_KEEP, f_sinc, NULL, NULL, NULL)                                    \
  X(sinh, UN_FLOAT, B_KEEP, f_sinh, NULL, NULL, NULL)                                    \
  X(sqrt, UN_FLOAT, B_KEEP, f_sqrt, NULL, NULL, NULL)                                    \
  X(square, UN_KEEP, B_I64, f_square, i_square, NULL, NULL)                              \
  X(tan, UN_FLOAT, B_KEEP, f_tan, NULL, NULL, NULL)                                      \
  X(tanh, UN_FLOAT, B_KEEP, f_tanh, NULL, NULL, NULL)                                    \
  X(trunc, UN_KEEP, B_REFUSE, f_trunc, i_id, "trunc_vml_cpu", NULL)

typedef enum {
#define UN_X(base, cls, b, f, i, k, m) UN_##base,
  UN_BASES(UN_X)
#undef UN_X
  UN__COUNT
} un_base;

static const un_row ROWS[UN__COUNT] = {
#define UN_X(base, cls, b, f, i, k, m) [UN_##base] = {cls, b, f, i, k, m},
    UN_BASES(UN_X)
#undef UN_X
};

/* SP-5: which base ops torch implements on a plain (not masked) sparse
 * tensor: the zero-preserving ones, each layout its own list (torch 2.15,
 * every unary op probed on COO and CSR). COO: out of place; CSR: out of
 * place; INPLACE: the in-place form on both layouts (COO only when
 * coalesced, but for the linear ones, UNCOAL, which also keep an
 * uncoalesced COO as stored out of place; INPLACE is set only with both
 * layout flags, as in SP_ALL); COO_INPLACE_ONLY: the
 * in-place form on COO, not on CSR. Any other op, layout or form is
 * torch's "Could not run 'aten::<op>' with arguments from the 'SparseCPU'
 * backend" / "unsupported tensor layout: SparseCsr" (LAYOUT_MISMATCH). */
enum { SP_COO = 1, SP_CSR = 2, SP_INPLACE = 4, SP_UNCOAL = 8, SP_COO_INPLACE_ONLY = 16 };
#define SP_ALL (SP_COO | SP_CSR | SP_INPLACE)
static const unsigned char SPARSE[UN__COUNT] = {
    [UN_abs] = SP_ALL, [UN_asin] = SP_ALL, [UN_asinh] = SP_ALL, [UN_atan] = SP_ALL,
    [UN_atanh] = SP_ALL, [UN_ceil] = SP_ALL, [UN_deg2rad] = SP_ALL, [UN_erf] = SP_ALL,
    [UN_erfinv] = SP_ALL, [UN_expm1] = SP_ALL, [UN_trunc] = SP_ALL, [UN_floor] = SP_ALL,
    [UN_frac] = SP_ALL, [UN_log1p] = SP_ALL, [UN_rad2deg] = SP_ALL, [UN_round] = SP_ALL,
    [UN_sign] = SP_ALL, [UN_sin] = SP_ALL, [UN_sinh] = SP_ALL, [UN_sqrt] = SP_ALL,
    [UN_tan] = SP_ALL, [UN_tanh] = SP_ALL,
    [UN_neg] = SP_ALL | SP_UNCOAL, [UN_conj_physical] = SP_ALL | SP_UNCOAL,
    [UN_positive] = SP_COO | SP_CSR | SP_UNCOAL, [UN_isnan] = SP_COO | SP_CSR,
    [UN_signbit] = SP_COO | SP_CSR,
    [UN_nan_to_num] = SP_COO | SP_COO_INPLACE_ONLY, [UN_square] = SP_COO, [UN_pow] = SP_COO,
    [UN_angle] = SP_CSR,
};

/* ---- dtypes -------------------------------------------------------------- */

/* 0 bool, 1 integer, 2 float: the categories of type promotion */
static int category(mt_dtype d) { return d == MT_bool ? 0 : mt__cpu_is_float(d) ? 2 : 1; }

/* A tensor of dtype d with a Python number of category c: a higher
 * category wins with its default dtype (float32, int64). */
static mt_dtype promote(mt_dtype d, int c) {
  if (c <= category(d)) return d;
  return c == 2 ? MT_float32 : MT_int64;
}

static mt_status refuse(const char *name, const un_row *r, mt_dtype d, mt_error *err) {
  if (d == MT_bool && r->bool_msg)
    return mt_err(err, MT_DTYPE_MISMATCH, "%s: torch refuses bool inputs (%s)", name, r->bool_msg);
  return mt_err(err, MT_DTYPE_MISMATCH,
                "%s: torch has no kernel for %s inputs (\"%s\" not implemented for '%s')", name,
                mt_dtype_name(d), r->kernel ? r->kernel : name, mt__cpu_torch_type(d));
}

/* The category of a number kwarg (FLOAT accepts an int: it keeps its own
 * category, as Python's int does). */
static int kw_category(const mt_kwarg *a) {
  return a->type == MT_KW_BOOL ? 0 : a->type == MT_KW_INT ? 1 : 2;
}

/* ---- the kernel ------------------------------------------------------------ */

/* Input 0: a valid masked tensor of any dtype. */
static mt_status masked_input0(const mt_call *call, const char *name, const mt_tensor **m,
                               mt_error *err) {
  mt_status st;
  if ((st = mt__cpu_input(call, 0, name, m, err)) != MT_OK) return st;
  if ((*m)->kind != MT_KIND_MASKED)
    return mt_err(err, MT_NOT_SUPPORTED,
                  "%s: inputs/0 has kind %s; the CPU backend implements %s on masked tensors", name,
                  mt_kind_name((*m)->kind), name);
  return mt_tensor_validate(*m, "inputs/0", err);
}

/* pow's exponent (inputs/1): a Python number. MaskedTensor refuses tensor
 * arguments (UN-5), a masked exponent is binary pow (not this kernel). */
static mt_status pow_exponent(const mt_call *call, const char *name, int *cat, double *e,
                              mt_error *err) {
  const mt_tensor *x = NULL;
  mt_status st;
  if ((st = mt__cpu_input(call, 1, name, &x, err)) != MT_OK) return st;
  if (x->kind == MT_KIND_MASKED)
    return mt_err(err, MT_NOT_SUPPORTED,
                  "%s: inputs/1 (exponent) is a masked tensor; only a number exponent is supported",
                  name);
  if (x->kind != MT_KIND_SCALAR)
    return mt_err(err, MT_INVALID_ARGUMENT,
                  "%s: inputs/1 (exponent) is a %s tensor: MaskedTensor unary ops do not support "
                  "additional Tensor arguments",
                  name, mt_kind_name(x->kind));
  if ((st = mt__cpu_scalar_value(x, "inputs/1 (exponent)", name, e, err)) != MT_OK) return st;
  *cat = category(x->dtype);
  return MT_OK;
}

/* Result dtype and parameters of the call (UN-1, UN-2, UN-5, UN-6). */
static mt_status prepare(const mt_call *call, const char *name, const un_row *r, int inplace,
                         mt_dtype in, un_par *p, mt_error *err) {
  mt_status st;
  memset(p, 0, sizeof *p);
  p->in = in;
  p->out = in;
  const mt_kwarg *dec = mt_kw_find(call->kw, "decimals");
  if (dec)
    return mt_err(err, MT_INVALID_ARGUMENT,
                  "%s: kwargs/decimals: MaskedTensor unary ops require that len(kwargs) == 0 "
                  "(decimals is keyword-only in torch.round)",
                  name);
  switch (r->cls) {
  case UN_FLOAT: p->out = mt__cpu_is_float(in) ? in : MT_float32; break;
  case UN_PRED: p->out = MT_bool; break;
  case UN_FONLY:
    if (!mt__cpu_is_float(in)) return refuse(name, r, in, err);
    break;
  case UN_IONLY:
    if (mt__cpu_is_float(in)) return refuse(name, r, in, err);
    break;
  case UN_KEEP:
    if (in == MT_bool && r->b == B_REFUSE) return refuse(name, r, in, err);
    if (in == MT_bool && r->b == B_I64) p->out = MT_int64;
    break;
  case UN_CLAMP: {
    const mt_kwarg *lo = mt_kw_find(call->kw, "min"), *hi = mt_kw_find(call->kw, "max");
    if (!lo && !hi)
      return mt_err(err, MT_INVALID_ARGUMENT,
                    "%s: torch.clamp: At least one of 'min' or 'max' must not be None", name);
    int c = 0;
    if (lo && kw_category(lo) > c) c = kw_category(lo);
    if (hi && kw_category(hi) > c) c = kw_category(hi);
    p->out = promote(in, c);
    p->has_lo = lo != NULL;
    p->has_hi = hi != NULL;
    if (lo) {
      p->lo = mt__cpu_round(p->out, lo->f);
      p->ilo = lo->type == MT_KW_FLOAT ? (int64_t)lo->f : lo->i;
    }
    if (hi) {
      p->hi = mt__cpu_round(p->out, hi->f);
      p->ihi = hi->type == MT_KW_FLOAT ? (int64_t)hi->f : hi->i;
    }
    break;
  }
  case UN_POW: {
    int c = 0;
    if ((st = pow_exponent(call, name, &c, &p->e, err)) != MT_OK) return st;
    p->out = promote(in, c);
    if (!mt__cpu_is_float(p->out)) {
      p->ie = (int64_t)p->e;
      if (p->ie < 0 && p->out != MT_bool)
        return mt_err(err, MT_DTYPE_MISMATCH,
                      "%s: Integers to negative integer powers are not allowed.", name);
    }
    break;
  }
  }
  if (inplace && p->out != in)
    return mt_err(err, MT_DTYPE_MISMATCH,
                  "%s: result type %s can't be cast to the desired output type %s (in place on "
                  "a %s tensor)",
                  name, mt__cpu_torch_type(p->out), mt__cpu_torch_type(in), mt_dtype_name(in));
  /* the compute dtype of the float path: float for float16 and bfloat16
   * (torch computes them in float) */
  mt_dtype ct = p->out == MT_float64 ? MT_float64 : MT_float32;
  if (r->f == f_nan_to_num) {
    /* the dtype's largest finite value; bfloat16's is (2 - 2^-7) 2^127 (FLT_MAX
     * would round to inf) */
    double big = p->out == MT_float64    ? DBL_MAX
                 : p->out == MT_float16  ? 65504.0
                 : p->out == MT_bfloat16 ? 0x1.fep127
                                         : FLT_MAX;
    p->nan = mt_kw_float(call->kw, "nan", 0.0);
    p->posinf = mt_kw_float(call->kw, "posinf", big);
    p->neginf = mt_kw_float(call->kw, "neginf", -big);
  }
  if (r->f == f_logit) {
    const mt_kwarg *eps = mt_kw_find(call->kw, "eps");
    p->has_eps = eps && eps->f >= 0;
    if (p->has_eps) {
      p->eps_lo = mt__cpu_round(ct, eps->f);
      p->eps_hi = mt__cpu_round(ct, 1.0 - p->eps_lo);
    }
  }
  if (r->f == f_scale)
    p->c = mt__cpu_round(ct, r == &ROWS[UN_deg2rad] ? MT__UN_PI / 180.0 : 180.0 / MT__UN_PI);
  return MT_OK;
}

/* out[k] = op(in[k]) over n contiguous elements. Masked-out elements are
 * transformed too (as torch does); they stay masked out, and no value can
 * fail the call. */
static void apply_all(const un_row *r, const un_par *p, const void *in, void *out, int64_t n) {
  int int_path = r->cls != UN_PRED && !mt__cpu_is_float(p->out);
  int to_float = !mt__cpu_is_float(p->in) && is_half_or_float(p->out);
  for (int64_t k = 0; k < n; k++) {
    if (int_path) {
      mt__cpu_sti(out, p->out, k, r->i(mt__cpu_ldi(in, p->in, k), p));
    } else {
      double x = mt__cpu_ld(in, p->in, k);
      if (to_float) x = (double)(float)x; /* integers are converted to float32 first */
      mt__cpu_st(out, p->out, k, r->f(x, p));
    }
  }
}

static mt_status plain_sparse(mt_call *call, mt_op op, un_base base, int inplace, mt_error *err);

static mt_status unary(mt_call *call, mt_op op, un_base base, int inplace, mt_error *err) {
  const un_row *r = &ROWS[base];
  const char *name = mt_op_name(op);
  const mt_host *h = mt__cpu_host(call);
  const mt_tensor *m = NULL;
  mt_tensor *data = NULL, *mask = NULL, *out = NULL, *dtmp = NULL, *mtmp = NULL;
  mt__cpu_mview mv = {0};
  un_par p;
  mt_status st;

  mt__cpu_begin(call);
  if ((st = mt__kw_check(op, call->kw, err)) != MT_OK) return st;
  if (call->n_in > 0 && call->in && call->in[0] &&
      (call->in[0]->kind == MT_KIND_COO || mt_kind_is_compressed(call->in[0]->kind)))
    return plain_sparse(call, op, base, inplace, err);
  if ((st = masked_input0(call, name, &m, err)) != MT_OK) return st;
  if ((st = prepare(call, name, r, inplace, m->data->dtype, &p, err)) != MT_OK) return st;

  if (m->data->kind == MT_KIND_DENSE) {
    /* MASK-4, dense storage */
    if ((st = mt__cpu_mview_open(m, &mv, err)) != MT_OK) goto out;
    if ((st = h->dense_new(p.out, m->ndim, m->shape, &data, err)) != MT_OK) goto out;
    apply_all(r, &p, mv.data->values, data->values, mt_numel(m));
    if ((st = mt__cpu_copy(h, mv.mask, &mask, err)) != MT_OK) goto out;
  } else if (m->data->kind == MT_KIND_COO && inplace) {
    /* UN-6: torch's in-place path rebuilds the data uncoalesced and then
     * asks for its indices, so every in-place unary op on COO storage fails */
    st = mt_err(err, MT_LAYOUT_MISMATCH,
                "%s: in place on COO storage: torch refuses it (RuntimeError: Cannot get indices "
                "on an uncoalesced tensor, please call .coalesce() first)",
                name);
    goto out;
  } else if (m->data->kind == MT_KIND_COO) {
    /* MASK-4, COO storage: torch coalesces the data and maps its values. */
    const mt_tensor *cd, *cm;
    if ((st = mt__cpu_coalesced(m->data, &cd, &dtmp, err)) != MT_OK) goto out;
    if ((st = mt__cpu_coalesced(m->mask, &cm, &mtmp, err)) != MT_OK) goto out;
    if ((st = h->coo_new(p.out, cd->ndim, cd->shape, cd->sparse_dim, cd->nnz, &data, err)) !=
        MT_OK)
      goto out;
    if (cd->nnz > 0 && cd->sparse_dim > 0)
      memcpy(data->indices, cd->indices, (size_t)cd->sparse_dim * (size_t)cd->nnz * sizeof(int64_t));
    apply_all(r, &p, cd->values, data->values, cd->nnz * mt_coo_row_numel(cd));
    data->coalesced = 1;
    if ((st = mt__cpu_copy(h, cm, &mask, err)) != MT_OK) goto out;
  } else if (m->data->kind == MT_KIND_CSR) {
    /* MASK-4, CSR storage: torch maps the data's values and keeps its
     * crow/col indices (in place too: unlike COO, torch takes it) */
    const mt_tensor *d = m->data;
    if ((st = mt__cpu_csr_inferred_cols(d, name, err)) != MT_OK) goto out;
    if ((st = mt__cpu_compressed_like(h, d, p.out, &data, err)) != MT_OK) goto out;
    apply_all(r, &p, d->values, data->values, d->nnz);
    if ((st = mt_tensor_clone_host(h, m->mask, &mask, err)) != MT_OK) goto out;
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

/* SP-5: a plain sparse tensor (COO or CSR, not masked) through op, as
 * torch's sparse kernels do it: the op maps the stored values and keeps the
 * structure (f(0) = 0). Out of place, COO input is coalesced first
 * (duplicates summed, then mapped); in place, torch refuses an uncoalesced
 * COO tensor ("<op>_ requires coalesced input") except for the linear ops,
 * which map the entries as stored. */
/* SPP-1: pow(S, 0) would give 1 at every unstored position: torch
 * refuses it ("pow: cannot raise to zeroth power on sparse tensor; it
 * would make the result tensor dense"), an integer 0 and 0.0 alike; a
 * negative exponent maps the stored values only (0 ** -1 = inf is not
 * written where nothing is stored). */
static mt_status sparse_pow_exponent(const mt_call *call, const char *name, mt_error *err) {
  const mt_tensor *x = NULL;
  double e = 0;
  mt_status st;
  if ((st = mt__cpu_input(call, 1, name, &x, err)) != MT_OK) return st;
  if (x->kind != MT_KIND_SCALAR)
    return mt_err(err, MT_INVALID_ARGUMENT, "%s: inputs/1 (exponent) must be a number on a sparse "
                  "tensor, got a %s tensor", name, mt_kind_name(x->kind));
  if ((st = mt__cpu_scalar_value(x, "inputs/1 (exponent)", name, &e, err)) != MT_OK) return st;
  if (e == 0.0)
    return mt_err(err, MT_INVALID_ARGUMENT,
                  "%s: cannot raise to zeroth power on sparse tensor; it would make the result "
                  "tensor dense", name);
  return MT_OK;
}

/* torch's layout names, as "unsupported tensor layout: Sparse<...>" spells them */
static const char *sparse_layout_name(mt_kind k) {
  switch (k) {
  case MT_KIND_CSC: return "SparseCsc";
  case MT_KIND_BSR: return "SparseBsr";
  case MT_KIND_BSC: return "SparseBsc";
  default: return "SparseCsr";
  }
}


static mt_status plain_sparse(mt_call *call, mt_op op, un_base base, int inplace, mt_error *err) {
  const char *name = mt_op_name(op);
  const mt_host *h = mt__cpu_host(call);
  const un_row *r = &ROWS[base];
  const mt_tensor *x = call->in[0], *cx = NULL;
  mt_tensor *ctmp = NULL, *out = NULL;
  int coo = x->kind == MT_KIND_COO;
  unsigned sp = SPARSE[base];
  un_par p;
  mt_status st;

  if ((st = mt_tensor_validate(x, "inputs/0", err)) != MT_OK) return st;
  int ok = inplace ? (sp & SP_INPLACE) || (coo && (sp & SP_COO_INPLACE_ONLY))
                   : (sp & (coo ? SP_COO : SP_CSR)) != 0;
  if (!ok && coo)
    return mt_err(err, MT_LAYOUT_MISMATCH,
                  "%s: Could not run 'aten::%s' with arguments from the 'SparseCPU' backend", name,
                  name);
  if (!ok)
    return mt_err(err, MT_LAYOUT_MISMATCH, "%s: unsupported tensor layout: %s (aten::%s)", name,
                  sparse_layout_name(x->kind), name);
  /* SPP-1: round_ runs on CSR only; CSC/BSR/BSC trip torch's
   * "self.is_sparse_csr() INTERNAL ASSERT FAILED" */
  if (inplace && base == UN_round && !coo && x->kind != MT_KIND_CSR)
    return mt_err(err, MT_LAYOUT_MISMATCH,
                  "%s: self.is_sparse_csr() INTERNAL ASSERT FAILED (torch's in-place round of a "
                  "%s tensor)",
                  name, mt_kind_name(x->kind));
  if (inplace && coo && !x->coalesced && !(sp & SP_UNCOAL))
    return mt_err(err, MT_LAYOUT_MISMATCH, "%s: %s requires coalesced input", name, name);
  if (base == UN_pow && (st = sparse_pow_exponent(call, name, err)) != MT_OK) return st;
  if ((st = prepare(call, name, r, inplace, x->dtype, &p, err)) != MT_OK) return st;
  /* SPP-1: torch's sparse pow (and square, which is pow(x, 2)) writes a
   * result of the input's dtype: a promoted result type is refused */
  if ((base == UN_pow || base == UN_square) && p.out != x->dtype)
    return mt_err(err, MT_DTYPE_MISMATCH,
                  "%s: result type %s can't be cast to the desired output type %s (sparse %s "
                  "keeps the input's dtype)",
                  name, mt__cpu_torch_type(p.out), mt__cpu_torch_type(x->dtype), name);
  if (coo) {
    /* the linear ops (neg, conj_physical, positive; in place or not) map the
     * entries as stored, duplicates and flag kept; the others coalesce
     * first (SP-5) */
    if ((inplace || (sp & SP_UNCOAL)) && !x->coalesced) {
      cx = x;
    } else if ((st = mt__cpu_coalesced(x, &cx, &ctmp, err)) != MT_OK) {
      goto out;
    }
    if ((st = h->coo_new(p.out, cx->ndim, cx->shape, cx->sparse_dim, cx->nnz, &out, err)) != MT_OK)
      goto out;
    if (cx->nnz > 0 && cx->sparse_dim > 0)
      memcpy(out->indices, cx->indices, (size_t)cx->sparse_dim * (size_t)cx->nnz * sizeof(int64_t));
    apply_all(r, &p, cx->values, out->values, cx->nnz * mt_coo_row_numel(cx));
    out->coalesced = cx->coalesced;
  } else {
    /* every compressed kind, batched and hybrid too: the structure kept,
     * each stored value mapped (SPP-1) */
    mt_cgeom g = {0};
    if ((st = mt__cpu_compressed_like(h, x, p.out, &out, err)) != MT_OK) goto out;
    mt_cgeom_of(x, &g);
    apply_all(r, &p, x->values, out->values, g.batches * x->nnz * g.entry);
  }
  call->out[0] = out;
  call->n_out = 1;
  out = NULL;
out:
  mt_tensor_free(ctmp);
  if (out) h->free(out);
  return st;
}

/* ---- the kernels: every op of ops.def's unary family ----------------------- */

/* X(op, base, in place) */
#define UN_OPS(X)                                                                              \
  X(abs, abs, 0) X(absolute, abs, 0) X(acos, acos, 0) X(arccos, acos, 0) X(acosh, acosh, 0)    \
  X(arccosh, acosh, 0) X(angle, angle, 0) X(asin, asin, 0) X(arcsin, asin, 0)                  \
  X(asinh, asinh, 0) X(arcsinh, asinh, 0) X(atan, atan, 0) X(arctan, atan, 0)                  \
  X(atanh, atanh, 0) X(arctanh, atanh, 0) X(bitwise_not, bitwise_not, 0) X(ceil, ceil, 0)      \
  X(clamp, clamp, 0) X(clip, clamp, 0) X(conj_physical, conj_physical, 0) X(cos, cos, 0)       \
  X(cosh, cosh, 0) X(deg2rad, deg2rad, 0) X(digamma, digamma, 0) X(erf, erf, 0)                \
  X(erfc, erfc, 0) X(erfinv, erfinv, 0) X(exp, exp, 0) X(exp2, exp2, 0) X(expm1, expm1, 0)     \
  X(fix, trunc, 0) X(floor, floor, 0) X(frac, frac, 0) X(lgamma, lgamma, 0) X(log, log, 0)     \
  X(log10, log10, 0) X(log1p, log1p, 0) X(log2, log2, 0) X(logit, logit, 0) X(i0, i0, 0)       \
  X(isnan, isnan, 0) X(nan_to_num, nan_to_num, 0) X(neg, neg, 0) X(negative, neg, 0)           \
  X(positive, positive, 0) X(pow, pow, 0) X(rad2deg, rad2deg, 0)                               \
  X(reciprocal, reciprocal, 0) X(round, round, 0) X(rsqrt, rsqrt, 0) X(sigmoid, sigmoid, 0)    \
  X(sign, sign, 0) X(sgn, sign, 0) X(signbit, signbit, 0) X(sin, sin, 0) X(sinc, sinc, 0)      \
  X(sinh, sinh, 0) X(sqrt, sqrt, 0) X(square, square, 0) X(tan, tan, 0) X(tanh, tanh, 0)       \
  X(trunc, trunc, 0)                                                                           \
  X(abs_, abs, 1) X(acos_, acos, 1) X(acosh_, acosh, 1) X(asin_, asin, 1) X(asinh_, asinh, 1)  \
  X(atan_, atan, 1) X(atanh_, atanh, 1) X(bitwise_not_, bitwise_not, 1) X(ceil_, ceil, 1)      \
  X(clamp_, clamp, 1) X(cos_, cos, 1) X(cosh_, cosh, 1) X(deg2rad_, deg2rad, 1)                \
  X(digamma_, digamma, 1) X(erf_, erf, 1) X(erfc_, erfc, 1) X(erfinv_, erfinv, 1)              \
  X(exp_, exp, 1) X(exp2_, exp2, 1) X(expm1_, expm1, 1) X(floor_, floor, 1) X(frac_, frac, 1)  \
  X(lgamma_, lgamma, 1) X(log_, log, 1) X(log1p_, log1p, 1) X(log2_, log2, 1)                  \
  X(logit_, logit, 1) X(i0_, i0, 1) X(nan_to_num_, nan_to_num, 1) X(neg_, neg, 1)              \
  X(pow_, pow, 1) X(reciprocal_, reciprocal, 1) X(round_, round, 1) X(rsqrt_, rsqrt, 1)        \
  X(sigmoid_, sigmoid, 1) X(sign_, sign, 1) X(sin_, sin, 1) X(sinc_, sinc, 1)                  \
  X(sinh_, sinh, 1) X(sqrt_, sqrt, 1) X(square_, square, 1) X(tan_, tan, 1) X(tanh_, tanh, 1)  \
  X(trunc_, trunc, 1) X(absolute_, abs, 1) X(arccos_, acos, 1) X(arccosh_, acosh, 1)         \
  X(arcsin_, asin, 1) X(arcsinh_, asinh, 1) X(arctan_, atan, 1) X(arctanh_, atanh, 1)          \
  X(clip_, clamp, 1) X(fix_, trunc, 1) X(negative_, neg, 1) X(sgn_, sign, 1)                   \
  X(conj_physical_, conj_physical, 1) X(rad2deg_, rad2deg, 1) X(log10_, log10, 1)

#define UN_KERNEL(op, base, inpl)                                \
  mt_status mt_cpu_##op(mt_call *call, mt_error *err) {          \
    return unary(call, MT_OP_##op, UN_##base, inpl, err);        \
  }
UN_OPS(UN_KERNEL)
#undef UN_KERNEL

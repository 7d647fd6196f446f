/* masked_fn.c - CPU kernels of the masked_fn family: torch.masked's
 * functional ops (torch/masked/_ops.py) on a plain tensor and a bool mask,
 * returning a plain tensor (spec/SEMANTICS.md, MFN-1..9).
 *
 * MFN-1  inputs [input] (mask=None: every element specified) or [input,
 *        mask]; the mask broadcasts to the input (right-aligned, size-1
 *        dims stretch); a mask with more dims -> INDEX_OUT_OF_RANGE, other
 *        shapes -> SHAPE_MISMATCH. masked_logaddexp: [input, other] or
 *        [input, other, input_mask, other_mask].
 * MFN-2  reductions fill masked-out elements with the op's identity and run
 *        the plain op: sum 0, prod 1, amax/argmax -inf (integers: the
 *        dtype's min), amin/argmin +inf (max), logsumexp -inf, norm 0
 *        (ord=-inf: +inf), median NaN (torch.nanmedian: a masked-in NaN is
 *        skipped too). A fully masked slice gives the op of identities.
 * MFN-3  mean/var/std divide by the count of masked-in elements (var/std:
 *        max(count - correction, 0)); fully masked slices give NaN.
 * MFN-4  cumsum/cumprod fill 0/1 and scan: masked-out outputs repeat the
 *        running value.
 * MFN-5  softmax/log_softmax/softmin fill -inf/+inf: masked-out outputs are
 *        0 (log_softmax -inf), fully masked slices NaN; normalize divides
 *        the 0-filled input by max(masked norm, eps): fully masked slices 0.
 * MFN-6  logaddexp fills both operands with -inf; input and other broadcast.
 * MFN-7  dtypes: sum/prod of integers and bool give int64, argmax/argmin
 *        give the index in the input's dtype, var/std of integers float32,
 *        logsumexp of integers is computed in float32 and truncated to the
 *        input dtype, median of integers/bool is the float32 median cast
 *        back (a fully masked slice: INVALID_ARGUMENT); mean, norm,
 *        softmax, softmin, log_softmax, normalize and logaddexp refuse
 *        integers (DTYPE_MISMATCH), amax/amin/argmax/argmin refuse bool
 *        with a mask (no identity).
 * MFN-8  dtype=: sum, prod, cumsum, cumprod, mean, norm, normalize, softmax,
 *        log_softmax and softmin fill in the input's dtype, cast the filled
 *        input to dtype and compute in it (float -> int truncates; an
 *        integer input of softmax/log_softmax/softmin is taken with a
 *        floating dtype, its fill being the dtype's min/max); amax, amin,
 *        argmax, argmin, logsumexp and logaddexp compute as without dtype
 *        and cast the result; median casts only an integer input's float32
 *        median (a float input keeps its dtype); var/std sum the input cast
 *        to dtype for the mean, subtract in the promoted dtype and divide in
 *        dtype (an integer dtype: in float32, truncated; std then takes the
 *        float32 root). mean refuses an integer dtype, norm/normalize an
 *        integer dtype or one narrower than the input (DTYPE_MISMATCH).
 * MFN-9  sparse inputs: COO sum/prod/amax/amin and CSR sum/prod/amax/amin/
 *        mean (keepdim=True) reduce the entries of torch's _sparse_*_where
 *        (every masked-in position, 0 where the input stores none) into a
 *        sparse result; the other ops and combinations: LAYOUT_MISMATCH.
 * Floats are computed in double and rounded to the dtype where torch rounds
 * (R below), so float16 and float32 match torch within a few ulp.
 * Masked-out data never reaches an output: it is replaced by the identity
 * before anything reads it. */
#include "cpu_util.h"

#include "mt/kwargs.h"

/* ---- the op table -------------------------------------------------------- */

typedef enum { SH_REDUCE, SH_SCAN, SH_BINARY } mfn_shape;
typedef enum {
  DIM_MULTI,    /* int or tuple; absent or () = all dims */
  DIM_FLAT,     /* int; absent = the flattened input (argmax/argmin) */
  DIM_LAST,     /* int; absent = -1 (median) */
  DIM_REQUIRED, /* int, required (scans, softmax, normalize) */
  DIM_NONE      /* logaddexp */
} mfn_dim;

typedef enum {
  ID_ZERO, ID_ONE, ID_NEG_INF, ID_POS_INF, ID_NAN, ID_NORM, ID_NONE
} mfn_identity;

/* Which integer dtypes an op takes: none, integers (not bool), integers and
 * bool. */
typedef enum { INT_NO, INT_YES, INT_BOOL } mfn_ints;

/* Where dtype= casts (MFN-8): the filled input before the op, the op's
 * result after it, median's integer result only, or var/std's own mix. */
typedef enum { CAST_PRE, CAST_POST, CAST_MEDIAN, CAST_VAR } mfn_cast;

typedef struct mfn_slice mfn_slice;
typedef void (*mfn_fn)(const mfn_slice *s, double *od, int64_t *oi);

typedef struct {
  mt_op op;
  const char *name;
  mfn_shape shape;
  mfn_dim dim;
  mfn_identity fill;
  mfn_ints ints;
  mfn_cast cast;
  mfn_fn fn;
} mfn_desc;

/* Arguments and one gathered slice: v (floats, masked-out = identity),
 * vi (integer input, masked-out = identity), mk (mask), L elements. */
struct mfn_slice {
  const double *v;
  const int64_t *vi;
  const uint8_t *mk;
  int64_t L;
  mt_dtype in_dt; /* the input dtype */
  mt_dtype ct;    /* the dtype torch rounds intermediates to */
  int is_int;     /* integer/bool input computed exactly in vi */
  mt_dtype to;    /* var/std: the dtype= (default: the input's, float32 for integers) */
  double ord, eps, correction;
};

static double R(const mfn_slice *s, double v) { return mt__cpu_round(s->ct, v); }

static int is_intlike(mt_dtype d) { return mt__cpu_is_int(d) || d == MT_bool; }

/* ---- slice kernels (reductions write od[0]/oi[0], scans od[k]/oi[k]) ---- */

static void f_sum(const mfn_slice *s, double *od, int64_t *oi) {
  if (s->is_int) {
    uint64_t a = 0;
    for (int64_t k = 0; k < s->L; k++) a += (uint64_t)s->vi[k];
    oi[0] = (int64_t)a;
    return;
  }
  double a = 0.0;
  for (int64_t k = 0; k < s->L; k++) a += s->v[k];
  od[0] = R(s, a);
}

static void f_prod(const mfn_slice *s, double *od, int64_t *oi) {
  if (s->is_int) {
    uint64_t a = 1;
    for (int64_t k = 0; k < s->L; k++) a *= (uint64_t)s->vi[k];
    oi[0] = (int64_t)a;
    return;
  }
  double a = 1.0;
  for (int64_t k = 0; k < s->L; k++) a *= s->v[k];
  od[0] = R(s, a);
}

/* amax (sign 1) / amin (sign -1): NaN propagates as torch.amax. */
static void ext(const mfn_slice *s, double *od, int64_t *oi, int sign) {
  if (s->is_int) {
    int64_t a = s->vi[0];
    for (int64_t k = 1; k < s->L; k++)
      if (sign > 0 ? s->vi[k] > a : s->vi[k] < a) a = s->vi[k];
    oi[0] = a;
    return;
  }
  double a = s->v[0];
  for (int64_t k = 1; k < s->L && !isnan(a); k++)
    if (isnan(s->v[k]) || (sign > 0 ? s->v[k] > a : s->v[k] < a)) a = s->v[k];
  od[0] = a;
}
static void f_amax(const mfn_slice *s, double *od, int64_t *oi) { ext(s, od, oi, 1); }
static void f_amin(const mfn_slice *s, double *od, int64_t *oi) { ext(s, od, oi, -1); }

/* argmax/argmin: the first extreme, a NaN counting as the extreme (torch);
 * the index goes out in both forms (the output dtype picks one). */
static void arg(const mfn_slice *s, double *od, int64_t *oi, int sign) {
  int64_t b = 0;
  for (int64_t k = 1; k < s->L; k++) {
    if (s->is_int) {
      if (sign > 0 ? s->vi[k] > s->vi[b] : s->vi[k] < s->vi[b]) b = k;
    } else {
      if (isnan(s->v[b])) break;
      if (isnan(s->v[k]) || (sign > 0 ? s->v[k] > s->v[b] : s->v[k] < s->v[b])) b = k;
    }
  }
  oi[0] = b;
  od[0] = (double)b;
}
static void f_argmax(const mfn_slice *s, double *od, int64_t *oi) { arg(s, od, oi, 1); }
static void f_argmin(const mfn_slice *s, double *od, int64_t *oi) { arg(s, od, oi, -1); }

static int64_t count_in(const mfn_slice *s) {
  int64_t c = 0;
  for (int64_t k = 0; k < s->L; k++) c += s->mk[k] != 0;
  return c;
}

/* mean = R(R(masked sum) / count): torch's `total / count`. */
static void f_mean(const mfn_slice *s, double *od, int64_t *oi) {
  (void)oi;
  double a = 0.0;
  for (int64_t k = 0; k < s->L; k++) a += s->v[k]; /* masked-out = 0 */
  od[0] = R(s, R(s, a) / (double)count_in(s));
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* median = torch.nanmedian over the NaN-filled slice: the lower median of
 * the non-NaN values, NaN when there are none. */
static void f_median(const mfn_slice *s, double *od, int64_t *oi) {
  double *t = malloc(sizeof *t * (size_t)(s->L ? s->L : 1));
  int64_t n = 0;
  if (!t) { /* the caller checked the slice fits; keep NaN on failure */
    od[0] = NAN;
    return;
  }
  for (int64_t k = 0; k < s->L; k++)
    if (!isnan(s->v[k])) t[n++] = s->v[k];
  if (n) qsort(t, (size_t)n, sizeof *t, cmp_double);
  od[0] = n ? t[(n - 1) / 2] : NAN;
  /* integers: torch takes the median of input.to(float32) and casts back
   * (run() refuses a fully masked slice first) */
  if (s->is_int) od[0] = R(s, od[0]);
  oi[0] = s->is_int && n ? (int64_t)od[0] : 0;
  free(t);
}

/* torch.linalg.vector_norm of the filled slice. */
static double vnorm(const double *v, int64_t L, double ord) {
  double a;
  if (isinf(ord)) {
    a = ord > 0 ? 0.0 : INFINITY;
    for (int64_t k = 0; k < L; k++) {
      double x = fabs(v[k]);
      if (isnan(x)) return NAN;
      if (ord > 0 ? x > a : x < a) a = x;
    }
    return a;
  }
  a = 0.0;
  for (int64_t k = 0; k < L; k++) {
    double x = fabs(v[k]);
    if (ord == 0.0)
      a += x != 0.0;
    else if (ord == 1.0)
      a += x;
    else if (ord == 2.0)
      a += x * x;
    else
      a += pow(x, ord);
  }
  if (ord == 0.0 || ord == 1.0) return a;
  if (ord == 2.0) return sqrt(a);
  return pow(a, 1.0 / ord);
}

static void f_norm(const mfn_slice *s, double *od, int64_t *oi) {
  (void)oi;
  od[0] = R(s, vnorm(s->v, s->L, s->ord));
}

/* var/std, as torch.masked._std_var with dtype D = s->to (MFN-3, MFN-8):
 * the mean sums the input cast to D (an integer D truncates) and divides
 * in D (integer D: float32); deviations and squares are rounded to the
 * promotion of the input dtype and the mean's; their masked sum, the count
 * minus the correction and the quotient in C = D (integer D: float32); an
 * integer D truncates the quotient, and std's root of it is float32. */
static mt_dtype wider(mt_dtype a, mt_dtype b) {
  if (a == MT_float64 || b == MT_float64) return MT_float64;
  if (a == MT_float32 || b == MT_float32) return MT_float32;
  return a;
}

static void var_std(const mfn_slice *s, double *od, int64_t *oi, int take_sqrt) {
  mt_dtype D = s->to;
  int fD = mt__cpu_is_float(D);
  mt_dtype M = fD ? D : MT_float32, C = M;
  mt_dtype P = is_intlike(s->in_dt) ? M : wider(s->in_dt, M);
  double tot = 0.0, sq = 0.0;
  int64_t c = count_in(s);
  for (int64_t k = 0; k < s->L; k++)
    if (s->mk[k]) tot += fD ? mt__cpu_round(D, s->v[k]) : trunc(s->v[k]);
  if (fD) tot = mt__cpu_round(D, tot);
  double mean = mt__cpu_round(M, tot / (double)c);
  for (int64_t k = 0; k < s->L; k++)
    if (s->mk[k]) {
      double x = mt__cpu_round(P, s->v[k] - mean);
      sq += mt__cpu_round(C, mt__cpu_round(P, x * x));
    }
  double n = (double)c;
  if (s->correction != 0.0) {
    n = mt__cpu_round(C, n);
    n = mt__cpu_round(C, fmax(mt__cpu_round(C, n - s->correction), 0.0));
  }
  double out = mt__cpu_round(C, mt__cpu_round(C, sq) / n);
  if (!fD) { /* .to(D) truncates; std: sqrt of the integer in float32 */
    unsigned char tmp[8];
    mt__cpu_st(tmp, D, 0, out);
    oi[0] = mt__cpu_ldi(tmp, D, 0);
    out = (double)oi[0];
    od[0] = take_sqrt ? mt__cpu_round(MT_float32, sqrt(out)) : out;
    return;
  }
  od[0] = take_sqrt ? mt__cpu_round(D, sqrt(out)) : out;
}
static void f_var(const mfn_slice *s, double *od, int64_t *oi) {
  var_std(s, od, oi, 0);
}
static void f_std(const mfn_slice *s, double *od, int64_t *oi) {
  var_std(s, od, oi, 1);
}

/* torch.logsumexp: m = max (an infinite max counts as 0), log(sum(exp(v -
 * m))) + m. Integers: computed in float32 on the dtype's identity fill,
 * then truncated to the input dtype. */
static void f_logsumexp(const mfn_slice *s, double *od, int64_t *oi) {
  double m = -INFINITY, a = 0.0;
  for (int64_t k = 0; k < s->L; k++)
    if (isnan(s->v[k]) || s->v[k] > m) m = s->v[k];
  if (isinf(m)) m = 0.0;
  for (int64_t k = 0; k < s->L; k++) a += exp(s->v[k] - m);
  od[0] = R(s, log(a) + m);
  if (s->is_int) oi[0] = isfinite(od[0]) ? (int64_t)od[0] : 0;
}

static void f_cumsum(const mfn_slice *s, double *od, int64_t *oi) {
  uint64_t ai = 0;
  double a = 0.0;
  for (int64_t k = 0; k < s->L; k++) {
    if (s->is_int) {
      ai += (uint64_t)s->vi[k];
      oi[k] = (int64_t)ai;
    } else {
      a += s->v[k];
      od[k] = a;
    }
  }
}

static void f_cumprod(const mfn_slice *s, double *od, int64_t *oi) {
  uint64_t ai = 1;
  double a = 1.0;
  for (int64_t k = 0; k < s->L; k++) {
    if (s->is_int) {
      ai *= (uint64_t)s->vi[k];
      oi[k] = (int64_t)ai;
    } else {
      a *= s->v[k];
      od[k] = a;
    }
  }
}

/* softmax over the filled slice as torch: m = max, e = exp(v - m); a slice
 * of only -inf gives (-inf) - (-inf) = NaN everywhere. sign -1: softmin =
 * softmax(-v) (the fill was +inf). log: log_softmax. */
static void soft(const mfn_slice *s, double *od, int sign, int lg) {
  double m = -INFINITY, a = 0.0;
  for (int64_t k = 0; k < s->L && !isnan(m); k++) {
    double x = sign * s->v[k];
    if (isnan(x) || x > m) m = x;
  }
  for (int64_t k = 0; k < s->L; k++) a += exp(sign * s->v[k] - m);
  for (int64_t k = 0; k < s->L; k++) {
    double d = sign * s->v[k] - m;
    od[k] = lg ? d - log(a) : exp(d) / a;
  }
}
static void f_softmax(const mfn_slice *s, double *od, int64_t *oi) {
  (void)oi;
  soft(s, od, 1, 0);
}
static void f_log_softmax(const mfn_slice *s, double *od, int64_t *oi) {
  (void)oi;
  soft(s, od, 1, 1);
}
static void f_softmin(const mfn_slice *s, double *od, int64_t *oi) {
  (void)oi;
  soft(s, od, -1, 0);
}

/* normalize: (0-filled input) / max(masked norm, eps); the norm fills with
 * its own identity (ord=-inf: +inf). torch.maximum propagates NaN. */
static void f_normalize(const mfn_slice *s, double *od, int64_t *oi) {
  (void)oi;
  double *t = malloc(sizeof *t * (size_t)(s->L ? s->L : 1));
  double fill = s->ord == -INFINITY ? INFINITY : 0.0;
  if (!t) {
    for (int64_t k = 0; k < s->L; k++) od[k] = NAN;
    return;
  }
  for (int64_t k = 0; k < s->L; k++) t[k] = s->mk[k] ? s->v[k] : fill;
  double nrm = R(s, vnorm(t, s->L, s->ord)), eps = R(s, s->eps);
  double den = isnan(nrm) ? nrm : fmax(nrm, eps);
  for (int64_t k = 0; k < s->L; k++) od[k] = (s->mk[k] ? s->v[k] : 0.0) / den;
  free(t);
}

#define MFN_OPS(X)                                                                 \
  X(masked_sum, SH_REDUCE, DIM_MULTI, ID_ZERO, INT_BOOL, CAST_PRE, f_sum)              \
  X(masked_prod, SH_REDUCE, DIM_MULTI, ID_ONE, INT_BOOL, CAST_PRE, f_prod)             \
  X(masked_amin, SH_REDUCE, DIM_MULTI, ID_POS_INF, INT_YES, CAST_POST, f_amin)         \
  X(masked_amax, SH_REDUCE, DIM_MULTI, ID_NEG_INF, INT_YES, CAST_POST, f_amax)         \
  X(masked_argmin, SH_REDUCE, DIM_FLAT, ID_POS_INF, INT_YES, CAST_POST, f_argmin)      \
  X(masked_argmax, SH_REDUCE, DIM_FLAT, ID_NEG_INF, INT_YES, CAST_POST, f_argmax)      \
  X(masked_mean, SH_REDUCE, DIM_MULTI, ID_ZERO, INT_NO, CAST_PRE, f_mean)              \
  X(masked_median, SH_REDUCE, DIM_LAST, ID_NAN, INT_BOOL, CAST_MEDIAN, f_median)       \
  X(masked_norm, SH_REDUCE, DIM_MULTI, ID_NORM, INT_NO, CAST_PRE, f_norm)              \
  X(masked_var, SH_REDUCE, DIM_MULTI, ID_NONE, INT_YES, CAST_VAR, f_var)               \
  X(masked_std, SH_REDUCE, DIM_MULTI, ID_NONE, INT_YES, CAST_VAR, f_std)               \
  X(masked_logsumexp, SH_REDUCE, DIM_MULTI, ID_NEG_INF, INT_YES, CAST_POST, f_logsumexp) \
  X(masked_cumsum, SH_SCAN, DIM_REQUIRED, ID_ZERO, INT_YES, CAST_PRE, f_cumsum)        \
  X(masked_cumprod, SH_SCAN, DIM_REQUIRED, ID_ONE, INT_YES, CAST_PRE, f_cumprod)       \
  X(masked_softmax, SH_SCAN, DIM_REQUIRED, ID_NEG_INF, INT_NO, CAST_PRE, f_softmax)    \
  X(masked_log_softmax, SH_SCAN, DIM_REQUIRED, ID_NEG_INF, INT_NO, CAST_PRE, f_log_softmax) \
  X(masked_softmin, SH_SCAN, DIM_REQUIRED, ID_POS_INF, INT_NO, CAST_PRE, f_softmin)    \
  X(masked_normalize, SH_SCAN, DIM_REQUIRED, ID_ZERO, INT_NO, CAST_PRE, f_normalize)   \
  X(masked_logaddexp, SH_BINARY, DIM_NONE, ID_NEG_INF, INT_NO, CAST_POST, NULL)

static const mfn_desc DESCS[] = {
#define MFN_X(name, shape, dim, fill, ints, cast, fn) \
  {MT_OP_##name, #name, shape, dim, fill, ints, cast, fn},
    MFN_OPS(MFN_X)
#undef MFN_X
};

static const mfn_desc *find_desc(mt_op op) {
  for (size_t k = 0; k < sizeof DESCS / sizeof DESCS[0]; k++)
    if (DESCS[k].op == op) return &DESCS[k];
  return NULL;
}

/* ---- dtypes (MFN-7) -------------------------------------------------------- */

/* The dtype= kwarg (MFN-8): *to = the dtype it names, d when absent;
 * returns whether it was given. */
static int kw_dtype(const mt_kwargs *kw, mt_dtype d, mt_dtype *to) {
  const mt_kwarg *a = mt_kw_find(kw, "dtype");
  *to = d;
  if (!a) return 0;
  mt_kw_dtype_parse(a->s, to); /* mt__kw_check vetted the name */
  return 1;
}

static mt_dtype out_dtype(const mfn_desc *dd, mt_dtype d, int has_to, mt_dtype to) {
  mt_op op = dd->op;
  if (has_to) {
    if (dd->cast == CAST_MEDIAN && !is_intlike(d)) return d; /* a float median ignores it */
    if (op == MT_OP_masked_std && !mt__cpu_is_float(to)) return MT_float32; /* sqrt of an int */
    return to;
  }
  if (!is_intlike(d)) return d;
  if (op == MT_OP_masked_sum || op == MT_OP_masked_prod) return MT_int64;
  if (op == MT_OP_masked_var || op == MT_OP_masked_std) return MT_float32;
  return d;
}

/* float16 < float32 < float64 (vector_norm refuses a narrowing dtype=). */
static int float_rank(mt_dtype d) { return d == MT_float64 ? 3 : d == MT_float32 ? 2 : 1; }

static mt_status check_dtype(const mfn_desc *dd, mt_dtype d, int has_mask, int has_to,
                             mt_dtype to, mt_error *err) {
  int fto = mt__cpu_is_float(to);
  if (dd->op == MT_OP_masked_mean) {
    if (fto) return MT_OK; /* integers too, summed in the floating dtype= (MFN-8) */
    return mt_err(err, MT_DTYPE_MISMATCH,
                  "%s: mean(): Could not infer output dtype. %s dtype must be either a "
                  "floating point or complex dtype. Got: torch.%s",
                  dd->name, has_to ? "Optional" : "Input", mt_dtype_name(to));
  }
  if (dd->op == MT_OP_masked_norm || dd->op == MT_OP_masked_normalize) {
    if (is_intlike(d))
      return mt_err(err, MT_DTYPE_MISMATCH,
                    "%s: linalg.vector_norm: Expected a floating point or complex tensor as "
                    "input. Got %s",
                    dd->name, mt__cpu_torch_type(d));
    if (!fto)
      return mt_err(err, MT_DTYPE_MISMATCH,
                    "%s: linalg.vector_norm: dtype should be floating point or complex, but got "
                    "%s (kwargs/dtype)",
                    dd->name, mt__cpu_torch_type(to));
    if (float_rank(to) < float_rank(d))
      return mt_err(err, MT_DTYPE_MISMATCH,
                    "%s: linalg.vector_norm: the dtype of the input (%s) should be convertible "
                    "without narrowing to the specified dtype (%s)",
                    dd->name, mt__cpu_torch_type(d), mt__cpu_torch_type(to));
    return MT_OK;
  }
  if (dd->op == MT_OP_masked_cumsum || dd->op == MT_OP_masked_cumprod) {
    /* torch.cumsum/cumprod run in dtype= (default the input's): no bool kernel */
    if (to != MT_bool) return MT_OK;
    return mt_err(err, MT_DTYPE_MISMATCH, "%s: \"%s_out_cpu\" not implemented for 'Bool' (%s)",
                  dd->name, dd->name + 7, has_to ? "kwargs/dtype" : "inputs/0");
  }
  if (dd->cast == CAST_PRE && dd->ints == INT_NO && d != MT_bool) {
    /* softmax, log_softmax, softmin: the kernel runs in dtype= (MFN-8) */
    if (fto) return MT_OK;
    return mt_err(err, MT_DTYPE_MISMATCH, "%s: not implemented for '%s' (%s has dtype %s)",
                  dd->name, mt__cpu_torch_type(to), has_to ? "kwargs/dtype" : "inputs/0",
                  mt_dtype_name(to));
  }
  if (!is_intlike(d)) return MT_OK;
  if (dd->ints == INT_BOOL || (dd->ints == INT_YES && d != MT_bool)) return MT_OK;
  if (dd->ints == INT_YES && d == MT_bool && !has_mask &&
      (dd->fill == ID_NEG_INF || dd->fill == ID_POS_INF))
    return MT_OK; /* no fill needed: plain torch.amax etc. take bool */
  if (dd->ints == INT_YES)
    return mt_err(err, MT_DTYPE_MISMATCH, "%s: identity of %s on torch.bool input", dd->name,
                  dd->name + 7);
  return mt_err(err, MT_DTYPE_MISMATCH, "%s: not implemented for '%s' (inputs/0 has dtype %s)",
                dd->name, mt__cpu_torch_type(d), mt_dtype_name(d));
}

/* The dtype's [lo, hi] (bool: [0, 1]). */
static void int_limits(mt_dtype d, int64_t *lo, int64_t *hi) {
  switch (d) {
  case MT_int64: *lo = INT64_MIN; *hi = INT64_MAX; break;
  case MT_int32: *lo = INT32_MIN; *hi = INT32_MAX; break;
  case MT_int8: *lo = INT8_MIN; *hi = INT8_MAX; break;
  case MT_uint8: *lo = 0; *hi = UINT8_MAX; break;
  default: *lo = 0; *hi = 1; break;
  }
}

/* The identity that replaces masked-out elements (MFN-2), as double
 * (floats) and as int64 (integer inputs: the dtype's min/max for amax/amin). */
static void identity(mfn_identity id, mt_dtype d, double ord, double *fd, int64_t *fi) {
  int64_t lo, hi;
  int_limits(d, &lo, &hi);
  switch (id) {
  case ID_ONE: *fd = 1.0; *fi = 1; break;
  case ID_NEG_INF: *fd = is_intlike(d) ? (double)lo : -INFINITY; *fi = lo; break;
  case ID_POS_INF: *fd = is_intlike(d) ? (double)hi : INFINITY; *fi = hi; break;
  case ID_NAN: *fd = NAN; *fi = 0; break;
  case ID_NORM: *fd = ord == -INFINITY ? INFINITY : 0.0; *fi = 0; break;
  default: *fd = 0.0; *fi = 0; break;
  }
}

/* ---- mask broadcasting (MFN-1) -------------------------------------------- */

/* mstride[d]: the step in the (contiguous) mask for input dim d; 0 where
 * the mask broadcasts. */
static mt_status mask_strides(const char *name, const char *what, const mt_tensor *x,
                              const mt_tensor *m, int64_t mstride[MT_MAX_DIMS], mt_error *err) {
  int off = x->ndim - m->ndim;
  int64_t s = 1;
  if (off < 0)
    return mt_err(err, MT_INDEX_OUT_OF_RANGE,
                  "%s: _input_mask expected broadcastable mask (got mask dimensionality higher "
                  "than of the input): %s has %d dims, the input %d",
                  name, what, m->ndim, x->ndim);
  for (int d = x->ndim - 1; d >= 0; d--) {
    int j = d - off;
    if (j < 0) {
      mstride[d] = 0;
      continue;
    }
    if (m->shape[j] != x->shape[d] && m->shape[j] != 1)
      return mt_err(err, MT_SHAPE_MISMATCH,
                    "%s: The expanded size of the tensor (%lld) must match the existing size "
                    "(%lld) at non-singleton dimension %d (%s)",
                    name, (long long)x->shape[d], (long long)m->shape[j], d, what);
    mstride[d] = m->shape[j] == 1 ? 0 : s;
    s *= m->shape[j];
  }
  return MT_OK;
}

/* The input as contiguous arrays: xd (floats; masked-out = fill), xi
 * (integer inputs), mk (the broadcast mask, 1 without one). */
typedef struct {
  double *xd;
  int64_t *xi;
  uint8_t *mk;
  int64_t n;
} mfn_arrays;

static void arrays_free(mfn_arrays *a) {
  free(a->xd);
  free(a->xi);
  free(a->mk);
  memset(a, 0, sizeof *a);
}

/* MFN-8, CAST_PRE: the filled input cast to dtype= `to` (a float dtype
 * rounds; an integer one truncates float and wraps integer values). */
static void cast_filled(mfn_arrays *a, int in_int, mt_dtype to) {
  unsigned char tmp[8];
  for (int64_t i = 0; i < a->n; i++) {
    if (mt__cpu_is_float(to)) {
      a->xd[i] = mt__cpu_round(to, a->xd[i]);
      continue;
    }
    if (in_int)
      mt__cpu_sti(tmp, to, 0, a->xi[i]);
    else
      mt__cpu_st(tmp, to, 0, a->xd[i]);
    a->xi[i] = mt__cpu_ldi(tmp, to, 0);
    a->xd[i] = (double)a->xi[i];
  }
}

static mt_status load(const char *name, int in_idx, const mt_tensor *x, const mt_tensor *m,
                      mfn_identity fill, double ord, mfn_arrays *a, mt_error *err) {
  const mt_tensor *xv = NULL, *mv = NULL;
  mt_tensor *tx = NULL, *tm = NULL;
  int64_t mstride[MT_MAX_DIMS] = {0};
  char what[32];
  double fd;
  int64_t fi;
  mt_status st;
  memset(a, 0, sizeof *a);
  a->n = mt_numel(x);
  if (m) {
    if (m->kind != MT_KIND_DENSE) {
      st = mt_err(err, MT_NOT_SUPPORTED, "%s: inputs/%d (a mask) has kind %s; dense only", name,
                  in_idx, mt_kind_name(m->kind));
      goto out;
    }
    if ((st = mt_tensor_validate(m, mt__cpu_in_name(in_idx, what, sizeof what), err)) != MT_OK)
      goto out;
    if ((st = mask_strides(name, what, x, m, mstride, err)) != MT_OK) goto out;
    if ((st = mt__cpu_contig(m, &mv, &tm, err)) != MT_OK) goto out;
  }
  if ((st = mt__cpu_contig(x, &xv, &tx, err)) != MT_OK) goto out;
  size_t n = (size_t)(a->n ? a->n : 1);
  a->xd = malloc(sizeof *a->xd * n);
  a->xi = malloc(sizeof *a->xi * n);
  a->mk = malloc(n);
  if (!a->xd || !a->xi || !a->mk) {
    st = mt_err(err, MT_OUT_OF_MEMORY, "%s: out of memory for %lld elements", name,
                (long long)a->n);
    goto out;
  }
  identity(fill, x->dtype, ord, &fd, &fi);
  int intl = is_intlike(x->dtype);
  for (int64_t i = 0; i < a->n; i++) {
    int64_t rem = i, mi = 0;
    for (int d = x->ndim - 1; d >= 0; d--) {
      mi += (rem % x->shape[d]) * mstride[d];
      rem /= x->shape[d];
    }
    uint8_t in = 1;
    if (mv) in = mv->dtype == MT_bool ? mt__cpu_ldb(mv->values, mi)
                                      : mt__cpu_ld(mv->values, mv->dtype, mi) != 0.0;
    a->mk[i] = in;
    /* MFN-2: masked-out data is replaced before anything reads it. */
    if (intl) {
      a->xi[i] = in ? mt__cpu_ldi(xv->values, x->dtype, i) : fi;
      a->xd[i] = in ? (double)a->xi[i] : fd; /* median: NaN */
    } else {
      a->xi[i] = 0;
      a->xd[i] = in ? mt__cpu_ld(xv->values, x->dtype, i) : fd;
    }
  }
out:
  if (st != MT_OK) arrays_free(a);
  mt_tensor_free(tx);
  mt_tensor_free(tm);
  return st;
}

/* ---- dims ------------------------------------------------------------------ */

static mt_status parse_dims(const mfn_desc *dd, const mt_tensor *x, const mt_kwargs *kw,
                            int red[MT_MAX_DIMS], int *flat, mt_error *err) {
  const mt_kwarg *a = mt_kw_find(kw, "dim");
  int ndim_eff = x->ndim > 0 ? x->ndim : 1;
  int64_t one = -1;
  const int64_t *dims = NULL;
  int n = 0, all = 0;
  memset(red, 0, sizeof(int) * MT_MAX_DIMS);
  *flat = 0;
  if (!a) {
    if (dd->dim == DIM_REQUIRED)
      return mt_err(err, MT_INVALID_ARGUMENT, "%s: missing required argument 'dim'", dd->name);
    if (dd->dim == DIM_LAST) {
      dims = &one;
      n = 1;
    } else {
      all = 1;
      *flat = dd->dim == DIM_FLAT;
    }
  } else if (a->type == MT_KW_INT) {
    one = a->i;
    dims = &one;
    n = 1;
  } else {
    dims = a->ints;
    n = a->n;
    if (n == 0) all = 1; /* dim=() = all dims (_canonical_dim) */
  }
  for (int k = 0; k < n; k++) {
    int64_t d = dims[k];
    if (d < -ndim_eff || d >= ndim_eff)
      return mt_err(
          err, MT_INDEX_OUT_OF_RANGE,
          "%s: Dimension out of range (expected to be in range of [%d, %d], but got %lld)",
          dd->name, -ndim_eff, ndim_eff - 1, (long long)d);
    int w = (int)(d < 0 ? d + ndim_eff : d);
    if (red[w])
      return mt_err(err, MT_INVALID_ARGUMENT,
                    "%s: dim=%lld appears multiple times in the list of dims", dd->name,
                    (long long)d);
    red[w] = 1;
  }
  if (all)
    for (int d = 0; d < x->ndim; d++) red[d] = 1;
  if (x->ndim == 0) red[0] = 0;
  return MT_OK;
}

/* ---- the kernel ------------------------------------------------------------- */

/* Output element k from the kernel's own result: the exact integer vi
 * (nat_int) or the double vd, converted once to the output dtype (a float
 * rounds, an integer truncates and wraps: the .to(dtype) of MFN-8). */
static void store(mt_tensor *o, int64_t k, double vd, int64_t vi, int nat_int) {
  if (nat_int)
    mt__cpu_sti(o->values, o->dtype, k, vi);
  else
    mt__cpu_st(o->values, o->dtype, k, vd);
}

/* MFN-6: logaddexp(where(im, a, -inf), where(om, b, -inf)); torch's
 * logaddexp: equal infinities give themselves, else max + log1p(exp(-|a-b|)). */
static mt_status run_logaddexp(mt_call *call, const mfn_desc *dd, mt_error *err) {
  const mt_host *h = mt__cpu_host(call);
  const mt_tensor *x, *y;
  mfn_arrays a = {0}, b = {0};
  mt_tensor *o = NULL;
  mt_status st;
  if ((st = mt__cpu_input(call, 1, dd->name, &y, err)) != MT_OK) return st;
  x = call->in[0];
  if (call->n_in != 2 && call->n_in != 4)
    return mt_err(err, MT_INVALID_ARGUMENT,
                  "%s: expected inputs [input, other] or [input, other, input_mask, other_mask], "
                  "got %d inputs",
                  dd->name, call->n_in);
  if (y->kind != MT_KIND_DENSE)
    return mt_err(err, MT_NOT_SUPPORTED, "%s: inputs/1 has kind %s; dense only", dd->name,
                  mt_kind_name(y->kind));
  if ((st = mt_tensor_validate(y, "inputs/1", err)) != MT_OK) return st;
  if (y->dtype != x->dtype)
    return mt_err(err, MT_DTYPE_MISMATCH, "%s: inputs/0 has dtype %s, inputs/1 %s", dd->name,
                  mt_dtype_name(x->dtype), mt_dtype_name(y->dtype));
  /* input and other broadcast to a common shape (torch.logaddexp) */
  mt_tensor bt = {0};
  int64_t xs[MT_MAX_DIMS] = {0}, ys[MT_MAX_DIMS] = {0};
  bt.kind = MT_KIND_DENSE;
  bt.ndim = x->ndim > y->ndim ? x->ndim : y->ndim;
  for (int d = bt.ndim - 1; d >= 0; d--) {
    int jx = d - (bt.ndim - x->ndim), jy = d - (bt.ndim - y->ndim);
    int64_t sx = jx >= 0 ? x->shape[jx] : 1, sy = jy >= 0 ? y->shape[jy] : 1;
    if (sx != sy && sx != 1 && sy != 1)
      return mt_err(err, MT_SHAPE_MISMATCH,
                    "%s: The size of tensor a (%lld) must match the size of tensor b (%lld) at "
                    "non-singleton dimension %d",
                    dd->name, (long long)sx, (long long)sy, d);
    bt.shape[d] = sx == 1 ? sy : sx;
  }
  if ((st = mask_strides(dd->name, "inputs/0", &bt, x, xs, err)) != MT_OK) return st;
  if ((st = mask_strides(dd->name, "inputs/1", &bt, y, ys, err)) != MT_OK) return st;
  mt_dtype to;
  int has_to = kw_dtype(call->kw, x->dtype, &to);
  if ((st = check_dtype(dd, x->dtype, call->n_in == 4, has_to, to, err)) != MT_OK) return st;
  if ((st = load(dd->name, 2, x, call->n_in == 4 ? call->in[2] : NULL, ID_NEG_INF, 0, &a, err)) !=
      MT_OK)
    goto out;
  if ((st = load(dd->name, 3, y, call->n_in == 4 ? call->in[3] : NULL, ID_NEG_INF, 0, &b, err)) !=
      MT_OK)
    goto out;
  if ((st = h->dense_new(to, bt.ndim, bt.shape, &o, err)) != MT_OK) goto out;
  for (int64_t i = 0; i < mt_numel(o); i++) {
    int64_t rem = i, ix = 0, iy = 0;
    for (int d = bt.ndim - 1; d >= 0; d--) {
      int64_t c = rem % bt.shape[d];
      rem /= bt.shape[d];
      ix += c * xs[d];
      iy += c * ys[d];
    }
    double p = a.xd[ix], q = b.xd[iy], r;
    if (isinf(p) && p == q)
      r = p;
    else if (isnan(p) || isnan(q))
      r = NAN;
    else
      r = fmax(p, q) + log1p(exp(-fabs(p - q)));
    /* computed in the input dtype, then .to(dtype) (MFN-8) */
    mt__cpu_st(o->values, o->dtype, i, mt__cpu_round(x->dtype, r));
  }
  call->out[0] = o;
  call->n_out = 1;
  o = NULL;
out:
  arrays_free(&a);
  arrays_free(&b);
  if (o) h->free(o);
  return st;
}

/* ---- sparse inputs (MFN-9) ------------------------------------------------- */

/* The ops torch.masked reduces over a sparse layout: COO sum, prod, amax,
 * amin (_sparse_coo_scatter_reduction_helper); CSR also mean
 * (_sparse_csr_segment_reduction_helper), keepdim=True only. */
static int sparse_supported(mt_op op, mt_kind k) {
  int red = op == MT_OP_masked_sum || op == MT_OP_masked_prod || op == MT_OP_masked_amax ||
            op == MT_OP_masked_amin;
  return k == MT_KIND_COO ? red : k == MT_KIND_CSR ? red || op == MT_OP_masked_mean : 0;
}

/* One stored element of a sparse tensor: dense linear index and value. */
typedef struct {
  int64_t lin;
  double v;
} sp_entry;

static int cmp_entry(const void *a, const void *b) {
  int64_t x = ((const sp_entry *)a)->lin, y = ((const sp_entry *)b)->lin;
  return (x > y) - (x < y);
}

/* The stored elements of a COO (coalesced: duplicates summed) or CSR
 * tensor t, sorted by linear index; *n their count. */
static mt_status sp_entries(const mt_tensor *t, sp_entry **out, int64_t *n, mt_error *err) {
  const mt_tensor *c = t;
  mt_tensor *tmp = NULL;
  mt_status st = MT_OK;
  *out = NULL;
  *n = 0;
  if (t->kind == MT_KIND_COO && (st = mt__cpu_coalesced(t, &c, &tmp, err)) != MT_OK) return st;
  *out = malloc(sizeof **out * (size_t)(c->nnz ? c->nnz : 1));
  if (!*out) {
    st = mt_err(err, MT_OUT_OF_MEMORY, "out of memory for %lld sparse entries", (long long)c->nnz);
    goto out;
  }
  if (c->kind == MT_KIND_COO) {
    for (int64_t k = 0; k < c->nnz; k++) {
      (*out)[k].lin = mt_coo_linear(c, k);
      (*out)[k].v = mt__cpu_ld(c->values, c->dtype, k);
    }
  } else {
    for (int64_t r = 0; r < c->shape[0]; r++)
      for (int64_t k = c->crow_indices[r]; k < c->crow_indices[r + 1]; k++) {
        (*out)[k].lin = r * c->shape[1] + c->col_indices[k];
        (*out)[k].v = mt__cpu_ld(c->values, c->dtype, k);
      }
  }
  *n = c->nnz;
  qsort(*out, (size_t)*n, sizeof **out, cmp_entry);
out:
  mt_tensor_free(tmp);
  return st;
}

/* MFN-9: the masked-in elements as torch's _sparse_coo_where and
 * _sparse_csr_where build them: every masked-in position becomes an
 * entry, holding the input's stored value or 0 where the input stores
 * none; masked-out positions are no entries (their stored data is never
 * read). Without a mask: the input's stored elements. */
static mt_status sp_where(const char *name, const mt_tensor *x, const mt_tensor *m, sp_entry **out,
                          int64_t *n, mt_error *err) {
  sp_entry *xe = NULL, *me = NULL;
  int64_t nx = 0, nm = 0, w = 0;
  mt_status st;
  *out = NULL;
  *n = 0;
  if ((st = sp_entries(x, &xe, &nx, err)) != MT_OK) return st;
  if (!m) {
    *out = xe;
    *n = nx;
    return MT_OK;
  }
  if (!mt_shape_equal(m, x)) {
    st = mt_err(err, MT_SHAPE_MISMATCH, "%s: inputs/1 (the mask) must have the sparse input's shape",
                name);
    goto out;
  }
  if (m->kind == MT_KIND_DENSE) {
    const mt_tensor *mv = NULL;
    mt_tensor *tm = NULL;
    if ((st = mt__cpu_contig(m, &mv, &tm, err)) != MT_OK) goto out;
    int64_t total = mt_numel(m);
    me = malloc(sizeof *me * (size_t)(total ? total : 1));
    if (!me) {
      mt_tensor_free(tm);
      st = mt_err(err, MT_OUT_OF_MEMORY, "%s: out of memory", name);
      goto out;
    }
    for (int64_t i = 0; i < total; i++)
      if (mt__cpu_ld(mv->values, mv->dtype, i) != 0.0) me[nm++] = (sp_entry){i, 1.0};
    mt_tensor_free(tm);
  } else if (m->kind == x->kind) {
    if ((st = sp_entries(m, &me, &nm, err)) != MT_OK) goto out;
  } else {
    st = mt_err(err, MT_LAYOUT_MISMATCH, "%s: inputs/1 (the mask) has kind %s, the input %s", name,
                mt_kind_name(m->kind), mt_kind_name(x->kind));
    goto out;
  }
  *out = malloc(sizeof **out * (size_t)(nm ? nm : 1));
  if (!*out) {
    st = mt_err(err, MT_OUT_OF_MEMORY, "%s: out of memory", name);
    goto out;
  }
  for (int64_t k = 0, j = 0; k < nm; k++) {
    if (me[k].v == 0.0) continue; /* a stored False */
    while (j < nx && xe[j].lin < me[k].lin) j++;
    (*out)[w].lin = me[k].lin;
    (*out)[w].v = j < nx && xe[j].lin == me[k].lin ? xe[j].v : 0.0;
    w++;
  }
  *n = w;
out:
  free(xe);
  free(me);
  return st;
}

/* MFN-9: the reduction of the entries grouped by their output position.
 * COO: output entries where a group has entries (a position with no
 * masked-in element is unspecified: 0, not the identity), a full
 * reduction is the dense value .to_sparse() (no entry when it is 0).
 * CSR (keepdim only): (1, N), (M, 1) or (1, 1) with the groups' entries;
 * mean = sum / entries. Values are float32/float64. */
static mt_status run_sparse(mt_call *call, const mfn_desc *dd, const mt_tensor *x,
                            const mt_tensor *m, mt_error *err) {
  const mt_host *h = mt__cpu_host(call);
  sp_entry *e = NULL;
  int64_t ne = 0, *cnt = NULL;
  double *acc = NULL;
  mt_tensor *o = NULL;
  int red[MT_MAX_DIMS], flat, keepdim = mt_kw_int(call->kw, "keepdim", 0) != 0;
  int all = 1, out_ndim = 0;
  int64_t out_shape[MT_MAX_DIMS];
  mt_op op = dd->op;
  mt_status st;
  if (x->kind == MT_KIND_CSR && !keepdim)
    return mt_err(err, MT_LAYOUT_MISMATCH,
                  "%s: reduction operations on CSR tensors with keepdim=False is unsupported",
                  dd->name);
  if (!m && op != MT_OP_masked_sum)
    return mt_err(err, MT_LAYOUT_MISMATCH, "%s: masked %s expects explicit mask for %s tensor input",
                  dd->name, dd->name + 7, x->kind == MT_KIND_COO ? "sparse_coo" : "sparse_csr");
  if (!mt__cpu_is_f(x->dtype) || mt_kw_find(call->kw, "dtype"))
    return mt_err(err, MT_NOT_SUPPORTED,
                  "%s: the CPU backend reduces float32/float64 sparse inputs without dtype= only",
                  dd->name);
  if ((st = parse_dims(dd, x, call->kw, red, &flat, err)) != MT_OK) return st;
  for (int d = 0; d < x->ndim; d++) {
    if (!red[d]) {
      all = 0;
      out_shape[out_ndim++] = x->shape[d];
    } else if (keepdim) {
      out_shape[out_ndim++] = 1;
    }
  }
  if ((st = sp_where(dd->name, x, m, &e, &ne, err)) != MT_OK) return st;
  int64_t no = mt_shape_numel(out_ndim, out_shape);
  acc = malloc(sizeof *acc * (size_t)(no ? no : 1));
  cnt = calloc((size_t)(no ? no : 1), sizeof *cnt);
  if (!acc || !cnt) {
    st = mt_err(err, MT_OUT_OF_MEMORY, "%s: out of memory", dd->name);
    goto out;
  }
  double id = op == MT_OP_masked_prod ? 1.0 : op == MT_OP_masked_amax ? -INFINITY
            : op == MT_OP_masked_amin ? INFINITY : 0.0;
  for (int64_t i = 0; i < no; i++) acc[i] = id;
  for (int64_t k = 0; k < ne; k++) {
    int64_t rem = e[k].lin, oi = 0, scale = 1;
    for (int d = x->ndim - 1, j = out_ndim - 1; d >= 0; d--) {
      int64_t c = rem % x->shape[d];
      rem /= x->shape[d];
      if (red[d] && !keepdim) continue;
      oi += (red[d] ? 0 : c) * scale;
      scale *= out_shape[j--];
    }
    double v = e[k].v, *a = &acc[oi];
    if (op == MT_OP_masked_prod)
      *a *= v;
    else if (op == MT_OP_masked_amax)
      *a = isnan(*a) || isnan(v) ? NAN : fmax(*a, v);
    else if (op == MT_OP_masked_amin)
      *a = isnan(*a) || isnan(v) ? NAN : fmin(*a, v);
    else
      *a += v;
    cnt[oi]++;
  }
  for (int64_t i = 0; i < no; i++) {
    if (op == MT_OP_masked_mean)
      acc[i] = mt__cpu_round(x->dtype, mt__cpu_round(x->dtype, acc[i]) / (double)cnt[i]);
    acc[i] = mt__cpu_round(x->dtype, acc[i]);
  }
  int64_t nnz = 0;
  if (x->kind == MT_KIND_COO && all) /* the dense value .to_sparse() */
    nnz = acc[0] != 0.0;
  else
    for (int64_t i = 0; i < no; i++) nnz += cnt[i] > 0;
  if (x->kind == MT_KIND_COO) {
    if ((st = h->coo_new(x->dtype, out_ndim, out_shape, out_ndim, nnz, &o, err)) != MT_OK) goto out;
    o->coalesced = all; /* torch.sparse_coo_tensor(unique indices): not marked */
    for (int64_t i = 0, w = 0; i < no && w < nnz; i++) {
      if (all ? acc[i] == 0.0 : cnt[i] == 0) continue;
      int64_t rem = i;
      for (int d = out_ndim - 1; d >= 0; d--) {
        o->indices[d * nnz + w] = rem % out_shape[d];
        rem /= out_shape[d];
      }
      mt__cpu_st(o->values, o->dtype, w++, acc[i]);
    }
  } else {
    if ((st = h->csr_new(x->dtype, out_shape[0], out_shape[1], nnz, &o, err)) != MT_OK) goto out;
    int64_t w = 0;
    for (int64_t r = 0; r < out_shape[0]; r++) {
      o->crow_indices[r] = w;
      for (int64_t c = 0; c < out_shape[1]; c++) {
        int64_t i = r * out_shape[1] + c;
        if (!cnt[i]) continue;
        o->col_indices[w] = c;
        mt__cpu_st(o->values, o->dtype, w++, acc[i]);
      }
    }
    o->crow_indices[out_shape[0]] = w;
  }
  call->out[0] = o;
  call->n_out = 1;
  o = NULL;
out:
  free(e);
  free(acc);
  free(cnt);
  if (o) h->free(o);
  return st;
}

static mt_status run(mt_call *call, mt_op op, mt_error *err) {
  const mfn_desc *dd = find_desc(op);
  const mt_host *h = mt__cpu_host(call);
  const mt_tensor *x = NULL, *m = NULL;
  mfn_arrays a = {0};
  mt_tensor *o = NULL;
  int64_t *idx = NULL, *fill = NULL, *ti = NULL, *svi = NULL;
  double *sv = NULL, *td = NULL;
  uint8_t *smk = NULL;
  int red[MT_MAX_DIMS], flat, out_ndim = 0;
  int64_t out_shape[MT_MAX_DIMS];
  mt_status st;

  mt__cpu_begin(call);
  if (!dd) return mt_err(err, MT_NOT_SUPPORTED, "op %d is not a masked_fn op", (int)op);
  if ((st = mt__kw_check(op, call->kw, err)) != MT_OK) return st;
  if ((st = mt__cpu_input(call, 0, dd->name, &x, err)) != MT_OK) return st;
  if (x->kind == MT_KIND_COO || x->kind == MT_KIND_CSR) { /* MFN-9 */
    if ((st = mt_tensor_validate(x, "inputs/0", err)) != MT_OK) return st;
    if (!sparse_supported(op, x->kind))
      return mt_err(err, MT_LAYOUT_MISMATCH, "%s: masked %s expects strided tensor (got %s tensor)",
                    dd->name, dd->name + 7,
                    x->kind == MT_KIND_COO ? "torch.sparse_coo" : "torch.sparse_csr");
    if (call->n_in > 2)
      return mt_err(err, MT_INVALID_ARGUMENT, "%s: expected inputs [input] or [input, mask], got %d",
                    dd->name, call->n_in);
    if (x->kind == MT_KIND_COO && x->dense_dim != 0)
      return mt_err(err, MT_NOT_SUPPORTED, "%s: a hybrid COO input (dense_dim %d) is not supported",
                    dd->name, x->dense_dim);
    m = call->n_in == 2 ? call->in[1] : NULL;
    if (m && (st = mt_tensor_validate(m, "inputs/1", err)) != MT_OK) return st;
    if ((st = mt__kw_check(op, call->kw, err)) != MT_OK) return st;
    return run_sparse(call, dd, x, m, err);
  }
  if (x->kind != MT_KIND_DENSE)
    return mt_err(err, MT_NOT_SUPPORTED,
                  "%s: inputs/0 has kind %s; the CPU backend implements strided, COO and CSR "
                  "inputs only",
                  dd->name, mt_kind_name(x->kind));
  if ((st = mt_tensor_validate(x, "inputs/0", err)) != MT_OK) return st;
  if (dd->shape == SH_BINARY) return run_logaddexp(call, dd, err);
  if (call->n_in > 2)
    return mt_err(err, MT_INVALID_ARGUMENT, "%s: expected inputs [input] or [input, mask], got %d",
                  dd->name, call->n_in);
  m = call->n_in == 2 ? call->in[1] : NULL;
  mt_dtype to;
  int has_to = kw_dtype(call->kw, x->dtype, &to);
  if ((st = check_dtype(dd, x->dtype, m != NULL, has_to, to, err)) != MT_OK) return st;
  if ((st = parse_dims(dd, x, call->kw, red, &flat, err)) != MT_OK) return st;

  mfn_slice s = {0};
  s.in_dt = x->dtype;
  s.is_int = is_intlike(x->dtype) && op != MT_OP_masked_var && op != MT_OP_masked_std;
  s.ct = is_intlike(x->dtype) ? MT_float32 : x->dtype;
  s.to = has_to ? to : is_intlike(x->dtype) ? MT_float32 : x->dtype;
  s.ord = mt_kw_float(call->kw, "ord", 2.0);
  s.eps = mt_kw_float(call->kw, "eps", 1e-12);
  s.correction = mt_kw_float(call->kw, "correction", mt_kw_int(call->kw, "unbiased", 1) ? 1.0 : 0.0);
  if (mt_kw_find(call->kw, "correction") && mt_kw_find(call->kw, "unbiased"))
    return mt_err(err, MT_INVALID_ARGUMENT, "%s: Only one of unbiased and correction may be given",
                  dd->name);
  int keepdim = mt_kw_int(call->kw, "keepdim", 0) != 0;

  int64_t L = 1;
  for (int d = 0; d < x->ndim; d++)
    if (red[d]) L *= x->shape[d];
  if (dd->shape == SH_REDUCE) {
    for (int d = 0; d < x->ndim; d++) {
      if (!red[d])
        out_shape[out_ndim++] = x->shape[d];
      else if (keepdim)
        out_shape[out_ndim++] = 1;
    }
    if (flat && !keepdim) out_ndim = 0;
    if (L == 0 && (dd->fill == ID_NEG_INF || dd->fill == ID_POS_INF || dd->fill == ID_NAN) &&
        op != MT_OP_masked_logsumexp)
      return mt_err(err, MT_INVALID_ARGUMENT,
                    "%s: Expected reduction dim to have non-zero size (inputs/0 is empty along "
                    "a reduced dim)",
                    dd->name);
  } else {
    out_ndim = x->ndim;
    memcpy(out_shape, x->shape, sizeof(int64_t) * (size_t)x->ndim);
  }
  int64_t n_in = mt_numel(x);
  int64_t n_slices = L ? n_in / L : mt_shape_numel(out_ndim, out_shape);
  mt_dtype od = out_dtype(dd, x->dtype, has_to, to);

  if ((st = load(dd->name, 1, x, m, dd->fill, s.ord, &a, err)) != MT_OK) goto out;
  if (has_to && dd->cast == CAST_PRE && to != x->dtype) { /* MFN-8: cast, then compute in it */
    cast_filled(&a, is_intlike(x->dtype), to);
    s.in_dt = to;
    s.is_int = is_intlike(to);
    s.ct = s.is_int ? MT_float32 : to;
  }
  /* which of the kernel's results is its own: the integer (integer
   * arithmetic, argmax/argmin's index) or the double */
  int nat_int = (s.is_int && op != MT_OP_masked_logsumexp && op != MT_OP_masked_median &&
                 dd->cast != CAST_VAR) ||
                op == MT_OP_masked_argmax || op == MT_OP_masked_argmin;
  if ((st = h->dense_new(od, out_ndim, out_shape, &o, err)) != MT_OK) goto out;
  size_t nl = (size_t)(L ? L : 1), ni = (size_t)(n_in ? n_in : 1);
  idx = malloc(sizeof *idx * ni);
  fill = calloc((size_t)(n_slices ? n_slices : 1), sizeof *fill);
  sv = malloc(sizeof *sv * nl);
  ti = malloc(sizeof *ti * nl);
  td = malloc(sizeof *td * nl);
  smk = malloc(nl);
  svi = malloc(sizeof *svi * nl);
  if (!idx || !fill || !sv || !ti || !td || !smk || !svi) {
    st = mt_err(err, MT_OUT_OF_MEMORY, "%s: out of memory for %lld elements", dd->name,
                (long long)n_in);
    goto out;
  }
  /* Slice o holds the input elements whose kept coordinates give o, in
   * row-major order of the reduced dims. */
  for (int64_t i = 0; i < n_in; i++) {
    int64_t rem = i, so = 0, scale = 1;
    for (int d = x->ndim - 1; d >= 0; d--) {
      int64_t c = rem % x->shape[d];
      rem /= x->shape[d];
      if (!red[d]) {
        so += c * scale;
        scale *= x->shape[d];
      }
    }
    idx[so * L + fill[so]++] = i;
  }
  s.v = sv;
  s.vi = svi;
  s.mk = smk;
  s.L = L;
  for (int64_t so = 0; so < n_slices; so++) {
    for (int64_t k = 0; k < L; k++) {
      int64_t i = idx[so * L + k];
      sv[k] = a.xd[i];
      svi[k] = a.xi[i];
      smk[k] = a.mk[i];
    }
    if (op == MT_OP_masked_median && s.is_int && L > 0) {
      int64_t c = 0;
      for (int64_t k = 0; k < L; k++) c += smk[k] != 0;
      if (c == 0) {
        st = mt_err(err, MT_INVALID_ARGUMENT,
                    "%s: masked median expects no fully masked out rows if dtype is not "
                    "floating point (inputs/0 has dtype %s)",
                    dd->name, mt_dtype_name(x->dtype));
        goto out;
      }
    }
    dd->fn(&s, td, ti);
    if (dd->shape == SH_REDUCE)
      store(o, so, td[0], ti[0], nat_int);
    else
      for (int64_t k = 0; k < L; k++) store(o, idx[so * L + k], td[k], ti[k], nat_int);
  }
  call->out[0] = o;
  call->n_out = 1;
  o = NULL;
out:
  arrays_free(&a);
  if (o) h->free(o);
  free(idx);
  free(fill);
  free(sv);
  free(ti);
  free(td);
  free(smk);
  free(svi);
  return st;
}

#define MFN_KERNEL(name, shape, dim, fill, ints, cast, fn) \
  mt_status mt_cpu_##name(mt_call *call, mt_error *err) { return run(call, MT_OP_##name, err); }
MFN_OPS(MFN_KERNEL)
#undef MFN_KERNEL

/* masked_fn.c - CPU kernels of the masked_fn family: torch.masked's
 * functional ops (torch/masked/_ops.py) on a plain tensor and a bool mask,
 * returning a plain tensor (spec/SEMANTICS.md, MFN-1..7).
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

typedef struct mfn_slice mfn_slice;
typedef void (*mfn_fn)(const mfn_slice *s, double *od, int64_t *oi);

typedef struct {
  mt_op op;
  const char *name;
  mfn_shape shape;
  mfn_dim dim;
  mfn_identity fill;
  mfn_ints ints;
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
  double ord, eps, correction;
};

static double R(const mfn_slice *s, double v) { return mt__cpu_round(s->ct, v); }

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
  oi[0] = s->is_int && n ? (int64_t)R(s, od[0]) : 0;
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

/* var/std, as torch.masked._std_var: sample mean R(R(sum)/count), deviations
 * rounded, squares rounded, their masked sum over max(count - c, 0). */
static void var_std(const mfn_slice *s, double *od, int take_sqrt) {
  double tot = 0.0, sq = 0.0;
  int64_t c = count_in(s);
  for (int64_t k = 0; k < s->L; k++)
    if (s->mk[k]) tot += s->v[k];
  double mean = R(s, R(s, tot) / (double)c);
  for (int64_t k = 0; k < s->L; k++)
    if (s->mk[k]) {
      double x = R(s, s->v[k] - mean);
      sq += R(s, x * x);
    }
  double n = R(s, (double)c);
  if (s->correction != 0.0) n = R(s, fmax(R(s, n - s->correction), 0.0));
  double out = R(s, R(s, sq) / n);
  od[0] = take_sqrt ? R(s, sqrt(out)) : out;
}
static void f_var(const mfn_slice *s, double *od, int64_t *oi) {
  (void)oi;
  var_std(s, od, 0);
}
static void f_std(const mfn_slice *s, double *od, int64_t *oi) {
  (void)oi;
  var_std(s, od, 1);
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

#define MFN_OPS(X)                                                       \
  X(masked_sum, SH_REDUCE, DIM_MULTI, ID_ZERO, INT_BOOL, f_sum)          \
  X(masked_prod, SH_REDUCE, DIM_MULTI, ID_ONE, INT_BOOL, f_prod)         \
  X(masked_amin, SH_REDUCE, DIM_MULTI, ID_POS_INF, INT_YES, f_amin)      \
  X(masked_amax, SH_REDUCE, DIM_MULTI, ID_NEG_INF, INT_YES, f_amax)      \
  X(masked_argmin, SH_REDUCE, DIM_FLAT, ID_POS_INF, INT_YES, f_argmin)   \
  X(masked_argmax, SH_REDUCE, DIM_FLAT, ID_NEG_INF, INT_YES, f_argmax)   \
  X(masked_mean, SH_REDUCE, DIM_MULTI, ID_ZERO, INT_NO, f_mean)          \
  X(masked_median, SH_REDUCE, DIM_LAST, ID_NAN, INT_BOOL, f_median)        \
  X(masked_norm, SH_REDUCE, DIM_MULTI, ID_NORM, INT_NO, f_norm)          \
  X(masked_var, SH_REDUCE, DIM_MULTI, ID_NONE, INT_YES, f_var)           \
  X(masked_std, SH_REDUCE, DIM_MULTI, ID_NONE, INT_YES, f_std)           \
  X(masked_logsumexp, SH_REDUCE, DIM_MULTI, ID_NEG_INF, INT_YES, f_logsumexp) \
  X(masked_cumsum, SH_SCAN, DIM_REQUIRED, ID_ZERO, INT_YES, f_cumsum)    \
  X(masked_cumprod, SH_SCAN, DIM_REQUIRED, ID_ONE, INT_YES, f_cumprod)   \
  X(masked_softmax, SH_SCAN, DIM_REQUIRED, ID_NEG_INF, INT_NO, f_softmax) \
  X(masked_log_softmax, SH_SCAN, DIM_REQUIRED, ID_NEG_INF, INT_NO, f_log_softmax) \
  X(masked_softmin, SH_SCAN, DIM_REQUIRED, ID_POS_INF, INT_NO, f_softmin) \
  X(masked_normalize, SH_SCAN, DIM_REQUIRED, ID_ZERO, INT_NO, f_normalize) \
  X(masked_logaddexp, SH_BINARY, DIM_NONE, ID_NEG_INF, INT_NO, NULL)

static const mfn_desc DESCS[] = {
#define MFN_X(name, shape, dim, fill, ints, fn) {MT_OP_##name, #name, shape, dim, fill, ints, fn},
    MFN_OPS(MFN_X)
#undef MFN_X
};

static const mfn_desc *find_desc(mt_op op) {
  for (size_t k = 0; k < sizeof DESCS / sizeof DESCS[0]; k++)
    if (DESCS[k].op == op) return &DESCS[k];
  return NULL;
}

/* ---- dtypes (MFN-7) -------------------------------------------------------- */

static int is_intlike(mt_dtype d) { return mt__cpu_is_int(d) || d == MT_bool; }

static mt_dtype out_dtype(mt_op op, mt_dtype d) {
  if (!is_intlike(d)) return d;
  if (op == MT_OP_masked_sum || op == MT_OP_masked_prod) return MT_int64;
  if (op == MT_OP_masked_var || op == MT_OP_masked_std) return MT_float32;
  return d;
}

/* torch's name of a dtype in its kernel messages ('Long', 'Char'...). */
static const char *torch_scalar_name(mt_dtype d) {
  switch (d) {
  case MT_int64: return "Long";
  case MT_int32: return "Int";
  case MT_int8: return "Char";
  case MT_uint8: return "Byte";
  case MT_bool: return "Bool";
  case MT_float16: return "Half";
  case MT_bfloat16: return "BFloat16";
  case MT_float32: return "Float";
  default: return "Double";
  }
}

static mt_status check_dtype(const mfn_desc *dd, mt_dtype d, int has_mask, mt_error *err) {
  if (!is_intlike(d)) return MT_OK;
  if (dd->ints == INT_BOOL || (dd->ints == INT_YES && d != MT_bool)) return MT_OK;
  if (dd->ints == INT_YES && d == MT_bool && !has_mask &&
      (dd->fill == ID_NEG_INF || dd->fill == ID_POS_INF))
    return MT_OK; /* no fill needed: plain torch.amax etc. take bool */
  if (dd->op == MT_OP_masked_mean)
    return mt_err(err, MT_DTYPE_MISMATCH,
                  "%s: mean(): Could not infer output dtype. Input dtype must be either a "
                  "floating point or complex dtype. Got: torch.%s",
                  dd->name, mt_dtype_name(d));
  if (dd->ints == INT_YES)
    return mt_err(err, MT_DTYPE_MISMATCH, "%s: identity of %s on torch.bool input", dd->name,
                  dd->name + 7);
  return mt_err(err, MT_DTYPE_MISMATCH, "%s: not implemented for '%s' (inputs/0 has dtype %s)",
                dd->name, torch_scalar_name(d), mt_dtype_name(d));
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

/* Output element k: the exact integer for integer/bool outputs, else the
 * double rounded once to the output dtype. */
static void store(mt_tensor *o, int64_t k, double vd, int64_t vi, int int_out) {
  if (int_out)
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
  if ((st = check_dtype(dd, x->dtype, call->n_in == 4, err)) != MT_OK) return st;
  if ((st = load(dd->name, 2, x, call->n_in == 4 ? call->in[2] : NULL, ID_NEG_INF, 0, &a, err)) !=
      MT_OK)
    goto out;
  if ((st = load(dd->name, 3, y, call->n_in == 4 ? call->in[3] : NULL, ID_NEG_INF, 0, &b, err)) !=
      MT_OK)
    goto out;
  if ((st = h->dense_new(x->dtype, bt.ndim, bt.shape, &o, err)) != MT_OK) goto out;
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
    mt__cpu_st(o->values, o->dtype, i, r);
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
  if (x->kind != MT_KIND_DENSE)
    return mt_err(err, MT_NOT_SUPPORTED,
                  "%s: inputs/0 has kind %s; the CPU backend implements strided inputs only",
                  dd->name, mt_kind_name(x->kind));
  if ((st = mt_tensor_validate(x, "inputs/0", err)) != MT_OK) return st;
  if (dd->shape == SH_BINARY) return run_logaddexp(call, dd, err);
  if (call->n_in > 2)
    return mt_err(err, MT_INVALID_ARGUMENT, "%s: expected inputs [input] or [input, mask], got %d",
                  dd->name, call->n_in);
  m = call->n_in == 2 ? call->in[1] : NULL;
  if ((st = check_dtype(dd, x->dtype, m != NULL, err)) != MT_OK) return st;
  if ((st = parse_dims(dd, x, call->kw, red, &flat, err)) != MT_OK) return st;

  mfn_slice s = {0};
  s.in_dt = x->dtype;
  s.is_int = is_intlike(x->dtype) && op != MT_OP_masked_var && op != MT_OP_masked_std;
  s.ct = is_intlike(x->dtype) ? MT_float32 : x->dtype;
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
  mt_dtype od = out_dtype(op, x->dtype);
  int int_out = is_intlike(od);

  if ((st = load(dd->name, 1, x, m, dd->fill, s.ord, &a, err)) != MT_OK) goto out;
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
      store(o, so, td[0], ti[0], int_out);
    else
      for (int64_t k = 0; k < L; k++) store(o, idx[so * L + k], td[k], ti[k], int_out);
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

#define MFN_KERNEL(name, shape, dim, fill, ints, fn) \
  mt_status mt_cpu_##name(mt_call *call, mt_error *err) { return run(call, MT_OP_##name, err); }
MFN_OPS(MFN_KERNEL)
#undef MFN_KERNEL

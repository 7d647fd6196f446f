/* reduce.c - CPU kernels of the reduce family: sum mean prod amin amax
 * argmin argmax all norm var std, on dense-storage masked tensors of every
 * dtype MaskedTensor holds (float16 float32 float64 int64 int32 int8 bool).
 *
 * RED-1  no `dim`: reduce every element to a 0-d masked tensor whose mask
 *        is any(mask).
 * RED-2  `dim` (int, negative allowed, or a tuple of ints where torch takes
 *        one) and `keepdim` (default false): reduce those dims; the output
 *        mask is any(mask) over them (torch.masked's _multidim_any).
 *        dim=() is refused (torch's mask reduction keeps every dim and the
 *        MaskedTensor constructor rejects the result), except by `all`,
 *        which then reduces nothing.
 * RED-3  masked-out elements are replaced by the op's identity before
 *        reducing, so a fully masked-out output is exactly the fill: sum 0,
 *        prod 1, amin +inf (integers: the dtype's max), amax -inf (the
 *        dtype's min), mean and var/std NaN, argmin/argmax 0, all True.
 * RED-4  argmin/argmax (one int dim or all): torch.argmax over the input
 *        with masked-out elements replaced by the fill (amax/amin's
 *        identity): the first index of the extreme value, NaN counts as the
 *        extreme; a masked-out fill that ties a masked-in value earlier in
 *        the row wins (torch returns a masked-out index). The index is
 *        stored in the INPUT dtype (torch.masked's `.to(dtype=input.dtype)`),
 *        wrapped to its width.
 * RED-5  var/std: correction 1 always (MaskedTensor passes no `unbiased`
 *        or `correction`: torch refuses them); torch's steps, each rounded
 *        to the compute dtype (float input: its dtype; integers: float32):
 *        mean = sum / count, x = v - mean, total = sum(x*x),
 *        var = total / max(count - 1, 0), std = sqrt(var). One masked-in
 *        element gives 0/0 = NaN, specified.
 * RED-6  all: output bool, v != 0 over masked-in elements (NaN is true).
 * RED-7  dtypes: sum/prod of integers and bool give int64 (wrapping), mean
 *        refuses integers and bool, amin/amax/argmin/argmax/var/std refuse
 *        bool, var/std of integers give float32; uint8 is refused by
 *        MaskedTensor itself. Refusals are DTYPE_MISMATCH. `dtype=` (sum,
 *        prod, mean; with `dim` only) converts every element first: sum
 *        then gives that dtype, prod still promotes integers to int64, mean
 *        takes floating dtypes only (any input dtype then); bfloat16 is
 *        refused (MaskedTensor cannot hold the result).
 * RED-8  norm: torch.norm(m, ...) always passes p= to MaskedTensor's
 *        reduction, which takes only (dim, keepdim, dtype): torch refuses
 *        every call, INVALID_ARGUMENT.
 * Float accumulation is in double and rounded once to the output dtype
 * (float16 products round at every step, as torch's CPU kernel does);
 * mean rounds the sum to the dtype and divides in the dtype, as torch's
 * `total / count`. Errors follow torch: a dim out of range and amin/amax/
 * argmin/argmax over an empty dim -> INDEX_OUT_OF_RANGE (torch's
 * IndexError), a repeated dim -> INVALID_ARGUMENT, a tuple of dims for
 * prod/argmin/argmax -> INVALID_ARGUMENT (the kwarg check: no such
 * overload). */
#include <stdint.h>

#include "cpu_util.h"
#include "mt/kwargs.h"
#include "sps.h"

typedef enum { K_SUM, K_MEAN, K_PROD, K_MIN, K_MAX, K_ARGMIN, K_ARGMAX, K_ALL, K_VAR, K_STD, K_NORM } red_kind;

/* What an op makes of its input dtype. */
typedef enum {
  O_SAME,  /* the input dtype */
  O_WIDEN, /* integers and bool -> int64 (torch.sum/prod's promotion) */
  O_BOOL,  /* bool */
  O_F32    /* integers -> float32 (torch.masked._std_var's compute dtype) */
} red_out;

#define DT(d) (1u << MT_##d)
#define DT_FLOAT (DT(float16) | DT(float32) | DT(float64))
#define DT_INT (DT(int64) | DT(int32) | DT(int8))

/* X(op, kind, accepted input dtypes, output dtype rule, refusal text) */
#define RED_OPS(X)                                                                          \
  X(sum, K_SUM, DT_FLOAT | DT_INT | DT(bool), O_WIDEN, "")                                  \
  X(mean, K_MEAN, DT_FLOAT, O_SAME,                                                         \
    "Could not infer output dtype. Input dtype must be either a floating point or complex " \
    "dtype")                                                                                \
  X(prod, K_PROD, DT_FLOAT | DT_INT | DT(bool), O_WIDEN, "")                                \
  X(amin, K_MIN, DT_FLOAT | DT_INT, O_SAME, "torch.masked has no identity of amin on bool")  \
  X(amax, K_MAX, DT_FLOAT | DT_INT, O_SAME, "torch.masked has no identity of amax on bool")  \
  X(argmin, K_ARGMIN, DT_FLOAT | DT_INT, O_SAME,                                            \
    "torch.masked has no identity of argmin on bool")                                       \
  X(argmax, K_ARGMAX, DT_FLOAT | DT_INT, O_SAME,                                            \
    "torch.masked has no identity of argmax on bool")                                       \
  X(all, K_ALL, DT_FLOAT | DT_INT | DT(bool), O_BOOL, "")                                   \
  X(var, K_VAR, DT_FLOAT | DT_INT, O_F32,                                                   \
    "its `input - mean` step subtracts bool tensors, which torch refuses")                  \
  X(std, K_STD, DT_FLOAT | DT_INT, O_F32,                                                   \
    "its `input - mean` step subtracts bool tensors, which torch refuses")                  \
  X(norm, K_NORM, DT_FLOAT, O_SAME, "")

typedef struct {
  red_kind kind;
  unsigned dtypes;
  red_out out;
  const char *refusal;
} red_spec;

/* One output element's state. */
typedef struct {
  double f;    /* float accumulator (var/std: the sum, then the mean) */
  int64_t i;   /* integer accumulator (wrapping), all's flag */
  int64_t n;   /* masked-in elements */
  int64_t idx; /* argmin/argmax: the best index so far, -1 = none */
  double m2;   /* var/std: the sum of squared deviations */
} red_acc;

static int is_float_dt(mt_dtype d) { return mt__cpu_is_float(d); }

static int64_t int_max(mt_dtype d) {
  return d == MT_int8 ? INT8_MAX : d == MT_int32 ? INT32_MAX : INT64_MAX;
}
static int64_t int_min(mt_dtype d) {
  return d == MT_int8 ? INT8_MIN : d == MT_int32 ? INT32_MIN : INT64_MIN;
}

static int64_t wrap_add(int64_t a, int64_t b) { return (int64_t)((uint64_t)a + (uint64_t)b); }
static int64_t wrap_mul(int64_t a, int64_t b) { return (int64_t)((uint64_t)a * (uint64_t)b); }

/* The identity every masked-out element takes (RED-3). */
static void acc_init(red_kind k, mt_dtype dt, red_acc *a) {
  int fl = is_float_dt(dt);
  memset(a, 0, sizeof *a);
  a->idx = -1;
  switch (k) {
  case K_PROD: a->f = 1.0; a->i = 1; break;
  case K_MIN: case K_ARGMIN: a->f = INFINITY; a->i = fl ? 0 : int_max(dt); break;
  case K_MAX: case K_ARGMAX: a->f = -INFINITY; a->i = fl ? 0 : int_min(dt); break;
  case K_ALL: a->i = 1; break;
  default: break;
  }
}

/* argmin/argmax: does (fv, iv) beat the best so far? NaN is the extreme;
 * ties keep the first (torch.argmin/argmax). */
static int arg_better(red_kind k, int fl, const red_acc *a, double fv, int64_t iv) {
  if (a->idx < 0) return 1;
  if (fl) {
    if (isnan(a->f)) return 0;
    if (isnan(fv)) return 1;
    return k == K_ARGMAX ? fv > a->f : fv < a->f;
  }
  return k == K_ARGMAX ? iv > a->i : iv < a->i;
}

/* Folds element (fv, iv) at reduction index pos into a (masked-in, except
 * for argmin/argmax, which see the fill at masked-out positions). */
static void acc_add(red_kind k, mt_dtype dt, red_acc *a, double fv, int64_t iv, int64_t pos) {
  int fl = is_float_dt(dt);
  switch (k) {
  case K_SUM: case K_MEAN: a->f += fv; a->i = wrap_add(a->i, iv); break;
  case K_PROD: /* torch multiplies float16 in float16, rounding each step */
    a->f = dt == MT_float16 ? mt__cpu_round(dt, a->f * fv) : a->f * fv;
    a->i = wrap_mul(a->i, iv);
    break;
  case K_MIN:
    if (fl) a->f = (isnan(a->f) || isnan(fv)) ? NAN : (fv < a->f ? fv : a->f);
    else if (iv < a->i) a->i = iv;
    break;
  case K_MAX:
    if (fl) a->f = (isnan(a->f) || isnan(fv)) ? NAN : (fv > a->f ? fv : a->f);
    else if (iv > a->i) a->i = iv;
    break;
  case K_ARGMIN: case K_ARGMAX:
    if (arg_better(k, fl, a, fv, iv)) {
      a->f = fv;
      a->i = iv;
      a->idx = pos;
    }
    break;
  case K_ALL: a->i = a->i && (fl ? fv != 0.0 : iv != 0); break;
  case K_VAR: case K_STD: a->f += fv; break;
  case K_NORM: break;
  }
}

/* The dims to reduce, as flags red[d]; *all = 1 for the RED-1 form;
 * *none = 1 for `all` with dim=() (torch.all reduces nothing then). */
static mt_status parse_dims(const char *name, red_kind k, const mt_tensor *m,
                            const mt_kwargs *kw, int red[MT_MAX_DIMS], int *all, int *none,
                            mt_error *err) {
  const mt_kwarg *a = mt_kw_find(kw, "dim");
  int ndim_eff = m->ndim > 0 ? m->ndim : 1; /* torch wraps dims of a 0-d tensor as 1-d */
  int64_t one;
  const int64_t *dims = NULL;
  int n = 0;
  memset(red, 0, sizeof(int) * MT_MAX_DIMS);
  *all = 0;
  *none = 0;
  if (!a) {
    *all = 1;
  } else if (a->type == MT_KW_INT) {
    one = a->i;
    dims = &one;
    n = 1;
  } else { /* MT_KW_INTS: mt__kw_check let nothing else through */
    dims = a->ints;
    n = a->n;
    if (n == 0) {
      if (k == K_ALL) {
        *none = 1;
        return MT_OK;
      }
      return mt_err(err, MT_INVALID_ARGUMENT,
                    "%s: dim=() reduces every dim of the data but none of the mask in torch's "
                    "MaskedTensor (_multidim_any), which then refuses the result: data.dim() "
                    "must equal mask.dim()",
                    name);
    }
  }
  for (int j = 0; j < n; j++) {
    int64_t d = dims[j];
    if (d < -ndim_eff || d >= ndim_eff)
      return mt_err(
          err, MT_INDEX_OUT_OF_RANGE,
          "%s: Dimension out of range (expected to be in range of [%d, %d], but got %lld)", name,
          -ndim_eff, ndim_eff - 1, (long long)d);
    int w = (int)(d < 0 ? d + ndim_eff : d);
    if (red[w])
      return mt_err(err, MT_INVALID_ARGUMENT,
                    "%s: dim=%lld appears multiple times in the list of dims", name, (long long)d);
    red[w] = 1;
  }
  if (*all)
    for (int d = 0; d < m->ndim; d++) red[d] = 1;
  if (m->ndim == 0) red[0] = 0; /* a 0-d tensor reduces to itself */
  return MT_OK;
}

/* The output dtype of op on input dtype dt. */
static mt_dtype out_dtype(const red_spec *s, mt_dtype dt) {
  switch (s->out) {
  case O_WIDEN: return is_float_dt(dt) ? dt : MT_int64;
  case O_BOOL: return MT_bool;
  case O_F32: return is_float_dt(dt) ? dt : MT_float32;
  default: return dt;
  }
}

/* var/std's compute dtype: the input's float dtype, float32 for integers. */
static mt_dtype var_dtype(mt_dtype dt) { return is_float_dt(dt) ? dt : MT_float32; }

/* Stores output element o from its accumulator. */
static void finish(red_kind k, mt_dtype dt, mt_dtype odt, const red_acc *a, void *buf, int64_t o) {
  int fl = is_float_dt(dt);
  switch (k) {
  case K_SUM: case K_PROD:
    if (fl) mt__cpu_st(buf, odt, o, a->f);
    else mt__cpu_sti(buf, odt, o, a->i);
    break;
  case K_MEAN: /* total rounded to the dtype, / count in the dtype: 0/0 = NaN */
    mt__cpu_st(buf, odt, o, mt__cpu_round(dt, a->f) / (double)a->n);
    break;
  case K_MIN: case K_MAX:
    if (fl) mt__cpu_st(buf, odt, o, a->f);
    else mt__cpu_sti(buf, odt, o, a->i);
    break;
  case K_ARGMIN: case K_ARGMAX: mt__cpu_sti(buf, odt, o, a->idx < 0 ? 0 : a->idx); break;
  case K_ALL: mt__cpu_sti(buf, odt, o, a->i); break;
  case K_VAR: case K_STD: {
    double total = mt__cpu_round(odt, a->m2);
    double cnt = a->n - 1 > 0 ? (double)(a->n - 1) : 0.0; /* max(count - correction, 0) */
    double v = mt__cpu_round(odt, total / cnt);
    mt__cpu_st(buf, odt, o, k == K_STD ? sqrt(v) : v);
    break;
  }
  case K_NORM: break;
  }
}

/* The value of element i as (double, exact int64). */
static void load(const mt_tensor *t, mt_dtype dt, int64_t i, double *fv, int64_t *iv) {
  if (is_float_dt(dt)) {
    *fv = mt__cpu_ld(t->values, dt, i);
    *iv = 0;
  } else {
    *iv = mt__cpu_ldi(t->values, dt, i);
    *fv = (double)*iv;
  }
}

/* (fv, iv) of dtype `from` converted to `to`, as torch's `.to(dtype)`:
 * floats round, floats to integers truncate toward zero and wrap to the
 * width (NaN, inf and values beyond int64 give 0 here: undefined in torch),
 * integers wrap, anything to bool is `!= 0`. */
static void convert(mt_dtype from, mt_dtype to, double *fv, int64_t *iv) {
  if (from == to) return;
  if (is_float_dt(to)) {
    *fv = mt__cpu_round(to, is_float_dt(from) ? *fv : (double)*iv);
    *iv = 0;
    return;
  }
  int64_t v;
  if (to == MT_bool)
    v = is_float_dt(from) ? *fv != 0.0 : *iv != 0;
  else if (is_float_dt(from))
    v = (isfinite(*fv) && fabs(*fv) < 9.2e18) ? (int64_t)trunc(*fv) : 0;
  else
    v = *iv;
  unsigned char tmp[8];
  mt__cpu_sti(tmp, to, 0, v);
  *iv = mt__cpu_ldi(tmp, to, 0);
  *fv = (double)*iv;
}

/* SP-3: the all-reduce of sparse storage (float dtypes). torch hands the
 * n stored values and the mask's stored values to torch.masked
 * (masked_fn(masked_tensor(data.values(), mask.values()))), so counts are
 * of stored entries, not of specified ones: mean = sum(specified) / n,
 * var = sum over specified (x - mean)^2 / max(n - 1, 0), std its sqrt;
 * sum prod amin amax reduce the specified values; argmin/argmax index the
 * stored values (masked-out ones see the fill): CSR returns that position
 * (in the input dtype), COO the row-major flat index of its coordinates,
 * computed by torch in float32 (sum(idx * (numel / cumprod(size)))). The
 * result is a dense 0-d masked tensor, masked in when any stored value
 * is. coo: the coalesced COO data (NULL for CSR). */
static mt_status reduce_stored_all(mt_call *call, const char *name, red_kind k, mt_dtype dt,
                                   mt_dtype odt, const void *dv, const void *mv, int64_t n,
                                   const mt_tensor *coo, mt_error *err) {
  const mt_host *h = mt__cpu_host(call);
  mt_tensor *out = NULL, *data = NULL, *mask = NULL;
  mt_status st;
  int is_arg = k == K_ARGMIN || k == K_ARGMAX, is_var = k == K_VAR || k == K_STD;
  if (n == 0 && (k == K_MIN || k == K_MAX))
    return mt_err(err, MT_INDEX_OUT_OF_RANGE,
                  "%s: Expected reduction dim 0 to have non-zero size (inputs/0 stores no values)",
                  name);
  if (n == 0 && is_arg)
    return mt_err(err, MT_INDEX_OUT_OF_RANGE,
                  "%s: Expected reduction dim to be specified for input.numel() == 0 (inputs/0 "
                  "stores no values)",
                  name);
  red_acc a;
  int64_t spec = 0;
  acc_init(k, dt, &a);
  for (int64_t i = 0; i < n; i++) {
    int in = mt__cpu_ldb(mv, i);
    spec += in;
    if (in)
      acc_add(k, dt, &a, mt__cpu_ld(dv, dt, i), 0, i);
    else if (is_arg) /* RED-4: the fill, never the data */
      acc_add(k, dt, &a, k == K_ARGMIN ? INFINITY : -INFINITY, 0, i);
  }
  a.n = (k == K_MEAN || is_var) ? n : spec; /* the stored count */
  if (is_var) {
    a.f = mt__cpu_round(dt, mt__cpu_round(dt, a.f) / (double)n);
    for (int64_t i = 0; i < n; i++)
      if (mt__cpu_ldb(mv, i)) {
        double x = mt__cpu_round(dt, mt__cpu_ld(dv, dt, i) - a.f);
        a.m2 += mt__cpu_round(dt, x * x);
      }
  }
  if (is_arg && coo) odt = MT_float32;
  int64_t no_shape[1] = {0};
  if ((st = mt__cpu_new_masked_dense(h, odt, 0, no_shape, &out, &data, &mask, err)) != MT_OK)
    return st;
  if (is_arg && coo) {
    float lin = 0.0f, numel = (float)mt_numel(coo), cum = 1.0f;
    int64_t at = a.idx < 0 ? 0 : a.idx;
    for (int d = 0; d < coo->sparse_dim; d++) {
      cum *= (float)coo->shape[d];
      lin += (float)coo->indices[(int64_t)d * coo->nnz + at] * (numel / cum);
    }
    mt__cpu_st(data->values, MT_float32, 0, lin);
  } else {
    finish(k, dt, odt, &a, data->values, 0);
  }
  ((uint8_t *)mask->values)[0] = spec > 0;
  call->out[0] = out;
  call->n_out = 1;
  return MT_OK;
}

/* SP-3: torch.all of sparse storage fills the data where ~mask.values()
 * (one value per stored entry) broadcasts against the data's shape: a
 * stored count that fits the last dim reaches sparse expand (refused), any
 * other is torch's shape error. */
static mt_status all_of_sparse(const char *name, const mt_tensor *d, int64_t nnz, mt_error *err) {
  int64_t last = d->shape[d->ndim - 1];
  if (nnz == last || nnz == 1 || last == 1)
    return mt_err(err, MT_LAYOUT_MISMATCH,
                  "%s: expand is unsupported for %s tensors (torch.all's masked_fill of sparse "
                  "storage)",
                  name, d->kind == MT_KIND_COO ? "Sparse" : "SparseCsr");
  return mt_err(err, MT_SHAPE_MISMATCH,
                "%s: The size of tensor a (%lld) must match the size of tensor b (%lld) at "
                "non-singleton dimension %d (torch.all's masked_fill of sparse storage with its "
                "mask's stored values)",
                name, (long long)nnz, (long long)last, d->ndim - 1);
}

static mt_status reduce_coo_all(mt_call *call, const char *name, red_kind k, mt_dtype odt,
                                const mt_tensor *m, mt_error *err) {
  const mt_tensor *d, *mk;
  mt_tensor *td = NULL, *tk = NULL;
  mt_dtype dt = m->data->dtype;
  mt_status st;
  if ((st = mt__cpu_coalesced(m->data, &d, &td, err)) != MT_OK) goto out;
  if ((st = mt__cpu_coalesced(m->mask, &mk, &tk, err)) != MT_OK) goto out;
  if (!mt__cpu_coo_same_indices(d, mk)) {
    st = mt_err(err, MT_INVALID_ARGUMENT,
                "%s: inputs/0 data and mask do not have the same COO indices", name);
    goto out;
  }
  if (k == K_ALL) {
    st = all_of_sparse(name, d, d->nnz, err);
    goto out;
  }
  if (!is_float_dt(dt) || mt_coo_row_numel(d) != 1) {
    st = mt_err(err, MT_NOT_SUPPORTED,
                "%s: the CPU backend reduces COO storage of float dtypes without dense dims", name);
    goto out;
  }
  st = reduce_stored_all(call, name, k, dt, odt, d->values, mk->values, d->nnz, d, err);
out:
  mt_tensor_free(td);
  mt_tensor_free(tk);
  return st;
}

/* The all-reduce of CSR storage (data and mask of one structure), as for
 * COO. */
static mt_status reduce_csr_all(mt_call *call, const char *name, red_kind k, mt_dtype odt,
                                const mt_tensor *m, mt_error *err) {
  const mt_tensor *d = m->data, *mk = m->mask;
  if (!mt__cpu_csr_same_structure(d, mk))
    return mt_err(err, MT_INVALID_ARGUMENT,
                  "%s: inputs/0 data and mask do not have one CSR structure", name);
  if (k == K_ALL) return all_of_sparse(name, d, d->nnz, err);
  if (!is_float_dt(d->dtype))
    return mt_err(err, MT_NOT_SUPPORTED,
                  "%s: the CPU backend reduces CSR storage of float dtypes", name);
  return reduce_stored_all(call, name, k, d->dtype, odt, d->values, mk->values, d->nnz, NULL,
                           err);
}

/* Output element of input element i (its coordinates with the reduced dims
 * dropped) and, in *pos, its index along the reduction (argmin/argmax: the
 * coordinate along the one reduced dim, or the flat index for all). */
static int64_t out_index(const mt_tensor *m, const int red[MT_MAX_DIMS], int all, int64_t i,
                         int64_t *pos) {
  int64_t rem = i, o = 0, scale = 1;
  *pos = all ? i : 0;
  for (int d = m->ndim - 1; d >= 0; d--) {
    int64_t c = rem % m->shape[d];
    rem /= m->shape[d];
    if (!red[d]) {
      o += c * scale;
      scale *= m->shape[d];
    } else if (!all) {
      *pos = c;
    }
  }
  return o;
}

static mt_status reduce(mt_call *call, mt_op op, const red_spec *s, mt_error *err) {
  const char *name = mt_op_name(op);
  const mt_host *h = mt__cpu_host(call);
  const mt_tensor *m = NULL;
  mt__cpu_mview mv = {0};
  mt_tensor *out = NULL, *data = NULL, *mask = NULL;
  red_acc *acc = NULL;
  int red[MT_MAX_DIMS], all, none, keepdim, out_ndim = 0;
  int64_t out_shape[MT_MAX_DIMS];
  red_kind k = s->kind;
  mt_status st;

  if (mt__sps_call(call) && (op == MT_OP_sum || op == MT_OP_amax || op == MT_OP_norm))
    return mt__sps_reduce(call, op, err); /* plain sparse: reduce_sparse.c (SPS-3, SPS-4) */
  mt__cpu_begin(call);
  if ((st = mt__kw_check(op, call->kw, err)) != MT_OK) return st;
  if ((st = mt__cpu_input(call, 0, name, &m, err)) != MT_OK) return st;
  if (m->kind != MT_KIND_MASKED)
    return mt_err(err, MT_NOT_SUPPORTED,
                  "%s: inputs/0 has kind %s; the CPU backend implements %s on masked tensors", name,
                  mt_kind_name(m->kind), name);
  if ((st = mt_tensor_validate(m, "inputs/0", err)) != MT_OK) return st;
  if (k == K_NORM) /* RED-8 */
    return mt_err(err, MT_INVALID_ARGUMENT,
                  "norm: torch.norm passes p= to MaskedTensor's reduction, which takes only dim, "
                  "keepdim and dtype (_reduce_dim_args() got an unexpected keyword argument 'p'): "
                  "torch refuses every norm of a MaskedTensor");
  /* SP-3: a dim reduction of sparse storage: torch.masked's reduce_dim
   * returns NotImplemented first thing (TypeError: all __torch_function__
   * handlers returned NotImplemented) */
  if ((m->data->kind == MT_KIND_COO || m->data->kind == MT_KIND_CSR) &&
      mt_kw_find(call->kw, "dim"))
    return mt_err(err, MT_LAYOUT_MISMATCH,
                  "%s: the sparse version of %s with dim is not implemented in torch.masked's "
                  "reductions (inputs/0 has %s storage)",
                  name, name, mt_kind_name(m->data->kind));
  mt_dtype idt = m->data->dtype, dt = idt; /* dt: the dtype reduced in */
  const mt_kwarg *dk = mt_kw_find(call->kw, "dtype");
  if (dk) mt_kw_dtype_parse(dk->s, &dt); /* mt__kw_check vetted the name */
  if (idt == MT_uint8)
    return mt_err(err, MT_DTYPE_MISMATCH,
                  "%s: inputs/0 has dtype uint8, which MaskedTensor does not hold", name);
  if (k == K_MEAN && dk && !is_float_dt(dt))
    return mt_err(err, MT_DTYPE_MISMATCH,
                  "mean: Could not infer output dtype. Optional dtype must be either a floating "
                  "point or complex dtype (kwargs/dtype = '%s')",
                  dk->s);
  if (!dk && !(s->dtypes & (1u << idt)))
    return mt_err(err, MT_DTYPE_MISMATCH, "%s: inputs/0 has dtype %s: %s", name,
                  mt_dtype_name(idt), s->refusal);
  if (mt_kw_find(call->kw, "dim") == NULL && call->kw && call->kw->n > 0)
    return mt_err(err, MT_INVALID_ARGUMENT,
                  "%s: %s without dim: MaskedTensor's reduction takes (dim, keepdim, dtype) "
                  "with dim required once any kwarg is given (torch: missing 1 required "
                  "positional argument: 'dim')",
                  name, call->kw->items[0].name);
  if ((st = parse_dims(name, k, m, call->kw, red, &all, &none, err)) != MT_OK) return st;
  keepdim = mt_kw_int(call->kw, "keepdim", 0) != 0;
  /* sum(dtype=) gives that dtype; prod converts, then promotes as always */
  mt_dtype odt = (dk && k == K_SUM) ? dt : out_dtype(s, dt);
  if (odt == MT_bfloat16 || dt == MT_bfloat16) /* RED-7: MaskedTensor cannot hold the result */
    return mt_err(err, MT_DTYPE_MISMATCH,
                  "%s: dtype=bfloat16: torch.bfloat16 is not supported in MaskedTensor (the "
                  "result would be a bfloat16 masked tensor)",
                  name);

  if (m->data->kind == MT_KIND_COO || m->data->kind == MT_KIND_CSR) {
    if (dk)
      return mt_err(err, MT_NOT_SUPPORTED,
                    "%s: dtype= on sparse storage is not implemented by the CPU backend", name);
    return m->data->kind == MT_KIND_COO ? reduce_coo_all(call, name, k, odt, m, err)
                                        : reduce_csr_all(call, name, k, odt, m, err);
  }
  if (m->data->kind != MT_KIND_DENSE)
    return mt_err(err, MT_NOT_SUPPORTED, "%s: %s storage is not supported by the CPU backend", name,
                  mt_kind_name(m->data->kind));

  /* amin/amax/argmin/argmax have no identity over an empty dim: torch's
   * IndexError. */
  if (k == K_MIN || k == K_MAX || k == K_ARGMIN || k == K_ARGMAX) {
    if ((k == K_ARGMIN || k == K_ARGMAX) && all && mt_numel(m) == 0)
      return mt_err(err, MT_INDEX_OUT_OF_RANGE,
                    "%s: Expected reduction dim to be specified for input.numel() == 0", name);
    for (int d = 0; d < m->ndim; d++)
      if (red[d] && m->shape[d] == 0)
        return mt_err(
            err, MT_INDEX_OUT_OF_RANGE,
            "%s: Expected reduction dim %d to have non-zero size (inputs/0 shape[%d] = 0)", name,
            d, d);
  }

  for (int d = 0; d < m->ndim; d++) {
    if (!red[d])
      out_shape[out_ndim++] = m->shape[d];
    else if (keepdim)
      out_shape[out_ndim++] = 1;
  }
  int64_t n_out = mt_shape_numel(out_ndim, out_shape), n_in = mt_numel(m);
  if ((st = mt__cpu_mview_open(m, &mv, err)) != MT_OK) goto out;
  acc = malloc(sizeof *acc * (size_t)(n_out ? n_out : 1));
  if (!acc) {
    st = mt_err(err, MT_OUT_OF_MEMORY, "%s: out of memory for %lld accumulators", name,
                (long long)n_out);
    goto out;
  }
  for (int64_t o = 0; o < n_out; o++) acc_init(k, dt, &acc[o]);

  /* Walk the input in row-major order, so the first index wins ties. */
  int is_var = k == K_VAR || k == K_STD, is_arg = k == K_ARGMIN || k == K_ARGMAX;
  mt_dtype cdt = var_dtype(dt);
  for (int64_t i = 0; i < n_in; i++) {
    int in = mt__cpu_ldb(mv.mask->values, i);
    if (!in && !is_arg) continue; /* RED-3: masked out = identity */
    int64_t pos, o = out_index(m, red, all, i, &pos), iv;
    double fv;
    if (in) {
      load(mv.data, idt, i, &fv, &iv);
      convert(idt, dt, &fv, &iv); /* RED-7: dtype= converts first */
      acc[o].n++;
    } else { /* RED-4: argmin/argmax see the fill, never the data */
      fv = k == K_ARGMIN ? INFINITY : -INFINITY;
      iv = k == K_ARGMIN ? int_max(dt) : int_min(dt);
    }
    if (is_var) fv = mt__cpu_round(cdt, fv); /* torch sums integers as float32 */
    acc_add(k, dt, &acc[o], fv, iv, pos);
  }
  if (is_var) { /* RED-5: mean = sum / count, then the squared deviations */
    for (int64_t o = 0; o < n_out; o++)
      acc[o].f = mt__cpu_round(cdt, mt__cpu_round(cdt, acc[o].f) / (double)acc[o].n);
    for (int64_t i = 0; i < n_in; i++) {
      if (!mt__cpu_ldb(mv.mask->values, i)) continue;
      int64_t pos, o = out_index(m, red, all, i, &pos), iv;
      double fv;
      load(mv.data, idt, i, &fv, &iv);
      double x = mt__cpu_round(cdt, mt__cpu_round(cdt, fv) - acc[o].f);
      acc[o].m2 += mt__cpu_round(cdt, x * x);
    }
  }

  if (none) { /* all(m, dim=()): every element is its own output */
    out_ndim = m->ndim;
    memcpy(out_shape, m->shape, sizeof(int64_t) * (size_t)m->ndim);
  }
  if ((st = mt__cpu_new_masked_dense(h, odt, out_ndim, out_shape, &out, &data, &mask, err)) !=
      MT_OK)
    goto out;
  if (none) {
    for (int64_t i = 0; i < n_in; i++) {
      int in = mt__cpu_ldb(mv.mask->values, i);
      double fv;
      int64_t iv;
      load(mv.data, idt, i, &fv, &iv);
      mt__cpu_sti(data->values, MT_bool, i, !in || (is_float_dt(dt) ? fv != 0.0 : iv != 0));
      ((uint8_t *)mask->values)[i] = (uint8_t)in;
    }
  } else {
    for (int64_t o = 0; o < n_out; o++) {
      finish(k, dt, odt, &acc[o], data->values, o);
      ((uint8_t *)mask->values)[o] = acc[o].n > 0; /* RED-2: any(mask) over the reduced dims */
    }
  }
  call->out[0] = out;
  call->n_out = 1;
out:
  mt__cpu_mview_close(&mv);
  free(acc);
  return st;
}

#define RED_KERNEL(op, kind, dtypes, outr, refusal)                     \
  mt_status mt_cpu_##op(mt_call *call, mt_error *err) {                 \
    static const red_spec spec = {kind, dtypes, outr, refusal};         \
    return reduce(call, MT_OP_##op, &spec, err);                        \
  }
RED_OPS(RED_KERNEL)
#undef RED_KERNEL

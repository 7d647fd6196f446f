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
 * MFN-6  logaddexp fills both operands with -inf (an integer operand with its
 *        dtype's min; a bool one with a mask: DTYPE_MISMATCH); input and
 *        other broadcast, promote (torch.result_type) and the result is
 *        .to(dtype), the input's by default.
 * MFN-7  dtypes: sum/prod of integers and bool give int64, argmax/argmin
 *        give the index in the input's dtype, var/std of integers float32,
 *        logsumexp of integers is computed in float32 and truncated to the
 *        input dtype, median of integers/bool is the float32 median cast
 *        back (a fully masked slice: INVALID_ARGUMENT); mean, norm,
 *        softmax, softmin, log_softmax and normalize refuse integers
 *        (DTYPE_MISMATCH), logaddexp operands that promote to an integer,
 *        amax/amin/argmax/argmin refuse bool with a mask (no identity).
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
 * Floats are computed in double and rounded to the dtype where torch rounds,
 * so float16 and float32 match torch within a few ulp. Masked-out data
 * never reaches an output: it is replaced by the identity before anything
 * reads it.
 *
 * This file plans each call (dims, dtypes, refusals, mask broadcasting,
 * sparse entries, outputs); the math is common/masked_fn_math.h (the fill,
 * one slice at a time, logaddexp per element, a sparse output per output)
 * and runs where the mt_exec says (common/exec.h): here for the CPU
 * reference, on the device for the CUDA backend (impl/cuda/masked_fn.cu). */
#include "cpu_util.h"
#include "promote.h"

#include "common/exec.h"
#include "common/masked_fn_math.h"
#include "common/masked_fn_ops.h"
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

/* Which integer dtypes an op takes: none, integers (not bool), integers and
 * bool. */
typedef enum { INT_NO, INT_YES, INT_BOOL } mfn_ints;

/* Where dtype= casts (MFN-8): the filled input before the op, the op's
 * result after it, median's integer result only, or var/std's own mix. */
typedef enum { CAST_PRE, CAST_POST, CAST_MEDIAN, CAST_VAR } mfn_cast;

typedef struct {
  mt_op op;
  const char *name;
  mfn_shape shape;
  mfn_dim dim;
  mt_mfn_identity fill; /* MFN-2 */
  mfn_ints ints;
  mfn_cast cast;
  mt_mfn_kind kind; /* the per-slice math (common/masked_fn_math.h) */
} mfn_desc;

static int is_intlike(mt_dtype d) { return mt_mfn_is_intlike(d); }

static const mfn_desc DESCS[] = {
#define MFN_X(name, shape, dim, fill, ints, cast, kind) \
  {MT_OP_##name, #name, shape, dim, fill, ints, cast, kind},
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
      (dd->fill == MFN_ID_NEG_INF || dd->fill == MFN_ID_POS_INF))
    return MT_OK; /* no fill needed: plain torch.amax etc. take bool */
  if (dd->ints == INT_YES)
    return mt_err(err, MT_DTYPE_MISMATCH, "%s: identity of %s on torch.bool input", dd->name,
                  dd->name + 7);
  return mt_err(err, MT_DTYPE_MISMATCH, "%s: not implemented for '%s' (inputs/0 has dtype %s)",
                dd->name, mt__cpu_torch_type(d), mt_dtype_name(d));
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

/* The mask m of input x (inputs/<in_idx>; NULL: none), as torch.masked's
 * _input_mask takes it: dense, valid, broadcastable to x (MFN-1); *mv its
 * contiguous view (*tm a copy to free), mstride its step per dim of x. */
static mt_status mask_plan(const char *name, int in_idx, const mt_tensor *x, const mt_tensor *m,
                           const mt_tensor **mv, mt_tensor **tm, int64_t mstride[MT_MAX_DIMS],
                           mt_error *err) {
  char what[32];
  mt_status st;
  *mv = NULL;
  *tm = NULL;
  memset(mstride, 0, sizeof(int64_t) * MT_MAX_DIMS);
  if (!m) return MT_OK;
  if (m->kind != MT_KIND_DENSE)
    return mt_err(err, MT_NOT_SUPPORTED, "%s: inputs/%d (a mask) has kind %s; dense only", name,
                  in_idx, mt_kind_name(m->kind));
  if ((st = mt_tensor_validate(m, mt__cpu_in_name(in_idx, what, sizeof what), err)) != MT_OK)
    return st;
  if ((st = mask_strides(name, what, x, m, mstride, err)) != MT_OK) return st;
  return mt__cpu_contig(m, mv, tm, err);
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

/* A backend without the hook: NOT_SUPPORTED, naming it. A hook's failure
 * (a device's) gets the op's name in front. */
static mt_status no_hook(const char *name, const char *what, const mt_exec *ex, mt_error *err) {
  return mt_err(err, MT_NOT_SUPPORTED, "%s: %s: the %s backend has no kernels for it yet", name,
                what, ex->name);
}
static mt_status hook_failed(const char *name, mt_status st, mt_error *err) {
  mt_err_prefix(err, "%s", name);
  return st;
}

/* MFN-6: logaddexp(where(im, a, -inf), where(om, b, -inf)) in the operands'
 * promoted dtype, .to(dtype); torch's logaddexp: equal infinities give
 * themselves, else max + log1p(exp(-|a-b|)). */
static mt_status run_logaddexp(mt_call *call, const mfn_desc *dd, const mt_exec *ex,
                               mt_error *err) {
  const mt_host *h = mt__cpu_host(call);
  const mt_tensor *x, *y, *v[2] = {NULL, NULL}, *mv[2] = {NULL, NULL};
  mt_tensor *tv[2] = {NULL, NULL}, *tm[2] = {NULL, NULL};
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
  /* MFN-6/7: an operand with a mask is filled with its dtype's identity,
   * which bool has none of; then torch.logaddexp promotes the operands and
   * has only floating kernels */
  const mt_tensor *opnd[2] = {x, y};
  for (int j = 0; j < 2; j++)
    if (call->n_in == 4 && opnd[j]->dtype == MT_bool)
      return mt_err(err, MT_DTYPE_MISMATCH, "%s: identity of logaddexp on torch.bool input "
                    "(inputs/%d has a mask)", dd->name, j);
  int ct = mt__pr_result_type(opnd, 2);
  if (ct < 0 || !mt__cpu_is_float((mt_dtype)ct))
    return mt_err(err, MT_DTYPE_MISMATCH, "%s: \"logaddexp_cpu\" not implemented for '%s' "
                  "(inputs/0 has dtype %s, inputs/1 %s: torch.logaddexp promotes them)", dd->name,
                  ct == MT__DT_INT16 ? "Short" : mt__cpu_torch_type((mt_dtype)ct),
                  mt_dtype_name(x->dtype), mt_dtype_name(y->dtype));
  /* input and other broadcast to a common shape (torch.logaddexp) */
  mt_mfn_lae_par p;
  mt_tensor bt = {0};
  memset(&p, 0, sizeof p);
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
  if ((st = mask_strides(dd->name, "inputs/0", &bt, x, p.step[0], err)) != MT_OK) return st;
  if ((st = mask_strides(dd->name, "inputs/1", &bt, y, p.step[1], err)) != MT_OK) return st;
  mt_dtype to;
  kw_dtype(call->kw, x->dtype, &to); /* the result .to(dtype), any dtype (MFN-8) */
  for (int j = 0; j < 2; j++) {
    const mt_tensor *m = call->n_in == 4 ? call->in[2 + j] : NULL;
    if ((st = mask_plan(dd->name, 2 + j, opnd[j], m, &mv[j], &tm[j], p.mstride[j], err)) != MT_OK)
      goto out;
    if ((st = mt__cpu_contig(opnd[j], &v[j], &tv[j], err)) != MT_OK) goto out;
    p.opnd_ndim[j] = opnd[j]->ndim;
    memcpy(p.opnd_shape[j], opnd[j]->shape, sizeof(int64_t) * (size_t)opnd[j]->ndim);
    p.has_mask[j] = m != NULL;
    p.mdt[j] = m ? m->dtype : MT_bool;
  }
  p.vdt[0] = x->dtype;
  p.vdt[1] = y->dtype;
  p.ct = (mt_dtype)ct;
  p.odt = to;
  p.ndim = bt.ndim;
  memcpy(p.shape, bt.shape, sizeof(int64_t) * (size_t)bt.ndim);
  if ((st = h->dense_new(to, bt.ndim, bt.shape, &o, err)) != MT_OK) goto out;
  int64_t n = mt_numel(o);
  if (n > 0) {
    if (!ex->masked_logaddexp) {
      st = no_hook(dd->name, "masked_logaddexp", ex, err);
      goto out;
    }
    if ((st = ex->masked_logaddexp(&p, v[0]->values, mt_numel(x), v[1]->values, mt_numel(y),
                                   mv[0] ? mv[0]->values : NULL, mv[0] ? mt_numel(mv[0]) : 0,
                                   mv[1] ? mv[1]->values : NULL, mv[1] ? mt_numel(mv[1]) : 0,
                                   o->values, n, err)) != MT_OK) {
      st = hook_failed(dd->name, st, err);
      goto out;
    }
  }
  call->out[0] = o;
  call->n_out = 1;
  o = NULL;
out:
  for (int j = 0; j < 2; j++) {
    mt_tensor_free(tv[j]);
    mt_tensor_free(tm[j]);
  }
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

/* One stored element of a sparse mask: dense linear index and value. */
typedef struct {
  int64_t lin;
  double v;
} sp_entry;

static int cmp_entry(const void *a, const void *b) {
  int64_t x = ((const sp_entry *)a)->lin, y = ((const sp_entry *)b)->lin;
  return (x > y) - (x < y);
}

/* The stored elements of a COO (coalesced: duplicates summed) or CSR
 * mask t, sorted by linear index; *n their count. (The mask only decides
 * which entries the result has; the input's values go to the compute:
 * sp_groups.) */
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

/* The input's stored elements, as the compute reads them (the arrays of
 * common/masked_fn_math.h's mt_mfn_sp_out): groups sorted by dense linear
 * index, group g at lin[g] holding the value indices src[off[g] ..
 * off[g+1]) in input order: an uncoalesced COO input's duplicates, which
 * the compute sums as coalescing does (*coalesce = 1), else one each. */
typedef struct {
  int64_t *lin, *off, *src;
  int64_t n; /* groups */
} sp_groups;

typedef struct {
  int64_t lin, k;
} sp_key;

static int cmp_key(const void *a, const void *b) {
  const sp_key *x = a, *y = b;
  if (x->lin != y->lin) return x->lin < y->lin ? -1 : 1;
  return (x->k > y->k) - (x->k < y->k); /* stable: duplicates in input order */
}

static void sp_groups_free(sp_groups *g) {
  free(g->lin);
  free(g->off);
  free(g->src);
  memset(g, 0, sizeof *g);
}

static mt_status sp_groups_of(const char *name, const mt_tensor *x, sp_groups *g, int *coalesce,
                              mt_error *err) {
  int64_t n = x->nnz;
  size_t nb = (size_t)(n ? n : 1);
  sp_key *keys = malloc(sizeof *keys * nb);
  memset(g, 0, sizeof *g);
  *coalesce = x->kind == MT_KIND_COO && !x->coalesced;
  g->lin = malloc(sizeof *g->lin * nb);
  g->off = malloc(sizeof *g->off * (nb + 1));
  g->src = malloc(sizeof *g->src * nb);
  if (!keys || !g->lin || !g->off || !g->src) {
    free(keys);
    sp_groups_free(g);
    return mt_err(err, MT_OUT_OF_MEMORY, "%s: out of memory for %lld sparse entries", name,
                  (long long)n);
  }
  if (x->kind == MT_KIND_COO) {
    for (int64_t k = 0; k < n; k++) keys[k] = (sp_key){mt_coo_linear(x, k), k};
  } else {
    for (int64_t r = 0; r < x->shape[0]; r++)
      for (int64_t k = x->crow_indices[r]; k < x->crow_indices[r + 1]; k++)
        keys[k] = (sp_key){r * x->shape[1] + x->col_indices[k], k};
  }
  qsort(keys, (size_t)n, sizeof *keys, cmp_key);
  for (int64_t k = 0; k < n; k++) {
    if (k == 0 || !*coalesce || keys[k].lin != keys[k - 1].lin) {
      g->lin[g->n] = keys[k].lin;
      g->off[g->n++] = k;
    }
    g->src[k] = keys[k].k;
  }
  g->off[g->n] = n;
  free(keys);
  return MT_OK;
}

/* MFN-9: the masked-in elements as torch's _sparse_coo_where and
 * _sparse_csr_where build them: every masked-in position becomes an
 * entry, holding the input's stored value (its group in xg) or 0 where the
 * input stores none (-1); masked-out positions are no entries (their
 * stored data is never read). Without a mask: the input's stored elements.
 * *lin / *grp: the entries' linear indices and groups, by linear index. */
static mt_status sp_where(const char *name, const mt_tensor *x, const mt_tensor *m,
                          const sp_groups *xg, int64_t **lin, int64_t **grp, int64_t *n,
                          mt_error *err) {
  sp_entry *me = NULL;
  int64_t nm = 0, w = 0;
  mt_status st = MT_OK;
  *lin = *grp = NULL;
  *n = 0;
  if (m && !mt_shape_equal(m, x))
    return mt_err(err, MT_SHAPE_MISMATCH,
                  "%s: inputs/1 (the mask) must have the sparse input's shape", name);
  if (m && m->kind == MT_KIND_DENSE) {
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
  } else if (m && m->kind == x->kind) {
    if ((st = sp_entries(m, &me, &nm, err)) != MT_OK) goto out;
  } else if (m) {
    return mt_err(err, MT_LAYOUT_MISMATCH, "%s: inputs/1 (the mask) has kind %s, the input %s",
                  name, mt_kind_name(m->kind), mt_kind_name(x->kind));
  }
  int64_t cap = m ? nm : xg->n;
  *lin = malloc(sizeof **lin * (size_t)(cap ? cap : 1));
  *grp = malloc(sizeof **grp * (size_t)(cap ? cap : 1));
  if (!*lin || !*grp) {
    st = mt_err(err, MT_OUT_OF_MEMORY, "%s: out of memory", name);
    goto out;
  }
  if (!m) {
    for (int64_t j = 0; j < xg->n; j++) {
      (*lin)[j] = xg->lin[j];
      (*grp)[j] = j;
    }
    w = xg->n;
  }
  for (int64_t k = 0, j = 0; k < nm; k++) {
    if (me[k].v == 0.0) continue; /* a stored False */
    while (j < xg->n && xg->lin[j] < me[k].lin) j++;
    (*lin)[w] = me[k].lin;
    (*grp)[w] = j < xg->n && xg->lin[j] == me[k].lin ? j : -1;
    w++;
  }
  *n = w;
out:
  free(me);
  if (st != MT_OK) {
    free(*lin);
    free(*grp);
    *lin = *grp = NULL;
  }
  return st;
}

/* Whether output i (its value computed in vals) is an entry of the
 * result: when it has entries; a full COO reduction's one value unless it
 * is 0 (the dense value .to_sparse()). */
static int sp_has_entry(int full_coo, const void *vals, mt_dtype dt, const int64_t *ent_off,
                        int64_t i) {
  return full_coo ? mt_get_f64(vals, dt, i) != 0.0 : ent_off[i + 1] > ent_off[i];
}

/* MFN-9: the reduction of the entries grouped by their output position.
 * COO: output entries where a group has entries (a position with no
 * masked-in element is unspecified: 0, not the identity), a full
 * reduction is the dense value .to_sparse() (no entry when it is 0).
 * CSR (keepdim only): (1, N), (M, 1) or (1, 1) with the groups' entries;
 * mean = sum / entries. Values are float32/float64. The host plans the
 * entries of each output (in linear order: the order they are reduced
 * in); ex computes every output's value (mt_mfn_sp_out); the result's
 * structure holds the outputs that have entries. */
static mt_status run_sparse(mt_call *call, const mfn_desc *dd, const mt_tensor *x,
                            const mt_tensor *m, const mt_exec *ex, mt_error *err) {
  const mt_host *h = mt__cpu_host(call);
  sp_groups xg = {0};
  int64_t *e_lin = NULL, *e_grp = NULL, ne = 0, *ent_off = NULL, *ent_grp = NULL, *at = NULL;
  char *vals = NULL;
  mt_tensor *o = NULL;
  int red[MT_MAX_DIMS], flat, keepdim = mt_kw_int(call->kw, "keepdim", 0) != 0;
  int all = 1, out_ndim = 0, coalesce = 0;
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
  if ((st = sp_groups_of(dd->name, x, &xg, &coalesce, err)) != MT_OK) return st;
  if ((st = sp_where(dd->name, x, m, &xg, &e_lin, &e_grp, &ne, err)) != MT_OK) goto out;
  int64_t no = mt_shape_numel(out_ndim, out_shape);
  size_t es = mt_dtype_size(x->dtype), nb = (size_t)(no ? no : 1);
  ent_off = calloc(nb + 1, sizeof *ent_off);
  at = malloc(sizeof *at * nb);
  ent_grp = malloc(sizeof *ent_grp * (size_t)(ne ? ne : 1));
  vals = malloc(es * nb);
  if (!ent_off || !at || !ent_grp || !vals) {
    st = mt_err(err, MT_OUT_OF_MEMORY, "%s: out of memory", dd->name);
    goto out;
  }
  /* each entry's output position (ent_off counts them, then is the prefix
   * offsets), and the entries of each output in linear order */
  for (int64_t k = 0; k < ne; k++) {
    int64_t rem = e_lin[k], oi = 0, scale = 1;
    for (int d = x->ndim - 1, j = out_ndim - 1; d >= 0; d--) {
      int64_t c = rem % x->shape[d];
      rem /= x->shape[d];
      if (red[d] && !keepdim) continue;
      oi += (red[d] ? 0 : c) * scale;
      scale *= out_shape[j--];
    }
    e_lin[k] = oi; /* from here on: the output position */
    ent_off[oi + 1]++;
  }
  for (int64_t i = 0; i < no; i++) {
    ent_off[i + 1] += ent_off[i];
    at[i] = ent_off[i];
  }
  for (int64_t k = 0; k < ne; k++) ent_grp[at[e_lin[k]]++] = e_grp[k];
  mt_mfn_sp_par p;
  memset(&p, 0, sizeof p);
  p.kind = dd->kind;
  p.dt = x->dtype;
  p.coalesce = coalesce;
  p.n_vals = x->nnz;
  p.n_grp = xg.n;
  p.n_ent = ne;
  p.n_out = no;
  if (no > 0) {
    if (!ex->masked_fn_sparse) {
      st = no_hook(dd->name, "masked_fn_sparse", ex, err);
      goto out;
    }
    if ((st = ex->masked_fn_sparse(&p, x->values, xg.off, xg.src, ent_off, ent_grp, vals, err)) !=
        MT_OK) {
      st = hook_failed(dd->name, st, err);
      goto out;
    }
  }
  int full_coo = x->kind == MT_KIND_COO && all;
  int64_t nnz = 0;
  for (int64_t i = 0; i < no; i++) nnz += sp_has_entry(full_coo, vals, x->dtype, ent_off, i);
  if (x->kind == MT_KIND_COO) {
    if ((st = h->coo_new(x->dtype, out_ndim, out_shape, out_ndim, nnz, &o, err)) != MT_OK) goto out;
    o->coalesced = all; /* torch.sparse_coo_tensor(unique indices): not marked */
    for (int64_t i = 0, w = 0; i < no && w < nnz; i++) {
      if (!sp_has_entry(full_coo, vals, x->dtype, ent_off, i)) continue;
      int64_t rem = i;
      for (int d = out_ndim - 1; d >= 0; d--) {
        o->indices[d * nnz + w] = rem % out_shape[d];
        rem /= out_shape[d];
      }
      memcpy((char *)o->values + (size_t)w++ * es, vals + (size_t)i * es, es);
    }
  } else {
    if ((st = h->csr_new(x->dtype, out_shape[0], out_shape[1], nnz, &o, err)) != MT_OK) goto out;
    int64_t w = 0;
    for (int64_t r = 0; r < out_shape[0]; r++) {
      o->crow_indices[r] = w;
      for (int64_t c = 0; c < out_shape[1]; c++) {
        int64_t i = r * out_shape[1] + c;
        if (!sp_has_entry(full_coo, vals, x->dtype, ent_off, i)) continue;
        o->col_indices[w] = c;
        memcpy((char *)o->values + (size_t)w++ * es, vals + (size_t)i * es, es);
      }
    }
    o->crow_indices[out_shape[0]] = w;
  }
  call->out[0] = o;
  call->n_out = 1;
  o = NULL;
out:
  sp_groups_free(&xg);
  free(e_lin);
  free(e_grp);
  free(ent_off);
  free(ent_grp);
  free(at);
  free(vals);
  if (o) h->free(o);
  return st;
}

static mt_status run(mt_call *call, mt_op op, const mt_exec *ex, mt_error *err) {
  const mfn_desc *dd = find_desc(op);
  const mt_host *h = mt__cpu_host(call);
  const mt_tensor *x = NULL, *m = NULL, *xv = NULL, *mv = NULL;
  mt_tensor *o = NULL, *tx = NULL, *tm = NULL;
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
    return run_sparse(call, dd, x, m, ex, err);
  }
  if (x->kind != MT_KIND_DENSE)
    return mt_err(err, MT_NOT_SUPPORTED,
                  "%s: inputs/0 has kind %s; the CPU backend implements strided, COO and CSR "
                  "inputs only",
                  dd->name, mt_kind_name(x->kind));
  if ((st = mt_tensor_validate(x, "inputs/0", err)) != MT_OK) return st;
  if (dd->shape == SH_BINARY) return run_logaddexp(call, dd, ex, err);
  if (call->n_in > 2)
    return mt_err(err, MT_INVALID_ARGUMENT, "%s: expected inputs [input] or [input, mask], got %d",
                  dd->name, call->n_in);
  m = call->n_in == 2 ? call->in[1] : NULL;
  mt_dtype to;
  int has_to = kw_dtype(call->kw, x->dtype, &to);
  if ((st = check_dtype(dd, x->dtype, m != NULL, has_to, to, err)) != MT_OK) return st;
  if ((st = parse_dims(dd, x, call->kw, red, &flat, err)) != MT_OK) return st;

  mt_mfn_par p;
  memset(&p, 0, sizeof p);
  p.kind = dd->kind;
  p.scan = dd->shape == SH_SCAN;
  p.in_dt = x->dtype;
  p.is_int = is_intlike(x->dtype) && op != MT_OP_masked_var && op != MT_OP_masked_std;
  p.ct = is_intlike(x->dtype) ? MT_float32 : x->dtype;
  p.to = has_to ? to : is_intlike(x->dtype) ? MT_float32 : x->dtype;
  p.ord = mt_kw_float(call->kw, "ord", 2.0);
  p.eps = mt_kw_float(call->kw, "eps", 1e-12);
  p.correction = mt_kw_float(call->kw, "correction", mt_kw_int(call->kw, "unbiased", 1) ? 1.0 : 0.0);
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
    if (L == 0 &&
        (dd->fill == MFN_ID_NEG_INF || dd->fill == MFN_ID_POS_INF || dd->fill == MFN_ID_NAN) &&
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

  if ((st = mask_plan(dd->name, 1, x, m, &mv, &tm, p.mstride, err)) != MT_OK) goto out;
  if ((st = mt__cpu_contig(x, &xv, &tx, err)) != MT_OK) goto out;
  p.xdt = x->dtype;
  p.has_mask = m != NULL;
  p.mdt = m ? m->dtype : MT_bool;
  p.ndim = x->ndim;
  memcpy(p.shape, x->shape, sizeof(int64_t) * (size_t)x->ndim);
  memcpy(p.red, red, sizeof p.red);
  p.n_in = n_in;
  p.L = L;
  p.n_slices = n_slices;
  p.fill = dd->fill;
  if (has_to && dd->cast == CAST_PRE && to != x->dtype) { /* MFN-8: cast, then compute in it */
    p.cast = 1;
    p.cast_to = to;
    p.in_dt = to;
    p.is_int = is_intlike(to);
    p.ct = p.is_int ? MT_float32 : to;
    /* F.softmin is (-input).softmax(dtype=): an integer input is negated
     * in its own dtype, wrapping (uint8 -3 is 253), before the cast */
    p.neg_first = op == MT_OP_masked_softmin && is_intlike(x->dtype);
  }
  /* which of the kernel's results is its own: the integer (integer
   * arithmetic, argmax/argmin's index) or the double */
  p.nat_int = (p.is_int && op != MT_OP_masked_logsumexp && op != MT_OP_masked_median &&
               dd->cast != CAST_VAR) ||
              op == MT_OP_masked_argmax || op == MT_OP_masked_argmin;
  p.odt = od;
  if ((st = h->dense_new(od, out_ndim, out_shape, &o, err)) != MT_OK) goto out;
  /* a reduction's output element per slice, a scan's per input element */
  int64_t n_out = dd->shape == SH_REDUCE ? n_slices : n_in, bad = -1;
  if (n_out > 0) {
    if (!ex->masked_fn) {
      st = no_hook(dd->name, "masked_fn", ex, err);
      goto out;
    }
    if ((st = ex->masked_fn(&p, xv->values, mv ? mv->values : NULL, mv ? mt_numel(mv) : 0,
                            o->values, n_out, &bad, err)) != MT_OK) {
      st = hook_failed(dd->name, st, err);
      goto out;
    }
  }
  if (bad >= 0) { /* MFN-7: an integer median refuses a fully masked slice */
    st = mt_err(err, MT_INVALID_ARGUMENT,
                "%s: masked median expects no fully masked out rows if dtype is not "
                "floating point (inputs/0 has dtype %s)",
                dd->name, mt_dtype_name(x->dtype));
    goto out;
  }
  call->out[0] = o;
  call->n_out = 1;
  o = NULL;
out:
  mt_tensor_free(tx);
  mt_tensor_free(tm);
  if (o) h->free(o);
  return st;
}

/* The family's kernel with its compute on ex (common/exec.h). */
mt_status mt__masked_fn_run(mt_call *call, mt_op op, const mt_exec *ex, mt_error *err) {
  return run(call, op, ex, err);
}

#define MFN_KERNEL(name, shape, dim, fill, ints, cast, kind)  \
  mt_status mt_cpu_##name(mt_call *call, mt_error *err) {     \
    return run(call, MT_OP_##name, &mt_cpu_exec, err);        \
  }
MFN_OPS(MFN_KERNEL)
#undef MFN_KERNEL

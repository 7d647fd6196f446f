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
 * pow_tensor_scalar special cases (the signs of zero depend on it).
 *
 * This file is the family's host plan (checks, dtypes, layouts, outputs);
 * the per-element math is common/unary_math.h and runs where the mt_exec
 * says (common/exec.h): here for the CPU reference, on the device for the
 * CUDA backend (impl/cuda/unary.cu), which calls mt__unary_run. */
#include <float.h>

#include "common/exec.h"
#include "common/unary_math.h"
#include "cpu_util.h"

typedef mt_un_par un_par;

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
  const char *kernel; /* torch's kernel name in its "not implemented" message */
  const char *bool_msg; /* torch's own message for a bool input, if any */
} un_row;

static int is_half_or_float(mt_dtype d) {
  return d == MT_float32 || d == MT_float16 || d == MT_bfloat16;
}

/* ---- the table (common/unary_math.h's MT_UN_BASES) ------------------------ */

typedef mt_un_base un_base;

static const un_row ROWS[UN__COUNT] = {
#define UN_X(base, cls, b, k, m) [UN_##base] = {cls, b, k, m},
    MT_UN_BASES(UN_X)
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
static mt_status prepare(const mt_call *call, const char *name, un_base base, int inplace,
                         mt_dtype in, un_par *p, mt_error *err) {
  const un_row *r = &ROWS[base];
  mt_status st;
  memset(p, 0, sizeof *p);
  p->base = base;
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
  if (base == UN_nan_to_num) {
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
  if (base == UN_logit) {
    const mt_kwarg *eps = mt_kw_find(call->kw, "eps");
    p->has_eps = eps && eps->f >= 0;
    if (p->has_eps) {
      p->eps_lo = mt__cpu_round(ct, eps->f);
      p->eps_hi = mt__cpu_round(ct, 1.0 - p->eps_lo);
    }
  }
  if (base == UN_deg2rad || base == UN_rad2deg)
    p->c = mt__cpu_round(ct, base == UN_deg2rad ? MT__UN_PI / 180.0 : 180.0 / MT__UN_PI);
  p->int_path = r->cls != UN_PRED && !mt__cpu_is_float(p->out);
  p->to_float = !mt__cpu_is_float(p->in) && is_half_or_float(p->out);
  return MT_OK;
}

/* out[k] = op(in[k]) over n contiguous elements, on ex. Masked-out
 * elements are transformed too (as torch does); they stay masked out, and
 * no value can fail the call (a device can: its status is returned). */
static mt_status apply_all(const mt_exec *ex, const un_par *p, const void *in, void *out,
                           int64_t n, mt_error *err) {
  if (!ex->unary)
    return mt_err(err, MT_NOT_SUPPORTED, "the %s backend has no unary kernels", ex->name);
  if (n == 0) return MT_OK;
  return ex->unary(p, in, out, n, err);
}

static mt_status plain_sparse(mt_call *call, mt_op op, un_base base, int inplace,
                               const mt_exec *ex, mt_error *err);

static mt_status unary(mt_call *call, mt_op op, un_base base, int inplace, const mt_exec *ex,
                       mt_error *err) {
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
    return plain_sparse(call, op, base, inplace, ex, err);
  if ((st = masked_input0(call, name, &m, err)) != MT_OK) return st;
  if ((st = prepare(call, name, base, inplace, m->data->dtype, &p, err)) != MT_OK) return st;

  if (m->data->kind == MT_KIND_DENSE) {
    /* MASK-4, dense storage */
    if ((st = mt__cpu_mview_open(m, &mv, err)) != MT_OK) goto out;
    if ((st = h->dense_new(p.out, m->ndim, m->shape, &data, err)) != MT_OK) goto out;
    if ((st = apply_all(ex, &p, mv.data->values, data->values, mt_numel(m), err)) != MT_OK)
      goto out;
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
    if ((st = mt__exec_coalesced(ex, m->data, &cd, &dtmp, err)) != MT_OK) goto out;
    if ((st = mt__exec_coalesced(ex, m->mask, &cm, &mtmp, err)) != MT_OK) goto out;
    if ((st = h->coo_new(p.out, cd->ndim, cd->shape, cd->sparse_dim, cd->nnz, &data, err)) !=
        MT_OK)
      goto out;
    if (cd->nnz > 0 && cd->sparse_dim > 0)
      memcpy(data->indices, cd->indices, (size_t)cd->sparse_dim * (size_t)cd->nnz * sizeof(int64_t));
    if ((st = apply_all(ex, &p, cd->values, data->values, cd->nnz * mt_coo_row_numel(cd), err)) !=
        MT_OK)
      goto out;
    data->coalesced = 1;
    if ((st = mt__cpu_copy(h, cm, &mask, err)) != MT_OK) goto out;
  } else if (m->data->kind == MT_KIND_CSR) {
    /* MASK-4, CSR storage: torch maps the data's values and keeps its
     * crow/col indices (in place too: unlike COO, torch takes it) */
    const mt_tensor *d = m->data;
    if ((st = mt__cpu_csr_inferred_cols(d, name, err)) != MT_OK) goto out;
    if ((st = mt__cpu_compressed_like(h, d, p.out, &data, err)) != MT_OK) goto out;
    if ((st = apply_all(ex, &p, d->values, data->values, d->nnz, err)) != MT_OK) goto out;
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


static mt_status plain_sparse(mt_call *call, mt_op op, un_base base, int inplace,
                               const mt_exec *ex, mt_error *err) {
  const char *name = mt_op_name(op);
  const mt_host *h = mt__cpu_host(call);
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
  if ((st = prepare(call, name, base, inplace, x->dtype, &p, err)) != MT_OK) return st;
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
    } else if ((st = mt__exec_coalesced(ex, x, &cx, &ctmp, err)) != MT_OK) {
      goto out;
    }
    if ((st = h->coo_new(p.out, cx->ndim, cx->shape, cx->sparse_dim, cx->nnz, &out, err)) != MT_OK)
      goto out;
    if (cx->nnz > 0 && cx->sparse_dim > 0)
      memcpy(out->indices, cx->indices, (size_t)cx->sparse_dim * (size_t)cx->nnz * sizeof(int64_t));
    if ((st = apply_all(ex, &p, cx->values, out->values, cx->nnz * mt_coo_row_numel(cx), err)) !=
        MT_OK)
      goto out;
    out->coalesced = cx->coalesced;
  } else {
    /* every compressed kind, batched and hybrid too: the structure kept,
     * each stored value mapped (SPP-1) */
    mt_cgeom g = {0};
    if ((st = mt__cpu_compressed_like(h, x, p.out, &out, err)) != MT_OK) goto out;
    mt_cgeom_of(x, &g);
    if ((st = apply_all(ex, &p, x->values, out->values, g.batches * x->nnz * g.entry, err)) !=
        MT_OK)
      goto out;
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

mt_status mt__unary_run(mt_call *call, mt_op op, int base, int inplace, const mt_exec *ex,
                        mt_error *err) {
  return unary(call, op, (un_base)base, inplace, ex, err);
}

#define MT_UN_OP(op, base, inpl)                                      \
  mt_status mt_cpu_##op(mt_call *call, mt_error *err) {               \
    return unary(call, MT_OP_##op, UN_##base, inpl, &mt_cpu_exec, err); \
  }
#include "common/unary_ops.def"
#undef MT_UN_OP

/* npma_masked_fn.c - the numpy_ma profile's analogues of torch.masked's
 * functional ops (family masked_fn): `masked_<op>(x, dim, mask=m)` is
 * `np.ma.array(x, mask=~m).<op>(axis=dim)` (NPMA-17).
 *
 * NPMA-17: inputs [x] (np.ma.array(x): nothing masked) or [x, mask], the
 *   bool mask broadcast to x's shape (torch's MFN-1; numpy.ma itself only
 *   takes a mask of x's size: the reference broadcasts first, as the
 *   analogue's np.broadcast_to(m, x.shape)). The reductions are the
 *   profile's own (npma_reduce.c: NPMA-5, NPMA-12..14): sum prod amin amax
 *   mean argmin argmax var std with numpy.ma's result, a masked array where
 *   torch.masked returns a plain tensor: a fully masked slice is masked out,
 *   not an identity or NaN. var/std take torch's unbiased/correction as
 *   numpy's ddof (default unbiased: ddof 1); over a dim an output whose
 *   count - ddof is <= 0 is masked (numpy.ma's mask_or(..., cnt <= 0)),
 *   holding sum / (count - ddof) (the sum where that is 0); an all-reduce
 *   is np.ma.masked only where count - ddof is 0 (a negative one gives a
 *   number <= 0; std of a negative variance is masked).
 *   cumsum/cumprod(dim) are m.cumsum(axis=dim): the data filled with 0 (1)
 *   scanned in the result dtype (integers and bool: int64; uint8 would be
 *   uint64: NOT_SUPPORTED; float16/float32 rounded at every step), the
 *   input's mask unchanged: masked-out elements hold the running value.
 * NPMA-20: masked_median(dim) is np.ma.median(m, axis=dim) (2-D and more:
 *   numpy.ma's 1-D path differs): over the specified elements, the middle
 *   one (odd count) or the two middle ones, as np.ma.sum([lo, hi]) / 2 in
 *   the float dtype (an odd count sums the middle element twice: it can
 *   overflow to inf) and as np.ma.mean in float64 for integers and bool; a
 *   specified NaN anywhere in the slice gives NaN; a fully masked slice is
 *   masked out, data 0.
 * norm, logsumexp, softmax, log_softmax, softmin, normalize and logaddexp
 * have no numpy.ma analogue (SEMANTICS, "Which ops the profile has"). */
#include "common/exec.h"
#include "common/npma_masked_fn_math.h"
#include "common/npma_structure_math.h"
#include "npma_util.h"

typedef enum { MFN_REDUCE, MFN_REDUCE2, MFN_SCAN, MFN_MEDIAN } npma_mfn_kind;

/* masked_<op> -> the profile's reduction it runs */
#define NPMA_MFN_OPS(X)                      \
  X(masked_sum, sum, MFN_REDUCE)             \
  X(masked_prod, prod, MFN_REDUCE)           \
  X(masked_amin, amin, MFN_REDUCE)           \
  X(masked_amax, amax, MFN_REDUCE)           \
  X(masked_mean, mean, MFN_REDUCE)           \
  X(masked_argmin, argmin, MFN_REDUCE2)      \
  X(masked_argmax, argmax, MFN_REDUCE2)      \
  X(masked_var, var, MFN_REDUCE2)            \
  X(masked_std, std, MFN_REDUCE2)            \
  X(masked_cumsum, masked_cumsum, MFN_SCAN)  \
  X(masked_cumprod, masked_cumprod, MFN_SCAN)  \
  X(masked_median, masked_median, MFN_MEDIAN)

/* Opens inputs [x] or [x, mask] as a masked operand: a->mask points into
 * *flags (numel(x) flags, owned by the caller: all set without a mask, numpy's
 * nomask, else the mask broadcast to x's shape by ex's npma_masked). */
static mt_status mfn_open(const mt_call *call, const char *name, npma_arg *a, uint8_t **flags,
                          const mt_exec *ex, mt_error *err) {
  npma_arg m = {0};
  mt_status st;
  if ((st = npma_arg_open(call, 0, name, a, err)) != MT_OK) return st;
  if (a->is_masked || a->t->kind != MT_KIND_DENSE)
    return mt_err(err, MT_NOT_SUPPORTED, "%s: inputs/0 must be a plain dense tensor", name);
  int64_t n = mt_numel(a->t);
  *flags = malloc((size_t)(n ? n : 1));
  if (!*flags) return mt_err(err, MT_OUT_OF_MEMORY, "%s: out of memory", name);
  memset(*flags, 1, (size_t)(n ? n : 1));
  if (call->n_in > 1) {
    if ((st = npma_arg_open(call, 1, name, &m, err)) != MT_OK) goto out;
    if (m.is_masked || m.dt != MT_bool || m.t->kind != MT_KIND_DENSE) {
      st = mt_err(err, MT_NOT_SUPPORTED, "%s: inputs/1 (mask) must be a dense bool tensor", name);
      goto out;
    }
    npma_arg *both[2] = {a, &m};
    int ndim = 0;
    int64_t shape[MT_MAX_DIMS];
    if ((st = npma_broadcast(both, 2, name, &ndim, shape, err)) != MT_OK) goto out;
    if (a->is_number ? ndim != 0 : (ndim != a->t->ndim || memcmp(shape, a->t->shape,
                                                                 sizeof *shape * ndim) != 0)) {
      st = mt_err(err, MT_SHAPE_MISMATCH, "%s: the mask does not broadcast to the input's shape",
                  name);
      goto out;
    }
    npma_arg_bcast(&m, ndim, shape);
    if (!ex->npma_masked) {
      st = mt_err(err, MT_NOT_SUPPORTED, "%s: the %s backend has no numpy_ma masked kernels",
                  name, ex->name);
      goto out;
    }
    mt_npk_par p = {.kind = NPK_FLAGS, .dt = MT_bool, .es = 1};
    npma_opnd_of(&m, &p.m);
    if (n > 0 &&
        (st = ex->npma_masked(&p, NULL, m.data, npma_opnd_len(&m) * (int64_t)mt_dtype_size(m.dt),
                              *flags, NULL, n, err)) != MT_OK)
      goto out;
  }
  a->is_masked = 1;
  a->mask = *flags;
out:
  npma_arg_close(&m);
  return st;
}

/* The slices of a scan or a median on ex (mt_npm_slice). */
static mt_status run_slices(const mt_exec *ex, const char *name, const mt_npm_par *p,
                            const npma_arg *a, void *od, uint8_t *om, mt_error *err) {
  if (!ex->npma_masked_fn)
    return mt_err(err, MT_NOT_SUPPORTED, "%s: the %s backend has no numpy_ma masked_fn kernels",
                  name, ex->name);
  int64_t n_slices = p->outer * p->inner;
  if (n_slices == 0 || p->len == 0) return MT_OK;
  return ex->npma_masked_fn(p, a->data, a->mask, mt_numel(a->t), od, om, n_slices, err);
}

/* NPMA-17: m.cumsum/cumprod(axis=dim): filled(0 / 1) scanned, mask kept. */
static mt_status mfn_scan(mt_call *call, mt_op op, const char *name, const npma_arg *a,
                          const mt_exec *ex, mt_error *err) {
  const mt_tensor *t = a->t;
  int prod = op == MT_OP_masked_cumprod;
  const mt_kwarg *kd = mt_kw_find(call->kw, "dim");
  int64_t d = kd ? kd->i : 0;
  void *od = NULL;
  uint8_t *om = NULL;
  mt_status st;
  if (!kd)
    return mt_err(err, MT_INVALID_ARGUMENT, "%s: dim is required", name);
  if ((st = npma_axis(name, d, t->ndim, &d, err)) != MT_OK) return st;
  if (a->dt == MT_uint8)
    return mt_err(err, MT_NOT_SUPPORTED,
                  "%s: numpy scans uint8 in uint64, which mtcs has no name for", name);
  int is_int = npma_kind(a->dt) != 'f';
  mt_dtype rt = is_int ? MT_int64 : a->dt;
  if ((st = npma_new_out(call, rt, t->ndim, t->shape, &od, &om, err)) != MT_OK) return st;
  int64_t n = mt_numel(t), len = t->ndim ? t->shape[d] : 1, inner = 1;
  for (int k = (int)d + 1; k < t->ndim; k++) inner *= t->shape[k];
  mt_npm_par p = {.kind = NPM_SCAN, .prod = prod, .in = a->dt, .rt = rt, .len = len,
                  .inner = inner, .outer = len && inner ? n / (len * inner) : 0};
  return run_slices(ex, name, &p, a, od, om, err);
}

/* NPMA-20: np.ma.median(m, axis=dim, keepdims=keepdim). */
static mt_status mfn_median(mt_call *call, const char *name, const npma_arg *a,
                            const mt_exec *ex, mt_error *err) {
  const mt_tensor *t = a->t;
  int nd = t->ndim;
  int64_t d = mt_kw_int(call->kw, "dim", -1);
  int keepdim = (int)mt_kw_int(call->kw, "keepdim", 0);
  void *od = NULL;
  uint8_t *om = NULL;
  mt_status st;
  if (nd < 2)
    return mt_err(err, MT_NOT_SUPPORTED,
                  "%s: numpy.ma's median of a 1-D array takes another path (not implemented)",
                  name);
  if ((st = npma_axis(name, d, nd, &d, err)) != MT_OK) return st; /* nd >= 2 */
  if (a->dt == MT_uint8 || a->dt == MT_int8 || a->dt == MT_int32)
    return mt_err(err, MT_NOT_SUPPORTED, "%s: %s is not implemented", name,
                  mt_dtype_name(a->dt));
  int is_f = npma_kind(a->dt) == 'f';
  mt_dtype rt = is_f ? a->dt : MT_float64;
  int64_t shape[MT_MAX_DIMS];
  int ond = 0;
  for (int k = 0; k < nd; k++)
    if (k != d)
      shape[ond++] = t->shape[k];
    else if (keepdim)
      shape[ond++] = 1;
  int64_t len = t->shape[d], inner = 1, outer = 1;
  for (int k = (int)d + 1; k < nd; k++) inner *= t->shape[k];
  for (int k = 0; k < d; k++) outer *= t->shape[k];
  if (len == 0)
    return mt_err(err, MT_NOT_SUPPORTED, "%s: an empty axis is not implemented", name);
  if ((st = npma_new_out(call, rt, ond, shape, &od, &om, err)) != MT_OK) return st;
  mt_npm_par p = {.kind = NPM_MEDIAN, .in = a->dt, .rt = rt, .outer = outer, .len = len,
                  .inner = inner};
  return run_slices(ex, name, &p, a, od, om, err);
}

static mt_status npma_mfn(mt_call *call, mt_op op, mt_op base, npma_mfn_kind kind,
                          const mt_exec *ex, mt_error *err) {
  const char *name = mt_op_name(op);
  npma_arg a = {0};
  uint8_t *flags = NULL;
  mt_status st;
  if ((st = npma_begin(call, op, err)) != MT_OK) return st;
  if ((st = mfn_open(call, name, &a, &flags, ex, err)) != MT_OK) goto out;
  if (kind == MFN_REDUCE) {
    st = mt__npma_reduce(call, base, name, &a, ex, err);
  } else if (kind == MFN_REDUCE2) {
    /* torch's unbiased / correction as numpy's ddof (default 1) */
    double ddof = mt_kw_int(call->kw, "unbiased", 1) ? 1.0 : 0.0;
    ddof = mt_kw_float(call->kw, "correction", ddof); /* a float, as numpy's ddof (0.5) */
    if (base != MT_OP_var && base != MT_OP_std) ddof = 0;
    st = mt__npma_reduce2(call, base, name, &a, ddof, ex, err);
  } else if (kind == MFN_MEDIAN) {
    st = mfn_median(call, name, &a, ex, err);
  } else {
    st = mfn_scan(call, op, name, &a, ex, err);
  }
out:
  if (st != MT_OK) mt__cpu_drop_outputs(call);
  free(flags);
  npma_arg_close(&a);
  return st;
}

#define X(name, base, kind)                                 \
  mt_status mt_npma_##name(mt_call *call, mt_error *err) {  \
    return mt__npma_masked_fn_run(call, MT_OP_##name, &mt_cpu_exec, err); \
  }
NPMA_MFN_OPS(X)
#undef X

/* ---- the family's entry (common/exec.h) ----------------------------------- */

mt_status mt__npma_masked_fn_run(mt_call *call, mt_op op, const mt_exec *ex, mt_error *err) {
  switch (op) {
#define X(name, base, kind) \
  case MT_OP_##name: return npma_mfn(call, op, MT_OP_##base, kind, ex, err);
    NPMA_MFN_OPS(X)
#undef X
  default: return mt_err(err, MT_NOT_SUPPORTED, "%s: not a numpy_ma masked_fn op", mt_op_name(op));
  }
}

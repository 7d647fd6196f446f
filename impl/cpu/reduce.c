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
 * overload).
 *
 * This file plans each call (dims, dtypes, refusals, layouts, outputs); the
 * per-element math is common/reduce_math.h, one output element at a time,
 * and runs where the mt_exec says (common/exec.h): here for the CPU
 * reference, on the device for the CUDA backend (impl/cuda/reduce.cu). */
#include <stdint.h>

#include "common/exec.h"
#include "common/reduce_math.h"
#include "common/reduce_ops.h"
#include "cpu_util.h"
#include "mt/kwargs.h"
#include "sps.h"

typedef mt_red_kind red_kind; /* common/reduce_math.h */

/* What an op makes of its input dtype. */
typedef enum {
  O_SAME,  /* the input dtype */
  O_WIDEN, /* integers and bool -> int64 (torch.sum/prod's promotion) */
  O_BOOL,  /* bool */
  O_F32    /* integers -> float32 (torch.masked._std_var's compute dtype) */
} red_out;

typedef struct {
  red_kind kind;
  unsigned dtypes;
  red_out out;
  const char *refusal;
} red_spec;

static int is_float_dt(mt_dtype d) { return mt__cpu_is_float(d); }

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
      if (k == RK_ALL) {
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

/* Runs the planned reduction p on ex: out/mask_out get n_out elements. */
static mt_status run_reduce(const mt_exec *ex, const char *name, const mt_red_par *p,
                            const void *data, const uint8_t *mask, int64_t n_in, void *out,
                            uint8_t *mask_out, int64_t n_out, mt_error *err) {
  mt_status st;
  if (!ex->reduce)
    return mt_err(err, MT_NOT_SUPPORTED, "%s: the %s backend has no reduce kernels", name,
                  ex->name);
  if (n_out == 0) return MT_OK;
  if ((st = ex->reduce(p, data, mask, n_in, out, mask_out, n_out, err)) != MT_OK) {
    mt_err_prefix(err, "%s", name); /* keeps st: err may be NULL */
    return st;
  }
  return MT_OK;
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
static mt_status reduce_stored_all(mt_call *call, const mt_exec *ex, const char *name,
                                   red_kind k, mt_dtype dt, mt_dtype odt, const void *dv,
                                   const void *mv, int64_t n, const mt_tensor *coo,
                                   mt_error *err) {
  const mt_host *h = mt__cpu_host(call);
  mt_tensor *out = NULL, *data = NULL, *mask = NULL;
  mt_status st;
  int is_arg = k == RK_ARGMIN || k == RK_ARGMAX;
  if (n == 0 && (k == RK_MIN || k == RK_MAX))
    return mt_err(err, MT_INDEX_OUT_OF_RANGE,
                  "%s: Expected reduction dim 0 to have non-zero size (inputs/0 stores no values)",
                  name);
  if (n == 0 && is_arg)
    return mt_err(err, MT_INDEX_OUT_OF_RANGE,
                  "%s: Expected reduction dim to be specified for input.numel() == 0 (inputs/0 "
                  "stores no values)",
                  name);
  /* one output over the n stored values, counted as stored (SP-3); COO's
   * argmin/argmax first finds the stored position (in int64) */
  mt_red_par p;
  memset(&p, 0, sizeof p);
  p.kind = k;
  p.idt = p.dt = p.cdt = dt;
  p.odt = is_arg && coo ? MT_int64 : odt;
  p.ndim = 1;
  p.shape[0] = p.n_red = n;
  p.red[0] = 1;
  p.stored_count = 1;
  if (is_arg && coo) odt = MT_float32;
  int64_t no_shape[1] = {0}, at = 0;
  if ((st = mt__cpu_new_masked_dense(h, odt, 0, no_shape, &out, &data, &mask, err)) != MT_OK)
    return st;
  if ((st = run_reduce(ex, name, &p, dv, mv, n, is_arg && coo ? (void *)&at : data->values,
                       mask->values, 1, err)) != MT_OK)
    goto fail;
  if (is_arg && coo) { /* the flat index of entry `at`, as torch computes it in float32 */
    float lin = 0.0f, numel = (float)mt_numel(coo), cum = 1.0f;
    for (int d = 0; d < coo->sparse_dim; d++) {
      cum *= (float)coo->shape[d];
      lin += (float)coo->indices[(int64_t)d * coo->nnz + at] * (numel / cum);
    }
    mt__cpu_st(data->values, MT_float32, 0, lin);
  }
  call->out[0] = out;
  call->n_out = 1;
  return MT_OK;
fail:
  h->free(out);
  return st;
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

static mt_status reduce_coo_all(mt_call *call, const mt_exec *ex, const char *name, red_kind k,
                                mt_dtype odt, const mt_tensor *m, mt_error *err) {
  const mt_tensor *d, *mk;
  mt_tensor *td = NULL, *tk = NULL;
  mt_dtype dt = m->data->dtype;
  mt_status st;
  if ((st = mt__exec_coalesced(ex, m->data, &d, &td, err)) != MT_OK) goto out;
  if ((st = mt__exec_coalesced(ex, m->mask, &mk, &tk, err)) != MT_OK) goto out;
  if (!mt__cpu_coo_same_indices(d, mk)) {
    st = mt_err(err, MT_INVALID_ARGUMENT,
                "%s: inputs/0 data and mask do not have the same COO indices", name);
    goto out;
  }
  if (k == RK_ALL) {
    st = all_of_sparse(name, d, d->nnz, err);
    goto out;
  }
  if (!is_float_dt(dt) || mt_coo_row_numel(d) != 1) {
    st = mt_err(err, MT_NOT_SUPPORTED,
                "%s: the CPU backend reduces COO storage of float dtypes without dense dims", name);
    goto out;
  }
  st = reduce_stored_all(call, ex, name, k, dt, odt, d->values, mk->values, d->nnz, d, err);
out:
  mt_tensor_free(td);
  mt_tensor_free(tk);
  return st;
}

/* The all-reduce of CSR storage (data and mask of one structure), as for
 * COO. */
static mt_status reduce_csr_all(mt_call *call, const mt_exec *ex, const char *name, red_kind k,
                                mt_dtype odt, const mt_tensor *m, mt_error *err) {
  const mt_tensor *d = m->data, *mk = m->mask;
  if (!mt__cpu_csr_same_structure(d, mk))
    return mt_err(err, MT_INVALID_ARGUMENT,
                  "%s: inputs/0 data and mask do not have one CSR structure", name);
  if (k == RK_ALL) return all_of_sparse(name, d, d->nnz, err);
  if (!is_float_dt(d->dtype))
    return mt_err(err, MT_NOT_SUPPORTED,
                  "%s: the CPU backend reduces CSR storage of float dtypes", name);
  return reduce_stored_all(call, ex, name, k, d->dtype, odt, d->values, mk->values, d->nnz, NULL,
                           err);
}

static mt_status reduce(mt_call *call, mt_op op, const red_spec *s, const mt_exec *ex,
                        mt_error *err) {
  const char *name = mt_op_name(op);
  const mt_host *h = mt__cpu_host(call);
  const mt_tensor *m = NULL;
  mt__cpu_mview mv = {0};
  mt_tensor *out = NULL, *data = NULL, *mask = NULL;
  int red[MT_MAX_DIMS], all, none, keepdim, out_ndim = 0;
  int64_t out_shape[MT_MAX_DIMS];
  red_kind k = s->kind;
  mt_status st;

  if (mt__sps_call(call) && (op == MT_OP_sum || op == MT_OP_amax || op == MT_OP_norm)) {
    /* plain sparse: reduce_sparse.c (SPS-3, SPS-4), the values on ex */
    return mt__sps_reduce(call, op, ex, err);
  }
  mt__cpu_begin(call);
  if ((st = mt__kw_check(op, call->kw, err)) != MT_OK) return st;
  if ((st = mt__cpu_input(call, 0, name, &m, err)) != MT_OK) return st;
  if (m->kind != MT_KIND_MASKED)
    return mt_err(err, MT_NOT_SUPPORTED,
                  "%s: inputs/0 has kind %s; the CPU backend implements %s on masked tensors", name,
                  mt_kind_name(m->kind), name);
  if ((st = mt_tensor_validate(m, "inputs/0", err)) != MT_OK) return st;
  if (k == RK_NORM) /* RED-8 */
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
  if (k == RK_MEAN && dk && !is_float_dt(dt))
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
  mt_dtype odt = (dk && k == RK_SUM) ? dt : out_dtype(s, dt);
  if (odt == MT_bfloat16 || dt == MT_bfloat16) /* RED-7: MaskedTensor cannot hold the result */
    return mt_err(err, MT_DTYPE_MISMATCH,
                  "%s: dtype=bfloat16: torch.bfloat16 is not supported in MaskedTensor (the "
                  "result would be a bfloat16 masked tensor)",
                  name);

  if (m->data->kind == MT_KIND_COO || m->data->kind == MT_KIND_CSR) {
    if (dk)
      return mt_err(err, MT_NOT_SUPPORTED,
                    "%s: dtype= on sparse storage is not implemented by the CPU backend", name);
    return m->data->kind == MT_KIND_COO ? reduce_coo_all(call, ex, name, k, odt, m, err)
                                        : reduce_csr_all(call, ex, name, k, odt, m, err);
  }
  if (m->data->kind != MT_KIND_DENSE)
    return mt_err(err, MT_NOT_SUPPORTED, "%s: %s storage is not supported by the CPU backend", name,
                  mt_kind_name(m->data->kind));

  /* amin/amax/argmin/argmax have no identity over an empty dim: torch's
   * IndexError. */
  if (k == RK_MIN || k == RK_MAX || k == RK_ARGMIN || k == RK_ARGMAX) {
    if ((k == RK_ARGMIN || k == RK_ARGMAX) && all && mt_numel(m) == 0)
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
  /* all(m, dim=()) reduces no dim: each element is its own output (the
   * loop below with one element per output gives !in || v != 0, masked as
   * the element) */
  if ((st = mt__cpu_mview_open(m, &mv, err)) != MT_OK) goto out;
  mt_red_par p;
  memset(&p, 0, sizeof p);
  p.kind = k;
  p.idt = idt;
  p.dt = dt;
  p.odt = odt;
  p.cdt = var_dtype(dt);
  p.ndim = m->ndim;
  p.n_red = 1;
  for (int d = 0; d < m->ndim; d++) {
    p.shape[d] = m->shape[d];
    p.red[d] = red[d];
    if (red[d]) p.n_red *= m->shape[d];
  }
  if ((st = mt__cpu_new_masked_dense(h, odt, out_ndim, out_shape, &out, &data, &mask, err)) !=
      MT_OK)
    goto out;
  if ((st = run_reduce(ex, name, &p, mv.data->values, mv.mask->values, mt_numel(m), data->values,
                       mask->values, mt_numel(data), err)) != MT_OK) {
    h->free(out);
    goto out;
  }
  call->out[0] = out;
  call->n_out = 1;
out:
  mt__cpu_mview_close(&mv);
  return st;
}

/* The family's kernels with another backend's compute (common/exec.h). */
mt_status mt__reduce_run(mt_call *call, mt_op op, const mt_exec *ex, mt_error *err) {
  switch (op) {
#define RED_CASE(name, kind, dtypes, outr, refusal)                  \
  case MT_OP_##name: {                                               \
    static const red_spec spec = {kind, dtypes, outr, refusal};      \
    return reduce(call, op, &spec, ex, err);                         \
  }
    RED_OPS(RED_CASE)
#undef RED_CASE
  default: return mt_err(err, MT_NOT_SUPPORTED, "%s: not a reduce op", mt_op_name(op));
  }
}

#define RED_KERNEL(op, kind, dtypes, outr, refusal)                     \
  mt_status mt_cpu_##op(mt_call *call, mt_error *err) {                 \
    return mt__reduce_run(call, MT_OP_##op, &mt_cpu_exec, err);         \
  }
RED_OPS(RED_KERNEL)
#undef RED_KERNEL

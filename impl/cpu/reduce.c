/* reduce.c - CPU kernels of the reduce family: sum mean prod amin amax.
 *
 * RED-1  no `dim`: reduce every element to a 0-d masked tensor whose mask
 *        is any(mask).
 * RED-2  `dim` (int, negative allowed, or a tuple of ints) and `keepdim`
 *        (default false): reduce those dims; the output mask is any(mask)
 *        over them (torch.masked's _multidim_any).
 * RED-3  masked-out elements are replaced by the op's identity before
 *        reducing (sum 0, prod 1, amin +inf, amax -inf); mean is the masked
 *        sum over the count of masked-in elements, so a fully masked-out
 *        output is exactly the fill: sum 0, prod 1, amin +inf, amax -inf,
 *        mean 0/0 = NaN. Those outputs are compared at masked-out positions
 *        too.
 * Accumulation is in double and rounded once to the data dtype; mean
 * rounds the sum to the dtype and divides in the dtype, as torch's
 * `total / count`. NaN at a masked-in position propagates (amin/amax too).
 * Errors follow torch: a dim out of range -> INDEX_OUT_OF_RANGE, a repeated
 * dim -> INVALID_ARGUMENT, prod with a tuple of dims -> INVALID_ARGUMENT
 * (torch.prod has no such overload), amin/amax over a zero-size dim ->
 * INVALID_ARGUMENT (torch: "Expected reduction dim 1 to have non-zero
 * size"). */
#include "cpu_util.h"

static double identity(mt_op op) {
  switch (op) {
  case MT_OP_prod: return 1.0;
  case MT_OP_amin: return INFINITY;
  case MT_OP_amax: return -INFINITY;
  default: return 0.0; /* sum, mean */
  }
}

/* acc (+) v for the op; amin/amax propagate NaN as torch.amin/amax. */
static double combine(mt_op op, double acc, double v) {
  switch (op) {
  case MT_OP_prod: return acc * v;
  case MT_OP_amin: return (isnan(acc) || isnan(v)) ? NAN : (v < acc ? v : acc);
  case MT_OP_amax: return (isnan(acc) || isnan(v)) ? NAN : (v > acc ? v : acc);
  default: return acc + v;
  }
}

/* The dims to reduce, as flags red[d]; *all = 1 for the RED-1 form. */
static mt_status parse_dims(const char *name, const mt_tensor *m, const mt_kwargs *kw,
                            int red[MT_MAX_DIMS], int *all, mt_error *err) {
  const mt_kwarg *a = mt_kw_find(kw, "dim");
  int ndim_eff = m->ndim > 0 ? m->ndim : 1; /* torch wraps dims of a 0-d tensor as 1-d */
  int64_t one;
  const int64_t *dims = NULL;
  int n = 0;
  memset(red, 0, sizeof(int) * MT_MAX_DIMS);
  *all = 0;
  if (!a) {
    *all = 1;
  } else if (a->type == MT_KW_INT) {
    one = a->i;
    dims = &one;
    n = 1;
  } else { /* MT_KW_INTS: mt__kw_check let nothing else through, and no tuple for prod */
    dims = a->ints;
    n = a->n;
    if (n == 0) *all = 1; /* dim=() reduces every dim, as torch.masked's _canonical_dim */
  }
  for (int k = 0; k < n; k++) {
    int64_t d = dims[k];
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

/* Finishes one output element: the accumulator rounded once, mean = sum /
 * count in the dtype (0/0 = NaN when nothing is masked in). */
static double finish(mt_op op, mt_dtype dt, double acc, int64_t count) {
  if (op != MT_OP_mean) return mt__cpu_round(dt, acc);
  if (dt == MT_float32) return (double)((float)acc / (float)count);
  return acc / (double)count;
}

/* RED-1 over COO storage: torch reduces the stored values under the mask's
 * values (masked_fn(masked_tensor(data.values(), mask.values()))). */
static mt_status reduce_coo_all(mt_call *call, mt_op op, const mt_tensor *m, mt_error *err) {
  const char *name = mt_op_name(op);
  const mt_host *h = mt__cpu_host(call);
  const mt_tensor *d, *k;
  mt_tensor *td = NULL, *tk = NULL, *out = NULL, *data = NULL, *mask = NULL;
  mt_dtype dt = m->data->dtype;
  mt_status st;
  if ((st = mt__cpu_coalesced(m->data, &d, &td, err)) != MT_OK) goto out;
  if ((st = mt__cpu_coalesced(m->mask, &k, &tk, err)) != MT_OK) goto out;
  if (!mt__cpu_coo_same_indices(d, k)) {
    st = mt_err(err, MT_INVALID_ARGUMENT,
                "%s: inputs/0 data and mask do not have the same COO indices", name);
    goto out;
  }
  int64_t n = d->nnz * mt_coo_row_numel(d), count = 0;
  if (n == 0 && (op == MT_OP_amin || op == MT_OP_amax)) {
    st = mt_err(err, MT_INVALID_ARGUMENT,
                "%s: Expected reduction dim 0 to have non-zero size (inputs/0 stores no values)",
                name);
    goto out;
  }
  double acc = identity(op);
  for (int64_t i = 0; i < n; i++)
    if (mt__cpu_ldb(k->values, i)) {
      acc = combine(op, acc, mt__cpu_ld(d->values, dt, i));
      count++;
    }
  int64_t no_shape[1] = {0};
  if ((st = mt__cpu_new_masked_dense(h, dt, 0, no_shape, &out, &data, &mask, err)) != MT_OK)
    goto out;
  mt__cpu_st(data->values, dt, 0, finish(op, dt, acc, count));
  ((uint8_t *)mask->values)[0] = count > 0;
  call->out[0] = out;
  call->n_out = 1;
out:
  mt_tensor_free(td);
  mt_tensor_free(tk);
  return st;
}

static mt_status reduce(mt_call *call, mt_op op, mt_error *err) {
  const char *name = mt_op_name(op);
  const mt_host *h = mt__cpu_host(call);
  const mt_tensor *m = NULL;
  mt__cpu_mview mv = {0};
  mt_tensor *out = NULL, *data = NULL, *mask = NULL;
  double *acc = NULL;
  int64_t *count = NULL;
  int red[MT_MAX_DIMS], all, keepdim, out_ndim = 0;
  int64_t out_shape[MT_MAX_DIMS];
  mt_status st;

  mt__cpu_begin(call);
  if ((st = mt__kw_check(op, call->kw, err)) != MT_OK) return st;
  if ((st = mt__cpu_masked_input0(call, name, &m, err)) != MT_OK) return st;
  if ((st = parse_dims(name, m, call->kw, red, &all, err)) != MT_OK) return st;
  keepdim = mt_kw_int(call->kw, "keepdim", 0) != 0;
  mt_dtype dt = m->data->dtype;

  if (m->data->kind == MT_KIND_COO) {
    if (all && !keepdim) return reduce_coo_all(call, op, m, err);
    return mt_err(err, MT_NOT_SUPPORTED,
                  "%s: reducing over dims of a COO-storage masked tensor is not implemented (as in "
                  "torch.masked)",
                  name);
  }
  if (m->data->kind != MT_KIND_DENSE)
    return mt_err(err, MT_NOT_SUPPORTED, "%s: %s storage is not supported by the CPU backend", name,
                  mt_kind_name(m->data->kind));

  /* RED-3: amin/amax have no identity over an empty dim; torch refuses. */
  if (op == MT_OP_amin || op == MT_OP_amax)
    for (int d = 0; d < m->ndim; d++)
      if (red[d] && m->shape[d] == 0)
        return mt_err(
            err, MT_INVALID_ARGUMENT,
            "%s: Expected reduction dim %d to have non-zero size (inputs/0 shape[%d] = 0)", name, d,
            d);

  for (int d = 0; d < m->ndim; d++) {
    if (!red[d])
      out_shape[out_ndim++] = m->shape[d];
    else if (keepdim)
      out_shape[out_ndim++] = 1;
  }
  int64_t n_out = mt_shape_numel(out_ndim, out_shape), n_in = mt_numel(m);
  if ((st = mt__cpu_mview_open(m, &mv, err)) != MT_OK) goto out;
  acc = malloc(sizeof *acc * (size_t)(n_out ? n_out : 1));
  count = calloc((size_t)(n_out ? n_out : 1), sizeof *count);
  if (!acc || !count) {
    st = mt_err(err, MT_OUT_OF_MEMORY, "%s: out of memory for %lld accumulators", name,
                (long long)n_out);
    goto out;
  }
  for (int64_t o = 0; o < n_out; o++) acc[o] = identity(op);

  /* Walk the input in row-major order; o is the output element that input
   * element i reduces into (its coordinates with the reduced dims dropped). */
  for (int64_t i = 0; i < n_in; i++) {
    if (!mt__cpu_ldb(mv.mask->values, i)) continue; /* RED-3: masked out = identity */
    int64_t rem = i, o = 0, scale = 1;
    for (int d = m->ndim - 1; d >= 0; d--) {
      int64_t c = rem % m->shape[d];
      rem /= m->shape[d];
      if (!red[d]) {
        o += c * scale;
        scale *= m->shape[d];
      }
    }
    acc[o] = combine(op, acc[o], mt__cpu_ld(mv.data->values, dt, i));
    count[o]++;
  }

  if ((st = mt__cpu_new_masked_dense(h, dt, out_ndim, out_shape, &out, &data, &mask, err)) != MT_OK)
    goto out;
  for (int64_t o = 0; o < n_out; o++) {
    mt__cpu_st(data->values, dt, o, finish(op, dt, acc[o], count[o]));
    ((uint8_t *)mask->values)[o] = count[o] > 0; /* RED-2: any(mask) over the reduced dims */
  }
  call->out[0] = out;
  call->n_out = 1;
out:
  mt__cpu_mview_close(&mv);
  free(acc);
  free(count);
  return st;
}

mt_status mt_cpu_sum(mt_call *call, mt_error *err) { return reduce(call, MT_OP_sum, err); }
mt_status mt_cpu_mean(mt_call *call, mt_error *err) { return reduce(call, MT_OP_mean, err); }
mt_status mt_cpu_prod(mt_call *call, mt_error *err) { return reduce(call, MT_OP_prod, err); }
mt_status mt_cpu_amin(mt_call *call, mt_error *err) { return reduce(call, MT_OP_amin, err); }
mt_status mt_cpu_amax(mt_call *call, mt_error *err) { return reduce(call, MT_OP_amax, err); }

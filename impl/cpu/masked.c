/* masked.c - CPU kernels of the masked family: masked_tensor, to_tensor.
 *
 * masked_tensor(data, mask)  MASK-1 (construction), MASK-2 (its errors),
 *   following torch.masked.MaskedTensor.__init__: _preprocess_data (layout
 *   check, COO coalescing, COO data restricted to the mask's true entries
 *   when the nnz differ) then _validate_members (same indices, bool mask,
 *   data dtype, dim, size), in that order.
 * to_tensor(m, value)        MASK-3: data where mask, else value; COO
 *   storage is refused as torch refuses it (LAYOUT_MISMATCH). */
#include "common/exec.h"
#include "cpu_util.h"

/* ---- the copies, on the call's exec -------------------------------------- */

/* dst (contiguous, t's dtype) = t's n elements in row-major order, through
 * ex's gather: a device copy on the CUDA path. */
static mt_status gather_dense(const mt_exec *ex, const mt_tensor *t, void *dst, mt_error *err) {
  int64_t n = mt_numel(t), len = 0;
  mt_status st = MT_OK;
  if (n == 0) return MT_OK;
  if (!ex->gather)
    return mt_err(err, MT_NOT_SUPPORTED, "the %s backend has no gather kernel", ex->name);
  int *src = calloc((size_t)n, sizeof *src);
  int64_t *off = malloc((size_t)n * sizeof *off);
  if (!src || !off) {
    st = mt_err(err, MT_OUT_OF_MEMORY, "out of memory for a copy plan of %lld elements",
                (long long)n);
    goto out;
  }
  for (int64_t i = 0; i < n; i++) {
    off[i] = mt_dense_offset(t, i);
    if (off[i] + 1 > len) len = off[i] + 1;
  }
  const void *srcs[1] = {t->values};
  st = ex->gather(src, off, n, 1, srcs, &len, mt_dtype_size(t->dtype), dst, err);
out:
  free(src);
  free(off);
  return st;
}

/* ---- masked_tensor ------------------------------------------------------ */

/* torch.masked accepts these data dtypes (MaskedTensor._validate_members);
 * uint8 is the one of ours it rejects. */
static int masked_data_dtype_ok(mt_dtype d) {
  return d == MT_float16 || d == MT_float32 || d == MT_float64 || d == MT_bool || d == MT_int8 ||
         d == MT_int32 || d == MT_int64;
}

/* ---- sparse storage on an exec: the host builds the structure, ex's gather
 * copies every stored value ---------------------------------------------------- */

/* a copy plan of n value elements, each -1 (the where's fill 0) until set */
static mt_status plan_new(int64_t **plan, int64_t n, mt_error *err) {
  if (!(*plan = malloc(sizeof **plan * (size_t)(n ? n : 1))))
    return mt_err(err, MT_OUT_OF_MEMORY, "masked_tensor: out of memory for a copy plan");
  for (int64_t i = 0; i < n; i++) (*plan)[i] = -1;
  return MT_OK;
}

/* the stored value elements of a COO or compressed tensor */
static int64_t n_stored(const mt_tensor *t) {
  mt_cgeom g;
  if (t->kind == MT_KIND_COO) return t->nnz * mt_coo_row_numel(t);
  if (mt_kind_is_compressed(t->kind) && mt_cgeom_of(t, &g)) return g.batches * t->nnz * g.entry;
  return 0;
}

/* o's values (its structure built on the host) = from's value elements
 * plan[i] (plan NULL: i; -1: a zero), copied by ex's gather */
static mt_status refill(const mt_exec *ex, mt_tensor *o, const mt_tensor *from,
                        const int64_t *plan, mt_error *err) {
  int64_t n = n_stored(o), len[2] = {n_stored(from), 1};
  size_t es = mt_dtype_size(o->dtype);
  unsigned char zero[8] = {0};
  mt_status st = MT_OK;
  if (n == 0) return MT_OK;
  if (!ex->gather)
    return mt_err(err, MT_NOT_SUPPORTED, "masked_tensor: the %s backend has no gather kernel",
                  ex->name);
  int *src = malloc((size_t)n * sizeof *src);
  int64_t *off = malloc((size_t)n * sizeof *off);
  if (!src || !off) {
    st = mt_err(err, MT_OUT_OF_MEMORY, "masked_tensor: out of memory for a copy plan of %lld "
                "elements", (long long)n);
  } else {
    for (int64_t i = 0; i < n; i++) {
      int64_t p = plan ? plan[i] : i;
      src[i] = p < 0;
      off[i] = p < 0 ? 0 : p;
    }
    const void *srcs[2] = {from->values, zero};
    memset(o->values, 0xff, (size_t)n * es); /* the host's copy is not the result */
    st = ex->gather(src, off, n, 2, srcs, len, es, o->values, err);
  }
  free(src);
  free(off);
  return st;
}

/* The same for CSR (torch's where for sparse CSR, as masked_tensor applies
 * it when data and mask differ in nnz): a CSR tensor of the mask's true
 * entries holding data's value there, 0 where data stores none. */
static mt_status csr_where(const mt_host *h, const mt_tensor *mask, const mt_tensor *data,
                           mt_tensor **out, int64_t **plan, mt_error *err) {
  mt_status st;
  int64_t rows = mask->shape[0], n_true = 0;
  size_t es = mt_dtype_size(data->dtype);
  *out = NULL;
  for (int64_t k = 0; k < mask->nnz; k++) n_true += mt__cpu_ldb(mask->values, k);
  if ((st = h->csr_new(data->dtype, rows, mask->shape[1], n_true, out, err)) != MT_OK) return st;
  if (plan && (st = plan_new(plan, n_true, err)) != MT_OK) return st;
  mt_tensor *o = *out;
  int64_t w = 0;
  o->crow_indices[0] = 0;
  for (int64_t r = 0; r < rows; r++) {
    for (int64_t k = mask->crow_indices[r]; k < mask->crow_indices[r + 1]; k++) {
      if (!mt__cpu_ldb(mask->values, k)) continue;
      int64_t c = mask->col_indices[k];
      o->col_indices[w] = c;
      for (int64_t p = data->crow_indices[r]; p < data->crow_indices[r + 1]; p++)
        if (data->col_indices[p] == c) { /* else: zero-filled by csr_new, the fill 0 */
          if (plan)
            (*plan)[w] = p;
          else
            memcpy((char *)o->values + (size_t)w * es,
                   (const char *)data->values + (size_t)p * es, es);
          break;
        }
      w++;
    }
    o->crow_indices[r + 1] = w;
  }
  return MT_OK;
}

/* torch's _sparse_coo_where(mask, data, 0) for coalesced COO inputs: a COO
 * tensor whose entries are exactly the mask's true entries, holding data's
 * value there (0 where data has no entry). Allocated by h. */
static mt_status coo_where(const mt_host *h, const mt_tensor *mask, const mt_tensor *data,
                           mt_tensor **out, int64_t **plan, mt_error *err) {
  mt_status st;
  int64_t row = mt_coo_row_numel(data);
  size_t es = mt_dtype_size(data->dtype);
  int64_t n_true = 0;
  *out = NULL;
  /* An entry is masked in when any element of its (dense-dims) row is. */
  for (int64_t k = 0; k < mask->nnz; k++) {
    int any = 0;
    for (int64_t j = 0; j < row && !any; j++) any = mt__cpu_ldb(mask->values, k * row + j);
    n_true += any;
  }
  if ((st = h->coo_new(data->dtype, data->ndim, data->shape, data->sparse_dim, n_true, out, err)) !=
      MT_OK)
    return st;
  if (plan && (st = plan_new(plan, n_true * row, err)) != MT_OK) return st;
  mt_tensor *o = *out;
  int64_t w = 0, p = 0; /* p walks data's (sorted) entries alongside mask's */
  for (int64_t k = 0; k < mask->nnz; k++) {
    int any = 0;
    for (int64_t j = 0; j < row && !any; j++) any = mt__cpu_ldb(mask->values, k * row + j);
    if (!any) continue;
    int64_t lin = mt_coo_linear(mask, k);
    while (p < data->nnz && mt_coo_linear(data, p) < lin) p++;
    for (int d = 0; d < mask->sparse_dim; d++)
      o->indices[d * n_true + w] = mask->indices[d * mask->nnz + k];
    char *dst = (char *)o->values + (size_t)(w * row) * es;
    if (p < data->nnz && mt_coo_linear(data, p) == lin) {
      if (plan)
        for (int64_t j = 0; j < row; j++) (*plan)[w * row + j] = p * row + j;
      else
        memcpy(dst, (const char *)data->values + (size_t)(p * row) * es, (size_t)row * es);
    }
    /* else: zero-filled by coo_new, the where's fill value 0 */
    w++;
  }
  o->coalesced = 1;
  return MT_OK;
}

/* torch's _tensors_match(data.indices(), mask.indices(), exact=True) on
 * coalesced COO data (after the where) and mask of one sparse_dim: torch.eq
 * of the two (sparse_dim, nnz) index arrays, which broadcasts. Equal
 * counts compare entry by entry; a count of 1 is compared with each entry
 * of the other, so 1 against 0 compares nothing and matches (an accepted
 * MaskedTensor whose data stores no entry and whose mask stores one);
 * two other counts are torch.eq's size error. */
static mt_status coo_indices_match(const mt_tensor *d, const mt_tensor *m, const char *op,
                                   mt_error *err) {
  int64_t a = d->nnz, b = m->nnz, n = a == 1 ? b : a;
  if (a != b && a != 1 && b != 1)
    return mt_err(err, MT_SHAPE_MISMATCH,
                  "%s: The size of tensor a (%lld) must match the size of tensor b (%lld) at "
                  "non-singleton dimension 1 (data's and mask's COO indices after coalescing)",
                  op, (long long)a, (long long)b);
  for (int64_t j = 0; j < n; j++)
    for (int dd = 0; dd < d->sparse_dim; dd++)
      if (d->indices[dd * a + (a == 1 ? 0 : j)] != m->indices[dd * b + (b == 1 ? 0 : j)])
        return mt_err(err, MT_INVALID_ARGUMENT,
                      "%s: data and mask are both sparse COO tensors but do not have the same "
                      "indices (data nnz %lld, mask nnz %lld after coalescing)",
                      op, (long long)a, (long long)b);
  return MT_OK;
}

static mt_status masked_tensor_run(mt_call *call, const mt_exec *ex, mt_error *err) {
  static const char *op = "masked_tensor";
  const mt_host *h = mt__cpu_host(call);
  const mt_tensor *data = NULL, *mask = NULL;
  mt_tensor *cdata_tmp = NULL, *cmask_tmp = NULL, *where = NULL;
  mt_tensor *out_data = NULL, *out_mask = NULL, *out = NULL;
  int64_t *plan = NULL; /* on_ex: a where's copy plan (refill) */
  int on_ex = ex != &mt_cpu_exec;
  char sa[64], sb[64];
  mt_status st;

  mt__cpu_begin(call);
  if ((st = mt__kw_check(MT_OP_masked_tensor, call->kw, err)) != MT_OK) return st;
  if ((st = mt__cpu_input(call, 0, op, &data, err)) != MT_OK) return st;
  if ((st = mt__cpu_input(call, 1, op, &mask, err)) != MT_OK) return st;
  /* MASK-2: torch raises TypeError "data must be a Tensor" for a MaskedTensor
   * or a number. */
  if (data->kind == MT_KIND_MASKED || data->kind == MT_KIND_SCALAR)
    return mt_err(err, MT_INVALID_ARGUMENT, "%s: data must be a Tensor (inputs/0 has kind %s)", op,
                  mt_kind_name(data->kind));
  if (mask->kind == MT_KIND_MASKED || mask->kind == MT_KIND_SCALAR)
    return mt_err(err, MT_INVALID_ARGUMENT, "%s: mask must be a Tensor (inputs/1 has kind %s)", op,
                  mt_kind_name(mask->kind));
  /* MASK-2: layout first, as torch's _preprocess_data. */
  if (data->kind != mask->kind)
    return mt_err(err, MT_LAYOUT_MISMATCH,
                  "%s: data and mask must have the same layout (data is %s, mask is %s)", op,
                  mt_kind_name(data->kind), mt_kind_name(mask->kind));
  if (data->kind != MT_KIND_DENSE && data->kind != MT_KIND_COO && data->kind != MT_KIND_CSR)
    return mt_err(err, MT_NOT_SUPPORTED, "%s: %s storage is not supported by the CPU backend", op,
                  mt_kind_name(data->kind));
  if ((st = mt_tensor_validate(data, "inputs/0", err)) != MT_OK) return st;
  if ((st = mt_tensor_validate(mask, "inputs/1", err)) != MT_OK) return st;

  /* MASK-2: bool mask, supported data dtype, then dim and size. */
  if (mask->dtype != MT_bool)
    return mt_err(err, MT_DTYPE_MISMATCH, "%s: mask must have dtype bool (inputs/1 has dtype %s)",
                  op, mt_dtype_name(mask->dtype));
  if (!masked_data_dtype_ok(data->dtype))
    return mt_err(err, MT_DTYPE_MISMATCH,
                  "%s: torch.%s is not supported in MaskedTensor (inputs/0)", op,
                  mt_dtype_name(data->dtype));
  if (data->ndim != mask->ndim)
    return mt_err(err, MT_SHAPE_MISMATCH,
                  "%s: data.dim() must equal mask.dim() (data.dim() = %d, mask.dim() = %d)", op,
                  data->ndim, mask->ndim);
  if (!mt_shape_equal(data, mask))
    return mt_err(err, MT_SHAPE_MISMATCH,
                  "%s: data.size() must equal mask.size() (data %s, mask %s)", op,
                  mt_shape_str(data->ndim, data->shape, sa, sizeof sa),
                  mt_shape_str(mask->ndim, mask->shape, sb, sizeof sb));

  if (data->kind == MT_KIND_DENSE && ex != &mt_cpu_exec) {
    if ((st = h->dense_new(data->dtype, data->ndim, data->shape, &out_data, err)) != MT_OK ||
        (st = h->dense_new(MT_bool, mask->ndim, mask->shape, &out_mask, err)) != MT_OK ||
        (st = gather_dense(ex, data, out_data->values, err)) != MT_OK ||
        (st = gather_dense(ex, mask, out_mask->values, err)) != MT_OK)
      goto out;
  } else if (data->kind == MT_KIND_DENSE) {
    if ((st = mt__cpu_copy(h, data, &out_data, err)) != MT_OK) goto out;
    if ((st = mt__cpu_copy(h, mask, &out_mask, err)) != MT_OK) goto out;
  } else if (data->kind == MT_KIND_CSR) {
    /* MASK-1, CSR storage: as COO, data restricted to the mask's true
     * entries when the nnz differ; then one structure, or torch's
     * ValueError */
    const mt_tensor *cdata = data;
    if (data->nnz != mask->nnz) {
      if ((st = csr_where(h, mask, data, &where, on_ex ? &plan : NULL, err)) != MT_OK) goto out;
      cdata = where;
    }
    if (!mt__cpu_csr_same_structure(cdata, mask)) {
      st = mt_err(err, MT_INVALID_ARGUMENT,
                  "%s: data and mask are both sparse CSR tensors but do not share either crow or "
                  "col indices (data nnz %lld, mask nnz %lld)",
                  op, (long long)cdata->nnz, (long long)mask->nnz);
      goto out;
    }
    if (where) {
      out_data = where;
      where = NULL;
    } else if ((st = mt_tensor_clone_host(h, data, &out_data, err)) != MT_OK) {
      goto out;
    }
    if ((st = mt_tensor_clone_host(h, mask, &out_mask, err)) != MT_OK) goto out;
    if (on_ex && ((st = refill(ex, out_data, data, plan, err)) != MT_OK ||
                  (st = refill(ex, out_mask, mask, NULL, err)) != MT_OK))
      goto out;
  } else {
    /* MASK-1, COO storage: both coalesced; when the nnz differ, data is
     * restricted to the mask's true entries (torch's _sparse_coo_where). */
    const mt_tensor *cdata, *cmask;
    if (data->sparse_dim != mask->sparse_dim) {
      st = mt_err(err, MT_LAYOUT_MISMATCH,
                  "%s: data and mask must have the same sparse_dim (data %d, mask %d)", op,
                  data->sparse_dim, mask->sparse_dim);
      goto out;
    }
    if ((st = on_ex ? mt__exec_coalesced(ex, data, &cdata, &cdata_tmp, err)
                    : mt__cpu_coalesced(data, &cdata, &cdata_tmp, err)) != MT_OK)
      goto out;
    if ((st = on_ex ? mt__exec_coalesced(ex, mask, &cmask, &cmask_tmp, err)
                    : mt__cpu_coalesced(mask, &cmask, &cmask_tmp, err)) != MT_OK)
      goto out;
    const mt_tensor *vsrc = cdata; /* where the result's values are copied from */
    if (cdata->nnz != cmask->nnz) {
      if ((st = coo_where(h, cmask, cdata, &where, on_ex ? &plan : NULL, err)) != MT_OK) goto out;
      cdata = where;
    }
    if ((st = coo_indices_match(cdata, cmask, op, err)) != MT_OK) goto out;
    if (where) {
      out_data = where;
      where = NULL;
    } else if ((st = mt__cpu_copy(h, cdata, &out_data, err)) != MT_OK) {
      goto out;
    }
    if ((st = mt__cpu_copy(h, cmask, &out_mask, err)) != MT_OK) goto out;
    out_data->coalesced = out_mask->coalesced = 1;
    if (on_ex && ((st = refill(ex, out_data, vsrc, plan, err)) != MT_OK ||
                  (st = refill(ex, out_mask, cmask, NULL, err)) != MT_OK))
      goto out;
  }
  st = h->masked_new(out_data, out_mask, &out, err);
  out_data = out_mask = NULL; /* owned by masked_new, also on failure */
  if (st != MT_OK) goto out;
  call->out[0] = out;
  call->n_out = 1;
out:
  if (out_data) h->free(out_data);
  if (out_mask) h->free(out_mask);
  if (where) h->free(where);
  free(plan);
  mt_tensor_free(cdata_tmp);
  mt_tensor_free(cmask_tmp);
  return st;
}

/* ---- to_tensor ---------------------------------------------------------- */

static mt_status to_tensor_run(mt_call *call, const mt_exec *ex, mt_error *err) {
  static const char *op = "to_tensor";
  const mt_host *h = mt__cpu_host(call);
  const mt_tensor *m = NULL, *v = NULL;
  mt_tensor *out = NULL;
  mt__cpu_mview mv = {0};
  double fill = 0.0;
  mt_status st;

  mt__cpu_begin(call);
  if ((st = mt__kw_check(MT_OP_to_tensor, call->kw, err)) != MT_OK) return st;
  if ((st = mt__cpu_input(call, 0, op, &m, err)) != MT_OK) return st;
  if ((st = mt__cpu_input(call, 1, op, &v, err)) != MT_OK) return st;
  if (m->kind != MT_KIND_MASKED)
    return mt_err(err, MT_LAYOUT_MISMATCH, "%s: inputs/0 must be a masked tensor, got kind %s", op,
                  mt_kind_name(m->kind));
  if ((st = mt_tensor_validate(m, "inputs/0", err)) != MT_OK) return st;
  if ((st = mt__cpu_scalar_value(v, "inputs/1 (value)", op, &fill, err)) != MT_OK) return st;
  /* masked_fill casts the value to the data dtype (float32: rounded once;
   * integers truncate toward zero: 7.5 -> 7; bool: nonzero -> true). */
  fill = mt__cpu_round(m->data->dtype, fill);

  if ((st = h->dense_new(m->data->dtype, m->ndim, m->shape, &out, err)) != MT_OK) goto out;
  if (m->data->kind == MT_KIND_CSR) {
    /* MASK-3: masked_fill has no sparse CSR kernel ("unsupported tensor
     * layout: SparseCsr"), a layout refusal. */
    st = mt_err(err, MT_LAYOUT_MISMATCH,
                "%s: unsupported tensor layout: SparseCsr (inputs/0 has CSR storage; torch's "
                "to_tensor is dense-only)",
                op);
    goto out;
  } else if (m->data->kind == MT_KIND_COO) {
    /* MASK-3: torch's to_tensor is data.masked_fill(~mask, value), and ~ has
     * no sparse kernel: NotImplementedError, a layout refusal. */
    st = mt_err(err, MT_LAYOUT_MISMATCH,
                "%s: Could not run 'aten::bitwise_not' with arguments from the 'SparseCPU' "
                "backend (inputs/0 has COO storage; torch's to_tensor is dense-only)",
                op);
    goto out;
  } else if (m->data->kind == MT_KIND_DENSE && ex != &mt_cpu_exec) {
    /* MASK-3 on ex's gather: data where mask, else one element holding the
     * fill (the number made a 0-d tensor of the dtype on the host, as torch
     * wraps a Python number); the mask picks the source (plan bookkeeping) */
    if ((st = mt__cpu_mview_open(m, &mv, err)) != MT_OK) goto out;
    int64_t n = mt_numel(out), len[2] = {n, 1};
    unsigned char v1[8];
    mt__cpu_st(v1, out->dtype, 0, fill);
    int *src = malloc((size_t)(n ? n : 1) * sizeof *src);
    int64_t *off = malloc((size_t)(n ? n : 1) * sizeof *off);
    if (!src || !off) {
      st = mt_err(err, MT_OUT_OF_MEMORY, "%s: out of memory for a plan of %lld elements", op,
                  (long long)n);
    } else if (!ex->gather) {
      st = mt_err(err, MT_NOT_SUPPORTED, "%s: the %s backend has no gather kernel", op, ex->name);
    } else {
      for (int64_t i = 0; i < n; i++) {
        int in = mt__cpu_ldb(mv.mask->values, i);
        src[i] = in ? 0 : 1;
        off[i] = in ? i : 0;
      }
      const void *srcs[2] = {mv.data->values, v1};
      if (n > 0) st = ex->gather(src, off, n, 2, srcs, len, mt_dtype_size(out->dtype),
                                 out->values, err);
    }
    free(src);
    free(off);
    if (st != MT_OK) goto out;
  } else if (m->data->kind == MT_KIND_DENSE) {
    if ((st = mt__cpu_mview_open(m, &mv, err)) != MT_OK) goto out;
    mt_dtype dt = out->dtype;
    size_t size = mt_dtype_size(dt);
    int64_t n = mt_numel(out);
    /* MASK-3: data where mask, copied bit for bit (every dtype; int64 does
     * not fit a double); the fill elsewhere (masked-out data is poison and
     * never read). */
    for (int64_t i = 0; i < n; i++) {
      if (mt__cpu_ldb(mv.mask->values, i))
        memcpy((char *)out->values + (size_t)i * size,
               (const char *)mv.data->values + (size_t)i * size, size);
      else
        mt__cpu_st(out->values, dt, i, fill);
    }
  } else {
    st = mt_err(err, MT_NOT_SUPPORTED, "%s: %s storage is not supported by the CPU backend", op,
                mt_kind_name(m->data->kind));
    goto out;
  }
  call->out[0] = out;
  call->n_out = 1;
  out = NULL;
out:
  mt__cpu_mview_close(&mv);
  if (out) h->free(out);
  return st;
}

/* ---- the family's kernels -------------------------------------------------- */

mt_status mt__masked_run(mt_call *call, mt_op op, const mt_exec *ex, mt_error *err) {
  switch (op) {
  case MT_OP_masked_tensor: return masked_tensor_run(call, ex, err);
  case MT_OP_to_tensor: return to_tensor_run(call, ex, err);
  default: return mt_err(err, MT_NOT_SUPPORTED, "%s: not a masked op", mt_op_name(op));
  }
}

mt_status mt_cpu_masked_tensor(mt_call *call, mt_error *err) {
  return masked_tensor_run(call, &mt_cpu_exec, err);
}
mt_status mt_cpu_to_tensor(mt_call *call, mt_error *err) {
  return to_tensor_run(call, &mt_cpu_exec, err);
}

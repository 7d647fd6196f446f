/* structure.c - CPU kernels of the structure family: MaskedTensor's
 * passthrough and structure ops (spec/SEMANTICS.md STR-1 .. STR-7).
 *
 * torch.masked applies every passthrough op (select, slice, index,
 * transpose, t, view, reshape, expand, unsqueeze, split, cat, stack,
 * unfold) to the data and to the mask separately and wraps the two results
 * (passthrough.py, _apply_pass_through_fn). Here each such op is computed
 * once as a gather plan (which input, which element offset, for every
 * output element) and the SAME plan then copies the data and the mask, so
 * a mask can never take another path than its data (STR-1). Elements are
 * copied bytewise: every dtype is handled alike.
 *
 * Outputs are new contiguous tensors allocated through the call's host
 * (CALL-1): a view op returns a copy of the view.
 *
 * The plans are host bookkeeping; the copies they drive run where the
 * mt_exec says (common/exec.h, its gather hook): here for the CPU
 * reference, on the device for the CUDA backend (impl/cuda/structure.cu).
 * COO/CSR storage and plain sparse inputs (structure_sparse.c) plan their
 * indices on the host and move their values through the exec's gather too
 * (sps_gather); copy_'s dtype conversion through its convert hook, the
 * layout conversions through sparse_convert.c's, on the same exec. */
#include "common/exec.h"
#include "common/structure_ops.h"
#include "structure_util.h"
#include "sps.h" /* plain sparse inputs: structure_sparse.c (SPS-*) */
#include "sps_util.h" /* sps_gather: COO storage's copies on the exec */

#include "sparse_convert.h"

/* The call's one output, the masked tensor of *data and *mask: masked_new
 * takes both (also on failure), so both are set to NULL here. */
static mt_status set_out(mt_call *call, mt_tensor **data, mt_tensor **mask, mt_error *err) {
  mt_status st = mt__cpu_host(call)->masked_new(*data, *mask, &call->out[0], err);
  *data = *mask = NULL;
  if (st == MT_OK) call->n_out = 1;
  return st;
}

/* ---- the gather plan ---------------------------------------------------- */

/* Copies plan->n elements from srcs[src[i]] at off[i] into dst (contiguous,
 * element size es). Used once for the data and once for the masks. */
static void plan_copy(const st_plan *p, const void *const *srcs, void *dst, size_t es) {
  char *d = dst;
  for (int64_t i = 0; i < p->n; i++)
    memcpy(d + (size_t)i * es, (const char *)srcs[p->src[i]] + (size_t)p->off[i] * es, es);
}

/* Every element of view v (row-major order) into plan entries [at, at+numel). */
static void plan_view(st_plan *p, int64_t at, const st_view *v, int src) {
  int64_t n = mt_shape_numel(v->ndim, v->shape);
  int64_t idx[MT_MAX_DIMS] = {0};
  for (int64_t i = 0; i < n; i++) {
    int64_t off = v->offset;
    for (int d = 0; d < v->ndim; d++) off += idx[d] * v->strides[d];
    p->src[at + i] = src;
    p->off[at + i] = off;
    for (int d = v->ndim - 1; d >= 0; d--) {
      if (++idx[d] < v->shape[d]) break;
      idx[d] = 0;
    }
  }
}

/* The masked output of shape (ndim, shape) and dtype dt whose data and mask
 * are gathered by plan p from the n_src masked (dense-storage, contiguous)
 * sources: data from data_src[k], mask from mask_src[k]. */
static mt_status gather_masked(const mt_host *h, const mt_exec *ex, const st_plan *p, mt_dtype dt,
                               int ndim, const int64_t *shape, const void *const *data_src,
                               const void *const *mask_src, mt_tensor **out, mt_error *err) {
  mt_tensor *data = NULL, *mask = NULL;
  int64_t len[ST_MAX_INPUTS] = {0};
  int n_src = 0;
  if (ex != &mt_cpu_exec) { /* a device uploads each source: its extent in the plan */
    if (!ex->gather)
      return mt_err(err, MT_NOT_SUPPORTED, "the %s backend has no gather kernel", ex->name);
    for (int64_t i = 0; i < p->n; i++) {
      if (p->src[i] + 1 > n_src) n_src = p->src[i] + 1;
      if (p->off[i] + 1 > len[p->src[i]]) len[p->src[i]] = p->off[i] + 1;
    }
  }
  mt_status st = mt__cpu_new_masked_dense(h, dt, ndim, shape, out, &data, &mask, err);
  if (st != MT_OK) return st;
  if (ex == &mt_cpu_exec) {
    plan_copy(p, data_src, data->values, mt_dtype_size(dt));
    plan_copy(p, mask_src, mask->values, 1);
    return MT_OK;
  }
  if (p->n == 0) return MT_OK;
  if ((st = ex->gather(p->src, p->off, p->n, n_src, data_src, len, mt_dtype_size(dt),
                       data->values, err)) != MT_OK ||
      (st = ex->gather(p->src, p->off, p->n, n_src, mask_src, len, 1, mask->values, err)) !=
          MT_OK) {
    h->free(*out);
    *out = NULL;
  }
  return st;
}

/* A path of the CPU reference only (see the top of this file). */
static mt_status gap(const mt_exec *ex, const char *op, const char *what, mt_error *err) {
  return mt_err(err, MT_NOT_SUPPORTED, "%s: %s: the %s backend has no kernels for it yet", op,
                what, ex->name);
}

/* dst[k] = element off[k] of src (len elements) for k < n, es bytes each;
 * off NULL: element k, or element 0 of a one-element src (a fill). ex's
 * gather: the values of the layout conversions and sparse-storage copies
 * (the CPU reference copies them itself). */
static mt_status gather_one(const mt_exec *ex, const int64_t *off, int64_t n, const void *src,
                            int64_t len, size_t es, void *dst, const char *op, mt_error *err) {
  st_plan p = {0};
  mt_status st;
  if (n == 0) return MT_OK;
  if (!ex->gather)
    return mt_err(err, MT_NOT_SUPPORTED, "the %s backend has no gather kernel", ex->name);
  if ((st = st_plan_alloc(&p, n, op, err)) != MT_OK) return st;
  for (int64_t i = 0; i < n; i++) {
    p.src[i] = 0;
    p.off[i] = off ? off[i] : len == 1 ? 0 : i;
  }
  const void *srcs[1] = {src};
  st = ex->gather(p.src, p.off, n, 1, srcs, &len, es, dst, err);
  st_plan_free(&p);
  return st;
}

/* ---- input helpers ------------------------------------------------------ */

/* STR-6: the ops whose torch.masked path refuses COO storage, with torch's
 * refusal (the aten op that has no SparseCPU kernel). */
static const struct {
  const char *op, *why;
} coo_refusals[] = {
    {"slice", "Could not run 'aten::as_strided' with arguments from the 'SparseCPU' backend"},
    {"split", "Could not run 'aten::as_strided' with arguments from the 'SparseCPU' backend"},
    {"index", "Could not run 'aten::index.Tensor' with arguments from the 'SparseCPU' backend"},
    {"view", "Could not run 'aten::view' with arguments from the 'SparseCPU' backend"},
    {"reshape", "reshape is not implemented for sparse tensors"},
    {"expand", "expand is unsupported for Sparse tensors"},
    {"unfold", "Could not run 'aten::unfold' with arguments from the 'SparseCPU' backend"},
    {"where", "Could not run 'aten::where.self' with arguments from the 'SparseCPU' backend"},
    {"ones_like", "Could not run 'aten::fill_.Scalar' with arguments from the 'SparseCPU' backend"},
};

static const char *coo_refusal(const char *op) {
  for (size_t k = 0; k < sizeof coo_refusals / sizeof coo_refusals[0]; k++)
    if (strcmp(coo_refusals[k].op, op) == 0) return coo_refusals[k].why;
  return NULL;
}

/* SP-4: the ops torch refuses on CSR storage, with its refusal (CSR has no
 * strides, no is_contiguous, no view; transpose would give CSC data). */
#define CSR_NO_STRIDES "Sparse CSR tensors do not have strides"
#define CSR_NO_CONTIG "Sparse CSR tensors do not have is_contiguous"
#define CSR_NO_KERNEL(aten) \
  "Could not run 'aten::" aten "' with arguments from the 'SparseCsrCPU' backend"
static const struct {
  const char *op, *why;
} csr_refusals[] = {
    {"slice", CSR_NO_STRIDES},
    {"index", CSR_NO_STRIDES},
    {"unsqueeze", CSR_NO_STRIDES},
    {"split", CSR_NO_STRIDES},
    {"transpose", "data layout of torch.sparse_csc is not supported."},
    {"t", "data layout of torch.sparse_csc is not supported."},
    {"view", CSR_NO_KERNEL("view")},
    {"reshape", CSR_NO_CONTIG},
    {"cat", CSR_NO_CONTIG},
    {"stack", CSR_NO_CONTIG},
    {"contiguous", CSR_NO_CONTIG},
    {"is_contiguous", CSR_NO_CONTIG},
    {"expand", "expand is unsupported for SparseCsr tensors"},
    {"unfold", CSR_NO_KERNEL("unfold")},
    {"where", CSR_NO_KERNEL("where.self")},
    {"to_sparse", "sparse_mask_sparse_compressed expects mask to have sparse compressed layout, "
                  "got Sparse"},
    {"to_sparse_csr", CSR_NO_KERNEL("view")},
};

static const char *csr_refusal(const char *op) {
  for (size_t k = 0; k < sizeof csr_refusals / sizeof csr_refusals[0]; k++)
    if (strcmp(csr_refusals[k].op, op) == 0) return csr_refusals[k].why;
  return NULL;
}

/* SP-4: LAYOUT_MISMATCH when m (a masked tensor) has CSR storage and torch
 * refuses op on it. */
static mt_status csr_refused(const mt_tensor *m, const char *op, const char *in, mt_error *err) {
  const char *why = m->kind == MT_KIND_MASKED && m->data && m->data->kind == MT_KIND_CSR
                        ? csr_refusal(op)
                        : NULL;
  if (!why) return MT_OK;
  return mt_err(err, MT_LAYOUT_MISMATCH, "%s: %s (%s has CSR storage)", op, why, in);
}

/* Input i as a valid dense-storage masked tensor, opened contiguous. */
static mt_status masked_dense_input(const mt_call *call, int i, const char *op,
                                    const mt_tensor **m, mt__cpu_mview *mv, mt_error *err) {
  char name[32];
  mt_status st;
  if ((st = mt__cpu_input(call, i, op, m, err)) != MT_OK) return st;
  if ((*m)->kind != MT_KIND_MASKED)
    return mt_err(err, MT_NOT_SUPPORTED,
                  "%s: %s has kind %s; the CPU backend implements %s on masked tensors", op,
                  mt__cpu_in_name(i, name, sizeof name), mt_kind_name((*m)->kind), op);
  if ((st = mt_tensor_validate(*m, mt__cpu_in_name(i, name, sizeof name), err)) != MT_OK)
    return st;
  if ((*m)->data->kind == MT_KIND_COO) {
    const char *why = coo_refusal(op);
    if (why)
      return mt_err(err, MT_LAYOUT_MISMATCH, "%s: %s (%s has COO storage)", op, why,
                    mt__cpu_in_name(i, name, sizeof name));
  }
  if ((st = csr_refused(*m, op, mt__cpu_in_name(i, name, sizeof name), err)) != MT_OK) return st;
  if ((*m)->data->kind != MT_KIND_DENSE)
    return mt_err(err, MT_NOT_SUPPORTED,
                  "%s: %s has %s storage; the CPU backend implements %s on dense storage", op,
                  mt__cpu_in_name(i, name, sizeof name), mt_kind_name((*m)->data->kind), op);
  return mt__cpu_mview_open(*m, mv, err);
}

/* ---- view ops on COO storage (select, transpose, t, unsqueeze) ---------- */

/* A view op's shape logic: checks its kwargs (STR-7) and turns the input's
 * view into the result's. */
typedef mt_status (*view_fn)(const mt_call *call, const char *op, st_view *v, mt_error *err);

/* Entry k's output indices from its input indices `in` (ndim_in of them);
 * 0 when the entry is not in the result (select of another index). The
 * arguments were checked by the op's view function already. */
typedef int (*coo_map)(const mt_call *call, int ndim_in, const int64_t *shape_in,
                       const int64_t *in, int64_t *out);

static int64_t wrapped(int64_t i, int64_t n) { return i < 0 ? i + n : i; }

static int cm_transpose(const mt_call *call, int nd, const int64_t *sh, const int64_t *in,
                        int64_t *out) {
  (void)sh;
  int64_t a = wrapped(mt_kw_int(call->kw, "dim0", 0), nd), b = wrapped(mt_kw_int(call->kw, "dim1", 0), nd);
  memcpy(out, in, (size_t)nd * sizeof(int64_t));
  out[a] = in[b], out[b] = in[a];
  return 1;
}
static int cm_t(const mt_call *call, int nd, const int64_t *sh, const int64_t *in, int64_t *out) {
  (void)call, (void)sh;
  memcpy(out, in, (size_t)nd * sizeof(int64_t));
  if (nd == 2) out[0] = in[1], out[1] = in[0];
  return 1;
}
static int cm_unsqueeze(const mt_call *call, int nd, const int64_t *sh, const int64_t *in,
                        int64_t *out) {
  (void)sh;
  int64_t d = wrapped(mt_kw_int(call->kw, "dim", 0), nd + 1);
  for (int i = 0, j = 0; i <= nd; i++) out[i] = i == d ? 0 : in[j++];
  return 1;
}
static int cm_select(const mt_call *call, int nd, const int64_t *sh, const int64_t *in,
                     int64_t *out) {
  int64_t d = wrapped(mt_kw_int(call->kw, "dim", 0), nd);
  if (in[d] != wrapped(mt_kw_int(call->kw, "index", 0), sh[d])) return 0;
  for (int i = 0, j = 0; i < nd; i++)
    if (i != d) out[j++] = in[i];
  return 1;
}

static coo_map coo_map_of(mt_op op) {
  switch (op) {
  case MT_OP_transpose: return cm_transpose;
  case MT_OP_t: return cm_t;
  case MT_OP_unsqueeze: return cm_unsqueeze;
  case MT_OP_select: return cm_select;
  default: return NULL;
  }
}

/* A COO-storage masked input (data and mask with the same indices, no dense
 * dims): the op's view function checks the arguments and gives the output
 * shape; each entry's indices go through one map, and the data's and the
 * mask's values of the kept entries are copied alike, on ex. dv, mv: the
 * buffers entry e's data and mask values are read from (NULL: m's own; CSR
 * storage's, whose entries m holds in the same order). */
static mt_status coo_view_op(mt_call *call, const mt_tensor *m, mt_op opid, view_fn fn,
                             const mt_exec *ex, const void *dv, const void *mv, mt_error *err) {
  const char *op = mt_op_name(opid);
  const mt_host *h = mt__cpu_host(call);
  mt_tensor *data = NULL, *mask = NULL;
  coo_map map = coo_map_of(opid);
  int64_t *keep = NULL, in_idx[MT_MAX_DIMS], out_idx[MT_MAX_DIMS];
  st_view v;
  mt_status st;

  if ((st = mt_tensor_validate(m, "inputs/0", err)) != MT_OK) return st;
  const mt_tensor *d = m->data, *k = m->mask;
  if (d->dense_dim != 0 || k->kind != MT_KIND_COO || !mt__cpu_coo_same_indices(d, k))
    return mt_err(err, MT_NOT_SUPPORTED,
                  "%s: COO storage with dense dims or with different data and mask indices", op);
  st_view_init(&v, m->ndim, m->shape);
  if ((st = fn(call, op, &v, err)) != MT_OK) return st;
  if (opid == MT_OP_select && v.ndim == 0)
    return mt_err(err, MT_NOT_SUPPORTED, "%s: select of a 1-d COO tensor", op);
  keep = malloc((size_t)(d->nnz > 0 ? d->nnz : 1) * sizeof(int64_t));
  if (!keep) return mt_err(err, MT_OUT_OF_MEMORY, "%s: no memory", op);
  int64_t n = 0;
  for (int64_t e = 0; e < d->nnz; e++) {
    for (int i = 0; i < d->ndim; i++) in_idx[i] = d->indices[i * d->nnz + e];
    if (map(call, d->ndim, d->shape, in_idx, out_idx)) keep[n++] = e;
  }
  if ((st = h->coo_new(d->dtype, v.ndim, v.shape, v.ndim, n, &data, err)) != MT_OK) goto out;
  if ((st = h->coo_new(MT_bool, v.ndim, v.shape, v.ndim, n, &mask, err)) != MT_OK) goto out;
  for (int64_t j = 0; j < n; j++) {
    int64_t e = keep[j];
    for (int i = 0; i < d->ndim; i++) in_idx[i] = d->indices[i * d->nnz + e];
    map(call, d->ndim, d->shape, in_idx, out_idx);
    for (int i = 0; i < v.ndim; i++) data->indices[i * n + j] = mask->indices[i * n + j] = out_idx[i];
  }
  { /* the kept entries' data and mask values, one plan for both (STR-1) */
    int *src = calloc((size_t)(n > 0 ? n : 1), sizeof *src);
    const void *ds[1] = {dv ? dv : d->values}, *ms[1] = {mv ? mv : k->values};
    if (!src) {
      st = mt_err(err, MT_OUT_OF_MEMORY, "%s: no memory", op);
      goto out;
    }
    if ((st = sps_gather(ex, src, keep, n, 1, ds, mt_dtype_size(d->dtype), data->values, err)) ==
        MT_OK)
      st = sps_gather(ex, src, keep, n, 1, ms, 1, mask->values, err);
    free(src);
    if (st != MT_OK) goto out;
  }
  /* entry order: kept by unsqueeze and by select (of a coalesced input) */
  data->coalesced = mask->coalesced =
      d->coalesced && (opid == MT_OP_unsqueeze || opid == MT_OP_select ||
                       (opid == MT_OP_t && v.ndim < 2));
  st = set_out(call, &data, &mask, err);
out:
  free(keep);
  if (data) h->free(data);
  if (mask) h->free(mask);
  return st;
}

/* SP-4: select of CSR storage: torch gives COO data and mask (the row's or
 * the column's entries), as select of the same entries in COO storage. */
static mt_status csr_select(mt_call *call, view_fn fn, const mt_exec *ex, mt_error *err) {
  const mt_host *h = mt__cpu_host(call);
  const mt_tensor *m = call->in[0];
  mt_tensor *d = NULL, *k = NULL, *coo = NULL;
  mt_status st;
  if ((st = mt_tensor_validate(m, "inputs/0", err)) != MT_OK) return st;
  if (m->mask->kind != MT_KIND_CSR || !mt__cpu_csr_same_structure(m->data, m->mask))
    return mt_err(err, MT_NOT_SUPPORTED, "select: CSR data and mask of different structures");
  if ((st = mt__cpu_csr_to_coo(h, m->data, &d, err)) != MT_OK) goto out;
  if ((st = mt__cpu_csr_to_coo(h, m->mask, &k, err)) != MT_OK) goto out;
  st = h->masked_new(d, k, &coo, err);
  d = k = NULL; /* taken */
  /* the values straight from the CSR storage (mt__cpu_csr_to_coo keeps the
   * entries' order) */
  if (st == MT_OK)
    st = coo_view_op(call, coo, MT_OP_select, fn, ex, m->data->values, m->mask->values, err);
out:
  if (d) h->free(d);
  if (k) h->free(k);
  if (coo) h->free(coo);
  return st;
}

/* One view op on one masked input: build the view from the input's
 * contiguous view, then gather data and mask through it. */

static mt_status view_op(mt_call *call, mt_op opid, view_fn fn, const mt_exec *ex,
                         mt_error *err) {
  const char *op = mt_op_name(opid);
  const mt_host *h = mt__cpu_host(call);
  const mt_tensor *m = NULL;
  mt__cpu_mview mv = {0};
  st_plan plan = {0};
  st_view v;
  mt_status st;

  mt__cpu_begin(call);
  if ((st = mt__kw_check(opid, call->kw, err)) != MT_OK) return st;
  if (call->n_in > 0 && call->in && call->in[0] && call->in[0]->kind == MT_KIND_MASKED &&
      call->in[0]->data && call->in[0]->data->kind == MT_KIND_COO && coo_map_of(opid))
    return coo_view_op(call, call->in[0], opid, fn, ex, NULL, NULL, err);
  if (opid == MT_OP_select && call->n_in > 0 && call->in && call->in[0] &&
      call->in[0]->kind == MT_KIND_MASKED && call->in[0]->data &&
      call->in[0]->data->kind == MT_KIND_CSR)
    return csr_select(call, fn, ex, err);
  if ((st = masked_dense_input(call, 0, op, &m, &mv, err)) != MT_OK) goto out;
  st_view_init(&v, m->ndim, m->shape);
  if ((st = fn(call, op, &v, err)) != MT_OK) goto out;
  if ((st = st_plan_alloc(&plan, mt_shape_numel(v.ndim, v.shape), op, err)) != MT_OK) goto out;
  plan_view(&plan, 0, &v, 0);
  const void *ds[1] = {mv.data->values}, *ms[1] = {mv.mask->values};
  if ((st = gather_masked(h, ex, &plan, m->data->dtype, v.ndim, v.shape, ds, ms, &call->out[0],
                          err)) != MT_OK)
    goto out;
  call->n_out = 1;
out:
  st_plan_free(&plan);
  mt__cpu_mview_close(&mv);
  if (st != MT_OK) mt__cpu_drop_outputs(call);
  return st;
}

/* ---- the view ops (STR-1; argument errors STR-7) ----------------------- */

static mt_status v_select(const mt_call *call, const char *op, st_view *v, mt_error *err) {
  int64_t dim = mt_kw_int(call->kw, "dim", 0), index = mt_kw_int(call->kw, "index", 0);
  int d = 0;
  mt_status st;
  char sh[96];
  if (v->ndim == 0)
    return mt_err(err, MT_INDEX_OUT_OF_RANGE, "%s: select() cannot be applied to a 0-dim tensor.",
                  op);
  if ((st = st_wrap_dim(dim, v->ndim, op, &d, err)) != MT_OK) return st;
  int64_t n = v->shape[d];
  if (index < -n || index >= n)
    return mt_err(err, MT_INDEX_OUT_OF_RANGE,
                  "%s: select(): index %lld out of range for tensor of size %s at dimension %d",
                  op, (long long)index, mt_shape_str(v->ndim, v->shape, sh, sizeof sh), d);
  if (index < 0) index += n;
  v->offset += index * v->strides[d];
  st_view_drop(v, d);
  return MT_OK;
}

static mt_status v_slice(const mt_call *call, const char *op, st_view *v, mt_error *err) {
  int64_t dim = mt_kw_int(call->kw, "dim", 0), step = mt_kw_int(call->kw, "step", 1);
  int d = 0;
  mt_status st;
  if ((st = st_wrap_dim(dim, v->ndim, op, &d, err)) != MT_OK) return st;
  if (step <= 0) return mt_err(err, MT_INVALID_ARGUMENT, "%s: slice step must be positive", op);
  int64_t n = v->shape[d];
  int64_t start = st_clamp_pos(mt_kw_int(call->kw, "start", 0), n);
  int64_t end = st_clamp_pos(mt_kw_int(call->kw, "end", n), n);
  int64_t len = end > start ? (end - start + step - 1) / step : 0;
  v->offset += start * v->strides[d];
  v->shape[d] = len;
  v->strides[d] *= step;
  return MT_OK;
}

static mt_status v_transpose(const mt_call *call, const char *op, st_view *v, mt_error *err) {
  int a = 0, b = 0;
  mt_status st;
  if ((st = st_wrap_dim(mt_kw_int(call->kw, "dim0", 0), v->ndim, op, &a, err)) != MT_OK) return st;
  if ((st = st_wrap_dim(mt_kw_int(call->kw, "dim1", 0), v->ndim, op, &b, err)) != MT_OK) return st;
  if (v->ndim > 0) st_view_swap(v, a, b);
  return MT_OK;
}

static mt_status v_t(const mt_call *call, const char *op, st_view *v, mt_error *err) {
  (void)call;
  if (v->ndim > 2)
    return mt_err(err, MT_INVALID_ARGUMENT,
                  "%s: t() expects a tensor with <= 2 dimensions, but self is %dD", op, v->ndim);
  if (v->ndim == 2) st_view_swap(v, 0, 1);
  return MT_OK;
}

/* view and reshape of a contiguous tensor: the same new shape. */
static mt_status v_shape(const mt_call *call, const char *op, const char *kw, st_view *v,
                         mt_error *err) {
  int64_t shape[MT_MAX_DIMS];
  int n = 0;
  mt_status st;
  if ((st = st_kw_dims(call->kw, kw, op, shape, &n, err)) != MT_OK) return st;
  if ((st = st_infer_shape(op, mt_shape_numel(v->ndim, v->shape), shape, n, err)) != MT_OK)
    return st;
  int64_t off = v->offset;
  st_view_init(v, n, shape);
  v->offset = off;
  return MT_OK;
}
static mt_status v_view(const mt_call *call, const char *op, st_view *v, mt_error *err) {
  return v_shape(call, op, "size", v, err);
}
static mt_status v_reshape(const mt_call *call, const char *op, st_view *v, mt_error *err) {
  return v_shape(call, op, "shape", v, err);
}

static mt_status v_expand(const mt_call *call, const char *op, st_view *v, mt_error *err) {
  int64_t size[MT_MAX_DIMS];
  int n = 0;
  mt_status st;
  char a[96], b[96];
  if ((st = st_kw_dims(call->kw, "size", op, size, &n, err)) != MT_OK) return st;
  if (n < v->ndim)
    return mt_err(err, MT_SHAPE_MISMATCH,
                  "%s: the number of sizes provided (%d) must be greater or equal to the number "
                  "of dimensions in the tensor (%d)", op, n, v->ndim);
  st_view e = {.ndim = n, .offset = v->offset};
  int lead = n - v->ndim;
  for (int i = 0; i < n; i++) {
    if (i < lead) {
      if (size[i] < 0)
        return mt_err(err, MT_INVALID_ARGUMENT,
                      "%s: The expanded size of the tensor (%lld) isn't allowed in a leading, "
                      "non-existing dimension %d", op, (long long)size[i], i);
      e.shape[i] = size[i];
      e.strides[i] = 0;
      continue;
    }
    int64_t have = v->shape[i - lead];
    if (size[i] == -1) size[i] = have;
    if (size[i] == have) {
      e.shape[i] = have;
      e.strides[i] = v->strides[i - lead];
    } else if (have == 1 && size[i] >= 0) {
      e.shape[i] = size[i];
      e.strides[i] = 0;
    } else {
      return mt_err(err, MT_SHAPE_MISMATCH,
                    "%s: The expanded size of the tensor (%lld) must match the existing size "
                    "(%lld) at non-singleton dimension %d.  Target sizes: %s.  Tensor sizes: %s",
                    op, (long long)size[i], (long long)have, i, mt_shape_str(n, size, a, sizeof a),
                    mt_shape_str(v->ndim, v->shape, b, sizeof b));
    }
  }
  *v = e;
  return MT_OK;
}

static mt_status v_unsqueeze(const mt_call *call, const char *op, st_view *v, mt_error *err) {
  int d = 0;
  mt_status st;
  if (v->ndim >= MT_MAX_DIMS)
    return mt_err(err, MT_NOT_SUPPORTED, "%s: more than %d dims", op, MT_MAX_DIMS);
  if ((st = st_wrap_dim(mt_kw_int(call->kw, "dim", 0), v->ndim + 1, op, &d, err)) != MT_OK)
    return st;
  st_view_insert(v, d, 1, 0);
  return MT_OK;
}

static mt_status v_unfold(const mt_call *call, const char *op, st_view *v, mt_error *err) {
  int64_t dim = mt_kw_int(call->kw, "dimension", 0), size = mt_kw_int(call->kw, "size", 0),
          step = mt_kw_int(call->kw, "step", 1);
  int d = 0;
  mt_status st;
  if (v->ndim >= MT_MAX_DIMS)
    return mt_err(err, MT_NOT_SUPPORTED, "%s: more than %d dims", op, MT_MAX_DIMS);
  if ((st = st_wrap_dim(dim, v->ndim, op, &d, err)) != MT_OK) return st;
  int64_t n = v->ndim ? v->shape[d] : 1, stride = v->ndim ? v->strides[d] : 1;
  if (size > n)
    return mt_err(err, MT_SHAPE_MISMATCH,
                  "%s: maximum size for tensor at dimension %d is %lld but size is %lld", op, d,
                  (long long)n, (long long)size);
  if (size < 0)
    return mt_err(err, MT_INVALID_ARGUMENT, "%s: size is %lld but must be >= 0", op,
                  (long long)size);
  if (step <= 0)
    return mt_err(err, MT_INVALID_ARGUMENT, "%s: step is %lld but must be > 0", op,
                  (long long)step);
  if (v->ndim == 0) { /* a 0-d tensor unfolds into shape [size] */
    st_view_insert(v, 0, size, 0);
    return MT_OK;
  }
  v->shape[d] = (n - size) / step + 1;
  v->strides[d] = stride * step;
  st_view_insert(v, v->ndim, size, stride);
  return MT_OK;
}

static mt_status v_identity(const mt_call *call, const char *op, st_view *v, mt_error *err) {
  (void)call, (void)op, (void)v, (void)err;
  return MT_OK;
}

/* The geometry of view op opid's output over its input (v starts as the
 * input's contiguous view): the backward kernels (grad_structure.c)
 * scatter the upstream gradient back through the forward's own view. */
mt_status mt__cpu_view_geometry(mt_op opid, const mt_call *call, st_view *v, mt_error *err) {
  static const struct {
    mt_op op;
    view_fn fn;
  } views[] = {{MT_OP_select, v_select},       {MT_OP_slice, v_slice},
               {MT_OP_transpose, v_transpose}, {MT_OP_t, v_t},
               {MT_OP_view, v_view},           {MT_OP_reshape, v_reshape},
               {MT_OP_expand, v_expand},       {MT_OP_unsqueeze, v_unsqueeze},
               {MT_OP_unfold, v_unfold},       {MT_OP_contiguous, v_identity},
               {MT_OP_clone, v_identity}};
  for (size_t k = 0; k < sizeof views / sizeof views[0]; k++)
    if (views[k].op == opid) return views[k].fn(call, mt_op_name(opid), v, err);
  return mt_err(err, MT_INVALID_ARGUMENT, "%s is not a view op", mt_op_name(opid));
}

static mt_status select_run(mt_call *c, const mt_exec *ex, mt_error *e) {
  return view_op(c, MT_OP_select, v_select, ex, e);
}
static mt_status slice_run(mt_call *c, const mt_exec *ex, mt_error *e) {
  return view_op(c, MT_OP_slice, v_slice, ex, e);
}
static mt_status transpose_run(mt_call *c, const mt_exec *ex, mt_error *e) {
  if (mt__sps_call(c))
    return mt__sps_structure_run(c, MT_OP_transpose, ex, e);
  return view_op(c, MT_OP_transpose, v_transpose, ex, e);
}
static mt_status t_run(mt_call *c, const mt_exec *ex, mt_error *e) {
  if (mt__sps_call(c))
    return mt__sps_structure_run(c, MT_OP_t, ex, e);
  return view_op(c, MT_OP_t, v_t, ex, e);
}
static mt_status view_run(mt_call *c, const mt_exec *ex, mt_error *e) {
  return view_op(c, MT_OP_view, v_view, ex, e);
}
static mt_status reshape_run(mt_call *c, const mt_exec *ex, mt_error *e) {
  if (mt__sps_call(c))
    return mt__sps_structure_run(c, MT_OP_reshape, ex, e);
  return view_op(c, MT_OP_reshape, v_reshape, ex, e);
}
static mt_status expand_run(mt_call *c, const mt_exec *ex, mt_error *e) {
  return view_op(c, MT_OP_expand, v_expand, ex, e);
}
static mt_status unsqueeze_run(mt_call *c, const mt_exec *ex, mt_error *e) {
  if (mt__sps_call(c))
    return mt__sps_structure_run(c, MT_OP_unsqueeze, ex, e);
  return view_op(c, MT_OP_unsqueeze, v_unsqueeze, ex, e);
}
static mt_status unfold_run(mt_call *c, const mt_exec *ex, mt_error *e) {
  return view_op(c, MT_OP_unfold, v_unfold, ex, e);
}

/* contiguous (STR-1, STR-6): a copy; COO storage refused as torch does. */
static mt_status contiguous_run(mt_call *c, const mt_exec *ex, mt_error *e) {
  const mt_tensor *m = NULL;
  mt__cpu_begin(c);
  if (mt__cpu_input(c, 0, "contiguous", &m, e) == MT_OK && m->kind == MT_KIND_MASKED &&
      m->data && m->data->kind == MT_KIND_COO)
    return mt_err(e, MT_LAYOUT_MISMATCH,
                  "contiguous: MaskedTensors with sparse data do not have contiguous (inputs/0 "
                  "has COO storage)");
  if (m && csr_refused(m, "contiguous", "inputs/0", e) != MT_OK) return MT_LAYOUT_MISMATCH;
  return view_op(c, MT_OP_contiguous, v_identity, ex, e);
}

/* ---- index (STR-1): m[idx] along dim 0 ----------------------------------- */

static mt_status index_run(mt_call *call, const mt_exec *ex, mt_error *err) {
  static const char *op = "index";
  const mt_host *h = mt__cpu_host(call);
  const mt_tensor *m = NULL, *idx = NULL;
  mt__cpu_mview mv = {0};
  mt_tensor *ic = NULL;
  st_plan plan = {0};
  mt_status st;
  int64_t shape[MT_MAX_DIMS];
  int ndim;

  mt__cpu_begin(call);
  if ((st = mt__kw_check(MT_OP_index, call->kw, err)) != MT_OK) return st;
  if ((st = masked_dense_input(call, 0, op, &m, &mv, err)) != MT_OK) goto out;
  if ((st = mt__cpu_input(call, 1, op, &idx, err)) != MT_OK) goto out;
  if (idx->kind != MT_KIND_DENSE || !(mt__cpu_is_int(idx->dtype) || idx->dtype == MT_bool)) {
    st = mt_err(err, MT_INVALID_ARGUMENT,
                "%s: inputs/1 (indices) must be a dense integer or bool tensor, got %s %s", op,
                mt_kind_name(idx->kind), mt_dtype_name(idx->dtype));
    goto out;
  }
  if (m->ndim == 0) {
    st = mt_err(err, MT_INDEX_OUT_OF_RANGE, "%s: too many indices for tensor of dimension 0", op);
    goto out;
  }
  if ((st = mt_tensor_validate(idx, "inputs/1", err)) != MT_OK) goto out;
  if ((st = mt__cpu_contig(idx, &idx, &ic, err)) != MT_OK) goto out;
  int64_t rows = m->shape[0], inner = mt_shape_numel(m->ndim - 1, m->shape + 1);
  int64_t ni = mt_numel(idx), nsel = ni;
  int lead = 1; /* the dims of m the index spans */
  if (idx->dtype == MT_bool) {
    /* a bool index of k dims selects its true positions over m's first k
     * dims (row-major), `m[m.get_mask()]` included: the result has one dim
     * for them, then m's other dims */
    lead = idx->ndim;
    if (lead == 0) {
      st = mt_err(err, MT_NOT_SUPPORTED, "%s: a 0-d bool index (m[True]) is not supported", op);
      goto out;
    }
    for (int d = 0; d < lead; d++)
      if (d >= m->ndim || idx->shape[d] != m->shape[d]) {
        st = mt_err(err, MT_INDEX_OUT_OF_RANGE,
                    "%s: The shape of the mask [%lld] at index %d does not match the shape of "
                    "the indexed tensor [%lld] at index %d", op, (long long)idx->shape[d], d,
                    (long long)(d < m->ndim ? m->shape[d] : 0), d);
        goto out;
      }
    inner = mt_shape_numel(m->ndim - lead, m->shape + lead);
    nsel = 0;
    for (int64_t k = 0; k < ni; k++) nsel += mt__cpu_ldb(idx->values, k);
    ndim = m->ndim - lead + 1;
    shape[0] = nsel;
  } else {
    if (idx->ndim + m->ndim - 1 > MT_MAX_DIMS) {
      st = mt_err(err, MT_NOT_SUPPORTED, "%s: more than %d dims", op, MT_MAX_DIMS);
      goto out;
    }
    ndim = idx->ndim + m->ndim - 1;
    memcpy(shape, idx->shape, (size_t)idx->ndim * sizeof(int64_t));
  }
  memcpy(shape + ndim - (m->ndim - lead), m->shape + lead,
         (size_t)(m->ndim - lead) * sizeof(int64_t));
  if ((st = st_plan_alloc(&plan, nsel * inner, op, err)) != MT_OK) goto out;
  int64_t at = 0;
  for (int64_t k = 0; k < ni; k++) {
    int64_t r;
    if (idx->dtype == MT_bool) {
      if (!mt__cpu_ldb(idx->values, k)) continue;
      r = k;
    } else {
      r = mt__cpu_ldi(idx->values, idx->dtype, k);
      if (r < -rows || r >= rows) {
        st = mt_err(err, MT_INDEX_OUT_OF_RANGE,
                    "%s: index %lld is out of bounds for dimension 0 with size %lld", op,
                    (long long)r, (long long)rows);
        goto out;
      }
      if (r < 0) r += rows;
    }
    for (int64_t j = 0; j < inner; j++, at++) {
      plan.src[at] = 0;
      plan.off[at] = r * inner + j;
    }
  }
  const void *ds[1] = {mv.data->values}, *ms[1] = {mv.mask->values};
  if ((st = gather_masked(h, ex, &plan, m->data->dtype, ndim, shape, ds, ms, &call->out[0], err)) !=
      MT_OK)
    goto out;
  call->n_out = 1;
out:
  st_plan_free(&plan);
  mt_tensor_free(ic);
  mt__cpu_mview_close(&mv);
  if (st != MT_OK) mt__cpu_drop_outputs(call);
  return st;
}

/* ---- split, cat, stack (STR-2) -------------------------------------------- */

static mt_status split_run(mt_call *call, const mt_exec *ex, mt_error *err) {
  static const char *op = "split";
  const mt_host *h = mt__cpu_host(call);
  const mt_tensor *m = NULL;
  mt__cpu_mview mv = {0};
  st_plan plan = {0};
  mt_status st;
  int d = 0;

  mt__cpu_begin(call);
  if ((st = mt__kw_check(MT_OP_split, call->kw, err)) != MT_OK) return st;
  const mt_kwarg *sz = mt_kw_find(call->kw, "split_size_or_sections");
  if (!sz)
    return mt_err(err, MT_INVALID_ARGUMENT, "%s: kwargs/split_size_or_sections is required", op);
  if (sz->type == MT_KW_INTS)
    /* torch: split_with_sizes is not a MaskedTensor passthrough op */
    return mt_err(err, MT_LAYOUT_MISMATCH,
                  "%s: MaskedTensor has no split_with_sizes (a list of sizes): torch's "
                  "__torch_dispatch__ handlers returned NotImplemented", op);
  if ((st = masked_dense_input(call, 0, op, &m, &mv, err)) != MT_OK) goto out;
  if (m->ndim == 0) {
    st = mt_err(err, MT_INVALID_ARGUMENT, "%s: split expects at least a 1-dimensional tensor", op);
    goto out;
  }
  if ((st = st_wrap_dim(mt_kw_int(call->kw, "dim", 0), m->ndim, op, &d, err)) != MT_OK) goto out;
  int64_t size = sz->i, n = m->shape[d];
  if (size < 0) {
    st = mt_err(err, MT_INVALID_ARGUMENT,
                "%s: split expects split_size be non-negative, but got split_size=%lld", op,
                (long long)size);
    goto out;
  }
  if (size == 0 && n != 0) {
    st = mt_err(err, MT_INVALID_ARGUMENT,
                "%s: split_size can only be 0 if dimension size is 0, but got dimension size of "
                "%lld", op, (long long)n);
    goto out;
  }
  int64_t chunks = size == 0 ? 1 : (n + size - 1) / size;
  if (chunks == 0) chunks = 1; /* torch: one empty chunk for a size-0 dim */
  if (chunks > MT_MAX_OUTPUTS) {
    st = mt_err(err, MT_NOT_SUPPORTED, "%s: %lld chunks; at most %d outputs are supported", op,
                (long long)chunks, MT_MAX_OUTPUTS);
    goto out;
  }
  const void *ds[1] = {mv.data->values}, *ms[1] = {mv.mask->values};
  for (int64_t k = 0; k < chunks; k++) {
    st_view v;
    st_view_init(&v, m->ndim, m->shape);
    int64_t start = k * size, len = n - start < size ? n - start : size;
    v.offset = start * v.strides[d];
    v.shape[d] = len;
    st_plan_free(&plan);
    if ((st = st_plan_alloc(&plan, mt_shape_numel(v.ndim, v.shape), op, err)) != MT_OK) goto out;
    plan_view(&plan, 0, &v, 0);
    if ((st = gather_masked(h, ex, &plan, m->data->dtype, v.ndim, v.shape, ds, ms, &call->out[k],
                            err)) != MT_OK)
      goto out;
    call->n_out = (int)k + 1;
  }
out:
  st_plan_free(&plan);
  mt__cpu_mview_close(&mv);
  if (st != MT_OK) mt__cpu_drop_outputs(call);
  return st;
}

/* cat/stack of COO-storage masked inputs (shapes checked by the caller):
 * every entry of input k, its index along d moved by the sizes of the
 * inputs before it (stack: a new index d = k); data and mask entries move
 * alike. */
static mt_status coo_cat(mt_call *call, int d, int stack, int ndim, const int64_t *shape,
                         const mt_exec *ex, mt_error *err) {
  const mt_host *h = mt__cpu_host(call);
  mt_tensor *data = NULL, *mask = NULL;
  mt_dtype dt = call->in[0]->data->dtype;
  int64_t nnz = 0, at = 0, base = 0, *goff = NULL;
  int *gsrc = NULL;
  const void *ds[ST_MAX_INPUTS], *ms[ST_MAX_INPUTS];
  mt_status st;
  for (int k = 0; k < call->n_in; k++) nnz += call->in[k]->data->nnz;
  if ((st = h->coo_new(dt, ndim, shape, ndim, nnz, &data, err)) != MT_OK) goto out;
  if ((st = h->coo_new(MT_bool, ndim, shape, ndim, nnz, &mask, err)) != MT_OK) goto out;
  gsrc = malloc((size_t)(nnz > 0 ? nnz : 1) * sizeof *gsrc);
  goff = malloc((size_t)(nnz > 0 ? nnz : 1) * sizeof *goff);
  if (!gsrc || !goff) {
    st = mt_err(err, MT_OUT_OF_MEMORY, "%s: no memory", stack ? "stack" : "cat");
    goto out;
  }
  for (int k = 0; k < call->n_in; k++) {
    const mt_tensor *x = call->in[k]->data, *xm = call->in[k]->mask;
    ds[k] = x->values;
    ms[k] = xm->values;
    for (int64_t e = 0; e < x->nnz; e++, at++) {
      for (int i = 0, j = 0; i < ndim; i++) {
        int64_t idx;
        if (stack && i == d)
          idx = k;
        else
          idx = x->indices[(j++) * x->nnz + e] + (!stack && i == d ? base : 0);
        data->indices[i * nnz + at] = mask->indices[i * nnz + at] = idx;
      }
      gsrc[at] = k;
      goff[at] = e;
    }
    if (!stack) base += x->shape[d];
  }
  /* data and mask values through one plan, on ex (STR-1) */
  if ((st = sps_gather(ex, gsrc, goff, nnz, call->n_in, ds, mt_dtype_size(dt), data->values,
                       err)) != MT_OK ||
      (st = sps_gather(ex, gsrc, goff, nnz, call->n_in, ms, 1, mask->values, err)) != MT_OK)
    goto out;
  data->coalesced = mask->coalesced = 0;
  st = set_out(call, &data, &mask, err);
out:
  free(gsrc);
  free(goff);
  if (data) h->free(data);
  if (mask) h->free(mask);
  return st;
}

/* cat of views (stack: each input's view unsqueezed first) along dim d. */
static mt_status cat_views(mt_call *call, mt_op opid, int stack, const mt_exec *ex,
                           mt_error *err) {
  const char *op = mt_op_name(opid);
  const mt_host *h = mt__cpu_host(call);
  mt__cpu_mview mv[ST_MAX_INPUTS];
  st_view v[ST_MAX_INPUTS];
  const void *ds[ST_MAX_INPUTS], *ms[ST_MAX_INPUTS];
  st_plan plan = {0};
  mt_status st;
  int n = call->n_in, d = 0, coo = 0;
  char a[96], b[96];

  memset(mv, 0, sizeof mv);
  mt__cpu_begin(call);
  if ((st = mt__kw_check(opid, call->kw, err)) != MT_OK) return st;
  if (n < 1 || n > ST_MAX_INPUTS)
    return mt_err(err, n < 1 ? MT_INVALID_ARGUMENT : MT_NOT_SUPPORTED,
                  "%s: expected 1 to %d tensors, got %d", op, ST_MAX_INPUTS, n);
  for (int k = 0; k < n; k++) {
    const mt_tensor *x = NULL;
    if ((st = mt__cpu_input(call, k, op, &x, err)) != MT_OK) goto out;
    if (x->kind == MT_KIND_DENSE && x->dtype != MT_bool) {
      /* torch wraps a plain tensor as MaskedTensor(x, x): its mask is x */
      st = mt_err(err, MT_DTYPE_MISMATCH,
                  "%s: inputs/%d is a plain %s tensor; MaskedTensor takes it as its own mask: "
                  "mask must have dtype bool.", op, k, mt_dtype_name(x->dtype));
      goto out;
    }
    int is_coo = x->kind == MT_KIND_MASKED && x->data && x->data->kind == MT_KIND_COO;
    if (k == 0) coo = is_coo;
    if (is_coo != coo) {
      st = mt_err(err, MT_NOT_SUPPORTED, "%s: inputs of dense and COO storage together", op);
      goto out;
    }
    if (coo) {
      char name[32];
      if ((st = mt_tensor_validate(x, mt__cpu_in_name(k, name, sizeof name), err)) != MT_OK)
        goto out;
      if (x->data->dense_dim != 0 || !mt__cpu_coo_same_indices(x->data, x->mask)) {
        st = mt_err(err, MT_NOT_SUPPORTED,
                    "%s: COO storage with dense dims or with different data and mask indices", op);
        goto out;
      }
    } else if ((st = masked_dense_input(call, k, op, &x, &mv[k], err)) != MT_OK) {
      goto out;
    }
    if (x->data->dtype != call->in[0]->data->dtype) {
      st = mt_err(err, MT_NOT_SUPPORTED, "%s: inputs of different dtypes (%s, %s)", op,
                  mt_dtype_name(call->in[0]->data->dtype), mt_dtype_name(x->data->dtype));
      goto out;
    }
    st_view_init(&v[k], x->ndim, x->shape);
    ds[k] = coo ? NULL : mv[k].data->values;
    ms[k] = coo ? NULL : mv[k].mask->values;
  }
  int ndim = v[0].ndim + (stack ? 1 : 0);
  if (ndim > MT_MAX_DIMS || (!stack && ndim == 0)) {
    st = mt_err(err, ndim ? MT_NOT_SUPPORTED : MT_INVALID_ARGUMENT,
                "%s: zero-dimensional tensor (at position 0) cannot be concatenated", op);
    goto out;
  }
  if ((st = st_wrap_dim(mt_kw_int(call->kw, "dim", 0), ndim, op, &d, err)) != MT_OK) goto out;
  for (int k = 0; k < n; k++) {
    if (stack) {
      if (!st_view_same_shape(&v[k], &v[0])) {
        st = mt_err(err, MT_SHAPE_MISMATCH,
                    "%s: stack expects each tensor to be equal size, but got %s at entry 0 and "
                    "%s at entry %d", op, mt_shape_str(v[0].ndim, v[0].shape, a, sizeof a),
                    mt_shape_str(v[k].ndim, v[k].shape, b, sizeof b), k);
        goto out;
      }
      continue;
    }
    /* torch's cat skips legacy 1-d empty tensors of shape [0] */
    if (v[k].ndim != v[0].ndim) {
      st = mt_err(err, MT_SHAPE_MISMATCH,
                  "%s: Tensors must have same number of dimensions: got %d and %d", op, v[0].ndim,
                  v[k].ndim);
      goto out;
    }
    for (int i = 0; i < ndim; i++)
      if (i != d && v[k].shape[i] != v[0].shape[i]) {
        st = mt_err(err, MT_SHAPE_MISMATCH,
                    "%s: Sizes of tensors must match except in dimension %d. Expected size %lld "
                    "but got size %lld for tensor number %d in the list.", op, d,
                    (long long)v[0].shape[i], (long long)v[k].shape[i], k);
        goto out;
      }
  }
  if (stack)
    for (int k = 0; k < n; k++) st_view_insert(&v[k], d, 1, 0);
  /* the output: v[0]'s shape with dim d the sum of the inputs' */
  int64_t shape[MT_MAX_DIMS];
  memcpy(shape, v[0].shape, sizeof shape);
  shape[d] = 0;
  for (int k = 0; k < n; k++) shape[d] += v[k].shape[d];
  if (coo) {
    st = coo_cat(call, d, stack, ndim, shape, ex, err);
    goto out;
  }
  if ((st = st_plan_alloc(&plan, mt_shape_numel(ndim, shape), op, err)) != MT_OK) goto out;
  /* row-major output: for each outer index (dims before d), each input's
   * block [shape[d] x inner] in turn */
  int64_t outer = mt_shape_numel(d, shape), at = 0;
  for (int64_t o = 0; o < outer; o++)
    for (int k = 0; k < n; k++) {
      st_view blk = v[k];
      int64_t rem = o;
      for (int i = d - 1; i >= 0; i--) { /* fix the outer dims at o */
        blk.offset += (rem % blk.shape[i]) * blk.strides[i];
        rem /= blk.shape[i];
        blk.shape[i] = 1;
      }
      plan_view(&plan, at, &blk, k);
      at += mt_shape_numel(blk.ndim, blk.shape);
    }
  if ((st = gather_masked(h, ex, &plan, call->in[0]->data->dtype, ndim, shape, ds, ms,
                          &call->out[0], err)) != MT_OK)
    goto out;
  call->n_out = 1;
out:
  st_plan_free(&plan);
  for (int k = 0; k < n && k < ST_MAX_INPUTS; k++) mt__cpu_mview_close(&mv[k]);
  if (st != MT_OK) mt__cpu_drop_outputs(call);
  return st;
}

static mt_status cat_run(mt_call *c, const mt_exec *ex, mt_error *e) {
  if (mt__sps_call(c))
    return mt__sps_structure_run(c, MT_OP_cat, ex, e);
  return cat_views(c, MT_OP_cat, 0, ex, e);
}
static mt_status stack_run(mt_call *c, const mt_exec *ex, mt_error *e) {
  return cat_views(c, MT_OP_stack, 1, ex, e);
}

/* ---- where (STR-3) -------------------------------------------------------- */

/* A where operand: a masked tensor, a plain dense tensor or a number. Plain
 * operands are fully specified: torch wraps them as MaskedTensor(x,
 * ones_like(x, dtype=bool)); here they get an all-true mask of their own
 * size, so the one plan indexes their data and mask alike. */
typedef struct {
  mt__cpu_mview mv;
  mt_tensor *tmp_data, *tmp_mask;
  const void *data, *mask;
  st_view view;
  double number; /* kind SCALAR: the value, stored once the dtype is known */
  int is_number;
} where_arg;

static void where_close(where_arg *w) {
  mt__cpu_mview_close(&w->mv);
  mt_tensor_free(w->tmp_data);
  mt_tensor_free(w->tmp_mask);
}

static mt_status where_open(const mt_call *call, int i, where_arg *w, mt_dtype *dt,
                            mt_error *err) {
  const mt_tensor *x = NULL;
  mt_status st;
  if ((st = mt__cpu_input(call, i, "where", &x, err)) != MT_OK) return st;
  if (x->kind == MT_KIND_MASKED) {
    if ((st = masked_dense_input(call, i, "where", &x, &w->mv, err)) != MT_OK) return st;
    w->data = w->mv.data->values;
    w->mask = w->mv.mask->values;
    st_view_init(&w->view, x->ndim, x->shape);
    *dt = x->data->dtype;
    return MT_OK;
  }
  if (x->kind == MT_KIND_DENSE) {
    if ((st = mt_tensor_validate(x, "where operand", err)) != MT_OK) return st;
    if ((st = mt_tensor_clone(x, &w->tmp_data, err)) != MT_OK) return st;
    st_view_init(&w->view, x->ndim, x->shape);
    *dt = x->dtype;
  } else if (x->kind == MT_KIND_SCALAR) {
    w->is_number = 1;
    w->number = mt_get_f64(x->values, x->dtype, 0);
    st_view_init(&w->view, 0, NULL);
    *dt = MT_DTYPE__COUNT; /* the other operand's */
    return MT_OK;
  } else {
    return mt_err(err, MT_NOT_SUPPORTED, "where: inputs/%d has kind %s", i, mt_kind_name(x->kind));
  }
  if ((st = mt_dense_new(MT_bool, w->view.ndim, w->view.shape, &w->tmp_mask, err)) != MT_OK)
    return st;
  memset(w->tmp_mask->values, 1, (size_t)mt_numel(w->tmp_mask));
  w->data = w->tmp_data->values;
  w->mask = w->tmp_mask->values;
  return MT_OK;
}

/* A number operand as one element of dtype dt with a true mask. */
static mt_status where_number(where_arg *w, mt_dtype dt, mt_error *err) {
  mt_status st;
  if ((st = mt_dense_new(dt, 0, NULL, &w->tmp_data, err)) != MT_OK) return st;
  if ((st = mt_dense_new(MT_bool, 0, NULL, &w->tmp_mask, err)) != MT_OK) return st;
  mt__cpu_st(w->tmp_data->values, dt, 0, w->number);
  ((uint8_t *)w->tmp_mask->values)[0] = 1;
  w->data = w->tmp_data->values;
  w->mask = w->tmp_mask->values;
  return MT_OK;
}

static mt_status where_run(mt_call *call, const mt_exec *ex, mt_error *err) {
  static const char *op = "where";
  const mt_host *h = mt__cpu_host(call);
  const mt_tensor *cond = NULL;
  mt_tensor *cc = NULL;
  where_arg w[2];
  st_plan plan = {0};
  st_view cv;
  mt_dtype dt[2];
  mt_status st;
  int64_t shape[MT_MAX_DIMS];
  int ndim = 0;

  memset(w, 0, sizeof w);
  mt__cpu_begin(call);
  if ((st = mt__kw_check(MT_OP_where, call->kw, err)) != MT_OK) return st;
  if ((st = mt__cpu_input(call, 0, op, &cond, err)) != MT_OK) return st;
  if (cond->kind != MT_KIND_DENSE || cond->dtype != MT_bool)
    return mt_err(err, MT_NOT_SUPPORTED,
                  "%s: inputs/0 (condition) must be a dense bool tensor, got %s %s", op,
                  mt_kind_name(cond->kind), mt_dtype_name(cond->dtype));
  if ((st = mt_tensor_validate(cond, "inputs/0", err)) != MT_OK) return st;
  if ((st = mt__cpu_contig(cond, &cond, &cc, err)) != MT_OK) goto out;
  for (int k = 0; k < 2; k++)
    if ((st = where_open(call, k + 1, &w[k], &dt[k], err)) != MT_OK) goto out;
  if (dt[0] == MT_DTYPE__COUNT && dt[1] == MT_DTYPE__COUNT) {
    st = mt_err(err, MT_NOT_SUPPORTED, "%s: both branches are numbers", op);
    goto out;
  }
  mt_dtype out_dt = dt[0] == MT_DTYPE__COUNT ? dt[1] : dt[0];
  for (int k = 0; k < 2; k++) {
    if (w[k].is_number && (st = where_number(&w[k], out_dt, err)) != MT_OK) goto out;
    if (dt[k] != MT_DTYPE__COUNT && dt[k] != out_dt) {
      st = mt_err(err, MT_NOT_SUPPORTED, "%s: branches of different dtypes (%s, %s)", op,
                  mt_dtype_name(dt[0]), mt_dtype_name(dt[1]));
      goto out;
    }
  }
  /* broadcast condition, x and y to one shape (torch.where broadcasts all three) */
  st_view_init(&cv, cond->ndim, cond->shape);
  const st_view *vs[3] = {&cv, &w[0].view, &w[1].view};
  if ((st = st_broadcast_shape(op, vs, 3, shape, &ndim, err)) != MT_OK) goto out;
  st_view_broadcast(&cv, ndim, shape);
  st_view_broadcast(&w[0].view, ndim, shape);
  st_view_broadcast(&w[1].view, ndim, shape);
  int64_t n = mt_shape_numel(ndim, shape);
  if ((st = st_plan_alloc(&plan, n, op, err)) != MT_OK) goto out;
  /* the plan for each branch, then the condition picks source 0 or 1 */
  st_plan px = {0}, py = {0}, pc = {0};
  if ((st = st_plan_alloc(&px, n, op, err)) != MT_OK ||
      (st = st_plan_alloc(&py, n, op, err)) != MT_OK ||
      (st = st_plan_alloc(&pc, n, op, err)) != MT_OK) {
    st_plan_free(&px), st_plan_free(&py), st_plan_free(&pc);
    goto out;
  }
  plan_view(&px, 0, &w[0].view, 0);
  plan_view(&py, 0, &w[1].view, 1);
  plan_view(&pc, 0, &cv, 0);
  for (int64_t i = 0; i < n; i++) {
    int pick = mt__cpu_ldb(cond->values, pc.off[i]);
    plan.src[i] = pick ? 0 : 1;
    plan.off[i] = pick ? px.off[i] : py.off[i];
  }
  st_plan_free(&px), st_plan_free(&py), st_plan_free(&pc);
  const void *ds[2] = {w[0].data, w[1].data}, *ms[2] = {w[0].mask, w[1].mask};
  if ((st = gather_masked(h, ex, &plan, out_dt, ndim, shape, ds, ms, &call->out[0], err)) != MT_OK)
    goto out;
  call->n_out = 1;
out:
  st_plan_free(&plan);
  where_close(&w[0]);
  where_close(&w[1]);
  mt_tensor_free(cc);
  if (st != MT_OK) mt__cpu_drop_outputs(call);
  return st;
}

/* ---- data-only ops (STR-4) ------------------------------------------------ */

/* clone, detach: new copies of data and mask (dense or COO storage). */
static mt_status copy_both(mt_call *call, mt_op opid, const mt_exec *ex, mt_error *err) {
  const char *op = mt_op_name(opid);
  const mt_host *h = mt__cpu_host(call);
  const mt_tensor *m = NULL;
  mt_tensor *data = NULL, *mask = NULL;
  mt_status st;
  mt__cpu_begin(call);
  if ((st = mt__kw_check(opid, call->kw, err)) != MT_OK) return st;
  if ((st = mt__cpu_input(call, 0, op, &m, err)) != MT_OK) return st;
  if (m->kind != MT_KIND_MASKED)
    return mt_err(err, MT_NOT_SUPPORTED, "%s: inputs/0 has kind %s; expected a masked tensor",
                  op, mt_kind_name(m->kind));
  if ((st = mt_tensor_validate(m, "inputs/0", err)) != MT_OK) return st;
  if (ex != &mt_cpu_exec) {
    /* dense storage: the identity gather on the device; COO/compressed:
     * indices on the host, values through the gather (sps_clone) */
    if (m->data->kind == MT_KIND_DENSE && m->mask->kind == MT_KIND_DENSE)
      return view_op(call, opid, v_identity, ex, err);
    if (!mt__sps_is_plain(m->data) || !mt__sps_is_plain(m->mask))
      return gap(ex, op, "a copy of sparse storage", err);
    if ((st = sps_clone(h, ex, m->data, &data, err)) != MT_OK) goto out;
    if ((st = sps_clone(h, ex, m->mask, &mask, err)) != MT_OK) goto out;
    st = set_out(call, &data, &mask, err);
    goto out;
  }
  if ((st = mt_tensor_clone_host(h, m->data, &data, err)) != MT_OK) goto out; /* any storage */
  if ((st = mt_tensor_clone_host(h, m->mask, &mask, err)) != MT_OK) goto out;
  st = set_out(call, &data, &mask, err);
out:
  if (data) h->free(data);
  if (mask) h->free(mask);
  return st;
}
static mt_status clone_run(mt_call *c, const mt_exec *ex, mt_error *e) {
  if (mt__sps_call(c))
    return mt__sps_structure_run(c, MT_OP_clone, ex, e);
  return copy_both(c, MT_OP_clone, ex, e);
}
static mt_status detach_run(mt_call *c, const mt_exec *ex, mt_error *e) {
  return copy_both(c, MT_OP_detach, ex, e);
}

/* ones_like on another backend's gather: the data gathered from one
 * element holding 1 (a number made a 0-d tensor of the dtype on the host,
 * as torch wraps a Python number), the mask by the identity plan. */
static mt_status ones_like_gather(mt_call *call, const mt_exec *ex, const mt_tensor *m,
                                  const mt__cpu_mview *mv, mt_error *err) {
  const mt_host *h = mt__cpu_host(call);
  mt_tensor *data = NULL, *mask = NULL;
  st_plan one = {0}, id = {0};
  int64_t n = mt_numel(m), len1 = 1, lenn = n;
  unsigned char v1[8];
  mt_status st;
  if (!ex->gather) return gap(ex, "ones_like", "a fill", err);
  mt__cpu_sti(v1, m->data->dtype, 0, 1);
  if ((st = st_plan_alloc(&one, n, "ones_like", err)) != MT_OK) return st;
  if ((st = st_plan_alloc(&id, n, "ones_like", err)) != MT_OK) goto out;
  for (int64_t i = 0; i < n; i++) {
    one.src[i] = id.src[i] = 0;
    one.off[i] = 0;
    id.off[i] = i;
  }
  if ((st = mt__cpu_new_masked_dense(h, m->data->dtype, m->ndim, m->shape, &call->out[0], &data,
                                     &mask, err)) != MT_OK)
    goto out;
  const void *s1[1] = {v1}, *sm[1] = {mv->mask->values};
  if (n > 0 && ((st = ex->gather(one.src, one.off, n, 1, s1, &len1,
                                 mt_dtype_size(m->data->dtype), data->values, err)) != MT_OK ||
                (st = ex->gather(id.src, id.off, n, 1, sm, &lenn, 1, mask->values, err)) != MT_OK))
    goto out;
  call->n_out = 1;
out:
  st_plan_free(&one);
  st_plan_free(&id);
  return st;
}

/* SP-4 on another backend: CSR storage's structure and mask's structure
 * kept (host bookkeeping), every stored data value gathered from one
 * element holding 1, the mask's values by the identity gather. */
static mt_status ones_like_csr(mt_call *call, const mt_exec *ex, const mt_tensor *m,
                               mt_error *err) {
  const mt_host *h = mt__cpu_host(call);
  mt_tensor *data = NULL, *mask = NULL;
  mt_cgeom gd = {0}, gm = {0};
  unsigned char v1[8];
  mt_status st;
  if (!mt_cgeom_of(m->data, &gd) || !mt_cgeom_of(m->mask, &gm))
    return mt_err(err, MT_INVALID_ARGUMENT, "ones_like: inconsistent CSR geometry");
  mt__cpu_sti(v1, m->data->dtype, 0, 1);
  if ((st = mt__cpu_compressed_like(h, m->data, m->data->dtype, &data, err)) != MT_OK) goto out;
  if ((st = mt__cpu_compressed_like(h, m->mask, MT_bool, &mask, err)) != MT_OK) goto out;
  int64_t nd = gd.batches * gd.nnz * gd.entry, nm = gm.batches * gm.nnz * gm.entry;
  if ((st = gather_one(ex, NULL, nd, v1, 1, mt_dtype_size(data->dtype), data->values, "ones_like",
                       err)) != MT_OK)
    goto out;
  if ((st = gather_one(ex, NULL, nm, m->mask->values, nm, 1, mask->values, "ones_like", err)) !=
      MT_OK)
    goto out;
  return set_out(call, &data, &mask, err);
out:
  if (data) h->free(data);
  if (mask) h->free(mask);
  return st;
}

/* ones_like: data all ones (masked-out elements too), the input's mask. */
static mt_status ones_like_run(mt_call *call, const mt_exec *ex, mt_error *err) {
  static const char *op = "ones_like";
  const mt_host *h = mt__cpu_host(call);
  const mt_tensor *m = NULL;
  mt__cpu_mview mv = {0};
  mt_tensor *data = NULL, *mask = NULL;
  mt_status st;
  mt__cpu_begin(call);
  if ((st = mt__kw_check(MT_OP_ones_like, call->kw, err)) != MT_OK) return st;
  if (mt__cpu_input(call, 0, op, &m, err) == MT_OK && m->kind == MT_KIND_MASKED && m->data &&
      m->data->kind == MT_KIND_CSR) {
    /* SP-4: CSR storage: every stored value 1, the structure and mask kept */
    if ((st = mt_tensor_validate(m, "inputs/0", err)) != MT_OK) return st;
    if (ex != &mt_cpu_exec) return ones_like_csr(call, ex, m, err);
    if ((st = mt__cpu_compressed_like(h, m->data, m->data->dtype, &data, err)) != MT_OK) return st;
    for (int64_t i = 0; i < data->nnz; i++) mt__cpu_sti(data->values, data->dtype, i, 1);
    if ((st = mt_tensor_clone_host(h, m->mask, &mask, err)) != MT_OK) {
      h->free(data);
      return st;
    }
    return set_out(call, &data, &mask, err);
  }
  if ((st = masked_dense_input(call, 0, op, &m, &mv, err)) != MT_OK) goto out;
  if (ex != &mt_cpu_exec) {
    st = ones_like_gather(call, ex, m, &mv, err);
    goto out;
  }
  mt_dtype dt = m->data->dtype;
  if ((st = mt__cpu_new_masked_dense(h, dt, m->ndim, m->shape, &call->out[0], &data, &mask,
                                     err)) != MT_OK)
    goto out;
  for (int64_t i = 0; i < mt_numel(data); i++) mt__cpu_sti(data->values, dt, i, 1);
  memcpy(mask->values, mv.mask->values, (size_t)mt_numel(mask));
  call->n_out = 1;
out:
  mt__cpu_mview_close(&mv);
  if (st != MT_OK) mt__cpu_drop_outputs(call);
  return st;
}

/* A copy of COO or CSR storage t with its values converted to dtype dt,
 * allocated by h: the structure (indices, coalesced flag) on the host, the
 * values copied (one dtype) or converted on ex. */
static mt_status storage_copy(const mt_host *h, const mt_exec *ex, const mt_tensor *t,
                              mt_dtype dt, mt_tensor **out, mt_error *err) {
  mt_cgeom g = {0};
  int64_t n, *off = NULL;
  mt_status st;
  *out = NULL;
  if (t->kind == MT_KIND_COO) {
    if ((st = h->coo_new(dt, t->ndim, t->shape, t->sparse_dim, t->nnz, out, err)) != MT_OK)
      return st;
    if (t->nnz)
      memcpy((*out)->indices, t->indices, (size_t)(t->sparse_dim * t->nnz) * sizeof(int64_t));
    (*out)->coalesced = t->coalesced;
    n = t->nnz * mt_coo_row_numel(t);
  } else {
    if ((st = mt__cpu_compressed_like(h, t, dt, out, err)) != MT_OK) return st;
    mt_cgeom_of(t, &g);
    n = g.batches * g.nnz * g.entry;
  }
  if (t->dtype == dt) {
    st = gather_one(ex, NULL, n, t->values, n, mt_dtype_size(dt), (*out)->values, "copy_", err);
  } else if (!ex->convert) {
    st = gap(ex, "copy_", "sparse storage", err);
  } else if (n > 0) {
    if (!(off = malloc((size_t)n * sizeof *off))) {
      st = mt_err(err, MT_OUT_OF_MEMORY, "copy_: %lld values", (long long)n);
    } else {
      for (int64_t i = 0; i < n; i++) off[i] = i;
      st = ex->convert(t->dtype, t->values, n, off, dt, (*out)->values, n, err);
    }
  }
  free(off);
  if (st != MT_OK) {
    h->free(*out);
    *out = NULL;
  }
  return st;
}

/* SP-4: copy_ of sparse storage: torch copies src's data into dst's
 * (aten copy_ of two sparse tensors); src of dst's storage and structure
 * here: src's stored values converted to dst's dtype, dst's mask. On
 * another backend: coalesced on ex, the values converted on ex. */
static mt_status sparse_copy_(mt_call *call, const mt_tensor *dst, const mt_exec *ex,
                              mt_error *err) {
  const mt_host *h = mt__cpu_host(call);
  const mt_tensor *src = NULL, *dd, *sd;
  mt_tensor *td = NULL, *ts = NULL, *data = NULL, *mask = NULL;
  mt_status st;
  if ((st = mt_tensor_validate(dst, "inputs/0", err)) != MT_OK) return st;
  if ((st = mt__cpu_input(call, 1, "copy_", &src, err)) != MT_OK) return st;
  if ((st = mt_tensor_validate(src, "inputs/1", err)) != MT_OK) return st;
  if (src->kind != MT_KIND_MASKED || src->data->kind != dst->data->kind)
    return mt_err(err, MT_NOT_SUPPORTED,
                  "copy_: a sparse-storage dst takes a masked src of its storage on the CPU "
                  "backend");
  int coo = dst->data->kind == MT_KIND_COO;
  if (coo) {
    if ((st = mt__exec_coalesced(ex, dst->data, &dd, &td, err)) != MT_OK) goto out;
    if ((st = mt__exec_coalesced(ex, src->data, &sd, &ts, err)) != MT_OK) goto out;
  } else {
    dd = dst->data;
    sd = src->data;
  }
  if (coo ? !mt__cpu_coo_same_indices(dd, sd) || mt_coo_row_numel(dd) != 1
          : !mt__cpu_csr_same_structure(dd, sd)) {
    st = mt_err(err, MT_NOT_SUPPORTED,
                "copy_: src and dst of different sparse structures (the CPU backend copies "
                "values of one structure)");
    goto out;
  }
  mt_dtype ddt = dd->dtype, sdt = sd->dtype;
  if (ex != &mt_cpu_exec) { /* sd has dd's structure: its copy in dst's dtype */
    if ((st = storage_copy(h, ex, sd, ddt, &data, err)) != MT_OK) goto out;
    if ((st = storage_copy(h, ex, dst->mask, MT_bool, &mask, err)) != MT_OK) goto out;
    st = set_out(call, &data, &mask, err);
    goto out;
  }
  if (coo) {
    if ((st = mt_tensor_clone_host(h, dd, &data, err)) != MT_OK) goto out;
  } else if ((st = mt__cpu_compressed_like(h, dd, ddt, &data, err)) != MT_OK) {
    goto out;
  }
  for (int64_t i = 0; i < dd->nnz; i++) {
    if (!mt__cpu_is_float(sdt) && !mt__cpu_is_float(ddt))
      mt__cpu_sti(data->values, ddt, i, mt__cpu_ldi(sd->values, sdt, i));
    else
      mt__cpu_st(data->values, ddt, i, mt__cpu_ld(sd->values, sdt, i));
  }
  if ((st = mt_tensor_clone_host(h, dst->mask, &mask, err)) != MT_OK) goto out;
  st = set_out(call, &data, &mask, err);
out:
  mt_tensor_free(td);
  mt_tensor_free(ts);
  if (data) h->free(data);
  if (mask) h->free(mask);
  return st;
}

/* copy_(dst, src): dst's data replaced by src's (broadcast to dst's shape,
 * converted to dst's dtype), dst's mask kept; src's mask is not compared
 * with dst's (torch does not). */
static mt_status copy__run(mt_call *call, const mt_exec *ex, mt_error *err) {
  if (mt__sps_call(call)) return mt__sps_structure_run(call, MT_OP_copy_, ex, err);
  static const char *op = "copy_";
  const mt_host *h = mt__cpu_host(call);
  const mt_tensor *dst = NULL, *src = NULL;
  mt__cpu_mview mv = {0}, sv = {0};
  mt_tensor *sc = NULL;
  st_plan plan = {0};
  st_view v;
  mt_status st;
  char a[96], b[96];
  mt__cpu_begin(call);
  if ((st = mt__kw_check(MT_OP_copy_, call->kw, err)) != MT_OK) return st;
  if (mt__cpu_input(call, 0, op, &dst, err) == MT_OK && dst->kind == MT_KIND_MASKED &&
      dst->data && (dst->data->kind == MT_KIND_COO || dst->data->kind == MT_KIND_CSR))
    return sparse_copy_(call, dst, ex, err);
  if ((st = masked_dense_input(call, 0, op, &dst, &mv, err)) != MT_OK) goto out;
  if ((st = mt__cpu_input(call, 1, op, &src, err)) != MT_OK) goto out;
  const void *sdata;
  if (src->kind == MT_KIND_MASKED) {
    if ((st = masked_dense_input(call, 1, op, &src, &sv, err)) != MT_OK) goto out;
    sdata = sv.data->values;
  } else if (src->kind == MT_KIND_DENSE) {
    if ((st = mt_tensor_validate(src, "inputs/1", err)) != MT_OK) goto out;
    const mt_tensor *cv;
    if ((st = mt__cpu_contig(src, &cv, &sc, err)) != MT_OK) goto out;
    sdata = cv->values;
  } else {
    st = mt_err(err, MT_NOT_SUPPORTED, "%s: inputs/1 has kind %s", op, mt_kind_name(src->kind));
    goto out;
  }
  mt_dtype sdt = src->kind == MT_KIND_MASKED ? src->data->dtype : src->dtype;
  mt_dtype ddt = dst->data->dtype;
  st_view_init(&v, src->ndim, src->shape);
  if (!st_view_broadcast_to(&v, dst->ndim, dst->shape)) {
    st = mt_err(err, MT_SHAPE_MISMATCH,
                "%s: The size of tensor a (%s) must match the size of tensor b (%s): src cannot "
                "be broadcast to dst", op, mt_shape_str(dst->ndim, dst->shape, a, sizeof a),
                mt_shape_str(src->ndim, src->shape, b, sizeof b));
    goto out;
  }
  if ((st = st_plan_alloc(&plan, mt_numel(dst), op, err)) != MT_OK) goto out;
  plan_view(&plan, 0, &v, 0);
  mt_tensor *data = NULL, *mask = NULL;
  if ((st = mt__cpu_new_masked_dense(h, ddt, dst->ndim, dst->shape, &call->out[0], &data, &mask,
                                     err)) != MT_OK)
    goto out;
  if (ex != &mt_cpu_exec) {
    /* another backend: src's elements through the broadcast plan, copied
     * (one dtype) or converted on ex; dst's mask by the identity gather */
    int64_t n_src = mt_numel(src), n = mt_numel(mask);
    if (sdt == ddt)
      st = gather_one(ex, plan.off, plan.n, sdata, n_src, mt_dtype_size(sdt), data->values, op,
                      err);
    else if (!ex->convert)
      st = gap(ex, op, "a converting copy", err);
    else if (plan.n > 0)
      st = ex->convert(sdt, sdata, n_src, plan.off, ddt, data->values, plan.n, err);
    if (st == MT_OK)
      st = gather_one(ex, NULL, n, mv.mask->values, n, 1, mask->values, op, err);
    if (st == MT_OK) call->n_out = 1;
    goto out;
  }
  if (sdt == ddt) {
    const void *ds[1] = {sdata};
    plan_copy(&plan, ds, data->values, mt_dtype_size(sdt));
  } else {
    /* torch's copy_ converts to dst's dtype: integers and bool exactly
     * (wrapping to the width), floats rounded once, float -> integer
     * truncated toward zero, anything -> bool is != 0 */
    for (int64_t i = 0; i < plan.n; i++) {
      int64_t o = plan.off[i];
      if (!mt__cpu_is_float(sdt) && !mt__cpu_is_float(ddt))
        mt__cpu_sti(data->values, ddt, i, mt__cpu_ldi(sdata, sdt, o));
      else
        mt__cpu_st(data->values, ddt, i, mt__cpu_ld(sdata, sdt, o));
    }
  }
  memcpy(mask->values, mv.mask->values, (size_t)mt_numel(mask));
  call->n_out = 1;
out:
  st_plan_free(&plan);
  mt_tensor_free(sc);
  mt__cpu_mview_close(&mv);
  mt__cpu_mview_close(&sv);
  if (st != MT_OK) mt__cpu_drop_outputs(call);
  return st;
}

/* ---- queries (STR-5) ------------------------------------------------------ */

static mt_status bool_out(mt_call *call, int v, mt_error *err) {
  mt_status st = mt__cpu_host(call)->scalar_new(MT_bool, v ? 1.0 : 0.0, &call->out[0], err);
  if (st == MT_OK) call->n_out = 1;
  return st;
}

static mt_status is_contiguous_run(mt_call *call, const mt_exec *ex, mt_error *err) {
  static const char *op = "is_contiguous";
  const mt_tensor *m = NULL;
  mt_status st;
  mt__cpu_begin(call);
  if ((st = mt__kw_check(MT_OP_is_contiguous, call->kw, err)) != MT_OK) return st;
  if ((st = mt__cpu_input(call, 0, op, &m, err)) != MT_OK) return st;
  if (m->kind != MT_KIND_MASKED)
    return mt_err(err, MT_NOT_SUPPORTED, "%s: inputs/0 has kind %s; expected a masked tensor",
                  op, mt_kind_name(m->kind));
  if ((st = mt_tensor_validate(m, "inputs/0", err)) != MT_OK) return st;
  if (m->data->kind == MT_KIND_COO)
    return mt_err(err, MT_LAYOUT_MISMATCH,
                  "%s: MaskedTensors with sparse data do not have is_contiguous", op);
  if ((st = csr_refused(m, op, "inputs/0", err)) != MT_OK) return st;
  if (m->data->kind != MT_KIND_DENSE)
    return mt_err(err, MT_NOT_SUPPORTED, "%s: %s storage", op, mt_kind_name(m->data->kind));
  return bool_out(call, mt_is_contiguous(m->data), err); /* the data's, as torch */
}

static mt_status is_same_size_run(mt_call *call, const mt_exec *ex, mt_error *err) {
  static const char *op = "is_same_size";
  const mt_tensor *x = NULL, *y = NULL;
  mt_status st;
  mt__cpu_begin(call);
  if ((st = mt__kw_check(MT_OP_is_same_size, call->kw, err)) != MT_OK) return st;
  if ((st = mt__cpu_input(call, 0, op, &x, err)) != MT_OK) return st;
  if ((st = mt__cpu_input(call, 1, op, &y, err)) != MT_OK) return st;
  if ((st = mt_tensor_validate(x, "inputs/0", err)) != MT_OK) return st;
  if ((st = mt_tensor_validate(y, "inputs/1", err)) != MT_OK) return st;
  /* the sizes only (a masked tensor's are its data's); masks are not compared */
  return bool_out(call, x->ndim == y->ndim && mt_shape_equal(x, y), err);
}

/* ---- layout conversions (STR-6) ------------------------------------------- */

static mt_status to_dense_run(mt_call *call, const mt_exec *ex, mt_error *err) {
  static const char *op = "to_dense";
  const mt_host *h = mt__cpu_host(call);
  const mt_tensor *m = NULL;
  mt_tensor *data = NULL, *mask = NULL;
  mt_status st;
  mt__cpu_begin(call);
  if ((st = mt__kw_check(MT_OP_to_dense, call->kw, err)) != MT_OK) return st;
  if ((st = mt__cpu_input(call, 0, op, &m, err)) != MT_OK) return st;
  if (m->kind != MT_KIND_MASKED) /* plain: SPC-11, its values copied on ex */
    return mt__spc_to_dense(call, ex, err);
  if ((st = mt_tensor_validate(m, "inputs/0", err)) != MT_OK) return st;
  /* dense storage: a copy; COO/CSR: both densified (absent entries: data 0,
   * mask false; COO duplicates summed, the mask's or-ed): sparse_convert's
   * densify, its values copied on ex */
  if ((st = mt__spc_densify(h, ex, m->data, &data, err)) != MT_OK) goto out;
  if ((st = mt__spc_densify(h, ex, m->mask, &mask, err)) != MT_OK) goto out;
  st = set_out(call, &data, &mask, err);
out:
  if (data) h->free(data);
  if (mask) h->free(mask);
  return st;
}

/* A CSR copy of a coalesced 2-d COO tensor, allocated by h: its structure
 * on the host, its values (in the same order) copied on ex. */
static mt_status coo_to_csr(const mt_host *h, const mt_exec *ex, const mt_tensor *coo,
                            mt_tensor **out, mt_error *err) {
  mt_status st = mt__cpu_coo_csr_indices(h, coo, out, err);
  if (st != MT_OK) return st;
  if (ex == &mt_cpu_exec) { /* the reference's exec has no gather hook */
    if (coo->nnz)
      memcpy((*out)->values, coo->values, (size_t)coo->nnz * mt_dtype_size(coo->dtype));
    return MT_OK;
  }
  st = gather_one(ex, NULL, coo->nnz, coo->values, coo->nnz, mt_dtype_size(coo->dtype),
                  (*out)->values, "to_sparse_csr", err);
  if (st != MT_OK) {
    h->free(*out);
    *out = NULL;
  }
  return st;
}

/* SP-4: to_sparse_csr of COO storage: data and mask converted alike (every
 * stored entry kept, masked-out ones too), coalesced on ex first. */
static mt_status coo_to_csr_storage(mt_call *call, const mt_tensor *m, const mt_exec *ex,
                                    mt_error *err) {
  const mt_host *h = mt__cpu_host(call);
  const mt_tensor *cd, *cm;
  mt_tensor *td = NULL, *tm = NULL, *data = NULL, *mask = NULL;
  mt_status st;
  char sh[96];
  if (m->ndim != 2 || m->data->dense_dim != 0)
    return mt_err(err, MT_INVALID_ARGUMENT,
                  "to_sparse_csr: Only 2D tensors can be converted to the SparseCsr layout but "
                  "got shape: %s",
                  mt_shape_str(m->ndim, m->shape, sh, sizeof sh));
  if ((st = mt__exec_coalesced(ex, m->data, &cd, &td, err)) != MT_OK) goto out;
  if ((st = mt__exec_coalesced(ex, m->mask, &cm, &tm, err)) != MT_OK) goto out;
  if ((st = coo_to_csr(h, ex, cd, &data, err)) != MT_OK) goto out;
  if ((st = coo_to_csr(h, ex, cm, &mask, err)) != MT_OK) goto out;
  st = set_out(call, &data, &mask, err);
out:
  mt_tensor_free(td);
  mt_tensor_free(tm);
  if (data) h->free(data);
  if (mask) h->free(mask);
  return st;
}

/* to_sparse / to_sparse_csr of dense storage: entries exactly where the mask
 * is true, in row-major order; data's values there, mask values true. */
static mt_status to_sparse(mt_call *call, mt_op opid, int csr, const mt_exec *ex,
                           mt_error *err) {
  const char *op = mt_op_name(opid);
  const mt_host *h = mt__cpu_host(call);
  const mt_tensor *m = NULL;
  mt__cpu_mview mv = {0};
  mt_tensor *data = NULL, *mask = NULL;
  int64_t *kept = NULL;
  mt_status st;
  char sh[96];
  mt__cpu_begin(call);
  if ((st = mt__kw_check(opid, call->kw, err)) != MT_OK) return st;
  if ((st = mt__cpu_input(call, 0, op, &m, err)) != MT_OK) return st;
  if (m->kind != MT_KIND_MASKED) /* plain: SPC-1 .. SPC-5, its values copied on ex */
    return csr ? mt__spc_to_sparse_csr(call, ex, err) : mt__spc_to_sparse(call, ex, err);
  if ((st = mt_tensor_validate(m, "inputs/0", err)) != MT_OK) return st;
  if ((st = csr_refused(m, op, "inputs/0", err)) != MT_OK) return st;
  if (m->data->kind == MT_KIND_COO && csr) return coo_to_csr_storage(call, m, ex, err);
  if (m->data->kind == MT_KIND_COO)
    /* torch's _MaskedToSparse views the COO data: NotImplementedError */
    return mt_err(err, MT_LAYOUT_MISMATCH,
                  "%s: Could not run 'aten::view' with arguments from the 'SparseCPU' backend "
                  "(inputs/0 has COO storage)", op);
  if (m->data->kind != MT_KIND_DENSE)
    return mt_err(err, MT_NOT_SUPPORTED, "%s: %s storage", op, mt_kind_name(m->data->kind));
  if (csr && m->ndim != 2)
    return mt_err(err, MT_INVALID_ARGUMENT,
                  "%s: Only 2D tensors can be converted to the SparseCsr layout but got shape: %s",
                  op, mt_shape_str(m->ndim, m->shape, sh, sizeof sh));
  if ((st = mt__cpu_mview_open(m, &mv, err)) != MT_OK) goto out;
  int64_t n = mt_numel(m), nnz = 0;
  for (int64_t i = 0; i < n; i++) nnz += mt__cpu_ldb(mv.mask->values, i);
  /* another backend: which elements are kept (the mask: bookkeeping) here,
   * their values gathered on ex, the mask's trues from one element 1 */
  if (ex != &mt_cpu_exec && !(kept = malloc((size_t)(nnz > 0 ? nnz : 1) * sizeof *kept))) {
    st = mt_err(err, MT_OUT_OF_MEMORY, "%s: %lld entries", op, (long long)nnz);
    goto out;
  }
  mt_dtype dt = m->data->dtype;
  size_t es = mt_dtype_size(dt);
  if (csr) {
    if ((st = h->csr_new(dt, m->shape[0], m->shape[1], nnz, &data, err)) != MT_OK) goto out;
    if ((st = h->csr_new(MT_bool, m->shape[0], m->shape[1], nnz, &mask, err)) != MT_OK) goto out;
  } else {
    if ((st = h->coo_new(dt, m->ndim, m->shape, m->ndim, nnz, &data, err)) != MT_OK) goto out;
    if ((st = h->coo_new(MT_bool, m->ndim, m->shape, m->ndim, nnz, &mask, err)) != MT_OK)
      goto out;
    data->coalesced = mask->coalesced = 1;
  }
  int64_t k = 0;
  for (int64_t i = 0; i < n; i++) {
    if (!mt__cpu_ldb(mv.mask->values, i)) continue;
    if (kept) {
      kept[k] = i;
    } else {
      memcpy((char *)data->values + (size_t)k * es,
             (const char *)mv.data->values + (size_t)i * es, es);
      ((uint8_t *)mask->values)[k] = 1;
    }
    if (csr) {
      int64_t r = i / m->shape[1], c = i % m->shape[1];
      data->col_indices[k] = mask->col_indices[k] = c;
      data->crow_indices[r + 1]++;
    } else {
      int64_t rem = i;
      for (int d = m->ndim - 1; d >= 0; d--) {
        data->indices[d * nnz + k] = mask->indices[d * nnz + k] = rem % m->shape[d];
        rem /= m->shape[d];
      }
    }
    k++;
  }
  if (csr) {
    data->crow_indices[0] = 0;
    for (int64_t r = 0; r < m->shape[0]; r++) data->crow_indices[r + 1] += data->crow_indices[r];
    memcpy(mask->crow_indices, data->crow_indices, (size_t)(m->shape[0] + 1) * sizeof(int64_t));
  }
  if (kept) {
    static const uint8_t one = 1;
    if ((st = gather_one(ex, kept, nnz, mv.data->values, n, es, data->values, op, err)) != MT_OK ||
        (st = gather_one(ex, NULL, nnz, &one, 1, 1, mask->values, op, err)) != MT_OK)
      goto out;
  }
  st = set_out(call, &data, &mask, err);
out:
  free(kept);
  mt__cpu_mview_close(&mv);
  if (data) h->free(data);
  if (mask) h->free(mask);
  return st;
}
static mt_status to_sparse_run(mt_call *c, const mt_exec *ex, mt_error *e) {
  return to_sparse(c, MT_OP_to_sparse, 0, ex, e);
}
static mt_status to_sparse_csr_run(mt_call *c, const mt_exec *ex, mt_error *e) {
  return to_sparse(c, MT_OP_to_sparse_csr, 1, ex, e);
}

/* ---- the family's kernels (common/structure_ops.h) ------------------------ */

mt_status mt__structure_run(mt_call *call, mt_op op, const mt_exec *ex, mt_error *err) {
  switch (op) {
#define X(name)        \
  case MT_OP_##name: return name##_run(call, ex, err);
    STRUCTURE_OPS(X)
#undef X
  default: return mt_err(err, MT_NOT_SUPPORTED, "%s: not a structure op", mt_op_name(op));
  }
}

#define X(name)                                            \
  mt_status mt_cpu_##name(mt_call *call, mt_error *err) {  \
    return name##_run(call, &mt_cpu_exec, err);            \
  }
STRUCTURE_OPS(X)
#undef X

/* grad_structure.c - CPU backward kernels of MaskedTensor's structure ops
 * (golden format 3's gradient cases; spec/SEMANTICS.md GRAD-*; the
 * forward is structure.c, STR-*).
 *
 * torch applies the passthrough ops' derivatives (select_backward,
 * slice_backward, unfold_backward, reshape, transpose ...) to the upstream
 * gradient's data and to its mask alike, and sums broadcast dims (expand,
 * where) with a masked sum. So the gradient of a view op is the upstream
 * gradient scattered back through the forward's own view of the input
 * (mt__cpu_view_geometry): an input element's value is the sum of the
 * specified upstream elements that came from it, and it is specified when
 * one of them is (GRAD-1): positions no output came from (select, slice,
 * a gap between unfold's windows) are masked out, a broadcast dim's mask
 * is the any() of its copies. cat and stack hand each input its piece of
 * the upstream gradient; split puts the pieces together; where(cond, x, y)
 * gives x the upstream gradient where cond holds and y the rest, each
 * summed back to its operand's shape (a plain tensor operand also gets a
 * masked gradient). Data under a false mask is unspecified (left 0).
 *
 * Sparse storage: t/transpose transpose the upstream gradient's COO data
 * and mask; stack of COO storage selects each input's slice; clone hands
 * back a copy of the upstream gradient, whatever its storage; to_dense
 * of COO/CSR storage gives the upstream gradient back in that storage
 * (its specified elements only), to_sparse/to_sparse_csr of dense storage
 * give it back dense. torch refuses the rest: those refusals are the
 * golden's error cases, answered here with torch's class and message.
 * A call without a masked input is a plain one (torch.t of a COO tensor):
 * the sparse engine (mt__cpu_grad_sparse, grad_sparse.c) takes it. */
#include "grad_util.h"
#include "structure_util.h"

#define GS_MAX_INPUTS 16 /* cat/stack operands, split pieces */

/* A refusal of torch's backward, with torch's message. */
static mt_status refused(mt_status st, const char *op, const char *torch_msg, mt_error *err) {
  return mt_err(err, st, "%s backward: %s", op, torch_msg);
}

static const char no_squeeze[] =
    "TypeError: Multiple dispatch failed for 'torch._ops.aten.squeeze.dim'; all "
    "__torch_dispatch__ handlers returned NotImplemented (MaskedTensor has no squeeze)";
static const char no_new_zeros[] =
    "TypeError: Multiple dispatch failed for 'torch._ops.aten.new_zeros.default'; all "
    "__torch_dispatch__ handlers returned NotImplemented (index's backward starts from "
    "new_zeros, which MaskedTensor does not implement)";

/* ---- scatter and gather through a view -------------------------------- */

/* A dense-storage masked gradient being built: acc (double) and mask bits
 * over the input's shape, row-major. */
typedef struct {
  int64_t n;
  double *acc;
  uint8_t *bits;
} gs_grad;

static void gs_grad_free(gs_grad *gr) {
  free(gr->acc);
  free(gr->bits);
  memset(gr, 0, sizeof *gr);
}

static mt_status gs_grad_init(gs_grad *gr, const mt_tensor *x, const char *op, mt_error *err) {
  memset(gr, 0, sizeof *gr);
  gr->n = mt_numel(x);
  mt_status st = mt__grad_doubles(gr->n, op, &gr->acc, err);
  if (st != MT_OK) return st;
  gr->bits = calloc((size_t)(gr->n > 0 ? gr->n : 1), 1);
  if (!gr->bits) {
    gs_grad_free(gr);
    return mt_err(err, MT_OUT_OF_MEMORY, "%s backward: no memory for a mask", op);
  }
  return MT_OK;
}

/* The masked gradient of x (its shape, dtype dt) from gr, into *out. */
static mt_status gs_grad_emit(const mt_host *h, const gs_grad *gr, const mt_tensor *x,
                              mt_dtype dt, mt_tensor **out, mt_error *err) {
  mt_tensor *data, *mask;
  mt_status st = mt__cpu_new_masked_dense(h, dt, x->ndim, x->shape, out, &data, &mask, err);
  if (st != MT_OK) return st;
  for (int64_t i = 0; i < gr->n; i++) {
    mt__cpu_st(data->values, dt, i, gr->bits[i] ? gr->acc[i] : 0.0);
    ((uint8_t *)mask->values)[i] = gr->bits[i];
  }
  return MT_OK;
}

/* Element j (row-major over v's shape) of view v: its offset. */
static int64_t view_off(const st_view *v, const int64_t *idx) {
  int64_t off = v->offset;
  for (int d = 0; d < v->ndim; d++) off += idx[d] * v->strides[d];
  return off;
}

/* g's specified elements, in row-major order over v's shape (g's shape),
 * added into gr at the offsets v gives; sel (NULL: all) picks which. */
static void scatter(const st_view *v, const mt_tensor *g, const uint8_t *sel, gs_grad *gr) {
  int64_t idx[MT_MAX_DIMS] = {0}, n = mt_shape_numel(v->ndim, v->shape);
  for (int64_t j = 0; j < n; j++, mt__grad_next(idx, v->ndim, v->shape)) {
    if (!mt__grad_spec(g, j) || (sel && !sel[j])) continue;
    int64_t off = view_off(v, idx);
    gr->acc[off] += mt__grad_at(g, j);
    gr->bits[off] = 1;
  }
}

/* gr (x's shape) read from g at the offsets view v (over g's row-major
 * elements, of x's shape) gives. */
static void gather(const st_view *v, const mt_tensor *g, gs_grad *gr) {
  int64_t idx[MT_MAX_DIMS] = {0};
  for (int64_t i = 0; i < gr->n; i++, mt__grad_next(idx, v->ndim, v->shape)) {
    int64_t off = view_off(v, idx);
    gr->bits[i] = (uint8_t)mt__grad_spec(g, off);
    gr->acc[i] = gr->bits[i] ? mt__grad_at(g, off) : 0.0;
  }
}

static int same_shape(int nd, const int64_t *a, int nd2, const int64_t *b) {
  return nd == nd2 && (nd == 0 || memcmp(a, b, (size_t)nd * sizeof(int64_t)) == 0);
}

/* ---- the forward kernels, reused on the upstream gradient -------------- */

/* Runs the CPU forward kernel fn on the one input t with kwargs kw; its
 * first output goes to *out (allocated by the call's host). */
static mt_status forward_on(const mt_call *call, mt_op opid, mt_kernel_fn fn, const mt_tensor *t,
                            const mt_kwargs *kw, mt_tensor **out, mt_error *err) {
  const mt_tensor *in[1] = {t};
  mt_call sub = {.host = call->host, .op = opid, .n_in = 1, .in = in, .kw = kw};
  *out = NULL;
  mt_status st = fn(&sub, err);
  if (st != MT_OK) return st;
  *out = sub.out[0];
  sub.out[0] = NULL;
  mt__cpu_drop_outputs(&sub);
  return MT_OK;
}

/* ---- view ops ------------------------------------------------------------ */

/* The inputs and upstream gradient of a one-input op: x masked (else the
 * plain-input route), g validated. */
static mt_status one_input(const mt_call *call, mt_op opid, const mt_tensor **x,
                           const mt_tensor **g, mt_error *err) {
  const char *op = mt_op_name(opid);
  mt_status st;
  if ((st = mt__kw_check(opid, call->kw, err)) != MT_OK) return st;
  if ((st = mt__cpu_input(call, 0, op, x, err)) != MT_OK) return st;
  if ((*x)->kind != MT_KIND_MASKED)
    return mt_err(err, MT_NOT_SUPPORTED, "%s backward: inputs/0 is a plain %s tensor", op,
                  mt_kind_name((*x)->kind));
  if ((st = mt_tensor_validate(*x, "inputs/0", err)) != MT_OK) return st;
  if ((st = mt__cpu_require_float(*x, "inputs/0", op, err)) != MT_OK) return st;
  return mt__grad_out(call, 0, op, g, err);
}

/* Dense storage: g scattered back through the forward's view of x. */
static mt_status view_scatter(mt_call *call, mt_op opid, const mt_tensor *x, const mt_tensor *g,
                              mt_error *err) {
  const char *op = mt_op_name(opid);
  gs_grad gr = {0};
  st_view v;
  mt_status st;
  char a[96], b[96];
  if ((st = mt__grad_masked_dense(g, "grad_outputs/0", op, err)) != MT_OK) return st;
  st_view_init(&v, x->ndim, x->shape);
  if ((st = mt__cpu_view_geometry(opid, call, &v, err)) != MT_OK) return st;
  if (!same_shape(v.ndim, v.shape, g->ndim, g->shape))
    return mt_err(err, MT_SHAPE_MISMATCH,
                  "%s backward: the upstream gradient has shape %s, the forward's output %s", op,
                  mt_shape_str(g->ndim, g->shape, a, sizeof a),
                  mt_shape_str(v.ndim, v.shape, b, sizeof b));
  if ((st = gs_grad_init(&gr, x, op, err)) != MT_OK) return st;
  scatter(&v, g, NULL, &gr);
  st = gs_grad_emit(mt__cpu_host(call), &gr, x, x->data->dtype, &call->out[0], err);
  gs_grad_free(&gr);
  if (st != MT_OK) return st;
  return mt__grad_done(call);
}

static mt_status view_backward(mt_call *call, mt_op opid, mt_error *err) {
  const char *op = mt_op_name(opid);
  const mt_tensor *x = NULL, *g = NULL;
  mt_status st;
  mt__cpu_begin(call);
  if (mt__cpu_grad_sparse_takes(call)) return mt__cpu_grad_sparse(call, opid, err);
  if ((st = one_input(call, opid, &x, &g, err)) != MT_OK) return st;
  if (opid == MT_OP_unsqueeze) return refused(MT_LAYOUT_MISMATCH, op, no_squeeze, err);
  if (mt__grad_is_masked(x, MT_KIND_DENSE)) return view_scatter(call, opid, x, g, err);
  if (opid == MT_OP_clone) { /* the upstream gradient as it is, any storage */
    if ((st = mt_tensor_clone_host(mt__cpu_host(call), g, &call->out[0], err)) != MT_OK)
      return st;
    return mt__grad_done(call);
  }
  if (mt__grad_is_masked(x, MT_KIND_COO)) {
    if (opid == MT_OP_select)
      return refused(MT_LAYOUT_MISMATCH, op,
                     "NotImplementedError: Could not run 'aten::select_backward' with arguments "
                     "from the 'SparseCPU' backend.", err);
    if (opid == MT_OP_t || opid == MT_OP_transpose) { /* its own inverse */
      if (!mt__grad_is_masked(g, MT_KIND_COO))
        return mt_err(err, MT_INVALID_ARGUMENT,
                      "%s backward: the upstream gradient of COO storage must be COO", op);
      if ((st = forward_on(call, opid, opid == MT_OP_t ? mt_cpu_t : mt_cpu_transpose, g,
                           call->kw, &call->out[0], err)) != MT_OK)
        return st;
      return mt__grad_done(call);
    }
  }
  return mt_err(err, MT_NOT_SUPPORTED,
                "%s backward: inputs/0 has %s storage; the CPU backend implements it on dense "
                "storage", op, mt_kind_name(x->data->kind));
}

#define GRAD_VIEW_OPS(X) \
  X(select)              \
  X(slice)               \
  X(transpose)           \
  X(t)                   \
  X(view)                \
  X(reshape)             \
  X(expand)              \
  X(unsqueeze)           \
  X(unfold)              \
  X(contiguous)          \
  X(clone)

#define X(name)                                                \
  mt_status mt_cpu_grad_##name(mt_call *call, mt_error *err) { \
    return view_backward(call, MT_OP_##name, err);            \
  }
GRAD_VIEW_OPS(X)
#undef X

/* ---- index: torch's backward refuses every MaskedTensor ----------------- */

mt_status mt_cpu_grad_index(mt_call *call, mt_error *err) {
  const mt_tensor *x = NULL, *g = NULL;
  mt_status st;
  mt__cpu_begin(call);
  if (mt__cpu_grad_sparse_takes(call)) return mt__cpu_grad_sparse(call, MT_OP_index, err);
  if ((st = one_input(call, MT_OP_index, &x, &g, err)) != MT_OK) return st;
  return refused(MT_LAYOUT_MISMATCH, "index", no_new_zeros, err);
}

/* ---- cat, stack: each input its piece of the upstream gradient ---------- */

static mt_status cat_backward(mt_call *call, mt_op opid, int stack, mt_error *err) {
  const char *op = mt_op_name(opid);
  const mt_host *h = mt__cpu_host(call);
  const mt_tensor *g = NULL, *x0 = NULL;
  gs_grad gr = {0};
  mt_status st;
  int d = 0;
  char a[96];
  mt__cpu_begin(call);
  if (mt__cpu_grad_sparse_takes(call)) return mt__cpu_grad_sparse(call, opid, err);
  if ((st = mt__kw_check(opid, call->kw, err)) != MT_OK) return st;
  if ((st = mt__cpu_input(call, 0, op, &x0, err)) != MT_OK) return st;
  if (call->n_in > GS_MAX_INPUTS)
    return mt_err(err, MT_NOT_SUPPORTED, "%s backward: %d inputs; at most %d", op, call->n_in,
                  GS_MAX_INPUTS);
  for (int k = 0; k < call->n_in; k++) {
    const mt_tensor *x = NULL;
    char what[32];
    if ((st = mt__cpu_input(call, k, op, &x, err)) != MT_OK) return st;
    if (x->kind != MT_KIND_MASKED || x->data->kind != x0->data->kind)
      return mt_err(err, MT_NOT_SUPPORTED, "%s backward: inputs/%d is %s; the CPU backend "
                    "implements masked inputs of one storage", op, k, mt_kind_name(x->kind));
    if ((st = mt_tensor_validate(x, mt__cpu_in_name(k, what, sizeof what), err)) != MT_OK)
      return st;
  }
  if ((st = mt__grad_out(call, 0, op, &g, err)) != MT_OK) return st;
  if ((st = st_wrap_dim(mt_kw_int(call->kw, "dim", 0), x0->ndim + stack, op, &d, err)) != MT_OK)
    return st;
  if (mt__grad_is_masked(x0, MT_KIND_COO)) {
    if (!stack)
      return refused(MT_LAYOUT_MISMATCH, op,
                     "NotImplementedError: Could not run 'aten::as_strided' with arguments from "
                     "the 'SparseCPU' backend.", err);
    if (!mt__grad_is_masked(g, MT_KIND_COO))
      return mt_err(err, MT_INVALID_ARGUMENT,
                    "%s backward: the upstream gradient of COO storage must be COO", op);
    for (int k = 0; k < call->n_in; k++) { /* unbind: select k along d */
      mt_kwarg items[2] = {{.name = "dim", .type = MT_KW_INT, .i = d, .f = d},
                           {.name = "index", .type = MT_KW_INT, .i = k, .f = k}};
      mt_kwargs kw = {.n = 2, .items = items};
      if ((st = forward_on(call, MT_OP_select, mt_cpu_select, g, &kw, &call->out[k], err)) !=
          MT_OK)
        goto fail;
    }
    return mt__grad_done(call);
  }
  if ((st = mt__grad_masked_dense(g, "grad_outputs/0", op, err)) != MT_OK) return st;
  int64_t at = 0;
  for (int k = 0; k < call->n_in; k++) {
    const mt_tensor *x = call->in[k];
    if ((st = mt__grad_masked_dense(x, "inputs", op, err)) != MT_OK) goto fail;
    st_view v;
    st_view_init(&v, g->ndim, g->shape);
    if (stack) { /* the k-th index of the new dim */
      v.offset = k * v.strides[d];
      st_view_drop(&v, d);
    } else { /* x's extent along d */
      if (x->ndim != g->ndim) {
        st = mt_err(err, MT_SHAPE_MISMATCH, "%s backward: inputs/%d has %d dims, the upstream "
                    "gradient %d", op, k, x->ndim, g->ndim);
        goto fail;
      }
      v.offset = at * v.strides[d];
      v.shape[d] = x->shape[d];
      at += x->shape[d];
    }
    if (!same_shape(v.ndim, v.shape, x->ndim, x->shape) ||
        (stack ? k >= g->shape[d] : at > g->shape[d])) {
      st = mt_err(err, MT_SHAPE_MISMATCH, "%s backward: inputs/%d does not fit the upstream "
                  "gradient of shape %s", op, k, mt_shape_str(g->ndim, g->shape, a, sizeof a));
      goto fail;
    }
    if ((st = gs_grad_init(&gr, x, op, err)) != MT_OK) goto fail;
    gather(&v, g, &gr);
    st = gs_grad_emit(h, &gr, x, x->data->dtype, &call->out[k], err);
    gs_grad_free(&gr);
    if (st != MT_OK) goto fail;
  }
  return mt__grad_done(call);
fail:
  mt__cpu_drop_outputs(call);
  return st;
}

mt_status mt_cpu_grad_cat(mt_call *c, mt_error *e) { return cat_backward(c, MT_OP_cat, 0, e); }
mt_status mt_cpu_grad_stack(mt_call *c, mt_error *e) { return cat_backward(c, MT_OP_stack, 1, e); }

/* ---- split: the pieces' upstream gradients put together ----------------- */

mt_status mt_cpu_grad_split(mt_call *call, mt_error *err) {
  static const char *op = "split";
  const mt_tensor *x = NULL, *g = NULL;
  gs_grad gr = {0};
  mt_status st;
  int d = 0;
  mt__cpu_begin(call);
  if (mt__cpu_grad_sparse_takes(call)) return mt__cpu_grad_sparse(call, MT_OP_split, err);
  if ((st = one_input(call, MT_OP_split, &x, &g, err)) != MT_OK) return st;
  if ((st = mt__grad_masked_dense(x, "inputs/0", op, err)) != MT_OK) return st;
  const mt_kwarg *sz = mt_kw_find(call->kw, "split_size_or_sections");
  if (!sz || sz->type != MT_KW_INT)
    return mt_err(err, MT_INVALID_ARGUMENT, "%s backward: split_size_or_sections must be an int "
                                            "(MaskedTensor has no split_with_sizes)", op);
  if (x->ndim == 0)
    return mt_err(err, MT_INVALID_ARGUMENT, "%s: split expects at least a 1-dimensional tensor",
                  op);
  if ((st = st_wrap_dim(mt_kw_int(call->kw, "dim", 0), x->ndim, op, &d, err)) != MT_OK)
    return st;
  int64_t size = sz->i, n = x->shape[d];
  if (size <= 0 && n != 0)
    return mt_err(err, MT_INVALID_ARGUMENT, "%s backward: split_size %lld", op, (long long)size);
  int64_t chunks = size <= 0 ? 1 : (n + size - 1) / size;
  if (chunks == 0) chunks = 1; /* torch: one empty chunk for a size-0 dim */
  if (call->n_grad_out != chunks)
    return mt_err(err, MT_INVALID_ARGUMENT, "%s backward: %lld pieces, %d upstream gradients",
                  op, (long long)chunks, call->n_grad_out);
  if ((st = gs_grad_init(&gr, x, op, err)) != MT_OK) return st;
  for (int64_t k = 0; k < chunks; k++) {
    const mt_tensor *gk;
    st_view v;
    st_view_init(&v, x->ndim, x->shape);
    int64_t start = k * size, len = n - start < size ? n - start : size;
    v.offset = start * v.strides[d];
    v.shape[d] = len < 0 ? 0 : len;
    if ((st = mt__grad_out(call, (int)k, op, &gk, err)) != MT_OK ||
        (st = mt__grad_masked_dense(gk, "grad_outputs", op, err)) != MT_OK)
      goto out;
    if (!same_shape(v.ndim, v.shape, gk->ndim, gk->shape)) {
      st = mt_err(err, MT_SHAPE_MISMATCH, "%s backward: grad_outputs/%lld does not have its "
                  "piece's shape", op, (long long)k);
      goto out;
    }
    scatter(&v, gk, NULL, &gr);
  }
  if ((st = gs_grad_emit(mt__cpu_host(call), &gr, x, x->data->dtype, &call->out[0], err)) !=
      MT_OK)
    goto out;
  mt__grad_done(call);
out:
  gs_grad_free(&gr);
  return st;
}

/* ---- where(cond, x, y): x where cond holds, y elsewhere ----------------- */

mt_status mt_cpu_grad_where(mt_call *call, mt_error *err) {
  static const char *op = "where";
  const mt_host *h = mt__cpu_host(call);
  const mt_tensor *in[3] = {0}, *g = NULL;
  uint8_t *sel = NULL;
  gs_grad gr = {0};
  mt_status st;
  char a[96];
  mt__cpu_begin(call);
  if (mt__cpu_grad_sparse_takes(call)) return mt__cpu_grad_sparse(call, MT_OP_where, err);
  if ((st = mt__kw_check(MT_OP_where, call->kw, err)) != MT_OK) return st;
  for (int k = 0; k < 3; k++)
    if ((st = mt__cpu_input(call, k, op, &in[k], err)) != MT_OK) return st;
  if ((st = mt__grad_out(call, 0, op, &g, err)) != MT_OK) return st;
  if (in[1]->kind != MT_KIND_MASKED && in[2]->kind != MT_KIND_MASKED)
    return mt_err(err, MT_NOT_SUPPORTED, "%s backward: the condition is the masked input; "
                  "torch's MaskedTensor where takes a plain one", op);
  for (int k = 1; k < 3; k++)
    if (in[k]->kind == MT_KIND_SCALAR) /* torch's _MaskedWhere returns a gradient for it */
      return mt_err(err, MT_INVALID_ARGUMENT,
                    "%s backward: RuntimeError: function _MaskedWhereBackward returned a gradient "
                    "different than None at position %d, but the corresponding forward input was "
                    "not a Variable", op, k + 1);
  if (in[0]->kind != MT_KIND_DENSE || in[0]->dtype != MT_bool)
    return mt_err(err, MT_NOT_SUPPORTED, "%s backward: cond must be a dense bool tensor", op);
  if ((st = mt__grad_masked_dense(g, "grad_outputs/0", op, err)) != MT_OK) return st;
  int64_t n = mt_numel(g);
  sel = malloc((size_t)(n > 0 ? n : 1));
  if (!sel) return mt_err(err, MT_OUT_OF_MEMORY, "%s backward: no memory", op);
  st_view cv;
  st_view_init(&cv, in[0]->ndim, in[0]->shape);
  if (!st_view_broadcast_to(&cv, g->ndim, g->shape)) {
    st = mt_err(err, MT_SHAPE_MISMATCH, "%s backward: cond does not broadcast to %s", op,
                mt_shape_str(g->ndim, g->shape, a, sizeof a));
    goto out;
  }
  for (int k = 1; k < 3; k++) {
    const mt_tensor *x = in[k];
    if (x->kind == MT_KIND_DENSE && !mt__cpu_is_f(x->dtype)) continue; /* no grad */
    if (x->kind != MT_KIND_DENSE && !mt__grad_is_masked(x, MT_KIND_DENSE)) {
      st = mt_err(err, MT_NOT_SUPPORTED, "%s backward: inputs/%d is %s; the CPU backend "
                  "implements dense storage", op, k, mt_kind_name(x->kind));
      goto out;
    }
    if ((st = mt__cpu_require_float(x, "inputs", op, err)) != MT_OK) goto out;
    st_view xv;
    st_view_init(&xv, x->ndim, x->shape);
    if (!st_view_broadcast_to(&xv, g->ndim, g->shape)) {
      st = mt_err(err, MT_SHAPE_MISMATCH, "%s backward: inputs/%d does not broadcast to %s", op,
                  k, mt_shape_str(g->ndim, g->shape, a, sizeof a));
      goto out;
    }
    int64_t idx[MT_MAX_DIMS] = {0};
    for (int64_t j = 0; j < n; j++, mt__grad_next(idx, g->ndim, g->shape)) {
      int c = mt__cpu_ldb(in[0]->values, mt_dense_offset(in[0], view_off(&cv, idx)));
      sel[j] = (uint8_t)(k == 1 ? c : !c);
    }
    if ((st = gs_grad_init(&gr, x, op, err)) != MT_OK) goto out;
    scatter(&xv, g, sel, &gr);
    st = gs_grad_emit(h, &gr, x, x->kind == MT_KIND_MASKED ? x->data->dtype : x->dtype,
                      &call->out[k], err);
    gs_grad_free(&gr);
    if (st != MT_OK) goto out;
  }
  mt__grad_done(call);
out:
  free(sel);
  if (st != MT_OK) mt__cpu_drop_outputs(call);
  return st;
}

/* ---- layout conversions: the upstream gradient converted back ----------- */

static mt_status convert_backward(mt_call *call, mt_op opid, mt_error *err) {
  const char *op = mt_op_name(opid);
  const mt_tensor *x = NULL, *g = NULL;
  mt_kind from;
  mt_status st;
  mt__cpu_begin(call);
  if (mt__cpu_grad_sparse_takes(call)) return mt__cpu_grad_sparse(call, opid, err);
  if ((st = one_input(call, opid, &x, &g, err)) != MT_OK) return st;
  from = x->data->kind;
  if (opid == MT_OP_to_dense && from == MT_KIND_DENSE)
    /* _MaskedToDense returns a strided input as it is, without ctx.layout */
    return refused(MT_LAYOUT_MISMATCH, op,
                   "AttributeError: '_MaskedToDenseBackward' object has no attribute 'layout'",
                   err);
  if (opid == MT_OP_to_sparse_csr && from == MT_KIND_COO)
    return refused(MT_LAYOUT_MISMATCH, op,
                   "ValueError: MaskedTensors with sparse data do not have "
                   "is_non_overlapping_and_dense", err);
  mt_op back = MT_OP__END;
  mt_kernel_fn fn = NULL;
  if (opid == MT_OP_to_dense && from == MT_KIND_COO) {
    back = MT_OP_to_sparse, fn = mt_cpu_to_sparse;
  } else if (opid == MT_OP_to_dense && from == MT_KIND_CSR) {
    back = MT_OP_to_sparse_csr, fn = mt_cpu_to_sparse_csr;
  } else if ((opid == MT_OP_to_sparse || opid == MT_OP_to_sparse_csr) && from == MT_KIND_DENSE) {
    back = MT_OP_to_dense, fn = mt_cpu_to_dense;
  }
  if (!fn)
    return mt_err(err, MT_NOT_SUPPORTED, "%s backward: inputs/0 has %s storage; not implemented "
                  "by the CPU backend", op, mt_kind_name(from));
  if (g->kind != MT_KIND_MASKED)
    return mt_err(err, MT_INVALID_ARGUMENT, "%s backward: the upstream gradient must be masked",
                  op);
  mt_kwargs none = {0};
  if ((st = forward_on(call, back, fn, g, &none, &call->out[0], err)) != MT_OK) return st;
  return mt__grad_done(call);
}

mt_status mt_cpu_grad_to_dense(mt_call *c, mt_error *e) {
  return convert_backward(c, MT_OP_to_dense, e);
}
mt_status mt_cpu_grad_to_sparse(mt_call *c, mt_error *e) {
  return convert_backward(c, MT_OP_to_sparse, e);
}
mt_status mt_cpu_grad_to_sparse_csr(mt_call *c, mt_error *e) {
  return convert_backward(c, MT_OP_to_sparse_csr, e);
}

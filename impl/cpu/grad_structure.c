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
 * the sparse engine (mt__grad_sparse_run, grad_sparse.c) takes it. */
#include "common/exec.h"
#include "common/grad_structure_math.h"
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

/* A dense-storage masked gradient being planned: the upstream values it
 * reads (widened to double, one upstream tensor after another) and pairs
 * (gradient element tgt[t] takes upstream value src[t]) in the order the
 * CPU reference's loops visited them; its values come from ex
 * (common/grad_structure_math.h). */
typedef struct {
  int64_t n; /* gradient elements */
  int add;   /* mt_gsc_par's: 1 sums from 0.0 (torch reduces), 0 from the first term */
  int64_t len, cap, *tgt, *src;
  int64_t nv, capv;
  double *vals;
} gs_grad;

static void gs_grad_free(gs_grad *gr) {
  free(gr->tgt);
  free(gr->src);
  free(gr->vals);
  memset(gr, 0, sizeof *gr);
}

static mt_status gs_grad_init(gs_grad *gr, const mt_tensor *x, const char *op, mt_error *err) {
  (void)op, (void)err;
  memset(gr, 0, sizeof *gr);
  gr->n = mt_numel(x);
  gr->add = 0; /* a copy; the reductions set 1 */
  return MT_OK;
}

static mt_status gs_nomem(const char *op, mt_error *err) {
  return mt_err(err, MT_OUT_OF_MEMORY, "%s backward: no memory for a gradient's plan", op);
}

/* g's values appended to gr->vals (row-major); *base: the first one's index */
static mt_status gs_values(gs_grad *gr, const mt_tensor *g, const char *op, int64_t *base,
                           mt_error *err) {
  int64_t n = mt_numel(g);
  *base = gr->nv;
  if (gr->nv + n > gr->capv) {
    int64_t cap = (gr->nv + n) * 2 + 16;
    double *v = realloc(gr->vals, (size_t)cap * sizeof(double));
    if (!v) return gs_nomem(op, err);
    gr->vals = v;
    gr->capv = cap;
  }
  for (int64_t j = 0; j < n; j++) gr->vals[gr->nv + j] = mt__grad_at(g, j);
  gr->nv += n;
  return MT_OK;
}

static mt_status gs_pair(gs_grad *gr, int64_t tgt, int64_t src, const char *op, mt_error *err) {
  if (gr->len == gr->cap) {
    int64_t cap = gr->cap * 2 + 16;
    int64_t *t = realloc(gr->tgt, (size_t)cap * sizeof(int64_t));
    if (!t) return gs_nomem(op, err);
    gr->tgt = t;
    int64_t *s = realloc(gr->src, (size_t)cap * sizeof(int64_t));
    if (!s) return gs_nomem(op, err);
    gr->src = s;
    gr->cap = cap;
  }
  gr->tgt[gr->len] = tgt;
  gr->src[gr->len++] = src;
  return MT_OK;
}

/* The masked gradient of x (its shape, dtype dt) from gr, into *out: the
 * pairs grouped by gradient element (a stable counting sort: index
 * bookkeeping), the values computed on ex. */
static mt_status gs_grad_emit(const mt_host *h, const gs_grad *gr, const mt_tensor *x,
                              mt_dtype dt, mt_tensor **out, const mt_exec *ex, const char *op,
                              mt_error *err) {
  mt_tensor *data, *mask;
  int64_t *off = NULL, *src = NULL;
  mt_status st;
  if (!ex->grad_scatter)
    return mt_err(err, MT_NOT_SUPPORTED, "%s backward: the %s backend has no kernels for it yet",
                  op, ex->name);
  off = calloc((size_t)gr->n + 2, sizeof(int64_t));
  src = malloc((size_t)(gr->len ? gr->len : 1) * sizeof(int64_t));
  if (!off || !src) {
    st = gs_nomem(op, err);
    goto out;
  }
  for (int64_t t = 0; t < gr->len; t++) off[gr->tgt[t] + 2]++;
  for (int64_t i = 0; i < gr->n; i++) off[i + 2] += off[i + 1];
  for (int64_t t = 0; t < gr->len; t++) src[off[gr->tgt[t] + 1]++] = gr->src[t];
  if ((st = mt__cpu_new_masked_dense(h, dt, x->ndim, x->shape, out, &data, &mask, err)) != MT_OK)
    goto out;
  mt_gsc_par p = {gr->n, gr->nv, dt, gr->add};
  if ((st = ex->grad_scatter(&p, gr->vals, off, src, data->values, mask->values, err)) !=
      MT_OK) {
    mt_err_prefix(err, "%s backward", op);
    h->free(*out);
    *out = NULL;
  }
out:
  free(off);
  free(src);
  return st;
}

/* Element j (row-major over v's shape) of view v: its offset. */
static int64_t view_off(const st_view *v, const int64_t *idx) {
  int64_t off = v->offset;
  for (int d = 0; d < v->ndim; d++) off += idx[d] * v->strides[d];
  return off;
}

/* g's specified elements, in row-major order over v's shape (g's shape),
 * added into gr at the offsets v gives; sel (NULL: all) picks which. */
static mt_status scatter(const st_view *v, const mt_tensor *g, const uint8_t *sel, gs_grad *gr,
                         const char *op, mt_error *err) {
  int64_t idx[MT_MAX_DIMS] = {0}, n = mt_shape_numel(v->ndim, v->shape), base;
  mt_status st = gs_values(gr, g, op, &base, err);
  for (int64_t j = 0; st == MT_OK && j < n; j++, mt__grad_next(idx, v->ndim, v->shape)) {
    if (!mt__grad_spec(g, j) || (sel && !sel[j])) continue;
    st = gs_pair(gr, view_off(v, idx), base + j, op, err);
  }
  return st;
}

/* gr (x's shape) read from g at the offsets view v (over g's row-major
 * elements, of x's shape) gives. */
static mt_status gather(const st_view *v, const mt_tensor *g, gs_grad *gr, const char *op,
                        mt_error *err) {
  int64_t idx[MT_MAX_DIMS] = {0}, base;
  mt_status st = gs_values(gr, g, op, &base, err);
  for (int64_t i = 0; st == MT_OK && i < gr->n; i++, mt__grad_next(idx, v->ndim, v->shape)) {
    int64_t off = view_off(v, idx);
    if (mt__grad_spec(g, off)) st = gs_pair(gr, i, base + off, op, err);
  }
  return st;
}

static int same_shape(int nd, const int64_t *a, int nd2, const int64_t *b) {
  return nd == nd2 && (nd == 0 || memcmp(a, b, (size_t)nd * sizeof(int64_t)) == 0);
}

/* ---- the forward kernels, reused on the upstream gradient -------------- */

/* Runs the structure family's forward op opid on ex on the one input t with
 * kwargs kw; its first output goes to *out (allocated by the call's host). */
static mt_status forward_on(const mt_call *call, mt_op opid, const mt_exec *ex,
                            const mt_tensor *t, const mt_kwargs *kw, mt_tensor **out,
                            mt_error *err) {
  const mt_tensor *in[1] = {t};
  mt_call sub = {.host = call->host, .op = opid, .n_in = 1, .in = in, .kw = kw};
  *out = NULL;
  /* the structure family's kernel on ex (mt_cpu_<op> on the CPU's) */
  mt_status st = mt__structure_run(&sub, opid, ex, err);
  if (st == MT_NOT_SUPPORTED && ex != &mt_cpu_exec) /* the forward's gap on ex: ours too */
    st = mt_err(err, MT_NOT_SUPPORTED, "%s: sparse storage: the %s backend has no kernels for "
                "it yet", mt_op_name(call->op), ex->name);
  if (st != MT_OK) return st;
  *out = sub.out[0];
  sub.out[0] = NULL;
  mt__cpu_drop_outputs(&sub);
  return MT_OK;
}

/* A copy of t (any storage) for the call's result: on the CPU's exec
 * mt_tensor_clone_host; on another, t's structure cloned on the host and
 * every stored value (a masked tensor's data and mask alike) copied by ex's
 * gather. */
static mt_status regather(const mt_exec *ex, const mt_tensor *t, mt_tensor *o, const char *op,
                          mt_error *err) {
  int64_t n = 0;
  mt_cgeom cg;
  if (t->kind == MT_KIND_COO)
    n = t->nnz * mt_coo_row_numel(t);
  else if (mt_kind_is_compressed(t->kind) && mt_cgeom_of(t, &cg))
    n = cg.batches * t->nnz * cg.entry;
  else
    return mt_err(err, MT_NOT_SUPPORTED, "%s: sparse storage: the %s backend has no kernels for "
                  "it yet", op, ex->name);
  if (n == 0) return MT_OK;
  if (!ex->gather)
    return mt_err(err, MT_NOT_SUPPORTED, "%s: the %s backend has no gather kernel", op, ex->name);
  int *src = calloc((size_t)n, sizeof *src);
  int64_t *off = malloc((size_t)n * sizeof *off);
  mt_status st;
  if (!src || !off) {
    st = mt_err(err, MT_OUT_OF_MEMORY, "%s: out of memory for a copy plan of %lld elements", op,
                (long long)n);
  } else {
    for (int64_t i = 0; i < n; i++) off[i] = i;
    const void *srcs[1] = {t->values};
    size_t es = mt_dtype_size(t->dtype);
    memset(o->values, 0xff, (size_t)n * es); /* the host's copy is not the result */
    st = ex->gather(src, off, n, 1, srcs, &n, es, o->values, err);
  }
  free(src);
  free(off);
  return st;
}

static mt_status clone_on(const mt_exec *ex, const mt_host *h, const mt_tensor *t,
                          const char *op, mt_tensor **out, mt_error *err) {
  mt_status st = mt_tensor_clone_host(h, t, out, err);
  if (st != MT_OK || ex == &mt_cpu_exec) return st;
  if (t->kind == MT_KIND_MASKED) {
    if ((st = regather(ex, t->data, (*out)->data, op, err)) == MT_OK)
      st = regather(ex, t->mask, (*out)->mask, op, err);
  } else {
    st = regather(ex, t, *out, op, err);
  }
  if (st != MT_OK) {
    h->free(*out);
    *out = NULL;
  }
  return st;
}

/* ---- view ops ------------------------------------------------------------ */

/* A call without a masked input: the sparse engine's (grad_sparse.c), its
 * compute on ex. */
static mt_status plain_input(mt_call *call, mt_op opid, const mt_exec *ex, mt_error *err) {
  return mt__grad_sparse_run(call, opid, ex, err);
}

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

/* Whether torch's backward of view op opid reduces the upstream gradient
 * (sums from 0.0, so -0.0 terms give +0.0) rather than copying it:
 * expand's sum_to when the shape changes, unfold when windows overlap
 * (step < size: every element, even one in a single window). */
static int view_reduces(mt_op opid, const mt_call *call, const mt_tensor *x, const mt_tensor *g) {
  if (opid == MT_OP_expand) return !same_shape(x->ndim, x->shape, g->ndim, g->shape);
  if (opid == MT_OP_unfold) return mt_kw_int(call->kw, "step", 1) < mt_kw_int(call->kw, "size", 0);
  return 0;
}

/* Dense storage: g scattered back through the forward's view of x. */
static mt_status view_scatter(mt_call *call, mt_op opid, const mt_tensor *x, const mt_tensor *g,
                              const mt_exec *ex, mt_error *err) {
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
  gr.add = view_reduces(opid, call, x, g);
  if ((st = scatter(&v, g, NULL, &gr, op, err)) == MT_OK)
    st = gs_grad_emit(mt__cpu_host(call), &gr, x, x->data->dtype, &call->out[0], ex, op, err);
  gs_grad_free(&gr);
  if (st != MT_OK) return st;
  return mt__grad_done(call);
}

static mt_status view_backward(mt_call *call, mt_op opid, const mt_exec *ex, mt_error *err) {
  const char *op = mt_op_name(opid);
  const mt_tensor *x = NULL, *g = NULL;
  mt_status st;
  mt__cpu_begin(call);
  if (mt__cpu_grad_sparse_takes(call)) return plain_input(call, opid, ex, err);
  if ((st = one_input(call, opid, &x, &g, err)) != MT_OK) return st;
  if (opid == MT_OP_unsqueeze) return refused(MT_LAYOUT_MISMATCH, op, no_squeeze, err);
  if (mt__grad_is_masked(x, MT_KIND_DENSE)) return view_scatter(call, opid, x, g, ex, err);
  if (opid == MT_OP_clone) { /* the upstream gradient as it is, any storage */
    if ((st = clone_on(ex, mt__cpu_host(call), g, op, &call->out[0], err)) != MT_OK)
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
      if ((st = forward_on(call, opid, ex, g, call->kw, &call->out[0], err)) != MT_OK)
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
    return view_backward(call, MT_OP_##name, &mt_cpu_exec, err); \
  }
GRAD_VIEW_OPS(X)
#undef X

/* ---- index: torch's backward refuses every MaskedTensor ----------------- */

static mt_status index_backward(mt_call *call, const mt_exec *ex, mt_error *err) {
  const mt_tensor *x = NULL, *g = NULL;
  mt_status st;
  mt__cpu_begin(call);
  if (mt__cpu_grad_sparse_takes(call)) return plain_input(call, MT_OP_index, ex, err);
  if ((st = one_input(call, MT_OP_index, &x, &g, err)) != MT_OK) return st;
  return refused(MT_LAYOUT_MISMATCH, "index", no_new_zeros, err);
}

/* ---- cat, stack: each input its piece of the upstream gradient ---------- */

static mt_status cat_backward(mt_call *call, mt_op opid, int stack, const mt_exec *ex,
                              mt_error *err) {
  const char *op = mt_op_name(opid);
  const mt_host *h = mt__cpu_host(call);
  const mt_tensor *g = NULL, *x0 = NULL;
  gs_grad gr = {0};
  mt_status st;
  int d = 0;
  char a[96];
  mt__cpu_begin(call);
  if (mt__cpu_grad_sparse_takes(call)) return plain_input(call, opid, ex, err);
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
      if ((st = forward_on(call, MT_OP_select, ex, g, &kw, &call->out[k], err)) != MT_OK)
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
    if ((st = gather(&v, g, &gr, op, err)) == MT_OK)
      st = gs_grad_emit(h, &gr, x, x->data->dtype, &call->out[k], ex, op, err);
    gs_grad_free(&gr);
    if (st != MT_OK) goto fail;
  }
  return mt__grad_done(call);
fail:
  mt__cpu_drop_outputs(call);
  return st;
}



/* ---- split: the pieces' upstream gradients put together ----------------- */

static mt_status split_backward(mt_call *call, const mt_exec *ex, mt_error *err) {
  static const char *op = "split";
  const mt_tensor *x = NULL, *g = NULL;
  gs_grad gr = {0};
  mt_status st;
  int d = 0;
  mt__cpu_begin(call);
  if (mt__cpu_grad_sparse_takes(call)) return plain_input(call, MT_OP_split, ex, err);
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
    if ((st = scatter(&v, gk, NULL, &gr, op, err)) != MT_OK) goto out;
  }
  if ((st = gs_grad_emit(mt__cpu_host(call), &gr, x, x->data->dtype, &call->out[0], ex, op,
                         err)) != MT_OK)
    goto out;
  mt__grad_done(call);
out:
  gs_grad_free(&gr);
  return st;
}

/* ---- where(cond, x, y): x where cond holds, y elsewhere ----------------- */

static mt_status where_backward(mt_call *call, const mt_exec *ex, mt_error *err) {
  static const char *op = "where";
  const mt_host *h = mt__cpu_host(call);
  const mt_tensor *in[3] = {0}, *g = NULL;
  uint8_t *sel = NULL;
  gs_grad gr = {0};
  mt_status st;
  char a[96];
  mt__cpu_begin(call);
  if (mt__cpu_grad_sparse_takes(call)) return plain_input(call, MT_OP_where, ex, err);
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
    if (x->kind == MT_KIND_DENSE && !mt__cpu_is_float(x->dtype)) continue; /* no grad */
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
    gr.add = !same_shape(x->ndim, x->shape, g->ndim, g->shape); /* sum_to over the broadcast */
    if ((st = scatter(&xv, g, sel, &gr, op, err)) == MT_OK)
      st = gs_grad_emit(h, &gr, x, x->kind == MT_KIND_MASKED ? x->data->dtype : x->dtype,
                        &call->out[k], ex, op, err);
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

static mt_status convert_backward(mt_call *call, mt_op opid, const mt_exec *ex, mt_error *err) {
  const char *op = mt_op_name(opid);
  const mt_tensor *x = NULL, *g = NULL;
  mt_kind from;
  mt_status st;
  mt__cpu_begin(call);
  /* a plain (sparse or dense) input: the sparse engine's */
  if (mt__cpu_grad_sparse_takes(call)) return mt__grad_sparse_run(call, opid, ex, err);
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
  if (opid == MT_OP_to_dense && from == MT_KIND_COO) {
    back = MT_OP_to_sparse;
  } else if (opid == MT_OP_to_dense && from == MT_KIND_CSR) {
    back = MT_OP_to_sparse_csr;
  } else if ((opid == MT_OP_to_sparse || opid == MT_OP_to_sparse_csr) && from == MT_KIND_DENSE) {
    back = MT_OP_to_dense;
  }
  if (back == MT_OP__END)
    return mt_err(err, MT_NOT_SUPPORTED, "%s backward: inputs/0 has %s storage; not implemented "
                  "by the CPU backend", op, mt_kind_name(from));
  if (g->kind != MT_KIND_MASKED)
    return mt_err(err, MT_INVALID_ARGUMENT, "%s backward: the upstream gradient must be masked",
                  op);
  mt_kwargs none = {0};
  if ((st = forward_on(call, back, ex, g, &none, &call->out[0], err)) != MT_OK) return st;
  return mt__grad_done(call);
}

mt_status mt__grad_structure_run(mt_call *call, mt_op op, const mt_exec *ex, mt_error *err) {
  switch (op) {
#define X(name) case MT_OP_##name:
    GRAD_VIEW_OPS(X)
#undef X
    return view_backward(call, op, ex, err);
  case MT_OP_index: return index_backward(call, ex, err);
  case MT_OP_cat: return cat_backward(call, op, 0, ex, err);
  case MT_OP_stack: return cat_backward(call, op, 1, ex, err);
  case MT_OP_split: return split_backward(call, ex, err);
  case MT_OP_where: return where_backward(call, ex, err);
  case MT_OP_to_dense:
  case MT_OP_to_sparse:
  case MT_OP_to_sparse_csr: return convert_backward(call, op, ex, err);
  default:
    return mt_err(err, MT_NOT_SUPPORTED, "%s backward: not a structure op", mt_op_name(op));
  }
}

#define X(name)                                                         \
  mt_status mt_cpu_grad_##name(mt_call *call, mt_error *err) {          \
    return mt__grad_structure_run(call, MT_OP_##name, &mt_cpu_exec, err); \
  }
X(index)
X(cat)
X(stack)
X(split)
X(where)
X(to_dense)
X(to_sparse)
X(to_sparse_csr)
#undef X

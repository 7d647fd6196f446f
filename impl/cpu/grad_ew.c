/* grad_ew.c - the elementwise backward engine of the MaskedTensor unary and
 * binary ops (see grad_ew.h for what it computes and why). The host plan is
 * here; each gradient element is common/grad_ew_math.h's mt_ew_elem, run
 * where the mt_exec says (the CPU reference here, the device for CUDA:
 * impl/cuda/grad_ew.cu). */
#include "grad_ew.h"

/* One operand of the op, densified in g's index space. */
typedef struct {
  const mt_tensor *t; /* the input */
  int number;         /* a Python number (kind scalar): no gradient */
  int grad;           /* gets a gradient: a floating tensor */
  double value;       /* number: its value */
  mt_dtype dtype;     /* the gradient's dtype: the operand's (data) dtype */
  int ndim;
  int64_t shape[MT_MAX_DIMS];
  int64_t bstride[MT_MAX_DIMS]; /* per dim of g: the operand's element stride, 0 = broadcast */
  int64_t n;
  double *x;   /* values, row-major, n */
  void *acc;   /* the gradient (dtype), summed over broadcast dims, n; 0 where gm is 0 */
  uint8_t *gm; /* the gradient's mask, n */
} ew_opnd;

static void opnd_free(ew_opnd *o) {
  free(o->x);
  free(o->acc);
  free(o->gm);
  o->x = o->acc = NULL;
  o->gm = NULL;
}

static void *alloc_n(size_t n, size_t size) { return calloc(n ? n : 1, size); }

/* t densified (a masked tensor's data): a COO tensor's duplicates summed by
 * ex's coalesce, the densifying then a copy */
static mt_status dense_on(const mt_exec *ex, const mt_tensor *t, mt_tensor **d, mt_error *err) {
  const mt_tensor *v = t->kind == MT_KIND_MASKED ? t->data : t;
  mt_tensor *tmp = NULL;
  mt_status st;
  if (ex == &mt_cpu_exec || v->kind != MT_KIND_COO) return mt_to_dense(t, d, err);
  *d = NULL;
  /* (a device's indices are checked there before the host follows them) */
  if ((st = mt__exec_coalesced(ex, v, &v, &tmp, err)) == MT_OK) st = mt_to_dense(v, d, err);
  mt_tensor_free(tmp);
  return st;
}

/* t's values (a masked tensor's data) densified into a new double array. */
static mt_status load_values(const mt_exec *ex, const mt_tensor *t, double **x, mt_error *err) {
  mt_tensor *d = NULL;
  mt_status st = dense_on(ex, t, &d, err);
  if (st != MT_OK) return st;
  int64_t n = mt_numel(d);
  if (!(*x = alloc_n((size_t)n, sizeof **x))) {
    st = mt_err(err, MT_OUT_OF_MEMORY, "out of memory densifying %lld values", (long long)n);
  } else {
    for (int64_t i = 0; i < n; i++) (*x)[i] = mt__cpu_ld(d->values, d->dtype, i);
  }
  mt_tensor_free(d);
  return st;
}

/* A bool tensor (a mask, any storage) densified into a new byte array. */
static mt_status load_mask(const mt_exec *ex, const mt_tensor *mask, uint8_t **m,
                           mt_error *err) {
  mt_tensor *d = NULL;
  mt_status st = dense_on(ex, mask, &d, err);
  if (st != MT_OK) return st;
  int64_t n = mt_numel(d);
  if (!(*m = alloc_n((size_t)n, 1))) {
    st = mt_err(err, MT_OUT_OF_MEMORY, "out of memory densifying a mask of %lld elements",
                (long long)n);
  } else {
    for (int64_t i = 0; i < n; i++) (*m)[i] = mt__cpu_ldi(d->values, d->dtype, i) != 0;
  }
  mt_tensor_free(d);
  return st;
}

/* Operand k of the call: kinds, broadcast strides against g, values. */
static mt_status opnd_open(const mt_exec *ex, const mt_call *call, int k, const mt__ew_spec *s,
                           const mt_tensor *g, ew_opnd *o, mt_error *err) {
  char what[24], sh[64], gsh[64];
  const mt_tensor *t;
  mt_status st;
  memset(o, 0, sizeof *o);
  if ((st = mt__cpu_input(call, k, s->op, &t, err)) != MT_OK) return st;
  if ((st = mt_tensor_validate(t, mt__cpu_in_name(k, what, sizeof what), err)) != MT_OK) return st;
  o->t = t;
  if (t->kind == MT_KIND_SCALAR) {
    o->number = 1;
    return mt__cpu_scalar_value(t, what, s->op, &o->value, err);
  }
  const mt_tensor *v = t->kind == MT_KIND_MASKED ? t->data : t;
  if (v->kind != MT_KIND_DENSE && v->kind != MT_KIND_COO && !mt_kind_is_compressed(v->kind))
    return mt_err(err, MT_NOT_SUPPORTED, "%s backward: %s is %s%s; the CPU backend implements "
                  "it on dense, COO and compressed storage", s->op, what,
                  mt_kind_name(v->kind), t->kind == MT_KIND_MASKED ? " storage" : "");
  o->dtype = v->dtype;
  o->grad = mt__cpu_is_float(v->dtype);
  o->ndim = t->ndim;
  memcpy(o->shape, t->shape, sizeof(int64_t) * (size_t)t->ndim);
  o->n = mt_numel(t);
  /* broadcast against g, aligned at the trailing dims */
  int off = g->ndim - t->ndim;
  int64_t stride = 1;
  if (off < 0) goto mismatch;
  for (int d = g->ndim - 1; d >= 0; d--) {
    int od = d - off;
    if (od < 0) {
      o->bstride[d] = 0;
      continue;
    }
    if (t->shape[od] == g->shape[d])
      o->bstride[d] = t->shape[od] == 1 ? 0 : stride;
    else if (t->shape[od] == 1)
      o->bstride[d] = 0;
    else
      goto mismatch;
    stride *= t->shape[od];
  }
  if ((st = load_values(ex, t, &o->x, err)) != MT_OK) return st;
  if (o->grad && (!(o->acc = alloc_n((size_t)o->n, mt_dtype_size(o->dtype))) ||
                  !(o->gm = alloc_n((size_t)o->n, 1)))) {
    opnd_free(o);
    return mt_err(err, MT_OUT_OF_MEMORY, "%s backward: out of memory for the gradient of %s",
                  s->op, what);
  }
  return MT_OK;
mismatch:
  return mt_err(err, MT_SHAPE_MISMATCH,
                "%s backward: %s of shape %s does not broadcast to the upstream gradient's %s",
                s->op, what, mt_shape_str(t->ndim, t->shape, sh, sizeof sh),
                mt_shape_str(g->ndim, g->shape, gsh, sizeof gsh));
}

/* The gradient of operand o as a dense-storage masked tensor. */
static mt_status out_dense(const mt_host *h, const ew_opnd *o, mt_tensor **out, mt_error *err) {
  mt_tensor *data, *mask;
  mt_status st = mt__cpu_new_masked_dense(h, o->dtype, o->ndim, o->shape, out, &data, &mask, err);
  if (st != MT_OK) return st;
  if (o->n) {
    memcpy(data->values, o->acc, (size_t)o->n * mt_dtype_size(o->dtype));
    memcpy(mask->values, o->gm, (size_t)o->n);
  }
  return MT_OK;
}

/* The gradient of operand o (g's shape) as a COO-storage masked tensor,
 * stored where g's coalesced mask stores (GRAD-8: torch's unary and binary
 * helpers rebuild the data on those indices); hybrid COO (dense dims) too. */
static mt_status out_coo(const mt_exec *ex, const mt_host *h, const ew_opnd *o,
                         const mt_tensor *g, const char *op, mt_tensor **out, mt_error *err) {
  const mt_tensor *cm = NULL;
  mt_tensor *tmp = NULL, *data = NULL, *mask = NULL;
  mt_status st;
  *out = NULL;
  if (g->mask->kind != MT_KIND_COO)
    return mt_err(err, MT_NOT_SUPPORTED, "%s backward: a COO-storage gradient needs a COO upstream "
                  "gradient, got %s storage", op, mt_kind_name(g->mask->kind));
  if ((st = ex == &mt_cpu_exec ? mt__cpu_coalesced(g->mask, &cm, &tmp, err)
                               : mt__exec_coalesced(ex, g->mask, &cm, &tmp, err)) != MT_OK) {
    mt_tensor_free(tmp);
    return st;
  }
  if ((st = h->coo_new(o->dtype, o->ndim, o->shape, cm->sparse_dim, cm->nnz, &data, err)) != MT_OK)
    goto out;
  if ((st = h->coo_new(MT_bool, o->ndim, o->shape, cm->sparse_dim, cm->nnz, &mask, err)) != MT_OK)
    goto out;
  size_t ni = (size_t)cm->sparse_dim * (size_t)cm->nnz;
  if (ni) {
    memcpy(data->indices, cm->indices, ni * sizeof(int64_t));
    memcpy(mask->indices, cm->indices, ni * sizeof(int64_t));
  }
  int64_t row = mt_coo_row_numel(cm); /* elements per entry: the dense dims */
  for (int64_t k = 0; k < cm->nnz; k++)
    for (int64_t j = 0, base = mt_coo_linear(cm, k) * row; j < row; j++) {
      int64_t lin = base + j;
      mt__cpu_st(data->values, o->dtype, k * row + j, mt__cpu_ld(o->acc, o->dtype, lin));
      ((uint8_t *)mask->values)[k * row + j] = o->gm[lin];
    }
  data->coalesced = mask->coalesced = 1;
  st = h->masked_new(data, mask, out, err);
  data = mask = NULL; /* owned by masked_new, also on failure */
out:
  mt_tensor_free(tmp);
  if (data) h->free(data);
  if (mask) h->free(mask);
  return st;
}

/* The gradient of operand o (g's shape) as a compressed-storage (CSR; CSC,
 * BSR, BSC, batched, hybrid alike) masked tensor on g's mask's structure. */
static mt_status out_compressed(const mt_host *h, const ew_opnd *o, const mt_tensor *g,
                                const char *op, mt_tensor **out, mt_error *err) {
  const mt_tensor *gm = g->mask;
  mt_tensor *data = NULL, *mask = NULL;
  mt_cgeom cg;
  mt_status st;
  *out = NULL;
  if (gm->kind != g->data->kind || !mt_cgeom_of(gm, &cg))
    return mt_err(err, MT_NOT_SUPPORTED, "%s backward: a %s-storage gradient needs an upstream "
                  "gradient of that storage, got a %s mask", op, mt_kind_name(g->data->kind),
                  mt_kind_name(gm->kind));
  if ((st = mt__cpu_compressed_like(h, gm, o->dtype, &data, err)) != MT_OK) return st;
  if ((st = mt__cpu_compressed_like(h, gm, MT_bool, &mask, err)) != MT_OK) {
    h->free(data);
    return st;
  }
  for (int64_t b = 0; b < cg.batches; b++)
    MT_CGEOM_FOR_EACH_CELL(gm, &cg, b, row, col, at) {
      for (int64_t j = 0; j < cg.dense; j++) {
        int64_t lin = ((b * cg.rows + row) * cg.cols + col) * cg.dense + j;
        mt__cpu_st(data->values, o->dtype, at + j, mt__cpu_ld(o->acc, o->dtype, lin));
        ((uint8_t *)mask->values)[at + j] = o->gm[lin];
      }
    }
  return h->masked_new(data, mask, out, err);
}

static mt_status out_grad(const mt_exec *ex, const mt_host *h, const ew_opnd *o,
                          const mt_tensor *g, const char *op, int k, mt_tensor **out,
                          mt_error *err) {
  mt_kind kind = o->t->kind == MT_KIND_MASKED ? o->t->data->kind : o->t->kind;
  if (kind == MT_KIND_DENSE) return out_dense(h, o, out, err);
  if (!mt_shape_equal(o->t, g) || g->data->kind != kind)
    return mt_err(err, MT_NOT_SUPPORTED, "%s backward: inputs/%d has %s storage and the upstream "
                  "gradient %s storage of %s shape", op, k, mt_kind_name(kind),
                  mt_kind_name(g->data->kind), mt_shape_equal(o->t, g) ? "the same" : "another");
  return kind == MT_KIND_COO ? out_coo(ex, h, o, g, op, out, err)
                             : out_compressed(h, o, g, op, out, err);
}

mt_status mt__cpu_grad_ew(mt_call *call, const mt__ew_spec *s, const mt_exec *ex, mt_error *err) {
  ew_opnd o[MT__EW_MAX_IN];
  const mt_tensor *g;
  double *gx = NULL;
  uint8_t *gmask = NULL;
  int opened = 0;
  mt_status st;

  mt__cpu_begin(call);
  memset(o, 0, sizeof o);
  if (s->n_in < 1 || s->n_in > MT__EW_MAX_IN || call->n_in > MT__EW_MAX_IN)
    return mt_err(err, MT_INVALID_ARGUMENT, "%s backward: %d inputs, expected %d", s->op,
                  call->n_in, s->n_in);
  if ((st = mt__grad_out(call, 0, s->op, &g, err)) != MT_OK) return st;
  if (g->kind != MT_KIND_MASKED)
    return mt_err(err, MT_INVALID_ARGUMENT, "%s backward: grad_outputs/0 is %s; the result of a "
                  "MaskedTensor op, and so its upstream gradient, is masked", s->op,
                  mt_kind_name(g->kind));
  if ((st = mt__cpu_require_float(g, "grad_outputs/0", s->op, err)) != MT_OK) return st;
  for (; opened < s->n_in; opened++)
    if ((st = opnd_open(ex, call, opened, s, g, &o[opened], err)) != MT_OK) goto out;
  if ((st = load_values(ex, g, &gx, err)) != MT_OK) goto out;
  if ((st = load_mask(ex, g->mask, &gmask, err)) != MT_OK) goto out;

  /* another backend without the hook: its gap (the reference's checks, its
   * values dropped); sparse storage is densified on the host (a COO
   * tensor's duplicates summed by ex's coalesce) and computed on ex */
  if (ex != &mt_cpu_exec) {
    if (!ex->grad_ew) {
      for (int k = 0; k < opened; k++) opnd_free(&o[k]);
      free(gx);
      free(gmask);
      return mt__exec_values_gap(call, ex, mt__cpu_grad_ew(call, s, &mt_cpu_exec, err), s->op,
                                 "sparse storage", err);
    }
  }
  /* GRAD-2: the derivative at every specified element of g, summed into
   * each operand's shape (masked sum over broadcast dims, GRAD-4) */
  mt_ew_par p;
  const double *xs[MT__EW_MAX_IN] = {NULL, NULL, NULL};
  int64_t xn[MT__EW_MAX_IN] = {0, 0, 0};
  void *acc[MT__EW_MAX_IN] = {NULL, NULL, NULL};
  uint8_t *gms[MT__EW_MAX_IN] = {NULL, NULL, NULL};
  memset(&p, 0, sizeof p);
  p.code = s->d;
  p.n_in = s->n_in;
  p.ndim = g->ndim;
  memcpy(p.shape, g->shape, sizeof(int64_t) * (size_t)g->ndim);
  for (int k = 0; k < s->n_in; k++) {
    memcpy(p.bstride[k], o[k].bstride, sizeof p.bstride[k]);
    p.number[k] = o[k].number;
    p.value[k] = o[k].value;
    p.grad[k] = o[k].grad;
    p.dtype[k] = o[k].dtype;
    xs[k] = o[k].x;
    xn[k] = o[k].number ? 0 : o[k].n;
    acc[k] = o[k].acc;
    gms[k] = o[k].gm;
  }
  if ((st = ex->grad_ew(&p, xs, xn, gx, gmask, mt_numel(g), acc, gms, err)) != MT_OK) {
    mt_err_prefix(err, "%s backward", s->op);
    goto out;
  }
  for (int k = 0; k < s->n_in; k++)
    if (o[k].grad &&
        (st = out_grad(ex, mt__cpu_host(call), &o[k], g, s->op, k, &call->out[k], err)) != MT_OK)
      goto out;
  call->n_out = call->n_in;
out:
  if (st != MT_OK) mt__cpu_drop_outputs(call);
  for (int k = 0; k < opened; k++) opnd_free(&o[k]);
  free(gx);
  free(gmask);
  return st;
}

/* example.c - a third-party implementation in a few dozen lines, built from
 * spec/include/mt/mt.h alone (no mtcs library): `neg` and `add` for masked
 * tensors with dense float32 storage. Every other op, dtype or layout is
 * reported NOT_SUPPORTED, which `mtcs run` counts as skipped, not failed.
 *
 *   cc -shared -fPIC -I spec/include -o example.so conformance/plugins/example.c
 *   mtcs run --backend ./example.so -v
 *
 * Semantics (spec/SEMANTICS.md): a unary op maps the data and keeps the
 * mask (MASK-4); a binary op on two masked tensors needs equal masks
 * (MASK-6, else MASK_MISMATCH, MASK-8); with a plain tensor or a Python
 * number the result keeps the masked operand's mask (MASK-7). Outputs are
 * allocated through call->host so that the runner can free them. */
#include <mt/kwargs.h> /* the kwarg schema (kwargs.def) and its check; includes mt.h */
#include <mt/mt.h>

/* Input k is a masked tensor with dense float32 storage. */
static int is_masked_f32(const mt_tensor *t) {
  return t && t->kind == MT_KIND_MASKED && t->data && t->mask && t->data->kind == MT_KIND_DENSE &&
         t->data->dtype == MT_float32 && t->mask->kind == MT_KIND_DENSE &&
         t->mask->dtype == MT_bool;
}
static int is_dense_f32(const mt_tensor *t) {
  return t && t->kind == MT_KIND_DENSE && t->dtype == MT_float32;
}
static int is_number(const mt_tensor *t) {
  return t && t->kind == MT_KIND_SCALAR && (t->dtype == MT_float64 || t->dtype == MT_int64);
}

static int supports(mt_op op, const mt_tensor *const *in, int n_in) {
  switch (op) {
    case MT_OP_neg: return n_in == 1 && is_masked_f32(in[0]);
    case MT_OP_add:
      return n_in == 2 && (is_masked_f32(in[0]) || is_masked_f32(in[1])) &&
             (is_masked_f32(in[0]) || is_dense_f32(in[0])) &&
             (is_masked_f32(in[1]) || is_dense_f32(in[1]) || is_number(in[1]));
    default: return 0;
  }
}

static int same_shape(const mt_tensor *a, const mt_tensor *b) {
  if (a->ndim != b->ndim) return 0;
  for (int d = 0; d < a->ndim; d++)
    if (a->shape[d] != b->shape[d]) return 0;
  return 1;
}

static int64_t numel(const mt_tensor *t) {
  int64_t n = 1;
  for (int d = 0; d < t->ndim; d++) n *= t->shape[d];
  return n;
}

/* Offset of row-major element i of a dense tensor, honouring strides. */
static int64_t offset(const mt_tensor *t, int64_t i) {
  int64_t off = 0;
  for (int d = t->ndim - 1; d >= 0; d--) {
    int64_t s = t->shape[d];
    off += (i % s) * t->strides[d];
    i /= s;
  }
  return off;
}

static float f32_at(const mt_tensor *t, int64_t i) { return ((const float *)t->values)[offset(t, i)]; }
static uint8_t bool_at(const mt_tensor *t, int64_t i) {
  return ((const uint8_t *)t->values)[offset(t, i)];
}

static mt_status fail(mt_error *err, mt_status s, const char *msg) {
  if (err) {
    err->status = s;
    size_t n = strlen(msg);
    if (n >= sizeof err->msg) n = sizeof err->msg - 1;
    memcpy(err->msg, msg, n);
    err->msg[n] = 0;
  }
  return s;
}

/* First thing in every kernel: refuse a kwarg the op does not take, or one
 * of a type it does not accept (spec/include/mt/kwargs.def), as torch
 * refuses an unexpected keyword (INVALID_ARGUMENT). */
static mt_status check_kwargs(const mt_call *call, mt_error *err) {
  const char *bad = "";
  char why[400];
  if (!mt_kw_validate(call->op, call->kw, &bad, why, sizeof why)) return MT_OK;
  if (err) {
    err->status = MT_INVALID_ARGUMENT;
    snprintf(err->msg, sizeof err->msg, "example plugin: kwargs/%s: %s", bad, why);
  }
  return MT_INVALID_ARGUMENT;
}

/* A new masked float32 tensor shaped like `like`, its mask copied from
 * `mask_of`; *data receives the data buffer to fill. */
static mt_status new_masked(mt_call *call, const mt_tensor *like, float **data, mt_error *err) {
  const mt_host *h = call->host;
  mt_tensor *d = NULL, *m = NULL, *out = NULL;
  mt_status st = h->dense_new(MT_float32, like->ndim, like->shape, &d, err);
  if (st != MT_OK) return st;
  if ((st = h->dense_new(MT_bool, like->ndim, like->shape, &m, err)) != MT_OK) {
    h->free(d);
    return st;
  }
  int64_t n = numel(like);
  for (int64_t i = 0; i < n; i++) ((uint8_t *)m->values)[i] = bool_at(like->mask, i);
  if ((st = h->masked_new(d, m, &out, err)) != MT_OK) return st; /* took d and m */
  *data = d->values;
  call->out[0] = out;
  call->n_out = 1;
  return MT_OK;
}

static mt_status example_neg(mt_call *call, mt_error *err) {
  const mt_tensor *a = call->in[0];
  float *y = NULL;
  mt_status st = check_kwargs(call, err);
  if (st != MT_OK) return st;
  if ((st = new_masked(call, a, &y, err)) != MT_OK) return st;
  int64_t n = numel(a);
  for (int64_t i = 0; i < n; i++) y[i] = -f32_at(a->data, i); /* masked-out data: anything */
  return MT_OK;
}

static mt_status example_add(mt_call *call, mt_error *err) {
  const mt_tensor *a = call->in[0], *b = call->in[1];
  mt_status st = check_kwargs(call, err);
  if (st != MT_OK) return st;
  /* add's schema has alpha (plain sparse add takes it), but a masked add
   * takes no kwarg at all (BIN-7: "len(kwargs) must equal 0") */
  if (call->kw && call->kw->n > 0)
    return fail(err, MT_INVALID_ARGUMENT, "example plugin: a masked add takes no kwargs");
  const mt_tensor *m = is_masked_f32(a) ? a : b; /* the operand whose mask the result keeps */
  if (b->kind != MT_KIND_SCALAR && !same_shape(a, b))
    return fail(err, MT_NOT_SUPPORTED, "example plugin: add does not broadcast");
  int64_t n = numel(m);
  if (is_masked_f32(a) && is_masked_f32(b))
    for (int64_t i = 0; i < n; i++)
      if (bool_at(a->mask, i) != bool_at(b->mask, i))
        return fail(err, MT_MASK_MISMATCH, "example plugin: add: the input masks differ");
  float *y = NULL;
  if ((st = new_masked(call, m, &y, err)) != MT_OK) return st;
  for (int64_t i = 0; i < n; i++) {
    float x = is_masked_f32(a) ? f32_at(a->data, i) : f32_at(a, i), z;
    if (b->kind == MT_KIND_SCALAR)
      z = b->dtype == MT_float64 ? (float)*(const double *)b->values
                                 : (float)*(const int64_t *)b->values;
    else
      z = is_masked_f32(b) ? f32_at(b->data, i) : f32_at(b, i);
    y[i] = x + z;
  }
  return MT_OK;
}

static const mt_kernel_fn kernels[MT_OP__END] = {
    [MT_OP_neg] = example_neg,
    [MT_OP_add] = example_add,
};

static const mt_impl example_impl = {
    .abi_version = MT_ABI_VERSION,
    .struct_size = sizeof(mt_impl),
    .name = "example",
    .supports = supports,
    .unavailable = NULL,
    .n_kernels = MT_OP__END,
    .kernels = kernels,
};

__attribute__((visibility("default"))) const mt_impl *mt_plugin_entry(uint32_t abi_version) {
  return abi_version == MT_ABI_VERSION ? &example_impl : NULL;
}

/* binary.c - CPU kernels of the binary family: add sub mul div.
 *
 * torch.masked's _binary_helper, operand by operand:
 * MASK-6  masked (+) masked with identical masks: the op on the data, same
 *         mask. Masks that differ in any element, shape or storage ->
 *         MASK_MISMATCH "Input masks must match".
 * MASK-7  masked (+) dense tensor, dense tensor (+) masked: the op on the
 *         data elementwise, the result's mask is the masked operand's;
 *         masked (+) number: the number is cast to the data dtype first,
 *         mask kept.
 * MASK-8  the mask-mismatch error itself, checked before anything else; masks
 *         of equal ndim whose shapes cannot broadcast are SHAPE_MISMATCH
 *         (torch.eq on the masks raises first).
 * In this slice shapes must match exactly (no broadcasting:
 * SHAPE_MISMATCH) and tensor dtypes must match (DTYPE_MISMATCH); torch
 * itself would broadcast and promote. float32 is computed in float. */
#include "cpu_util.h"

static double apply(mt_op op, mt_dtype dt, double a, double b) {
  if (dt == MT_float32) {
    float x = (float)a, y = (float)b;
    switch (op) {
    case MT_OP_add: return x + y;
    case MT_OP_sub: return x - y;
    case MT_OP_mul: return x * y;
    default: return x / y;
    }
  }
  switch (op) {
  case MT_OP_add: return a + b;
  case MT_OP_sub: return a - b;
  case MT_OP_mul: return a * b;
  default: return a / b;
  }
}

/* One operand, classified. */
typedef struct {
  const mt_tensor *t;
  int masked;   /* MASKED */
  int scalar;   /* a Python number */
  double value; /* the number, already rounded to the computation dtype */
} operand;

/* out[i] = a[i] op b[i] over n contiguous elements; a number operand is
 * broadcast (va/vb are NULL then). */
static void apply_all(mt_op op, mt_dtype dt, const void *va, double sa, const void *vb, double sb,
                      void *out, int64_t n) {
  for (int64_t i = 0; i < n; i++) {
    double a = va ? mt__cpu_ld(va, dt, i) : sa;
    double b = vb ? mt__cpu_ld(vb, dt, i) : sb;
    mt__cpu_st(out, dt, i, apply(op, dt, a, b));
  }
}

/* MASK-6/8: masks of two masked tensors must be identical (storage, shape,
 * every element; COO: same indices and values after coalescing). */
static mt_status masks_match(const char *name, const mt_tensor *a, const mt_tensor *b,
                             mt_error *err) {
  const mt_tensor *ma = a->mask, *mb = b->mask, *ca = NULL, *cb = NULL;
  mt_tensor *ta = NULL, *tb = NULL, *xa = NULL, *xb = NULL;
  char sa[64], sb[64];
  mt_status st = MT_OK;
  if (ma->kind != mb->kind)
    return mt_err(err, MT_MASK_MISMATCH,
                  "%s: Input masks must match (inputs/0 mask is %s, inputs/1 mask is %s)", name,
                  mt_kind_name(ma->kind), mt_kind_name(mb->kind));
  /* torch compares the masks with torch.eq: masks of equal ndim whose
   * shapes cannot broadcast make eq raise ("The size of tensor a (4) must
   * match the size of tensor b (5)") before any mask difference is seen. */
  if (ma->ndim == mb->ndim)
    for (int d = ma->ndim - 1; d >= 0; d--)
      if (ma->shape[d] != mb->shape[d] && ma->shape[d] != 1 && mb->shape[d] != 1)
        return mt_err(err, MT_SHAPE_MISMATCH,
                      "%s: The size of tensor a (%lld) must match the size of tensor b (%lld) at "
                      "non-singleton dimension %d (comparing the masks of inputs/0 and inputs/1)",
                      name, (long long)ma->shape[d], (long long)mb->shape[d], d);
  if (!mt_shape_equal(ma, mb))
    return mt_err(err, MT_MASK_MISMATCH,
                  "%s: Input masks must match (inputs/0 mask shape %s, inputs/1 mask shape %s)",
                  name, mt_shape_str(ma->ndim, ma->shape, sa, sizeof sa),
                  mt_shape_str(mb->ndim, mb->shape, sb, sizeof sb));
  if (ma->kind == MT_KIND_DENSE) {
    if ((st = mt__cpu_contig(ma, &ca, &ta, err)) != MT_OK) goto out;
    if ((st = mt__cpu_contig(mb, &cb, &tb, err)) != MT_OK) goto out;
    int64_t n = mt_numel(ma);
    for (int64_t i = 0; i < n; i++) {
      if (mt__cpu_ldb(ca->values, i) != mt__cpu_ldb(cb->values, i)) {
        st =
            mt_err(err, MT_MASK_MISMATCH,
                   "%s: Input masks must match (mask element %lld: inputs/0 %d, inputs/1 %d)", name,
                   (long long)i, (int)mt__cpu_ldb(ca->values, i), (int)mt__cpu_ldb(cb->values, i));
        goto out;
      }
    }
  } else if (ma->kind == MT_KIND_COO) {
    if ((st = mt__cpu_coalesced(ma, &ca, &xa, err)) != MT_OK) goto out;
    if ((st = mt__cpu_coalesced(mb, &cb, &xb, err)) != MT_OK) goto out;
    if (!mt__cpu_coo_same_indices(ca, cb)) {
      st = mt_err(err, MT_MASK_MISMATCH,
                  "%s: Input masks must match (COO mask indices differ: nnz %lld vs %lld)", name,
                  (long long)ca->nnz, (long long)cb->nnz);
      goto out;
    }
    int64_t n = ca->nnz * mt_coo_row_numel(ca);
    for (int64_t i = 0; i < n; i++) {
      if (mt__cpu_ldb(ca->values, i) != mt__cpu_ldb(cb->values, i)) {
        st = mt_err(err, MT_MASK_MISMATCH,
                    "%s: Input masks must match (COO mask value %lld: inputs/0 %d, inputs/1 %d)",
                    name, (long long)i, (int)mt__cpu_ldb(ca->values, i),
                    (int)mt__cpu_ldb(cb->values, i));
        goto out;
      }
    }
  } else {
    st = mt_err(err, MT_NOT_SUPPORTED, "%s: %s masks are not supported by the CPU backend", name,
                mt_kind_name(ma->kind));
  }
out:
  mt_tensor_free(ta);
  mt_tensor_free(tb);
  mt_tensor_free(xa);
  mt_tensor_free(xb);
  return st;
}

/* COO storage: masked (+) masked (same indices, checked by masks_match on
 * the masks; data indices equal by the masked invariant) or masked (+)
 * number. The result keeps the (coalesced) indices. */
static mt_status binary_coo(mt_call *call, mt_op op, const operand *a, const operand *b,
                            mt_error *err) {
  const char *name = mt_op_name(op);
  const mt_host *h = mt__cpu_host(call);
  const operand *m = a->masked ? a : b;
  const mt_tensor *da = NULL, *db = NULL, *cm;
  mt_tensor *ta = NULL, *tb = NULL, *tm = NULL, *data = NULL, *mask = NULL, *out = NULL;
  mt_dtype dt = m->t->data->dtype;
  mt_status st;
  if ((!a->masked && !a->scalar) || (!b->masked && !b->scalar)) {
    st = mt_err(err, MT_NOT_SUPPORTED,
                "%s: a COO-storage masked tensor combines only with a masked tensor of the same "
                "storage or a number on the CPU backend",
                name);
    goto out;
  }
  if (a->masked && (st = mt__cpu_coalesced(a->t->data, &da, &ta, err)) != MT_OK) goto out;
  if (b->masked && (st = mt__cpu_coalesced(b->t->data, &db, &tb, err)) != MT_OK) goto out;
  if (da && db && !mt__cpu_coo_same_indices(da, db)) {
    st = mt_err(err, MT_INVALID_ARGUMENT,
                "%s: sparse_coo indices must match (data of inputs/0 "
                "and inputs/1)",
                name);
    goto out;
  }
  const mt_tensor *shape_src = da ? da : db;
  if ((st = mt__cpu_copy(h, shape_src, &data, err)) != MT_OK) goto out;
  apply_all(op, dt, da ? da->values : NULL, a->value, db ? db->values : NULL, b->value,
            data->values, shape_src->nnz * mt_coo_row_numel(shape_src));
  data->coalesced = 1;
  if ((st = mt__cpu_coalesced(m->t->mask, &cm, &tm, err)) != MT_OK) goto out;
  if ((st = mt__cpu_copy(h, cm, &mask, err)) != MT_OK) goto out;
  st = h->masked_new(data, mask, &out, err);
  data = mask = NULL;
  if (st != MT_OK) goto out;
  call->out[0] = out;
  call->n_out = 1;
out:
  mt_tensor_free(ta);
  mt_tensor_free(tb);
  mt_tensor_free(tm);
  if (data) h->free(data);
  if (mask) h->free(mask);
  return st;
}

static mt_status binary(mt_call *call, mt_op op, mt_error *err) {
  const char *name = mt_op_name(op);
  const mt_host *h = mt__cpu_host(call);
  operand o[2] = {{0}, {0}};
  mt__cpu_mview mv[2] = {{0}, {0}};
  const mt_tensor *dv[2] = {NULL, NULL};
  mt_tensor *dtmp[2] = {NULL, NULL};
  mt_tensor *out = NULL, *data = NULL, *mask = NULL;
  char what[32], sa[64], sb[64];
  mt_status st;

  mt__cpu_begin(call);
  /* torch.masked rejects keyword arguments (e.g. alpha) on binary ops:
   * kwargs.def lists none for them, so the check refuses any */
  if ((st = mt__kw_check(op, call->kw, err)) != MT_OK) return st;
  for (int k = 0; k < 2; k++) {
    if ((st = mt__cpu_input(call, k, name, &o[k].t, err)) != MT_OK) return st;
    o[k].masked = o[k].t->kind == MT_KIND_MASKED;
    o[k].scalar = o[k].t->kind == MT_KIND_SCALAR;
    if (!o[k].scalar &&
        (st = mt_tensor_validate(o[k].t, mt__cpu_in_name(k, what, sizeof what), err)) != MT_OK)
      return st;
  }
  if (!o[0].masked && !o[1].masked)
    return mt_err(err, MT_NOT_SUPPORTED,
                  "%s: neither operand is a masked tensor (%s, %s); the CPU backend implements "
                  "masked semantics only",
                  name, mt_kind_name(o[0].t->kind), mt_kind_name(o[1].t->kind));
  for (int k = 0; k < 2; k++)
    if (!o[k].scalar && !o[k].masked && o[k].t->kind != MT_KIND_DENSE)
      return mt_err(err, MT_NOT_SUPPORTED,
                    "%s: inputs/%d has kind %s; a masked tensor combines with a masked tensor, a "
                    "dense tensor or a number",
                    name, k, mt_kind_name(o[k].t->kind));

  /* MASK-6/8: identical masks first, as torch checks them before anything. */
  if (o[0].masked && o[1].masked && (st = masks_match(name, o[0].t, o[1].t, err)) != MT_OK)
    return st;

  const mt_tensor *m = o[0].masked ? o[0].t : o[1].t;
  mt_dtype dt = m->data->dtype;
  if ((st = mt__cpu_require_float(m, o[0].masked ? "inputs/0" : "inputs/1", name, err)) != MT_OK)
    return st;
  for (int k = 0; k < 2; k++) {
    if (o[k].scalar) {
      /* MASK-7: the number is cast to the data dtype first. */
      if ((st = mt__cpu_scalar_value(o[k].t, mt__cpu_in_name(k, what, sizeof what), name,
                                     &o[k].value, err)) != MT_OK)
        return st;
      o[k].value = mt__cpu_round(dt, o[k].value);
      continue;
    }
    const mt_tensor *x = o[k].masked ? o[k].t->data : o[k].t;
    if (x->dtype != dt)
      return mt_err(err, MT_DTYPE_MISMATCH,
                    "%s: dtypes must match (inputs/%d is %s, inputs/%d is %s)", name,
                    o[0].masked ? 0 : 1, mt_dtype_name(dt), k, mt_dtype_name(x->dtype));
    if (!mt_shape_equal(x, m))
      return mt_err(
          err, MT_SHAPE_MISMATCH,
          "%s: shapes must match, broadcasting is not supported (inputs/0 %s, inputs/1 %s)", name,
          mt_shape_str(o[0].t->ndim, o[0].t->shape, sa, sizeof sa),
          mt_shape_str(o[1].t->ndim, o[1].t->shape, sb, sizeof sb));
  }

  if (m->data->kind == MT_KIND_COO) return binary_coo(call, op, &o[0], &o[1], err);
  for (int k = 0; k < 2; k++)
    if (o[k].masked && o[k].t->data->kind != MT_KIND_DENSE) {
      st = mt_err(err, MT_NOT_SUPPORTED, "%s: %s storage is not supported by the CPU backend", name,
                  mt_kind_name(o[k].t->data->kind));
      goto out;
    }

  /* Dense storage: contiguous views of every tensor operand. */
  for (int k = 0; k < 2; k++) {
    if (o[k].masked) {
      if ((st = mt__cpu_mview_open(o[k].t, &mv[k], err)) != MT_OK) goto out;
      dv[k] = mv[k].data;
    } else if (!o[k].scalar) {
      if ((st = mt__cpu_contig(o[k].t, &dv[k], &dtmp[k], err)) != MT_OK) goto out;
    }
  }
  if ((st = h->dense_new(dt, m->ndim, m->shape, &data, err)) != MT_OK) goto out;
  /* MASK-6/7: the op on the data, elementwise (masked-out elements too, as
   * torch; they stay masked out). */
  apply_all(op, dt, dv[0] ? dv[0]->values : NULL, o[0].value, dv[1] ? dv[1]->values : NULL,
            o[1].value, data->values, mt_numel(m));
  /* The result's mask: the masked operand's (the first, when both). */
  if ((st = mt__cpu_copy(h, o[0].masked ? mv[0].mask : mv[1].mask, &mask, err)) != MT_OK) goto out;
  st = h->masked_new(data, mask, &out, err);
  data = mask = NULL;
  if (st != MT_OK) goto out;
  call->out[0] = out;
  call->n_out = 1;
out:
  for (int k = 0; k < 2; k++) {
    mt__cpu_mview_close(&mv[k]);
    mt_tensor_free(dtmp[k]);
  }
  if (data) h->free(data);
  if (mask) h->free(mask);
  return st;
}

mt_status mt_cpu_add(mt_call *call, mt_error *err) { return binary(call, MT_OP_add, err); }
mt_status mt_cpu_sub(mt_call *call, mt_error *err) { return binary(call, MT_OP_sub, err); }
mt_status mt_cpu_mul(mt_call *call, mt_error *err) { return binary(call, MT_OP_mul, err); }
mt_status mt_cpu_div(mt_call *call, mt_error *err) { return binary(call, MT_OP_div, err); }

/* npma_structure.c - the numpy_ma profile's structure ops: the MaskedArray
 * calls that move data and mask together (NPMA-18) and np.ma.where's mask
 * rule (NPMA-19).
 *
 * NPMA-18: select (m.take(index, axis=dim)), slice (m[start:end:step] along
 *   dim), index (m[idx], an integer or bool index array), transpose
 *   (np.ma.swapaxes), t (m.T), view and reshape (m.reshape), unsqueeze
 *   (np.ma.expand_dims), clone (m.copy()), ones_like (np.ma.ones_like: ones,
 *   the mask kept), cat (np.ma.concatenate) and stack (np.ma.stack) give the
 *   same data and mask as torch's passthrough ops (STR-1, STR-2, STR-4): the
 *   reference runs its torch kernels on dense storage (numpy.ma has no
 *   sparse arrays: COO/CSR storage is NOT_SUPPORTED). cat/stack also take
 *   plain tensors, numpy.ma's nomask: all specified (torch takes a plain
 *   tensor as its own mask).
 * NPMA-19: np.ma.where(cond, x, y): the operands broadcast (NPMA-16); data
 *   is np.where(cond.filled(False), x's data, y's data) in numpy 2's
 *   promotion of x and y (NPMA-4: a number is a 0-d float64/int64/bool
 *   array), the result is masked where cond is masked or the branch taken
 *   is: mask = cond's mask | where(cond.filled(False), x's mask, y's mask).
 *   A masked-out cond takes y's data. */
#include "cpu.h"
#include "npma_util.h"

/* Input 0 must be a masked tensor with dense storage. */
static mt_status dense_masked_first(const mt_call *call, const char *name, mt_error *err) {
  const mt_tensor *t = NULL;
  mt_status st = mt__cpu_input(call, 0, name, &t, err);
  if (st != MT_OK) return st;
  if (t->kind != MT_KIND_MASKED)
    return mt_err(err, MT_NOT_SUPPORTED, "%s: inputs/0 must be a masked tensor, got %s", name,
                  mt_kind_name(t->kind));
  if (!t->data || t->data->kind != MT_KIND_DENSE)
    return mt_err(err, MT_NOT_SUPPORTED, "%s: inputs/0 has sparse storage; numpy.ma has dense "
                  "arrays only", name);
  return MT_OK;
}

/* NPMA-18: the MaskedArray call moves data and mask as torch's kernel does. */
#define NPMA_PASSTHROUGH(X) \
  X(select) X(slice) X(index) X(transpose) X(t) X(view) X(reshape) X(unsqueeze) X(clone) \
  X(ones_like)

#define X(op)                                                                        \
  mt_status mt_npma_##op(mt_call *call, mt_error *err) {                             \
    mt_status st = dense_masked_first(call, #op, err);                               \
    return st != MT_OK ? st : mt_cpu_##op(call, err);                                \
  }
NPMA_PASSTHROUGH(X)
#undef X

/* NPMA-18: np.ma.concatenate / np.ma.stack; a plain tensor is nomask (all
 * specified): it is wrapped as a masked tensor with a true mask, then the
 * torch kernel joins them. */
static mt_status npma_join(mt_call *call, mt_kernel_fn kernel, const char *name, mt_error *err) {
  const mt_tensor *in[8];
  mt_tensor *wrap[8] = {0};
  const mt_tensor *const *orig = call->in;
  mt_status st = MT_OK;
  if (call->n_in > 8)
    return mt_err(err, MT_NOT_SUPPORTED, "%s: more than 8 inputs", name);
  for (int k = 0; k < call->n_in; k++) {
    const mt_tensor *t = NULL, *v = NULL;
    mt_tensor *tmp = NULL, *d = NULL, *m = NULL;
    if ((st = mt__cpu_input(call, k, name, &t, err)) != MT_OK) goto out;
    in[k] = t;
    if (t->kind == MT_KIND_MASKED) {
      if (!t->data || t->data->kind != MT_KIND_DENSE) {
        st = mt_err(err, MT_NOT_SUPPORTED, "%s: inputs/%d has sparse storage; numpy.ma has "
                    "dense arrays only", name, k);
        goto out;
      }
      continue;
    }
    if (t->kind != MT_KIND_DENSE) {
      st = mt_err(err, MT_NOT_SUPPORTED, "%s: inputs/%d has kind %s", name, k,
                  mt_kind_name(t->kind));
      goto out;
    }
    if ((st = mt__cpu_contig(t, &v, &tmp, err)) != MT_OK) goto out;
    st = mt__cpu_new_masked_dense(mt__cpu_host(call), t->dtype, t->ndim, t->shape, &wrap[k], &d,
                                  &m, err);
    if (st == MT_OK) {
      memcpy(d->values, v->values, (size_t)mt_numel(t) * mt_dtype_size(t->dtype));
      memset(m->values, 1, (size_t)mt_numel(t));
      in[k] = wrap[k];
    }
    mt_tensor_free(tmp);
    if (st != MT_OK) goto out;
  }
  call->in = in;
  st = kernel(call, err);
  call->in = orig;
out:
  for (int k = 0; k < 8; k++) mt_tensor_free(wrap[k]);
  return st;
}

mt_status mt_npma_cat(mt_call *call, mt_error *err) {
  return npma_join(call, mt_cpu_cat, "cat", err);
}
mt_status mt_npma_stack(mt_call *call, mt_error *err) {
  return npma_join(call, mt_cpu_stack, "stack", err);
}

/* NPMA-19: np.ma.where(cond, x, y). */
mt_status mt_npma_where(mt_call *call, mt_error *err) {
  npma_arg c = {0}, x = {0}, y = {0};
  npma_arg *args[3] = {&c, &x, &y};
  void *od = NULL;
  uint8_t *om = NULL;
  mt_status st;
  int ndim = 0;
  int64_t shape[MT_MAX_DIMS];
  mt_dtype rt;

  if ((st = npma_begin(call, MT_OP_where, err)) != MT_OK) return st;
  if (call->n_in != 3) {
    st = mt_err(err, MT_INVALID_ARGUMENT, "where: expected 3 inputs, got %d", call->n_in);
    goto out;
  }
  for (int k = 0; k < 3; k++)
    if ((st = npma_arg_open(call, k, "where", args[k], err)) != MT_OK) goto out;
  if (c.dt != MT_bool) {
    st = mt_err(err, MT_NOT_SUPPORTED, "where: only a bool condition is implemented (got %s)",
                mt_dtype_name(c.dt));
    goto out;
  }
  if ((st = npma_promote_checked("where", x.dt, y.dt, &rt, err)) != MT_OK) goto out;
  if ((st = npma_broadcast(args, 3, "where", &ndim, shape, err)) != MT_OK) goto out;
  for (int k = 0; k < 3; k++) npma_arg_bcast(args[k], ndim, shape);
  if ((st = npma_new_out(call, rt, ndim, shape, &od, &om, err)) != MT_OK) goto out;
  int is_int = npma_kind(rt) != 'f';
  for (int64_t i = 0; i < mt_shape_numel(ndim, shape); i++) {
    int cs = npma_spec(&c, i);
    int cf = cs && npma_ldi(&c, i) != 0; /* cond.filled(False) */
    const npma_arg *w = cf ? &x : &y;
    npma_st(od, rt, i, npma_ld(w, i), npma_ldi(w, i), is_int);
    om[i] = (uint8_t)(cs && npma_spec(w, i));
  }
out:
  if (st != MT_OK) mt__cpu_drop_outputs(call);
  for (int k = 0; k < 3; k++) npma_arg_close(args[k]);
  return st;
}

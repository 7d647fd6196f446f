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
#include "common/exec.h"
#include "common/npma_structure_math.h"
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

/* torch's structure kernel (impl/cpu/structure.c) on ex */
static mt_status passthrough(mt_call *call, mt_op op, const mt_exec *ex, mt_error *err) {
  mt_status st = dense_masked_first(call, mt_op_name(op), err);
  return st != MT_OK ? st : mt__structure_run(call, op, ex, err);
}

#define X(op)                                                           \
  mt_status mt_npma_##op(mt_call *call, mt_error *err) {                \
    return mt__npma_structure_run(call, MT_OP_##op, &mt_cpu_exec, err); \
  }
NPMA_PASSTHROUGH(X)
#undef X

/* NPMA-18: np.ma.concatenate / np.ma.stack; a plain tensor is nomask (all
 * specified): it is wrapped as a masked tensor with a true mask, then the
 * torch kernel joins them. */
static mt_status npma_join(mt_call *call, mt_op op, const mt_exec *ex, mt_error *err) {
  const char *name = mt_op_name(op);
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
  st = mt__structure_run(call, op, ex, err);
  call->in = orig;
out:
  for (int k = 0; k < 8; k++) mt_tensor_free(wrap[k]);
  return st;
}

mt_status mt_npma_cat(mt_call *call, mt_error *err) {
  return mt__npma_structure_run(call, MT_OP_cat, &mt_cpu_exec, err);
}
mt_status mt_npma_stack(mt_call *call, mt_error *err) {
  return mt__npma_structure_run(call, MT_OP_stack, &mt_cpu_exec, err);
}

/* NPMA-19: np.ma.where(cond, x, y). */
static mt_status npma_where(mt_call *call, const mt_exec *ex, mt_error *err) {
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
  int64_t n = mt_shape_numel(ndim, shape);
  if (!ex->npma_where) {
    st = mt_err(err, MT_NOT_SUPPORTED, "where: the %s backend has no numpy_ma where kernel",
                ex->name);
    goto out;
  }
  if (n > 0) {
    mt_npw_par p = {.rt = rt};
    npma_opnd_of(&c, &p.c);
    npma_opnd_of(&x, &p.x);
    npma_opnd_of(&y, &p.y);
    st = ex->npma_where(&p, c.data, npma_opnd_len(&c), c.mask, x.data, npma_opnd_len(&x),
                        x.mask, y.data, npma_opnd_len(&y), y.mask, od, om, n, err);
  }
out:
  if (st != MT_OK) mt__cpu_drop_outputs(call);
  for (int k = 0; k < 3; k++) npma_arg_close(args[k]);
  return st;
}

mt_status mt_npma_where(mt_call *call, mt_error *err) {
  return mt__npma_structure_run(call, MT_OP_where, &mt_cpu_exec, err);
}

/* ---- the family's entry (common/exec.h) ----------------------------------- */

mt_status mt__npma_structure_run(mt_call *call, mt_op op, const mt_exec *ex, mt_error *err) {
  switch (op) {
#define X(name) case MT_OP_##name:
    NPMA_PASSTHROUGH(X)
#undef X
    return passthrough(call, op, ex, err);
  case MT_OP_cat:
  case MT_OP_stack: return npma_join(call, op, ex, err);
  case MT_OP_where: return npma_where(call, ex, err);
  default: return mt_err(err, MT_NOT_SUPPORTED, "%s: not a numpy_ma structure op", mt_op_name(op));
  }
}

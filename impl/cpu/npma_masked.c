/* npma_masked.c - the numpy_ma profile's masked family (NPMA-1).
 *
 * masked_tensor(data, mask) = np.ma.masked_array(data, mask=np.logical_not(mask)):
 *   any data dtype (uint8 too) and any mask dtype (nonzero = specified); a
 *   mask of the same size and another shape is read in row-major order (numpy
 *   reshapes it), a mask of size 1 applies to every element, any other size
 *   is numpy's MaskError -> SHAPE_MISMATCH.
 * to_tensor(m, value) = m.filled(value): a plain dense tensor, data where
 *   specified, value cast to the dtype elsewhere (integers: truncated, a NaN
 *   or infinite value is numpy's TypeError -> INVALID_ARGUMENT; bool: value
 *   != 0). */
#include "common/exec.h"
#include "common/npma_structure_math.h"
#include "npma_util.h"

static mt_status masked_tensor(mt_call *call, const mt_exec *ex, mt_error *err) {
  static const char *op = "masked_tensor";
  const mt_tensor *data = NULL, *mask = NULL, *dv = NULL, *mv = NULL;
  mt_tensor *dtmp = NULL, *mtmp = NULL;
  void *od = NULL;
  uint8_t *om = NULL;
  mt_status st;

  if ((st = npma_begin(call, MT_OP_masked_tensor, err)) != MT_OK) return st;
  if ((st = mt__cpu_input(call, 0, op, &data, err)) != MT_OK) return st;
  if ((st = mt__cpu_input(call, 1, op, &mask, err)) != MT_OK) return st;
  if (data->kind != MT_KIND_DENSE || mask->kind != MT_KIND_DENSE)
    return mt_err(err, MT_NOT_SUPPORTED,
                  "%s: numpy.ma takes dense arrays only (data is %s, mask is %s)", op,
                  mt_kind_name(data->kind), mt_kind_name(mask->kind));
  if ((st = mt_tensor_validate(data, "inputs/0", err)) != MT_OK) return st;
  if ((st = mt_tensor_validate(mask, "inputs/1", err)) != MT_OK) return st;
  int64_t n = mt_numel(data), nm = mt_numel(mask);
  if (nm != n && nm != 1)
    return mt_err(err, MT_SHAPE_MISMATCH,
                  "%s: Mask and data not compatible: data size is %lld, mask size is %lld "
                  "(numpy.ma's MaskError)",
                  op, (long long)n, (long long)nm);
  if ((st = mt__cpu_contig(data, &dv, &dtmp, err)) != MT_OK) goto out;
  if ((st = mt__cpu_contig(mask, &mv, &mtmp, err)) != MT_OK) goto out;
  if ((st = npma_new_out(call, data->dtype, data->ndim, data->shape, &od, &om, err)) != MT_OK)
    goto out;
  if (!ex->npma_masked) {
    st = mt_err(err, MT_NOT_SUPPORTED, "%s: the %s backend has no numpy_ma masked kernels", op,
                ex->name);
    goto out;
  }
  if (n) {
    mt_npk_par p = {.kind = NPK_MASKED_TENSOR, .dt = data->dtype,
                    .es = (int64_t)mt_dtype_size(data->dtype), .mdt = mask->dtype, .nm = nm};
    st = ex->npma_masked(&p, dv->values, mv->values, nm * (int64_t)mt_dtype_size(mask->dtype),
                         od, om, n, err);
  }
out:
  if (st != MT_OK) mt__cpu_drop_outputs(call);
  mt_tensor_free(dtmp);
  mt_tensor_free(mtmp);
  return st;
}

static mt_status to_tensor(mt_call *call, const mt_exec *ex, mt_error *err) {
  static const char *op = "to_tensor";
  npma_arg m = {0};
  const mt_tensor *val = NULL;
  mt_tensor *o = NULL;
  double v = 0.0;
  int64_t vi = 0;
  mt_status st;

  if ((st = npma_begin(call, MT_OP_to_tensor, err)) != MT_OK) return st;
  if ((st = npma_arg_open(call, 0, op, &m, err)) != MT_OK) goto out;
  if (!m.is_masked) {
    st = mt_err(err, MT_NOT_SUPPORTED, "%s: inputs/0 must be a masked tensor", op);
    goto out;
  }
  if ((st = mt__cpu_input(call, 1, op, &val, err)) != MT_OK) goto out;
  if ((st = mt__cpu_scalar_value(val, "inputs/1 (value)", op, &v, err)) != MT_OK) goto out;
  int is_int = npma_kind(m.dt) != 'f';
  if (is_int && m.dt != MT_bool) {
    if (!isfinite(v)) {
      char buf[40];
      st = mt_err(err, MT_INVALID_ARGUMENT, "%s: Cannot convert fill_value %s to dtype %s", op,
                  mt__cpu_pyfloat(v, buf, sizeof buf), mt_dtype_name(m.dt));
      goto out;
    }
    vi = (val->dtype == MT_int64 || val->dtype == MT_bool) ? mt__cpu_ldi(val->values, val->dtype, 0)
                                                          : (int64_t)v;
  } else if (m.dt == MT_bool) {
    vi = v != 0.0;
  }
  const mt_tensor *t = m.t;
  if ((st = mt__cpu_host(call)->dense_new(m.dt, t->ndim, t->shape, &o, err)) != MT_OK) goto out;
  call->out[0] = o;
  call->n_out = 1;
  if (!ex->npma_masked) {
    st = mt_err(err, MT_NOT_SUPPORTED, "%s: the %s backend has no numpy_ma masked kernels", op,
                ex->name);
    goto out;
  }
  if (mt_numel(t) > 0) {
    mt_npk_par p = {.kind = NPK_TO_TENSOR, .dt = m.dt, .es = (int64_t)mt_dtype_size(m.dt),
                    .v = v, .vi = is_int ? vi : 0};
    st = ex->npma_masked(&p, m.data, m.mask, mt_numel(t), o->values, NULL, mt_numel(t), err);
  }
out:
  if (st != MT_OK) mt__cpu_drop_outputs(call);
  npma_arg_close(&m);
  return st;
}

mt_status mt_npma_masked_tensor(mt_call *call, mt_error *err) {
  return mt__npma_masked_run(call, MT_OP_masked_tensor, &mt_cpu_exec, err);
}
mt_status mt_npma_to_tensor(mt_call *call, mt_error *err) {
  return mt__npma_masked_run(call, MT_OP_to_tensor, &mt_cpu_exec, err);
}

/* ---- the family's entry (common/exec.h) ----------------------------------- */

mt_status mt__npma_masked_run(mt_call *call, mt_op op, const mt_exec *ex, mt_error *err) {
  switch (op) {
  case MT_OP_masked_tensor: return masked_tensor(call, ex, err);
  case MT_OP_to_tensor: return to_tensor(call, ex, err);
  default: return mt_err(err, MT_NOT_SUPPORTED, "%s: not a numpy_ma masked op", mt_op_name(op));
  }
}

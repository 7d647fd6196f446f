/* int_unary_stays_int.c - breaks UN-1: exp/log/sin/sqrt of integer or bool
 * data keep the input's dtype (the result allocated "like the input", then
 * the float values truncated into it), where torch computes in float32 and
 * returns float32: sin(int64 1) is 0.84 in torch, 0 here. Dense storage
 * only (the other cases are left to the reference kernel). */
#include "mutant.h"

static mt_status stay_int(mt_call *call, mt_error *err, mt_kernel_fn real) {
  mt_status st = real(call, err);
  const mt_tensor *x = call->n_in > 0 ? call->in[0] : NULL;
  if (st != MT_OK || !mt__mutant_dense_masked(x) || mt_dtype_is_float(x->data->dtype) ||
      !mt__mutant_dense_masked(call->out[0]))
    return st;
  const mt_host *h = call->host ? call->host : mt_host_default();
  mt_tensor *o = call->out[0], *d = NULL, *m = NULL, *r = NULL;
  if ((st = h->dense_new(x->data->dtype, o->ndim, o->shape, &d, err)) != MT_OK) return st;
  if ((st = mt_tensor_clone_host(h, o->mask, &m, err)) != MT_OK) {
    h->free(d);
    return st;
  }
  for (int64_t i = 0; i < mt_numel(o); i++) {
    double v = mt_get_f64(o->data->values, o->data->dtype, i);
    mt_set_f64(d->values, d->dtype, i, isfinite(v) ? trunc(v) : 0.0);
  }
  if ((st = h->masked_new(d, m, &r, err)) != MT_OK) return st; /* took d and m */
  h->free(o);
  call->out[0] = r;
  return MT_OK;
}

static mt_status mutant_exp(mt_call *call, mt_error *err) { return stay_int(call, err, mt_cpu_exp); }
static mt_status mutant_log(mt_call *call, mt_error *err) { return stay_int(call, err, mt_cpu_log); }
static mt_status mutant_sin(mt_call *call, mt_error *err) { return stay_int(call, err, mt_cpu_sin); }
static mt_status mutant_sqrt(mt_call *call, mt_error *err) {
  return stay_int(call, err, mt_cpu_sqrt);
}

static const mt_kernel_fn kernels[MT_OP__END] = {
#include "cpu_slots.h"
    [MT_OP_exp] = mutant_exp,
    [MT_OP_log] = mutant_log,
    [MT_OP_sin] = mutant_sin,
    [MT_OP_sqrt] = mutant_sqrt,
};
MT_MUTANT_ENTRY("int_unary_stays_int", kernels)

/* scalar_mul_loses_neg_zero.c - breaks MASK-7: masked * number goes through
 * an axpby-style kernel y = a * x + b with b = +0.0 (one scalar kernel for
 * add and mul, as BLAS-style libraries write it): a * x = -0.0 plus +0.0 is
 * +0.0, so the sign of every negative zero product is lost. */
#include "mutant.h"

static mt_status mutant_mul(mt_call *call, mt_error *err) {
  mt_status st = mt_cpu_mul(call, err);
  if (st != MT_OK || call->n_in < 2 || !mt__mutant_dense_masked(call->out[0])) return st;
  if (call->in[0]->kind != MT_KIND_SCALAR && call->in[1]->kind != MT_KIND_SCALAR) return MT_OK;
  mt_tensor *o = call->out[0]->data;
  for (int64_t i = 0; i < mt_numel(o); i++)
    mt_set_f64(o->values, o->dtype, i, mt_get_f64(o->values, o->dtype, i) + 0.0);
  return MT_OK;
}

static const mt_kernel_fn kernels[MT_OP__END] = {
#include "cpu_slots.h"
    [MT_OP_mul] = mutant_mul,
};
MT_MUTANT_ENTRY("scalar_mul_loses_neg_zero", kernels)

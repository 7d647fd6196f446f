/* scalar_in_double.c - breaks MASK-7: float32 masked (op) number is computed
 * in double with the number as given and rounded once at the end,
 * (float)((double)x / 0.1), where torch first casts the number to float32
 * and computes in float: x / 0.1f. A C library that passes Python numbers
 * as double and lets C's usual conversions promote does exactly this. */
#include "mutant.h"

static double apply(mt_op op, double a, double b) {
  switch (op) {
  case MT_OP_add: return a + b;
  case MT_OP_sub: return a - b;
  case MT_OP_mul: return a * b;
  default: return a / b;
  }
}
static mt_status in_double(mt_call *call, mt_error *err, mt_kernel_fn real, mt_op op) {
  mt_status st = real(call, err);
  if (st != MT_OK || call->n_in < 2 || !mt__mutant_dense_masked(call->out[0])) return st;
  const mt_tensor *a = call->in[0], *b = call->in[1];
  int s = b->kind == MT_KIND_SCALAR ? 1 : a->kind == MT_KIND_SCALAR ? 0 : -1;
  const mt_tensor *m = s == 1 ? a : s == 0 ? b : NULL;
  if (!m || m->kind != MT_KIND_MASKED || m->data->dtype != MT_float32) return MT_OK;
  double c = mt_get_f64(call->in[s]->values, call->in[s]->dtype, 0);
  mt_tensor *o = call->out[0]->data;
  for (int64_t i = 0; i < mt_numel(o); i++) {
    double x = mt_dense_get(m->data, i);
    mt_set_f64(o->values, MT_float32, i, (float)(s == 1 ? apply(op, x, c) : apply(op, c, x)));
  }
  return MT_OK;
}

#define MUTANT(op)                                          \
  static mt_status mutant_##op(mt_call *c, mt_error *e) {  \
    return in_double(c, e, mt_cpu_##op, MT_OP_##op);        \
  }
MUTANT(add)
MUTANT(sub)
MUTANT(mul)
MUTANT(div)

static const mt_kernel_fn kernels[MT_OP__END] = {
#include "cpu_slots.h"
    [MT_OP_add] = mutant_add, [MT_OP_sub] = mutant_sub,
    [MT_OP_mul] = mutant_mul, [MT_OP_div] = mutant_div,
};
MT_MUTANT_ENTRY("scalar_in_double", kernels)

/* npma_weak_scalar.c - breaks NPMA-4: numpy_ma's add/sub/mul/div treat a
 * Python number as NEP 50's weak scalar (plain numpy 2: float32 + 2.5 stays
 * float32, int32 + 2 stays int32), where numpy.ma turns the number into a 0-d
 * float64/int64 array first (getdata), so the result is float64/int64. The
 * number is handed to the real kernel in the tensor's dtype. */
#include "npma_mutant.h"

static mt_status weak(mt_call *call, mt_error *err, mt_kernel_fn real) {
  if (call->n_in != 2) return real(call, err);
  int s = call->in[1]->kind == MT_KIND_SCALAR ? 1 : call->in[0]->kind == MT_KIND_SCALAR ? 0 : -1;
  if (s < 0) return real(call, err);
  const mt_tensor *t = call->in[1 - s], *num = call->in[s];
  mt_dtype d = t->kind == MT_KIND_MASKED ? t->data->dtype : t->dtype;
  double v = mt_get_f64(num->values, num->dtype, 0);
  if (mt_dtype_is_float(num->dtype) && !mt_dtype_is_float(d)) return real(call, err);
  unsigned char buf[8] = {0};
  mt_set_f64(buf, d, 0, v);
  mt_tensor w = *num;
  w.dtype = d;
  w.values = buf;
  w.owner = NULL;
  return mt__mutant_call_in(call, err, real, s, &w);
}

#define MUTANT(op) \
  static mt_status mutant_##op(mt_call *c, mt_error *e) { return weak(c, e, mt_npma_##op); }
MUTANT(add)
MUTANT(sub)
MUTANT(mul)
MUTANT(div)

static const mt_kernel_fn npma[MT_OP__END] = {
#include "npma_slots.h"
    [MT_OP_add] = mutant_add, [MT_OP_sub] = mutant_sub,
    [MT_OP_mul] = mutant_mul, [MT_OP_div] = mutant_div,
};
MT_NPMA_MUTANT_ENTRY("npma_weak_scalar", npma)

/* shift_amount_mod_width.c - breaks BIN-6: a left shift by an amount out
 * of [0, width) uses the amount modulo the width (x86's SHL masks the
 * count: `a << b` compiled naively), so 1 << 8 in int8 is 1 << 0 = 1, where
 * torch gives 0. Same-shape masked operands only (the amount cases). */
#include "mutant.h"

static int64_t ld(const void *v, mt_dtype d, int64_t i) {
  switch (d) {
  case MT_int64: return ((const int64_t *)v)[i];
  case MT_int32: return ((const int32_t *)v)[i];
  case MT_int8: return ((const int8_t *)v)[i];
  case MT_uint8: return ((const uint8_t *)v)[i];
  default: return 0;
  }
}
static void st(void *v, mt_dtype d, int64_t i, uint64_t x) {
  switch (d) {
  case MT_int64: ((int64_t *)v)[i] = (int64_t)x; break;
  case MT_int32: ((int32_t *)v)[i] = (int32_t)(uint32_t)x; break;
  case MT_int8: ((int8_t *)v)[i] = (int8_t)(uint8_t)x; break;
  case MT_uint8: ((uint8_t *)v)[i] = (uint8_t)x; break;
  default: break;
  }
}
static mt_status mutant_shl(mt_call *call, mt_error *err) {
  mt_status s = mt_cpu_bitwise_left_shift(call, err);
  if (s != MT_OK || call->n_in < 2 || !mt__mutant_dense_masked(call->out[0])) return s;
  const mt_tensor *a = call->in[0], *b = call->in[1];
  mt_tensor *o = call->out[0]->data;
  if (!mt__mutant_dense_masked(a) || !mt__mutant_dense_masked(b) || a->data->dtype != o->dtype ||
      b->data->dtype != o->dtype || mt_numel(a) != mt_numel(o) || mt_numel(b) != mt_numel(o))
    return MT_OK;
  int bits = 8 * (int)mt_dtype_size(o->dtype);
  for (int64_t i = 0; i < mt_numel(o); i++) {
    int64_t x = ld(a->data->values, o->dtype, i), n = ld(b->data->values, o->dtype, i);
    if (n < 0 || n >= bits) st(o->values, o->dtype, i, (uint64_t)x << (n & (bits - 1)));
  }
  return MT_OK;
}

static const mt_kernel_fn kernels[MT_OP__END] = {
#include "cpu_slots.h"
    [MT_OP_bitwise_left_shift] = mutant_shl,
};
MT_MUTANT_ENTRY("shift_amount_mod_width", kernels)

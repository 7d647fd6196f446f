/* spb_linear_bias_dropped.c - breaks SPB-5: F.linear with a compressed
 * (CSR, CSC, BSR) weight ignores its bias (a sparse path that only computes
 * input @ weight.T). A COO weight with a bias is refused by torch (SPB-1)
 * and left to the reference. */
#include "mutant.h"

static mt_status mutant_linear(mt_call *call, mt_error *err) {
  if (call->n_in != 3 || !call->in[1] || call->in[1]->kind == MT_KIND_COO)
    return mt_cpu_linear(call, err);
  call->n_in = 2;
  mt_status st = mt_cpu_linear(call, err);
  call->n_in = 3;
  return st;
}

static const mt_kernel_fn kernels[MT_OP__END] = {
#include "cpu_slots.h"
    [MT_OP_linear] = mutant_linear,
};
MT_MUTANT_ENTRY("spb_linear_bias_dropped", kernels)

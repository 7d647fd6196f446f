/* npma_mfn_plain_result.c - breaks NPMA-17: numpy_ma's analogues of
 * torch.masked's functional ops return every element specified, as
 * torch.masked's plain tensors are (a fully masked slice holding the fill),
 * where numpy.ma's reductions mask it and its scans keep the input's mask.
 * A port that calls the torch.masked op and wraps the result. */
#include "npma_mutant.h"

static mt_status all_specified(mt_call *call, mt_error *err,
                               mt_status (*kernel)(mt_call *, mt_error *)) {
  mt_status st = kernel(call, err);
  if (st != MT_OK || call->n_out < 1 || !mt__mutant_dense_masked(call->out[0])) return st;
  mt_tensor *m = call->out[0]->mask;
  for (int64_t i = 0; i < mt_numel(m); i++) ((uint8_t *)m->values)[i] = 1;
  return MT_OK;
}

#define NPMA_MUTANT_MFN(op) \
  static mt_status mutant_##op(mt_call *call, mt_error *err) { \
    return all_specified(call, err, mt_npma_##op); \
  }
NPMA_MUTANT_MFN(masked_sum)
NPMA_MUTANT_MFN(masked_var)
NPMA_MUTANT_MFN(masked_cumsum)

static const mt_kernel_fn npma[MT_OP__END] = {
#include "npma_slots.h"
    [MT_OP_masked_sum] = mutant_masked_sum,
    [MT_OP_masked_var] = mutant_masked_var,
    [MT_OP_masked_cumsum] = mutant_masked_cumsum,
};
MT_NPMA_MUTANT_ENTRY("npma_mfn_plain_result", npma)

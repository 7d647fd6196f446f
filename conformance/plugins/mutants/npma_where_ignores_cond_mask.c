/* npma_where_ignores_cond_mask.c - breaks NPMA-19: numpy_ma's where takes
 * the mask of the branch it picks and ignores the condition's own mask (a
 * port that runs np.where on the data and on the masks separately): a
 * masked-out condition then leaves y's element specified. */
#include "npma_mutant.h"

static mt_status mutant_where(mt_call *call, mt_error *err) {
  mt_status st = mt_npma_where(call, err);
  if (st != MT_OK || call->n_in != 3 || !mt__mutant_dense_masked(call->in[0]) ||
      !mt__mutant_dense_masked(call->in[2]) || !mt__mutant_dense_masked(call->out[0]))
    return st;
  const mt_tensor *c = call->in[0], *y = call->in[2];
  mt_tensor *o = call->out[0];
  if (mt_numel(c->data) != mt_numel(o->data) || mt_numel(y->data) != mt_numel(o->data)) return st;
  for (int64_t i = 0; i < mt_numel(o->data); i++)
    if (!((const uint8_t *)c->mask->values)[i]) /* cond masked: y's own mask */
      ((uint8_t *)o->mask->values)[i] = ((const uint8_t *)y->mask->values)[i];
  return MT_OK;
}

static const mt_kernel_fn npma[MT_OP__END] = {
#include "npma_slots.h"
    [MT_OP_where] = mutant_where,
};
MT_NPMA_MUTANT_ENTRY("npma_where_ignores_cond_mask", npma)

/* npma_empty_all_reduce_zero.c - breaks NPMA-5: numpy_ma's all-reduces of
 * sum, mean and prod with no specified element return a specified 0 (the
 * sum of nothing), where numpy.ma returns np.ma.masked: a library that
 * reduces `m.compressed()`, or fills with 0 and forgets the mask. */
#include "npma_mutant.h"

static mt_status specified(mt_call *call, mt_error *err, mt_kernel_fn real) {
  mt_status st = real(call, err);
  if (st != MT_OK || !mt__mutant_all_reduce(call) || call->n_out != 1 ||
      !mt__mutant_dense_masked(call->out[0]) || call->out[0]->ndim != 0)
    return st;
  uint8_t *m = call->out[0]->mask->values;
  if (!m[0]) {
    m[0] = 1;
    mt_set_f64(call->out[0]->data->values, call->out[0]->data->dtype, 0, 0.0);
  }
  return MT_OK;
}
static mt_status mutant_sum(mt_call *c, mt_error *e) { return specified(c, e, mt_npma_sum); }
static mt_status mutant_mean(mt_call *c, mt_error *e) { return specified(c, e, mt_npma_mean); }
static mt_status mutant_prod(mt_call *c, mt_error *e) { return specified(c, e, mt_npma_prod); }

static const mt_kernel_fn npma[MT_OP__END] = {
#include "npma_slots.h"
    [MT_OP_sum] = mutant_sum, [MT_OP_mean] = mutant_mean, [MT_OP_prod] = mutant_prod,
};
MT_NPMA_MUTANT_ENTRY("npma_empty_all_reduce_zero", npma)

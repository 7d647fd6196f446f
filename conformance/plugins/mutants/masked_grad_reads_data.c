/* masked_grad_reads_data.c - breaks ADA-3: the MaskedTensor Adagrad path adds
 * the square of the gradient's whole data to state_sum
 * (state_sum += grad.get_data() ** 2, the to_tensor(0) forgotten), so
 * masked-out gradient data reaches the accumulator. */
#include "mutant.h"

static mt_status mutant_adagrad_masked(mt_call *call, mt_error *err) {
  mt_status st = mt_cpu_adagrad_masked(call, err);
  const mt_tensor *g = call->n_in > 1 ? call->in[1] : NULL;
  if (st != MT_OK || call->n_out != 3 || !mt__mutant_dense_masked(g)) return st;
  mt_tensor *s = call->out[1];
  const uint8_t *m = g->mask->values;
  for (int64_t i = 0; i < mt_numel(s); i++)
    if (!m[i]) {
      double v = mt_dense_get(g->data, i);
      mt_set_f64(s->values, s->dtype, i,
                 mt_get_f64(s->values, s->dtype, i) + mt__mutant_r(s->dtype, v * v));
    }
  return MT_OK;
}

static const mt_kernel_fn kernels[MT_OP__END] = {
#include "cpu_slots.h"
    [MT_OP_adagrad_masked] = mutant_adagrad_masked,
};
MT_MUTANT_ENTRY("masked_grad_reads_data", kernels)

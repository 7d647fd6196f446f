/* argmax_last_tie.c - breaks RED-4: argmax answers the LAST index of equal
 * maxima (a `>=` comparison, or numpy's argmax run on a reversed view, as a
 * hand-written kernel easily does), where torch answers the first. Fills of
 * masked-out elements tie too, so a fully masked row gives its last index,
 * not 0. NaN is still the maximum, and the first NaN still wins. */
#include "reduce_mutant.h"

static mt_status mutant_argmax(mt_call *call, mt_error *err) {
  const mt_tensor *x = call->n_in > 0 ? call->in[0] : NULL;
  mt__rm_dims d;
  mt_status st = mt_cpu_argmax(call, err);
  if (st != MT_OK || !mt__rm_parse(call, x, &d) || !mt__mutant_dense_masked(call->out[0]))
    return st;
  mt_tensor *o = call->out[0];
  int64_t n_out = mt_numel(o->data), n = mt_numel(x);
  double *best = malloc(sizeof(double) * (size_t)(n_out ? n_out : 1));
  int64_t *idx = malloc(sizeof(int64_t) * (size_t)(n_out ? n_out : 1));
  if (!best || !idx) goto out;
  for (int64_t k = 0; k < n_out; k++) idx[k] = -1;
  for (int64_t i = 0; i < n; i++) {
    int64_t pos, k = mt__rm_out(x, &d, i, &pos);
    double v = ((const uint8_t *)x->mask->values)[i] ? mt_get_f64(x->data->values, x->data->dtype, i)
                                                     : -INFINITY;
    if (idx[k] >= 0 && isnan(best[k])) continue;
    if (idx[k] < 0 || isnan(v) || v >= best[k]) { /* the bug: >= keeps the last tie */
      best[k] = v;
      idx[k] = pos;
    }
  }
  for (int64_t k = 0; k < n_out; k++)
    mt_set_f64(o->data->values, o->data->dtype, k, (double)(idx[k] < 0 ? 0 : idx[k]));
out:
  free(best);
  free(idx);
  return st;
}

static const mt_kernel_fn kernels[MT_OP__END] = {
#include "cpu_slots.h"
    [MT_OP_argmax] = mutant_argmax,
};
MT_MUTANT_ENTRY("argmax_last_tie", kernels)

/* npma_var_unbiased.c - breaks NPMA-14: numpy_ma's all-reduce var/std use
 * Bessel's correction (ddof 1, torch's default), where m.var() and m.std()
 * are numpy's ddof=0: a port that keeps torch's default. */
#include "npma_mutant.h"

static mt_status unbiased(mt_call *call, mt_error *err, int is_std,
                          mt_status (*kernel)(mt_call *, mt_error *)) {
  mt_status st = kernel(call, err);
  const mt_tensor *x = call->n_in > 0 ? call->in[0] : NULL;
  mt_tensor *o = call->n_out > 0 ? call->out[0] : NULL;
  if (st != MT_OK || !mt__mutant_dense_masked(x) || !mt__mutant_dense_masked(o) ||
      o->data->ndim != 0 || !((const uint8_t *)o->mask->values)[0])
    return st;
  int64_t n = 0;
  for (int64_t i = 0; i < mt_numel(x->data); i++) n += ((const uint8_t *)x->mask->values)[i] != 0;
  if (n < 2) return st;
  double v = mt_get_f64(o->data->values, o->data->dtype, 0);
  double f = (double)n / (double)(n - 1);
  mt_set_f64(o->data->values, o->data->dtype, 0, is_std ? v * sqrt(f) : v * f);
  return MT_OK;
}

static mt_status mutant_var(mt_call *call, mt_error *err) {
  return unbiased(call, err, 0, mt_npma_var);
}
static mt_status mutant_std(mt_call *call, mt_error *err) {
  return unbiased(call, err, 1, mt_npma_std);
}

static const mt_kernel_fn npma[MT_OP__END] = {
#include "npma_slots.h"
    [MT_OP_var] = mutant_var,
    [MT_OP_std] = mutant_std,
};
MT_NPMA_MUTANT_ENTRY("npma_var_unbiased", npma)

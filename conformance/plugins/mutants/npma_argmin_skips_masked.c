/* npma_argmin_skips_masked.c - breaks NPMA-13: numpy_ma's argmin/argmax
 * over the last dim of a 2-D input let only the specified elements compete
 * (as torch.masked's argmin does), where numpy.ma's argmin is the filled
 * data's: a masked element, filled with the dtype's top (inf), ties with a
 * specified inf and wins as the first index. */
#include "npma_mutant.h"

static mt_status skip_masked(mt_call *call, mt_error *err, int top,
                             mt_status (*kernel)(mt_call *, mt_error *)) {
  mt_status st = kernel(call, err);
  const mt_tensor *x = call->n_in > 0 ? call->in[0] : NULL;
  mt_tensor *o = call->n_out > 0 ? call->out[0] : NULL;
  if (st != MT_OK || !mt__mutant_dense_masked(x) || !o || o->kind != MT_KIND_DENSE ||
      x->data->ndim != 2 || o->ndim != 1 || o->shape[0] != x->data->shape[0])
    return st;
  int64_t rows = x->data->shape[0], cols = x->data->shape[1];
  const uint8_t *m = x->mask->values;
  for (int64_t r = 0; r < rows; r++) {
    int64_t best = -1;
    double bv = 0.0;
    for (int64_t c = 0; c < cols; c++) {
      int64_t i = r * cols + c;
      if (!m[i]) continue;
      double v = mt_get_f64(x->data->values, x->data->dtype, i);
      if (best < 0 || (!isnan(bv) && (isnan(v) || (top ? v < bv : v > bv)))) best = c, bv = v;
    }
    if (best >= 0) mt_set_f64(o->values, o->dtype, r, (double)best);
  }
  return MT_OK;
}

static mt_status mutant_argmin(mt_call *call, mt_error *err) {
  return skip_masked(call, err, 1, mt_npma_argmin);
}
static mt_status mutant_argmax(mt_call *call, mt_error *err) {
  return skip_masked(call, err, 0, mt_npma_argmax);
}

static const mt_kernel_fn npma[MT_OP__END] = {
#include "npma_slots.h"
    [MT_OP_argmin] = mutant_argmin,
    [MT_OP_argmax] = mutant_argmax,
};
MT_NPMA_MUTANT_ENTRY("npma_argmin_skips_masked", npma)

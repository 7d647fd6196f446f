/* npma_median_lower.c - breaks NPMA-20: numpy_ma's masked_median returns
 * the lower of the two middle values for an even count, as torch's
 * median/nanmedian do, where np.ma.median averages them (a port that calls
 * torch.masked.median). Dense float inputs with a dim kwarg only. */
#include <stdlib.h>

#include "npma_mutant.h"

static int cmp_d(const void *x, const void *y) {
  double a = *(const double *)x, b = *(const double *)y;
  return a < b ? -1 : a > b;
}

static mt_status mutant_median(mt_call *call, mt_error *err) {
  mt_status st = mt_npma_masked_median(call, err);
  if (st != MT_OK || call->n_in != 2 || !mt__mutant_dense_masked(call->out[0])) return st;
  const mt_tensor *x = call->in[0], *m = call->in[1];
  if (x->kind != MT_KIND_DENSE || !mt_is_contiguous(x) || !mt_is_contiguous(m) ||
      !mt_shape_equal(x, m) || x->ndim < 2 ||
      (x->dtype != MT_float32 && x->dtype != MT_float64))
    return st;
  int64_t d = mt_kw_int(call->kw, "dim", -1);
  if (d < 0) d += x->ndim;
  int64_t len = x->shape[d], inner = 1, outer = 1;
  for (int k = (int)d + 1; k < x->ndim; k++) inner *= x->shape[k];
  for (int k = 0; k < d; k++) outer *= x->shape[k];
  double *v = malloc((size_t)(len ? len : 1) * sizeof *v);
  if (!v) return st;
  mt_tensor *o = call->out[0]->data;
  for (int64_t p = 0; p < outer; p++)
    for (int64_t q = 0; q < inner; q++) {
      int64_t n = 0;
      for (int64_t j = 0; j < len; j++) {
        int64_t i = (p * len + j) * inner + q;
        if (((const uint8_t *)m->values)[i]) v[n++] = mt_get_f64(x->values, x->dtype, i);
      }
      if (n == 0 || n % 2) continue;
      qsort(v, (size_t)n, sizeof *v, cmp_d);
      mt_set_f64(o->values, o->dtype, p * inner + q, v[n / 2 - 1]);
    }
  free(v);
  return MT_OK;
}

static const mt_kernel_fn npma[MT_OP__END] = {
#include "npma_slots.h"
    [MT_OP_masked_median] = mutant_median,
};
MT_NPMA_MUTANT_ENTRY("npma_median_lower", npma)

/* select_index_wraps.c - breaks STR-7: select takes its index modulo the
 * dim's size (Python-style wrap-around taken too far) instead of refusing
 * an index outside [-size, size-1] with IndexError. */
#include "mutant.h"

static mt_status mutant_select(mt_call *call, mt_error *err) {
  const mt_tensor *x = call->n_in > 0 ? call->in[0] : NULL;
  const mt_kwarg *d = mt_kw_find(call->kw, "dim"), *i = mt_kw_find(call->kw, "index");
  if (!x || !d || !i || x->ndim == 0 || d->i < -x->ndim || d->i >= x->ndim)
    return mt_cpu_select(call, err);
  int64_t n = x->shape[d->i < 0 ? d->i + x->ndim : d->i];
  if (n == 0 || (i->i >= -n && i->i < n)) return mt_cpu_select(call, err);
  return mt__mutant_call_kw(call, err, mt_cpu_select, "index", (double)(((i->i % n) + n) % n), 0);
}

static const mt_kernel_fn kernels[MT_OP__END] = {
#include "cpu_slots.h"
    [MT_OP_select] = mutant_select,
};
MT_MUTANT_ENTRY("select_index_wraps", kernels)

/* grad_structure.cu - the structure ops' backward on the device (dense
 * storage): the view ops (select slice transpose t view reshape expand
 * unfold contiguous clone), cat, stack, split, where, and to_tensor's. The
 * host plans are impl/cpu/grad_structure.c's and grad_masked.c's
 * (refusals, the forward's view geometry, which upstream elements reach
 * each gradient element, in the CPU's order, the upstream values widened
 * to double); this file is their compute: one thread per gradient element
 * (common/grad_structure_math.h's mt_gsc_elem: the sum or the one value,
 * rounded once, and the mask). COO/CSR storage, plain inputs and the
 * layout conversions' backward have no device compute yet: NOT_SUPPORTED. */
#include "common/exec.h"
#include "common/grad_structure_math.h"
#include "common/grad_structure_ops.h"
#include "cuda_compat.h"

/* what the kernels take by value (cuda_compat.h, MTC_PLAIN_ARG) */
MTC_PLAIN_ARG(mt_gsc_par);

MTC_KERNEL void grad_scatter_kernel(mt_gsc_par p, const double *vals, const int64_t *off,
                                    const int64_t *src, void *data, uint8_t *mask) {
  MTC_FOR(i, p.n) mt_gsc_elem(&p, vals, off, src, data, mask, i);
}

extern "C" mt_status MTC(grad_scatter_exec)(const struct mt_gsc_par *p, const double *vals,
                                            const int64_t *off, const int64_t *src, void *data,
                                            uint8_t *mask, mt_error *err) {
  size_t es = mt_dtype_size(p->dtype), total = 0;
  int64_t ns = off[p->n]; /* pairs */
  mtc_arena a;
  mt_status st;
  if (MTC(arena_add)(&total, p->n_src, 8) || MTC(arena_add)(&total, p->n + 1, 8) ||
      MTC(arena_add)(&total, ns, 8) || MTC(arena_add)(&total, p->n, es) ||
      MTC(arena_add)(&total, p->n, 1))
    return mt_err(err, MT_OUT_OF_MEMORY, "grad: %lld elements do not fit one device buffer",
                  (long long)p->n);
  if ((st = MTC(arena_open)(&a, total, "grad", err)) != MT_OK) return st;
  double *dv = (double *)MTC(arena_take)(&a, p->n_src, 8);
  int64_t *doff = (int64_t *)MTC(arena_take)(&a, p->n + 1, 8);
  int64_t *dsrc = (int64_t *)MTC(arena_take)(&a, ns, 8);
  void *dd = MTC(arena_take)(&a, p->n, es);
  uint8_t *dm = (uint8_t *)MTC(arena_take)(&a, p->n, 1);
  if ((st = MTC(upload)(&a, dv, vals, (size_t)p->n_src * 8, err)) != MT_OK ||
      (st = MTC(upload)(&a, doff, off, (size_t)(p->n + 1) * 8, err)) != MT_OK ||
      (st = MTC(upload)(&a, dsrc, src, (size_t)ns * 8, err)) != MT_OK)
    goto out;
  if (p->n > 0 &&
      (st = MTC_LAUNCH(&a, grad_scatter_kernel, p->n, *p, dv, doff, dsrc, dd, dm)) != MT_OK)
    goto out;
  if ((st = MTC(download)(&a, data, dd, (size_t)p->n * es, err)) != MT_OK) goto out;
  st = MTC(download)(&a, mask, dm, (size_t)p->n, err);
out:
  MTC(arena_close)(&a);
  return st;
}

#define X(name)                                                            \
  extern "C" mt_status MTC(grad_##name)(mt_call * call, mt_error * err) {  \
    return mt__grad_structure_run(call, MT_OP_##name, &MTC(exec), err);    \
  }
GRAD_STRUCTURE_OPS(X)
#undef X

extern "C" mt_status MTC(grad_to_tensor)(mt_call *call, mt_error *err) {
  return mt__grad_to_tensor_run(call, &MTC(exec), err);
}

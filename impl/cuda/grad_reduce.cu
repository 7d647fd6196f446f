/* grad_reduce.cu - the MaskedTensor reductions' backward on the device:
 * sum mean prod amin amax var std over dense-storage masked tensors. The
 * host plan is impl/cpu/grad_reduce.c's (refusals, dims, each output's
 * group of input elements, the operands widened to double); this file is
 * its compute: one thread per output element (common/grad_reduce_math.h's
 * mt_gr_group), which folds its group in the CPU's order and writes every
 * gradient element of it, data and mask. Plain (unmasked) inputs, which the
 * CPU hands to its sparse engine, have no device compute yet:
 * NOT_SUPPORTED. */
#include "common/exec.h"
#include "common/grad_reduce_math.h"
#include "common/grad_reduce_ops.h"
#include "cuda_compat.h"

/* what the kernels take by value (cuda_compat.h, MTC_PLAIN_ARG) */
MTC_PLAIN_ARG(mt_gr_par);

MTC_KERNEL void grad_reduce_kernel(mt_gr_par p, const double *x, const uint8_t *spec,
                                   const double *g, const int64_t *off, const int64_t *idx,
                                   void *data, uint8_t *mask) {
  MTC_FOR(o, p.n_out) mt_gr_group(&p, x, spec, g, off, idx, data, mask, o);
}

extern "C" mt_status MTC(grad_reduce_exec)(const struct mt_gr_par *p, const double *x,
                                           const uint8_t *spec, const double *g,
                                           const int64_t *off, const int64_t *idx, void *data,
                                           uint8_t *mask, mt_error *err) {
  size_t es = mt_dtype_size(p->dtype), total = 0;
  mtc_arena a;
  mt_status st;
  if (MTC(arena_add)(&total, p->n, 8) || MTC(arena_add)(&total, p->n, 1) ||
      MTC(arena_add)(&total, p->n_out, 8) || MTC(arena_add)(&total, p->n_out + 1, 8) ||
      MTC(arena_add)(&total, p->n, 8) || MTC(arena_add)(&total, p->n, es) ||
      MTC(arena_add)(&total, p->n, 1))
    return mt_err(err, MT_OUT_OF_MEMORY, "grad: %lld elements do not fit one device buffer",
                  (long long)p->n);
  if ((st = MTC(arena_open)(&a, total, "grad", err)) != MT_OK) return st;
  double *dx = (double *)MTC(arena_take)(&a, p->n, 8);
  uint8_t *ds = (uint8_t *)MTC(arena_take)(&a, p->n, 1);
  double *dg = (double *)MTC(arena_take)(&a, p->n_out, 8);
  int64_t *doff = (int64_t *)MTC(arena_take)(&a, p->n_out + 1, 8);
  int64_t *didx = (int64_t *)MTC(arena_take)(&a, p->n, 8);
  void *dd = MTC(arena_take)(&a, p->n, es);
  uint8_t *dm = (uint8_t *)MTC(arena_take)(&a, p->n, 1);
  if ((st = MTC(upload)(&a, dx, x, (size_t)p->n * 8, err)) != MT_OK ||
      (st = MTC(upload)(&a, ds, spec, (size_t)p->n, err)) != MT_OK ||
      (st = MTC(upload)(&a, dg, g, (size_t)p->n_out * 8, err)) != MT_OK ||
      (st = MTC(upload)(&a, doff, off, (size_t)(p->n_out + 1) * 8, err)) != MT_OK ||
      (st = MTC(upload)(&a, didx, idx, (size_t)p->n * 8, err)) != MT_OK)
    goto out;
  if (p->n_out > 0 &&
      (st = MTC_LAUNCH(&a, grad_reduce_kernel, p->n_out, *p, dx, ds, dg, doff, didx, dd, dm)) !=
          MT_OK)
    goto out;
  if ((st = MTC(download)(&a, data, dd, (size_t)p->n * es, err)) != MT_OK) goto out;
  st = MTC(download)(&a, mask, dm, (size_t)p->n, err);
out:
  MTC(arena_close)(&a);
  return st;
}

#define X(name, kind)                                                      \
  extern "C" mt_status MTC(grad_##name)(mt_call * call, mt_error * err) {  \
    return mt__grad_reduce_run(call, MT_OP_##name, &MTC(exec), err);       \
  }
GRAD_RED_OPS(X)
#undef X

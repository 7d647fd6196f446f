/* grad_ew.cu - the elementwise backward engine on the device: the
 * gradients of the MaskedTensor unary and binary ops (common/grad_ew_ops.h)
 * on dense storage. The host plan is impl/cpu/grad_ew.c's (refusals,
 * broadcast strides, the operands' values widened to double); this file is
 * its compute: one thread per gradient element of an operand
 * (common/grad_ew_math.h's mt_ew_elem, which sums the partials in the
 * CPU's order and rounds once to the operand's dtype). COO/compressed
 * storage and plain sparse inputs have no device compute yet:
 * NOT_SUPPORTED. */
#include <string.h>

#include "common/exec.h"
#include "common/grad_ew_math.h"
#include "common/grad_ew_ops.h"
#include "cuda_compat.h"

typedef struct {
  const double *p[MT__EW_MAX_IN];
} xs_t;

/* what the kernels take by value (cuda_compat.h, MTC_PLAIN_ARG) */
MTC_PLAIN_ARG(mt_ew_par);
MTC_PTR_ARRAY_ARG(xs_t, 8 * MT__EW_MAX_IN, p);

MTC_KERNEL void grad_ew_kernel(mt_ew_par p, int k, xs_t x, const double *gx, const uint8_t *gm,
                               void *data, uint8_t *mask, int64_t n) {
  MTC_FOR(j, n) mt_ew_elem(&p, k, x.p, gx, gm, data, mask, j);
}

extern "C" mt_status MTC(grad_ew_exec)(const struct mt_ew_par *p, const double *const *x,
                                       const int64_t *xn, const double *gx, const uint8_t *gm,
                                       int64_t ng, void *const *data, uint8_t *const *mask,
                                       mt_error *err) {
  size_t total = 0;
  int bad = MTC(arena_add)(&total, ng, 8) || MTC(arena_add)(&total, ng, 1);
  for (int k = 0; k < p->n_in; k++) {
    bad = bad || MTC(arena_add)(&total, xn[k], 8);
    if (p->grad[k])
      bad = bad || MTC(arena_add)(&total, xn[k], mt_dtype_size(p->dtype[k])) ||
            MTC(arena_add)(&total, xn[k], 1);
  }
  if (bad)
    return mt_err(err, MT_OUT_OF_MEMORY, "grad: %lld elements do not fit one device buffer",
                  (long long)ng);
  mtc_arena a;
  xs_t dx;
  void *dd[MT__EW_MAX_IN] = {NULL, NULL, NULL};
  uint8_t *dm[MT__EW_MAX_IN] = {NULL, NULL, NULL};
  mt_status st;
  memset(&dx, 0, sizeof dx);
  if ((st = MTC(arena_open)(&a, total, "grad", err)) != MT_OK) return st;
  double *dgx = (double *)MTC(arena_take)(&a, ng, 8);
  uint8_t *dgm = (uint8_t *)MTC(arena_take)(&a, ng, 1);
  if ((st = MTC(upload)(&a, dgx, gx, (size_t)ng * 8, err)) != MT_OK ||
      (st = MTC(upload)(&a, dgm, gm, (size_t)ng, err)) != MT_OK)
    goto out;
  for (int k = 0; k < p->n_in; k++) {
    double *d = (double *)MTC(arena_take)(&a, xn[k], 8);
    dx.p[k] = x[k] ? d : NULL;
    if (x[k] && (st = MTC(upload)(&a, d, x[k], (size_t)xn[k] * 8, err)) != MT_OK) goto out;
    if (p->grad[k]) {
      dd[k] = MTC(arena_take)(&a, xn[k], mt_dtype_size(p->dtype[k]));
      dm[k] = (uint8_t *)MTC(arena_take)(&a, xn[k], 1);
    }
  }
  for (int k = 0; k < p->n_in; k++) {
    if (!p->grad[k] || xn[k] == 0) continue;
    if ((st = MTC_LAUNCH(&a, grad_ew_kernel, xn[k], *p, k, dx, dgx, dgm, dd[k], dm[k], xn[k])) !=
            MT_OK ||
        (st = MTC(download)(&a, data[k], dd[k], (size_t)xn[k] * mt_dtype_size(p->dtype[k]),
                            err)) != MT_OK ||
        (st = MTC(download)(&a, mask[k], dm[k], (size_t)xn[k], err)) != MT_OK)
      goto out;
  }
out:
  MTC(arena_close)(&a);
  return st;
}

#define X(op, base)                                                     \
  extern "C" mt_status MTC(grad_##op)(mt_call * call, mt_error * err) { \
    return mt__grad_unary_run(call, MT_OP_##op, &MTC(exec), err);       \
  }
GU_OPS(X)
#undef X
#define X(op, base)                                                     \
  extern "C" mt_status MTC(grad_##op)(mt_call * call, mt_error * err) { \
    return mt__grad_binary_run(call, MT_OP_##op, &MTC(exec), err);      \
  }
GB_OPS(X)
#undef X

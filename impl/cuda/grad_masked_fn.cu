/* grad_masked_fn.cu - torch.masked's functional ops' backward on the
 * device (a plain dense tensor and a mask): the reductions, median, the
 * scans, the softmax family, normalize and logaddexp. The host plan is
 * impl/cpu/grad_masked_fn.c's (refusals, the mask broadcast to the input,
 * dims, the groups of elements, the operands densified as doubles); this
 * file is its compute: one thread per group, an output element or a line
 * along the dim (common/grad_masked_fn_math.h's mt_mfg_group, in the CPU's
 * order), every gradient element rounded once to the input's dtype on the
 * device. A CSR input's gradient (amax, amin, mean keep its structure) has
 * no device compute yet: NOT_SUPPORTED. */
#include "common/exec.h"
#include "common/grad_masked_fn_math.h"
#include "cuda_compat.h"

typedef struct {
  const double *x[2];
  const uint8_t *in[2];
  double *g[2];
} mfg_bufs;

/* what the kernels take by value (cuda_compat.h, MTC_PLAIN_ARG) */
MTC_PLAIN_ARG(mt_mfg_par);
MTC_PTR_ARG(mfg_bufs, 48, v.x[0], v.x[1], v.in[0], v.in[1], v.g[0], v.g[1]);

MTC_KERNEL void grad_masked_fn_kernel(mt_mfg_par p, mfg_bufs b, const double *go,
                                      const int64_t *off, const int64_t *idx) {
  MTC_FOR(o, p.n_grp) mt_mfg_group(&p, b.x, b.in, go, off, idx, b.g, o);
}

extern "C" mt_status MTC(grad_masked_fn_exec)(const struct mt_mfg_par *p,
                                              const double *const *x, const uint8_t *const *in,
                                              const double *go, int64_t n_go,
                                              const int64_t *off, const int64_t *idx,
                                              double *const *g, mt_error *err) {
  size_t total = 0;
  int bad = MTC(arena_add)(&total, n_go, 8) || MTC(arena_add)(&total, p->n_grp + 1, 8) ||
            MTC(arena_add)(&total, p->n, 8);
  for (int k = 0; k < p->n_ops; k++)
    bad = bad || MTC(arena_add)(&total, p->n, 8) || MTC(arena_add)(&total, p->n, 1) ||
          (g[k] && MTC(arena_add)(&total, p->n, 8));
  if (bad)
    return mt_err(err, MT_OUT_OF_MEMORY, "grad: %lld elements do not fit one device buffer",
                  (long long)p->n);
  mtc_arena a;
  mfg_bufs b = {{NULL, NULL}, {NULL, NULL}, {NULL, NULL}};
  mt_status st;
  if ((st = MTC(arena_open)(&a, total, "grad", err)) != MT_OK) return st;
  double *dgo = (double *)MTC(arena_take)(&a, n_go, 8);
  int64_t *doff = (int64_t *)MTC(arena_take)(&a, p->n_grp + 1, 8);
  int64_t *didx = (int64_t *)MTC(arena_take)(&a, p->n, 8);
  if ((st = MTC(upload)(&a, dgo, go, (size_t)n_go * 8, err)) != MT_OK ||
      (st = MTC(upload)(&a, doff, off, (size_t)(p->n_grp + 1) * 8, err)) != MT_OK ||
      (st = MTC(upload)(&a, didx, idx, (size_t)p->n * 8, err)) != MT_OK)
    goto out;
  for (int k = 0; k < p->n_ops; k++) {
    double *dx = (double *)MTC(arena_take)(&a, p->n, 8);
    uint8_t *din = (uint8_t *)MTC(arena_take)(&a, p->n, 1);
    b.x[k] = dx;
    b.in[k] = din;
    if ((st = MTC(upload)(&a, dx, x[k], (size_t)p->n * 8, err)) != MT_OK ||
        (st = MTC(upload)(&a, din, in[k], (size_t)p->n, err)) != MT_OK)
      goto out;
    if (g[k]) b.g[k] = (double *)MTC(arena_take)(&a, p->n, 8);
  }
  if (p->n_grp > 0 &&
      (st = MTC_LAUNCH(&a, grad_masked_fn_kernel, p->n_grp, *p, b, dgo, doff, didx)) != MT_OK)
    goto out;
  for (int k = 0; k < p->n_ops; k++)
    if (g[k] && (st = MTC(download)(&a, g[k], b.g[k], (size_t)p->n * 8, err)) != MT_OK) goto out;
out:
  MTC(arena_close)(&a);
  return st;
}

#define X(name, code)                                                       \
  extern "C" mt_status MTC(grad_##name)(mt_call * call, mt_error * err) {   \
    return mt__grad_masked_fn_run(call, MT_OP_##name, &MTC(exec), err);     \
  }
MFG_OPS(X)
X(masked_logaddexp, MFG_LOGADDEXP)
#undef X

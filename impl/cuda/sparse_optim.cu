/* sparse_optim.cu - the sparse_optim family on the device: SparseAdam
 * (sparse_adam) and SGD's step (sgd) on every dtype, layout and path the
 * CPU reference takes. The host plan (hyper-parameters, torch's checks and
 * messages, coalescing, the entry bookkeeping of the sparse adds: each
 * COO entry's dense offset, the entries of each destination in stored
 * order, which entries a sparse + sparse merge sums, the merged indices)
 * is impl/cpu/sparse_optim.c's (mt__sparse_optim_run); this file is its
 * compute, with common/sparse_optim_math.h:
 *  - sparse_adam: one thread per element of the coalesced gradient's
 *    values (unique indices: no two threads write one element), param and
 *    the moments updated in place;
 *  - sgd: one launch per tensor op of torch's step (mul_, add of a dense,
 *    dense + sparse, sparse + sparse), one thread per element, per
 *    destination element (walking its entries in stored order, so
 *    duplicates add in the CPU's order), or per merged element. */
#include "common/exec.h"
#include "common/sparse_optim_math.h"
#include "cuda_compat.h"

/* what the kernels take by value (cuda_compat.h, MTC_PLAIN_ARG) */
MTC_PLAIN_ARG(mt_sadam_par);
MTC_PLAIN_ARG(mt_sgd_par);

MTC_KERNEL void sadam_kernel(mt_sadam_par p, const void *grad, const int64_t *lin, void *param,
                             void *m, void *v, int64_t n) {
  MTC_FOR(e, n) mt_sadam_elem(&p, e, grad, lin, param, m, v);
}

extern "C" mt_status MTC(sparse_adam_exec)(const struct mt_sadam_par *p, const void *grad,
                                           const int64_t *lin, void *param, void *exp_avg,
                                           void *exp_avg_sq, mt_error *err) {
  size_t es = mt_dtype_size(p->dt), total = 0;
  int64_t n = p->n, nv = p->nnz * p->row;
  mtc_arena a;
  mt_status st;
  if (MTC(arena_add)(&total, n, es) || MTC(arena_add)(&total, n, es) ||
      MTC(arena_add)(&total, n, es) || MTC(arena_add)(&total, nv, es) ||
      MTC(arena_add)(&total, p->nnz, sizeof(int64_t)))
    return mt_err(err, MT_OUT_OF_MEMORY, "sparse_optim: %lld elements do not fit one device buffer",
                  (long long)n);
  if ((st = MTC(arena_open)(&a, total, "sparse_optim", err)) != MT_OK) return st;
  void *dp = MTC(arena_take)(&a, n, es), *dm = MTC(arena_take)(&a, n, es);
  void *dv = MTC(arena_take)(&a, n, es), *dg = MTC(arena_take)(&a, nv, es);
  int64_t *dlin = (int64_t *)MTC(arena_take)(&a, p->nnz, sizeof(int64_t));
  if ((st = MTC(upload)(&a, dp, param, (size_t)n * es, err)) != MT_OK ||
      (st = MTC(upload)(&a, dm, exp_avg, (size_t)n * es, err)) != MT_OK ||
      (st = MTC(upload)(&a, dv, exp_avg_sq, (size_t)n * es, err)) != MT_OK ||
      (st = MTC(upload)(&a, dg, grad, (size_t)nv * es, err)) != MT_OK ||
      (st = MTC(upload)(&a, dlin, lin, (size_t)p->nnz * sizeof(int64_t), err)) != MT_OK)
    goto out;
  if ((st = MTC_LAUNCH(&a, sadam_kernel, nv, *p, dg, dlin, dp, dm, dv, nv)) != MT_OK) goto out;
  if ((st = MTC(download)(&a, param, dp, (size_t)n * es, err)) != MT_OK ||
      (st = MTC(download)(&a, exp_avg, dm, (size_t)n * es, err)) != MT_OK)
    goto out;
  st = MTC(download)(&a, exp_avg_sq, dv, (size_t)n * es, err);
out:
  MTC(arena_close)(&a);
  return st;
}

MTC_KERNEL void sgd_kernel(mt_sgd_par p, void *t, const void *x, const int64_t *lin,
                           const int64_t *first, const int64_t *order, int64_t n) {
  MTC_FOR(e, n) mt_sgd_elem(&p, e, t, x, lin, first, order);
}

extern "C" mt_status MTC(sgd_exec)(const struct mt_sgd_par *p, const struct mt_sgd_bufs *b,
                                   mt_error *err) {
  size_t es = mt_dtype_size(p->dt), total = 0;
  int grouped = p->code == SGD_ADD_COO || p->code == SGD_INT_ADD;
  int64_t nt = b->nt, nx = b->x ? b->nx : 0;
  int64_t nl = grouped ? b->nd : 0, nf = grouped ? b->nd + 1 : 0;
  int64_t no = grouped ? b->nnz : 0, n = mt_sgd_threads(p, b);
  mtc_arena a;
  mt_status st;
  if (MTC(arena_add)(&total, nt, es) || MTC(arena_add)(&total, nx, es) ||
      MTC(arena_add)(&total, nl, sizeof(int64_t)) ||
      MTC(arena_add)(&total, nf, sizeof(int64_t)) || MTC(arena_add)(&total, no, sizeof(int64_t)))
    return mt_err(err, MT_OUT_OF_MEMORY, "sparse_optim: %lld elements do not fit one device buffer",
                  (long long)nt);
  if ((st = MTC(arena_open)(&a, total, "sparse_optim", err)) != MT_OK) return st;
  void *dtv = MTC(arena_take)(&a, nt, es), *dx = MTC(arena_take)(&a, nx, es);
  int64_t *dl = (int64_t *)MTC(arena_take)(&a, nl, sizeof(int64_t));
  int64_t *df = (int64_t *)MTC(arena_take)(&a, nf, sizeof(int64_t));
  int64_t *dor = (int64_t *)MTC(arena_take)(&a, no, sizeof(int64_t));
  /* t is updated in place */
  if ((st = MTC(upload)(&a, dtv, b->t, (size_t)nt * es, err)) != MT_OK ||
      (st = MTC(upload)(&a, dx, b->x, (size_t)nx * es, err)) != MT_OK ||
      (st = MTC(upload)(&a, dl, b->lin, (size_t)nl * sizeof(int64_t), err)) != MT_OK ||
      (st = MTC(upload)(&a, df, b->first, (size_t)nf * sizeof(int64_t), err)) != MT_OK ||
      (st = MTC(upload)(&a, dor, b->order, (size_t)no * sizeof(int64_t), err)) != MT_OK)
    goto out;
  if ((st = MTC_LAUNCH(&a, sgd_kernel, n, *p, dtv, nx ? dx : NULL, nl ? dl : NULL,
                       nf ? df : NULL, no ? dor : NULL, n)) != MT_OK)
    goto out;
  st = MTC(download)(&a, b->t, dtv, (size_t)nt * es, err);
out:
  MTC(arena_close)(&a);
  return st;
}

extern "C" mt_status MTC(sparse_adam)(mt_call *call, mt_error *err) {
  return mt__sparse_optim_run(call, MT_OP_sparse_adam, &MTC(exec), err);
}
extern "C" mt_status MTC(sgd)(mt_call *call, mt_error *err) {
  return mt__sparse_optim_run(call, MT_OP_sgd, &MTC(exec), err);
}

/* grad_sparse.cu - the plain (sparse or dense) calls' backward on the
 * device: the elementwise ops, add/sub/mul/div, t/transpose, sum,
 * sparse_sum, norm, the products (mm, addmm, linear, sampled_addmm ...),
 * torch.sparse's softmax, sparse_mask, copy_, cat, values, the layout
 * conversions and the sparse constructors, every layout. The host plan is
 * impl/cpu/grad_sparse.c's (torch's refusals, the inputs and upstream
 * gradient densified as doubles, a COO tensor's duplicates summed by the
 * device's coalesce, which upstream elements reach each gradient element
 * in the CPU's order, the gradient's layout); this file is its compute:
 * one thread per element of one input's dense gradient
 * (common/grad_sparse_math.h's mt_gsp_elem), rounded once to the input's
 * dtype on the device. */
#include "common/exec.h"
#include "common/grad_sparse_math.h"
#include "common/grad_sparse_ops.h"
#include "cuda_compat.h"

/* what the kernels take by value (cuda_compat.h, MTC_PLAIN_ARG) */
MTC_PLAIN_ARG(mt_gsp_par);
MTC_PTR_ARG(mt_gsp_bufs, 96, v.xa, v.xb, v.go, v.off, v.src, v.ia, v.ib, v.pat);

MTC_KERNEL void grad_sparse_kernel(mt_gsp_par p, mt_gsp_bufs b, double *g) {
  MTC_FOR(i, p.n) mt_gsp_elem(&p, &b, g, i);
}

/* a device copy of host buffer h (n elements of es bytes; NULL: none) */
static mt_status take_up(mtc_arena *a, const void *h, int64_t n, size_t es, const void **d,
                         mt_error *err) {
  *d = NULL;
  if (!h) return MT_OK;
  void *p = MTC(arena_take)(a, n, es);
  *d = p;
  return MTC(upload)(a, p, h, (size_t)n * es, err);
}

extern "C" mt_status MTC(grad_sparse_exec)(const struct mt_gsp_par *p,
                                           const struct mt_gsp_bufs *b, double *g,
                                           mt_error *err) {
  size_t total = 0;
  int64_t n_off = b->off ? p->n + 1 : 0, n_ix = b->ia || b->ib ? b->n_go : 0;
  if ((b->xa && MTC(arena_add)(&total, b->n_xa, 8)) ||
      (b->xb && MTC(arena_add)(&total, b->n_xb, 8)) || MTC(arena_add)(&total, b->n_go, 8) ||
      (b->off && MTC(arena_add)(&total, n_off, 8)) ||
      (b->src && MTC(arena_add)(&total, b->n_src, 8)) ||
      (b->ia && MTC(arena_add)(&total, n_ix, 8)) || (b->ib && MTC(arena_add)(&total, n_ix, 8)) ||
      (b->pat && MTC(arena_add)(&total, p->n, 1)) || MTC(arena_add)(&total, p->n, 8))
    return mt_err(err, MT_OUT_OF_MEMORY, "grad: %lld elements do not fit one device buffer",
                  (long long)p->n);
  mtc_arena a;
  mt_gsp_bufs d = *b;
  const void *v;
  mt_status st;
  if ((st = MTC(arena_open)(&a, total, "grad", err)) != MT_OK) return st;
  if ((st = take_up(&a, b->xa, b->n_xa, 8, &v, err)) != MT_OK) goto out;
  d.xa = (const double *)v;
  if ((st = take_up(&a, b->xb, b->n_xb, 8, &v, err)) != MT_OK) goto out;
  d.xb = (const double *)v;
  if ((st = take_up(&a, b->go, b->n_go, 8, &v, err)) != MT_OK) goto out;
  d.go = (const double *)v;
  if ((st = take_up(&a, b->off, n_off, 8, &v, err)) != MT_OK) goto out;
  d.off = (const int64_t *)v;
  if ((st = take_up(&a, b->src, b->n_src, 8, &v, err)) != MT_OK) goto out;
  d.src = (const int64_t *)v;
  if ((st = take_up(&a, b->ia, n_ix, 8, &v, err)) != MT_OK) goto out;
  d.ia = (const int64_t *)v;
  if ((st = take_up(&a, b->ib, n_ix, 8, &v, err)) != MT_OK) goto out;
  d.ib = (const int64_t *)v;
  if ((st = take_up(&a, b->pat, p->n, 1, &v, err)) != MT_OK) goto out;
  d.pat = (const uint8_t *)v;
  {
    double *dg = (double *)MTC(arena_take)(&a, p->n, 8);
    if (p->n > 0 && (st = MTC_LAUNCH(&a, grad_sparse_kernel, p->n, *p, d, dg)) != MT_OK) goto out;
    st = MTC(download)(&a, g, dg, (size_t)p->n * 8, err);
  }
out:
  MTC(arena_close)(&a);
  return st;
}

/* the ops only grad_sparse.c has a backward of (the others reach it through
 * their family's kernel: grad_ew, grad_reduce, grad_structure) */
#define X(name)                                                            \
  extern "C" mt_status MTC(grad_##name)(mt_call * call, mt_error * err) {  \
    return mt__grad_sparse_own_run(call, MT_OP_##name, &MTC(exec), err);   \
  }
GRAD_SPARSE_OWN_OPS(X)
#undef X

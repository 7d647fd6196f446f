/* optim.cu - the optim family on the device: the three Adagrad paths
 * (adagrad_dense, adagrad_sparse, adagrad_masked) on every dtype and
 * storage the CPU reference takes: float32/float64, float16/bfloat16 on
 * float workspaces (the host converts half to float exactly and stores
 * back values that already are half), and the masked path's integer and
 * bool params (converted to float32 and the state's dtype on the device).
 * The host plan (hyper-parameters, torch's checks, coalescing the COO
 * gradient, which entries are kept and their dense offsets, outputs) is
 * impl/cpu/optim.c's (mt__optim_run); this file is its compute: upload,
 * one thread per element (dense paths) or per kept COO (entry, element)
 * with common/optim_math.h's mt_ada_elem, download. param and state_sum
 * are updated in place on the device, as torch's step does; the coalesced
 * gradient's indices are unique, so no two threads write one element. */
#include "common/exec.h"
#include "common/optim_math.h"
#include "cuda_compat.h"

/* what the kernels take by value (cuda_compat.h, MTC_PLAIN_ARG) */
MTC_PLAIN_ARG(mt_ada_par);

MTC_KERNEL void ada_int_init_kernel(mt_ada_par p, const void *pin, const void *s_in, float *param,
                                    void *state, int64_t n) {
  MTC_FOR(i, n) mt_ada_int_init(&p, i, pin, s_in, param, state);
}

MTC_KERNEL void ada_kernel(mt_ada_par p, void *param, void *state, void *std, const void *pin,
                           const void *s_in, const void *grad, const uint8_t *mask,
                           const int64_t *lin, const int64_t *src, int64_t n) {
  MTC_FOR(i, n) mt_ada_elem(&p, param, state, std, pin, s_in, grad, mask, lin, src, i);
}

extern "C" mt_status MTC(adagrad_exec)(const struct mt_ada_par *p, const struct mt_ada_bufs *b,
                                       mt_error *err) {
  int ip = p->path == ADA_INT_DENSE || p->path == ADA_INT_COO;
  int coo = p->path == ADA_COO || p->path == ADA_INT_COO;
  /* element sizes: param, state, std, the inputs of the integer paths, grad */
  size_t sp = ip ? sizeof(float) : mt_ada_elem_size(p), ss = ip ? mt_dtype_size(p->sdt) : sp;
  size_t sz_in = ip ? mt_dtype_size(p->dt) : 1, sg = ip ? mt_dtype_size(p->dt) : sp;
  int64_t n = b->n, nin = ip ? n : 0, ng = coo ? b->ng : n, nm = b->mask ? n : 0;
  int64_t nk = coo ? b->nu : 0, nsrc = b->src ? nk : 0, nt = mt_ada_threads(p, b);
  int64_t nsd = p->path == ADA_COO ? nt : coo ? nk : n;
  size_t total = 0;
  mtc_arena a;
  mt_status st;
  if (MTC(arena_add)(&total, n, sp) || MTC(arena_add)(&total, n, ss) ||
      MTC(arena_add)(&total, nsd, sp) || MTC(arena_add)(&total, nin, sz_in) ||
      MTC(arena_add)(&total, nin, sz_in) || MTC(arena_add)(&total, ng, sg) ||
      MTC(arena_add)(&total, nm, 1) || MTC(arena_add)(&total, nk, sizeof(int64_t)) ||
      MTC(arena_add)(&total, nsrc, sizeof(int64_t)))
    return mt_err(err, MT_OUT_OF_MEMORY, "optim: %lld elements do not fit one device buffer",
                  (long long)n);
  if ((st = MTC(arena_open)(&a, total, "optim", err)) != MT_OK) return st;
  void *dp = MTC(arena_take)(&a, n, sp), *ds = MTC(arena_take)(&a, n, ss);
  void *dsd = MTC(arena_take)(&a, nsd, sp);
  void *dpin = MTC(arena_take)(&a, nin, sz_in), *dsin = MTC(arena_take)(&a, nin, sz_in);
  void *dg = MTC(arena_take)(&a, ng, sg);
  uint8_t *dm = (uint8_t *)MTC(arena_take)(&a, nm, 1);
  int64_t *dlin = (int64_t *)MTC(arena_take)(&a, nk, sizeof(int64_t));
  int64_t *dsrc = (int64_t *)MTC(arena_take)(&a, nsrc, sizeof(int64_t));
  /* the float paths update param and state in place; the integer paths
   * write them whole from param_in/state_in */
  if ((!ip && ((st = MTC(upload)(&a, dp, b->param, (size_t)n * sp, err)) != MT_OK ||
               (st = MTC(upload)(&a, ds, b->state, (size_t)n * ss, err)) != MT_OK)) ||
      (st = MTC(upload)(&a, dpin, b->param_in, (size_t)nin * sz_in, err)) != MT_OK ||
      (st = MTC(upload)(&a, dsin, b->state_in, (size_t)nin * sz_in, err)) != MT_OK ||
      (st = MTC(upload)(&a, dg, b->grad, (size_t)ng * sg, err)) != MT_OK ||
      (st = MTC(upload)(&a, dm, b->mask, (size_t)nm, err)) != MT_OK ||
      (st = MTC(upload)(&a, dlin, b->lin, (size_t)nk * sizeof(int64_t), err)) != MT_OK ||
      (st = MTC(upload)(&a, dsrc, b->src, (size_t)nsrc * sizeof(int64_t), err)) != MT_OK)
    goto out;
  if (p->path == ADA_INT_COO &&
      (st = MTC_LAUNCH(&a, ada_int_init_kernel, n, *p, dpin, dsin, (float *)dp, ds, n)) != MT_OK)
    goto out;
  if (nt > 0 &&
      (st = MTC_LAUNCH(&a, ada_kernel, nt, *p, dp, ds, dsd, ip ? dpin : NULL, ip ? dsin : NULL, dg,
                       b->mask ? dm : NULL, coo ? dlin : NULL, b->src ? dsrc : NULL, nt)) != MT_OK)
    goto out;
  if ((st = MTC(download)(&a, b->param, dp, (size_t)n * sp, err)) != MT_OK ||
      (st = MTC(download)(&a, b->state, ds, (size_t)n * ss, err)) != MT_OK)
    goto out;
  st = MTC(download)(&a, b->std, dsd, (size_t)nsd * sp, err);
out:
  MTC(arena_close)(&a);
  return st;
}

extern "C" mt_status MTC(adagrad_dense)(mt_call *call, mt_error *err) {
  return mt__optim_run(call, MT_OP_adagrad_dense, &MTC(exec), err);
}
extern "C" mt_status MTC(adagrad_sparse)(mt_call *call, mt_error *err) {
  return mt__optim_run(call, MT_OP_adagrad_sparse, &MTC(exec), err);
}
extern "C" mt_status MTC(adagrad_masked)(mt_call *call, mt_error *err) {
  return mt__optim_run(call, MT_OP_adagrad_masked, &MTC(exec), err);
}

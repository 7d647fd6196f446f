/* sparse_blas.cu - the sparse_blas family on the device: every product
 * (mm, sparse_mm, spmm, addmm, sparse_addmm, smm, sspaddmm, hspmm, bmm,
 * linear, matmul, addmv, sparse_sampled_addmm) on COO, CSR, CSC, BSR and
 * BSC operands. The host plan (torch's checks and messages, the sparse
 * operand's cells as per-row term lists in stored order, the dense
 * operand's element offsets, a sparse B's duplicates per element, the
 * result's structure and which accumulator and input element each result
 * value takes) is impl/cpu/sparse_blas.c's (mt__sparse_blas_run); this file
 * is its compute: one thread per result value (common/sparse_blas_math.h)
 * walks its accumulator row's terms in the CPU's order, so every sum has
 * the CPU reference's order. No cuSPARSE: the emulation cannot run it and
 * its SpMM/SpGEMM/SpMV sum in their own order (it is for the benchmarks). */
#include "common/exec.h"
#include "common/sparse_blas_math.h"
#include "common/sparse_blas_ops.h"
#include "cuda_compat.h"

MTC_KERNEL void spb_kernel(mt_spb_par p, mt_spb_bufs b, int64_t n) {
  MTC_FOR(o, n) mt_spb_out(&p, &b, o);
}

extern "C" mt_status MTC(sparse_blas_exec)(const struct mt_spb_par *p,
                                           const struct mt_spb_bufs *b, mt_error *err) {
  size_t es = mt_dtype_size(p->dt), total = 0, i8 = sizeof(int64_t);
  int64_t no = p->n_out, nr = p->m + 1, nbp = p->b_sum ? b->nbe + 1 : 0;
  int64_t nc = b->c ? b->nc : 0;
  mtc_arena a;
  mt_status st;
  if (!no) return MT_OK;
  if (MTC(arena_add)(&total, b->na, es) || MTC(arena_add)(&total, b->nb, es) ||
      MTC(arena_add)(&total, nc, es) || MTC(arena_add)(&total, nr, i8) ||
      MTC(arena_add)(&total, b->nt, i8) || MTC(arena_add)(&total, b->nt, i8) ||
      MTC(arena_add)(&total, nbp, i8) || MTC(arena_add)(&total, b->nbo, i8) ||
      MTC(arena_add)(&total, no, i8) || MTC(arena_add)(&total, no, i8) ||
      MTC(arena_add)(&total, no, es))
    return mt_err(err, MT_OUT_OF_MEMORY, "sparse_blas: %lld results do not fit one device buffer",
                  (long long)no);
  if ((st = MTC(arena_open)(&a, total, "sparse_blas", err)) != MT_OK) return st;
  mt_spb_bufs d = *b;
  d.a = MTC(arena_take)(&a, b->na, es);
  d.b = MTC(arena_take)(&a, b->nb, es);
  d.c = nc ? MTC(arena_take)(&a, nc, es) : NULL;
  d.rptr = (const int64_t *)MTC(arena_take)(&a, nr, i8);
  d.ta = (const int64_t *)MTC(arena_take)(&a, b->nt, i8);
  d.tb = (const int64_t *)MTC(arena_take)(&a, b->nt, i8);
  d.bptr = nbp ? (const int64_t *)MTC(arena_take)(&a, nbp, i8) : NULL;
  d.boff = (const int64_t *)MTC(arena_take)(&a, b->nbo, i8);
  d.oq = (const int64_t *)MTC(arena_take)(&a, no, i8);
  d.oc = (const int64_t *)MTC(arena_take)(&a, no, i8);
  d.out = MTC(arena_take)(&a, no, es);
  if ((st = MTC(upload)(&a, (void *)d.a, b->a, (size_t)b->na * es, err)) != MT_OK ||
      (st = MTC(upload)(&a, (void *)d.b, b->b, (size_t)b->nb * es, err)) != MT_OK ||
      (nc && (st = MTC(upload)(&a, (void *)d.c, b->c, (size_t)nc * es, err)) != MT_OK) ||
      (st = MTC(upload)(&a, (void *)d.rptr, b->rptr, (size_t)nr * i8, err)) != MT_OK ||
      (st = MTC(upload)(&a, (void *)d.ta, b->ta, (size_t)b->nt * i8, err)) != MT_OK ||
      (st = MTC(upload)(&a, (void *)d.tb, b->tb, (size_t)b->nt * i8, err)) != MT_OK ||
      (nbp && (st = MTC(upload)(&a, (void *)d.bptr, b->bptr, (size_t)nbp * i8, err)) != MT_OK) ||
      (st = MTC(upload)(&a, (void *)d.boff, b->boff, (size_t)b->nbo * i8, err)) != MT_OK ||
      (st = MTC(upload)(&a, (void *)d.oq, b->oq, (size_t)no * i8, err)) != MT_OK ||
      (st = MTC(upload)(&a, (void *)d.oc, b->oc, (size_t)no * i8, err)) != MT_OK)
    goto out;
  if ((st = MTC_LAUNCH(&a, spb_kernel, no, *p, d, no)) != MT_OK) goto out;
  st = MTC(download)(&a, b->out, d.out, (size_t)no * es, err);
out:
  MTC(arena_close)(&a);
  return st;
}

#define SPB_OP(name)                                                   \
  extern "C" mt_status MTC(name)(mt_call * call, mt_error * err) {     \
    return mt__sparse_blas_run(call, MT_OP_##name, &MTC(exec), err);   \
  }
SPB_OPS(SPB_OP)

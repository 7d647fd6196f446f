/* sparse_vals.cu - the plain sparse kernels' values on the device: binary
 * (add, sub, mul, div of COO and CSR operands) and reduce (sum, norm of
 * plain sparse inputs), and through them sparse_misc's torch.sparse.sum.
 * The host plans (impl/cpu/binary_sparse.c, reduce_sparse.c) check the
 * call as torch does, build the results' indices (COO merges and
 * intersections, compressed unions, sum groups) and, for each result
 * value, the operand elements it reads in the CPU's order; one thread per
 * result value folds them (common/sparse_vals_math.h). COO inputs that
 * need coalescing go through coalesce.cu. */
#include "common/exec.h"
#include "common/sparse_vals_math.h"
#include "cuda_compat.h"

/* what the kernels take by value (cuda_compat.h, MTC_PLAIN_ARG) */
MTC_PLAIN_ARG(mt_spv_par);

MTC_KERNEL void spv_kernel(mt_spv_par p, const void *a, const void *b, const int64_t *ia,
                           const int64_t *off, const int64_t *ib, void *out, int64_t n) {
  MTC_FOR(o, n) mt_spv_out(&p, a, b, ia, off, ib, out, o);
}

extern "C" mt_status MTC(sparse_vals_exec)(const struct mt_spv_par *p, const void *a,
                                           const void *b, const int64_t *ia, const int64_t *off,
                                           const int64_t *ib, void *out, mt_error *err) {
  size_t ea = mt_dtype_size(p->at), eb = mt_dtype_size(p->bt), eo = mt_dtype_size(p->ot);
  size_t i8 = sizeof(int64_t), total = 0;
  int64_t n = p->n_out, na = a ? p->na : 0, nb = b ? p->nb : 0, nia = ia ? n : 0;
  int64_t noff = off ? n + 1 : 0, nt = off && ib ? p->n_terms : 0;
  mtc_arena ar;
  mt_status st;
  if (!n) return MT_OK;
  if (MTC(arena_add)(&total, na, ea) || MTC(arena_add)(&total, nb, eb) ||
      MTC(arena_add)(&total, nia, i8) || MTC(arena_add)(&total, noff, i8) ||
      MTC(arena_add)(&total, nt, i8) || MTC(arena_add)(&total, n, eo))
    return mt_err(err, MT_OUT_OF_MEMORY,
                  "sparse_vals: %lld values do not fit one device buffer", (long long)n);
  if ((st = MTC(arena_open)(&ar, total, "sparse_vals", err)) != MT_OK) return st;
  void *da = MTC(arena_take)(&ar, na, ea);
  void *db = MTC(arena_take)(&ar, nb, eb);
  int64_t *dia = (int64_t *)MTC(arena_take)(&ar, nia, i8);
  int64_t *doff = (int64_t *)MTC(arena_take)(&ar, noff, i8);
  int64_t *dib = (int64_t *)MTC(arena_take)(&ar, nt, i8);
  void *dout = MTC(arena_take)(&ar, n, eo);
  if ((na && (st = MTC(upload)(&ar, da, a, (size_t)na * ea, err)) != MT_OK) ||
      (nb && (st = MTC(upload)(&ar, db, b, (size_t)nb * eb, err)) != MT_OK) ||
      (nia && (st = MTC(upload)(&ar, dia, ia, (size_t)nia * i8, err)) != MT_OK) ||
      (noff && (st = MTC(upload)(&ar, doff, off, (size_t)noff * i8, err)) != MT_OK) ||
      (nt && (st = MTC(upload)(&ar, dib, ib, (size_t)nt * i8, err)) != MT_OK))
    goto out;
  if ((st = MTC_LAUNCH(&ar, spv_kernel, n, *p, na ? da : NULL, nb ? db : NULL, nia ? dia : NULL,
                       noff ? doff : NULL, nt ? dib : NULL, dout, n)) != MT_OK)
    goto out;
  st = MTC(download)(&ar, out, dout, (size_t)n * eo, err);
out:
  MTC(arena_close)(&ar);
  return st;
}

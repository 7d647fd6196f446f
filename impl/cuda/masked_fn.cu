/* masked_fn.cu - the masked_fn family on the device: every op of
 * common/masked_fn_ops.h (torch.masked's functional ops) on dense inputs
 * with broadcast masks, masked_logaddexp, and the sparse reductions of
 * MFN-9 (COO sum/prod/amax/amin, CSR also mean). The host plan (torch's
 * checks, dtype rules and messages, dims, mask broadcasting, which sparse
 * entries each output reduces, outputs) is impl/cpu/masked_fn.c's
 * (mt__masked_fn_run); this file is its compute, with
 * common/masked_fn_math.h:
 *  - dense: one thread per input element fills it (the op's identity at
 *    masked-out positions, dtype='s cast) into slice order, then one
 *    thread per slice (a reduction's output element, a scan's row) runs
 *    the op over it in the CPU's order, so every sum has the CPU's order
 *    and the goldens' tolerances hold unchanged; the first fully masked
 *    slice of an integer median (the call's error) is found by an atomic
 *    min over the slice index, as the CPU's loop stops at it;
 *  - logaddexp: one thread per result element;
 *  - sparse: one thread per output element over its entries (an
 *    uncoalesced COO's duplicates summed first, as coalescing sums them). */
#include "common/exec.h"
#include "common/masked_fn_math.h"
#include "common/masked_fn_ops.h"
#include "cuda_compat.h"

/* what the kernels take by value (cuda_compat.h, MTC_PLAIN_ARG) */
MTC_PLAIN_ARG(mt_mfn_par);
MTC_PLAIN_ARG(mt_mfn_lae_par);
MTC_PLAIN_ARG(mt_mfn_sp_par);

MTC_KERNEL void mfn_fill_kernel(mt_mfn_par p, const void *x, const void *mask, double *xd,
                                int64_t *xi, uint8_t *mk) {
  MTC_FOR(i, p.n_in) mt_mfn_fill(&p, x, mask, xd, xi, mk, i);
}

MTC_KERNEL void mfn_slice_kernel(mt_mfn_par p, const double *xd, const int64_t *xi,
                                 const uint8_t *mk, double *td, int64_t *ti, void *out,
                                 uint64_t *bad) {
  MTC_FOR(so, p.n_slices) {
    if (mt_mfn_slice_out(&p, xd, xi, mk, td, ti, out, so)) MTC_ATOMIC_MIN_U64(bad, (uint64_t)so);
  }
}

extern "C" mt_status MTC(masked_fn_exec)(const struct mt_mfn_par *p, const void *x,
                                         const void *mask, int64_t n_mask, void *out,
                                         int64_t n_out, int64_t *bad_slice, mt_error *err) {
  size_t sx = mt_dtype_size(p->xdt), sm = mask ? mt_dtype_size(p->mdt) : 1;
  size_t so = mt_dtype_size(p->odt), total = 0;
  int64_t n = p->n_in;
  uint64_t bad = UINT64_MAX;
  mtc_arena a;
  mt_status st;
  *bad_slice = -1;
  if (!mask) n_mask = 0;
  if (MTC(arena_add)(&total, n, sx) || MTC(arena_add)(&total, n_mask, sm) ||
      MTC(arena_add)(&total, n, sizeof(double)) || MTC(arena_add)(&total, n, sizeof(int64_t)) ||
      MTC(arena_add)(&total, n, 1) || MTC(arena_add)(&total, n, sizeof(double)) ||
      MTC(arena_add)(&total, n, sizeof(int64_t)) || MTC(arena_add)(&total, n_out, so) ||
      MTC(arena_add)(&total, 1, sizeof bad))
    return mt_err(err, MT_OUT_OF_MEMORY, "masked_fn: %lld elements do not fit one device buffer",
                  (long long)n);
  if ((st = MTC(arena_open)(&a, total, "masked_fn", err)) != MT_OK) return st;
  void *dx = MTC(arena_take)(&a, n, sx), *dm = MTC(arena_take)(&a, n_mask, sm);
  double *xd = (double *)MTC(arena_take)(&a, n, sizeof(double));
  int64_t *xi = (int64_t *)MTC(arena_take)(&a, n, sizeof(int64_t));
  uint8_t *mk = (uint8_t *)MTC(arena_take)(&a, n, 1);
  double *td = (double *)MTC(arena_take)(&a, n, sizeof(double));
  int64_t *ti = (int64_t *)MTC(arena_take)(&a, n, sizeof(int64_t));
  void *dout = MTC(arena_take)(&a, n_out, so);
  uint64_t *dbad = (uint64_t *)MTC(arena_take)(&a, 1, sizeof bad);
  if ((st = MTC(upload)(&a, dx, x, (size_t)n * sx, err)) != MT_OK ||
      (st = MTC(upload)(&a, dm, mask, (size_t)n_mask * sm, err)) != MT_OK ||
      (st = MTC(upload)(&a, dbad, &bad, sizeof bad, err)) != MT_OK)
    goto out;
  if (n > 0 &&
      (st = MTC_LAUNCH(&a, mfn_fill_kernel, n, *p, dx, mask ? dm : NULL, xd, xi, mk)) != MT_OK)
    goto out;
  if ((st = MTC_LAUNCH(&a, mfn_slice_kernel, p->n_slices, *p, xd, xi, mk, td, ti, dout, dbad)) !=
      MT_OK)
    goto out;
  if ((st = MTC(download)(&a, out, dout, (size_t)n_out * so, err)) != MT_OK ||
      (st = MTC(download)(&a, &bad, dbad, sizeof bad, err)) != MT_OK)
    goto out;
  if (bad != UINT64_MAX) *bad_slice = (int64_t)bad;
out:
  MTC(arena_close)(&a);
  return st;
}

MTC_KERNEL void mfn_lae_kernel(mt_mfn_lae_par p, const void *x, const void *y, const void *mx,
                               const void *my, void *out, int64_t n) {
  MTC_FOR(i, n) mt_mfn_lae_out(&p, x, y, mx, my, out, i);
}

extern "C" mt_status MTC(masked_logaddexp_exec)(const struct mt_mfn_lae_par *p, const void *x,
                                                int64_t nx, const void *y, int64_t ny,
                                                const void *mx, int64_t nmx, const void *my,
                                                int64_t nmy, void *out, int64_t n,
                                                mt_error *err) {
  size_t sx = mt_dtype_size(p->vdt[0]), sy = mt_dtype_size(p->vdt[1]);
  size_t smx = mx ? mt_dtype_size(p->mdt[0]) : 1, smy = my ? mt_dtype_size(p->mdt[1]) : 1;
  size_t so = mt_dtype_size(p->odt), total = 0;
  mtc_arena a;
  mt_status st;
  if (!mx) nmx = 0;
  if (!my) nmy = 0;
  if (MTC(arena_add)(&total, nx, sx) || MTC(arena_add)(&total, ny, sy) ||
      MTC(arena_add)(&total, nmx, smx) || MTC(arena_add)(&total, nmy, smy) ||
      MTC(arena_add)(&total, n, so))
    return mt_err(err, MT_OUT_OF_MEMORY,
                  "masked_logaddexp: %lld elements do not fit one device buffer", (long long)n);
  if ((st = MTC(arena_open)(&a, total, "masked_logaddexp", err)) != MT_OK) return st;
  void *dx = MTC(arena_take)(&a, nx, sx), *dy = MTC(arena_take)(&a, ny, sy);
  void *dmx = MTC(arena_take)(&a, nmx, smx), *dmy = MTC(arena_take)(&a, nmy, smy);
  void *dout = MTC(arena_take)(&a, n, so);
  if ((st = MTC(upload)(&a, dx, x, (size_t)nx * sx, err)) != MT_OK ||
      (st = MTC(upload)(&a, dy, y, (size_t)ny * sy, err)) != MT_OK ||
      (st = MTC(upload)(&a, dmx, mx, (size_t)nmx * smx, err)) != MT_OK ||
      (st = MTC(upload)(&a, dmy, my, (size_t)nmy * smy, err)) != MT_OK)
    goto out;
  if ((st = MTC_LAUNCH(&a, mfn_lae_kernel, n, *p, dx, dy, mx ? dmx : NULL, my ? dmy : NULL, dout,
                       n)) != MT_OK)
    goto out;
  st = MTC(download)(&a, out, dout, (size_t)n * so, err);
out:
  MTC(arena_close)(&a);
  return st;
}

MTC_KERNEL void mfn_sparse_kernel(mt_mfn_sp_par p, const void *vals, const int64_t *off,
                                  const int64_t *src, const int64_t *ent_off,
                                  const int64_t *ent_grp, void *out) {
  MTC_FOR(i, p.n_out) mt_mfn_sp_out(&p, vals, off, src, ent_off, ent_grp, out, i);
}

extern "C" mt_status MTC(masked_fn_sparse_exec)(const struct mt_mfn_sp_par *p, const void *vals,
                                                const int64_t *off, const int64_t *src,
                                                const int64_t *ent_off, const int64_t *ent_grp,
                                                void *out, mt_error *err) {
  size_t sv = mt_dtype_size(p->dt), si = sizeof(int64_t), total = 0;
  mtc_arena a;
  mt_status st;
  if (MTC(arena_add)(&total, p->n_vals, sv) || MTC(arena_add)(&total, p->n_grp + 1, si) ||
      MTC(arena_add)(&total, p->n_vals, si) || MTC(arena_add)(&total, p->n_out + 1, si) ||
      MTC(arena_add)(&total, p->n_ent, si) || MTC(arena_add)(&total, p->n_out, sv))
    return mt_err(err, MT_OUT_OF_MEMORY,
                  "masked_fn: %lld sparse entries do not fit one device buffer",
                  (long long)p->n_vals);
  if ((st = MTC(arena_open)(&a, total, "masked_fn", err)) != MT_OK) return st;
  void *dv = MTC(arena_take)(&a, p->n_vals, sv);
  int64_t *doff = (int64_t *)MTC(arena_take)(&a, p->n_grp + 1, si);
  int64_t *dsrc = (int64_t *)MTC(arena_take)(&a, p->n_vals, si);
  int64_t *deo = (int64_t *)MTC(arena_take)(&a, p->n_out + 1, si);
  int64_t *deg = (int64_t *)MTC(arena_take)(&a, p->n_ent, si);
  void *dout = MTC(arena_take)(&a, p->n_out, sv);
  if ((st = MTC(upload)(&a, dv, vals, (size_t)p->n_vals * sv, err)) != MT_OK ||
      (st = MTC(upload)(&a, doff, off, (size_t)(p->n_grp + 1) * si, err)) != MT_OK ||
      (st = MTC(upload)(&a, dsrc, src, (size_t)p->n_vals * si, err)) != MT_OK ||
      (st = MTC(upload)(&a, deo, ent_off, (size_t)(p->n_out + 1) * si, err)) != MT_OK ||
      (st = MTC(upload)(&a, deg, ent_grp, (size_t)p->n_ent * si, err)) != MT_OK)
    goto out;
  if ((st = MTC_LAUNCH(&a, mfn_sparse_kernel, p->n_out, *p, dv, doff, dsrc, deo, deg, dout)) !=
      MT_OK)
    goto out;
  st = MTC(download)(&a, out, dout, (size_t)p->n_out * sv, err);
out:
  MTC(arena_close)(&a);
  return st;
}

#define X(name, shape, dim, fill, ints, cast, kind)                 \
  extern "C" mt_status MTC(name)(mt_call * call, mt_error * err) {  \
    return mt__masked_fn_run(call, MT_OP_##name, &MTC(exec), err);  \
  }
MFN_OPS(X)
#undef X

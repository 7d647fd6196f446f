/* npma_structure.cu - the numpy_ma profile's structure and masked families
 * on the device. select .. ones_like, cat and stack are torch's structure
 * kernels on the exec (structure.cu's gather, through the host plan
 * mt__structure_run) after numpy.ma's checks; np.ma.where, masked_tensor
 * and to_tensor (and masked_fn's mask flags) are this file's: one thread per element running
 * common/npma_structure_math.h's mt_npw_elem / mt_npk_elem. The host plans
 * are impl/cpu/npma_structure.c's (mt__npma_structure_run) and
 * npma_masked.c's (mt__npma_masked_run). */
#include "common/exec.h"
#include "common/npma_structure_math.h"
#include "cuda_compat.h"

/* what the kernels take by value (cuda_compat.h, MTC_PLAIN_ARG) */
MTC_PLAIN_ARG(mt_npw_par);
MTC_PLAIN_ARG(mt_npk_par);

MTC_KERNEL void npma_where_kernel(mt_npw_par p, const void *c, const uint8_t *mc, const void *x,
                                  const uint8_t *mx, const void *y, const uint8_t *my, void *out,
                                  uint8_t *mask_out, int64_t n) {
  MTC_FOR(i, n) mt_npw_elem(&p, c, mc, x, mx, y, my, out, mask_out, i);
}

MTC_KERNEL void npma_masked_kernel(mt_npk_par p, const void *data, const void *mask, void *out,
                                   uint8_t *mask_out, int64_t n) {
  MTC_FOR(i, n) mt_npk_elem(&p, data, mask, out, mask_out, i);
}

extern "C" mt_status MTC(npma_where_exec)(const struct mt_npw_par *p, const void *c, int64_t nc,
                                          const uint8_t *mc, const void *x, int64_t nx,
                                          const uint8_t *mx, const void *y, int64_t ny,
                                          const uint8_t *my, void *out, uint8_t *mask_out,
                                          int64_t n, mt_error *err) {
  size_t sc = mt_dtype_size(p->c.dt), sx = mt_dtype_size(p->x.dt), sy = mt_dtype_size(p->y.dt);
  size_t so = mt_dtype_size(p->rt), total = 0;
  int64_t nmc = mc ? nc : 0, nmx = mx ? nx : 0, nmy = my ? ny : 0;
  mtc_arena a;
  mt_status st;
  if (MTC(arena_add)(&total, nc, sc) || MTC(arena_add)(&total, nmc, 1) ||
      MTC(arena_add)(&total, nx, sx) || MTC(arena_add)(&total, nmx, 1) ||
      MTC(arena_add)(&total, ny, sy) || MTC(arena_add)(&total, nmy, 1) ||
      MTC(arena_add)(&total, n, so) || MTC(arena_add)(&total, n, 1))
    return mt_err(err, MT_OUT_OF_MEMORY, "npma_where: %lld elements do not fit one device buffer",
                  (long long)n);
  if ((st = MTC(arena_open)(&a, total, "npma_where", err)) != MT_OK) return st;
  void *dc = MTC(arena_take)(&a, nc, sc);
  uint8_t *dmc = mc ? (uint8_t *)MTC(arena_take)(&a, nmc, 1) : NULL;
  void *dx = MTC(arena_take)(&a, nx, sx);
  uint8_t *dmx = mx ? (uint8_t *)MTC(arena_take)(&a, nmx, 1) : NULL;
  void *dy = MTC(arena_take)(&a, ny, sy);
  uint8_t *dmy = my ? (uint8_t *)MTC(arena_take)(&a, nmy, 1) : NULL;
  void *dout = MTC(arena_take)(&a, n, so);
  uint8_t *dmo = (uint8_t *)MTC(arena_take)(&a, n, 1);
  if ((st = MTC(upload)(&a, dc, c, (size_t)nc * sc, err)) != MT_OK ||
      (mc && (st = MTC(upload)(&a, dmc, mc, (size_t)nmc, err)) != MT_OK) ||
      (st = MTC(upload)(&a, dx, x, (size_t)nx * sx, err)) != MT_OK ||
      (mx && (st = MTC(upload)(&a, dmx, mx, (size_t)nmx, err)) != MT_OK) ||
      (st = MTC(upload)(&a, dy, y, (size_t)ny * sy, err)) != MT_OK ||
      (my && (st = MTC(upload)(&a, dmy, my, (size_t)nmy, err)) != MT_OK))
    goto out;
  if ((st = MTC_LAUNCH(&a, npma_where_kernel, n, *p, dc, dmc, dx, dmx, dy, dmy, dout, dmo, n)) !=
      MT_OK)
    goto out;
  if ((st = MTC(download)(&a, out, dout, (size_t)n * so, err)) != MT_OK) goto out;
  st = MTC(download)(&a, mask_out, dmo, (size_t)n, err);
out:
  MTC(arena_close)(&a);
  return st;
}

extern "C" mt_status MTC(npma_masked_exec)(const struct mt_npk_par *p, const void *data,
                                           const void *mask, int64_t mask_bytes, void *out,
                                           uint8_t *mask_out, int64_t n, mt_error *err) {
  size_t es = (size_t)p->es, total = 0;
  int64_t nmo = mask_out ? n : 0, nd = data ? n : 0; /* NPK_FLAGS: no data */
  mtc_arena a;
  mt_status st;
  if (MTC(arena_add)(&total, nd, es) || MTC(arena_add)(&total, mask_bytes, 1) ||
      MTC(arena_add)(&total, n, es) || MTC(arena_add)(&total, nmo, 1))
    return mt_err(err, MT_OUT_OF_MEMORY,
                  "npma_masked: %lld elements do not fit one device buffer", (long long)n);
  if ((st = MTC(arena_open)(&a, total, "npma_masked", err)) != MT_OK) return st;
  void *dd = data ? MTC(arena_take)(&a, nd, es) : NULL;
  void *dm = MTC(arena_take)(&a, mask_bytes, 1);
  void *dout = MTC(arena_take)(&a, n, es);
  uint8_t *dmo = mask_out ? (uint8_t *)MTC(arena_take)(&a, nmo, 1) : NULL;
  if ((data && (st = MTC(upload)(&a, dd, data, (size_t)nd * es, err)) != MT_OK) ||
      (st = MTC(upload)(&a, dm, mask, (size_t)mask_bytes, err)) != MT_OK)
    goto out;
  if ((st = MTC_LAUNCH(&a, npma_masked_kernel, n, *p, dd, dm, dout, dmo, n)) != MT_OK) goto out;
  if ((st = MTC(download)(&a, out, dout, (size_t)n * es, err)) != MT_OK) goto out;
  if (mask_out) st = MTC(download)(&a, mask_out, dmo, (size_t)nmo, err);
out:
  MTC(arena_close)(&a);
  return st;
}

#define X(name)                                                             \
  extern "C" mt_status MTC(npma_##name)(mt_call * call, mt_error * err) {   \
    return mt__npma_structure_run(call, MT_OP_##name, &MTC(exec), err);    \
  }
NPMA_STRUCTURE_OPS(X)
#undef X
#define X(name)                                                           \
  extern "C" mt_status MTC(npma_##name)(mt_call * call, mt_error * err) { \
    return mt__npma_masked_run(call, MT_OP_##name, &MTC(exec), err);     \
  }
NPMA_MASKED_OPS(X)
#undef X

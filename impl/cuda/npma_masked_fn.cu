/* npma_masked_fn.cu - the numpy_ma profile's masked_fn family on the
 * device: masked_sum .. masked_std run the profile's reductions
 * (npma_reduce.cu's hook, through the host plan's mt__npma_reduce), and
 * masked_cumsum/masked_cumprod/masked_median are this file's: one thread
 * per slice along dim running common/npma_masked_fn_math.h's
 * mt_npm_slice (a scan in the CPU's order; a median's insertion sort in a
 * device scratch of the slice's length). The host plan (inputs, the mask
 * broadcast to flags, axes, dtypes, outputs) is impl/cpu/npma_masked_fn.c's
 * (mt__npma_masked_fn_run). */
#include "common/exec.h"
#include "common/npma_masked_fn_math.h"
#include "cuda_compat.h"

/* what the kernels take by value (cuda_compat.h, MTC_PLAIN_ARG) */
MTC_PLAIN_ARG(mt_npm_par);

MTC_KERNEL void npma_slice_kernel(mt_npm_par p, const void *x, const uint8_t *mask, void *out,
                                  uint8_t *mask_out, double *scratch, int64_t n_slices) {
  MTC_FOR(s, n_slices) mt_npm_slice(&p, x, mask, out, mask_out, scratch, s);
}

extern "C" mt_status MTC(npma_masked_fn_exec)(const struct mt_npm_par *p, const void *x,
                                              const uint8_t *mask, int64_t n, void *out,
                                              uint8_t *mask_out, int64_t n_slices,
                                              mt_error *err) {
  size_t si = mt_dtype_size(p->in), so = mt_dtype_size(p->rt), total = 0;
  int median = p->kind == NPM_MEDIAN;
  int64_t n_out = median ? n_slices : n, n_scratch = median ? n : 0;
  mtc_arena a;
  mt_status st;
  if (MTC(arena_add)(&total, n, si) || MTC(arena_add)(&total, n, 1) ||
      MTC(arena_add)(&total, n_out, so) || MTC(arena_add)(&total, n_out, 1) ||
      MTC(arena_add)(&total, n_scratch, sizeof(double)))
    return mt_err(err, MT_OUT_OF_MEMORY,
                  "npma_masked_fn: %lld elements do not fit one device buffer", (long long)n);
  if ((st = MTC(arena_open)(&a, total, "npma_masked_fn", err)) != MT_OK) return st;
  void *dx = MTC(arena_take)(&a, n, si);
  uint8_t *dm = (uint8_t *)MTC(arena_take)(&a, n, 1);
  void *dout = MTC(arena_take)(&a, n_out, so);
  uint8_t *dmo = (uint8_t *)MTC(arena_take)(&a, n_out, 1);
  double *dscr = median ? (double *)MTC(arena_take)(&a, n_scratch, sizeof(double)) : NULL;
  if ((st = MTC(upload)(&a, dx, x, (size_t)n * si, err)) != MT_OK ||
      (st = MTC(upload)(&a, dm, mask, (size_t)n, err)) != MT_OK)
    goto out;
  if ((st = MTC_LAUNCH(&a, npma_slice_kernel, n_slices, *p, dx, dm, dout, dmo, dscr,
                       n_slices)) != MT_OK)
    goto out;
  if ((st = MTC(download)(&a, out, dout, (size_t)n_out * so, err)) != MT_OK) goto out;
  st = MTC(download)(&a, mask_out, dmo, (size_t)n_out, err);
out:
  MTC(arena_close)(&a);
  return st;
}

#define X(name)                                                             \
  extern "C" mt_status MTC(npma_##name)(mt_call * call, mt_error * err) {   \
    return mt__npma_masked_fn_run(call, MT_OP_##name, &MTC(exec), err);    \
  }
NPMA_MASKED_FN_OPS(X)
#undef X

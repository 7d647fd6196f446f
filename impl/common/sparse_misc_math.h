/* sparse_misc_math.h - the per-element math of the sparse_misc family's
 * torch.sparse.softmax / log_softmax (SPS-5), shared by the CPU reference
 * (impl/cpu/sparse_misc.c, which plans each call: torch's checks, the
 * coalescing, each slice's stored values as a list of offsets) and the CUDA
 * kernel (impl/cuda/sparse_misc.cu). The other ops of the family copy
 * values (the exec's gather) or store none. */
#ifndef MT_SPARSE_MISC_MATH_H
#define MT_SPARSE_MISC_MATH_H

#include "common/mt_hd.h"

/* One call, planned on the host. */
typedef struct mt_smx_par {
  mt_dtype in_dt, out_dt; /* the coalesced input's values, the result's (dtype=) */
  int log_;               /* log_softmax */
  int64_t n_out;          /* result values: the input's, same layout */
  int64_t n_slices, n_off;
} mt_smx_par;

/* Result value o: its slice sl[o] is the input values at off[ptr[s] ..
 * ptr[s + 1]) in the CPU's order; the slice's max (NaN wins), then the sum
 * of exp(v - max) in that order, then value o's softmax or log_softmax. */
MT_HD void mt_smx_out(const mt_smx_par *p, const void *vals, const int64_t *ptr,
                      const int64_t *off, const int64_t *sl, void *out, int64_t o) {
  int64_t s = sl[o];
  double mx = -INFINITY, sum = 0;
  for (int64_t k = ptr[s]; k < ptr[s + 1]; k++) {
    double v = mt_hd_get_f64(vals, p->in_dt, off[k]);
    if (v > mx || v != v) mx = v;
  }
  for (int64_t k = ptr[s]; k < ptr[s + 1]; k++)
    sum += exp(mt_hd_get_f64(vals, p->in_dt, off[k]) - mx);
  double v = mt_hd_get_f64(vals, p->in_dt, o) - mx;
  mt_hd_set_f64(out, p->out_dt, o, p->log_ ? v - log(sum) : exp(v) / sum);
}

#endif /* MT_SPARSE_MISC_MATH_H */

/* adagrad_entry.cuh - one entry of Adagrad's sparse step on the device (ADA-2;
 * ADA-3's COO form skips zero values before calling it), shared by the fused
 * step (adagrad_step.cu, coo_k: p and s read and written in place), the
 * uncoalesced step (adagrad_step.cu, dup_k: on each run's summed value) and
 * the cuSPARSE pipeline (adagrad_gs.cu: on the gathered compact values), so
 * they are the same arithmetic, line for line perf/kernels/adagrad_step.c's
 * (both files are compiled with -fmad=false); a run's sum (mt_run_sum); and
 * their launch shape. */
#ifndef MT_ADAGRAD_ENTRY_CUH
#define MT_ADAGRAD_ENTRY_CUH

/* grid-stride loops over n items, and a grid that fills any current GPU several times */
#define MT_GRID_STRIDE(i, n)                                                                       \
  for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < (n);                        \
       i += (int64_t)gridDim.x * blockDim.x)

static inline unsigned mt_grid_for(int64_t work) {
  int64_t b = (work + 255) / 256;
  return (unsigned)(b < 1 ? 1 : b > 65536 ? 65536 : b);
}

template <typename T>
__device__ inline void mt_ada_entry(T *p, T *s, T v, T nclr, T eps, int max) {
  T gi = max ? -v : v;
  T sn = *s + gi * gi;             /* state_sum at the entry + g^2 */
  T sd = sqrt(sn) + eps;           /* std */
  T pn = *p + nclr * (gi / sd);    /* param - clr * (g / std) */
  *s = sn;
  *p = pn;
}

/* The coalesced value of the run of equal keys that starts at k (of nnz
 * sorted entries; perm[r]: entry r's position in v, NULL: v in sorted
 * order), summed as the reference's coalesce sums duplicates
 * (mt_coo_coalesce; perf/kernels/adagrad_step.c's dup_runs): in the entries'
 * input order (the sort is stable) from the first, in T, each addition
 * rounded (torch's coalesce). */
template <typename T>
__device__ inline T mt_run_sum(const int64_t *key, const int32_t *perm, const T *v, int64_t k,
                               int64_t nnz) {
  T acc = v[perm ? perm[k] : k];
  for (int64_t r = k + 1; r < nnz && key[r] == key[k]; r++) acc = acc + v[perm ? perm[r] : r];
  return acc;
}

#endif

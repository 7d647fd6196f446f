/* sparse_optim_step.h - fast in-place steps of torch.optim.SparseAdam and of
 * torch.optim.SGD with a sparse (COO) gradient (the "fast second" of the
 * reference kernels in impl/cpu/sparse_optim.c, see STYLE.md "Reference
 * first"), for the benchmark matrix of perf/ (perf/README.md).
 *
 * Each function updates its arrays in place with results BIT-IDENTICAL to
 * the reference op on the same inputs:
 *   sparse_adam   mt_cpu_sparse_adam (SADAM-1/2): only the coalesced
 *                 grad's entries move; per element, in torch's order:
 *                 mu = (g - m) * (1 - b1); m += mu; vu = (g*g - v) * (1 - b2);
 *                 v += vu; p += ((mu + m_old) / (sqrt(vu + v_old) + eps)) *
 *                 -step_size, step_size = lr * sqrt(1 - b2^step) / (1 - b1^step)
 *                 in double; every op rounded to the tensor dtype.
 *   sgd           mt_cpu_sgd without momentum (SGD-1): param.add_(grad,
 *                 alpha=-lr), alpha rounded to the dtype; a coalesced grad
 *                 without dense dims rounds the product before the sum, a
 *                 hybrid one (dense dims) is one fused multiply-add (the
 *                 dense + sparse add paths torch takes).
 *   sgd_momentum  mt_cpu_sgd with momentum (SGD-2), the steady-state step
 *                 (a buffer from the previous step, on the grad's entries:
 *                 torch's sparse + sparse add merges equal indices, so the
 *                 buffer keeps the grad's index set when the grad's entries
 *                 repeat): buf = fma(1 - dampening, g, buf * momentum);
 *                 p = fma(-lr, buf, p) (the buffer is flagged uncoalesced
 *                 after buf.mul_, so the dense + sparse add is fused).
 * "fma" of float32 values is the reference's: fma in double, rounded to
 * float (the product of two floats is exact in double, so that is the
 * double sum rounded to float).
 *
 * Grads are coalesced COO with sparse_dim 1: entry k covers the `row`
 * elements idx[k] * row + j (j < row) with values vals[k * row + j]; row 1
 * is an element-sparse grad over the flattened param, row > 1 a hybrid
 * (embedding rows x dim) grad. Indices are not validated (the reference's
 * job). Not covered: maximize, Nesterov, weight decay (the benchmark steps
 * use neither; the reference op has them).
 *
 * Threading as the Adagrad steps (adagrad_step.h): nthreads <= 0 all OpenMP
 * threads, 1 serial; entries are split into contiguous ranges, each element
 * is updated by one thread with the same operations, so results do not
 * depend on nthreads. isa: MT_ADAGRAD_ISA_* (AVX2+FMA or base; results are
 * identical). */
#ifndef MT_SPARSE_OPTIM_STEP_H
#define MT_SPARSE_OPTIM_STEP_H

#include <stdint.h>

#include "adagrad_step.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct mt_sparse_adam_hparams {
  double lr, beta1, beta2, eps;
  double step; /* this step's 1-based count (bias corrections) */
  int nthreads, isa;
} mt_sparse_adam_hparams;

typedef struct mt_sgd_hparams {
  double lr, momentum, dampening;
  int nthreads, isa;
} mt_sgd_hparams;

/* The code path these kernels run for isa (AUTO: this CPU's best):
 * "avx2" or "base" (no AVX-512 copy). */
const char *mt_sparse_optim_isa_name(int isa);

/* p, exp_avg m, exp_avg_sq v: dense, the param's elements. */
mt_status mt_sparse_adam_step_f32(float *p, float *m, float *v, const int64_t *idx,
                                  const float *vals, int64_t nnz, int64_t row,
                                  const mt_sparse_adam_hparams *hp, mt_error *err);
mt_status mt_sparse_adam_step_f64(double *p, double *m, double *v, const int64_t *idx,
                                  const double *vals, int64_t nnz, int64_t row,
                                  const mt_sparse_adam_hparams *hp, mt_error *err);

/* SGD without momentum (hp->momentum must be 0). */
mt_status mt_sgd_step_coo_f32(float *p, const int64_t *idx, const float *vals, int64_t nnz,
                              int64_t row, const mt_sgd_hparams *hp, mt_error *err);
mt_status mt_sgd_step_coo_f64(double *p, const int64_t *idx, const double *vals, int64_t nnz,
                              int64_t row, const mt_sgd_hparams *hp, mt_error *err);

/* SGD with momentum, steady state: buf holds the momentum buffer's values
 * on the grad's entries (nnz * row, the grad's order), updated in place. */
mt_status mt_sgd_momentum_step_coo_f32(float *p, float *buf, const int64_t *idx,
                                       const float *vals, int64_t nnz, int64_t row,
                                       const mt_sgd_hparams *hp, mt_error *err);
mt_status mt_sgd_momentum_step_coo_f64(double *p, double *buf, const int64_t *idx,
                                       const double *vals, int64_t nnz, int64_t row,
                                       const mt_sgd_hparams *hp, mt_error *err);

#ifdef __cplusplus
}
#endif
#endif /* MT_SPARSE_OPTIM_STEP_H */

/* exec.h - where a family's numbers are computed (BLIS's shape: one
 * reference plan, its compute overridden per backend).
 *
 * A family's host plan lives once, in impl/cpu/<family>.c: input checks,
 * torch's dtype rules and messages, output allocation, layouts. Its compute
 * step goes through an mt_exec: the CPU reference's runs the shared
 * per-element math (impl/common/<family>_math.h) in a loop on the host, the
 * CUDA backend's uploads the buffers, runs the same math in a kernel and
 * downloads the result (impl/cuda/<family>.cu). Every hook takes host
 * buffers and returns a status (a device's failure is DEVICE_ERROR or
 * OUT_OF_MEMORY with its message, never an abort). A NULL hook is
 * NOT_SUPPORTED for that family on that backend. */
#ifndef MT_EXEC_H
#define MT_EXEC_H

#include <stdint.h>

#include "mt_core.h"

#ifdef __cplusplus
extern "C" {
#endif

struct mt_un_par;   /* common/unary_math.h */
struct mt_bin_par;  /* common/binary_math.h */
struct mt_bin_loop; /* common/binary_math.h */
struct mt_red_par;  /* common/reduce_math.h */
struct mt_ada_par;  /* common/optim_math.h */
struct mt_ada_bufs; /* common/optim_math.h */
struct mt_sadam_par; /* common/sparse_optim_math.h */
struct mt_sgd_par;   /* common/sparse_optim_math.h */
struct mt_sgd_bufs;  /* common/sparse_optim_math.h */

typedef struct mt_exec {
  const char *name; /* "cpu", "cuda" */
  /* unary: out[k] = op(in[k]) for k < n, element dtypes p->in, p->out */
  mt_status (*unary)(const struct mt_un_par *p, const void *in, void *out, int64_t n,
                     mt_error *err);
  /* binary: out[i] = a op b over the broadcast loop l (mt_bin_elem); va,
   * vb and mask hold na, nb and nm elements (va/vb NULL for a number);
   * mask_out NULL: not written. *zero_div_at: the first i with a specified
   * zero integer divisor (the call's error), else -1. */
  mt_status (*binary)(const struct mt_bin_par *p, const struct mt_bin_loop *l, const void *va,
                      int64_t na, const void *vb, int64_t nb, const uint8_t *mask, int64_t nm,
                      void *out, uint8_t *mask_out, int64_t *zero_div_at, mt_error *err);
  /* reduce: output elements 0 .. n_out-1 of p (mt_red_out) from the
   * contiguous data and mask of n_in elements */
  mt_status (*reduce)(const struct mt_red_par *p, const void *data, const uint8_t *mask,
                      int64_t n_in, void *out, uint8_t *mask_out, int64_t n_out, mt_error *err);
  /* adagrad: one Adagrad step of p's path over the host buffers b
   * (common/optim_math.h): mt_ada_elem for each of mt_ada_threads(p, b)
   * threads, after mt_ada_int_init of every element on ADA_INT_COO */
  mt_status (*adagrad)(const struct mt_ada_par *p, const struct mt_ada_bufs *b, mt_error *err);
  /* sparse_adam: SparseAdam's update of param, exp_avg and exp_avg_sq (p->n
   * elements each, in place) from the coalesced grad's p->nnz * p->row
   * values at the entries' dense linear indices lin (common/sparse_optim_math.h) */
  mt_status (*sparse_adam)(const struct mt_sadam_par *p, const void *grad, const int64_t *lin,
                           void *param, void *exp_avg, void *exp_avg_sq, mt_error *err);
  /* sgd: one op of SGD's tensor arithmetic over the host buffers b
   * (common/sparse_optim_math.h): mt_sgd_elem for each of mt_sgd_threads */
  mt_status (*sgd)(const struct mt_sgd_par *p, const struct mt_sgd_bufs *b, mt_error *err);
} mt_exec;

/* The CPU reference's compute (impl/cpu/exec.c). */
extern const mt_exec mt_cpu_exec;

/* The unary family's kernel (impl/cpu/unary.c) with its compute on ex:
 * op is one of common/unary_ops.def's ops, base its base op. */
mt_status mt__unary_run(mt_call *call, mt_op op, int base, int inplace, const mt_exec *ex,
                        mt_error *err);

/* The binary family's kernel (impl/cpu/binary.c) with its compute on ex:
 * op is one of common/binary_ops.h's ops (in place too). */
mt_status mt__binary_run(mt_call *call, mt_op op, const mt_exec *ex, mt_error *err);
/* The reduce family's kernel (impl/cpu/reduce.c): op is one of its RED_OPS. */
mt_status mt__reduce_run(mt_call *call, mt_op op, const mt_exec *ex, mt_error *err);
/* The optim family's kernels (impl/cpu/optim.c): adagrad_dense,
 * adagrad_sparse, adagrad_masked. */
mt_status mt__optim_run(mt_call *call, mt_op op, const mt_exec *ex, mt_error *err);
/* The sparse_optim family's kernels (impl/cpu/sparse_optim.c): sparse_adam, sgd. */
mt_status mt__sparse_optim_run(mt_call *call, mt_op op, const mt_exec *ex, mt_error *err);

#ifdef __cplusplus
}
#endif
#endif /* MT_EXEC_H */

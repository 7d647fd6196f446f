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
struct mt_ew_par;   /* common/grad_ew_math.h */
struct mt_mfn_par;     /* common/masked_fn_math.h */
struct mt_mfn_lae_par; /* common/masked_fn_math.h */
struct mt_mfn_sp_par;  /* common/masked_fn_math.h */
struct mt_ada_par;  /* common/optim_math.h */
struct mt_ada_bufs; /* common/optim_math.h */
struct mt_sadam_par; /* common/sparse_optim_math.h */
struct mt_sgd_par;   /* common/sparse_optim_math.h */
struct mt_sgd_bufs;  /* common/sparse_optim_math.h */
struct mt_gr_par;    /* common/grad_reduce_math.h */
struct mt_mfg_par;   /* common/grad_masked_fn_math.h */
struct mt_gsc_par;   /* common/grad_structure_math.h */
struct mt_spb_par;   /* common/sparse_blas_math.h */
struct mt_spb_bufs;  /* common/sparse_blas_math.h */
struct mt_smx_par;   /* common/sparse_misc_math.h */
struct mt_spv_par;   /* common/sparse_vals_math.h */
struct mt_gsp_par;   /* common/grad_sparse_math.h */
struct mt_gsp_bufs;  /* common/grad_sparse_math.h */
struct mt_npu_par;   /* common/npma_unary_math.h */
struct mt_npb_par;   /* common/npma_binary_math.h */
struct mt_npr_par;   /* common/npma_reduce_math.h */
struct mt_npm_par;   /* common/npma_masked_fn_math.h */
struct mt_npw_par;   /* common/npma_structure_math.h */
struct mt_npk_par;   /* common/npma_structure_math.h */

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
  /* coalesce: a coalesced copy of a COO tensor (mt_coo_coalesce's result:
   * allocated by the core, freed with mt_tensor_free) */
  mt_status (*coalesce)(const mt_tensor *coo, mt_tensor **out, mt_error *err);
  /* gather: dst[i] = element off[i] of srcs[src[i]] for i < n, es bytes an
   * element (a copy: every dtype alike); source k holds len[k] elements */
  mt_status (*gather)(const int *src, const int64_t *off, int64_t n, int n_src,
                      const void *const *srcs, const int64_t *len, size_t es, void *dst,
                      mt_error *err);
  /* grad_ew: the elementwise backward (mt_ew_elem): for every operand k
   * with p->grad[k], data[k] and mask[k] over its xn[k] elements; x[k] its
   * values as doubles (NULL for a number), gx/gm the upstream gradient's
   * ng values and mask */
  mt_status (*grad_ew)(const struct mt_ew_par *p, const double *const *x, const int64_t *xn,
                       const double *gx, const uint8_t *gm, int64_t ng, void *const *data,
                       uint8_t *const *mask, mt_error *err);
  /* masked_fn: the p->n_in contiguous elements x and the n_mask elements of
   * their mask (NULL: none), filled and cast (mt_mfn_fill), then each of
   * p->n_slices slices (mt_mfn_slice_out) into out (n_out elements: a
   * reduction's one per slice, a scan's one per input element).
   * *bad_slice: the first fully masked slice of an integer median (the
   * call's error), else -1. */
  mt_status (*masked_fn)(const struct mt_mfn_par *p, const void *x, const void *mask,
                         int64_t n_mask, void *out, int64_t n_out, int64_t *bad_slice,
                         mt_error *err);
  /* masked_logaddexp: out[i] = mt_mfn_lae_out for i < n from the operands
   * x, y (nx, ny elements) and their masks (NULL: none; nmx, nmy elements) */
  mt_status (*masked_logaddexp)(const struct mt_mfn_lae_par *p, const void *x, int64_t nx,
                                const void *y, int64_t ny, const void *mx, int64_t nmx,
                                const void *my, int64_t nmy, void *out, int64_t n,
                                mt_error *err);
  /* masked_fn_sparse: out[i] = mt_mfn_sp_out for i < p->n_out from the
   * input's p->n_vals stored values, its p->n_grp groups (off, src) and the
   * outputs' p->n_ent entries (ent_off, ent_grp) */
  mt_status (*masked_fn_sparse)(const struct mt_mfn_sp_par *p, const void *vals,
                                const int64_t *off, const int64_t *src, const int64_t *ent_off,
                                const int64_t *ent_grp, void *out, mt_error *err);
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
  /* grad_reduce: a MaskedTensor reduction's backward (mt_gr_group) for each
   * of p->n_out groups (off, idx: the input elements of each, increasing)
   * from the input's p->n values x (as doubles) and mask bits spec and the
   * upstream gradient's p->n_out values g; data (p->dtype) and mask get
   * p->n elements */
  mt_status (*grad_reduce)(const struct mt_gr_par *p, const double *x, const uint8_t *spec,
                           const double *g, const int64_t *off, const int64_t *idx, void *data,
                           uint8_t *mask, mt_error *err);
  /* grad_masked_fn: a torch.masked op's backward (mt_mfg_group) for each of
   * p->n_grp groups (off, idx as grad_reduce's) from the p->n_ops operands'
   * p->n values x[k] and masks in[k] and the upstream gradient's n_go
   * values go; g[k] (NULL: no gradient) gets p->n doubles, each already
   * rounded to p->dtype[k] */
  mt_status (*grad_masked_fn)(const struct mt_mfg_par *p, const double *const *x,
                              const uint8_t *const *in, const double *go, int64_t n_go,
                              const int64_t *off, const int64_t *idx, double *const *g,
                              mt_error *err);
  /* grad_scatter: a structure op's backward (mt_gsc_elem) for each of p->n
   * gradient elements from the upstream values vals[src[t]], t in off[i] ..
   * off[i + 1] - 1 (p->n_src values); data (p->dtype) and mask get p->n */
  mt_status (*grad_scatter)(const struct mt_gsc_par *p, const double *vals, const int64_t *off,
                            const int64_t *src, void *data, uint8_t *mask, mt_error *err);
  /* sparse_blas: the p->n_out result values of a product planned on the
   * host (common/sparse_blas_math.h): mt_spb_out for each */
  mt_status (*sparse_blas)(const struct mt_spb_par *p, const struct mt_spb_bufs *b,
                           mt_error *err);
  /* sparse_softmax: out[o] = mt_smx_out for o < p->n_out from the coalesced
   * input's values (p->n_out of them) and the slices' offset lists
   * (ptr: p->n_slices + 1, off: p->n_off, sl: p->n_out) */
  mt_status (*sparse_softmax)(const struct mt_smx_par *p, const void *vals, const int64_t *ptr,
                              const int64_t *off, const int64_t *sl, void *out, mt_error *err);
  /* nonzero: flags[c] = mt_spc_nonzero (common/sparse_convert_math.h) for
   * c < n: whether one of the run elements c * run .. of x (dtype dt, n *
   * run elements) is nonzero, the cells a dense input stores (SPC-1) */
  mt_status (*nonzero)(mt_dtype dt, const void *x, int64_t n, int64_t run, uint8_t *flags,
                       mt_error *err);
  /* convert: y[i] = mt_spc_convert of element off[i] of x (dtype in, n_x
   * elements) to dtype out, for i < n (a converting copy) */
  mt_status (*convert)(mt_dtype in, const void *x, int64_t n_x, const int64_t *off, mt_dtype out,
                       void *y, int64_t n, mt_error *err);
  /* sparse_vals: out[o] = mt_spv_out for o < p->n_out (the plain sparse
   * kernels' values, common/sparse_vals_math.h) from the operands a (p->na
   * elements, NULL: none) and b (p->nb), each output's element ia[o] of a
   * (ia NULL: none used) and its terms ib[off[o] .. off[o + 1] - 1] of b
   * (off NULL: none) */
  mt_status (*sparse_vals)(const struct mt_spv_par *p, const void *a, const void *b,
                           const int64_t *ia, const int64_t *off, const int64_t *ib, void *out,
                           mt_error *err);
  /* grad_sparse: one gradient of a plain (sparse or dense) call's backward
   * planned on the host (common/grad_sparse_math.h): g[i] = mt_gsp_elem
   * for i < p->n, doubles rounded to p->dtype */
  mt_status (*grad_sparse)(const struct mt_gsp_par *p, const struct mt_gsp_bufs *b, double *g,
                           mt_error *err);
  /* npma_unary: the numpy_ma profile's unary family (mt_npu_elem): out[i]
   * and mask_out[i] for i < n from the input's contiguous data and mask */
  mt_status (*npma_unary)(const struct mt_npu_par *p, const void *in, const uint8_t *mask,
                          void *out, uint8_t *mask_out, int64_t n, mt_error *err);
  /* npma_binary: the numpy_ma profile's binary family (mt_npb_elem): out[i]
   * and mask_out[i] for i < n from the operands a and b (na, nb elements:
   * 1 for a number) and their masks ma, mb (NULL: all specified) */
  mt_status (*npma_binary)(const struct mt_npb_par *p, const void *a, int64_t na,
                           const uint8_t *ma, const void *b, int64_t nb, const uint8_t *mb,
                           void *out, uint8_t *mask_out, int64_t n, mt_error *err);
  /* npma_reduce: the numpy_ma profile's reductions (mt_npr_out): out[o] and
   * mask_out[o] (NULL: a plain output) for o < n_grp from the input's n
   * contiguous elements x and mask, output o's inputs idx[off[o] ..
   * off[o + 1] - 1] (row-major order) */
  mt_status (*npma_reduce)(const struct mt_npr_par *p, const void *x, const uint8_t *mask,
                           int64_t n, const int64_t *off, const int64_t *idx, int64_t n_grp,
                           void *out, uint8_t *mask_out, mt_error *err);
  /* npma_masked_fn: the numpy_ma profile's scans and medians
   * (mt_npm_slice): each of n_slices slices from the input's n contiguous
   * elements x and mask flags into out and mask_out (a scan: n elements, a
   * median: one per slice) */
  mt_status (*npma_masked_fn)(const struct mt_npm_par *p, const void *x, const uint8_t *mask,
                              int64_t n, void *out, uint8_t *mask_out, int64_t n_slices,
                              mt_error *err);
  /* npma_where: np.ma.where (mt_npw_elem): out[i] and mask_out[i] for i < n
   * from cond c, x and y (nc, nx, ny elements: 1 for a number) and their
   * masks (NULL: all specified) */
  mt_status (*npma_where)(const struct mt_npw_par *p, const void *c, int64_t nc,
                          const uint8_t *mc, const void *x, int64_t nx, const uint8_t *mx,
                          const void *y, int64_t ny, const uint8_t *my, void *out,
                          uint8_t *mask_out, int64_t n, mt_error *err);
  /* npma_masked: masked_tensor and to_tensor (mt_npk_elem): out[i] (and
   * masked_tensor's mask_out[i]) for i < n from the n data elements and the
   * mask (mask_bytes bytes); masked_fn's mask flags: data NULL */
  mt_status (*npma_masked)(const struct mt_npk_par *p, const void *data, const void *mask,
                           int64_t mask_bytes, void *out, uint8_t *mask_out, int64_t n,
                           mt_error *err);
} mt_exec;

/* The CPU reference's compute (impl/cpu/exec.c). */
extern const mt_exec mt_cpu_exec;

/* A coalesced view of a COO tensor for a host plan computing on ex: coo
 * itself when it is coalesced, else ex's coalesced copy in *tmp (free it
 * with mt_tensor_free). Another backend's copy is checked before the host
 * plan indexes by it: malformed indices (a device fault) are DEVICE_ERROR,
 * never a wild write. */
mt_status mt__exec_coalesced(const mt_exec *ex, const mt_tensor *coo, const mt_tensor **view,
                             mt_tensor **tmp, mt_error *err);

/* A path with no compute on ex (a declared gap, spec/cuda-backend.md): st
 * is the CPU reference's status for the call. Its refusals are the host
 * plan's checks, torch's errors, and are returned as they are; when it
 * computed values, they are dropped and the call is NOT_SUPPORTED ("<op>:
 * <what>: the <ex> backend has no kernels for it yet"). */
mt_status mt__exec_values_gap(mt_call *call, const mt_exec *ex, mt_status st, const char *op,
                              const char *what, mt_error *err);

/* The unary family's kernel (impl/cpu/unary.c) with its compute on ex:
 * op is one of common/unary_ops.def's ops, base its base op. */
mt_status mt__unary_run(mt_call *call, mt_op op, int base, int inplace, const mt_exec *ex,
                        mt_error *err);

/* The binary family's kernel (impl/cpu/binary.c) with its compute on ex:
 * op is one of common/binary_ops.h's ops (in place too). */
mt_status mt__binary_run(mt_call *call, mt_op op, const mt_exec *ex, mt_error *err);
/* The backward kernels of the unary and binary ops (impl/cpu/grad_unary.c,
 * grad_binary.c, on the engine grad_ew.c): op one of GU_OPS / GB_OPS
 * (common/grad_ew_ops.h). */
mt_status mt__grad_unary_run(mt_call *call, mt_op op, const mt_exec *ex, mt_error *err);
mt_status mt__grad_binary_run(mt_call *call, mt_op op, const mt_exec *ex, mt_error *err);
/* The masked family's kernels (impl/cpu/masked.c): masked_tensor, to_tensor. */
mt_status mt__masked_run(mt_call *call, mt_op op, const mt_exec *ex, mt_error *err);
/* The structure family's kernel (impl/cpu/structure.c): op is one of
 * common/structure_ops.h's. */
mt_status mt__structure_run(mt_call *call, mt_op op, const mt_exec *ex, mt_error *err);
/* The reduce family's kernel (impl/cpu/reduce.c): op is one of its RED_OPS. */
mt_status mt__reduce_run(mt_call *call, mt_op op, const mt_exec *ex, mt_error *err);
/* The masked_fn family's kernel (impl/cpu/masked_fn.c): op is one of
 * common/masked_fn_ops.h's MFN_OPS. */
mt_status mt__masked_fn_run(mt_call *call, mt_op op, const mt_exec *ex, mt_error *err);
/* The optim family's kernels (impl/cpu/optim.c): adagrad_dense,
 * adagrad_sparse, adagrad_masked. */
mt_status mt__optim_run(mt_call *call, mt_op op, const mt_exec *ex, mt_error *err);
/* The sparse_optim family's kernels (impl/cpu/sparse_optim.c): sparse_adam, sgd. */
mt_status mt__sparse_optim_run(mt_call *call, mt_op op, const mt_exec *ex, mt_error *err);
/* The MaskedTensor reductions' backward (impl/cpu/grad_reduce.c): sum mean
 * prod amin amax var std. */
mt_status mt__grad_reduce_run(mt_call *call, mt_op op, const mt_exec *ex, mt_error *err);
/* torch.masked's functional ops' backward (impl/cpu/grad_masked_fn.c): op
 * one of common/grad_masked_fn_math.h's MFG_OPS, or masked_logaddexp. */
mt_status mt__grad_masked_fn_run(mt_call *call, mt_op op, const mt_exec *ex, mt_error *err);
/* The structure ops' backward (impl/cpu/grad_structure.c): the view ops,
 * index, cat, stack, split, where and the layout conversions; to_tensor's
 * (impl/cpu/grad_masked.c). */
mt_status mt__grad_structure_run(mt_call *call, mt_op op, const mt_exec *ex, mt_error *err);
mt_status mt__grad_to_tensor_run(mt_call *call, const mt_exec *ex, mt_error *err);
/* The sparse_blas family's kernels (impl/cpu/sparse_blas.c): mm, sparse_mm,
 * spmm, addmm, sparse_addmm, smm, sspaddmm, hspmm, bmm, linear, matmul,
 * addmv, sparse_sampled_addmm; its CPU compute hook (BLAS's axpy rows). */
mt_status mt__sparse_blas_run(mt_call *call, mt_op op, const mt_exec *ex, mt_error *err);
mt_status mt__cpu_sparse_blas_exec(const struct mt_spb_par *p, const struct mt_spb_bufs *b,
                                   mt_error *err);
/* The sparse_misc family's kernels (impl/cpu/sparse_misc.c): op is one of
 * its ops (common/ops.def, 670-681); its CPU softmax compute. */
mt_status mt__sparse_misc_run(mt_call *call, mt_op op, const mt_exec *ex, mt_error *err);
mt_status mt__cpu_sparse_softmax_exec(const struct mt_smx_par *p, const void *vals,
                                      const int64_t *ptr, const int64_t *off, const int64_t *sl,
                                      void *out, mt_error *err);
/* The sparse_convert family's kernels (impl/cpu/sparse_convert.c): op is
 * one of common/sparse_convert_ops.h's SPC_OPS. */
mt_status mt__sparse_convert_run(mt_call *call, mt_op op, const mt_exec *ex, mt_error *err);
/* The plain sparse kernels' CPU values (impl/cpu/binary_sparse.c: the loop
 * over mt_spv_out). */
mt_status mt__cpu_sparse_vals_exec(const struct mt_spv_par *p, const void *a, const void *b,
                                   const int64_t *ia, const int64_t *off, const int64_t *ib,
                                   void *out, mt_error *err);
/* The plain (sparse or dense) calls' backward (impl/cpu/grad_sparse.c) with
 * its compute on ex: op one of its ops (grad_sparse.c's table). */
mt_status mt__grad_sparse_run(mt_call *call, mt_op op, const mt_exec *ex, mt_error *err);
/* The same for the ops only grad_sparse.c has a backward of (its slot
 * kernels: a masked input allowed where the op takes one). */
mt_status mt__grad_sparse_own_run(mt_call *call, mt_op op, const mt_exec *ex, mt_error *err);
/* The numpy_ma profile's unary family (impl/cpu/npma_unary.c): op one of
 * its ops (neg .. ceil, pow, pow_, clamp, clip, round, angle, conj_physical). */
mt_status mt__npma_unary_run(mt_call *call, mt_op op, const mt_exec *ex, mt_error *err);
/* The numpy_ma profile's binary family (impl/cpu/npma_binary.c): op one of
 * common/npma_binary_math.h's NPMA_BINARY_OPS (in place too). */
mt_status mt__npma_binary_run(mt_call *call, mt_op op, const mt_exec *ex, mt_error *err);
/* The numpy_ma profile's reductions (impl/cpu/npma_reduce.c): op one of
 * common/npma_reduce_math.h's NPMA_REDUCE_OPS. */
mt_status mt__npma_reduce_run(mt_call *call, mt_op op, const mt_exec *ex, mt_error *err);
/* The numpy_ma profile's masked_fn family (impl/cpu/npma_masked_fn.c): op
 * one of common/npma_masked_fn_math.h's NPMA_MASKED_FN_OPS. */
mt_status mt__npma_masked_fn_run(mt_call *call, mt_op op, const mt_exec *ex, mt_error *err);
/* The numpy_ma profile's structure family (impl/cpu/npma_structure.c: torch's
 * structure kernels on ex, np.ma.where) and masked family (npma_masked.c):
 * op one of common/npma_structure_math.h's NPMA_STRUCTURE_OPS /
 * NPMA_MASKED_OPS. */
mt_status mt__npma_structure_run(mt_call *call, mt_op op, const mt_exec *ex, mt_error *err);
mt_status mt__npma_masked_run(mt_call *call, mt_op op, const mt_exec *ex, mt_error *err);

#ifdef __cplusplus
}
#endif
#endif /* MT_EXEC_H */

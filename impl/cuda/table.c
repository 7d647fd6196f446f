/* table.c - the CUDA backend's tables (BLIS's shape: the CPU reference's
 * host plans, with the compute hooks of common/exec.h overridden here and
 * the kernel slots filled family by family). An op whose family has no
 * device compute yet keeps a NULL slot: NOT_SUPPORTED, reported apart from
 * failures; on a GPU `ctest -L cuda` fails while any family has none.
 *
 * Built twice: for the device ("cuda", with nvcc) and as the emulation
 * ("cuda-emu", MT_CUDA_EMU: the same kernels run on the host; see
 * cuda_compat.h). */
#include "common/binary_ops.h"
#include "common/exec.h"
#include "common/grad_ew_ops.h"
#include "common/grad_reduce_ops.h"
#include "common/reduce_ops.h"
#include "common/grad_structure_ops.h"
#include "common/sparse_blas_ops.h"
#include "common/sparse_misc_ops.h"
#include "common/structure_ops.h"
#include "cuda_compat.h"
#include "common/masked_fn_ops.h"
#include "common/grad_masked_fn_math.h"
#include "common/sparse_convert_ops.h"
#include "common/grad_sparse_ops.h"
#include "common/npma_unary_math.h"
#include "common/npma_binary_math.h"
#include "common/npma_reduce_math.h"
#include "common/npma_masked_fn_math.h"
#include "common/npma_structure_math.h"

/* the family files' compute hooks and kernels */
mt_status MTC(unary_exec)(const struct mt_un_par *p, const void *in, void *out, int64_t n,
                          mt_error *err);
mt_status MTC(binary_exec)(const struct mt_bin_par *p, const struct mt_bin_loop *l,
                           const void *va, int64_t na, const void *vb, int64_t nb,
                           const uint8_t *mask, int64_t nm, void *out, uint8_t *mask_out,
                           int64_t *zero_div_at, mt_error *err);
#define MT_UN_OP(op, base, inpl) mt_status MTC(op)(mt_call * call, mt_error * err);
#include "common/unary_ops.def"
#undef MT_UN_OP
mt_status MTC(coalesce_exec)(const mt_tensor *coo, mt_tensor **out, mt_error *err);
mt_status MTC(grad_ew_exec)(const struct mt_ew_par *p, const double *const *x, const int64_t *xn,
                            const double *gx, const uint8_t *gm, int64_t ng, void *const *data,
                            uint8_t *const *mask, mt_error *err);
#define X(op, base) mt_status MTC(grad_##op)(mt_call * call, mt_error * err);
GU_OPS(X)
GB_OPS(X)
#undef X
mt_status MTC(gather_exec)(const int *src, const int64_t *off, int64_t n, int n_src,
                           const void *const *srcs, const int64_t *len, size_t es, void *dst,
                           mt_error *err);
mt_status MTC(reduce_exec)(const struct mt_red_par *p, const void *data, const uint8_t *mask,
                           int64_t n_in, void *out, uint8_t *mask_out, int64_t n_out,
                           mt_error *err);
#define X(name, ...) mt_status MTC(name)(mt_call * call, mt_error * err);
BINARY_OPS(X)
INPLACE_OPS(X)
RED_OPS(X)
MFN_OPS(X)
#undef X
#define X(name) mt_status MTC(name)(mt_call * call, mt_error * err);
STRUCTURE_OPS(X)
X(masked_tensor)
X(to_tensor)
#undef X
mt_status MTC(masked_fn_exec)(const struct mt_mfn_par *p, const void *x, const void *mask,
                              int64_t n_mask, void *out, int64_t n_out, int64_t *bad_slice,
                              mt_error *err);
mt_status MTC(masked_logaddexp_exec)(const struct mt_mfn_lae_par *p, const void *x, int64_t nx,
                                     const void *y, int64_t ny, const void *mx, int64_t nmx,
                                     const void *my, int64_t nmy, void *out, int64_t n,
                                     mt_error *err);
mt_status MTC(masked_fn_sparse_exec)(const struct mt_mfn_sp_par *p, const void *vals,
                                     const int64_t *off, const int64_t *src,
                                     const int64_t *ent_off, const int64_t *ent_grp, void *out,
                                     mt_error *err);
mt_status MTC(adagrad_exec)(const struct mt_ada_par *p, const struct mt_ada_bufs *b, mt_error *err);
mt_status MTC(adagrad_dense)(mt_call *call, mt_error *err);
mt_status MTC(adagrad_sparse)(mt_call *call, mt_error *err);
mt_status MTC(adagrad_masked)(mt_call *call, mt_error *err);
mt_status MTC(sparse_adam_exec)(const struct mt_sadam_par *p, const void *grad, const int64_t *lin,
                                void *param, void *exp_avg, void *exp_avg_sq, mt_error *err);
mt_status MTC(sgd_exec)(const struct mt_sgd_par *p, const struct mt_sgd_bufs *b, mt_error *err);
mt_status MTC(sparse_adam)(mt_call *call, mt_error *err);
mt_status MTC(sgd)(mt_call *call, mt_error *err);
mt_status MTC(grad_reduce_exec)(const struct mt_gr_par *p, const double *x, const uint8_t *spec,
                                const double *g, const int64_t *off, const int64_t *idx,
                                void *data, uint8_t *mask, mt_error *err);
mt_status MTC(grad_masked_fn_exec)(const struct mt_mfg_par *p, const double *const *x,
                                   const uint8_t *const *in, const double *go, int64_t n_go,
                                   const int64_t *off, const int64_t *idx, double *const *g,
                                   mt_error *err);
#define X(name, kind) mt_status MTC(grad_##name)(mt_call * call, mt_error * err);
GRAD_RED_OPS(X)
X(masked_logaddexp, MFG_LOGADDEXP)
#undef X
#define X(name, code) mt_status MTC(grad_##name)(mt_call * call, mt_error * err);
MFG_OPS(X)
#undef X
mt_status MTC(grad_scatter_exec)(const struct mt_gsc_par *p, const double *vals,
                                 const int64_t *off, const int64_t *src, void *data,
                                 uint8_t *mask, mt_error *err);
#define X(name) mt_status MTC(grad_##name)(mt_call * call, mt_error * err);
GRAD_STRUCTURE_OPS(X)
X(to_tensor)
#undef X

mt_status MTC(sparse_blas_exec)(const struct mt_spb_par *p, const struct mt_spb_bufs *b,
                                mt_error *err);
#define X(name) mt_status MTC(name)(mt_call * call, mt_error * err);
SPB_OPS(X)
#undef X
mt_status MTC(sparse_softmax_exec)(const struct mt_smx_par *p, const void *vals,
                                   const int64_t *ptr, const int64_t *off, const int64_t *sl,
                                   void *out, mt_error *err);
#define X(name) mt_status MTC(name)(mt_call * call, mt_error * err);
SMISC_OPS(X)
#undef X
mt_status MTC(nonzero_exec)(mt_dtype dt, const void *x, int64_t n, int64_t run, uint8_t *flags,
                            mt_error *err);
mt_status MTC(convert_exec)(mt_dtype in, const void *x, int64_t n_x, const int64_t *off,
                            mt_dtype out, void *y, int64_t n, mt_error *err);
#define X(name) mt_status MTC(name)(mt_call * call, mt_error * err);
SPC_OPS(X)
#undef X
mt_status MTC(sparse_vals_exec)(const struct mt_spv_par *p, const void *a, const void *b,
                                const int64_t *ia, const int64_t *off, const int64_t *ib,
                                void *out, mt_error *err);
mt_status MTC(grad_sparse_exec)(const struct mt_gsp_par *p, const struct mt_gsp_bufs *b,
                                double *g, mt_error *err);
#define X(name) mt_status MTC(grad_##name)(mt_call * call, mt_error * err);
GRAD_SPARSE_OWN_OPS(X)
#undef X
mt_status MTC(npma_unary_exec)(const struct mt_npu_par *p, const void *in, const uint8_t *mask,
                               void *out, uint8_t *mask_out, int64_t n, mt_error *err);
#define X(name) mt_status MTC(npma_##name)(mt_call * call, mt_error * err);
NPMA_UNARY_OPS(X)
#undef X
mt_status MTC(npma_binary_exec)(const struct mt_npb_par *p, const void *a, int64_t na,
                                const uint8_t *ma, const void *b, int64_t nb, const uint8_t *mb,
                                void *out, uint8_t *mask_out, int64_t n, mt_error *err);
#define X(name) mt_status MTC(npma_##name)(mt_call * call, mt_error * err);
NPMA_BINARY_OPS(X)
#undef X
mt_status MTC(npma_reduce_exec)(const struct mt_npr_par *p, const void *x, const uint8_t *mask,
                                int64_t n, const int64_t *off, const int64_t *idx, int64_t n_grp,
                                void *out, uint8_t *mask_out, mt_error *err);
#define X(name) mt_status MTC(npma_##name)(mt_call * call, mt_error * err);
NPMA_REDUCE_OPS(X)
#undef X
mt_status MTC(npma_masked_fn_exec)(const struct mt_npm_par *p, const void *x,
                                   const uint8_t *mask, int64_t n, void *out, uint8_t *mask_out,
                                   int64_t n_slices, mt_error *err);
#define X(name) mt_status MTC(npma_##name)(mt_call * call, mt_error * err);
NPMA_MASKED_FN_OPS(X)
#undef X
mt_status MTC(npma_where_exec)(const struct mt_npw_par *p, const void *c, int64_t nc,
                               const uint8_t *mc, const void *x, int64_t nx, const uint8_t *mx,
                               const void *y, int64_t ny, const uint8_t *my, void *out,
                               uint8_t *mask_out, int64_t n, mt_error *err);
mt_status MTC(npma_masked_exec)(const struct mt_npk_par *p, const void *data, const void *mask,
                                int64_t mask_bytes, void *out, uint8_t *mask_out, int64_t n,
                                mt_error *err);
#define X(name) mt_status MTC(npma_##name)(mt_call * call, mt_error * err);
NPMA_STRUCTURE_OPS(X)
NPMA_MASKED_OPS(X)
#undef X

const mt_exec MTC(exec) = {
#ifdef MT_CUDA_EMU
    .name = "cuda-emu",
#else
    .name = "cuda",
#endif
    .unary = MTC(unary_exec),
    .binary = MTC(binary_exec),
    .reduce = MTC(reduce_exec),
    .coalesce = MTC(coalesce_exec),
    .gather = MTC(gather_exec),
    .grad_ew = MTC(grad_ew_exec),
    .masked_fn = MTC(masked_fn_exec),
    .masked_logaddexp = MTC(masked_logaddexp_exec),
    .masked_fn_sparse = MTC(masked_fn_sparse_exec),
    .adagrad = MTC(adagrad_exec),
    .sparse_adam = MTC(sparse_adam_exec),
    .sgd = MTC(sgd_exec),
    .grad_reduce = MTC(grad_reduce_exec),
    .grad_masked_fn = MTC(grad_masked_fn_exec),
    .grad_scatter = MTC(grad_scatter_exec),
    .sparse_blas = MTC(sparse_blas_exec),
    .sparse_softmax = MTC(sparse_softmax_exec),
    .nonzero = MTC(nonzero_exec),
    .convert = MTC(convert_exec),
    .sparse_vals = MTC(sparse_vals_exec),
    .grad_sparse = MTC(grad_sparse_exec),
    .npma_unary = MTC(npma_unary_exec),
    .npma_binary = MTC(npma_binary_exec),
    .npma_reduce = MTC(npma_reduce_exec),
    .npma_masked_fn = MTC(npma_masked_fn_exec),
    .npma_where = MTC(npma_where_exec),
    .npma_masked = MTC(npma_masked_exec),
};

static const mt_kernel_fn kernels[MT_OP__END] = {
#define MT_UN_OP(op, base, inpl) [MT_OP_##op] = MTC(op),
#include "common/unary_ops.def"
#undef MT_UN_OP
#define X(name, ...) [MT_OP_##name] = MTC(name),
    BINARY_OPS(X)
    INPLACE_OPS(X)
    RED_OPS(X)
    MFN_OPS(X)
#undef X
#define X(name) [MT_OP_##name] = MTC(name),
    STRUCTURE_OPS(X)
    X(masked_tensor)
    X(to_tensor)
#undef X
    [MT_OP_adagrad_dense] = MTC(adagrad_dense),
    [MT_OP_adagrad_sparse] = MTC(adagrad_sparse),
    [MT_OP_adagrad_masked] = MTC(adagrad_masked),
    [MT_OP_sparse_adam] = MTC(sparse_adam),
    [MT_OP_sgd] = MTC(sgd),
#define X(name) [MT_OP_##name] = MTC(name),
    SPB_OPS(X)
    SMISC_OPS(X)
    SPC_OPS(X)
#undef X
};

/* the backward kernels (golden format 3's gradient cases) */
static const mt_kernel_fn backward[MT_OP__END] = {
#define X(op, base) [MT_OP_##op] = MTC(grad_##op),
    GU_OPS(X)
    GB_OPS(X)
#undef X
    [MT_OP_adagrad_dense] = MTC(adagrad_dense),
    [MT_OP_adagrad_sparse] = MTC(adagrad_sparse),
    [MT_OP_adagrad_masked] = MTC(adagrad_masked),
    [MT_OP_sparse_adam] = MTC(sparse_adam),
    [MT_OP_sgd] = MTC(sgd),
#define X(name, kind) [MT_OP_##name] = MTC(grad_##name),
    GRAD_RED_OPS(X)
    X(masked_logaddexp, MFG_LOGADDEXP)
#undef X
#define X(name, code) [MT_OP_##name] = MTC(grad_##name),
    MFG_OPS(X)
#undef X
#define X(name) [MT_OP_##name] = MTC(grad_##name),
    GRAD_STRUCTURE_OPS(X)
    X(to_tensor)
#undef X
#define X(name) [MT_OP_##name] = MTC(grad_##name),
    GRAD_SPARSE_OWN_OPS(X)
#undef X
};

/* the numpy_ma profile's kernels (impl/cpu/npma_ops.def's ops, family by
 * family; an op without a slot is NOT_SUPPORTED in that profile) */
static const mt_kernel_fn npma_kernels[MT_OP__END] = {
#define X(name) [MT_OP_##name] = MTC(npma_##name),
    NPMA_UNARY_OPS(X)
    NPMA_BINARY_OPS(X)
    NPMA_REDUCE_OPS(X)
    NPMA_MASKED_FN_OPS(X)
    NPMA_STRUCTURE_OPS(X)
    NPMA_MASKED_OPS(X)
#undef X
};

static const mt_profile_kernels profiles[] = {
    {"numpy_ma", MT_OP__END, npma_kernels},
};

static const mt_impl impl = {
    .abi_version = MT_ABI_VERSION,
    .struct_size = sizeof(mt_impl),
#ifdef MT_CUDA_EMU
    .name = "cuda-emu",
    .unavailable = NULL,
#else
    .name = "cuda",
    .unavailable = MTC(unavailable),
#endif
    .n_kernels = MT_OP__END,
    .kernels = kernels,
    .n_backward = MT_OP__END,
    .backward = backward,
    .n_profiles = sizeof profiles / sizeof profiles[0],
    .profiles = profiles,
};

#ifdef MT_CUDA_EMU
const mt_impl *mt_backend_cuda_emu(void) { return &impl; }
#else
const mt_impl *mt_backend_cuda(void) { return &impl; }
#endif

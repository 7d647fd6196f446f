/* mt_core.h - the shared core of mtcs (libmtcore): names, errors, tensor
 * allocation and validation, element access, layout conversions, backends.
 * Used by the backends in impl/, the runner in conformance/ and perf/.
 * Not part of the plugin contract (that is spec/include/mt/mt.h alone). */
#ifndef MT_CORE_H
#define MT_CORE_H

#include <stdarg.h>
#include <stdint.h>

#include "mt/mt.h"
#include "mt/compressed.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- names (generated from the X-macro tables) -------------------------- */
const char *mt_status_name(mt_status s);    /* "MASK_MISMATCH"; "?" if unknown */
const char *mt_status_message(mt_status s); /* the default message */
int mt_status_from_name(const char *name, mt_status *out); /* 0 = found */
const char *mt_op_name(mt_op op);           /* "sum"; NULL if no such id */
const char *mt_op_family(mt_op op);         /* "reduce" */
const char *mt_op_rules(mt_op op);          /* "RED-1,RED-2" */
int mt_op_from_name(const char *name, mt_op *out); /* 0 = found */
const char *mt_dtype_name(mt_dtype d);      /* "float32" */
size_t mt_dtype_size(mt_dtype d);
int mt_dtype_from_name(const char *name, mt_dtype *out);
int mt_dtype_is_float(mt_dtype d);          /* float16/32/64, bfloat16 */
const char *mt_kind_name(mt_kind k);        /* "coo" */
int mt_kind_from_name(const char *name, mt_kind *out);

/* ---- errors -------------------------------------------------------------- */
/* Sets err (may be NULL) and returns s. printf-style message; when fmt is
 * NULL the status's default message is used. */
mt_status mt_err(mt_error *err, mt_status s, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Prefixes err->msg with "ctx: " (keeps the status); returns err->status. */
mt_status mt_err_prefix(mt_error *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* ---- allocation (these also back mt_host) -------------------------------- */
/* Shapes are checked: ndim in [0, MT_MAX_DIMS], every dim >= 0, the element
 * count and byte size must fit in int64/size_t (huge shapes give
 * OUT_OF_MEMORY or INVALID_ARGUMENT with a message, never a crash). */
mt_status mt_dense_new(mt_dtype dtype, int ndim, const int64_t *shape, mt_tensor **out,
                       mt_error *err);
mt_status mt_coo_new(mt_dtype dtype, int ndim, const int64_t *shape, int sparse_dim, int64_t nnz,
                     mt_tensor **out, mt_error *err);
mt_status mt_csr_new(mt_dtype dtype, int64_t rows, int64_t cols, int64_t nnz, mt_tensor **out,
                     mt_error *err);
/* Any compressed layout (mt/compressed.h); nnz per batch; blocksize NULL
 * for CSR/CSC. Index buffers and values zero-filled. */
mt_status mt_compressed_new(mt_kind kind, mt_dtype dtype, int ndim, const int64_t *shape,
                            int dense_dim, const int64_t *blocksize, int64_t nnz,
                            mt_tensor **out, mt_error *err);
mt_status mt_masked_new(mt_tensor *data, mt_tensor *mask, mt_tensor **out, mt_error *err);
mt_status mt_scalar_new(mt_dtype dtype, double value, mt_tensor **out, mt_error *err);
void mt_tensor_free(mt_tensor *t);
mt_status mt_tensor_clone(const mt_tensor *t, mt_tensor **out, mt_error *err); /* deep, contiguous */
/* The same, allocating through h (a kernel's outputs: call->host). */
mt_status mt_tensor_clone_host(const mt_host *h, const mt_tensor *t, mt_tensor **out,
                               mt_error *err);
const mt_host *mt_host_default(void);

/* ---- shape helpers ------------------------------------------------------- */
int64_t mt_numel(const mt_tensor *t);               /* product of shape; 1 for ndim 0 */
int64_t mt_shape_numel(int ndim, const int64_t *shape);
int mt_shape_equal(const mt_tensor *a, const mt_tensor *b);
int mt_is_contiguous(const mt_tensor *t);           /* DENSE row-major */
/* "[2, 3]" into buf; returns buf. */
const char *mt_shape_str(int ndim, const int64_t *shape, char *buf, size_t len);
/* Elements per COO value row: prod(shape[sparse_dim:]). */
int64_t mt_coo_row_numel(const mt_tensor *t);
/* Row-major linear index of COO entry k over the sparse dims. */
int64_t mt_coo_linear(const mt_tensor *t, int64_t k);

/* ---- validation ---------------------------------------------------------- */
/* Checks every invariant of t's layout (spec/SEMANTICS.md ERR-*): COO
 * indices shape/range, CSR crow monotone with crow[0]=0 and crow[rows]=nnz,
 * columns in range, masked data/mask same kind and shape with a bool mask,
 * dense strides non-negative. `what` names the tensor in messages
 * ("inputs/1"). */
mt_status mt_tensor_validate(const mt_tensor *t, const char *what, mt_error *err);

/* ---- element access (any dtype, as double) ------------------------------- */
double mt_get_f64(const void *buf, mt_dtype dtype, int64_t i);
void mt_set_f64(void *buf, mt_dtype dtype, int64_t i, double v);
/* An integer or bool element exactly (bool as 0/1): a double holds only the
 * int64 values of magnitude <= 2^53, so an int64 compared through
 * mt_get_f64 cannot tell 2^53 from 2^53 + 1. A float element is truncated. */
int64_t mt_get_i64(const void *buf, mt_dtype dtype, int64_t i);
/* Storage offset (elements) of a dense tensor's row-major linear index. */
int64_t mt_dense_offset(const mt_tensor *t, int64_t linear);
/* Dense element at a linear row-major index, honouring strides. */
double mt_dense_get(const mt_tensor *t, int64_t linear);
float mt_half_to_float(uint16_t h);
uint16_t mt_float_to_half(float f);
/* bfloat16 <-> float: widening is exact; narrowing rounds to nearest even,
 * overflows to inf, keeps NaN (quiet 0x7fc0 with the sign). */
float mt_bfloat16_to_float(uint16_t b);
uint16_t mt_float_to_bfloat16(float f);

/* ---- layout conversions -------------------------------------------------- */
/* Coalesced copy of a COO tensor: indices sorted lexicographically, duplicates
 * summed (in float64 for float dtypes, then rounded once), coalesced = 1. */
mt_status mt_coo_coalesce(const mt_tensor *coo, mt_tensor **out, mt_error *err);
/* The sparse geometry coalescing runs on (common/coalesce_math.h's
 * mt_coal_par) of a COO tensor, for the CPU's mt_coo_coalesce and the
 * CUDA backend's; *span: the cells of its sparse dims. INVALID_ARGUMENT
 * when they pass 2^63 (the linear keys would not fit int64). */
struct mt_coal_par;
mt_status mt_coal_par_of(const mt_tensor *coo, struct mt_coal_par *p, int64_t *span,
                         mt_error *err);
/* Dense contiguous copy of a DENSE/COO/CSR/SCALAR tensor (COO duplicates
 * summed); a MASKED tensor gives its data densified (mask ignored). */
mt_status mt_to_dense(const mt_tensor *t, mt_tensor **out, mt_error *err);

/* ---- keyword arguments (spec/include/mt/kwargs.def) ---------------------- */
/* MT_OK when every kwarg of kw is one that op takes, with a value of a type
 * it accepts (mt_kw_validate); else INVALID_ARGUMENT naming the op and the
 * kwarg: "adagrad_dense: kwargs/lr: expected a float, got a string ('0.1')".
 * Called first thing by every CPU kernel. op is the kernel's own op, not
 * call->op, which direct callers (unit tests) leave unset. */
mt_status mt__kw_check(mt_op op, const mt_kwargs *kw, mt_error *err);

/* ---- backends ------------------------------------------------------------ */
const mt_impl *mt_backend_cpu(void);
const mt_impl *mt_backend_cuda(void); /* NULL when built without CUDA */
/* The CUDA backend's kernels run on the host (impl/cuda/cuda_compat.h):
 * built everywhere, the backend "cuda-emu". */
const mt_impl *mt_backend_cuda_emu(void);
/* Looks up the kernel for op in impl (honouring struct_size/n_kernels) and
 * calls it; NOT_SUPPORTED when the slot is absent or supports() says no. */
mt_status mt_dispatch(const mt_impl *impl, mt_call *call, mt_error *err);
/* The same for a case of profile `profile` (NULL or "torch": impl->kernels;
 * else the impl's table for that profile, NOT_SUPPORTED when it has none).
 * A backward call (call->grad_out set) goes to impl->backward (torch
 * profile only; NOT_SUPPORTED where the impl has no backward slot). */
mt_status mt_dispatch_profile(const mt_impl *impl, const char *profile, mt_call *call,
                              mt_error *err);

#ifdef __cplusplus
}
#endif
#endif /* MT_CORE_H */

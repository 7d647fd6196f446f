/* mt.h - public contract of mtcs: dtypes, layouts, statuses, tensor views,
 * kernel calls and the versioned implementation table (plugin ABI).
 *
 * This header depends on the C standard library only, so a third party can
 * build a plugin from spec/ alone. See spec/plugin-abi.md.
 */
#ifndef MT_MT_H
#define MT_MT_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Bumped when mt_tensor, mt_call, mt_host or mt_impl change incompatibly.
 * Adding ops (new slots at the end of the kernel table) does not bump it. */
#define MT_ABI_VERSION 1u

#define MT_MAX_DIMS 8
#define MT_MAX_OUTPUTS 4
#define MT_MSG_LEN 512

/* ---- statuses ---------------------------------------------------------- */
typedef enum {
#define MT_STATUS(name, code, msg) MT_##name = code,
#include "mt/status.def"
#undef MT_STATUS
  MT_STATUS__COUNT
} mt_status;

/* Filled by whoever returns a status other than MT_OK. `msg` names the
 * field, the index and the value ("COO indices[1][17] = 9 is out of range
 * for dim 1 of size 8"). */
typedef struct mt_error {
  mt_status status;
  char msg[MT_MSG_LEN];
} mt_error;

/* ---- ops --------------------------------------------------------------- */
typedef enum {
  MT_OP__NONE = 0,
#define MT_OP(id, name, family, rules) MT_OP_##name = id,
#include "mt/ops.def"
#undef MT_OP
  MT_OP__END /* one past the largest id */
} mt_op;

/* ---- dtypes ------------------------------------------------------------ */
/* MT_DTYPE(name, element size, golden name). float16 is stored as IEEE
 * binary16 bits (uint16_t); bfloat16 as the upper 16 bits of an IEEE
 * float32 (uint16_t); bool as uint8_t 0/1. New dtypes are appended: the
 * plugin ABI fixes the existing enum values. */
#define MT_DTYPES(X)          \
  X(float32, 4, "float32")    \
  X(float64, 8, "float64")    \
  X(float16, 2, "float16")    \
  X(int64, 8, "int64")        \
  X(int32, 4, "int32")        \
  X(int8, 1, "int8")          \
  X(uint8, 1, "uint8")        \
  X(bool, 1, "bool")          \
  X(bfloat16, 2, "bfloat16")

typedef enum {
#define MT_X(name, size, str) MT_##name,
  MT_DTYPES(MT_X)
#undef MT_X
  MT_DTYPE__COUNT
} mt_dtype;

/* ---- layouts (golden `kind`) ------------------------------------------- */
#define MT_KINDS(X) \
  X(DENSE, "dense") \
  X(COO, "coo")     \
  X(CSR, "csr")     \
  X(MASKED, "masked") \
  X(SCALAR, "scalar") \
  X(CSC, "csc")     \
  X(BSR, "bsr")     \
  X(BSC, "bsc")

typedef enum {
#define MT_X(name, str) MT_KIND_##name,
  MT_KINDS(MT_X)
#undef MT_X
  MT_KIND__COUNT
} mt_kind;

/* ---- tensor views ------------------------------------------------------ */
/* One struct for every layout; which fields are meaningful depends on kind.
 *
 * DENSE  values: element buffer; strides[d] in elements (row-major
 *        contiguous when strides[d] = prod(shape[d+1:])). ndim may be 0.
 * COO    sparse_dim + dense_dim == ndim (hybrid when dense_dim > 0);
 *        indices: int64 [sparse_dim][nnz], row-major (indices[d*nnz + k]);
 *        values: contiguous [nnz, shape[sparse_dim], ..., shape[ndim-1]];
 *        coalesced: 1 when indices are sorted lexicographically and unique.
 * CSR, CSC, BSR, BSC (the compressed layouts; CSC/BSR/BSC appended within
 *        ABI 1, golden format 2): torch's layout, spelled out in
 *        mt/compressed.h. ndim = batch dims + 2 + dense_dim; the two sparse
 *        dims are shape[nb], shape[nb+1] (nb = ndim - 2 - dense_dim).
 *        crow_indices: the compressed indices, int64 [batch..., ncompressed
 *        + 1] (torch's crow_indices for CSR/BSR, ccol_indices for
 *        CSC/BSC); col_indices: the plain indices, int64 [batch..., nnz]
 *        (col_indices for CSR/BSR, row_indices for CSC/BSC); nnz is per
 *        batch; values: contiguous [batch..., nnz, (blocksize[0],
 *        blocksize[1] for BSR/BSC), dense...]. BSR/BSC index blocks:
 *        ncompressed = shape[nb] / blocksize[0] block rows (BSR) or
 *        shape[nb+1] / blocksize[1] block columns (BSC). blocksize is {1, 1}
 *        for CSR and CSC. A plain 2-d CSR (golden format 1) is the case
 *        nb = dense_dim = 0.
 * MASKED data and mask: two tensors of the same kind and shape; mask dtype
 *        bool. mask true = the element is specified.
 * SCALAR ndim == 0; values holds one element of dtype (a Python number:
 *        float64 for floats, int64 for ints, bool for bools). */
typedef struct mt_tensor mt_tensor;
struct mt_tensor {
  mt_kind kind;
  mt_dtype dtype;
  int ndim;
  int64_t shape[MT_MAX_DIMS];
  int64_t strides[MT_MAX_DIMS]; /* DENSE only */
  void *values;                 /* DENSE, COO, CSR, SCALAR */
  int sparse_dim;               /* COO */
  int dense_dim;                /* COO, compressed */
  int64_t nnz;                  /* COO, compressed (per batch) */
  int64_t *indices;             /* COO */
  int coalesced;                /* COO */
  int64_t *crow_indices;        /* compressed: crow (CSR, BSR) / ccol (CSC, BSC) */
  int64_t *col_indices;         /* compressed: col (CSR, BSR) / row (CSC, BSC) */
  mt_tensor *data;              /* MASKED */
  mt_tensor *mask;              /* MASKED */
  void *owner;                  /* allocator's bookkeeping; do not touch */
  /* appended within ABI 1 (tensors are made by the runner's host services,
   * never by value in a plugin, so an older plugin just never reads it) */
  int64_t blocksize[2];         /* BSR, BSC; {1, 1} for CSR, CSC */
};

/* ---- keyword arguments ------------------------------------------------- */
typedef enum {
  MT_KW_BOOL,
  MT_KW_INT,
  MT_KW_FLOAT,
  MT_KW_STR,
  MT_KW_INTS,  /* a tuple of ints, e.g. dim=(0, 1) */
  MT_KW_FLOATS /* a tuple of floats, e.g. betas=(0.9, 0.999) (appended within ABI 1) */
} mt_kw_type;

typedef struct mt_kwarg {
  const char *name; /* torch's keyword name */
  mt_kw_type type;
  int64_t i;        /* BOOL (0/1), INT */
  double f;         /* FLOAT (INT and BOOL also set f) */
  const char *s;    /* STR */
  int n;            /* INTS, FLOATS: count */
  union {           /* one pointer either way: the struct keeps its ABI 1 size */
    const int64_t *ints;  /* INTS */
    const double *floats; /* FLOATS */
  };
} mt_kwarg;

typedef struct mt_kwargs {
  int n;
  const mt_kwarg *items;
} mt_kwargs;

static inline const mt_kwarg *mt_kw_find(const mt_kwargs *kw, const char *name) {
  if (!kw) return NULL;
  for (int k = 0; k < kw->n; k++)
    if (strcmp(kw->items[k].name, name) == 0) return &kw->items[k];
  return NULL;
}
/* Numeric kwarg as double, `dflt` when absent (bool/int/float all read).
 * These readers return the default for a value of another type and never
 * see names they are not asked for: check a call's kwargs against the op's
 * schema first (mt/kwargs.h, mt_kw_validate; spec/plugin-abi.md). */
static inline double mt_kw_float(const mt_kwargs *kw, const char *name, double dflt) {
  const mt_kwarg *a = mt_kw_find(kw, name);
  return (a && a->type != MT_KW_STR && a->type != MT_KW_INTS && a->type != MT_KW_FLOATS) ? a->f
                                                                                     : dflt;
}
static inline int64_t mt_kw_int(const mt_kwargs *kw, const char *name, int64_t dflt) {
  const mt_kwarg *a = mt_kw_find(kw, name);
  return (a && (a->type == MT_KW_INT || a->type == MT_KW_BOOL)) ? a->i : dflt;
}

/* ---- host services: allocation for kernels ------------------------------ */
/* Provided by the runner to every kernel, so a plugin allocates outputs that
 * the runner can free, without linking anything of mtcs. All new tensors
 * are contiguous; buffers are zero-filled. */
typedef struct mt_host {
  uint32_t abi_version;
  uint32_t struct_size;
  mt_status (*dense_new)(mt_dtype dtype, int ndim, const int64_t *shape, mt_tensor **out,
                         mt_error *err);
  /* COO with room for nnz entries; ndim - sparse_dim dense dims. */
  mt_status (*coo_new)(mt_dtype dtype, int ndim, const int64_t *shape, int sparse_dim,
                       int64_t nnz, mt_tensor **out, mt_error *err);
  mt_status (*csr_new)(mt_dtype dtype, int64_t rows, int64_t cols, int64_t nnz, mt_tensor **out,
                       mt_error *err);
  /* Takes ownership of data and mask, also on failure. */
  mt_status (*masked_new)(mt_tensor *data, mt_tensor *mask, mt_tensor **out, mt_error *err);
  mt_status (*scalar_new)(mt_dtype dtype, double value, mt_tensor **out, mt_error *err);
  void (*free)(mt_tensor *t); /* NULL is fine */
  /* Appended within ABI 1 (present when struct_size covers it): any
   * compressed layout (CSR, CSC, BSR, BSC) with batch dims and dense_dim
   * dense dims; nnz per batch; blocksize NULL for CSR/CSC. */
  mt_status (*compressed_new)(mt_kind kind, mt_dtype dtype, int ndim, const int64_t *shape,
                              int dense_dim, const int64_t *blocksize, int64_t nnz,
                              mt_tensor **out, mt_error *err);
} mt_host;

/* ---- a kernel call ----------------------------------------------------- */
typedef struct mt_call {
  const mt_host *host;
  mt_op op;
  int n_in;
  const mt_tensor *const *in; /* torch's positional arguments, in order */
  const mt_kwargs *kw;        /* torch's keyword arguments */
  int n_out;                  /* set by the kernel */
  mt_tensor *out[MT_MAX_OUTPUTS]; /* set by the kernel; freed by the caller */
  /* Appended within ABI 1 (the runner makes mt_call; a kernel of an older
   * plugin never reads them): set for a backward call (mt_impl.backward),
   * 0 / NULL otherwise. grad_out[j] is the upstream gradient of forward
   * output j, of that output's kind, dtype, shape and (masked) mask. */
  int n_grad_out;
  const mt_tensor *const *grad_out;
} mt_call;

/* Returns MT_OK with outputs set, or a status with err filled (outputs the
 * kernel made before failing are its own to free). MT_NOT_SUPPORTED means
 * "this backend does not do this op/dtype/layout", reported apart from
 * failures. Kernels never print, exit or abort. */
typedef mt_status (*mt_kernel_fn)(mt_call *call, mt_error *err);

/* ---- the implementation table (plugin ABI) ------------------------------ */
/* The kernels of one profile other than torch (DESIGN.md "Profiles": the
 * golden cases of profile numpy_ma expect numpy.ma's rules): a table of the
 * same shape as mt_impl.kernels, used for the cases of that profile. */
typedef struct mt_profile_kernels {
  const char *profile;         /* a profile name: "numpy_ma" */
  uint32_t n_kernels;          /* slots in kernels[] */
  const mt_kernel_fn *kernels; /* indexed by mt_op id; NULL = NOT_SUPPORTED */
} mt_profile_kernels;

/* A plugin exports:  const mt_impl *mt_plugin_entry(uint32_t abi_version);
 * The runner reads only the fields that fit in struct_size and only the
 * kernel slots below n_kernels: an old plugin keeps working when ops are
 * added. kernels[id] == NULL means NOT_SUPPORTED. */
typedef struct mt_impl {
  uint32_t abi_version; /* MT_ABI_VERSION the plugin was built against */
  uint32_t struct_size; /* sizeof(mt_impl) as the plugin saw it */
  const char *name;
  /* Optional (NULL = every non-NULL kernel takes every input): quick query
   * whether op on these inputs is supported; 0 = NOT_SUPPORTED. */
  int (*supports)(mt_op op, const mt_tensor *const *in, int n_in);
  /* Optional: nonzero when the backend cannot run on this machine (no
   * device); fills why. The runner then reports SKIP. */
  int (*unavailable)(char *why, size_t why_len);
  uint32_t n_kernels;          /* slots in kernels[], normally MT_OP__END */
  const mt_kernel_fn *kernels; /* indexed by mt_op id: the torch profile's kernels */
  /* Optional, appended within ABI 1 (read only when struct_size covers
   * them): kernel tables for other profiles. A case of a profile the
   * implementation does not list is NOT_SUPPORTED. */
  uint32_t n_profiles;
  const mt_profile_kernels *profiles;
  /* Optional, appended within ABI 1 (golden format 3's gradient cases):
   * backward[id] computes the gradients of op id's inputs, torch profile.
   * The call holds the forward's inputs (in, n_in), kwargs and the
   * upstream gradients (grad_out, n_grad_out); the kernel sets n_out = n_in
   * and out[k] to the gradient of input k as torch makes it (its kind:
   * a MaskedTensor, dense, COO, CSR ...), or NULL where torch gives input k
   * none (not a floating tensor, a mask, not differentiable).
   * backward[id] == NULL (or id >= n_backward): NOT_SUPPORTED. */
  uint32_t n_backward;
  const mt_kernel_fn *backward;
} mt_impl;

typedef const mt_impl *(*mt_plugin_entry_fn)(uint32_t abi_version);
#define MT_PLUGIN_ENTRY "mt_plugin_entry"

#ifdef __cplusplus
}
#endif
#endif /* MT_MT_H */

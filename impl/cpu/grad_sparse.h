/* grad_sparse.h - the backward of plain sparse (COO, CSR, CSC, BSR, BSC)
 * calls and of torch.masked's functional ops (internal; grad_sparse.c,
 * grad_masked_fn.c; spec/SEMANTICS.md SPG-*, MFG-*).
 *
 * The gradients are computed densely in double (every input and upstream
 * gradient densified, unstored elements 0) and then laid out as torch 2.15
 * gives them: dense, or sparse over a pattern (the input's stored elements,
 * the upstream gradient's, none ...) in a template layout (the input's kind,
 * sparse_dim, dense_dim, blocksize), values rounded once to the input's
 * dtype. */
#ifndef MT_CPU_GRAD_SPARSE_H
#define MT_CPU_GRAD_SPARSE_H

#include "common/exec.h"
#include "cpu_util.h"

/* The ops whose backward slot the MaskedTensor kernels own (grad_unary.c,
 * grad_binary.c, grad_reduce.c, grad_structure.c): their kernel hands a call
 * without a masked input (mt__cpu_grad_sparse_takes) to
 * mt__cpu_grad_<op>_sparse. */
#define MT__GRAD_SPARSE_SHARED(X)                                                               \
  X(abs) X(add) X(angle) X(asin) X(asinh) X(atan) X(atanh) X(cat) X(ceil) X(clone)             \
  X(conj_physical) X(deg2rad) X(div) X(erf) X(erfinv) X(expm1) X(floor) X(frac) X(log1p)       \
  X(mul) X(nan_to_num) X(neg) X(positive) X(pow) X(rad2deg) X(round) X(sign) X(sin) X(sinh)    \
  X(sqrt) X(square) X(sub) X(sum) X(t) X(tan) X(tanh) X(to_dense) X(to_sparse)                 \
  X(to_sparse_csr) X(transpose) X(trunc) X(unsqueeze)

#define MT__X(op) mt_status mt__cpu_grad_##op##_sparse(mt_call *call, mt_error *err);
MT__GRAD_SPARSE_SHARED(MT__X)
#undef MT__X

/* 1 when no input of the call is a masked tensor: the call is a plain
 * (sparse or dense) one, for mt__cpu_grad_<op>_sparse. */
int mt__cpu_grad_sparse_takes(const mt_call *call);
/* The same by op id, for a family kernel that serves many ops, with its
 * compute on an exec: mt__grad_sparse_run (common/exec.h). */

/* ---- the dense engine, shared with grad_masked_fn.c ------------------------- */

#define MT__GS_MAX_IN 8

/* Where a sparse gradient's stored elements are. */
typedef enum {
  MT__GS_DENSE,    /* a dense gradient (no pattern) */
  MT__GS_IN,       /* input k's stored elements */
  MT__GS_GO,       /* upstream gradient 0's stored elements */
  MT__GS_NONE,     /* none: an empty sparse tensor */
  MT__GS_NONZERO,  /* the gradient's nonzero elements */
  MT__GS_PROD,     /* the pattern of a sparse product (mm of two sparse inputs) */
  MT__GS_MASK_LIKE /* torch.sparse.mm of two COO inputs: the product P's gradient
                      masked like input k (torch's sparse_mask_like_grad): P's
                      pattern, 0 where k stores nothing, when k is uncoalesced or
                      stores at least as many as P; else k's pattern */
} mt__gs_pattern;

typedef struct mt__gs_ctx {
  mt_call *call;
  mt_op op;
  const char *name;
  int n_in, n_go;
  const mt_tensor *in[MT__GS_MAX_IN];
  double *x[MT__GS_MAX_IN];   /* dense row-major copies of the inputs (NULL: none) */
  int64_t n[MT__GS_MAX_IN];   /* their numel */
  const mt_tensor *gt[MT_MAX_OUTPUTS];
  double *go[MT_MAX_OUTPUTS]; /* dense copies of the upstream gradients */
  double *g[MT__GS_MAX_IN];   /* dense gradient of input k; NULL = torch gives none */
  const mt_exec *ex;          /* where the gradients are computed (grad_sparse.c) */
} mt__gs_ctx;

/* Opens the call for a host plan computing on ex: kwargs checked against
 * op, inputs and upstream gradients validated and densified (a COO tensor's
 * duplicates summed by ex's coalesce). */
mt_status mt__gs_open_on(mt__gs_ctx *c, mt_call *call, mt_op op, const mt_exec *ex,
                         mt_error *err);
void mt__gs_close(mt__gs_ctx *c);
/* c->g[k] = a zero-filled gradient buffer of input k's numel. */
mt_status mt__gs_want(mt__gs_ctx *c, int k, mt_error *err);
/* SHAPE_MISMATCH unless upstream gradient 0 has n elements. */
mt_status mt__gs_go_numel(const mt__gs_ctx *c, int64_t n, mt_error *err);
/* 1 when input k is a floating tensor (not a Python number). */
int mt__gs_float_input(const mt__gs_ctx *c, int k);
/* pat[i] = 1 for each element of t that is stored (every element of a
 * dense tensor). */
void mt__gs_stored(const mt_tensor *t, uint8_t *pat);
/* Hands out every c->g[k] laid out as pattern[k] says (in input k's
 * template), n_out = n_in; frees nothing of c. */
mt_status mt__gs_emit(mt__gs_ctx *c, const mt__gs_pattern *pattern, mt_error *err);

/* Dense index helpers: the element count of dims [a, b) of shape. */
static inline int64_t mt__gs_span(const int64_t *shape, int a, int b) {
  int64_t n = 1;
  for (int d = a; d < b; d++) n *= shape[d];
  return n;
}

/* The element of a tensor of shape (n, s) that element i of a tensor of
 * shape (nd, sd) reads when s broadcasts to sd (right-aligned; size-1 dims
 * repeat). */
static inline int64_t mt__gs_bcast_src(int64_t i, int nd, const int64_t *sd, int n,
                                       const int64_t *s) {
  int64_t src = 0, stride = 1;
  for (int d = nd - 1, e = n - 1; d >= 0; d--, e--) {
    int64_t c = i % sd[d];
    i /= sd[d];
    if (e < 0) continue;
    if (s[e] != 1) src += c * stride;
    stride *= s[e];
  }
  return src;
}

/* The element of the reduced tensor (reduced dims red[], keepdim or not)
 * that element i of a tensor of shape (n, s) falls in. */
static inline int64_t mt__gs_reduced_index(int64_t i, int n, const int64_t *s, const int *red) {
  int64_t out = 0, stride = 1;
  for (int d = n - 1; d >= 0; d--) {
    int64_t c = i % s[d];
    i /= s[d];
    if (red[d]) continue;
    out += c * stride;
    stride *= s[d];
  }
  return out;
}

#endif /* MT_CPU_GRAD_SPARSE_H */

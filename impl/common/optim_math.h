/* optim_math.h - the per-element math of the optim family (the three
 * Adagrad paths, ADA-1 .. ADA-8), shared by the CPU reference
 * (impl/cpu/optim.c, which plans each call: hyper-parameters, torch's
 * checks and messages, coalescing, which COO entries are kept, outputs)
 * and the CUDA kernels (impl/cuda/optim.cu): one element's update of each
 * path, in torch's order.
 *
 * Every operation is done in the tensor dtype (float for float32) in
 * torch's order. Where torch's kernels differ in rounding, so do these:
 * torch's dense add(x, alpha=a) is a fused multiply-add (fmaf), its dense +
 * sparse add is a separate multiply and add, and addcdiv computes (value *
 * t1) / t2. float16/bfloat16 (ADA-7) run on float workspaces (the host
 * converts half to float exactly and stores back values that already are
 * half) with every op's result rounded to the dtype (RND). The float
 * variants call fmaf/sqrtf, the double ones fma/sqrt, explicitly: the
 * CPU's optim.c once resolved them through <tgmath.h>. */
#ifndef MT_OPTIM_MATH_H
#define MT_OPTIM_MATH_H

#include "common/mt_hd.h"

/* The paths, planned on the host. */
typedef enum {
  ADA_DENSE,        /* ADA-1, dense grad: one thread per element */
  ADA_COO,          /* ADA-2 / ADA-3 over a coalesced COO grad: one per kept (entry, element) */
  ADA_MASKED_DENSE, /* ADA-3, dense-storage masked grad: one per element */
  ADA_INT_DENSE,    /* ADA-7, the masked path of an integer/bool param, dense storage */
  ADA_INT_COO       /* ... and over COO entries (no dense dims: row 1) */
} mt_ada_path;

/* The float paths' element type and rounding (the loops of optim.c). */
typedef enum { ADA_FLOAT, ADA_DOUBLE, ADA_HALF, ADA_BF16 } mt_ada_kind;

/* One call, planned on the host (passed to a kernel by value). */
typedef struct mt_ada_par {
  mt_ada_path path;
  mt_ada_kind kind; /* the float paths */
  mt_dtype dt;      /* the integer paths: param's (and grad's) dtype */
  mt_dtype sdt;     /* ... state_sum's output dtype (int64 for bool) */
  double nclr;      /* -clr: cast to the element type where it is used */
  double wd, eps;
  int use_wd, maximize;
  int64_t row; /* ADA_COO: elements per COO entry */
  /* the COO paths: param's elements and the grad's entries; a thread whose
   * entry's indices fall outside them writes nothing (the arena's poison
   * then shows), so no index gone wrong writes outside a buffer */
  int64_t n, nnz;
} mt_ada_par;

/* The buffers of one call (host memory; common/exec.h's adagrad hook). The
 * float paths update param and state in place; the integer paths convert
 * param_in/state_in into them first (float32 and sdt). */
typedef struct mt_ada_bufs {
  void *param, *state, *std;
  const void *param_in, *state_in; /* integer paths only */
  const void *grad;                /* dense: n elements; COO: ng values */
  const uint8_t *mask;             /* the dense-storage paths: n */
  const int64_t *lin;              /* the COO paths: each kept entry's dense linear index */
  const int64_t *src;              /* ... and its entry in grad (NULL: the same) */
  int64_t n;                       /* param elements */
  int64_t ng;                      /* the COO paths: grad values */
  int64_t nu;                      /* the COO paths: kept entries (std holds nu * row) */
} mt_ada_bufs;

/* ---- the float paths ------------------------------------------------------ */
/* float16 (ADA-7): torch computes each tensor op of a half tensor in float
 * and rounds its result to half, so the half loops run in float with a
 * rounding after every op (the float/double loops round nothing extra). */
#define MT__ADA_ID(x) (x)
MT_HD float mt__ada_half(float x) {
  return (float)mt_hd_round(MT_float16, (double)x);
}
/* bfloat16 likewise (torch's opmath for it is float too) */
MT_HD float mt__ada_bf16(float x) {
  return (float)mt_hd_round(MT_bfloat16, (double)x);
}

/* T is float or double; p/s are the (contiguous) output copies of param
 * and state_sum, updated in place. nclr = (T)(-clr), as torch casts
 * alpha/value scalars to the tensor dtype. */

/* ADA-1, torch's _single_tensor_adagrad, dense branch: element i. */
#define MT__ADA_DENSE(T, SUF, RND, SQRT, FMA)                                                      \
  MT_HD void mt_ada_dense_##SUF(int64_t i, T *p, T *s, T *sd, const T *g, T nclr, int use_wd,      \
                                T wd, T eps, int maximize) {                                       \
    /* grad = -grad if maximize */                                                                 \
    T gi = maximize ? -g[i] : g[i];                                                                \
    /* grad = grad.add(param, alpha=weight_decay): a fused multiply-add */                         \
    if (use_wd) gi = RND(FMA(wd, p[i], gi));                                                       \
    /* state_sum.addcmul_(grad, grad, value=1) */                                                  \
    s[i] = RND(s[i] + gi * gi);                                                                    \
    /* std = state_sum.sqrt().add_(eps) */                                                         \
    T std = RND(RND(SQRT(s[i])) + eps);                                                            \
    /* param.addcdiv_(grad, std, value=-clr): self + value * t1 / t2 */                            \
    p[i] = RND(p[i] + nclr * gi / std);                                                            \
    sd[i] = std;                                                                                   \
  }
MT__ADA_DENSE(float, float, MT__ADA_ID, sqrtf, fmaf)
MT__ADA_DENSE(double, double, MT__ADA_ID, sqrt, fma)
MT__ADA_DENSE(float, half, mt__ada_half, sqrtf, fmaf)
MT__ADA_DENSE(float, bf16, mt__ada_bf16, sqrtf, fmaf)

/* ADA-2 / ADA-3 over a coalesced COO gradient: element e of the kept
 * entries' std (entry t = e / row of the kept ones, at dense offset
 * lin[t]*row + j, grad entry src[t], or t when src is NULL). The coalesced
 * gradient's indices are unique, so no two elements update one param
 * element. The sparse and the tutorial's COO forms round alike: dense +
 * sparse adds are a multiply then an add. */
#define MT__ADA_COO(T, SUF, RND, SQRT)                                                             \
  MT_HD void mt_ada_coo_##SUF(int64_t e, int64_t row, int64_t n, int64_t nnz, const T *v,          \
                              const int64_t *lin, const int64_t *src, T *p, T *s, T *sv, T nclr,   \
                              T eps, int maximize) {                                               \
    int64_t t = e / row, j = e % row, k = src ? src[t] : t;                                        \
    int64_t i = lin[t] * row + j;                                                                  \
    if (k < 0 || k >= nnz || i < 0 || i >= n) return;                                              \
    /* grad = -grad if maximize */                                                                 \
    T gi = maximize ? -v[k * row + j] : v[k * row + j];                                            \
    /* state_sum.add_(_make_sparse(grad, grad_indices, grad_values.pow(2))) */                     \
    s[i] = RND(s[i] + RND(gi * gi));                                                               \
    /* std_values = state_sum.sparse_mask(grad)._values().sqrt_().add_(eps) */                     \
    T std = RND(RND(SQRT(s[i])) + eps);                                                            \
    /* param.add_(_make_sparse(grad, grad_indices, grad_values / std_values),                      \
     *            alpha=-clr) */                                                                   \
    p[i] = RND(p[i] + nclr * RND(gi / std));                                                       \
    sv[e] = std;                                                                                   \
  }
MT__ADA_COO(float, float, MT__ADA_ID, sqrtf)
MT__ADA_COO(double, double, MT__ADA_ID, sqrt)
MT__ADA_COO(float, half, mt__ada_half, sqrtf)
MT__ADA_COO(float, bf16, mt__ada_bf16, sqrtf)

/* ADA-3 with a dense-storage masked gradient, as the generator's dense form
 * of the tutorial: masked-out grad data is poison and never read. */
#define MT__ADA_MASKED_DENSE(T, SUF, RND, SQRT, FMA)                                               \
  MT_HD void mt_ada_masked_dense_##SUF(int64_t i, T *p, T *s, T *sd, const T *g,                   \
                                       const uint8_t *mask, T nclr, T eps, int maximize) {         \
    T gi = 0;                                                                                      \
    if (mask[i]) {                                                                                 \
      /* masked_grad = -grad if maximize */                                                        \
      gi = maximize ? -g[i] : g[i];                                                                \
      /* state_sum = state_sum + masked_grad.pow(2).to_tensor(0) */                                \
      s[i] = RND(s[i] + RND(gi * gi));                                                             \
    }                                                                                              \
    /* std = masked_tensor(state_sum, mask).sqrt().add(eps) */                                     \
    T std = RND(RND(SQRT(s[i])) + eps);                                                            \
    /* param = param.add((masked_grad / std).to_tensor(0), alpha=-clr): an fma */                  \
    if (mask[i]) p[i] = RND(FMA(nclr, RND(gi / std), p[i]));                                       \
    sd[i] = std;                                                                                   \
  }
MT__ADA_MASKED_DENSE(float, float, MT__ADA_ID, sqrtf, fmaf)
MT__ADA_MASKED_DENSE(double, double, MT__ADA_ID, sqrt, fma)
MT__ADA_MASKED_DENSE(float, half, mt__ada_half, sqrtf, fmaf)

/* ---- ADA-7: the masked path of an integer or bool param -------------------
 * In torch.masked's arithmetic: state_sum + grad.pow(2) stays integer
 * (wrapping; bool: bool.pow(2) is int64), std = state_sum.sqrt().add(eps)
 * is float32 (the integer converted to float), masked_grad / std is
 * float32, so param comes back float32: p + (-clr) * x, a multiply then an
 * add for the COO forms (dense + sparse), an fma for dense storage (as the
 * float32 loops). */

/* -x of an integer grad, wrapping (torch's negation of int64's minimum) */
MT_HD int64_t mt__ada_ineg(int64_t x) {
  return (int64_t)(0 - (uint64_t)x);
}

/* The outputs' starting values: param converted to float32, state_sum to
 * its output dtype. */
MT_HD void mt_ada_int_init(const mt_ada_par *q, int64_t i, const void *pin, const void *sin,
                           float *p, void *s) {
  p[i] = (float)mt_hd_ldi(pin, q->dt, i);
  mt_hd_sti(s, q->sdt, i, mt_hd_ldi(sin, q->dt, i));
}

/* Dense storage, element i (its init included). */
MT_HD void mt_ada_int_dense(const mt_ada_par *q, int64_t i, const void *pin, const void *sin,
                            const void *g, const uint8_t *mask, float *p, void *s, float *sd) {
  float nclr = (float)q->nclr, eps = (float)q->eps;
  int64_t gi = 0;
  mt_ada_int_init(q, i, pin, sin, p, s);
  if (mask[i]) {
    gi = mt_hd_ldi(g, q->dt, i);
    if (q->maximize) gi = mt__ada_ineg(gi);
    /* state_sum = state_sum + masked_grad.pow(2).to_tensor(0) */
    mt_hd_sti(s, q->sdt, i,
              (int64_t)((uint64_t)mt_hd_ldi(s, q->sdt, i) + (uint64_t)gi * (uint64_t)gi));
  }
  /* std = masked_tensor(state_sum, mask).sqrt().add(eps) */
  float std = sqrtf((float)mt_hd_ldi(s, q->sdt, i)) + eps;
  /* param = param.add((masked_grad / std).to_tensor(0), alpha=-clr): an fma */
  if (mask[i]) p[i] = fmaf(nclr, (float)gi / std, p[i]);
  sd[i] = std;
}

/* COO storage, kept entry t (after mt_ada_int_init of every element): at
 * dense offset lin[t], grad value src[t]. */
MT_HD void mt_ada_int_coo(const mt_ada_par *q, int64_t t, const int64_t *lin, const int64_t *src,
                          const void *g, float *p, void *s, float *sv) {
  float nclr = (float)q->nclr, eps = (float)q->eps;
  int64_t i = lin[t], k = src ? src[t] : t;
  if (k < 0 || k >= q->nnz || i < 0 || i >= q->n) return;
  int64_t gi = mt_hd_ldi(g, q->dt, k);
  if (q->maximize) gi = mt__ada_ineg(gi);
  /* state_sum = state_sum + masked_grad.pow(2).get_data() */
  int64_t si = (int64_t)((uint64_t)mt_hd_ldi(s, q->sdt, i) + (uint64_t)gi * (uint64_t)gi);
  mt_hd_sti(s, q->sdt, i, si);
  si = mt_hd_ldi(s, q->sdt, i); /* wrapped */
  /* std = masked_tensor(state_sum.to_sparse(), mask).sqrt().add(eps) */
  float std = sqrtf((float)si) + eps;
  /* param.add((masked_grad / std).get_data(), alpha=-clr) */
  float x = (float)gi / std, u = nclr * x;
  p[i] = p[i] + u;
  sv[t] = std;
}

/* ---- one thread's work on any path ---------------------------------------- */

/* Element i (dense paths) or e (ADA_COO: of nu * row; ADA_INT_COO: entry)
 * of the call; the integer COO path's init is mt_ada_int_init, a launch
 * of its own before this one. */
MT_HD void mt_ada_elem(const mt_ada_par *q, void *param, void *state, void *std,
                       const void *param_in, const void *state_in, const void *grad,
                       const uint8_t *mask, const int64_t *lin, const int64_t *src, int64_t i) {
  switch (q->path) {
  case ADA_DENSE:
    switch (q->kind) {
    case ADA_FLOAT:
      mt_ada_dense_float(i, (float *)param, (float *)state, (float *)std, (const float *)grad,
                         (float)q->nclr, q->use_wd, (float)q->wd, (float)q->eps, q->maximize);
      break;
    case ADA_DOUBLE:
      mt_ada_dense_double(i, (double *)param, (double *)state, (double *)std, (const double *)grad,
                          q->nclr, q->use_wd, q->wd, q->eps, q->maximize);
      break;
    case ADA_HALF:
      mt_ada_dense_half(i, (float *)param, (float *)state, (float *)std, (const float *)grad,
                        (float)q->nclr, q->use_wd, (float)q->wd, (float)q->eps, q->maximize);
      break;
    case ADA_BF16:
      mt_ada_dense_bf16(i, (float *)param, (float *)state, (float *)std, (const float *)grad,
                        (float)q->nclr, q->use_wd, (float)q->wd, (float)q->eps, q->maximize);
      break;
    }
    break;
  case ADA_COO:
    switch (q->kind) {
    case ADA_FLOAT:
      mt_ada_coo_float(i, q->row, q->n, q->nnz, (const float *)grad, lin, src, (float *)param,
                       (float *)state, (float *)std, (float)q->nclr, (float)q->eps, q->maximize);
      break;
    case ADA_DOUBLE:
      mt_ada_coo_double(i, q->row, q->n, q->nnz, (const double *)grad, lin, src, (double *)param,
                        (double *)state, (double *)std, q->nclr, q->eps, q->maximize);
      break;
    case ADA_HALF:
      mt_ada_coo_half(i, q->row, q->n, q->nnz, (const float *)grad, lin, src, (float *)param,
                      (float *)state, (float *)std, (float)q->nclr, (float)q->eps, q->maximize);
      break;
    case ADA_BF16:
      mt_ada_coo_bf16(i, q->row, q->n, q->nnz, (const float *)grad, lin, src, (float *)param,
                      (float *)state, (float *)std, (float)q->nclr, (float)q->eps, q->maximize);
      break;
    }
    break;
  case ADA_MASKED_DENSE:
    switch (q->kind) {
    case ADA_DOUBLE:
      mt_ada_masked_dense_double(i, (double *)param, (double *)state, (double *)std,
                                 (const double *)grad, mask, q->nclr, q->eps, q->maximize);
      break;
    case ADA_HALF:
      mt_ada_masked_dense_half(i, (float *)param, (float *)state, (float *)std, (const float *)grad,
                               mask, (float)q->nclr, (float)q->eps, q->maximize);
      break;
    default: /* float (MaskedTensor refuses bfloat16: never planned) */
      mt_ada_masked_dense_float(i, (float *)param, (float *)state, (float *)std,
                                (const float *)grad, mask, (float)q->nclr, (float)q->eps,
                                q->maximize);
      break;
    }
    break;
  case ADA_INT_DENSE:
    mt_ada_int_dense(q, i, param_in, state_in, grad, mask, (float *)param, state, (float *)std);
    break;
  case ADA_INT_COO:
    mt_ada_int_coo(q, i, lin, src, grad, (float *)param, state, (float *)std);
    break;
  }
}

/* Threads of the update launch: elements (dense paths), kept elements
 * (ADA_COO) or kept entries (ADA_INT_COO). */
MT_HD int64_t mt_ada_threads(const mt_ada_par *q, const mt_ada_bufs *b) {
  return q->path == ADA_COO ? b->nu * q->row : q->path == ADA_INT_COO ? b->nu : b->n;
}

/* The float paths' element size (every float buffer of the call). */
MT_HD size_t mt_ada_elem_size(const mt_ada_par *q) {
  return q->kind == ADA_DOUBLE ? sizeof(double) : sizeof(float);
}

#endif /* MT_OPTIM_MATH_H */

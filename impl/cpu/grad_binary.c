/* grad_binary.c - CPU backward kernels of the MaskedTensor binary ops
 * (ops.def family binary; golden format 3's gradient cases, spec/SEMANTICS.md
 * GRAD-*; mt_impl.backward). The engine (grad_ew.c) does the masking, the
 * storages and the broadcasting (a plain operand's gradient is a
 * MaskedTensor summed over the broadcast dims, GRAD-4); this file holds
 * torch's derivative formulas (tools/autograd/derivatives.yaml), in double,
 * rounded once to each operand's dtype:
 *
 *   add        (g, g)                  sub  (g, -g)
 *   mul        (g b, g a)              div  (g / b, -g ((a / b) / b))
 *   logaddexp  (g / (1 + e^(b-a)), g / (1 + e^(a-b)))
 *   fmod, remainder with a number b: g (b gets no gradient)
 *
 * A Python number operand gets no gradient. GRAD-5, torch's refusals of the
 * backward (the forward succeeds), whatever the values:
 *   - the derivative calls an aten op MaskedTensor has no handler for
 *     (atan2: masked_fill; fmax/fmin: logical_or_; maximum/minimum/
 *     nextafter: fill_ / a recursion; logaddexp2: a unary op with a tensor
 *     argument): LAYOUT_MISMATCH;
 *   - floor_divide has no derivative at all; fmod/remainder by a tensor
 *     call div with rounding_mode=, a kwarg MaskedTensor's binary ops
 *     refuse: INVALID_ARGUMENT;
 *   - mul/div multiply g by a masked operand of fewer dims than g (a
 *     broadcast one): MaskedTensor's mask check compares dims, MASK_MISMATCH;
 *   - sub/div/logaddexp/atan2 of two tensors apply a unary op (neg, exp,
 *     reciprocal) to CSR storage, which torch rebuilds without its size:
 *     when the last column stores nothing the sizes differ, INVALID_ARGUMENT
 *     (SP-1, as the forward unary ops). */
#include "common/grad_ew_ops.h"
#include "grad_ew.h"

/* ---- the table ------------------------------------------------------------------ */

enum {
  GB_CSR_UNARY = 1,   /* two tensors: the derivative runs a unary op on CSR storage */
  GB_MASKED_MUL = 2,  /* g times a masked operand (mul: either, div: the divisor) */
  GB_MASKED_DIV = 4,
  GB_NUMBER_ONLY = 8, /* fmod/remainder: differentiable by a number only */
};

#define NO_HANDLER(aten) \
  "TypeError: Multiple dispatch failed for 'torch._ops.aten." aten "'; all __torch_dispatch__ " \
  "handlers returned NotImplemented"
/* X(base, derivative, flags, refusal status, torch's exception) */
#define GB_BASES(X)                                                                           \
  X(add, EW_add, 0, MT_OK, NULL)                                                               \
  X(sub, EW_sub, GB_CSR_UNARY, MT_OK, NULL)                                                    \
  X(mul, EW_mul, GB_MASKED_MUL, MT_OK, NULL)                                                   \
  X(div, EW_div, GB_CSR_UNARY | GB_MASKED_DIV, MT_OK, NULL)                                    \
  X(logaddexp, EW_logaddexp, GB_CSR_UNARY, MT_OK, NULL)                                        \
  X(fmod, EW_first, GB_NUMBER_ONLY, MT_OK, NULL)                                               \
  X(remainder, EW_first, GB_NUMBER_ONLY, MT_OK, NULL)                                          \
  X(atan2, EW_NONE, GB_CSR_UNARY, MT_LAYOUT_MISMATCH, NO_HANDLER("masked_fill.Scalar"))          \
  X(floor_divide, EW_NONE, 0, MT_INVALID_ARGUMENT,                                               \
    "RuntimeError: derivative for aten::floor_divide is not implemented")                     \
  X(fmax, EW_NONE, 0, MT_LAYOUT_MISMATCH, NO_HANDLER("logical_or_.default"))                     \
  X(fmin, EW_NONE, 0, MT_LAYOUT_MISMATCH, NO_HANDLER("logical_or_.default"))                     \
  X(logaddexp2, EW_NONE, 0, MT_LAYOUT_MISMATCH,                                                  \
    "TypeError: MaskedTensor unary ops do not support additional Tensor arguments")           \
  X(maximum, EW_NONE, 0, MT_LAYOUT_MISMATCH, "RecursionError: maximum recursion depth exceeded "  \
    "(dense storage); NotImplementedError: Could not run 'aten::fill_.Scalar' with arguments " \
    "from the 'SparseCPU' backend (COO storage)")                                             \
  X(minimum, EW_NONE, 0, MT_LAYOUT_MISMATCH, "RecursionError: maximum recursion depth exceeded "  \
    "(dense storage); NotImplementedError: Could not run 'aten::fill_.Scalar' with arguments " \
    "from the 'SparseCPU' backend (COO storage)")                                             \
  X(nextafter, EW_NONE, 0, MT_LAYOUT_MISMATCH, "RecursionError: maximum recursion depth "         \
    "exceeded (dense storage); NotImplementedError: Could not run 'aten::fill_.Scalar' with "  \
    "arguments from the 'SparseCPU' backend (COO storage)")

typedef enum {
#define GB_X(base, d, flags, st, why) GB_##base,
  GB_BASES(GB_X)
#undef GB_X
  GB__COUNT
} gb_base;

typedef struct {
  mt_ew_code d;
  unsigned flags;
  mt_status refuse;
  const char *why;
} gb_row;

static const gb_row ROWS[GB__COUNT] = {
#define GB_X(base, d, flags, st, why) [GB_##base] = {d, flags, st, why},
    GB_BASES(GB_X)
#undef GB_X
};

/* ---- the kernel ----------------------------------------------------------------- */

/* MASK_MISMATCH when masked input k has fewer dims than g: the derivative
 * multiplies (or divides) g by it and MaskedTensor's mask check wants equal
 * dims (broadcasting values would match). */
static mt_status masks_match(const mt_call *call, int k, const mt_tensor *g, const char *name,
                             mt_error *err) {
  const mt_tensor *t = call->in[k];
  if (t->kind != MT_KIND_MASKED || t->ndim == g->ndim) return MT_OK;
  return mt_err(err, MT_MASK_MISMATCH, "%s backward: the derivative combines the %d-d upstream "
                "gradient with the %d-d masked inputs/%d: torch refuses it (ValueError: Input "
                "masks must match. If you need support for this, please open an issue on "
                "Github.)", name, g->ndim, t->ndim, k);
}

static mt_status grad_binary(mt_call *call, mt_op op, gb_base base, const mt_exec *ex,
                             mt_error *err) {
  /* plain sparse operands (grad_sparse.h5): the sparse engine */
  if (mt__cpu_grad_sparse_takes(call)) {
    return mt__grad_sparse_run(call, op, ex, err);
  }
  const gb_row *r = &ROWS[base];
  const char *name = mt_op_name(op);
  const mt_tensor *a, *b, *g;
  mt_status st;

  mt__cpu_begin(call);
  if ((st = mt__kw_check(op, call->kw, err)) != MT_OK) return st;
  if ((st = mt__cpu_input(call, 0, name, &a, err)) != MT_OK) return st;
  if ((st = mt__cpu_input(call, 1, name, &b, err)) != MT_OK) return st;
  if ((st = mt__grad_out(call, 0, name, &g, err)) != MT_OK) return st;
  if (g->kind != MT_KIND_MASKED)
    return mt_err(err, MT_INVALID_ARGUMENT, "%s backward: grad_outputs/0 is %s; the result of a "
                  "MaskedTensor op, and so its upstream gradient, is masked", name,
                  mt_kind_name(g->kind));
  int two_tensors = a->kind != MT_KIND_SCALAR && b->kind != MT_KIND_SCALAR;
  if ((r->flags & GB_NUMBER_ONLY) && two_tensors)
    return mt_err(err, MT_INVALID_ARGUMENT, "%s backward: by a tensor, torch's derivative calls "
                  "div with rounding_mode=, a kwarg MaskedTensor's binary ops refuse "
                  "(ValueError: len(kwargs) must equal 0)", name);
  if ((r->flags & GB_CSR_UNARY) && two_tensors && g->data->kind == MT_KIND_CSR) {
    char what[64];
    snprintf(what, sizeof what, "%s backward", name);
    if ((st = mt__cpu_csr_inferred_cols(g->data, what, err)) != MT_OK) return st;
  }
  if (r->refuse != MT_OK)
    return mt_err(err, r->refuse, "%s backward: torch refuses it on MaskedTensors (%s)", name,
                  r->why);
  if ((r->flags & GB_MASKED_MUL) && ((st = masks_match(call, 0, g, name, err)) != MT_OK ||
                                     (st = masks_match(call, 1, g, name, err)) != MT_OK))
    return st;
  if ((r->flags & GB_MASKED_DIV) && (st = masks_match(call, 1, g, name, err)) != MT_OK) return st;
  mt__ew_spec s = {name, 2, r->d};
  return mt__cpu_grad_ew(call, &s, ex, err);
}

/* ---- the kernels: ops.def's binary ops with gradient cases (aliases share the
 * base's formula; no in-place `<op>_`: torch refuses in place on a leaf that
 * requires grad; none for the comparison and bitwise ops: no floating result) --- */

#define GB_KERNEL(op, base)                                            \
  mt_status mt_cpu_grad_##op(mt_call *call, mt_error *err) {           \
    return grad_binary(call, MT_OP_##op, GB_##base, &mt_cpu_exec, err); \
  }
GB_OPS(GB_KERNEL)
#undef GB_KERNEL

mt_status mt__grad_binary_run(mt_call *call, mt_op op, const mt_exec *ex, mt_error *err) {
  switch (op) {
#define GB_CASE(o, base) \
  case MT_OP_##o: return grad_binary(call, op, GB_##base, ex, err);
    GB_OPS(GB_CASE)
#undef GB_CASE
  default: return mt_err(err, MT_NOT_SUPPORTED, "%s: no binary backward", mt_op_name(op));
  }
}

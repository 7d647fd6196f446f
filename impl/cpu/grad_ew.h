/* grad_ew.h - the elementwise backward engine of the MaskedTensor unary and
 * binary ops (grad_unary.c, grad_binary.c; internal).
 *
 * torch differentiates a MaskedTensor op by running its derivative formula
 * on MaskedTensors, so every gradient is a MaskedTensor (GRAD-1), also for
 * a plain tensor operand (GRAD-4), and autograd's sum_to_size over the
 * broadcast dims is a masked sum: only specified upstream-gradient
 * elements add up, and the gradient's mask is the upstream gradient's mask
 * OR-reduced onto the operand's shape (the operand's own mask where the
 * shapes agree). This engine does exactly that, once for every op: per
 * specified element of the upstream gradient g it asks the op's derivative
 * for the partials of every operand, sums them into the operand's shape in
 * double and rounds once to the operand's dtype.
 *
 * The gradient of operand k has operand k's storage: dense-storage masked
 * for a dense or masked-dense operand, COO/CSR-storage masked for a COO/CSR
 * operand (GRAD-8; stored where g's mask stores, COO coalesced). A Python
 * number operand gets none (out[k] = NULL). Masked-out data of the inputs
 * and of g is never read (MASK-9). */
#ifndef MT_GRAD_EW_H
#define MT_GRAD_EW_H

#include "common/exec.h"
#include "common/grad_ew_math.h"
#include "grad_util.h"

typedef struct {
  const char *op;  /* torch's op name, for messages */
  int n_in;        /* operands: the call's first n_in inputs (1..MT__EW_MAX_IN) */
  mt_ew_code d;    /* the derivative (common/grad_ew_math.h; pow's exponent is an operand) */
} mt__ew_spec;

/* The backward of an elementwise op: call->out[k] = the gradient of input
 * k (NULL for number inputs), n_out = n_in. Upstream gradient 0 must be a
 * masked tensor of the forward's result shape. NOT_SUPPORTED for storages
 * other than dense, COO and the compressed ones. */
mt_status mt__cpu_grad_ew(mt_call *call, const mt__ew_spec *s, const mt_exec *ex, mt_error *err);


#endif /* MT_GRAD_EW_H */

"""Family grad_masked_fn: gradients of torch.masked's functional ops
(torch/masked/_ops.py) on a plain tensor and a bool mask (golden format 3,
mtgen/grad.py; spec/SEMANTICS.md MFG-*), derived from family masked_fn's
forward cases with mtgen.grad.grad_case: the same inputs (the stored input
holds the op's poison under the mask, masked_fn.POISON), kwargs and call.

The floating inputs are leaves (input; logaddexp's input and other); the
bool masks get no gradient. What torch 2.15 does (checked on every case
below by poison_invariant, and over all of masked_fn's float32/float64
cases when this family was written):
- MFG-1: a dense input's gradient is a dense tensor of its shape and dtype
  (also under dtype=: the gradient takes the input's dtype); a CSR input's
  (masked.amax, amin, mean) is a CSR tensor of the input's structure.
  torch refuses the backward of masked.sum and masked.prod of a CSR input
  ("derivative for aten::_sparse_csr_sum is not implemented": error cases,
  LAYOUT_MISMATCH, MFG-4); masked.sum/prod/amax/amin of a COO input return
  a result that does not require grad (the graph is cut: no case).
- MFG-2: at masked-out positions the gradient is +0.0 for every op,
  whatever the input holds there, and the specified positions' gradient
  does not depend on masked-out data either (the family checks each case:
  the same gradients with 0, 7 and NaN under the mask). A CSR input's
  gradient stores +0.0 at its stored masked-out entries. Except masked.var
  and masked.std: NaN at the masked-out positions of a slice whose result
  is not finite (fully masked, no more specified elements than correction,
  a NaN or infinite specified element), and:
- MFG-3: masked.var and masked.std read masked-out data in their backward:
  it multiplies the masked-out deviations (input - mean) by a zero
  upstream gradient, so a NaN or an infinity under the mask makes the
  gradient NaN at that position and, through the mean, at every specified
  position of its slice (a finite value under the mask changes nothing).
  Their cases here hold a finite poison (+-1e30 where masked_fn stores NaN
  or +-inf): the golden expects what torch gives for finite masked-out
  data; the NaN leak is torch's, not a rule.
- MFG-4: torch's refusals of a backward (error cases).
- GRAD-9: float16 and bfloat16 dense cases (HALF_PER_OP per op and dtype)
  keep the input's dtype; tolerance measured per case
  (mtgen.grad.half_tolerance); masked.var/std's finite poison is the
  dtype's largest finite value where 1e30 is not finite (float16: 65504).
- masked.argmin/argmax (integer results) are not
  differentiable: no case (spec/no-gradient-sparse.tsv).
"""
import collections
import dataclasses
import math
import warnings

import torch

from ..grad import backward, grad_case, neg_zero_twins
from .. import model
from ..model import Surprise, case_rng, check_ids
from . import masked_fn
from .grad_sparse import error_class  # torch's backward refusals: LAYOUT_MISMATCH

FLOATS = ("f32", "f64")
HALF, HALF_PER_OP = ("f16", "bf16"), 2  # half-precision cases per op and dtype (dense)
PER_OP = 5  # dense-input cases per op; plus up to 2 on a CSR input
FINITE_POISON = 1e30  # var/std: the magnitude of masked_fn's poison, finite (MFG-3)
LEAKY = {"masked_var", "masked_std"}  # torch's backward reads masked-out data (MFG-2)


def masks_of(op, ins):
    """[(input index, bool mask broadcast to it)] of a dense case."""
    pairs = [(0, 2), (1, 3)] if op == "masked_logaddexp" else [(0, 1)]
    out = []
    for i, mi in pairs:
        x = ins[i]
        m = ins[mi] if len(ins) > mi else None
        if not isinstance(x, torch.Tensor) or x.layout != torch.strided or \
                not isinstance(m, torch.Tensor) or m.layout != torch.strided:
            continue
        out.append((i, torch.broadcast_to(m, x.shape).to(torch.bool)))
    return out


def refill(op, ins, value):
    """ins with every masked-out element of the masked inputs set to value."""
    ins = list(ins)
    for i, m in masks_of(op, ins):
        if math.isnan(value) and not ins[i].is_floating_point():
            continue  # an integer operand holds no NaN
        x = ins[i].clone()
        x[~m] = value
        ins[i] = x
    return ins


def finite_poison(build, op):
    """build with a NaN or infinite masked-out value replaced by +-1e30 (the
    sign of an infinity kept; float32 holds 1e30)."""
    def b(g):
        ins = build(g)
        for i, m in masks_of(op, ins):
            x = ins[i].clone()
            bad = ~m & ~torch.isfinite(x)
            big = min(FINITE_POISON, torch.finfo(x.dtype).max)  # float16: 65504
            x[bad] = torch.where(x[bad] < 0, -big, big).to(x.dtype)
            ins[i] = x
        return ins
    return b


def _same(a, b):
    return a.shape == b.shape and bool(((a == b) | (torch.isnan(a) & torch.isnan(b))).all())


def grads_of(d, ins):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return backward(d, ins)[3]


def poison_invariant(d):
    """Whether torch's gradients of d (stored inputs) are those of the same
    inputs with 0, 7 and (but for LEAKY ops) NaN under every mask, and +0
    at every masked-out position (MFG-2; LEAKY ops: +0 or NaN)."""
    ins = d.build(case_rng(d.id))
    ref = grads_of(d, ins)
    for i, m in masks_of(d.op, ins):
        if ref[i] is None and not ins[i].is_floating_point():
            continue  # an integer operand (logaddexp's other): no gradient
        if ref[i] is None:
            return False
        out = ref[i][~m]
        zero = (out == 0) & ~torch.signbit(out)
        if d.op in LEAKY:  # a fully masked slice: NaN (its variance is 0/0)
            zero |= torch.isnan(out)
        if not bool(zero.all()):
            return False
    for value in (0.0, 7.0) + (() if d.op in LEAKY else (math.nan,)):
        got = grads_of(d, refill(d.op, ins, value))
        if not all((a is None) == (b is None) and (a is None or _same(a, b))
                   for a, b in zip(ref, got)):
            return False
    return True


def derive(c):
    """The backward case of masked_fn case c, or None (no gradient)."""
    if c.op in LEAKY:
        c = dataclasses.replace(c, build=finite_poison(c.build, c.op))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        d = grad_case(c, rules=("MFG-1", "MFG-2") + (("MFG-3",) if c.op in LEAKY else ()),
                      classify=error_class)
    if d is None:
        return None
    if d.error_class is not None:
        d.rules = ("MFG-1", "MFG-4")
        return d
    if all(x is None for x in grads_of(d, d.build(case_rng(d.id)))):
        return None  # masked.norm with ord=0: a zero derivative, left undefined
    return d


def _spread(items, k):
    if len(items) <= k:
        return list(items)
    if k <= 1:
        return list(items[:k])
    return [items[round(i * (len(items) - 1) / (k - 1))] for i in range(k)]


# Variants an op's pick always keeps: the p-norm backward has a branch per
# kind of ord (inf, -inf, 2, 1, p > 1, 0 < p < 1, p < 0), shared by norm and
# normalize, so between them the two ops hold every branch (a mutation sweep,
# tests/sweep, found ord=inf's and ord=3's branches held by no case).
KEEP = {"masked_norm": ("ord_inf_fully_masked_row", "ord_3_fully_masked_row",
                        "ord_0_5_fully_masked_row", "dims0_2_3d"),
        "masked_normalize": ("ord_neginf_fully_masked_row", "ord_neg2_fully_masked_row",
                             "ord_1_fully_masked_row")}


# Variants added to an op's pick, outside it (the pick of the others stays
# as it was): a (4, 8) input, 32 elements, a multiple of the CUDA backend's
# 256-byte buffer alignment in doubles; logaddexp's operands of two dtypes
# (an int64 other: no gradient of its own; uint8's fill 0; a float64 other,
# the float32 input's gradient computed in float64) and a float32 mask
# (tests/sweep: each a mutant no case told apart); median's equal zeros of
# both signs (the gradient goes to the element torch's stable sort picks);
# normalize's rows of a norm equal to eps (maximum's backward halves it).
EXTRA = {"masked_sum": ("rows4_cols8",), "masked_median": ("signed_zero_ties",),
         "masked_var": ("mean_ties",), "masked_std": ("mean_ties",),
         "masked_normalize": ("eps_tie",),
         "masked_logaddexp": ("other_i64", "other_u8", "other_f64", "mask_f32_bool")}


# Upstream gradients with -0.0 in them (mtgen.grad.neg_zero_twins, GRAD-10),
# at every var/std pick and at the mean ties (a deviation of exactly +0.0 or
# -0.0): var/std's backward is torch's composite formula, op by op (the
# deviations times the upstream gradient, scaled, masked where), and the
# sign of each zero it gives depends on that order; the reference's closed
# form must give the same. Tolerance: the base case's, in a form that
# compares the sign of a zero (rel:X as ulp:N, mtgen.grad.sign_tolerance).
NEG_ZERO_TWINS = {
    f"{op}.dense.{v}.grad": step
    for op, picks in (
        ("masked_var", ("f32.mask_broadcast_row", "f32.correction_0_5", "f32.dtype_kw_f64",
                        "f64.all", "f32.fully_masked_row", "f16.opinfo_0", "bf16.opinfo_0",
                        "f16.fully_masked_row", "f32.mean_ties")),
        ("masked_std", ("f32.mask_none", "f32.correction_2", "f32.dtype_kw_f64", "f64.all",
                        "f32.fully_masked_row", "f16.opinfo_0", "bf16.opinfo_0",
                        "f16.fully_masked_row", "f32.mean_ties")))
    for v in picks
    # step 1 (every upstream element -0.0) where all of it is a zero; 3 on
    # the ties (3 columns: one -0.0 per row); 2 elsewhere
    for step in ((1 if v in ("f64.all", "f32.fully_masked_row") else
                  3 if v == "f32.mean_ties" else 2),)
}


def variant_of(c):
    return model.variant_of(c.id).removesuffix(".grad")


def late(c):
    """Forward variants added after the picks were settled (logaddexp's
    operands of two dtypes, masked_fn.MIXED, its broadcast_input*, and
    EXTRA's): only EXTRA's
    enter, so the pick of the others stays as it was."""
    v = variant_of(c)
    return v.startswith(("other_", "broadcast_input")) or any(v in e for e in EXTRA.values())


def pick(op_cases):
    """At most PER_OP dense cases of one op, spread over its variants (the
    fully masked ones first: MFG-2 at work; then those KEEP names), float32
    and float64 alternating; and up to 2 of a CSR input."""
    dense = [c for c in op_cases if c.id.split(".")[1] == "dense"]
    csr = [c for c in op_cases if c.id.split(".")[1] == "csr"]
    variants = collections.OrderedDict()
    for c in dense:
        variants.setdefault(variant_of(c), []).append(c)
    groups = list(variants.values())
    keep = [v for v in groups if variant_of(v[0]) in KEEP.get(v[0].op, ())]
    first = [v for v in groups if "fully_masked" in v[0].id and v not in keep][:1]
    rest = [v for v in groups if v not in first and v not in keep]
    chosen = []
    for i, same in enumerate(first + keep + _spread(rest, PER_OP - len(first) - len(keep))):
        want = FLOATS[i % 2]
        chosen.append(next((c for c in same if c.id.split(".")[2] == want), same[0]))
    return chosen + _spread(csr, 2)


def candidates(floats=FLOATS):
    """masked_fn's ok cases of dtypes `floats`, by op, in the family's order."""
    by_op = collections.OrderedDict()
    for c in masked_fn.cases():
        if c.id.split(".")[2] in floats and c.error_class is None and c.profile == "torch":
            by_op.setdefault(c.op, []).append(c)
    return by_op


def half_pick(derived):
    """Up to HALF_PER_OP dense ok cases per half dtype, spread over the
    op's variants."""
    out = []
    for short in HALF:
        ok = [d for d in derived if d.id.split(".")[1:3] == ["dense", short]
              and d.error_class is None]
        out += _spread(ok, HALF_PER_OP)
    return out


def cases():
    out = []
    for op, forward in candidates().items():
        derived = [d for d in (derive(c) for c in forward) if d is not None]
        extra = [d for d in derived if variant_of(d) in EXTRA.get(op, ())]
        out += pick([d for d in derived if d not in extra and not late(d)]) + extra
    for op, forward in candidates(HALF).items():
        # dtype= (a float32 result of a half input) has no float64 twin to
        # measure torch's error against (mtgen.grad.half_tolerance)
        forward = [c for c in forward if "dtype" not in c.kwargs and not late(c)]
        out += half_pick([d for d in (derive(c) for c in forward) if d is not None])
    for d in out:
        if d.error_class is None and d.id.split(".")[1] == "dense" and not poison_invariant(d):
            raise Surprise(f"{d.id}: torch's gradient depends on masked-out input data, or is "
                           "not +0 there (MFG-2)")
    return check_ids(out + neg_zero_twins(out, NEG_ZERO_TWINS, keep_tolerance=True))

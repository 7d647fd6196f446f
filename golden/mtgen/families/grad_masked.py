"""Family grad_masked: gradients of MaskedTensor ops (golden format 3,
mtgen/grad.py; spec/SEMANTICS.md GRAD-*). The overview's autograd cells
first (GRAD-1..GRAD-4), then backward cases derived from the forward
families' own cases (grad.grad_case): for every op of the families masked,
unary, binary, reduce and structure, the forward cases whose inputs hold a
MaskedTensor (dense, COO or CSR storage), float32/float64, profile
torch, up to PER_OP varied ones per op (PER_ALIAS for aliases, at most
ERRORS_PER_OP of them torch's refusals of the backward); then float16,
up to HALF_PER_OP ok ones per op (GRAD-9: MaskedTensor refuses bfloat16,
and the tolerance is measured per case, mtgen.grad.half_tolerance).

What torch does (torch 2.x's torch.masked autograd; each behaviour is a rule
the cases carry, tagged from torch's own result, never declared):
  GRAD-1  a MaskedTensor input's grad is a MaskedTensor with the input's
          mask (elementwise ops, reductions over dims or all, view/reshape/
          transpose/cat/stack/split/clone/contiguous, to_tensor, to_dense,
          to_sparse...).
  GRAD-2  the grad's values under its mask are torch's derivative formula on
          the specified elements (masked-out input data and masked-out
          upstream-gradient data never enter: MASK-9 poisons both).
  GRAD-3  a fully masked input's grad is fully masked.
  GRAD-4  a plain tensor combined with a MaskedTensor (x * y, where(c, m, y))
          gets a MaskedTensor grad: the mask the op's result routes back to
          it (the result's mask for elementwise ops, OR-reduced over the
          broadcast dims; ~cond for where's plain branch).
  GRAD-5  torch's refusals of the backward (error cases; the forward
          succeeds): MaskedTensor has no handler for an aten op that the
          derivative formula calls (tanh_backward, zeros_like, polygamma...),
          a sparse storage has no kernel for it (select_backward,
          as_strided), or the op has no derivative at all (floor_divide).
  GRAD-6  ops that move elements route the upstream gradient's mask back,
          so the grad's mask is not the input's: select and slice scatter it
          into zeros of the input's shape (a position outside the selection
          is masked out), unfold and expand OR it over the windows/broadcast
          dims (a position in no window is masked out), where(cond, a, b)
          gives a's grad a's mask & cond and b's b's mask & ~cond.
  GRAD-7  sgn's grad is a plain (strided) tensor of zeros, not a
          MaskedTensor (torch's ZeroTensor, recorded as ordinary zeros).
  GRAD-8  a COO/CSR-storage MaskedTensor's grad keeps the input's storage
          layout, whatever the result's (to_dense of a COO MaskedTensor: COO
          grad; to_sparse of a strided one: strided grad).
  GRAD-9  a float16 input's grad has its dtype (and values within the
          case's measured tolerance of torch's).
  GRAD-10 an upstream -0.0 stays -0.0 where a structure op's backward
          copies it (views, slices, cat/stack/split pieces, where of the
          output's shape) and gives +0.0 where it reduces (expand's sum_to,
          overlapping unfold windows, where's broadcast operand): the
          NEG_ZERO_TWINS below.
Left out: in-place ops (`<op>_`: torch refuses in-place on a leaf that
requires grad), ops with no floating output (grad_case returns None) and
ops whose result is detached; spec/no-gradient-masked.tsv names each op
without a case and why (tests/golden_coverage.py checks every op of ops.def
has gradient cases in some golden file or a line in spec/no-gradient-*.tsv). A full reduction (sum,
mean, prod, amax, amin over every dim) of a COO/CSR-storage MaskedTensor is
detached too: its result does not require grad, so those forward cases
have no gradient case (grad_case returns None).
"""
import dataclasses

import torch
from torch.masked import MaskedTensor, masked_tensor

from .. import grad, sparse
from ..grad import GRAD_TOL
from ..inputs import as_dense, rand_mask, randn
from ..model import DTYPES, Case, Surprise, case_rng, check_ids, variant_of
from . import binary, masked, reduce, structure, unary

SOURCE_FAMILIES = {"masked": masked, "unary": unary, "binary": binary, "reduce": reduce,
                   "structure": structure}
PER_OP, PER_ALIAS, ERRORS_PER_OP, MAX_PER_OP = 6, 2, 3, 8
ALIASES = set(unary.ALIASES) | set(binary.ALIASES)
FLOATS = (torch.float32, torch.float64)
HALF_FLOATS, HALF_PER_OP = (torch.float16,), 2

# torch's refusals of a MaskedTensor backward, checked before DESIGN.md's
# table (sparse.error_class). LAYOUT_MISMATCH where MaskedTensor (a layout
# of its own) lacks what the derivative formula needs while the same formula
# runs on strided tensors ("the op or this combination of layouts is
# refused"; sparse_convert's table says the same of __torch_dispatch__):
# no handler for an aten op of the formula (tanh_backward, zeros_like,
# polygamma, logical_and_, new_zeros, squeeze.dim, masked_fill ...), the
# unary handler refusing a Tensor argument (logaddexp2's pow(2, y)), to_dense's
# backward reading a `layout` it lacks, sparse storage without
# is_non_overlapping_and_dense, and maximum/minimum/nextafter/sinc/clamp's
# backward calling MaskedTensor's where handler with a MaskedTensor
# condition, which calls itself until Python's recursion limit (torch's
# _ops_refs.where). The shared table's classes elsewhere, as the forward
# families have them: "len(kwargs) must equal 0" (fmod/remainder's
# backward: div with rounding_mode) and "data.size() must equal mask.size()"
# (a CSR result whose column count torch infers, SP-1) INVALID_ARGUMENT
# like binary's and unary's; floor_divide ("derivative for
# aten::floor_divide is not implemented": no layout has one) and where's
# scalar branch (_MaskedWhereBackward returns a grad for a non-tensor)
# INVALID_ARGUMENT by default.
CLASSES = (
    ("LAYOUT_MISMATCH", ("__torch_dispatch__ handlers returned NotImplemented",
                         "do not support additional Tensor arguments",
                         "maximum recursion depth exceeded",
                         "_MaskedToDenseBackward' object has no attribute 'layout'",
                         "do not have is_non_overlapping_and_dense")),
)
classify = sparse.classifier(CLASSES)

# op -> (f32, f64) tolerance where grad.GRAD_TOL lacks headroom (the
# generator's check: float32 within half of it of the float64 gradient).
# exp: its float32 gradient at x = -100 (unary's special values) is
# subnormal, 1.3e-44 against float64's 1.18e-44, 7% apart: no relative
# bound holds there, ulp:8 does (torch is within 4 ulp on every element).
TOL = {"exp": ("ulp:8", "rel:1e-10")}


def overview_cases():
    """The MaskedTensor overview's autograd examples, per float dtype:
    sum(m).backward() (a grad with m's mask), the fully masked sum, x * y
    with a masked x and a plain y (y's grad becomes a MaskedTensor), and
    view-then-backward."""
    out = []
    for short, dt in DTYPES.items():
        tol = GRAD_TOL[dt]

        def sum_in(g, dt=dt, p=0.5):
            return [masked_tensor(randn(g, (2, 2, 3), dt) * 5, rand_mask(g, (2, 2, 3), p))]

        def none_in(g, dt=dt):
            return [masked_tensor(randn(g, (2, 2, 3), dt) * 5,
                                  torch.zeros(2, 2, 3, dtype=torch.bool))]

        def mul_in(g, dt=dt):
            return [masked_tensor(torch.tensor([3.0, 4.0], dtype=dt),
                                  torch.tensor([True, False])),
                    torch.tensor([2.0, 1.0], dtype=dt)]

        def view_in(g, dt=dt):
            t = torch.arange(4, dtype=dt).reshape(1, 2, 2)
            return [masked_tensor(t.clone(), t > 0)]

        out += [
            Case(f"sum.masked.{short}.overview_grad", "sum", ("GRAD-1", "GRAD-2"), tol, sum_in,
                 lambda x, kw: [torch.sum(x[0])], "torch.sum(m)", backward=True),
            Case(f"sum.masked.{short}.overview_fully_masked_grad", "sum", ("GRAD-1", "GRAD-3"),
                 tol, none_in, lambda x, kw: [torch.sum(x[0])], "torch.sum(m)", backward=True),
            Case(f"mul.masked_dense.{short}.overview_grad", "mul", ("GRAD-1", "GRAD-4"), tol,
                 mul_in, lambda x, kw: [x[0] * x[1]], "x * y", backward=True),
            Case(f"view.masked.{short}.overview_grad", "view", ("GRAD-1", "GRAD-2"), tol,
                 view_in, lambda x, kw: [x[0].view(kw["size"])], "mt.view([4])",
                 kwargs={"size": (4,)}, backward=True),
        ]
    return out


# ---- deriving cases from the forward families ------------------------------------------

def storage(x):
    """`masked`, `masked_coo`, `masked_csr`, `dense`, `coo`, `csr`, or the
    Python type of a number."""
    t = grad.data_of(x)
    if not isinstance(t, torch.Tensor):
        return type(x).__name__
    lay = {torch.strided: "", torch.sparse_coo: "coo", torch.sparse_csr: "csr"}.get(
        t.layout, str(t.layout))
    if isinstance(x, MaskedTensor):
        return "masked" + ("_" + lay if lay else "")
    return lay or "dense"


# forward variants added after the picks were made, left out so that the
# picks stay put
LATER_VARIANTS = ("empty_other_0", "default_dim", "signs_below_1", "0d_dim0", "0d_dimneg1",
                  "0d_masked_dim0")
# ... and the gradient cases of some of them, appended after the picks
LATER_GRADS = ("cat.masked.f32.default_dim", "stack.masked.f32.default_dim",
               # a 0-d input reduced along dim 0 / -1 (reduce.zero_dim_cases)
               *(f"{op}.masked.f32.0d_dim0"
                 for op in ("sum", "mean", "prod", "amin", "amax", "var", "std")),
               "sum.masked.f32.0d_dimneg1", "sum.masked.f32.0d_masked_dim0",
               "amax.masked.f32.0d_masked_dim0",
               # a float operand beside an integer MaskedTensor: only the float one
               # requires grad, so the backward has an operand with elements and no
               # gradient (an engine that computed one for it, or skipped the float
               # one, passed every other case)
               "add.dense_masked.i32.promote_f32_tensor", "add.masked_dense.i8.promote_f64_0d")


def candidate(c, inputs, floats=FLOATS):
    """c is a forward case to derive a gradient case from: torch profile,
    declared ok, not in-place, not LATER_VARIANTS, a MaskedTensor among its
    inputs, every floating input of one of `floats`."""
    if c.profile != "torch" or c.error_class is not None or c.op.endswith("_"):
        return False
    if variant_of(c.id) in LATER_VARIANTS:
        return False
    if not any(isinstance(x, MaskedTensor) for x in inputs):
        return False
    dts = {grad.data_of(x).dtype for x in inputs if grad.floating(x)}
    return bool(dts) and dts <= set(floats)


def observed_rules(d):
    """The GRAD-* rules torch's own backward of d shows (d's unpoisoned
    inputs); Surprise on a grad this module does not describe."""
    if d.error_class is not None:
        return ("GRAD-5",)
    leaves, _, _, grads = grad.backward(d, d.build(case_rng(d.id)))
    rules = {"GRAD-2"} | ({"GRAD-9"} & set(d.rules))  # grad_case: torch kept a half dtype
    for k, (x, g) in enumerate(zip(leaves, grads)):
        if g is None:
            continue
        if isinstance(x, MaskedTensor):
            if not isinstance(g, MaskedTensor):
                rules.add("GRAD-7")
                continue
            xm, gm = as_dense(x.get_mask()), as_dense(g.get_mask())
            if g.get_data().layout != x.get_data().layout:
                raise Surprise(f"{d.id}: grad {k} has storage {g.get_data().layout}, "
                               f"input {x.get_data().layout}")
            if x.get_data().layout != torch.strided:
                rules.add("GRAD-8")
            rules.add("GRAD-1" if torch.equal(xm, gm) else "GRAD-6")
            if not xm.any():
                if gm.any():
                    raise Surprise(f"{d.id}: grad {k} of a fully masked input is specified")
                rules.add("GRAD-3")
        elif isinstance(g, MaskedTensor):
            rules.add("GRAD-4")
    return tuple(sorted(rules, key=lambda r: int(r.split("-")[1])))


def features(d, inputs):
    """What makes d differ from its op's other cases, with weights: the
    selection covers the heavy ones first."""
    masks = [as_dense(x.get_mask()) for x in inputs if isinstance(x, MaskedTensor)]
    shapes = tuple(tuple(grad.data_of(x).shape) for x in inputs
                   if isinstance(grad.data_of(x), torch.Tensor))
    dtype = grad.first_float_dtype(inputs)
    variant = d.id.split(".")[3].rstrip("0123456789_")
    expect = d.error_class or "ok"
    f = {("storage", tuple(storage(x) for x in inputs), expect == "ok"): 4,
         ("expect", expect): 3,
         ("dtype", dtype): 2,
         ("variant", variant): 1,
         ("shapes", shapes): 1,
         ("kwargs", tuple(sorted(d.kwargs))): 1}
    f.update({("rule", r): 3 for r in d.rules})
    if any(m.numel() and not m.any() for m in masks):
        f[("fully_masked",)] = 3
    if len(set(shapes)) > 1 and not d.op.startswith(("cat", "stack", "where")):
        f[("broadcast",)] = 3
    if any(0 in s for s in shapes):
        f[("zero_size",)] = 1
    return f


def _greedy(cands, idx, limit, covered):
    """Up to `limit` of cands[idx], each the one adding the most uncovered
    feature weight (first come on ties); updates covered."""
    chosen, left = [], list(idx)
    while left and len(chosen) < limit:
        def gain(i):
            return sum(w for k, w in cands[i][1].items() if k not in covered)
        best = max(left, key=lambda i: (gain(i), -i))
        if gain(best) <= 0:
            break
        chosen.append(best)
        left.remove(best)
        covered |= set(cands[best][1])
    return chosen


def pick(cands, limit, errors):
    """The op's cases (`limit`, raised to one per storage combination up
    to MAX_PER_OP): its ok cases first (one slot kept for a refusal
    when torch refuses some), then up to `errors` refusals in what is left;
    forward order kept."""
    ok = [i for i, (d, _) in enumerate(cands) if d.error_class is None]
    err = [i for i, (d, _) in enumerate(cands) if d.error_class is not None]
    covered = set()
    # an op with more storage combinations than slots (add: masked, dense,
    # scalar, COO, CSR operands) gets up to MAX_PER_OP, one per combination
    kinds = {k for i in ok for k in cands[i][1] if k[0] == "storage"}
    limit = max(limit, min(MAX_PER_OP, len(kinds) + (1 if err else 0)))
    chosen = _greedy(cands, ok, limit - (1 if ok and err else 0), covered)
    chosen += _greedy(cands, err, min(errors, limit - len(chosen)), covered)
    return [cands[i][0] for i in sorted(chosen)]


def _derive(c, suffix="grad"):
    """(gradient case of forward case c, its features), or None."""
    d = grad.grad_case(c, classify=classify, suffix=suffix)
    if d is None:
        return None
    tol = TOL.get(c.op)
    dt = grad.first_float_dtype(d.build(case_rng(d.id)))
    if tol is not None and dt in FLOATS:
        d.tolerance = tol[FLOATS.index(dt)]
    d.rules = observed_rules(d)
    return d, features(d, d.build(case_rng(d.id)))


def fully_masked(c):
    """Forward case c with every MaskedTensor input's mask all false (its
    data kept), for an op whose forward cases have no fully masked input
    (GRAD-3); None unless every MaskedTensor input has strided storage."""
    if not all(x.get_data().layout == torch.strided
               for x in c.build(case_rng(c.id)) if isinstance(x, MaskedTensor)):
        return None

    def build(g):
        return [masked_tensor(x.get_data(), torch.zeros_like(x.get_mask()))
                if isinstance(x, MaskedTensor) else x for x in c.build(g)]
    return dataclasses.replace(c, build=build, torch_call=f"{c.torch_call}  # every mask false")


def forward_cases(families=SOURCE_FAMILIES):
    """The forward families' cases, in order (building them takes ~20 s:
    once per generation)."""
    return [c for fam in families.values() for c in fam.cases()]


def derived_cases(forward):
    """The gradient cases of the forward cases' MaskedTensor cases, per op
    in the order of first appearance, float32/float64 first, then float16
    (half_cases). An op none of whose float32/float64 cases has a fully
    masked input gets one more candidate: its first ok case with every
    mask false (`<forward id>.fully_masked_grad`)."""
    by_op, half = {}, {}
    for c in forward:
        ins = c.build(case_rng(c.id))
        if candidate(c, ins, HALF_FLOATS):
            got = _derive(c)
            if got is not None and got[0].error_class is None:
                half.setdefault(c.op, []).append(got)
        if not candidate(c, ins):
            continue
        got = _derive(c)
        if got is not None:
            by_op.setdefault(c.op, []).append((c, *got))
    return full_cases(by_op) + half_cases(half)


def half_cases(by_op):
    """float16 gradient cases (MaskedTensor refuses bfloat16, MASK-2): per
    op up to HALF_PER_OP of its ok ones (one for an alias), chosen as the
    float32/float64 ones are; tolerance mtgen.grad.half_tolerance."""
    out = []
    for op, cands in by_op.items():
        out += pick(cands, 1 if op in ALIASES else HALF_PER_OP, 0)
    return out


def full_cases(by_op):
    """The float32/float64 selection of derived_cases."""
    out = []
    for op, cands in by_op.items():
        if not any(("fully_masked",) in f for _, _, f in cands):
            for c, d, _ in cands:
                full = fully_masked(c) if d.error_class is None else None
                got = full and _derive(full, suffix="fully_masked_grad")
                if got and got[0].error_class is None:
                    cands.append((full, *got))
                    break
        out += pick([(d, f) for _, d, f in cands], PER_ALIAS if op in ALIASES else PER_OP,
                    ERRORS_PER_OP)
    return out


# ---- upstream gradients holding -0.0 ------------------------------------------

# Structure ops' backward (SEMANTICS.md GRAD-10): chosen derived cases again
# with an upstream gradient that holds -0.0 (Case.grad_outputs), tolerance
# exact (the sign is compared). -> the step of its -0.0s: 2 (every other
# element; the rest seeded) where torch copies each upstream element to one
# gradient element (a view, a slice, a piece of cat/stack/split, where of
# the output's shape, to_tensor's gather, to_sparse's conversion back): a
# lone -0.0 stays -0.0; 1 (every element) where torch reduces (expand's
# sum_to, unfold's overlapping windows, where's broadcast operands): the
# sum starts from 0.0, so it is +0.0 even for an element one window covers,
# and every gradient is a zero, exactly.
NEG_ZERO_TWINS = {
    "contiguous.masked.f32.opinfo_0.grad": 2, "reshape.masked.f32.3d.grad": 2,
    "view.masked.f32.opinfo_0.grad": 2, "select.masked.f32.getitem_0.grad": 2,
    "slice.masked.f32.end_past_size.grad": 2, "split.masked.f32.by_1.grad": 2,
    "unfold.masked.f32.windows.grad": 2, "transpose.masked.f32.opinfo_0.grad": 2,
    "t.masked.f32.opinfo_0.grad": 2, "cat.masked.f32.along_1.grad": 2,
    "stack.masked.f32.along_0.grad": 2, "where.dense_masked_masked.f32.basic.grad": 2,
    "clone.masked.f32.opinfo_0.grad": 2, "to_tensor.masked.f32.fill_nan.grad": 2,
    "to_sparse.masked.f32.basic.grad": 2,
    "expand.masked.f32.opinfo_1.grad": 1, "unfold.masked.f32.opinfo_1.grad": 1,
    "where.dense_masked_masked.f32.opinfo_1.grad": 1,
}


def later_cases(forward):
    """The gradient cases of LATER_GRADS' forward cases, in that order."""
    fwd = {c.id: c for c in forward if c.id in LATER_GRADS}
    return [_derive(fwd[cid])[0] for cid in LATER_GRADS]


def cases():
    forward = forward_cases()
    derived = derived_cases(forward)
    return check_ids(overview_cases() + derived + grad.neg_zero_twins(derived, NEG_ZERO_TWINS)
                     + later_cases(forward))

"""Family binary: MaskedTensor's binary ops (torch/masked/maskedtensor/
binary.py BINARY_NAMES), aliases included (MASK-6, MASK-7, MASK-8, BIN-*)."""
import functools
import math
from typing import Callable, NamedTuple

import numpy as np
import torch
from torch.masked import masked_tensor

from .. import opinfo, sparse
from . import binary_sparse
from ..inputs import (expect_neg_zero, log_uniform, masked, rand_mask, rand_masked, randn,
                      signed_zero_pairs, signed_zeros)
from ..model import ALL_DTYPES, DTYPES, Case, Surprise, check_ids, py

# ----------------------------------------------------------------------------
# add sub mul div, float32/float64: the first slice's cases (MASK-6/7/8)


class BinaryOp(NamedTuple):
    tolerance: str
    ufunc: Callable        # numpy: the same op computed in one dtype
    signed_number: float   # m (op) number gives -0.0 from a signed zero


# op -> its row: -0 + -0, -0 - +0, +0 * -0, 0 / -2 give -0.0
OPS = {"add": BinaryOp("exact", np.add, -0.0),
       "sub": BinaryOp("exact", np.subtract, 0.0),
       "mul": BinaryOp("exact", np.multiply, -0.0),
       "div": BinaryOp("exact", np.divide, -2.0)}

SCALAR = 2.5
DIV_ZEROS_B = {(0, 0): 0.0, (1, 1): -0.0, (2, 2): 0.0}  # divisor
DIV_ZEROS_A = {(0, 0): 1.5, (1, 1): 1.5, (2, 2): 0.0}   # -> inf, -inf, nan
ZEROS = (-0.0, 0.0, -2.0, 3.0)  # every result is exact or ±inf/NaN


def same_mask_pair(g, dt, force_a=None, force_b=None, make=None):
    mask = rand_mask(g, (3, 4), 0.6)
    make = make or (lambda: randn(g, (3, 4), dt))
    return [masked(make(), mask, force_a), masked(make(), mask, force_b)]


def csr_pair(g, dt, flip_mask=False):
    """Two CSR-storage masked tensors of one structure and one mask (the
    mask of b with its first stored value flipped when flip_mask)."""
    pattern = rand_mask(g, (3, 4), 0.6)
    pattern[0, 0] = True
    crow_col = pattern.to_sparse_csr()
    crow, col = crow_col.crow_indices(), crow_col.col_indices()
    n = col.numel()
    mvals = torch.rand(n, generator=g) < 0.7
    out = []
    for k in range(2):
        vals = randn(g, (n,), dt)
        mv = mvals.clone()
        if flip_mask and k == 1:
            mv[0] = not bool(mv[0])
        out.append(masked_tensor(torch.sparse_csr_tensor(crow, col, vals, (3, 4)),
                                 torch.sparse_csr_tensor(crow, col, mv, (3, 4))))
    return out


def other_mask_pair(g, dt, shape_b=(3, 4), dt_b=None):
    """Masks that differ; b may also differ in shape or dtype."""
    a = rand_masked(g, (3, 4), dt)
    if shape_b == (3, 4):
        mask_b = a.get_mask().clone()
        mask_b[0, 0] = not bool(mask_b[0, 0])
    else:
        mask_b = rand_mask(g, shape_b, 0.6)
    return [a, masked(randn(g, tuple(mask_b.shape), dt_b or dt), mask_b)]


def zeros_pair(g, dt):
    a, b, mask = signed_zero_pairs(g, (4, 8), dt, ZEROS)
    return [masked(a, mask), masked(b, mask)]


def zeros_dense(g, dt):
    a, b, mask = signed_zero_pairs(g, (4, 8), dt, ZEROS)
    return [masked(a, mask), b]


def other_dtype(dt):
    return torch.float64 if dt == torch.float32 else torch.float32


# MASK-7: numbers that float32 cannot represent. torch casts the number to
# the data dtype first (m / 0.1 in float32 is t / 0.1f), which differs from
# computing in double and rounding once: the check keeps that true.
UNREPRESENTABLE = {"scalar_0_1": 0.1, "scalar_1_3": 1 / 3, "scalar_1em7": 1e-7}
MIN_DOUBLE_ROUNDING_DIFFS = 2


def scalar_input(g, dt, s, op):
    # sums: magnitudes around the number's, so that it matters to every sum;
    # products and quotients: around 1
    e = math.log10(s) if op in ("add", "sub") else 0.0
    data = log_uniform(g, (8, 8), dt, e - 1, e + 1)
    return masked(data, rand_mask(g, (8, 8), 0.75))


def float32_not_double(op, s):
    """Check: torch's float32 result is x op float32(s) computed in float32,
    and differs from float32(float64(x) op s) at several masked-in elements."""
    ufunc = OPS[op].ufunc

    def check(ins, outs):
        m = ins[0]
        if m.get_data().dtype != torch.float32:
            return
        sel = m.get_mask().numpy()
        x = m.get_data().numpy()[sel]
        got = outs[0].get_data().numpy()[sel]
        in_f32 = ufunc(x, np.float32(s))
        via_f64 = ufunc(x.astype(np.float64), s).astype(np.float32)
        if not np.array_equal(got, in_f32, equal_nan=True):
            raise Surprise(f"torch's float32 {op} is not x {op} float32({s!r}) in float32")
        n = int((in_f32 != via_f64).sum())
        if n < MIN_DOUBLE_ROUNDING_DIFFS:
            raise Surprise(f"computing {op} with {s!r} in double then rounding differs from "
                           f"torch at only {n} elements (want >= {MIN_DOUBLE_ROUNDING_DIFFS}): "
                           "choose other inputs")
    return check


class Row(NamedTuple):
    """One binary case per op and dtype. build(g, dt, op) -> inputs; args:
    the torch_call arguments (a format string over `op`'s signed number
    {s}); check(op) -> the case's check or None."""
    layout: str
    variant: str
    build: Callable
    args: str
    rules: tuple
    error_class: str | None = None
    only: tuple | None = None       # the ops that have the case (None: all)
    check: Callable | None = None
    first: str | None = None        # error cases: the first check torch makes


def per_dt(build):
    """A build(g, dt) as a build(g, dt, op)."""
    return lambda g, dt, op: build(g, dt)


def signed_number_input(g, dt, op):
    return [signed_zeros(g, (3, 4), dt, ZEROS), OPS[op].signed_number]


def always(check):
    return lambda op: check


BINARY_CASES = [
    Row("masked_masked", "basic", per_dt(same_mask_pair), "a, b", ("MASK-6",)),
    Row("masked_dense", "basic",
        per_dt(lambda g, dt: [rand_masked(g, (3, 4), dt), randn(g, (3, 4), dt)]),
        "m, t", ("MASK-7",)),
    Row("dense_masked", "basic",
        per_dt(lambda g, dt: [randn(g, (3, 4), dt), rand_masked(g, (3, 4), dt)]),
        "t, m", ("MASK-7",)),
    Row("masked_scalar", "basic", per_dt(lambda g, dt: [rand_masked(g, (3, 4), dt), SCALAR]),
        f"m, {py(SCALAR)}", ("MASK-7",)),
    Row("masked_masked", "mask_mismatch", per_dt(other_mask_pair), "a, b", ("MASK-8",),
        "MASK_MISMATCH"),
    Row("masked_masked", "divisor_zeros",
        per_dt(lambda g, dt: same_mask_pair(g, dt, DIV_ZEROS_A, DIV_ZEROS_B)),
        "a, b", ("MASK-6",), only=("div",)),
    # signed zeros: every pair of (-0, +0, -2, 3), and m (op) the op's number
    Row("masked_masked", "signed_zeros", per_dt(zeros_pair), "a, b", ("MASK-6",),
        check=always(expect_neg_zero)),
    Row("masked_dense", "signed_zeros", per_dt(zeros_dense), "m, t", ("MASK-7",),
        check=always(expect_neg_zero)),
    Row("masked_scalar", "signed_zeros", signed_number_input, "m, {s}", ("MASK-7",),
        check=always(expect_neg_zero)),
    # MASK-8 first: the masks are compared before anything else. Masks of
    # equal ndim are compared with torch.eq, which raises when the shapes
    # cannot broadcast (SHAPE_MISMATCH); other ndims, other dtypes: masks
    # differ.
    Row("masked_masked", "mask_and_shape_mismatch",
        per_dt(functools.partial(other_mask_pair, shape_b=(3, 5))), "a, b", ("MASK-8",),
        "SHAPE_MISMATCH", first="must match the size of tensor b"),
    Row("masked_masked", "mask_and_ndim_mismatch",
        per_dt(functools.partial(other_mask_pair, shape_b=(4,))), "a, b", ("MASK-8",),
        "MASK_MISMATCH", first="Input masks must match"),
    Row("masked_masked", "mask_and_dtype_mismatch",
        per_dt(lambda g, dt: other_mask_pair(g, dt, dt_b=other_dtype(dt))), "a, b",
        ("MASK-8",), "MASK_MISMATCH", first="Input masks must match"),
    # CSR storage (data and mask of one structure): the op maps the stored
    # values, crow/col kept; masks compared value by value
    Row("csr_csr", "basic", per_dt(csr_pair), "a, b", ("MASK-6",)),
    Row("csr_scalar", "basic", per_dt(lambda g, dt: [csr_pair(g, dt)[0], SCALAR]),
        f"m, {py(SCALAR)}", ("MASK-7",)),
    Row("csr_csr", "mask_mismatch", per_dt(lambda g, dt: csr_pair(g, dt, flip_mask=True)),
        "a, b", ("MASK-8",), "MASK_MISMATCH"),
]
# MASK-7: numbers float32 cannot represent, each with the rounding check
BINARY_CASES += [
    Row("masked_scalar", variant,
        lambda g, dt, op, s=s: [scalar_input(g, dt, s, op), s], f"m, {py(s)}", ("MASK-7",),
        check=lambda op, s=s: float32_not_double(op, s))
    for variant, s in UNREPRESENTABLE.items()]


def first_slice_cases():
    out = []
    for short, dt in DTYPES.items():
        for op, row_op in OPS.items():
            fn = getattr(torch, op)
            for r in BINARY_CASES:
                if r.only and op not in r.only:
                    continue
                out.append(Case(
                    id=f"{op}.{r.layout}.{short}.{r.variant}", op=op, rules=r.rules,
                    tolerance=row_op.tolerance,
                    build=functools.partial(r.build, dt=dt, op=op),
                    run=lambda ins, kw, fn=fn: [fn(ins[0], ins[1])],
                    torch_call=f"torch.{op}({r.args.format(s=py(row_op.signed_number))})",
                    error_class=r.error_class, check=r.check(op) if r.check else None,
                    error_match=r.first))
    return out


# ----------------------------------------------------------------------------
# Every op of MaskedTensor's binary list, every dtype (BIN-*)

F, I, B = "F", "I", "B"  # computation-dtype categories torch has a kernel for


class Op(NamedTuple):
    canon: str             # the op whose kernel it is (aliases share it)
    accepts: str           # categories of the computation dtype torch accepts
    result: str            # "same", "float" (integers compute in float32), "bool"
    tolerance: str         # for float results; integers and bool are exact
    rules: tuple           # BIN rules every case of the op carries
    opinfo: str | None     # torch's OpInfo name for sample inputs


# ulp:4 for the transcendental ops: torch's float32 kernels are Sleef's
# vectorized atan2/exp/log1p (1 ulp each, logaddexp composes three), the
# reference uses the C library's; float16 rounds a float result once. The
# generator checks torch's float32 against float64 within ulp:2.
TRANS = "trans"
CMP = ("BIN-4",)
# atan2: Sleef's atan2f/atan2 are within 1 ulp, so is the C library: 2 ulp
# apart at most (float16: the float result rounds once, 1 half ulp).
# logaddexp, logaddexp2: m + log1p(exp(-|a-b|)) cancels when m < 0 (the
# result can be near 0 while its terms are near 1): ulp bounds grow without
# limit (980 ulp in float32 over 10^4 normal pairs), so an absolute bound of
# a few ulp of 1 (results of normal inputs are O(1); ±inf compare exactly).
TRANS_TOL = {
    "atan2": {torch.float16: "ulp:1", torch.float32: "ulp:2", torch.float64: "ulp:2"},
    "logaddexp": {torch.float16: "abs:1e-2", torch.float32: "abs:1e-5",
                  torch.float64: "abs:1e-13"},
    "logaddexp2": {torch.float16: "abs:1e-2", torch.float32: "abs:1e-5",
                   torch.float64: "abs:1e-13"},
}
ALL_OPS = {
    "add": Op("add", F + I + B, "same", "exact", (), "add"),
    "sub": Op("sub", F + I, "same", "exact", ("BIN-3",), "sub"),
    "subtract": Op("sub", F + I, "same", "exact", ("BIN-3",), "sub"),
    "mul": Op("mul", F + I + B, "same", "exact", (), "mul"),
    "multiply": Op("mul", F + I + B, "same", "exact", (), "mul"),
    "div": Op("div", F + I + B, "float", "exact", (), "div.no_rounding_mode"),
    "divide": Op("div", F + I + B, "float", "exact", (), "div.no_rounding_mode"),
    "true_divide": Op("div", F + I + B, "float", "exact", (), "true_divide"),
    "atan2": Op("atan2", F + I + B, "float", TRANS, (), "atan2"),
    "arctan2": Op("atan2", F + I + B, "float", TRANS, (), "atan2"),
    "bitwise_and": Op("bitwise_and", I + B, "same", "exact", ("BIN-3",), "bitwise_and"),
    "bitwise_or": Op("bitwise_or", I + B, "same", "exact", ("BIN-3",), "bitwise_or"),
    "bitwise_xor": Op("bitwise_xor", I + B, "same", "exact", ("BIN-3",), "bitwise_xor"),
    "bitwise_left_shift": Op("shl", I, "same", "exact", ("BIN-3", "BIN-6"),
                             "bitwise_left_shift"),
    "bitwise_right_shift": Op("shr", I, "same", "exact", ("BIN-3", "BIN-6"),
                              "bitwise_right_shift"),
    "floor_divide": Op("floor_divide", F + I, "same", "exact", ("BIN-3", "BIN-5"),
                       "floor_divide"),
    "fmod": Op("fmod", F + I, "same", "exact", ("BIN-3", "BIN-5"), "fmod"),
    "remainder": Op("remainder", F + I, "same", "exact", ("BIN-3", "BIN-5"), "remainder"),
    "logaddexp": Op("logaddexp", F, "same", TRANS, ("BIN-3",), "logaddexp"),
    "logaddexp2": Op("logaddexp2", F, "same", TRANS, ("BIN-3",), "logaddexp2"),
    "nextafter": Op("nextafter", F, "same", "exact", ("BIN-3", "BIN-8"), "nextafter"),
    "eq": Op("eq", F + I + B, "bool", "exact", CMP, "eq"),
    "ne": Op("ne", F + I + B, "bool", "exact", CMP, "ne"),
    "not_equal": Op("ne", F + I + B, "bool", "exact", CMP, "ne"),
    "le": Op("le", F + I + B, "bool", "exact", CMP, "le"),
    "less_equal": Op("le", F + I + B, "bool", "exact", CMP, "le"),
    "ge": Op("ge", F + I + B, "bool", "exact", CMP, "ge"),
    "greater_equal": Op("ge", F + I + B, "bool", "exact", CMP, "ge"),
    "gt": Op("gt", F + I + B, "bool", "exact", CMP, "gt"),
    "greater": Op("gt", F + I + B, "bool", "exact", CMP, "gt"),
    "lt": Op("lt", F + I + B, "bool", "exact", CMP, "lt"),
    "less": Op("lt", F + I + B, "bool", "exact", CMP, "lt"),
    "maximum": Op("maximum", F + I + B, "same", "exact", ("BIN-9",), "maximum"),
    "minimum": Op("minimum", F + I + B, "same", "exact", ("BIN-9",), "minimum"),
    "fmax": Op("fmax", F + I + B, "same", "exact", ("BIN-9",), "fmax"),
    "fmin": Op("fmin", F + I + B, "same", "exact", ("BIN-9",), "fmin"),
}
# torch's aliases: the kernel of another op of the table (Op.canon), so
# they get one masked_masked case per dtype (torch's result or its
# refusal): the shared kernel's corners are covered under its own name
ALIASES = {"subtract", "multiply", "divide", "true_divide", "arctan2", "not_equal",
           "less_equal", "greater_equal", "greater", "less"}
# dtypes a MaskedTensor may hold (uint8 only as a plain operand)
MASKED_DTYPES = ("f16", "f32", "f64", "i64", "i32", "i8", "bool")
INT_DIV = ("floor_divide", "fmod", "remainder")
# the shape of the one case per dtype of aliases, in-place variants and
# refusals (the golden file stays small)
SMALL = (2, 3)
# no Python number operand: torch has Tensor overloads only
TENSORS_ONLY = ("maximum", "minimum", "fmax", "fmin", "atan2", "logaddexp", "logaddexp2",
                "nextafter")
# the stored masked-out data of integer and bool inputs: the far end of the
# range (never 0: torch raises ZeroDivisionError for an integer zero divisor
# even where it is masked out, see BIN-5)
INT_POISON = {torch.int64: 2 ** 62 + 7, torch.int32: 2 ** 31 - 1, torch.int8: 127,
              torch.uint8: 255, torch.bool: True, torch.float16: math.nan}


def cat(dt):
    return B if dt == torch.bool else (F if dt.is_floating_point else I)


def accepts(o: Op, dt):
    """(ok, computation dtype) of op o on operands promoting to dt."""
    ct = dt
    if o.result == "float" and not dt.is_floating_point:
        ct = torch.float32
    return cat(ct) in o.accepts, ct


def values(g, shape, dt, nonzero=False, small=False):
    """Random data of dtype dt: normal floats, small integers (shift amounts
    0..width+1 when small), random bools; nonzero avoids 0 (divisors)."""
    if dt == torch.bool:
        t = torch.rand(shape, generator=g) < 0.5
        return torch.ones(shape, dtype=torch.bool) if nonzero else t
    if dt.is_floating_point:
        return randn(g, shape, dt)
    hi = {torch.int8: 12, torch.uint8: 12}.get(dt, 40)
    lo = 0 if dt == torch.uint8 else -hi
    if small:
        lo, hi = 0, 9
    t = torch.randint(lo, hi + 1, shape, generator=g, dtype=torch.int64)
    if nonzero:
        t = torch.where(t == 0, torch.ones_like(t), t)
    return t.to(dt)


def poisoned_mt(data, mask):
    """A MaskedTensor whose masked-out data is the dtype's stored poison
    (float32/float64: left to mtgen.poison, whose 1e30 float16 cannot hold)."""
    data = data.clone()
    if data.dtype in INT_POISON:
        data[~mask] = INT_POISON[data.dtype]
    return masked(data, mask)


def mk(g, shape, dt, mask=None, **kw):
    mask = rand_mask(g, shape, 0.6) if mask is None else mask
    return poisoned_mt(values(g, shape, dt, **kw), mask)


def run_fn(name, kwargs=None):
    fn = getattr(torch, name)
    return lambda ins, kw: [fn(ins[0], ins[1], **kw)]


class Spec(NamedTuple):
    """A case of the full list: the id's layouts and variant, a build(g)
    -> inputs, the torch_call arguments, extra rules, an error class."""
    layout: str
    variant: str
    build: Callable
    args: str
    rules: tuple = ()
    error_class: str | None = None
    kwargs: dict = {}
    tolerance: str | None = None
    check: Callable | None = None
    first: str | None = None
    source: str | None = None


def layout_rule(layout):
    return {"masked_masked": ("MASK-6",), "masked_dense": ("MASK-7",),
            "dense_masked": ("MASK-7",), "masked_scalar": ("MASK-7",)}.get(layout, ())


def number_for(dt):
    if dt == torch.bool:
        return True
    return 3 if not dt.is_floating_point else 1.25


def first_dtype(o: Op):
    """The dtype that carries an op's layout cases: float32, else int32."""
    return "f32" if accepts(o, torch.float32)[0] else "i32"


def refused_specs(name, o: Op, dt, shape=(3, 4)):
    """One DTYPE_MISMATCH case for a dtype torch has no kernel for."""
    msg = "Subtraction" if o.canon == "sub" else "not implemented for"
    return [Spec("masked_masked", "dtype_refused",
                 lambda g: (lambda m: [mk(g, shape, dt, m), mk(g, shape, dt, m)])(
                     rand_mask(g, shape, 0.6)),
                 "a, b", ("BIN-3",), "DTYPE_MISMATCH", first=msg)]


def basic_spec(name, o: Op, dt, shape=(3, 4)):
    rhs = dict(nonzero=o.canon in INT_DIV and not dt.is_floating_point,
               small=o.canon in ("shl", "shr"))
    return Spec("masked_masked", "basic",
                lambda g: (lambda m: [mk(g, shape, dt, m), mk(g, shape, dt, m, **rhs)])(
                    rand_mask(g, shape, 0.6)), "a, b")


def layout_specs(name, o: Op, dt, full):
    """The op on the other layouts: a broadcast plain tensor and a number
    (full: every layout and shape case, for a few ops)."""
    rhs = dict(nonzero=o.canon in INT_DIV and not dt.is_floating_point,
               small=o.canon in ("shl", "shr"))
    num = number_for(dt)
    scalar = (Spec("masked_scalar", "number_refused", lambda g: [mk(g, (3, 4), dt), num],
                   f"m, {py(num)}", ("BIN-7",), "INVALID_ARGUMENT", first="must be Tensor")
              if o.canon in TENSORS_ONLY else
              Spec("masked_scalar", "basic", lambda g: [mk(g, (3, 4), dt), num], f"m, {py(num)}"))
    specs = [
        scalar,
        # BIN-1: the plain tensor broadcasts against the data, the mask
        # is expanded to the result's shape
        Spec("masked_dense", "broadcast_row",
             lambda g: [mk(g, (3, 4), dt), values(g, (4,), dt, **rhs)], "m, t", ("BIN-1",)),
    ]
    if full:
        specs += [
            Spec("masked_dense", "basic",
                 lambda g: [mk(g, (3, 4), dt), values(g, (3, 4), dt, **rhs)], "m, t"),
            Spec("dense_masked", "basic",
                 lambda g: [values(g, (3, 4), dt), mk(g, (3, 4), dt, **rhs)], "t, m"),
            Spec("dense_masked", "broadcast_up",
                 lambda g: [values(g, (2, 1, 4), dt), mk(g, (3, 4), dt, **rhs)], "t, m",
                 ("BIN-1",)),
            Spec("masked_dense", "broadcast_both",
                 lambda g: [mk(g, (3, 1), dt), values(g, (1, 4), dt, **rhs)], "m, t",
                 ("BIN-1",)),
        ]
    return specs


def first_only_specs(name, o: Op, dt):
    """Cases for one dtype per op (the kernel's shape handling)."""
    ok, _ = accepts(o, dt)
    if not ok:
        return []
    div = o.canon in INT_DIV and not dt.is_floating_point
    rhs = dict(nonzero=div)
    return [
        Spec("masked_dense", "broadcast_refused",
             lambda g: [mk(g, (3, 4), dt), values(g, (5,), dt, **rhs)], "m, t", ("BIN-1",),
             "SHAPE_MISMATCH", first="must match the size of tensor b"),
        Spec("masked_masked", "mask_mismatch",
             lambda g: (lambda m: [mk(g, (3, 4), dt, m), mk(g, (3, 4), dt, ~m, **rhs)])(
                 rand_mask(g, (3, 4), 0.6)), "a, b", ("MASK-8",), "MASK_MISMATCH"),
        # masks of equal ndim are compared with torch.eq(...).all(): masks
        # that broadcast match when they agree everywhere, and the data
        # broadcast; the result's mask is inputs/0's, expanded
        Spec("masked_masked", "broadcast_masks",
             lambda g: (lambda m: [mk(g, (1, 4), dt, m),
                                   mk(g, (3, 4), dt, m.expand(3, 4).clone(), **rhs)])(
                 rand_mask(g, (1, 4), 0.6)), "a, b", ("BIN-1",)),
        Spec("masked_masked", "mask_and_broadcast",
             lambda g: (lambda m: [mk(g, (3, 4), dt, m),
                                   mk(g, (1, 4), dt, m[:1].clone(), **rhs)])(
                 torch.tensor([[1, 0, 1, 1], [1, 0, 1, 1], [1, 1, 0, 1]], dtype=torch.bool)),
             "a, b", ("MASK-8", "BIN-1"), "MASK_MISMATCH", first="Input masks must match"),
        Spec("masked_masked", "fully_masked",
             lambda g: (lambda m: [mk(g, (2, 3), dt, m), mk(g, (2, 3), dt, m, **rhs)])(
                 torch.zeros(2, 3, dtype=torch.bool)), "a, b"),
        Spec("masked_masked", "zero_size",
             lambda g: [mk(g, (0, 3), dt), mk(g, (0, 3), dt)], "a, b"),
        Spec("masked_scalar", "kwarg_refused",
             lambda g: [mk(g, (3, 4), dt), number_for(dt)], f"m, {py(number_for(dt))}, alpha=2",
             ("BIN-7",), "INVALID_ARGUMENT", kwargs={"alpha": 2},
             first="len(kwargs) must equal 0" if o.canon in ("add", "sub") else None),
        Spec("scalar_masked", "number_first",
             lambda g: [number_for(dt), mk(g, (3, 4), dt)], f"{py(number_for(dt))}, m",
             ("BIN-7",), "INVALID_ARGUMENT"),
    ]


# BIN-2: promotion. (variant, build(g), args, rules, error) per masked dtype
def promotion_specs(name, o: Op):
    f32, f64, f16, i64, i32, i8, u8, b = (torch.float32, torch.float64, torch.float16,
                                          torch.int64, torch.int32, torch.int8, torch.uint8,
                                          torch.bool)
    div = o.canon in INT_DIV
    shift = o.canon in ("shl", "shr")
    rows = [  # (masked dtype, layout, variant, other: dtype / number, 0-d?)
        (i32, "masked_scalar", "promote_float_number", 2.5, False),
        (b, "masked_scalar", "promote_int_number", 3, False),
        (i8, "masked_dense", "promote_i32_tensor", i32, False),
        (i32, "masked_dense", "promote_u8_tensor", u8, False),
        (f16, "masked_dense", "promote_f64_tensor", f64, False),
        # float16 with bfloat16: neither holds the other, torch gives float32
        # (a plain operand: MaskedTensor refuses bfloat16 data)
        (f16, "masked_dense", "promote_bf16_tensor", torch.bfloat16, False),
        # int32 with bfloat16 is bfloat16, which the result MaskedTensor refuses
        (i32, "masked_dense", "promote_bf16_tensor", torch.bfloat16, False),
        (i32, "dense_masked", "promote_f32_tensor", f32, False),
        (i8, "masked_dense", "promote_f64_0d", f64, True),
        (i8, "masked_dense", "promote_i64_0d", i64, True),
        (f32, "masked_dense", "promote_f64_0d", f64, True),
        (i64, "masked_masked", "promote_mixed", i32, False),
    ]
    out = []
    for mdt, layout, variant, other, zero_d in rows:
        token = next(k for k, v in ALL_DTYPES.items() if v == mdt)
        rt = other if isinstance(other, torch.dtype) else None
        # computation dtype, to know whether torch accepts it
        if isinstance(other, torch.dtype):
            probe = torch.result_type(torch.ones(2, dtype=mdt),
                                      torch.ones((), dtype=other) if zero_d else
                                      torch.ones(2, dtype=other))
        else:
            probe = torch.result_type(torch.ones(2, dtype=mdt), other)
        ok, _ = accepts(o, probe)
        ok = ok and not (o.canon == "sub" and b in (mdt, other))  # any bool operand
        rdt = probe if probe.is_floating_point or o.result != "float" else f32
        # a bfloat16 result: torch.masked wraps it in a MaskedTensor, which
        # refuses bfloat16 data (TypeError; a bool result is fine)
        bf16_result = rdt == torch.bfloat16 and o.result != "bool"
        tol = ("exact" if o.result == "bool" or not rdt.is_floating_point or bf16_result else
               TRANS_TOL[o.canon][rdt] if o.tolerance == TRANS else o.tolerance)
        nz = dict(nonzero=div and not probe.is_floating_point, small=shift)

        def build(g, mdt=mdt, layout=layout, other=other, zero_d=zero_d, nz=nz):
            if not isinstance(other, torch.dtype):
                return [mk(g, (3, 4), mdt), other]
            shape = () if zero_d else (3, 4)
            if layout == "masked_masked":
                m = rand_mask(g, (3, 4), 0.6)
                return [mk(g, (3, 4), mdt, m), mk(g, (3, 4), other, m, **nz)]
            t = values(g, shape, other, **nz)
            if zero_d and (div and not probe.is_floating_point):
                t = torch.tensor(3, dtype=other)
            return ([mk(g, (3, 4), mdt), t] if layout == "masked_dense"
                    else [t, mk(g, (3, 4), mdt, **nz)])
        args = {"masked_scalar": f"m, {py(other)}", "masked_dense": "m, t",
                "dense_masked": "t, m", "masked_masked": "a, b"}[layout]
        if not isinstance(other, torch.dtype) and o.canon in TENSORS_ONLY:
            out.append((token, Spec(layout, variant, build, args, ("BIN-2", "BIN-7"),
                                    "INVALID_ARGUMENT", first="must be Tensor")))
        elif ok and bf16_result:
            out.append((token, Spec(layout, variant, build, args, ("BIN-2",), "DTYPE_MISMATCH",
                                    first="is not supported in MaskedTensor")))
        elif ok:
            out.append((token, Spec(layout, variant, build, args, ("BIN-2",), tolerance=tol)))
        else:
            out.append((token, Spec(layout, variant, build, args, ("BIN-2", "BIN-3"),
                                    "DTYPE_MISMATCH")))
    return out


def nan_inf_pair(dt, a_vals, b_vals):
    """Every pair of the two value lists, masked in, 1 row each."""
    a = torch.tensor([x for x in a_vals for _ in b_vals], dtype=dt)
    b = torch.tensor([y for _ in a_vals for y in b_vals], dtype=dt)
    mask = torch.ones(a.shape, dtype=torch.bool)
    return [masked(a, mask), masked(b, mask)]


SPECIAL_F = (-0.0, 0.0, 1.0, -1.0, 2.5, -2.5, math.inf, -math.inf, math.nan)


def corner_specs(name, o: Op, dt, token):
    """Op-specific corners for dtype dt."""
    ok, _ = accepts(o, dt)
    if not ok:
        return []
    out = []
    c = o.canon
    if token not in ("f32", "i32", "i8", "i64", "f16"):
        return []
    if dt.is_floating_point and (token == "f32" or (token == "f16" and c == "nextafter")):
        # every pair of signed zeros, ±1, ±2.5, ±inf, NaN
        rules = {"floor_divide": ("BIN-5",), "fmod": ("BIN-5",), "remainder": ("BIN-5",),
                 "nextafter": ("BIN-8",), "maximum": ("BIN-9",), "minimum": ("BIN-9",),
                 "fmax": ("BIN-9",), "fmin": ("BIN-9",)}.get(c, ())
        # maximum/minimum of -0 and +0: torch's vectorized and scalar loops
        # return different zeros, so the pair is left out (BIN-9)
        sp = SPECIAL_F[1:] if c in ("maximum", "minimum", "fmax", "fmin") else SPECIAL_F
        out.append(Spec("masked_masked", "specials",
                        lambda g: nan_inf_pair(dt, sp, sp), "a, b", rules))
        if c in INT_DIV:
            # 20726440 / ±3: a - fmod(a, b) rounds in float32 and the quotient
            # lands on k + 0.5, where torch's div_floor keeps k (tests/sweep)
            vals = (5.0, -5.0, 6.0, -6.0, 1e-30, -1e-30, 7.5, 20726440.0, -20726440.0)
            out.append(Spec("masked_masked", "signs",
                            lambda g: nan_inf_pair(dt, vals, (3.0, -3.0, 0.5)), "a, b",
                            ("BIN-5",)))
        if c == "nextafter":
            tiny = {torch.float16: 6e-8, torch.float32: 1e-45, torch.float64: 5e-324}[dt]
            vals = (tiny, -tiny, 1.0, 65504.0, -1.0)
            out.append(Spec("masked_masked", "steps",
                            lambda g: nan_inf_pair(dt, vals, (0.0, math.inf, -math.inf, 1.0)),
                            "a, b", ("BIN-8",)))
    elif token == "i32" and not dt.is_floating_point:
        if c in INT_DIV:
            vals = (7, -7, 6, -6, 0, 1, -1)
            if dt == torch.int8:
                vals += (-128, 127)
            bvals = (3, -3, 1, -1, 2)
            out.append(Spec("masked_masked", "signs",
                            lambda g: nan_inf_pair(dt, vals, bvals), "a, b", ("BIN-5",)))
            # a masked-in zero divisor raises; masked-out ones never do
            out.append(Spec("masked_masked", "zero_divisor",
                            lambda g: (lambda m: [mk(g, (3, 4), dt, m),
                                                  masked(torch.where(
                                                      torch.arange(12).view(3, 4) == 5,
                                                      torch.zeros(3, 4, dtype=torch.int64),
                                                      torch.full((3, 4), 3)).to(dt), m)])(
                                torch.arange(12).view(3, 4) % 3 != 1),
                            "a, b", ("BIN-5",), "INVALID_ARGUMENT", first="ZeroDivisionError"))
            if c == "floor_divide":
                # a plain divisor's zero raises even under a masked-out
                # result element (torch computes every element)
                out.append(Spec("masked_dense", "zero_divisor_masked_out",
                                lambda g: [masked(torch.full((3, 4), 5, dtype=dt),
                                                  torch.arange(12).view(3, 4) != 5),
                                           torch.where(torch.arange(12).view(3, 4) == 5,
                                                       torch.zeros(3, 4, dtype=torch.int64),
                                                       torch.full((3, 4), 3)).to(dt)],
                                "m, t", ("BIN-5",), "INVALID_ARGUMENT",
                                first="ZeroDivisionError"))
                out.append(Spec("masked_scalar", "zero_divisor",
                                lambda g: [mk(g, (3, 4), dt), 0], "m, 0", ("BIN-5",),
                                "INVALID_ARGUMENT", first="ZeroDivisionError"))
    if token in ("i8", "i64") and c in ("shl", "shr"):
        # every value against amounts below 0, within and beyond the width
        bits = torch.iinfo(dt).bits
        amounts = (-1, 0, 1, bits - 1, bits, bits + 1, 100)
        # 0 too: shifted right past the width it stays 0, not -1 (tests/sweep)
        vals = (0, 1, -1, 5, -5, int(torch.iinfo(dt).min), int(torch.iinfo(dt).max))
        out.append(Spec("masked_masked", "amounts",
                        lambda g: nan_inf_pair(dt, vals, amounts), "a, b", ("BIN-6",)))
    return out


def extra_specs(name, o: Op):
    """Cases for one op and f32 only (kwargs)."""
    out = []
    if o.canon == "div" and name != "true_divide":
        out.append(Spec("masked_masked", "rounding_mode",
                        lambda g: (lambda m: [mk(g, (3, 4), torch.float32, m),
                                              mk(g, (3, 4), torch.float32, m)])(
                            rand_mask(g, (3, 4), 0.6)), "a, b, rounding_mode='floor'",
                        ("BIN-7",), "INVALID_ARGUMENT", kwargs={"rounding_mode": "floor"},
                        first="len(kwargs) must equal 0"))
    return out


def opinfo_specs(name, o: Op, dt, limit=3):
    """Up to 3 of torch's OpInfo samples, input masked with a random mask,
    a same-shaped tensor argument masked with the same mask, other tensors
    plain, numbers as they are."""
    ok, _ = accepts(o, dt)
    if not ok or not o.opinfo:
        return []
    try:
        if not opinfo.supports(o.opinfo, dt):
            return []
        got = opinfo.samples(o.opinfo, dt, crop=5, limit=8)
    except KeyError:
        return []
    fn = getattr(torch, name)
    out = []
    for src, s in got:
        if s.kwargs or len(s.args) != 1 or not isinstance(s.input, torch.Tensor):
            continue
        x, y = s.input, s.args[0]
        if x.ndim == 0 or x.dtype != dt:
            continue
        if isinstance(y, torch.Tensor) and (y.dtype != dt and y.ndim != 0):
            continue
        try:  # torch itself must take the plain sample (integer zero divisors)
            fn(x, y)
        except Exception:  # noqa: BLE001
            continue
        if isinstance(y, torch.Tensor) and y.shape == x.shape:
            layout, args = "masked_masked", "a, b"
        elif isinstance(y, torch.Tensor):
            layout, args = "masked_dense", "m, t"
        elif isinstance(y, (bool, int, float)):
            layout, args = "masked_scalar", f"m, {py(y)}"
        else:
            continue

        def build(g, x=x, y=y, layout=layout):
            m = opinfo.sample_mask(g, x)
            mx = poisoned_mt(x, m)
            if layout == "masked_masked":
                # the second operand keeps the sample's masked-out values
                # (nonzero integer divisors: torch ran the sample whole)
                return [mx, masked(y.clone(), m)]
            return [mx, y]
        k = len(out)
        out.append(Spec(layout, f"opinfo_{k}", build, args, source=src))
        if len(out) >= limit:
            break
    return out


# ops that carry every layout and shape case (the loop is shared: one op
# per kind of kernel is enough)
FULL_LAYOUT = ("add", "floor_divide", "bitwise_and", "eq")
# promotion cases (BIN-2) for these ops; the others share the code
PROMOTE = ("add", "div", "atan2", "lt", "bitwise_or", "remainder", "sub", "maximum")
# add has every promotion row, the others these
PROMOTE_SOME = ("promote_float_number", "promote_int_number", "promote_i32_tensor")


def full_cases():
    out = []
    for name, o in ALL_OPS.items():
        alias = name in ALIASES
        first = first_dtype(o)
        if alias:  # one case per dtype (see ALIASES)
            for token in MASKED_DTYPES:
                dt = ALL_DTYPES[token]
                # small shapes beyond the first dtype (golden file size)
                shape = (3, 4) if token == first else SMALL
                specs = ([basic_spec(name, o, dt, shape)] if accepts(o, dt)[0] else
                         refused_specs(name, o, dt, SMALL))
                out += [make_case(name, o, token, s) for s in specs]
            continue
        for token in MASKED_DTYPES:
            dt = ALL_DTYPES[token]
            ok, _ = accepts(o, dt)
            if not ok:  # one refusal per refused dtype
                for s in refused_specs(name, o, dt, SMALL):
                    out.append(make_case(name, o, token, s))
                continue
            specs = []
            first_slice = name in OPS and token in ("f32", "f64")
            samples = opinfo_specs(name, o, dt, 1)
            if not samples and not first_slice:
                specs.append(basic_spec(name, o, dt))
            specs += samples
            if token == first:
                specs += [s for s in layout_specs(name, o, dt, name in FULL_LAYOUT)
                          if not (first_slice and s.variant == "basic")]
                if name in FULL_LAYOUT:
                    specs += [s for s in first_only_specs(name, o, dt)
                              if not (first_slice and s.variant == "mask_mismatch")]
            specs += corner_specs(name, o, dt, token)
            if token == "f32":
                specs += extra_specs(name, o)
            if token == "f16" and name in ("add", "mul", "div", "floor_divide", "remainder"):
                # BIN-2/MASK-7: add and remainder round the number to
                # float16 first; mul, div and floor_divide take it in float
                specs.append(Spec("masked_scalar", "scalar_0_1",
                                  lambda g: [masked(log_uniform(g, (4, 4), torch.float16, -1, 1),
                                                    rand_mask(g, (4, 4), 0.75)), 0.1],
                                  "m, 0.1", ("BIN-2",)))
            for s in specs:
                out.append(make_case(name, o, token, s))
        if name in PROMOTE:
            for token, s in promotion_specs(name, o):
                if name != "add" and s.variant not in PROMOTE_SOME:
                    continue
                out.append(make_case(name, o, token, s))
    return out


def make_case(name, o: Op, token, s: Spec):
    dt = ALL_DTYPES[token]
    tol = s.tolerance or ("exact" if o.result == "bool" else o.tolerance)
    if not dt.is_floating_point and o.result == "same":
        tol = "exact"
    if tol == TRANS:
        rdt = dt if dt.is_floating_point else torch.float32
        tol = TRANS_TOL[o.canon][rdt]
    rules = tuple(dict.fromkeys(layout_rule(s.layout) + o.rules + s.rules))
    if s.variant in ("mask_mismatch",) or s.variant.startswith("mask_and"):
        rules = tuple(r for r in rules if r != "MASK-6") 
    if s.error_class:
        rules = tuple(r for r in rules if r not in ("MASK-6",))
    args = s.args  # kwargs are written into args
    return Case(id=f"{name}.{s.layout}.{token}.{s.variant}", op=name, rules=rules,
                tolerance=tol, build=s.build, run=run_fn(name), kwargs=dict(s.kwargs),
                torch_call=f"torch.{name}({args})", error_class=s.error_class,
                check=s.check, error_match=s.first, source=s.source,
                poison=dt in (torch.float32, torch.float64))


# ---------------------------------------------------------------------------
# In-place variants (BIN-10): MaskedTensor's INPLACE_BINARY_NAMES. torch_call
# `a.add_(b)`; the output is the updated self (mtcs never writes an input).

INPLACE = ("add sub subtract mul multiply div divide true_divide atan2 arctan2 bitwise_and "
           "bitwise_or bitwise_xor bitwise_left_shift bitwise_right_shift floor_divide fmod "
           "remainder nextafter eq ne not_equal le less_equal ge greater_equal gt greater lt "
           "less").split()


def run_inplace(name):
    return lambda ins, kw: [getattr(ins[0], name)(ins[1], **kw)]


# in-place refusals of inplace_cases' own rows (not repeated per dtype)
CAST_REFUSAL_CASES = {("div", "i32")}


@functools.lru_cache(maxsize=None)
def inplace_takes(name, dt):
    """Whether torch's m.<name>_(t) takes a masked m and a plain t of dtype dt."""
    m = masked(torch.ones(2, dtype=dt), torch.tensor([True, False]))
    try:
        getattr(m, name + "_")(torch.ones(2, dtype=dt))
    except (RuntimeError, NotImplementedError, TypeError, ValueError):
        return False
    return True


def uint8_cases():
    """BIN-2: a uint8 result cannot be a MaskedTensor (bool m + uint8 t);
    a comparison's bool result can."""
    def build(g):
        return [mk(g, (3, 4), torch.bool), values(g, (3, 4), torch.uint8)]
    out = []
    for name, err in (("add", "DTYPE_MISMATCH"), ("eq", None)):
        o = ALL_OPS[name]
        out.append(Case(id=f"{name}.masked_dense.bool.uint8_tensor", op=name,
                        rules=tuple(dict.fromkeys(("MASK-7", "BIN-2") + o.rules)),
                        tolerance="exact", build=build, run=run_fn(name),
                        torch_call=f"torch.{name}(m, t)", error_class=err,
                        error_match="not supported in MaskedTensor" if err else None,
                        poison=False))
    return out


def inplace_cases():
    out = []
    f32, i32, i8 = torch.float32, torch.int32, torch.int8

    def pair(dt, dt_b=None, **rhs):
        return lambda g: (lambda m: [mk(g, (3, 4), dt, m), mk(g, (3, 4), dt_b or dt, m, **rhs)])(
            rand_mask(g, (3, 4), 0.6))

    def add(name, token, variant, build, args, rules=(), error=None, first=None, tol=None):
        o = ALL_OPS[name]
        dt = ALL_DTYPES[token]
        t = tol or ("exact" if o.result == "bool" or o.tolerance != TRANS or error else
                    TRANS_TOL[o.canon][dt])
        out.append(Case(id=f"{name}_.{variant.split(':')[0]}.{token}.{variant.split(':')[1]}",
                        op=name + "_", rules=tuple(dict.fromkeys(("BIN-10",) + rules)),
                        tolerance=t, build=build, run=run_inplace(name + "_"),
                        torch_call=f"{args.split(',')[0]}.{name}_({args.split(', ', 1)[1]})",
                        error_class=error, error_match=first,
                        poison=dt in (torch.float32, torch.float64)))
    def mixed(dt, **rhs):
        return lambda g: [mk(g, SMALL, dt), values(g, SMALL, dt, **rhs)]

    for name in INPLACE:
        o = ALL_OPS[name]
        first = first_dtype(o)
        for token in MASKED_DTYPES:
            dt = ALL_DTYPES[token]
            rhs = dict(nonzero=o.canon in INT_DIV and not dt.is_floating_point,
                       small=o.canon in ("shl", "shr"))
            if token == first:
                add(name, token, "masked_masked:basic", pair(dt, **rhs), "a, b", ("MASK-6",))
            # every other dtype: m.<op>_(t) with a plain t (three HDF5
            # objects fewer than a second MaskedTensor: golden file size)
            elif inplace_takes(name, dt):
                add(name, token, "masked_dense:basic", mixed(dt, **rhs), "m, t", ("MASK-7",))
            elif not accepts(o, dt)[0] or (o.canon == "sub" and dt == torch.bool):
                # torch refuses the dtype out of place too
                add(name, token, "masked_dense:dtype_refused", mixed(dt, **rhs), "m, t",
                    ("MASK-7", "BIN-3"), "DTYPE_MISMATCH")
            elif (name, token) not in CAST_REFUSAL_CASES:
                # the result (float) cannot be cast back to self's dtype
                add(name, token, "masked_dense:result_not_castable", mixed(dt, **rhs), "m, t",
                    ("MASK-7",), "DTYPE_MISMATCH", "can't be cast to the desired output type")
    # the result is cast to self's dtype: comparisons keep it (1.0/0.0),
    # int8 += int32 wraps to int8, float32 -= float64 rounds once
    add("add", "i8", "masked_dense:cast_to_self",
        lambda g: [mk(g, (3, 4), i8), values(g, (3, 4), i32) * 10], "m, t", ("MASK-7",))
    add("sub", "f32", "masked_masked:cast_to_self", pair(f32, torch.float64), "a, b",
        ("MASK-6",))
    # refusals: a result self's dtype cannot hold, a broadcast beyond self's
    # shape, a plain tensor as self
    add("add", "i32", "masked_scalar:result_not_castable",
        lambda g: [mk(g, (3, 4), i32), 2.5], "m, 2.5", ("MASK-7",), "DTYPE_MISMATCH",
        "can't be cast to the desired output type")
    add("div", "i32", "masked_masked:result_not_castable", pair(i32, nonzero=True), "a, b",
        (), "DTYPE_MISMATCH", "can't be cast to the desired output type")
    add("add", "f32", "masked_dense:broadcast_beyond_self",
        lambda g: [mk(g, (3, 4), f32), values(g, (2, 3, 4), f32)], "m, t", ("MASK-7", "BIN-1"),
        "SHAPE_MISMATCH", "doesn't match the broadcast shape")
    add("add", "f32", "dense_masked:plain_self",
        lambda g: [values(g, (3, 4), f32), mk(g, (3, 4), f32)], "t, m", ("MASK-7",),
        "INVALID_ARGUMENT", "_set_data_mask")
    return out


# ---------------------------------------------------------------------------
# Sparse storage (SP-2): every op of the family once on two COO-storage and
# once on two CSR-storage masked tensors of one structure and one mask
# (torch maps the stored values; its refusals recorded), and, for add, the
# other operands a sparse masked tensor meets.

SP_RULE = "SP-2"
SP_OPS = ("add", "add_")  # the ops whose cases carry SP-2 (ops.def lists it)


def sparse_pair(layout, dt, o: Op, mask_values=sparse.MASK_VALUES, **corner):
    rhs = dict(nonzero=o.canon in INT_DIV and not dt.is_floating_point,
               small=o.canon in ("shl", "shr"))
    make_one = sparse.LAYOUTS[layout]
    return lambda g: [make_one(g, dt, **corner), make_one(g, dt, mask_values=mask_values,
                                                          **corner, **rhs)]


def sparse_case(name, layout, token, variant, build, args, extra_rules=()):
    inplace = name.endswith("_")
    o = ALL_OPS[name.rstrip("_")]
    dt = ALL_DTYPES[token]
    run = run_inplace(name) if inplace else run_fn(name)
    cid = f"{name}.{layout}.{token}.{variant}"
    err = sparse.outcome(cid, build, run)
    tol = "exact" if o.result == "bool" or err else o.tolerance
    if tol == TRANS:
        tol = TRANS_TOL[o.canon][dt if dt.is_floating_point else torch.float32]
    # the op's own rules (its globs in SEMANTICS.md name every case of it),
    # those ops.def lists for it
    listed = sparse.family_ops("binary")[name]
    rules = (listed[0],) + o.rules + ("BIN-10",) * inplace + extra_rules
    if name in SP_OPS:
        rules += (SP_RULE,)
    rules = tuple(r for r in rules if r in listed)
    a, b = args.split(", ")
    call = f"{a}.{name}({b})" if inplace else f"torch.{name}({args})"
    return Case(id=cid, op=name, rules=tuple(dict.fromkeys(rules)), tolerance=tol, build=build,
                run=run, torch_call=call, error_class=err,
                poison=dt in (torch.float32, torch.float64))


def sparse_cases():
    out = []
    for name in sparse.family_ops("binary"):
        if name.rstrip("_") in ALIASES:
            continue  # the kernel of another op (golden file size; LAYOUT_GAPS)
        o = ALL_OPS[name.rstrip("_")]
        token = first_dtype(o)
        dt = ALL_DTYPES[token]
        for layout in ("coo", "csr"):
            out.append(sparse_case(name, f"{layout}_{layout}", token, "stored",
                                   sparse_pair(layout, dt, o), "a, b"))
    f32 = torch.float32
    add = ALL_OPS["add"]
    for layout in ("coo", "csr"):
        one = sparse.LAYOUTS[layout]
        rows = [
            # a number, a plain sparse tensor of the same structure (its
            # values), a 0-d tensor: the op on the stored values
            (f"{layout}_scalar", "number", lambda g, one=one: [one(g, f32), 2.5], "m, 2.5"),
            (f"{layout}_{layout}plain", "same_structure",
             lambda g, one=one: [one(g, f32), one(g, f32).get_data()], "m, t"),
            (f"{layout}_dense", "zero_dim", lambda g, one=one: [one(g, f32), torch.tensor(1.5)],
             "m, t"),
            # a dense tensor of the full shape meets the stored values
            # (5,) and cannot broadcast; a dense-storage masked tensor is
            # another layout
            (f"{layout}_dense", "full_shape",
             lambda g, one=one: [one(g, f32), torch.ones(3, 4)], "m, t"),
            # a plain dense tensor first: the dense result, then m's sparse
            # mask expanded to it (refused)
            (f"dense_{layout}", "full_shape",
             lambda g, one=one: [torch.ones(3, 4), one(g, f32)], "t, m"),
            # nothing stored: a dense tensor of 0 elements meets the 0 values
            (f"{layout}_dense", "empty_other_0",
             lambda g, lay=layout: [sparse.empty(lay)(g, f32), torch.zeros(0)], "m, t"),
            (f"{layout}_masked", "dense_storage",
             lambda g, one=one: (lambda m: [m, masked(torch.ones(3, 4), m.get_mask().to_dense())])(
                 one(g, f32)), "a, b"),
            (f"masked_{layout}", "dense_storage",
             lambda g, one=one: (lambda m: [masked(torch.ones(3, 4), m.get_mask().to_dense()), m])(
                 one(g, f32)), "a, b"),
            # masks of one structure, other values: Input masks must match
            (f"{layout}_{layout}", "mask_values_differ",
             sparse_pair(layout, f32, add, mask_values=(True, True, True, True, False)), "a, b"),
        ]
        # other structures: torch compares the stored arrays with torch.eq,
        # so another nnz is a shape error, the same nnz a difference
        moved = ((0, 0, 1, 2, 2), (0, 2, 1, 0, 2))
        rows += [
            (f"{layout}_{layout}plain", "other_nnz",
             lambda g, one=one, lay=layout: [one(g, f32), sparse.no_last_col(lay)(g, f32)
                                             .get_data()], "m, t"),
            (f"{layout}_{layout}plain", "other_indices",
             lambda g, one=one: [one(g, f32), one(g, f32, indices=moved).get_data()], "m, t"),
            (f"{layout}_{layout}", "mask_other_nnz",
             lambda g, one=one, lay=layout: [one(g, f32), sparse.no_last_col(lay)(g, f32)],
             "a, b"),
            (f"{layout}_{layout}", "mask_other_indices",
             lambda g, one=one: [one(g, f32), one(g, f32, indices=moved)], "a, b"),
        ]
        # a NaN stored under a false mask value: computed (masked out), never
        # seen (the case keeps it: no generator poison)
        rows.append((f"{layout}_{layout}", "masked_out_nan",
                     lambda g, one=one: [one(g, f32, vals=(0.5, math.nan, -1.25, 2.0, 3.0)),
                                         one(g, f32)], "a, b"))
        for variant, corner in sparse.CORNERS:
            rows.append((f"{layout}_{layout}", variant,
                         lambda g, c=corner(layout): [c(g, f32), c(g, f32)], "a, b"))
        for lay, variant, build, args in rows:
            out.append(sparse_case("add", lay, "f32", variant, build, args))
            if variant in ("number", "full_shape", "dense_storage") and lay.startswith(layout):
                out.append(sparse_case("add_", lay, "f32", variant, build, args))
    return out


def f64_division_cases():
    """floor_divide, fmod and remainder in float64 (float32 has its own
    loop) by divisors in (0, 1) and of both signs: floor division moves the
    quotient down when the remainder's sign differs from the divisor's, and
    a divisor in (0, 1) is positive (tests/sweep: a mutant of the float64
    path that read `b < 1` for `b < 0` survived). After every other case,
    so that the poisons the earlier ones cycle through stay theirs."""
    vals = (5.0, -5.0, 6.0, -6.0, 1.0, -1.0, 7.5, 1e-300, -1e-300)
    divs = (3.0, -3.0, 0.5, 0.3, -0.3)
    return [make_case(c, ALL_OPS[c], "f64",
                      Spec("masked_masked", "signs_below_1",
                           lambda g: nan_inf_pair(torch.float64, vals, divs), "a, b",
                           ("BIN-5",)))
            for c in INT_DIV]


def cases():
    return check_ids(first_slice_cases() + full_cases() + uint8_cases() + inplace_cases()
                     + sparse_cases() + binary_sparse.cases() + f64_division_cases())

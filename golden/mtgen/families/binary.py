"""Family binary: add sub mul div (MASK-6, MASK-7, MASK-8)."""
import functools
import math
from typing import Callable, NamedTuple

import numpy as np
import torch

from ..inputs import (expect_neg_zero, log_uniform, masked, rand_mask, rand_masked, randn,
                      signed_zero_pairs, signed_zeros)
from ..model import DTYPES, Case, Surprise, check_ids, py


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
]
# MASK-7: numbers float32 cannot represent, each with the rounding check
BINARY_CASES += [
    Row("masked_scalar", variant,
        lambda g, dt, op, s=s: [scalar_input(g, dt, s, op), s], f"m, {py(s)}", ("MASK-7",),
        check=lambda op, s=s: float32_not_double(op, s))
    for variant, s in UNREPRESENTABLE.items()]


def cases():
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
    return check_ids(out)

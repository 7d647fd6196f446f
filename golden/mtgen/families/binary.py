"""Family binary: add sub mul div (MASK-6, MASK-7, MASK-8)."""
import functools
import math

import numpy as np
import torch

from ..inputs import (expect_neg_zero, log_uniform, masked, rand_mask, rand_masked, randn,
                      signed_zero_pairs, signed_zeros)
from ..model import DTYPES, Case, Surprise, check_ids, py

# op -> (tolerance, numpy ufunc: the same op computed in one dtype)
OPS = {"add": ("exact", np.add), "sub": ("exact", np.subtract),
       "mul": ("exact", np.multiply), "div": ("exact", np.divide)}

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


# masked_scalar.signed_zeros: a number that gives -0.0 from a signed zero:
# -0 + -0, -0 - +0, +0 * -0, 0 / -2
SIGNED_SCALAR = {"add": -0.0, "sub": 0.0, "mul": -0.0, "div": -2.0}


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
    ufunc = OPS[op][1]

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


# (layout token, variant, build(g, dt), torch_call args, rules, error_class,
#  ops (None: all), check, first check torch makes (error substring))
BINARY_CASES = [
    ("masked_masked", "basic", same_mask_pair, "a, b", ("MASK-6",), None, None, None, None),
    ("masked_dense", "basic",
     lambda g, dt: [rand_masked(g, (3, 4), dt), randn(g, (3, 4), dt)],
     "m, t", ("MASK-7",), None, None, None, None),
    ("dense_masked", "basic",
     lambda g, dt: [randn(g, (3, 4), dt), rand_masked(g, (3, 4), dt)],
     "t, m", ("MASK-7",), None, None, None, None),
    ("masked_scalar", "basic", lambda g, dt: [rand_masked(g, (3, 4), dt), SCALAR],
     f"m, {py(SCALAR)}", ("MASK-7",), None, None, None, None),
    ("masked_masked", "mask_mismatch", other_mask_pair, "a, b", ("MASK-8",),
     "MASK_MISMATCH", None, None, None),
    ("masked_masked", "divisor_zeros",
     lambda g, dt: same_mask_pair(g, dt, DIV_ZEROS_A, DIV_ZEROS_B),
     "a, b", ("MASK-6",), None, ("div",), None, None),
    # signed zeros: -0 + -0 = -0, -0 - +0 = -0, -2 * 0 = -0, 0 / -2 = -0
    ("masked_masked", "signed_zeros", zeros_pair, "a, b", ("MASK-6",), None, None,
     expect_neg_zero, None),
    ("masked_dense", "signed_zeros", zeros_dense, "m, t", ("MASK-7",), None, None,
     expect_neg_zero, None),
    ("masked_scalar", "signed_zeros", None, "m, {s}", ("MASK-7",), None, None,
     expect_neg_zero, None),
    # MASK-8 first: the masks are compared before anything else. Masks of
    # equal ndim are compared with torch.eq, which raises when the shapes
    # cannot broadcast (SHAPE_MISMATCH); other ndims, other dtypes: masks
    # differ.
    ("masked_masked", "mask_and_shape_mismatch",
     functools.partial(other_mask_pair, shape_b=(3, 5)), "a, b", ("MASK-8",),
     "SHAPE_MISMATCH", None, None, "must match the size of tensor b"),
    ("masked_masked", "mask_and_ndim_mismatch",
     functools.partial(other_mask_pair, shape_b=(4,)), "a, b", ("MASK-8",),
     "MASK_MISMATCH", None, None, "Input masks must match"),
    ("masked_masked", "mask_and_dtype_mismatch",
     lambda g, dt: other_mask_pair(g, dt, dt_b=other_dtype(dt)), "a, b", ("MASK-8",),
     "MASK_MISMATCH", None, None, "Input masks must match"),
]
BINARY_CASES += [
    ("masked_scalar", variant, None, f"m, {py(s)}",
     ("MASK-7",), None, None, ("scalar", s), None)
    for variant, s in UNREPRESENTABLE.items()]


def cases():
    out = []
    for short, dt in DTYPES.items():
        for op, (tol, _) in OPS.items():
            fn = getattr(torch, op)
            for layout, variant, build, args, rules, err, only, check, first in BINARY_CASES:
                if only and op not in only:
                    continue
                if isinstance(check, tuple):  # ("scalar", s): the MASK-7 rounding check
                    check = float32_not_double(op, check[1])
                if build is None and variant in UNREPRESENTABLE:
                    s = UNREPRESENTABLE[variant]
                    build = lambda g, dt, s=s, op=op: [scalar_input(g, dt, s, op), s]  # noqa
                elif build is None:  # masked_scalar.signed_zeros: the op's own number
                    s = SIGNED_SCALAR[op]
                    build = lambda g, dt, s=s: [signed_zeros(g, (3, 4), dt, ZEROS), s]  # noqa
                    args = args.format(s=py(s))
                out.append(Case(
                    id=f"{op}.{layout}.{short}.{variant}", op=op, rules=rules,
                    tolerance=tol, build=functools.partial(build, dt=dt),
                    run=lambda ins, kw, fn=fn: [fn(ins[0], ins[1])],
                    torch_call=f"torch.{op}({args})", error_class=err, check=check,
                    error_match=first))
    return check_ids(out)

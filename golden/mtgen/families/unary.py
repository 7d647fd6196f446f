"""Family unary: neg abs exp log sqrt pow (MASK-4, MASK-5)."""
import torch

from ..inputs import expect_neg_zero, rand_masked, signed_zeros
from ..model import DTYPES, Case, check_ids, py

# op -> tolerance: float32 is computed in float (expf, logf...), so the
# transcendental ops get 2 ulp; neg/abs are exact.
OPS = {"neg": "exact", "abs": "exact", "exp": "ulp:2", "log": "ulp:2", "sqrt": "ulp:2",
       "pow": "ulp:2"}

EDGE_LOG = {(0, 0): 0.0, (1, 1): -0.0, (2, 2): -1.5, (0, 3): 1e-3}
EDGE_SQRT = {(0, 0): -2.0, (1, 1): -0.0, (2, 2): 0.0}
ZEROS = (-0.0, 0.0, 2.25, 4.0)  # signed zeros and exact squares


def basic(g, dt):
    return rand_masked(g, (3, 4), dt)


def zeros(g, dt):
    return signed_zeros(g, (3, 4), dt, ZEROS)


# (op, variant, build(g, dt), extra rules, check)
UNARY_CASES = [
    ("neg", "basic", basic, (), None),
    ("abs", "basic", basic, (), None),
    ("exp", "basic", basic, (), None),
    ("log", "basic", lambda g, dt: rand_masked(g, (3, 4), dt, lo=0.1, hi=3.0), (), None),
    ("sqrt", "basic", lambda g, dt: rand_masked(g, (3, 4), dt, lo=0.0, hi=3.0), (), None),
    ("log", "zeros_negatives",
     lambda g, dt: rand_masked(g, (3, 4), dt, lo=0.1, hi=3.0, force=EDGE_LOG), ("MASK-5",), None),
    ("sqrt", "negatives", lambda g, dt: rand_masked(g, (3, 4), dt, force=EDGE_SQRT),
     ("MASK-5",), None),
    ("neg", "fully_masked", lambda g, dt: rand_masked(g, (3, 4), dt, p_true=0.0), (), None),
    ("exp", "fully_masked", lambda g, dt: rand_masked(g, (3, 4), dt, p_true=0.0), (), None),
    ("neg", "zero_size", lambda g, dt: rand_masked(g, (0, 4), dt), (), None),
    ("exp", "zero_size", lambda g, dt: rand_masked(g, (0, 4), dt), (), None),
    # signed zeros: neg(+0) = -0, abs(-0) = +0, sqrt(-0) = -0
    ("neg", "signed_zeros", zeros, (), expect_neg_zero),
    ("abs", "signed_zeros", zeros, (), None),
    ("sqrt", "signed_zeros", zeros, (), expect_neg_zero),
]

# variant: (exponent, build(g, dt), check)
POW_CASES = {
    "exponent_2": (2, basic, None),
    "exponent_0_5": (0.5, basic, None),
    "exponent_m1": (-1, basic, None),
    "exponent_3": (3, basic, None),
    # (-0)^3 = -0, (-0)^2 = +0, (-0)^0.5 = -0 (torch: sqrt), (-0)^-1 = -inf
    "signed_zeros_exponent_3": (3, zeros, expect_neg_zero),
    "signed_zeros_exponent_2": (2, zeros, None),
    "signed_zeros_exponent_0_5": (0.5, zeros, expect_neg_zero),
    "signed_zeros_exponent_m1": (-1, zeros, None),
}


def abs_check(ins, outs):
    """abs(-0.0) is +0.0: no -0.0 survives."""
    from ..inputs import neg_zeros
    from ..model import Surprise
    if neg_zeros(outs[0]) or not neg_zeros(ins[0]):
        raise Surprise("abs.signed_zeros: expected -0.0 inputs and no -0.0 output")


def cases():
    out = []
    for short, dt in DTYPES.items():
        for op, variant, build, extra, check in UNARY_CASES:
            fn = getattr(torch, op)
            if op == "abs" and variant == "signed_zeros":
                check = abs_check
            out.append(Case(
                id=f"{op}.masked.{short}.{variant}", op=op, rules=("MASK-4",) + extra,
                tolerance=OPS[op], build=lambda g, b=build, dt=dt: [b(g, dt)],
                run=lambda ins, kw, fn=fn: [fn(ins[0])], torch_call=f"torch.{op}(m)",
                check=check))
        for variant, (e, build, check) in POW_CASES.items():
            out.append(Case(
                id=f"pow.masked_scalar.{short}.{variant}", op="pow", rules=("MASK-4",),
                tolerance=OPS["pow"], build=lambda g, dt=dt, e=e, b=build: [b(g, dt), e],
                run=lambda ins, kw: [torch.pow(ins[0], ins[1])],
                torch_call=f"torch.pow(m, {py(e)})", check=check))
    return check_ids(out)

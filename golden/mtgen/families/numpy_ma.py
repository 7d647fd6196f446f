"""Family numpy_ma: the numpy_ma profile (spec/SEMANTICS.md, "The numpy_ma
profile", NPMA-1..7). The ops of ops.def with numpy.ma's rules instead of
torch's: every expected output is numpy.ma's own result.

Each case's inputs are torch tensors and NpMasked pairs (a data tensor and a
bool mask, mtcs's convention: true = specified); `run` converts them to
np.ma arrays (numpy's mask = the logical not of ours), calls numpy.ma (the
case's torch_call attribute holds that numpy line) and converts the result
back:
  - a MaskedArray          -> a masked output (data as numpy.ma left it,
                              mask = not numpy's mask);
  - a numpy scalar         -> a 0-d masked output, specified (an all-reduce
                              that had something to reduce);
  - np.ma.masked           -> a 0-d masked output, masked out, data 0 (the
                              masked constant's data) in the dtype numpy
                              gives the same reduction when nothing is
                              masked;
  - a plain ndarray        -> a plain dense tensor (m.filled(value)).
Case ids are `<op>.<layouts>.<dtype>.npma_<variant>`, profile numpy_ma.
NpMasked instead of torch's MaskedTensor: torch.masked refuses uint8 data,
numpy.ma does not.
"""
import math
import warnings

import numpy as np
import numpy.ma as ma
import torch

from .. import opinfo
from ..model import ALL_DTYPES, DTYPE_NAMES, Case, Surprise, check_ids, py
from ..tolerance import within

TORCH_OF = {np.dtype(n): t for t, n in DTYPE_NAMES.items() if t != torch.bfloat16}  # numpy: none
warnings.filterwarnings("ignore", category=RuntimeWarning)  # numpy.ma's overflow/invalid
FLOATS = ("f16", "f32", "f64")
INTS = ("i64", "i32", "i8", "u8")
# every variant in these dtypes; the others get the main ones (file size)
FULL = ("f32", "f64")


class NpMasked:
    """A masked tensor of any dtype: data and a bool mask (true = specified)."""

    def __init__(self, data, mask):
        assert data.shape == mask.shape and mask.dtype == torch.bool
        self.data, self.mask = data, mask

    def get_data(self):
        return self.data

    def get_mask(self):
        return self.mask

    def poisoned(self, value):
        d = self.data.clone()
        d[~self.mask] = poison_value(value, d.dtype)
        return NpMasked(d, self.mask.clone())


def poison_value(v, dt):
    """The op's poison in dtype dt: floats as they are (float16: ±1e30 is
    ±inf), integers the end of their range on v's side (NaN: the top)."""
    if dt == torch.float16 and math.isfinite(v) and abs(v) > 65504:
        return math.copysign(math.inf, v)
    if dt.is_floating_point:
        return v
    if dt == torch.bool:
        return True
    info = torch.iinfo(dt)
    return info.min if v < 0 else (0 if v == 0 else info.max)


# ---- conversions -----------------------------------------------------------------

def to_np(x):
    if isinstance(x, NpMasked):
        return ma.masked_array(x.data.numpy().copy(), mask=~x.mask.numpy())
    if isinstance(x, torch.Tensor):
        return x.numpy().copy()
    return x  # a Python number


def tensor(a):
    a = np.asarray(a)
    if a.dtype not in TORCH_OF:
        raise Surprise(f"numpy.ma returned dtype {a.dtype}, which mtcs has no name for")
    return torch.from_numpy(a.copy())


def from_np(r, dtype=None):
    """numpy.ma's result as an mtcs output (see the module docstring);
    dtype: the result's dtype where numpy.ma returns np.ma.masked."""
    if r is ma.masked:
        return NpMasked(torch.zeros((), dtype=TORCH_OF[np.dtype(dtype)]), torch.tensor(False))
    if isinstance(r, ma.MaskedArray):
        return NpMasked(tensor(r.data), torch.from_numpy(~ma.getmaskarray(r)))
    if isinstance(r, np.generic):
        return NpMasked(tensor(r), torch.tensor(True))
    if isinstance(r, np.ndarray):
        return tensor(r)
    raise Surprise(f"numpy.ma returned {type(r).__name__}")


# ---- inputs ------------------------------------------------------------------------

def rand_data(g, shape, short, lo=None, hi=None):
    dt = ALL_DTYPES[short]
    if short == "bool":
        return torch.rand(shape, generator=g) < 0.5
    if short in INTS:
        lo = -9 if lo is None else lo
        lo = max(lo, 0) if short == "u8" else lo
        hi = 10 if hi is None else hi
        return torch.randint(int(lo), int(hi), shape, generator=g).to(dt)
    if lo is None:
        return (torch.randn(shape, generator=g, dtype=torch.float64) * 2).to(dt)
    return (torch.rand(shape, generator=g, dtype=torch.float64) * (hi - lo) + lo).to(dt)


def rand_mask(g, shape, p_true=0.6):
    return torch.rand(shape, generator=g) < p_true


def rand_m(g, shape, short, p_true=0.6, lo=None, hi=None, force=None):
    data, mask = rand_data(g, shape, short, lo, hi), rand_mask(g, shape, p_true)
    for idx, v in (force or {}).items():
        data[idx], mask[idx] = v, True
    return NpMasked(data, mask)


def fixed_m(data, mask, short):
    return NpMasked(torch.tensor(data, dtype=ALL_DTYPES[short]),
                    torch.tensor(mask, dtype=torch.bool))


# ---- rules ---------------------------------------------------------------------

def with_fills(rules, outputs):
    """NPMA-7 where some masked output has a masked-out element (its data is
    compared at level strict: check_masked_out)."""
    for o in outputs:
        if isinstance(o, NpMasked) and o.mask.numel() and not bool(o.mask.all()):
            return rules + ("NPMA-7",) if "NPMA-7" not in rules else rules
    return rules


def f32_headroom(case_tol, run, to64):
    """Check: each float32 output is within half of the tolerance of the
    same numpy.ma call on float64 inputs (rounded to float32)."""
    def check(ins, outs):
        if case_tol == "exact":
            return
        ref = run([to64(x) for x in ins], {})
        for o, w in zip(outs, ref):
            od = o.data if isinstance(o, NpMasked) else o
            if od.dtype != torch.float32:
                continue
            wd = (w.data if isinstance(w, NpMasked) else w).to(torch.float32).numpy()
            sel = o.mask.numpy() if isinstance(o, NpMasked) else np.ones(od.shape, bool)
            if not within(od.numpy()[sel], wd[sel], case_tol, 0.5).all():
                raise Surprise(f"float32 output not within half of {case_tol} of float64")
    return check


def to64(x):
    if isinstance(x, NpMasked) and x.data.dtype == torch.float32:
        return NpMasked(x.data.double(), x.mask)
    if isinstance(x, torch.Tensor) and x.dtype == torch.float32:
        return x.double()
    return x


# ---- ops -----------------------------------------------------------------------

def tol_transcendental(short):
    # numpy's float32/float64 exp and log are SIMD implementations, not
    # correctly rounded: ulp:1 fails the float32 check against float64 (half
    # the tolerance: exp.masked.f32.npma_basic, log.masked.f32.npma_domain),
    # ulp:2 holds; float16 goes through float32 and rounds once. Integers
    # become float16/float64 first. pow's results are float64 (C's pow).
    return "ulp:2"


def tol_reduce(short, op):
    if short in INTS or short == "bool" or op in ("amin", "amax"):
        return "exact"
    # numpy sums float32 pairwise in float32 (along an outer axis: one
    # rounding per step, float16 too); the reference sums in double and
    # rounds once
    return {"f16": "abs:1e-2", "f32": "abs:1e-5", "f64": "abs:1e-12"}[short]


UNARY = {  # op -> (numpy function, tolerance(short))
    "neg": (ma.negative, lambda s: "exact"),
    "abs": (ma.absolute, lambda s: "exact"),
    "exp": (ma.exp, tol_transcendental),
    "log": (ma.log, tol_transcendental),
    "sqrt": (ma.sqrt, lambda s: "exact"),  # correctly rounded (float16 via float32: innocuous)
}
BINARY = {"add": ma.add, "sub": ma.subtract, "mul": ma.multiply, "div": ma.divide}
NP_NAME = {"neg": "negative", "abs": "absolute", "exp": "exp", "log": "log", "sqrt": "sqrt",
           "add": "add", "sub": "subtract", "mul": "multiply", "div": "divide",
           "sum": "sum", "mean": "mean", "prod": "prod", "amin": "min", "amax": "max"}

U_RULES = {"neg": ("NPMA-4",), "abs": ("NPMA-4",), "exp": ("NPMA-4",),
           "log": ("NPMA-3", "NPMA-4"), "sqrt": ("NPMA-3", "NPMA-4")}


# NPMA-8: the other unary ufuncs of np.ma. op -> (np.ma name, tolerance,
# basic input range for floats or None, domain edges or None); each alias
# (asin for arcsin, ...) gets one case.
def tol_exact(short):
    return "exact"


EDGE_LOG = {(0, 0): 0.0, (1, 1): -0.0, (2, 2): -1.5, (0, 3): math.inf, (1, 3): math.nan}
EDGE_UNIT = {(0, 0): 1.0, (1, 1): -1.0, (2, 2): 1.5, (0, 3): -2.0, (1, 3): math.nan,
             (2, 0): math.inf}
EDGE_ACOSH = {(0, 0): 1.0, (1, 1): 0.5, (2, 2): -1.0, (0, 3): math.inf, (1, 3): math.nan,
              (2, 0): 0.0}
# arctanh: numpy.ma's bounds are -1 + 1e-15 and 1 - 1e-15 in the data dtype:
# 0.9999999999999995 is masked in float64, 0.99999994 is not in float32
EDGE_ATANH = {(0, 0): 1.0, (1, 1): -1.0, (2, 2): 0.9999999999999995, (0, 3): 0.99999994,
              (1, 3): 2.0, (2, 1): -0.9999999999999995, (2, 0): 0.0}
EDGE_TAN = {(0, 0): math.pi / 2, (1, 1): math.inf, (2, 2): math.nan, (0, 3): -math.pi / 2}
# the undomained ones: nothing is masked, not even inf or NaN results
EDGE_NONFINITE = {(0, 0): math.inf, (1, 1): -math.inf, (2, 2): math.nan, (0, 3): 1000.0,
                  (1, 3): -0.0}
UNARY8 = {
    "log2": ("log2", tol_transcendental, (0.1, 3.0), EDGE_LOG),
    "log10": ("log10", tol_transcendental, (0.1, 3.0), EDGE_LOG),
    "sin": ("sin", tol_transcendental, None, EDGE_NONFINITE),
    "cos": ("cos", tol_transcendental, None, EDGE_NONFINITE),
    "tan": ("tan", tol_transcendental, None, EDGE_TAN),
    "arcsin": ("arcsin", tol_transcendental, (-1.0, 1.0), EDGE_UNIT),
    "arccos": ("arccos", tol_transcendental, (-1.0, 1.0), EDGE_UNIT),
    "arctan": ("arctan", tol_transcendental, None, EDGE_NONFINITE),
    "sinh": ("sinh", tol_transcendental, None, EDGE_NONFINITE),
    "cosh": ("cosh", tol_transcendental, None, EDGE_NONFINITE),
    "tanh": ("tanh", tol_transcendental, None, EDGE_NONFINITE),
    "arcsinh": ("arcsinh", tol_transcendental, None, EDGE_NONFINITE),
    "arccosh": ("arccosh", tol_transcendental, (1.0, 4.0), EDGE_ACOSH),
    "arctanh": ("arctanh", tol_transcendental, (-0.9, 0.9), EDGE_ATANH),
    "floor": ("floor", tol_exact, None, EDGE_NONFINITE),
    "ceil": ("ceil", tol_exact, None, EDGE_NONFINITE),
}
ALIASES = {"asin": "arcsin", "acos": "arccos", "atan": "arctan", "asinh": "arcsinh",
           "acosh": "arccosh", "atanh": "arctanh", "negative": "neg", "absolute": "abs"}
for _op, (_np, _tol, _rng, _edge) in UNARY8.items():
    UNARY[_op] = (getattr(ma, _np), _tol)
    NP_NAME[_op] = _np
    U_RULES[_op] = ("NPMA-4", "NPMA-8")
for _al, _op in ALIASES.items():
    UNARY[_al] = UNARY[_op]
    NP_NAME[_al] = NP_NAME[_op]
    U_RULES[_al] = U_RULES[_op]


def int_edges(edge, short):
    """The finite edges as integers (uint8: the non-negative ones; bool)."""
    e = {k: v for k, v in edge.items() if math.isfinite(v) and abs(v) < 100
         and (v >= 0 or short not in ("u8", "bool"))}
    return {k: (int(v) if short != "bool" else bool(v)) for k, v in e.items()}


def unary8_cases(short):
    out = []
    isf = short in FLOATS
    for op, (npn, tolf, rng, edge) in UNARY8.items():
        tol = tolf(short)
        lohi = {"lo": rng[0], "hi": rng[1]} if (rng and isf) else {}
        rows = {"npma_basic": lambda g, k=lohi: rand_m(g, (3, 4), short, **k),
                "npma_domain": lambda g, e=(edge if isf else int_edges(edge, short)):
                    rand_m(g, (3, 4), short, force=e)}
        if short == "f32":
            rows["npma_fully_masked"] = lambda g: rand_m(g, (3, 4), short, p_true=0.0)
        run = unary_run(op)
        for variant, build in rows.items():
            out.append(Case(
                id=f"{op}.masked.{short}.{variant}", op=op, rules=U_RULES[op], tolerance=tol,
                build=lambda g, b=build: [b(g)], run=run,
                torch_call=f"np.ma.{npn}(m)", check_masked_out=True, tag_rules=with_fills,
                profile="numpy_ma", check=f32_headroom(tol, run, to64)))
    if short == "f32":
        for al, op in ALIASES.items():
            tol = UNARY[op][1](short)
            e = (EDGE_NONFINITE if op not in UNARY8 else UNARY8[op][3])
            run = unary_run(al)
            out.append(Case(
                id=f"{al}.masked.{short}.npma_alias", op=al, rules=U_RULES[al], tolerance=tol,
                build=lambda g, e=e: [rand_m(g, (3, 4), short, force=e)], run=run,
                torch_call=f"np.ma.{NP_NAME[al]}(m)", check_masked_out=True,
                tag_rules=with_fills, profile="numpy_ma", check=f32_headroom(tol, run, to64)))
    return out


def unary_run(op):
    f = UNARY[op][0]
    return lambda ins, kw: [from_np(f(to_np(ins[0])))]


def pow_run(ins, kw):
    return [from_np(ma.power(to_np(ins[0]), to_np(ins[1])))]


def binary_run(op):
    f = BINARY[op]
    return lambda ins, kw: [from_np(f(to_np(ins[0]), to_np(ins[1])))]


def reduce_run(op, dim, keepdim):
    name = NP_NAME[op]

    def run(ins, kw):
        m = to_np(ins[0])
        kwargs = {}
        if dim is not None:
            kwargs["axis"] = dim
        if keepdim is not None:
            kwargs["keepdims"] = keepdim
        r = getattr(m, name)(**kwargs)
        # the dtype numpy.ma gives the same reduction of one specified element
        # (a mask array, as every input here has: numpy.ma's mean of float32
        # is float64 then, float32 without a mask)
        one = ma.masked_array(np.ones((1,) * max(m.ndim, 1), m.dtype), mask=False)
        dt = np.asarray(getattr(one, name)()).dtype
        return [from_np(r, dt)]
    return run


def reduce_call(op, dim, keepdim):
    args = [] if dim is None else [f"axis={py(dim)}"]
    if keepdim is not None:
        args.append(f"keepdims={py(keepdim)}")
    return f"m.{NP_NAME[op]}({', '.join(args)})"


def unary_ok(op, short):
    return not (op == "neg" and short == "bool")


# ---- the cases -------------------------------------------------------------------

def masked_tensor_cases(short):
    dt = ALL_DTYPES[short]
    run = (lambda ins, kw: [from_np(ma.masked_array(ins[0].numpy().copy(),
                                                    mask=np.logical_not(ins[1].numpy())))])
    call = "np.ma.masked_array(data, mask=np.logical_not(mask))"

    def pair(shape, p, mask_dt=torch.bool, mshape=None):
        def build(g):
            mask = rand_mask(g, mshape or shape, p)
            if mask_dt != torch.bool:
                mask = mask.to(mask_dt) * 2.5 if mask_dt.is_floating_point else mask.to(mask_dt)
            return [rand_data(g, shape, short), mask]
        return build

    rows = {  # variant: (build, error class, rules)
        "npma_basic": (pair((3, 4), 0.6), None),
        "npma_1d": (pair((5,), 0.6), None),
        "npma_zero_size": (pair((0, 3), 0.6), None),
        "npma_all_false": (pair((3, 4), 0.0), None),
        # numpy.ma takes any mask: nonzero = specified after the logical not
        "npma_float_mask": (pair((3, 4), 0.6, torch.float32), None),
        "npma_int_mask": (pair((3, 4), 0.6, torch.int64), None),
        # a mask of the same size and another shape is reshaped
        "npma_mask_reshaped": (pair((3, 4), 0.6, mshape=(4, 3)), None),
        "npma_shape_mismatch": (pair((3, 4), 0.6, mshape=(3, 5)), "SHAPE_MISMATCH"),
    }
    out = []
    for variant, (build, err) in rows.items():
        if short not in FULL and variant not in ("npma_basic", "npma_float_mask"):
            continue
        if variant == "npma_1d" or (variant == "npma_int_mask" and short != "f32"):
            continue  # the file-size budget: basic and float32 cover them
        out.append(Case(id=f"masked_tensor.dense.{short}.{variant}", op="masked_tensor",
                        rules=("NPMA-1",), tolerance="exact", build=build, run=run,
                        torch_call=call, error_class=err, poison=False, profile="numpy_ma",
                        error_match="MaskError" if err else None))
    return out


def to_tensor_cases(short):
    fills = {"npma_fill_0": 0.0, "npma_fill_7_5": 7.5, "npma_fill_negzero": -0.0,
             "npma_fill_1e20": 1e20}
    fills["npma_fill_nan"] = math.nan  # integers: numpy's TypeError
    if short in FLOATS:
        fills["npma_fill_neginf"] = -math.inf
    else:
        fills["npma_fill_7"] = 7
    out = []
    for variant, v in fills.items():
        if short not in FULL and variant not in ("npma_fill_0", "npma_fill_7", "npma_fill_nan"):
            continue
        if v == 7.5 and short == "f64":
            continue  # the file-size budget: float32 shows it
        if v == 1e20 and short != "f32":
            continue  # float32 shows it (float16: inf, integers: refused)
        err = "INVALID_ARGUMENT" if (short in INTS and isinstance(v, float)
                                     and not math.isfinite(v)) else None
        out.append(Case(
            id=f"to_tensor.masked.{short}.{variant}", op="to_tensor", rules=("NPMA-1",),
            tolerance="exact", build=lambda g, v=v: [rand_m(g, (3, 4), short), v],
            run=lambda ins, kw: [from_np(to_np(ins[0]).filled(ins[1]))],
            torch_call=f"m.filled({py(v)})", error_class=err, profile="numpy_ma"))
    return out


EDGE_SQRT = {(0, 0): -2.0, (1, 1): -0.0, (2, 2): 0.0, (0, 3): math.inf, (1, 3): -math.inf}


def unary_cases(short):
    out = []
    isf = short in FLOATS
    for op in ("neg", "abs", "exp", "log", "sqrt"):
        tol = UNARY[op][1](short)
        rows = {"npma_basic": lambda g: rand_m(g, (3, 4), short,
                                               **({"lo": 0.1, "hi": 3.0} if op == "log" and isf
                                                  else {})),
                "npma_fully_masked": lambda g: rand_m(g, (3, 4), short, p_true=0.0),
                "npma_zero_size": lambda g: rand_m(g, (0, 4), short)}
        if op in ("log", "sqrt"):
            edge = EDGE_LOG if op == "log" else EDGE_SQRT
            if not isf:
                edge = {k: v for k, v in edge.items() if math.isfinite(v)
                        and (v >= 0 or short not in ("u8", "bool"))}
                edge = {k: (int(v) if short != "bool" else bool(v)) for k, v in edge.items()}
            rows["npma_domain"] = lambda g, e=edge: rand_m(g, (3, 4), short, force=e)
        if op in ("neg", "abs", "sqrt") and isf:
            rows["npma_signed_zeros"] = lambda g: rand_m(
                g, (3, 4), short, force={(0, 0): -0.0, (0, 1): 0.0, (1, 0): -0.0})
        run = unary_run(op)
        for variant, build in rows.items():
            if short not in FULL and variant not in ("npma_basic", "npma_domain"):
                continue
            if variant == "npma_zero_size" and op not in ("neg", "exp"):
                continue  # the file-size budget
            err = None if unary_ok(op, short) else "DTYPE_MISMATCH"
            out.append(Case(
                id=f"{op}.masked.{short}.{variant}", op=op, rules=U_RULES[op], tolerance=tol,
                build=lambda g, b=build: [b(g)], run=run,
                torch_call=f"np.ma.{NP_NAME[op]}(m)", error_class=err,
                check_masked_out=True, tag_rules=with_fills, profile="numpy_ma",
                check=f32_headroom(tol, run, to64)))
            if err:
                break
    return out


POW_EXPONENTS = {"npma_exponent_2": 2, "npma_exponent_0_5": 0.5, "npma_exponent_m1": -1,
                 "npma_exponent_3": 3}


def pow_cases(short):
    out = []
    isf = short in FLOATS
    for variant, e in POW_EXPONENTS.items():
        if short not in FULL and variant not in ("npma_exponent_2", "npma_exponent_0_5",
                                                 "npma_exponent_m1"):
            continue
        # integers to a negative integer power: numpy refuses (ValueError)
        err = "DTYPE_MISMATCH" if (not isf and isinstance(e, int) and e < 0) else None
        tol = "exact" if (not isf and isinstance(e, int)) else "ulp:2"
        force = None
        if isf and e in (0.5, -1):
            # domain: (-2)**0.5 = NaN, 0**-1 = inf: masked, filled with 1e20
            force = {(0, 0): -2.0, (1, 1): 0.0, (2, 2): -0.0}
        out.append(Case(
            id=f"pow.masked_scalar.{short}.{variant}", op="pow",
            rules=("NPMA-3", "NPMA-4") if force else ("NPMA-4",), tolerance=tol,
            build=lambda g, e=e, f=force: [rand_m(g, (3, 4), short, force=f), e],
            run=pow_run, torch_call=f"np.ma.power(m, {py(e)})", error_class=err,
            check_masked_out=True, tag_rules=with_fills, profile="numpy_ma",
            check=f32_headroom(tol, pow_run, to64)))
    if isf:
        big = {"f16": 300.0, "f32": 1e30, "f64": 1e200}[short]
        out.append(Case(
            id=f"pow.masked_scalar.{short}.npma_overflow", op="pow", rules=("NPMA-3", "NPMA-4"),
            tolerance="ulp:2",
            build=lambda g: [rand_m(g, (3, 4), short, force={(0, 0): big, (1, 1): -big}), 2],
            run=pow_run, torch_call="np.ma.power(m, 2)", check_masked_out=True,
            tag_rules=with_fills, profile="numpy_ma"))
    return out


DIV_A = {(0, 0): 1.5, (1, 1): 0.0, (2, 2): -1.5, (0, 1): 1e300, (0, 2): -0.0, (1, 2): 0.0}
DIV_B = {(0, 0): 0.0, (1, 1): 0.0, (2, 2): -0.0, (0, 1): 1e-10, (0, 2): 2.0, (1, 2): -2.0}


def binary_cases(short):
    out = []
    isf = short in FLOATS
    scalar = 2.5 if isf else 2
    for op in ("add", "sub", "mul", "div"):
        run = binary_run(op)
        err = "DTYPE_MISMATCH" if (op == "sub" and short == "bool") else None
        rows = {
            # masks differ: specified where both are (numpy ORs its masks)
            ("masked_masked", "npma_masks_differ"):
                (lambda g: [rand_m(g, (3, 4), short), rand_m(g, (3, 4), short)], "a, b",
                 ("NPMA-2",)),
            ("masked_masked", "npma_same_mask"):
                (lambda g: same_mask(g, short), "a, b", ("NPMA-2",)),
            ("masked_masked", "npma_fully_masked"):
                (lambda g: [rand_m(g, (3, 4), short, 0.0), rand_m(g, (3, 4), short)], "a, b",
                 ("NPMA-2",)),
            ("masked_dense", "npma_basic"):
                (lambda g: [rand_m(g, (3, 4), short), rand_data(g, (3, 4), short)], "m, t",
                 ("NPMA-2",)),
            ("dense_masked", "npma_basic"):
                (lambda g: [rand_data(g, (3, 4), short), rand_m(g, (3, 4), short)], "t, m",
                 ("NPMA-2",)),
            ("masked_scalar", "npma_scalar"):
                (lambda g: [rand_m(g, (3, 4), short), scalar], f"m, {py(scalar)}",
                 ("NPMA-2", "NPMA-4")),
            ("masked_masked", "npma_zero_size"):
                (lambda g: [rand_m(g, (0, 4), short), rand_m(g, (0, 4), short)], "a, b",
                 ("NPMA-2",)),
        }
        if short == "f32":
            # a float32 and a float64 operand: numpy promotes (torch refuses)
            rows[("masked_masked", "npma_f32_f64")] = (
                lambda g: [rand_m(g, (3, 4), "f32"), rand_m(g, (3, 4), "f64")], "a, b",
                ("NPMA-2", "NPMA-4"))
            rows[("masked_scalar", "npma_scalar_0_1")] = (
                lambda g: [rand_m(g, (3, 4), "f32"), 0.1], "m, 0.1", ("NPMA-2", "NPMA-4"))
        if short == "i32":
            rows[("masked_masked", "npma_i32_f32")] = (
                lambda g: [rand_m(g, (3, 4), "i32"), rand_m(g, (3, 4), "f32")], "a, b",
                ("NPMA-2", "NPMA-4"))
        if op == "div" and isf:
            rows[("masked_masked", "npma_divisor_zeros")] = (
                lambda g: same_mask(g, short, DIV_A, DIV_B), "a, b", ("NPMA-2", "NPMA-3"))
            rows[("masked_scalar", "npma_scalar_zero")] = (
                lambda g: [rand_m(g, (3, 4), short), 0.0], "m, 0.0",
                ("NPMA-2", "NPMA-3", "NPMA-4"))
        if op == "div" and not isf:
            rows[("masked_masked", "npma_divisor_zeros")] = (
                lambda g: same_mask(g, short, {(0, 0): 3, (1, 1): 0},
                                    {(0, 0): 0, (1, 1): 0}), "a, b", ("NPMA-2", "NPMA-3"))
        if op == "add" and isf:
            rows[("masked_masked", "npma_associativity")] = (
                lambda g: assoc_pair(short), "a, b", ("NPMA-2", "NPMA-6"))
        for (layout, variant), (build, args, rules) in rows.items():
            if short not in FULL and variant not in ("npma_masks_differ", "npma_scalar",
                                                     "npma_divisor_zeros", "npma_i32_f32"):
                continue
            if variant == "npma_zero_size" and op in ("sub", "mul", "div"):
                continue  # the file-size budget
            if short != "f64" and variant == "npma_divisor_zeros" and isf:
                # |a| * tiny >= |b| with b != 0 needs float64's range
                build = (lambda g: same_mask(g, short, {k: v for k, v in DIV_A.items()
                                                        if abs(v) < 1e4},
                                             {k: v for k, v in DIV_B.items() if v != 1e-10}))
            out.append(Case(
                id=f"{op}.{layout}.{short}.{variant}", op=op,
                rules=rules + (("NPMA-4",) if err and "NPMA-4" not in rules
                               and layout != "masked_scalar" else ()),
                tolerance="exact",
                build=build, run=run, torch_call=f"np.ma.{NP_NAME[op]}({args})",
                error_class=err if layout != "masked_scalar" else None,
                check_masked_out=True, tag_rules=with_fills,
                profile="numpy_ma"))
    return out


# Group 2: the other binary ufuncs of np.ma. op -> (np.ma name, rules,
# dtypes numpy refuses (TypeError -> DTYPE_MISMATCH), tolerance)
BIN2 = {
    "floor_divide": ("floor_divide", ("NPMA-2", "NPMA-4", "NPMA-10"), (), "exact"),
    "remainder": ("remainder", ("NPMA-2", "NPMA-4", "NPMA-10"), (), "exact"),
    "fmod": ("fmod", ("NPMA-2", "NPMA-4", "NPMA-10"), (), "exact"),
    # numpy's float32 arctan2 is more than 2 ulp from float64's rounded
    "atan2": ("arctan2", ("NPMA-2", "NPMA-4"), (), "ulp:4"),
    "bitwise_and": ("bitwise_and", ("NPMA-2", "NPMA-4"), FLOATS, "exact"),
    "bitwise_or": ("bitwise_or", ("NPMA-2", "NPMA-4"), FLOATS, "exact"),
    "bitwise_xor": ("bitwise_xor", ("NPMA-2", "NPMA-4"), FLOATS, "exact"),
    "eq": ("equal", ("NPMA-2", "NPMA-9"), (), "exact"),
    "ne": ("not_equal", ("NPMA-2", "NPMA-9"), (), "exact"),
    "lt": ("less", ("NPMA-2", "NPMA-9"), (), "exact"),
    "le": ("less_equal", ("NPMA-2", "NPMA-9"), (), "exact"),
    "gt": ("greater", ("NPMA-2", "NPMA-9"), (), "exact"),
    "ge": ("greater_equal", ("NPMA-2", "NPMA-9"), (), "exact"),
    "maximum": ("maximum", ("NPMA-2", "NPMA-4", "NPMA-11"), (), "exact"),
    "minimum": ("minimum", ("NPMA-2", "NPMA-4", "NPMA-11"), (), "exact"),
}
BIN2_ALIASES = {"arctan2": "atan2", "not_equal": "ne", "less": "lt", "less_equal": "le",
                "greater": "gt", "greater_equal": "ge"}
for _op, (_np, _r, _bad, _tol) in list(BIN2.items()):
    BINARY[_op] = getattr(ma, _np)
    NP_NAME[_op] = _np
for _al, _op in BIN2_ALIASES.items():
    BIN2[_al] = BIN2[_op]
    BINARY[_al] = BINARY[_op]
    NP_NAME[_al] = NP_NAME[_op]
# NaN and signed zeros against numbers and each other (comparisons, extrema)
NAN_A = {(0, 0): math.nan, (1, 1): 1.0, (2, 2): -0.0, (0, 3): math.nan, (1, 3): math.inf}
NAN_B = {(0, 0): 1.0, (1, 1): math.nan, (2, 2): 0.0, (0, 3): math.nan, (1, 3): math.inf}
# Python floor division and modulo signs, divisors 0, C's fmod
MOD_A = {(0, 0): 7.0, (1, 1): -7.0, (2, 2): 7.0, (0, 3): -7.0, (1, 3): 3.0, (2, 0): 0.0,
         (2, 1): -0.0, (1, 0): 5.5}
MOD_B = {(0, 0): 2.0, (1, 1): 2.0, (2, 2): -2.0, (0, 3): -2.0, (1, 3): 0.0, (2, 0): 0.0,
         (2, 1): 3.0, (1, 0): math.inf}


def bin2_cases(short):
    out = []
    isf = short in FLOATS
    scalar = 2.5 if isf else 2
    for op, (npn, rules, bad, tol) in BIN2.items():
        if op in BIN2_ALIASES:
            if short == "f32":
                out.append(Case(
                    id=f"{op}.masked_masked.{short}.npma_alias", op=op, rules=rules,
                    tolerance=tol,
                    build=lambda g: [rand_m(g, (3, 4), short), rand_m(g, (3, 4), short)],
                    run=binary_run(op), torch_call=f"np.ma.{npn}(a, b)", check_masked_out=True,
                    tag_rules=with_fills, profile="numpy_ma"))
            continue
        err = "DTYPE_MISMATCH" if short in bad else None
        run = binary_run(op)
        rows = {("masked_masked", "npma_masks_differ"):
                (lambda g: [rand_m(g, (3, 4), short), rand_m(g, (3, 4), short)], "a, b")}
        if short in FULL and not err:
            rows[("masked_scalar", "npma_scalar")] = (
                lambda g: [rand_m(g, (3, 4), short), scalar], f"m, {py(scalar)}")
        if short == "f32" and not err:
            rows[("dense_masked", "npma_basic")] = (
                lambda g: [rand_data(g, (3, 4), short), rand_m(g, (3, 4), short)], "t, m")
        if short == "i32":
            rows[("masked_masked", "npma_i32_f32")] = (
                lambda g: [rand_m(g, (3, 4), "i32"), rand_m(g, (3, 4), "f32")], "a, b")
        if "NPMA-10" in rules:
            fa = MOD_A if isf else int_edges(MOD_A, short)
            fb = MOD_B if isf else int_edges(MOD_B, short)
            if short == "bool":
                fa, fb = {(0, 0): True, (1, 1): False}, {(0, 0): False, (1, 1): True}
            rows[("masked_masked", "npma_divisor_zeros")] = (
                lambda g, fa=fa, fb=fb: same_mask(g, short, fa, fb), "a, b")
        if isf and ("NPMA-9" in rules or "NPMA-11" in rules or op == "atan2"):
            rows[("masked_masked", "npma_nan")] = (
                lambda g: same_mask(g, short, NAN_A, NAN_B), "a, b")
        for (layout, variant), (build, args) in rows.items():
            out.append(Case(
                id=f"{op}.{layout}.{short}.{variant}", op=op, rules=rules, tolerance=tol,
                build=build, run=run, torch_call=f"np.ma.{npn}({args})",
                error_class=err or ("DTYPE_MISMATCH" if variant == "npma_i32_f32" and bad
                                    else None),
                check_masked_out=True, tag_rules=with_fills, profile="numpy_ma",
                check=f32_headroom(tol, run, to64) if tol != "exact" else None))
    return out


# NPMA-15: np.ma.left_shift/right_shift (plain functions: filled(a, 0)
# shifted by n; n a Python int is NEP 50's weak scalar)
SHIFTS = {"bitwise_left_shift": "left_shift", "bitwise_right_shift": "right_shift"}
# 64: exactly int64's width, where C's shift is undefined and x86 takes the
# amount mod 64; numpy gives 0 (or -1 right of a negative) (tests/sweep)
SHIFT_N = {(0, 0): 9, (1, 1): -1, (2, 2): 0, (0, 3): 7, (1, 3): 3, (2, 3): 64}


def shift_cases(short):
    out = []
    for op, npn in SHIFTS.items():
        f = getattr(ma, npn)
        run = (lambda ins, kw, f=f: [from_np(f(to_np(ins[0]), to_np(ins[1])))])
        rows = {("masked_masked", "npma_masks_differ"): (
            lambda g: [rand_m(g, (3, 4), short),
                       rand_m(g, (3, 4), short, lo=0, hi=4,
                              force=(int_edges(SHIFT_N, short) if short != "bool"
                                     else None))], "a, n")}
        if short in ("i8", "i64"):
            rows[("masked_scalar", "npma_scalar")] = (
                lambda g: [rand_m(g, (3, 4), short), 2], "m, 2")
        for (layout, variant), (build, args) in rows.items():
            out.append(Case(
                id=f"{op}.{layout}.{short}.{variant}", op=op,
                rules=("NPMA-2", "NPMA-15") + (("NPMA-4",) if layout == "masked_scalar"
                                               or short == "bool" else ()),
                tolerance="exact", build=build, run=run, torch_call=f"np.ma.{npn}({args})",
                error_class="DTYPE_MISMATCH" if short in FLOATS else None,
                check_masked_out=True, tag_rules=with_fills, profile="numpy_ma"))
            if short in FLOATS:
                break
    return out


# NPMA-16: broadcasting. variant -> (layout, build(g, short), args); the
# masks broadcast with their data, a plain tensor has numpy.ma's nomask
BCAST_ROWS = {
    "npma_bcast_col_row": ("masked_masked", lambda g, s: [rand_m(g, (3, 1), s),
                                                          rand_m(g, (1, 4), s)], "a, b"),
    "npma_bcast_row": ("masked_masked", lambda g, s: [rand_m(g, (4,), s),
                                                      rand_m(g, (3, 4), s)], "a, b"),
    "npma_bcast_dense_row": ("masked_dense", lambda g, s: [rand_m(g, (3, 4), s),
                                                           rand_data(g, (4,), s)], "m, t"),
    "npma_bcast_dense_col": ("dense_masked", lambda g, s: [rand_data(g, (3, 1), s),
                                                           rand_m(g, (2, 1, 4), s)], "t, m"),
    # a 0-d masked operand (one mask bit for every element)
    "npma_bcast_0d_masked": ("masked_masked", lambda g, s: [
        rand_m(g, (3, 4), s), NpMasked(rand_data(g, (), s), torch.tensor(False))], "a, b"),
    "npma_bcast_0d_spec": ("masked_masked", lambda g, s: [
        NpMasked(rand_data(g, (), s), torch.tensor(True)), rand_m(g, (3, 4), s)], "a, b"),
    "npma_bcast_zero_size": ("masked_masked", lambda g, s: [rand_m(g, (0, 1), s),
                                                            rand_m(g, (1, 4), s)], "a, b"),
    "npma_bcast_mismatch": ("masked_masked", lambda g, s: [rand_m(g, (3, 4), s),
                                                           rand_m(g, (2, 4), s)], "a, b"),
}
BCAST_MAIN = ("npma_bcast_col_row", "npma_bcast_0d_masked")
# the ops that get every variant (one per kind of np.ma operation: plain,
# domained, comparison, extrema); the file-size budget
BCAST_FULL = ("add", "div", "eq", "maximum")


def bcast_cases(short):
    """NPMA-16 for every broadcasting binary op of the profile (not the
    shifts: np.ma.left_shift/right_shift keep a's mask), in float32 (all
    variants), float64 and int64 (the main ones)."""
    if short not in ("f32", "f64", "i64"):
        return []
    out = []
    for op in list(BINARY):
        npn = NP_NAME[op]
        if op in BIN2_ALIASES or op in ALIASES:
            continue
        if short in FLOATS and op in ("bitwise_and", "bitwise_or", "bitwise_xor"):
            continue
        # the op's own rules (NPMA-9 for eq, ...) and NPMA-16
        rules = (BIN2[op][1] if op in BIN2 else ("NPMA-2",)) + ("NPMA-16",)
        tol = BIN2[op][3] if op in BIN2 else "exact"
        run = binary_run(op)
        for variant, (layout, build, args) in BCAST_ROWS.items():
            if (short != "f32" or op not in BCAST_FULL) and variant not in BCAST_MAIN:
                continue
            if short != "f32" and (op not in BCAST_FULL or variant != "npma_bcast_col_row"):
                continue
            err = "SHAPE_MISMATCH" if variant == "npma_bcast_mismatch" else None
            out.append(Case(
                id=f"{op}.{layout}.{short}.{variant}", op=op, rules=rules, tolerance=tol,
                build=lambda g, b=build: b(g, short), run=run,
                torch_call=f"np.ma.{npn}({args})", error_class=err,
                error_match="could not be broadcast" if err else None,
                check_masked_out=True, tag_rules=with_fills, profile="numpy_ma"))
    return out


# NPMA-17: torch.masked's functional ops on x and a bool mask, as
# np.ma.array(x, mask=~np.broadcast_to(mask, x.shape)).<op>(axis=dim) (no
# mask: an all-false numpy mask, so the dtypes are those of a masked input)
MFN = {  # op -> (the MaskedArray method, rules, tolerance(short))
    "masked_sum": ("sum", ("NPMA-4", "NPMA-5", "NPMA-17"), lambda s: tol_reduce(s, "sum")),
    "masked_prod": ("prod", ("NPMA-4", "NPMA-5", "NPMA-17"), lambda s: tol_reduce(s, "prod")),
    "masked_amin": ("min", ("NPMA-4", "NPMA-5", "NPMA-17"), tol_exact),
    "masked_amax": ("max", ("NPMA-4", "NPMA-5", "NPMA-17"), tol_exact),
    "masked_mean": ("mean", ("NPMA-4", "NPMA-5", "NPMA-17"), lambda s: tol_reduce(s, "mean")),
    "masked_argmin": ("argmin", ("NPMA-5", "NPMA-13", "NPMA-17"), tol_exact),
    "masked_argmax": ("argmax", ("NPMA-5", "NPMA-13", "NPMA-17"), tol_exact),
    "masked_var": ("var", ("NPMA-5", "NPMA-14", "NPMA-17"), lambda s: tol_var(s)),
    "masked_std": ("std", ("NPMA-5", "NPMA-14", "NPMA-17"), lambda s: tol_var(s)),
    "masked_cumsum": ("cumsum", ("NPMA-17",), lambda s: tol_reduce(s, "sum")),
    "masked_cumprod": ("cumprod", ("NPMA-17",), lambda s: tol_reduce(s, "prod")),
}
# variant -> (shape, kwargs, with a mask, fully masked row)
MFN_ROWS = {
    "npma_dim1": ((3, 4), {"dim": 1}, True, None),
    "npma_dim0_no_mask": ((3, 4), {"dim": 0}, False, None),
    "npma_all": ((3, 4), {}, True, None),
    "npma_fully_masked_row": ((3, 4), {"dim": 1}, True, 1),
    "npma_dim1_keepdim": ((3, 4), {"dim": 1, "keepdim": True}, True, None),
    "npma_mask_broadcast": ((3, 4), {"dim": 1}, "row", None),
    "npma_one_specified_row": ((3, 4), {"dim": 1}, True, "one"),
    "npma_unbiased_false": ((3, 4), {"dim": 1, "unbiased": False}, True, None),
    # count - ddof at and below 1 (var/std only): an all-reduce is a numpy
    # scalar, masked only where np.ma.divide masks it (count - ddof = 0, a
    # non-finite variance): 1 gives a number, 0 np.ma.masked, < 0 the number
    # sum / (count - ddof) <= 0 (std: masked, np.ma.sqrt's domain); over a dim
    # every count - ddof <= 0 is masked, holding np.ma.divide's data
    "npma_all_one_specified_unbiased_false": ((3, 4), {"unbiased": False}, True, "only_1"),
    "npma_all_two_specified": ((3, 4), {}, True, "only_2"),
    "npma_all_one_specified": ((3, 4), {}, True, "only_1"),
    "npma_all_correction_3": ((3, 4), {"correction": 3}, True, "only_2"),
    "npma_dim1_correction_3": ((4, 4), {"dim": 1, "correction": 3}, True, "counts_4_2_3_1"),
    # a float ddof (numpy takes it: count - 0.5; truncated to 0 it is count)
    "npma_dim1_correction_0_5": ((4, 4), {"dim": 1, "correction": 0.5}, True,
                                 "counts_4_2_3_1"),
}
MFN_MAIN = ("npma_dim1", "npma_fully_masked_row")
MFN_VAR_ONLY = ("npma_one_specified_row", "npma_unbiased_false",
                "npma_all_one_specified_unbiased_false", "npma_all_two_specified",
                "npma_all_one_specified", "npma_all_correction_3", "npma_dim1_correction_3",
                "npma_dim1_correction_0_5")
# literal masks of MFN_ROWS (True = specified)
MFN_MASKS = {"only_1": [[0, 0, 0, 0], [0, 0, 1, 0], [0, 0, 0, 0]],
             "only_2": [[0, 1, 0, 0], [0, 0, 0, 0], [0, 0, 0, 1]],
             "counts_4_2_3_1": [[1, 1, 1, 1], [0, 1, 0, 1], [1, 1, 0, 1], [0, 0, 1, 0]]}


def mfn_ddof(kw):
    """numpy's ddof of torch's correction / unbiased (default unbiased: 1)."""
    if "correction" in kw:
        return kw["correction"]
    return 0 if kw.get("unbiased") is False else 1


def mfn_run(method, kw):
    dim, keepdim = kw.get("dim"), kw.get("keepdim")
    ddof = None
    if method in ("var", "std"):
        ddof = mfn_ddof(kw)

    def run(ins, _kw):
        x = ins[0].numpy()
        mask = ins[1].numpy() if len(ins) > 1 else np.ones(x.shape, bool)
        m = ma.masked_array(x.copy(), mask=~np.broadcast_to(mask, x.shape))
        args = {}
        if dim is not None:
            args["axis"] = dim
        if keepdim is not None:
            args["keepdims"] = keepdim
        if ddof is not None:
            args["ddof"] = ddof
        r = getattr(m, method)(**args)
        one = ma.masked_array(np.ones((1,) * max(m.ndim, 1), m.dtype), mask=False)
        dt = np.asarray(getattr(one, method)()).dtype
        return [from_np(r, dt)]
    return run


def mfn_call(method, kw, with_mask):
    mask = "mask" if with_mask else "np.ones(x.shape, bool)"
    args = []
    if "dim" in kw:
        args.append(f"axis={py(kw['dim'])}")
    if "keepdim" in kw:
        args.append(f"keepdims={py(kw['keepdim'])}")
    if method in ("var", "std"):
        args.append(f"ddof={mfn_ddof(kw)}")
    return (f"np.ma.masked_array(x, mask=~np.broadcast_to({mask}, x.shape))"
            f".{method}({', '.join(args)})")


def mfn_cases(short):
    if short not in ("f32", "f64", "i64", "f16", "bool"):
        return []
    out = []
    for op, (method, rules, tolf) in MFN.items():
        is_scan = method in ("cumsum", "cumprod")
        is_var = method in ("var", "std")
        if short == "bool" and (is_var or method in ("mean", "argmin", "argmax")):
            continue  # the file-size budget: sum/prod/min/max/scans show bool
        for variant, (shape, kw, with_mask, empty) in MFN_ROWS.items():
            if short != "f32" and variant not in MFN_MAIN:
                continue
            if variant == "npma_all" and is_scan:
                continue  # torch's scans require dim
            if variant == "npma_dim1_keepdim" and (is_scan or method in ("argmin", "argmax")):
                continue
            if variant in MFN_VAR_ONLY and not is_var:
                continue
            if variant == "npma_dim1_correction_0_5" and method != "var":
                continue  # torch's masked std types correction as an int (mtcs's kwarg too)
            if is_scan and variant == "npma_dim0_no_mask" and short == "f32":
                pass

            def build(g, shape=shape, with_mask=with_mask, empty=empty, method=method):
                lo, hi = (0.5, 1.5) if method in ("prod", "cumprod") and short in FLOATS \
                    else (None, None)
                if method in ("prod", "cumprod") and short in INTS:
                    lo, hi = -3, 4
                x = rand_data(g, shape, short, lo, hi)
                if not with_mask:
                    return [x]
                if with_mask == "row":
                    return [x, rand_mask(g, (shape[-1],))]
                mask = rand_mask(g, shape)
                if empty in MFN_MASKS:
                    mask = torch.tensor(MFN_MASKS[empty], dtype=torch.bool)
                elif empty == "one":
                    mask[1] = False
                    mask[1, 2] = True
                elif empty is not None:
                    mask[empty] = False
                return [x, mask]
            tol = tolf(short)
            run = mfn_run(method, kw)
            out.append(Case(
                id=f"{op}.dense.{short}.{variant}", op=op, rules=rules, tolerance=tol,
                build=build, run=run, torch_call=mfn_call(method, kw, with_mask), kwargs=kw,
                check_masked_out=True, tag_rules=with_fills, profile="numpy_ma",
                input_masks="0:1" if with_mask is True else None))
    return out


# NPMA-18/19: structure ops. op -> [(variant, layout, build(g, short),
# kwargs, numpy call, run(ins) -> numpy result)]
def _m(shape):
    return lambda g, s: [rand_m(g, shape, s)]


def _take_along(dim, start, end, step):
    idx = (slice(None),) * dim + (slice(start, end, step),)
    return lambda ins: to_np(ins[0])[idx]


STRUCT = {
    "select": [("npma_dim1", "masked", _m((3, 4)), {"dim": 1, "index": 2},
                "m.take(2, axis=1)", lambda ins: to_np(ins[0]).take(2, axis=1)),
               ("npma_dim0_negative", "masked", _m((3, 4)), {"dim": 0, "index": -1},
                "m.take(-1, axis=0)", lambda ins: to_np(ins[0]).take(-1, axis=0))],
    "slice": [("npma_dim1", "masked", _m((3, 4)), {"dim": 1, "start": 1, "end": 3},
               "m[:, 1:3]", _take_along(1, 1, 3, None)),
              ("npma_step2", "masked", _m((5, 2)), {"dim": 0, "start": 0, "end": 5, "step": 2},
               "m[0:5:2]", _take_along(0, 0, 5, 2))],
    "index": [("npma_int", "masked_index",
               lambda g, s: [rand_m(g, (3, 4), s), torch.tensor([2, 0, 2])], {},
               "m[[2, 0, 2]]", lambda ins: to_np(ins[0])[ins[1].numpy()]),
              ("npma_bool", "masked_index",
               lambda g, s: [rand_m(g, (3, 4), s), torch.tensor([True, False, True])], {},
               "m[np.array([True, False, True])]", lambda ins: to_np(ins[0])[ins[1].numpy()])],
    "transpose": [("npma_dims0_2", "masked", _m((2, 3, 4)), {"dim0": 0, "dim1": 2},
                   "np.ma.swapaxes(m, 0, 2)", lambda ins: ma.swapaxes(to_np(ins[0]), 0, 2))],
    "t": [("npma_2d", "masked", _m((3, 4)), {}, "m.T", lambda ins: to_np(ins[0]).T)],
    "view": [("npma_4_3", "masked", _m((3, 4)), {"size": (4, 3)}, "m.reshape(4, 3)",
              lambda ins: to_np(ins[0]).reshape(4, 3))],
    "reshape": [("npma_infer", "masked", _m((3, 4)), {"shape": (2, -1)}, "m.reshape(2, -1)",
                 lambda ins: to_np(ins[0]).reshape(2, -1))],
    "unsqueeze": [("npma_dim1", "masked", _m((3, 4)), {"dim": 1}, "np.ma.expand_dims(m, 1)",
                   lambda ins: ma.expand_dims(to_np(ins[0]), 1))],
    "clone": [("npma_copy", "masked", _m((3, 4)), {}, "m.copy()",
               lambda ins: to_np(ins[0]).copy())],
    "ones_like": [("npma_mask_kept", "masked", _m((3, 4)), {}, "np.ma.ones_like(m)",
                   lambda ins: ma.ones_like(to_np(ins[0])))],
    "cat": [("npma_dim0", "masked", lambda g, s: [rand_m(g, (2, 4), s), rand_m(g, (3, 4), s)],
             {"dim": 0}, "np.ma.concatenate([a, b], axis=0)",
             lambda ins: ma.concatenate([to_np(x) for x in ins], axis=0)),
            ("npma_plain_dim1", "masked_plain",
             lambda g, s: [rand_m(g, (3, 2), s), rand_data(g, (3, 4), s)], {"dim": 1},
             "np.ma.concatenate([m, t], axis=1)",
             lambda ins: ma.concatenate([to_np(x) for x in ins], axis=1))],
    "stack": [("npma_dim1", "masked", lambda g, s: [rand_m(g, (3, 4), s), rand_m(g, (3, 4), s)],
               {"dim": 1}, "np.ma.stack([a, b], axis=1)",
               lambda ins: ma.stack([to_np(x) for x in ins], axis=1)),
              ("npma_plain_dim0", "plain_masked",
               lambda g, s: [rand_data(g, (3, 4), s), rand_m(g, (3, 4), s)], {"dim": 0},
               "np.ma.stack([t, m], axis=0)",
               lambda ins: ma.stack([to_np(x) for x in ins], axis=0))],
    "where": [("npma_cond_dense", "dense_masked_masked",
               lambda g, s: [rand_mask(g, (3, 4), 0.5), rand_m(g, (3, 4), s),
                             rand_m(g, (3, 4), s)], {}, "np.ma.where(c, x, y)",
               lambda ins: ma.where(*[to_np(x) for x in ins])),
              # a masked-out condition masks the result and takes y's data
              ("npma_cond_masked", "masked_masked_masked",
               lambda g, s: [NpMasked(rand_mask(g, (3, 4), 0.5), rand_mask(g, (3, 4))),
                             rand_m(g, (3, 4), s), rand_m(g, (3, 4), s)], {},
               "np.ma.where(c, x, y)", lambda ins: ma.where(*[to_np(x) for x in ins])),
              ("npma_bcast_number", "dense_masked_scalar",
               lambda g, s: [rand_mask(g, (3, 1), 0.5), rand_m(g, (4,), s),
                             2.5 if s in FLOATS else 2], {}, "np.ma.where(c, x, 2.5)",
               lambda ins: ma.where(*[to_np(x) for x in ins]))],
}
STRUCT_RULES = {op: ("NPMA-18",) for op in STRUCT}
STRUCT_RULES["where"] = ("NPMA-19",)


def struct_cases(short):
    if short not in ("f32", "f64", "i64", "bool", "f16"):
        return []
    out = []
    for op, rows in STRUCT.items():
        for k, (variant, layout, build, kw, call, f) in enumerate(rows):
            if short != "f32" and k > 0:
                continue
            if short in ("bool", "f16") and op not in ("cat", "where", "index", "slice"):
                continue  # the file-size budget
            if short == "bool" and op == "where" and variant == "npma_bcast_number":
                continue
            rules = STRUCT_RULES[op]
            if variant == "npma_bcast_number":
                rules = rules + ("NPMA-4", "NPMA-16")
            out.append(Case(
                id=f"{op}.{layout}.{short}.{variant}", op=op, rules=rules, tolerance="exact",
                build=lambda g, b=build: b(g, short),
                run=lambda ins, kw, f=f: [from_np(f(ins))], torch_call=call, kwargs=kw,
                check_masked_out=True, tag_rules=with_fills, profile="numpy_ma"))
    return out


# torch's aliases of the four arithmetic ops: numpy.ma's functions of the
# same names (np.ma.true_divide is divide's _DomainedBinaryOperation)
ARITH_ALIASES = {"subtract": ("sub", "subtract"), "multiply": ("mul", "multiply"),
                 "divide": ("div", "divide"), "true_divide": ("div", "true_divide")}


def arith_alias_cases(short):
    if short not in ("f32", "i64"):
        return []
    out = []
    for al, (op, npn) in ARITH_ALIASES.items():
        f = getattr(ma, npn)
        rules = ("NPMA-2", "NPMA-3") if op == "div" else ("NPMA-2",)
        if short == "i64":
            rules = rules + ("NPMA-4",)
        out.append(Case(
            id=f"{al}.masked_masked.{short}.npma_alias", op=al, rules=rules, tolerance="exact",
            build=lambda g: (same_mask(g, short, {(0, 0): 3}, {(0, 0): 0}) if op == "div"
                             else [rand_m(g, (3, 4), short), rand_m(g, (3, 4), short)]),
            run=lambda ins, kw, f=f: [from_np(f(to_np(ins[0]), to_np(ins[1])))],
            torch_call=f"np.ma.{npn}(a, b)", check_masked_out=True, tag_rules=with_fills,
            profile="numpy_ma"))
    return out


# NPMA-20: masked_median(x, dim, mask=m) as np.ma.median(m, axis=dim)
MEDIAN_ROWS = {  # variant -> (shape, kwargs, fully masked row, forced specified values)
    "npma_dim1": ((3, 5), {"dim": 1}, None, None),
    "npma_dim0_even": ((4, 3), {"dim": 0}, None, None),
    "npma_default_dim": ((3, 4), {}, 2, None),
    "npma_keepdim": ((3, 4), {"dim": 1, "keepdim": True}, None, None),
    "npma_nan": ((3, 4), {"dim": 1}, None, {(0, 1): math.nan, (1, 3): math.inf}),
}


def median_cases(short):
    if short not in ("f32", "f64", "f16", "i64", "bool"):
        return []
    out = []
    for variant, (shape, kw, empty, force) in MEDIAN_ROWS.items():
        if short != "f32" and variant not in ("npma_dim1", "npma_dim0_even"):
            continue
        if force and short not in FLOATS:
            continue

        def build(g, shape=shape, empty=empty, force=force):
            x = rand_data(g, shape, short)
            mask = rand_mask(g, shape, 0.7)
            if empty is not None:
                mask[empty] = False
            for idx, v in (force or {}).items():
                x[idx], mask[idx] = v, True
            return [x, mask]
        dim = kw.get("dim", -1)
        args = f"axis={dim}" + (", keepdims=True" if kw.get("keepdim") else "")

        def run(ins, _kw, dim=dim, keep=bool(kw.get("keepdim"))):
            x = ins[0].numpy()
            m = ma.masked_array(x.copy(), mask=~ins[1].numpy())
            r = ma.median(m, axis=dim, keepdims=keep)
            return [from_np(r)]
        out.append(Case(
            id=f"masked_median.dense.{short}.{variant}", op="masked_median",
            rules=("NPMA-17", "NPMA-20"), tolerance="exact", build=build, run=run,
            torch_call=f"np.ma.median(np.ma.masked_array(x, mask=~mask), {args})", kwargs=kw,
            check_masked_out=True, tag_rules=with_fills, profile="numpy_ma", input_masks="0:1"))
    return out


# NPMA-21: clamp/clip (np.ma.clip), round (m.round), angle (np.ma.angle),
# conj_physical (np.ma.conjugate). op -> [(dtype, variant, kwargs, forced
# values, numpy call, f(m))]
HALVES = {(0, 0): 0.5, (0, 1): 1.5, (0, 2): 2.5, (1, 0): -0.5, (1, 1): -2.5, (2, 2): math.nan}
SIGNS = {(0, 0): -0.0, (0, 1): 0.0, (1, 0): math.nan, (1, 1): -3.0, (2, 2): math.inf}
# ±0 ties of clip's bounds (compared exactly: the sign of zero counts). Both
# bounds: np.clip keeps x on a tie (-0.0 at min 0.0 stays -0.0); one bound:
# np.ma.clip is np.maximum(x, min) / np.minimum(x, max), whose float32 and
# float64 loops give the bound on a tie and float16's gives x; an integer
# tensor with a float bound is float64 (0 at min -0.0 gives -0.0).
ZERO_TIES = {(0, 0): -0.0, (0, 1): 0.0, (1, 2): -0.0, (2, 3): 0.0}


def _clip_row(dt, variant, lo, hi):
    call = f"np.ma.clip(m, {lo!r}, {hi!r})"
    kw = {k: v for k, v in (("min", lo), ("max", hi)) if v is not None}
    return (dt, variant, kw, ZERO_TIES, call, lambda m, lo=lo, hi=hi: ma.clip(m, lo, hi))


ZERO_TIE_ROWS = [
    _clip_row("f32", "npma_zero_ties_both", 0.0, 1.0),
    _clip_row("f32", "npma_signed_zero_bounds", -0.0, 0.0),
    _clip_row("f32", "npma_zero_tie_min_only", 0.0, None),
    _clip_row("f32", "npma_neg_zero_tie_min_only", -0.0, None),
    _clip_row("f32", "npma_zero_tie_max_only", None, 0.0),
    _clip_row("f32", "npma_neg_zero_tie_max_only", None, -0.0),
    _clip_row("f64", "npma_zero_tie_min_only", 0.0, None),
    _clip_row("f64", "npma_neg_zero_tie_max_only", None, -0.0),
    _clip_row("f16", "npma_zero_tie_min_only", 0.0, None),
    _clip_row("f16", "npma_neg_zero_tie_max_only", None, -0.0),
    _clip_row("i32", "npma_neg_zero_float_min_only", -0.0, None),
]
EXTRA = {
    "clamp": [("f32", "npma_both", {"min": -1.0, "max": 1.0}, {(0, 0): math.nan},
               "np.ma.clip(m, -1.0, 1.0)", lambda m: ma.clip(m, -1.0, 1.0)),
              ("f64", "npma_min_only", {"min": 0.5}, None, "np.ma.clip(m, 0.5, None)",
               lambda m: ma.clip(m, 0.5, None)),
              ("f16", "npma_both", {"min": -1.0, "max": 1.0}, None,
               "np.ma.clip(m, -1.0, 1.0)", lambda m: ma.clip(m, -1.0, 1.0)),
              ("i64", "npma_int_bounds", {"min": -2, "max": 3}, None, "np.ma.clip(m, -2, 3)",
               lambda m: ma.clip(m, -2, 3)),
              # an integer tensor with a float bound: float64 (NEP 50)
              ("i32", "npma_float_bound", {"min": -1.5, "max": 4}, None,
               "np.ma.clip(m, -1.5, 4)", lambda m: ma.clip(m, -1.5, 4))],
    "clip": [("f32", "npma_both", {"min": -0.5, "max": 2.0}, None, "np.ma.clip(m, -0.5, 2.0)",
              lambda m: ma.clip(m, -0.5, 2.0)),
             ("i8", "npma_int_bounds", {"min": 0, "max": 5}, None, "np.ma.clip(m, 0, 5)",
              lambda m: ma.clip(m, 0, 5))] + ZERO_TIE_ROWS,
    "round": [("f32", "npma_halves_to_even", {}, HALVES, "m.round()", lambda m: m.round()),
              ("f64", "npma_halves_to_even", {}, HALVES, "m.round()", lambda m: m.round()),
              ("f16", "npma_basic", {}, None, "m.round()", lambda m: m.round()),
              ("f32", "npma_decimals_2", {"decimals": 2}, None, "m.round(2)",
               lambda m: m.round(2)),
              ("f64", "npma_decimals_m1", {"decimals": -1}, None, "m.round(-1)",
               lambda m: m.round(-1)),
              # decimals 1: the scale 10^1 (the sweep's npma_unary_math.h:145,
              # whose `d > 1` for `d > 0` divided there; 2 and -1 agree)
              ("f64", "npma_decimals_1", {"decimals": 1}, None, "m.round(1)",
               lambda m: m.round(1)),
              ("i64", "npma_basic", {}, None, "m.round()", lambda m: m.round())],
    "angle": [("f32", "npma_signs", {}, SIGNS, "np.ma.angle(m)", lambda m: ma.angle(m)),
              ("f64", "npma_signs", {}, SIGNS, "np.ma.angle(m)", lambda m: ma.angle(m)),
              ("f16", "npma_basic", {}, None, "np.ma.angle(m)", lambda m: ma.angle(m)),
              ("i8", "npma_basic", {}, None, "np.ma.angle(m)", lambda m: ma.angle(m)),
              ("i64", "npma_basic", {}, None, "np.ma.angle(m)", lambda m: ma.angle(m)),
              ("bool", "npma_basic", {}, None, "np.ma.angle(m)", lambda m: ma.angle(m))],
    "conj_physical": [("f32", "npma_basic", {}, SIGNS, "np.ma.conjugate(m)",
                       lambda m: ma.conjugate(m)),
                      ("i64", "npma_basic", {}, None, "np.ma.conjugate(m)",
                       lambda m: ma.conjugate(m)),
                      ("bool", "npma_bool_int8", {}, None, "np.ma.conjugate(m)",
                       lambda m: ma.conjugate(m))],
}


def extra_cases(short):
    out = []
    for op, rows in EXTRA.items():
        for dt, variant, kw, force, call, f in rows:
            if dt != short:
                continue
            rules = ("NPMA-21",) if op == "round" else ("NPMA-4", "NPMA-21")
            if variant == "npma_decimals_m1":  # values in the tens
                build = (lambda g: [NpMasked(rand_data(g, (3, 4), "f64") * 40,
                                             rand_mask(g, (3, 4)))])
            else:
                build = (lambda g, force=force: [rand_m(g, (3, 4), short, force=force)])
            out.append(Case(
                id=f"{op}.masked.{short}.{variant}", op=op, rules=rules, tolerance="exact",
                build=build, run=lambda ins, _kw, f=f: [from_np(f(to_np(ins[0])))],
                torch_call=call, kwargs=kw, check_masked_out=True, tag_rules=with_fills,
                profile="numpy_ma"))
    return out


# NPMA-22: in-place arithmetic, MaskedArray's __iadd__ __isub__ __imul__
# __itruediv__ (torch's add_ ... and their aliases)
INPLACE = {"add_": "+=", "sub_": "-=", "mul_": "*=", "div_": "/=", "subtract_": "-=",
           "multiply_": "*=", "divide_": "/=", "true_divide_": "/=", "floor_divide_": "//="}


def inplace_run(sym):
    def run(ins, kw):
        a, b = to_np(ins[0]), to_np(ins[1])
        if sym == "+=":
            a += b
        elif sym == "-=":
            a -= b
        elif sym == "*=":
            a *= b
        elif sym == "//=":
            a //= b
        else:
            a /= b
        return [from_np(a)]
    return run


def inplace_cases(short):
    if short not in ("f32", "f64", "i64", "bool", "f16"):
        return []
    out = []
    for op, sym in INPLACE.items():
        alias = op in ("subtract_", "multiply_", "divide_", "true_divide_")
        isf = short in FLOATS
        rows = {("masked_masked", "npma_masks_differ"):
                (lambda g: [rand_m(g, (3, 4), short), rand_m(g, (3, 4), short)], "a, b")}
        if not alias and short == "f32":
            rows[("masked_scalar", "npma_scalar")] = (
                lambda g: [rand_m(g, (3, 4), "f32"), 2.5], "a, 2.5")
            rows[("masked_masked", "npma_bcast_row")] = (
                lambda g: [rand_m(g, (3, 4), "f32"), rand_m(g, (4,), "f32")], "a, b")
            rows[("masked_masked", "npma_bcast_output")] = (
                lambda g: [rand_m(g, (4,), "f32"), rand_m(g, (3, 4), "f32")], "a, b")
            rows[("masked_dense", "npma_f64_operand")] = (
                lambda g: [rand_m(g, (3, 4), "f32"), rand_data(g, (3, 4), "f64")], "a, t")
        if not alias and short == "i64":
            rows[("masked_scalar", "npma_float_scalar")] = (
                lambda g: [rand_m(g, (3, 4), "i64"), 2.5], "a, 2.5")
        if op == "floor_divide_":
            fa = MOD_A if isf else int_edges(MOD_A, short)
            fb = MOD_B if isf else int_edges(MOD_B, short)
            if short == "bool":
                fa, fb = {(0, 0): True, (1, 1): False}, {(0, 0): False, (1, 1): True}
            rows[("masked_masked", "npma_divisor_zeros")] = (
                lambda g, fa=fa, fb=fb: same_mask(g, short, fa, fb), "a, b")
        if op == "div_" and isf:
            rows[("masked_masked", "npma_divisor_zeros")] = (
                lambda g: same_mask(g, short, DIV_A if short == "f64" else
                                    {k: v for k, v in DIV_A.items() if abs(v) < 1e4},
                                    DIV_B if short == "f64" else
                                    {k: v for k, v in DIV_B.items() if v != 1e-10}), "a, b")
            # non-finite quotients outside the domain stay specified
            rows[("masked_masked", "npma_nonfinite")] = (
                lambda g: same_mask(g, short, {(0, 0): math.inf, (1, 1): math.nan,
                                               (2, 2): -math.inf},
                                    {(0, 0): 2.0, (1, 1): 1.0, (2, 2): 0.5}), "a, b")
        if alias and short != "f32":
            continue
        for (layout, variant), (build, args) in rows.items():
            rules = ("NPMA-22",)
            if "bcast" in variant:
                rules += ("NPMA-16",)
            err = None
            if variant == "npma_bcast_output":
                err = "SHAPE_MISMATCH"
            elif (not isf and sym == "/=") or variant == "npma_float_scalar" or (
                    short == "bool" and sym in ("-=", "//=")):
                err, rules = "DTYPE_MISMATCH", rules + ("NPMA-4",)
            if variant in ("npma_scalar", "npma_f64_operand"):
                rules += ("NPMA-4",)
            out.append(Case(
                id=f"{op}.{layout}.{short}.{variant}", op=op, rules=rules, tolerance="exact",
                build=build, run=inplace_run(sym), torch_call=f"{args.split(',')[0]} {sym}"
                f"{args.split(',')[1]}", error_class=err, check_masked_out=True,
                tag_rules=with_fills, profile="numpy_ma"))
    return out


# NPMA-23: m.pow_(e) as m **= e (MaskedArray.__ipow__)
IPOW_ROWS = {  # variant -> (dtypes, exponent, forced values)
    "npma_exponent_2": (("f32", "f64", "f16", "i64", "i8"), 2, None),
    "npma_exponent_0_5": (("f32", "f64"), 0.5, {(0, 0): -2.0, (1, 1): -0.0, (2, 2): 0.0}),
    "npma_exponent_m1": (("f32", "i64"), -1, {(0, 0): 0.0, (1, 1): -0.0}),
    "npma_float_exponent": (("i64",), 2.5, None),
    "npma_overflow": (("f32",), 2, {(0, 0): 1e30, (1, 1): -1e30}),
}


def ipow_cases(short):
    out = []

    def run(ins, kw):
        a = to_np(ins[0])
        a **= ins[1]
        return [from_np(a)]
    for variant, (dts, e, force) in IPOW_ROWS.items():
        if short not in dts:
            continue
        err = None
        if short in INTS and (isinstance(e, float) or e < 0):
            err = "DTYPE_MISMATCH"
        tol = "exact" if short in INTS else "ulp:2"
        out.append(Case(
            id=f"pow_.masked_scalar.{short}.{variant}", op="pow_", rules=("NPMA-4", "NPMA-23"),
            tolerance=tol, build=lambda g, e=e, f=force: [rand_m(g, (3, 4), short, force=f), e],
            run=run, torch_call=f"m **= {py(e)}", error_class=err, check_masked_out=True,
            tag_rules=with_fills, profile="numpy_ma"))
    return out


def same_mask(g, short, fa=None, fb=None):
    mask = rand_mask(g, (3, 4))
    a, b = rand_data(g, (3, 4), short), rand_data(g, (3, 4), short)
    for idx, v in (fa or {}).items():
        a[idx], mask[idx] = v, True
    for idx, v in (fb or {}).items():
        b[idx], mask[idx] = v, True
    return [NpMasked(a, mask), NpMasked(b, mask.clone())]


# NPMA-6: (a + b).sum(0) != a.sum(0) + b.sum(0) under numpy.ma: the sum of
# a + b only counts the elements where both are specified.
ASSOC_A = [[1.0, 2.0, 4.0], [8.0, 16.0, 32.0]]
ASSOC_AM = [[1, 1, 0], [1, 0, 1]]
ASSOC_B = [[100.0, 200.0, 400.0], [800.0, 1600.0, 3200.0]]
ASSOC_BM = [[1, 0, 1], [1, 1, 1]]


def assoc_pair(short):
    return [fixed_m(ASSOC_A, ASSOC_AM, short), fixed_m(ASSOC_B, ASSOC_BM, short)]


def assoc_sum_input(short):
    """(a + b) of assoc_pair under numpy.ma, as the input of sum."""
    r = ma.add(to_np(assoc_pair(short)[0]), to_np(assoc_pair(short)[1]))
    return from_np(r)


# variant: (shape, dim, keepdim, p_true, empty row)
REDUCE_ROWS = {
    "npma_all": ((3, 4), None, None, 0.65, None),
    "npma_dim0": ((3, 4), 0, None, 0.65, None),
    "npma_dim1": ((3, 4), 1, None, 0.65, None),
    "npma_dim1_keepdim": ((3, 4), 1, True, 0.65, None),
    "npma_dims0_2_3d": ((2, 3, 4), (0, 2), None, 0.65, None),
    "npma_fully_masked_all": ((3, 4), None, None, 0.0, None),
    "npma_fully_masked_dim1": ((3, 4), 1, None, 0.65, 1),
    "npma_zero_size_all": ((0, 4), None, None, 0.65, None),
    "npma_zero_size_dim0": ((0, 4), 0, None, 0.65, None),
    "npma_dim_out_of_range": ((3, 4), 2, None, 0.65, None),
}


def reduce_cases(short):
    out = []
    for op in ("sum", "mean", "prod", "amin", "amax"):
        if short == "u8" and op in ("sum", "prod"):
            continue  # numpy.ma sums uint8 into uint64, which mtcs has no name for
        for variant, (shape, dim, keepdim, p, empty) in REDUCE_ROWS.items():
            if short not in FULL and variant not in ("npma_all", "npma_dim1",
                                                     "npma_fully_masked_dim1"):
                continue
            if op == "prod" and isinstance(dim, tuple):
                continue  # kwargs.def: prod takes one dim (torch's signature)
            err = None
            if variant == "npma_dim_out_of_range":
                err = "INDEX_OUT_OF_RANGE"
            elif op in ("amin", "amax") and variant in ("npma_zero_size_all",
                                                        "npma_zero_size_dim0"):
                err = "INVALID_ARGUMENT"  # zero-size reduction without identity

            def build(g, shape=shape, p=p, empty=empty, op=op):
                lo, hi = (0.5, 1.5) if op == "prod" and short in FLOATS else (None, None)
                if op == "prod" and short in INTS:
                    lo, hi = -3, 4
                m = rand_m(g, shape, short, p, lo, hi)
                if empty is not None:
                    m.mask[empty] = False
                return [m]
            run = reduce_run(op, dim, keepdim)
            kwargs = {}
            if dim is not None:
                kwargs["dim"] = dim
            if keepdim is not None:
                kwargs["keepdim"] = keepdim
            tol = tol_reduce(short, op)
            out.append(Case(
                id=f"{op}.masked.{short}.{variant}", op=op, rules=("NPMA-4", "NPMA-5"),
                tolerance=tol, build=build, run=run, torch_call=reduce_call(op, dim, keepdim),
                kwargs=kwargs, error_class=err, check_masked_out=True, tag_rules=with_fills,
                profile="numpy_ma", check=f32_headroom(tol, run, to64)))
    if short in FULL:
        # NPMA-5: numpy's sum starts at +0.0 (the identity): a sum of only
        # -0.0 is +0.0, with or without a masked element (filled with +0.0)
        for variant, mask, want_neg in (("npma_negative_zeros_all", [[1, 1], [1, 1]], False),
                                        ("npma_negative_zeros_masked_all", [[1, 0], [1, 1]],
                                         False)):
            out.append(Case(
                id=f"sum.masked.{short}.{variant}", op="sum", rules=("NPMA-4", "NPMA-5"),
                tolerance="exact",
                build=lambda g, mask=mask: [fixed_m([[-0.0, -0.0], [-0.0, -0.0]], mask, short)],
                run=reduce_run("sum", None, None), torch_call="m.sum()",
                check_masked_out=True, tag_rules=with_fills, profile="numpy_ma",
                check=zero_sign_check(want_neg)))
    if short in FLOATS:
        # NPMA-6: sum over (a + b) and the sums of a and b (add.*.npma_associativity)
        for variant, build in (("npma_associativity_a_plus_b",
                                lambda g: [assoc_sum_input(short)]),
                               ("npma_associativity_a", lambda g: [assoc_pair(short)[0]]),
                               ("npma_associativity_b", lambda g: [assoc_pair(short)[1]])):
            out.append(Case(
                id=f"sum.masked.{short}.{variant}", op="sum", rules=("NPMA-5", "NPMA-6"),
                tolerance="exact", build=build, run=reduce_run("sum", 0, None),
                torch_call="m.sum(axis=0)", kwargs={"dim": 0}, check_masked_out=True,
                tag_rules=with_fills, profile="numpy_ma", check=assoc_check(variant)))
    return out


# Group 3: all, argmin, argmax, var, std (m.all, m.argmin, ... with axis=)
RED2_RULES = {"all": ("NPMA-5", "NPMA-12"), "argmin": ("NPMA-5", "NPMA-13"),
              "argmax": ("NPMA-5", "NPMA-13"), "var": ("NPMA-5", "NPMA-14"),
              "std": ("NPMA-5", "NPMA-14")}
NP_NAME.update({op: op for op in RED2_RULES})
# argmin/argmax: ties with a masked element (filled with the dtype's top /
# bottom: the first index wins) and a specified NaN (wins)
ARG_TIES = {"argmin": ([[math.inf, math.inf, math.inf], [2.0, math.nan, 0.5], [3.0, 3.0, 3.0]],
                       [[0, 1, 1], [0, 1, 1], [0, 1, 1]]),
            "argmax": ([[-math.inf, -math.inf, -math.inf], [2.0, math.nan, 0.5],
                        [3.0, 3.0, 3.0]], [[0, 1, 1], [0, 1, 1], [0, 1, 1]])}
# all: NaN is true, -0.0 false; var/std: a NaN or inf makes the variance masked
RED2_EDGE = {"all": ([[math.nan, 1.0, -0.0], [2.0, -2.0, 0.5], [1.0, 1.0, 1.0]],
                     [[1, 1, 0], [1, 1, 1], [0, 0, 0]]),
             "var": ([[math.nan, 1.0, 2.0], [2.0, math.inf, 0.5], [1.0, 3.0, 7.0],
                      [3e200, -3e200, 0.0]],
                     [[1, 1, 1], [1, 1, 1], [1, 0, 1], [1, 1, 1]])}
RED2_EDGE["std"] = RED2_EDGE["var"]
# var/std over all elements with one element specified: count - ddof = 1
# (ddof 0), numpy's 0.0, specified (NaN under the mask: never read)
RED2_ONE_ALL = ([[7.0, -3.0, 1.5], [2.5, math.nan, 4.0]], [[0, 0, 0], [1, 0, 0]])


def tol_var(short):
    # numpy sums float16/float32 pairwise in float (the reference: in double)
    return {"f16": "rel:1e-2", "f32": "rel:1e-5"}.get(short, "abs:1e-12")


def reduce2_cases(short):
    out = []
    for op, rules in RED2_RULES.items():
        is_arg = op in ("argmin", "argmax")
        for variant, (shape, dim, keepdim, p, empty) in REDUCE_ROWS.items():
            if short not in FULL and variant not in ("npma_all", "npma_dim1"):
                continue
            if variant in ("npma_zero_size_dim0", "npma_dims0_2_3d") and (
                    is_arg or short != "f32"):
                continue  # argmin takes one dim; the file-size budget
            if variant == "npma_dim1_keepdim" and short != "f64":
                continue
            err = None
            if variant == "npma_dim_out_of_range":
                err = "INDEX_OUT_OF_RANGE"
            elif is_arg and variant == "npma_zero_size_all":
                err = "INVALID_ARGUMENT"  # attempt to get argmin of an empty sequence

            def build(g, shape=shape, p=p, empty=empty):
                m = rand_m(g, shape, short, p)
                if empty is not None:
                    m.mask[empty] = False
                return [m]
            kwargs = {}
            if dim is not None:
                kwargs["dim"] = dim
            if keepdim is not None:
                kwargs["keepdim"] = keepdim
            tol = tol_var(short) if op in ("var", "std") else "exact"
            run = reduce_run(op, dim, keepdim)
            out.append(Case(
                id=f"{op}.masked.{short}.{variant}", op=op, rules=rules, tolerance=tol,
                build=build, run=run, torch_call=reduce_call(op, dim, keepdim), kwargs=kwargs,
                error_class=err, check_masked_out=True, tag_rules=with_fills,
                profile="numpy_ma"))
        edge = ARG_TIES.get(op) or RED2_EDGE.get(op)
        if short in FULL and edge:
            for variant, dim in (("npma_edges_dim1", 1), ("npma_edges_all", None)):
                tol = tol_var(short) if op in ("var", "std") else "exact"
                out.append(Case(
                    id=f"{op}.masked.{short}.{variant}", op=op, rules=rules, tolerance=tol,
                    build=lambda g, e=edge: [fixed_m(e[0], e[1], short)],
                    run=reduce_run(op, dim, None), torch_call=reduce_call(op, dim, None),
                    kwargs={} if dim is None else {"dim": dim}, check_masked_out=True,
                    tag_rules=with_fills, profile="numpy_ma"))
        if op in ("var", "std") and short in ("f32", "f64"):
            out.append(Case(
                id=f"{op}.masked.{short}.npma_one_specified_all", op=op, rules=rules,
                tolerance=tol_var(short),
                build=lambda g: [fixed_m(RED2_ONE_ALL[0], RED2_ONE_ALL[1], short)],
                run=reduce_run(op, None, None), torch_call=reduce_call(op, None, None),
                kwargs={}, check_masked_out=True, tag_rules=with_fills, profile="numpy_ma"))
    return out


def zero_sign_check(want_neg):
    def check(ins, outs):
        v = outs[0].data
        if float(v) != 0.0 or bool(torch.signbit(v)) != want_neg:
            raise Surprise(f"sum is {float(v)!r}, expected {'-' if want_neg else '+'}0.0")
    return check


def assoc_check(variant):
    def check(ins, outs):
        if variant != "npma_associativity_a_plus_b":
            return
        a, b = (to_np(x) for x in assoc_pair("f64"))
        lhs = ma.add(a, b).sum(axis=0)
        rhs = a.sum(axis=0) + b.sum(axis=0)
        if ma.allequal(lhs, rhs, fill_value=False):
            raise Surprise("(a + b).sum(0) equals a.sum(0) + b.sum(0): no counter-example")
    return check


# ---- torch's OpInfo samples --------------------------------------------------------

OPINFO = {"neg": "neg", "abs": "abs", "exp": "exp", "log": "log", "sqrt": "sqrt",
          "add": "add", "sub": "sub", "mul": "mul", "div": "div.no_rounding_mode", "pow": "pow",
          "sum": "sum", "mean": "mean", "prod": "prod", "amin": "amin", "amax": "amax"}


# samples per op: the golden file stays under 3 MB
OPINFO_PER_OP = {"f32": 2, "f64": 2, "f16": 1, "i64": 1}


def opinfo_cases(short):
    dt = ALL_DTYPES[short]
    out = []
    if not OPINFO_PER_OP.get(short):
        return out
    for op, name in OPINFO.items():
        try:
            if not opinfo.supports(name, dt):
                continue
            smp = opinfo.samples(name, dt, crop=5, limit=10)
        except KeyError:
            continue
        k = 0
        for src, s in smp:
            case = opinfo_case(op, short, src, s, k)
            if case is None:
                continue
            out.append(case)
            k += 1
            if k == OPINFO_PER_OP.get(short, 0):
                break
    return out


def opinfo_case(op, short, src, s, k):
    if not isinstance(s.input, torch.Tensor) or s.input.dtype != ALL_DTYPES[short]:
        return None
    x = s.input.clone()
    if x.ndim == 0 or x.numel() == 0:
        return None
    if op in UNARY:
        if s.args or s.kwargs or not unary_ok(op, short):
            return None
        tol = UNARY[op][1](short)
        run = unary_run(op)
        return Case(id=f"{op}.masked.{short}.npma_opinfo_{k}", op=op, rules=U_RULES[op],
                    tolerance=tol, build=lambda g: [NpMasked(x.clone(), rand_mask(g, x.shape))],
                    run=run, torch_call=f"np.ma.{NP_NAME[op]}(m)", check_masked_out=True,
                    tag_rules=with_fills, profile="numpy_ma", source=src,
                    check=f32_headroom(tol, run, to64))
    if op in BINARY or op == "pow":
        if s.kwargs or len(s.args) != 1:
            return None
        y = s.args[0]
        if isinstance(y, torch.Tensor) and y.ndim == 0:
            # a 0-d tensor: numpy broadcasts it (a 0-d array of its dtype)
            if y.dtype != x.dtype or (op == "pow" and short not in FLOATS and int(y) < 0):
                return None
            y = y.clone()
            build = lambda g: [NpMasked(x.clone(), rand_mask(g, x.shape)), y.clone()]  # noqa: E731
            layout, args = "masked_dense", "m, t"
        elif isinstance(y, torch.Tensor):
            if y.shape != x.shape or y.dtype != x.dtype:
                return None
            y = y.clone()
            build = lambda g: [NpMasked(x.clone(), rand_mask(g, x.shape)),  # noqa: E731
                               NpMasked(y.clone(), rand_mask(g, x.shape))]
            layout, args = "masked_masked", "a, b"
        elif isinstance(y, (int, float)) and not isinstance(y, bool):
            build = lambda g: [NpMasked(x.clone(), rand_mask(g, x.shape)), y]  # noqa: E731
            layout, args = "masked_scalar", f"m, {py(y)}"
        else:
            return None
        if op == "pow":
            if layout == "masked_masked":
                return None
            if short not in FLOATS and isinstance(y, int) and y < 0:
                return None
            run, call = pow_run, f"np.ma.power({args})"
            # integers to an integer power: exact; floats: C's pow (float16
            # through float32)
            tol = "exact" if short not in FLOATS else "ulp:2"
        else:
            if op == "sub" and short == "bool":
                return None
            run, call, tol = binary_run(op), f"np.ma.{NP_NAME[op]}({args})", "exact"
        return Case(id=f"{op}.{layout}.{short}.npma_opinfo_{k}", op=op,
                    rules=("NPMA-2", "NPMA-4") if op != "pow" else ("NPMA-4",), tolerance=tol,
                    build=build, run=run, torch_call=call, check_masked_out=True,
                    tag_rules=with_fills, profile="numpy_ma", source=src,
                    check=f32_headroom(tol, run, to64))
    # reductions
    if s.args or set(s.kwargs) - {"dim", "keepdim"}:
        return None
    dim, keepdim = s.kwargs.get("dim"), s.kwargs.get("keepdim")
    if isinstance(dim, list):
        dim = tuple(dim)
    if dim == ():
        return None
    if op == "prod" and isinstance(dim, tuple):
        return None
    if short == "u8" and op in ("sum", "prod"):
        return None
    kwargs = {}
    if dim is not None:
        kwargs["dim"] = dim
    if keepdim is not None:
        kwargs["keepdim"] = keepdim
    tol = tol_reduce(short, op)
    run = reduce_run(op, dim, keepdim)
    return Case(id=f"{op}.masked.{short}.npma_opinfo_{k}", op=op, rules=("NPMA-4", "NPMA-5"),
                tolerance=tol, build=lambda g: [NpMasked(x.clone(), rand_mask(g, x.shape))],
                run=run, torch_call=reduce_call(op, dim, keepdim), kwargs=kwargs,
                check_masked_out=True, tag_rules=with_fills, profile="numpy_ma", source=src,
                check=f32_headroom(tol, run, to64))


# amin/amax with a NaN specified (numpy's minimum/maximum propagate it) and
# one masked out (never read), an inf specified and a -inf masked out
# (tests/sweep: a mutant that let a NaN through only when both values were
# NaN survived). After the loop below, so that no earlier case moves.
NAN_MINMAX = ([[1.0, math.nan, -2.0, 3.0], [math.nan, 5.0, -1.0, 2.0],
               [4.0, 0.5, math.inf, -math.inf]],
              [[1, 1, 1, 1], [0, 1, 1, 1], [1, 1, 1, 0]])


def nan_minmax_cases():
    out = []
    for short in ("f32", "f64"):
        for op in ("amin", "amax"):
            for variant, dim in (("npma_nan_all", None), ("npma_nan_dim1", 1)):
                run = reduce_run(op, dim, None)
                tol = tol_reduce(short, op)
                out.append(Case(
                    id=f"{op}.masked.{short}.{variant}", op=op, rules=("NPMA-4", "NPMA-5"),
                    tolerance=tol, build=lambda g, short=short: [fixed_m(*NAN_MINMAX, short)],
                    run=run, torch_call=reduce_call(op, dim, None),
                    kwargs={} if dim is None else {"dim": dim}, check_masked_out=True,
                    tag_rules=with_fills, profile="numpy_ma", check=f32_headroom(tol, run, to64)))
    return out


def cases():
    out = []
    for short in ALL_DTYPES:
        if short == "bf16":
            continue  # numpy has no bfloat16
        out += masked_tensor_cases(short)
        out += to_tensor_cases(short)
        out += unary_cases(short)
        out += unary8_cases(short)
        out += pow_cases(short)
        out += binary_cases(short)
        out += bin2_cases(short)
        out += shift_cases(short)
        out += bcast_cases(short)
        out += mfn_cases(short)
        out += struct_cases(short)
        out += arith_alias_cases(short)
        out += median_cases(short)
        out += extra_cases(short)
        out += inplace_cases(short)
        out += ipow_cases(short)
        out += reduce_cases(short)
        out += reduce2_cases(short)
        out += opinfo_cases(short)
    return check_ids(out + nan_minmax_cases())

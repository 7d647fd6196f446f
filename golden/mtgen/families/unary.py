"""Family unary: MaskedTensor's complete unary list (torch/masked/maskedtensor/
unary.py UNARY_NAMES), their aliases and the in-place variants `<op>_`
(MASK-4, MASK-5, UN-1..UN-6).

Which dtypes an op accepts and what it returns is torch's answer, asked once
per op and dtype on a tiny masked tensor (`_torch_verdict`): an op/dtype that
torch refuses becomes a `dtype_refused` error case, never a guess of ours.
Breadth comes from torch's own OpInfo samples (mtgen/opinfo.py), each sample
wrapped as a MaskedTensor with a random mask from the case's generator, as
torch's test_maskedtensor does; corners are our own cases."""
import functools
import math

import torch
from torch.masked import masked_tensor

from ..inputs import as_dense, expect_neg_zero, rand_masked, signed_zeros
from .. import sparse
from ..model import ALL_DTYPES, DTYPES, Case, case_rng, check_ids, py
from ..opinfo import sample_mask, samples

INF, NAN = math.inf, math.nan

# base op -> tolerance of its floating results. `exact`: torch's result is
# exactly rounded (or exact), so any correct implementation gives the same
# bits: abs/neg/sign..., rounding ops, clamp, nan_to_num, square and
# reciprocal (one IEEE operation), angle (0 or pi rounded), deg2rad/rad2deg
# (one product with the constant rounded to the dtype). The others are
# libm-class transcendental functions: torch computes float32 in float with
# vectorized (Sleef, 1 ulp) or Cephes code, so ulp:2 holds against a
# correctly rounded result; ulp:4 where torch's float32 algorithm itself
# is that far from its float64 (the generator checks float32 within half).
EXACT = {"abs", "neg", "positive", "conj_physical", "ceil", "floor", "round", "trunc",
         "frac", "sign", "signbit", "isnan", "bitwise_not", "clamp", "nan_to_num",
         "square", "reciprocal", "angle", "deg2rad", "rad2deg"}
ULP = {"sigmoid": "ulp:4", "lgamma": "ulp:8", "sinc": "ulp:4", "erfinv": "ulp:4",
       "i0": "ulp:4", "pow": "ulp:2", "tan": "ulp:4", "logit": "ulp:4",
       "acosh": "ulp:4", "erfc": "ulp:4"}

# alias -> the op it names (own op, same kernel)
ALIASES = {"absolute": "abs", "arccos": "acos", "arccosh": "acosh", "arcsin": "asin",
           "arcsinh": "asinh", "arctan": "atan", "arctanh": "atanh", "clip": "clamp",
           "negative": "neg", "fix": "trunc", "sgn": "sign"}

BASES = ["abs", "acos", "acosh", "angle", "asin", "asinh", "atan", "atanh", "bitwise_not",
         "ceil", "clamp", "conj_physical", "cos", "cosh", "deg2rad", "digamma", "erf", "erfc",
         "erfinv", "exp", "exp2", "expm1", "floor", "frac", "lgamma", "log", "log10", "log1p",
         "log2", "logit", "i0", "isnan", "nan_to_num", "neg", "positive", "pow", "rad2deg",
         "reciprocal", "round", "rsqrt", "sigmoid", "sign", "signbit", "sin", "sinc", "sinh",
         "sqrt", "square", "tan", "tanh", "trunc"]

# the in-place variants in ops.def (MaskedTensor accepts 58; the family's id
# range 100-199 holds 44: the aliases' and sgn_, conj_physical_, rad2deg_,
# log10_ are left out)
INPLACE = ["abs", "acos", "acosh", "asin", "asinh", "atan", "atanh", "bitwise_not", "ceil",
           "clamp", "cos", "cosh", "deg2rad", "digamma", "erf", "erfc", "erfinv", "exp", "exp2",
           "expm1", "floor", "frac", "lgamma", "log", "log1p", "log2", "logit", "i0",
           "nan_to_num", "neg", "pow", "reciprocal", "round", "rsqrt", "sigmoid", "sign", "sin",
           "sinc", "sinh", "sqrt", "square", "tan", "tanh", "trunc",
           # ids 450-463: the aliases' in-place variants and three more
           "absolute", "arccos", "arccosh", "arcsin", "arcsinh", "arctan", "arctanh", "clip",
           "fix", "negative", "sgn", "conj_physical", "rad2deg", "log10"]

ROUNDING = {"ceil", "floor", "round", "trunc", "frac"}
INT_TOKENS = ("i64", "i32", "i8", "bool")
# MaskedTensor refuses uint8 and bfloat16 data at construction (MASK-2): no
# u8 or bf16 cases.
UN_DTYPES = {k: v for k, v in ALL_DTYPES.items() if k not in ("u8", "bf16")}

# The default number arguments of the ops that need them: (args for floats,
# args for integers and bool). pow's exponent is inputs/1, the others kwargs.
DEFAULT_ARGS = {"clamp": ({"min": -0.5, "max": 0.5}, {"min": -2, "max": 3}),
                "pow": ((2.5,), (3,))}


def base_of(op):
    return ALIASES.get(op.rstrip("_"), op.rstrip("_"))


# sinc(x) = sin(pi x) / (pi x) is near 0 at the integers, where torch's
# float32 rounding of pi x makes the relative error unbounded: an absolute
# tolerance (values are at most 1), per dtype.
# digamma: torch's float32 Cephes code is ~30 ulp off near its root
# (digamma(1.5) = 0.0364899151 vs 0.0364899747): a relative tolerance.
ABS = {"sinc": {torch.float16: "abs:1e-3", torch.float32: "abs:1e-6",
                torch.float64: "abs:1e-14"},
       "digamma": {torch.float16: "rel:2e-3", torch.float32: "rel:1e-5",
                   torch.float64: "rel:1e-13"}}


# Where a GPU's math library is farther from the correctly rounded value
# than the op's ULP entry allows, per dtype. lgamma: CUDA's libdevice bounds
# double lgamma (4 ulp) only outside (-11.0001, -2.2637); at -2.5 it is 11
# ulp off (-0.056243716497674123 against glibc's -0.056243716497674047:
# libdevice itself run on the host, tests/libdevice/README.md). torch's own
# CUDA lgamma is libdevice's. float16/32 results are computed in double and
# rounded once, so ulp:8 holds there.
DEVICE = {"lgamma": {torch.float64: "ulp:16"}}


def tolerance(op, out_dtype):
    b = base_of(op)
    if out_dtype is not None and not out_dtype.is_floating_point:
        return "exact"
    if b in EXACT:
        return "exact"
    if b in ABS:
        return ABS[b][out_dtype or torch.float32]
    if out_dtype in DEVICE.get(b, {}):
        return DEVICE[b][out_dtype]
    return ULP.get(b, "ulp:2")


def call_args(op, dt, args=None, kwargs=None):
    b = base_of(op)
    if args is None and kwargs is None:
        d = DEFAULT_ARGS.get(b)
        if d is None:
            return (), {}
        a = d[0] if dt.is_floating_point else d[1]
        return (a, {}) if isinstance(a, tuple) else ((), a)
    return args or (), kwargs or {}


def torch_run(op, inplace):
    """The torch call: torch.<op>(m, *numbers, **kw), or m.<op>_(...)."""
    if inplace:
        return lambda ins, kw: [getattr(ins[0], op)(*ins[1:], **kw)]
    fn = getattr(torch, op)
    return lambda ins, kw: [fn(ins[0], *ins[1:], **kw)]


def call_text(op, inplace, args, kwargs, name="m"):
    """The torch call of a case, its tensor operand named `name`."""
    parts = [py(a) for a in args] + [f"{k}={py(v)}" for k, v in kwargs.items()]
    tail = ", ".join(parts)
    if inplace:
        return f"{name}.{op}({tail})"
    return f"torch.{op}({name}{', ' + tail if tail else ''})"


@functools.lru_cache(maxsize=None)
def _torch_verdict(op, dt, args, kw_items):
    """torch's result dtype for op on a masked tensor of dtype dt, or None
    when torch refuses it."""
    inplace = op.endswith("_")
    m = masked_tensor(torch.ones(2, dtype=dt), torch.tensor([True, False]))
    try:
        out = torch_run(op, inplace)([m, *args], dict(kw_items))[0]
    except (RuntimeError, NotImplementedError, TypeError, ValueError):
        return None
    return out.get_data().dtype


def verdict(op, dt, args, kwargs):
    return _torch_verdict(op, dt, tuple(args), tuple(sorted(kwargs.items())))


# ---- inputs -----------------------------------------------------------------

def int_data(g, shape, dt):
    """Small signed integers (and the width's extremes for int8, where abs,
    neg and square wrap), or random bools."""
    if dt == torch.bool:
        return torch.rand(shape, generator=g) < 0.5
    lo, hi = (-128, 128) if dt == torch.int8 else (-6, 7)
    return torch.randint(lo, hi, shape, generator=g).to(dt)


def int_masked(g, shape, dt, p_true=0.6):
    """Integer/bool masked tensor; masked-out data hold the width's minimum
    (false for bool): the stored poison of integer cases."""
    data, mask = int_data(g, shape, dt), torch.rand(shape, generator=g) < p_true
    if dt != torch.bool:
        data = data.masked_fill(~mask, torch.iinfo(dt).min)
    return masked_tensor(data, mask)


def from_sample(s):
    def build(g):
        t = s.input.clone()
        return masked_tensor(t, sample_mask(g, t))
    return build


# signed zeros, infinities, NaN, poles, domain edges, halves: every op's
# special values in one masked-in tensor
SPECIAL = (-0.0, 0.0, INF, -INF, NAN, 1.0, -1.0, 0.5, -0.5, 2.0, -2.0, -3.0, 1.5, -2.5, 1e-30,
           -1e-30, 3.0, 100.0, -100.0, 0.25)
# halves (round half to even), signed results of ceil/trunc/round/frac
HALVES = (0.5, 1.5, 2.5, -0.5, -1.5, -2.5, -0.4, 0.4, -0.0, 0.0, -2.0, 3.7, -3.7, 1e20, -1e20,
          4.5)


def special_for(op):
    """SPECIAL, but sigmoid(-100) underflows to 0 in torch's float32 while
    the true value (3.8e-44) is a float32 subnormal: torch is not within
    any ulp tolerance there, so sigmoid takes -20 instead; digamma takes
    0.999999 for 0.25, where reflecting it (psi(1 - x) - pi / tan(pi x),
    exact in real numbers) cancels two terms of about 1 / (1 - x): 1e-5 off
    in float64 (tests/sweep); 0.5 still holds the interval (0, 1)."""
    def sub(v):
        if op == "sigmoid" and v == -100.0:
            return -20.0
        if op == "digamma" and v == 0.25:
            return 0.999999
        return v
    return tuple(sub(v) for v in SPECIAL)


def fixed_masked(values, dt, p_true=1.0, g=None):
    data = torch.tensor(values, dtype=dt).reshape(4, -1)
    mask = torch.ones(data.shape, dtype=torch.bool)
    return masked_tensor(data, mask)


def coo_masked(g, dt, shape=(3, 4)):
    """COO data and mask with the same indices; mask values random (some
    stored entries masked out), data values from the dtype's generator."""
    n = shape[0] * shape[1]
    flat = torch.randperm(n, generator=g)[: n // 2].sort().values
    idx = torch.stack(torch.unravel_index(flat, shape))
    if dt.is_floating_point:
        vals = torch.randn(flat.numel(), generator=g, dtype=dt)
    else:
        vals = int_data(g, (flat.numel(),), dt)
    mvals = torch.rand(flat.numel(), generator=g) < 0.7
    data = torch.sparse_coo_tensor(idx, vals, shape).coalesce()
    mask = torch.sparse_coo_tensor(idx, mvals, shape).coalesce()
    return masked_tensor(data, mask)


def csr_masked(g, dt, shape=(3, 4)):
    """CSR data and mask of one structure (the COO case's entries, as
    torch.masked builds them); mask values random."""
    m = coo_masked(g, dt, shape)
    return masked_tensor(m.get_data().to_sparse_csr(), m.get_mask().to_sparse_csr())


def own_poison(m):
    """The stored poison of dtypes the generator's poison list cannot hold
    (1e30 overflows float16 and integers): NaN for float16, the width's
    minimum for integers, false for bool. Dense storage only."""
    data = m.get_data()
    if data.layout != torch.strided or data.dtype in (torch.float32, torch.float64):
        return m
    mask = m.get_mask()
    fill = NAN if data.dtype == torch.float16 else (
        False if data.dtype == torch.bool else torch.iinfo(data.dtype).min)
    return masked_tensor(data.masked_fill(~mask, fill), mask)


# ---- case makers --------------------------------------------------------------

def rules_for(op, short, variant, error):
    r = ["MASK-4"]
    if short in INT_TOKENS or base_of(op) in ("isnan", "signbit"):
        r.append("UN-1")
    if variant in ("dtype_refused", "inplace_refused", "args_negative_int_exponent"):
        r.append("UN-2")
    if variant == "special_values":
        r += ["MASK-5", "UN-3"]
    if variant == "rounding" or (variant == "special_values" and base_of(op) in ROUNDING):
        r.append("UN-4")
    if variant.startswith("args_"):
        r.append("UN-5")
    if op.endswith("_"):
        r.append("UN-6")
    return tuple(dict.fromkeys(r))


def tag_special(rules, outputs):
    """UN-3 and MASK-5 for every case whose result holds a special value
    (+-inf, NaN) at a masked-in position: poles, domain edges and overflows
    of any sample (log of a bool False, digamma of an int 0) are torch's
    special values, kept as values, not masks."""
    o = outputs[0] if outputs else None
    if not isinstance(o, torch.Tensor) or not hasattr(o, "get_mask"):
        return rules
    d, m = as_dense(o), as_dense(o.get_mask())
    if d.is_floating_point() and not torch.isfinite(d[m]).all():
        return tuple(dict.fromkeys(rules + ("MASK-5", "UN-3")))
    return rules


def make(op, layout, short, variant, build, args=(), kwargs=None, error=None, source=None,
         check=None, error_match=None):
    """One case of op; args are the numbers after the masked input."""
    kwargs = kwargs or {}
    dt = UN_DTYPES[short]
    inplace = op.endswith("_")
    out_dt = None if error else verdict(op, dt, args, kwargs)
    if error is None and out_dt is None:
        error = "DTYPE_MISMATCH"
    if layout == "masked" and args:
        layout = "masked_scalar"
    return Case(
        id=f"{op}.{layout}.{short}.{variant}", op=op,
        rules=rules_for(op, short, variant, error), tolerance=tolerance(op, out_dt),
        build=lambda g, b=build, a=args: [own_poison(b(g)), *a],
        run=torch_run(op, inplace), torch_call=call_text(op, inplace, args, kwargs),
        kwargs=kwargs, error_class=error, source=source, check=check,
        poison=dt in (torch.float32, torch.float64), error_match=error_match,
        tag_rules=tag_special)


def dtype_cases(op, short, limit):
    """OpInfo samples of op for one dtype (our own random tensor where torch
    has none or refuses the dtype: then the case is `dtype_refused`)."""
    dt = UN_DTYPES[short]
    args, kw = call_args(op, dt)
    ok = verdict(op, dt, args, kw) is not None
    if not ok:
        b = (lambda g, dt=dt: int_masked(g, (2, 3), dt)) if not dt.is_floating_point else \
            (lambda g, dt=dt: rand_masked(g, (2, 3), dt))
        return [make(op, "masked", short, "dtype_refused", b, args, kw)]
    out = []
    base = base_of(op)
    if base not in ("pow", "clamp") and limit:
        try:
            ss = samples(base, dt, crop=5, limit=limit)
        except KeyError:
            ss = []
        for k, (src, s) in enumerate(ss):
            if s.args or s.kwargs:
                continue
            out.append(make(op, "masked", short, f"opinfo_{k}", from_sample(s), args, kw,
                            source=src))
    if not out:
        b = (lambda g, dt=dt: int_masked(g, (2, 3), dt)) if not dt.is_floating_point else \
            (lambda g, dt=dt: rand_masked(g, (2, 3), dt))
        out.append(make(op, "masked", short, "basic", b, args, kw))
    return out


# per dtype: how many OpInfo samples each base op takes
# (goldens must stay under 3 MB: ~5 kB a case, so one sample per dtype)
LIMITS = {"f32": 1, "f64": 1, "f16": 1, "i64": 1, "i32": 1, "i8": 1, "bool": 1}
# f64 special values only where float64 behaves apart from float32
SPECIAL_F64 = {"digamma", "lgamma", "sinc", "rsqrt", "erfinv", "i0"}
# float16 special values where half's range shows (exp(100) = inf, 65504
# overflow) or torch's float computation rounds to half once
SPECIAL_F16 = {"exp", "expm1", "sigmoid", "rsqrt", "reciprocal", "digamma", "lgamma", "log1p",
               "erfinv", "cosh"}


def base_cases(op):
    out = []
    for short, lim in LIMITS.items():
        out += dtype_cases(op, short, lim)
    for short in ("f32",) + (("f64",) if op in SPECIAL_F64 else ()) + (
            ("f16",) if op in SPECIAL_F16 else ()):
        dt = UN_DTYPES[short]
        args, kw = call_args(op, dt)
        if verdict(op, dt, args, kw) is None:
            continue
        out.append(make(op, "masked", short, "special_values",
                        lambda g, dt=dt, sp=special_for(op): fixed_masked(sp, dt), args, kw))
    if op in ROUNDING:
        for short in ("f32", "f16"):
            dt = UN_DTYPES[short]
            out.append(make(op, "masked", short, "rounding",
                            lambda g, dt=dt: fixed_masked(HALVES, dt)))
    return out


# the dtypes besides float32 where an alias and an in-place variant get one
# small case each (torch's result or its refusal)
OTHER_DTYPES = ("f16", "f64", "i64", "i32", "i8", "bool")


def alias_cases(op):
    """An alias shares its op's kernel: one OpInfo sample (of the op it
    names) in float32, and one small case (or torch's refusal) in every
    other dtype: the alias's own dispatch may refuse what its op takes."""
    out = dtype_cases(op, "f32", 1)
    for short in OTHER_DTYPES:
        out += dtype_cases(op, short, 0)
    return out


def inplace_cases(op):
    """m.<op>_(): f32 (torch's result is the tensor m becomes), and one
    small case in every other dtype: refused where the out-of-place result
    is of another dtype that cannot be cast back (`inplace_refused`, UN-6),
    or where torch refuses the dtype out of place too (`dtype_refused`)."""
    out = dtype_cases(op, "f32", 1)
    for short in OTHER_DTYPES:
        dt = UN_DTYPES[short]
        args, kw = call_args(op, dt)
        if verdict(op, dt, args, kw) is not None:
            out += dtype_cases(op, short, 0)
            continue
        variant = ("dtype_refused" if verdict(op.rstrip("_"), dt, args, kw) is None
                   else "inplace_refused")
        b = (lambda g, dt=dt: int_masked(g, (2, 3), dt)) if not dt.is_floating_point else \
            (lambda g, dt=dt: rand_masked(g, (2, 3), dt))
        out.append(make(op, "masked", short, variant, b, args, kw))
    return out


def corner_cases():
    """Fully masked, zero-size, COO storage, number arguments (UN-5)."""
    out = []
    fm = lambda dt: lambda g: rand_masked(g, (3, 4), dt, p_true=0.0)  # noqa: E731
    zs = lambda dt: lambda g: rand_masked(g, (0, 4), dt)  # noqa: E731
    for op in ("sin", "round", "isnan", "digamma", "clamp_"):
        dt = torch.float32
        args, kw = call_args(op, dt)
        out.append(make(op, "masked", "f32", "fully_masked", fm(dt), args, kw))
        out.append(make(op, "masked", "f32", "zero_size", zs(dt), args, kw))
    out.append(make("bitwise_not", "masked", "i32", "fully_masked",
                    lambda g: int_masked(g, (3, 4), torch.int32, p_true=0.0)))
    # COO storage: values mapped over the coalesced data, dtype changes too
    for op, short in (("sin", "f32"), ("round", "f64"), ("isnan", "f32"), ("sqrt", "i64"),
                      ("clamp", "f32")):
        dt = UN_DTYPES[short]
        args, kw = call_args(op, dt)
        out.append(make(op, "coo", short, "basic", lambda g, dt=dt: coo_masked(g, dt), args,
                        kw))
    # CSR storage: the data's values mapped, crow/col kept; in place too
    # (torch takes it on CSR, unlike COO)
    for op, short in (("sin", "f32"), ("neg", "f64"), ("isnan", "f32"), ("sin", "i64"),
                      ("sin_", "f32"), ("abs_", "i32")):
        dt = UN_DTYPES[short]
        args, kw = call_args(op, dt)
        out.append(make(op, "csr", short, "basic", lambda g, dt=dt: csr_masked(g, dt), args,
                        kw))
    # in place on COO storage: torch's _unary_helper rebuilds the data
    # uncoalesced, then its own validation asks for the indices -> refused
    for op in ("abs_", "clamp_"):
        args, kw = call_args(op, torch.float32)
        out.append(make(op, "coo", "f32", "layout_refused",
                        lambda g: coo_masked(g, torch.float32), args, kw,
                        error="LAYOUT_MISMATCH", error_match="uncoalesced"))
    f = lambda dt, shape=(3, 4): lambda g: rand_masked(g, shape, dt)  # noqa: E731
    i = lambda dt: lambda g: int_masked(g, (3, 4), dt)  # noqa: E731
    sp = lambda dt: lambda g: fixed_masked(SPECIAL, dt)  # noqa: E731
    f32, f16, f64 = torch.float32, torch.float16, torch.float64
    # (op, short, variant, build, args, kwargs, error)
    table = [
        ("clamp", "f32", "args_min_only", f(f32), (), {"min": 0.0}, None),
        ("clamp", "f32", "args_int_max", f(f32), (), {"max": 1}, None),
        ("clamp", "f32", "args_min_gt_max", f(f32), (), {"min": 1.0, "max": -1.0}, None),
        ("clamp", "f32", "args_special", sp(f32), (), {"min": -1.0, "max": 1.0}, None),
        ("clamp", "f16", "args_min_max", f(f16), (), {"min": -0.3, "max": 0.3}, None),
        ("clamp", "i32", "args_int_bounds", i(torch.int32), (), {"min": -3, "max": 2}, None),
        ("clamp", "i64", "args_float_bound", i(torch.int64), (), {"min": 1.5}, None),
        ("clamp", "bool", "args_int_bounds", i(torch.bool), (), {"min": 0, "max": 2}, None),
        ("clamp", "f32", "args_no_bounds", f(f32), (), {}, "INVALID_ARGUMENT"),
        ("clip", "f32", "args_min_max", f(f32), (), {"min": -0.5, "max": 0.25}, None),
        ("clamp_", "i32", "args_float_bound", i(torch.int32), (), {"min": 0.5},
         "DTYPE_MISMATCH"),
        ("nan_to_num", "f32", "args_defaults", sp(f32), (), {}, None),
        ("nan_to_num", "f16", "args_defaults", sp(f16), (), {}, None),
        ("nan_to_num", "f64", "args_all", sp(f64), (),
         {"nan": 1.5, "posinf": 100.0, "neginf": -100.0}, None),
        ("nan_to_num", "f16", "args_overflow", sp(f16), (), {"posinf": 1e30, "nan": -2.0}, None),
        ("nan_to_num_", "f32", "args_all", sp(f32), (), {"nan": 7.0, "neginf": -7.0}, None),
        ("logit", "f32", "args_eps", sp(f32), (), {"eps": 0.25}, None),
        ("logit", "f64", "args_eps", sp(f64), (), {"eps": 1e-6}, None),
        ("logit", "f64", "args_eps_0", sp(f64), (), {"eps": 0.0}, None),
        ("logit_", "f32", "args_eps", sp(f32), (), {"eps": 0.1}, None),
        ("round", "f32", "args_decimals_refused", f(f32), (), {"decimals": 1},
         "INVALID_ARGUMENT"),
        ("round_", "f32", "args_decimals_refused", f(f32), (), {"decimals": 0},
         "INVALID_ARGUMENT"),
        ("pow", "i64", "args_int_exponent_2", i(torch.int64), (2,), {}, None),
        ("pow", "i8", "args_int_exponent_3", i(torch.int8), (3,), {}, None),
        ("pow", "i32", "args_float_exponent", i(torch.int32), (0.5,), {}, None),
        ("pow", "i64", "args_negative_int_exponent", i(torch.int64), (-1,), {},
         "DTYPE_MISMATCH"),
        ("pow", "bool", "args_int_exponent", i(torch.bool), (2,), {}, None),
        ("pow", "bool", "args_bool_exponent", i(torch.bool), (False,), {}, None),
        ("pow", "f16", "args_exponent_2", f(f16), (2,), {}, None),
        ("pow", "f32", "args_tensor_exponent_refused", f(f32), (torch.tensor(2.0),), {},
         "INVALID_ARGUMENT"),
        ("pow_", "i32", "args_float_exponent", i(torch.int32), (0.5,), {}, "DTYPE_MISMATCH"),
    ]
    for op, short, variant, build, args, kw, err in table:
        out.append(make(op, "masked", short, variant, build, args, kw, error=err))
    return out


# ---- the cases of the original six ops (ids kept) -------------------------------

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


def original_cases():
    out = []
    for short, dt in DTYPES.items():
        for op, variant, build, extra, check in UNARY_CASES:
            fn = getattr(torch, op)
            if op == "abs" and variant == "signed_zeros":
                check = abs_check
            out.append(Case(
                id=f"{op}.masked.{short}.{variant}", op=op, rules=("MASK-4",) + extra,
                tolerance=tolerance(op, dt), build=lambda g, b=build, dt=dt: [b(g, dt)],
                run=lambda ins, kw, fn=fn: [fn(ins[0])], torch_call=f"torch.{op}(m)",
                check=check))
        for variant, (e, build, check) in POW_CASES.items():
            out.append(Case(
                id=f"pow.masked_scalar.{short}.{variant}", op="pow", rules=("MASK-4",),
                tolerance=tolerance("pow", dt), build=lambda g, dt=dt, e=e, b=build: [b(g, dt), e],
                run=lambda ins, kw: [torch.pow(ins[0], ins[1])],
                torch_call=f"torch.pow(m, {py(e)})", check=check))
    return out


def cases():
    out = original_cases()
    have = {c.id for c in out}
    for op in BASES:
        out += [c for c in base_cases(op) if c.id not in have]
    for op in ALIASES:
        out += alias_cases(op)
    for op in INPLACE:
        out += inplace_cases(op + "_")
    out += corner_cases()
    out += sparse_cases({(c.id.split(".")[0], c.id.split(".")[1]) for c in out})
    out += plain_sparse_cases()
    out += logit_near_half_cases()
    return check_ids(out)


# logit near x = 0.5 (appended last: no earlier case moves): torch computes
# 1 - x and x / (1 - x) in the tensor's dtype, so the quotient's rounding is
# the result's error there (float32 up to ~900 ulps from the exact logit,
# float16 ~20). Found by golden/reseed.py (a draw of `logit_.masked.f16.basic`);
# the reference computed the quotient in double. float16 only: a float32
# case must hold the float64 result within half its tolerance
# (check_headroom), which torch's float32 logit does not do here.
NEAR_HALF = [0.49, 0.4958, 0.499, 0.501, 0.45, 0.51, 0.4999, 0.5, 0.3, 0.7, 0.25, 0.495]


def logit_near_half_cases():
    out = []
    for op, short in (("logit", "f16"), ("logit_", "f16")):
        out.append(make(op, "masked", short, "near_half",
                        lambda g, dt=UN_DTYPES[short]: fixed_masked(NEAR_HALF, dt)))
    return out


# ---- sparse storage (SP-1) ----------------------------------------------------

def sparse_cases(have):
    """Every unary op once on COO storage and once on CSR storage (data and
    mask of one structure, stored values whose mask is false among them;
    aliases excepted: tests/golden_coverage.py's LAYOUT_GAPS):
    torch's result, or its refusal (in place on COO). Stored values are in
    every op's domain (0.1 .. ~1.3), so the case tests the storage path;
    the value corners are the dense cases'. Plus an empty sparse tensor."""
    out = []
    for op in sparse.family_ops("unary"):
        if base_of(op) != op.rstrip("_"):
            continue  # an alias: its base op's kernel and cases (golden file size)
        short = "f32" if verdict(op, torch.float32, *call_args(op, torch.float32)) else "i32"
        dt = UN_DTYPES[short]
        args, kw = call_args(op, dt)
        for layout in ("coo", "csr"):
            if (op, layout) in have:
                continue
            build = (lambda g, dt=dt, lay=layout: sparse.LAYOUTS[lay](g, dt, positive=True))
            cid = f"{op}.{layout}.{short}.stored"
            err = sparse.outcome(cid, lambda g, b=build, a=args: [b(g), *a],
                                 torch_run(op, op.endswith("_")), kw)
            c = make(op, layout, short, "stored", build, args, kw, error=err,
                     error_match="uncoalesced" if err else None)
            out.append(c)
    for layout in ("coo", "csr"):
        for variant, corner in sparse.CORNERS:
            build = (lambda g, c=corner(layout): c(g, torch.float32))
            cid = f"sin.{layout}.f32.{variant}"
            err = sparse.outcome(cid, lambda g, b=build: [b(g)], torch_run("sin", False))
            out.append(make("sin", layout, "f32", variant, build, error=err))
            out[-1].rules += ("SP-1",)
    return out


# ---- plain sparse tensors (SP-5, SPP-1) -----------------------------------------

# layout variant -> (id layout token, plain-sparse builder key of
# sparse.plain, or our own builder below)
PLAIN_F32 = (("coo", "plain"), ("coo_uncoalesced", "plain_uncoalesced"), ("csr", "plain"))
# float64: every op on coalesced COO and CSR
PLAIN_F64 = (("coo", "plain"), ("csr", "plain"))
# the ops (aliases and in-place forms apart) that get a case in the other
# dtypes torch may accept: f16, bf16, i64, i32, bool (torch's result or refusal)
PLAIN_DTYPE_OPS = ("abs", "neg", "sin", "sqrt", "sign", "ceil", "square", "signbit", "isnan",
                   "abs_", "neg_")
PLAIN_OTHER_DTYPES = ("f16", "bf16", "i64", "i32", "bool")
# the ops of the CSC/BSR/BSC/batched/hybrid CSR cases: a sample of torch's
# CSR list (out of place and in place, round_'s CSR-only in-place form) and
# refusals (cos: no kernel; square and nan_to_num: COO only)
PLAIN_COMPRESSED_OPS = ("abs", "sin", "neg", "sqrt", "sign", "isnan", "angle", "round_", "tanh_",
                        "cos", "square")
COMPRESSED_OPS = PLAIN_COMPRESSED_OPS


def plain_hybrid(g, dt):
    """COO hybrid: sparse_dim 1 of a (4, 3) tensor, values [nnz, 3]; rows 0
    and 2 stored, coalesced; values inside every unary op's domain."""
    v = sparse.values(g, 6, dt, positive=True).reshape(2, 3)
    return torch.sparse_coo_tensor(torch.tensor([[0, 2]]), v, (4, 3)).coalesce()


def plain_hybrid_uncoalesced(g, dt):
    """COO hybrid, row 2 stored twice, out of order (uncoalesced)."""
    v = sparse.values(g, 9, dt, positive=True).reshape(3, 3)
    return torch.sparse_coo_tensor(torch.tensor([[2, 0, 2]]), v, (4, 3))


def plain_empty(shape, layout="coo"):
    """No stored entry: (3, 4), the 1-d (0,), a 0-size dim (0, 4); CSR (3, 4)."""
    def build(g, dt):
        nd = len(shape)
        t = torch.sparse_coo_tensor(torch.zeros(nd, 0, dtype=torch.int64),
                                    torch.zeros(0, dtype=dt), shape).coalesce()
        return t.to_sparse_csr() if layout == "csr" else t
    return build


# CSC, BSR and BSC of the COO case's (3, 4) entries; blocks of (1, 2) (the
# shape's only block size with two-element blocks both ways)
COMPRESSED = {"csc": lambda d: d.to_sparse_csc(), "bsr": lambda d: d.to_sparse_bsr((1, 2)),
              "bsc": lambda d: d.to_sparse_bsc((1, 2))}


def plain_csr_batched(g, dt):
    """Batched CSR (2, 3, 4): two batches of one pattern (torch wants one nnz
    per batch), values inside every unary op's domain."""
    pat = sparse.plain(g, torch.float32, "coo").to_dense() != 0
    v = sparse.values(g, 24, dt, positive=True).reshape(2, 3, 4)
    return (v * pat).to_sparse_csr()


def plain_csr_hybrid(g, dt):
    """Hybrid CSR (3, 4, 2), dense_dim 1: the COO case's entries, each a
    vector of 2 values."""
    pat = (sparse.plain(g, torch.float32, "coo").to_dense() != 0).unsqueeze(-1)
    v = sparse.values(g, 24, dt, positive=True).reshape(3, 4, 2)
    return (v * pat).to_sparse_csr(dense_dim=1)


def plain_values(g, dt, layout):
    """sparse.plain for the float dtypes; integers and bool from sparse.values
    (signed small integers, random bools) on the same structure; CSC, BSR
    and BSC converted from the coalesced COO."""
    if layout in COMPRESSED:
        return COMPRESSED[layout](plain_values(g, dt, "coo").to_dense())
    if dt.is_floating_point and dt != torch.bfloat16:
        return sparse.plain(g, dt, layout)
    t = sparse.plain(g, torch.float32, layout)
    if layout == "csr":
        return torch.sparse_csr_tensor(t.crow_indices(), t.col_indices(),
                                       sparse.values(g, t._nnz(), dt), t.shape)
    coal = t.is_coalesced()
    r = torch.sparse_coo_tensor(t._indices(), sparse.values(g, t._nnz(), dt), t.shape)
    return r.coalesce() if coal else r


PLAIN_BUILDERS = {
    "plain": None, "plain_uncoalesced": None,
    "plain_hybrid": lambda lay: plain_csr_hybrid if lay == "csr" else plain_hybrid,
    "plain_batched": lambda lay: plain_csr_batched,
    "plain_hybrid_uncoalesced": lambda lay: plain_hybrid_uncoalesced,
    "plain_empty": lambda lay: plain_empty((3, 4), lay), "plain_empty_1d": lambda lay: plain_empty((0,)),
    "plain_empty_zero_dim": lambda lay: plain_empty((0, 4)),
}


# Local error-class table of the plain sparse cases (sparse.py's table, which
# other families share, is left as it is): torch's refusals that DESIGN.md's
# table puts elsewhere than sparse.error_class's first match, checked first.
PLAIN_CLASSES = (
    # NotImplementedError for a bool input: a dtype refusal, not a layout one
    ("DTYPE_MISMATCH", ("on a bool tensor is not supported",
                        "Integers to negative integer powers are not allowed")),
    # round_ of CSC/BSR/BSC: torch's own assert that self is CSR (a layout refusal)
    ("LAYOUT_MISMATCH", ("self.is_sparse_csr() INTERNAL ASSERT FAILED",)),
)


plain_error_class = sparse.classifier(PLAIN_CLASSES)


def plain_outcome(case_id, build, run, kwargs=None):
    """sparse.outcome with the local table."""
    return sparse.outcome(case_id, build, run, kwargs, classify=plain_error_class)

def plain_case(op, short, lay, variant, args=None, kw=None, rules=("SP-5", "SPP-1"), vtag=None,
               tol=None, ok_only=False):
    """One plain-sparse case: torch's result on the case's own input, or its
    refusal (sparse.outcome)."""
    dt = ALL_DTYPES[short]
    inplace = op.endswith("_")
    a0, k0 = call_args(op, dt) if args is None else (args, kw or {})
    kw = k0 if kw is None else kw
    args = a0
    layout = {"plain": lay, "plain_uncoalesced": "coo_uncoalesced"}.get(variant, lay)
    mk = PLAIN_BUILDERS.get(variant)

    def build(g, a=args, layout=layout, mk=mk, dt=dt, lay=lay):
        x = plain_values(g, dt, layout) if mk is None else mk(lay)(g, dt)
        return [x, *a]
    cid = f"{op}.{lay}.{short}.{vtag or variant}"
    run = torch_run(op, inplace)
    err = plain_outcome(cid, build, run, kw)
    if err and ok_only:
        return None  # a refusal another case of the op already records (golden size)
    out_dt = None
    if not err:
        try:
            out_dt = run(build(case_rng(cid)), kw)[0].dtype
        except Exception:  # noqa: BLE001 - an older torch (variants.py) that cannot build it
            pass
    r = tuple(rules) + (("UN-6",) if inplace else ())
    # UN-1 (integer and bool inputs, bool results) where ops.def lists it
    if (short in INT_TOKENS or base_of(op) in ("isnan", "signbit")) and \
            "UN-1" in sparse.family_ops("unary").get(op, ()):
        r += ("UN-1",)
    return Case(id=cid, op=op, rules=r, tolerance=tol or tolerance(op, out_dt or dt), build=build,
                run=run, torch_call=call_text(op, inplace, args, kw, name="s"),
                kwargs=kw, error_class=err, poison=False)


def plain_sparse_cases():
    """Every unary op (aliases excepted, as for SP-1) on a plain sparse
    tensor, not masked: float32 on COO coalesced, COO uncoalesced (an index
    stored twice), CSR and hybrid COO; float64 on COO and CSR; the other
    dtypes on a few ops; empty tensors; pow's exponents (SPP-1): torch's
    sparse kernel (the zero-preserving ops) or its refusal. torch's op_db
    has no sparse sample generator for any unary op (only mul has one), so
    the inputs are our own."""
    out = []
    for op in sparse.family_ops("unary"):
        if base_of(op) != op.rstrip("_"):
            continue
        for layout, variant in PLAIN_F32:
            out.append(plain_case(op, "f32", "csr" if layout == "csr" else "coo", variant))
        # float64 and hybrid COO: the ops torch runs (their refusals are the
        # float32 cases')
        for layout, variant in PLAIN_F64:
            out.append(plain_case(op, "f64", layout, variant, ok_only=layout == "csr"))
        out.append(plain_case(op, "f32", "coo", "plain_hybrid", rules=("SP-5", "SPP-1"),
                              ok_only=True))
    out = [c for c in out if c is not None]
    for op in PLAIN_DTYPE_OPS:
        for short in PLAIN_OTHER_DTYPES:
            out.append(plain_case(op, short, "coo", "plain"))
        if op in ("abs", "sin", "signbit"):  # CSR integers: a sample (golden size)
            out.append(plain_case(op, "i64", "csr", "plain"))
    # uncoalesced hybrid, empty tensors (f32, f64), a few ops
    for op in ("sin", "neg_"):
        out.append(plain_case(op, "f64", "coo", "plain_hybrid_uncoalesced", rules=("SP-5", "SPP-1")))
    # (golden size: float64 on the (3, 4) shapes only)
    for op in ("sin", "neg", "isnan", "sin_", "abs"):
        for short in ("f32", "f64"):
            for lay, variant in (("coo", "plain_empty"), ("coo", "plain_empty_1d"), ("coo", "plain_empty_zero_dim"),
                                 ("csr", "plain_empty")):
                if short == "f64" and variant in ("plain_empty_1d", "plain_empty_zero_dim"):
                    continue
                out.append(plain_case(op, short, lay, variant, rules=("SP-5", "SPP-1")))
    # CSC, BSR, BSC, batched and hybrid CSR: torch runs every op it runs on
    # CSR on them (but round_, CSR only); a few ops each (golden size)
    for op in COMPRESSED_OPS:
        for lay, variant in (("csc", "plain"), ("bsr", "plain"), ("bsc", "plain"),
                             ("csr", "plain_batched"), ("csr", "plain_hybrid")):
            out.append(plain_case(op, "f32", lay, variant))
    for lay in ("csc", "bsr", "bsc"):
        out.append(plain_case("sin", "f64", lay, "plain"))
        out.append(plain_case("abs", "i64", lay, "plain"))
    # pow(S, e): the pattern is kept for e > 0; pow(S, 0) and negative
    # exponents: torch's choice (SPP-1)
    for e, tag in ((0, "exponent_0"), (0.0, "exponent_0_float"), (-1, "exponent_m1"),
                   (-0.5, "exponent_m0_5"), (2, "exponent_2"), (0.5, "exponent_0_5"),
                   (3, "exponent_3")):
        # float64 for the exponents torch treats apart (0, negative) only
        for short in ("f32", "f64") if e <= 0 else ("f32",):
            for lay, variant in (("coo", "plain"), ("coo", "plain_uncoalesced"), ("csr", "plain")):
                if tag == "exponent_0_float" and variant != "plain":
                    continue
                # x**3 is x*x*x in float (torch's pow_tensor_scalar special
                # case): two roundings, up to ~1.5 ulp from the true cube
                out.append(plain_case("pow", short, lay, variant, args=(e,), kw={},
                                      rules=("SP-5", "SPP-1"), vtag=f"{variant}_{tag}",
                                      tol="ulp:4" if e == 3 else None))
        out.append(plain_case("pow_", "f32", "coo", "plain", args=(e,), kw={},
                              rules=("SP-5", "SPP-1"), vtag=f"plain_{tag}"))
    for short, e in (("i64", 2), ("i64", -1), ("i32", 0.5), ("bool", 2)):
        out.append(plain_case("pow", short, "coo", "plain", args=(e,), kw={},
                              rules=("SP-5", "SPP-1"), vtag=f"plain_exponent_{py(e)}"
                              .replace("-", "m").replace(".", "_")))
    return out

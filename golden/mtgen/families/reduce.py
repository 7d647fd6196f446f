"""Family reduce: sum mean prod amin amax argmin argmax all norm var std
(RED-1 .. RED-8), every dtype MaskedTensor holds (uint8 it refuses itself)."""
import functools
import math
import warnings

import torch
from torch.masked import masked_tensor

from ..inputs import as_dense, masked, rand_mask, randn, uniform
from ..model import ALL_DTYPES, Case, check_ids, py
from ..opinfo import sample_mask, samples
from . import reduce_sparse

FLOATS = (torch.float16, torch.float32, torch.float64)
INTS = (torch.int64, torch.int32, torch.int8)
F, I, B = set(FLOATS), set(INTS), {torch.bool}

# op -> (dtypes torch accepts on a MaskedTensor, whether `dim` takes a tuple)
OPS = {
    "sum": (F | I | B, True),       # integers and bool -> int64
    "mean": (F, True),              # "Could not infer output dtype" for the rest
    "prod": (F | I | B, False),     # torch.prod(m, (0, 2)): TypeError; ints -> int64
    "amin": (F | I, True),          # bool: "identity of amin on torch.bool input"
    "amax": (F | I, True),
    "argmin": (F | I, False),       # dim: int only; index in the input dtype
    "argmax": (F | I, False),
    "all": (F | I | B, True),       # -> bool
    "norm": (F | I | B, True),      # torch.norm always passes p=: TypeError (RED-8)
    "var": (F | I, True),           # bool: "Subtraction ... with a bool tensor"; ints -> float32
    "std": (F | I, True),
}
ARG = ("argmin", "argmax")
SELECT = ("amin", "amax", "argmin", "argmax")  # ops that pick one element


def tolerance(op, dt):
    """Indices, bools and integers are exact; amin/amax select a value.
    float64 sums: abs:1e-12 (double accumulation vs torch's order).
    float32: abs:1e-5 (inputs ~N(0, 1), a handful of terms: torch's float32
    accumulation order vs double rounded once stays well inside; the
    generator checks torch's float32 result against float64 at half).
    float16: torch sums in float32 and rounds once, multiplies in float16
    rounding every step, and rounds every var/std step to float16; the
    reference does the same in the same (row-major) order, but torch's
    vectorized order and its float32 accumulator (vs double) can flip one
    last rounding: ulp:1 (exact held on every case here).
    var/std of integers compute in float32 the same way: ulp:1 (one case
    differs by 1 ulp: torch's float32 sum of squares vs double)."""
    if op in ARG or op == "all":
        return "exact"
    if dt in I or dt in B:
        return "ulp:1" if op in ("var", "std") else "exact"
    if op in ("amin", "amax") and dt == torch.float16:
        return "exact"
    if dt == torch.float16:
        return "ulp:1"
    return "abs:1e-5" if dt == torch.float32 else "abs:1e-12"


# ---- inputs ---------------------------------------------------------------

def own_poison(op, dt):
    """Masked-out data for dtypes mtgen.poison cannot store (float16 holds
    no 1e30, integers no NaN) and for `all` (whose adversary is a zero):
    the value that wins the op when read."""
    if op == "all":
        return False if dt == torch.bool else 0
    if dt == torch.bool:
        return True
    if dt in I:
        info = torch.iinfo(dt)
        return info.min if op in ("amin", "argmin") else info.max
    return -math.inf if op in ("amin", "argmin") else (math.nan if op in ("var", "std") else math.inf)


def uses_own_poison(op, dt):
    return op == "all" or dt not in (torch.float32, torch.float64)


def poison_own(m, op, dt):
    data, mask = m.get_data().clone(), m.get_mask()
    data[~mask] = own_poison(op, dt)
    return masked(data, mask)


def rand_data(g, shape, dt, op):
    if dt == torch.bool:
        return torch.rand(shape, generator=g) < 0.7
    if dt in I:
        return torch.randint(-5, 6, shape, generator=g, dtype=torch.int64).to(dt)
    if op == "prod":  # values in [0.5, 1.5] keep the product far from overflow
        return uniform(g, shape, dt, 0.5, 1.5)
    return randn(g, shape, dt)


def reduce_input(shape, p_true=0.65, empty_row=None):
    def build(g, dt, op):
        data = rand_data(g, shape, dt, op)
        mask = rand_mask(g, shape, p_true)
        if empty_row is not None:
            mask[empty_row] = False
        return [masked(data, mask)]
    return build


N, P = -0.0, 0.0
# Only signed zeros: the sign of each result is the whole answer. The sum
# starts at +0 (a slice of only -0 sums to +0: column 2, row 0), prod
# multiplies the signs (row 1: -0 * +0 * +0 = -0), amin/amax keep the first
# of equal zeros (row 1 vs row 2), argmin/argmax tie at the first zero.
# Every result is exact: tolerance `exact`.
ZEROS_DATA = [[N, N, N, N], [N, P, N, P], [P, N, N, N]]
ZEROS_MASK = [[1, 1, 1, 1], [1, 1, 0, 1], [1, 0, 1, 1]]


def zeros_input(g, dt, op):
    data = torch.tensor(ZEROS_DATA, dtype=dt)
    return [masked(data, torch.tensor(ZEROS_MASK, dtype=torch.bool))]


def negative_zeros_input(g, dt, op):
    """Random masks over data that is -0.0 everywhere: sum/mean give +0."""
    data = torch.full((3, 4), -0.0, dtype=dt)
    return [masked(data, rand_mask(g, (3, 4), 0.7), {(0, 0): -0.0})]


def fixed_input(rows, mask_rows):
    """Literal data (floats; NaN/inf allowed) and mask."""
    def build(g, dt, op):
        return [masked(torch.tensor(rows, dtype=dt), torch.tensor(mask_rows, dtype=torch.bool))]
    return build


NAN, INF = math.nan, math.inf
# Row 0: NaN masked in after a smaller/larger value (amin/amax/argmin/argmax
# propagate NaN: the first NaN's index). Row 1: a NaN only under the mask.
NAN_DATA = [[1.0, NAN, -2.0, NAN], [3.0, NAN, -1.0, 2.0]]
NAN_MASK = [[1, 1, 1, 1], [1, 0, 1, 1]]
# Ties: row 0 max 5 at 1 and 3, min 1 at 0 and 2; row 1 the first maximum
# (4 at index 1) is masked out, the second (index 3) is the answer.
TIES_DATA = [[1, 5, 1, 5], [2, 4, 0, 4]]
TIES_MASK = [[1, 1, 1, 1], [1, 0, 1, 1]]
# The fill ties a masked-in value: row 0 for argmax holds -inf at the masked
# in index 2 only, row 1 for argmin +inf at index 3; the masked-out index 0
# takes the same fill and comes first, so torch answers 0 (a masked-out
# index, RED-4).
FILL_TIE_DATA = [[7.0, -INF, -INF, -INF], [-7.0, INF, INF, INF]]
FILL_TIE_MASK = [[0, 0, 1, 0], [0, 0, 0, 1]]
# Integer fill tie: the dtype's min/max masked in (the fill of argmax/argmin).
def int_fill_tie(g, dt, op):
    info = torch.iinfo(dt)
    data = torch.tensor([[5, info.min, info.min], [-5, info.max, info.max]], dtype=dt)
    mask = torch.tensor([[0, 0, 1], [0, 1, 0]], dtype=torch.bool)
    return [masked(data, mask)]


# var/std: row 0 one element (0/0 = NaN, specified), row 1 two, row 2 none
ONE_DATA = [[2.0, 1.0, 3.0], [1.0, 2.0, 4.0], [5.0, 6.0, 7.0]]
ONE_MASK = [[0, 1, 0], [1, 0, 1], [0, 0, 0]]


def int_overflow(g, dt, op):
    """sum/prod of integers accumulate in int64: int8 100 * 3 = 300 and
    100^3 = 1000000 do not wrap at int8; int64 2^62 * 3 wraps."""
    big = 2 ** 62 if dt == torch.int64 else torch.iinfo(dt).max - 27
    data = torch.tensor([[100, 100, 100, 7], [big, big, big, 2]], dtype=torch.int64)
    if dt != torch.int64:
        data = data.clamp(torch.iinfo(dt).min, torch.iinfo(dt).max)
    return [masked(data.to(dt), torch.tensor([[1, 1, 1, 0], [1, 1, 1, 1]], dtype=torch.bool))]


# variant: (build, dim, keepdim, tolerance override, ops it applies to or None, dtypes or None)
REDUCE_CASES = {
    "all": (reduce_input((3, 4)), None, None, None, None, None),
    "all_3d": (reduce_input((2, 3, 4)), None, None, None, None, None),
    "dim0": (reduce_input((3, 4)), 0, None, None, None, None),
    "dim1": (reduce_input((3, 4)), 1, None, None, None, None),
    "dimneg1": (reduce_input((3, 4)), -1, None, None, None, None),
    "dim1_keepdim": (reduce_input((3, 4)), 1, True, None, None, None),
    "dim0_3d": (reduce_input((2, 3, 4)), 0, None, None, None, None),
    "dim1_3d": (reduce_input((2, 3, 4)), 1, None, None, None, None),
    "dimneg1_3d": (reduce_input((2, 3, 4)), -1, None, None, None, None),
    "dim1_keepdim_3d": (reduce_input((2, 3, 4)), 1, True, None, None, None),
    "dims0_2_3d": (reduce_input((2, 3, 4)), (0, 2), None, None, None, None),
    "dims_empty": (reduce_input((3, 4)), (), None, None, None, None),
    "keepdim_without_dim": (reduce_input((3, 4)), None, True, None, None, None),
    "fully_masked_all": (reduce_input((3, 4), p_true=0.0), None, None, None, None, None),
    "fully_masked_dim1": (reduce_input((3, 4), empty_row=1), 1, None, None, None, None),
    "zero_size_dim1": (reduce_input((0, 4)), 1, None, None, None, None),
    "zero_size_dim0": (reduce_input((0, 4)), 0, None, None, None, None),
    "zero_size_all": (reduce_input((0, 4)), None, None, None, None, None),
    "signed_zeros_all": (zeros_input, None, None, "exact", None, F),
    "signed_zeros_dim0": (zeros_input, 0, None, "exact", None, F),
    "signed_zeros_dim1": (zeros_input, 1, None, "exact", None, F),
    "negative_zeros_all": (negative_zeros_input, None, None, "exact", None, F),
    "nan_dim1": (fixed_input(NAN_DATA, NAN_MASK), 1, None, None, SELECT + ("sum", "var"), F),
    "nan_all": (fixed_input(NAN_DATA, NAN_MASK), None, None, None, None, F),
    "ties_dim1": (fixed_input(TIES_DATA, TIES_MASK), 1, None, None, SELECT, F | I),
    "fill_tie_dim1": (fixed_input(FILL_TIE_DATA, FILL_TIE_MASK), 1, None, None, ARG, F),
    "int_fill_tie_dim1": (int_fill_tie, 1, None, None, ARG, I),
    "one_element_dim1": (fixed_input(ONE_DATA, ONE_MASK), 1, None, None,
                         ("var", "std", "mean", "sum"), F | I),
    "int_overflow_dim1": (int_overflow, 1, None, None, ("sum", "prod"), I),
}


# Which variants each dtype gets (the golden must stay under 3 MB, ~5 kB a
# case): float32 every one, float64 the main forms, the other dtypes the
# forms their rules are about.
TIERS = {
    torch.float32: None,  # every variant but F32_DROP
    torch.float64: ("all", "dim1", "fully_masked_dim1", "nan_dim1", "fill_tie_dim1"),
    torch.int32: ("dim1", "fully_masked_dim1", "int_overflow_dim1"),
}
OTHER_TIER = ("all", "dim1", "fully_masked_dim1", "nan_dim1", "ties_dim1", "int_fill_tie_dim1",
              "one_element_dim1", "int_overflow_dim1", "signed_zeros_dim1")
F32_DROP = ("dim0_3d", "dim1_3d", "dimneg1", "signed_zeros_dim0", "int_fill_tie_dim1",
            "int_overflow_dim1")


def in_tier(variant, dt):
    tier = TIERS.get(dt, OTHER_TIER)
    if tier is None:
        return variant not in F32_DROP
    return variant in tier


def call_text(op, args, kw):
    return f"torch.{op}(" + ", ".join(["m"] + [py(a) for a in args]
                                     + [f"{k}={py(v)}" for k, v in kw.items()]) + ")"


def reduction(op, dim, keepdim):
    """(run, torch_call, kwargs) for torch.<op>(m[, dim][, keepdim=...])."""
    fn, args, kwargs = getattr(torch, op), [], {}
    if dim is not None:
        args, kwargs["dim"] = [dim], dim
    kw = {} if keepdim is None else {"keepdim": keepdim}
    kwargs.update(kw)
    return (lambda ins, _: [fn(ins[0], *args, **kw)]), call_text(op, args, kw), kwargs


def error_class(e):
    """DESIGN.md's table, first match wins."""
    msg = f"{type(e).__name__}: {e}"
    if "must match" in msg:
        return "MASK_MISMATCH"
    if any(s in msg for s in ("not implemented for", "identity of", "with a bool tensor",
                              "Could not infer output dtype")):
        return "DTYPE_MISMATCH"
    if isinstance(e, IndexError) or "Dimension out of range" in msg:
        return "INDEX_OUT_OF_RANGE"
    return "INVALID_ARGUMENT"


def torch_outcome(build, run, case_id):
    """None when torch accepts the call, else the error class of its refusal
    (decided on the case's own inputs; the generator then checks it again)."""
    from ..model import case_rng
    inputs = build(case_rng(case_id))
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            run(inputs, {})
    except Exception as e:  # noqa: BLE001 - torch's refusal is data
        return error_class(e)
    return None


def with_red3(rules, outputs):
    """Tag RED-3 when some output element is fully masked (filled)."""
    out = outputs[0]
    if out.numel() and not bool(as_dense(out.get_mask()).all()) and "RED-3" not in rules:
        return rules + ("RED-3",)
    return rules


def base_rules(op, dt, dim, err):
    if op == "norm":
        return ("RED-8",) if dt in (torch.float32, torch.float64) else ("RED-7", "RED-8")
    rules = ["RED-1" if dim is None else "RED-2"]
    if op in ARG:
        rules.append("RED-4")
    if op in ("var", "std"):
        rules.append("RED-5")
    if op == "all":
        rules.append("RED-6")
    if dt not in (torch.float32, torch.float64):
        rules.append("RED-7")
    if err == "DTYPE_MISMATCH" and "RED-7" not in rules:
        rules.append("RED-7")
    return tuple(rules)


def make_case(cid, op, dt, build, run, call, kwargs, tol, source=None, dim=None):
    own = uses_own_poison(op, dt)
    if own:
        inner = build

        def build(g, inner=inner):  # noqa: E306
            return [poison_own(x, op, dt) for x in inner(g)]
    err = torch_outcome(build, run, cid)
    rules = base_rules(op, dt, dim, err)
    return Case(id=cid, op=op, rules=rules, tolerance=tol, build=build, run=run,
                torch_call=call, kwargs=kwargs, check_masked_out=True, error_class=err,
                tag_rules=with_red3, source=source, poison=not own)


# ---- OpInfo samples ------------------------------------------------------

POSITIONAL = {"norm": ("p", "dim", "keepdim")}


def sample_kwargs(op, s):
    """torch keyword names for the sample's positional args and kwargs;
    None when a value cannot be stored (a torch.dtype)."""
    names = POSITIONAL.get(op, ("dim", "keepdim"))
    kw = dict(zip(names, s.args))
    kw.update(s.kwargs)
    out = {}
    for k, v in kw.items():
        if isinstance(v, list):
            v = tuple(v)
        if not isinstance(v, (bool, int, float, tuple)) or (
                isinstance(v, tuple) and not all(isinstance(x, int) for x in v)):
            return None
        out[k] = v
    return out


def opinfo_cases(op, short, dt):
    out = []
    name = op
    try:
        found = samples(name, dt, crop=5)
    except Exception:  # noqa: BLE001 - no samples for this dtype
        return out
    picked = [(src, s) for src, s in found
              if isinstance(s.input, torch.Tensor) and s.input.ndim >= 1
              and sample_kwargs(op, s) is not None][:3 if dt in (torch.float32, torch.float64) else 2]
    for k, (src, s) in enumerate(picked):
        kw = sample_kwargs(op, s)
        data = s.input.detach().clone()

        def build(g, data=data):
            return [masked(data, sample_mask(g, data))]

        fn = getattr(torch, op)
        run = (lambda ins, _, fn=fn, args=tuple(s.args), skw=dict(s.kwargs):
               [fn(ins[0], *args, **skw)])
        call = call_text(op, list(s.args), dict(s.kwargs))
        cid = f"{op}.masked.{short}.opinfo_{k}"
        dim = kw.get("dim")
        out.append(make_case(cid, op, dt, build, run, call, kw, tolerance(op, dt),
                             source=src, dim=dim if "dim" in kw else None))
    return out


def norm_cases(short, dt):
    """RED-8: every torch.norm of a MaskedTensor is refused."""
    out = []
    for variant, kw in (("refused_plain", {}), ("refused_p1", {"p": 1.0}),
                        ("refused_dim1", {"dim": 1}), ("refused_p2_dim1_keepdim",
                                                       {"p": 2.0, "dim": 1, "keepdim": True})):
        def run(ins, _, kw=kw):
            return [torch.norm(ins[0], **kw)]
        out.append(make_case(f"norm.masked.{short}.{variant}", "norm", dt,
                             functools.partial(reduce_input((3, 4)), dt=dt, op="norm"), run, call_text("norm", [], kw), kw,
                             tolerance("norm", dt)))
    return out


# RED-7: `dtype=` of sum/prod/mean (with dim only): (op, input dtype,
# dtype kwarg, dim, input). Float inputs in [-4, 4] so that a conversion to
# an integer truncates visibly; int8 inputs of 100s so that int8 wraps.
def wide_input(g, dt, op):
    return [masked(uniform(g, (3, 4), dt, -4.0, 4.0), rand_mask(g, (3, 4), 0.65))]


def int64_edges(g, dt, op):
    """Floats that int64 holds exactly near its ends: 9.2e18, the largest
    float below 2^63 (2^63 - 1024 in float64, 2^63 - 2^39 in float32) and
    -2^63 convert exactly (torch's `.to(torch.int64)`; values >= 2^63, NaN
    and inf are undefined in torch and left out). Row 2 sums to -1024 /
    -2^39: no int64 overflow anywhere."""
    top = 2.0 ** 63 - (1024.0 if dt == torch.float64 else 2.0 ** 39)
    rows = [[9.2e18, 1.0, 2.0, 5.0], [-9.2e18, -1.0, 3.5, 5.0], [top, -(2.0 ** 63), 0.5, 5.0]]
    mask = [[1, 1, 1, 0], [1, 1, 1, 0], [1, 1, 1, 0]]
    return [masked(torch.tensor(rows, dtype=dt), torch.tensor(mask, dtype=torch.bool))]


f32, f64, f16, i8 = torch.float32, torch.float64, torch.float16, torch.int8
DTYPE_CASES = [
    ("sum", f32, f64, 1, wide_input), ("sum", f32, torch.int32, 1, wide_input),
    ("sum", f32, torch.bool, 1, wide_input), ("sum", i8, f16, 1, int_overflow),
    ("sum", i8, i8, 1, int_overflow), ("sum", f32, f64, None, wide_input),
    ("prod", f32, f64, 1, wide_input), ("prod", f32, f16, 1, wide_input),
    ("prod", i8, i8, 1, int_overflow), ("prod", f32, torch.int32, 1, wide_input),
    ("mean", f32, f64, 1, wide_input), ("mean", i8, f64, 1, int_overflow),
    ("mean", f32, torch.int64, 1, wide_input), ("mean", f32, f16, 1, wide_input),
    # a bfloat16 result: MaskedTensor refuses to hold it (MASK-2) -> TypeError
    ("sum", f32, torch.bfloat16, 1, wide_input), ("prod", f32, torch.bfloat16, 1, wide_input),
    ("mean", f32, torch.bfloat16, 1, wide_input),
    # float -> int64 at int64's ends: every value in [-2^63, 2^63) exact
    ("sum", f64, torch.int64, 1, int64_edges), ("sum", f32, torch.int64, 1, int64_edges),
]
TOKEN = {v: k for k, v in ALL_DTYPES.items()}


def dtype_cases():
    out = []
    for op, dt, kdt, dim, build in DTYPE_CASES:
        fn = getattr(torch, op)
        args = [] if dim is None else [dim]
        kwargs = {"dtype": kdt} if dim is None else {"dim": dim, "dtype": kdt}
        variant = "dtype_without_dim" if dim is None else f"dim{dim}_dtype_{TOKEN[kdt]}"
        tol = "exact" if kdt not in FLOATS else tolerance(op, kdt)
        if dt == f32 and kdt == f64:
            # float64 results of float32 inputs: the generator's headroom check
            # compares them with the float64 run rounded to float32, so the
            # tolerance must cover float32's rounding (rel 2^-24); the
            # computation itself is float64 on both sides.
            tol = "rel:1e-6"
        c = make_case(f"{op}.masked.{TOKEN[dt]}.{variant}", op, dt,
                      functools.partial(build, dt=dt, op=op),
                      lambda ins, _, fn=fn, args=args, kd=kdt: [fn(ins[0], *args, dtype=kd)],
                      call_text(op, args, {"dtype": kdt}), kwargs, tol,
                      dim=dim if dim is not None else "dtype")
        if "RED-7" not in c.rules:
            c.rules = c.rules + ("RED-7",)
        if kdt == torch.bfloat16:
            c.error_class, c.error_match = "DTYPE_MISMATCH", "is not supported in MaskedTensor"
        out.append(c)
    return out


def csr_input(p_true):
    """A CSR-storage masked tensor: data and mask of one structure, the mask
    values true with probability p_true."""
    def build(g, dt, op):
        pattern = torch.rand((3, 4), generator=g) < 0.6
        pattern[0, 0] = True
        s = pattern.to_sparse_csr()
        crow, col, n = s.crow_indices(), s.col_indices(), int(pattern.sum())
        vals = torch.randn(n, generator=g, dtype=torch.float64).to(dt)
        mv = torch.rand(n, generator=g) < p_true
        return [masked_tensor(torch.sparse_csr_tensor(crow, col, vals, (3, 4)),
                              torch.sparse_csr_tensor(crow, col, mv, (3, 4)))]
    return build


def csr_cases():
    """RED-1 on CSR storage: torch reduces the stored values whose mask value
    is true (sum prod amin amax; its mean of CSR storage divides by the
    stored count, not the specified one: no case)."""
    out = []
    for short in ("f32", "f64"):
        dt = ALL_DTYPES[short]
        for op in ("sum", "prod", "amin", "amax"):
            for variant, p in (("all", 0.7), ("fully_masked_all", 0.0)):
                run, call, kwargs = reduction(op, None, None)
                out.append(make_case(f"{op}.csr.{short}.{variant}", op, dt,
                                     functools.partial(csr_input(p), dt=dt, op=op), run, call,
                                     kwargs, tolerance(op, dt)))
    return out


# ---- sparse storage (SP-3) -------------------------------------------------

def sparse_cases():
    """Every reduction on COO and on CSR storage (data and mask of one
    structure, stored values whose mask is false among them): the
    all-reduce (torch reduces the stored values: mean divides by the stored
    count, var/std centre on that mean, argmin/argmax index the stored
    values; `all` and `norm` refused), a dim reduce (refused), and the
    corners: float64, every stored value masked out, no stored value."""
    from .. import sparse
    out = []
    ops = sparse.family_ops("reduce")
    for op in ops:
        for layout, one in sparse.LAYOUTS.items():
            rows = [("stored", one, torch.float32, None),
                    ("dim1", one, torch.float32, 1)]
            if op == "all":  # 4 stored values fit the last dim: sparse expand
                rows.append(("four_stored", lambda g, dt, one=one: one(
                    g, dt, indices=((0, 1, 2, 2), (0, 1, 0, 3)), mask_values=(True, False) * 2),
                    torch.float32, None))
            if op not in ("all", "norm"):
                rows += [("stored", one, torch.float64, None),
                         ("fully_masked", lambda g, dt, one=one: one(
                             g, dt, mask_values=(False,) * 5), torch.float32, None),
                         ("empty", sparse.empty(layout), torch.float32, None)]
            for variant, build, dt, dim in rows:
                cid = f"{op}.{layout}.{TOKEN[dt]}.{variant}"
                run, call, kwargs = reduction(op, dim, None)
                b = (lambda g, build=build, dt=dt: [build(g, dt)])
                err = sparse.outcome(cid, b, run)
                rules = ops[op][:1] if op == "norm" else ("RED-1" if dim is None else "RED-2",)
                out.append(Case(id=cid, op=op, rules=rules + ("SP-3",),
                                tolerance="exact" if err else tolerance(op, dt), build=b,
                                run=run, torch_call=call, kwargs=kwargs, check_masked_out=True,
                                error_class=err, tag_rules=with_red3))
    # a NaN stored under a false mask value (entry 1): never reduced; the
    # case keeps its NaN (no generator poison on top)
    nan_vals = (0.5, math.nan, -1.25, 2.0, 3.0)
    for op in ("sum", "amax", "mean", "argmin"):
        for layout, one in sparse.LAYOUTS.items():
            cid = f"{op}.{layout}.f32.masked_out_nan"
            run, call, kwargs = reduction(op, None, None)
            b = (lambda g, one=one: [one(g, torch.float32, vals=nan_vals)])
            out.append(Case(id=cid, op=op, rules=("RED-1", "SP-3"), tolerance=tolerance(
                op, torch.float32), build=b, run=run, torch_call=call, kwargs=kwargs,
                check_masked_out=True, error_class=sparse.outcome(cid, b, run), poison=False))
    return out


def zero_dim_cases():
    """float32 0-d inputs reduced along dim 0 and -1 (torch wraps a 0-d
    tensor's dims as those of a 1-d one, and the result is 0-d), specified
    and masked out: a backward that wrapped dim against 0 dims survived
    tests/sweep (seed 6). Appended after every other case of the family;
    grad_masked leaves the variants out of its picks (LATER_VARIANTS) and
    derives the gradients of LATER_GRADS."""
    out, dt = [], torch.float32
    for op, (dtypes, _) in OPS.items():
        if dt not in dtypes or op == "norm":
            continue
        for variant, spec, dim in (("0d_dim0", True, 0), ("0d_dimneg1", True, -1),
                                   ("0d_masked_dim0", False, 0)):
            def build(g, dt, op, spec=spec):
                return [masked(rand_data(g, (), dt, op), torch.tensor(spec))]
            run, call, kwargs = reduction(op, dim, None)
            out.append(make_case(f"{op}.masked.f32.{variant}", op, dt,
                                 functools.partial(build, dt=dt, op=op), run, call, kwargs,
                                 tolerance(op, dt), dim=dim))
    return out


def cases():
    out = dtype_cases() + csr_cases() + sparse_cases()
    for short, dt in ALL_DTYPES.items():
        if dt in (torch.uint8, torch.bfloat16):
            continue  # MaskedTensor refuses uint8 and bfloat16 data itself (MASK-2)
        for op, (dtypes, tuple_dims) in OPS.items():
            if op == "norm":
                out += norm_cases(short, dt)[:4 if dt == torch.float32 else 1]
                continue
            if dt not in dtypes:  # RED-7: torch's refusal of the dtype
                for variant, dim in (("refused_dim1", 1),):
                    run, call, kwargs = reduction(op, dim, None)
                    out.append(make_case(f"{op}.masked.{short}.{variant}", op, dt,
                                         functools.partial(reduce_input((3, 4)), dt=dt, op=op),
                                         run, call, kwargs, "exact", dim=dim))
                continue
            for variant, (build, dim, keepdim, tol, ops, dts) in REDUCE_CASES.items():
                if (ops is not None and op not in ops) or (dts is not None and dt not in dts):
                    continue
                if not in_tier(variant, dt):
                    continue
                run, call, kwargs = reduction(op, dim, keepdim)
                # keepdim without dim is a RED-2 (dims form) refusal
                form = dim if dim is not None or keepdim is None else "keepdim"
                out.append(make_case(f"{op}.masked.{short}.{variant}", op, dt,
                                     functools.partial(build, dt=dt, op=op), run, call, kwargs,
                                     tol or tolerance(op, dt), dim=form))
            out += opinfo_cases(op, short, dt)
    out += reduce_sparse.cases()  # plain sparse tensors (SPS-3, SPS-4)
    out += zero_dim_cases()
    return check_ids(out)


def replay_run(op):
    """The run of op's OpInfo-drawn cases, driven by the inputs and kwargs
    stored in the golden file (each sample's arguments are stored as the
    keyword form of its call): golden/variants.py replays with it the
    samples an older torch's OpInfo database no longer generates."""
    fn = getattr(torch, op)
    return lambda ins, kw: [fn(ins[0], **kw)]

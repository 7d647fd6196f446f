#!/usr/bin/env python3
"""Generate the mtcs golden files (format version 1) from PyTorch.

    python golden/generate.py [--out DIR] [--only FAMILY] [--list]

One HDF5 file per op family of spec/include/mt/ops.def (masked, unary,
binary, reduce, optim) plus a MANIFEST. The format is specified in
spec/golden-format.md. Every expected output is torch's own result; the
generator only chooses inputs (from a per-case seeded RNG), runs torch and
records what torch did. A case declared "ok" that raises, or declared
"error" that does not, stops the generator with exit status 1.

Set SOURCE_DATE_EPOCH to pin `created_utc`: the files are then
byte-for-byte reproducible on a machine where torch dispatches to the same
CPU kernels (`torch_cpu_capability`, e.g. AVX2 vs AVX512: torch's vectorized
kernels differ in the last ulp, e.g. whether addcmul uses an FMA). Across
capabilities the values differ within the case tolerances.
"""

import argparse
import datetime
import functools
import hashlib
import math
import os
import sys
import tempfile
import warnings
from dataclasses import dataclass, field
from typing import Callable

import h5py
import numpy as np
import torch
from torch.masked import MaskedTensor, masked_tensor
from torch.optim.optimizer import _get_scalar_dtype

warnings.filterwarnings("ignore", category=UserWarning)  # MaskedTensor is a prototype

FORMAT_VERSION = 1
GENERATOR = "golden/generate.py"
FAMILIES = ("masked", "unary", "binary", "reduce", "optim")
DTYPES = {"f32": torch.float32, "f64": torch.float64}
POISONS = (math.nan, 1e30)  # alternated case by case within a family

DTYPE_NAMES = {
    torch.float32: "float32", torch.float64: "float64", torch.float16: "float16",
    torch.int64: "int64", torch.int32: "int32", torch.int8: "int8",
    torch.uint8: "uint8", torch.bool: "bool",
}

# ---------------------------------------------------------------------------
# The case model
# ---------------------------------------------------------------------------

Inputs = list  # torch tensors, MaskedTensors and Python numbers, in call order


@dataclass
class Case:
    id: str
    op: str
    rules: tuple
    tolerance: str
    build: Callable[[torch.Generator], Inputs]   # inputs before poisoning
    run: Callable[[Inputs, dict], list]          # the torch call -> outputs
    torch_call: str
    kwargs: dict = field(default_factory=dict)
    error_class: str | None = None               # set: torch must raise
    check_masked_out: bool = False
    poison: bool = True                          # False: attr poison="none"
    check: Callable[[Inputs, list], None] | None = None  # extra assertions


@dataclass
class Result:
    case: Case
    inputs: Inputs
    poison: str
    outputs: list = field(default_factory=list)
    torch_error: str | None = None
    rules: tuple = ()


class Surprise(Exception):
    """torch did not behave as the case table declares."""


def case_rng(case_id: str) -> torch.Generator:
    seed = int(hashlib.sha256(case_id.encode()).hexdigest()[:8], 16)
    return torch.Generator().manual_seed(seed)


def py(v) -> str:
    """A Python literal for torch_call strings."""
    if isinstance(v, float) and not math.isfinite(v):
        return f"float('{v}')"
    return repr(v)


def float_tol(dt: torch.dtype, f32: str, f64: str) -> str:
    return f32 if dt == torch.float32 else f64


# ---------------------------------------------------------------------------
# Input makers (all draw from the case generator g)
# ---------------------------------------------------------------------------

def randn(g, shape, dt):
    return torch.randn(shape, generator=g, dtype=dt)


def uniform(g, shape, dt, lo, hi):
    return torch.rand(shape, generator=g, dtype=dt) * (hi - lo) + lo


def rand_mask(g, shape, p_true):
    return torch.rand(shape, generator=g) < p_true


def masked(data, mask, force=None):
    """MaskedTensor; `force` maps index tuples to data values made mask-true."""
    data, mask = data.clone(), mask.clone()
    for idx, val in (force or {}).items():
        data[idx], mask[idx] = val, True
    return masked_tensor(data, mask)


def rand_masked(g, shape, dt, p_true=0.6, lo=None, hi=None, force=None):
    data = randn(g, shape, dt) if lo is None else uniform(g, shape, dt, lo, hi)
    return masked(data, rand_mask(g, shape, p_true), force)


def tutorial_grad(dt=torch.float32, values=(3.0, 4.0, 5.0)):
    i = torch.tensor([[0, 1, 1], [2, 0, 2]])
    v = torch.tensor(values, dtype=dt)
    return torch.sparse_coo_tensor(i, v, [2, 4])


def tutorial_mask(grad):
    return (grad.to_dense() != 0).to_sparse()


def rand_coo(g, shape, dt, density=0.3, duplicates=0):
    """COO with round(density * numel) distinct entries; `duplicates` extra
    entries repeat existing indices and the order is shuffled (uncoalesced)."""
    numel = math.prod(shape)
    flat = torch.randperm(numel, generator=g)[: round(density * numel)]
    if duplicates:
        flat = torch.cat([flat, flat[:duplicates]])
        flat = flat[torch.randperm(flat.numel(), generator=g)]
    else:
        flat = flat.sort().values
    idx = torch.stack(torch.unravel_index(flat, shape))
    t = torch.sparse_coo_tensor(idx, randn(g, (flat.numel(),), dt), shape)
    return t if duplicates else t.coalesce()


def coo_as_masked(grad):
    """The same specified values as a dense-storage MaskedTensor."""
    grad = grad.coalesce()
    mask = torch.zeros(grad.shape, dtype=torch.bool)
    mask[tuple(grad.indices())] = True
    return masked_tensor(grad.to_dense(), mask)


def masked_as_coo(m):
    idx = m.get_mask().nonzero().T
    return torch.sparse_coo_tensor(idx, m.get_data()[tuple(idx)], m.shape).coalesce()


# ---------------------------------------------------------------------------
# Family: masked (masked_tensor, to_tensor)
# ---------------------------------------------------------------------------

def dense_pair(shape, p_true):
    def build(g, dt):
        return [randn(g, shape, dt), rand_mask(g, shape, p_true)]
    return build


def coo_pair(g, dt):
    grad = tutorial_grad(dt)
    return [grad, tutorial_mask(grad)]


def bad_shape(g, dt):
    return [randn(g, (3, 4), dt), rand_mask(g, (3, 5), 0.6)]


def float_mask(g, dt):
    return [randn(g, (3, 4), dt), rand_mask(g, (3, 4), 0.6).to(dt)]


def coo_mask_dense_data(g, dt):
    return [randn(g, (2, 4), dt), tutorial_mask(tutorial_grad(dt))]


# variant: (layout token, build(g, dt), error_class)
MASKED_TENSOR_CASES = {
    "basic": ("dense", dense_pair((3, 4), 0.6), None),
    "1d": ("dense", dense_pair((5,), 0.6), None),
    "zero_size": ("dense", dense_pair((0, 3), 0.6), None),
    "3d": ("dense", dense_pair((2, 3, 2), 0.6), None),
    "all_false": ("dense", dense_pair((3, 4), 0.0), None),
    "tutorial": ("coo", coo_pair, None),
    "shape_mismatch": ("dense", bad_shape, "SHAPE_MISMATCH"),
    "float_mask": ("dense", float_mask, "DTYPE_MISMATCH"),
    "layout_mismatch": ("dense_coo", coo_mask_dense_data, "LAYOUT_MISMATCH"),
}

TO_TENSOR_FILLS = {"fill_0": 0.0, "fill_neginf": -math.inf, "fill_nan": math.nan,
                   "fill_7_5": 7.5}


def masked_family():
    cases = []
    for short, dt in DTYPES.items():
        for variant, (layout, build, err) in MASKED_TENSOR_CASES.items():
            cases.append(Case(
                id=f"masked_tensor.{layout}.{short}.{variant}", op="masked_tensor",
                rules=("MASK-2",) if err else ("MASK-1",), tolerance="exact",
                build=functools.partial(build, dt=dt),
                run=lambda ins, kw: [masked_tensor(ins[0], ins[1])],
                torch_call="torch.masked.masked_tensor(data, mask)",
                error_class=err, poison=False))
        for variant, v in TO_TENSOR_FILLS.items():
            cases.append(Case(
                id=f"to_tensor.masked.{short}.{variant}", op="to_tensor",
                rules=("MASK-3",), tolerance="exact",
                build=lambda g, dt=dt, v=v: [rand_masked(g, (3, 4), dt), v],
                run=lambda ins, kw: [ins[0].to_tensor(ins[1])],
                torch_call=f"m.to_tensor({py(v)})"))
    return cases


# ---------------------------------------------------------------------------
# Family: unary (neg abs exp log sqrt pow)
# ---------------------------------------------------------------------------

UNARY_TOL = {"neg": "exact", "abs": "exact", "exp": "ulp:2", "log": "ulp:2",
             "sqrt": "ulp:2", "pow": "ulp:2"}
EDGE_LOG = {(0, 0): 0.0, (1, 1): -0.0, (2, 2): -1.5, (0, 3): 1e-3}
EDGE_SQRT = {(0, 0): -2.0, (1, 1): -0.0, (2, 2): 0.0}

# (op, variant, build(g, dt), extra rules)
UNARY_CASES = [
    ("neg", "basic", lambda g, dt: rand_masked(g, (3, 4), dt), ()),
    ("abs", "basic", lambda g, dt: rand_masked(g, (3, 4), dt), ()),
    ("exp", "basic", lambda g, dt: rand_masked(g, (3, 4), dt), ()),
    ("log", "basic", lambda g, dt: rand_masked(g, (3, 4), dt, lo=0.1, hi=3.0), ()),
    ("sqrt", "basic", lambda g, dt: rand_masked(g, (3, 4), dt, lo=0.0, hi=3.0), ()),
    ("log", "zeros_negatives",
     lambda g, dt: rand_masked(g, (3, 4), dt, lo=0.1, hi=3.0, force=EDGE_LOG), ("MASK-5",)),
    ("sqrt", "negatives", lambda g, dt: rand_masked(g, (3, 4), dt, force=EDGE_SQRT), ()),
    ("neg", "fully_masked", lambda g, dt: rand_masked(g, (3, 4), dt, p_true=0.0), ()),
    ("exp", "fully_masked", lambda g, dt: rand_masked(g, (3, 4), dt, p_true=0.0), ()),
    ("neg", "zero_size", lambda g, dt: rand_masked(g, (0, 4), dt), ()),
    ("exp", "zero_size", lambda g, dt: rand_masked(g, (0, 4), dt), ()),
]
POW_EXPONENTS = {"exponent_2": 2, "exponent_0_5": 0.5, "exponent_m1": -1, "exponent_3": 3}


def unary_family():
    cases = []
    for short, dt in DTYPES.items():
        for op, variant, build, extra in UNARY_CASES:
            fn = getattr(torch, op)
            cases.append(Case(
                id=f"{op}.masked.{short}.{variant}", op=op, rules=("MASK-4",) + extra,
                tolerance=UNARY_TOL[op],
                build=lambda g, b=build, dt=dt: [b(g, dt)],
                run=lambda ins, kw, fn=fn: [fn(ins[0])],
                torch_call=f"torch.{op}(m)"))
        for variant, e in POW_EXPONENTS.items():
            cases.append(Case(
                id=f"pow.masked_scalar.{short}.{variant}", op="pow", rules=("MASK-4",),
                tolerance=UNARY_TOL["pow"],
                build=lambda g, dt=dt, e=e: [rand_masked(g, (3, 4), dt), e],
                run=lambda ins, kw: [torch.pow(ins[0], ins[1])],
                torch_call=f"torch.pow(m, {py(e)})"))
    return cases


# ---------------------------------------------------------------------------
# Family: binary (add sub mul div)
# ---------------------------------------------------------------------------

SCALAR = 2.5
DIV_ZEROS_B = {(0, 0): 0.0, (1, 1): -0.0, (2, 2): 0.0}  # divisor
DIV_ZEROS_A = {(0, 0): 1.5, (1, 1): 1.5, (2, 2): 0.0}   # -> inf, -inf, nan


def same_mask_pair(g, dt, force_a=None, force_b=None):
    mask = rand_mask(g, (3, 4), 0.6)
    return [masked(randn(g, (3, 4), dt), mask, force_a),
            masked(randn(g, (3, 4), dt), mask, force_b)]


def other_mask_pair(g, dt):
    a = rand_masked(g, (3, 4), dt)
    mask_b = a.get_mask().clone()
    mask_b[0, 0] = not bool(mask_b[0, 0])
    return [a, masked(randn(g, (3, 4), dt), mask_b)]


# (layout token, variant, build(g, dt), torch_call args, rules, error_class, ops)
BINARY_CASES = [
    ("masked_masked", "basic", same_mask_pair, "a, b", ("MASK-6",), None, None),
    ("masked_dense", "basic",
     lambda g, dt: [rand_masked(g, (3, 4), dt), randn(g, (3, 4), dt)],
     "m, t", ("MASK-7",), None, None),
    ("dense_masked", "basic",
     lambda g, dt: [randn(g, (3, 4), dt), rand_masked(g, (3, 4), dt)],
     "t, m", ("MASK-7",), None, None),
    ("masked_scalar", "basic", lambda g, dt: [rand_masked(g, (3, 4), dt), SCALAR],
     f"m, {py(SCALAR)}", ("MASK-7",), None, None),
    ("masked_masked", "mask_mismatch", other_mask_pair, "a, b", ("MASK-8",),
     "MASK_MISMATCH", None),
    ("masked_masked", "divisor_zeros",
     lambda g, dt: same_mask_pair(g, dt, DIV_ZEROS_A, DIV_ZEROS_B),
     "a, b", ("MASK-6",), None, ("div",)),
]


def binary_family():
    cases = []
    for short, dt in DTYPES.items():
        for op in ("add", "sub", "mul", "div"):
            fn = getattr(torch, op)
            for layout, variant, build, args, rules, err, only in BINARY_CASES:
                if only and op not in only:
                    continue
                cases.append(Case(
                    id=f"{op}.{layout}.{short}.{variant}", op=op, rules=rules,
                    tolerance="exact", build=functools.partial(build, dt=dt),
                    run=lambda ins, kw, fn=fn: [fn(ins[0], ins[1])],
                    torch_call=f"torch.{op}({args})", error_class=err))
    return cases


# ---------------------------------------------------------------------------
# Family: reduce (sum mean prod amin amax)
# ---------------------------------------------------------------------------

def reduce_input(shape, p_true=0.65, empty_row=None):
    def build(g, dt, op):
        # prod: values in [0.5, 1.5] keep the product far from overflow
        data = uniform(g, shape, dt, 0.5, 1.5) if op == "prod" else randn(g, shape, dt)
        mask = rand_mask(g, shape, p_true)
        if empty_row is not None:
            mask[empty_row] = False
        return [masked(data, mask)]
    return build


# variant: (build, dim, keepdim); dim None = all-reduce, keepdim None = not passed
REDUCE_CASES = {
    "all": (reduce_input((3, 4)), None, None),
    "all_3d": (reduce_input((2, 3, 4)), None, None),
    "dim0": (reduce_input((3, 4)), 0, None),
    "dim1": (reduce_input((3, 4)), 1, None),
    "dimneg1": (reduce_input((3, 4)), -1, None),
    "dim1_keepdim": (reduce_input((3, 4)), 1, True),
    "dim0_3d": (reduce_input((2, 3, 4)), 0, None),
    "dim1_3d": (reduce_input((2, 3, 4)), 1, None),
    "dimneg1_3d": (reduce_input((2, 3, 4)), -1, None),
    "dim1_keepdim_3d": (reduce_input((2, 3, 4)), 1, True),
    "dims0_2_3d": (reduce_input((2, 3, 4)), (0, 2), None),
    "fully_masked_all": (reduce_input((3, 4), p_true=0.0), None, None),
    "fully_masked_dim1": (reduce_input((3, 4), empty_row=1), 1, None),
    "zero_size_dim1": (reduce_input((0, 4)), 1, None),
}


def reduction(op, dim, keepdim):
    """(run, torch_call, kwargs) for torch.<op>(m[, dim][, keepdim=...])."""
    fn, args, kwargs = getattr(torch, op), [], {}
    if dim is not None:
        args, kwargs["dim"] = [dim], dim
    kw = {} if keepdim is None else {"keepdim": keepdim}
    kwargs.update(kw)
    call = ", ".join(["m"] + [py(a) for a in args] + [f"{k}={py(v)}" for k, v in kw.items()])
    return (lambda ins, _: [fn(ins[0], *args, **kw)]), f"torch.{op}({call})", kwargs


def reduce_error(op, dim):
    # torch.prod has no overload taking a tuple of dims: torch raises TypeError.
    return "INVALID_ARGUMENT" if op == "prod" and isinstance(dim, tuple) else None


def reduce_family():
    cases = []
    for short, dt in DTYPES.items():
        for op in ("sum", "mean", "prod", "amin", "amax"):
            for variant, (build, dim, keepdim) in REDUCE_CASES.items():
                run, call, kwargs = reduction(op, dim, keepdim)
                cases.append(Case(
                    id=f"{op}.masked.{short}.{variant}", op=op,
                    rules=("RED-1",) if dim is None else ("RED-2",),
                    tolerance=float_tol(dt, "abs:1e-5", "abs:1e-12"),
                    build=functools.partial(build, dt=dt, op=op), run=run,
                    torch_call=call, kwargs=kwargs, check_masked_out=True,
                    error_class=reduce_error(op, dim)))
    return cases


# ---------------------------------------------------------------------------
# Family: optim (adagrad_dense, adagrad_sparse, adagrad_masked)
# ---------------------------------------------------------------------------

HP_KEYS = ("lr", "lr_decay", "weight_decay", "eps", "maximize", "step")
TUTORIAL_HP = dict(lr=0.1, lr_decay=0.0, weight_decay=0.0, eps=1e-10, maximize=False, step=1)
RANDOM_HP = dict(lr=0.05, lr_decay=0.01, weight_decay=0.0, eps=1e-10, maximize=False, step=3)
EPS0_HP = dict(TUTORIAL_HP, eps=0.0)
RANDOM_SHAPE = (5, 7)
ADAGRAD_TOL = "ulp:4"


def adagrad_torch(ins, hp):
    """torch.optim.Adagrad (single-tensor path) from a preset state.
    Dense grad: torch's dense path; COO grad: torch's _make_sparse path."""
    param, grad, state_sum = ins
    p = param.clone()
    opt = torch.optim.Adagrad([p], lr=hp["lr"], lr_decay=hp["lr_decay"],
                              weight_decay=hp["weight_decay"], eps=hp["eps"],
                              maximize=hp["maximize"], foreach=False)
    state = opt.state[p]
    if not state:  # torch versions that create the state lazily: as _init_group does
        state["step"] = torch.tensor(0.0, dtype=_get_scalar_dtype())
        state["sum"] = torch.full_like(p, 0.0, memory_format=torch.preserve_format)
    state["sum"].copy_(state_sum)
    state["step"].fill_(hp["step"] - 1)  # Adagrad increments it before use
    p.grad = grad.clone()
    opt.step()
    new_sum = state["sum"]
    if grad.is_sparse:  # std over the coalesced grad indices, as torch computes it
        g = grad.coalesce()
        s = new_sum.sparse_mask(g)
        std = torch.sparse_coo_tensor(s.indices(), s.values().sqrt().add(hp["eps"]),
                                      s.shape).coalesce()
    else:
        std = new_sum.sqrt().add(hp["eps"])
    return [p.detach(), new_sum.clone(), std]


def adagrad_masked(ins, hp):
    """The tutorial's MaskedTensor Adagrad (COO grad), or the same with a
    dense-storage masked grad; clr and maximize as torch.optim.Adagrad."""
    param, grad, state_sum = ins
    clr = hp["lr"] / (1 + (hp["step"] - 1) * hp["lr_decay"])
    eps = hp["eps"]
    if isinstance(grad, MaskedTensor):
        masked_grad = -grad if hp["maximize"] else grad
        mask = masked_grad.get_mask()
        state_sum = state_sum + masked_grad.pow(2).to_tensor(0)
        std = masked_tensor(state_sum, mask).sqrt().add(eps)
        param = param.add((masked_grad / std).to_tensor(0), alpha=-clr)
    else:
        grad = -grad if hp["maximize"] else grad
        mask = (grad.to_dense() != 0).to_sparse()
        masked_grad = masked_tensor(grad, mask)
        state_sum = state_sum + masked_grad.pow(2).get_data()
        std = masked_tensor(state_sum.to_sparse(), mask).sqrt().add(eps)
        param = param.add((masked_grad / std).get_data(), alpha=-clr)
    return [param, state_sum, std]


def adagrad_call(path, hp, masked_storage=False):
    h = ", ".join(f"{k}={py(hp[k])}" for k in HP_KEYS[:5])
    if path != "masked":
        return (f"opt = torch.optim.Adagrad([param], {h}, foreach=False); "
                f"opt.state[param]['sum'].copy_(state_sum); "
                f"opt.state[param]['step'].fill_({hp['step'] - 1}); "
                f"param.grad = grad; opt.step()")
    clr = f"clr = {py(hp['lr'])} / (1 + ({hp['step']} - 1) * {py(hp['lr_decay'])}); "
    if masked_storage:
        neg = "-" if hp["maximize"] else ""
        return (clr + f"masked_grad = {neg}grad; mask = masked_grad.get_mask(); "
                "state_sum = state_sum + masked_grad.pow(2).to_tensor(0); "
                f"std = masked_tensor(state_sum, mask).sqrt().add({py(hp['eps'])}); "
                "param = param.add((masked_grad / std).to_tensor(0), alpha=-clr)")
    neg = "grad = -grad; " if hp["maximize"] else ""
    return (clr + neg + "mask = (grad.to_dense() != 0).to_sparse(); "
            "masked_grad = masked_tensor(grad, mask); "
            "state_sum = state_sum + masked_grad.pow(2).get_data(); "
            f"std = masked_tensor(state_sum.to_sparse(), mask).sqrt().add({py(hp['eps'])}); "
            "param = param.add((masked_grad / std).get_data(), alpha=-clr)")


PATH_RUN = {"dense": adagrad_torch, "sparse": adagrad_torch, "masked": adagrad_masked}
PATH_RULE = {"dense": "ADA-1", "sparse": "ADA-2", "masked": "ADA-3"}


# -- inputs [param, grad, state_sum]

def tutorial_inputs(path, dt=torch.float32):
    grad = tutorial_grad(dt)
    grad = grad.to_dense() if path == "dense" else grad
    param = torch.arange(8, dtype=dt).reshape(2, 4)
    return [param, grad, torch.full_like(param, 0.5)]


def tutorial_step2_inputs(path):
    ins = tutorial_inputs(path)
    p1, s1, _ = PATH_RUN[path](ins, TUTORIAL_HP)
    return [p1, ins[1], s1]


def eps0_inputs(path):
    grad = tutorial_grad(values=(3.0, 0.0, 5.0))  # one explicitly stored zero
    grad = grad.to_dense() if path == "dense" else grad
    param = torch.arange(8, dtype=torch.float32).reshape(2, 4)
    return [param, grad, torch.zeros_like(param)]


def random_param(g, dt):  # |p| in [1, 2]: the update never cancels p
    sign = torch.where(rand_mask(g, RANDOM_SHAPE, 0.5), 1.0, -1.0).to(dt)
    return sign * uniform(g, RANDOM_SHAPE, dt, 1.0, 2.0)


def random_inputs(grad_kind, g, dt):
    param = random_param(g, dt)
    grad = {
        "dense": lambda: randn(g, RANDOM_SHAPE, dt),
        "coo": lambda: rand_coo(g, RANDOM_SHAPE, dt),
        "coo_uncoalesced": lambda: rand_coo(g, RANDOM_SHAPE, dt, duplicates=3),
        "masked": lambda: coo_as_masked(rand_coo(g, RANDOM_SHAPE, dt)),
    }[grad_kind]()
    return [param, grad, uniform(g, RANDOM_SHAPE, dt, 0.5, 3.0)]


# -- checks against the tutorial and the eps-placement analysis

TUT_IDX = ((0, 1, 1), (2, 0, 2))
TUT = {
    "param1": [[0, 1, 1.9027, 3], [3.9015, 5, 5.9010, 7]],
    "sum1": [[0.5, 0.5, 9.5, 0.5], [16.5, 0.5, 25.5, 0.5]],
    "std1": [3.0822, 4.0620, 5.0498],
    "param2": [[0, 1, 1.8329, 3], [3.8314, 5, 5.8306, 7]],
}


def as_dense(t):
    if isinstance(t, MaskedTensor):
        t = t.get_data()
    return t.to_dense() if t.is_sparse else t


def expect_close(what, got, want, atol=1e-4):
    want = torch.tensor(want, dtype=got.dtype)
    if not torch.allclose(got, want, atol=atol, rtol=0):
        raise Surprise(f"{what}: torch gives {got.tolist()}, tutorial says {want.tolist()}")


def check_tutorial_step1(ins, outs):
    p, s, std = outs
    expect_close("tutorial step 1 param", p, TUT["param1"])
    expect_close("tutorial step 1 state_sum", s, TUT["sum1"])
    expect_close("tutorial step 1 std", as_dense(std)[TUT_IDX], TUT["std1"])


def check_tutorial_step2(ins, outs):
    expect_close("tutorial step 2 param", outs[0], TUT["param2"])


def eps0_check(nan_at):
    """Param is NaN exactly at `nan_at` (list of index pairs)."""
    def check(ins, outs):
        want = torch.zeros(2, 4, dtype=torch.bool)
        for idx in nan_at:
            want[idx] = True
        got = outs[0].isnan()
        if not torch.equal(got, want):
            raise Surprise(f"eps=0 NaN pattern {got.nonzero().tolist()}, "
                           f"expected {want.nonzero().tolist()}")
    return check


EPS0_NAN = {
    "dense": [(r, c) for r in range(2) for c in range(4) if (r, c) not in ((0, 2), (1, 2))],
    "sparse": [(1, 0)],
    "masked": [],
}


def forms_agree(hp, tol):
    """The COO (tutorial) form and the dense-storage form of the masked path
    give the same param and state_sum, and the same std where masked in, up
    to the case tolerance (torch's add(sparse, alpha) and add(dense, alpha)
    round differently: 1 ulp apart on the tutorial)."""
    def check(ins, outs):
        param, grad, state_sum = ins
        if isinstance(grad, MaskedTensor):
            other = masked_as_coo(grad)
        else:  # the tutorial's mask: the non-zero values of the COO grad
            dense = grad.to_dense()
            other = masked_tensor(dense, dense != 0)
        alt = adagrad_masked([param, other, state_sum], hp)
        for name, a, b in (("param", outs[0], alt[0]), ("state_sum", outs[1], alt[1])):
            if not within(a.numpy(), b.numpy(), tol).all():
                raise Surprise(f"masked path: COO and dense-storage forms disagree on {name}")
        mask = as_dense(outs[2].get_mask())
        if not torch.equal(mask, as_dense(alt[2].get_mask())) or not within(
                as_dense(outs[2])[mask].numpy(), as_dense(alt[2])[mask].numpy(), tol).all():
            raise Surprise("masked path: COO and dense-storage forms disagree on std")
    return check


def all_checks(*checks):
    def check(ins, outs):
        for c in checks:
            if c:
                c(ins, outs)
    return check


def adagrad_case(path, layout, short, variant, build, hp, rules=(), error_class=None,
                 check=None):
    masked_storage = layout == "masked"
    if path == "masked" and error_class is None:
        check = all_checks(check, forms_agree(hp, ADAGRAD_TOL))
    return Case(
        id=f"adagrad_{path}.{layout}.{short}.{variant}", op=f"adagrad_{path}",
        rules=(PATH_RULE[path],) + tuple(rules), tolerance=ADAGRAD_TOL, build=build,
        run=PATH_RUN[path], torch_call=adagrad_call(path, hp, masked_storage),
        kwargs={k: hp[k] for k in HP_KEYS}, error_class=error_class, check=check)


PATH_LAYOUT = {"dense": "dense", "sparse": "coo", "masked": "coo"}

# (path, grad kind, variant, hyper-parameter overrides)
ADAGRAD_RANDOM = [
    ("dense", "dense", "random", {}),
    ("dense", "dense", "random_maximize", {"maximize": True}),
    ("dense", "dense", "random_weight_decay", {"weight_decay": 0.1}),
    ("sparse", "coo", "random", {}),
    ("sparse", "coo", "random_maximize", {"maximize": True}),
    ("sparse", "coo_uncoalesced", "random_uncoalesced", {}),
    ("masked", "coo", "random", {}),
    ("masked", "coo", "random_maximize", {"maximize": True}),
    ("masked", "masked", "random", {}),
    ("masked", "masked", "random_maximize", {"maximize": True}),
]
ADAGRAD_ERRORS = [
    ("dense", "dense", "negative_lr", {"lr": -0.1}),
    ("dense", "dense", "negative_eps", {"eps": -1e-10}),
    ("dense", "dense", "negative_weight_decay", {"weight_decay": -0.1}),
    ("dense", "dense", "negative_lr_decay", {"lr_decay": -0.5}),
    ("sparse", "coo", "weight_decay_sparse_grad", {"weight_decay": 0.1}),
]


def optim_family():
    cases = []
    for path, layout in PATH_LAYOUT.items():
        cases += [
            adagrad_case(path, layout, "f32", "tutorial_step1",
                         lambda g, p=path: tutorial_inputs(p), TUTORIAL_HP, ("ADA-4",),
                         check=check_tutorial_step1),
            adagrad_case(path, layout, "f32", "tutorial_step2",
                         lambda g, p=path: tutorial_step2_inputs(p),
                         dict(TUTORIAL_HP, step=2), ("ADA-4",), check=check_tutorial_step2),
            adagrad_case(path, layout, "f32", "eps0_zero_accumulator",
                         lambda g, p=path: eps0_inputs(p), EPS0_HP, ("ADA-6",),
                         check=eps0_check(EPS0_NAN[path])),
        ]
    for short, dt in DTYPES.items():
        for path, kind, variant, over in ADAGRAD_RANDOM:
            layout = "coo" if kind.startswith("coo") else kind
            cases.append(adagrad_case(
                path, layout, short, variant,
                lambda g, k=kind, dt=dt: random_inputs(k, g, dt), dict(RANDOM_HP, **over)))
        for path, kind, variant, over in ADAGRAD_ERRORS:
            cases.append(adagrad_case(
                path, kind, short, variant,
                lambda g, k=kind, dt=dt: random_inputs(k, g, dt), dict(RANDOM_HP, **over),
                ("ADA-5",), error_class="INVALID_ARGUMENT"))
    return cases


FAMILY_CASES = {"masked": masked_family, "unary": unary_family, "binary": binary_family,
                "reduce": reduce_family, "optim": optim_family}


# ---------------------------------------------------------------------------
# Running cases
# ---------------------------------------------------------------------------

def is_masked_dense(x):
    return isinstance(x, MaskedTensor) and not x.get_data().is_sparse


def poisoned(m, value):
    data, mask = m.get_data().clone(), m.get_mask()
    data[~mask] = value
    return masked_tensor(data, mask)


def run_case(case: Case, index: int) -> Result:
    inputs = case.build(case_rng(case.id))
    poison = "none"
    if case.poison and any(is_masked_dense(x) for x in inputs):
        value = POISONS[index % 2]
        poison = "nan" if math.isnan(value) else repr(value)
        inputs = [poisoned(x, value) if is_masked_dense(x) else x for x in inputs]
    res = Result(case, inputs, poison, rules=case.rules)
    try:
        res.outputs = case.run([clone(x) for x in inputs], case.kwargs)
    except Exception as e:  # noqa: BLE001 - any torch exception is data
        if case.error_class is None:
            raise Surprise(f"{case.id}: declared ok, torch raised "
                           f"{type(e).__name__}: {e}") from e
        res.torch_error = f"{type(e).__name__}: {e}"
        return res
    if case.error_class is not None:
        raise Surprise(f"{case.id}: declared error {case.error_class}, torch did not raise")
    if case.check:
        try:
            case.check(inputs, res.outputs)
        except Surprise as e:
            raise Surprise(f"{case.id}: {e}") from e
    if case.op in ("sum", "mean", "prod", "amin", "amax"):
        res.rules = with_red3(case.rules, res.outputs[0])
    check_headroom(case, inputs, res.outputs)
    return res


def clone(x):
    if isinstance(x, MaskedTensor):
        return masked_tensor(x.get_data().clone(), x.get_mask().clone())
    return x.clone() if isinstance(x, torch.Tensor) else x


def with_red3(rules, out):
    """Tag RED-3 when some output element is fully masked (filled)."""
    if out.numel() and not bool(as_dense(out.get_mask()).all()) and "RED-3" not in rules:
        return rules + ("RED-3",)
    return rules


# -- tolerance self-check: torch float32 vs. the same call in float64

def parse_tol(tol):
    kind, _, arg = tol.partition(":")
    if kind not in ("exact", "ulp", "abs", "rel") or (kind == "exact") != (arg == ""):
        raise ValueError(f"bad tolerance {tol!r}")
    return kind, (float(arg) if arg else 0.0)


def within(got, want, tol, scale=1.0):
    """Elementwise: got matches want under tolerance `tol` (scaled)."""
    got, want = np.asarray(got), np.asarray(want)
    kind, x = parse_tol(tol)
    same = (got == want) | (np.isnan(got) & np.isnan(want))
    if kind == "exact":
        return same
    with np.errstate(invalid="ignore"):
        diff = np.abs(got.astype(np.float64) - want.astype(np.float64))
    bound = {"ulp": lambda: x * np.spacing(np.abs(want)).astype(np.float64),
             "abs": lambda: np.full(want.shape, x),
             "rel": lambda: x * np.abs(want.astype(np.float64))}[kind]()
    return same | (np.isfinite(want) & (diff <= bound * scale))


def to_f64(x):
    if isinstance(x, MaskedTensor):
        return masked_tensor(to_f64(x.get_data()), x.get_mask())
    if isinstance(x, torch.Tensor) and x.is_floating_point():
        return x.to(torch.float64)
    return x


def check_headroom(case, inputs, outputs):
    """A float32 case must be within half its tolerance of the float64 result
    rounded to float32, so that any correct implementation fits the tolerance."""
    if case.tolerance == "exact" or not any(
            getattr(x, "dtype", None) == torch.float32 for x in inputs):
        return
    ref = case.run([to_f64(x) for x in inputs], case.kwargs)
    for k, (got, want) in enumerate(zip(outputs, ref)):
        g, w = as_dense(got).numpy(), as_dense(want).to(torch.float32).numpy()
        if isinstance(got, MaskedTensor) and not case.check_masked_out:
            sel = as_dense(got.get_mask()).numpy()
            g, w = g[sel], w[sel]
        if not within(g, w, case.tolerance, 0.5).all():
            worst = np.nanmax(np.abs(g.astype(np.float64) - w)) if g.size else 0
            raise Surprise(f"{case.id}: output {k} is not within half of "
                           f"{case.tolerance} of the float64 result (max diff {worst:g})")


# ---------------------------------------------------------------------------
# Writing HDF5
# ---------------------------------------------------------------------------

def set_kind(g, kind, dtype, shape):
    g.attrs["kind"] = kind
    g.attrs["dtype"] = DTYPE_NAMES[dtype]
    g.attrs["shape"] = np.asarray(tuple(shape), dtype=np.int64)


def to_numpy(t):
    a = t.detach().cpu().contiguous().numpy()
    return a.astype(np.uint8) if a.dtype == np.bool_ else a


def write_tensor(g, x):
    if isinstance(x, MaskedTensor):
        data, mask = x.get_data(), x.get_mask()
        set_kind(g, "masked", data.dtype, data.shape)
        write_tensor(g.create_group("data"), data)
        write_tensor(g.create_group("mask"), mask)
    elif isinstance(x, (bool, int, float)):
        dtype, np_type = {bool: (torch.bool, np.uint8), int: (torch.int64, np.int64),
                          float: (torch.float64, np.float64)}[type(x)]
        set_kind(g, "scalar", dtype, ())
        g.create_dataset("value", data=np_type(x))
    elif x.layout == torch.sparse_coo:
        set_kind(g, "coo", x.dtype, x.shape)
        g.attrs["coalesced"] = np.bool_(x.is_coalesced())
        g.create_dataset("indices", data=to_numpy(x._indices()).astype(np.int64))
        g.create_dataset("values", data=to_numpy(x._values()))
    elif x.layout == torch.sparse_csr:
        set_kind(g, "csr", x.dtype, x.shape)
        g.create_dataset("crow_indices", data=to_numpy(x.crow_indices()).astype(np.int64))
        g.create_dataset("col_indices", data=to_numpy(x.col_indices()).astype(np.int64))
        g.create_dataset("values", data=to_numpy(x.values()))
    else:
        set_kind(g, "dense", x.dtype, x.shape)
        g.create_dataset("values", data=to_numpy(x))


def kwarg_value(v):
    if isinstance(v, bool):
        return np.bool_(v)
    if isinstance(v, int):
        return np.int64(v)
    if isinstance(v, float):
        return np.float64(v)
    if isinstance(v, tuple):
        return np.asarray(v, dtype=np.int64)
    raise TypeError(f"unsupported kwarg {v!r}")


def write_case(cases_group, res: Result):
    c = res.case
    g = cases_group.create_group(c.id)
    g.attrs["op"] = c.op
    g.attrs["profile"] = "torch"
    g.attrs["rules"] = ",".join(res.rules)
    g.attrs["tolerance"] = c.tolerance
    g.attrs["expect"] = "error" if c.error_class else "ok"
    if c.error_class:
        g.attrs["error_class"] = c.error_class
        g.attrs["torch_error"] = res.torch_error
    g.attrs["torch_call"] = c.torch_call
    g.attrs["poison"] = res.poison
    if c.check_masked_out:
        g.attrs["check_masked_out"] = np.int64(1)
    for name, tensors in (("inputs", res.inputs), ("outputs", res.outputs)):
        sub = g.create_group(name)
        for k, x in enumerate(tensors):
            write_tensor(sub.create_group(str(k)), x)
    kw = g.create_group("kwargs")
    for k, v in c.kwargs.items():
        if v is not None:
            kw.attrs[k] = kwarg_value(v)


def _file_mode():
    umask = os.umask(0)
    os.umask(umask)
    return 0o666 & ~umask


FILE_MODE = _file_mode()  # mkstemp creates 0600; published files follow the umask


def created_utc():
    epoch = os.environ.get("SOURCE_DATE_EPOCH")
    t = (datetime.datetime.fromtimestamp(int(epoch), datetime.timezone.utc) if epoch
         else datetime.datetime.now(datetime.timezone.utc))
    return t.strftime("%Y-%m-%dT%H:%M:%SZ")


def write_family(path, results, meta):
    fd, tmp = tempfile.mkstemp(prefix=".tmp-", suffix=".h5", dir=os.path.dirname(path))
    os.close(fd)
    os.chmod(tmp, FILE_MODE)
    try:
        with h5py.File(tmp, "w", libver=("v110", "v110")) as f:
            for k, v in meta.items():
                f.attrs[k] = v
            cases = f.create_group("cases")
            for res in results:
                write_case(cases, res)
        os.replace(tmp, path)
    except BaseException:
        os.unlink(tmp)
        raise


def sha256_file(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def write_manifest(out_dir, counts):
    """MANIFEST: one line per .h5 (`<file> <case count> <sha256>`); families not
    regenerated this run keep their previous line."""
    path = os.path.join(out_dir, "MANIFEST")
    lines = {}
    if os.path.exists(path):
        with open(path) as f:
            for line in f:
                if line.strip() and not line.startswith("#"):
                    lines[line.split()[0]] = line.rstrip("\n")
    for fam, n in counts.items():
        name = f"{fam}.h5"
        lines[name] = f"{name} {n} {sha256_file(os.path.join(out_dir, name))}"
    body = [f"# mtcs golden files, format_version {FORMAT_VERSION}; "
            f"torch {torch.__version__}; <file> <case count> <sha256>"]
    body += [lines[f"{fam}.h5"] for fam in FAMILIES if f"{fam}.h5" in lines]
    fd, tmp = tempfile.mkstemp(prefix=".tmp-", dir=out_dir)
    os.chmod(tmp, FILE_MODE)
    with os.fdopen(fd, "w") as f:
        f.write("\n".join(body) + "\n")
    os.replace(tmp, path)


# ---------------------------------------------------------------------------
# Main
# ---------------------------------------------------------------------------

def family_cases(fam):
    cases = FAMILY_CASES[fam]()
    ids = [c.id for c in cases]
    dup = {i for i in ids if ids.count(i) > 1}
    assert not dup, f"duplicate case ids: {sorted(dup)}"
    assert all("/" not in i for i in ids)
    return cases


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", default=os.path.dirname(os.path.abspath(__file__)),
                    help="output directory (default: the golden/ directory)")
    ap.add_argument("--only", choices=FAMILIES, help="generate one family only")
    ap.add_argument("--list", action="store_true", help="list case ids and exit")
    args = ap.parse_args(argv)
    families = [args.only] if args.only else list(FAMILIES)

    if args.list:
        for fam in families:
            for c in family_cases(fam):
                print(c.id)
        return 0

    torch.use_deterministic_algorithms(True)
    with open(os.path.abspath(__file__), "rb") as f:
        gen_sha = hashlib.sha256(f.read()).hexdigest()
    meta = {"format": "mtcs-golden", "format_version": np.int64(FORMAT_VERSION),
            "generator": GENERATOR, "generator_sha256": gen_sha,
            "torch_version": str(torch.__version__), "numpy_version": str(np.__version__),
            "torch_cpu_capability": str(torch.backends.cpu.get_cpu_capability()),
            "created_utc": created_utc()}
    results, surprises = {}, []
    for fam in families:
        results[fam] = []
        for i, case in enumerate(family_cases(fam)):
            try:
                results[fam].append(run_case(case, i))
            except Surprise as e:
                surprises.append(str(e))
    if surprises:  # write nothing: the case table must be fixed first
        print("generate.py: torch did not behave as declared; no file written:",
              *surprises, sep="\n  ", file=sys.stderr)
        return 1
    os.makedirs(args.out, exist_ok=True)
    counts = {}
    for fam, res in results.items():
        write_family(os.path.join(args.out, f"{fam}.h5"), res, meta)
        counts[fam] = len(res)
        n_err = sum(r.case.error_class is not None for r in res)
        print(f"{fam}.h5: {len(res)} cases ({n_err} error cases)")
    write_manifest(args.out, counts)
    return 0


if __name__ == "__main__":
    sys.exit(main())

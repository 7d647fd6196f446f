"""Plain (not masked) sparse operands of add, sub, mul, div and their in-place
forms (spec/SEMANTICS.md "Plain sparse pointwise", SPP-2 .. SPP-6), called
from binary.py.

Every case is torch's own answer on the case's inputs: its result (the
stored order of the indices and the coalesced flag included: the SPP rules
make the runner compare them) or its refusal, mapped to a status by
sparse.error_class after the local table below. Inputs: our own COO/CSR
tensors (coalesced, uncoalesced with an index stored twice and out of order,
hybrid, empty), and the small samples of torch's own sparse sample generator
for mul (OpInfo `mul`, `sample_inputs_sparse(torch.sparse_coo/csr)`: the only
op of the family that has one in torch 2.15)."""
import warnings

import torch

from .. import sparse
from ..model import ALL_DTYPES, Case, py

SHAPE = (3, 4)
IDX_A = ((0, 0, 1, 2, 2), (0, 2, 1, 0, 3))   # coalesced, 5 entries
IDX_B = ((0, 1, 2), (0, 2, 3))               # coalesced, 3 entries (2 shared with A)
IDX_U = ((2, 0, 0), (3, 0, 0))               # uncoalesced: (0, 0) twice, out of order
IDX_V = ((1, 0, 2), (2, 1, 3))               # uncoalesced (unsorted), (1, 2) and (0, 1) not in U


def vals(g, n, dt):
    if dt == torch.bool:
        return torch.rand(n, generator=g) < 0.6
    if dt.is_floating_point:
        return torch.randn(n, generator=g, dtype=torch.float32).to(dt)
    return torch.randint(-9, 10, (n,), generator=g, dtype=torch.int64).to(dt)


def coo(idx, coalesce=True, shape=SHAPE):
    def build(g, dt):
        i = torch.tensor(idx, dtype=torch.int64).reshape(len(shape), -1)
        t = torch.sparse_coo_tensor(i, vals(g, i.shape[1], dt), shape)
        return t.coalesce() if coalesce else t
    return build


def csr(idx):
    def build(g, dt):
        return coo(idx)(g, dt).to_sparse_csr()
    return build


def hybrid(rows, coalesce=True):
    """sparse_dim 1 of a (3, 2) tensor, values [nnz, 2]."""
    def build(g, dt):
        v = vals(g, 2 * len(rows), dt).reshape(len(rows), 2)
        t = torch.sparse_coo_tensor(torch.tensor([rows]), v, (3, 2))
        return t.coalesce() if coalesce else t
    return build


def dense(shape=SHAPE):
    return lambda g, dt: vals(g, max(1, int(torch.tensor(shape).prod())), dt).reshape(shape)


A, B, U, V = coo(IDX_A), coo(IDX_B), coo(IDX_U, False), coo(IDX_V, False)
E = coo(((), ()))
CA, CB, CE = csr(IDX_A), csr(IDX_B), csr(((), ()))
H1, H2, HU = hybrid([0, 2]), hybrid([2, 1]), hybrid([2, 0, 2], False)
D, D0, DROW = dense(), dense(()), dense((4,))
D35, DH = dense((3, 5)), dense((3, 2))

# Local error-class table (checked before sparse.error_class, which other
# families share and which is left as it is): torch's refusals that
# DESIGN.md's table classes otherwise than sparse.error_class's first match.
LOCAL_CLASSES = (
    ("LAYOUT_MISMATCH", ("add(sparse, dense) is not supported",
                         "Sparse division requires a scalar or zero-dim dense tensor divisor",
                         # COO with CSR: torch's messages for the mix of layouts
                         "memory format option is only supported by strided tensors",
                         "INTERNAL ASSERT FAILED", "Expected result Tensor to be of format CSR",
                         # CSC/BSR/BSC/batched CSR in mul (SPP-7)
                         "expected sparse compressed (non-block) tensor layout",
                         "coo_to_sparse_csr: conversion from Sparse to SparseCsr",
                         # add of CSC/BSR/BSC with alpha != 1 (torch's MKL path)
                         "expected sparse row compressed tensor layout", "MKL error")),
    ("SHAPE_MISMATCH", ("expected sizes of 'self' and 'other' to match",
                        "to have same size, but self has size",
                        "expects sparse inputs with equal dimensionality",
                        "Expected input tensors to have the same shape")),
    ("DTYPE_MISMATCH", ("must match dtype of sparse tensor",
                        "expected scalar type", "with two bool tensors")),
)


error_class = sparse.classifier(LOCAL_CLASSES)


def outcome(case_id, build, run, kwargs):
    """sparse.outcome with LOCAL_CLASSES first."""
    return sparse.outcome(case_id, build, run, kwargs, classify=error_class)

def runner(op):
    if op.endswith("_"):
        return lambda ins, kw: [getattr(ins[0], op)(*ins[1:], **kw)]
    fn = getattr(torch, op)
    return lambda ins, kw: [fn(*ins, **kw)]


def text(op, names, kw):
    tail = "".join(f", {k}={py(v)}" for k, v in kw.items())
    if op.endswith("_"):
        return f"{names[0]}.{op}({', '.join(names[1:])}{tail})"
    return f"torch.{op}({', '.join(names)}{tail})"


def case(op, layouts, short, variant, left, right, kw=None, rules=(), source=None, tol="exact"):
    """One case: left and right are builders (g, dt) or Python numbers."""
    kw = kw or {}
    dt = ALL_DTYPES[short]

    def build(g, left=left, right=right, dt=dt):
        return [x(g, dt) if callable(x) else x for x in (left, right)]
    cid = f"{op}.{layouts}.{short}.{variant}"
    run = runner(op)
    err = outcome(cid, build, run, kw)
    names = [n if callable(x) else py(x) for n, x in zip(("a", "b"), (left, right))]
    if op.endswith("_"):
        rules = tuple(rules) + ("BIN-10",)  # the in-place variants' rule
    return Case(id=cid, op=op, rules=tuple(rules), tolerance=tol, build=build, run=run,
                torch_call=text(op, names, kw), kwargs=kw, error_class=err, poison=False,
                source=source)


def typed(left_dt, right_dt, lb, rb):
    """Builders of two dtypes (promotion cases)."""
    return (lambda g, dt: lb(g, left_dt)), (lambda g, dt: rb(g, right_dt))


def add_cases():
    out = []
    # (layouts, variant, left, right, kwargs): COO + COO, every coalesced
    # combination, alpha, empty, hybrid (SPP-2)
    table = [
        ("coo_coo", "plain_coalesced", A, B, {}),
        ("coo_coo", "plain_coalesced_alpha", A, B, {"alpha": 0.5}),
        ("coo_coo", "plain_uncoalesced_right", A, U, {}),
        ("coo_coo", "plain_uncoalesced_left", U, A, {"alpha": 2}),
        ("coo_coo", "plain_uncoalesced_both", U, V, {"alpha": -1.5}),
        ("coo_coo", "plain_cancel", A, A, {"alpha": -1}),
        ("coo_coo", "plain_empty_left", E, U, {"alpha": 3}),
        ("coo_coo", "plain_empty_right", A, E, {}),
        ("coo_coo", "plain_empty_both", E, E, {}),
        ("coo_coo", "plain_hybrid", H1, H2, {}),
        ("coo_coo", "plain_hybrid_uncoalesced", H1, HU, {"alpha": 0.25}),
        ("coo_coo", "plain_shape_mismatch", A, coo(((0,), (0,)), shape=(3, 5)), {}),
        ("csr_csr", "plain", CA, CB, {}),
        ("csr_csr", "plain_alpha", CA, CB, {"alpha": 0.3}),
        ("csr_csr", "plain_cancel", CA, CA, {"alpha": -1}),
        ("csr_csr", "plain_empty", CE, CA, {}),
        # no csr_csr hybrid add: torch 2.15 returns an inconsistent CSR (shape
        # (3, 4, 2), dense_dim 0, crow_indices of (3, 4), 6 values flattened;
        # its own to_dense() refuses it), which no golden can hold
        ("coo_csr", "plain_layout_mix", A, CB, {}),
        ("csr_coo", "plain_layout_mix", CA, B, {}),
        ("dense_coo", "plain", D, A, {}),
        ("dense_coo", "plain_alpha", D, A, {"alpha": 0.7}),
        ("dense_coo", "plain_uncoalesced_alpha", D, U, {"alpha": 0.7}),
        ("dense_coo", "plain_hybrid_alpha", DH, H1, {"alpha": 0.7}),
        ("dense_coo", "plain_empty", D, E, {}),
        ("dense_coo", "plain_shape_mismatch", D35, A, {}),
        ("dense_coo", "plain_broadcast_refused", DROW, A, {}),
        ("dense_csr", "plain", D, CA, {}),
        ("dense_csr", "plain_alpha", D, CA, {"alpha": 0.3}),
        ("csr_dense", "plain", CA, D, {}),
        ("coo_dense", "plain_refused", A, D, {}),
        ("coo_scalar", "plain_refused", A, 1.5, {}),
    ]
    for op in ("add", "sub"):
        for layouts, variant, left, right, kw in table:
            if op == "sub" and variant.endswith(("_both", "_empty_both", "_refused", "_mix",
                                                 "mismatch")):
                continue
            rules = ("SPP-3",) if layouts.startswith(("dense", "csr_dense", "coo_dense",
                                                      "coo_scalar")) else ("SPP-2",)
            for short in ("f32", "f64"):
                if short == "f64" and ("mismatch" in variant or "refused" in variant
                                       or "mix" in variant):
                    continue
                out.append(case(op, layouts, short, variant, left, right, kw, rules))
    # dtypes (SPP-6): integers, bfloat16, float16 and bool refusals,
    # promotion, a float alpha on integers
    for short in ("i64", "i32", "bf16", "f16", "bool"):
        out.append(case("add", "coo_coo", short, "plain_dtype", A, U, {}, ("SPP-2", "SPP-6")))
        out.append(case("add", "dense_coo", short, "plain_dtype", D, A, {}, ("SPP-3", "SPP-6")))
        out.append(case("add", "csr_csr", short, "plain_dtype", CA, CB, {}, ("SPP-2", "SPP-6")))
    out.append(case("add", "coo_coo", "i64", "plain_int_alpha", A, B, {"alpha": 3},
                    ("SPP-2", "SPP-6")))
    out.append(case("add", "coo_coo", "i64", "plain_float_alpha", A, B, {"alpha": 0.5},
                    ("SPP-2", "SPP-6")))
    out.append(case("sub", "coo_coo", "bool", "plain_dtype", A, B, {}, ("SPP-2", "SPP-6")))
    l, r = typed(torch.float32, torch.float64, A, B)
    out.append(case("add", "coo_coo", "f32", "plain_promote_f64", l, r, {}, ("SPP-2", "SPP-6")))
    l, r = typed(torch.int64, torch.float32, A, B)
    out.append(case("add", "coo_coo", "i64", "plain_promote_f32", l, r, {}, ("SPP-2", "SPP-6")))
    l, r = typed(torch.float32, torch.float64, CA, CB)
    out.append(case("add", "csr_csr", "f32", "plain_promote_f64", l, r, {}, ("SPP-2", "SPP-6")))
    l, r = typed(torch.float32, torch.float64, D, A)
    out.append(case("add", "dense_coo", "f32", "plain_promote_f64", l, r, {}, ("SPP-3", "SPP-6")))
    return out


def mul_cases():
    out = []
    table = [
        ("coo_coo", "plain_coalesced", A, B, "SPP-4"),
        ("coo_coo", "plain_coalesced_larger_right", B, A, "SPP-4"),
        ("coo_coo", "plain_uncoalesced_right", A, U, "SPP-4"),
        ("coo_coo", "plain_uncoalesced_left", U, A, "SPP-4"),
        ("coo_coo", "plain_uncoalesced_both", U, U, "SPP-4"),
        ("coo_coo", "plain_uncoalesced_unmatched", U, V, "SPP-4"),
        ("coo_coo", "plain_coalesced_unmatched", V, B, "SPP-4"),
        ("coo_coo", "plain_empty", E, U, "SPP-4"),
        ("coo_coo", "plain_hybrid", H1, H2, "SPP-4"),
        ("coo_coo", "plain_hybrid_uncoalesced", HU, H1, "SPP-4"),
        ("coo_coo", "plain_shape_mismatch", A, coo(((0,), (0,)), shape=(3, 5)), "SPP-4"),
        ("coo_dense", "plain", A, D, "SPP-4"),
        ("coo_dense", "plain_uncoalesced", U, D, "SPP-4"),
        ("dense_coo", "plain", D, A, "SPP-4"),
        ("dense_coo", "plain_uncoalesced", D, U, "SPP-4"),
        ("coo_dense", "plain_row_broadcast", A, DROW, "SPP-4"),
        ("coo_dense", "plain_hybrid", H1, DH, "SPP-4"),
        ("coo_dense", "plain_hybrid_uncoalesced", HU, DH, "SPP-4"),
        ("coo_dense", "plain_shape_mismatch", A, D35, "SPP-4"),
        ("coo_dense", "plain_empty", E, D, "SPP-4"),
        ("coo_dense", "plain_zero_dim", A, D0, "SPP-5"),
        ("coo_scalar", "plain", A, 2.5, "SPP-5"),
        ("coo_scalar", "plain_uncoalesced", U, -3, "SPP-5"),
        ("coo_scalar", "plain_hybrid", H1, 0.5, "SPP-5"),
        ("coo_scalar", "plain_zero", A, 0, "SPP-5"),
        ("coo_scalar", "plain_empty", E, 2.0, "SPP-5"),
        ("csr_csr", "plain", CA, CB, "SPP-4"),
        ("csr_csr", "plain_empty", CE, CA, "SPP-4"),
        ("csr_dense", "plain", CA, D, "SPP-4"),
        ("dense_csr", "plain", D, CA, "SPP-4"),
        ("csr_dense", "plain_row_refused", CA, DROW, "SPP-4"),
        ("csr_scalar", "plain", CA, 2.5, "SPP-5"),
        ("csr_dense", "plain_zero_dim", CA, D0, "SPP-5"),
        ("coo_csr", "plain_layout_mix", A, CB, "SPP-4"),
    ]
    for layouts, variant, left, right, rule in table:
        for short in ("f32", "f64"):
            if short == "f64" and ("mismatch" in variant or "refused" in variant
                                   or "mix" in variant):
                continue
            out.append(case("mul", layouts, short, variant, left, right, {}, (rule,)))
    for short in ("f16", "bf16", "i64", "i32", "bool"):
        out.append(case("mul", "coo_coo", short, "plain_dtype", A, U, {}, ("SPP-4", "SPP-6")))
        out.append(case("mul", "coo_scalar", short, "plain_dtype", A, 2, {}, ("SPP-5", "SPP-6")))
        out.append(case("mul", "csr_csr", short, "plain_dtype", CA, CB, {}, ("SPP-4", "SPP-6")))
    out.append(case("mul", "coo_scalar", "i64", "plain_float_number", A, 1.5, {},
                    ("SPP-5", "SPP-6")))
    out.append(case("mul", "coo_scalar", "bool", "plain_bool_number", A, True, {},
                    ("SPP-5", "SPP-6")))
    out.append(case("mul", "csr_scalar", "i64", "plain_float_number", CA, 1.5, {},
                    ("SPP-5", "SPP-6")))
    l, r = typed(torch.float32, torch.float64, A, D)
    out.append(case("mul", "coo_dense", "f32", "plain_promote_f64", l, r, {}, ("SPP-4", "SPP-6")))
    l, r = typed(torch.float32, torch.float64, A, D0)
    out.append(case("mul", "coo_dense", "f32", "plain_zero_dim_f64", l, r, {},
                    ("SPP-5", "SPP-6")))
    out.append(case("mul", "coo_coo", "f32", "plain_alpha_refused", A, B, {"alpha": 2},
                    ("SPP-4",)))
    out += opinfo_mul_cases()
    return out


def opinfo_mul_cases(limit=4):
    """torch's own sparse samples of mul (small ones: the (1029, 917) pair
    is skipped), COO and CSR, float32 and float64; a sample whose other
    operand is a tensor of the input's shape."""
    from ..opinfo import ALLOW_MISSING_DB, MAX_NUMEL, _seed, opinfo
    out = []
    try:
        info = opinfo("mul")
    except KeyError:  # no OpInfo database (variants.py under an older torch)
        if ALLOW_MISSING_DB:
            return out
        raise
    for layout, tok in ((torch.sparse_coo, "coo"), (torch.sparse_csr, "csr")):
        for short in ("f32", "f64"):
            dt = ALL_DTYPES[short]
            _seed("mul", dt, f"sparse_{tok}")
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                ss = list(info.sample_inputs_sparse(layout, "cpu", dt))
            n = 0
            for k, s in enumerate(ss):
                other = s.args[0] if s.args else None
                if not isinstance(other, torch.Tensor) or s.kwargs:
                    continue
                if s.input.numel() + other.numel() > MAX_NUMEL:
                    continue
                lt = "coo" if s.input.layout == torch.sparse_coo else (
                    "csr" if s.input.layout == torch.sparse_csr else None)
                rt = {torch.sparse_coo: "coo", torch.sparse_csr: "csr",
                      torch.strided: "dense"}.get(other.layout)
                if lt is None or rt is None or (lt == "csr" and s.input.ndim != 2):
                    continue  # CSC/BSR/BSC, batched CSR: their C reader is not on main yet
                x, y = s.input.clone(), other.clone()
                out.append(case("mul", f"{lt}_{rt}", short, f"opinfo_{tok}_{k}",
                                lambda g, dt, x=x: x.clone(), lambda g, dt, y=y: y.clone(),
                                {}, ("SPP-4",), source=f"opinfo:mul:sparse_{tok}:{k}"))
                n += 1
                if n >= limit:
                    break
    return out


def div_cases():
    out = []
    table = [
        ("coo_scalar", "plain", A, 3.0),
        ("coo_scalar", "plain_uncoalesced", U, -0.5),
        ("coo_scalar", "plain_hybrid", H1, 7),
        ("coo_scalar", "plain_by_zero", A, 0),
        ("coo_scalar", "plain_empty", E, 2.0),
        ("coo_dense", "plain_zero_dim", A, D0),
        ("coo_dense", "plain_refused", A, D),
        ("coo_coo", "plain_refused", A, B),
        ("dense_coo", "plain_refused", D, A),
        ("csr_scalar", "plain_refused", CA, 2.0),
    ]
    for layouts, variant, left, right in table:
        for short in ("f32", "f64"):
            if short == "f64" and "refused" in variant:
                continue
            out.append(case("div", layouts, short, variant, left, right, {}, ("SPP-5",)))
    for short in ("f16", "bf16", "i64", "bool"):
        out.append(case("div", "coo_scalar", short, "plain_dtype", A, 3, {}, ("SPP-5", "SPP-6")))
    return out


def inplace_cases():
    """a.<op>_(b): torch's result is the tensor self becomes (SPP-2 .. SPP-6)."""
    out = []
    table = [
        ("add_", "coo_coo", "plain", A, B, {}, "SPP-2"),
        ("add_", "coo_coo", "plain_uncoalesced", A, U, {"alpha": 2}, "SPP-2"),
        ("add_", "coo_coo", "plain_uncoalesced_self", U, A, {}, "SPP-2"),
        ("sub_", "coo_coo", "plain", A, B, {"alpha": 2}, "SPP-2"),
        ("add_", "dense_coo", "plain", D, A, {"alpha": 2}, "SPP-3"),
        ("add_", "dense_coo", "plain_uncoalesced", D, U, {}, "SPP-3"),
        ("sub_", "dense_coo", "plain", D, A, {}, "SPP-3"),
        ("add_", "coo_dense", "plain_refused", A, D, {}, "SPP-3"),
        ("add_", "csr_csr", "plain", CA, CB, {}, "SPP-2"),
        ("add_", "dense_csr", "plain", D, CA, {}, "SPP-3"),
        ("add_", "csr_dense", "plain_refused", CA, D, {}, "SPP-3"),
        ("mul_", "coo_coo", "plain", A, B, {}, "SPP-4"),
        ("mul_", "coo_coo", "plain_uncoalesced", A, U, {}, "SPP-4"),
        ("mul_", "coo_scalar", "plain", A, 2.0, {}, "SPP-5"),
        ("mul_", "coo_scalar", "plain_uncoalesced", U, 2.0, {}, "SPP-5"),
        ("mul_", "coo_dense", "plain", A, D, {}, "SPP-4"),
        ("mul_", "dense_coo", "plain", D, A, {}, "SPP-4"),
        ("mul_", "dense_coo", "plain_uncoalesced", D, U, {}, "SPP-4"),
        ("mul_", "csr_csr", "plain", CA, CB, {}, "SPP-4"),
        ("mul_", "csr_scalar", "plain", CA, 2.0, {}, "SPP-5"),
        ("mul_", "dense_csr", "plain_refused", D, CA, {}, "SPP-4"),
        ("div_", "coo_scalar", "plain", A, 2.0, {}, "SPP-5"),
        ("div_", "coo_scalar", "plain_uncoalesced", U, 4.0, {}, "SPP-5"),
        ("div_", "dense_coo", "plain_refused", D, A, {}, "SPP-5"),
        ("div_", "csr_scalar", "plain_refused", CA, 2.0, {}, "SPP-5"),
    ]
    for op, layouts, variant, left, right, kw, rule in table:
        for short in ("f32", "f64"):
            if short == "f64" and "refused" in variant:
                continue
            out.append(case(op, layouts, short, variant, left, right, kw, (rule,)))
    # self keeps its dtype: a float result on an integer self is refused
    l, r = typed(torch.int64, torch.float32, A, B)
    out.append(case("add_", "coo_coo", "i64", "plain_float_other", l, r, {}, ("SPP-2", "SPP-6")))
    l, r = typed(torch.float32, torch.float64, A, B)
    out.append(case("add_", "coo_coo", "f32", "plain_f64_other", l, r, {}, ("SPP-2", "SPP-6")))
    out.append(case("mul_", "coo_scalar", "i64", "plain_float_number", A, 1.5, {},
                    ("SPP-5", "SPP-6")))
    out.append(case("div_", "coo_scalar", "i64", "plain_int", A, 2, {}, ("SPP-5", "SPP-6")))
    return out


# CSC, BSR (2, 2 blocks), BSC and batched CSR of one (4, 4) pattern, two
# value draws (SPP-7)
PAT4 = torch.tensor([[1, 0, 1, 0], [0, 0, 1, 1], [1, 1, 0, 0], [0, 1, 0, 0]], dtype=torch.bool)
PAT4B = torch.tensor([[0, 1, 0, 0], [0, 0, 1, 0], [1, 0, 0, 0], [0, 0, 0, 1]], dtype=torch.bool)
TO = {"csc": lambda d: d.to_sparse_csc(), "bsr": lambda d: d.to_sparse_bsr((2, 2)),
      "bsc": lambda d: d.to_sparse_bsc((2, 2)), "csr": lambda d: d.to_sparse_csr()}


def compressed(kind, pat, batched=False):
    def build(g, dt):
        shape = (2, 4, 4) if batched else (4, 4)
        v = vals(g, 32 if batched else 16, dt).reshape(shape)
        v = torch.where(v == 0, torch.ones_like(v), v)
        return TO[kind](v * pat)
    return build


def compressed_cases():
    """add of two tensors of one compressed kind (any), mul by a number,
    D + S, and what torch refuses on CSC/BSR/BSC/batched CSR (SPP-7)."""
    out = []
    for kind, lay, batched in (("csc", "csc", False), ("bsr", "bsr", False), ("bsc", "bsc", False),
                               ("csr", "csr", True)):
        x, y = compressed(kind, PAT4, batched), compressed(kind, PAT4B, batched)
        v = "plain_batched" if batched else "plain"
        dshape = (2, 4, 4) if batched else (4, 4)
        table = [
            ("add", f"{lay}_{lay}", v + "_refused", x, y, {}),
            ("mul", f"{lay}_scalar", v, x, 2.5, {}),
            ("add", f"dense_{lay}", v, dense(dshape), x, {}),
            ("mul", f"{lay}_{lay}", v + "_refused", x, y, {}),
            ("mul", f"{lay}_dense", v + "_refused", x, dense(dshape), {}),
            ("sub", f"{lay}_{lay}", v + "_refused", x, y, {}),
            ("div", f"{lay}_scalar", v + "_refused", x, 2.0, {}),
        ]
        for op, layouts, variant, left, right, kw in table:
            if batched and op == "add" and layouts == "csr_csr":
                # torch 2.15's add of two batched CSR tensors returns a
                # malformed tensor (values of shape [4] for 2 batches,
                # dense_dim() -1): nothing a golden can hold (SPP-7)
                continue
            out.append(case(op, layouts, "f32", variant, left, right, kw, ("SPP-7",)))
    return out


# ---- duplicates' products (SPP-4), appended last: the earlier cases keep their places --

DUP_RUNS = ((0, 0), (1, 1), (2, 2), (0, 3))  # each stored 3 times in x, twice in y


def dup_runs(copies):
    """Uncoalesced COO (3, 4): every position of DUP_RUNS stored `copies`
    times, in turn (the copies of one position apart), random values drawn
    in float64 (vals' float32 draws multiply exactly in double, where the
    two orders of a float64 sum then rarely differ)."""
    def build(g, dt):
        pos = [p for _ in range(copies) for p in DUP_RUNS]
        i = torch.tensor(pos, dtype=torch.int64).t()
        v = torch.randn(len(pos), generator=g, dtype=torch.float64).to(dt)
        return torch.sparse_coo_tensor(i, v, SHAPE)
    return build


def fixed_coo(idx, values):
    """Uncoalesced COO (3, 4) of fixed values (cast to the case's dtype)."""
    def build(g, dt):
        return torch.sparse_coo_tensor(torch.tensor(idx, dtype=torch.int64),
                                       torch.tensor(values, dtype=dt), SHAPE)
    return build


def dup_product_cases():
    """mul of two uncoalesced COO tensors: torch keeps the smaller's entries
    (x on a tie) and gives each the sum, over the other's matches in their
    stored order, of entry * match, summed from 0 in its CPU accumulate type
    (double for float32 and float64, so a float32 result is rounded once;
    float for the half types) and rounded to the dtype. Summing the matches
    first and multiplying once is another value (float32: 1 ulp in
    `dup_products_drawn`, found by golden/reseed.py; float64: most runs of
    `dup_products`); a lone product -0.0 gives +0.0 (`dup_negzero`)."""
    x3, y2 = dup_runs(3), dup_runs(2)
    drawn_x = fixed_coo(IDX_U, [0.500099778175354, 0.31810620427131653, -0.9673891067504883])
    drawn_y = fixed_coo(IDX_U, [1.1995902061462402, -0.09299962222576141, 1.4549593925476074])
    nz_x = fixed_coo(((0, 1, 1), (0, 2, 2)), [3.0, 1.0, 2.0])
    nz_y = fixed_coo(((0, 1), (0, 2)), [-0.0, 4.0])
    out = [case("mul", "coo_coo", short, "dup_products", x3, y2, {}, ("SPP-4",))
           for short in ("f32", "f64")]
    out.append(case("mul", "coo_coo", "f32", "dup_products_drawn", drawn_x, drawn_y, {},
                    ("SPP-4",)))
    out += [case("mul", "coo_coo", short, "dup_negzero", nz_x, nz_y, {}, ("SPP-4",))
            for short in ("f32", "f64")]
    return out


def cases():
    return (add_cases() + mul_cases() + div_cases() + inplace_cases() + compressed_cases()
            + dup_product_cases())

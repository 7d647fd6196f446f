"""Plain (not masked) sparse tensors through reductions (SPS-3, SPS-4):
torch.sum (all, dim=, keepdim=, dtype=), torch.amax and torch.norm on
every layout of structure_sparse.LAYOUTS, torch's result or refusal; plus
a few of torch's own sparse samples of sum (OpInfo `sample_inputs_sparse`,
COO and CSR)."""
import warnings

import torch

from ..model import Case
from ..opinfo import opinfo
from .. import opinfo as _opinfo_mod
from .structure_sparse import EXTRA_LAYOUTS, LAYOUTS, ROW_LAYOUTS, matrix, outcome

FLOAT_TOL = {torch.float32: ("abs:1e-5", "rel:1e-5"), torch.float64: ("abs:1e-12", "rel:1e-12")}


def tol_sum(dt, kw):
    """float32: torch sums in float32 in its order, we in float64 once
    rounded; at most 6 terms of N(0, 1) values: abs:1e-5 (the headroom
    check holds it to half). float16/bfloat16: torch sums in float and
    rounds once, as we do, but its coalesce adds duplicates in the dtype:
    ulp:2. Integers and bool: exact. dtype=float64 on a float32 input
    keeps float32's tolerance: torch sums a hybrid tensor's dense rows in
    float32 before it converts (1e-7 from the float64 input's sum)."""
    if dt.is_floating_point and dt != torch.float64:
        return FLOAT_TOL[dt][0] if dt in FLOAT_TOL else "ulp:2"
    dt = kw.get("dtype", dt)
    if dt in FLOAT_TOL:
        return FLOAT_TOL[dt][0]
    return "ulp:2" if dt in (torch.float16, torch.bfloat16) else "exact"


def tol_norm(dt, kw):
    """sqrt of a sum of at most 6 squares: rel:1e-5 (float32), rel:1e-12
    (float64); float16/bfloat16 computed in float, rounded once: rel:1e-2
    (one bfloat16 ulp is 2^-8)."""
    return FLOAT_TOL[dt][1] if dt in FLOAT_TOL else "rel:1e-2"


def _sum_run(i, k):
    return [torch.sum(i[0], **k)]


# (op, variant suffix, run, torch_call, kw_of, tol, rules)
ROWS = (
    ("sum", "all", _sum_run, "torch.sum(s)", lambda v, x: {}, tol_sum),
    ("sum", "dim0", _sum_run, "torch.sum(s, dim)", lambda v, x: {"dim": 0}, tol_sum),
    ("sum", "last_keepdim", _sum_run, "torch.sum(s, dim, keepdim=True)",
     lambda v, x: {"dim": -1, "keepdim": True}, tol_sum),
    ("sum", "dim0_f64", _sum_run, "torch.sum(s, dim, dtype=torch.float64)",
     lambda v, x: {"dim": 0, "dtype": torch.float64}, tol_sum),
    # keepdim where a dim after the reduced one stays: a hybrid COO's sum
    # over its sparse dim is dense, and keepdim moves its dense dims right
    # (tests/sweep: a mutant of that shift survived while only the last dim
    # was kept)
    ("sum", "dim0_keepdim", _sum_run, "torch.sum(s, dim, keepdim=True)",
     lambda v, x: {"dim": 0, "keepdim": True}, tol_sum),
    # dim=() reduces nothing on a sparse tensor (a dense one's sum sums
    # all): torch gives the input back, coalesced (the sweep's
    # reduce_sparse.c:248)
    ("sum", "dim_empty", _sum_run, "torch.sum(s, dim=())", lambda v, x: {"dim": ()}, tol_sum),
    ("amax", "all", lambda i, k: [torch.amax(i[0], **k)], "torch.amax(s)", lambda v, x: {},
     tol_sum),
    ("amax", "dim0", lambda i, k: [torch.amax(i[0], **k)], "torch.amax(s, dim)",
     lambda v, x: {"dim": 0}, tol_sum),
    ("norm", "p2", lambda i, k: [torch.norm(i[0], **k)], "torch.norm(s)", lambda v, x: {},
     tol_norm),
    ("norm", "p1", lambda i, k: [torch.norm(i[0], **k)], "torch.norm(s, p=1)",
     lambda v, x: {"p": 1.0}, tol_norm),
    ("norm", "pinf", lambda i, k: [torch.norm(i[0], **k)], "torch.norm(s, p=float('inf'))",
     lambda v, x: {"p": float("inf")}, tol_norm),
    ("norm", "p0", lambda i, k: [torch.norm(i[0], **k)], "torch.norm(s, p=0)",
     lambda v, x: {"p": 0.0}, tol_norm),
    # p = 3: no special case (0, 1, 2, inf) of the sum of |v|^p and its p-th root; p = 2
    # cannot tell sqrt from pow(acc, 1 / p)
    ("norm", "p3", lambda i, k: [torch.norm(i[0], **k)], "torch.norm(s, p=3)",
     lambda v, x: {"p": 3.0}, tol_norm),
    ("norm", "dim0", lambda i, k: [torch.norm(i[0], **k)], "torch.norm(s, dim=0)",
     lambda v, x: {"dim": 0}, tol_norm),
)
RULES = {"sum": ("SPS-3",), "amax": ("SPS-4",), "norm": ("SPS-4",)}


def _suffixed(suffix, first):
    """LAYOUTS with the variant suffixed; only ROW_LAYOUTS but on an op's
    first row (the size budget)."""
    return tuple((lay, f"{var}_{suffix}", b) for lay, var, b in LAYOUTS
                 if first or (lay, var) in ROW_LAYOUTS)


def opinfo_cases(limit=3):
    """torch's sparse samples of sum: the first `limit` of each layout torch
    has them for (COO, CSR, CSC, BSR, BSC), float32 and float64."""
    out = []
    try:
        info = opinfo("sum")
    except KeyError:  # a torch without the OpInfo database (ALLOW_MISSING_DB)
        if _opinfo_mod.ALLOW_MISSING_DB:
            return []
        raise
    for tok, layout in (("coo", torch.sparse_coo), ("csr", torch.sparse_csr),
                        ("csc", torch.sparse_csc), ("bsr", torch.sparse_bsr),
                        ("bsc", torch.sparse_bsc)):
        for short, dt in (("f32", torch.float32), ("f64", torch.float64)):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                got = list(info.sample_inputs_sparse(layout, "cpu", dt))
            k = 0
            for n, s in enumerate(got):
                if not isinstance(s.input, torch.Tensor) or s.input.numel() > 64:
                    continue
                kw = dict(s.kwargs)
                if s.args:
                    kw["dim"] = s.args[0]
                if isinstance(kw.get("dim"), list):
                    kw["dim"] = tuple(kw["dim"])
                if set(kw) - {"dim", "keepdim", "dtype"}:
                    continue
                x = s.input.detach().clone()
                cid = f"sum.{tok}.{short}.opinfo_{k}"
                b = (lambda g, x=x: [x.clone()])
                err = outcome(cid, b, _sum_run, kw)
                if err and short != "f32":
                    continue
                out.append(Case(id=cid, op="sum", rules=("SPS-3",) + (("SPS-0",) if err else ()),
                                tolerance="exact" if err else tol_sum(dt, kw), build=b,
                                run=_sum_run, torch_call="torch.sum(s, *args, **kwargs)",
                                kwargs=kw, error_class=err, poison=False,
                                source=f"opinfo:sum:sparse_{tok}:{n}"))
                k += 1
                if k >= limit:
                    break
    return out


def cases():
    out, seen = [], set()
    for op, suffix, run, text, kw_of, tol in ROWS:
        first = op not in seen
        seen.add(op)
        # the other dtypes: on an op's first row and on dim0 (the size budget)
        extra = tuple((lay, f"{var}_{suffix}") for lay, var in EXTRA_LAYOUTS
                      if first or suffix == "dim0")
        out += matrix(op, run, text, kw_of, tol, RULES[op], layouts=_suffixed(suffix, first),
                      extra=extra)
    return out + opinfo_cases()

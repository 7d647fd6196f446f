"""Family sparse_misc: the plain sparse ops of torch's sparse table
("Others") that MaskedTensor has no op for (SPS-*): zero_, t_, nonzero,
narrow, narrow_copy, index_select, torch.sparse.softmax / log_softmax,
torch.sparse.sum, torch.max and sparse_resize_ / sparse_resize_and_clear_,
on every layout of structure_sparse.LAYOUTS (COO coalesced, uncoalesced,
hybrid, 3-d, empty; CSR, batched CSR, CSC, BSR, BSC), float32 and float64
and the other dtypes on COO and CSR, torch's result or refusal."""
import math

import torch

from ..model import ALL_DTYPES, Case, check_ids
from . import structure_sparse as ss
from .structure_sparse import EXTRA_LAYOUTS, LAYOUTS, ROW_LAYOUTS, matrix, outcome, tol_exact


def tol_sum(dt, kw):
    """as reduce_sparse.tol_sum: float32 abs:1e-5, float64 abs:1e-12,
    float16/bfloat16 ulp:2, integers exact. With dtype=float64 on a
    float32 input, the input's tolerance: torch does not always convert
    before it adds (sparse.sum of float32 COO with dtype=float64 differs
    from the float64 input's sum by up to 8e-8 on the uncoalesced, hybrid
    and 3-d cases: duplicates and dense rows are summed in float32 first)."""
    if dt.is_floating_point and dt != torch.float64:
        return {torch.float32: "abs:1e-5"}.get(dt, "ulp:2")
    dt = kw.get("dtype", dt)
    return {torch.float32: "abs:1e-5", torch.float64: "abs:1e-12", torch.float16: "ulp:2",
            torch.bfloat16: "ulp:2"}.get(dt, "exact")


def tol_softmax(dt, kw):
    """exp and a sum of at most 6 terms per slice: rel:1e-5 (float32,
    the headroom check holds it to half), rel:1e-12 (float64); dtype= on a
    float32 input keeps float32's (see tol_sum: the hybrid and 3-d cases
    of dtype=float64 differ from the float64 input's by up to 2e-8)."""
    if dt == torch.float32:
        return "rel:1e-5"
    dt = kw.get("dtype", dt)
    return {torch.float32: "rel:1e-5", torch.float64: "rel:1e-12"}.get(dt, "rel:1e-2")


def _narrow_kw(v, x):
    return {"dim": x.dim() - 1, "start": 1, "length": 3} if x.shape[-1] >= 4 else \
        {"dim": 0, "start": 0, "length": 0}


def _index(g, dt, x):
    n = x.shape[0]
    return torch.tensor([n - 1, 0, n - 1] if n else [], dtype=torch.int64)


def _resize_kw(v, x):
    """every sparse dim one larger (a dense dim grown on a non-empty tensor
    leaves torch's values uninitialized: no case)"""
    if x.layout == torch.sparse_coo:
        sd = x.sparse_dim()
        return {"size": tuple(s + (d < sd) for d, s in enumerate(x.shape)), "sparse_dim": sd,
                "dense_dim": x.dim() - sd}
    return {"size": tuple(s + 1 for s in x.shape), "sparse_dim": 2, "dense_dim": 0}


SP = torch.sparse
# op -> [(variant suffix or "", run, torch_call, kw_of, tol, rules, n_in, second)]
ROWS = {
    "zero_": [("", lambda i, k: [i[0].zero_()], "s.zero_()", lambda v, x: {}, tol_exact,
               ("SPS-6",))],
    "t_": [("", lambda i, k: [i[0].t_()], "s.t_()", lambda v, x: {}, tol_exact, ("SPS-2",))],
    "nonzero": [("", lambda i, k: [torch.nonzero(i[0])], "torch.nonzero(s)", lambda v, x: {},
                 tol_exact, ("SPS-0",))],
    "narrow": [("", lambda i, k: [i[0].narrow(k["dim"], k["start"], k["length"])],
                "s.narrow(dim, start, length)", _narrow_kw, tol_exact, ("SPS-0",))],
    "narrow_copy": [
        ("", lambda i, k: [i[0].narrow_copy(k["dim"], k["start"], k["length"])],
         "s.narrow_copy(dim, start, length)", _narrow_kw, tol_exact, ("SPS-6",)),
        ("dim0", lambda i, k: [i[0].narrow_copy(k["dim"], k["start"], k["length"])],
         "s.narrow_copy(dim, start, length)", lambda v, x: {"dim": 0, "start": -2, "length": 2},
         tol_exact, ("SPS-6",))],
    "sparse_softmax": [
        ("", lambda i, k: [SP.softmax(i[0], **k)], "torch.sparse.softmax(s, dim)",
         lambda v, x: {"dim": -1}, tol_softmax, ("SPS-5",)),
        ("dim0_f64", lambda i, k: [SP.softmax(i[0], **k)],
         "torch.sparse.softmax(s, dim, dtype=torch.float64)",
         lambda v, x: {"dim": 0, "dtype": torch.float64}, tol_softmax, ("SPS-5",))],
    "sparse_log_softmax": [
        ("", lambda i, k: [SP.log_softmax(i[0], **k)], "torch.sparse.log_softmax(s, dim)",
         lambda v, x: {"dim": -1}, tol_softmax, ("SPS-5",)),
        ("dim0", lambda i, k: [SP.log_softmax(i[0], **k)], "torch.sparse.log_softmax(s, dim)",
         lambda v, x: {"dim": 0}, tol_softmax, ("SPS-5",))],
    "sparse_sum": [
        ("", lambda i, k: [SP.sum(i[0], **k)], "torch.sparse.sum(s)", lambda v, x: {}, tol_sum,
         ("SPS-3",)),
        ("dim0", lambda i, k: [SP.sum(i[0], **k)], "torch.sparse.sum(s, dim)",
         lambda v, x: {"dim": 0}, tol_sum, ("SPS-3",)),
        ("all_sparse_dims", lambda i, k: [SP.sum(i[0], **k)], "torch.sparse.sum(s, dim)",
         lambda v, x: {"dim": tuple(range(x.sparse_dim() if x.layout == torch.sparse_coo
                                          else 2))}, tol_sum, ("SPS-3",)),
        ("f64", lambda i, k: [SP.sum(i[0], **k)], "torch.sparse.sum(s, dtype=torch.float64)",
         lambda v, x: {"dtype": torch.float64}, tol_sum, ("SPS-3",))],
    "max": [("", lambda i, k: [torch.max(i[0])], "torch.max(s)", lambda v, x: {}, tol_exact,
             ("SPS-0",)),
            ("dim0", lambda i, k: list(torch.max(i[0], dim=k["dim"])), "torch.max(s, dim)",
             lambda v, x: {"dim": 0}, tol_exact, ("SPS-0",))],
    "sparse_resize_": [
        ("grow", lambda i, k: [i[0].sparse_resize_(k["size"], k["sparse_dim"], k["dense_dim"])],
         "s.sparse_resize_(size, sparse_dim, dense_dim)", _resize_kw, tol_exact, ("SPS-7",))],
    "sparse_resize_and_clear_": [
        ("grow", lambda i, k: [i[0].sparse_resize_and_clear_(k["size"], k["sparse_dim"],
                                                             k["dense_dim"])],
         "s.sparse_resize_and_clear_(size, sparse_dim, dense_dim)", _resize_kw, tol_exact,
         ("SPS-7",))],
}


def index_select_cases():
    run = (lambda i, k: [i[0].index_select(k["dim"], i[1])])
    out = []
    for suffix, kw in (("", {"dim": 0}), ("last", {"dim": -1})):
        lays = tuple((lay, f"{var}_{suffix}" if suffix else var, b) for lay, var, b in LAYOUTS
                     if not suffix or (lay, var) in ROW_LAYOUTS)

        def second(g, dt, x, kw=kw):
            n = x.shape[kw["dim"]] if x.dim() else 0
            return torch.tensor([n - 1, 0, n - 1] if n else [], dtype=torch.int64)
        out += matrix("index_select", run, "torch.index_select(s, dim, index)",
                      lambda v, x, kw=kw: dict(kw), tol_exact, ("SPS-6",), n_in=2,
                      layouts=lays, second=second, token=lambda lay: f"{lay}_dense",
                      extra=tuple((lay, f"{var}_{suffix}" if suffix else var)
                                  for lay, var in EXTRA_LAYOUTS))
    return out


def corner_cases():
    """Argument corners, float32 and float64 (torch's result or refusal)."""
    out = []

    def add(op, tok, variant, build, kw, run, text, rules):
        for short in ("f32", "f64"):
            dt = ALL_DTYPES[short]
            cid = f"{op}.{tok}.{short}.{variant}"
            b = (lambda g, dt=dt: build(g, dt))
            err = outcome(cid, b, run, kw)
            if err and short != "f32":
                continue
            out.append(Case(id=cid, op=op, rules=rules + (("SPS-0",) if err else ()),
                            tolerance="exact" if err else tol_sum(dt, kw), build=b, run=run,
                            torch_call=text, kwargs=kw, error_class=err, poison=False))
    one = lambda f: (lambda g, dt: [f(g, dt)])  # noqa: E731
    nc = ROWS["narrow_copy"][0][1]
    add("narrow_copy", "coo", "hybrid_dense_dim", one(ss.coo_hybrid),
        {"dim": 1, "start": 2, "length": 3}, nc, "s.narrow_copy(dim, start, length)", ("SPS-6",))
    add("narrow_copy", "coo", "past_end", one(ss.coo_coalesced),
        {"dim": 1, "start": 4, "length": 3}, nc, "s.narrow_copy(dim, start, length)", ("SPS-6",))
    add("narrow_copy", "coo", "bad_dim", one(ss.coo_coalesced),
        {"dim": 2, "start": 0, "length": 1}, nc, "s.narrow_copy(dim, start, length)", ("SPS-6",))
    isel = (lambda i, k: [i[0].index_select(k["dim"], i[1])])
    add("index_select", "coo_dense", "hybrid_dense_dim",
        lambda g, dt: [ss.coo_hybrid(g, dt), torch.tensor([5, 1])], {"dim": 1}, isel,
        "torch.index_select(s, dim, index)", ("SPS-6",))
    add("index_select", "coo_dense", "out_of_range",
        lambda g, dt: [ss.coo_coalesced(g, dt), torch.tensor([0, 4])], {"dim": 0}, isel,
        "torch.index_select(s, dim, index)", ("SPS-6",))
    add("index_select", "coo_dense", "empty_index",
        lambda g, dt: [ss.coo_uncoalesced(g, dt), torch.tensor([], dtype=torch.int64)],
        {"dim": 1}, isel, "torch.index_select(s, dim, index)", ("SPS-6",))
    add("index_select", "coo_dense", "int32_index",
        lambda g, dt: [ss.coo_coalesced(g, dt), torch.tensor([1, 3], dtype=torch.int32)],
        {"dim": 0}, isel, "torch.index_select(s, dim, index)", ("SPS-6",))
    sm = ROWS["sparse_softmax"][0][1]

    def coo_hybrid_extremes(g, dt):
        """coo_hybrid with a slice that ends in -inf and one whose values
        spread by 800 (exp overflows unless the slice's max is taken off
        first; tests/sweep)."""
        s = ss.coo_hybrid(g, dt)
        v = s.values().clone()
        v[0, -1] = -math.inf
        v[1, 0] = 800.0
        return torch.sparse_coo_tensor(s.indices(), v, s.shape).coalesce()
    add("sparse_softmax", "coo", "hybrid_dense_dim", one(coo_hybrid_extremes), {"dim": 1}, sm,
        "torch.sparse.softmax(s, dim)", ("SPS-5",))
    add("sparse_softmax", "coo", "bad_dim", one(ss.coo_coalesced), {"dim": 2}, sm,
        "torch.sparse.softmax(s, dim)", ("SPS-5",))
    ssum = ROWS["sparse_sum"][0][1]
    add("sparse_sum", "coo", "hybrid_dense_dim", one(ss.coo_hybrid), {"dim": 1}, ssum,
        "torch.sparse.sum(s, dim)", ("SPS-3",))
    add("sparse_sum", "coo", "3d_dims_0_2", one(ss.coo_3d), {"dim": (0, 2)}, ssum,
        "torch.sparse.sum(s, dim)", ("SPS-3",))
    add("sparse_sum", "coo", "repeated_dim", one(ss.coo_3d), {"dim": (1, 1)}, ssum,
        "torch.sparse.sum(s, dim)", ("SPS-3",))
    # dim=() reduces nothing (unlike a dense tensor's sum, which sums all):
    # the input back, coalesced; CSR has no kernel for it (the sweep's
    # reduce_sparse.c:248, tests/sweep/README.md)
    add("sparse_sum", "coo", "dim_empty", one(ss.coo_uncoalesced), {"dim": ()}, ssum,
        "torch.sparse.sum(s, dim=())", ("SPS-3",))
    add("sparse_sum", "csr", "dim_empty", one(ss.csr), {"dim": ()}, ssum,
        "torch.sparse.sum(s, dim=())", ("SPS-3",))
    rs = ROWS["sparse_resize_"][0][1]
    for op_, run_ in (("sparse_resize_", rs), ("sparse_resize_and_clear_",
                                                ROWS["sparse_resize_and_clear_"][0][1])):
        text = f"s.{op_}(size, sparse_dim, dense_dim)"
        add(op_, "coo", "shrink_sparse", one(ss.coo_coalesced),
            {"size": (3, 6), "sparse_dim": 2, "dense_dim": 0}, run_, text, ("SPS-7",))
        add(op_, "coo", "change_sparse_dim", one(ss.coo_coalesced),
            {"size": (4, 6), "sparse_dim": 1, "dense_dim": 1}, run_, text, ("SPS-7",))
        add(op_, "coo", "empty_change_dims", one(ss.coo_empty),
            {"size": (2, 3, 4), "sparse_dim": 1, "dense_dim": 2}, run_, text, ("SPS-7",))
        add(op_, "coo", "hybrid_shrink_dense", one(ss.coo_hybrid),
            {"size": (4, 5), "sparse_dim": 1, "dense_dim": 1}, run_, text, ("SPS-7",))
        add(op_, "coo", "dims_dont_add_up", one(ss.coo_coalesced),
            {"size": (4, 6), "sparse_dim": 1, "dense_dim": 0}, run_, text, ("SPS-7",))
    return out


def cases():
    out = []
    for op, rows in ROWS.items():
        for n, (suffix, run, text, kw_of, tol, rules) in enumerate(rows):
            # an op's further rows: ROW_LAYOUTS only (the size budget)
            lays = tuple((lay, f"{var}_{suffix}" if suffix else var, b) for lay, var, b in LAYOUTS
                         if n == 0 or (lay, var) in ROW_LAYOUTS)
            # the other dtypes: on an op's first row and on dim0 (the size budget)
            extra = tuple((lay, f"{var}_{suffix}" if suffix else var) for lay, var in EXTRA_LAYOUTS
                          if n == 0 or suffix == "dim0")
            out += matrix(op, run, text, kw_of, tol, rules, layouts=lays, extra=extra)
    out += index_select_cases()
    out += corner_cases()
    return check_ids(out)

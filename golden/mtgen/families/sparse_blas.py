"""Family sparse_blas: matrix products with a sparse operand (SPB-1..6):
torch.mm, torch.spmm and torch.sparse.mm, addmm and torch.sparse.addmm, smm,
sspaddmm, hspmm, bmm, F.linear with a sparse weight, matmul and addmv, on COO
(coalesced, uncoalesced, empty, hybrid), CSR, CSC, BSR and BSC operands.

Whether torch takes a case is decided by running torch on the case's own
inputs: a refusal becomes an error case, its status from the local table
ERRORS below (torch's BLAS messages that golden/mtgen/sparse.py's table
does not know: inner sizes, "Expected dim 0 size", the MKL and layout
refusals), then sparse.error_class. None of torch's OpInfos for these ops
marks a sparse layout (mm, addmm, addmv, bmm, matmul, nn.functional.linear,
sparse.mm, sparse.sampled_addmm: every supports_sparse* flag is False in
torch 2.15), so the inputs are our own draws.

torch.spmm (op spmm) is torch.mm under the sparse note's name: torch 2.15
gives the same result layout (dense for sparse @ dense and dense @ sparse,
CSR for CSC @ CSC, unlike torch.sparse.mm), the same refusals with the same
messages (BSR: MKL's non-square blocks, BSC: "computation on CPU is not
implemented", integer and half CSR/CSC: "addmm_out_sparse_csr_impl_mkl",
bool COO: "addmm_sparse_dense") and the same dense gradients (grad_sparse);
torch has no OpInfo for it. Its cases are a small copy of mm's (SPMM_SPECS).

Tolerances (`tol`): float results are compared with an absolute bound from
the reduction, derived per case from its own inputs: torch sums K products
(plus the beta and alpha terms) in the dtype in an order of its own (MKL for
the compressed layouts), so each result element is off by at most
(K + 2) * u * B, u the unit roundoff and B the same expression on absolute
values (|beta| |C| + |alpha| |A| @ |B|) in float64. The case's bound is
twice that max (2 (K+2) eps B with eps = 2u; 4 eps B for float16 and
bfloat16, which torch accumulates in float: see `tol`), so a float32 result lies within
half of it (check_headroom) and an ulp bound would refuse an order-only
difference where terms cancel. A dropped stored entry or a transposed
operand changes a result by |a b| ~ 0.1 .. 3, far outside it (K = 6:
2 * 8 * 1.2e-7 * B ~ 1e-5 for float32). Integer results: exact."""
import math

import torch
import torch.nn.functional as F

from .. import opinfo
from ..model import ALL_DTYPES, Case, case_rng, check_ids, py
from ..run import torch_error_text
from ..sparse import classifier

M, K, N = 4, 6, 4  # mat1 [M, K], mat2 [K, N]; even sizes for 2 x 2 blocks
SP_LAYOUTS = ("coo", "csr", "csc", "bsr", "bsc")
# sparse @ sparse pairs with cases of their own (sparse_mm(csc, csc): none,
# torch 2.15 returns an inconsistent CSC, see below)
PAIRS_ELSEWHERE = {("mm", "coo", "coo"), ("mm", "csr", "csr"), ("mm", "csc", "csc"),
                   ("mm", "csr", "csc"), ("mm", "coo", "csr"), ("mm", "bsr", "bsr"),
                   ("sparse_mm", "coo", "coo"), ("sparse_mm", "csr", "csr"),
                   ("sparse_mm", "csc", "csc")}
FLOATS = ("f32", "f64")
OTHERS = ("f16", "bf16", "i64", "i32", "i8", "u8", "bool")

# torch's refusals that sparse.error_class does not place: first match wins
ERRORS = (
    ("SHAPE_MISMATCH", ("shapes cannot be multiplied", "Expected dim 0 size",
                        "Expected dim 1 size", "must match", "size mismatch",
                        "expected self.size(-1) == vec.size(-1)")),
    ("DTYPE_MISMATCH", ("expected scalar type", "not implemented for '",
                        "can't be cast to the desired output type",
                        "Expected self to be a floating-point", "to have the same dtype")),
    ("LAYOUT_MISMATCH", ("computation on CPU is not implemented", "MKL Sparse doesn't support",
                         "expected strided result tensor", "expected either 'mat1'",
                         "must be dense", "expand is unsupported", "zeros_sparse_compressed",
                         "Only batched sparse compressed", "operation not supported for mat",
                         "self.is_sparse()", "Could not run",
                         "Expected result to have sparse csr layout",
                         "to have strided layout")),
)


error_class = classifier(ERRORS)


# ---- inputs ------------------------------------------------------------------

def vals(g, shape, dt):
    """randn for floats; small integers (products stay small) for the rest."""
    if dt.is_floating_point:
        return torch.randn(shape, generator=g, dtype=torch.float32).to(dt)
    if dt == torch.bool:
        return torch.rand(shape, generator=g) < 0.5
    return torch.randint(-4, 5, shape, generator=g).to(dt)


def dense_sparse(g, shape, dt, density=0.45):
    """A dense matrix with about `density` of its entries nonzero."""
    keep = torch.rand(shape, generator=g) < density
    return torch.where(keep, vals(g, shape, dt), torch.zeros((), dtype=dt))


def coo(g, shape, dt, kind="coo"):
    """COO: coalesced, uncoalesced (entries twice, values split, shuffled),
    empty, or hybrid (sparse_dim 1)."""
    if kind == "empty":
        return torch.sparse_coo_tensor(torch.zeros(len(shape), 0, dtype=torch.int64),
                                       torch.zeros(0, dtype=dt), shape)
    d = dense_sparse(g, shape, dt)
    if kind == "hybrid":
        return d.to_sparse(1)
    t = d.to_sparse()
    if kind != "uncoalesced":
        return t
    idx, v = t.indices(), t.values()
    n = idx.shape[1]
    extra = vals(g, (n,), dt)
    idx2 = torch.cat([idx, idx[:, : max(1, n // 2)]], dim=1)
    v2 = torch.cat([v - extra if dt.is_floating_point else v, extra[: max(1, n // 2)]
                    if dt.is_floating_point else v[: max(1, n // 2)]])
    perm = torch.randperm(idx2.shape[1], generator=g)
    return torch.sparse_coo_tensor(idx2[:, perm], v2[perm], shape)


def stored_zero_coo(g, shape, dt):
    """A COO whose row 1 stores an explicit zero: a stored entry all the same."""
    t = dense_sparse(g, shape, dt).to_sparse()
    idx = torch.cat([t.indices(), torch.tensor([[1], [0]])], dim=1)
    v = torch.cat([t.values(), torch.zeros(1, dtype=dt)])
    return torch.sparse_coo_tensor(idx, v, shape).coalesce()


def sparse(layout, g, shape, dt):
    """layout: coo, coo_uncoalesced, coo_empty, coo_hybrid, coo_stored_zero,
    csr, csr_empty, csc, bsr, bsr_nonsquare (1 x 2 blocks), bsc."""
    if layout.startswith("coo"):
        if layout == "coo_stored_zero":
            return stored_zero_coo(g, shape, dt)
        return coo(g, shape, dt, layout[4:] or "coo")
    d = dense_sparse(g, shape, dt) if layout != "csr_empty" else torch.zeros(shape, dtype=dt)
    return {"csr": d.to_sparse_csr, "csr_empty": d.to_sparse_csr, "csc": d.to_sparse_csc,
            "bsr": lambda: d.to_sparse_bsr((2, 2)), "bsr_nonsquare": lambda: d.to_sparse_bsr((1, 2)),
            "bsc": lambda: d.to_sparse_bsc((2, 2))}[layout]()


def batched_csr(g, shape, dt):
    """A batched CSR [b, m, n]: torch needs one nnz per batch, so every batch
    stores the same positions (values differ)."""
    keep = torch.rand(shape[1:], generator=g) < 0.45
    return torch.where(keep, vals(g, shape, dt), torch.zeros((), dtype=dt)).to_sparse_csr()


def tok(layout):
    """The case-id token of a layout: coo, csr, csc, bsr, bsc, dense."""
    return layout.split("_")[0]


# ---- tolerance from the inputs -----------------------------------------------

def absd(t):
    """|t| densified in float64, COO entries summed as absolute values."""
    if not isinstance(t, torch.Tensor):
        return torch.tensor(abs(float(t)), dtype=torch.float64)
    if t.layout == torch.sparse_coo:
        t = torch.sparse_coo_tensor(t._indices(), t._values().abs(), t.shape)
    elif t.layout != torch.strided:
        t = t.to_dense()
    return t.to_dense().to(torch.float64).abs()


def bound(op, ins, kw):
    """The op on absolute values in float64 (dense): B of the module doc."""
    a = [absd(x) for x in ins]
    beta, alpha = abs(kw.get("beta", 1.0)), abs(kw.get("alpha", 1.0))
    if op in ("addmm", "sparse_addmm", "sspaddmm"):
        return beta * a[0] + alpha * (a[1] @ a[2])
    if op == "addmv":
        return beta * a[0] + alpha * (a[1] @ a[2])
    if op == "sparse_sampled_addmm":  # only where the input stores an entry
        pattern = torch.sparse_csr_tensor(ins[0].crow_indices(), ins[0].col_indices(),
                                          torch.ones_like(ins[0].values()),
                                          ins[0].shape).to_dense().to(torch.float64)
        return (beta * a[0] + alpha * (a[1] @ a[2])) * pattern
    if op == "linear":
        r = a[0] @ a[1].T
        return r + a[2] if len(a) > 2 else r
    return a[0] @ a[1]


EPS = {torch.float32: 2.0 ** -23, torch.float64: 2.0 ** -52, torch.float16: 2.0 ** -10,
       torch.bfloat16: 2.0 ** -7}


def tol(op, ins, kw, dt, k):
    if dt not in EPS:
        return "exact"
    b = torch.nan_to_num(bound(op, ins, kw), nan=0.0, posinf=0.0, neginf=0.0)
    m = float(b.max()) if b.numel() else 0.0
    if m == 0.0:
        return "exact"  # nothing is summed: every result is a single rounding of 0
    # float16/bfloat16: torch accumulates in float and rounds the result
    # once (seen: |error| <= 0.65 eps B on every case here), so 4 eps B
    # covers its rounding and ours with room, without the K factor
    x = (4.0 if dt in (torch.float16, torch.bfloat16) else 2.0 * (k + 2)) * EPS[dt] * m
    e = math.floor(math.log10(x))
    return f"abs:{math.ceil(x / 10 ** e * 10) / 10:g}e{e}"


# ---- the ops -------------------------------------------------------------------

def sorted_indices(t):
    """A compressed result with its plain indices sorted within each row
    (column): torch's sparse @ sparse on CSR/CSC goes through MKL, whose
    result leaves them in MKL's order (SPB-2: mm(csr, csr) gave col_indices
    [3, 1, 0 | ...] in row 0), which torch's own invariants
    (sparse_csr_tensor(..., check_invariants=True)) and ours refuse. The
    golden stores the same entries sorted (explicit zeros kept: coalesce
    never drops one)."""
    if t.layout not in (torch.sparse_csr, torch.sparse_csc):
        return t
    c = t.to_sparse_coo()  # flagged coalesced as it is: rebuild it to sort
    conv = torch.sparse_coo_tensor(c._indices(), c._values(), c.shape).coalesce()
    return conv.to_sparse_csr() if t.layout == torch.sparse_csr else conv.to_sparse_csc()


RUN = {
    "mm": lambda ins, kw: [sorted_indices(torch.mm(*ins))],
    "sparse_mm": lambda ins, kw: [sorted_indices(torch.sparse.mm(*ins))],
    "spmm": lambda ins, kw: [sorted_indices(torch.spmm(*ins))],
    "addmm": lambda ins, kw: [torch.addmm(*ins, **kw)],
    "sparse_addmm": lambda ins, kw: [torch.sparse.addmm(*ins, **kw)],
    "smm": lambda ins, kw: [torch.smm(*ins)],
    "sspaddmm": lambda ins, kw: [torch.sspaddmm(*ins, **kw)],
    "hspmm": lambda ins, kw: [torch.hspmm(*ins)],
    "bmm": lambda ins, kw: [torch.bmm(*ins)],
    "linear": lambda ins, kw: [F.linear(*ins)],
    "matmul": lambda ins, kw: [sorted_indices(torch.matmul(*ins))],
    "addmv": lambda ins, kw: [torch.addmv(*ins, **kw)],
    "sparse_sampled_addmm": lambda ins, kw: [torch.sparse.sampled_addmm(*ins, **kw)],
}
CALL = {"mm": "torch.mm", "sparse_mm": "torch.sparse.mm", "spmm": "torch.spmm",
        "addmm": "torch.addmm", "sparse_addmm": "torch.sparse.addmm", "smm": "torch.smm",
        "sspaddmm": "torch.sspaddmm",
        "hspmm": "torch.hspmm", "bmm": "torch.bmm", "linear": "torch.nn.functional.linear",
        "matmul": "torch.matmul", "addmv": "torch.addmv",
        "sparse_sampled_addmm": "torch.sparse.sampled_addmm"}
RULES = {
    "mm": ("SPB-2",), "sparse_mm": ("SPB-2",), "spmm": ("SPB-2",), "matmul": ("SPB-2", "SPB-5"),
    "addmm": ("SPB-3",), "sparse_addmm": ("SPB-3",), "addmv": ("SPB-3",),
    "smm": ("SPB-4",), "sspaddmm": ("SPB-3", "SPB-4"), "hspmm": ("SPB-4",),
    "bmm": ("SPB-5",), "linear": ("SPB-5",), "sparse_sampled_addmm": ("SPB-7",),
}
ARGS = {"mm": "mat1, mat2", "sparse_mm": "mat1, mat2", "spmm": "mat1, mat2",
        "addmm": "input, mat1, mat2", "sparse_addmm": "input, mat1, mat2", "smm": "mat1, mat2",
        "sspaddmm": "input, mat1, mat2", "hspmm": "mat1, mat2", "bmm": "mat1, mat2",
        "linear": "input, weight", "matmul": "mat1, mat2", "addmv": "input, mat, vec",
        "sparse_sampled_addmm": "input, mat1, mat2"}


def make_case(op, layouts, short, variant, build, kw=None, k=K, extra_rules=(), source=None):
    """One case; torch decides ok or error (its class from ERRORS)."""
    dt = ALL_DTYPES[short]
    kw = dict(kw or {})
    cid = f"{op}.{layouts}.{short}.{variant}"
    b = (lambda g: build(g, dt))
    try:
        ins = b(case_rng(cid))
    except Exception:  # noqa: BLE001 - never under the generator's torch: an older
        # torch (golden/variants.py) that cannot build the inputs runs the case
        # itself and records it as unavailable
        return Case(id=cid, op=op, rules=RULES[op], tolerance="exact", build=b, run=RUN[op],
                    torch_call=CALL[op], kwargs=kw, poison=False, source=source)
    args = ARGS[op] + (", bias" if op == "linear" and len(ins) > 2 else "") + \
        (", mat3" if op == "mm" and len(ins) > 2 else "")
    kws = "".join(f", {n}={py(v)}" for n, v in kw.items())
    # SPB-6: an uncoalesced operand's duplicates are summed
    extra_rules = tuple(extra_rules) + (("SPB-6",) if "uncoalesced" in variant else ())
    err, t, rules = None, "exact", RULES[op] + extra_rules
    call = f"{CALL[op]}({args}{kws})"
    if op in ("mm", "sparse_mm", "spmm", "matmul") and all(
            isinstance(x, torch.Tensor) and x.layout in (torch.sparse_csr, torch.sparse_csc)
            for x in ins):
        call += "  # indices sorted per row (column): see sorted_indices"
    try:
        RUN[op]([x.clone() for x in ins], kw)
        t = tol(op, ins, kw, dt, k)
    except Exception as e:  # noqa: BLE001 - torch's refusal is data
        err = error_class(e)
        rules = ("SPB-1",)
        t = "exact"
        msg = torch_error_text(e)
    return Case(id=cid, op=op, rules=rules, tolerance=t, build=b, run=RUN[op],
                torch_call=call, kwargs=kw, error_class=err,
                error_match=msg[:60] if err else None, poison=False, source=source)


# builders: (g, dt) -> inputs

def s_d(sl, k=K, n=N):
    return lambda g, dt: [sparse(sl, g, (M, k), dt), vals(g, (k, n), dt)]


def d_s(sl):
    return lambda g, dt: [vals(g, (3, M), dt), sparse(sl, g, (M, K), dt)]


def s_s(la, lb, k2=K):
    return lambda g, dt: [sparse(la, g, (M, K), dt), sparse(lb, g, (k2, N), dt)]


def c_s_d(sl, cshape=(M, N), poison=None, nan_b=False):
    def build(g, dt):
        c = vals(g, cshape, dt)
        if poison is not None:
            c.view(-1)[0], c.view(-1)[-1] = poison, -poison
        a, b = sparse(sl, g, (M, K), dt), vals(g, (K, N), dt)
        if nan_b:  # NaN in a row of mat2 that a stored entry of mat1 meets
            col = int(a.to_dense().ne(0).any(0).nonzero()[0])
            b[col, 0] = float("nan")
        return [c, a, b]
    return build


def c_d_s(sl, poison=None):
    """[input, dense mat1, sparse mat2] of addmm (dense @ sparse)."""
    def build(g, dt):
        c = vals(g, (M, N), dt)
        if poison is not None:
            c.view(-1)[0], c.view(-1)[-1] = poison, -poison
        return [c, vals(g, (M, K), dt), sparse(sl, g, (K, N), dt)]
    return build


def csp_s_d(cl, al, cshape=(M, N), poison=None):
    def build(g, dt):
        c = sparse(cl, g, cshape, dt)
        if poison is not None:
            c = torch.sparse_coo_tensor(c._indices(), c._values().clone(), c.shape)
            c._values()[0] = poison
        return [c, sparse(al, g, (M, K), dt), vals(g, (K, N), dt)]
    return build


def b3(sl="coo", nb=2, kb=K, db=2):
    def build(g, dt):
        if sl == "coo_empty":
            a = coo(g, (nb, M, K), dt, "empty")
        elif sl == "coo_uncoalesced":
            a = coo(g, (nb, M, K), dt, "uncoalesced")
        else:
            a = dense_sparse(g, (nb, M, K), dt).to_sparse()
        return [a, vals(g, (db, kb, N), dt)]
    return build


def lin(sl, xshape=(5, K), bias=False):
    def build(g, dt):
        ins = [vals(g, xshape, dt), sparse(sl, g, (M, K), dt)]
        return ins + ([vals(g, (M,), dt)] if bias else [])
    return build


def mv_(sl, vk=K, cshape=(M,), poison=None):
    def build(g, dt):
        c = vals(g, cshape, dt)
        if poison is not None:
            c[0] = poison
        return [c, sparse(sl, g, (M, K), dt), vals(g, (vk,), dt)]
    return build


def sampled(cl="csr", batch=(), k=K, poison=None, m1_layout="dense"):
    """[input, mat1, mat2] of sampled_addmm: input [*batch, M, N] in layout cl
    (csr, csr_empty, csr_stored_zero, csr_one_entry, coo, csc, dense)."""
    def build(g, dt):
        if batch:
            c = batched_csr(g, (*batch, M, N), dt)
        elif cl == "csr_stored_zero":
            c = torch.sparse_csr_tensor(torch.tensor([0, 1, 1, 2, 2]), torch.tensor([2, 0]),
                                        torch.tensor([0.0, 1.5], dtype=dt), (M, N))
        elif cl == "csr_one_entry":  # one stored entry, (1, 2)
            c = torch.sparse_csr_tensor(torch.tensor([0, 0, 1, 1, 1]), torch.tensor([2]),
                                        vals(g, (1,), dt), (M, N))
        elif cl == "dense":
            c = dense_sparse(g, (M, N), dt)
        else:
            c = sparse(cl, g, (M, N), dt)
        if poison is not None:
            c = c.clone()
            c.values()[0] = poison
        m1 = vals(g, (*batch, M, k), dt)
        if m1_layout == "csr":
            m1 = m1.to_sparse_csr()
        return [c, m1, vals(g, (*batch, K, N), dt)]
    return build


NAN, INF = float("nan"), float("inf")
BA = {"beta": 0.5, "alpha": 2.0}

# (op, layouts token, variant, builder, kwargs): run for float32 and float64
SPECS = [
    # mm: sparse @ dense -> dense
    *[("mm", f"{tok(sl)}_dense", v, s_d(sl), None) for sl, v in (
        ("coo", "coalesced"), ("coo_uncoalesced", "uncoalesced"), ("coo_empty", "empty"),
        ("coo_stored_zero", "stored_zero"), ("csr", "basic"), ("csr_empty", "empty"),
        ("csc", "basic"), ("bsr", "blocks_2x2"), ("bsr_nonsquare", "blocks_1x2"),
        ("bsc", "blocks_2x2"), ("coo_hybrid", "hybrid"))],
    ("mm", "csr_dense", "hybrid", lambda g, dt: [
        dense_sparse(g, (M, K, 2), dt).to_sparse_csr(dense_dim=1), vals(g, (K, N), dt)], None),
    # 0-size dims
    *[("mm", f"{tok(sl)}_dense", f"zero_{n}", (lambda g, dt, sl=sl, a=a, b=b: [
        sparse(sl, g, a, dt), vals(g, b, dt)]), None) for sl in ("coo", "csr")
      for n, a, b in (("rows", (0, K), (K, N)), ("inner", (M, 0), (0, N)),
                      ("cols", (M, K), (K, 0)))],
    *[(op, "coo_dense", "zero_cols", s_d("coo", n=0), None) for op in ("smm", "hspmm")],
    ("mm", "coo_dense", "inner_mismatch", lambda g, dt: [sparse("coo", g, (M, K), dt),
                                                         vals(g, (K + 1, N), dt)], None),
    # dense @ sparse -> dense
    *[("mm", f"dense_{tok(sl)}", v, d_s(sl), None) for sl, v in (
        ("coo", "coalesced"), ("coo_uncoalesced", "uncoalesced"), ("csr", "basic"),
        ("csc", "basic"), ("bsc", "blocks_2x2"), ("bsr", "blocks_2x2"))],
    # sparse @ sparse -> sparse (structural product)
    *[("mm", f"{tok(a)}_{tok(b)}", v, s_s(a, b), None) for a, b, v in (
        ("coo", "coo", "coalesced"), ("coo_uncoalesced", "coo", "uncoalesced"),
        # mat2's duplicates too (SpGEMM gathers B's: the sweep's
        # sparse_blas_math.h:161, which kept only the first of each)
        ("coo", "coo_uncoalesced", "uncoalesced_mat2"),
        ("coo_empty", "coo", "empty"), ("csr", "csr", "basic"), ("csc", "csc", "basic"),
        ("csr", "csc", "mixed"), ("coo", "csr", "mixed"), ("bsr", "bsr", "blocks_2x2"))],
    ("mm", "coo_coo", "inner_mismatch", s_s("coo", "coo", k2=K + 1), None),
    ("mm", "csr_dense", "inner_mismatch", lambda g, dt: [sparse("csr", g, (M, K), dt),
                                                         vals(g, (K + 1, N), dt)], None),
    # torch.sparse.mm
    *[("sparse_mm", l, v, bld, None) for l, v, bld in (
        ("coo_dense", "coalesced", s_d("coo")), ("coo_dense", "uncoalesced", s_d("coo_uncoalesced")),
        ("csr_dense", "basic", s_d("csr")), ("coo_coo", "coalesced", s_s("coo", "coo")),
        ("csr_csr", "basic", s_s("csr", "csr")))],
    # every other pair of sparse layouts through mm and torch.sparse.mm:
    # torch's result or refusal. torch.sparse.mm takes its zero accumulator
    # in mat2's layout, so CSC @ CSR is CSR and CSR @ CSC is refused, where
    # torch.mm gives CSR for both (tests/sweep: a mutant that kept CSC for
    # CSC @ anything survived, and the reference computed CSR @ CSC)
    *[(op, f"{a}_{b}", "layout_pair", s_s(a, b), None)
      for op in ("mm", "sparse_mm") for a in SP_LAYOUTS for b in SP_LAYOUTS
      if (op, a, b) not in PAIRS_ELSEWHERE],
    # no sparse_mm(csc, csc): torch 2.15 returns an inconsistent CSC (ccol_indices
    # [0, 3, 7, 10, 14] with nnz = 0 and empty row_indices; to_dense() is all
    # zeros), which no golden can hold (SPB-2)
    # addmm: beta * input + alpha * (sparse @ dense)
    *[("addmm", f"dense_{tok(sl)}_dense", v, c_s_d(sl), kw) for sl, v, kw in (
        ("coo", "default", None), ("coo", "beta_alpha", BA),
        ("coo_uncoalesced", "uncoalesced_beta_alpha", BA), ("coo_empty", "empty_beta_alpha", BA),
        ("csr", "default", None), ("csr", "beta_alpha", BA), ("csc", "beta_alpha", BA),
        ("bsr", "beta_alpha", BA), ("bsc", "beta_alpha", BA))],
    *[("addmm", f"dense_{tok(sl)}_dense", "beta0_nan_inf", c_s_d(sl, poison=NAN), {"beta": 0.0})
      for sl in ("coo", "csr")],
    *[("addmm", f"dense_{tok(sl)}_dense", "beta0_inf", c_s_d(sl, poison=INF), {"beta": 0.0})
      for sl in ("coo", "csr")],
    *[("addmm", f"dense_{tok(sl)}_dense", "alpha0_nan", c_s_d(sl, nan_b=True), {"alpha": 0.0})
      for sl in ("coo", "csr")],
    *[("addmm", f"dense_{tok(sl)}_dense", f"broadcast_{n}", c_s_d(sl, cshape=s), BA)
      for sl in ("coo", "csr") for n, s in (("row", (N,)), ("column", (M, 1)), ("scalar", ()),
                                            ("row2d", (1, N)), ("one", (1,)))],
    # dense @ sparse
    *[("addmm", f"dense_dense_{tok(sl)}", v, c_d_s(sl), kw) for sl, v, kw in (
        ("csr", "beta_alpha", BA), ("csc", "beta_alpha", BA), ("bsc", "beta_alpha", BA),
        ("bsr", "beta_alpha", BA), ("coo", "beta_alpha", BA))],
    ("addmm", "dense_dense_csr", "beta0_nan_inf", c_d_s("csr", poison=NAN), {"beta": 0.0}),
    ("addmm", "dense_coo_dense", "input_mismatch", c_s_d("coo", cshape=(M, N + 1)), None),
    # one input too many: torch's argument parser refuses it (TypeError)
    ("mm", "coo_dense", "three_inputs", lambda g, dt: [
        sparse("coo", g, (M, K), dt), vals(g, (K, N), dt), vals(g, (K, N), dt)], None),
    ("addmm", "coo_coo_dense", "sparse_input", csp_s_d("coo", "coo"), None),
    ("addmm", "csr_csr_dense", "sparse_input", lambda g, dt: [
        sparse("csr", g, (M, N), dt), sparse("csr", g, (M, K), dt), vals(g, (K, N), dt)], None),
    # torch.sparse.addmm
    *[("sparse_addmm", f"dense_{tok(sl)}_dense", v, c_s_d(sl), kw) for sl, v, kw in (
        ("coo", "beta_alpha", BA), ("coo_uncoalesced", "uncoalesced", None),
        ("csr", "beta_alpha", BA))],
    # smm: sparse @ dense -> COO of every column of the rows that store
    *[("smm", f"{tok(sl)}_dense", v, s_d(sl), None) for sl, v in (
        ("coo", "coalesced"), ("coo_uncoalesced", "uncoalesced"), ("coo_empty", "empty"),
        ("coo_stored_zero", "stored_zero"), ("coo_hybrid", "hybrid"), ("csr", "basic"))],
    ("smm", "coo_dense", "inner_mismatch", lambda g, dt: [sparse("coo", g, (M, K), dt),
                                                          vals(g, (K - 1, N), dt)], None),
    # sspaddmm: beta * sparse input + alpha * smm
    *[("sspaddmm", f"{tok(cl)}_{tok(al)}_dense", v, csp_s_d(cl, al), kw) for cl, al, v, kw in (
        ("coo", "coo", "default", None), ("coo", "coo", "beta_alpha", BA),
        ("coo_uncoalesced", "coo_uncoalesced", "uncoalesced_beta_alpha", BA),
        ("coo_empty", "coo_empty", "empty", None), ("coo", "coo_stored_zero", "stored_zero", None),
        ("coo", "csr", "csr_mat1", None))],
    *[("sspaddmm", "coo_coo_dense", f"beta0_{n}", csp_s_d("coo", "coo", poison=p), {"beta": 0.0})
      for n, p in (("nan", NAN), ("inf", INF))],
    ("sspaddmm", "dense_coo_dense", "dense_input", c_s_d("coo"), None),
    ("sspaddmm", "coo_coo_dense", "input_mismatch", csp_s_d("coo", "coo", cshape=(M, N + 1)), None),
    # hspmm: sparse @ dense -> hybrid COO over the rows that store
    *[("hspmm", f"{tok(sl)}_dense", v, s_d(sl), None) for sl, v in (
        ("coo", "coalesced"), ("coo_uncoalesced", "uncoalesced"), ("coo_empty", "empty"),
        ("coo_stored_zero", "stored_zero"), ("csr", "basic"))],
    ("hspmm", "coo_dense", "inner_mismatch", lambda g, dt: [sparse("coo", g, (M, K), dt),
                                                            vals(g, (K - 1, N), dt)], None),
    # bmm: batched COO @ batched dense
    ("bmm", "coo_dense", "coalesced", b3(), None),
    ("bmm", "coo_dense", "uncoalesced", b3("coo_uncoalesced"), None),
    ("bmm", "coo_dense", "empty", b3("coo_empty"), None),
    ("bmm", "coo_dense", "inner_mismatch", b3(kb=K + 1), None),
    ("bmm", "coo_dense", "batch_mismatch", b3(db=3), None),
    ("bmm", "coo_coo", "sparse_mat2", lambda g, dt: [dense_sparse(g, (2, M, K), dt).to_sparse(),
                                                     dense_sparse(g, (2, K, N), dt).to_sparse()],
     None),
    ("bmm", "coo_dense", "matrices", s_d("coo"), None),
    # linear: input @ weight.T (+ bias)
    *[("linear", f"dense_{tok(sl)}", v, lin(sl, **o), None) for sl, v, o in (
        ("coo", "basic", {}), ("coo_uncoalesced", "uncoalesced", {}), ("coo_empty", "empty", {}),
        ("coo", "vector_input", {"xshape": (K,)}), ("coo", "batched_input", {"xshape": (2, 3, K)}),
        ("coo", "bias", {"bias": True}), ("csr", "basic", {}), ("csr", "bias", {"bias": True}),
        ("csr", "batched_input", {"xshape": (2, 3, K)}), ("csc", "basic", {}),
        ("bsr", "blocks_2x2", {}), ("bsc", "blocks_2x2", {}),
        ("coo", "inner_mismatch", {"xshape": (5, K - 1)}))],
    # matmul
    ("matmul", "coo_dense", "coalesced", s_d("coo"), None),
    ("matmul", "coo_dense", "vector", lambda g, dt: [sparse("coo", g, (M, K), dt),
                                                     vals(g, (K,), dt)], None),
    ("matmul", "coo_dense", "uncoalesced_vector",
     lambda g, dt: [sparse("coo_uncoalesced", g, (M, K), dt), vals(g, (K,), dt)], None),
    ("matmul", "csr_dense", "basic", s_d("csr"), None),
    ("matmul", "csr_dense", "vector", lambda g, dt: [sparse("csr", g, (M, K), dt),
                                                     vals(g, (K,), dt)], None),
    ("matmul", "dense_coo", "coalesced", d_s("coo"), None),
    ("matmul", "coo_coo", "coalesced", s_s("coo", "coo"), None),
    ("matmul", "coo_dense", "batched_mat2", lambda g, dt: [sparse("coo", g, (M, K), dt),
                                                           vals(g, (2, K, N), dt)], None),
    ("matmul", "coo_dense", "vector_mismatch", lambda g, dt: [sparse("coo", g, (M, K), dt),
                                                              vals(g, (K + 1,), dt)], None),
    # addmv: beta * vector + alpha * (sparse @ vector)
    *[("addmv", f"dense_{tok(sl)}_dense", v, mv_(sl), kw) for sl, v, kw in (
        ("csr", "default", None), ("csr", "beta_alpha", BA), ("csc", "beta_alpha", BA),
        ("bsr", "beta_alpha", BA), ("bsc", "beta_alpha", BA), ("coo", "beta_alpha", BA),
        ("csr_empty", "empty", BA))],
    ("addmv", "dense_csr_dense", "beta0_nan", mv_("csr", poison=NAN), {"beta": 0.0}),
    ("addmv", "dense_csr_dense", "broadcast_scalar", mv_("csr", cshape=(1,)), BA),
    ("addmv", "dense_csr_dense", "vector_mismatch", mv_("csr", vk=K + 1), None),
    # the input vector one longer than the result, or 2-D: torch's size
    # mismatch and "vector + matrix @ vector expected" (tests/sweep: a check
    # whose && became || survived every other case)
    ("addmv", "dense_csr_dense", "input_mismatch", mv_("csr", cshape=(M + 1,)), None),
    ("addmv", "dense_csr_dense", "input_2d", mv_("csr", cshape=(M, 1)), None),
    # batched CSR: torch's products refuse it (sampled_addmm below takes it)
    ("mm", "csr_dense", "batched", lambda g, dt: [batched_csr(g, (2, M, K), dt),
                                                  vals(g, (K, N), dt)], None),
    ("bmm", "csr_dense", "batched", lambda g, dt: [batched_csr(g, (2, M, K), dt),
                                                   vals(g, (2, K, N), dt)], None),
    ("matmul", "csr_dense", "batched", lambda g, dt: [batched_csr(g, (2, M, K), dt),
                                                      vals(g, (2, K, N), dt)], None),
    # torch.sparse.sampled_addmm: the CSR input's pattern
    *[("sparse_sampled_addmm", f"{tok(cl)}_dense_dense", v, sampled(cl, **o), kw)
      for cl, v, o, kw in (
          ("csr", "default", {}, None), ("csr", "beta_alpha", {}, BA),
          ("csr_empty", "empty", {}, BA), ("csr_stored_zero", "stored_zero", {}, None),
          # one stored entry: a product of one output row, the m = 1 SpGEMM of the
          # CUDA backend's cuSPARSE form (its row offsets are m + 1 = 2 entries); placed
          # here, grad_sparse's evenly spaced picks of sampled_addmm stay the same
          ("csr_one_entry", "one_entry", {}, BA),
          ("csr", "batched", {"batch": (2,)}, BA),
          ("csr", "beta0_nan", {"poison": NAN}, {"beta": 0.0}),
          ("coo", "coo_input", {}, None), ("csc", "csc_input", {}, None),
          ("dense", "dense_input", {}, None), ("csr", "inner_mismatch", {"k": K + 1}, None))],
    ("sparse_sampled_addmm", "csr_csr_dense", "sparse_mat1", sampled(m1_layout="csr"), None),
]

# torch.spmm: mm's path under the note's name; float32 and float64 (SPB-2)
SPMM_SPECS = [
    *[("spmm", f"{tok(sl)}_dense", v, s_d(sl), None) for sl, v in (
        ("coo", "coalesced"), ("coo_uncoalesced", "uncoalesced"), ("coo_empty", "empty"),
        ("csr", "basic"), ("csc", "basic"), ("bsr", "blocks_2x2"), ("bsc", "blocks_2x2"))],
    *[("spmm", f"dense_{tok(sl)}", v, d_s(sl), None) for sl, v in (
        ("coo", "coalesced"), ("csr", "basic"))],
    *[("spmm", f"{tok(a)}_{tok(b)}", v, s_s(a, b), None) for a, b, v in (
        ("coo", "coo", "coalesced"), ("csc", "csc", "basic"))],
    ("spmm", "coo_dense", "inner_mismatch", lambda g, dt: [sparse("coo", g, (M, K), dt),
                                                           vals(g, (K + 1, N), dt)], None),
]
SPECS += SPMM_SPECS

# dtype coverage beyond float32/float64: the basic case of each op
OTHER_SPECS = [
    ("mm", "coo_dense", "basic", s_d("coo"), None),
    ("mm", "csr_dense", "basic", s_d("csr"), None),
    ("mm", "coo_coo", "basic", s_s("coo", "coo"), None),
    ("addmm", "dense_coo_dense", "basic", c_s_d("coo"), None),
    ("addmm", "dense_csr_dense", "basic", c_s_d("csr"), None),
    ("smm", "coo_dense", "basic", s_d("coo"), None),
    ("sspaddmm", "coo_coo_dense", "basic", csp_s_d("coo", "coo"), None),
    ("hspmm", "coo_dense", "basic", s_d("coo"), None),
    ("bmm", "coo_dense", "basic", b3(), None),
    ("linear", "dense_coo", "basic", lin("coo"), None),
    ("matmul", "coo_dense", "vector", lambda g, dt: [sparse("coo", g, (M, K), dt),
                                                     vals(g, (K,), dt)], None),
    ("addmv", "dense_csr_dense", "basic", mv_("csr"), None),
    ("sparse_mm", "coo_dense", "basic", s_d("coo"), None),
    ("spmm", "coo_dense", "basic", s_d("coo"), None),
    ("spmm", "csr_dense", "basic", s_d("csr"), None),
    ("sparse_addmm", "dense_coo_dense", "basic", c_s_d("coo"), None),
    ("sparse_sampled_addmm", "csr_dense_dense", "basic", sampled(), None),
]


def dtype_mismatch():
    """float32 sparse with a float64 dense operand: torch refuses."""
    def mk(op, layouts, build):
        return make_case(op, layouts, "f32", "dtype_mismatch", build)
    return [
        mk("mm", "coo_dense", lambda g, dt: [sparse("coo", g, (M, K), dt),
                                             vals(g, (K, N), torch.float64)]),
        mk("mm", "csr_dense", lambda g, dt: [sparse("csr", g, (M, K), dt),
                                             vals(g, (K, N), torch.float64)]),
        mk("spmm", "coo_dense", lambda g, dt: [sparse("coo", g, (M, K), dt),
                                               vals(g, (K, N), torch.float64)]),
        mk("addmm", "dense_coo_dense", lambda g, dt: [vals(g, (M, N), torch.float64),
                                                      sparse("coo", g, (M, K), dt),
                                                      vals(g, (K, N), dt)]),
        mk("sparse_sampled_addmm", "csr_dense_dense",
           lambda g, dt: [sparse("csr", g, (M, N), dt), vals(g, (M, K), torch.float64),
                          vals(g, (K, N), torch.float64)]),
    ]


def error_order():
    """torch.sparse.mm(CSR, CSC) where a second error meets its refusal
    (SPB-1): torch checks the dims, then the inner sizes, then refuses the
    layouts (its zero accumulator in mat2's layout meets addmm's layout
    check) and never reaches the dtypes, which torch.mm of the same pair
    refuses for every dtype but float32/float64. Appended last: the
    gradient picks leave the variants out (grad_sparse LATER_VARIANTS)."""
    def pair(shape_b, dt_b=None, batch=()):
        # batched: every entry stored (torch wants the same nnz in each batch)
        fill = vals if batch else dense_sparse

        def build(g, dt):
            a = fill(g, (*batch, M, K), dt).to_sparse_csr()
            return [a, fill(g, (*batch, *shape_b), dt_b or dt).to_sparse_csc()]
        return build
    return [
        *[make_case("sparse_mm", "csr_csc", short, "error_order", pair((K, N)))
          for short in OTHERS],
        make_case("sparse_mm", "csr_csc", "f32", "error_order_dtypes", pair((K, N), torch.float64)),
        make_case("sparse_mm", "csr_csc", "f32", "error_order_inner_dtypes",
                  pair((K + 1, N), torch.float64)),
        make_case("sparse_mm", "csr_csc", "f32", "error_order_batched", pair((K, N), batch=(2,))),
    ]


def opinfo_cases():
    """torch's own sample inputs where its OpInfo yields sparse ones although
    no supports_sparse* flag is set: sparse.sampled_addmm's samples are CSR
    inputs (0-size dims among them), sparse.mm.reduce's a CSR @ dense with a
    reduction; its reduce='sum' samples are torch.sparse.mm's product
    (the other reductions are not in ops.def)."""
    out = []
    for short in FLOATS:
        dt = ALL_DTYPES[short]
        for src, smp in opinfo.samples("sparse.sampled_addmm", dt, max_numel=200):
            ins = [smp.input, *smp.args]
            out.append(make_case("sparse_sampled_addmm", "csr_dense_dense", short,
                                 f"opinfo_{src.split(':')[-1]}",
                                 lambda g, dt, ins=ins: [x.clone() for x in ins],
                                 dict(smp.kwargs), k=ins[1].shape[-1], source=src))
        for src, smp in opinfo.samples("sparse.mm.reduce", dt, max_numel=200):
            if smp.args[1] != "sum" or smp.kwargs:
                continue
            ins = [smp.input, smp.args[0]]
            out.append(make_case("sparse_mm", "csr_dense", short, f"opinfo_{src.split(':')[-1]}",
                                 lambda g, dt, ins=ins: [x.clone() for x in ins],
                                 k=ins[0].shape[-1], source=src))
    return out


def cases():
    out = opinfo_cases()
    for op, layouts, variant, build, kw in SPECS:
        for short in FLOATS:
            out.append(make_case(op, layouts, short, variant, build, kw))
    for op, layouts, variant, build, kw in OTHER_SPECS:
        for short in OTHERS:
            out.append(make_case(op, layouts, short, variant, build, kw))
    out += dtype_mismatch()
    out += error_order()
    return check_ids(out)

"""Plain (not masked) sparse tensors through structure ops (SPS-*): clone,
copy_, t, transpose, unsqueeze, reshape, cat on COO (coalesced,
uncoalesced, hybrid, empty) and on the compressed layouts (CSR, CSC, BSR,
BSC, batched CSR).

Also the shared table of plain sparse inputs (LAYOUTS) that reduce_sparse
and sparse_misc draw from, and `matrix`, which turns an op row into cases:
every layout variant in float32 and float64, a few other dtypes on COO and
CSR, torch deciding ok or refusal on the case's own inputs (mtgen/sparse.py
`outcome`); a refusal is kept in float32 only unless the dtype changes it
(refusals are checked before any element is read), which keeps the files
small."""

import torch

from .. import sparse
from ..model import ALL_DTYPES, Case

# torch's plain-sparse refusals that mtgen/sparse.py's table (DESIGN.md's)
# would call INVALID_ARGUMENT but are a layout or a shape refusal by that
# table's own words; checked before sparse.error_class (first match wins)
LOCAL_CLASSES = (
    ("DTYPE_MISMATCH", ("input dtype should be either floating point",)),
    ("INDEX_OUT_OF_RANGE", ("out of range. Expecting 0 <= dim",)),
    ("SHAPE_MISMATCH", ("All tensors must have the same shape",
                        "must have the same sparse_dim and dense_dim")),
    ("LAYOUT_MISMATCH", ("between dense and sparse Tensors is not implemented",
                         "expected sparse compressed tensor layout",
                         "expected sparse coordinate tensor layout",
                         "Concatenating sparse tensors, but a dense tensor",
                         "in-place transposition is not supported",
                         "copy of sparse compressed tensors having different layouts",
                         "Currently the only compressed sparse format supported",
                         "resize_reduction: support for output with",
                         "Only batched sparse compressed (non-block) tensors")),
)


error_class = sparse.classifier(LOCAL_CLASSES)


def outcome(case_id, build, run, kwargs=None):
    """sparse.outcome with LOCAL_CLASSES first."""
    return sparse.outcome(case_id, build, run, kwargs, classify=error_class)


# (4, 6): 2x3 blocks divide it, and t() is visible in the shape
SHAPE = (4, 6)
IDX = ((0, 0, 1, 2, 3, 3), (0, 4, 2, 5, 1, 3))
# stored twice, out of order: (0, 4) twice, (3, 1) last
UNC_IDX = ((2, 0, 3, 0, 1, 3), (5, 4, 3, 4, 2, 1))


def _vals(g, n, dt, zero_at=1):
    v = sparse.values(g, n, dt)
    if n > zero_at and dt != torch.bool:
        v[zero_at] = 0  # an explicit stored zero: kept or dropped is data (SPS-1)
    return v


def _coo(idx, shape, sd_vals=None, zero_at=1):
    def build(g, dt):
        i = torch.tensor(idx, dtype=torch.int64).reshape(len(shape) if sd_vals is None else 1, -1)
        n = i.shape[1]
        v = _vals(g, n, dt, zero_at) if sd_vals is None else \
            sparse.values(g, n * sd_vals, dt).reshape(n, -1)
        return torch.sparse_coo_tensor(i, v, shape)
    return build


def coo_coalesced(g, dt):
    return _coo(IDX, SHAPE)(g, dt).coalesce()


def coo_uncoalesced(g, dt):
    """the stored zero at (3, 3), not on the duplicate (0, 4)"""
    return _coo(UNC_IDX, SHAPE, zero_at=2)(g, dt)


def coo_hybrid(g, dt):
    """sparse_dim 1, dense_dim 1: rows 0, 2, 3 of 6 values each."""
    return _coo(((0, 2, 3),), SHAPE, sd_vals=SHAPE[1])(g, dt).coalesce()


def coo_3d(g, dt):
    i = ((0, 0, 1, 1, 1), (0, 3, 1, 2, 3), (1, 0, 2, 2, 0))
    return _coo(i, (2, 4, 3))(g, dt).coalesce()


def coo_empty(g, dt):
    return torch.sparse_coo_tensor(torch.zeros((2, 0), dtype=torch.int64),
                                   torch.zeros(0, dtype=dt), SHAPE)


def coo_empty_1d(g, dt):
    """shape (0,): nothing to store at all."""
    return torch.sparse_coo_tensor(torch.zeros((1, 0), dtype=torch.int64),
                                   torch.zeros(0, dtype=dt), (0,))


def coo_zero_size(g, dt):
    """a 0-size dim: shape (0, 6)."""
    return torch.sparse_coo_tensor(torch.zeros((2, 0), dtype=torch.int64),
                                   torch.zeros(0, dtype=dt), (0, SHAPE[1]))


def _dense(g, dt):
    return coo_coalesced(g, dt).to_dense()


def csr(g, dt):
    return coo_coalesced(g, dt).to_sparse_csr()


def csc(g, dt):
    return coo_coalesced(g, dt).to_sparse_csc()


def _blocked(g, dt):
    """two of the four 2x3 blocks stored, one with an explicit zero."""
    d = torch.zeros(SHAPE, dtype=dt)
    v = sparse.values(g, 12, dt).reshape(2, 2, 3)
    d[0:2, 3:6] = v[0]
    d[2:4, 0:3] = v[1]
    if dt != torch.bool:
        d[0, 4] = 0
    return d


def bsr(g, dt):
    d = _blocked(g, dt)
    return torch.sparse_bsr_tensor(*_bsr_parts(d))


def _bsr_parts(d):
    crow = torch.tensor([0, 1, 2])
    col = torch.tensor([1, 0])
    vals = torch.stack([d[0:2, 3:6], d[2:4, 0:3]])
    return crow, col, vals, SHAPE


def bsc(g, dt):
    d = _blocked(g, dt)
    ccol = torch.tensor([0, 1, 2])
    row = torch.tensor([1, 0])
    vals = torch.stack([d[2:4, 0:3], d[0:2, 3:6]])
    return torch.sparse_bsc_tensor(ccol, row, vals, SHAPE)


def csr_batched(g, dt):
    """(2, 4, 6): three entries in each batch."""
    crow = torch.tensor([[0, 1, 1, 2, 3], [0, 0, 2, 3, 3]])
    col = torch.tensor([[4, 0, 5], [1, 3, 2]])
    return torch.sparse_csr_tensor(crow, col, sparse.values(g, 6, dt).reshape(2, 3), (2, 4, 6))


def csr_empty(g, dt):
    return torch.sparse_csr_tensor(torch.zeros(SHAPE[0] + 1, dtype=torch.int64),
                                   torch.zeros(0, dtype=torch.int64), torch.zeros(0, dtype=dt),
                                   SHAPE)


# (layout token, variant, build(g, dt)); the first of each token gets the extra dtypes
LAYOUTS = (
    ("coo", "coalesced", coo_coalesced),
    ("coo", "uncoalesced", coo_uncoalesced),
    ("coo", "hybrid", coo_hybrid),
    ("coo", "3d", coo_3d),
    ("coo", "nnz0", coo_empty),
    ("coo", "empty_1d", coo_empty_1d),
    ("coo", "zero_size", coo_zero_size),
    ("csr", "basic", csr),
    ("csr", "nnz0", csr_empty),
    ("csr", "batched", csr_batched),
    ("csc", "basic", csc),
    ("bsr", "blocks_2x3", bsr),
    ("bsc", "blocks_2x3", bsc),
)
# the layouts of an op's further argument rows (its first row has them all)
ROW_LAYOUTS = (("coo", "coalesced"), ("coo", "uncoalesced"), ("coo", "hybrid"), ("coo", "nnz0"),
               ("csr", "basic"))
EXTRA_DTS = ("f16", "bf16", "i64", "i32", "bool")
EXTRA_LAYOUTS = (("coo", "coalesced"), ("csr", "basic"))


def matrix(op, run, text, kw_of, tol_of, rules, n_in=1, layouts=LAYOUTS, second=None,
           extra=EXTRA_LAYOUTS, token=None):
    """Cases of op over layouts x dtypes. kw_of(variant, x) -> kwargs (x the
    built first input), tol_of(dt, kw) -> tolerance; n_in = 2: a second
    input of the same layout (second(g, dt, first) builds it when given)."""
    out = []
    for lay, variant, build in layouts:
        f32_err = None
        for short in ("f32", "f64") + EXTRA_DTS:
            if short in EXTRA_DTS and (lay, variant) not in extra:
                continue
            dt = ALL_DTYPES[short]

            def b(g, dt=dt, build=build):
                x = build(g, dt)
                if n_in == 1:
                    return [x]
                y = second(g, dt, x) if second else build(g, dt)
                return [x, y]
            probe = b(torch.Generator().manual_seed(0))
            kw = kw_of(variant, probe[0])
            tok = token(lay) if token else "_".join([lay] * n_in)
            cid = f"{op}.{tok}.{short}.{variant}"
            err = outcome(cid, b, run, kw)
            if short == "f32":
                f32_err = err
            elif err and err == f32_err:
                continue  # the same refusal as float32's (SPS-0: checked before elements)
            out.append(Case(id=cid, op=op,
                            rules=rules + (("SPS-0",) if err and "SPS-0" not in rules else ()),
                            tolerance="exact" if err else tol_of(dt, kw),
                            build=b, run=run, torch_call=text, kwargs=kw, error_class=err,
                            poison=False))
    return out


def tol_exact(dt, kw):
    return "exact"


def _ndim(x):
    return x.dim()


# op -> (run, torch_call, kw_of)
OPS = {
    "clone": (lambda i, k: [i[0].clone()], "s.clone()", lambda v, x: {}),
    "copy_": (lambda i, k: [i[0].copy_(i[1])], "dst.copy_(src)  # returns dst", lambda v, x: {}),
    "t": (lambda i, k: [i[0].t()], "s.t()", lambda v, x: {}),
    "transpose": (lambda i, k: [i[0].transpose(k["dim0"], k["dim1"])], "s.transpose(dim0, dim1)",
                  lambda v, x: {"dim0": x.dim() - 2 if x.layout != torch.sparse_coo else 0,
                                "dim1": -1}),
    "unsqueeze": (lambda i, k: [i[0].unsqueeze(k["dim"])], "s.unsqueeze(dim)",
                  lambda v, x: {"dim": 1 if x.dim() > 1 else 0}),
    "reshape": (lambda i, k: [i[0].reshape(k["shape"])], "s.reshape(shape)",
                lambda v, x: {"shape": (-1,)}),
    "cat": (lambda i, k: [torch.cat(list(i), dim=k["dim"])], "torch.cat([a, b], dim)",
            lambda v, x: {"dim": 0}),
}


# op -> the rules of its cases (SPS-1 copies, SPS-2 index moves, SPS-0 refusals)
RULES = {"clone": ("SPS-1",), "copy_": ("SPS-1",), "t": ("SPS-2",), "transpose": ("SPS-2",),
         "unsqueeze": ("SPS-2",), "reshape": ("SPS-0",), "cat": ("SPS-2",)}


def _copy_src(g, dt, dst):
    """copy_'s source: the same layout and structure as dst, other values
    (torch's compressed copy_ needs the same nnz)."""
    if dst.layout == torch.sparse_coo:
        return torch.sparse_coo_tensor(dst._indices(), sparse.values(
            g, dst._values().numel(), dt).reshape(dst._values().shape), dst.shape)
    rowwise = dst.layout in (torch.sparse_csr, torch.sparse_bsr)
    comp = dst.crow_indices() if rowwise else dst.ccol_indices()
    plain = dst.col_indices() if rowwise else dst.row_indices()
    v = dst.values()
    nv = sparse.values(g, v.numel(), dt).reshape(v.shape)
    return torch.sparse_compressed_tensor(comp.clone(), plain.clone(), nv, dst.shape,
                                          layout=dst.layout)


def _cat_second(g, dt, a):
    """cat's second operand: a of other values (same layout, same shape)."""
    return _copy_src(g, dt, a) if a.layout == torch.sparse_coo else a.clone()


# int64 values a double cannot hold (or wraps past int32): converting copy_'s
# sources here and in structure.py
BEYOND_2_53 = (2**53 + 1, -(2**62) - 3, 2**40 + 7, -(2**53) - 5, 2**63 - 1, -(2**63))


def corner_cases():
    """Argument variants beyond each op's one kwargs set (float32 and
    float64), torch's result or refusal."""
    out = []
    dts = ("f32", "f64")

    def add(op, tok, variant, build, kw, text=None, rules=None):
        run, t, _ = OPS[op]
        rules = rules or RULES[op]
        for short in dts:
            dt = ALL_DTYPES[short]
            cid = f"{op}.{tok}.{short}.{variant}"
            b = (lambda g, dt=dt: build(g, dt))
            err = outcome(cid, b, run, kw)
            if err and short != "f32":
                continue
            out.append(Case(id=cid, op=op, rules=rules + (("SPS-0",) if err else ()),
                            tolerance="exact", build=b, run=run, torch_call=text or t, kwargs=kw,
                            error_class=err, poison=False))
    one = lambda f: (lambda g, dt: [f(g, dt)])  # noqa: E731
    add("transpose", "coo", "3d_0_2", one(coo_3d), {"dim0": 0, "dim1": 2})
    add("transpose", "coo", "same_dim", one(coo_coalesced), {"dim0": 1, "dim1": 1})
    add("transpose", "coo", "bad_dim", one(coo_coalesced), {"dim0": 0, "dim1": 2})
    add("transpose", "csr", "batch_and_sparse", one(csr_batched), {"dim0": 0, "dim1": 1})
    add("transpose", "csr", "sparse_and_batch", one(csr_batched), {"dim0": 1, "dim1": 0})
    add("transpose", "bsr", "same_dim", one(bsr), {"dim0": 0, "dim1": 0})
    add("t", "coo", "1d_uncoalesced",
        one(lambda g, dt: torch.sparse_coo_tensor(torch.tensor([[3, 0, 3]]),
                                                  sparse.values(g, 3, dt), (5,))), {})
    add("unsqueeze", "coo", "front", one(coo_coalesced), {"dim": 0})
    add("unsqueeze", "coo", "last", one(coo_uncoalesced), {"dim": -1})
    add("unsqueeze", "coo", "hybrid_dense_dim", one(coo_hybrid), {"dim": 2})
    add("unsqueeze", "coo", "hybrid_front", one(coo_hybrid), {"dim": 0})
    add("unsqueeze", "coo", "bad_dim", one(coo_coalesced), {"dim": 3})
    add("cat", "coo_coo", "dim1", lambda g, dt: [coo_coalesced(g, dt), coo_uncoalesced(g, dt)],
        {"dim": 1})
    add("cat", "coo_coo", "neg_dim", lambda g, dt: [coo_coalesced(g, dt), coo_empty(g, dt)],
        {"dim": -2})
    add("cat", "coo_coo_coo", "three",
        lambda g, dt: [coo_coalesced(g, dt), coo_zero_size(g, dt), coo_uncoalesced(g, dt)],
        {"dim": 0}, text="torch.cat([a, b, c], dim)")
    add("cat", "coo_coo", "hybrid_dense_dim", lambda g, dt: [coo_hybrid(g, dt), coo_hybrid(g, dt)],
        {"dim": 1})
    add("cat", "coo_coo", "size_mismatch",
        lambda g, dt: [coo_coalesced(g, dt), coo_coalesced(g, dt).t().coalesce()], {"dim": 0})
    add("cat", "coo_coo", "sparse_dim_mismatch", lambda g, dt: [coo_coalesced(g, dt),
                                                                coo_hybrid(g, dt)], {"dim": 0})
    add("cat", "coo_dense", "dense_operand", lambda g, dt: [coo_coalesced(g, dt), _dense(g, dt)],
        {"dim": 0})
    add("cat", "coo_coo", "bad_dim", lambda g, dt: [coo_coalesced(g, dt), coo_coalesced(g, dt)],
        {"dim": 2})
    add("copy_", "coo_coo", "from_uncoalesced",
        lambda g, dt: [coo_coalesced(g, dt), coo_uncoalesced(g, dt)], {})
    add("copy_", "coo_coo", "into_empty_bigger",
        lambda g, dt: [coo_empty(g, dt), coo_3d(g, dt)], {})
    add("copy_", "coo_coo", "shrink", lambda g, dt: [coo_3d(g, dt), coo_coalesced(g, dt)], {})
    add("copy_", "coo_coo", "sparse_dim_change",
        lambda g, dt: [coo_coalesced(g, dt), coo_hybrid(g, dt)], {})
    add("copy_", "coo_dense", "dense_src", lambda g, dt: [coo_coalesced(g, dt), _dense(g, dt)], {})
    add("copy_", "coo_csr", "layouts_differ", lambda g, dt: [coo_coalesced(g, dt), csr(g, dt)], {})
    add("copy_", "csr_csr", "nnz_differs", lambda g, dt: [csr(g, dt), csr_empty(g, dt)], {})
    add("copy_", "csr_csc", "layouts_differ", lambda g, dt: [csr(g, dt), csc(g, dt)], {})
    # dtype conversion: copy_ converts src to dst's dtype
    for src in ("f64", "i64", "bool"):
        for tok, bld in (("coo_coo", coo_uncoalesced), ("csr_csr", csr)):
            cid = f"copy_.{tok}.f32.from_{src}"
            b = (lambda g, s=src, bld=bld: [bld(g, torch.float32), _copy_src(
                g, ALL_DTYPES[s], bld(g, torch.float32))])
            run = OPS["copy_"][0]
            err = outcome(cid, b, run, {})
            out.append(Case(id=cid, op="copy_", rules=("SPS-1",), tolerance="exact", build=b,
                            run=run, torch_call="dst.copy_(src)", kwargs={}, error_class=err,
                            poison=False))
    # int64 values beyond 2^53 into int32: copy_ wraps them exactly (an
    # integer conversion through double would round them first; tests/sweep)
    big = BEYOND_2_53

    def big_src(dst):
        dv = dst._values() if dst.layout == torch.sparse_coo else dst.values()
        v = torch.tensor([big[k % len(big)] for k in range(dv.numel())],
                         dtype=torch.int64).reshape(dv.shape)
        if dst.layout == torch.sparse_coo:
            return torch.sparse_coo_tensor(dst._indices(), v, dst.shape)
        return torch.sparse_csr_tensor(dst.crow_indices(), dst.col_indices(), v, dst.shape)
    for tok, bld in (("coo_coo", coo_uncoalesced), ("csr_csr", csr)):
        cid = f"copy_.{tok}.i32.from_i64_beyond_2_53"
        b = (lambda g, bld=bld: (lambda d: [d, big_src(d)])(bld(g, torch.int32)))
        out.append(Case(id=cid, op="copy_", rules=("SPS-1",), tolerance="exact", build=b,
                        run=OPS["copy_"][0], torch_call="dst.copy_(src)", kwargs={},
                        poison=False))
    return out


def cases():
    out = []
    for op, (run, text, kw_of) in OPS.items():
        second = _copy_src if op == "copy_" else _cat_second if op == "cat" else None
        out += matrix(op, run, text, kw_of, tol_exact, RULES[op],
                      n_in=2 if op in ("copy_", "cat") else 1, second=second)
    return out + corner_cases()

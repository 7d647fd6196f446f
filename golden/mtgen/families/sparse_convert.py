"""Family sparse_convert: plain (not masked) sparse conversions, accessors and
constructors (SPC-1 .. SPC-11): to_dense / to_sparse / to_sparse_csr of
plain tensors (ops of the structure family, whose plain inputs go to
impl/cpu/sparse_convert.c), to_sparse_coo/csc/bsr/bsc, coalesce, sparse_mask,
values/indices/_indices/_values/crow_indices/col_indices/ccol_indices/
row_indices as data, and torch.sparse_{coo,csr,csc,bsr,bsc}_tensor with
check_invariants=True.

Every case is decided by torch: a conversion or accessor is called on each
source storage (dense, COO coalesced / uncoalesced / hybrid / empty / 3-d,
CSR plain / stored zero / batched / hybrid / empty, CSC, BSR, BSC), and
what torch refuses becomes an error case with torch's message (`outcome`).
Error classes: golden/mtgen/sparse.py's table, after a local one (LOCAL
below) for messages that table does not name: the accessors' "expected
sparse ... tensor layout but got X" and "expected SparseCsr or SparseCsc
layout" are LAYOUT_MISMATCH (the op refuses that layout, like "Cannot get
indices on an uncoalesced tensor", which sparse.py maps so; "Cannot get
values ..." is its twin), so is a MaskedTensor's "all __torch_dispatch__
handlers returned NotImplemented" (MaskedTensor has no handler for the
op), and the constructors' index range checks
("0 <= col_indices < ncols", "found negative index", "size is inconsistent
with indices") are INDEX_OUT_OF_RANGE (DESIGN.md: an index out of range)."""

import torch
from torch.masked import masked_tensor

from .. import sparse as sp
from ..model import ALL_DTYPES, Case, case_rng, check_ids, py
from ..opinfo import samples

SHAPE = (4, 6)
BATCHED = (2, 4, 6)
HYBRID = (4, 6, 2)

LOCAL = (
    ("LAYOUT_MISMATCH", ("tensor layout but got", "expected SparseCsr or SparseCsc layout",
                         "Cannot get values on an uncoalesced tensor",
                         "__torch_dispatch__ handlers returned NotImplemented")),
    ("INDEX_OUT_OF_RANGE", ("0 <= col_indices <", "0 <= row_indices <", "found negative index",
                            "size is inconsistent with indices")),
)


error_class = sp.classifier(LOCAL)


def outcome(case_id, build, run, kwargs):
    """sparse.outcome with the local table first."""
    return sp.outcome(case_id, build, run, kwargs, classify=error_class)

# ---- values and source storages ------------------------------------------------

def nonzero_values(g, shape, dt):
    if dt == torch.bool:
        return torch.ones(shape, dtype=torch.bool)
    if dt.is_floating_point:
        v = torch.randn(shape, generator=g, dtype=torch.float32)
        return torch.where(v == 0, torch.ones_like(v), v).to(dt)
    mag = torch.randint(1, 10, shape, generator=g, dtype=torch.int64)
    sign = torch.where(torch.rand(shape, generator=g) < 0.5, -1, 1)
    return (mag * sign if dt != torch.uint8 else mag).to(dt)


def dense(g, dt, shape=SHAPE, p=0.4, pattern=None):
    """About p of the elements nonzero (pattern: a bool tensor of the
    trailing 2-d shape shared by every batch, or of the whole shape)."""
    pat = torch.rand(shape, generator=g) < p if pattern is None else pattern.expand(shape)
    return torch.where(pat, nonzero_values(g, shape, dt), torch.zeros((), dtype=dt))


def batched(g, dt):
    """(2, 4, 6) whose batches share one pattern: the same nnz per batch,
    block by block too (torch's compressed layouts need it)."""
    pat = torch.rand(SHAPE, generator=g) < 0.4
    return dense(g, dt, BATCHED, pattern=pat)


def hybrid(g, dt):
    """(4, 6, 2): an element (row, col) holds 2 dense values; some rows of
    values hold one zero, some both (then the element is not stored)."""
    pat = (torch.rand(SHAPE, generator=g) < 0.4).unsqueeze(-1)
    inner = torch.rand(HYBRID, generator=g) < 0.7
    return dense(g, dt, HYBRID, pattern=pat & inner)


def negzero_nan(g, dt):
    """SPC-1: -0.0 is zero (dropped), NaN is nonzero (kept)."""
    x = dense(g, dt)
    x[0, 0], x[1, 1], x[2, 3] = -0.0, float("nan"), float("inf")
    return x


def uncoalesced(g, dt):
    """The dense draw's entries in reverse order, the first one also stored
    a second time (duplicates are summed)."""
    c = dense(g, dt).to_sparse()
    i, v = c.indices(), c.values()
    extra = nonzero_values(g, (1,), dt)
    idx = torch.cat([i.flip(1), i[:, :1]], 1)
    val = torch.cat([v.flip(0), extra])
    return torch.sparse_coo_tensor(idx, val, SHAPE)


def cancelling(g, dt):
    """SPC-2: (1, 2) stored twice, 1.5 and -1.5: summed to a stored zero."""
    c = dense(g, dt).to_sparse()
    idx = torch.cat([c.indices(), torch.tensor([[1, 1], [2, 2]])], 1)
    val = torch.cat([c.values(), torch.tensor([1.5, -1.5], dtype=dt)])
    return torch.sparse_coo_tensor(idx, val, SHAPE)


# dtype -> (run at (1, 2), run at (2, 3)) of dup_rounding: each run's
# in-order sum rounded after every addition differs from its exact sum
# rounded once (float32 (0.1 + 1.5) - 1.5 = 0.10000002; 1 + 2^-24 is a tie
# to even, twice; float16 and bfloat16 the same one bit lower), or in
# int64, from a sum through double (2^62 + 2^62 wraps to INT64_MIN; 2^62 + 1
# is not a double)
DUP_ROUNDING = {
    torch.float32: ([0.1, 1.5, -1.5], [1.0, 2.0**-24, 2.0**-24]),
    torch.float16: ([1.0, 2.0**-11, 2.0**-11], [0.1, 3.0, -3.0]),
    torch.bfloat16: ([1.0, 2.0**-8, 2.0**-8], [0.1, 3.0, -3.0]),
    torch.int64: ([2**62, 2**62], [2**62 + 1, 1]),
}


def dup_rounding(g, dt):
    """SPC-6: duplicates that torch's coalesce sums in the dtype, entry by
    entry in stored order (an axpy of scalar_t), rounding after every
    addition (DUP_ROUNDING); (0, 0) stored once. Found by golden/reseed.py:
    `uncoalesced_cancelling`'s dense value under its 1.5, -1.5."""
    a, b = DUP_ROUNDING[dt]
    rows = [0] + [1] * len(a) + [2] * len(b)
    cols = [0] + [2] * len(a) + [3] * len(b)
    vals = [7] + a + b
    return torch.sparse_coo_tensor(torch.tensor([rows, cols]), torch.tensor(vals, dtype=dt), SHAPE)


def one_entry_uncoalesced(g, dt):
    """SPC-6: one stored entry, (2, 3), flagged uncoalesced (is_coalesced=False;
    torch flags a COO of fewer than 2 entries coalesced otherwise): coalesce
    keeps the entry and sets the flag."""
    return torch.sparse_coo_tensor(torch.tensor([[2], [3]]), nonzero_values(g, (1,), dt), SHAPE,
                                   is_coalesced=False)


def negzero_coo(g, dt):
    """SPC-2, SPC-6: signed zeros stored, uncoalesced and out of order: (0, 0)
    a lone -0.0, (1, 1) -0.0 twice, (2, 2) -0.0 then +0.0, with two nonzero
    values between. torch's coalesce sums each run from its first value
    (-0.0, -0.0, +0.0), the compressed conversions copy the coalesced
    values, and to_dense adds them into zeros (+0.0 everywhere)."""
    v = nonzero_values(g, (2,), dt).tolist()
    idx = torch.tensor([[2, 1, 0, 2, 1, 1, 2], [2, 1, 0, 3, 0, 1, 2]])
    val = torch.tensor([-0.0, -0.0, -0.0, v[0], v[1], -0.0, 0.0], dtype=dt)
    return torch.sparse_coo_tensor(idx, val, SHAPE)


def empty_coo(dt, shape=SHAPE):
    return torch.sparse_coo_tensor(torch.zeros(2, 0, dtype=torch.int64),
                                   torch.zeros(0, dtype=dt), shape)


def masked_dense(g, dt):
    """A MaskedTensor (dense storage): torch.masked's to_sparse_coo works as
    its to_sparse (STR-6); the other conversions and accessors refuse it."""
    x = dense(g, dt, p=0.7)
    return masked_tensor(x, torch.rand(SHAPE, generator=g) < 0.6)


def stored_zero_csr(g, dt):
    """SPC-2: a CSR tensor whose first stored value is 0."""
    c = dense(g, dt).to_sparse_csr()
    v = c.values().clone()
    v[0] = 0
    return torch.sparse_csr_tensor(c.crow_indices(), c.col_indices(), v, SHAPE)


# name -> (layout token of the case id, variant, build(g, dt), float only)
SOURCES = {
    "dense": ("dense", "basic", lambda g, dt: dense(g, dt), False),
    "dense_hybrid": ("dense", "3d_hybrid", hybrid, False),
    "dense_batched": ("dense", "3d_batched", batched, False),
    "dense_unequal": ("dense", "3d_unequal_batches", lambda g, dt: dense(g, dt, BATCHED), False),
    "dense_1d": ("dense", "1d", lambda g, dt: dense(g, dt, (6,), p=0.5), False),
    "dense_negzero_nan": ("dense", "negzero_nan_inf", negzero_nan, True),
    "masked": ("masked", "dense_storage", masked_dense, False),
    "dense_empty_dense_dim": ("dense", "empty_dense_dim",
                              lambda g, dt: torch.zeros((3, 2, 0), dtype=dt), False),
    "coo": ("coo", "coalesced", lambda g, dt: dense(g, dt).to_sparse(), False),
    "coo_uncoalesced": ("coo", "uncoalesced", uncoalesced, False),
    "coo_cancel": ("coo", "uncoalesced_cancelling", cancelling, True),
    "coo_hybrid": ("coo", "hybrid", lambda g, dt: hybrid(g, dt).to_sparse(2), False),
    "coo_empty": ("coo", "empty", lambda g, dt: empty_coo(dt), False),
    "coo_one_entry": ("coo", "one_entry_uncoalesced", one_entry_uncoalesced, False),
    "coo_dup_rounding": ("coo", "dup_rounding", dup_rounding, False),
    "coo_negzero": ("coo", "negzero_uncoalesced", negzero_coo, True),
    "csr_negzero": ("csr", "negzero", lambda g, dt: negzero_coo(g, dt).coalesce().to_sparse_csr(),
                    True),
    "coo_3d": ("coo", "3d", lambda g, dt: batched(g, dt).to_sparse(), False),
    "csr": ("csr", "basic", lambda g, dt: dense(g, dt).to_sparse_csr(), False),
    "csr_stored_zero": ("csr", "stored_zero", stored_zero_csr, False),
    "csr_batched": ("csr", "batched", lambda g, dt: batched(g, dt).to_sparse_csr(), False),
    "csr_hybrid": ("csr", "hybrid", lambda g, dt: hybrid(g, dt).to_sparse_csr(dense_dim=1),
                   False),
    "csr_empty": ("csr", "empty", lambda g, dt: empty_coo(dt).to_sparse_csr(), False),
    "csc": ("csc", "basic", lambda g, dt: dense(g, dt).to_sparse_csc(), False),
    "csc_batched": ("csc", "batched", lambda g, dt: batched(g, dt).to_sparse_csc(), False),
    "bsr": ("bsr", "basic", lambda g, dt: dense(g, dt).to_sparse_bsr((2, 3)), False),
    "bsr_hybrid": ("bsr", "hybrid",
                   lambda g, dt: hybrid(g, dt).to_sparse_bsr((2, 3), dense_dim=1), False),
    "bsr_batched": ("bsr", "batched", lambda g, dt: batched(g, dt).to_sparse_bsr((2, 3)), False),
    "bsc": ("bsc", "basic", lambda g, dt: dense(g, dt).to_sparse_bsc((2, 3)), False),
}
# coo_one_entry is coalesce's source only (COALESCE_SOURCES); coo_dup_rounding
# has cases of its own, appended last in cases()
CONVERT_SOURCES = tuple(k for k in SOURCES
                        if k not in ("masked", "coo_one_entry", "coo_dup_rounding"))
# the sparse_convert ops also meet a MaskedTensor (torch.masked's handlers)
MASKED_OPS = ("to_sparse_coo", "to_sparse_csc", "to_sparse_bsr", "to_sparse_bsc", "coalesce")

TORCH_LAYOUT = {"strided": torch.strided, "sparse_coo": torch.sparse_coo,
                "sparse_csr": torch.sparse_csr, "sparse_csc": torch.sparse_csc,
                "sparse_bsr": torch.sparse_bsr, "sparse_bsc": torch.sparse_bsc}


def call_kwargs(kw):
    """The stored kwargs as torch takes them: layout names to torch.layout;
    to_sparse's sparse_dim positional (torch's to_sparse(sparse_dim))."""
    kw = dict(kw)
    args = (kw.pop("sparse_dim"),) if "sparse_dim" in kw else ()
    if "layout" in kw:
        kw["layout"] = TORCH_LAYOUT[kw["layout"]]
    return args, kw


def method(name):
    def run(ins, kw):
        args, kw = call_kwargs(kw)
        return [getattr(ins[0], name)(*args, **kw)]
    return run


def call_text(name, kw, receiver="x"):
    parts = [py(kw["sparse_dim"])] if "sparse_dim" in kw else []
    parts += [f"{k}=torch.{v}" if k == "layout" else f"{k}={py(v)}"
              for k, v in kw.items() if k != "sparse_dim"]
    return f"{receiver}.{name}({', '.join(parts)})"


# conversion op -> its kwargs variants: (variant tag, kwargs)
CONVERSIONS = {
    "to_dense": [("", {})],
    "to_sparse": [("", {}), ("sparse_dim1", {"sparse_dim": 1}),
                  ("layout_csr", {"layout": "sparse_csr"}),
                  ("layout_bsc_2x3", {"layout": "sparse_bsc", "blocksize": (2, 3)}),
                  ("layout_bsr_no_blocksize", {"layout": "sparse_bsr"}),
                  ("layout_strided", {"layout": "strided"}),
                  ("layout_coo_dense_dim1", {"layout": "sparse_coo", "dense_dim": 1}),
                  ("sparse_dim1_with_layout", {"sparse_dim": 1, "layout": "sparse_coo"}),
                  # past int32: a range check done after a cast to int would pass
                  ("sparse_dim_huge", {"sparse_dim": 4294967297})],
    "to_sparse_coo": [("", {})],
    "to_sparse_csr": [("", {}), ("dense_dim1", {"dense_dim": 1})],
    "to_sparse_csc": [("", {}), ("dense_dim1", {"dense_dim": 1})],
    "to_sparse_bsr": [("", {"blocksize": (2, 3)}), ("bs1x2", {"blocksize": (1, 2)}),
                      ("bs3x2_not_dividing", {"blocksize": (3, 2)}),
                      ("bs2x2_dense_dim1", {"blocksize": (2, 2), "dense_dim": 1})],
    "to_sparse_bsc": [("", {"blocksize": (2, 3)}), ("bs2x2", {"blocksize": (2, 2)})],
    "coalesce": [("", {})],
}
# the kwargs variants beyond the first run on these sources only
VARIANT_SOURCES = ("dense", "dense_hybrid", "dense_batched", "coo", "coo_hybrid", "csr",
                   "csr_batched", "bsr")
TARGET = {"to_dense": "dense", "to_sparse_coo": "coo", "to_sparse_csr": "csr",
          "to_sparse_csc": "csc", "to_sparse_bsr": "bsr", "to_sparse_bsc": "bsc",
          "coalesce": "coo"}


def target_of(op, kw):
    if op == "to_sparse":
        return {"strided": "dense"}.get(kw.get("layout"), kw.get("layout", "sparse_coo")
                                        .replace("sparse_", ""))
    return TARGET[op]


def conversion_rules(op, src_layout, kw, err):
    if src_layout == "masked":  # torch.masked's to_sparse_coo is its to_sparse
        return ("SPC-6",) if op == "coalesce" else ("SPC-5",) if err else ("SPC-1", "SPC-3")
    """SPC-1 from dense, SPC-2 from sparse storage; SPC-3 for a COO result,
    SPC-4 for a compressed one, SPC-11 for a dense one; SPC-5 for refusals;
    SPC-6 for coalesce."""
    if op == "coalesce":
        return ("SPC-6",)
    if err:
        return ("SPC-5",) if op != "to_dense" else ("SPC-11",)
    tgt = target_of(op, kw)
    if tgt == "dense":
        return ("SPC-11",)
    rules = ["SPC-1" if src_layout == "dense" else "SPC-2"]
    rules.append("SPC-3" if tgt == "coo" else "SPC-4")
    return tuple(rules)


def variant_id(src, tag):
    _, variant, _, _ = SOURCES[src]
    return f"{variant}_{tag}" if tag else variant


def conversion_case(op, src, short, dt, tag, kw):
    layout, _, build_src, _ = SOURCES[src]
    cid = f"{op}.{layout}.{short}.{variant_id(src, tag)}"
    build = (lambda b: lambda g: [b(g, dt)])(build_src)
    run = method(op)
    err = outcome(cid, build, run, kw)
    return Case(id=cid, op=op, rules=conversion_rules(op, layout, kw, err), tolerance="exact",
                build=build, run=run, torch_call=call_text(op, kw), kwargs=dict(kw),
                error_class=err, poison=False)


# ---- sparse_mask (SPC-7) ---------------------------------------------------------

MASKS = {
    "coo": lambda g: dense(g, torch.bool).to_sparse(),
    "coo_uncoalesced": lambda g: every_index_twice(g),
    "coo_hybrid": lambda g: dense(g, torch.float32).to_sparse(1),
    "coo_empty": lambda g: empty_coo(torch.float32),
    "csr": lambda g: dense(g, torch.float32).to_sparse_csr(),
    "csc": lambda g: dense(g, torch.float32).to_sparse_csc(),
    "bsr": lambda g: dense(g, torch.float32).to_sparse_bsr((2, 3)),
    "dense": lambda g: dense(g, torch.float32),
    "coo_other_shape": lambda g: dense(g, torch.float32, (4, 5)).to_sparse(),
}
MASK_SELF = ("dense", "coo", "coo_uncoalesced", "csr")


def every_index_twice(g):
    """An uncoalesced mask (float64): a dense draw's indices, each stored
    twice, the second copy in reverse order; a repeated index gives self's
    value twice (SPC-7)."""
    c = dense(g, torch.float64, p=0.6).to_sparse()
    i, v = c.indices(), c.values()
    return torch.sparse_coo_tensor(torch.cat([i, i.flip(1)], 1), torch.cat([v, v.flip(0)]), SHAPE)


def sparse_mask_case(short, dt, self_src, mask):
    layout, variant, build_src, _ = SOURCES[self_src]
    mlay = mask.split("_")[0]
    cid = f"sparse_mask.{layout}_{mlay}.{short}.{variant}_mask_{mask}"
    build = (lambda b, m: lambda g: [b(g, dt), MASKS[m](g)])(build_src, mask)

    def run(ins, kw):
        return [ins[0].sparse_mask(ins[1])]
    err = outcome(cid, build, run, {})
    return Case(id=cid, op="sparse_mask", rules=("SPC-7",), tolerance="exact", build=build,
                run=run, torch_call="x.sparse_mask(mask)", error_class=err, poison=False)


# ---- accessors (SPC-8) -------------------------------------------------------------

ACCESSORS = ("values", "indices", "_indices", "_values", "crow_indices", "col_indices",
             "ccol_indices", "row_indices")
# an accessor's own layout, for the other dtypes
ACCESSOR_HOME = {"values": "bsr", "indices": "coo", "_indices": "coo_uncoalesced",
                 "_values": "coo_uncoalesced", "crow_indices": "csr", "col_indices": "bsr",
                 "ccol_indices": "csc", "row_indices": "bsc"}


def accessor_case(op, src, short, dt):
    layout, variant, build_src, _ = SOURCES[src]
    cid = f"{op}.{layout}.{short}.{variant}"
    build = (lambda b: lambda g: [b(g, dt)])(build_src)

    def run(ins, kw):
        return [getattr(ins[0], op)().clone()]
    err = outcome(cid, build, run, {})
    return Case(id=cid, op=op, rules=("SPC-8",), tolerance="exact", build=build, run=run,
                torch_call=f"x.{op}()", error_class=err, poison=False)


# ---- constructors (SPC-9, SPC-10) ----------------------------------------------------

T = torch.tensor


def coo_ctor_inputs(g, dt, variant):
    """(indices, values, kwargs) of one torch.sparse_coo_tensor case."""
    i = T([[0, 1, 1, 3], [2, 0, 5, 1]])
    n = i.shape[1]
    v = nonzero_values(g, (n,), dt)
    size = SHAPE
    kw = {"size": size}
    if variant == "hybrid":
        v = nonzero_values(g, (n, 2), dt)
        kw["size"] = (*SHAPE, 2)
    elif variant == "sparse_dim1":
        i, v = T([[3, 0]]), nonzero_values(g, (2, 6), dt)
    elif variant == "uncoalesced":
        i = T([[3, 0, 3], [1, 2, 1]])
        v = nonzero_values(g, (3,), dt)
    elif variant == "is_coalesced_true":
        kw["is_coalesced"] = True
    elif variant == "is_coalesced_false":
        kw["is_coalesced"] = False
    elif variant == "is_coalesced_true_unsorted":
        i = T([[1, 0], [0, 0]])
        v = nonzero_values(g, (2,), dt)
        kw["is_coalesced"] = True
    elif variant == "is_coalesced_true_duplicate":
        i = T([[1, 1], [0, 0]])
        v = nonzero_values(g, (2,), dt)
        kw["is_coalesced"] = True
    elif variant == "int32_indices":
        i = i.to(torch.int32)
    elif variant == "empty":
        i, v = torch.zeros(2, 0, dtype=torch.int64), torch.zeros(0, dtype=dt)
    elif variant == "one_entry":
        i, v = T([[2], [3]]), nonzero_values(g, (1,), dt)
    elif variant == "inferred_size":
        del kw["size"]
    elif variant == "empty_inferred_size":  # no entry: torch infers (0, 0)
        i, v = torch.zeros(2, 0, dtype=torch.int64), torch.zeros(0, dtype=dt)
        del kw["size"]
    elif variant == "empty_hybrid_inferred_size":  # (0, 3): the dense dim from values
        i, v = torch.zeros(1, 0, dtype=torch.int64), torch.zeros((0, 3), dtype=dt)
        del kw["size"]
    elif variant == "negative_index":
        i = T([[0, -1, 1, 3], [2, 0, 5, 1]])
    elif variant == "index_past_size":
        i = T([[0, 1, 4, 3], [2, 0, 5, 1]])
    elif variant == "col_past_size":
        i = T([[0, 1, 1, 3], [2, 0, 6, 1]])
    elif variant == "nnz_mismatch":
        v = v[:3]
    elif variant == "indices_1d":
        i = T([0, 1, 2, 3])
    elif variant == "size_too_short":
        kw["size"] = (24,)
    return [i, v], {**kw, "check_invariants": True}


COO_CTOR_VARIANTS = ("basic", "hybrid", "sparse_dim1", "uncoalesced", "is_coalesced_true",
                     "is_coalesced_false", "is_coalesced_true_unsorted",
                     "is_coalesced_true_duplicate", "int32_indices", "empty", "one_entry",
                     "inferred_size", "negative_index", "index_past_size", "col_past_size",
                     "nnz_mismatch", "indices_1d", "size_too_short", "empty_inferred_size",
                     "empty_hybrid_inferred_size")

CTOR_KIND = {"sparse_csr_tensor": (torch.sparse_csr, (1, 1)),
             "sparse_csc_tensor": (torch.sparse_csc, (1, 1)),
             "sparse_bsr_tensor": (torch.sparse_bsr, (2, 3)),
             "sparse_bsc_tensor": (torch.sparse_bsc, (2, 3))}


def compressed_parts(x):
    if x.layout in (torch.sparse_csr, torch.sparse_bsr):
        return x.crow_indices().clone(), x.col_indices().clone(), x.values().clone()
    return x.ccol_indices().clone(), x.row_indices().clone(), x.values().clone()


def compressed_ctor_inputs(g, dt, op, variant):
    """(compressed, plain, values, kwargs): a valid tensor's parts, then the
    variant's one violation (SPC-10)."""
    layout, bs = CTOR_KIND[op]
    blocked = layout in (torch.sparse_bsr, torch.sparse_bsc)
    src = {"batched": lambda: batched(g, dt), "hybrid": lambda: hybrid(g, dt)}.get(
        variant, lambda: dense(g, dt, p=0.6))()
    dd = 1 if variant == "hybrid" else 0
    if variant == "empty":
        src = torch.zeros(SHAPE, dtype=dt)
    x = src.to_sparse(layout=layout, blocksize=bs if blocked else None, dense_dim=dd or None)
    c, p, v = compressed_parts(x)
    size = tuple(src.shape)
    if variant == "int32_indices":
        c, p = c.int(), p.int()
    elif variant == "mixed_index_dtypes":
        c = c.int()
    elif variant == "compressed_not_starting_at_0":
        c[0] = 1
    elif variant == "compressed_last_not_nnz":
        c[-1] -= 1
    elif variant == "compressed_decreasing":
        c[1], c[2] = c[2] + 1, c[1]
    elif variant == "compressed_too_long":
        c = torch.cat([c, c[-1:]])
    elif variant == "plain_unsorted":
        k = int((c[1:] - c[:-1]).argmax())  # the slot with the most entries
        lo = int(c[k])
        p[lo], p[lo + 1] = p[lo + 1].clone(), p[lo].clone()
    elif variant == "plain_duplicate":
        k = int((c[1:] - c[:-1]).argmax())
        p[int(c[k]) + 1] = p[int(c[k])]
    elif variant == "plain_out_of_range":
        p[-1] = size[0 if layout in (torch.sparse_csc, torch.sparse_bsc) else 1] // \
            (bs[0] if layout in (torch.sparse_csc, torch.sparse_bsc) else bs[1])
    elif variant == "plain_negative":
        p[0] = -1
    elif variant == "nnz_mismatch":
        p = p[:-1]
    elif variant == "ndim_mismatch":  # a batch dim on the plain indices only
        p = p.unsqueeze(0)
    elif variant == "size_1d":
        size = (size[0] * size[1],)
    elif variant == "blocksize_not_dividing":
        size = (size[0], size[1] + 1)
    return [c, p, v], {"size": size, "check_invariants": True}


COMPRESSED_CTOR_VARIANTS = ("basic", "batched", "hybrid", "int32_indices", "empty",
                            "mixed_index_dtypes", "compressed_not_starting_at_0",
                            "compressed_last_not_nnz", "compressed_decreasing",
                            "compressed_too_long", "plain_unsorted", "plain_duplicate",
                            "plain_out_of_range", "plain_negative", "nnz_mismatch",
                            "ndim_mismatch", "size_1d")
BLOCKED_ONLY = ("blocksize_not_dividing",)


def ctor_case(op, short, dt, variant):
    cid = f"{op}.{'dense_dense' if op == 'sparse_coo_tensor' else 'dense_dense_dense'}" \
          f".{short}.{variant}"
    try:
        if op == "sparse_coo_tensor":
            _, kw = coo_ctor_inputs(case_rng(cid), dt, variant)
        else:
            _, kw = compressed_ctor_inputs(case_rng(cid), dt, op, variant)
    except Exception:  # noqa: BLE001 - an older torch (golden/variants.py) that cannot
        kw = {}       # build the parts: its run records the case as unavailable

    def build(g, op=op, variant=variant):
        if op == "sparse_coo_tensor":
            return coo_ctor_inputs(g, dt, variant)[0]
        return compressed_ctor_inputs(g, dt, op, variant)[0]

    fn = getattr(torch, op)

    def run(ins, kw):
        kw = dict(kw)
        return [fn(*ins, **kw)]
    err = outcome(cid, build, run, kw)
    rule = "SPC-9" if op == "sparse_coo_tensor" else "SPC-10"
    args = "indices, values" if op == "sparse_coo_tensor" else "compressed, plain, values"
    text = f"torch.{op}({args}, " + ", ".join(f"{k}={py(v)}" for k, v in kw.items()) + ")"
    return Case(id=cid, op=op, rules=(rule,), tolerance="exact", build=build, run=run,
                torch_call=text, kwargs=kw, error_class=err, poison=False)


# ---- the family --------------------------------------------------------------------

MAIN = {"f32": torch.float32, "f64": torch.float64}
OTHERS = {k: v for k, v in ALL_DTYPES.items() if k not in MAIN and k != "u8"}
# sources per conversion beyond float32's full sweep (float64 and the other
# dtypes): the dense input and one sparse storage per op
HOME = {"to_dense": "bsc", "to_sparse": "csr", "to_sparse_coo": "csc",
        "to_sparse_csr": "coo_uncoalesced", "to_sparse_csc": "csr",
        "to_sparse_bsr": "coo_uncoalesced", "to_sparse_bsc": "bsr", "coalesce": "coo_uncoalesced"}
# coo_one_entry: one entry flagged uncoalesced, which coalesce must keep (its
# kernels run on a single entry: the CUDA backend's n > 0 path); placed before
# coo_hybrid so that grad_sparse's evenly spaced picks of coalesce stay the same
COALESCE_SOURCES = ("coo", "coo_uncoalesced", "coo_cancel", "coo_one_entry", "coo_negzero",
                    "coo_hybrid", "coo_empty", "coo_3d", "dense", "csr")
# accessor -> the sources of its float32 sweep: its own layouts, then refused ones
ACCESSOR_SOURCES = {
    "values": ("coo", "coo_uncoalesced", "coo_hybrid", "coo_empty", "csr", "csr_batched",
               "csr_hybrid", "csc", "bsr", "bsr_hybrid", "bsc", "dense"),
    "indices": ("coo", "coo_uncoalesced", "coo_hybrid", "coo_empty", "coo_3d", "csr", "dense"),
    "_indices": ("coo", "coo_uncoalesced", "coo_hybrid", "coo_empty", "csr", "dense"),
    "_values": ("coo", "coo_uncoalesced", "coo_hybrid", "coo_empty", "csr", "dense"),
    "crow_indices": ("csr", "csr_batched", "csr_hybrid", "csr_empty", "bsr", "bsr_batched", "csc",
                     "coo"),
    "col_indices": ("csr", "csr_batched", "csr_hybrid", "bsr", "bsr_hybrid", "bsc", "dense"),
    "ccol_indices": ("csc", "csc_batched", "bsc", "csr", "coo"),
    "row_indices": ("csc", "csc_batched", "bsc", "bsr", "dense"),
}
CTOR_VARIANTS = {
    "sparse_coo_tensor": COO_CTOR_VARIANTS,
    "sparse_csr_tensor": COMPRESSED_CTOR_VARIANTS,
    "sparse_csc_tensor": ("basic", "batched", "hybrid", "empty", "compressed_too_long",
                          "plain_unsorted", "plain_out_of_range", "nnz_mismatch"),
    "sparse_bsr_tensor": ("basic", "batched", "hybrid", "int32_indices", "compressed_last_not_nnz",
                          "compressed_too_long", "plain_unsorted", "plain_out_of_range",
                          "blocksize_not_dividing", "size_1d"),
    "sparse_bsc_tensor": ("basic", "batched", "hybrid", "plain_unsorted", "plain_duplicate",
                          "plain_out_of_range", "blocksize_not_dividing"),
}


def conversion_sweep(short, dt, full):
    out = []
    for op, variants in CONVERSIONS.items():
        for k, (tag, kw) in enumerate(variants):
            if k and not full:
                break
            if full:
                srcs = COALESCE_SOURCES if op == "coalesce" else \
                    (CONVERT_SOURCES if k == 0 else VARIANT_SOURCES)
                srcs += ("masked",) if op in MASKED_OPS and k == 0 else ()
            else:
                srcs = (HOME[op],) if op == "coalesce" else ("dense", HOME[op])
            for src in srcs:
                if SOURCES[src][3] and not dt.is_floating_point:
                    continue
                out.append(conversion_case(op, src, short, dt, tag, kw))
    return out


def opinfo_case(source, smp, short, dt):
    """torch's OpInfo samples of to_sparse (dense (5, 5), sparse_dim none or 1)."""
    kw = {"sparse_dim": smp.args[0]} if smp.args else {}
    k = source.rsplit(":", 1)[1]
    cid = f"to_sparse.dense.{short}.opinfo_{k}"
    x = smp.input.detach().clone()
    build = lambda g: [x.clone()]  # noqa: E731
    run = method("to_sparse")
    return Case(id=cid, op="to_sparse", rules=("SPC-1", "SPC-3"), tolerance="exact",
                build=build, run=run, torch_call=call_text("to_sparse", kw), kwargs=kw,
                error_class=outcome(cid, build, run, kw), poison=False, source=source)


def cases():
    f32, f64 = torch.float32, torch.float64
    out = conversion_sweep("f32", f32, True)
    out += conversion_sweep("f64", f64, False)
    for short, dt in OTHERS.items():
        out += conversion_sweep(short, dt, False)
    out += [conversion_case("to_sparse_bsr", "dense", "u8", torch.uint8, "", {"blocksize": (2, 3)}),
            conversion_case("to_dense", "csr", "u8", torch.uint8, "", {})]
    for short, dt in (("f32", f32), ("f64", f64), ("i64", torch.int64)):
        out += [opinfo_case(src, smp, short, dt) for src, smp in samples("to_sparse", dt)]
    out += [sparse_mask_case("f32", f32, s, m) for s in MASK_SELF + ("masked",)
            for m in (MASKS if s != "masked" else ("coo",))]
    out += [sparse_mask_case("f64", f64, s, m) for s in ("dense", "coo_uncoalesced")
            for m in ("coo_uncoalesced", "csr", "bsr")]
    for short, dt in OTHERS.items():
        out += [sparse_mask_case(short, dt, s, m) for s, m in
                (("dense", "coo"), ("dense", "csr"), ("coo_uncoalesced", "csr"))]
    for op, srcs in ACCESSOR_SOURCES.items():
        out += [accessor_case(op, s, "f32", f32) for s in srcs + ("masked",)]
        out += [accessor_case(op, ACCESSOR_HOME[op], short, dt) for short, dt in
                (("f64", f64), *OTHERS.items())]
    for op, variants in CTOR_VARIANTS.items():
        out += [ctor_case(op, "f32", f32, v) for v in variants]
        out += [ctor_case(op, "f64", f64, v) for v in ("basic", variants[-1])]
        out += [ctor_case(op, short, dt, "basic") for short, dt in OTHERS.items()]
    out += [conversion_case(op, "coo_dup_rounding", short, ALL_DTYPES[short], "", kw)
            for short in ("f32", "f16", "bf16", "i64")
            for op, kw in (("coalesce", {}), ("to_dense", {}), ("to_sparse_csr", {}))]
    # a dense (3, 2, 0) to a hybrid COO: cells whose dense part has no element
    # (tests/sweep: a mutant of the CUDA nonzero scan that would divide by
    # that size; the host plan never calls the scan then, which these cases
    # and the 7 conversions of the same tensor in the sweep above now pin);
    # torch stores nothing
    out += [conversion_case("to_sparse", "dense_empty_dense_dim", "f32", f32, tag, kw)
            for tag, kw in (("sparse_dim1", {"sparse_dim": 1}), ("sparse_dim2", {"sparse_dim": 2}))]
    return check_ids(out)

#!/usr/bin/env python3
"""mtcs adapter: scipy.sparse (coo_array, csr_array, csc_array, bsr_array)
as the library under test, for the plain sparse cases of the `torch`
profile.

    mtcs validate --adapter ".venv/bin/python conformance/adapters/scipy_sparse.py" \\
        --golden golden/unary.h5 --golden golden/binary.h5 ...

The question it answers: where does scipy.sparse, computing the same op on
the same sparse operands, agree with torch's sparse semantics, and where
does it not (coalescing, explicit zeros, result layouts, dtypes, which
calls each library refuses). It is not expected to pass: its verdicts are
findings, published in README.md.

Inputs (mode numpy): COO -> coo_array (duplicates kept, as stored), CSR ->
csr_array, CSC -> csc_array, BSR -> bsr_array, dense -> np.ndarray, Python
numbers as such. Answered NOT_SUPPORTED, with the reason: masked
(MaskedTensor) operands, BSC (scipy has no bsc_array), hybrid (dense_dim
> 0) and batched compressed tensors, COO of other than 2 sparse dims,
float16 and bfloat16 (scipy.sparse has no such dtype), and every op scipy
has no counterpart for (OPS below lists the ones it has).

Outputs: scipy's result converted to the kind torch returns for the op
(the request does not say; the op's semantics do): elementwise ops keep the
sparse operand's layout, a product of two sparse matrices has the first
one's, `t` of CSR is CSC, reductions over every element are 0-d dense, ...
(`result_kind`). Where scipy's own result has another format (a + b of two
coo_arrays is a csr_array; a sum over a dim is dense) it is converted, and
the conversion is exact: values are never recomputed. A COO result's
`coalesced` flag is scipy's has_canonical_format.

Needs numpy, scipy, h5py and conformance/adapters/mtcs_adapter.py."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import numpy as np  # noqa: E402
import scipy  # noqa: E402
import scipy.sparse as sp  # noqa: E402

import mtcs_adapter as mt  # noqa: E402

SPARSE = ("coo", "csr", "csc", "bsr", "bsc")
NO_DTYPE = ("float16", "bfloat16")  # scipy.sparse refuses float16; bfloat16 has no numpy type


def unsupported(msg):
    return mt.Refusal("NOT_SUPPORTED", msg)


# -- golden operands <-> scipy arrays

def to_scipy(x):
    """A decoded input as scipy takes it (sparse array, ndarray or number)."""
    if isinstance(x, mt.Coo):
        if x.values.ndim != 1 or x.sparse_dim != 2:
            raise unsupported("scipy's coo_array: 2 sparse dims and no dense dims only "
                              f"(got {x.sparse_dim} sparse dims, shape {x.shape})")
        a = sp.coo_array((x.values, (x.indices[0], x.indices[1])), shape=x.shape)
        # torch's coalesced flag is scipy's canonical format (sorted, no duplicates):
        # an operand torch knows to be coalesced is one scipy knows to be canonical
        a.has_canonical_format = x.coalesced
        return a
    if isinstance(x, mt.Compressed):
        if x.kind == "bsc":
            raise unsupported("scipy.sparse has no BSC format (bsc_array)")
        if len(x.shape) != 2 or x.dense_dim:
            raise unsupported(f"scipy's {x.kind}_array: 2-d without dense dims only "
                              f"(got shape {x.shape}, dense_dim {x.dense_dim})")
        arg = (x.values, x.plain_indices, x.compressed_indices)
        if x.kind == "bsr":
            return sp.bsr_array(arg, shape=x.shape, blocksize=x.blocksize)
        return (sp.csr_array if x.kind == "csr" else sp.csc_array)(arg, shape=x.shape)
    return x


def kind_of(x):
    if isinstance(x, mt.Coo):
        return "coo"
    if isinstance(x, mt.Compressed):
        return x.kind
    if isinstance(x, np.ma.MaskedArray):
        return "masked"
    if isinstance(x, np.ndarray):
        return "dense"
    return "scalar"


def from_scipy(r, kind, blocksize=None):
    """scipy's result r as a golden output of kind (coo/csr/csc/bsr/dense).
    A dense r asked for as sparse keeps its non-zero elements."""
    if kind == "dense":
        if sp.issparse(r):
            r = r.toarray()
        return np.asarray(r)
    if not sp.issparse(r):
        r = sp.coo_array(np.asarray(r))
    if r.ndim != 2:  # scipy's n-d arrays are COO; a compressed one is 2-d
        kind = "coo"
    if kind == "coo":
        c = r.tocoo()
        return mt.Coo(np.vstack(c.coords) if c.coords else np.zeros((0, 0)), c.data, c.shape,
                      bool(c.has_canonical_format))
    if kind == "bsr":
        b = r.tobsr(blocksize=blocksize) if blocksize else r.tobsr()
        if not b.has_sorted_indices:
            b = b.sorted_indices()
        return mt.Compressed("bsr", b.indptr, b.indices, b.data, b.shape, b.blocksize)
    c = r.tocsr() if kind == "csr" else r.tocsc()
    if not c.has_sorted_indices:  # the golden format wants them sorted (values move along)
        c = c.sorted_indices()
    return mt.Compressed(kind, c.indptr, c.indices, c.data, c.shape)


# -- the ops

def result_kind(op, kinds, dim=None, keepdim=False):
    """The layout torch gives op's result for inputs of these kinds (dim: the
    dims a reduction reduces, None for all)."""
    sparse = [k for k in kinds if k in SPARSE]
    if op in ("sum", "sparse_sum") and kinds[0] == "csr" and keepdim:
        return "csr"  # torch reduces CSR with keepdim only, into a CSR
    if op in ("sum", "sparse_sum") and dim is not None and len(dim) < 2:
        return kinds[0]  # a sum over some dims keeps the layout (torch: COO; CSR with keepdim)
    if op in ("to_dense", "sum", "sparse_sum", "norm", "amax", "amin", "max", "mm", "matmul",
              "sparse_mm", "spmm", "addmm", "sparse_addmm", "addmv", "linear", "values", "indices",
              "_indices", "_values", "crow_indices", "col_indices", "ccol_indices",
              "row_indices", "nonzero"):
        if op in ("mm", "matmul", "sparse_mm", "spmm") and len(sparse) == 2:
            return "coo" if kinds[0] == "coo" else "csr"  # compressed @ compressed: CSR
        return "dense"
    if op in ("to_sparse", "to_sparse_coo", "coalesce", "smm", "hspmm", "sspaddmm",
              "sparse_coo_tensor"):
        return "coo"
    if op in ("to_sparse_csr", "sparse_csr_tensor"):
        return "csr"
    if op in ("to_sparse_csc", "sparse_csc_tensor"):
        return "csc"
    if op in ("to_sparse_bsr", "sparse_bsr_tensor"):
        return "bsr"
    if op in ("t", "transpose", "t_"):
        return {"csr": "csc", "csc": "csr", "bsr": "bsc", "bsc": "bsr"}.get(kinds[0], kinds[0])
    if op == "sparse_mask":
        return kinds[1]
    if op in ("add", "sub") and "dense" in kinds:
        return "dense"
    if op.endswith("_") and kinds and kinds[0] == "dense":
        return "dense"
    return sparse[0] if sparse else "dense"


def unary(fn):
    return lambda a, kw: fn(a)


def method(name):
    return lambda a, kw: getattr(a, name)()


def binary(fn):
    def run(ins, kw):
        a, b = ins
        alpha = kw.get("alpha", 1)
        return fn(a, b if alpha == 1 else alpha * b)
    return run


def mul(a, b):
    if np.isscalar(a):
        return b * a
    if np.isscalar(b):
        return a * b
    if sp.issparse(a):
        return a.multiply(b)
    return b.multiply(a)


def div(a, b):
    return a / b


def reduce_sum(ins, kw):
    a = ins[0]
    dim = kw.get("dim")
    dtype = kw.get("dtype")
    if isinstance(dim, tuple):
        dim = None if len(dim) == len(a.shape) else (dim[0] if len(dim) == 1 else dim)
    if isinstance(dim, tuple):
        raise unsupported("scipy's sum reduces over one axis or all of them")
    r = a.sum(axis=dim, dtype=np.dtype(dtype) if isinstance(dtype, str) else None)
    if kw.get("keepdim"):
        r = (np.expand_dims(np.asarray(r), dim) if dim is not None
             else np.asarray(r).reshape((1,) * len(a.shape)))
    return np.asarray(r)


def reduce_max(ins, kw):
    dim = kw.get("dim")
    r = ins[0].max(axis=dim)
    return r


def norm(ins, kw):
    import scipy.sparse.linalg as spl
    p = kw.get("p", 2)
    if kw.get("dim") is not None or p not in (2, 2.0, "fro"):
        raise unsupported("scipy.sparse.linalg.norm of a matrix: the Frobenius norm only "
                          "is torch's vector norm")
    return np.asarray(spl.norm(ins[0], "fro"), dtype=ins[0].dtype)


def matmul2(ins, kw):
    """a @ b, which takes two operands: a third is refused as Python would
    refuse `@` with three (TypeError), not dropped."""
    if len(ins) != 2:
        raise TypeError(f"a matrix product takes 2 operands, got {len(ins)}")
    return ins[0] @ ins[1]


def addmm(ins, kw):
    inp, m1, m2 = ins
    beta, alpha = kw.get("beta", 1), kw.get("alpha", 1)
    prod = m1 @ m2
    return beta * inp + alpha * prod


def addmv(ins, kw):
    inp, mat, vec = ins
    return kw.get("beta", 1) * inp + kw.get("alpha", 1) * (mat @ vec)


def linear(ins, kw):
    if np.ndim(ins[0]) != 2:
        raise unsupported("scipy's sparse products take 2-d operands only")
    out = ins[0] @ ins[1].T
    return out + ins[2] if len(ins) > 2 else out


def hspmm(ins, kw):
    """torch.hspmm: a hybrid COO (1 sparse dim) over the rows of mat1 that
    store an entry."""
    a, d = ins
    rows = np.unique(a.tocoo().coords[0])
    dense = np.asarray(a @ d)
    return mt.Coo(rows.reshape(1, -1), dense[rows], dense.shape, True)


def sampled_addmm(ins, kw):
    inp, m1, m2 = ins
    beta, alpha = kw.get("beta", 1), kw.get("alpha", 1)
    c = inp.tocsr()
    rows = np.repeat(np.arange(c.shape[0]), np.diff(c.indptr))
    prod = (np.asarray(m1) @ np.asarray(m2))[rows, c.indices]
    return sp.csr_array((beta * c.data + alpha * prod, c.indices, c.indptr), shape=c.shape)


def coalesce(ins, kw):
    c = ins[0].copy()
    c.sum_duplicates()
    return c


def cat(ins, kw):
    dim = kw.get("dim", 0)
    if dim < 0:
        dim += 2
    return (sp.vstack if dim == 0 else sp.hstack)(list(ins), format="coo")


def narrow_copy(ins, kw):
    a = ins[0].tocsr()
    dim, start, length = kw["dim"], kw["start"], kw["length"]
    if dim < 0:
        dim += 2
    sl = slice(start, start + length)
    return a[sl, :] if dim == 0 else a[:, sl]


def index_select(ins, kw):
    a, idx = ins
    dim = kw["dim"] + (2 if kw["dim"] < 0 else 0)
    a = a.tocsr()
    return a[np.asarray(idx), :] if dim == 0 else a[:, np.asarray(idx)]


def sparse_mask(ins, kw):
    x, mask = ins
    if not sp.issparse(mask):
        raise mt.Refusal("LAYOUT_MISMATCH", "sparse_mask: the mask is not a sparse array")
    m = mask.tocoo()
    xd = x.toarray() if sp.issparse(x) else np.asarray(x)
    vals = xd[m.coords[0], m.coords[1]]
    return sp.coo_array((vals, m.coords), shape=m.shape)


def zero_(ins, kw):
    a = ins[0]
    return type(a)(a.shape, dtype=a.dtype)


def copy_(ins, kw):
    dst, src = ins
    if dst.shape != src.shape:
        raise ValueError(f"copy_: shapes {dst.shape} and {src.shape} differ")
    return src.astype(dst.dtype).copy()


def construct(fmt):
    def run(ins, kw):
        size = kw.get("size")
        if size is not None and len(size) != 2 or np.ndim(ins[-1]) != (3 if fmt == "bsr" else 1):
            raise unsupported(f"scipy's {fmt}_array: 2-d without batch or dense dims only")
        if fmt == "coo" and np.shape(ins[0])[0] != 2:
            raise unsupported("scipy's coo_array: 2 sparse dims only")
        if fmt == "coo":
            idx, vals = ins
            a = sp.coo_array((vals, tuple(np.asarray(idx))), shape=size)
        else:
            comp, plain, vals = ins
            a = getattr(sp, f"{fmt}_array")((vals, plain, comp), shape=size)
            a.check_format(full_check=True)
        return a
    return run


ZERO_PRESERVING = {
    "abs": "__abs__", "absolute": "__abs__", "neg": "__neg__", "negative": "__neg__",
    "sqrt": "sqrt", "sin": "sin", "sinh": "sinh", "tan": "tan", "tanh": "tanh",
    "asin": "arcsin", "arcsin": "arcsin", "asinh": "arcsinh", "arcsinh": "arcsinh",
    "atan": "arctan", "arctan": "arctan", "atanh": "arctanh", "arctanh": "arctanh",
    "expm1": "expm1", "log1p": "log1p", "deg2rad": "deg2rad", "rad2deg": "rad2deg",
    "floor": "floor", "ceil": "ceil", "trunc": "trunc", "fix": "trunc", "round": "rint",
    "sign": "sign", "sgn": "sign", "conj_physical": "conj", "positive": "copy",
}

# op -> run(inputs, kwargs) on scipy operands
OPS = {name: (lambda m: lambda ins, kw: getattr(ins[0], m)())(m)
       for name, m in ZERO_PRESERVING.items()}
OPS.update({name + "_": OPS[name] for name in list(OPS) if name not in ("positive",)})
OPS.update({
    "pow": lambda ins, kw: ins[0].power(ins[1]),
    "pow_": lambda ins, kw: ins[0].power(ins[1]),
    "add": binary(lambda a, b: a + b), "add_": binary(lambda a, b: a + b),
    "sub": binary(lambda a, b: a - b), "sub_": binary(lambda a, b: a - b),
    "mul": binary(mul), "mul_": binary(mul),
    "div": binary(div), "div_": binary(div),
    "sum": reduce_sum, "sparse_sum": reduce_sum,
    "amax": reduce_max, "max": reduce_max,
    "amin": lambda ins, kw: ins[0].min(axis=kw.get("dim")),
    "norm": norm,
    "mm": matmul2, "matmul": matmul2, "spmm": matmul2, "sparse_mm": matmul2, "smm": matmul2,
    "addmm": addmm, "sparse_addmm": addmm, "sspaddmm": addmm, "addmv": addmv,
    "linear": linear, "hspmm": hspmm, "sparse_sampled_addmm": sampled_addmm,
    "t": lambda ins, kw: ins[0].T, "t_": lambda ins, kw: ins[0].T,
    "transpose": lambda ins, kw: (ins[0].T if {kw["dim0"] % 2, kw["dim1"] % 2} == {0, 1}
                                  else ins[0].copy()),
    "clone": lambda ins, kw: ins[0].copy(), "copy_": copy_, "zero_": zero_,
    "cat": cat, "narrow_copy": narrow_copy, "index_select": index_select,
    "reshape": lambda ins, kw: ins[0].reshape(kw["shape"]),
    "nonzero": lambda ins, kw: np.stack(ins[0].nonzero(), axis=1).astype(np.int64),
    "to_dense": lambda ins, kw: ins[0].toarray() if sp.issparse(ins[0]) else ins[0].copy(),
    "to_sparse": lambda ins, kw: ins[0], "to_sparse_coo": lambda ins, kw: ins[0],
    "to_sparse_csr": lambda ins, kw: ins[0], "to_sparse_csc": lambda ins, kw: ins[0],
    "to_sparse_bsr": lambda ins, kw: ins[0],
    "coalesce": coalesce, "sparse_mask": sparse_mask,
    "values": lambda ins, kw: ins[0].data, "_values": lambda ins, kw: ins[0].data,
    "indices": lambda ins, kw: np.vstack(ins[0].coords).astype(np.int64),
    "_indices": lambda ins, kw: np.vstack(ins[0].coords).astype(np.int64),
    "crow_indices": lambda ins, kw: ins[0].indptr.astype(np.int64),
    "col_indices": lambda ins, kw: ins[0].indices.astype(np.int64),
    "ccol_indices": lambda ins, kw: ins[0].indptr.astype(np.int64),
    "row_indices": lambda ins, kw: ins[0].indices.astype(np.int64),
    "sparse_coo_tensor": construct("coo"), "sparse_csr_tensor": construct("csr"),
    "sparse_csc_tensor": construct("csc"), "sparse_bsr_tensor": construct("bsr"),
})

# ops whose accessor needs the matching scipy format (torch refuses the others)
ACCESSOR_FORMAT = {"values": None, "_values": None, "indices": ("coo",), "_indices": ("coo",),
                   "crow_indices": ("csr", "bsr"), "col_indices": ("csr", "bsr"),
                   "ccol_indices": ("csc",), "row_indices": ("csc",)}

# scipy's refusals in the words of DESIGN.md's error_class table, first match
# wins, before mtcs_adapter.status_of (which knows torch's and numpy's words)
SCIPY_REFUSALS = (
    ("SHAPE_MISMATCH", ("dimension mismatch", "inconsistent shapes",
                        "mismatch in its core dimension",
                        "shapes of the blocks", "incompatible dimensions")),
    ("INDEX_OUT_OF_RANGE", ("exceeds matrix dimension", "index out of range", "out of bounds",
                            "negative row index", "negative column index",
                            "exceeds matrix dimensions")),
    ("DTYPE_MISMATCH", ("does not support dtype",)),
)


def status_of(exc):
    text = f"{type(exc).__name__}: {exc}"
    for status, needles in SCIPY_REFUSALS:
        if any(n in text for n in needles):
            return status, text
    return mt.status_of(exc)


def handle(req):
    if req.profile != "torch":
        raise unsupported(f"profile {req.profile}: only torch's sparse semantics are checked")
    kinds = [kind_of(x) for x in req.inputs]
    if "masked" in kinds or any(lay.startswith("masked") for lay in req.layouts):
        raise unsupported("scipy.sparse has no masked (MaskedTensor) semantics")
    constructor = req.op.startswith("sparse_") and req.op.endswith("_tensor")
    if not any(k in SPARSE for k in kinds) and not constructor:
        raise unsupported("no sparse operand: not a scipy.sparse case")
    if req.op not in OPS:
        raise unsupported(f"scipy.sparse has no counterpart of torch's {req.op}")
    for k, (x, dt) in enumerate(zip(req.inputs, req.dtypes)):
        if dt in NO_DTYPE and kind_of(x) != "scalar":
            raise unsupported(f"input {k}: scipy.sparse has no {dt}")
    ins = [to_scipy(x) for x in req.inputs]
    kw = dict(req.kwargs)
    op = req.op
    if op in ACCESSOR_FORMAT and ACCESSOR_FORMAT[op] and ins[0].format not in ACCESSOR_FORMAT[op]:
        raise mt.Refusal("LAYOUT_MISMATCH", f"{op} of a {ins[0].format}_array")
    dim = kw.get("dim")
    kind = result_kind(op, kinds, None if dim is None else
                       (dim,) if isinstance(dim, int) else tuple(dim), bool(kw.get("keepdim")))
    blocksize = None
    if op == "to_sparse_bsr":
        blocksize = kw.get("blocksize")
    elif op == "to_sparse" and kw.get("layout") not in (None, "sparse_coo"):
        layout = kw["layout"]
        kind = {"strided": "dense"}.get(layout, layout.replace("sparse_", ""))
        if kind == "bsc":
            raise unsupported("scipy.sparse has no BSC format (bsc_array)")
        blocksize = kw.get("blocksize")
    if kind == "bsc":
        raise unsupported("scipy.sparse has no BSC format (bsc_array)")
    try:
        r = OPS[op](ins, kw)
    except mt.Refusal:
        raise
    except Exception as e:  # noqa: BLE001 - scipy's refusal, classified
        raise mt.Refusal(*status_of(e)) from e
    if isinstance(r, (mt.Coo, mt.Compressed)):
        return [r]
    if kind == "bsr" and blocksize is None:  # a BSR result keeps its BSR operand's blocks
        blocksize = next((x.blocksize for x in ins if isinstance(x, sp.bsr_array)), None)
    return [from_scipy(r, kind, tuple(blocksize) if blocksize else None)]


def main():
    return mt.serve("scipy.sparse", scipy.__version__, ["torch"], handle, mode="numpy")


if __name__ == "__main__":
    sys.exit(main())

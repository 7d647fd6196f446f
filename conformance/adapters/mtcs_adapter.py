"""mtcs adapter helper: the protocol loop of spec/adapter-protocol.md (protocol 1).

An adapter is a program that `mtcs validate --adapter CMD` starts once and
sends one request per golden case. With this module an adapter is a
function from a decoded request to a list of outputs:

    import numpy as np
    import mtcs_adapter as mt

    def handle(req):
        if req.op != "neg":
            raise mt.Refusal("NOT_SUPPORTED", f"no {req.op}")
        return [np.ma.negative(req.inputs[0])]

    raise SystemExit(mt.serve("numpy.ma", np.__version__, ["numpy_ma"], handle))

Python 3.9+, numpy and h5py; torch is imported only in mode "torch" or
when an output is a torch tensor. See conformance/adapters/README.md.

Decoding (mode "numpy"):
  dense   -> np.ndarray (bool stored as uint8 comes back as np.bool_;
             bfloat16 stored widened comes back as float32: Request.dtypes
             keeps the name "bfloat16" so an adapter can refuse it)
  masked  -> np.ma.MaskedArray, numpy's mask (True = masked OUT, the inverse
             of the golden mask); a masked tensor stored as COO or CSR is
             densified (unstored = masked out) and Request.layouts says
             "masked_coo" / "masked_csr" ...
  scalar  -> Python bool / int / float
  coo     -> Coo;  csr, csc, bsr, bsc -> Compressed
Decoding (mode "torch"): dense -> torch.Tensor, masked ->
torch.masked.MaskedTensor (on the same storage), coo ->
torch.sparse_coo_tensor (its coalesced flag kept), compressed ->
torch.sparse_compressed_tensor, scalar -> Python number; bfloat16 is a
torch.bfloat16 tensor.
Kwargs: bool, int, float, str as Python values; int and float arrays as
tuples; in mode torch a DTYPE kwarg is a torch.dtype, a LAYOUT kwarg a
torch.layout and a FLOAT_TENSOR array a 1-d torch.Tensor (types from
spec/include/mt/kwargs.def when it is found beside this file).

Encoding (either mode): np.ndarray / numpy scalar -> dense,
np.ma.MaskedArray (incl. np.ma.masked) -> masked dense, Masked(data, mask)
-> masked of the data's storage (golden mask convention), Coo, Compressed,
Python bool/int/float -> scalar, torch tensors of every layout and
MaskedTensor. Anything else is answered NOT_SUPPORTED ("adapter: cannot
encode ...") and logged to stderr.

Statuses: raise Refusal(status, message) to refuse; any other exception is
classified by status_of() (DESIGN.md's error_class table). stdout carries
only protocol lines: file descriptor 1 is pointed at stderr while serve()
runs, so a library's prints (Python or C) go to mtcs's stderr.
"""
import io
import json
import os
import re
import sys
import traceback
import warnings

import h5py
import numpy as np

PROTOCOL = 1

# spec/include/mt/status.def, names only (codes are the runner's business)
STATUSES = ("OK", "MASK_MISMATCH", "SHAPE_MISMATCH", "DTYPE_MISMATCH", "INVALID_ARGUMENT",
            "INDEX_OUT_OF_RANGE", "NOT_SUPPORTED", "OUT_OF_MEMORY", "DEVICE_ERROR",
            "LAYOUT_MISMATCH", "INVALID_FORMAT", "IO_ERROR")

MAX_MESSAGE = 4000  # characters: an answer line stays far below the 64 KiB limit

# golden dtype name -> numpy storage dtype (bool as uint8, bfloat16 widened to float32)
STORED = {"float32": np.float32, "float64": np.float64, "float16": np.float16,
          "int64": np.int64, "int32": np.int32, "int8": np.int8, "uint8": np.uint8,
          "bool": np.uint8, "bfloat16": np.float32}
# numpy dtype -> golden name (outputs)
NUMPY_NAMES = {np.dtype(np.float32): "float32", np.dtype(np.float64): "float64",
               np.dtype(np.float16): "float16", np.dtype(np.int64): "int64",
               np.dtype(np.int32): "int32", np.dtype(np.int8): "int8",
               np.dtype(np.uint8): "uint8", np.dtype(np.bool_): "bool"}
COMPRESSED_NAMES = {"csr": ("crow_indices", "col_indices"),
                    "csc": ("ccol_indices", "row_indices"),
                    "bsr": ("crow_indices", "col_indices"),
                    "bsc": ("ccol_indices", "row_indices")}


class Refusal(Exception):
    """Raise from a handler to answer a status other than OK."""

    def __init__(self, status: str, message: str = ""):
        super().__init__(f"{status}: {message}" if message else status)
        self.status = status
        self.message = message


class EncodeError(Exception):
    """An output this module cannot write as a golden tensor group."""


class Coo:
    """A decoded COO tensor: indices int64 [sparse_dim, nnz], values
    [nnz, dense...], shape tuple, coalesced bool, dtype (golden name)."""

    def __init__(self, indices, values, shape, coalesced=False, dtype=None):
        self.values = np.asarray(values)
        self.shape = tuple(int(n) for n in shape)
        self.indices = np.asarray(indices, dtype=np.int64)
        if self.indices.ndim != 2:  # e.g. an empty list: [sparse_dim, 0]
            sparse_dim = len(self.shape) - max(self.values.ndim - 1, 0)
            self.indices = self.indices.reshape(sparse_dim, -1)
        self.coalesced = bool(coalesced)
        self.dtype = dtype or NUMPY_NAMES.get(self.values.dtype)

    @property
    def sparse_dim(self):
        return self.indices.shape[0]

    def to_dense(self):
        """np.ndarray of the shape; duplicate entries summed."""
        out = np.zeros(self.shape, dtype=self.values.dtype)
        for k in range(self.indices.shape[1]):
            out[tuple(self.indices[:, k])] += self.values[k]
        return out

    def __repr__(self):
        return (f"Coo(shape={self.shape}, dtype={self.dtype}, nnz={self.indices.shape[1]}, "
                f"coalesced={self.coalesced})")


class Compressed:
    """A decoded csr/csc/bsr/bsc tensor as stored: compressed_indices
    [batch..., n + 1], plain_indices [batch..., nnz], values [batch..., nnz,
    (bh, bw,) dense...], shape tuple, blocksize (r, c) ((1, 1) for csr/csc),
    dense_dim int, dtype (golden name)."""

    def __init__(self, kind, compressed_indices, plain_indices, values, shape,
                 blocksize=(1, 1), dense_dim=0, dtype=None):
        if kind not in COMPRESSED_NAMES:
            raise ValueError(f"unknown compressed kind {kind!r}")
        self.kind = kind
        self.compressed_indices = np.asarray(compressed_indices, dtype=np.int64)
        self.plain_indices = np.asarray(plain_indices, dtype=np.int64)
        self.values = np.asarray(values)
        self.shape = tuple(int(n) for n in shape)
        self.blocksize = tuple(int(n) for n in blocksize)
        self.dense_dim = int(dense_dim)
        self.dtype = dtype or NUMPY_NAMES.get(self.values.dtype)

    def entries(self):
        """(index tuple, value) per element of the sparse dims, in storage order."""
        nb = len(self.shape) - 2 - self.dense_dim
        by_col = self.kind in ("csc", "bsc")
        bh, bw = self.blocksize
        batch_shape = self.shape[:nb]
        nbatch = int(np.prod(batch_shape, dtype=np.int64))
        comp = self.compressed_indices.reshape(nbatch, -1)
        plain = self.plain_indices.reshape(nbatch, -1)
        nnz = plain.shape[1]
        vals = self.values.reshape((nbatch, nnz, bh, bw) + self.shape[nb + 2:])
        for b in range(nbatch):
            bidx = tuple(int(i) for i in np.unravel_index(b, batch_shape)) if nb else ()
            for c in range(comp.shape[1] - 1):
                for k in range(comp[b, c], comp[b, c + 1]):
                    r, col = (plain[b, k], c) if by_col else (c, plain[b, k])
                    for i in range(bh):
                        for j in range(bw):
                            yield bidx + (int(r) * bh + i, int(col) * bw + j), vals[b, k, i, j]

    def to_dense(self):
        out = np.zeros(self.shape, dtype=self.values.dtype)
        for idx, v in self.entries():
            out[idx] += v
        return out

    def __repr__(self):
        return (f"Compressed({self.kind}, shape={self.shape}, dtype={self.dtype}, "
                f"nnz={self.plain_indices.shape[-1]})")


class Masked:
    """A masked output on any storage, in the golden convention: mask True =
    specified. data and mask are both np.ndarray, both Coo or both
    Compressed (of one kind and shape); mask's dtype is bool."""

    def __init__(self, data, mask):
        self.data = data
        self.mask = mask


class Request:
    """One decoded request.
    case, op, profile, run: strings of the request line;
    inputs: list of decoded inputs; kwargs: dict of decoded kwargs;
    attrs: dict of the case's attributes (op, profile, rules, tolerance, ...);
    dtypes: the golden dtype name of each input (of the data for masked ones;
      "bfloat16" where a float32 array was handed over);
    layouts: the layout of each input: dense, coo, csr, csc, bsr, bsc,
      scalar, masked (dense storage), masked_coo, masked_csr, ...;
    mode: "numpy" or "torch"."""

    def __init__(self, case, op, profile, run, inputs, kwargs, attrs, dtypes, layouts, mode,
                 grad_outputs=None):
        self.case, self.op, self.profile, self.run = case, op, profile, run
        self.inputs, self.kwargs, self.attrs = inputs, kwargs, attrs
        self.dtypes, self.layouts, self.mode = dtypes, layouts, mode
        # a gradient case (golden format 3; only to serve(..., backward=True)):
        # the upstream gradient of each forward output, decoded like inputs;
        # the handler returns one gradient per input, None for none
        self.grad_outputs = list(grad_outputs or [])
        self.backward = bool(int(attrs.get("backward", 0) or 0))

    @property
    def rules(self):
        return tuple(r for r in str(self.attrs.get("rules", "")).split(",") if r)

    def __repr__(self):
        return f"Request({self.case!r}, run={self.run!r}, layouts={self.layouts})"


# ---- status of an exception ---------------------------------------------------------------

# DESIGN.md's error_class table, first match wins: (status, exception types,
# substrings of "<Type>: <message>"). torch's messages as the reference
# generator's tables class them (golden/mtgen/sparse.py _CLASSES, the sparse
# families' own tables), plus numpy's and Python's words for the same refusals.
# A heuristic for adapters that call torch or numpy generically; an adapter
# that knows its library refuses with Refusal(status) itself.
ERROR_CLASSES = (
    ("MASK_MISMATCH", (), ("Input masks must match", "masks must match")),
    ("DTYPE_MISMATCH", (), (
        "not implemented for '", "identity of", "with a bool tensor",
        "Could not infer output dtype", "not supported in MaskedTensor",
        "can't be cast to the desired output type", "UFuncTypeError",
        "did not contain a loop with signature", "not supported for the input types",
        "Integers to negative integer powers are not allowed", "Cannot cast ufunc",
        "unsupported dtype", "not supported for dtype", "numpy boolean", "on a bool tensor",
        "with two bool tensors", "Can't convert result type", "must match dtype of sparse",
        "expected scalar type", "Expected self to be a floating-point",
        "to have the same dtype")),
    ("LAYOUT_MISMATCH", (NotImplementedError,), (
        "Could not run 'aten::", "unsupported tensor layout",
        "Cannot get indices on an uncoalesced tensor", "must have the same layout",
        "requires coalesced input", "do not have strides", "do not have is_contiguous",
        "unsupported for Sparse", "not implemented for sparse tensors", "data layout of",
        "expects mask to have sparse compressed layout",
        "__torch_function__ handlers returned NotImplemented", "is not supported",
        "no implementation found for", "tensor layout", "Hybrid tensors are not supported",
        "Sparse division requires a scalar", "only supported by strided tensors",
        "INTERNAL ASSERT FAILED", "Expected result Tensor to be of format",
        "conversion from Sparse to SparseCsr", "MKL error", "MKL Sparse doesn't support",
        "computation on CPU is not implemented", "expected strided result tensor",
        "expected either 'mat1'", "must be dense", "expand is unsupported",
        "zeros_sparse_compressed", "Only batched sparse compressed",
        "operation not supported for mat", "self.is_sparse()", "Could not run",
        "Expected result to have sparse csr layout", "to have strided layout")),
    ("INDEX_OUT_OF_RANGE", (IndexError,), (
        "Dimension out of range", "out of bounds", "AxisError", "out of range")),
    ("SHAPE_MISMATCH", (), (
        "must match the size of tensor b", "must have the same size", "could not be broadcast",
        "shape mismatch", "shapes cannot be multiplied", "not aligned",
        "must have same number of dimensions", "dimensions except for the concatenation axis",
        "Sizes of tensors must match", "cannot reshape", "non-broadcastable output",
        "expected sizes of 'self' and 'other' to match", "to have same size, but",
        "expects sparse inputs with equal dimensionality", "to have the same shape",
        "incompatible sizes", "Expected dim 0 size", "Expected dim 1 size", "size mismatch",
        "expected self.size(-1) == vec.size(-1)")),
)


def status_of(exc: BaseException) -> "tuple[str, str]":
    """(status, message) for a library's exception: DESIGN.md's error_class
    table, first match wins (MASK_MISMATCH, DTYPE_MISMATCH, LAYOUT_MISMATCH,
    INDEX_OUT_OF_RANGE, SHAPE_MISMATCH), else INVALID_ARGUMENT. A Refusal
    keeps its own status; MemoryError is OUT_OF_MEMORY."""
    if isinstance(exc, Refusal):
        return exc.status, exc.message
    text = f"{type(exc).__name__}: {exc}".strip()
    if isinstance(exc, MemoryError):
        return "OUT_OF_MEMORY", text
    for status, types, needles in ERROR_CLASSES:
        if isinstance(exc, types) or any(s in text for s in needles):
            return status, text
    return "INVALID_ARGUMENT", text


# ---- kwargs.def ---------------------------------------------------------------------------

def _kwarg_types():
    """{(op, name): type} from spec/include/mt/kwargs.def beside this file, or {}."""
    here = os.path.dirname(os.path.abspath(__file__))
    path = os.path.join(here, os.pardir, os.pardir, "spec", "include", "mt", "kwargs.def")
    table = {}
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except OSError:
        return table
    for op, name, typ in re.findall(r"^\s*MT_KWARG\(\s*(\w+)\s*,\s*(\w+)\s*,\s*(\w+)\s*,",
                                    text, re.M):
        table[(op, name)] = typ
    return table


def _decode_str(v):
    return v.decode("utf-8") if isinstance(v, bytes) else v


def decode_kwarg(value, typ=None, mode="numpy"):
    """A kwargs attribute as a Python value (spec/golden-format.md, "Keyword
    arguments"); typ is its kwargs.def type when known."""
    v = value
    if isinstance(v, (bytes, str)):
        v = _decode_str(v)
        if mode == "torch" and typ in ("DTYPE", "LAYOUT"):
            return _torch_dtype(v) if typ == "DTYPE" else _torch_layout(v)
        return v
    a = np.asarray(v)
    if a.ndim == 0:
        x = a.item()
        if a.dtype == np.bool_:
            return bool(x)
        if np.issubdtype(a.dtype, np.integer):
            return bool(x) if typ == "BOOL" and x in (0, 1) else int(x)
        if np.issubdtype(a.dtype, np.floating):
            return float(x)
        return x
    if a.ndim == 1:
        if np.issubdtype(a.dtype, np.integer) or a.dtype == np.bool_:
            if typ in ("FLOATS", "FLOAT_TENSOR"):
                t = tuple(float(x) for x in a.tolist())
            else:
                t = tuple(int(x) for x in a.tolist())
        else:
            t = tuple(float(x) for x in a.tolist())
        if mode == "torch" and typ == "FLOAT_TENSOR":
            import torch
            return torch.tensor(list(t))
        return t
    return a


# ---- reading a request --------------------------------------------------------------------

class DecodeError(Exception):
    """A request file this module cannot read (answered INVALID_FORMAT, or
    NOT_SUPPORTED for a kind or dtype it does not know)."""

    def __init__(self, status, message):
        super().__init__(message)
        self.status = status


def _attr(g, name, default=None):
    v = g.attrs.get(name, default)
    return _decode_str(v) if isinstance(v, (bytes, str)) else v


def _shape(g):
    return tuple(int(n) for n in np.asarray(g.attrs.get("shape", []), dtype=np.int64).reshape(-1))


def _array(g, name, dtype_name):
    if name not in g:
        raise DecodeError("INVALID_FORMAT", f"{g.name}: no dataset '{name}'")
    a = np.asarray(g[name][()])
    if dtype_name == "bool":
        return a.astype(np.bool_)
    want = STORED.get(dtype_name)
    return a.astype(want, copy=False) if want is not None and a.dtype != want else a


def _read_raw(g):
    """A tensor group as (kind, dtype name, value) with numpy-mode values."""
    kind, dtype = _attr(g, "kind"), _attr(g, "dtype")
    if dtype not in STORED:
        raise DecodeError("NOT_SUPPORTED", f"{g.name}: dtype {dtype!r} unknown to mtcs_adapter")
    shape = _shape(g)
    if kind == "dense":
        return kind, dtype, _array(g, "values", dtype).reshape(shape)
    if kind == "scalar":
        a = _array(g, "value", dtype)
        x = a.reshape(()).item()
        if dtype == "bool":
            return kind, dtype, bool(x)
        return kind, dtype, (float(x) if dtype.startswith(("float", "bfloat")) else int(x))
    if kind == "coo":
        return kind, dtype, Coo(_array(g, "indices", "int64"), _array(g, "values", dtype), shape,
                                bool(np.asarray(g.attrs.get("coalesced", 0)).item()), dtype)
    if kind in COMPRESSED_NAMES:
        cname, pname = COMPRESSED_NAMES[kind]
        bs = tuple(int(n) for n in np.asarray(g.attrs.get("blocksize", [1, 1])).reshape(-1))
        return kind, dtype, Compressed(kind, _array(g, cname, "int64"), _array(g, pname, "int64"),
                                       _array(g, "values", dtype), shape, bs,
                                       int(np.asarray(g.attrs.get("dense_dim", 0)).item()), dtype)
    if kind == "masked":
        if "data" not in g or "mask" not in g:
            raise DecodeError("INVALID_FORMAT", f"{g.name}: masked tensor without data/mask")
        dk, _, data = _read_raw(g["data"])
        mk, _, mask = _read_raw(g["mask"])
        if dk != mk:
            raise DecodeError("INVALID_FORMAT", f"{g.name}: data is {dk}, mask is {mk}")
        return kind, dtype, Masked(data, mask)
    raise DecodeError("NOT_SUPPORTED", f"{g.name}: tensor kind {kind!r} unknown to mtcs_adapter")


def _dense_of(x):
    return x.to_dense() if isinstance(x, (Coo, Compressed)) else x


def _specified(mask):
    """The golden mask of any storage as a dense bool array (unstored = False)."""
    if isinstance(mask, Coo):
        out = np.zeros(mask.shape, dtype=np.bool_)
        for k in range(mask.indices.shape[1]):
            out[tuple(mask.indices[:, k])] |= bool(np.any(mask.values[k]))
        return out
    if isinstance(mask, Compressed):
        out = np.zeros(mask.shape, dtype=np.bool_)
        for idx, v in mask.entries():
            out[idx] |= bool(np.any(v))
        return out
    return np.asarray(mask, dtype=np.bool_)


def _to_numpy_input(kind, dtype, x):
    if kind != "masked":
        return x
    data = np.asarray(_dense_of(x.data))
    return np.ma.MaskedArray(data, mask=~_specified(x.mask))


def _owned(a):
    """a (numpy) as a tensor in storage torch owns: from_numpy's storage
    cannot be resized, so in-place ops that resize (a CSR add_) would fail."""
    import torch
    return torch.from_numpy(np.array(a, order="C")).clone()  # 0-d stays 0-d


def _to_torch_input(kind, dtype, x):
    import torch
    if kind == "scalar":
        return x
    if kind == "masked":
        from torch.masked import masked_tensor
        return masked_tensor(_to_torch_input("x", dtype, x.data),
                             _to_torch_input("x", "bool", x.mask))
    tdtype = _torch_dtype(dtype)
    if isinstance(x, Coo):
        t = torch.sparse_coo_tensor(_owned(x.indices), _owned(_contiguous(x.values)).to(tdtype),
                                    x.shape)
        return t._coalesced_(x.coalesced)
    if isinstance(x, Compressed):
        layout = _torch_layout("sparse_" + x.kind)
        return torch.sparse_compressed_tensor(
            _owned(x.compressed_indices), _owned(x.plain_indices),
            _owned(_contiguous(x.values)).to(tdtype), x.shape, layout=layout)
    return _owned(_contiguous(x)).to(tdtype)


def _torch_dtype(name):
    import torch
    try:
        return {"float32": torch.float32, "float64": torch.float64, "float16": torch.float16,
                "bfloat16": torch.bfloat16, "int64": torch.int64, "int32": torch.int32,
                "int8": torch.int8, "uint8": torch.uint8, "bool": torch.bool}[name]
    except KeyError:
        raise DecodeError("INVALID_FORMAT", f"unknown dtype name {name!r}") from None


def _torch_layout(name):
    import torch
    if name not in ("strided", "sparse_coo", "sparse_csr", "sparse_csc", "sparse_bsr",
                    "sparse_bsc"):
        raise DecodeError("INVALID_FORMAT", f"unknown layout name {name!r}")
    return getattr(torch, name)


def _layout_name(kind, x):
    if kind != "masked":
        return kind
    storage = ("coo" if isinstance(x.data, Coo) else
               x.data.kind if isinstance(x.data, Compressed) else "dense")
    return "masked" if storage == "dense" else f"masked_{storage}"


def _read_list(path, c, name, mode):
    """(tensors, dtypes, layouts) of the case's list group `name`
    (inputs/0.., grad_outputs/0..), decoded for mode."""
    tensors, dtypes, layouts = [], [], []
    grp = c.get(name)
    n = len(grp) if grp is not None else 0
    for k in range(n):
        if str(k) not in grp:
            raise DecodeError("INVALID_FORMAT", f"{path}: {name}/{k} missing")
        kind, dtype, raw = _read_raw(grp[str(k)])
        conv = _to_torch_input if mode == "torch" else _to_numpy_input
        try:
            tensors.append(conv(kind, dtype, raw))
        except DecodeError:
            raise
        except Exception as e:  # noqa: BLE001 - torch refuses it (uint8 MaskedTensor)
            raise DecodeError("NOT_SUPPORTED", f"{name}/{k} ({kind} {dtype}) cannot be "
                              f"built in mode {mode}: {type(e).__name__}: {e}") from None
        dtypes.append(dtype)
        layouts.append(_layout_name(kind, raw))
    return tensors, dtypes, layouts


def read_request(path, case, mode="numpy", kwarg_types=None):
    """The request file's case as (inputs, kwargs, attrs, dtypes, layouts)."""
    kwarg_types = kwarg_types or {}
    with h5py.File(path, "r") as f:
        cases = f.get("cases")
        if cases is None or len(cases) != 1:
            raise DecodeError("INVALID_FORMAT", f"{path}: not one case under /cases")
        cid = next(iter(cases))
        if case and cid != case:
            raise DecodeError("INVALID_FORMAT", f"{path}: holds case {cid!r}, not {case!r}")
        c = cases[cid]
        attrs = {k: (_decode_str(v) if isinstance(v, (bytes, str)) else
                     (v.item() if np.ndim(v) == 0 and hasattr(v, "item") else v))
                 for k, v in c.attrs.items()}
        op = str(attrs.get("op", ""))
        inputs, dtypes, layouts = _read_list(path, c, "inputs", mode)
        if int(attrs.get("backward", 0) or 0):  # a gradient case: its upstream gradients
            attrs["grad_outputs"], _, _ = _read_list(path, c, "grad_outputs", mode)
        kwargs = {}
        kw = c.get("kwargs")
        if kw is not None:
            for name, v in kw.attrs.items():
                kwargs[name] = decode_kwarg(v, kwarg_types.get((op, name)), mode)
    return inputs, kwargs, attrs, dtypes, layouts


# ---- writing outputs ----------------------------------------------------------------------

def _set_kind(g, kind, dtype, shape):
    g.attrs["kind"] = kind
    g.attrs["dtype"] = dtype
    g.attrs["shape"] = np.asarray(tuple(int(n) for n in shape), dtype=np.int64)


def _np_name(a, what):
    name = NUMPY_NAMES.get(np.asarray(a).dtype)
    if name is None:
        raise EncodeError(f"{what}: numpy dtype {np.asarray(a).dtype} has no golden name")
    return name


def _contiguous(a, dtype=None):
    """a as a C-contiguous array of its own ndim (np.ascontiguousarray makes a
    0-d array 1-d)."""
    a = np.asarray(a, dtype=dtype)
    return a if a.flags.c_contiguous else a.copy(order="C")


def _stored(a, name):
    a = _contiguous(a)
    return a.astype(np.uint8) if name == "bool" else a


def _write_dense(g, a, name=None):
    a = np.asarray(a)
    name = name or _np_name(a, "dense output")
    _set_kind(g, "dense", name, a.shape)
    g.create_dataset("values", data=_stored(a, name))


def _write_coo(g, x: Coo):
    name = x.dtype or _np_name(x.values, "COO values")
    _set_kind(g, "coo", name, x.shape)
    g.attrs["coalesced"] = np.bool_(x.coalesced)
    g.create_dataset("indices", data=_contiguous(x.indices, np.int64))
    g.create_dataset("values", data=_stored(x.values, name))


def _write_compressed(g, x: Compressed):
    name = x.dtype or _np_name(x.values, f"{x.kind} values")
    cname, pname = COMPRESSED_NAMES[x.kind]
    _set_kind(g, x.kind, name, x.shape)
    if x.dense_dim:
        g.attrs["dense_dim"] = np.int64(x.dense_dim)
    if x.kind in ("bsr", "bsc"):
        g.attrs["blocksize"] = np.asarray(x.blocksize, dtype=np.int64)
    g.create_dataset(cname, data=_contiguous(x.compressed_indices, np.int64))
    g.create_dataset(pname, data=_contiguous(x.plain_indices, np.int64))
    g.create_dataset("values", data=_stored(x.values, name))


def _is_torch(x):
    return type(x).__module__.split(".")[0] == "torch"


def _torch_to_plain(x):
    """A torch tensor (any layout) or MaskedTensor as this module's numpy-side
    objects, with its golden dtype name."""
    import torch
    from torch.masked import MaskedTensor
    if isinstance(x, MaskedTensor):
        data, dname = _torch_to_plain(x.get_data())
        mask, _ = _torch_to_plain(x.get_mask())
        return Masked(data, mask), dname
    if not isinstance(x, torch.Tensor):
        raise EncodeError(f"torch object of type {type(x).__name__}")
    names = {torch.float32: "float32", torch.float64: "float64", torch.float16: "float16",
             torch.bfloat16: "bfloat16", torch.int64: "int64", torch.int32: "int32",
             torch.int8: "int8", torch.uint8: "uint8", torch.bool: "bool"}
    if x.dtype not in names:
        raise EncodeError(f"torch dtype {x.dtype} has no golden name")
    name = names[x.dtype]
    x = x.detach().cpu()

    def np_of(t):
        t = t.to(torch.float32) if t.dtype == torch.bfloat16 else t
        return t.contiguous().numpy().copy()
    if x.layout == torch.sparse_coo:
        return Coo(np_of(x._indices()), np_of(x._values()), tuple(x.shape), x.is_coalesced(),
                   name), name
    comp = {torch.sparse_csr: "csr", torch.sparse_csc: "csc", torch.sparse_bsr: "bsr",
            torch.sparse_bsc: "bsc"}
    if x.layout in comp:
        kind = comp[x.layout]
        ci, pi = ((x.crow_indices(), x.col_indices()) if kind in ("csr", "bsr")
                  else (x.ccol_indices(), x.row_indices()))
        bs = (tuple(x.values().shape[x.dim() - x.dense_dim() - 1:][:2])
              if kind in ("bsr", "bsc") else (1, 1))
        return Compressed(kind, np_of(ci), np_of(pi), np_of(x.values()), tuple(x.shape), bs,
                          x.dense_dim(), name), name
    if x.layout != torch.strided:
        raise EncodeError(f"torch layout {x.layout}")
    return np_of(x), name


def write_output(g, x, where="output"):
    """Write one output x as a golden tensor group g (EncodeError if it cannot)."""
    name = None
    if _is_torch(x):
        x, name = _torch_to_plain(x)
    if isinstance(x, np.ma.MaskedArray):
        data = np.ma.getdata(x)
        spec = ~np.ma.getmaskarray(x)
        name = _np_name(data, where)
        _set_kind(g, "masked", name, data.shape)
        _write_dense(g.create_group("data"), data, name)
        _write_dense(g.create_group("mask"), spec, "bool")
    elif isinstance(x, Masked):
        d, m = x.data, x.mask
        if isinstance(d, Coo) and isinstance(m, Coo):
            dname = name or d.dtype or _np_name(d.values, where)
            _set_kind(g, "masked", dname, d.shape)
            _write_coo(g.create_group("data"), d)
            _write_coo(g.create_group("mask"), Coo(m.indices, np.asarray(m.values, np.bool_),
                                                   m.shape, m.coalesced, "bool"))
        elif isinstance(d, Compressed) and isinstance(m, Compressed):
            dname = name or d.dtype or _np_name(d.values, where)
            _set_kind(g, "masked", dname, d.shape)
            _write_compressed(g.create_group("data"), d)
            _write_compressed(g.create_group("mask"), Compressed(
                m.kind, m.compressed_indices, m.plain_indices, np.asarray(m.values, np.bool_),
                m.shape, m.blocksize, m.dense_dim, "bool"))
        elif isinstance(d, np.ndarray) and isinstance(m, np.ndarray):
            dname = name or _np_name(d, where)
            _set_kind(g, "masked", dname, d.shape)
            _write_dense(g.create_group("data"), d, dname)
            _write_dense(g.create_group("mask"), np.asarray(m, np.bool_), "bool")
        else:
            raise EncodeError(f"{where}: Masked with data {type(d).__name__} and mask "
                              f"{type(m).__name__}")
    elif isinstance(x, Coo):
        if name:
            x.dtype = name
        _write_coo(g, x)
    elif isinstance(x, Compressed):
        if name:
            x.dtype = name
        _write_compressed(g, x)
    elif isinstance(x, bool):
        _set_kind(g, "scalar", "bool", ())
        g.create_dataset("value", data=np.uint8(x))
    elif isinstance(x, int):
        _set_kind(g, "scalar", "int64", ())
        g.create_dataset("value", data=np.int64(x))
    elif isinstance(x, float):
        _set_kind(g, "scalar", "float64", ())
        g.create_dataset("value", data=np.float64(x))
    elif isinstance(x, (np.ndarray, np.generic)):
        _write_dense(g, x, name)
    else:
        raise EncodeError(f"{where}: cannot encode a {type(x).__module__}.{type(x).__name__}")


def write_response(path, outputs, grads=False):
    """The response file: root groups outputs/0..n-1, or (grads=True, a
    gradient case) grads/<k> for each input k whose gradient is not None.
    Written beside path and renamed, so mtcs never reads half a file;
    nothing is left on an error."""
    tmp = path + ".part"
    try:
        with h5py.File(tmp, "w", libver=("v110", "v110")) as f:
            og = f.create_group("grads" if grads else "outputs")
            for k, x in enumerate(outputs):
                if grads and x is None:
                    continue
                write_output(og.create_group(str(k)), x, f"{'grad' if grads else 'output'} {k}")
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


# ---- the loop -----------------------------------------------------------------------------

def _log(msg):
    sys.stderr.write(msg.rstrip("\n") + "\n")
    sys.stderr.flush()


def _answer(out, status, message=""):
    obj = {"status": status}
    if message:
        obj["message"] = message[:MAX_MESSAGE]
    out.write(json.dumps(obj, ensure_ascii=False) + "\n")
    out.flush()


def _protocol_stdout():
    """A private copy of the real stdout for protocol lines; fd 1 and
    sys.stdout then go to stderr, so nothing else can reach the pipe."""
    sys.stdout.flush()
    fd = os.dup(1)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    return io.open(fd, "w", encoding="utf-8", newline="\n", closefd=True)


def handle_line(line, handler, mode, kwarg_types, backward=False):
    """(status, message) for one request line; writes the response on OK."""
    try:
        msg = json.loads(line)
        case, op, path, resp = msg["case"], msg["op"], msg["request"], msg["response"]
        profile, run = msg.get("profile", "torch"), msg.get("run", "golden")
    except (ValueError, KeyError, TypeError) as e:
        return "INVALID_FORMAT", f"adapter: bad request line ({e}): {line[:200]!r}"
    try:
        inputs, kwargs, attrs, dtypes, layouts = read_request(path, case, mode, kwarg_types)
    except DecodeError as e:
        return e.status, f"adapter: {e}"
    except Exception as e:  # noqa: BLE001 - an unreadable file is the request's fault
        return "INVALID_FORMAT", f"adapter: cannot read {path}: {type(e).__name__}: {e}"
    grad_outputs = attrs.pop("grad_outputs", None)
    req = Request(case, op, profile, run, inputs, kwargs, attrs, dtypes, layouts, mode,
                  grad_outputs)
    if req.backward and not backward:  # mtcs sends none unless the hello said so
        return "NOT_SUPPORTED", "adapter: a gradient case, and this adapter takes none"
    try:
        outputs = handler(req)
    except Refusal as e:
        if e.status not in STATUSES or e.status == "OK":
            _log(f"{case}: the adapter refused with unknown status {e.status!r}")
            return "NOT_SUPPORTED", f"adapter: unknown status {e.status!r}: {e.message}"
        return e.status, e.message
    except Exception as e:  # noqa: BLE001 - the library's refusal, classified
        status, message = status_of(e)
        if os.environ.get("MTCS_ADAPTER_TRACE"):
            _log(f"{case}: {traceback.format_exc()}")
        return status, message
    if not isinstance(outputs, (list, tuple)):
        outputs = [outputs]
    if req.backward and (len(outputs) > len(inputs) or all(x is None for x in outputs)):
        return "NOT_SUPPORTED", (f"adapter: the handler returned {len(outputs)} gradients "
                                 f"for {len(inputs)} inputs, none of them a tensor"
                                 if outputs and all(x is None for x in outputs) else
                                 f"adapter: the handler returned {len(outputs)} gradients "
                                 f"for {len(inputs)} inputs")
    try:
        write_response(resp, outputs, grads=req.backward)
    except EncodeError as e:
        _log(f"{case}: cannot encode the handler's outputs: {e}")
        return "NOT_SUPPORTED", f"adapter: cannot encode {e}"
    except Exception as e:  # noqa: BLE001 - h5py refused a value: still an encoding failure
        _log(f"{case}: cannot write {resp}: {type(e).__name__}: {e}")
        return "NOT_SUPPORTED", f"adapter: cannot encode the outputs: {type(e).__name__}: {e}"
    return "OK", ""


def serve(name: str, version: str, profiles, handler, mode: str = "numpy",
          backward: bool = False) -> int:
    """The protocol loop on stdin/stdout: handshake, then one answer per
    request line until EOF (returns 0). handler(req) returns the list of
    outputs (see the module's docstring for the types in each mode).
    backward=True: the hello says "backward": true, and mtcs also sends
    gradient cases (req.backward; req.grad_outputs), for which the handler
    returns one gradient per input, None where the input gets none
    (spec/adapter-protocol.md, "Gradient requests")."""
    if mode not in ("numpy", "torch"):
        raise ValueError(f"mode must be 'numpy' or 'torch', not {mode!r}")
    out = _protocol_stdout()  # first: whatever an import below prints goes to stderr
    if mode == "torch":
        import torch  # noqa: F401 - fail at start, not on the first case
        # once per process is enough: these would repeat on every case
        warnings.filterwarnings("ignore", message="The PyTorch API of MaskedTensors")
        warnings.filterwarnings("ignore", message=".*support is in beta state")
    kwarg_types = _kwarg_types()
    hello = sys.stdin.readline()
    if not hello:
        return 0
    try:
        got = json.loads(hello).get("protocol")
    except (ValueError, AttributeError):
        got = None
    if got != PROTOCOL:
        _log(f"{name} adapter: mtcs speaks protocol {got!r}, this adapter {PROTOCOL}")
    mine = {"protocol": PROTOCOL, "name": name, "version": str(version),
            "profiles": list(profiles)}
    if backward:
        mine["backward"] = True
    out.write(json.dumps(mine) + "\n")
    out.flush()
    for line in sys.stdin:
        if not line.strip():
            continue
        status, message = handle_line(line, handler, mode, kwarg_types, backward)
        _answer(out, status, message)
    out.close()
    return 0

"""Sparse storage (SP-1 .. SP-4): MaskedTensors whose data and mask are both
COO or both CSR, one structure, and the error class of torch's refusals.

The families' sweeps call every op of ops.def once on COO storage and once
on CSR storage; whether torch takes the call is decided by running torch on
the case's own inputs (`outcome`), and its refusal is mapped to an mt status
by DESIGN.md's table (`error_class`). The generator then runs the case again
and checks the declared outcome, as for every case."""
import re
import warnings
from pathlib import Path

import torch
from torch.masked import masked_tensor

from .model import case_rng

OPS_DEF = Path(__file__).resolve().parents[2] / "spec" / "include" / "mt" / "ops.def"


def family_ops(family):
    """The ops of one family of ops.def, in table order: name -> rules."""
    out = {}
    for line in OPS_DEF.read_text().splitlines():
        m = re.match(r'MT_OP\(\s*\d+,\s*(\w+),\s*(\w+),\s*"([^"]*)"\)', line)
        if m and m.group(2) == family:
            out[m.group(1)] = tuple(filter(None, m.group(3).split(",")))
    return out


# (3, 4), five stored entries; the mask's stored values: entry 1 and 4 false
# (stored values whose mask is false are in every sweep case)
SHAPE = (3, 4)
INDICES = ((0, 0, 1, 2, 2), (0, 2, 1, 0, 3))
MASK_VALUES = (True, False, True, True, False)


def values(g, n, dt, positive=False, nonzero=False, small=False):
    if dt == torch.bool:
        return torch.rand(n, generator=g) < 0.5
    if dt.is_floating_point:
        v = torch.randn(n, generator=g, dtype=torch.float32)
        if positive:  # inside every unary op's domain (log, acosh: +1)
            v = v.abs() * 0.4 + 0.1
        return v.to(dt)
    if small:
        return torch.randint(0, 8, (n,), generator=g, dtype=torch.int64).to(dt)
    v = torch.randint(-9, 10, (n,), generator=g, dtype=torch.int64)
    if nonzero:
        v = torch.where(v == 0, torch.ones_like(v), v)
    return v.to(dt)


def coo(g, dt, vals=None, mask_values=MASK_VALUES, indices=INDICES, shape=SHAPE, **kw):
    """COO data and mask of one (coalesced) index set."""
    idx = torch.tensor(indices, dtype=torch.int64).reshape(2, -1)
    n = idx.shape[1]
    v = values(g, n, dt, **kw) if vals is None else torch.tensor(vals, dtype=dt)
    mv = torch.tensor(mask_values, dtype=torch.bool).reshape(-1)
    return masked_tensor(torch.sparse_coo_tensor(idx, v, shape).coalesce(),
                         torch.sparse_coo_tensor(idx, mv, shape).coalesce())


def csr(g, dt, **kw):
    """The COO case's entries in CSR (data and mask of one structure)."""
    m = coo(g, dt, **kw)
    return masked_tensor(m.get_data().to_sparse_csr(), m.get_mask().to_sparse_csr())


LAYOUTS = {"coo": coo, "csr": csr}


def plain(g, dt, layout, positive=True):
    """A plain (not masked) sparse tensor of SHAPE: "coo" coalesced,
    "coo_uncoalesced" with the first index stored twice, out of order, or
    "csr"; values inside every unary op's domain when positive."""
    idx = torch.tensor(INDICES, dtype=torch.int64).reshape(2, -1)
    if layout == "coo_uncoalesced":
        idx = torch.cat([idx[:, 1:], idx[:, :1], idx[:, :1]], dim=1)
    v = values(g, idx.shape[1], dt, positive=positive)
    t = torch.sparse_coo_tensor(idx, v, SHAPE)
    if layout == "coo_uncoalesced":
        return t
    t = t.coalesce()
    return t.to_sparse_csr() if layout == "csr" else t


def empty(layout):
    """A sparse MaskedTensor with no stored entry."""
    return lambda g, dt, **kw: LAYOUTS[layout](g, dt, vals=[], mask_values=[], indices=((), ()))


# DESIGN.md's table, first match wins (torch's exception type and message)
_CLASSES = (
    ("MASK_MISMATCH", ("Input masks must match",)),
    ("DTYPE_MISMATCH", ("not implemented for '", "identity of", "with a bool tensor",
                        "Could not infer output dtype", "not supported in MaskedTensor",
                        "can't be cast to the desired output type",
                        # a result dtype torch cannot write back: binary's, optim's and
                        # sparse_mask's (SPC-7) refusal alike
                        "Can't convert result type")),
    ("LAYOUT_MISMATCH", ("Could not run 'aten::", "unsupported tensor layout",
                         "Cannot get indices on an uncoalesced tensor", "must have the same layout",
                         "requires coalesced input",
                         "do not have strides", "do not have is_contiguous",
                         "unsupported for Sparse", "not implemented for sparse tensors",
                         "data layout of", "expects mask to have sparse compressed layout",
                         "__torch_function__ handlers returned NotImplemented",
                         "NotImplementedError")),
    ("INDEX_OUT_OF_RANGE", ("IndexError", "Dimension out of range")),
    # one message, one class in every family: sparse_mask's size check is
    # SHAPE_MISMATCH in mul (binary) and in sparse_mask itself (SPC-7)
    ("SHAPE_MISMATCH", ("must match the size of tensor b", "must have the same size",
                        "operands have incompatible sizes")),
)


def error_class(e, first=()):
    """The mt status of torch's exception e: a family's own table `first`
    (same shape as _CLASSES), then DESIGN.md's, first match wins."""
    msg = f"{type(e).__name__}: {e}"
    for cls, needles in (*first, *_CLASSES):
        if any(s in msg for s in needles):
            return cls
    return "INVALID_ARGUMENT"


def classifier(table):
    """error_class with a family's table checked first."""
    return lambda e: error_class(e, first=table)


def outcome(case_id, build, run, kwargs=None, classify=None):
    """None when torch takes the call on the case's own inputs, else the
    error class of its refusal (`classify(e)`: a family's own table first,
    default error_class). An input this torch cannot build (an older
    torch under golden/variants.py: no hybrid CSR in 1.13) declares ok: the
    case's own run then reports the build failure as unavailable."""
    try:
        inputs = build(case_rng(case_id))
    except Exception:  # noqa: BLE001 - never under the generator's torch
        return None
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            run(inputs, kwargs or {})
    except Exception as e:  # noqa: BLE001 - torch's refusal is data
        return (classify or error_class)(e)
    return None


def no_last_col(layout):
    """Stored entries in columns 0..2 of 4 only: torch rebuilds CSR results
    with sparse_csr_tensor(crow, col, values), which infers the column
    count from col_indices (SP-1, SP-2)."""
    return lambda g, dt, **kw: LAYOUTS[layout](g, dt, indices=((0, 1, 2), (0, 2, 1)),
                                               mask_values=(True, False, True), **kw)


# corner storages: (variant, build(layout) -> build(g, dt, **kw))
CORNERS = (("empty", empty), ("no_last_col", no_last_col))

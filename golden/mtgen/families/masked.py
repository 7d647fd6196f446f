"""Family masked: masked_tensor (MASK-1, MASK-2) and to_tensor (MASK-3)."""
import functools
import math

import torch
from torch.masked import masked_tensor

from ..inputs import rand_mask, rand_masked, randn, signed_zeros, tutorial_grad, tutorial_mask
from ..model import ALL_DTYPES, DTYPES, Case, check_ids, py

# op -> tolerance
OPS = {"masked_tensor": "exact", "to_tensor": "exact"}


def dense_pair(shape, p_true):
    def build(g, dt):
        return [randn(g, shape, dt), rand_mask(g, shape, p_true)]
    return build


def coo_pair(g, dt):
    grad = tutorial_grad(dt)
    return [grad, tutorial_mask(grad)]


def csr_pair(g, dt):
    """CSR data and mask of one structure; some stored mask values false."""
    d = randn(g, (3, 4), dt) * rand_mask(g, (3, 4), 0.6)
    d[0, 0] = 1.5  # at least one stored entry
    data = d.to_sparse_csr()
    mvals = torch.rand(data.values().shape, generator=g) < 0.7
    mask = torch.sparse_csr_tensor(data.crow_indices(), data.col_indices(), mvals, (3, 4))
    return [data, mask]


def csr_restricted(g, dt):
    """CSR data with more entries than the all-true mask: torch keeps the
    mask's entries (data's value there, 0 where data stores none)."""
    mask = rand_mask(g, (3, 4), 0.5)
    mask[0, 0] = mask[2, 3] = True
    d = randn(g, (3, 4), dt)
    d[2, 3] = 0.0  # a mask entry where data stores nothing
    return [d.to_sparse_csr(), mask.to_sparse_csr()]


def csr_mismatch(g, dt):
    """Equal nnz, another structure: torch's ValueError."""
    d = torch.zeros((3, 4), dtype=dt)
    d[0, 0], d[1, 2] = 1.0, 2.0
    m = torch.zeros((3, 4), dtype=torch.bool)
    m[0, 1] = m[1, 2] = True
    return [d.to_sparse_csr(), m.to_sparse_csr()]


def coo_of(cells, vals, dt, shape=(3, 4)):
    i = torch.tensor(cells, dtype=torch.int64).reshape(2, -1)
    return torch.sparse_coo_tensor(i, torch.tensor(vals, dtype=dt), shape).coalesce()


# COO data and mask of other nnz: torch restricts data to the mask's true
# entries (_sparse_coo_where) and compares the result's indices with the
# mask's with torch.eq, which broadcasts: 0 entries against 1 is an empty
# comparison (accepted: data nnz 0, mask nnz 1), k >= 2 against another
# count >= 2 is a size error, 1 against k a plain mismatch
def coo_restricted(g, dt):
    """data stores (0, 1); the all-true mask (0, 1), (1, 2): data's value
    there, 0 at (1, 2)."""
    return [coo_of([[0], [1]], [1.5], dt),
            coo_of([[0, 1], [1, 2]], [True, True], torch.bool)]


def coo_false_entry_data_empty(g, dt):
    """data stores nothing; the mask stores (1, 2) false: accepted."""
    return [coo_of([[], []], [], dt), coo_of([[1], [2]], [False], torch.bool)]


def coo_false_entries_other_nnz(g, dt):
    """data stores (0, 1); the mask (1, 2), (2, 0), both false: 0 against 2
    entries, torch's size error."""
    return [coo_of([[0], [1]], [1.5], dt),
            coo_of([[1, 2], [2, 0]], [False, False], torch.bool)]


def coo_one_true_other_nnz(g, dt):
    """data stores (0, 1), (1, 2); the mask (0, 1), (1, 2), (2, 0), only
    (1, 2) true: 1 entry against 3, not the same indices."""
    return [coo_of([[0, 1], [1, 2]], [1.5, 2.5], dt),
            coo_of([[0, 1, 2], [1, 2, 0]], [False, True, False], torch.bool)]


def bad_shape(g, dt):
    return [randn(g, (3, 4), dt), rand_mask(g, (3, 5), 0.6)]


def float_mask(g, dt, shape=(3, 4)):
    return [randn(g, (3, 4), dt), rand_mask(g, shape, 0.6).to(dt)]


def coo_mask_dense_data(g, dt, shape=(2, 4)):
    mask = tutorial_mask(tutorial_grad(dt)) if shape == (2, 4) else \
        rand_mask(g, shape, 0.6).to_sparse()
    return [randn(g, (2, 4), dt), mask]


def coo_data_float_mask(g, dt):
    return [tutorial_grad(dt), rand_mask(g, (2, 4), 0.6).to(dt)]


# variant: (layout token, build(g, dt), error_class, the first check torch makes)
# MASK-2 cases with two violations at once pin torch's order of checks:
# layout, then the mask's dtype, then the size.
MASKED_TENSOR_CASES = {
    "basic": ("dense", dense_pair((3, 4), 0.6), None, None),
    "1d": ("dense", dense_pair((5,), 0.6), None, None),
    "zero_size": ("dense", dense_pair((0, 3), 0.6), None, None),
    "3d": ("dense", dense_pair((2, 3, 2), 0.6), None, None),
    "all_false": ("dense", dense_pair((3, 4), 0.0), None, None),
    # one element (0-d and 1-d), specified: the CUDA path's copy plan of n = 1
    "0d": ("dense", dense_pair((), 1.0), None, None),
    "one_element": ("dense", dense_pair((1,), 1.0), None, None),
    "tutorial": ("coo", coo_pair, None, None),
    "basic_csr": ("csr", csr_pair, None, None),
    "restricted_to_mask": ("csr", csr_restricted, None, None),
    "restricted_to_mask_coo": ("coo", coo_restricted, None, None),
    "false_entry_data_empty": ("coo", coo_false_entry_data_empty, None, None),
    "false_entries_other_nnz": ("coo", coo_false_entries_other_nnz, "SHAPE_MISMATCH",
                                "must match the size"),
    "one_true_other_nnz": ("coo", coo_one_true_other_nnz, "INVALID_ARGUMENT",
                           "do not have the same indices"),
    "structure_mismatch": ("csr", csr_mismatch, "INVALID_ARGUMENT", "do not share"),
    "shape_mismatch": ("dense", bad_shape, "SHAPE_MISMATCH", None),
    "float_mask": ("dense", float_mask, "DTYPE_MISMATCH", None),
    "layout_mismatch": ("dense_coo", coo_mask_dense_data, "LAYOUT_MISMATCH", None),
    "layout_and_dtype_mismatch": ("coo_dense", coo_data_float_mask, "LAYOUT_MISMATCH",
                                  "must have the same layout"),
    "layout_and_shape_mismatch": ("dense_coo",
                                  functools.partial(coo_mask_dense_data, shape=(3, 5)),
                                  "LAYOUT_MISMATCH", "must have the same layout"),
    "dtype_and_shape_mismatch": ("dense", functools.partial(float_mask, shape=(3, 5)),
                                 "DTYPE_MISMATCH", "mask must have dtype bool"),
}


def csr_storage(g, dt):
    return [masked_tensor(*csr_pair(g, dt)), 0.0]


def coo_storage(g, dt):
    grad = tutorial_grad(dt)
    return [masked_tensor(grad, tutorial_mask(grad)), 0.0]


# variant: (build(g, dt), fill, error_class)
TO_TENSOR_CASES = {
    "fill_0": (lambda g, dt: rand_masked(g, (3, 4), dt), 0.0, None),
    "fill_neginf": (lambda g, dt: rand_masked(g, (3, 4), dt), -math.inf, None),
    "fill_nan": (lambda g, dt: rand_masked(g, (3, 4), dt), math.nan, None),
    "fill_7_5": (lambda g, dt: rand_masked(g, (3, 4), dt), 7.5, None),
    # signed zeros: -0.0 data kept, -0.0 fill written (the sign is compared)
    "fill_negzero": (lambda g, dt: signed_zeros(g, (3, 4), dt), -0.0, None),
    # torch: masked_fill has no sparse kernel -> NotImplementedError
    "coo_storage": (None, 0.0, "LAYOUT_MISMATCH"),
    # torch: masked_fill has no sparse CSR kernel -> "unsupported tensor layout"
    "csr_storage": ("csr", 0.0, "LAYOUT_MISMATCH"),
}


def rand_data(g, shape, dt):
    """Random data of any dtype: normal floats, small integers (signed ones
    of both signs), bools."""
    x = randn(g, shape, torch.float64) * 4
    if dt == torch.bool:
        return x > 0
    if dt == torch.uint8:
        x = x.abs()
    return x.to(dt)


def sparse_pair(g, dt, layout, shape=(3, 4)):
    """[data, mask] of COO or CSR storage sharing one structure (the mask's
    true positions; bool data may store False)."""
    idx = rand_mask(g, shape, 0.6).nonzero().T
    data = torch.sparse_coo_tensor(idx, rand_data(g, shape, dt)[tuple(idx)], shape).coalesce()
    mask = torch.sparse_coo_tensor(idx, torch.ones(idx.shape[1], dtype=torch.bool),
                                   shape).coalesce()
    if layout == "csr":
        return [data.to_sparse_csr(), mask.to_sparse_csr()]
    return [data, mask]


def other_dtype_cases(short, dt):
    """masked_tensor and to_tensor beyond float32/float64: construction in
    every dtype MaskedTensor accepts, on dense, COO and CSR storage, its
    refusal of uint8 and bfloat16 on each (MASK-2), and
    to_tensor's fills cast to the data dtype (MASK-3: 7.5 -> 7 in integers,
    nonzero -> True in bool)."""
    out = []
    if dt in (torch.uint8, torch.bfloat16):  # MaskedTensor refuses both (_validate_members)
        builds = {"dense": lambda g: [rand_data(g, (3, 4), dt), rand_mask(g, (3, 4), 0.6)],
                  "coo": lambda g: sparse_pair(g, dt, "coo"),
                  "csr": lambda g: sparse_pair(g, dt, "csr")}
        return [Case(
            id=f"masked_tensor.{layout}.{short}.dtype_refused", op="masked_tensor",
            rules=("MASK-2",), tolerance="exact", build=build,
            run=lambda ins, kw: [masked_tensor(ins[0], ins[1])],
            torch_call="torch.masked.masked_tensor(data, mask)", error_class="DTYPE_MISMATCH",
            error_match="is not supported in MaskedTensor", poison=False)
            for layout, build in builds.items()]
    for layout in ("coo", "csr"):
        out.append(Case(
            id=f"masked_tensor.{layout}.{short}.basic", op="masked_tensor", rules=("MASK-1",),
            tolerance="exact", build=lambda g, layout=layout: sparse_pair(g, dt, layout),
            run=lambda ins, kw: [masked_tensor(ins[0], ins[1])],
            torch_call="torch.masked.masked_tensor(data, mask)", poison=False))
    for variant, shape, p in (("basic", (3, 4), 0.6), ("zero_size", (0, 3), 0.6),
                              ("all_false", (2, 3), 0.0)):
        out.append(Case(
            id=f"masked_tensor.dense.{short}.{variant}", op="masked_tensor", rules=("MASK-1",),
            tolerance="exact",
            build=lambda g, shape=shape, p=p: [rand_data(g, shape, dt), rand_mask(g, shape, p)],
            run=lambda ins, kw: [masked_tensor(ins[0], ins[1])],
            torch_call="torch.masked.masked_tensor(data, mask)", poison=False))
    for variant, v in (("fill_0", 0.0), ("fill_7_5", 7.5), ("fill_neg1", -1)):
        out.append(Case(
            id=f"to_tensor.masked.{short}.{variant}", op="to_tensor", rules=("MASK-3",),
            tolerance="exact",
            build=lambda g, v=v: [masked_tensor(rand_data(g, (3, 4), dt),
                                                rand_mask(g, (3, 4), 0.6)), v],
            run=lambda ins, kw: [ins[0].to_tensor(ins[1])], torch_call=f"m.to_tensor({py(v)})"))
    return out


def cases():
    out = []
    for short, dt in ALL_DTYPES.items():
        if dt not in DTYPES.values():
            out += other_dtype_cases(short, dt)
    for short, dt in DTYPES.items():
        for variant, (layout, build, err, first) in MASKED_TENSOR_CASES.items():
            out.append(Case(
                id=f"masked_tensor.{layout}.{short}.{variant}", op="masked_tensor",
                rules=("MASK-2",) if err else ("MASK-1",), tolerance=OPS["masked_tensor"],
                build=functools.partial(build, dt=dt),
                run=lambda ins, kw: [masked_tensor(ins[0], ins[1])],
                torch_call="torch.masked.masked_tensor(data, mask)",
                error_class=err, error_match=first, poison=False))
        for variant, (build, v, err) in TO_TENSOR_CASES.items():
            if build is None:
                b = functools.partial(coo_storage, dt=dt)
            elif build == "csr":
                b = functools.partial(csr_storage, dt=dt)
            else:
                b = lambda g, dt=dt, v=v, build=build: [build(g, dt), v]  # noqa: E731
            out.append(Case(
                id=f"to_tensor.masked.{short}.{variant}", op="to_tensor",
                rules=("MASK-3",), tolerance=OPS["to_tensor"], build=b,
                run=lambda ins, kw: [ins[0].to_tensor(ins[1])],
                torch_call=f"m.to_tensor({py(v)})", error_class=err,
                error_match=("unsupported tensor layout" if variant == "csr_storage" else
                             "NotImplementedError") if err else None))
    return check_ids(out)

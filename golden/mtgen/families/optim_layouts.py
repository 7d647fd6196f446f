"""Family optim, continued: Adagrad's gradients in the layouts beyond the
tutorial's 2-D COO (ADA-8): hybrid COO (nn.Embedding's rows x dim), empty
gradients (nnz = 0: torch's `_make_sparse` builds an empty tensor), and the
compressed layouts, which `param.grad = grad` refuses (CSR, CSC, and BSR
and BSC with 2 x 2 blocks)."""

import torch
from torch.masked import masked_tensor

from ..inputs import randn, uniform
from ..model import DTYPES
from .sparse_optim import SHAPE, empty_grad, hybrid_grad  # the same shapes as SparseAdam's


GRADS = {
    "hybrid": lambda g, dt: hybrid_grad(g, dt),
    "hybrid_uncoalesced": lambda g, dt: hybrid_grad(g, dt, duplicates=True),
    "empty": lambda g, dt: empty_grad(dt, 2),
    "empty_hybrid": lambda g, dt: empty_grad(dt, 1),
    "csr": lambda g, dt: randn(g, SHAPE, dt).to_sparse_csr(),
    "csc": lambda g, dt: randn(g, SHAPE, dt).to_sparse_csc(),
    "bsr": lambda g, dt: randn(g, SHAPE, dt).to_sparse_bsr((2, 2)),
    "bsc": lambda g, dt: randn(g, SHAPE, dt).to_sparse_bsc((2, 2)),
}
COMPRESSED = ("csr", "csc", "bsr", "bsc")


def inputs(kind, g, dt):
    param = uniform(g, SHAPE, dt, 1.0, 2.0)
    return [param, GRADS[kind](g, dt), uniform(g, SHAPE, dt, 0.5, 3.0)]


ASSIGN = "a gradient to a tensor that has data of a different type"
# (path, grad kind, expected error class or None, the error's text). The
# tutorial's masked path builds its mask as (grad.to_dense() != 0).to_sparse(),
# a COO tensor without dense dims: with a hybrid grad masked_tensor refuses it.
ROWS = [
    ("sparse", "hybrid", None, None), ("sparse", "hybrid_uncoalesced", None, None),
    ("sparse", "empty", None, None), ("sparse", "empty_hybrid", None, None),
    ("masked", "hybrid", "LAYOUT_MISMATCH", "mask.dense_dim() must match input.dense_dim()"),
    ("masked", "empty", None, None),
] + [(path, kind, "LAYOUT_MISMATCH", ASSIGN) for kind in COMPRESSED for path in ("dense", "sparse")]


def nnz0_nnz1_inputs(g, dt):
    """A MaskedTensor gradient of COO data with no entry and a COO mask with
    one (False): torch's masked_tensor accepts the pair (it compares their
    indices with torch.eq, which broadcasts 0 entries against 1: MASK-1)."""
    data = torch.sparse_coo_tensor(torch.zeros((2, 0), dtype=torch.long),
                                   torch.zeros(0, dtype=dt), SHAPE)
    mask = torch.sparse_coo_tensor(torch.tensor([[1], [2]]), torch.tensor([False]), SHAPE)
    param = uniform(g, SHAPE, dt, 1.0, 2.0)
    return [param, masked_tensor(data, mask), uniform(g, SHAPE, dt, 0.5, 3.0)]


def layout_cases():
    from .optim import RANDOM_HP, adagrad_case  # optim imports this module
    out = []
    for short, dt in DTYPES.items():
        for path, kind, err, match in ROWS:
            layout = kind if kind in COMPRESSED else "coo"
            out.append(adagrad_case(path, layout, short, f"grad_{kind}",
                                    lambda g, k=kind, dt=dt: inputs(k, g, dt), RANDOM_HP,
                                    ("ADA-8",), error_class=err, error_match=match,
                                    compare_forms=False))
    # the masked path's first op on that pair (pow) is refused: torch's
    # sparse where has no bitwise_not (Could not run 'aten::bitwise_not')
    out.append(adagrad_case("masked", "masked", "f32", "grad_masked_data_nnz0_mask_nnz1",
                            lambda g: nnz0_nnz1_inputs(g, DTYPES["f32"]), RANDOM_HP,
                            ("ADA-8",), error_class="LAYOUT_MISMATCH",
                            error_match="Could not run 'aten::", compare_forms=False))
    return out

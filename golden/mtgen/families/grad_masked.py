"""Family grad_masked: gradients of MaskedTensor ops (golden format 3,
mtgen/grad.py; spec/SEMANTICS.md GRAD-*). The overview's autograd cells
first (GRAD-1..GRAD-4), then backward cases derived from the forward
families' cases (grad.grad_cases)."""
import torch
from torch.masked import masked_tensor

from ..grad import GRAD_TOL
from ..inputs import rand_mask, randn
from ..model import DTYPES, Case, check_ids


def overview_cases():
    """The MaskedTensor overview's autograd examples, per float dtype:
    sum(m).backward() (a grad with m's mask), the fully masked sum, x * y
    with a masked x and a plain y (y's grad becomes a MaskedTensor), and
    view-then-backward."""
    out = []
    for short, dt in DTYPES.items():
        tol = GRAD_TOL[dt]

        def sum_in(g, dt=dt, p=0.5):
            return [masked_tensor(randn(g, (2, 2, 3), dt) * 5, rand_mask(g, (2, 2, 3), p))]

        def none_in(g, dt=dt):
            return [masked_tensor(randn(g, (2, 2, 3), dt) * 5,
                                  torch.zeros(2, 2, 3, dtype=torch.bool))]

        def mul_in(g, dt=dt):
            return [masked_tensor(torch.tensor([3.0, 4.0], dtype=dt),
                                  torch.tensor([True, False])),
                    torch.tensor([2.0, 1.0], dtype=dt)]

        def view_in(g, dt=dt):
            t = torch.arange(4, dtype=dt).reshape(1, 2, 2)
            return [masked_tensor(t.clone(), t > 0)]

        out += [
            Case(f"sum.masked.{short}.overview_grad", "sum", ("GRAD-1", "GRAD-2"), tol, sum_in,
                 lambda x, kw: [torch.sum(x[0])], "torch.sum(m)", backward=True),
            Case(f"sum.masked.{short}.overview_fully_masked_grad", "sum", ("GRAD-1", "GRAD-3"),
                 tol, none_in, lambda x, kw: [torch.sum(x[0])], "torch.sum(m)", backward=True),
            Case(f"mul.masked_dense.{short}.overview_grad", "mul", ("GRAD-1", "GRAD-4"), tol,
                 mul_in, lambda x, kw: [x[0] * x[1]], "x * y", backward=True),
            Case(f"view.masked.{short}.overview_grad", "view", ("GRAD-1", "GRAD-2"), tol,
                 view_in, lambda x, kw: [x[0].view(kw["size"])], "mt.view([4])",
                 kwargs={"size": (4,)}, backward=True),
        ]
    return out


def cases():
    return check_ids(overview_cases())

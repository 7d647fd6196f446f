"""Family reduce: sum mean prod amin amax (RED-1, RED-2, RED-3)."""
import functools

import torch

from ..inputs import as_dense, masked, rand_mask, randn, uniform
from ..model import DTYPES, Case, check_ids, float_tol, py

# op -> (float32 tolerance, float64 tolerance, whether torch takes a tuple of dims)
OPS = {
    "sum": ("abs:1e-5", "abs:1e-12", True),
    "mean": ("abs:1e-5", "abs:1e-12", True),
    "prod": ("abs:1e-5", "abs:1e-12", False),  # torch.prod(m, (0, 2)): TypeError
    "amin": ("abs:1e-5", "abs:1e-12", True),
    "amax": ("abs:1e-5", "abs:1e-12", True),
}


def reduce_input(shape, p_true=0.65, empty_row=None):
    def build(g, dt, op):
        # prod: values in [0.5, 1.5] keep the product far from overflow
        data = uniform(g, shape, dt, 0.5, 1.5) if op == "prod" else randn(g, shape, dt)
        mask = rand_mask(g, shape, p_true)
        if empty_row is not None:
            mask[empty_row] = False
        return [masked(data, mask)]
    return build


N, P = -0.0, 0.0
# Only signed zeros: the sign of each result is the whole answer. The sum
# starts at +0 (a slice of only -0 sums to +0: column 2, row 0), prod
# multiplies the signs (row 1: -0 * +0 * +0 = -0), amin/amax keep the first
# of equal zeros (row 1 vs row 2). Every result is exact: tolerance `exact`.
ZEROS_DATA = [[N, N, N, N], [N, P, N, P], [P, N, N, N]]
ZEROS_MASK = [[1, 1, 1, 1], [1, 1, 0, 1], [1, 0, 1, 1]]


def zeros_input(g, dt, op):
    data = torch.tensor(ZEROS_DATA, dtype=dt)
    return [masked(data, torch.tensor(ZEROS_MASK, dtype=torch.bool))]


def negative_zeros_input(g, dt, op):
    """Random masks over data that is -0.0 everywhere: sum/mean give +0."""
    data = torch.full((3, 4), -0.0, dtype=dt)
    return [masked(data, rand_mask(g, (3, 4), 0.7), {(0, 0): -0.0})]


# variant: (build, dim, keepdim, tolerance override);
# dim None = all-reduce, keepdim None = not passed
REDUCE_CASES = {
    "all": (reduce_input((3, 4)), None, None, None),
    "all_3d": (reduce_input((2, 3, 4)), None, None, None),
    "dim0": (reduce_input((3, 4)), 0, None, None),
    "dim1": (reduce_input((3, 4)), 1, None, None),
    "dimneg1": (reduce_input((3, 4)), -1, None, None),
    "dim1_keepdim": (reduce_input((3, 4)), 1, True, None),
    "dim0_3d": (reduce_input((2, 3, 4)), 0, None, None),
    "dim1_3d": (reduce_input((2, 3, 4)), 1, None, None),
    "dimneg1_3d": (reduce_input((2, 3, 4)), -1, None, None),
    "dim1_keepdim_3d": (reduce_input((2, 3, 4)), 1, True, None),
    "dims0_2_3d": (reduce_input((2, 3, 4)), (0, 2), None, None),
    "fully_masked_all": (reduce_input((3, 4), p_true=0.0), None, None, None),
    "fully_masked_dim1": (reduce_input((3, 4), empty_row=1), 1, None, None),
    "zero_size_dim1": (reduce_input((0, 4)), 1, None, None),
    "signed_zeros_all": (zeros_input, None, None, "exact"),
    "signed_zeros_dim0": (zeros_input, 0, None, "exact"),
    "signed_zeros_dim1": (zeros_input, 1, None, "exact"),
    "negative_zeros_all": (negative_zeros_input, None, None, "exact"),
}


def reduction(op, dim, keepdim):
    """(run, torch_call, kwargs) for torch.<op>(m[, dim][, keepdim=...])."""
    fn, args, kwargs = getattr(torch, op), [], {}
    if dim is not None:
        args, kwargs["dim"] = [dim], dim
    kw = {} if keepdim is None else {"keepdim": keepdim}
    kwargs.update(kw)
    call = ", ".join(["m"] + [py(a) for a in args] + [f"{k}={py(v)}" for k, v in kw.items()])
    return (lambda ins, _: [fn(ins[0], *args, **kw)]), f"torch.{op}({call})", kwargs


def with_red3(rules, outputs):
    """Tag RED-3 when some output element is fully masked (filled)."""
    out = outputs[0]
    if out.numel() and not bool(as_dense(out.get_mask()).all()) and "RED-3" not in rules:
        return rules + ("RED-3",)
    return rules


def cases():
    out = []
    for short, dt in DTYPES.items():
        for op, (tol32, tol64, tuple_dims) in OPS.items():
            for variant, (build, dim, keepdim, tol) in REDUCE_CASES.items():
                run, call, kwargs = reduction(op, dim, keepdim)
                err = "INVALID_ARGUMENT" if isinstance(dim, tuple) and not tuple_dims else None
                out.append(Case(
                    id=f"{op}.masked.{short}.{variant}", op=op,
                    rules=("RED-1",) if dim is None else ("RED-2",),
                    tolerance=tol or float_tol(dt, tol32, tol64),
                    build=functools.partial(build, dt=dt, op=op), run=run,
                    torch_call=call, kwargs=kwargs, check_masked_out=True,
                    error_class=err, tag_rules=with_red3))
    return check_ids(out)

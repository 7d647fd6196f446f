"""Input makers. Every random draw comes from the case's generator g."""
import math

import torch
from torch.masked import MaskedTensor, masked_tensor


def randn(g, shape, dt):
    return torch.randn(shape, generator=g, dtype=dt)


def uniform(g, shape, dt, lo, hi):
    return torch.rand(shape, generator=g, dtype=dt) * (hi - lo) + lo


def log_uniform(g, shape, dt, lo_exp, hi_exp):
    """Random signs times magnitudes 10**U(lo_exp, hi_exp)."""
    sign = torch.where(torch.rand(shape, generator=g) < 0.5, -1.0, 1.0)
    mag = torch.pow(10.0, torch.rand(shape, generator=g, dtype=torch.float64)
                    * (hi_exp - lo_exp) + lo_exp)
    return (sign * mag).to(dt)


def rand_mask(g, shape, p_true):
    return torch.rand(shape, generator=g) < p_true


def masked(data, mask, force=None):
    """MaskedTensor; `force` maps index tuples to data values made mask-true."""
    data, mask = data.clone(), mask.clone()
    for idx, val in (force or {}).items():
        data[idx], mask[idx] = val, True
    return masked_tensor(data, mask)


def rand_masked(g, shape, dt, p_true=0.6, lo=None, hi=None, force=None):
    data = randn(g, shape, dt) if lo is None else uniform(g, shape, dt, lo, hi)
    return masked(data, rand_mask(g, shape, p_true), force)


def signed_zeros(g, shape, dt, others=(-0.0, 0.0, -2.0, 3.0), p_true=0.75):
    """A masked tensor whose data are drawn from `others` (signed zeros and
    small integers: every sum and product of them is exact); the first
    len(others) elements (row-major) hold each value once, masked in."""
    pick = torch.randint(len(others), shape, generator=g)
    data = torch.tensor(others, dtype=dt)[pick]
    mask = rand_mask(g, shape, p_true)
    n = min(len(others), data.numel())
    data.view(-1)[:n] = torch.tensor(others[:n], dtype=dt)
    mask.view(-1)[:n] = True
    return masked(data, mask)


def signed_zero_pairs(g, shape, dt, values):
    """Two data tensors and a mask: the first len(values)**2 elements
    (row-major) hold every pair (values[i], values[j]) once, masked in; the
    rest are random picks under a random mask."""
    n = len(values)
    v = torch.tensor(values, dtype=dt)
    a = v[torch.randint(n, shape, generator=g)]
    b = v[torch.randint(n, shape, generator=g)]
    mask = rand_mask(g, shape, 0.6)
    k = n * n
    assert a.numel() >= k
    a.view(-1)[:k] = v.repeat_interleave(n)
    b.view(-1)[:k] = v.repeat(n)
    mask.view(-1)[:k] = True
    return a, b, mask


def tutorial_grad(dt=torch.float32, values=(3.0, 4.0, 5.0)):
    i = torch.tensor([[0, 1, 1], [2, 0, 2]])
    v = torch.tensor(values, dtype=dt)
    return torch.sparse_coo_tensor(i, v, [2, 4])


def tutorial_mask(grad):
    return (grad.to_dense() != 0).to_sparse()


def rand_coo(g, shape, dt, density=0.3, duplicates=0):
    """COO with round(density * numel) distinct entries; `duplicates` extra
    entries repeat existing indices and the order is shuffled (uncoalesced)."""
    numel = math.prod(shape)
    flat = torch.randperm(numel, generator=g)[: round(density * numel)]
    if duplicates:
        flat = torch.cat([flat, flat[:duplicates]])
        flat = flat[torch.randperm(flat.numel(), generator=g)]
    else:
        flat = flat.sort().values
    idx = torch.stack(torch.unravel_index(flat, shape))
    t = torch.sparse_coo_tensor(idx, randn(g, (flat.numel(),), dt), shape)
    return t if duplicates else t.coalesce()


def coo_as_masked(grad):
    """The same specified values as a dense-storage MaskedTensor."""
    grad = grad.coalesce()
    mask = torch.zeros(grad.shape, dtype=torch.bool)
    mask[tuple(grad.indices())] = True
    return masked_tensor(grad.to_dense(), mask)


def masked_as_coo(m):
    idx = m.get_mask().nonzero().T
    return torch.sparse_coo_tensor(idx, m.get_data()[tuple(idx)], m.shape).coalesce()


def as_dense(t):
    if isinstance(t, MaskedTensor):
        t = t.get_data()
    return t.to_dense() if t.layout != torch.strided else t


def is_masked_dense(x):
    return isinstance(x, MaskedTensor) and x.get_data().layout == torch.strided


def clone(x):
    if isinstance(x, MaskedTensor):
        return masked_tensor(x.get_data().clone(), x.get_mask().clone())
    return x.clone() if isinstance(x, torch.Tensor) else x


def to_f64(x):
    if isinstance(x, MaskedTensor):
        return masked_tensor(to_f64(x.get_data()), x.get_mask())
    if isinstance(x, torch.Tensor) and x.is_floating_point():
        return x.to(torch.float64)
    return x


def neg_zeros(t):
    """How many -0.0 a tensor (a MaskedTensor: where masked in) holds."""
    if isinstance(t, MaskedTensor):
        d, m = as_dense(t), as_dense(t.get_mask())
        d = d[m]
    else:
        d = as_dense(t)
    return int(((d == 0) & torch.signbit(d)).sum())


def expect_neg_zero(ins, outs):
    """A signed-zero case's check: some output holds a -0.0 where it is
    compared, or the case would not test the sign."""
    from .model import Surprise
    if not any(isinstance(o, torch.Tensor) and neg_zeros(o) for o in outs):
        raise Surprise("no -0.0 in any output: the case does not test the sign of zero")

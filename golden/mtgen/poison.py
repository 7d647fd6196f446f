"""Stored poison: what the golden files hold in the masked-out data of masked
inputs, chosen per op to be adversarial for that op.

An implementation that reads masked-out data should be caught by the very
value it reads: a min-like op by a value below every specified one, a
max-like op by one above, a sum/mean by a huge value, a product by a huge
value or 0, a divisor by 0. The k-th case of an op (in the family's case
order) takes POISON[op][k % len]. The runner additionally re-runs every case
with its own list of poisons (DESIGN.md, "Poison invariance").
"""
import math

import torch
from torch.masked import MaskedTensor, masked_tensor

from .inputs import is_masked_dense

INF, NAN = math.inf, math.nan

# op -> the poisons its cases cycle through; ops not listed use DEFAULT.
POISON = {
    "amin": (-1e30, -INF),            # wins any min that reads it
    "amax": (1e30, INF),              # wins any max that reads it
    "sum": (1e30, -1e30, NAN),        # swamps any sum that reads it
    "mean": (1e30, -1e30, NAN),
    "prod": (1e30, 0.0, NAN),         # overflows or zeroes a product
    "div": (NAN, 0.0, -1e30),         # 0: a divisor read gives inf
    "log": (-1e30, NAN, 0.0),         # outside the domain: NaN / -inf
    "sqrt": (-1e30, NAN, INF),
    "adagrad_masked": (1e30, NAN),    # squares to inf in the accumulator
}
DEFAULT = (NAN, 1e30, -1e30, -INF)


def poison_name(value: float) -> str:
    """The `poison` attribute: `nan`, `inf`, `-inf` or Python's repr."""
    if math.isnan(value):
        return "nan"
    return repr(value) if math.isfinite(value) else ("inf" if value > 0 else "-inf")


def poison_for(op: str, k: int) -> float:
    table = POISON.get(op, DEFAULT)
    return table[k % len(table)]


def cast_poison(value, dtype):
    """The poison as dtype can hold it, as the runner's re-runs do
    (conformance/poison.c): float16 clamps +-1e30 to +-65504; bfloat16 has
    float32's range and rounds +-1e30 to nearest even through float32
    (1.0002556e30, bits 0x714a), as torch's fill and the runner's
    mt_set_f64 both do; integers take
    the end of their range the poison stands for (NaN and positives the
    max, negatives the min, zeros 0); bool is True for NaN and positives."""
    if dtype.is_floating_point:
        if dtype == torch.float16 and math.isfinite(value) and abs(value) > 65504:
            return math.copysign(65504.0, value)
        if dtype == torch.bfloat16:
            return torch.tensor(value, dtype=torch.float32).to(dtype).item()
        return value
    up = math.isnan(value) or value > 0
    if dtype == torch.bool:
        return bool(up)
    if value == 0:
        return 0
    info = torch.iinfo(dtype)
    return info.max if up else info.min


def poisoned(m, value):
    data, mask = m.get_data().clone(), m.get_mask()
    if data.layout == torch.sparse_csr:  # data and mask of one structure
        vals = data.values()
        vals[~mask.values()] = cast_poison(value, data.dtype)
        return masked_tensor(data, mask)
    data[~mask] = cast_poison(value, data.dtype)
    return masked_tensor(data, mask)


def _poisonable(x):
    """A dense- or CSR-storage MaskedTensor, or a masked pair that poisons
    itself (numpy_ma's NpMasked: x.poisoned(value))."""
    return is_masked_dense(x) or hasattr(x, "poisoned") or (
        isinstance(x, MaskedTensor) and x.get_data().layout == torch.sparse_csr)


def apply_poison(inputs, op, k):
    """(inputs with every dense-storage masked input poisoned, attribute)."""
    if not any(_poisonable(x) for x in inputs):
        return inputs, "none"
    value = poison_for(op, k)
    first = next(x for x in inputs if _poisonable(x))
    shown = value if hasattr(first, "poisoned") else cast_poison(value, first.get_data().dtype)
    return [(x.poisoned(value) if hasattr(x, "poisoned") else poisoned(x, value))
            if _poisonable(x) else x for x in inputs], (
        poison_name(shown) if isinstance(shown, float) else str(int(shown)))


def _check_table():
    for op, table in POISON.items():
        assert table and all(isinstance(v, float) for v in table), op
    assert torch.tensor(DEFAULT).dtype == torch.float32


_check_table()

"""Tolerances (spec/golden-format.md, "Tolerances") and the float32 headroom
check: a float32 expectation must lie within half its tolerance of the same
computation done in float64, so that any correct implementation fits."""
import numpy as np
import torch
from torch.masked import MaskedTensor

from .compare import spacing
from .inputs import as_dense, to_f64
from .model import Surprise


def parse_tol(tol):
    kind, _, arg = tol.partition(":")
    if kind not in ("exact", "ulp", "abs", "rel") or (kind == "exact") != (arg == ""):
        raise ValueError(f"bad tolerance {tol!r}")
    return kind, (float(arg) if arg else 0.0)


def _spacing(want, bf16):
    """Elementwise distance to the next larger number of want's dtype;
    bf16: of bfloat16 (compare.spacing, as the runner steps it)."""
    if not bf16:
        return np.spacing(np.abs(want)).astype(np.float64)
    return np.array([spacing(float(w), "bfloat16") for w in want.ravel()],
                    dtype=np.float64).reshape(want.shape)


def within(got, want, tol, scale=1.0, bf16=False):
    """Elementwise: got matches want under tolerance `tol` (scaled). bf16:
    the arrays are float32 holding bfloat16 values (ulps are bfloat16's)."""
    got, want = np.asarray(got), np.asarray(want)
    kind, x = parse_tol(tol)
    same = (got == want) | (np.isnan(got) & np.isnan(want))
    if kind == "exact":
        return same
    with np.errstate(invalid="ignore"):
        diff = np.abs(got.astype(np.float64) - want.astype(np.float64))
    bound = {"ulp": lambda: x * _spacing(want, bf16),
             "abs": lambda: np.full(want.shape, x),
             "rel": lambda: x * np.abs(want.astype(np.float64))}[kind]()
    return same | (np.isfinite(want) & (diff <= bound * scale))


def check_headroom(case, inputs, outputs, tol):
    """Surprise unless every float32 output is within half of tolerance
    `tol` (the case's, or the one derived from these outputs) of the
    float64 result rounded to float32."""
    if case.profile != "torch":
        return  # numpy_ma cases check themselves (families/numpy_ma.py, f32_headroom)
    if tol == "exact" or not any(
            getattr(x, "dtype", None) == torch.float32 for x in inputs):
        return
    ref = case.run([to_f64(x) for x in inputs], case.kwargs)
    for k, (got, want) in enumerate(zip(outputs, ref)):
        g, w = as_dense(got).numpy(), as_dense(want).to(torch.float32).numpy()
        if isinstance(got, MaskedTensor) and not case.check_masked_out:
            sel = as_dense(got.get_mask()).numpy()
            g, w = g[sel], w[sel]
        if not within(g, w, tol, 0.5).all():
            worst = np.nanmax(np.abs(g.astype(np.float64) - w)) if g.size else 0
            raise Surprise(f"{case.id}: output {k} is not within half of "
                           f"{tol} of the float64 result (max diff {worst:g})")

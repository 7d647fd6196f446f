"""Tolerances (spec/golden-format.md, "Tolerances") and the float32 headroom
check: a float32 expectation must lie within half its tolerance of the same
computation done in float64, so that any correct implementation fits."""
import numpy as np
import torch
from torch.masked import MaskedTensor

from .inputs import as_dense, to_f64
from .model import Surprise


def parse_tol(tol):
    kind, _, arg = tol.partition(":")
    if kind not in ("exact", "ulp", "abs", "rel") or (kind == "exact") != (arg == ""):
        raise ValueError(f"bad tolerance {tol!r}")
    return kind, (float(arg) if arg else 0.0)


def bf16_spacing(a):
    """Distance from |a| (float32 holding bfloat16 values) to the next larger
    bfloat16, as conformance/compare.c steps the upper 16 bits; the largest
    finite and beyond get the spacing below the largest finite."""
    bits = np.abs(np.asarray(a, dtype=np.float32)).view(np.uint32) >> 16
    bits = np.minimum(bits, 0x7f7e).astype(np.uint32)
    lo = (bits << 16).view(np.float32).astype(np.float64)
    hi = ((bits + 1) << 16).view(np.float32).astype(np.float64)
    return hi - lo


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
    spacing = bf16_spacing if bf16 else lambda w: np.spacing(np.abs(w)).astype(np.float64)
    bound = {"ulp": lambda: x * spacing(want),
             "abs": lambda: np.full(want.shape, x),
             "rel": lambda: x * np.abs(want.astype(np.float64))}[kind]()
    return same | (np.isfinite(want) & (diff <= bound * scale))


def check_headroom(case, inputs, outputs):
    """Surprise unless every float32 output is within half of the case
    tolerance of the float64 result rounded to float32."""
    if case.profile != "torch":
        return  # numpy_ma cases check themselves (families/numpy_ma.py, f32_headroom)
    if case.tolerance == "exact" or not any(
            getattr(x, "dtype", None) == torch.float32 for x in inputs):
        return
    ref = case.run([to_f64(x) for x in inputs], case.kwargs)
    for k, (got, want) in enumerate(zip(outputs, ref)):
        g, w = as_dense(got).numpy(), as_dense(want).to(torch.float32).numpy()
        if isinstance(got, MaskedTensor) and not case.check_masked_out:
            sel = as_dense(got.get_mask()).numpy()
            g, w = g[sel], w[sel]
        if not within(g, w, case.tolerance, 0.5).all():
            worst = np.nanmax(np.abs(g.astype(np.float64) - w)) if g.size else 0
            raise Surprise(f"{case.id}: output {k} is not within half of "
                           f"{case.tolerance} of the float64 result (max diff {worst:g})")

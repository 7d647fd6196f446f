"""Comparing two golden cases the way the runner does (spec/golden-format.md,
"Comparison"), for golden/check_fresh.py. Standard library only (no numpy,
no torch), so tests/ can exercise it without the venv.

A tensor is a dict: kind, dtype, shape (tuple), and by kind: dense `values`
(flat list, C order); coo `indices` (list of sparse_dim lists) and `values`
(list of nnz rows, each a flat list of the dense-dims elements); csr the
same as coo, its entries' (row, col) indices; masked
`data` and `mask` (tensors); scalar `value`.
"""
import math
import struct

# bfloat16 values are float32 values whose low 16 bits are zero (golden
# files store them widened to float32): its spacing steps the upper 16 bits.
FLOAT_DTYPES = {"float16": "<e", "float32": "<f", "float64": "<d", "bfloat16": "<f"}
BF16_MAX = 0x7f7f  # bits of the largest finite bfloat16, ~3.39e38
_BITS = {"<e": "<H", "<f": "<I", "<d": "<Q"}


def parse_tol(tol):
    kind, _, arg = tol.partition(":")
    if kind not in ("exact", "ulp", "abs", "rel") or (kind == "exact") != (arg == ""):
        raise ValueError(f"bad tolerance {tol!r}")
    return kind, (float(arg) if arg else 0.0)


def spacing(x, dtype):
    """Distance from |x| to the next larger number of dtype (numpy.spacing)."""
    fmt = FLOAT_DTYPES[dtype]
    a = abs(x)
    if dtype == "float64":
        return math.ulp(a)
    if dtype == "bfloat16":  # as conformance/compare.c: |x| rounded to bfloat16, the next one up
        b = _bf16_bits(a)
        if b >= BF16_MAX:  # the largest finite and beyond: the spacing below it
            return _bf16_value(BF16_MAX) - _bf16_value(BF16_MAX - 1)
        return _bf16_value(b + 1) - _bf16_value(b)
    bits = struct.unpack(_BITS[fmt], struct.pack(fmt, a))[0]
    try:
        up = struct.unpack(fmt, struct.pack(_BITS[fmt], bits + 1))[0]
    except struct.error:
        return math.inf
    return up - a


def _bf16_bits(a):
    """|a| as bfloat16 bits, rounded to nearest even through float32."""
    try:
        x = struct.unpack("<I", struct.pack("<f", a))[0]
    except OverflowError:  # beyond float32: inf
        return 0x7f80
    return (x + 0x7fff + ((x >> 16) & 1)) >> 16


def _bf16_value(b):
    return struct.unpack("<f", struct.pack("<I", b << 16))[0]


def element_matches(got, exp, tol, dtype):
    """One element under the case tolerance: NaN equals NaN; integers and
    bools exactly; a golden ±0 under exact/ulp needs the same sign."""
    if dtype not in FLOAT_DTYPES:
        return got == exp
    if math.isnan(exp) or math.isnan(got):
        return math.isnan(exp) and math.isnan(got)
    kind, x = parse_tol(tol)
    if exp == 0 and got == 0 and kind in ("exact", "ulp"):
        return math.copysign(1, got) == math.copysign(1, exp)
    if got == exp:
        return True
    if kind == "exact" or not math.isfinite(exp):
        return False
    diff = abs(got - exp)
    bound = {"ulp": lambda: x * spacing(exp, dtype), "abs": lambda: x,
             "rel": lambda: x * abs(exp)}[kind]()
    return diff <= bound


def coalesce(t):
    """A COO tensor as {index tuple: row (list)}, duplicates summed."""
    out = {}
    nnz = len(t["values"])
    for k in range(nnz):
        idx = tuple(int(d[k]) for d in t["indices"])
        row = list(t["values"][k])
        if idx in out:
            out[idx] = [a + b for a, b in zip(out[idx], row)]
        else:
            out[idx] = row
    return dict(sorted(out.items()))


def first_difference(got, exp, tol, check_masked_out=False, where="output"):
    """None when `got` matches the golden `exp`, else a one-line description
    of the first difference (the element, both values)."""
    for key in ("kind", "dtype", "shape"):
        if got[key] != exp[key]:
            return f"{where}: {key} {got[key]!r}, golden {exp[key]!r}"
    kind, dtype = exp["kind"], exp["dtype"]
    if kind == "scalar":
        ok = element_matches(got["value"], exp["value"], tol, dtype)
        return None if ok else f"{where}: value {got['value']!r}, golden {exp['value']!r}"
    if kind == "dense":
        for i, (g, e) in enumerate(zip(got["values"], exp["values"])):
            if not element_matches(g, e, tol, dtype):
                return f"{where}: element {i}: {g!r}, golden {e!r}"
        return None
    if kind in ("coo", "csr", "csc", "bsr", "bsc"):  # compressed: element entries (golden_read)
        cg, ce = coalesce(got), coalesce(exp)
        if list(cg) != list(ce):
            extra = sorted(set(cg) ^ set(ce))
            return f"{where}: coalesced indices differ (first at {extra[0] if extra else '?'})"
        for idx, row in ce.items():
            for j, (g, e) in enumerate(zip(cg[idx], row)):
                if not element_matches(g, e, tol, dtype):
                    return f"{where}: entry {idx}[{j}]: {g!r}, golden {e!r}"
        return None
    if kind == "masked":
        why = first_difference(got["mask"], exp["mask"], "exact", where=f"{where} mask")
        if why:
            return why
        data_g, data_e, mask = got["data"], exp["data"], exp["mask"]
        if mask["kind"] == "dense":
            for i, (g, e, m) in enumerate(zip(data_g["values"], data_e["values"],
                                              mask["values"])):
                if (m or check_masked_out) and not element_matches(g, e, tol, dtype):
                    return f"{where} data: element {i}: {g!r}, golden {e!r}"
            return None
        cg, ce, cm = coalesce(data_g), coalesce(data_e), coalesce(mask)
        for idx, mrow in cm.items():
            for j, m in enumerate(mrow):
                if not (m or check_masked_out):
                    continue
                g = cg.get(idx, [0.0] * len(mrow))[j]
                e = ce.get(idx, [0.0] * len(mrow))[j]
                if not element_matches(g, e, tol, dtype):
                    return f"{where} data: entry {idx}[{j}]: {g!r}, golden {e!r}"
        return None
    return f"{where}: kind {kind!r} is not compared"


def case_difference(got, exp):
    """None when the regenerated case `got` matches the committed `exp`, else
    the first difference. A case is a dict: attrs (dict), inputs and outputs
    (lists of tensors), for a gradient case grad_outputs and grads (None
    where torch gives an input no gradient). Inputs and upstream gradients
    must be identical (they come from seeded RNGs); outputs and gradients
    match within the case tolerance."""
    for key in ("op", "expect", "error_class", "tolerance", "rules"):
        if got["attrs"].get(key) != exp["attrs"].get(key):
            return f"attribute {key}: {got['attrs'].get(key)!r}, golden {exp['attrs'].get(key)!r}"
    tol = exp["attrs"]["tolerance"]
    cmo = bool(exp["attrs"].get("check_masked_out", 0))
    # a gradient case (format 3) has grad_outputs (exact, like inputs) and
    # grads (a list with None where torch gives an input none)
    for name, t in (("inputs", "exact"), ("grad_outputs", "exact"), ("outputs", tol),
                    ("grads", tol)):
        gl, el = got.get(name, []), exp.get(name, [])
        if len(gl) != len(el):
            return f"{name}: {len(gl)} tensors, golden {len(el)}"
        for k, (g, e) in enumerate(zip(gl, el)):
            if g is None or e is None:
                if g is not e:
                    return f"{name}/{k}: {'none' if g is None else 'a gradient'}, golden " \
                           f"{'none' if e is None else 'a gradient'}"
                continue
            why = first_difference(g, e, t, check_masked_out=cmo or t == "exact",
                                   where=f"{name}/{k}")
            if why:
                return why
    return None

#!/usr/bin/env python3
"""numpy.ma as the library under test (mtcs adapter, protocol 1).

    mtcs validate --adapter "python3 conformance/adapters/numpy_ma.py" --profile numpy_ma
    mtcs validate --adapter "python3 conformance/adapters/numpy_ma.py" --profile torch

Profile numpy_ma: the cases whose expectations numpy.ma produced
(golden/numpy_ma.h5): this adapter must pass them all (with numpy 2, which
made them: NPMA-4's dtypes are NEP 50's). Profile torch: numpy.ma's answers
to torch's cases, to show rule by rule where numpy.ma departs from
MaskedTensor (spec/SEMANTICS.md, "The numpy_ma profile", side by side).

Each op of mtcs is one numpy.ma call, the call spec/SEMANTICS.md lists for
the profile (the same call in both profiles: numpy.ma's answer does not
depend on who asks). Ops numpy.ma has no function or method for answer
NOT_SUPPORTED with the reason, as do sparse storage, bfloat16 and calls
without a masked input (that would test plain numpy, not numpy.ma).
Outputs are numpy.ma's own: a MaskedArray is a masked output (mtcs_adapter
turns numpy's mask back into mtcs's), an all-reduce's numpy scalar a 0-d
specified output, np.ma.masked a 0-d masked-out one, `filled()` a dense one.
"""
import os
import sys
import warnings

import numpy as np
import numpy.ma as ma

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import mtcs_adapter as mt  # noqa: E402

NUMPY_DTYPES = {"float32": np.float32, "float64": np.float64, "float16": np.float16,
                "int64": np.int64, "int32": np.int32, "int8": np.int8, "uint8": np.uint8,
                "bool": np.bool_}


# ---- numpy.ma's calls --------------------------------------------------------------------

def unary(name):
    f = getattr(ma, name)
    return lambda m: f(m)


def clip(m, min=None, max=None):  # noqa: A002 - torch's keyword names
    return ma.clip(m, min, max)


def round_(m, decimals=0):
    return ma.round_(m, decimals)


def binary(name):
    f = getattr(ma, name)

    def run(a, b, alpha=None):
        if alpha is not None:  # torch's add(a, b, alpha=x) = a + x * b
            b = ma.multiply(b, alpha)
        return f(a, b)
    return run


def inplace(sym):
    """MaskedArray's in-place operator: a's dtype (same_kind casting), a's
    mask ORed with b's, a's data kept under masked-out elements (NPMA-22)."""
    def run(a, b, alpha=None):
        if not isinstance(a, ma.MaskedArray):
            raise mt.Refusal("NOT_SUPPORTED", "numpy.ma in place: the first operand is plain")
        a = a.copy()  # the request's own array is not ours to keep
        if alpha is not None:
            b = ma.multiply(b, alpha)
        if sym == "+=":
            a += b
        elif sym == "-=":
            a -= b
        elif sym == "*=":
            a *= b
        elif sym == "/=":
            a /= b
        elif sym == "//=":
            a //= b
        else:
            a **= b
        return a
    return run


def reduction(method, default_ddof=None):
    """m.<method>(axis=dim, keepdims=keepdim[, dtype=][, ddof=]); a fully
    masked result is np.ma.masked, given the dtype numpy gives the same
    reduction of one specified element (NPMA-5)."""
    def run(m, dim=None, keepdim=None, dtype=None, unbiased=None, correction=None):
        args = {}
        if dim is not None:
            args["axis"] = dim
        if keepdim is not None:
            args["keepdims"] = keepdim
        if dtype is not None:
            args["dtype"] = numpy_dtype(dtype)
        if method in ("var", "std"):
            if correction is not None:
                args["ddof"] = correction
            elif unbiased is not None:
                args["ddof"] = 1 if unbiased else 0
            elif default_ddof is not None:
                args["ddof"] = default_ddof
        elif unbiased is not None or correction is not None:
            raise TypeError(f"{method}() got an unexpected keyword argument")
        if not isinstance(m, ma.MaskedArray):
            m = ma.masked_array(m)
        r = getattr(m, method)(**args)
        return result(r, one_element_dtype(m, method, args))
    return run


def masked_fn(method):
    """torch.masked.<op>(x, dim, mask=mask) as
    np.ma.masked_array(x, mask=~np.broadcast_to(mask, x.shape)).<method>(axis=dim)
    (NPMA-17); var/std: ddof from unbiased/correction, default 1."""
    red = reduction(method, default_ddof=1)

    def run(x, mask=None, **kw):
        return red(with_mask(x, mask), **kw)
    return run


def with_mask(x, mask):
    data = np.array(ma.getdata(x), copy=True)
    spec = np.ones(data.shape, bool) if mask is None else np.broadcast_to(
        np.asarray(mask, dtype=bool), data.shape)
    if isinstance(x, ma.MaskedArray):
        spec = spec & ~ma.getmaskarray(x)
    return ma.masked_array(data, mask=~spec)


def masked_median(x, mask=None, dim=-1, keepdim=False, dtype=None):
    m = with_mask(x, mask)
    if dtype is not None:
        m = m.astype(numpy_dtype(dtype))
    return result(ma.median(m, axis=dim, keepdims=keepdim), m.dtype)


def select(m, dim, index):
    return m.take(index, axis=dim)


def slice_(m, dim=0, start=None, end=None, step=1):
    return m[(slice(None),) * (dim % max(m.ndim, 1)) + (slice(start, end, step),)]


def index(m, idx):
    return m[np.asarray(idx)]


def transpose(m, dim0, dim1):
    return ma.swapaxes(m, dim0, dim1)


def cat(*ms, dim=0):
    return ma.concatenate(ms, axis=dim)


def stack(*ms, dim=0):
    return ma.stack(ms, axis=dim)


def masked_tensor(data, mask):
    return ma.masked_array(np.array(data, copy=True), mask=np.logical_not(mask))


def to_tensor(m, value):
    return m.filled(value)


# op -> the numpy.ma call, with torch's inputs as positional arguments and
# torch's kwargs as keyword arguments (spec/SEMANTICS.md's table of the profile)
OPS = {
    "masked_tensor": masked_tensor, "to_tensor": to_tensor,
    "clamp": clip, "clip": clip, "round": round_,
    "angle": unary("angle"), "conj_physical": unary("conjugate"),
    "pow": binary("power"), "pow_": inplace("**="),
    "sum": reduction("sum"), "mean": reduction("mean"), "prod": reduction("prod"),
    "amin": reduction("min"), "amax": reduction("max"), "all": reduction("all"),
    "argmin": reduction("argmin"), "argmax": reduction("argmax"),
    "var": reduction("var"), "std": reduction("std"),
    "masked_median": masked_median,
    "select": select, "slice": slice_, "index": index, "transpose": transpose,
    "t": lambda m: m.T, "view": lambda m, size: m.reshape(size),
    "reshape": lambda m, shape: m.reshape(shape),
    "unsqueeze": lambda m, dim: ma.expand_dims(m, dim), "clone": lambda m: m.copy(),
    "ones_like": lambda m: ma.ones_like(m), "cat": cat, "stack": stack,
    "where": lambda c, x, y: ma.where(c, x, y),
}
for _op, _np in {"neg": "negative", "negative": "negative", "abs": "absolute",
                 "absolute": "absolute", "exp": "exp", "log": "log", "sqrt": "sqrt",
                 "log2": "log2", "log10": "log10", "sin": "sin", "cos": "cos", "tan": "tan",
                 "arcsin": "arcsin", "asin": "arcsin", "arccos": "arccos", "acos": "arccos",
                 "arctan": "arctan", "atan": "arctan", "sinh": "sinh", "cosh": "cosh",
                 "tanh": "tanh", "arcsinh": "arcsinh", "asinh": "arcsinh",
                 "arccosh": "arccosh", "acosh": "arccosh", "arctanh": "arctanh",
                 "atanh": "arctanh", "floor": "floor", "ceil": "ceil"}.items():
    OPS[_op] = unary(_np)
for _op, _np in {"add": "add", "sub": "subtract", "subtract": "subtract", "mul": "multiply",
                 "multiply": "multiply", "div": "divide", "divide": "divide",
                 "true_divide": "true_divide", "floor_divide": "floor_divide",
                 "remainder": "remainder", "fmod": "fmod", "atan2": "arctan2",
                 "arctan2": "arctan2", "bitwise_and": "bitwise_and", "bitwise_or": "bitwise_or",
                 "bitwise_xor": "bitwise_xor", "eq": "equal", "ne": "not_equal",
                 "not_equal": "not_equal", "lt": "less", "less": "less", "le": "less_equal",
                 "less_equal": "less_equal", "gt": "greater", "greater": "greater",
                 "ge": "greater_equal", "greater_equal": "greater_equal",
                 "maximum": "maximum", "minimum": "minimum",
                 "bitwise_left_shift": "left_shift",
                 "bitwise_right_shift": "right_shift"}.items():
    OPS[_op] = binary(_np)
for _op, _sym in {"add_": "+=", "sub_": "-=", "subtract_": "-=", "mul_": "*=",
                  "multiply_": "*=", "div_": "/=", "divide_": "/=", "true_divide_": "/=",
                  "floor_divide_": "//="}.items():
    OPS[_op] = inplace(_sym)
for _op, _m in {"masked_sum": "sum", "masked_prod": "prod", "masked_amin": "min",
                "masked_amax": "max", "masked_mean": "mean", "masked_argmin": "argmin",
                "masked_argmax": "argmax", "masked_var": "var", "masked_std": "std",
                "masked_cumsum": "cumsum", "masked_cumprod": "cumprod"}.items():
    OPS[_op] = masked_fn(_m)
# ops whose inputs are plain arrays by torch's signature (data and mask)
PLAIN_INPUTS = {"masked_tensor", "masked_median"} | {op for op in OPS if op.startswith("masked_")}

# why the others are NOT_SUPPORTED (spec/SEMANTICS.md, "Which ops the profile has")
NO_FUNCTION = "numpy.ma has no function or method for it"
REASONS = {
    **{op: "a torch special function: numpy has no ufunc for it" for op in (
        "digamma", "erf", "erfc", "erfinv", "lgamma", "i0", "sinc", "logit", "sigmoid")},
    **{op: "no np.ma operation: a plain numpy ufunc on a MaskedArray has no mask rule" for op in (
        "exp2", "expm1", "log1p", "rsqrt", "reciprocal", "square", "sign", "sgn", "signbit",
        "frac", "fix", "trunc", "deg2rad", "rad2deg", "positive", "nan_to_num", "isnan",
        "bitwise_not", "nextafter", "logaddexp", "logaddexp2", "fmax", "fmin",
        "masked_logaddexp")},
    "norm": "numpy.ma has no norm (np.linalg.norm drops the mask)",
    "masked_norm": "numpy.ma has no norm (np.linalg.norm drops the mask)",
    "masked_logsumexp": "numpy.ma has no logsumexp",
    **{op: "numpy.ma has no softmax or normalize" for op in (
        "masked_softmax", "masked_log_softmax", "masked_softmin", "masked_normalize")},
    "expand": "np.broadcast_to drops a MaskedArray's mask",
    "split": "numpy.ma has no split by chunk size",
    "unfold": "sliding_window_view is not mask-aware",
    "contiguous": "np.ascontiguousarray drops the mask",
    "is_contiguous": "a numpy attribute, no numpy.ma op",
    "is_same_size": "a numpy attribute, no numpy.ma op",
    "detach": "numpy has no autograd",
    "copy_": "np.copyto copies data only",
    **{op: "numpy.ma has no optimizers" for op in (
        "adagrad_dense", "adagrad_sparse", "adagrad_masked", "sparse_adam", "sgd")},
}


def reason(op):
    if op in REASONS:
        return REASONS[op]
    if op.endswith("_") and op[:-1] in OPS:
        return f"numpy.ma's {op[:-1]} has no in-place form (only out=, not studied)"
    if op.endswith("_") and op[:-1] in REASONS:
        return REASONS[op[:-1]]
    return NO_FUNCTION


# ---- results -----------------------------------------------------------------------------

def numpy_dtype(name):
    if name not in NUMPY_DTYPES:
        raise mt.Refusal("NOT_SUPPORTED", f"numpy has no {name}")
    return NUMPY_DTYPES[name]


def one_element_dtype(m, method, args):
    """The dtype numpy.ma gives `method` over one specified element of m's
    dtype: the dtype of np.ma.masked when nothing was specified."""
    one = ma.masked_array(np.ones((1,) * max(m.ndim, 1), m.dtype), mask=False)
    extra = {k: v for k, v in args.items() if k == "dtype"}
    return np.asarray(getattr(one, method)(**extra)).dtype


def result(r, masked_dtype):
    """numpy.ma's result as an mtcs output: np.ma.masked -> 0-d masked out
    (data 0), a numpy scalar -> 0-d specified, arrays as they are."""
    if r is ma.masked:
        return ma.masked_array(np.zeros((), masked_dtype), mask=True)
    if isinstance(r, np.ndarray):
        return r
    return ma.masked_array(np.asarray(r), mask=False)


def as_output(r):
    if isinstance(r, np.ndarray):  # MaskedArray included
        return r
    return result(r, None)


# ---- the handler -------------------------------------------------------------------------

SPARSE = ("coo", "csr", "csc", "bsr", "bsc")


def handle(req):
    fn = OPS.get(req.op)
    if fn is None:
        raise mt.Refusal("NOT_SUPPORTED", f"{req.op}: {reason(req.op)}")
    if any(layout in SPARSE or layout.startswith("masked_") for layout in req.layouts):
        raise mt.Refusal("NOT_SUPPORTED", f"numpy.ma has no sparse storage (inputs {req.layouts})")
    if "bfloat16" in req.dtypes or req.kwargs.get("dtype") == "bfloat16":
        raise mt.Refusal("NOT_SUPPORTED", "numpy has no bfloat16")
    if req.op not in PLAIN_INPUTS and "masked" not in req.layouts:
        raise mt.Refusal("NOT_SUPPORTED", f"no masked input (inputs {req.layouts}): "
                         "that would test numpy, not numpy.ma")
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        try:
            out = fn(*req.inputs, **req.kwargs)
        except ma.MaskError as e:  # numpy.ma's size check (NPMA-1)
            raise mt.Refusal("SHAPE_MISMATCH", f"MaskError: {e}") from None
    return [as_output(out)]


def main():
    return mt.serve("numpy.ma", np.__version__, ["numpy_ma", "torch"], handle)


if __name__ == "__main__":
    sys.exit(main())

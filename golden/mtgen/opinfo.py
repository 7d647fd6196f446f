"""Cases from torch's own test inputs: the OpInfo database that PyTorch tests
itself with (torch.testing._internal; importing it needs the PyPI packages
`expecttest` and `hypothesis`, see golden/requirements.txt).

    for src, s in samples("sin", torch.float32):
        s.input, s.args, s.kwargs     # a SampleInput
        src                           # "opinfo:sin:sample:3", recorded as the case's `source`

torch's sample generators draw from the global RNG (make_tensor), so every
call here reseeds it from the op name, the dtype and the kind of inputs: the
same torch gives the same samples. Samples larger than `max_numel` elements
(OpInfo has (1029, 917) matrices) are skipped, so goldens stay small; a
sample's index is its position in torch's own list, skipped ones included,
so ids do not move when the cap changes."""
import functools
import hashlib
import warnings

import torch

MAX_NUMEL = 64

# golden/variants.py replays the committed cases under an older torch whose
# testing package may not import (Debian's torch 1.13 has no expecttest): it
# sets this, and every op then has no samples there (the cases' inputs come
# from the golden files anyway). The generator leaves it False: a missing
# OpInfo database is an error, never a silent loss of cases.
ALLOW_MISSING_DB = False


@functools.lru_cache(maxsize=None)
def _dbs():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            from torch.testing._internal.common_methods_invocations import op_db
            from torch.testing._internal.opinfo.definitions._masked import op_db as masked_db
        except ImportError:
            if not ALLOW_MISSING_DB:
                raise
            return {}, {}
    plain = {}
    for o in op_db:
        key = o.name + (f".{o.variant_test_name}" if o.variant_test_name else "")
        plain.setdefault(key, o)
    return plain, {o.name: o for o in masked_db}


def opinfo(name, masked=False):
    """torch's OpInfo for `name` ("sin", "div.floor_rounding"; with
    masked=True one of _masked.op_db: "masked.sum"); KeyError if none."""
    plain, masked_db = _dbs()
    return (masked_db if masked else plain)[name]


def supports(name, dtype, masked=False):
    """True when torch's OpInfo lists dtype as supported on the CPU (always
    True without the database, under ALLOW_MISSING_DB)."""
    if ALLOW_MISSING_DB and not any(_dbs()):
        return True
    return dtype in opinfo(name, masked).supported_dtypes("cpu")


def _seed(*parts):
    torch.manual_seed(int(hashlib.sha256(":".join(map(str, parts)).encode()).hexdigest()[:8], 16))


def _numel(x):
    if isinstance(x, torch.Tensor):
        return x.numel()
    if isinstance(x, (list, tuple)):
        return sum(_numel(y) for y in x)
    return 0


def _crop(s, n):
    """s with its input (and every tensor argument of the input's shape) cut
    to the first n entries along each dim: torch's unary samples are (20, 20)
    draws from the op's domain, and their first rows keep the draw."""
    if not isinstance(s.input, torch.Tensor) or s.input.ndim == 0:
        return s
    shape = s.input.shape
    idx = tuple(slice(0, n) for _ in shape)
    s.args = tuple(a[idx] if isinstance(a, torch.Tensor) and a.shape == shape else a
                   for a in s.args)
    s.input = s.input[idx]
    return s


def samples(name, dtype, masked=False, max_numel=MAX_NUMEL, limit=None, reference=False,
            crop=None):
    """[(source, SampleInput)] of the op's sample_inputs (and, with
    reference=True, its reference_inputs after them) for dtype on the CPU,
    skipping samples of more than max_numel elements in all; at most
    `limit` of them (None: all). crop=n first cuts each sample to its first
    n entries per dim (the source then ends in "[:n]")."""
    try:
        info = opinfo(name, masked)
    except KeyError:
        if ALLOW_MISSING_DB and not any(_dbs()):
            return []
        raise
    out = []
    kinds = [("sample", info.sample_inputs)] + ([("reference", info.reference_inputs)]
                                                if reference else [])
    for kind, fn in kinds:
        _seed(name, dtype, kind)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for k, s in enumerate(fn("cpu", dtype, requires_grad=False)):
                if crop is not None:
                    s = _crop(s, crop)
                if _numel(s.input) + _numel(list(s.args)) > max_numel:
                    continue
                if _numel(s.input) == 0 and not isinstance(s.input, torch.Tensor):
                    continue
                cut = f"[:{crop}]" if crop is not None else ""
                out.append((f"opinfo:{name}:{kind}:{k}{cut}", s))
                if limit is not None and len(out) >= limit:
                    return out
    return out


def sample_mask(g, t, p_true=0.6):
    """A random mask for sample tensor t from the case's generator g, as
    torch's test_maskedtensor wraps samples (mask shape = t's shape)."""
    return torch.rand(t.shape, generator=g) < p_true

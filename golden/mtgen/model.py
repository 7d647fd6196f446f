"""The case model: what a golden case is before torch has run it."""
import hashlib
import math
from dataclasses import dataclass, field
from typing import Callable

import torch

DTYPES = {"f32": torch.float32, "f64": torch.float64}
# Every dtype mtcs knows, by the token case ids use (`<op>.<layouts>.<dtype>.<variant>`).
ALL_DTYPES = {"f16": torch.float16, "f32": torch.float32, "f64": torch.float64,
              "i64": torch.int64, "i32": torch.int32, "i8": torch.int8, "u8": torch.uint8,
              "bool": torch.bool, "bf16": torch.bfloat16}

DTYPE_NAMES = {
    torch.float32: "float32", torch.float64: "float64", torch.float16: "float16",
    torch.int64: "int64", torch.int32: "int32", torch.int8: "int8",
    torch.uint8: "uint8", torch.bool: "bool", torch.bfloat16: "bfloat16",
}

Inputs = list  # torch tensors, MaskedTensors and Python numbers, in call order


@dataclass
class Case:
    id: str
    op: str
    rules: tuple
    tolerance: str | None                         # None: tolerance_of derives it
    build: Callable[[torch.Generator], Inputs]   # inputs before poisoning
    run: Callable[[Inputs, dict], list]          # the torch call -> outputs
    torch_call: str
    kwargs: dict = field(default_factory=dict)
    error_class: str | None = None               # set: torch must raise
    check_masked_out: bool = False
    poison: bool = True                          # False: attr poison="none"
    check: Callable[[Inputs, list], None] | None = None  # extra assertions
    tag_rules: Callable[[tuple, list], tuple] | None = None  # rules from the outputs
    error_match: str | None = None               # set: torch_error must contain it
    input_masks: str | None = None               # "0:1": plain input 0 is specified where
    #   input 1 (a bool tensor) is true; the runner's poison re-runs reach it
    source: str | None = None                    # where the inputs come from, e.g.
    #   "opinfo:sin:sample:3" (mtgen/opinfo.py); absent = our own corner case
    profile: str = "torch"                       # the rule set the case expects:
    #   "torch" or "numpy_ma" (run calls numpy.ma, families/numpy_ma.py)
    backward: bool = False                       # a gradient case (format 3,
    #   mtgen/grad.py): run's outputs are backpropagated with seeded grad_outputs;
    #   what is recorded is each input's .grad (error_class: torch's refusal of
    #   the backward; the forward must succeed)
    tolerance_of: Callable[[list], str] | None = None  # set: the tolerance is derived
    #   from torch's outputs on the case's draw (e.g. an absolute bound scaled to the
    #   result's magnitude), replacing `tolerance` for an ok case
    measure: Callable[["Case"], str | None] | None = None  # set: `tolerance` was
    #   measured on the case's draw by measure(case) (half gradients, GRAD-9:
    #   mtgen.grad.half_tolerance); golden/reseed.py measures each fresh draw again
    grad_outputs: Callable[[list, torch.Generator], list] | None = None  # backward
    #   cases: the upstream gradients of run's outputs (default: mtgen.grad.grad_like
    #   of each, seeded); set where a value matters, e.g. -0.0


@dataclass
class Result:
    case: Case
    inputs: Inputs
    poison: str
    outputs: list = field(default_factory=list)
    torch_error: str | None = None
    rules: tuple = ()
    tolerance: str | None = None                      # what is written: the case's,
    #   or for a case with tolerance_of the one derived from these outputs
    grad_outputs: list = field(default_factory=list)  # backward cases: upstream gradients
    grads: list = field(default_factory=list)         # backward cases: input k's .grad or None
    requires_grad: tuple = ()                         # backward cases: the leaf inputs


class Surprise(Exception):
    """torch did not behave as the case table declares."""


class NotRaised(Surprise):
    """torch returned a result where the case declares an error."""


def case_rng(case_id: str) -> torch.Generator:
    seed = int(hashlib.sha256(case_id.encode()).hexdigest()[:8], 16)
    return torch.Generator().manual_seed(seed)


def py(v) -> str:
    """A Python literal for torch_call strings."""
    if isinstance(v, float) and not math.isfinite(v):
        return f"float('{v}')"
    return repr(v)


def float_tol(dt: torch.dtype, f32: str, f64: str) -> str:
    return f32 if dt == torch.float32 else f64


def variant_of(case_id):
    """The variant of a case id `<op>.<layouts>.<dtype>.<variant>`: all after
    the third dot (a gradient case's keeps its `.grad`)."""
    return ".".join(case_id.split(".")[3:])


def check_ids(cases):
    ids = [c.id for c in cases]
    dup = {i for i in ids if ids.count(i) > 1}
    assert not dup, f"duplicate case ids: {sorted(dup)}"
    assert all("/" not in i and i == i.lower() for i in ids)
    return cases

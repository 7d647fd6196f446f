#!/usr/bin/env python3
"""The smallest useful mtcs adapter: numpy.ma's neg and add on masked
tensors, every other case NOT_SUPPORTED. Run it with
    mtcs validate --adapter "python3 conformance/adapters/example.py" \
        --profile numpy_ma --filter 'neg.*' --filter 'add.*'
(conformance/adapters/README.md explains each line)."""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import mtcs_adapter as mt  # noqa: E402

OPS = {"neg": np.ma.negative, "add": np.ma.add}  # mtcs op name -> numpy.ma function


def handle(req):
    fn = OPS.get(req.op)
    if fn is None:
        raise mt.Refusal("NOT_SUPPORTED", f"example adapter: no {req.op}")
    if req.kwargs:
        raise mt.Refusal("NOT_SUPPORTED", f"example adapter: no kwargs ({', '.join(req.kwargs)})")
    if any(layout != "masked" for layout in req.layouts):
        raise mt.Refusal("NOT_SUPPORTED", f"example adapter: inputs {req.layouts}")
    if "bfloat16" in req.dtypes:
        raise mt.Refusal("NOT_SUPPORTED", "numpy has no bfloat16")
    out = fn(*req.inputs)  # a MaskedArray: numpy's errors are classified by mt.status_of
    return [out]


if __name__ == "__main__":
    sys.exit(mt.serve("numpy.ma", np.__version__, ["numpy_ma"], handle))

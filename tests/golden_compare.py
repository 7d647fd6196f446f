#!/usr/bin/env python3
"""golden_compare.py - golden/mtgen/compare.py (check_fresh's comparison)
follows the runner's comparison rules.

    python3 tests/golden_compare.py SRC

Literal cases, each expectation derived by hand in its comment. Standard
library only: compare.py imports neither numpy nor torch."""
import math
import sys

NAN, INF = math.nan, math.inf


def dense(values, dtype="float32", shape=None):
    return {"kind": "dense", "dtype": dtype, "shape": shape or (len(values),),
            "values": values}


def masked(data, mask):
    return {"kind": "masked", "dtype": "float32", "shape": (len(data),),
            "data": dense(data), "mask": dense(mask, "bool")}


def coo(indices, values, shape=(2, 4)):
    return {"kind": "coo", "dtype": "float64", "shape": shape, "indices": indices,
            "values": [[v] for v in values]}


def main(src):
    sys.path.insert(0, f"{src}/golden")
    from mtgen.compare import case_difference, first_difference, spacing

    checks = []

    def check(name, cond):
        checks.append((name, bool(cond)))

    # NaN equals NaN; -0.0 vs +0.0 differs under exact and ulp, not under abs
    check("nan_equals_nan", first_difference(dense([NAN]), dense([NAN]), "exact") is None)
    check("signed_zero_differs_under_exact",
          first_difference(dense([0.0]), dense([-0.0]), "exact") is not None)
    check("signed_zero_differs_under_ulp",
          first_difference(dense([-0.0]), dense([0.0]), "ulp:2") is not None)
    check("signed_zero_ignored_under_abs",
          first_difference(dense([-0.0]), dense([0.0]), "abs:1e-5") is None)
    # float32 spacing of 1.0 is 2**-23: 1 + 2**-23 is 1 ulp away, 1 + 2**-21 is 4
    check("f32_spacing_of_one", spacing(1.0, "float32") == 2.0 ** -23)
    check("one_ulp_within_ulp2",
          first_difference(dense([1 + 2.0 ** -23]), dense([1.0]), "ulp:2") is None)
    check("four_ulp_outside_ulp2",
          first_difference(dense([1 + 2.0 ** -21]), dense([1.0]), "ulp:2") is not None)
    # bfloat16 (8 significant bits) as conformance/compare.c: spacing of 1.0
    # is 2**-7, of 0 the smallest subnormal 2**-133, of the largest finite
    # (2 - 2**-7) 2**127 the spacing below it, 2**120
    check("bf16_spacing_of_one", spacing(1.0, "bfloat16") == 2.0 ** -7)
    check("bf16_spacing_of_zero", spacing(0.0, "bfloat16") == 2.0 ** -133)
    check("bf16_spacing_of_max", spacing((2 - 2.0 ** -7) * 2.0 ** 127, "bfloat16") == 2.0 ** 120)
    check("bf16_one_ulp_within_ulp1",
          first_difference(dense([1 + 2.0 ** -7], "bfloat16"), dense([1.0], "bfloat16"),
                           "ulp:1") is None)
    check("bf16_truncation_fails_exact",
          first_difference(dense([1.0], "bfloat16"), dense([1 + 2.0 ** -7], "bfloat16"),
                           "exact") is not None)
    # infinities only match themselves, even under abs
    check("inf_needs_inf", first_difference(dense([1e300]), dense([INF]), "abs:1e300") is not None)
    # masked: masks exactly; masked-out data ignored unless check_masked_out
    check("masked_out_ignored",
          first_difference(masked([1.0, 5.0], [1, 0]), masked([1.0, 9.0], [1, 0]), "exact")
          is None)
    check("masked_out_compared_when_asked",
          first_difference(masked([1.0, 5.0], [1, 0]), masked([1.0, 9.0], [1, 0]), "exact",
                           check_masked_out=True) is not None)
    check("mask_differs",
          "mask" in (first_difference(masked([1.0, 9.0], [1, 1]), masked([1.0, 9.0], [1, 0]),
                                      "exact") or ""))
    # COO after coalescing: (0,1) stored twice as 1 + 2 equals (0,1) = 3, any order
    check("coo_coalesced_before_compare",
          first_difference(coo([[1, 0, 0], [2, 1, 1]], [7.0, 1.0, 2.0]),
                           coo([[0, 1], [1, 2]], [3.0, 7.0]), "exact") is None)
    check("coo_other_indices_differ",
          first_difference(coo([[0], [2]], [3.0]), coo([[0], [1]], [3.0]), "exact") is not None)
    # integers and bools exactly, whatever the tolerance: 3 vs 4 under abs:10
    check("ints_exact", first_difference(dense([3], "int64"), dense([4], "int64"), "abs:10")
          is not None)
    # a case: identical inputs required, outputs within tolerance
    attrs = {"op": "neg", "expect": "ok", "tolerance": "exact", "rules": "MASK-4"}
    a = {"attrs": attrs, "inputs": [dense([1.0])], "outputs": [dense([-1.0])]}
    b = {"attrs": attrs, "inputs": [dense([1.0])], "outputs": [dense([-1.5])]}
    check("case_moved_names_output", "outputs/0" in (case_difference(b, a) or ""))
    check("case_same", case_difference(a, a) is None)
    # a gradient case: grads within tolerance, None (no gradient) only against None,
    # upstream gradients identical
    ga = {"attrs": attrs, "inputs": [dense([1.0]), dense([2], "int64")],
          "grad_outputs": [dense([0.5])], "grads": [dense([-0.5]), None]}
    gb = dict(ga, grads=[dense([-0.75]), None])
    gc = dict(ga, grads=[dense([-0.5]), dense([0.0])])
    gd = dict(ga, grad_outputs=[dense([0.25])])
    check("grad_case_same", case_difference(ga, ga) is None)
    check("grad_moved_names_grad", "grads/0" in (case_difference(gb, ga) or ""))
    check("grad_none_vs_tensor", "grads/1" in (case_difference(gc, ga) or ""))
    check("grad_outputs_exact", "grad_outputs/0" in (case_difference(gd, ga) or ""))

    for name, ok in checks:
        print(("PASS " if ok else "FAIL ") + name)
    return 0 if all(ok for _, ok in checks) else 1


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    sys.exit(main(sys.argv[1]))

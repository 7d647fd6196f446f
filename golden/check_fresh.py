#!/usr/bin/env python3
"""Are the committed goldens still what torch computes? (uses torch)

    python golden/check_fresh.py [--golden DIR] [--only FAMILY]

Regenerates every family into a temporary directory with golden/generate.py's
code and compares each case with the committed golden/*.h5 the way the
runner does (spec/golden-format.md, "Comparison": masks exactly, values
within the case tolerance, NaN equals NaN, the sign of a golden ±0 under
exact/ulp, COO after coalescing); inputs must be identical. Prints every case
that moved (id, tensor, first differing element) and every case added or
removed; exit 1 if any, 0 if none. Run from the main job (it needs torch);
tests/golden_fresh.py is the torch-free check that the files were made by
the committed generator.
"""
import argparse
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import h5py  # noqa: E402

import generate  # noqa: E402
from golden_read import read_tensor  # noqa: E402
from mtgen.compare import case_difference  # noqa: E402
from mtgen.families import FAMILIES  # noqa: E402


def _attr(v):
    if isinstance(v, bytes):
        return v.decode()
    return v.item() if hasattr(v, "item") and getattr(v, "shape", None) == () else v


def read_cases(path):
    cases = {}
    with h5py.File(path, "r") as f:
        for cid, c in f["cases"].items():
            tensors = {}
            for name in ("inputs", "outputs", "grad_outputs"):
                grp = c.get(name)
                n = len(grp) if grp is not None else 0
                tensors[name] = [read_tensor(grp[str(k)]) for k in range(n)]
            if int(c.attrs.get("backward", 0)):  # grads/<k>: None where torch gives none
                grp = c.get("grads") or {}
                tensors["grads"] = [read_tensor(grp[str(k)]) if str(k) in grp else None
                                    for k in range(len(tensors["inputs"]))]
            cases[cid] = {"attrs": {k: _attr(v) for k, v in c.attrs.items()}, **tensors}
    return cases


def compare_dirs(fresh_dir, golden_dir, families):
    """Lines describing every difference; empty when none."""
    problems = []
    for fam in families:
        name = f"{fam}.h5"
        committed = os.path.join(golden_dir, name)
        if not os.path.exists(committed):
            problems.append(f"{name}: not committed")
            continue
        new, old = read_cases(os.path.join(fresh_dir, name)), read_cases(committed)
        for cid in sorted(set(new) - set(old)):
            problems.append(f"added    {cid} (not in the committed {name})")
        for cid in sorted(set(old) - set(new)):
            problems.append(f"removed  {cid} (committed in {name}, no longer generated)")
        for cid in sorted(set(new) & set(old)):
            why = case_difference(new[cid], old[cid])
            if why:
                problems.append(f"moved    {cid}: {why}")
    return problems


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    here = os.path.dirname(os.path.abspath(__file__))
    ap.add_argument("--golden", default=here, help="committed goldens (default: golden/)")
    ap.add_argument("--only", choices=list(FAMILIES), help="check one family only")
    args = ap.parse_args(argv)
    families = [args.only] if args.only else list(FAMILIES)
    with tempfile.TemporaryDirectory(prefix="mtcs-fresh-") as tmp:
        surprises = generate.generate(tmp, families, quiet=True)
        if surprises:
            print("check_fresh: torch did not behave as the case tables declare:",
                  *surprises, sep="\n  ", file=sys.stderr)
            return 1
        problems = compare_dirs(tmp, args.golden, families)
    for p in problems:
        print(p)
    n = sum(p.startswith("moved") for p in problems)
    print(f"check_fresh: {len(problems)} difference(s) ({n} moved) between torch "
          f"and the committed goldens" if problems else
          "check_fresh: every committed case is what torch computes, within tolerance")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())

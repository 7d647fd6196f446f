#!/usr/bin/env python3
"""Generate the mtcs golden files (format version 1) from PyTorch.

    python golden/generate.py [--out DIR] [--only FAMILY] [--list]

One HDF5 file per op family of spec/include/mt/ops.def (masked, unary,
binary, reduce, optim) plus a MANIFEST. The format is specified in
spec/golden-format.md; the cases live in golden/mtgen/families/, one module
per family. Every expected output is torch's own result; the generator only
chooses inputs (from a per-case seeded RNG), runs torch and records what
torch did. A case declared "ok" that raises, or declared "error" that does
not (or raises another error than the first check it names), stops the
generator with exit status 1 before any file is written.

Set SOURCE_DATE_EPOCH to pin `created_utc`: the files are then
byte-for-byte reproducible on a machine where torch dispatches to the same
CPU kernels (`torch_cpu_capability`, e.g. AVX2 vs AVX512: torch's vectorized
kernels differ in the last ulp, e.g. whether addcmul uses an FMA). Across
capabilities the values differ within the case tolerances.

A family whose cases come out as its file already holds them (everything
bit for bit but floating outputs, which may move within their case
tolerance: torch's kernels differ in the last ulp between CPUs) is not
rewritten: it keeps its created_utc, generator_sha256 and torch 1.13
variants. A generator edit that moves no case changes only the MANIFEST's
generator line, so a commit carries only the golden files whose cases moved.
A family that is written gets the variants of its unchanged cases from the
file it replaces (mtgen/carry.py: a variant is what torch 1.13 computes
from the case's inputs and kwargs, unchanged too); a new or changed case
has none until golden/variants.py (torch 1.13) judges it, so run that after
a family was written.
"""

import argparse
import os
import sys
import warnings

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import torch  # noqa: E402

from mtgen.families import FAMILIES  # noqa: E402
from mtgen.model import Surprise  # noqa: E402
from mtgen.run import numbered, run_case  # noqa: E402
from mtgen.writer import root_attributes, write_family_if_changed, write_manifest  # noqa: E402

warnings.filterwarnings("ignore", category=UserWarning)  # MaskedTensor is a prototype


def run_family(fam):
    """(results, surprises) of one family; the k-th case of an op gets the
    op's k-th poison."""
    results, surprises = [], []
    for case, k in numbered(FAMILIES[fam].cases()):
        try:
            results.append(run_case(case, k))
        except Surprise as e:
            surprises.append(str(e))
    return results, surprises


def generate(out_dir, families, quiet=False):
    """Runs every case of `families` and writes their files and MANIFEST into
    out_dir; returns the list of surprises (nothing written when any)."""
    torch.use_deterministic_algorithms(True)
    meta = root_attributes()
    results, surprises = {}, []
    for fam in families:
        results[fam], s = run_family(fam)
        surprises += s
    if surprises:  # write nothing: the case table must be fixed first
        return surprises
    os.makedirs(out_dir, exist_ok=True)
    counts = {}
    for fam, res in results.items():
        why = write_family_if_changed(os.path.join(out_dir, f"{fam}.h5"), res, meta)
        counts[fam] = len(res)
        n_err = sum(r.case.error_class is not None for r in res)
        if not quiet:
            print(f"{fam}.h5: {len(res)} cases ({n_err} error cases)"
                  + (f", written: {why}" if why else ", unchanged: the committed file is kept"))
    write_manifest(out_dir, counts, list(FAMILIES))
    return []


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", default=os.path.dirname(os.path.abspath(__file__)),
                    help="output directory (default: the golden/ directory)")
    ap.add_argument("--only", choices=list(FAMILIES), help="generate one family only")
    ap.add_argument("--list", action="store_true", help="list case ids and exit")
    args = ap.parse_args(argv)
    families = [args.only] if args.only else list(FAMILIES)

    if args.list:
        for fam in families:
            for c in FAMILIES[fam].cases():
                print(c.id)
        return 0
    surprises = generate(args.out, families)
    if surprises:
        print("generate.py: torch did not behave as declared; no file written:",
              *surprises, sep="\n  ", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""golden/reseed.py end to end: the goldens' cases on fresh draws, through
torch and `mtcs run`.

  - its self-test (ids, input fingerprints);
  - masked mean on fresh draws, CPU backend: every draw passes (exit 0);
  - the same draws with a plugin whose masked mean divides by every
    element, not the specified ones (mutant_mean_total_count): the draws
    fail, named with their file and case (exit 1);
  - an unknown family is a usage error (exit 2).

Needs the repository's venv with the generator's torch (`.ci/setup.sh
--full`) or MTCS_PYTHON: without it the test exits 77 (SKIP) and says why.

    python3 tests/reseed_test.py <mtcs> <source dir> <plugins dir> <work dir>
"""
import os
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from adapters_torch_scipy import SKIP, python_for  # noqa: E402


def main(mtcs, src, plugins, work):
    py, why = python_for(src, ["torch", "h5py"])
    if not py:
        print(f"SKIP: {why}")
        return SKIP
    shutil.rmtree(work, ignore_errors=True)
    tool = os.path.join(src, "golden", "reseed.py")
    failures = []

    def run(args, want_rc, want=(), unwanted=()):
        p = subprocess.run([py, tool, *args, "--mtcs", mtcs, "--work", work],
                           capture_output=True, text=True, timeout=600)
        out = p.stdout + p.stderr
        ok = p.returncode == want_rc and all(w in out for w in want) and \
            not any(u in out for u in unwanted)
        print(f"{'ok  ' if ok else 'FAIL'} reseed {' '.join(args)}: exit {p.returncode}")
        if not ok:
            failures.append(args)
            print(f"  wanted exit {want_rc}, {list(want)}, none of {list(unwanted)}; got:\n"
                  + out[-3000:])
        return out

    run(["--self-test"], 0, ["reseed self-test passed"])
    sel = ["--only", "reduce", "--filter", "mean.masked.f64.*"]
    out = run(sel, 0, ["reseed: every executed draw matches torch", "cpu PASS"],
              ["FAIL "])
    mutant = os.path.join(plugins, "mutant_mean_total_count.so")
    run(sel + ["--backend", mutant], 1,
        ["FAIL " + mutant + " ", "mean.masked.f64.", ".reseed1: output 0",
         "draws diverge from torch"])
    run(["--only", "no_such_family"], 2, ["unknown family 'no_such_family'"])
    # the draws are other data than the committed cases: some were run at all
    if "draws run by torch" not in out or " 0 draws run by torch" in out:
        failures.append("no draw ran")
        print("FAIL: no reseeded draw was run by torch")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:5]))

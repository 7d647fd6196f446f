"""The shipped Python adapters end to end through `mtcs validate` (issue 12):

  torch   conformance/adapters/torch_masked.py on a few families, with
          --require-all --level strict and the poison re-runs (MASK-9): torch
          itself must pass every case it is the source of.
  scipy   conformance/adapters/scipy_sparse.py on a few plain sparse cases:
          the ones scipy computes as torch does pass, a masked one is
          NOT_SUPPORTED with its reason, and one where scipy takes what torch
          refuses fails the run.

Both need the repository's venv (`.venv`, made by `.ci/setup.sh --full`), or
the interpreter named by MTCS_PYTHON: without one that imports torch (scipy),
the test exits 77 (SKIP) and says why. Standard library only.

    python3 tests/adapters_torch_scipy.py <mtcs> <source dir> torch|scipy
"""
import json
import os
import re
import subprocess
import sys
import tempfile

SKIP = 77


def python_for(src, modules):
    """The venv's interpreter if it imports modules, else None and why."""
    py = os.environ.get("MTCS_PYTHON") or os.path.join(src, ".venv", "bin", "python")
    if not os.access(py, os.X_OK):
        return None, f"no venv interpreter {py} (.ci/setup.sh --full makes it; or set MTCS_PYTHON)"
    r = subprocess.run([py, "-c", f"import {', '.join(modules)}"], capture_output=True,
                       text=True)
    if r.returncode != 0:
        last = (r.stderr.strip().splitlines() or ["?"])[-1]
        return None, f"{py} cannot import {', '.join(modules)}: {last}"
    return py, ""


class Checks:
    def __init__(self):
        self.failed = 0

    def check(self, ok, what, output=""):
        print(("ok: " if ok else "FAILED: ") + what)
        if not ok:
            self.failed += 1
            print(output[-4000:])


def validate(mtcs, src, adapter, args, report):
    cmd = [mtcs, "validate", "--adapter", adapter, "--report-json", report] + args
    r = subprocess.run(cmd, cwd=src, capture_output=True, text=True, timeout=1200)
    out = r.stdout + r.stderr
    try:
        with open(report, encoding="utf-8") as f:
            rep = json.load(f)
    except (OSError, ValueError):
        rep = None
    return r.returncode, out, rep


def statuses(rep):
    """{case id: status} of a JSON report (tolerant of its exact layout)."""
    found = {}

    def walk(x):
        if isinstance(x, dict):
            cid, st = x.get("id") or x.get("case"), x.get("status")
            if isinstance(cid, str) and isinstance(st, str):
                found[cid] = st
            for v in x.values():
                walk(v)
        elif isinstance(x, list):
            for v in x:
                walk(v)
    walk(rep)
    return found


def torch_part(mtcs, src, tmp, c):
    py, why = python_for(src, ["torch", "h5py", "numpy"])
    if py is None:
        print(f"SKIP: {why}")
        return SKIP
    # the goldens' torch (golden/requirements.txt pins it): another one differs by design
    with open(os.path.join(src, "golden", "requirements.txt"), encoding="utf-8") as f:
        pin = re.search(r"^torch==([^\s#]+)", f.read(), re.M)
    got = subprocess.run([py, "-c", "import torch; print(torch.__version__)"],
                         capture_output=True, text=True).stdout.strip()
    if pin and got.split("+")[0] != pin.group(1):
        print(f"SKIP: {py} has torch {got}, the goldens need torch {pin.group(1)} "
              "(golden/requirements.txt)")
        return SKIP
    adapter = f"{py} -W ignore {os.path.join(src, 'conformance/adapters/torch_masked.py')}"
    g = os.path.join(src, "golden")
    # (golden file, filter, what it exercises); each run must be all PASS
    runs = [
        ("masked.h5", "*", "masked_tensor/to_tensor, refusals; masked inputs: poison re-runs"),
        ("reduce.h5", "sum.*", "MaskedTensor and COO/CSR sums, fills at level strict (RED-3)"),
        ("binary.h5", "add*.f32.*", "add/add_ of every layout pair, torch's refusals classed"),
        ("optim.h5", "adagrad_*.f32.*", "the three Adagrad paths"),
        ("sparse_optim.h5", "sgd.coo*", "SGD with sparse grads and momentum buffers"),
        ("sparse_convert.h5", "to_sparse*.coo.*", "conversions and their refusals"),
        # gradient cases: torch's autograd through the adapter (its hello says
        # "backward": true), poisoned upstream gradients included
        ("grad_masked.h5", "sum.*", "MaskedTensor sum gradients, the overview's among them"),
        ("grad_masked.h5", "mul.*", "mul gradients: a plain operand's MaskedTensor grad"),
        ("grad_sparse.h5", "mm.*", "the note's mm rows: dense gradients, refusals classed"),
        ("grad_masked_fn.h5", "masked_amax.*", "torch.masked.amax: ties, dense gradients"),
    ]
    for k, (fn, flt, what) in enumerate(runs):
        rc, out, rep = validate(mtcs, src, adapter,
                                ["--golden", os.path.join(g, fn), "--filter", flt,
                                 "--require-all", "--level", "strict"],
                                os.path.join(tmp, f"torch{k}.json"))
        m = re.search(r"(\d+) passed, (\d+) failed", out)
        c.check(rc == 0 and m and int(m.group(1)) > 0 and m.group(2) == "0",
                f"torch_masked.py {fn} '{flt}' ({what}): exit {rc}, "
                f"{m.group(0) if m else 'no summary'}", out)
        if fn == "masked.h5":  # MASK-9: the poisoned copies went through the adapter too
            c.check(re.search(r"poison re-runs: [1-9]\d* per case with masked inputs", out)
                    is not None, "the masked run made its poison re-runs", out)
    return 0


def scipy_part(mtcs, src, tmp, c):
    py, why = python_for(src, ["scipy", "h5py", "numpy"])
    if py is None:
        print(f"SKIP: {why}")
        return SKIP
    adapter = f"{py} -W ignore {os.path.join(src, 'conformance/adapters/scipy_sparse.py')}"
    g = os.path.join(src, "golden")
    # scipy agrees with torch on these (sin of CSR/CSC, COO @ dense); a COO sin is not
    # one of them: scipy drops the canonical flag that torch keeps (SP-6)
    for fn, flt in (("unary.h5", "sin.cs[rc].f*.*"), ("sparse_blas.h5", "mm.coo_dense.f64.*")):
        rc, out, rep = validate(mtcs, src, adapter, ["--golden", os.path.join(g, fn),
                                                     "--filter", flt],
                                os.path.join(tmp, "scipy_ok.json"))
        m = re.search(r"(\d+) passed, (\d+) failed", out)
        c.check(rc == 0 and m and int(m.group(1)) > 0 and m.group(2) == "0",
                f"scipy_sparse.py {fn} '{flt}': exit {rc}, {m.group(0) if m else 'no summary'}",
                out)
    # a masked case: NOT_SUPPORTED with the reason (a failure under --require-all)
    rc, out, rep = validate(mtcs, src, adapter, ["--golden", os.path.join(g, "unary.h5"),
                                                 "--filter", "sin.masked.f32.*", "--require-all"],
                            os.path.join(tmp, "scipy_ns.json"))
    ns = set(statuses(rep).values()) if rep else set()
    c.check(rc == 1 and ns == {"NOT_SUPPORTED"} and "no masked (MaskedTensor) semantics" in out,
            f"scipy_sparse.py on MaskedTensor cases: NOT_SUPPORTED with its reason (exit {rc})",
            out)
    # torch refuses an in-place tanh of an uncoalesced COO (LAYOUT_MISMATCH);
    # scipy computes it: that case must FAIL, and the run with it
    case = "tanh_.coo.f32.plain_uncoalesced"
    rc, out, rep = validate(mtcs, src, adapter, ["--golden", os.path.join(g, "unary.h5"),
                                                 "--filter", case],
                            os.path.join(tmp, "scipy_fail.json"))
    got = statuses(rep).get(case) if rep else None
    c.check(rc == 1 and got == "FAIL", f"scipy_sparse.py on {case}: {got}, exit {rc}", out)
    return 0


def main():
    if len(sys.argv) != 4 or sys.argv[3] not in ("torch", "scipy"):
        print(__doc__)
        return 2
    mtcs, src, which = sys.argv[1], os.path.abspath(sys.argv[2]), sys.argv[3]
    c = Checks()
    with tempfile.TemporaryDirectory(prefix="mtcs-adapters-e2e-") as tmp:
        rc = (torch_part if which == "torch" else scipy_part)(mtcs, src, tmp, c)
    if rc == SKIP:
        return SKIP
    print(f"{c.failed} check(s) failed" if c.failed else "all checks passed")
    return 1 if c.failed else 0


if __name__ == "__main__":
    sys.exit(main())

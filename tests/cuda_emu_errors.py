#!/usr/bin/env python3
"""cuda_emu_errors.py - a CUDA error is the case's error, never a value or a
crash (spec/cuda-backend.md "Contract": DEVICE_ERROR / OUT_OF_MEMORY with
CUDA's message). Two fault-injected builds of the emulation (CMakeLists.txt,
MT_CUDA_EMU_FAULT; impl/cuda/device.cu):

  4  every device allocation fails: OUT_OF_MEMORY "... (fault 4)"
  5  every kernel launch fails:     DEVICE_ERROR "... (fault 5)"

On every golden file (MEASURED; a golden file missing from it fails the
test; numpy_ma.h5 runs with --profile numpy_ma):
  - no case CRASHes or times out (a family that ignores a failed allocation
    would write through a NULL arena);
  - every ERROR, and every FAIL (a case expecting one of torch's errors that
    a kernel would have raised gets the fault's instead), carries the
    fault's message: no other error and no wrong value;
  - at least MEASURED[family] cases error (measured when written; they only
    grow as families get ported): a family that ignores a launch's status
    passes its cases under fault 5 and falls below. Cases that never reach
    the device (torch's refusals, declared gaps, empty problems: under
    fault 5 those also allocate but launch nothing) pass.

    cuda_emu_errors.py MTCS SRC_DIR PLUGIN_DIR
"""
import json
import os
import subprocess
import sys
import tempfile

# family (golden file) -> cases that ERROR or FAIL with fault 4, with fault 5
# (2026-12-02, every golden file of the torch profile)
MEASURED = {
    "binary": (963, 963), "grad_masked": (363, 351), "grad_masked_fn": (91, 89),
    "grad_sparse": (445, 445), "masked": (49, 49), "masked_fn": (918, 918), "optim": (103, 97),
    "reduce": (708, 708), "sparse_blas": (284, 284), "sparse_convert": (481, 481),
    "sparse_misc": (141, 141), "sparse_optim": (179, 179), "structure": (627, 627),
    "unary": (1362, 1362),
    "numpy_ma": (1525, 1525),  # profile numpy_ma (PROFILES)
}
# golden files of another profile than torch: their runs take --profile
PROFILES = {"numpy_ma": "numpy_ma"}


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    mtcs, src, plugins = sys.argv[1:]
    bad = []
    goldens = sorted(f[:-3] for f in os.listdir(os.path.join(src, "golden"))
                     if f.endswith(".h5"))
    if goldens != sorted(MEASURED):
        bad.append(f"golden files {goldens} != MEASURED's {sorted(MEASURED)}: measure the new one")
    with tempfile.TemporaryDirectory() as tmp:
        for fault in (4, 5):
            plugin = os.path.join(plugins, f"cuda_emu_fault{fault}.so")
            tag = f"(fault {fault})"
            for family in sorted(MEASURED):
                report = os.path.join(tmp, f"{family}.{fault}.json")
                cmd = [mtcs, "run", "--backend", plugin, "--golden",
                       os.path.join(src, "golden", f"{family}.h5"), "--report-json", report]
                if family in PROFILES:
                    cmd += ["--profile", PROFILES[family]]
                p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                   text=True)
                if p.returncode not in (0, 1):
                    bad.append(f"{' '.join(cmd)}: exit {p.returncode}\n{p.stdout}{p.stderr}")
                    continue
                with open(report) as f:
                    cases = json.load(f)["cases"]
                errored = 0
                for c in cases:
                    st, msg = c["status"], c.get("message") or ""
                    if st in ("CRASH", "TIMEOUT"):
                        bad.append(f"fault {fault}: {c['id']}: {st}: {msg}")
                    elif st in ("ERROR", "FAIL"):
                        if tag in msg:
                            errored += 1
                        else:
                            bad.append(f"fault {fault}: {c['id']}: {st} without the fault's "
                                       f"message: {msg}")
                want = MEASURED[family][fault - 4]
                print(f"{family}, fault {fault}: {errored} of {len(cases)} cases error with "
                      f"the fault's message (at least {want})")
                if errored < want:
                    bad.append(f"{family}, fault {fault}: only {errored} cases error, at least "
                               f"{want} must (a failed allocation or launch ignored?)")
    if bad:
        print("\n".join(bad[:40]), file=sys.stderr)
        sys.exit(f"{len(bad)} problems")
    print("every injected CUDA error surfaced as the case's error")


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""cuda_emu_errors.py - a CUDA error is the case's error, never a value or a
crash (spec/cuda-backend.md "Contract": DEVICE_ERROR / OUT_OF_MEMORY with
CUDA's message). Two fault-injected builds of the emulation (CMakeLists.txt,
MT_CUDA_EMU_FAULT; impl/cuda/device.cu):

  4  every device allocation fails: OUT_OF_MEMORY "... (fault 4)"
  5  every kernel launch fails:     DEVICE_ERROR "... (fault 5)"

On every family with device compute (cuda_emu_families.py's FAMILIES):
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

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cuda_emu_families import FAMILIES  # noqa: E402

# family -> cases that ERROR or FAIL with fault 4, with fault 5 (2026-12-02)
MEASURED = {
    "masked": (43, 43), "unary": (1362, 1362), "binary": (744, 744), "reduce": (579, 579),
    "structure": (389, 389), "masked_fn": (918, 918), "optim": (103, 97),
    "sparse_optim": (179, 179), "sparse_blas": (284, 284), "sparse_misc": (82, 82),
    "grad_masked": (265, 253), "grad_masked_fn": (85, 83), "grad_sparse": (0, 0),
}


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    mtcs, src, plugins = sys.argv[1:]
    bad = []
    with tempfile.TemporaryDirectory() as tmp:
        for fault in (4, 5):
            plugin = os.path.join(plugins, f"cuda_emu_fault{fault}.so")
            tag = f"(fault {fault})"
            for family in FAMILIES:
                report = os.path.join(tmp, f"{family}.{fault}.json")
                cmd = [mtcs, "run", "--backend", plugin, "--golden",
                       os.path.join(src, "golden", f"{family}.h5"), "--report-json", report]
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
                want = MEASURED.get(family, (0, 0))[fault - 4]
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

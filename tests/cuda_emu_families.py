#!/usr/bin/env python3
"""cuda_emu_families.py - what the CUDA backend covers, checked on its
emulation (backend cuda-emu: the same kernels run on the host; see
impl/cuda/cuda_compat.h and spec/cuda-backend.md).

For every family with device compute, every case of its golden file must
pass on cuda-emu, except the family's declared gap: cases NOT_SUPPORTED
with exactly the gap's message (the README lists each gap and why). A gap
path still runs the host plan's checks, so a case that expects one of
torch's refusals passes there too (mt__exec_values_gap). A
case in the gap that fails, a NOT_SUPPORTED case with another message, or
any FAIL/ERROR/CRASH/TIMEOUT fails this test; so does a gap that grew
past its recorded size (a regression that turns cases NOT_SUPPORTED).

    cuda_emu_families.py MTCS SRC_DIR
"""
import json
import os
import re
import subprocess
import sys
import tempfile

# family -> (message regex of its allowed NOT_SUPPORTED cases, or None,
#            the most such cases allowed: the gap measured when it was declared)
GRAD_GAP = (r"((sparse storage|plain sparse input): the cuda-emu backend has no kernels for it "
            r"yet|cuda-emu: no backward kernel for op \w+)$")
FAMILIES = {
    "masked": (None, 0),
    "unary": (None, 0),
    "binary": (None, 0),
    "reduce": (None, 0),
    "structure": (None, 0),
    "grad_masked": (None, 0),
    "grad_sparse": (None, 0),
    "masked_fn": (None, 0),
    "optim": (None, 0),
    "sparse_optim": (None, 0),
    # torch.masked's functional ops' backward (dense and CSR inputs): no gap
    "grad_masked_fn": (None, 0),
    "sparse_blas": (None, 0),
    "sparse_misc": (None, 0),
    # every conversion, accessor and constructor: values copied by the
    # device's gather, a dense input's stored cells found by its nonzero kernel
    "sparse_convert": (None, 0),
}


def run(mtcs, golden, report):
    cmd = [mtcs, "run", "--backend", "cuda-emu", "--level", "strict", "--golden", golden,
           "--report-json", report]
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if p.returncode not in (0, 1):
        sys.exit(f"{' '.join(cmd)}: exit {p.returncode}\n{p.stdout}{p.stderr}")
    with open(report) as f:
        return json.load(f)


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    mtcs, src = sys.argv[1], sys.argv[2]
    bad = []
    with tempfile.TemporaryDirectory() as tmp:
        for family, (gap, gap_max) in FAMILIES.items():
            golden = os.path.join(src, "golden", f"{family}.h5")
            r = run(mtcs, golden, os.path.join(tmp, f"{family}.json"))
            counts, in_gap = {}, 0
            for c in r["cases"]:
                counts[c["status"]] = counts.get(c["status"], 0) + 1
                if c["status"] == "PASS":
                    continue
                if c["status"] == "NOT_SUPPORTED" and gap and re.search(gap, c["message"]):
                    in_gap += 1
                    continue
                bad.append(f"{family}: {c['id']}: {c['status']}: {c['message']}")
            if in_gap > gap_max:
                bad.append(f"{family}: {in_gap} cases NOT_SUPPORTED, more than the {gap_max} "
                           f"of the declared gap")
            if counts.get("PASS", 0) == 0:
                bad.append(f"{family}: no case passed")
            print(f"{family}: {counts.get('PASS', 0)} pass on cuda-emu, {in_gap} in the "
                  f"declared gap, {len(r['cases'])} cases")
    if bad:
        print("\n".join(bad[:50]))
        sys.exit(f"{len(bad)} problems")


if __name__ == "__main__":
    main()

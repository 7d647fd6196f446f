#!/usr/bin/python3
"""golden/variants.py end to end, under Debian's torch 1.13 (skipped, exit 77,
when this Python has no torch or h5py: `.ci/setup.sh --variants`).

    /usr/bin/python3 tests/variants_e2e.py MTCS SRC WORKDIR

On copies of golden/reduce.h5 and golden/optim.h5 (with MANIFEST) three
cases are made to disagree with torch 1.13, the way a newer torch would:
an output value (amax), an ok case turned into an error case (sum: 1.13
returns outputs), an error case's class (adagrad: 1.13 raises
INVALID_ARGUMENT, the file says MASK_MISMATCH); and a fourth, an OpInfo-drawn
amax case copied under an id and torch_call no table of 1.13 has (as the
samples of a newer torch's OpInfo database are), with a tampered value:
variants.py must replay it from the stored inputs and kwargs (the family's
replay_run) instead of counting it unknown. It must record exactly those
four (two outputs@ groups for amax, one for sum, an error@ attribute), keep the MANIFEST right, be idempotent (a second run rewrites
nothing) and pass --check; then `mtcs run` reports the three as
EXPECTED_DIVERGENCE by default and PASS with --torch-version 1.13.1.
"""
import os
import re
import shutil
import subprocess
import sys

try:
    import h5py
    import numpy as np
    import torch  # noqa: F401 - only to know it is there
except ImportError as e:
    print(f"SKIP: {sys.executable} has no torch/h5py ({e}); .ci/setup.sh --variants")
    sys.exit(77)

AMAX, SUM, ADA = ("amax.masked.f32.all", "sum.masked.f32.all",
                  "adagrad_dense.dense.f32.negative_lr")
SAMPLE, NEWER = "amax.masked.f32.opinfo_1", "amax.masked.f32.opinfo_77"


def run(cmd):
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    return p.returncode, p.stdout + p.stderr


def main():
    mtcs, src, work = sys.argv[1:4]
    gdir = os.path.join(work, "golden")
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(gdir)
    for name in ("reduce.h5", "optim.h5"):
        shutil.copy(os.path.join(src, "golden", name), gdir)
    with open(os.path.join(src, "golden", "MANIFEST")) as f:
        keep = [ln for ln in f if ln.startswith("#") or ln.split()[0] in ("reduce.h5", "optim.h5")]
    with open(os.path.join(gdir, "MANIFEST"), "w") as f:
        f.writelines(keep)
    # only the three cases stay: whatever torch 1.13 does on the others (the
    # committed goldens record it) is not this test's business
    for name, keep_ids in (("reduce.h5", (AMAX, SUM, SAMPLE)), ("optim.h5", (ADA,))):
        with h5py.File(os.path.join(gdir, name), "r+") as f:
            for cid in list(f["cases"]):
                if cid not in keep_ids:
                    del f["cases"][cid]
                else:
                    for k in [k for k in f["cases"][cid] if k.startswith("outputs@")]:
                        del f["cases"][cid][k]
                    for k in [k for k in f["cases"][cid].attrs if k.startswith("error@")]:
                        del f["cases"][cid].attrs[k]
    with h5py.File(os.path.join(gdir, "reduce.h5"), "r+") as f:
        f.move(f"cases/{SAMPLE}", f"cases/{NEWER}")
        c = f[f"cases/{NEWER}"]
        if not str(c.attrs["source"]).startswith("opinfo:"):
            problems_early = f"{SAMPLE} is not an OpInfo-drawn case: {c.attrs['source']!r}"
            print("FAIL:", problems_early)
            return 1
        c.attrs["torch_call"] = "torch.amax(m, <a sample of a newer OpInfo>)"
        v = c["outputs/0/data/values"]
        v[...] = v[()] + np.float32(1.0)
        f[f"cases/{AMAX}/outputs/0/data/values"][()] = np.float32(5.0)
        c = f[f"cases/{SUM}"]
        c.attrs["expect"], c.attrs["error_class"] = "error", "INVALID_ARGUMENT"
        c.attrs["torch_error"] = "ValueError: a newer torch refuses this"
    with h5py.File(os.path.join(gdir, "optim.h5"), "r+") as f:
        c = f[f"cases/{ADA}"]
        c.attrs["error_class"] = "MASK_MISMATCH"
        c.attrs["torch_error"] = "ValueError: Input masks must match"
    # the MANIFEST of the tampered copies, as a newer generator would write it
    subprocess.run([sys.executable, "-c", f"""
import sys; sys.path.insert(0, {os.path.join(src, 'golden')!r})
from mtgen.writer import sha256_file
import os
d = {gdir!r}; p = os.path.join(d, 'MANIFEST')
lines = [l if l.startswith('#') else f"{{l.split()[0]}} {{l.split()[1]}} {{sha256_file(os.path.join(d, l.split()[0]))}}\\n" for l in open(p)]
open(p, 'w').writelines(lines)
"""], check=True)

    problems = []
    sem = os.path.join(work, "SEMANTICS.md")
    with open(sem, "w") as f:
        f.write("# x\n\n## Input validation\n")
    variants = [sys.executable, os.path.join(src, "golden", "variants.py"), "--golden-dir", gdir,
                "--semantics", sem, "--label", "torch-1.13.1"]
    rc, out = run(variants)
    if rc != 0 or "all: 4 cases, 4 differ (value 2, error 2)" not in out:
        problems.append(f"first run: exit {rc}, expected 4 differences:\n{out}")
    with h5py.File(os.path.join(gdir, "reduce.h5"), "r") as f:
        if "outputs@torch-1.13.1" not in f[f"cases/{AMAX}"]:
            problems.append(f"{AMAX}: no outputs@torch-1.13.1")
        if "outputs@torch-1.13.1" not in f[f"cases/{SUM}"]:
            problems.append(f"{SUM}: no outputs@torch-1.13.1 (1.13 returns outputs)")
        if "outputs@torch-1.13.1" not in f[f"cases/{NEWER}"]:
            problems.append(f"{NEWER}: no outputs@torch-1.13.1 (not replayed from its inputs)")
        n = sum("outputs@torch-1.13.1" in c for c in f["cases"].values())
        if n != 3:
            problems.append(f"reduce.h5: {n} cases with a variant, expected 3")
    with h5py.File(os.path.join(gdir, "optim.h5"), "r") as f:
        got = f[f"cases/{ADA}"].attrs.get("error@torch-1.13.1")
        if got != "INVALID_ARGUMENT":
            problems.append(f"{ADA}: error@torch-1.13.1 = {got!r}, expected 'INVALID_ARGUMENT'")
    text = open(sem).read()
    if not re.search(r"## Differences between torch versions\n\n<!-- variants:begin -->\n"
                     r"(.|\n)*\| `amax` \| value \|(.|\n)*<!-- variants:end -->\n\n"
                     r"## Input validation", text):
        problems.append(f"SEMANTICS.md table missing or misplaced:\n{text}")
    rc, out = run(variants)
    if rc != 0 or "rewrote no file" not in out:
        problems.append(f"second run is not idempotent: exit {rc}\n{out}")
    rc, out = run(variants + ["--check"])
    if rc != 0:
        problems.append(f"--check after a run: exit {rc}\n{out}")

    base = [mtcs, "run", "--golden-dir", gdir, "--no-poison", "-v",
            "--filter", AMAX, "--filter", SUM, "--filter", ADA]
    rc, out = run(base)
    if rc != 0 or len(re.findall(r"EXPECTED_DIVERGENCE +\S+ +\(matches (outputs|error)@torch-1\.13\.1",
                                 out)) != 3:
        problems.append(f"mtcs run (default version): exit {rc}, expected 3 divergences:\n{out}")
    rc, out = run(base + ["--torch-version", "1.13.1"])
    if rc != 0 or len(re.findall(r"^PASS ", out, re.M)) != 3:
        problems.append(f"mtcs run --torch-version 1.13.1: exit {rc}, expected 3 PASS:\n{out}")
    for p in problems:
        print("FAIL:", p)
    if not problems:
        shutil.rmtree(work, ignore_errors=True)
        print("variants_e2e: ok")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())

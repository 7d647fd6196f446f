#!/usr/bin/env python3
"""golden_fresh.py - the committed goldens were made by the committed generator.

    python3 tests/golden_fresh.py MTCS H5DUMP SRC

Checks, without torch: every golden/*.h5 records generator_sha256 equal to
sha256(golden/generate.py) (a generator edited without regenerating is
caught), and golden/MANIFEST lists exactly those files with their sha256 and
case counts. Standard library only."""
import glob
import hashlib
import os
import re
import subprocess
import sys


def sha256(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def attr(h5dump, path, name):
    out = subprocess.run([h5dump, "-a", f"/{name}", path], capture_output=True, text=True)
    m = re.search(r'\(0\): "([^"]*)"', out.stdout)
    return m.group(1) if m else None


def main(mtcs, h5dump, src):
    problems = []
    want = sha256(f"{src}/golden/generate.py")
    files = sorted(glob.glob(f"{src}/golden/*.h5"))
    if not files:
        problems.append("no golden/*.h5")
    manifest = {}
    for line in open(f"{src}/golden/MANIFEST"):
        f = line.split()
        if len(f) == 3 and not line.startswith("#"):
            manifest[f[0]] = (int(f[1]), f[2])
    for path in files:
        name = os.path.basename(path)
        got = attr(h5dump, path, "generator_sha256")
        if got != want:
            problems.append(f"{name}: generator_sha256 {got} != sha256(golden/generate.py) "
                            f"{want}: regenerate with golden/generate.py")
        run = subprocess.run([mtcs, "list", "--golden", path], capture_output=True, text=True)
        listing = run.stdout + run.stderr
        m = re.search(r"(\d+) cases in 1 golden file", listing)
        count = int(m.group(1)) if m else -1
        if name not in manifest:
            problems.append(f"{name}: not in golden/MANIFEST")
            continue
        mcount, msha = manifest.pop(name)
        if mcount != count:
            problems.append(f"{name}: MANIFEST says {mcount} cases, the file has {count}")
        if msha != sha256(path):
            problems.append(f"{name}: sha256 differs from golden/MANIFEST")
        print(f"{name}: {count} cases, generator hash ok" if got == want else name)
    for name in manifest:
        problems.append(f"golden/MANIFEST lists {name}, which does not exist")
    for p in problems:
        print("FAIL:", p)
    return 1 if problems else 0


if __name__ == "__main__":
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    sys.exit(main(*sys.argv[1:]))

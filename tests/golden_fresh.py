#!/usr/bin/env python3
"""golden_fresh.py - the committed goldens were made by the committed generator.

    python3 tests/golden_fresh.py MTCS H5DUMP SRC

Checks, without torch: golden/MANIFEST's `# generator_sha256` line equals
the hash of the whole generator (golden/generate.py and every *.py under
golden/mtgen/, spec/golden-format.md "generator_sha256"), so a generator
edited without regenerating is caught (regenerating rewrites only the files
whose cases moved, and always that line); every golden/*.h5 records the
hash of the generator that wrote it (64 hex digits); golden/MANIFEST
lists exactly those files with their sha256 and case counts; and as many
cases hold a torch 1.13 variant as spec/SEMANTICS.md's variants block
records (generate.py drops a rewritten file's variants; variants.py
restores them). Standard library only."""
import glob
import hashlib
import os
import re
import subprocess
import sys


def sha256(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def generator_files(golden):
    """golden/generate.py and every *.py under golden/mtgen/ (no __pycache__),
    as '/'-separated paths relative to golden/, sorted bytewise."""
    rel = ["generate.py"]
    for root, dirs, files in os.walk(os.path.join(golden, "mtgen")):
        dirs[:] = [d for d in dirs if d != "__pycache__"]
        rel += [os.path.relpath(os.path.join(root, f), golden).replace(os.sep, "/")
                for f in files if f.endswith(".py")]
    return sorted(rel, key=lambda p: p.encode())


def generator_sha256(golden):
    """sha256 over the lines `<path>  <sha256 of the file>\n` of
    generator_files(), in that order (the same as golden/mtgen/writer.py)."""
    h = hashlib.sha256()
    for rel in generator_files(golden):
        h.update(f"{rel}  {sha256(os.path.join(golden, rel))}\n".encode())
    return h.hexdigest()


def attr(h5dump, path, name):
    out = subprocess.run([h5dump, "-a", f"/{name}", path], capture_output=True, text=True)
    m = re.search(r'\(0\): "([^"]*)"', out.stdout)
    return m.group(1) if m else None


def variant_cases(h5dump, path):
    """Ids of the cases of path that hold an older torch's variant
    (`outputs@torch-V` group or `error@torch-V` attribute, golden/variants.py)."""
    out = subprocess.run([h5dump, "-n", "1", path], capture_output=True, text=True).stdout
    return set(re.findall(r"^\s*(?:group|attribute)\s+/cases/([^/\s]+)/(?:outputs|error)@",
                          out, re.M))


def recorded_variants(src):
    """The "N differ" of spec/SEMANTICS.md's variants block (variants.py
    writes it when it writes the variants), or None."""
    text = open(f"{src}/spec/SEMANTICS.md").read()
    m = re.search(r"<!-- variants:begin -->.*?: (\d+) differ \(a variant each\)", text, re.S)
    return int(m.group(1)) if m else None


def main(mtcs, h5dump, src):
    problems = []
    want = generator_sha256(f"{src}/golden")
    files = sorted(glob.glob(f"{src}/golden/*.h5"))
    if not files:
        problems.append("no golden/*.h5")
    manifest, recorded, nvar = {}, None, 0
    for line in open(f"{src}/golden/MANIFEST"):
        f = line.split()
        if line.startswith("# generator_sha256 ") and len(f) == 3:
            recorded = f[2]
        elif len(f) == 3 and not line.startswith("#"):
            manifest[f[0]] = (int(f[1]), f[2])
    if recorded != want:
        problems.append(f"golden/MANIFEST: generator_sha256 {recorded} != the generator's hash "
                        f"{want} (golden/generate.py + golden/mtgen/): regenerate with "
                        "golden/generate.py")
    for path in files:
        name = os.path.basename(path)
        got = attr(h5dump, path, "generator_sha256")
        if not got or not re.fullmatch(r"[0-9a-f]{64}", got):
            problems.append(f"{name}: generator_sha256 {got!r} is not a sha256 (the hash of "
                            "the generator that wrote the file)")
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
        print(f"{name}: {count} cases" + (", written by this generator" if got == want
                                           else ", cases unchanged since generator " + (got or "?")[:12]))
        nvar += len(variant_cases(h5dump, path))
    for name in manifest:
        problems.append(f"golden/MANIFEST lists {name}, which does not exist")
    # golden/generate.py rewrites a family's file without the older torch's
    # variants; golden/variants.py puts them back and records their count
    want_var = recorded_variants(src)
    print(f"variants: {nvar} cases hold one, spec/SEMANTICS.md records {want_var}")
    if want_var is None:
        problems.append("spec/SEMANTICS.md: no '<N> differ (a variant each)' in its variants "
                        "block (golden/variants.py writes it), so the variants cannot be counted")
    elif nvar != want_var:
        problems.append(f"{nvar} golden cases hold a torch variant (outputs@/error@), "
                        f"spec/SEMANTICS.md's variants block records {want_var}: after "
                        "regenerating a family, run golden/variants.py (README, step 3)")
    for p in problems:
        print("FAIL:", p)
    return 1 if problems else 0


if __name__ == "__main__":
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    sys.exit(main(*sys.argv[1:]))

#!/usr/bin/python3
"""carry_test.py - golden/mtgen/carry.py: a family file golden/generate.py
rewrites keeps the torch-version variants of its unchanged cases, and only
theirs. Torch-free, on Debian's h5py (the h5py golden/variants.py writes
with). Skipped (77) without h5py.

    /usr/bin/python3 tests/carry_test.py SRC WORKDIR

From seven cases of golden/sparse_blas.h5 (real torch 2.15 outputs and
real torch 1.13.1 variants, both kinds: an `error@torch-1.13.1` attribute
and an `outputs@torch-1.13.1` group) it writes an "old" file, with the
variants, and a "new" one, without them, as generate.py writes a family,
with these changes:

  E1 addmv...f32.default         error variant, unchanged            carried
  O1 addmm...f32.beta0_inf       outputs variant, one output value
                                 one ulp away (inside abs:1.1e-5)    carried
  E2 addmv...f64.default         error variant, an input changed     dropped
  O2 addmm...f64.beta0_inf       outputs variant, an output value
                                 +1 (outside abs:1.9e-14)            dropped
  O3 addmm.dense_dense_csr...    outputs variant, removed            dropped
  N1 (a case with no variant)    unchanged                           neither
  zz.added (a copy of N1)        new                                 neither

and checks carry_variants' two lists, that the carried variants are the
old file's bit for bit, that nothing else of the new file moved, that the
file mode stays and no temporary is left, that a file with nothing to
carry is not rewritten, and cases_differ's answers (variants alone are no
difference; the first change is named).
"""
import os
import shutil
import stat
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import h5check  # noqa: E402
from h5check import check  # noqa: E402

SRC, WORK = h5check.setup()
import h5py  # noqa: E402
import numpy as np  # noqa: E402
from mtgen import carry, h5layout  # noqa: E402


E1 = "addmv.dense_csr_dense.f32.default"
E2 = "addmv.dense_csr_dense.f64.default"
O1 = "addmm.dense_csr_dense.f32.beta0_inf"
O2 = "addmm.dense_csr_dense.f64.beta0_inf"
O3 = "addmm.dense_dense_csr.f32.beta0_nan_inf"
LABEL = "torch-1.13.1"


def write(path, src, ids, variants, edit=None):
    """The cases `ids` of open file `src` as a golden file at `path`, their
    variants kept or not; edit(cases group) changes the copy in memory."""
    with h5py.File(f"{path}.mem", "w", driver="core", backing_store=False,
                   libver=h5layout.LIBVER) as dst:
        h5layout.copy_attrs(src, dst)
        cases = dst.create_group("cases")
        for cid in ids:
            g = cases.create_group(cid)
            h5layout.copy_attrs(src["cases"][cid], g,
                                skip=() if variants else (f"error@{LABEL}",))
            for name in src["cases"][cid]:
                if variants or not carry.is_variant(name):
                    h5layout.copy_tree(src["cases"][cid][name], g, name)
        if edit:
            edit(cases)
        h5layout.write_compact(dst, path)


def variant_objects(cg):
    """{path: object} of case group cg's variants alone."""
    out = {}
    h5layout.flatten(cg, "", out)
    return {k: v for k, v in out.items() if "@" in k or any("@" in a for a in v[0])}


def plain_objects(path):
    out = {}
    with h5py.File(path, "r") as f:
        h5layout.flatten(f, "", out, skip=carry.is_variant)
    return out


def first_finite(values, below):
    return next(i for i, v in enumerate(values.flat) if np.isfinite(v) and abs(v) < below)


os.makedirs(WORK, exist_ok=True)
for f in os.listdir(WORK):
    os.unlink(os.path.join(WORK, f))
golden = os.path.join(SRC, "golden", "sparse_blas.h5")
old, new = os.path.join(WORK, "old.h5"), os.path.join(WORK, "new.h5")
with h5py.File(golden, "r") as src:
    n1 = next(c for c in src["cases"] if not carry.has_variants(src["cases"][c]))
    ids = [E1, E2, O1, O2, O3, n1]
    check("the chosen golden cases hold the variants this test is about",
          all(carry.has_variants(src["cases"][c]) for c in ids[:5])
          and f"error@{LABEL}" in src["cases"][E1].attrs
          and f"outputs@{LABEL}" in src["cases"][O1], "golden/sparse_blas.h5 moved")
    write(old, src, ids, variants=True)

    def edit(cases):
        v = cases[O1]["outputs/0/values"]
        a = v[()]
        i = first_finite(a, 1.0)
        a.flat[i] = np.nextafter(a.flat[i], np.float32(np.inf))
        v[...] = a
        v = cases[O2]["outputs/0/values"]
        a = v[()]
        a.flat[first_finite(a, np.inf)] += 1.0
        v[...] = a
        v = cases[E2]["inputs/0/values"]
        a = v[()]
        a.flat[0] += 1.0
        v[...] = a
        del cases[O3]
        h5layout.copy_tree(cases[n1], cases, "zz.added")
    write(new, src, ids, variants=False, edit=edit)

    stripped = os.path.join(WORK, "stripped.h5")
    write(stripped, src, ids, variants=False)

# cases_differ: variants are no difference, a changed case is named
check("cases_differ: a file less its variants holds the same cases",
      carry.cases_differ(old, stripped) is None, str(carry.cases_differ(old, stripped)))
why = carry.cases_differ(old, new)
check("cases_differ: an added and a removed case are named",
      why is not None and why.startswith("2 cases added or removed"), str(why))
with h5py.File(old, "r") as fo, h5py.File(new, "r") as fn:
    for cid, expect in ((E1, None), (O1, None), (E2, "/inputs/0/values"),
                        (O2, "outputs/0")):
        d = carry.case_difference(fo["cases"][cid], fn["cases"][cid])
        check(f"case_difference of {cid}: {'none' if expect is None else expect}",
              d is None if expect is None else (d is not None and expect in d), str(d))
    a = fn["cases"][O1]["outputs/0/values"][()]
    b = fo["cases"][O1]["outputs/0/values"][()]
    check("... the moved value of O1 really moved (the loose comparison is exercised)",
          a.tobytes() != b.tobytes())

# carry_variants
os.chmod(new, 0o640)
before = plain_objects(new)
carried, left = carry.carry_variants(old, new)
check("carried: the unchanged cases with variants", sorted(carried) == sorted([E1, O1]),
      str(carried))
check("left: the changed and the removed cases with variants",
      left == sorted([E2, O2, O3]), str(left))
after = plain_objects(new)
check("nothing but variants changed in the new file", after.keys() == before.keys()
      and all(h5layout.same_object(after[k], before[k]) for k in before))
with h5py.File(old, "r") as fo, h5py.File(new, "r") as fn:
    for cid in (E1, O1):
        vo, vn = variant_objects(fo["cases"][cid]), variant_objects(fn["cases"][cid])
        check(f"{cid}: its variants are the old file's", vo.keys() == vn.keys() and vo
              and all(h5layout.same_object(vo[k], vn[k]) for k in vo),
              f"{sorted(vo)} vs {sorted(vn)}")
    for cid in (E2, O2, n1, "zz.added"):
        check(f"{cid}: no variant", not carry.has_variants(fn["cases"][cid]))
    check("the error variant's attribute kept its stored type",
          f"error@{LABEL}" in fn["cases"][E1].attrs
          and fo["cases"][E1].attrs.get_id(f"error@{LABEL}").dtype
          == fn["cases"][E1].attrs.get_id(f"error@{LABEL}").dtype)
check("the file mode is kept", stat.S_IMODE(os.stat(new).st_mode) == 0o640,
      oct(os.stat(new).st_mode))
check("no temporary file is left",
      sorted(os.listdir(WORK)) == ["new.h5", "old.h5", "stripped.h5"], str(os.listdir(WORK)))
relaid = os.path.join(WORK, "relaid.h5")
shutil.copyfile(new, relaid)
h5layout.relayout(relaid)
with open(new, "rb") as fa, open(relaid, "rb") as fb:
    check("the carried file is in h5layout's layout (relayout changes no byte)",
          fa.read() == fb.read())
os.unlink(relaid)

# nothing to carry: the file is not rewritten
plain = os.path.join(WORK, "plain.h5")
shutil.copyfile(stripped, plain)
with open(plain, "rb") as f:
    bytes_before = f.read()
res = carry.carry_variants(stripped, plain)
with open(plain, "rb") as f:
    check("a file with no variant to carry is left byte for byte",
          res == ([], []) and f.read() == bytes_before, str(res))

h5check.finish()

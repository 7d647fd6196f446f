#!/usr/bin/python3
"""h5layout_test.py - golden/mtgen/h5layout.py, the layout the goldens are
stored in, on Debian's h5py / HDF5 1.10 (the library golden/variants.py
writes with and the runner reads with). Skipped (77) without h5py.

    /usr/bin/python3 tests/h5layout_test.py SRC WORKDIR

Checks: lookup3 on the test vectors of Bob Jenkins' lookup3.c (driver5:
hashlittle("", 0, 0) = 0xdeadbeef, ("", 0, 0xdeadbeef) = 0xbd5b7dde,
("Four score and seven years ago", 30, 0) = 0x17770551, (..., 1) =
0xcd628161); a golden-like file written twice, over a second apart, gives
the same bytes (HDF5 stamps the superblock extension with the time:
zero_extension_times must undo it); it holds the same objects, attributes
and data as the file it was made from, in fewer bytes than that file's plain
h5py write; datasets compact up to COMPACT_MAX, contiguous above it;
attributes kept in the header; no object timestamps; h5dump (HDF5 1.10)
reads it whole; relayout of it is the identity; and a superblock extension
whose checksum does not match, or a file that is not HDF5, is refused with
the file left as it was.
"""
import os
import shutil
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import h5check  # noqa: E402
from h5check import check  # noqa: E402

SRC, WORK = h5check.setup()
import h5py  # noqa: E402
import numpy as np  # noqa: E402
from mtgen import h5layout  # noqa: E402


def fill(f):
    """A golden-like file: root attributes, one case with more attributes
    than HDF5 keeps in a header by default, masked/COO/scalar tensors, an
    empty dataset and one dataset too large to be compact."""
    for k, v in (("format", "mtcs-golden"), ("format_version", np.int64(3)),
                 ("generator", "h5layout_test"), ("generator_sha256", "0" * 64),
                 ("torch_version", "0"), ("numpy_version", np.__version__),
                 ("torch_cpu_capability", "none"), ("reproducible", "yes"),
                 ("created_utc", "2026-12-03T00:00:00Z")):
        f.attrs[k] = v
    c = f.create_group("cases").create_group("add.masked_masked.f32.basic")
    for k, v in (("op", "add"), ("profile", "torch"), ("rules", "MASK-1,MASK-2"),
                 ("tolerance", "exact"), ("expect", "ok"), ("torch_call", "torch.add(a, b)"),
                 ("poison", "nan"), ("source", "ours"), ("input_masks", "a,b"),
                 ("check_masked_out", np.int64(1)), ("backward", np.int64(1)),
                 ("requires_grad", "0")):
        c.attrs[k] = v
    c.create_group("kwargs").attrs["alpha"] = np.float64(2.0)
    for part in ("inputs", "outputs"):
        t = c.create_group(part).create_group("0")
        t.attrs.update({"kind": "masked", "dtype": "float32",
                        "shape": np.asarray([3, 4], dtype=np.int64)})
        for sub, data in (("data", np.arange(12, dtype=np.float32).reshape(3, 4)),
                          ("mask", (np.arange(12) % 3 == 0).astype(np.uint8).reshape(3, 4))):
            g = t.create_group(sub)
            g.attrs.update({"kind": "dense", "dtype": "float32" if sub == "data" else "bool",
                            "shape": np.asarray([3, 4], dtype=np.int64)})
            g.create_dataset("values", data=data)
    s = c["inputs"].create_group("1")
    s.attrs.update({"kind": "coo", "dtype": "float64", "coalesced": np.bool_(True),
                    "shape": np.asarray([5, 0], dtype=np.int64)})
    s.create_dataset("indices", data=np.zeros((2, 0), dtype=np.int64))
    s.create_dataset("values", data=np.zeros((0,), dtype=np.float64))
    c["inputs"].create_group("2").create_dataset("value", data=np.float64(-0.0))
    big = f["cases"].create_group("big.dense.f64.large").create_group("outputs")
    big.create_dataset("values", data=np.linspace(0, 1, h5layout.COMPACT_MAX // 8 + 1))


os.makedirs(WORK, exist_ok=True)
plain, a, b = (os.path.join(WORK, n) for n in ("plain.h5", "a.h5", "b.h5"))

vectors = ((b"", 0, 0xDEADBEEF), (b"", 0xDEADBEEF, 0xBD5B7DDE),
           (b"Four score and seven years ago", 0, 0x17770551),
           (b"Four score and seven years ago", 1, 0xCD628161))
for data, init, want in vectors:
    got = h5layout.lookup3(data, init)
    check(f"lookup3({data[:4]!r}..., {init:#x})", got == want, f"{got:#x}, want {want:#x}")

with h5py.File(plain, "w", libver=h5layout.LIBVER) as f:
    fill(f)
for dst in (a, b):
    with h5py.File(plain, "r") as f:
        h5layout.write_compact(f, dst)
    if dst == a:
        time.sleep(1.1)  # HDF5's timestamps have a resolution of one second
with open(a, "rb") as fa, open(b, "rb") as fb:
    check("two writes a second apart give the same bytes", fa.read() == fb.read())
check("same objects, attributes and data as the plain file",
      h5layout.objects_differ(plain, a) is None, str(h5layout.objects_differ(plain, a)))
check("fewer bytes than h5py's plain write", os.path.getsize(a) < os.path.getsize(plain),
      f"{os.path.getsize(a)} >= {os.path.getsize(plain)}")

with h5py.File(a, "r") as f:
    layouts = {}
    f.visititems(lambda name, o: layouts.__setitem__(name, o.id.get_create_plist().get_layout())
                 if isinstance(o, h5py.Dataset) else None)
    big = "cases/big.dense.f64.large/outputs/values"
    check("datasets up to COMPACT_MAX are compact",
          all(v == h5py.h5d.COMPACT for k, v in layouts.items() if k != big) and len(layouts) == 8,
          str(layouts))
    check("a dataset above COMPACT_MAX is contiguous", layouts.get(big) == h5py.h5d.CONTIGUOUS)
    case = f["cases/add.masked_masked.f32.basic"]
    check("the case group keeps its 12 attributes in its header",
          case.id.get_create_plist().get_attr_phase_change()
          == (h5layout.MAX_COMPACT_ATTRS, h5layout.MIN_DENSE_ATTRS))
    check("no object timestamps", not case.id.get_create_plist().get_obj_track_times())

h5dump = shutil.which("h5dump")
check("h5dump is installed (hdf5-tools)", h5dump is not None)
if h5dump:
    p = subprocess.run([h5dump, a], capture_output=True, text=True)
    check("h5dump reads the whole file", p.returncode == 0 and "-0" in p.stdout,
          p.stderr[-300:])

again = os.path.join(WORK, "again.h5")
shutil.copyfile(a, again)
h5layout.relayout(again)
with open(a, "rb") as fa, open(again, "rb") as fg:
    check("relayout of a relaid file changes no byte", fa.read() == fg.read())

broken = os.path.join(WORK, "broken.h5")
shutil.copyfile(a, broken)
with open(broken, "r+b") as f:
    f.seek(20)
    ext = int.from_bytes(f.read(8), "little")
    f.seek(ext + 6)
    f.write(b"\x01")  # a timestamp byte: the stored checksum no longer matches
with open(broken, "rb") as f:
    before = f.read()
try:
    h5layout.zero_extension_times(broken)
    check("a superblock extension with a wrong checksum is refused", False)
except ValueError as e:
    check("a superblock extension with a wrong checksum is refused", "checksum" in str(e), str(e))
with open(broken, "rb") as f:
    check("... and left as it was", f.read() == before)
notes = os.path.join(WORK, "notes.txt")
with open(notes, "w") as f:
    f.write("not an HDF5 file\n" * 4)
try:
    h5layout.zero_extension_times(notes)
    check("a file that is not HDF5 is refused", False)
except ValueError as e:
    check("a file that is not HDF5 is refused", "not an HDF5 file" in str(e), str(e))

h5check.finish()

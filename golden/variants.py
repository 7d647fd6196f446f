#!/usr/bin/python3
"""Record what an older torch does differently: outputs@torch-<V> variants.

    /usr/bin/python3 golden/variants.py [--golden-dir DIR] [--label torch-V]
                                        [--only FAMILY] [--semantics FILE | --no-semantics]
                                        [--check] [-v]

Run it with the oldest torch available (Debian's python3-torch 1.13 and
python3-h5py, installed by `.ci/setup.sh --variants`). For every case of
the golden files in DIR (default golden/) it reads the inputs and kwargs
back from the file, runs the case's own torch call (the `run` of the case
of the same id in golden/mtgen/families/<family>.py, else of a case with
the same op and `torch_call`, since ids drawn from torch's OpInfo samples
differ between versions; else, for a case drawn from an OpInfo sample, the
family's `replay_run(op)`, which runs the op on the stored inputs and
kwargs alone) under this torch and
compares the result with the recorded `outputs` the way the runner does
(masks exactly, values within the case tolerance; error cases: whether
this torch raises, and the error class). Where it differs the case gets

  outputs@torch-V       this torch's outputs, in golden format, when it
                        returns outputs where the file's torch returns
                        others or raises;
  attribute error@torch-V = <status name>   when it raises where the
                        file's torch does not, or raises another class
                        (spec/golden-format.md, "Output variants").

The files are rewritten in place (atomically; only cases that differ get a
variant; earlier variants of the same label are replaced, so re-running is
idempotent), the sha256 lines of DIR/MANIFEST are updated, the table
between `<!-- variants:begin -->` and `<!-- variants:end -->` in
spec/SEMANTICS.md is regenerated (by a run of every file, not --only's),
and a summary is printed: cases per
family, how many differ and why (value, mask, dtype, shape, error), and how
many this torch cannot run at all (an op, kwarg or layout it does not have:
counted with the exception, no variant, since "the op does not exist" is
not a semantics an implementation can be held to).

V is torch.__version__, except for Debian's build, whose __version__ is a
placeholder ("1.13.0a0" for python3-torch 1.13.1+dfsg): there the upstream
version of the Debian package is used (1.13.1). --label overrides both.

Exit status: 0 done (differences are data, not failures); 1 a golden file
or the MANIFEST could not be read or written; 2 usage. --check writes
nothing and exits 1 when a file's recorded variants, or the SEMANTICS.md
table, are not what this torch gives (CI: the committed ones are current).
"""
import argparse
import collections
import faulthandler
import fnmatch
import importlib
import io
import os
import re
import subprocess
import sys
import tempfile
import types
import warnings

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import h5py  # noqa: E402
import numpy as np  # noqa: E402
import torch  # noqa: E402

import mtgen.opinfo  # noqa: E402

mtgen.opinfo.ALLOW_MISSING_DB = True  # before any family builds its case list
from golden_read import COMPRESSED_NAMES, compressed_entries, decode, read_tensor  # noqa: E402
from mtgen.compare import first_difference  # noqa: E402
from mtgen.h5layout import copy_attrs, copy_tree, rewrite_cases  # noqa: E402
from mtgen.inputs import clone  # noqa: E402
from mtgen.run import torch_error_text  # noqa: E402
from mtgen.model import DTYPE_NAMES  # noqa: E402
from mtgen.writer import FILE_MODE, sha256_file, to_numpy, write_tensor  # noqa: E402

warnings.filterwarnings("ignore")  # MaskedTensor is a prototype; 1.13 warns a lot

try:
    from torch.masked import MaskedTensor, masked_tensor
except ImportError:  # torch without torch.masked: no masked case can run
    MaskedTensor = masked_tensor = None

BEGIN, END = "<!-- variants:begin -->", "<!-- variants:end -->"
SECTION = "## Differences between torch versions"
LABEL_RE = re.compile(r"^torch-[0-9]+(\.[0-9]+)*((a|b|rc)[0-9]+)?(\.post[0-9]+)?(\.dev[0-9]+)?"
                      r"(\+[a-z0-9]+(\.[a-z0-9]+)*)?$")
TORCH_DTYPES = {"float32": torch.float32, "float64": torch.float64, "float16": torch.float16,
                "int64": torch.int64, "int32": torch.int32, "int8": torch.int8,
                "uint8": torch.uint8, "bool": torch.bool, "bfloat16": torch.bfloat16}
KINDS = ("value", "mask", "dtype", "shape", "layout", "outputs", "error")


# ---- the version label ------------------------------------------------------------------

def torch_label():
    """torch-<torch.__version__>, or torch-<upstream version> for Debian's
    build (its __version__ is a placeholder such as 1.13.0a0)."""
    v = str(torch.__version__)
    if torch.__file__.startswith("/usr/lib/python3/dist-packages/"):
        try:
            out = subprocess.run(["dpkg-query", "-W", "-f=${Version}", "python3-torch"],
                                 capture_output=True, text=True, timeout=30)
            m = re.match(r"^(?:[0-9]+:)?([0-9]+(?:\.[0-9]+)*)", out.stdout.strip())
            if out.returncode == 0 and m:
                v = m.group(1)
        except (OSError, subprocess.SubprocessError):
            pass
    return f"torch-{v}"


# ---- golden -> torch -------------------------------------------------------------------

def read_torch(g):
    """A golden tensor group as what the case's run takes: a tensor, a
    MaskedTensor or a Python number (scalar groups)."""
    kind, dtype = decode(g.attrs["kind"]), TORCH_DTYPES[decode(g.attrs["dtype"])]
    shape = tuple(int(n) for n in g.attrs["shape"])

    def arr(name, dt=dtype):
        a = np.ascontiguousarray(g[name][()])
        t = torch.from_numpy(a.copy()).reshape(a.shape)
        return t.to(torch.bool) if dt == torch.bool else t.to(dt)

    if kind == "scalar":
        v = g["value"][()].item()
        return bool(v) if dtype == torch.bool else int(v) if not dtype.is_floating_point \
            else float(v)
    if kind == "dense":
        return arr("values").reshape(shape)
    if kind == "coo":
        t = torch.sparse_coo_tensor(arr("indices", torch.int64), arr("values"), shape)
        return t._coalesced_(bool(g.attrs.get("coalesced", False)))
    if kind in COMPRESSED_NAMES:
        cname, pname = COMPRESSED_NAMES[kind]
        return torch.sparse_compressed_tensor(arr(cname, torch.int64), arr(pname, torch.int64),
                                              arr("values"), size=shape,
                                              layout=getattr(torch, "sparse_" + kind))
    if kind == "masked":
        if masked_tensor is None:
            raise NotImplementedError("this torch has no torch.masked.MaskedTensor")
        return masked_tensor(read_torch(g["data"]), read_torch(g["mask"]))
    raise ValueError(f"unknown tensor kind {kind!r}")


def read_kwargs(g, case_kwargs):
    """The kwargs group as Python values; a kwarg the case passes as None
    (never written) comes back as None."""
    kw = {k: None for k in case_kwargs}
    for k, v in g.attrs.items():
        if isinstance(v, (bytes, str)):
            kw[k] = decode(v)
        elif isinstance(v, np.ndarray) and v.ndim == 1 and v.dtype.kind == "f":
            kw[k] = tuple(float(x) for x in v)
        elif isinstance(v, np.ndarray) and v.ndim == 1:
            kw[k] = tuple(int(x) for x in v)
        elif isinstance(v, (np.bool_, bool)) or getattr(v, "dtype", None) == np.bool_:
            kw[k] = bool(v)
        elif isinstance(v, np.integer):
            kw[k] = int(v)
        else:
            kw[k] = float(v)
    return kw


COMPRESSED_LAYOUTS = {getattr(torch, "sparse_" + k): k for k in COMPRESSED_NAMES
                      if hasattr(torch, "sparse_" + k)}


def to_dict(x):
    """This torch's output as read_tensor would read it back once written by
    mtgen/writer.py (no HDF5 round trip: most outputs are only compared)."""
    if MaskedTensor is not None and isinstance(x, MaskedTensor):
        data, mask = x.get_data(), x.get_mask()
        return {"kind": "masked", "dtype": DTYPE_NAMES[data.dtype],
                "shape": tuple(int(n) for n in data.shape),
                "data": to_dict(data), "mask": to_dict(mask)}
    if isinstance(x, (bool, int, float)):
        dtype = {bool: "bool", int: "int64", float: "float64"}[type(x)]
        return {"kind": "scalar", "dtype": dtype, "shape": (),
                "value": int(x) if isinstance(x, bool) else x}
    t = {"dtype": DTYPE_NAMES[x.dtype], "shape": tuple(int(n) for n in x.shape)}
    if x.layout == torch.sparse_coo:
        vals = to_numpy(x._values())
        t.update(kind="coo", indices=to_numpy(x._indices()).astype(np.int64).tolist(),
                 values=[list(r.reshape(-1).tolist()) for r in vals] if vals.ndim > 1 else
                 [[v] for v in vals.tolist()])
    elif x.layout in COMPRESSED_LAYOUTS:
        kind = COMPRESSED_LAYOUTS[x.layout]
        comp, plain = ((x.crow_indices(), x.col_indices()) if kind in ("csr", "bsr")
                       else (x.ccol_indices(), x.row_indices()))
        idx, vals = compressed_entries(kind, tuple(x.shape), x.dense_dim(),
                                       to_numpy(comp).astype(np.int64),
                                       to_numpy(plain).astype(np.int64), to_numpy(x.values()))
        t.update(kind=kind, indices=idx, values=vals)
    else:
        t.update(kind="dense", values=to_numpy(x).reshape(-1).tolist())
    return t


def read_list(g):
    return [g[str(k)] for k in range(len(g))] if g is not None else []


# ---- error classes ----------------------------------------------------------------------

# Exceptions that say this torch does not have the op, kwarg or layout: not a
# semantics, counted apart and never recorded as a variant.
UNAVAILABLE = (
    (AttributeError, ""), (ImportError, ""), (NotImplementedError, ""),
    (TypeError, "unexpected keyword"), (TypeError, "positional argument"),
    (TypeError, "no attribute"), (TypeError, "not supported"), (TypeError, "argument"),
    (RuntimeError, "not implemented"), (RuntimeError, "does not support"),
    (RuntimeError, "is not supported"), (RuntimeError, "Could not run"),
    (RuntimeError, "unsupported"),
    # MaskedTensor's __torch_dispatch__ has no handler for the op in this torch
    (TypeError, "no implementation found for"),
)

# The first pattern found in the exception's text gives the status class
# (regular expressions: "mask" as a word, not the "Mask" of "MaskedTensor").
ERROR_CLASSES = (
    (r"\bmasks?\b", "MASK_MISMATCH"), ("layout", "LAYOUT_MISMATCH"), ("sparse", "LAYOUT_MISMATCH"),
    ("dtype", "DTYPE_MISMATCH"), ("type", "DTYPE_MISMATCH"), ("out of range", "INDEX_OUT_OF_RANGE"),
    ("out of bounds", "INDEX_OUT_OF_RANGE"), ("index", "INDEX_OUT_OF_RANGE"),
    ("size", "SHAPE_MISMATCH"), ("shape", "SHAPE_MISMATCH"), ("dimension", "SHAPE_MISMATCH"),
)


def unavailable(e):
    text = f"{type(e).__name__}: {e}"
    return any(isinstance(e, t) and s.lower() in text.lower() for t, s in UNAVAILABLE)


def text_class(text):
    """The status class ERROR_CLASSES gives an exception text, or None."""
    low = text.lower()
    for pat, cls in ERROR_CLASSES:
        if re.search(pat, low):
            return cls
    return None


def error_class(e, recorded_class=None, recorded_error=None, error_match=None):
    """The mt status class this torch's exception maps to. For an error
    case: the case's own class when the exception is the one recorded
    (same type and message), carries the case's error_match (the same
    first check), or maps (ERROR_CLASSES) to the class the recorded
    exception maps to. Else the ERROR_CLASSES class of its message, else
    INVALID_ARGUMENT."""
    text = torch_error_text(e)
    mine = text_class(text.split(": ", 1)[-1])
    if recorded_class:
        theirs = text_class((recorded_error or "").split(": ", 1)[-1])
        if text == recorded_error or (error_match and error_match in text) or mine == theirs:
            return recorded_class
    return mine or "INVALID_ARGUMENT"


# ---- one case ---------------------------------------------------------------------------

Outcome = collections.namedtuple("Outcome", "kind detail mine theirs outputs error_class")
# kind: same | value | mask | dtype | shape | layout | outputs | error | unavailable | unknown


def outputs_difference(outs, golden_outs, tol, cmo):
    """(kind, detail) of the first difference between this torch's outputs
    and the golden's (h5py groups); (None, None) when they match."""
    if len(outs) != len(golden_outs):
        return "outputs", f"{len(outs)} outputs, golden {len(golden_outs)}"
    for k, (x, gg) in enumerate(zip(outs, golden_outs)):
        got, want = to_dict(x), read_tensor(gg)
        if got["kind"] != want["kind"]:
            return "layout", f"output {k}: kind {got['kind']!r}, golden {want['kind']!r}"
        why = first_difference(got, want, tol, check_masked_out=cmo,
                               where=f"output {k}")
        if why:
            if re.search(r": kind ", why):
                return "layout", why
            if re.search(r": dtype ", why):
                return "dtype", why
            if re.search(r": shape ", why):
                return "shape", why
            if " mask" in why.split(":")[0]:
                return "mask", why
            return "value", why
    return None, None


def short(outs):
    """A few words on outputs: 'masked float32 (3,)'."""
    return ", ".join(f"{decode(g.attrs['kind'])} {decode(g.attrs['dtype'])} "
                     f"{tuple(int(n) for n in g.attrs['shape'])}" for g in outs) or "nothing"


def run_one(cg, case, scratch):
    """The Outcome of golden case group cg (h5py) with mtgen Case `case`."""
    expect_error = decode(cg.attrs.get("expect", "ok")) == "error"
    rec_class = decode(cg.attrs.get("error_class")) if expect_error else None
    golden_outs = read_list(cg.get("outputs"))
    theirs = (f"raises {rec_class} ({decode(cg.attrs.get('torch_error', '?'))})" if expect_error
              else f"returns {short(golden_outs)}")
    try:
        inputs = [read_torch(g) for g in read_list(cg["inputs"])]
        kwargs = read_kwargs(cg["kwargs"], case.kwargs)
    except Exception as e:  # noqa: BLE001 - a layout/dtype this torch cannot build
        return Outcome("unavailable", f"reading the inputs: {torch_error_text(e)}",
                       torch_error_text(e), theirs, None, None)
    try:
        with torch.no_grad():
            outs = case.run([clone(x) for x in inputs], kwargs)
    except Exception as e:  # noqa: BLE001 - any torch exception is data
        text = torch_error_text(e)
        if unavailable(e) and not expect_error:
            return Outcome("unavailable", text, text, theirs, None, None)
        cls = error_class(e, rec_class, decode(cg.attrs.get("torch_error")), case.error_match)
        if expect_error and cls == rec_class:
            return Outcome("same", "", f"raises {cls}", theirs, None, None)
        if expect_error and unavailable(e):  # raises too, for a reason of its own
            return Outcome("same", "", f"raises ({text})", theirs, None, None)
        return Outcome("error", f"raises {cls} ({text})", f"raises {cls} ({text})", theirs, None,
                       cls)
    mem = scratch.create_group(cg.name.split("/")[-1])
    try:
        if expect_error:
            for k, x in enumerate(outs):
                write_tensor(mem.create_group(str(k)), x)
            mine = short(read_list(mem))
            return Outcome("error", f"does not raise: returns {mine}", f"returns {mine}", theirs,
                           mem, None)
        tol = decode(cg.attrs.get("tolerance", "exact"))
        cmo = bool(cg.attrs.get("check_masked_out", 0))
        kind, why = outputs_difference(outs, golden_outs, tol, cmo)
        if kind is None:
            return Outcome("same", "", "", theirs, None, None)
        for k, x in enumerate(outs):
            write_tensor(mem.create_group(str(k)), x)
    except Exception as e:  # noqa: BLE001 - an output the golden format has no place for
        return Outcome("unavailable", f"writing the outputs: {torch_error_text(e)}",
                       torch_error_text(e), theirs, None, None)
    return Outcome(kind, why, f"returns {short(read_list(mem))}", theirs, mem, None)


# ---- the families -----------------------------------------------------------------------

def family_cases(fam):
    """({case id: Case} of family `fam` under this torch, its replay_run or
    None), or (the exception text, None) when its module cannot be
    imported or its case table not built."""
    try:
        mod = importlib.import_module(f"mtgen.families.{fam}")
        return {c.id: c for c in mod.cases()}, getattr(mod, "replay_run", None)
    except Exception as e:  # noqa: BLE001 - counted, not fatal
        return f"family {fam}: {torch_error_text(e)}", None


def replay_case(cg, replay_run):
    """A stand-in Case for an OpInfo-drawn case (attribute `source`
    "opinfo:...") whose sample this torch's OpInfo database does not
    generate: the family's replay_run(op) runs the op on the inputs and
    kwargs stored in the file, so the sample needs no rebuilding. None for
    any other case, or a family without replay_run."""
    src = decode(cg.attrs.get("source", ""))
    if replay_run is None or not src.startswith("opinfo:"):
        return None
    try:
        run = replay_run(decode(cg.attrs.get("op")))
    except (KeyError, AttributeError):  # an op this torch's family does not know
        return None
    return types.SimpleNamespace(run=run, kwargs={k: None for k in cg["kwargs"].attrs},
                                 error_match=None)


def by_call(cases):
    """{(op, torch_call): Case} of a family's cases (a call made by several
    cases maps to the first; their runs are the same Python line)."""
    idx = {}
    for c in cases.values():
        idx.setdefault((c.op, c.torch_call), c)
    return idx


# ---- files ------------------------------------------------------------------------------

def rewrite(path, label, results):
    """Rewrites golden file `path` atomically: every case as it was, less
    its earlier outputs@label / error@label, plus the new variants of
    `results` ({case id: Outcome}); a case that was not run (unknown,
    --skip) keeps the variant it had. Built in memory, then written in
    mtgen/h5layout.py's layout, as golden/generate.py writes."""
    def fill(cid, cg, g):
        o = results.get(cid)
        keep = o is None or o.kind == "unknown"  # not run: its variant stays
        copy_attrs(cg, g, skip=() if keep else (f"error@{label}",))
        for name in cg:
            if keep or name != f"outputs@{label}":
                copy_tree(cg[name], g, name)
        if o is None or o.kind in ("same", "unavailable", "unknown"):
            return
        if o.error_class:
            g.attrs[f"error@{label}"] = o.error_class
        elif o.outputs is not None:
            copy_tree(o.outputs, g, f"outputs@{label}")
    rewrite_cases(path, fill, FILE_MODE)


def recorded(cg, label):
    """The variant cg holds for label: ('error', class), ('outputs', dicts) or None."""
    if f"error@{label}" in cg.attrs:
        return ("error", decode(cg.attrs[f"error@{label}"]))
    if f"outputs@{label}" in cg:
        return ("outputs", [read_tensor(g) for g in read_list(cg[f"outputs@{label}"])])
    return None


def same_variant(a, b):
    """Whether two recorded() values are the same (NaN equals NaN)."""
    if a is None or b is None or a[0] != b[0]:
        return a is None and b is None
    if a[0] == "error":
        return a[1] == b[1]
    return len(a[1]) == len(b[1]) and all(
        first_difference(x, y, "exact", check_masked_out=True) is None
        for x, y in zip(a[1], b[1]))


def update_manifest(golden_dir, names):
    """The sha256 of each file of `names` in MANIFEST (other lines kept)."""
    path = os.path.join(golden_dir, "MANIFEST")
    if not os.path.exists(path):
        return
    with open(path) as f:
        lines = f.read().splitlines()
    for i, line in enumerate(lines):
        parts = line.split()
        if len(parts) == 3 and not line.startswith("#") and parts[0] in names:
            lines[i] = f"{parts[0]} {parts[1]} {sha256_file(os.path.join(golden_dir, parts[0]))}"
    write_text(path, "\n".join(lines) + "\n")


def write_text(path, text):
    """Replaces text file `path` atomically (a temporary file beside it,
    published with the golden files' mode)."""
    fd, tmp = tempfile.mkstemp(prefix=".tmp-", dir=os.path.dirname(path) or ".")
    os.chmod(tmp, FILE_MODE)
    with os.fdopen(fd, "w") as f:
        f.write(text)
    os.replace(tmp, path)


def golden_files(golden_dir, only):
    names = sorted(n for n in os.listdir(golden_dir) if n.endswith(".h5") and n[0] != ".")
    if only:
        names = [n for n in names if n[:-3] == only]
    return names


# ---- SEMANTICS.md -----------------------------------------------------------------------

def table(label, base_versions, rows):
    """The Markdown between the markers: per op and kind of difference, the
    cases, what this torch does and what the file's torch does."""
    mine = label[len("torch-"):]
    theirs = ", ".join(sorted(base_versions)) or "?"
    out = [f"Generated by `golden/variants.py` under torch {mine} against the goldens of "
           f"torch {theirs}; do not edit by hand.", ""]
    recorded_rows = [r for r in rows if r[2].kind not in ("same", "unavailable", "unknown")]
    skipped = [r for r in rows if r[2].kind in ("unavailable", "unknown")]
    fams = collections.Counter(r[0] for r in rows)
    out += [f"{len(rows)} cases compared ({', '.join(f'{f} {n}' for f, n in fams.items())}): "
            f"{len(recorded_rows)} differ (a variant each), {len(skipped)} cannot run under "
            f"torch {mine}.", ""]
    if not recorded_rows and not skipped:
        out.append(f"torch {mine} gives every golden case's result (no variants).")
        return "\n".join(out)
    if recorded_rows:
        groups = collections.OrderedDict()
        for fam, cid, o, op in sorted(recorded_rows, key=lambda r: (r[3], r[2].kind, r[1])):
            groups.setdefault((op, o.kind), []).append((cid, o))
        out += [f"| op | difference | cases | torch {mine} (`outputs@{label}`, "
                f"`error@{label}`) | torch {theirs} (`outputs`, `expect`) | first difference "
                f"(first case) |",
                "|---|---|---|---|---|---|"]
        for (op, kind), items in groups.items():
            ids = ", ".join(f"`{c}`" for c, _ in items[:3])
            if len(items) > 3:
                ids += f" and {len(items) - 3} more"
            cid, o = items[0]
            detail = "" if kind == "error" else md(o.detail)
            out.append(f"| `{op}` | {kind} | {len(items)}: {ids} | {md(o.mine)} | {md(o.theirs)} "
                       f"| {detail} |")
    if skipped:
        by = collections.OrderedDict()
        for fam, cid, o, op in sorted(skipped, key=lambda r: (r[3], r[1])):
            by.setdefault(op, []).append((cid, o))
        out += ["", f"Cases torch {mine} cannot run at all (no variant recorded: the op, "
                    f"kwarg or layout does not exist there):", ""]
        for op, items in by.items():
            out.append(f"- `{op}`: {len(items)} case{'s' if len(items) != 1 else ''}, e.g. "
                       f"`{items[0][0]}`: {md(items[0][1].detail)}")
    return "\n".join(out)


def md(s):
    s = (s or "").replace("|", "\\|").replace("\n", " ")
    return s if len(s) <= 160 else s[:157] + "..."


def write_semantics(path, body):
    with open(path) as f:
        text = f.read()
    block = f"{BEGIN}\n{body}\n{END}"
    if BEGIN in text and END in text:
        a, b = text.index(BEGIN), text.index(END) + len(END)
        text = text[:a] + block + text[b:]
    else:
        sec = f"{SECTION}\n\n{block}\n\n"
        at = text.find("## Input validation")
        text = text[:at] + sec + text[at:] if at >= 0 else text + "\n" + sec
    write_text(path, text)


# ---- main -------------------------------------------------------------------------------

def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--golden-dir", default=HERE, help="golden files and MANIFEST (default golden/)")
    ap.add_argument("--label", help="variant label (default: torch-<this torch's version>)")
    ap.add_argument("--only", help="one family (file stem) only (SEMANTICS.md's table, which "
                    "covers every file, is then left alone)")
    ap.add_argument("--semantics", default=os.path.join(os.path.dirname(HERE), "spec",
                                                         "SEMANTICS.md"),
                    help="the SEMANTICS.md whose table to regenerate")
    ap.add_argument("--no-semantics", action="store_true", help="leave SEMANTICS.md alone")
    ap.add_argument("--check", action="store_true",
                    help="write nothing; exit 1 when the recorded variants are not current")
    ap.add_argument("-v", "--verbose", action="store_true", help="print every differing case")
    ap.add_argument("--trace", action="store_true",
                    help="print each case id to stderr before running it (to find one that "
                         "crashes this torch; then --skip it)")
    ap.add_argument("--skip", action="append", default=[], metavar="GLOB",
                    help="do not run the cases whose id matches GLOB (counted as unknown)")
    args = ap.parse_args(argv)
    faulthandler.enable()  # a crash in this torch's kernels prints where (--trace: which case)
    label = args.label or torch_label()
    if not LABEL_RE.match(label):
        ap.error(f"--label {label!r} does not name a torch version (torch-<version>)")
    names = golden_files(args.golden_dir, args.only)
    if not names:
        print(f"variants: no golden files in {args.golden_dir}", file=sys.stderr)
        return 1
    torch.use_deterministic_algorithms(True)
    rows, stale, rewritten, base_versions = [], [], [], set()
    summary = collections.OrderedDict()
    if True:
        scratch_file = h5py.File(io.BytesIO(), "w")
        try:
            for name in names:
                fam, path = name[:-3], os.path.join(args.golden_dir, name)
                cases, replay_run = family_cases(fam)
                calls = by_call(cases) if isinstance(cases, dict) else {}
                results, file_stale = {}, False
                count = collections.Counter()
                try:
                    src = h5py.File(path, "r")
                except OSError as e:
                    print(f"variants: {path}: {e}", file=sys.stderr)
                    return 1
                with src:
                    base_versions.add(decode(src.attrs.get("torch_version", "?")))
                    scratch = scratch_file.create_group(fam)
                    for cid, cg in src["cases"].items():
                        if decode(cg.attrs.get("profile", "torch")) != "torch":
                            continue  # numpy_ma goldens come from numpy.ma, not torch
                        if int(cg.attrs.get("backward", 0)):
                            continue  # gradient cases carry no torch-version variants (yet)
                        count["cases"] += 1
                        case = cases.get(cid) if isinstance(cases, dict) else None
                        if case is None and isinstance(cases, dict):
                            # a case this torch's table lacks (ids from torch's own OpInfo
                            # samples differ by version): one with the same torch call
                            case = calls.get((decode(cg.attrs.get("op")),
                                              decode(cg.attrs.get("torch_call")))) \
                                or replay_case(cg, replay_run)
                        if any(fnmatch.fnmatchcase(cid, g) for g in args.skip):
                            case, why = None, "skipped (--skip)"
                        elif case is None:
                            why = cases if isinstance(cases, str) else \
                                f"no case {cid} in mtgen.families.{fam} under this torch"
                        if case is None:
                            o = Outcome("unknown", why, why, "", None, None)
                        else:
                            if args.trace:
                                print(f"variants: running {cid}", file=sys.stderr, flush=True)
                            o = run_one(cg, case, scratch)
                        results[cid] = o
                        count[o.kind] += 1
                        op = decode(cg.attrs.get("op", "?"))
                        rows.append((fam, cid, o, op))
                        if args.verbose and o.kind != "same":
                            print(f"  {o.kind:11} {cid}: {o.detail}")
                        want = (recorded(cg, label) if o.kind == "unknown" else
                                None if o.kind in ("same", "unavailable") else
                                ("error", o.error_class) if o.error_class else
                                ("outputs", [read_tensor(g) for g in read_list(o.outputs)]))
                        if not same_variant(recorded(cg, label), want):
                            stale.append(cid)
                            file_stale = True
                summary[name] = count
                if file_stale and not args.check:  # else the file stays as it is, byte for byte
                    rewrite(path, label, results)
                    rewritten.append(name)
        finally:
            scratch_file.close()
    # the table covers every file: a run of one family (--only) would replace it
    # with that family's rows, so it neither writes nor checks the table
    semantics = not args.no_semantics and not args.only and os.path.exists(args.semantics)
    if args.only and not args.no_semantics:
        print(f"variants: --only: {args.semantics}'s table (every golden file) left alone; "
              f"a run without --only regenerates it", file=sys.stderr)
    if not args.check:
        update_manifest(args.golden_dir, rewritten)
        if semantics:
            write_semantics(args.semantics, table(label, base_versions, rows))

    print(f"variants: torch {torch.__version__} as {label}, against the goldens of torch "
          f"{', '.join(sorted(base_versions))}")
    total = collections.Counter()
    for name, c in summary.items():
        total.update(c)
        print(f"  {name_line(name, c)}")
    print(f"  {name_line('all', total)}")
    if not args.check:
        print(f"variants: {len(stale)} case(s) changed their {label} variant; rewrote "
              f"{', '.join(rewritten) or 'no file'}")
    table_stale = False
    if args.check:
        if semantics:
            with open(args.semantics) as f:
                text = f.read()
            if f"{BEGIN}\n{table(label, base_versions, rows)}\n{END}" not in text:
                print(f"stale: {args.semantics}: the table between {BEGIN} and {END} is not "
                      f"what this run generates")
                table_stale = True
        for cid in stale:
            print(f"stale: {cid}: the recorded {label} variant is not what this torch gives")
        print(f"variants --check: {len(stale)} case(s) with a stale {label} variant"
              f"{'; the SEMANTICS.md table is stale' if table_stale else ''}")
        return 1 if stale or table_stale else 0
    return 0


def name_line(name, c):
    differ = sum(c[k] for k in KINDS)
    why = ", ".join(f"{k} {c[k]}" for k in KINDS if c[k])
    line = f"{name}: {c['cases']} cases, {differ} differ" + (f" ({why})" if why else "")
    if c["unavailable"] or c["unknown"]:
        line += (f"; cannot run here: {c['unavailable'] + c['unknown']} (op/kwarg/layout "
                 f"missing {c['unavailable']}, case unknown {c['unknown']}), no variant")
    return line


if __name__ == "__main__":
    sys.exit(main())

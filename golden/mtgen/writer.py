"""Writing golden files: tensors, cases, files (atomically), MANIFEST, and
the generator's hash."""
import datetime
import hashlib
import os
import tempfile

import numpy as np
import torch
from torch.masked import MaskedTensor

from .carry import carry_variants, cases_differ
from .h5layout import replacing
from .model import DTYPE_NAMES, Result

FORMAT_VERSION = 3  # 3: gradient cases (backward, grad_outputs/, grads/)
GOLDEN_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def generator_files(golden_dir=GOLDEN_DIR):
    """The generator's sources, as paths relative to golden/ ('/'-separated),
    sorted bytewise: generate.py and every *.py file under mtgen/."""
    rel = ["generate.py"]
    for root, dirs, files in os.walk(os.path.join(golden_dir, "mtgen")):
        dirs[:] = [d for d in dirs if d != "__pycache__"]
        for f in files:
            if f.endswith(".py"):
                path = os.path.relpath(os.path.join(root, f), golden_dir)
                rel.append(path.replace(os.sep, "/"))
    return sorted(rel, key=lambda p: p.encode())


def generator_sha256(golden_dir=GOLDEN_DIR):
    """sha256 over the lines `<relative path>  <sha256 hex of the file>\\n`
    of generator_files(), in that order (spec/golden-format.md)."""
    h = hashlib.sha256()
    for rel in generator_files(golden_dir):
        with open(os.path.join(golden_dir, rel), "rb") as f:
            h.update(f"{rel}  {hashlib.sha256(f.read()).hexdigest()}\n".encode())
    return h.hexdigest()


def set_kind(g, kind, dtype, shape):
    g.attrs["kind"] = kind
    g.attrs["dtype"] = DTYPE_NAMES[dtype]
    g.attrs["shape"] = np.asarray(tuple(shape), dtype=np.int64)


def to_numpy(t):
    """t's values as numpy; bfloat16 (numpy and HDF5 have none) widened to
    float32, which is exact: the group's dtype attribute says bfloat16
    (spec/golden-format.md)."""
    if t.dtype == torch.bfloat16:
        t = t.to(torch.float32)
    a = t.detach().cpu().contiguous().numpy()
    return a.astype(np.uint8) if a.dtype == np.bool_ else a


# torch's compressed layouts: golden kind and index dataset names (format 2)
COMPRESSED = {
    torch.sparse_csr: ("csr", "crow_indices", "col_indices"),
    torch.sparse_csc: ("csc", "ccol_indices", "row_indices"),
    torch.sparse_bsr: ("bsr", "crow_indices", "col_indices"),
    torch.sparse_bsc: ("bsc", "ccol_indices", "row_indices"),
}


def write_tensor(g, x):
    # a MaskedTensor, or any masked pair with get_data/get_mask (numpy_ma's
    # NpMasked: torch.masked refuses some dtypes numpy.ma takes, e.g. uint8)
    if isinstance(x, MaskedTensor) or hasattr(x, "get_mask"):
        data, mask = x.get_data(), x.get_mask()
        set_kind(g, "masked", data.dtype, data.shape)
        write_tensor(g.create_group("data"), data)
        write_tensor(g.create_group("mask"), mask)
    elif isinstance(x, (bool, int, float)):
        dtype, np_type = {bool: (torch.bool, np.uint8), int: (torch.int64, np.int64),
                          float: (torch.float64, np.float64)}[type(x)]
        set_kind(g, "scalar", dtype, ())
        g.create_dataset("value", data=np_type(x))
    elif x.layout == torch.sparse_coo:
        set_kind(g, "coo", x.dtype, x.shape)
        g.attrs["coalesced"] = np.bool_(x.is_coalesced())
        g.create_dataset("indices", data=to_numpy(x._indices()).astype(np.int64))
        g.create_dataset("values", data=to_numpy(x._values()))
    elif x.layout in COMPRESSED:
        kind, cname, pname = COMPRESSED[x.layout]
        set_kind(g, kind, x.dtype, x.shape)
        if x.dense_dim():
            g.attrs["dense_dim"] = np.int64(x.dense_dim())
        if kind in ("bsr", "bsc"):
            g.attrs["blocksize"] = np.asarray(x.values().shape[x.dim() - x.dense_dim() - 1:][:2],
                                              dtype=np.int64)
        comp, plain = ((x.crow_indices(), x.col_indices()) if cname == "crow_indices"
                       else (x.ccol_indices(), x.row_indices()))
        g.create_dataset(cname, data=to_numpy(comp).astype(np.int64))
        g.create_dataset(pname, data=to_numpy(plain).astype(np.int64))
        g.create_dataset("values", data=to_numpy(x.values()))
    else:
        set_kind(g, "dense", x.dtype, x.shape)
        g.create_dataset("values", data=to_numpy(x))


def kwarg_value(v):
    if isinstance(v, bool):
        return np.bool_(v)
    if isinstance(v, int):
        return np.int64(v)
    if isinstance(v, float):
        return np.float64(v)
    if isinstance(v, tuple) and all(isinstance(x, int) and not isinstance(x, bool) for x in v):
        return np.asarray(v, dtype=np.int64)
    if isinstance(v, tuple) and all(isinstance(x, float) for x in v):
        return np.asarray(v, dtype=np.float64)  # betas=(0.9, 0.999); a Tensor lr's elements
    if isinstance(v, torch.dtype):  # a DTYPE kwarg: the dtype's golden name
        return DTYPE_NAMES[v]
    if isinstance(v, str):
        return v
    raise TypeError(f"unsupported kwarg {v!r}")


# SP-6: a case tagged with a rule that states how torch stores a sparse
# result compares its COO outputs as stored (attribute check_structure: the
# coalesced flag, nnz, indices in stored order), DESIGN.md's "compared only
# for cases whose rules say so"; every other case compares them coalesced.
STRUCTURE_RULES = ("SP-5", "SGD-5")
STRUCTURE_RULE_PREFIXES = ("SPP-", "SPS-", "SPB-", "SPC-")


def checks_structure(rules):
    return any(r in STRUCTURE_RULES or r.startswith(STRUCTURE_RULE_PREFIXES) for r in rules)


def write_case(cases_group, res: Result):
    c = res.case
    g = cases_group.create_group(c.id)
    g.attrs["op"] = c.op
    g.attrs["profile"] = c.profile
    g.attrs["rules"] = ",".join(res.rules)
    if res.tolerance is None:
        raise ValueError(f"{c.id}: no tolerance (a tolerance_of case's is set by run_case)")
    g.attrs["tolerance"] = res.tolerance
    g.attrs["expect"] = "error" if c.error_class else "ok"
    if c.error_class:
        g.attrs["error_class"] = c.error_class
        g.attrs["torch_error"] = res.torch_error
    g.attrs["torch_call"] = c.torch_call
    g.attrs["poison"] = res.poison
    if c.source:
        g.attrs["source"] = c.source
    if c.input_masks:
        g.attrs["input_masks"] = c.input_masks
    if c.check_masked_out:
        g.attrs["check_masked_out"] = np.int64(1)
    if checks_structure(res.rules):
        g.attrs["check_structure"] = np.int64(1)
    lists = (("inputs", res.inputs), ("outputs", res.outputs))
    if c.backward:  # format 3: no outputs; grads/<k> only where torch gave one
        g.attrs["backward"] = np.int64(1)
        g.attrs["requires_grad"] = ",".join(str(k) for k in res.requires_grad)
        lists = (("inputs", res.inputs), ("grad_outputs", res.grad_outputs))
        sub = g.create_group("grads")
        for k, x in enumerate(res.grads):
            if x is not None:
                write_tensor(sub.create_group(str(k)), x)
    for name, tensors in lists:
        sub = g.create_group(name)
        for k, x in enumerate(tensors):
            write_tensor(sub.create_group(str(k)), x)
    kw = g.create_group("kwargs")
    for k, v in c.kwargs.items():
        if v is not None:
            kw.attrs[k] = kwarg_value(v)


def _file_mode():
    umask = os.umask(0)
    os.umask(umask)
    return 0o666 & ~umask


FILE_MODE = _file_mode()  # mkstemp creates 0600; published files follow the umask


def created_utc():
    epoch = os.environ.get("SOURCE_DATE_EPOCH")
    t = (datetime.datetime.fromtimestamp(int(epoch), datetime.timezone.utc) if epoch
         else datetime.datetime.now(datetime.timezone.utc))
    return t.strftime("%Y-%m-%dT%H:%M:%SZ")


def root_attributes(generator="golden/generate.py"):
    return {"format": "mtcs-golden", "format_version": np.int64(FORMAT_VERSION),
            "generator": generator, "generator_sha256": generator_sha256(),
            "torch_version": str(torch.__version__), "numpy_version": str(np.__version__),
            "torch_cpu_capability": str(torch.backends.cpu.get_cpu_capability()),
            "reproducible": "within each case's tolerance across CPUs (torch picks "
                            "vectorized kernels by torch_cpu_capability); byte for byte "
                            "only with the same torch, numpy and CPU capability",
            "created_utc": created_utc()}


def write_family(path, results, meta):
    # built in memory, then written in the layout of mtgen/h5layout.py
    with replacing(path, FILE_MODE) as f:
        for k, v in meta.items():
            f.attrs[k] = v
        cases = f.create_group("cases")
        for res in results:
            write_case(cases, res)


def sha256_file(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def write_family_if_changed(path, results, meta):
    """Writes `path` unless the file there holds the same cases
    (carry.cases_differ). An unchanged family keeps its committed file: its
    root attributes (created_utc, generator_sha256) and its torch-version
    variants stay, so a generator edit that moves no case rewrites no golden
    file, only the MANIFEST's generator line (spec/golden-format.md,
    generator_sha256). A family that is written gets the variants of its
    unchanged cases from the file it replaces (carry.carry_variants).
    Returns None when the file was kept, else why it was written and what
    became of the variants."""
    if not os.path.exists(path):
        write_family(path, results, meta)
        return "new file"
    fd, probe = tempfile.mkstemp(prefix=".probe-", suffix=".h5", dir=os.path.dirname(path))
    os.close(fd)
    try:
        write_family(probe, results, meta)
        why = cases_differ(path, probe)
        if why is not None:
            carried, left = carry_variants(path, probe)
            if carried or left:
                why += (f"; the torch-version variants of {len(carried)} unchanged cases "
                        f"carried over")
            if left:
                why += (f", {len(left)} changed or removed cases lost theirs (e.g. {left[0]}):"
                        f" run golden/variants.py")
            os.replace(probe, path)
        return why
    finally:
        if os.path.exists(probe):
            os.unlink(probe)


MANIFEST_GENERATOR = "# generator_sha256 "


def write_manifest(out_dir, counts, families):
    """MANIFEST: a header, the generator's hash (`# generator_sha256 <hex>`),
    then one line per .h5 (`<file> <case count> <sha256>`); families not
    regenerated this run keep their previous line."""
    path = os.path.join(out_dir, "MANIFEST")
    lines = {}
    if os.path.exists(path):
        with open(path) as f:
            for line in f:
                if line.strip() and not line.startswith("#"):
                    lines[line.split()[0]] = line.rstrip("\n")
    for fam, n in counts.items():
        name = f"{fam}.h5"
        lines[name] = f"{name} {n} {sha256_file(os.path.join(out_dir, name))}"
    body = [f"# mtcs golden files, format_version {FORMAT_VERSION}; "
            f"torch {torch.__version__}; <file> <case count> <sha256>",
            MANIFEST_GENERATOR + generator_sha256()]
    body += [lines[f"{fam}.h5"] for fam in families if f"{fam}.h5" in lines]
    fd, tmp = tempfile.mkstemp(prefix=".tmp-", dir=out_dir)
    os.chmod(tmp, FILE_MODE)
    with os.fdopen(fd, "w") as f:
        f.write("\n".join(body) + "\n")
    os.replace(tmp, path)

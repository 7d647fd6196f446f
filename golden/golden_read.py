"""Golden tensor groups as the dicts mtgen.compare compares (kind, dtype,
shape and the kind's fields; spec/golden-format.md), for the scripts that
check committed goldens against a torch: check_fresh.py (the pinned torch)
and variants.py (an older one). CSR tensors are read as their (row, col)
entries, the form mtgen.compare compares a CSR tensor in (like a COO one).
bfloat16 datasets hold float32 values (exact; golden-format.md) and read
as those Python floats. Reads through h5py's group interface; imports
nothing itself."""


def decode(v):
    return v.decode() if isinstance(v, bytes) else v


def csr_entries(crow, col, values):
    """(indices [rows, cols], values as 1-element rows) of a CSR tensor."""
    rows = [r for r in range(len(crow) - 1) for _ in range(crow[r + 1] - crow[r])]
    return [rows, list(col)], [[v] for v in values]


def read_tensor(g):
    """A golden tensor group (h5py) as mtgen.compare's dict."""
    t = {"kind": decode(g.attrs["kind"]), "dtype": decode(g.attrs["dtype"]),
         "shape": tuple(int(n) for n in g.attrs["shape"])}
    if t["kind"] == "masked":
        t["data"], t["mask"] = read_tensor(g["data"]), read_tensor(g["mask"])
    elif t["kind"] == "scalar":
        t["value"] = g["value"][()].item()
    elif t["kind"] == "coo":
        t["indices"] = g["indices"][()].tolist()
        vals = g["values"][()]
        t["values"] = [list(r.reshape(-1).tolist()) for r in vals] if vals.ndim > 1 else \
            [[v] for v in vals.tolist()]
    elif t["kind"] == "csr":
        t["indices"], t["values"] = csr_entries(g["crow_indices"][()].tolist(),
                                                g["col_indices"][()].tolist(),
                                                g["values"][()].reshape(-1).tolist())
    else:
        t["values"] = g["values"][()].reshape(-1).tolist()
    return t

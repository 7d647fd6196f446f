"""Golden tensor groups as the dicts mtgen.compare compares (kind, dtype,
shape and the kind's fields; spec/golden-format.md), for the scripts that
check committed goldens against a torch: check_fresh.py (the pinned torch)
and variants.py (an older one). CSR, CSC, BSR and BSC tensors are read as
their element entries (batch indices, row, col), the form mtgen.compare
compares them in (like a COO one).
bfloat16 datasets hold float32 values (exact; golden-format.md) and read
as those Python floats. Reads through h5py's group interface; imports
nothing itself."""


def decode(v):
    return v.decode() if isinstance(v, bytes) else v


COMPRESSED_NAMES = {"csr": ("crow_indices", "col_indices"), "csc": ("ccol_indices", "row_indices"),
                    "bsr": ("crow_indices", "col_indices"), "bsc": ("ccol_indices", "row_indices")}


def compressed_entries(kind, shape, dense_dim, comp, plain, values):
    """(indices [batch dims + 2 lists], values as rows of the dense part) of a
    csr/csc/bsr/bsc tensor, one entry per element of the two sparse dims
    (blocks cut into their cells), in storage order. comp, plain and values
    are numpy arrays as stored: [batch..., n] and [batch..., nnz, (bh, bw),
    dense...] (golden-format.md)."""
    nb = len(shape) - 2 - dense_dim
    by_col = kind in ("csc", "bsc")
    bh, bw = values.shape[nb + 1:nb + 3] if kind in ("bsr", "bsc") else (1, 1)
    batches = 1
    for n in shape[:nb]:
        batches *= n
    comp = comp.reshape(batches, -1).tolist()
    plain = plain.reshape(batches, -1).tolist()
    nnz = len(plain[0]) if batches else 0
    dense = 1  # the dense part's size, not -1: numpy cannot infer it when nnz is 0
    for n in values.shape[nb + (3 if kind in ("bsr", "bsc") else 1):]:
        dense *= n
    cell = values.reshape(batches, nnz, bh, bw, dense)
    idx, vals = [[] for _ in range(nb + 2)], []
    for b in range(batches):
        bidx, rest = [], b
        for n in reversed(shape[:nb]):
            bidx.insert(0, rest % n)
            rest //= n
        cb, pb = comp[b], plain[b]
        for c in range(len(cb) - 1):
            for k in range(cb[c], cb[c + 1]):
                r, col = (pb[k], c) if by_col else (c, pb[k])
                for i in range(bh):
                    for j in range(bw):
                        for d, v in enumerate(bidx + [r * bh + i, col * bw + j]):
                            idx[d].append(v)
                        vals.append(cell[b, k, i, j].reshape(-1).tolist())
    return idx, vals


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
    elif t["kind"] in COMPRESSED_NAMES:
        cname, pname = COMPRESSED_NAMES[t["kind"]]
        t["indices"], t["values"] = compressed_entries(
            t["kind"], t["shape"], int(g.attrs.get("dense_dim", 0)), g[cname][()], g[pname][()],
            g["values"][()])
    else:
        t["values"] = g["values"][()].reshape(-1).tolist()
    return t

"""Comparing a family's cases with the file it replaces, and carrying the
torch-version variants of unchanged cases into the new file.

golden/variants.py records, on a case whose torch 1.13 result differs from
the file's torch, an `outputs@torch-V` group or an `error@torch-V`
attribute (spec/golden-format.md, "Output variants"). golden/generate.py
knows nothing of torch 1.13, so a family file it rewrites (a case added or
moved) used to come out with no variant at all, and every case of that
family lost the older torch's verdict until variants.py was run again
(stop 42 lost 90 that way). A variant is what torch V computes from the
case's inputs and kwargs; when a case is the same in the new file as in the
old (case_difference: everything bit for bit but floating output values,
which may move within the case's tolerance), its variant is still what
torch V computes, so carry_variants copies it over. Only new or changed
cases are left without one, and variants.py judges those (it needs torch
V; `variants.py --check` in the main job says when it was not run).

Torch-free (h5py and numpy), like h5layout.py, so it is tested on
Debian's h5py (tests/carry_test.py).
"""
import os

import h5py

from .compare import first_difference
from .h5layout import copy_attrs, copy_tree, flatten, rewrite_cases, same_object


def is_variant(name):
    """Whether an attribute or member name of a case is a torch-version
    variant (`outputs@torch-V`, `error@torch-V`): the one kind of name
    with an @."""
    return "@" in name


def has_variants(cg):
    return any(is_variant(k) for k in cg.attrs) or any(is_variant(k) for k in cg)


def copy_variants(src, dst):
    """Case group src's variants (attributes and groups) onto case group dst."""
    for k in src.attrs:
        if is_variant(k):
            dst.attrs.create(k, src.attrs[k], dtype=src.attrs.get_id(k).dtype)
    for name in src:
        if is_variant(name):
            copy_tree(src[name], dst, name)


def case_difference(old, new):
    """None when case groups `old` and `new` hold the same case, else the
    first difference (a path and what differs). Compared bit for bit
    (attributes, inputs, kwargs, output kinds, shapes, indices, masks),
    variants left out, except the values of floating outputs and
    gradients, which need only match within the case's tolerance as
    golden/check_fresh.py compares them (torch's vectorized kernels differ
    in the last ulp from one CPU to another)."""
    from golden_read import read_tensor  # golden/ is on sys.path (generate.py, the tests)

    a, b = {}, {}
    flatten(old, "", a, skip=is_variant)
    flatten(new, "", b, skip=is_variant)
    if a.keys() != b.keys():
        return f"objects {sorted(set(a) ^ set(b))[:2]} differ"
    loose = set()  # outputs whose float values moved: within tolerance?
    for path, x in a.items():
        if same_object(x, b[path]):
            continue
        parts = path.split("/")
        if (len(parts) > 3 and parts[1] in ("outputs", "grads") and x[1] is not None
                and x[1][1] == "f" and same_object(x[:3] + (None,), b[path][:3] + (None,))):
            loose.add((parts[1], parts[2]))
            continue
        return f"{path}: differs" if path else "the case's attributes differ"
    tol = old.attrs["tolerance"]
    cmo = bool(old.attrs.get("check_masked_out", 0))
    for grp, k in sorted(loose):
        why = first_difference(read_tensor(new[grp][k]), read_tensor(old[grp][k]), tol,
                               check_masked_out=cmo, where=f"{grp}/{k}")
        if why:
            return why
    return None


def cases_differ(old_path, new_path):
    """None when new_path holds the same cases as old_path (case_difference
    of every case; the variants only the old file has are left out), else
    the first difference."""
    with h5py.File(old_path, "r") as fo, h5py.File(new_path, "r") as fn:
        old, new = fo["cases"], fn["cases"]
        if set(old) != set(new):
            moved = sorted(set(old) ^ set(new))
            return f"{len(moved)} cases added or removed, e.g. {moved[0]}"
        for cid in old:
            why = case_difference(old[cid], new[cid])
            if why:
                return f"{cid}{why}" if why.startswith("/") else f"{cid}: {why}"
    return None


def carry_variants(old_path, new_path):
    """Rewrites golden file `new_path` (atomically, in h5layout's layout)
    with the variants the case of the same id has in `old_path`, for every
    case that is the same in both (case_difference). Returns (carried,
    left): the ids of the cases whose variants were carried, and of those
    that had variants in old_path but changed or are gone (theirs are
    dropped: torch V has to judge a changed case again). new_path is not
    touched when no case carries a variant."""
    carried, left = [], []
    with h5py.File(old_path, "r") as fo:
        old = fo["cases"]
        with h5py.File(new_path, "r") as fn:
            new = fn["cases"]
            for cid in new:
                if cid in old and has_variants(old[cid]):
                    (left if case_difference(old[cid], new[cid]) else carried).append(cid)
            left += [cid for cid in old if cid not in new and has_variants(old[cid])]
        if carried:
            keep = set(carried)

            def fill(cid, cg, g):
                copy_attrs(cg, g)
                for name in cg:
                    copy_tree(cg[name], g, name)
                if cid in keep:
                    copy_variants(old[cid], g)
            rewrite_cases(new_path, fill, os.stat(new_path).st_mode & 0o7777)
    return carried, sorted(left)

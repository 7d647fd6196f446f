#!/usr/bin/env python3
"""How golden files are stored on disk (spec/golden-format.md, "Files").

    python3 golden/mtgen/h5layout.py FILE...    rewrite FILEs in this layout

Storage only: the objects, attributes and data a reader sees are exactly
those of the file written; what changes is how many bytes HDF5 spends on
them. Torch-free (h5py and numpy), so golden/variants.py, which runs on
Debian's h5py 3.7 / HDF5 1.10.8, writes the same layout as
golden/generate.py (PyPI's h5py / HDF5 2.x).

write_compact(src, path) writes the objects under `src` (an open h5py
file) to `path` in three steps:

1. every group and dataset is created again, in a file in memory, with
   object creation properties that cost fewer bytes: no timestamps (16
   bytes an object, and bytes that differ run to run); attributes kept in
   the object header up to 64 of them (HDF5 moves more than 8 into a
   fractal heap and a B-tree of their own, about 500 bytes a case group;
   Debian's HDF5 1.10.8 also crashes copying those, H5Ocopy and h5copy
   alike); datasets of up to COMPACT_MAX bytes stored in their object header
   (HDF5's compact layout) instead of a block of their own;
2. the file in memory is copied object by object (H5Ocopy) into the file on
   disk, so each object header is sized once instead of keeping the room it
   grew while attributes and links were added one by one; that file shares
   its datatype and dataspace messages (HDF5's shared object header
   messages: `float32`'s datatype and a (3, 4) dataspace are stored once,
   each use is a 10-byte reference);
3. HDF5 stamps the file's superblock extension (where the shared messages
   are indexed) with the time it was written, whatever the properties say;
   zero_extension_times() zeroes those 16 bytes and writes the header's
   checksum again (lookup3, as HDF5 does, checked against HDF5's own
   checksum of the unpatched header first), so the same input gives the
   same bytes.

The 15 goldens of 2026-12-03: 49,987,227 bytes written with H5Ocopy alone
(the layout before this module), 33,947,338 this way (-32%). Every file is
readable by HDF5 1.10 (shared messages and compact datasets date from 1.8).
"""
import contextlib
import ctypes
import os
import re
import sys
import tempfile

import h5py
import numpy as np

LIBVER = ("v110", "v110")  # readable by Debian's HDF5 1.10, which the runner links
COMPACT_MAX = 32768  # bytes; an object header message holds at most 64 KiB
MAX_COMPACT_ATTRS, MIN_DENSE_ATTRS = 64, 48
SHARED_MIN_SIZE = 8  # bytes: every datatype and dataspace message is shared
# H5Opublic.h: H5O_SHMESG_SDSPACE_FLAG (1 << 1) | H5O_SHMESG_DTYPE_FLAG (1 << 3)
SHARED_TYPES = (1 << 1) | (1 << 3)
HDF5_SIGNATURE = b"\x89HDF\r\n\x1a\n"


# ---- lookup3 (Bob Jenkins' hashlittle), HDF5's metadata checksum ---------------------------

M32 = 0xFFFFFFFF


def _rot(x, k):
    return ((x << k) | (x >> (32 - k))) & M32


def lookup3(data, initval=0):
    """hashlittle(data, len(data), initval): H5_checksum_lookup3."""
    n = len(data)
    a = b = c = (0xDEADBEEF + n + initval) & M32
    i = 0
    while n - i > 12:
        a = (a + int.from_bytes(data[i:i + 4], "little")) & M32
        b = (b + int.from_bytes(data[i + 4:i + 8], "little")) & M32
        c = (c + int.from_bytes(data[i + 8:i + 12], "little")) & M32
        a = (a - c) & M32; a ^= _rot(c, 4); c = (c + b) & M32    # noqa: E702 (mix)
        b = (b - a) & M32; b ^= _rot(a, 6); a = (a + c) & M32    # noqa: E702
        c = (c - b) & M32; c ^= _rot(b, 8); b = (b + a) & M32    # noqa: E702
        a = (a - c) & M32; a ^= _rot(c, 16); c = (c + b) & M32   # noqa: E702
        b = (b - a) & M32; b ^= _rot(a, 19); a = (a + c) & M32   # noqa: E702
        c = (c - b) & M32; c ^= _rot(b, 4); b = (b + a) & M32    # noqa: E702
        i += 12
    if i == n:
        return c  # only for an empty input
    tail = bytes(data[i:]) + bytes(12 - (n - i))  # missing bytes add nothing
    a = (a + int.from_bytes(tail[0:4], "little")) & M32
    b = (b + int.from_bytes(tail[4:8], "little")) & M32
    c = (c + int.from_bytes(tail[8:12], "little")) & M32
    c ^= b; c = (c - _rot(b, 14)) & M32   # noqa: E702 (final)
    a ^= c; a = (a - _rot(c, 11)) & M32   # noqa: E702
    b ^= a; b = (b - _rot(a, 25)) & M32   # noqa: E702
    c ^= b; c = (c - _rot(b, 16)) & M32   # noqa: E702
    a ^= c; a = (a - _rot(c, 4)) & M32    # noqa: E702
    b ^= a; b = (b - _rot(a, 14)) & M32   # noqa: E702
    c ^= b; c = (c - _rot(b, 24)) & M32   # noqa: E702
    return c


def zero_extension_times(path):
    """Zeroes the timestamps of the superblock extension's object header of
    the HDF5 file at `path` (superblock version 2 or 3, version 2 object
    header) and rewrites that header's checksum. Raises ValueError, leaving
    the file as it was, when the file is not laid out that way or when the
    header's stored checksum is not lookup3 of its bytes (then this code
    does not read HDF5's format the way HDF5 writes it). Returns whether a
    timestamp was changed."""
    with open(path, "r+b") as f:
        sb = f.read(48)
        if len(sb) < 48 or sb[:8] != HDF5_SIGNATURE or sb[8] not in (2, 3) or sb[9] != 8:
            raise ValueError(f"{path}: not an HDF5 file with a version 2/3 superblock "
                             "and 8-byte addresses")
        ext = int.from_bytes(sb[20:28], "little")
        if ext == (1 << 64) - 1:
            return False  # no extension: nothing stamped
        f.seek(ext)
        head = f.read(4 + 2 + 16 + 4 + 8)
        if head[:4] != b"OHDR" or head[4] != 2:
            raise ValueError(f"{path}: the superblock extension at {ext} is not a "
                             "version 2 object header")
        flags = head[5]
        if not flags & 0x20:
            return False  # no timestamps stored
        at = 6 + 16 + (4 if flags & 0x10 else 0)
        width = 1 << (flags & 3)
        size = int.from_bytes(head[at:at + width], "little")
        f.seek(ext)
        blob = bytearray(f.read(at + width + size + 4))
        body, stored = blob[:-4], int.from_bytes(blob[-4:], "little")
        if len(blob) != at + width + size + 4 or lookup3(body) != stored:
            raise ValueError(f"{path}: the superblock extension's checksum is not "
                             "lookup3 of its header; left as written")
        if body[6:22] == bytes(16):
            return False
        body[6:22] = bytes(16)
        f.seek(ext)
        f.write(bytes(body) + lookup3(body).to_bytes(4, "little"))
        return True


# ---- creating objects -------------------------------------------------------------------

def _hdf5_library():
    """The HDF5 shared library this process's h5py calls (PyPI's wheel ships
    its own, Debian's links libhdf5_serial): h5py does not wrap
    H5Pset_shared_mesg_*, ctypes reaches them in the same library."""
    names = set()
    with open("/proc/self/maps") as maps:
        for line in maps:
            p = line.split()[-1]
            if re.search(r"/libhdf5(_serial)?[-.][^/]*$", p):
                names.add(p)
    if len(names) != 1:
        raise RuntimeError(f"cannot tell which HDF5 library h5py uses: {sorted(names)}")
    return ctypes.CDLL(names.pop())


def _gcpl():
    p = h5py.h5p.create(h5py.h5p.GROUP_CREATE)
    p.set_obj_track_times(False)
    p.set_attr_phase_change(MAX_COMPACT_ATTRS, MIN_DENSE_ATTRS)
    return p


def _dcpl(nbytes):
    """A dataset's: no timestamps, compact up to COMPACT_MAX bytes. The
    attribute phase change stays HDF5's default: a dataset here carries no
    attributes, and a non-default one costs 4 header bytes."""
    p = h5py.h5p.create(h5py.h5p.DATASET_CREATE)
    p.set_obj_track_times(False)
    if nbytes <= COMPACT_MAX:
        p.set_layout(h5py.h5d.COMPACT)
    return p


def copy_attrs(src, dst, skip=()):
    """src's attributes onto dst, each in its stored HDF5 type, but those
    named in skip."""
    for k in src.attrs:
        if k not in skip:
            dst.attrs.create(k, src.attrs[k], dtype=src.attrs.get_id(k).dtype)


def copy_tree(src, dst, name):
    """h5py group or dataset `src` created again as dst/name, attributes
    and all, through numpy (no H5Ocopy: Debian's HDF5 1.10.8 crashes
    copying objects with many attributes)."""
    if isinstance(src, h5py.Dataset):
        d = dst.create_dataset(name, data=src[()], dtype=src.dtype)
        copy_attrs(src, d)
        return
    g = dst.create_group(name)
    copy_attrs(src, g)
    for k in src:
        copy_tree(src[k], g, k)


def _recreate(src, dst):
    """Everything under h5py group `src` created again under `dst`."""
    copy_attrs(src, dst)
    for k in src:
        obj = src[k]
        if isinstance(obj, h5py.Group):
            gid = h5py.h5g.create(dst.id, k.encode(), gcpl=_gcpl())
            _recreate(obj, h5py.Group(gid))
            continue
        dcpl = _dcpl(obj.id.get_storage_size())
        space = (h5py.h5s.create(h5py.h5s.SCALAR) if obj.shape == ()
                 else h5py.h5s.create_simple(obj.shape))
        # a fresh type: the one read carries its shared-message location in `src`
        did = h5py.h5d.create(dst.id, k.encode(), h5py.h5t.py_create(obj.dtype), space,
                              dcpl=dcpl)
        if obj.size:
            did.write(h5py.h5s.ALL, h5py.h5s.ALL, np.ascontiguousarray(obj[()]))
        if len(obj.attrs):  # (an h5py.Dataset made around did moves bytes: measured)
            copy_attrs(obj, h5py.Dataset(did))


def _create_file(path):
    fcpl = h5py.h5p.create(h5py.h5p.FILE_CREATE)
    fcpl.set_obj_track_times(False)
    fcpl.set_attr_phase_change(MAX_COMPACT_ATTRS, MIN_DENSE_ATTRS)  # the root group's
    lib, fid = _hdf5_library(), ctypes.c_int64(fcpl.id)
    if (lib.H5Pset_shared_mesg_nindexes(fid, ctypes.c_uint(1)) < 0
            or lib.H5Pset_shared_mesg_index(fid, ctypes.c_uint(0), ctypes.c_uint(SHARED_TYPES),
                                            ctypes.c_uint(SHARED_MIN_SIZE)) < 0):
        raise RuntimeError("H5Pset_shared_mesg_* failed")
    fapl = h5py.h5p.create(h5py.h5p.FILE_ACCESS)
    fapl.set_libver_bounds(h5py.h5f.LIBVER_V110, h5py.h5f.LIBVER_V110)
    return h5py.File(h5py.h5f.create(path.encode(), h5py.h5f.ACC_TRUNC, fcpl=fcpl, fapl=fapl))


def write_compact(src, path):
    """Writes every object and attribute of the open h5py file `src` to a
    new file at `path` in this module's layout (the module's docstring).
    Deterministic: the same objects give the same bytes, and a copy of a
    copy is the copy."""
    # (a name of its own: the caller's file in memory may be "<path>.mem")
    with h5py.File(f"{path}.h5layout", "w", driver="core", backing_store=False,
                   libver=LIBVER) as mem:
        _recreate(src, mem)
        with _create_file(path) as out:
            copy_attrs(mem, out)
            for k in mem:
                mem.copy(mem[k], out, name=k)
    zero_extension_times(path)


@contextlib.contextmanager
def replacing(path, mode):
    """An empty h5py file in memory to fill; when the with-block ends without
    an error, its objects replace golden file `path` atomically, in this
    layout, with the permission bits `mode`. On an error `path` is left as
    it was and no temporary file stays behind."""
    fd, tmp = tempfile.mkstemp(prefix=".tmp-", suffix=".h5", dir=os.path.dirname(path) or ".")
    os.close(fd)
    try:
        with h5py.File(f"{tmp}.mem", "w", driver="core", backing_store=False,
                       libver=LIBVER) as dst:
            yield dst
            write_compact(dst, tmp)
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        os.unlink(tmp)
        raise


def rewrite_cases(path, fill, mode):
    """Rewrites golden file `path` atomically in this layout: its root
    attributes, then for each group of its /cases an empty group that
    fill(case id, old case group, new case group) fills; the file gets the
    permission bits `mode`. Built in memory first (golden/variants.py's
    variants, golden/mtgen/carry.py's carried ones)."""
    with replacing(path, mode) as dst:
        with h5py.File(path, "r") as src:
            copy_attrs(src, dst)
            cases = dst.create_group("cases")
            for cid, cg in src["cases"].items():
                fill(cid, cg, cases.create_group(cid))


# ---- comparing files --------------------------------------------------------------------

def flatten(obj, prefix, out, skip=lambda name: False):
    """{path: (attributes, dtype, shape, data)} of obj and everything under
    it; names for which skip(name) holds are left out."""
    attrs = {k: v for k, v in obj.attrs.items() if not skip(k)}
    if isinstance(obj, h5py.Dataset):
        out[prefix] = (attrs, obj.dtype.str, obj.shape, obj[()])
        return
    out[prefix] = (attrs, None, None, None)
    for k in obj:
        if not skip(k):
            flatten(obj[k], f"{prefix}/{k}", out, skip)


def equal_values(a, b):
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray) or isinstance(a, np.generic):
        a, b = np.asarray(a), np.asarray(b)
        return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()
    return type(a) is type(b) and a == b


def same_object(x, y):
    (xa, xt, xs, xd), (ya, yt, ys, yd) = x, y
    return ((xt, xs) == (yt, ys) and xa.keys() == ya.keys()
            and all(equal_values(xa[k], ya[k]) for k in xa)
            and (xd is None or equal_values(xd, yd)))


def objects_differ(path_a, path_b):
    """None when the two HDF5 files hold the same objects, attributes and
    data bit for bit (whatever their layout), else the first difference."""
    a, b = {}, {}
    with h5py.File(path_a, "r") as fa, h5py.File(path_b, "r") as fb:
        flatten(fa, "", a)
        flatten(fb, "", b)
    if a.keys() != b.keys():
        return f"objects differ: {sorted(set(a) ^ set(b))[:3]}"
    for k, x in a.items():
        if not same_object(x, b[k]):
            return f"{k or '/'} differs"
    return None


def relayout(path):
    """Rewrites the HDF5 file `path` in this layout, atomically and with its
    permissions, after checking that the new file holds exactly what the old
    one did. Returns (bytes before, bytes after)."""
    before = os.path.getsize(path)
    fd, tmp = tempfile.mkstemp(prefix=".tmp-", suffix=".h5", dir=os.path.dirname(path) or ".")
    os.close(fd)
    try:
        with h5py.File(path, "r") as src:
            write_compact(src, tmp)
        why = objects_differ(path, tmp)
        if why:
            raise RuntimeError(f"{path}: the rewritten file differs: {why}")
        os.chmod(tmp, os.stat(path).st_mode & 0o777)
        os.replace(tmp, path)
    except BaseException:
        os.unlink(tmp)
        raise
    return before, os.path.getsize(path)


def main(argv):
    if not argv or argv[0] in ("-h", "--help"):
        print(__doc__.split("\n\n")[0] + "\n" + __doc__.split("\n\n")[1])
        return 0 if argv else 2
    total = [0, 0]
    for p in argv:
        before, after = relayout(p)
        total[0] += before
        total[1] += after
        print(f"{p}: {before} -> {after} bytes")
    print(f"{len(argv)} files: {total[0]} -> {total[1]} bytes")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

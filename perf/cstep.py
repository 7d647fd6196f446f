"""cstep.py - our Adagrad steps (libmtcs_steps.so) called from Python through ctypes.

The library (perf/kernels/steps_abi.c, built at
build/<preset>/perf/kernels/libmtcs_steps.so) runs the same mtfast kernels
mtcs_bench times. perf/duel.py uses this wrapper to time our step and a
peer's alternately in one process.

    cs = CSteps("build/release/perf/kernels/libmtcs_steps.so")
    cs.dense(p, s, g, lr=0.01, eps=1e-10, nthreads=1)         # in place
    cs.coo(p, s, idx, vals, row=1)        # element COO (row 1) or rows x row
    cs.masked_dense(p, s, g, mask)        # mask: bool or uint8, n bytes
    cs.masked_coo(p, s, idx, vals)        # the tutorial's mask = grad != 0

p and s are updated in place; every array must be a C-contiguous 1-D numpy
array of the step's dtype (float32 or float64, both p and s the same, the
gradient too); idx int64. A wrong dtype, a non-contiguous or read-only
output, a short array raises ValueError naming the argument; a status other
than 0 from the library raises CStepError with the library's message.
Indices are not range-checked by the kernels (they are the timed kernels):
idx must be unique and in range; cstep checks the range when check_idx=True
(the default; duel.py turns it off inside the timed loop after checking the
data once).

ada2_rows() is the same sparse update in numpy (mtcs's reference op, ADA-2,
every operation rounded to the arrays' dtype): the bit-exact baseline peer of
perf/duel.py and the reference perf/peers_fbgemm.py checks FBGEMM against.

Only the standard library and numpy.
"""
import ctypes
import os

import numpy as np

ABI_VERSION = 1
_MSG_LEN = 512
_SFX = {np.dtype(np.float32): "f32", np.dtype(np.float64): "f64"}


class CStepError(RuntimeError):
    """A step returned a status other than 0 (MT_OK); .status, .status_name."""

    def __init__(self, fn, status, name, msg):
        super().__init__(f"{fn}: {name} ({status}): {msg}")
        self.status, self.status_name = status, name


class CSteps:
    def __init__(self, path):
        if not os.path.exists(path):
            raise FileNotFoundError(f"libmtcs_steps: {path} does not exist (build it with "
                                    "cmake --build --preset release --target mtcs_steps)")
        self.path = os.path.abspath(path)
        self._lib = lib = ctypes.CDLL(self.path)
        lib.mtcs_steps_abi_version.restype = ctypes.c_int
        lib.mtcs_steps_abi_version.argtypes = []
        v = lib.mtcs_steps_abi_version()
        if v != ABI_VERSION:
            raise ValueError(f"{path}: ABI version {v}, cstep.py speaks {ABI_VERSION}")
        lib.mtcs_steps_isa.restype = ctypes.c_char_p
        lib.mtcs_steps_isa.argtypes = []
        lib.mtcs_steps_threads.restype = ctypes.c_int
        lib.mtcs_steps_threads.argtypes = [ctypes.c_int]
        lib.mtcs_steps_status_name.restype = ctypes.c_char_p
        lib.mtcs_steps_status_name.argtypes = [ctypes.c_int]
        vp, i64, dbl, cint = ctypes.c_void_p, ctypes.c_int64, ctypes.c_double, ctypes.c_int
        tail = [dbl, dbl, cint, ctypes.c_char_p, ctypes.c_size_t]
        sigs = {"dense": [vp, vp, vp, i64], "coo": [vp, vp, vp, vp, i64, i64],
                "masked_dense": [vp, vp, vp, vp, i64], "masked_coo": [vp, vp, vp, vp, i64]}
        self._fn = {}
        for kind, head in sigs.items():
            for sfx in ("f32", "f64"):
                f = getattr(lib, f"mtcs_steps_adagrad_{kind}_{sfx}")
                f.restype = ctypes.c_int
                f.argtypes = head + tail
                self._fn[kind, sfx] = f
        self._msg = ctypes.create_string_buffer(_MSG_LEN)

    # ---- facts -----------------------------------------------------------------
    def isa(self):
        """The code path the kernels take on this CPU: avx512, avx2 or base."""
        return self._lib.mtcs_steps_isa().decode()

    def threads(self, nthreads):
        """Threads a step uses for nthreads (<= 0: all OpenMP threads)."""
        return self._lib.mtcs_steps_threads(int(nthreads))

    # ---- steps -----------------------------------------------------------------
    def dense(self, p, s, g, lr=0.01, eps=1e-10, nthreads=1):
        sfx, n = _ps("dense", p, s)
        _arr("dense", "g", g, p.dtype, n)
        self._call("dense", sfx, (_ptr(p), _ptr(s), _ptr(g), n), lr, eps, nthreads)

    def coo(self, p, s, idx, vals, row=1, lr=0.01, eps=1e-10, nthreads=1, check_idx=True):
        sfx, n = _ps("coo", p, s)
        row = int(row)
        if row < 1 or n % row:
            raise ValueError(f"coo: row = {row} must be >= 1 and divide len(p) = {n}")
        nnz = _idx("coo", idx, n // row, check_idx)
        _arr("coo", "vals", vals, p.dtype, nnz * row)
        self._call("coo", sfx, (_ptr(p), _ptr(s), _ptr(idx), _ptr(vals), nnz, row), lr, eps,
                   nthreads)

    def masked_dense(self, p, s, g, mask, lr=0.01, eps=1e-10, nthreads=1):
        sfx, n = _ps("masked_dense", p, s)
        _arr("masked_dense", "g", g, p.dtype, n)
        if isinstance(mask, np.ndarray) and mask.dtype == np.bool_:
            mask = mask.view(np.uint8)
        _arr("masked_dense", "mask", mask, np.dtype(np.uint8), n)
        self._call("masked_dense", sfx, (_ptr(p), _ptr(s), _ptr(g), _ptr(mask), n), lr, eps,
                   nthreads)

    def masked_coo(self, p, s, idx, vals, lr=0.01, eps=1e-10, nthreads=1, check_idx=True):
        sfx, n = _ps("masked_coo", p, s)
        nnz = _idx("masked_coo", idx, n, check_idx)
        _arr("masked_coo", "vals", vals, p.dtype, nnz)
        self._call("masked_coo", sfx, (_ptr(p), _ptr(s), _ptr(idx), _ptr(vals), nnz), lr, eps,
                   nthreads)

    def _call(self, kind, sfx, head, lr, eps, nthreads):
        st = self._fn[kind, sfx](*head, float(lr), float(eps), int(nthreads), self._msg,
                                 _MSG_LEN)
        if st != 0:
            name = self._lib.mtcs_steps_status_name(st).decode()
            raise CStepError(f"adagrad_{kind}_{sfx}", st, name,
                             self._msg.value.decode(errors="replace"))


# ---- argument checks -------------------------------------------------------------

def _ptr(a):
    return a.ctypes.data


def _arr(fn, name, a, dtype, length, out=False):
    if not isinstance(a, np.ndarray):
        raise ValueError(f"{fn}: {name} must be a numpy array, got {type(a).__name__}")
    if a.dtype != dtype:
        raise ValueError(f"{fn}: {name} has dtype {a.dtype}, expected {np.dtype(dtype)}")
    if a.ndim != 1:
        raise ValueError(f"{fn}: {name} must be 1-D, got shape {a.shape}")
    if not a.flags.c_contiguous:
        raise ValueError(f"{fn}: {name} is not C-contiguous")
    if out and not a.flags.writeable:
        raise ValueError(f"{fn}: {name} is read-only (it is updated in place)")
    if length is not None and a.shape[0] != length:
        raise ValueError(f"{fn}: {name} has {a.shape[0]} elements, expected {length}")


def _ps(fn, p, s):
    """p and s: the step's float dtype, same length; returns (suffix, n)."""
    if not isinstance(p, np.ndarray) or p.dtype not in _SFX:
        got = p.dtype if isinstance(p, np.ndarray) else type(p).__name__
        raise ValueError(f"{fn}: p must be a float32 or float64 numpy array, got {got}")
    _arr(fn, "p", p, p.dtype, None, out=True)
    _arr(fn, "s", s, p.dtype, p.shape[0], out=True)
    if np.shares_memory(p, s):
        raise ValueError(f"{fn}: p and s overlap")
    return _SFX[p.dtype], p.shape[0]


def _idx(fn, idx, limit, check):
    """idx: int64, 1-D, contiguous; with check, every index in [0, limit)."""
    _arr(fn, "idx", idx, np.dtype(np.int64), None)
    if check and idx.size:
        lo, hi = int(idx.min()), int(idx.max())
        if lo < 0 or hi >= limit:
            bad = lo if lo < 0 else hi
            k = int(np.flatnonzero(idx == bad)[0])
            raise ValueError(f"{fn}: idx[{k}] = {bad} is out of range [0, {limit})")
    return idx.shape[0]


def ada2_rows(p2, s2, idx, g, lr, eps):
    """ADA-2 in numpy, in place: p2 and s2 are (rows, D) views of param and
    state_sum, g the (nnz, D) gradient rows at the unique row indices idx:
    s' = s + g*g; std = sqrt(s') + eps; p' = p + (-lr) * (g / std), every
    operation rounded to p2's dtype (numpy float32 arrays round each op), as
    impl/cpu/optim.c and the C coo step compute it."""
    dt = p2.dtype.type
    s = s2[idx] + g * g
    s2[idx] = s
    std = np.sqrt(s) + dt(eps)
    p2[idx] = p2[idx] + dt(-lr) * (g / std)

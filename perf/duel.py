#!/usr/bin/env python3
"""duel.py - our Adagrad step against a peer's, timed ALTERNATELY in one process.

Issue 15: a C-vs-peer ratio taken from two processes at different times does
not survive a busy machine. Here our step (libmtcs_steps.so through ctypes:
perf/cstep.py, the same mtfast kernels mtcs_bench times) and the peer's step
(torch, FBGEMM, ...) run in the same Python process, alternately, in short
rounds, repeated, with the machine's load sampled between the rounds
(perf/machine_load.py). A neighbour that slows the machine slows both sides
of a round alike, so the ratio holds up the way mtcs_bench's paired C-vs-C
ratios do.

Per duel (one C path, one peer, one configuration):
  1. data from a seed (numpy): rows chosen uniformly without replacement at
     the density, sorted; values uniform in [-1, 1] without 0; param uniform
     in [-1, 1); state 0.1 + uniform [0, 1). C and peer get identical copies.
  2. correctness before timing: one C step and one peer step on identical
     copies, param and state compared bit for bit, or within the peer's
     stated tolerance (its `tolerance`, `tolerance_reason`); a peer with
     same_math False is compared with its own formula (`reference`). A
     mismatch: the duel is not timed, an error row naming the duel and the
     first differing element is written, and duel.py exits 1 at the end.
  3. reps (>= 5) rounds: in each, the side whose accumulated time is behind
     takes the next step (each side at least 3 steps) until the round has
     lasted --round-time seconds; every step clocked alone with
     time.perf_counter_ns. Per round: mean C ns, mean peer ns, ratio = peer /
     C (> 1: C faster). machine_load.sample() before the first round, after
     each round; machine_load.summarize() of them is the duel's load.

The Peer interface (perf/peers_fbgemm.py implements it too):

    class Peer:
        name: str          # e.g. "torch_fused", "torch_fused_zeros", "fbgemm_exact"
        same_math: bool    # False for fbgemm_rowwise (different update rule: labelled figure)
        def __init__(self, cfg: dict, data: dict): ...
            # cfg: n (param elements), dim (row length D; 1 = element-level over a 1-D
            #      param), rows (= n // dim), density (percent), nnz (entries = rows present),
            #      dtype ("f32"|"f64"), threads (int), lr (0.01), eps (1e-10)
            # data: numpy arrays the peer COPIES into its own storage:
            #      param (n,), state (n,)  -- state_sum, starts at 0.1 (or any positive)
            #      idx (nnz,) int64 sorted unique row indices
            #      vals (nnz*dim,) the gradient values (non-zero)
            #      grad_dense (n,) the same gradient dense (zeros elsewhere) -- only built
            #      when the peer needs it (cfg["need_dense"]), for dense/fused_zeros peers
        def step(self) -> None: ...     # ONE optimizer step, in place, as timed
        def result(self) -> tuple:      # (param, state) as numpy arrays (copies), for checks

  A peer sets its thread count itself (torch.set_num_threads(cfg["threads"])).
  Optional attributes duel.py reads:
    need_dense = True    the peer wants data["grad_dense"] (class attribute)
    dtypes = ("f32",)    the dtypes it has (default: f32 and f64)
    tolerance, tolerance_reason
                         accept max |peer - ref| / max(|ref|, |before|) <= tolerance
                         (per element; `before` = the value before the step),
                         recorded with the reason; absent: bit-exact required
    reference(param, state) -> (param, state)
                         same_math False: the peer's own formula, applied to
                         the arrays result() returned BEFORE the first step
                         (so the state may have the peer's own shape: rowwise
                         Adagrad keeps one value per row)
    c_paths = (...)      for peers from --peer-file: the C paths it duels

Output: duel.json (perf/README.md "Duels: C against peers, interleaved"
gives the format), written atomically. Exit status: 0; 1 when a duel failed
its correctness check or a peer raised an unexpected error (the rows are
written first); 2 for bad usage or a library that does not load.

Peers whose library does not import in THIS python are reported as
unavailable (an error row per duel, exit status unaffected): run duel.py with
.venv/bin/python for the torch peers and .venv-fbgemm/bin/python for the
FBGEMM ones (--peers fbgemm_exact,fbgemm_rowwise).
"""
import argparse
import datetime
import importlib.util
import os
import platform
import socket
import statistics
import sys
import time
import warnings

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
if HERE not in sys.path:
    sys.path.insert(0, HERE)

import cstep  # noqa: E402
from torch_peers import write_json_atomic  # noqa: E402  (stdlib only at import)
import machine_load  # noqa: E402

LR, EPS = 0.01, 1e-10
MIN_STEPS = 3               # each side of a round takes at least this many steps
NP_DT = {"f32": np.float32, "f64": np.float64}
DEF_SIZES = {"quick": (1 << 20,), "full": (1 << 20, 1 << 24)}
DEF_ROUND = {"quick": 0.05, "full": 0.2}
DEF_DTYPES = {"quick": ("f32",), "full": ("f32", "f64")}
MASKED_MAX_N = 1 << 20      # torch's MaskedTensor path: ~1000x slower than ours
# Tolerance of the torch peers against our kernels, |peer - C| / max(|C|, |before|)
# per element: a few ulps (f32 ulp 1.2e-7, f64 2.2e-16 relative). Why they are
# not bit-exact is each peer's tolerance_reason (measured with torch 2.15 on
# AVX-512: perf/README.md "Duels").
TORCH_TOL = {"f32": 1e-6, "f64": 2e-15}

# ---- the matrix (perf/README.md, "Duels: C against peers, interleaved") --------
# c_path, peer, densities, dims, n_max, quick densities, quick dims.
# A density/dim set of None means "any the CLI asks for" (default: the list after it).
MATRIX = [
    dict(c="dense", peer="torch_default", dens=(100,), dims=(1,)),
    dict(c="dense", peer="torch_fused", dens=(100,), dims=(1,)),
    dict(c="sparse_coo", peer="torch_sparse", dens=(1, 10), dims=(1,), qdens=(1,)),
    dict(c="hybrid_coo", peer="torch_sparse", dens=(1, 10), dims=(64,), any_dims=True,
         qdens=(1,)),
    dict(c="masked_sparse", peer="torch_masked", dens=(1,), dims=(1,), n_max=MASKED_MAX_N),
    dict(c="masked_sparse", peer="torch_fused_zeros", dens=(1, 10), dims=(1,), qdens=(1,)),
    dict(c="masked_dense", peer="torch_fused_zeros", dens=(1, 10, 100), dims=(1,),
         qdens=(1, 100)),
    dict(c="sparse_coo", peer="fbgemm_exact", dens=(1, 10), dims=(1,), qdens=(1,),
         dtypes=("f32",)),
    dict(c="hybrid_coo", peer="fbgemm_exact", dens=(1, 10), dims=(16, 64, 256), qdens=(1,),
         qdims=(64,), dtypes=("f32",)),
    dict(c="hybrid_coo", peer="fbgemm_rowwise", dens=(1, 10), dims=(64,), qdens=(1,),
         dtypes=("f32",)),
    # not in the default matrix (only with --peers numpy_ref): a pure-numpy
    # ADA-1/ADA-2 step, bit-exact, a baseline and the self-test's peer
    dict(c="dense", peer="numpy_ref", dens=(100,), dims=(1,), opt_in=True),
    dict(c="sparse_coo", peer="numpy_ref", dens=(1, 10), dims=(1,), qdens=(1,), opt_in=True),
    dict(c="hybrid_coo", peer="numpy_ref", dens=(1, 10), dims=(64,), qdens=(1,),
         any_dims=True, opt_in=True),
]
C_PATHS = ("dense", "sparse_coo", "hybrid_coo", "masked_sparse", "masked_dense")


def log(msg):
    print(f"duel: {msg}", file=sys.stderr, flush=True)


# ---- data -------------------------------------------------------------------------

def make_data(n, dim, density, dtype, seed, need_dense):
    """The duel's inputs (see the module docstring); deterministic in seed."""
    dt = NP_DT[dtype]
    rng = np.random.default_rng(seed)
    rows = n // dim
    nnz = min(rows, max(1, round(rows * density / 100.0)))
    if nnz == rows:
        idx = np.arange(rows, dtype=np.int64)
    else:
        idx = np.sort(rng.choice(rows, size=nnz, replace=False)).astype(np.int64)
    vals = rng.uniform(-1.0, 1.0, size=nnz * dim).astype(dt)
    vals[vals == 0] = dt(0.5)  # non-zero (the masked paths take mask = grad != 0)
    param = rng.uniform(-1.0, 1.0, size=n).astype(dt)
    state = (0.1 + rng.uniform(0.0, 1.0, size=n)).astype(dt)
    data = {"param": param, "state": state, "idx": idx, "vals": vals}
    if need_dense:
        g = np.zeros(n, dtype=dt)
        g.reshape(rows, dim)[idx] = vals.reshape(nnz, dim)
        data["grad_dense"] = g
    for a in data.values():
        a.flags.writeable = False  # every side copies
    return data, nnz


class CSide:
    """Our step on its own copies of the data, for one c_path."""

    def __init__(self, cs, c_path, cfg, data):
        self.p, self.s = data["param"].copy(), data["state"].copy()
        lr, eps, nt, dim = cfg["lr"], cfg["eps"], cfg["threads"], cfg["dim"]
        idx, vals = data["idx"], data["vals"]
        if c_path in ("dense", "masked_dense"):
            g = data["grad_dense"]
        if c_path == "dense":
            self.step = lambda: cs.dense(self.p, self.s, g, lr, eps, nt)
        elif c_path in ("sparse_coo", "hybrid_coo"):
            cstep._idx("coo", idx, cfg["rows"], True)  # the range, once
            self.step = lambda: cs.coo(self.p, self.s, idx, vals, dim, lr, eps, nt,
                                       check_idx=False)
        elif c_path == "masked_sparse":
            cstep._idx("masked_coo", idx, cfg["n"], True)  # the range, once
            self.step = lambda: cs.masked_coo(self.p, self.s, idx, vals, lr, eps, nt,
                                              check_idx=False)
        elif c_path == "masked_dense":
            mask = (g != 0).view(np.uint8)
            self.step = lambda: cs.masked_dense(self.p, self.s, g, mask, lr, eps, nt)
        else:
            raise ValueError(f"unknown C path {c_path!r} (one of {', '.join(C_PATHS)})")

    def result(self):
        return self.p.copy(), self.s.copy()


# ---- the peers -----------------------------------------------------------------

class NumpyRef:
    """Pure numpy ADA-1 (dense) / ADA-2 (COO) as impl/cpu/optim.c computes them,
    every operation rounded to the dtype: bit-exact against our kernels."""
    name = "numpy_ref"
    same_math = True
    need_dense = True
    c_paths = ("dense", "sparse_coo", "hybrid_coo")

    def __init__(self, cfg, data):
        dt = NP_DT[cfg["dtype"]]
        self.p, self.s = data["param"].copy(), data["state"].copy()
        self.lr, self.eps = cfg["lr"], cfg["eps"]
        self.nclr = dt(-cfg["lr"])
        self.dense = cfg["c_path"] == "dense"
        self.g = data["grad_dense"] if self.dense else data["vals"].reshape(-1, cfg["dim"])
        self.idx, self.dim = data["idx"], cfg["dim"]

    def step(self):
        if self.dense:
            self.s += self.g * self.g
            std = np.sqrt(self.s) + self.p.dtype.type(self.eps)
            self.p += (self.nclr * self.g) / std        # ADA-1: (nclr * g) / std
            return
        cstep.ada2_rows(self.p.reshape(-1, self.dim), self.s.reshape(-1, self.dim),
                        self.idx, self.g, self.lr, self.eps)  # ADA-2: nclr * (g / std)

    def result(self):
        return self.p.copy(), self.s.copy()


def _torch():
    import torch
    return torch


class _TorchOptPeer:
    """torch.optim.Adagrad on a dense or sparse grad, state preset from data."""
    same_math = True
    kw = {}

    def __init__(self, cfg, data):
        self.tolerance = TORCH_TOL[cfg["dtype"]]
        torch = self.torch = _torch()
        torch.set_num_threads(int(cfg["threads"]))
        self.p = torch.from_numpy(data["param"].copy())
        grad = self.make_grad(torch, cfg, data)
        if grad.is_sparse:
            self.p = self.p.reshape(grad.shape)
        self.p.grad = grad
        self.opt = torch.optim.Adagrad([self.p], lr=cfg["lr"], eps=cfg["eps"],
                                       initial_accumulator_value=0.0, **self.kw)
        with torch.no_grad():
            self.opt.state[self.p]["sum"].copy_(
                torch.from_numpy(data["state"]).reshape(self.p.shape))

    def step(self):
        self.opt.step()

    def result(self):
        return (self.p.detach().reshape(-1).numpy().copy(),
                self.opt.state[self.p]["sum"].reshape(-1).numpy().copy())


class TorchDefault(_TorchOptPeer):
    """Adagrad() as a user gets it (on CPU: the single-tensor for-loop path)."""
    name, need_dense = "torch_default", True
    tolerance_reason = ("torch computes state_sum.addcmul_(g, g) as one fma (g*g not "
                        "rounded on its own, as ADA-1 does); p + (-clr*g)/std follows")

    def make_grad(self, torch, cfg, data):
        return torch.from_numpy(data["grad_dense"].copy())


class TorchFused(TorchDefault):
    """Adagrad(fused=True): torch._fused_adagrad_ on the dense grad."""
    name, kw = "torch_fused", {"fused": True}


class TorchFusedZeros(TorchFused):
    """fused=True on the dense grad that is zero where the mask is off: with
    weight_decay 0 a zero gradient changes nothing, so it is the masked update
    at full streaming cost (issue 15's alternative to MaskedTensor)."""
    name = "torch_fused_zeros"
    tolerance_reason = ("the fused step is ADA-1 with the state as one fma(g, g, s); our masked "
                        "step is ADA-3: fma(-clr, g/std, p); other roundings of the same update")


class TorchSparse(_TorchOptPeer):
    """The sparse-gradient (_make_sparse) path: a coalesced COO grad; dim > 1:
    a hybrid grad [rows, dim] with sparse_dim 1."""
    name, need_dense = "torch_sparse", False
    tolerance_reason = ("torch's dense += sparse add (alpha=-clr) is an fma(-clr, g/std, p); "
                        "ADA-2 rounds -clr*(g/std) first")

    def make_grad(self, torch, cfg, data):
        idx = torch.from_numpy(data["idx"].copy()).unsqueeze(0)
        dim = cfg["dim"]
        vals = torch.from_numpy(data["vals"].copy())
        if dim == 1:
            return torch.sparse_coo_tensor(idx, vals, (cfg["n"],)).coalesce()
        return torch.sparse_coo_tensor(idx, vals.reshape(-1, dim),
                                       (cfg["rows"], dim)).coalesce()


class TorchMasked:
    """The MaskedTensor tutorial's Adagrad lines, perf/torch_peers.py's
    masked_step (imported, not copied); the mask (grad != 0) and the masked grad
    are built outside the timed step."""
    name, same_math, need_dense = "torch_masked", True, False
    tolerance_reason = ("the tutorial's masked ops round differently from ADA-3's fma in a "
                        "few elements (1 ulp)")

    def __init__(self, cfg, data):
        self.tolerance = TORCH_TOL[cfg["dtype"]]
        torch = _torch()
        import torch_peers
        warnings.filterwarnings("ignore", category=UserWarning)  # MaskedTensor prototype
        torch.set_num_threads(int(cfg["threads"]))

        class Prob:  # what masked_step reads of torch_peers.Problem
            pass
        prob = Prob()
        prob.param0 = torch.from_numpy(data["param"].copy())
        prob.shape, prob.dt, prob.device = (cfg["n"],), prob.param0.dtype, "cpu"
        grad = torch.sparse_coo_tensor(torch.from_numpy(data["idx"].copy()).unsqueeze(0),
                                       torch.from_numpy(data["vals"].copy()),
                                       (cfg["n"],)).coalesce()
        self.step, self._result = torch_peers.masked_step(torch, prob, grad)
        # masked_step starts the state at its ACC0: preset ours in place (before
        # the first step result() hands back the state tensor itself)
        self._result()[1].copy_(torch.from_numpy(data["state"]))

    def result(self):
        p, s = self._result()
        return p.reshape(-1).numpy().copy(), s.reshape(-1).numpy().copy()


def _fbgemm(name):
    def load():
        import peers_fbgemm
        return {"fbgemm_exact": peers_fbgemm.FbgemmExact,
                "fbgemm_rowwise": peers_fbgemm.FbgemmRowwise}[name]
    return load


# name -> () -> class (raises ImportError/OSError when its library is missing here)
PEERS = {
    "torch_default": lambda: (_torch(), TorchDefault)[1],
    "torch_fused": lambda: (_torch(), TorchFused)[1],
    "torch_sparse": lambda: (_torch(), TorchSparse)[1],
    "torch_masked": lambda: (_torch(), TorchMasked)[1],
    "torch_fused_zeros": lambda: (_torch(), TorchFusedZeros)[1],
    "fbgemm_exact": _fbgemm("fbgemm_exact"),
    "fbgemm_rowwise": _fbgemm("fbgemm_rowwise"),
    "numpy_ref": lambda: NumpyRef,
}
LIBRARY = {"torch": "torch", "fbgemm": "fbgemm_gpu (fbgemm-gpu-cpu)", "numpy": "numpy"}


def load_peer_file(path):
    """--peer-file: a Python file with PEERS = [class, ...]; each class has the
    Peer interface and c_paths. Returns [(name, class)]."""
    spec = importlib.util.spec_from_file_location("duel_peer_file", path)
    if spec is None:
        raise ValueError(f"--peer-file {path}: not a Python file")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    out = []
    for cls in getattr(mod, "PEERS", ()):
        for c in getattr(cls, "c_paths", ()):
            if c not in C_PATHS:
                raise ValueError(f"--peer-file {path}: {cls.name}.c_paths has {c!r}, not one of "
                                 f"{', '.join(C_PATHS)}")
        out.append((cls.name, cls))
    if not out:
        raise ValueError(f"--peer-file {path}: defines no PEERS")
    return out


# ---- checks -------------------------------------------------------------------

def compare(what, got, want, before, tol):
    """None when got matches want (bit for bit when tol is None); else a message
    naming the first differing element. Also returns max |diff| / max(|want|,
    |before|) over all elements."""
    got, want, before = np.asarray(got), np.asarray(want), np.asarray(before)
    if got.shape != want.shape:
        return f"{what}: shape {got.shape}, expected {want.shape}", float("inf")
    if tol is None:
        same = (got.view(np.uint8).reshape(got.shape[0], -1) ==
                want.view(np.uint8).reshape(want.shape[0], -1)).all(axis=1) \
            if got.size else np.ones(0, bool)
        bad = np.flatnonzero(~same)
        rel = 0.0
    else:
        scale = np.maximum(np.abs(want.astype(np.float64)), np.abs(before.astype(np.float64)))
        scale[scale == 0] = np.finfo(np.float64).tiny
        r = np.abs(got.astype(np.float64) - want.astype(np.float64)) / scale
        r[np.isnan(got) != np.isnan(want)] = np.inf
        rel = float(r.max()) if r.size else 0.0
        bad = np.flatnonzero(~(r <= tol))
    if bad.size == 0:
        return None, rel
    k = int(bad[0])
    return (f"{what}[{k}] = {got[k]!r} (bits {_bits(got[k])}), expected {want[k]!r} "
            f"(bits {_bits(want[k])}); {bad.size} element(s) differ"), rel


def _bits(x):
    return "0x" + np.asarray(x).tobytes()[::-1].hex()


def verify(cs, c_path, cls, cfg, data):
    """One C step and one peer step on identical copies; returns (peer, cside,
    verified string) or raises Mismatch."""
    c = CSide(cs, c_path, cfg, data)
    peer = cls(cfg, data)
    before = peer.result()
    c.step()
    peer.step()
    got = peer.result()
    tol = getattr(peer, "tolerance", None)
    reason = getattr(peer, "tolerance_reason", "")
    if getattr(peer, "same_math", True):
        want, wbefore = c.result(), (data["param"], data["state"])
        against = "the C step"
    else:
        want, wbefore = peer.reference(*before), before
        against = f"{peer.name}'s own formula"
    rels = []
    for what, g, w, b in (("param", got[0], want[0], wbefore[0]),
                          ("state", got[1], want[1], wbefore[1])):
        msg, rel = compare(what, g, w, b, tol)
        if msg:
            raise Mismatch(f"against {against}: {msg}"
                           + (f" (tolerance {tol:g}: {reason})" if tol is not None else
                              " (bit-exact required)"))
        rels.append(rel)
    if tol is None:
        v = "bit-exact"
    elif max(rels) == 0.0:
        v = "bit-exact"
    else:
        v = f"max |diff|/|x| = {max(rels):.2g} <= {tol:g} ({reason})"
    if against != "the C step":
        v += f" against {against}"
    return peer, c, v


class Mismatch(Exception):
    pass


# ---- timing -------------------------------------------------------------------

def one_round(c_step, p_step, round_ns):
    """Alternate the two steps (the side behind in accumulated time goes next)."""
    ct = pt = 0
    cn = pn = 0
    clock = time.perf_counter_ns
    while True:
        up = ct + pt >= round_ns
        if up and cn >= MIN_STEPS and pn >= MIN_STEPS:
            break
        if up:
            c_turn = cn < MIN_STEPS
        else:
            c_turn = ct <= pt
        t0 = clock()
        (c_step if c_turn else p_step)()
        dt = clock() - t0
        if c_turn:
            ct, cn = ct + dt, cn + 1
        else:
            pt, pn = pt + dt, pn + 1
    c_ns, p_ns = ct / cn, pt / pn
    return {"c_ns": c_ns, "peer_ns": p_ns, "ratio": p_ns / c_ns, "c_steps": cn,
            "peer_steps": pn}


def stats(xs):
    return {"median": statistics.median(xs), "min": min(xs), "max": max(xs)}


# ---- the run -------------------------------------------------------------------

def parse_size(s):
    s = s.strip().upper()
    mult = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}.get(s[-1:], 1)
    if s[-1:] in "KMG":
        s = s[:-1]
    try:
        v = int(s) * mult
    except ValueError:
        raise argparse.ArgumentTypeError(f"size {s!r}: expected e.g. 1M, 16M, 65536")
    if v < 1:
        raise argparse.ArgumentTypeError(f"size {v} < 1")
    return v


def csv(conv):
    def parse(text):
        try:
            return tuple(conv(x) for x in text.split(",") if x.strip())
        except ValueError as e:
            raise argparse.ArgumentTypeError(str(e))
    return parse


def size_name(n):
    return f"{n >> 20}M" if n % (1 << 20) == 0 else f"{n >> 10}K" if n % 1024 == 0 else str(n)


def duel_name(c_path, peer, dev, dtype, n, density, dim):
    return (f"duel/c:{c_path}/peer:{peer}/dev:{dev}/dtype:{dtype}/n:{n}"
            f"/density:{density:g}/dim:{dim}")


def plan(a, mode, extra):
    """The duels to run: [(dev, dtype, n, density, dim, c_path, peer)] sorted so
    that configurations sharing data are adjacent."""
    want_peers = set(a.peers) if a.peers else None
    entries = [e for e in MATRIX if (e["peer"] in want_peers if want_peers
                                     else not e.get("opt_in"))]
    for name, cls in extra:
        if want_peers and name not in want_peers:
            continue
        for c in cls.c_paths:
            entries.append(dict(c=c, peer=name, dens=(100,) if c == "dense" else (1, 10),
                                dims=(64,) if c == "hybrid_coo" else (1,),
                                any_dims=c == "hybrid_coo", qdens=None,
                                dtypes=getattr(cls, "dtypes", ("f32", "f64"))))
    if want_peers:
        known = {e["peer"] for e in entries}
        unknown = want_peers - known
        if unknown:
            raise SystemExit(f"duel: unknown peer(s) {', '.join(sorted(unknown))} (known: "
                             f"{', '.join(sorted(set(PEERS) | {n for n, _ in extra}))})")
    quick = mode == "quick"
    sizes = a.sizes or DEF_SIZES[mode]
    dtypes = a.dtypes or DEF_DTYPES[mode]
    ncpu = os.cpu_count() or 1
    devs = a.devs or ("cpu1", "cpuN")
    out = set()
    for e in entries:
        if e["c"] == "dense":
            dens = (100,)  # a dense step does the same work at every density
        elif a.densities:
            dens = a.densities
        else:
            dens = (e.get("qdens") or e["dens"]) if quick else e["dens"]
        if e["c"] == "hybrid_coo":
            if a.dims:
                dims = tuple(d for d in a.dims
                             if d > 1 and (e.get("any_dims") or d in e["dims"]))
            else:
                dims = (e.get("qdims") or e["dims"]) if quick else e["dims"]
        else:
            dims = (1,) if (not a.dims or 1 in a.dims) else ()
        for dev in devs:
            if dev == "cpuN" and ncpu == 1:
                continue
            for dt in dtypes:
                if dt not in e.get("dtypes", ("f32", "f64")):
                    continue
                for n in sizes:
                    if n > e.get("n_max", n):
                        continue
                    for d in dens:
                        for dim in dims:
                            if n % dim:
                                continue
                            out.add((dev, dt, n, float(d), dim, e["c"], e["peer"]))
    order = {p: i for i, p in enumerate(list(PEERS) + [n for n, _ in extra])}
    return sorted(out, key=lambda t: (t[0] != "cpu1", t[1], t[2], t[3], t[4],
                                      C_PATHS.index(t[5]), order.get(t[6], 99)))


def versions():
    tv = fv = None
    try:
        import torch
        tv = torch.__version__
    except Exception:  # noqa: BLE001 - not installed here
        pass
    try:
        from importlib import metadata
        fv = metadata.version("fbgemm-gpu-cpu")
    except Exception:  # noqa: BLE001
        pass
    return tv, fv


def openmp_runtimes():
    """The OpenMP runtimes mapped into this process (one libgomp shared by torch and
    our library is what we want: two pools would spin against each other)."""
    libs = set()
    try:
        with open("/proc/self/maps") as f:
            for line in f:
                path = line.split()[-1] if len(line.split()) >= 6 else ""
                base = os.path.basename(path)
                if base.startswith(("libgomp", "libiomp", "libomp")):
                    libs.add(path)
    except OSError:
        return None
    return sorted(libs)


EPILOG = """\
the default matrix (full; --quick: n 1M, the first density, dims 1 and 64, f32):
  c dense          vs torch_default, torch_fused    density 100, n 1M 16M
  c sparse_coo     vs torch_sparse                  density 1 10 (dim 1)
  c hybrid_coo     vs torch_sparse                  density 1 10, dim 64 (any with --dims)
  c masked_sparse  vs torch_masked                  density 1, n 1M only
  c masked_sparse  vs torch_fused_zeros             density 1 10
  c masked_dense   vs torch_fused_zeros             density 1 10 100
  c sparse_coo     vs fbgemm_exact                  density 1 10 (dim 1), f32
  c hybrid_coo     vs fbgemm_exact                  density 1 10, dim 16 64 256, f32
  c hybrid_coo     vs fbgemm_rowwise (other math)   density 1 10, dim 64, f32
  devs cpu1 and cpuN (N = all cores); dtypes f32 f64 (where the peer has it);
  --peers numpy_ref adds a pure-numpy bit-exact baseline (not in the default).

examples:
  .venv/bin/python perf/duel.py --steps-lib build/release/perf/kernels/libmtcs_steps.so \\
      --quick --out duel_torch.json
  .venv-fbgemm/bin/python perf/duel.py --steps-lib build/release/perf/kernels/libmtcs_steps.so \\
      --peers fbgemm_exact,fbgemm_rowwise --out duel_fbgemm.json
  perf/duel.py --steps-lib ... --list            # the duels, nothing run

exit status: 0 ok (unavailable peers are rows with an error, not failures);
1 a correctness check failed or a peer raised (rows written first); 2 usage."""


def main(argv=None):
    ap = argparse.ArgumentParser(
        prog="duel.py", formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Time our Adagrad step (libmtcs_steps.so) and a peer's (torch, FBGEMM) "
                    "alternately in short rounds in one process, after checking both give the "
                    "same result; write duel.json with per-round ratios and the machine's load.",
        epilog=EPILOG)
    ap.add_argument("--steps-lib", required=True,
                    help="path of libmtcs_steps.so (build/<preset>/perf/kernels/)")
    ap.add_argument("--quick", action="store_true", help="the quick subset, 0.05 s rounds")
    ap.add_argument("--peers", type=csv(str), help="only these peers (comma-separated)")
    ap.add_argument("--peer-file", help="a Python file with PEERS = [class, ...] (Peer interface "
                    "plus c_paths) to duel as well (tests, new peers)")
    ap.add_argument("--sizes", type=csv(parse_size), help="param sizes, e.g. 1M,16M,64M")
    ap.add_argument("--densities", type=csv(float), help="densities in percent, e.g. 1,10")
    ap.add_argument("--dims", type=csv(int), help="row lengths D, e.g. 1,16,64,256 "
                    "(1: element-level; > 1: hybrid rows x D)")
    ap.add_argument("--devs", type=csv(str), help="cpu1 (1 thread) and/or cpuN (all cores)")
    ap.add_argument("--dtypes", type=csv(str), help="f32 and/or f64")
    ap.add_argument("--reps", type=int, default=5, help="rounds per duel (>= 5; default 5)")
    ap.add_argument("--round-time", type=float, help="seconds per round (default 0.2, "
                    "quick 0.05)")
    ap.add_argument("--seed", type=int, default=15, help="data seed (default 15)")
    ap.add_argument("--out", default="duel.json", help="output JSON (default duel.json)")
    ap.add_argument("--list", action="store_true", help="print the duels and exit")
    a = ap.parse_args(argv)
    mode = "quick" if a.quick else "full"
    if a.reps < 5:
        ap.error(f"--reps {a.reps}: at least 5 repetitions (issue 15: median of >= 5)")
    for d in a.devs or ():
        if d not in ("cpu1", "cpuN"):
            ap.error(f"--devs: {d!r} is not cpu1 or cpuN")
    for t in a.dtypes or ():
        if t not in NP_DT:
            ap.error(f"--dtypes: {t!r} is not f32 or f64")
    for d in a.densities or ():
        if not 0 < d <= 100:
            ap.error(f"--densities: {d:g} is not in (0, 100]")
    for d in a.dims or ():
        if d < 1:
            ap.error(f"--dims: {d} < 1")
    round_ns = int((a.round_time or DEF_ROUND[mode]) * 1e9)
    try:
        extra = load_peer_file(a.peer_file) if a.peer_file else []
        cs = cstep.CSteps(a.steps_lib)
    except (OSError, ValueError) as e:
        log(f"error: {e}")
        return 2
    peers = dict(PEERS)
    peers.update({n: (lambda c=c: c) for n, c in extra})
    duels = plan(a, mode, extra)
    ncpu = os.cpu_count() or 1

    # which peers load in this python
    classes, unavailable = {}, {}
    for name in sorted({d[6] for d in duels}):
        try:
            classes[name] = peers[name]()
        except Exception as e:  # noqa: BLE001 - ImportError, OSError, undefined symbols...
            lib = "torch" if name.startswith("torch") else \
                "fbgemm_gpu" if name.startswith("fbgemm") else name
            unavailable[name] = (f"{lib} not importable in {sys.executable}: "
                                 f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}")
    if a.list:
        for d in duels:
            dev, dt, n, den, dim, c, p = d
            note = f"  [unavailable: {unavailable[p]}]" if p in unavailable else ""
            print(duel_name(c, p, dev, dt, n, den, dim) + note)
        return 0

    tv, fv = versions()
    context = {"date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
               "host": socket.gethostname(), "ncpu": ncpu,
               "python": f"{sys.executable} {platform.python_version()}",
               "numpy": np.__version__, "torch": tv, "fbgemm": fv,
               "steps_lib": cs.path, "isa": cs.isa(), "mode": mode,
               "round_time_s": round_ns / 1e9, "reps": a.reps, "seed": a.seed,
               "lr": LR, "eps": EPS, "phases": []}
    log(f"{len(duels)} duel(s), {a.reps} rounds of {round_ns / 1e9:g} s; steps {cs.path} "
        f"({cs.isa()}); python {sys.executable}")
    rows, failed = [], False
    data_key, data, nnz = None, None, 0
    phase = None
    t_start = time.perf_counter()

    def close_phase():
        if phase:
            phase["end"] = machine_load.sample()
            phase["load"] = machine_load.summarize([phase["start"], phase["end"]] +
                                                   phase.pop("_mid"), phase.pop("_threads"))
            context["phases"].append(phase)

    for dev, dt, n, den, dim, c_path, pname in duels:
        threads = 1 if dev == "cpu1" else ncpu
        if phase is None or phase["name"] != dev:
            close_phase()
            phase = {"name": dev, "start": machine_load.sample(), "_mid": [],
                     "_threads": threads}
        name = duel_name(c_path, pname, dev, dt, n, den, dim)
        cls = classes.get(pname)
        row = {"name": name, "c_path": c_path, "peer": pname,
               "same_math": bool(getattr(cls, "same_math", True)), "dev": dev,
               "threads": threads, "dtype": dt, "n": n, "density": den, "dim": dim,
               "nnz": None, "verified": None, "reps": [], "c_ns": None, "peer_ns": None,
               "ratio": None, "load": None, "wall_s": None, "error": None}
        rows.append(row)
        if pname in unavailable:
            row["error"] = unavailable[pname]
            continue
        if dt not in getattr(cls, "dtypes", ("f32", "f64")):
            row["error"] = f"{pname} has no {dt} step"
            continue
        need_dense = c_path in ("dense", "masked_dense") or getattr(cls, "need_dense", False)
        key = (dt, n, den, dim)
        if key != data_key or (need_dense and "grad_dense" not in data):
            data = None
            data, nnz = make_data(n, dim, den, dt, a.seed, need_dense)
            data_key = key
        cfg = {"n": n, "dim": dim, "rows": n // dim, "density": den, "nnz": nnz, "dtype": dt,
               "threads": threads, "lr": LR, "eps": EPS, "need_dense": need_dense,
               "c_path": c_path}
        row["nnz"] = nnz
        t_duel = time.perf_counter()
        try:
            peer, c, verified = verify(cs, c_path, cls, cfg, data)
        except Mismatch as e:
            row["error"] = f"{name}: verification failed: {e}"
            log(f"{row['error']}")
            failed = True
            continue
        except ImportError as e:  # its library fails when the peer is built
            row["error"] = (f"{pname}: library not importable in {sys.executable}: "
                            f"{str(e).splitlines()[0] if str(e) else type(e).__name__}")
            unavailable[pname] = row["error"]
            log(f"{name}: {row['error']}")
            continue
        except ValueError as e:  # the peer does not take this configuration
            row["error"] = f"{pname} does not take this configuration: {e}"
            log(f"{name}: {row['error']}")
            continue
        except Exception as e:  # noqa: BLE001 - a peer's own failure
            row["error"] = f"{pname} raised {type(e).__name__}: {e}"
            log(f"{name}: {row['error']}")
            failed = True
            continue
        row["verified"] = verified
        try:
            c.step()
            peer.step()  # warm both (caches, lazy allocations)
            samples = [machine_load.sample()]
            for _ in range(a.reps):
                row["reps"].append(one_round(c.step, peer.step, round_ns))
                samples.append(machine_load.sample())
        except Exception as e:  # noqa: BLE001
            row["error"] = f"{pname} raised {type(e).__name__} while timed: {e}"
            row["reps"] = []
            log(f"{name}: {row['error']}")
            failed = True
            continue
        finally:
            del peer, c
        phase["_mid"].extend(samples[1:-1])
        for k in ("c_ns", "peer_ns", "ratio"):
            row[k] = stats([r[k] for r in row["reps"]])
        row["load"] = machine_load.summarize(samples, threads)
        row["wall_s"] = round(time.perf_counter() - t_duel, 3)  # check + rounds, not the data
        r = row["ratio"]
        log(f"{name}: {verified.split(' (')[0]}; "
            f"ratio {r['median']:.3g}x [{r['min']:.3g}, {r['max']:.3g}] "
            f"(C {row['c_ns']['median'] / 1e3:.1f} us, {pname} "
            f"{row['peer_ns']['median'] / 1e3:.1f} us); "
            f"{machine_load.describe(row['load'])}")
    close_phase()
    context["openmp"] = openmp_runtimes()
    doc = {"context": context, "duels": rows}
    write_json_atomic(a.out, doc)
    nerr = sum(1 for r in rows if r["error"])
    log(f"wrote {a.out}: {len(rows)} duel(s), {nerr} with an error, "
        f"{time.perf_counter() - t_start:.0f} s" + ("; FAILED (see the error rows)"
                                                    if failed else ""))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

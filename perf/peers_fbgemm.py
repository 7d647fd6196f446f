#!/usr/bin/env python3
"""peers_fbgemm.py - FBGEMM's CPU sparse Adagrad as duel peers (issue 15).

Two peers for perf/duel.py (its Peer interface: __init__(cfg, data), step(),
result(); `name`, `same_math`), both calling FBGEMM's table-batched-embedding
(TBE) CPU backward ops directly, on ONE table of rows x D floats:

  fbgemm_exact    torch.ops.fbgemm.split_embedding_backward_codegen_adagrad_cpu
                  same_math True: the COO update of torch's _make_sparse path
                  (mtcs ADA-2): s += g*g; p -= lr * g / (sqrt(s) + eps) at the
                  gradient's rows only.
  fbgemm_rowwise  torch.ops.fbgemm.split_embedding_backward_codegen_rowwise_adagrad_cpu
                  same_math False: ONE state value per row, h += mean_d(g^2);
                  p += g * (-lr / (sqrt(h) + eps)). A different update (a
                  labelled figure), checked against its own formula
                  (rowwise_reference()).

How a COO gradient becomes a TBE backward call: one bag per gradient row.
The gradient has nnz distinct sorted rows idx[k] with D values each; the op
gets indices = idx, offsets = arange(nnz + 1) (bag k holds exactly the one
index idx[k]), grad_output [nnz, D] = the values, SUM pooling, no per-sample
weights. FBGEMM's backward transposes bags into rows (csr2csc: sorts the
(row, bag) pairs, sums the bags that hit a row) and applies the optimizer once
per distinct row: with one bag per row the sum is the value itself, so the
update is _make_sparse's (which coalesces, i.e. sums duplicates, first).
Element-level gradients are D = 1 on the 1-D parameter (rows = n).

What each call pays (FBGEMM's own work, timed as part of the step): the
csr2csc transposition (a radix sort of nnz keys plus its buffers, allocated
per call inside FBGEMM), learning_rate_tensor.item(), then the update. Every
tensor WE pass is built once in __init__; step() is the op call only.

Threads: torch.set_num_threads(cfg["threads"]). The exact op's update loop is
SERIAL in FBGEMM (embedding_backward_split_cpu_template.cpp, the "no fbgemm"
branch: "TODO: to parallelize"), so its cpuN figure is its cpu1 figure plus
whatever csr2csc parallelizes; rowwise runs FBGEMM's JIT kernel
(GenerateSparseAdaGrad(rowwise=true)) under at::parallel_for over rows. That
kernel runs only because of the cpuinfo binding fix (ISA_FIX_ENV below):
FBGEMM as installed beside torch 2.14.1 sees no AVX2 and runs scalar code.

Importing this module loads torch and FBGEMM (ImportError naming why when
they do not load), so duel.py learns at import whether the peers exist.

dtype: f32 only (FBGEMM dispatches float and half weights; no double): a cfg
with dtype "f64" raises ValueError. Any D >= 1 is accepted by both ops (the
self-test covers 1, 16, 64, 256; the JIT rowwise kernel handles remainders).

Numerics (see --self-test; perf/README.md "FBGEMM peer"):
  exact: same math as ADA-2, another rounding order, so not bit-exact:
  FBGEMM's compiled kernel accumulates s + g*g with ONE rounding (an fma) and
  computes w - f32(lr*g) / (sqrt(s) + eps) in double (C's double sqrt), rounded
  to float once; ADA-2 rounds every op in float. The self-test checks FBGEMM
  against that order (exact_fbgemm_order()) bit for bit and against ADA-2
  within EXACT_TOL (measured: <= 2.3e-7 after two steps).
  rowwise: bit-exact to rowwise_reference(), FBGEMM's own reference order.

usage: .venv-fbgemm/bin/python perf/peers_fbgemm.py --self-test [--n N] [--steps K]
       (exit 0: every comparison within tolerance and the mutated reference
       caught; 1: a mismatch or a mutation not caught; 2: FBGEMM unavailable)
       .venv-fbgemm/bin/python perf/peers_fbgemm.py --time [--n N] [--density P]
       [--dims 1,64] [--threads T]   (rough single-step times, not a benchmark)
"""
import argparse
import math
import sys

import numpy as np

import cstep  # perf/cstep.py: ada2_rows, the numpy ADA-2 reference

# Tolerance for fbgemm_exact against ADA-2, per element relative to the value
# (duel.py: |peer - ref| / max(|ref|, |before|)): the fma'd state is within
# 1 ulp of ADA-2's per step and the update term within ~1 ulp, so one step
# leaves p and s within ~2^-23 relative of ADA-2; the self-test measured <= 2.3e-7 over two
# steps. 1e-6 covers that with margin; a real bug (lr doubled: >= 3e-2) fails.
EXACT_TOL = 1e-6
EXACT_TOL_REASON = ("same math, FBGEMM's rounding: the state as one fma(g, g, s), the "
                    "update p - (lr*g)/(sqrt(s)+eps) in double rounded once; ADA-2 "
                    "rounds each f32 op")
# rowwise against rowwise_reference(): measured bit-exact; the tolerance only
# allows for a build of FBGEMM's JIT kernel that fuses multiply-adds.
ROWWISE_TOL = 1e-6
ROWWISE_TOL_REASON = ("FBGEMM's JIT kernel against its reference order in numpy "
                      "float32 (bit-exact where measured)")

_POOLING_SUM = 0  # fbgemm_gpu PoolingMode.SUM


# FBGEMM picks its kernels by the CPU's ISA (cpuinfo). fbgemm.so does not
# carry cpuinfo: it binds cpuinfo_isa / cpuinfo_initialize to the first copy
# its loader finds. With torch 2.14.1 that is libc10.so's copy, which stays
# zero, because libc10's own cpuinfo_initialize fills libtorch.so's copy. So
# FBGEMM sees no AVX2 and runs its scalar reference kernels
# (rowwise_sparse_adagrad_ref, EmbeddingSpMDM_ref: seen with perf). Putting
# libtorch.so in the global scope BEFORE fbgemm.so loads binds FBGEMM to the
# filled copy, so it runs its AVX2 JIT kernels as on a working install. The
# exact op's update loop is plain C++ and is not affected. Set
# MTCS_FBGEMM_AS_INSTALLED=1 to skip this and time FBGEMM as pip installs it.
ISA_FIX_ENV = "MTCS_FBGEMM_AS_INSTALLED"
_ISA = {}


def _isa_fix(torch):
    import ctypes
    import os
    if os.environ.get(ISA_FIX_ENV) or "fbgemm_gpu" in sys.modules:
        return False
    lib = os.path.join(os.path.dirname(torch.__file__), "lib", "libtorch.so")
    try:
        ctypes.CDLL(lib, mode=os.RTLD_NOLOAD | os.RTLD_GLOBAL)
    except OSError:
        return False
    return True


def fbgemm_isa():
    """What FBGEMM's own ISA check says after _load(): 'avx512', 'avx2', 'none
    (scalar reference kernels)' or 'unknown'; plus whether the cpuinfo binding
    fix above was applied. Also in every peer's `isa` attribute."""
    return dict(_ISA)


def _probe_isa():
    import ctypes
    import os
    try:
        import fbgemm_gpu
        so = ctypes.CDLL(os.path.join(os.path.dirname(fbgemm_gpu.__file__), "fbgemm.so"),
                         mode=os.RTLD_NOLOAD)
        so.cpuinfo_initialize()  # what FBGEMM's generators call first (its own binding)
        has = {}
        for isa, sym in (("avx512", "_ZN6fbgemm22fbgemmHasAvx512SupportEv"),
                         ("avx2", "_ZN6fbgemm20fbgemmHasAvx2SupportEv")):
            f = getattr(so, sym)
            f.restype = ctypes.c_bool
            has[isa] = bool(f())
        return "avx512" if has["avx512"] else "avx2" if has["avx2"] else \
            "none (scalar reference kernels)"
    except (OSError, AttributeError):
        return "unknown"


def _load():
    """Import torch and register FBGEMM's ops; ImportError with the reason."""
    try:
        import torch
    except Exception as e:  # noqa: BLE001 - any import failure means no peer
        raise ImportError(f"torch does not import: {e}") from e
    first = "fbgemm_gpu" not in sys.modules
    fixed = _isa_fix(torch) if first else None
    try:
        import fbgemm_gpu  # noqa: F401 - registers torch.ops.fbgemm.*
    except Exception as e:  # noqa: BLE001
        raise ImportError(f"fbgemm_gpu does not import with torch {torch.__version__}: {e}") from e
    if first or not _ISA:
        _ISA.update(isa=_probe_isa(), cpuinfo_fix=bool(fixed))
        if _ISA["isa"].startswith("none") and "avx2" in _cpu_flags():
            print(f"peers_fbgemm: WARNING: FBGEMM sees no AVX2 on a CPU that has it "
                  f"(cpuinfo binding fix {'applied' if fixed else 'not applied'}): it runs "
                  f"its scalar reference kernels", file=sys.stderr)
    return torch


def _cpu_flags():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("flags"):
                    return set(line.split(":", 1)[1].split())
    except OSError:
        pass
    return set()


def fbgemm_version():
    """fbgemm-gpu-cpu's version string, or None when it is not installed."""
    try:
        from importlib import metadata
        return metadata.version("fbgemm-gpu-cpu")
    except Exception:  # noqa: BLE001
        return None


class _FbgemmPeer:
    name = "fbgemm"
    same_math = True
    dtypes = ("f32",)
    op_name = ""

    def __init__(self, cfg, data):
        torch = _load()
        self._torch = torch
        self.isa = fbgemm_isa()
        if cfg.get("dtype", "f32") != "f32":
            raise ValueError(f"{self.name}: dtype {cfg.get('dtype')} not supported (FBGEMM's CPU "
                             "backward dispatches float and half weights only)")
        torch.set_num_threads(int(cfg["threads"]))
        n, D = int(cfg["n"]), int(cfg.get("dim", 1))
        if D < 1 or n % D:
            raise ValueError(f"{self.name}: n={n} is not a whole number of rows of dim={D}")
        rows = n // D
        if rows >= (1 << 31) - 1:
            raise ValueError(f"{self.name}: {rows} rows: FBGEMM's CPU backward takes < 2^31 rows")
        idx = np.ascontiguousarray(data["idx"], dtype=np.int64)
        nnz = idx.shape[0]
        vals = np.asarray(data["vals"], dtype=np.float32)
        if vals.size != nnz * D:
            raise ValueError(f"{self.name}: vals has {vals.size} values, expected "
                             f"nnz*dim = {nnz * D}")
        if nnz and (idx.min() < 0 or idx.max() >= rows):
            raise ValueError(f"{self.name}: idx out of range [0, {rows})")
        self.n, self.D, self.rows, self.nnz = n, D, rows, nnz
        self.lr, self.eps = float(cfg.get("lr", 0.01)), float(cfg.get("eps", 1e-10))
        f32, i64, i32 = torch.float32, torch.int64, torch.int32
        # the table: weights and state in our own storage (copies)
        self.weights = torch.from_numpy(np.array(data["param"], dtype=np.float32, copy=True))
        self.momentum = self._initial_state(torch, np.asarray(data["state"], dtype=np.float32))
        # one table (T = 1) of `rows` rows, all on the host
        self.placements = torch.zeros(1, dtype=i32)  # PlacementType.DEVICE=0 (unused on CPU)
        self.w_offsets = torch.zeros(1, dtype=i64)
        self.D_offsets = torch.tensor([0, D], dtype=i32)
        self.hash_size_cumsum = torch.tensor([0, rows], dtype=i64)
        self.total_hash_size_bits = max(1, int(math.log2(rows)) + 1)
        # one bag per gradient row
        self.indices = torch.from_numpy(idx.copy())
        self.offsets = torch.arange(nnz + 1, dtype=i64)
        self.grad_output = torch.from_numpy(vals.reshape(nnz, D).copy())
        self.indice_weights = torch.empty(0, dtype=f32)  # none: data() is null
        self.m_placements = torch.zeros(1, dtype=i32)
        self.m_offsets = torch.zeros(1, dtype=i64)
        self.lr_tensor = torch.tensor(self.lr, dtype=f32)
        self.op = getattr(torch.ops.fbgemm, self.op_name)
        self._pos, self._kw = self._build_args()
        self._call = self.op.default

    def _initial_state(self, torch, state):
        return torch.from_numpy(state.copy())

    def _build_args(self):
        """The op's arguments matched to its schema by name, checked here so a
        renamed argument fails loudly in __init__, not at the first step. They
        are passed positionally to the op's overload (about 12 us a call where
        keywords cost 19: the least per-call overhead FBGEMM can be given);
        after the first argument left at its default, the rest go by keyword."""
        have = dict(
          grad_output=self.grad_output, host_weights=self.weights,
          weights_placements=self.placements, weights_offsets=self.w_offsets,
          D_offsets=self.D_offsets, max_D=self.D, hash_size_cumsum=self.hash_size_cumsum,
          total_hash_size_bits=self.total_hash_size_bits, indices=self.indices,
          offsets=self.offsets, pooling_mode=_POOLING_SUM, indice_weights=self.indice_weights,
          stochastic_rounding=False, momentum1_host=self.momentum,
          momentum1_placements=self.m_placements, momentum1_offsets=self.m_offsets,
          learning_rate_tensor=self.lr_tensor, learning_rate=self.lr, eps=self.eps,
          weight_decay=0.0, weight_decay_mode=0, max_norm=0.0)
        schema = self.op.default._schema
        pos, kw, by_keyword = [], {}, False
        for a in schema.arguments:
            if a.name in have:
                if by_keyword:
                    kw[a.name] = have[a.name]
                else:
                    pos.append(have[a.name])
            elif a.has_default_value():
                by_keyword = True
            else:
                raise RuntimeError(f"{self.name}: {self.op_name} wants argument '{a.name}' "
                                   f"that this peer does not know how to fill "
                                   f"(schema: {schema})")
        return pos, kw

    def step(self):
        self._call(*self._pos, **self._kw)

    def result(self):
        return (self.weights.numpy().copy(), self.momentum.numpy().copy())


class FbgemmExact(_FbgemmPeer):
    """FBGEMM's exact (per-element state) sparse Adagrad: ADA-2's update.
    result() returns (param (n,), state (n,))."""
    name = "fbgemm_exact"
    same_math = True
    op_name = "split_embedding_backward_codegen_adagrad_cpu"
    tolerance = EXACT_TOL
    tolerance_reason = EXACT_TOL_REASON

    def reference(self, param, state):
        """ADA-2 applied once to (param, state) as result() returned them, with
        this peer's gradient (what one step must match within `tolerance`; mtcs's
        C sparse step is this formula)."""
        return exact_reference(param, state, self.indices.numpy(), self.grad_output.numpy(),
                               self.D, self.lr, self.eps)


class FbgemmRowwise(_FbgemmPeer):
    """FBGEMM's rowwise Adagrad: one state value per row (a different update).

    result() returns (param (n,), state (rows,)): the per-row state AS IS, not
    expanded. Its initial per-row state is data["state"][r*D] (the first element
    of each row; duel.py fills the state uniformly, so that is the fill value).
    """
    name = "fbgemm_rowwise"
    same_math = False
    op_name = "split_embedding_backward_codegen_rowwise_adagrad_cpu"
    tolerance = ROWWISE_TOL
    tolerance_reason = ROWWISE_TOL_REASON

    def _initial_state(self, torch, state):
        return torch.from_numpy(row_state(state, self.D))

    def reference(self, param, state):
        """This peer's own formula applied once to (param (n,), state (rows,)) as
        result() returned them before a step, with this peer's gradient; duel.py
        checks result() after one step against it (same_math False)."""
        return rowwise_reference(param, state, self.indices.numpy(), self.grad_output.numpy(),
                                 self.D, self.lr, self.eps)


PEERS = {cls.name: cls for cls in (FbgemmExact, FbgemmRowwise)}


def row_state(state, D):
    """The rowwise peer's initial state: the first element of each row (a copy:
    for D = 1 the column slice would be the caller's own memory)."""
    return np.asarray(state, dtype=np.float32).reshape(-1, D)[:, 0].copy()


def exact_reference(param, state, idx, vals, D, lr, eps):
    """ADA-2 (mtcs's reference op, impl/cpu/optim.c) in numpy float32:
    s' = s + g*g; std = sqrt(s') + eps; p' = p + (-lr) * (g / std), every op
    rounded to f32 (cstep.ada2_rows on float32 copies). Returns new (param, state)."""
    f = np.float32
    p = np.array(param, dtype=f).reshape(-1, D)
    s = np.array(state, dtype=f).reshape(-1, D)
    cstep.ada2_rows(p, s, idx, np.asarray(vals, dtype=f).reshape(-1, D), lr, eps)
    return p.reshape(-1), s.reshape(-1)


def exact_fbgemm_order(param, state, idx, vals, D, lr, eps):
    """What FBGEMM's exact CPU kernel computes (the template's
    split_weight_update_cpu for adagrad, as compiled in the wheel):
      momentum += grad * grad          contracted into ONE rounding (an fma)
      w -= lr * g / (sqrt(momentum) + eps)
           lr * g in float; sqrt() is C's double sqrt, so the sum with eps, the
           division and the subtraction run in double, rounded to float once
           at the store.
    The self-test checks FBGEMM against this bit for bit, to show the
    difference from ADA-2 is rounding order and nothing else."""
    f, d = np.float32, np.float64
    p = np.array(param, dtype=f).reshape(-1, D)
    s = np.array(state, dtype=f).reshape(-1, D)
    g = np.asarray(vals, dtype=f).reshape(-1, D)
    # fma(g, g, s): the product of two floats is exact in double; one rounding
    # of the sum to double then to float (a double-rounding tie would differ from
    # a true fma: none occurred in the self-test).
    sr = (g.astype(d) * g.astype(d) + s[idx].astype(d)).astype(f)
    lrg = (f(lr) * g).astype(d)
    p[idx] = (p[idx].astype(d) - lrg / (np.sqrt(sr.astype(d)) + d(f(eps)))).astype(f)
    s[idx] = sr
    return p.reshape(-1), s.reshape(-1)


def rowwise_reference(param, state_rows, idx, vals, D, lr, eps):
    """FBGEMM's rowwise Adagrad (src/RefImplementations.cc
    rowwise_sparse_adagrad_ref with weight_decay 0) in numpy float32: the
    squares summed in 8 lanes (lane j % 8), the lanes combined
    ((0+1)+(2+3))+((4+5)+(6+7)), divided by D; h' = h + that;
    step = (-lr) / (sqrt(h') + eps); w' = w + g * step. Every op rounded to f32
    (no fma: the JIT kernel matched this bit for bit in the self-test)."""
    f = np.float32
    p = np.array(param, dtype=f).reshape(-1, D)
    h = np.array(state_rows, dtype=f).reshape(-1)
    g = np.asarray(vals, dtype=f).reshape(-1, D)
    lanes = np.zeros((g.shape[0], 8), dtype=f)
    for j in range(D):
        lanes[:, j % 8] = lanes[:, j % 8] + g[:, j] * g[:, j]
    total = ((lanes[:, 0] + lanes[:, 1]) + (lanes[:, 2] + lanes[:, 3])) + \
            ((lanes[:, 4] + lanes[:, 5]) + (lanes[:, 6] + lanes[:, 7]))
    hr = h[idx] + total / f(D)
    step = f(-lr) / (np.sqrt(hr) + f(eps))
    h[idx] = hr
    p[idx] = p[idx] + g * step[:, None]
    return p.reshape(-1), h


def max_rel(a, b):
    """max over elements of |a - b| / |b| (|b| floored at the smallest normal)."""
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    den = np.maximum(np.abs(b), np.finfo(np.float32).tiny)
    return float(np.max(np.abs(a - b) / den)) if a.size else 0.0


def same_bits(a, b):
    return bool(np.array_equal(np.asarray(a, np.float32).view(np.uint32),
                               np.asarray(b, np.float32).view(np.uint32)))


def make_data(n, D, density, seed, threads=1):
    """A duel-like problem: param with |p| in [0.5, 1.5) (random sign: no
    cancellation near 0), state 0.1 + U[0, 1), round(rows * density%) distinct
    sorted rows, values N(0, 1) with no zero."""
    rng = np.random.default_rng(seed)
    rows = n // D
    nnz = max(1, int(round(rows * density / 100.0)))
    idx = np.sort(rng.choice(rows, size=nnz, replace=False)).astype(np.int64)
    vals = rng.standard_normal(nnz * D).astype(np.float32)
    vals[vals == 0] = 1.0
    sign = np.where(rng.random(n) < 0.5, -1.0, 1.0)
    param = (sign * (0.5 + rng.random(n))).astype(np.float32)
    state = (0.1 + rng.random(n)).astype(np.float32)
    cfg = dict(n=n, dim=D, rows=rows, density=density, nnz=nnz, dtype="f32", threads=threads,
               lr=0.01, eps=1e-10)
    return cfg, dict(param=param, state=state, idx=idx, vals=vals)


def _run_case(peer_cls, cfg, data, steps):
    """`steps` peer steps against the references (state carried over); returns
    a result row (dict)."""
    D, lr, eps, idx, vals = cfg["dim"], cfg["lr"], cfg["eps"], data["idx"], data["vals"]
    peer = peer_cls(cfg, data)
    if peer_cls is FbgemmExact:
        def ref(p, s, k): return exact_reference(p, s, idx, vals, D, k * lr, eps)
        def model(p, s): return exact_fbgemm_order(p, s, idx, vals, D, lr, eps)
        s0 = data["state"]
    else:
        def ref(p, s, k): return rowwise_reference(p, s, idx, vals, D, k * lr, eps)
        model = None
        s0 = row_state(data["state"], D)
    good, bad, mod = (data["param"], s0), (data["param"], s0), (data["param"], s0)
    for _ in range(steps):
        peer.step()
        good = ref(*good, 1)
        bad = ref(*bad, 2)  # the mutation: lr doubled
        if model:
            mod = model(*mod)
    p, s = peer.result()
    row = dict(peer=peer_cls.name, D=D, density=cfg["density"], nnz=cfg["nnz"],
               threads=cfg["threads"], rel_p=max_rel(p, good[0]), rel_s=max_rel(s, good[1]),
               bits=same_bits(p, good[0]) and same_bits(s, good[1]),
               differ=int(np.count_nonzero(p != good[0]) + np.count_nonzero(s != good[1])),
               rel_bad=max(max_rel(p, bad[0]), max_rel(s, bad[1])),
               model_bits=(same_bits(p, mod[0]) and same_bits(s, mod[1])) if model else None)
    row["ok"] = row["rel_p"] <= peer_cls.tolerance and row["rel_s"] <= peer_cls.tolerance
    row["caught"] = row["rel_bad"] > peer_cls.tolerance
    return row


def self_test(n, seed, steps):
    """Both peers against numpy references; returns the exit status."""
    import os
    try:
        torch = _load()
    except ImportError as e:
        print(f"peers_fbgemm: FBGEMM peer unavailable: {e}", file=sys.stderr)
        return 2
    ncpu = os.cpu_count() or 1
    print(f"peers_fbgemm self-test: torch {torch.__version__}, fbgemm-gpu-cpu "
          f"{fbgemm_version()}, n={n}, {steps} steps per case (state carried over), "
          f"lr 0.01, eps 1e-10")
    isa = fbgemm_isa()
    print(f"  FBGEMM's ISA check: {isa['isa']} (cpuinfo binding fix "
          f"{'applied' if isa['cpuinfo_fix'] else 'not applied'}; {ISA_FIX_ENV}=1 skips it)")
    for cls in PEERS.values():
        print(f"  {getattr(torch.ops.fbgemm, cls.op_name).default._schema}")
    cases = [(D, dens, 1) for D in (1, 16, 64, 256) for dens in (1, 10, 100)]
    if ncpu > 1:  # the parallel code paths (rowwise's parallel_for, csr2csc)
        cases += [(D, 10, ncpu) for D in (1, 64)]
    rows = []
    for D, dens, threads in cases:
        for cls in PEERS.values():
            cfg, data = make_data(n, D, dens, seed + 1000 * D + dens, threads)
            rows.append(_run_case(cls, cfg, data, steps))
    print(f"  {'peer':15s} {'D':>4s} {'dens%':>5s} {'thr':>3s} {'nnz':>6s} {'param rel':>9s} "
          f"{'state rel':>9s} {'bit-exact':>9s} {'#differ':>7s} {'lr*2 rel':>8s}  result")
    failures = []
    for r in rows:
        tag = "ok" if r["ok"] else "MISMATCH"
        if not r["caught"]:
            tag += ", MUTATION NOT CAUGHT"
        if r["model_bits"] is not None:
            tag += "; = FBGEMM-order model bit for bit" if r["model_bits"] else \
                "; differs from the FBGEMM-order model"
        print(f"  {r['peer']:15s} {r['D']:4d} {r['density']:5d} {r['threads']:3d} {r['nnz']:6d} "
              f"{r['rel_p']:9.3g} {r['rel_s']:9.3g} {'yes' if r['bits'] else 'no':>9s} "
              f"{r['differ']:7d} {r['rel_bad']:8.3g}  {tag}")
        where = f"{r['peer']} D={r['D']} density={r['density']}% threads={r['threads']}"
        tol = PEERS[r["peer"]].tolerance
        if not r["ok"]:
            failures.append(f"{where}: max rel param {r['rel_p']:.3g} state {r['rel_s']:.3g} "
                            f"> tolerance {tol:g}")
        if not r["caught"]:
            failures.append(f"{where}: the lr-doubled reference passed (rel {r['rel_bad']:.3g} "
                            f"<= {tol:g}): the check cannot fail")
    print("  max relative difference per D (over densities and threads):")
    for name, cls in PEERS.items():
        for D in (1, 16, 64, 256):
            sel = [r for r in rows if r["peer"] == name and r["D"] == D]
            rp, rs = max(r["rel_p"] for r in sel), max(r["rel_s"] for r in sel)
            bits = all(r["bits"] for r in sel)
            what = "ADA-2" if name == "fbgemm_exact" else "its own formula"
            print(f"    {name:15s} D={D:<4d} param {rp:.3g}  state {rs:.3g}  vs {what}: "
                  f"{'bit-exact' if bits else f'within {cls.tolerance:g}'}")
    if failures:
        for f in failures:
            print(f"FAIL {f}", file=sys.stderr)
        return 1
    print("peers_fbgemm self-test: PASS (every case within tolerance; the lr-doubled "
          "reference was caught in every case)")
    return 0


def time_steps(n, density, dims, threads, reps, seed):
    """Rough single-step times (median of `reps` steps after a warm-up step)."""
    import statistics
    import time
    try:
        _load()
    except ImportError as e:
        print(f"peers_fbgemm: FBGEMM peer unavailable: {e}", file=sys.stderr)
        return 2
    for D in dims:
        cfg, data = make_data(n, D, density, seed, threads)
        for cls in PEERS.values():
            print(f"peers_fbgemm: timing {cls.name} n={n} D={D} {density}% ...", file=sys.stderr)
            peer = cls(cfg, data)
            peer.step()
            ts = []
            for _ in range(reps):
                t0 = time.perf_counter_ns()
                peer.step()
                ts.append(time.perf_counter_ns() - t0)
            print(f"{cls.name:15s} n={n} D={D:<3d} density={density}% nnz={cfg['nnz']} "
                  f"threads={threads}: median {statistics.median(ts) / 1e6:.3f} ms "
                  f"(min {min(ts) / 1e6:.3f}, max {max(ts) / 1e6:.3f}, {reps} steps)")
    return 0


def main(argv=None):
    ap = argparse.ArgumentParser(
      description="FBGEMM sparse Adagrad peers for perf/duel.py (fbgemm_exact: ADA-2's "
                  "update through FBGEMM's TBE backward, one bag per gradient row; "
                  "fbgemm_rowwise: FBGEMM's rowwise Adagrad, a different update). Run with "
                  "the FBGEMM venv: .venv-fbgemm/bin/python perf/peers_fbgemm.py --self-test",
      epilog="--self-test compares both peers with numpy float32 references for D in "
             "1, 16, 64, 256 and densities 1, 10, 100 %% (and D 1, 64 at 10 %% with all "
             "cores), and checks that a reference with lr doubled is rejected (so the "
             "comparison can fail). --time prints rough single-step times (not a "
             "benchmark: perf/duel.py times the duels). Exit 0 pass, 1 fail, 2 FBGEMM "
             "unavailable.")
    mode = ap.add_mutually_exclusive_group(required=True)
    mode.add_argument("--self-test", action="store_true", help="run the correctness self-test")
    mode.add_argument("--time", action="store_true", help="rough single-step timings")
    ap.add_argument("--n", type=int, default=None,
                    help="parameter elements (a multiple of 256; self-test default 65536, "
                         "--time default 16777216)")
    ap.add_argument("--steps", type=int, default=2,
                    help="self-test: steps per case, state carried over (default 2)")
    ap.add_argument("--density", type=float, default=1.0, help="--time: percent (default 1)")
    ap.add_argument("--dims", default="1,64", help="--time: comma list of D (default 1,64)")
    ap.add_argument("--threads", type=int, default=1, help="--time: threads (default 1)")
    ap.add_argument("--reps", type=int, default=5, help="--time: timed steps (default 5)")
    ap.add_argument("--seed", type=int, default=15)
    a = ap.parse_args(argv)
    n = a.n if a.n is not None else (1 << 16 if a.self_test else 1 << 24)
    if n < 256 or n % 256:
        ap.error(f"--n {n}: must be a positive multiple of 256 (whole rows of D=256)")
    if a.self_test:
        if a.steps < 1:
            ap.error("--steps must be >= 1")
        return self_test(n, a.seed, a.steps)
    try:
        dims = [int(x) for x in a.dims.split(",")]
    except ValueError:
        ap.error(f"--dims {a.dims!r}: not a comma list of integers")
    if any(d < 1 or n % d for d in dims):
        ap.error(f"--dims {a.dims}: each D must be >= 1 and divide n={n}")
    return time_steps(n, a.density, dims, a.threads, a.reps, a.seed)


if __name__ == "__main__":
    sys.exit(main())
else:
    # Imported as a module (duel.py): load FBGEMM now, so an ImportError naming
    # why (e.g. "fbgemm_gpu does not import with torch 2.15.0: ...") reports
    # the peers unavailable at import instead of failing the first duel.
    _load()

#!/usr/bin/env python3
"""torch_peers.py - time torch's own Adagrad paths on the mtcs benchmark matrix.

Writes Google Benchmark-compatible JSON (the `context` + `benchmarks[]` shape
of perf/mtcs_bench), so reports/render.py reads both files the same way.
Names follow the C harness scheme with impl:torch_<peer>:

  adagrad/impl:torch_fused/path:dense/dev:cpu1/dtype:f32/n:1048576/density:100/cache:warm

Peers (DESIGN.md "Performance method": torch runs in the same job, same sizes):
  torch_default   torch.optim.Adagrad() as a user gets it (on CPU: the
                  single-tensor for-loop path; the context records which)
  torch_foreach   foreach=True                                 path:dense
  torch_fused     fused=True                                   path:dense
  torch_sparse    the sparse-gradient (_make_sparse) path      path:sparse_coo,
                  and with a hybrid rows x 64 grad             path:hybrid_coo,
                  and with an UNCOALESCED grad (the same       path:sparse_coo_dup
                  elements, DUP_COPIES entries each, shuffled): torch coalesces
                  it inside every step (`grad = grad.coalesce()` in
                  _single_tensor_adagrad), on CPU and on CUDA
  torch_masked    the MaskedTensor tutorial's four lines       path:masked_sparse
                  (very slow: n <= 1M only, and densities <= 1% in full mode;
                  the rest are emitted as skipped rows)

and, on the same sparse configurations and grads, the other optimizers with
sparse gradients (issue 11), as impl:torch_sparse rows of their own family:

  sparse_adam/impl:torch_sparse/path:<sparse_coo|hybrid_coo>/...
                  torch.optim.SparseAdam (lr 1e-3, betas (0.9, 0.999), eps 1e-8)
  sgd/...         torch.optim.SGD(lr=0.01), no momentum
  sgd_momentum/...  torch.optim.SGD(lr=0.01, momentum=0.9): the steady-state
                  step (the sparse momentum buffer exists from the warmup step
                  on; torch merges it with each grad, so its nnz stays the
                  grad's)

The matrix follows perf/adagrad_cases.c: a 1-D parameter of n elements; a COO
grad has nnz uniformly random distinct positions (1 sparse dim; nnz taken from
the C run's counter when --c-json has it, else round(n*density%)), coalesced; an
uncoalesced grad has the COO grad's positions, DUP_COPIES entries at each with
values of their own, in a fixed random order (torch.sparse_coo_tensor without
coalesce: is_coalesced() is False); a hybrid grad views the parameter as
[n/64, 64] and has round(rows*density%) random rows of 64 values. Only the optimizer step is timed:
the grad is assigned and the state preset before the clock starts, warm cache.
Dense peers are timed once per (dev, dtype, n) and reported at density:100
(a dense step does the same work at every density).

Before timing, a one-step sanity check against the Adagrad formula and a
cross-check of all paths on the same inputs; a failure aborts (exit 1).

usage: torch_peers.py [--quick] [--out F] [--c-json F] [--threads N] [--min-time S]
"""
import argparse
import datetime
import json
import os
import platform
import re
import resource
import socket
import sys
import tempfile
import time
import warnings

QUICK = dict(n=(1 << 20,), density=(0.1, 1, 10, 100), dtype=("f32",), min_time=0.2)
FULL = dict(n=(1 << 20, 1 << 24, 1 << 26), density=(0.01, 0.1, 1, 10, 30, 50, 100),
            dtype=("f32", "f64"), min_time=1.0)
COLS = 64                   # hybrid grads: the param viewed as [n/64, 64], rows x 64
DUP_COPIES = 2              # uncoalesced grads: entries per element (BC_DUP_COPIES)
DUP_MAX_DEFAULT_PCT = 10.0  # without --c-json, full mode: their densities (as mtcs_bench's)
MASKED_MAX_N = 1 << 20      # the MaskedTensor path takes seconds per step beyond this
MASKED_MAX_DENSITY_FULL = 1.0
LR, EPS, ACC0 = 0.01, 1e-10, 0.1
# SparseAdam and SGD as perf/adagrad_cases.h runs them (BC_ADAM_*, BC_SGD_*)
ADAM_LR, ADAM_BETAS, ADAM_EPS = 1e-3, (0.9, 0.999), 1e-8
SGD_LR, SGD_MOMENTUM = 0.01, 0.9
SPARSE_OPTS = ("sparse_adam", "sgd", "sgd_momentum")
SIZEOF = {"f32": 4, "f64": 8}


def log(msg):
    print(f"torch_peers: {msg}", file=sys.stderr, flush=True)


def fmt_density(d):
    return f"{d:g}"


def bench_name(impl, path, dev, dtype, n, density, family="adagrad"):
    return (f"{family}/impl:{impl}/path:{path}/dev:{dev}/dtype:{dtype}/n:{n}"
            f"/density:{fmt_density(density)}/cache:warm")


def parse_name(name):
    """'adagrad/impl:c/path:dense/...' -> ('adagrad', {'impl': 'c', ...})."""
    parts = name.split("/")
    kv = {}
    for seg in parts[1:]:
        k, sep, v = seg.partition(":")
        if sep:
            kv[k] = v
    return parts[0], kv


# ---- the matrix ------------------------------------------------------------------

def c_matrix(path):
    """The configurations of the C run, and its byte model / nnz per config."""
    try:
        with open(path) as f:
            doc = json.load(f)
        benches = doc["benchmarks"]
    except (OSError, ValueError, KeyError, TypeError) as e:
        sys.exit(f"torch_peers: {path}: cannot read the C benchmark JSON: {e}")
    configs, model = set(), {}
    cuda, cuda_sparse, cuda_dup = set(), set(), set()
    for b in benches:
        if not isinstance(b, dict) or not isinstance(b.get("name"), str):
            continue
        if b.get("run_type", "iteration") != "iteration":
            continue
        fam, kv = parse_name(b["name"])
        if fam not in ("adagrad",) + SPARSE_OPTS or kv.get("impl") != "c":
            continue
        try:
            n, density, dev, dtype = int(kv["n"]), float(kv["density"]), kv["dev"], kv["dtype"]
        except (KeyError, ValueError):
            continue
        if dtype not in SIZEOF:
            continue
        if dev == "cuda":
            cuda.add((dtype, n))
            if fam == "adagrad" and kv.get("path") == "sparse_coo":
                cuda_sparse.add((dtype, n, density))
            if fam == "adagrad" and kv.get("path") == "sparse_coo_dup":
                cuda_dup.add((dtype, n, density))
        elif re.fullmatch(r"cpu\d+", dev) and kv.get("cache", "warm") == "warm":
            configs.add((dev, dtype, n, density))
        key = (kv.get("path"), dev, dtype, n, density) if fam == "adagrad" else \
            (fam, kv.get("path"), dev, dtype, n, density)
        info = {}
        for c in ("model_bytes", "nnz"):
            if isinstance(b.get(c), (int, float)):
                info[c] = b[c]
        if info:
            model[key] = info
    return configs, model, cuda, cuda_sparse, cuda_dup


def default_matrix(mode, threads):
    devs = ("cpu1", f"cpu{threads}") if threads > 1 else ("cpu1",)
    return {(dev, dt, n, d) for dev in devs for dt in mode["dtype"]
            for n in mode["n"] for d in mode["density"]}


# ---- the steps ---------------------------------------------------------------

class Problem:
    """param, dense grad, COO grad, hybrid grad for one (dtype, n, density)."""

    def __init__(self, torch, dtype, n, density, device="cpu", nnz=None, seed=0):
        self.torch, self.n, self.density = torch, n, density
        g = torch.Generator().manual_seed(seed)
        self.dt = {"f32": torch.float32, "f64": torch.float64}[dtype]
        self.rows = max(1, n // COLS)
        self.shape = (n,)
        self.shape2 = (self.rows, COLS)  # hybrid
        self.device = device
        self.param0 = torch.rand(self.shape, generator=g, dtype=self.dt).to(device)
        self._g = g
        self.nnz = int(nnz) if nnz else max(1, round(n * density / 100.0))
        self.nnz = min(self.nnz, n)
        self._coo = self._hyb = self._dup = None

    def dense_grad(self):
        t = self.torch
        return (t.rand(self.shape, generator=self._g, dtype=self.dt) + 0.5).to(self.device)

    def coo_grad(self):
        if self._coo is None:
            t = self.torch
            if self.nnz == self.n:
                flat = t.arange(self.n)
            else:
                flat = t.randperm(self.n, generator=self._g)[: self.nnz].sort().values
            idx = flat.unsqueeze(0)
            vals = t.rand(self.nnz, generator=self._g, dtype=self.dt) + 0.5  # no zeros
            self._coo = t.sparse_coo_tensor(idx, vals, self.shape).coalesce().to(self.device)
        return self._coo

    def dup_grad(self):
        """The COO grad's elements, DUP_COPIES entries each with values of their own
        (no zeros), shuffled: an uncoalesced grad, as an embedding backward makes."""
        if self._dup is None:
            t = self.torch
            flat = self.coo_grad()._indices()[0].cpu().repeat_interleave(DUP_COPIES)
            order = t.randperm(flat.numel(), generator=self._g)
            vals = t.rand(flat.numel(), generator=self._g, dtype=self.dt) + 0.5
            g = t.sparse_coo_tensor(flat[order].unsqueeze(0), vals, self.shape,
                                    check_invariants=False)
            self._dup = g.to(self.device)
        return self._dup

    def hybrid_grad(self):
        if self._hyb is None:
            t = self.torch
            nrows = min(self.rows, max(1, round(self.rows * self.density / 100.0)))
            r = t.randperm(self.rows, generator=self._g)[:nrows].sort().values.unsqueeze(0)
            vals = t.rand((nrows, COLS), generator=self._g, dtype=self.dt) + 0.5
            self._hyb = t.sparse_coo_tensor(r, vals, self.shape2).coalesce().to(self.device)
        return self._hyb


def optim_grad_kept(torch, prob):
    """p.grad stays the uncoalesced tensor across steps (torch coalesces a copy), so
    every timed step pays the coalesce."""
    g = prob.dup_grad()
    p = prob.param0.clone()
    p.grad = g
    opt = torch.optim.Adagrad([p], lr=LR, eps=EPS, initial_accumulator_value=ACC0)
    opt.step()
    opt.step()
    return p.grad is g and not p.grad.is_coalesced()


def optim_step(torch, prob, grad, **kw):
    """A torch.optim.Adagrad step closure with the grad assigned and state preset."""
    p = prob.param0.clone().reshape(grad.shape)
    p.grad = grad
    opt = torch.optim.Adagrad([p], lr=LR, eps=EPS, initial_accumulator_value=ACC0, **kw)
    return opt.step, (lambda: (p.detach(), opt.state[p]["sum"]))


def sparse_opt_step(torch, prob, grad, opt):
    """A torch.optim.SparseAdam / SGD step closure with the grad assigned."""
    p = prob.param0.clone().reshape(grad.shape)
    p.grad = grad
    if opt == "sparse_adam":
        o = torch.optim.SparseAdam([p], lr=ADAM_LR, betas=ADAM_BETAS, eps=ADAM_EPS)
    elif opt == "sgd":
        o = torch.optim.SGD([p], lr=SGD_LR)
    else:
        o = torch.optim.SGD([p], lr=SGD_LR, momentum=SGD_MOMENTUM)
    return o.step, (lambda: (p.detach(), o.state[p]))


def masked_step(torch, prob, grad):
    """The MaskedTensor tutorial's Adagrad lines, applied once per step. The mask
    and masked grad are built from the COO grad outside the timed step (grad
    preparation, like assigning p.grad)."""
    from torch.masked import masked_tensor
    st = {"param": prob.param0.clone(),
          "sum": torch.full(prob.shape, ACC0, dtype=prob.dt, device=prob.device),
          "step": 0}
    mask = (grad.to_dense() != 0).to_sparse()
    masked_grad = masked_tensor(grad, mask)

    def step():
        st["step"] += 1
        clr = LR  # lr_decay = 0
        state_sum2 = st["sum"] + masked_grad.pow(2).get_data()
        std2 = masked_tensor(state_sum2.to_sparse(), mask)
        std2 = std2.sqrt().add(EPS)
        st["param"] = st["param"].add((masked_grad / std2).get_data(), alpha=-clr)
        st["sum"] = state_sum2

    def result():
        p = st["param"]
        return (p.to_dense() if p.is_sparse else p), st["sum"]
    return step, result


# ---- correctness first ---------------------------------------------------------

def check_correctness(torch, fused_ok):
    """One step of every peer on small inputs: the formula, then each other."""
    failures = []

    def close(what, got, want, dt):
        rtol = 1e-5 if dt == torch.float32 else 1e-12
        got = got.to_dense() if got.is_sparse else got
        if not torch.allclose(got.cpu(), want.cpu(), rtol=rtol, atol=rtol * 1e-3):
            err = (got.cpu() - want.cpu()).abs().max().item()
            failures.append(f"{what}: max abs difference {err:g} (rtol {rtol:g})")

    for dtype in ("f32", "f64"):
        prob = Problem(torch, dtype, 64 * 64, 10.0, seed=7)  # 10%: 410 nnz, 6 rows
        dt = prob.dt
        coo = prob.coo_grad()
        dense_of_coo = coo.to_dense()
        # the formula: sum += g^2; param -= lr * g / (sqrt(sum) + eps); zero g: no change
        s = torch.full(prob.shape, ACC0, dtype=dt) + dense_of_coo * dense_of_coo
        want_p = prob.param0 - LR * dense_of_coo / (s.sqrt() + EPS)
        peers = [("torch_default", {}), ("torch_foreach", {"foreach": True})]
        if fused_ok:
            peers.append(("torch_fused", {"fused": True}))
        for name, kw in peers:
            step, res = optim_step(torch, prob, dense_of_coo.clone(), **kw)
            step()
            p, ssum = res()
            close(f"{name} dense {dtype} param vs formula", p, want_p, dt)
            close(f"{name} dense {dtype} state_sum vs formula", ssum, s, dt)
        step, res = optim_step(torch, prob, coo)
        step()
        p, ssum = res()
        close(f"torch_sparse sparse_coo {dtype} param vs formula", p, want_p, dt)
        close(f"torch_sparse sparse_coo {dtype} state_sum vs formula", ssum, s, dt)
        # the uncoalesced grad: torch coalesces it inside the step (duplicates summed)
        dup = prob.dup_grad()
        if dup.is_coalesced() or dup._nnz() != DUP_COPIES * coo._nnz():
            failures.append(f"sparse_coo_dup {dtype}: the grad is coalesced "
                            f"({dup.is_coalesced()}) or has {dup._nnz()} entries, not "
                            f"{DUP_COPIES} x {coo._nnz()}")
        gd = dup.to_dense()  # duplicates summed
        s_dup = torch.full(prob.shape, ACC0, dtype=dt) + gd * gd
        want_dup = prob.param0 - LR * gd / (s_dup.sqrt() + EPS)
        step, res = optim_step(torch, prob, dup)
        step()
        p, ssum = res()
        close(f"torch_sparse sparse_coo_dup {dtype} param vs formula", p, want_dup, dt)
        close(f"torch_sparse sparse_coo_dup {dtype} state_sum vs formula", ssum, s_dup, dt)
        if not optim_grad_kept(torch, prob):
            failures.append(f"sparse_coo_dup {dtype}: the step replaced or coalesced p.grad")
        step, res = masked_step(torch, prob, coo)
        step()
        p, ssum = res()
        close(f"torch_masked masked_sparse {dtype} param vs formula", p, want_p, dt)
        close(f"torch_masked masked_sparse {dtype} state_sum vs formula", ssum, s, dt)
        # hybrid rows x 64 vs the dense path on the same (densified) grad
        hyb = prob.hybrid_grad()
        step, res = optim_step(torch, prob, hyb)
        step()
        p_h, s_h = res()
        step, res = optim_step(torch, prob, hyb.to_dense())
        step()
        p_d, s_d = res()
        close(f"torch_sparse hybrid_coo {dtype} param vs dense path", p_h, p_d, dt)
        close(f"torch_sparse hybrid_coo {dtype} state_sum vs dense path", s_h, s_d, dt)
        # SparseAdam and SGD: the formulas, on the COO and the hybrid grad
        for g in (coo, prob.hybrid_grad()):
            gd = g.to_dense()
            p0 = prob.param0.reshape(gd.shape)
            hit = (gd != 0)
            step, res = sparse_opt_step(torch, prob, g, "sparse_adam")
            step()
            p, st = res()
            b1, b2 = ADAM_BETAS
            m = (1 - b1) * gd
            v = (1 - b2) * gd * gd
            step_size = ADAM_LR * (1 - b2) ** 0.5 / (1 - b1)
            want = torch.where(hit, p0 - step_size * m / (v.sqrt() + ADAM_EPS), p0)
            close(f"sparse_adam {g.dim()}-d grad {dtype} param vs formula", p, want, dt)
            close(f"sparse_adam {g.dim()}-d grad {dtype} exp_avg vs formula", st["exp_avg"], m, dt)
            step, res = sparse_opt_step(torch, prob, g, "sgd")
            step()
            p, _ = res()
            close(f"sgd {g.dim()}-d grad {dtype} param vs formula", p, p0 - SGD_LR * gd, dt)
            step, res = sparse_opt_step(torch, prob, g, "sgd_momentum")
            step()
            step()  # buf = g, then 0.9 g + g: p0 - lr (g + 1.9 g)
            p, st = res()
            close(f"sgd_momentum {g.dim()}-d grad {dtype} param vs formula", p,
                  p0 - SGD_LR * (1 + 1 + SGD_MOMENTUM) * gd, dt)
            buf = st["momentum_buffer"]
            if not buf.is_sparse or buf._nnz() != g._nnz():
                failures.append(f"sgd_momentum {dtype}: the buffer has {buf._nnz()} entries, "
                                f"not the grad's {g._nnz()} (sparse {buf.is_sparse})")
    # the tutorial's own numbers (reference/maskedtensor-adagrad-tutorial.md)
    i = torch.tensor([[0, 1, 1], [2, 0, 2]])
    v = torch.tensor([3.0, 4.0, 5.0])
    g = torch.sparse_coo_tensor(i, v, [2, 4]).coalesce()
    p = torch.arange(8).reshape(2, 4).float()
    opt = torch.optim.Adagrad([p], lr=0.1, eps=1e-10, initial_accumulator_value=0.5)
    p.grad = g
    opt.step()
    want = torch.tensor([[0.0, 1.0, 1.9027, 3.0], [3.9015, 5.0, 5.9010, 7.0]])
    if not torch.allclose(p.detach(), want, atol=1e-4):
        failures.append(f"tutorial step: param {p.detach().tolist()} != {want.tolist()}")
    return failures


# ---- timing ------------------------------------------------------------------------

def time_step(step, min_time_s, warmup, sync=None):
    """Per-iteration mean wall and thread-CPU time (ns) of step() repeated until
    min_time_s has passed (after `warmup` untimed steps)."""
    for _ in range(warmup):
        step()
    if sync:
        sync()
    min_ns = int(min_time_s * 1e9)
    iters, batch = 0, 1
    t0, c0 = time.perf_counter_ns(), time.thread_time_ns()
    while True:
        for _ in range(batch):
            step()
        if sync:
            sync()
        iters += batch
        elapsed = time.perf_counter_ns() - t0
        if elapsed >= min_ns:
            break
        if sync:  # device steps are asynchronous: grow the batch between syncs
            batch = min(batch * 2, 1024)
    cpu = time.thread_time_ns() - c0
    return elapsed / iters, cpu / iters, iters


def entry(name, label, real_ns=None, cpu_ns=None, iters=0, error=None, **counters):
    fam, kv = parse_name(name)
    e = {"name": name, "family_index": 0, "per_family_instance_index": 0,
         "run_name": name, "run_type": "iteration", "repetitions": 1,
         "repetition_index": 0, "threads": 1, "iterations": iters,
         "real_time": real_ns if real_ns is not None else 0.0,
         "cpu_time": cpu_ns if cpu_ns is not None else 0.0,
         "time_unit": "ns"}
    if error:
        e["error_occurred"] = True
        e["error_message"] = error
    if label:
        e["label"] = label
    for k, v in counters.items():
        if v is not None:
            e[k] = v
    mb = counters.get("model_bytes")
    if not error and mb and real_ns:
        e["bytes_per_second"] = mb / (real_ns * 1e-9)
    return e


def host_context(torch, threads, default_impl, quick):
    mhz = 0
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("cpu MHz"):
                    mhz = int(float(line.split(":")[1]))
                    break
    except OSError:
        pass
    return {
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "host_name": socket.gethostname(),
        "executable": os.path.abspath(__file__),
        "num_cpus": os.cpu_count() or 1,
        "mhz_per_cpu": mhz,
        "cpu_scaling_enabled": False,
        "caches": [],
        "library_build_type": "release",
        "library_version": "torch " + torch.__version__,
        "torch_version": torch.__version__,
        "python_version": platform.python_version(),
        "numpy_version": _numpy_version(),
        "torch_threads_cpuN": threads,
        "torch_default_cpu": default_impl,
        "cuda_available": torch.cuda.is_available(),
        "cuda_device": torch.cuda.get_device_name(0) if torch.cuda.is_available() else "none",
        "mode": "quick" if quick else "full",
        "matrix": f"param: n elements (1-D); COO grad: nnz random distinct positions, "
                  f"1 sparse dim; uncoalesced grad (sparse_coo_dup): the COO grad's "
                  f"positions, {DUP_COPIES} entries each, shuffled, coalesced by torch inside "
                  f"every step; hybrid grad: param as [n/{COLS}, {COLS}], "
                  f"round(rows*density%) random rows x {COLS}",
        "timed": "optimizer step only (grad assigned, state preset), warm cache, "
                 "per-iteration mean after warmup; perf_counter_ns",
        "masked_limits": f"torch_masked: n <= {MASKED_MAX_N}; full mode also density <= "
                         f"{MASKED_MAX_DENSITY_FULL:g}%",
        "peak_rss_bytes": "process-wide high-water mark after the benchmark (getrusage)",
    }


def _numpy_version():
    try:
        import numpy
        return numpy.__version__
    except ImportError:
        return "not installed"


def write_json_atomic(path, doc):
    """Write doc as JSON to path through a temporary file in the same directory
    and a rename, so that a reader never sees half a file and a failure leaves no
    file (duel.py writes its duel.json with this too)."""
    d = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix="." + os.path.basename(path) + ".", suffix=".tmp", dir=d)
    try:
        umask = os.umask(0)
        os.umask(umask)
        os.fchmod(fd, 0o666 & ~umask)  # mkstemp makes it 0600
        with os.fdopen(fd, "w") as f:
            json.dump(doc, f, indent=1)
            f.write("\n")
        os.replace(tmp, path)
    except BaseException:
        os.unlink(tmp)
        raise


def main(argv=None):
    ap = argparse.ArgumentParser(
        description="Time torch's Adagrad paths (default, foreach, fused, sparse, "
                    "MaskedTensor) and write Google Benchmark-compatible JSON.")
    ap.add_argument("--quick", action="store_true",
                    help="n=1M, densities 0.1 1 10 100, f32, 0.2 s per benchmark")
    ap.add_argument("--out", default="torch.json", help="output JSON (default torch.json)")
    ap.add_argument("--c-json", help="the C benchmark's JSON: time the same configurations "
                    "and take its byte model (model_bytes) and nnz")
    ap.add_argument("--threads", type=int, default=os.cpu_count() or 1,
                    help="threads for dev:cpuN (default: all cores)")
    ap.add_argument("--min-time", type=float, help="seconds per benchmark (default 0.2 "
                    "quick, 1.0 full)")
    ap.add_argument("--filter", help="only names matching this regular expression")
    a = ap.parse_args(argv)
    mode = QUICK if a.quick else FULL
    min_time = a.min_time if a.min_time else mode["min_time"]
    name_filter = re.compile(a.filter) if a.filter else None

    try:
        import torch
    except ImportError as e:
        log(f"torch is not importable ({e})")
        return 2
    warnings.filterwarnings("ignore", category=UserWarning)  # MaskedTensor prototype

    model, cuda_cfgs, cuda_sparse, cuda_dup = {}, set(), set(), set()
    if a.c_json:
        configs, model, cuda_cfgs, cuda_sparse, cuda_dup = c_matrix(a.c_json)
        if not configs:
            log(f"{a.c_json}: no impl:c adagrad cpu rows: using the default matrix")
            configs = default_matrix(mode, a.threads)
    else:
        configs = default_matrix(mode, a.threads)
    if not cuda_cfgs:
        cuda_cfgs = {(dt, n) for (_, dt, n, _) in configs}
    if not cuda_sparse:  # the C run's device sparse_coo cases, else the CPU matrix's
        cuda_sparse = {(dt, n, den) for (_, dt, n, den) in configs if den < 100}
    if not cuda_dup and not a.c_json:
        cuda_dup = set(cuda_sparse)

    from torch.optim.optimizer import _default_to_fused_or_foreach
    probe = torch.zeros(1)
    fused, foreach = _default_to_fused_or_foreach([probe], False, False)
    default_impl = "fused" if fused else "foreach" if foreach else "single_tensor (for-loop)"
    fused_ok = True
    try:
        q = torch.zeros(4, requires_grad=False)
        q.grad = torch.ones(4)
        torch.optim.Adagrad([q], fused=True).step()
    except (RuntimeError, ValueError) as e:
        fused_ok = False
        log(f"fused Adagrad is not available on CPU here: {e}")

    t_check = time.perf_counter()
    failures = check_correctness(torch, fused_ok)
    if failures:
        for f in failures:
            log(f"correctness check FAILED: {f}")
        return 1
    log(f"correctness checks passed ({time.perf_counter() - t_check:.1f}s): formula, "
        "dense/foreach/fused/sparse/hybrid/masked paths agree, tutorial numbers")

    out = []
    ncpu_dev = sorted({c[0] for c in configs}, key=lambda d: int(d[3:]))

    def want(name):
        return not name_filter or name_filter.search(name)

    def run(name, label, make, counters, warmup, sync=None):
        if not want(name):
            return
        try:
            step, _ = make()
            real, cpu, iters = time_step(step, min_time, warmup, sync)
        except (RuntimeError, MemoryError, ValueError) as e:
            msg = str(e).splitlines()[0] if str(e) else type(e).__name__
            log(f"{name}: error: {msg}")
            out.append(entry(name, label, error=msg[:200], **counters))
            return
        rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
        out.append(entry(name, label, real, cpu, iters, peak_rss_bytes=rss, **counters))
        log(f"{name}: {real / 1e3:.1f} us/step ({iters} it)")

    for dev in ncpu_dev:
        nthreads = int(dev[3:])
        torch.set_num_threads(nthreads)
        sizes = sorted({(dt, n) for (d, dt, n, _) in configs if d == dev})
        for dt, n in sizes:
            dens = sorted({den for (d, t, nn, den) in configs if (d, t, nn) == (dev, dt, n)})
            base = dict(elements=n, threads=nthreads)
            names = [bench_name(i, p, dev, dt, n, den) for den in dens + [100]
                     for i, p in (("torch_default", "dense"), ("torch_foreach", "dense"),
                                  ("torch_fused", "dense"), ("torch_sparse", "sparse_coo"),
                                  ("torch_sparse", "hybrid_coo"),
                                  ("torch_sparse", "sparse_coo_dup"),
                                  ("torch_masked", "masked_sparse"))]
            names += [bench_name("torch_sparse", p, dev, dt, n, den, fam) for den in dens
                      for fam in SPARSE_OPTS for p in ("sparse_coo", "hybrid_coo")]
            if not any(want(nm) for nm in names):
                continue
            # dense peers: once per (dev, dtype, n), reported at density 100
            dense_bytes = 5 * SIZEOF[dt] * n
            prob = grad = None
            for impl, kw, label in (("torch_default", {}, f"Adagrad() = {default_impl}"),
                                    ("torch_foreach", {"foreach": True}, "foreach=True"),
                                    ("torch_fused", {"fused": True}, "fused=True")):
                name = bench_name(impl, "dense", dev, dt, n, 100)
                if not want(name):
                    continue
                if impl == "torch_fused" and not fused_ok:
                    out.append(entry(name, label, error="fused Adagrad not available on CPU",
                                     **base))
                    continue
                if prob is None:
                    prob = Problem(torch, dt, n, 100.0)
                    grad = prob.dense_grad()
                run(name, label, lambda kw=kw: optim_step(torch, prob, grad, **kw),
                    dict(base, nnz=n, model_bytes=dense_bytes), warmup=3)
            del prob, grad
            for den in dens:
                if not any(want(bench_name(i, p, dev, dt, n, den, f)) for f, i, p in (
                        ("adagrad", "torch_sparse", "sparse_coo"),
                        ("adagrad", "torch_sparse", "hybrid_coo"),
                        ("adagrad", "torch_sparse", "sparse_coo_dup"),
                        ("adagrad", "torch_masked", "masked_sparse"))
                        + tuple((f, "torch_sparse", p) for f in SPARSE_OPTS
                                for p in ("sparse_coo", "hybrid_coo"))):
                    continue
                info = model.get(("sparse_coo", dev, dt, n, den), {})
                prob = Problem(torch, dt, n, den, nnz=info.get("nnz"))
                coo = None
                for impl, path in (("torch_sparse", "sparse_coo"),
                                   ("torch_sparse", "hybrid_coo"),
                                   ("torch_sparse", "sparse_coo_dup"),
                                   ("torch_masked", "masked_sparse")):
                    name = bench_name(impl, path, dev, dt, n, den)
                    if not want(name):
                        continue
                    if path == "sparse_coo_dup":
                        # with --c-json: where the C run has the path; else as the C
                        # benchmark's default matrix, up to 10% in full mode
                        if (a.c_json and (path, dev, dt, n, den) not in model) or (
                                not a.c_json and not a.quick and den > DUP_MAX_DEFAULT_PCT):
                            continue
                        g = prob.dup_grad()
                        run(name, f"uncoalesced COO grad ({DUP_COPIES} entries an element, "
                            "coalesced inside every step)",
                            lambda g=g: optim_step(torch, prob, g),
                            dict(base, nnz=prob.nnz, entries=g._nnz(), model_bytes=model.get(
                                (path, dev, dt, n, den), {}).get("model_bytes")), warmup=2)
                        continue
                    mb = model.get((path, dev, dt, n, den), {}).get("model_bytes")
                    if impl == "torch_masked" and (n > MASKED_MAX_N or (
                            not a.quick and den > MASKED_MAX_DENSITY_FULL)):
                        why = (f"skipped: the MaskedTensor path takes seconds per step; run "
                               f"for n <= {MASKED_MAX_N}"
                               + ("" if a.quick else
                                  f" and density <= {MASKED_MAX_DENSITY_FULL:g}%"))
                        out.append(entry(name, "MaskedTensor tutorial", error=why,
                                         nnz=prob.nnz, model_bytes=mb, **base))
                        continue
                    if path == "hybrid_coo":
                        g = prob.hybrid_grad()
                        nnz = g._nnz() * COLS
                        run(name, f"hybrid COO rows x {COLS} grad",
                            lambda g=g: optim_step(torch, prob, g),
                            dict(base, nnz=nnz, model_bytes=mb), warmup=2)
                        continue
                    coo = prob.coo_grad() if coo is None else coo
                    if impl == "torch_sparse":
                        run(name, "COO grad (_make_sparse path)",
                            lambda: optim_step(torch, prob, coo),
                            dict(base, nnz=prob.nnz, model_bytes=mb), warmup=2)
                    else:
                        run(name, "MaskedTensor tutorial (mask built outside the step)",
                            lambda: masked_step(torch, prob, coo),
                            dict(base, nnz=prob.nnz, model_bytes=mb), warmup=1)
                # SparseAdam and SGD on the same grads (the steady-state step:
                # 2 warmup steps, so SGD's momentum buffer exists)
                for fam in SPARSE_OPTS:
                    for path in ("sparse_coo", "hybrid_coo"):
                        name = bench_name("torch_sparse", path, dev, dt, n, den, fam)
                        # with --c-json: the configurations the C run has for this family
                        if not want(name) or (a.c_json and (fam, path, dev, dt, n, den)
                                              not in model):
                            continue
                        mb = model.get((fam, path, dev, dt, n, den), {}).get("model_bytes")
                        if path == "hybrid_coo":
                            g = prob.hybrid_grad()
                            nnz, label = g._nnz() * COLS, f"hybrid COO rows x {COLS} grad"
                        else:
                            g = coo = prob.coo_grad() if coo is None else coo
                            nnz, label = prob.nnz, "COO grad"
                        run(name, f"torch.optim.{'SparseAdam' if fam == 'sparse_adam' else 'SGD'}"
                            f"{', momentum 0.9' if fam == 'sgd_momentum' else ''}, {label}",
                            lambda g=g, fam=fam: sparse_opt_step(torch, prob, g, fam),
                            dict(base, nnz=nnz, model_bytes=mb), warmup=2)
                del prob, coo

    # CUDA peers on a dense grad: fused (which torch 2.11 refuses on CUDA: the row says
    # so), foreach, and the default (foreach on CUDA)
    for dt, n in sorted(cuda_cfgs):
        base = dict(elements=n, threads=1)
        for impl, kw in (("torch_fused", {"fused": True}), ("torch_foreach", {"foreach": True}),
                         ("torch_default", {})):
            name = bench_name(impl, "dense", "cuda", dt, n, 100)
            if not want(name):
                continue
            if not torch.cuda.is_available():
                out.append(entry(name, None, error="no device", **base))
                continue
            prob = Problem(torch, dt, n, 100.0, device="cuda")
            grad = prob.dense_grad()
            run(name, f"{impl[6:]} on {torch.cuda.get_device_name(0)}",
                lambda kw=kw: optim_step(torch, prob, grad, **kw),
                dict(base, nnz=n, model_bytes=5 * SIZEOF[dt] * n), warmup=3,
                sync=torch.cuda.synchronize)
            del prob, grad

    # CUDA peers of the fused sparse step and of the coalescing step: the sparse-gradient
    # (_make_sparse) path on the device, on the COO grad and on the same elements'
    # uncoalesced grad (torch coalesces it on the device inside every step), on the C
    # run's device configurations of each path (its nnz)
    for path, cfgs, grad_of, what in (
            ("sparse_coo", cuda_sparse, Problem.coo_grad, "COO grad"),
            ("sparse_coo_dup", cuda_dup, Problem.dup_grad,
             f"uncoalesced COO grad ({DUP_COPIES} entries an element)")):
        for dt, n, den in sorted(cfgs):
            name = bench_name("torch_sparse", path, "cuda", dt, n, den)
            if not want(name):
                continue
            base = dict(elements=n, threads=1)
            if not torch.cuda.is_available():
                out.append(entry(name, None, error="no device", **base))
                continue
            info = model.get((path, "cuda", dt, n, den), {})
            prob = Problem(torch, dt, n, den, device="cuda", nnz=info.get("nnz"))
            g = grad_of(prob)
            run(name, f"sparse-gradient Adagrad, {what}, on {torch.cuda.get_device_name(0)}",
                lambda g=g: optim_step(torch, prob, g),
                dict(base, nnz=prob.nnz, model_bytes=info.get("model_bytes"),
                     entries=g._nnz() if path == "sparse_coo_dup" else None),
                warmup=3, sync=torch.cuda.synchronize)
            del prob, g

    threads = max((int(d[3:]) for d in ncpu_dev), default=1)
    doc = {"context": host_context(torch, threads, default_impl, a.quick), "benchmarks": out}
    write_json_atomic(a.out, doc)
    log(f"wrote {a.out} ({len(out)} rows)")
    return 0


if __name__ == "__main__":
    sys.exit(main())

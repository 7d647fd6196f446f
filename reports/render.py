#!/usr/bin/env python3
"""render.py - render mtcs benchmark JSON as report.md + report.html (+ PNG plots).

usage: render.py --c c.json [--torch torch.json] [--duel-json duel.json ...]
                 [--facts facts.json] --out DIR [--no-plots] [--quiet]

Inputs are Google Benchmark JSON (perf/mtcs_bench, perf/torch_peers.py) whose
benchmark names are slash-separated key:value segments, e.g.
  adagrad/impl:c/path:sparse_coo/dev:cpu2/dtype:f32/n:1048576/density:1/cache:warm
  stream/impl:c/dev:cpu2/dtype:f32/n:1048576/cache:warm
  sparse_adam/impl:c/path:hybrid_coo/dev:cpu1/dtype:f32/n:1048576/density:1/cache:warm
(the families sparse_adam, sgd and sgd_momentum: the other optimizers with
sparse gradients, in a section of their own), perf/duel.py's duel JSON (C and a
peer stepped alternately in one process; several files are merged) and a facts
JSON (an object of machine facts and the load of every phase, reports/bench.py).

Repetitions (--benchmark_repetitions): the per-repetition rows of a configuration
become one row whose time, bytes/s, pair_ratio and load counters are medians, with
[min, max] kept; Google Benchmark's aggregate rows are ignored. Every target is
judged on each configuration's median: a configuration whose [min, max] lies on
both sides of the threshold is flagged "spread crosses the target"; one that ran
beside a neighbour (C rows: mtb.cc's load_others counters; duels: their load
summary; cpuN rows that were oversubscribed) is left out with the reason, and a
target with every configuration left out is DISTURBED, not PASS or MISS. The
C-vs-peer targets are judged on the duels where one matches, else on the separate
runs (said so: not paired), else N/A with the reason.

Writes DIR/report.md, DIR/report.html (self-contained apart from the PNGs next
to it) and, unless --no-plots or matplotlib is missing, DIR/*.png. Every file
is written to a temporary name first and renamed, after all inputs have been
read and checked: a missing or malformed input is an error naming the file and
the problem (exit 2) and leaves no report. The target summary is printed on
stdout, one line per target.

Standard library only, except matplotlib for the plots (imported when used).
"""
import argparse
import datetime
import html
import json
import math
import os
import re
import shutil
import statistics
import sys
import tempfile

EXIT_USAGE = 2
MIN_REPS = 5  # targets are judged on at least this many repetitions (issue 15)
TIME_UNITS = {"ns": 1.0, "us": 1e3, "ms": 1e6, "s": 1e9}
SIZEOF = {"f32": 4, "f64": 8, "f16": 2, "bf16": 2}
KEY_ORDER = ("impl", "path", "dev", "dtype", "n", "density", "cache")
SPARSE_PATHS = ("sparse_coo", "sparse_csr", "hybrid_coo", "masked_sparse", "sparse_coo_dup")
# SparseAdam and sparse SGD (perf/kernels/sparse_optim_step.h): their C rows
# pair with Adagrad's dense step; torch's are impl:torch_sparse
SPARSE_OPTS = ("sparse_adam", "sgd", "sgd_momentum")
SPARSE_OPT_TITLES = {"sparse_adam": "SparseAdam", "sgd": "SGD",
                     "sgd_momentum": "SGD, momentum 0.9"}
BIG_N = 1 << 24  # the bandwidth target is judged at n >= 16M
GPU_BIG_N = 1 << 28  # and on the GPU at n >= 256M


class RenderError(Exception):
    pass


# ---- loading -------------------------------------------------------------------

class Row:
    """One benchmark result (one name), with its name parsed into segments."""

    def __init__(self, src, name, raw):
        self.src, self.name, self.raw = src, name, raw
        parts = name.split("/")
        self.family = parts[0]
        self.kv = {}
        for seg in parts[1:]:
            k, sep, v = seg.partition(":")
            if sep:
                self.kv[k] = v
        self.impl = self.kv.get("impl", src)
        self.path = self.kv.get("path", self.family if self.family in ("stream", "touch")
                                else "")
        self.dev = self.kv.get("dev", "")
        self.dtype = self.kv.get("dtype", "")
        self.cache = self.kv.get("cache", "warm")
        self.n = _int_or_none(self.kv.get("n"))
        self.density = _float_or_none(self.kv.get("density"))
        self.error = None
        if raw.get("error_occurred"):
            self.error = str(raw.get("error_message") or "error")
        elif raw.get("skipped"):  # newer Google Benchmark: SkipWithMessage
            self.error = "skipped: " + str(raw.get("skip_message") or "")
        self.label = raw.get("label") if isinstance(raw.get("label"), str) else ""
        self.time_ns = None
        self.bps = None
        if not self.error:
            self.time_ns = raw["real_time"] * TIME_UNITS[raw.get("time_unit", "ns")]
            bps = raw.get("bytes_per_second")
            self.bps = float(bps) if isinstance(bps, (int, float)) and bps > 0 else None
        # repetitions (set by load_bench from the per-repetition rows): the figures
        # above are their medians; [min, max] of the time and of pair_ratio; the
        # load counters' median and max (mtb.cc: at the start of each repetition)
        self.reps = 1
        self.time_range = (self.time_ns, self.time_ns)
        pr = self.counter("pair_ratio")
        self.pair_range = (pr, pr)
        lo = self.counter("load_others")
        self.load_others = lo
        self.load_others_max = lo

    def counter(self, k):
        v = self.raw.get(k)
        return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else None

    def pair_ratio(self):
        """The paired step's time over this step's, both timed interleaved in this
        benchmark (perf/README.md, "Paired ratios"), the median over the
        repetitions; None when not recorded."""
        v = self.counter("pair_ratio")
        return v if v and v > 0 and math.isfinite(v) else None

    def threads(self):
        t = self.counter("threads")
        if t:
            return int(t)
        m = re.fullmatch(r"cpu(\d+)", self.dev)
        return int(m.group(1)) if m else 1

    def disturbed(self, ncpu):
        """Why this C row's repetitions ran beside a neighbour ('' when they did
        not, or when the run has no load counters): on one thread when the median
        of the other runnable tasks at the repetitions' starts plus ours exceeds
        the cores; a multi-threaded row (cpuN) also when any repetition started
        oversubscribed (mtb.cc's load_others)."""
        if self.load_others is None or not ncpu or not self.is_cpu():
            return ""
        th = self.threads()
        if self.load_others + th > ncpu:
            return (f"disturbed: median {self.load_others:g} other runnable task(s) at the "
                    f"repetitions' starts, {th} thread(s), {ncpu} cores")
        if th > 1 and self.load_others_max + th > ncpu:
            return (f"oversubscribed: up to {self.load_others_max:g} other runnable task(s) "
                    f"beside {th} threads on {ncpu} cores")
        return ""

    def is_cpu(self):
        return bool(re.fullmatch(r"cpu\d+", self.dev))

    def model_bytes(self):
        mb = self.counter("model_bytes")
        if mb:
            return mb
        if self.path in ("dense", "masked_dense", "stream") and self.n and self.dtype in SIZEOF:
            return 5.0 * SIZEOF[self.dtype] * self.n
        return None

    def bandwidth(self):
        """Bytes per second: measured (bytes_per_second) or byte model / time."""
        if self.error or not self.time_ns:
            return None
        if self.bps:
            return self.bps
        mb = self.model_bytes()
        return mb / (self.time_ns * 1e-9) if mb else None


def _int_or_none(s):
    try:
        return int(s)
    except (TypeError, ValueError):
        return None


def _float_or_none(s):
    try:
        return float(s)
    except (TypeError, ValueError):
        return None


def load_json(path, what):
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except OSError as e:
        raise RenderError(f"{path}: cannot read the {what}: {e.strerror or e}")
    try:
        return json.loads(text)
    except ValueError as e:
        raise RenderError(f"{path}: the {what} is not valid JSON: {e}")


def median(vals):
    vals = sorted(vals)
    k = len(vals)
    if not k:
        return None
    return vals[k // 2] if k % 2 else (vals[k // 2 - 1] + vals[k // 2]) / 2


def _num(b, k):
    v = b.get(k)
    return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) \
        and math.isfinite(v) else None


def reduce_reps(src, run_name, its):
    """One Row from the per-repetition rows of one configuration: time,
    bytes/s, pair_ratio and the load counters are the medians over the
    repetitions that did not fail (min and max of the time and pair_ratio
    kept), reps = their count. All failed: the first one's error."""
    ok = [b for b in its if not b.get("error_occurred") and not b.get("skipped")]
    if not ok:
        return Row(src, run_name, its[0])
    times = [b["real_time"] * TIME_UNITS[b.get("time_unit", "ns")] for b in ok]
    b = dict(ok[0], real_time=median(times), time_unit="ns")
    for k in ("bytes_per_second", "items_per_second", "pair_ratio", "pair_time_ns",
              "load_others", "load1"):
        vals = [v for v in (_num(x, k) for x in ok) if v is not None]
        if vals:
            b[k] = median(vals)
    r = Row(src, run_name, b)
    r.reps = len(ok)
    r.time_range = (min(times), max(times))
    prs = [v for v in (_num(x, "pair_ratio") for x in ok) if v and v > 0]
    if prs:
        r.pair_range = (min(prs), max(prs))
    lo = [v for v in (_num(x, "load_others") for x in ok) if v is not None]
    if lo:
        r.load_others_max = max(lo)
    return r


def load_bench(path, src):
    """Rows of a Google Benchmark JSON file, checked: ONE row per configuration
    (run_name). Google Benchmark writes one row per repetition plus aggregate rows
    (mean, median, stddev, cv); the per-repetition rows are reduced to their
    median (reduce_reps) and the aggregates are ignored, except an aggregate
    'median' row where no per-repetition row is present."""
    doc = load_json(path, "benchmark JSON")
    if not isinstance(doc, dict):
        raise RenderError(f"{path}: expected a JSON object with 'context' and 'benchmarks'")
    benches = doc.get("benchmarks")
    if not isinstance(benches, list):
        raise RenderError(f"{path}: no 'benchmarks' list (is this Google Benchmark JSON?)")
    ctx = doc.get("context", {})
    if not isinstance(ctx, dict):
        raise RenderError(f"{path}: 'context' is not an object")
    groups = {}
    for i, b in enumerate(benches):
        where = f"{path}: benchmarks[{i}]"
        if not isinstance(b, dict):
            raise RenderError(f"{where}: not an object")
        name = b.get("name")
        if not isinstance(name, str) or not name:
            raise RenderError(f"{where}: no 'name' string")
        if not b.get("error_occurred") and not b.get("skipped") \
                and b.get("run_type") != "aggregate":  # a stddev may be 0
            rt = b.get("real_time")
            if not isinstance(rt, (int, float)) or isinstance(rt, bool) or not rt > 0 \
                    or not math.isfinite(rt):
                raise RenderError(f"{where} ({name}): real_time {rt!r} is not a positive number")
            if b.get("time_unit", "ns") not in TIME_UNITS:
                raise RenderError(f"{where} ({name}): unknown time_unit {b.get('time_unit')!r}")
        run_name = b.get("run_name") if isinstance(b.get("run_name"), str) else name
        run_type = b.get("run_type", "iteration")
        if run_type == "aggregate":
            if b.get("aggregate_name") != "median":
                continue
            rt = b.get("real_time")
            if not isinstance(rt, (int, float)) or not rt > 0 \
                    or b.get("time_unit", "ns") not in TIME_UNITS:
                raise RenderError(f"{where} ({name}): the median's real_time {rt!r} is not a "
                                  "positive number")
            groups.setdefault(run_name, {})["median"] = b
        else:
            groups.setdefault(run_name, {}).setdefault("iter", []).append(b)
    rows = []
    for run_name, g in groups.items():
        if g.get("iter"):
            rows.append(reduce_reps(src, run_name, g["iter"]))
        else:  # aggregates only (--benchmark_report_aggregates_only): their median
            r = Row(src, run_name, dict(g["median"], name=run_name))
            reps = g["median"].get("repetitions")
            r.reps = reps if isinstance(reps, int) and reps > 0 else 1
            rows.append(r)
    return ctx, rows


# ---- lookups -------------------------------------------------------------------------

class Results:
    def __init__(self, rows, ncpu=None):
        self.rows = rows
        self.ok = [r for r in rows if not r.error]
        self.ncpu = ncpu  # the machine's cores, for Row.disturbed (None: not judged)

    def find(self, **want):
        out = []
        for r in self.ok:
            if all(getattr(r, k) == v for k, v in want.items()):
                out.append(r)
        return out

    def stream(self, dev, dtype, n, cache="warm"):
        m = self.find(family="stream", impl="c", dev=dev, dtype=dtype, n=n, cache=cache)
        return m[0] if m else None

    def stream_bw(self, dev, dtype, n, cache="warm"):
        s = self.stream(dev, dtype, n, cache)
        return s.bandwidth() if s else None

    def dense(self, impl, dev, dtype, n, density=None, cache="warm", path="dense"):
        """The dense step's row: at this density when there is one, else at
        density 100, else the median over densities (its time does not depend
        on the density)."""
        m = self.find(family="adagrad", impl=impl, path=path, dev=dev, dtype=dtype, n=n,
                      cache=cache)
        if not m:
            return None
        for d in (density, 100.0):
            if d is None:
                continue
            hit = [r for r in m if r.density == d]
            if hit:
                return hit[0]
        m.sort(key=lambda r: r.time_ns)
        return m[len(m) // 2]

    def one(self, impl, path, dev, dtype, n, density, cache="warm"):
        m = self.find(family="adagrad", impl=impl, path=path, dev=dev, dtype=dtype, n=n,
                      density=density, cache=cache)
        return m[0] if m else None


def stream_bandwidth_summary(rows):
    """(bytes/s, row) of the stream kernel at the largest n on the most threads
    (f32 preferred, warm cache), for the machine facts."""
    res = Results(rows)
    cands = [r for r in res.find(family="stream", impl="c", cache="warm") if r.is_cpu()]
    if not cands:
        return None, None
    cands.sort(key=lambda r: (r.n or 0, int(r.dev[3:]), r.dtype == "f32"))
    best = cands[-1]
    return best.bandwidth(), best


# ---- formatting ----------------------------------------------------------------------

def fmt_n(n):
    if n is None:
        return ""
    for div, suf in ((1 << 30, "G"), (1 << 20, "M"), (1 << 10, "K")):
        if n >= div and n % div == 0:
            return f"{n // div}{suf}"
    return str(n)


def fmt_time(ns):
    if ns is None:
        return ""
    for div, unit in ((1e9, "s"), (1e6, "ms"), (1e3, "us")):
        if ns >= div:
            return f"{ns / div:.3g} {unit}"
    return f"{ns:.3g} ns"


def fmt_bytes(b):
    if b is None:
        return ""
    for div, unit in ((1 << 30, "GiB"), (1 << 20, "MiB"), (1 << 10, "KiB")):
        if b >= div:
            return f"{b / div:.3g} {unit}"
    return f"{b:.0f} B"


def fmt_ratio(x):
    if x is None:
        return ""
    if x >= 100:
        return f"{x:.0f}"
    if x >= 10:
        return f"{x:.1f}"
    if x >= 1:
        return f"{x:.2f}"
    return f"{x:.2g}" if x < 0.01 else f"{x:.2f}" if x >= 0.1 else f"{x:.3f}"


def fmt_range(lo, hi):
    """' [min, max]' of a ratio over repetitions, '' when there is no spread."""
    if lo is None or hi is None or lo == hi:
        return ""
    return f" [{fmt_ratio(lo)}, {fmt_ratio(hi)}]"


def fmt_density(d):
    return "" if d is None else f"{d:g}"


def combo(r, with_density=False):
    s = f"{r.dev} {r.dtype} n={fmt_n(r.n)}"
    if with_density and r.density is not None:
        s += f" d={fmt_density(r.density)}%"
    return s


# ---- targets -----------------------------------------------------------------------------

class Target:
    """One performance target: a threshold on a ratio, judged on every matching
    configuration's median (over its repetitions); PASS when all meet it, MISS
    when one does not. A configuration whose [min, max] over the repetitions lies
    on both sides of the threshold is flagged ("spread crosses the target"); one
    that ran beside a neighbour is left out (leave_out, with the reason), and a
    target whose every configuration was left out is DISTURBED."""

    def __init__(self, tid, title, rule, higher_is_better, threshold, unit="x"):
        self.tid, self.title, self.rule = tid, title, rule
        self.higher, self.threshold, self.unit = higher_is_better, threshold, unit
        # (combo text, median value, ok, detail, min, max, repetitions)
        self.points = []
        self.left_out = []  # (combo text, reason, median, min, max, reps): not judged
        self.status = None   # overrides: "no device", "N/A"
        self.note = ""
        self.paired = 0  # points measured as paired ratios (interleaved steps)
        self.source = ""  # where the C-vs-peer ratios came from (duels / separate runs)

    def meets(self, v):
        return v >= self.threshold if self.higher else v <= self.threshold

    def add(self, where, value, ok=None, detail="", paired=False, lo=None, hi=None, reps=None):
        if ok is None:
            ok = self.meets(value)
        self.points.append((where, value, ok, detail, lo, hi, reps))
        self.paired += bool(paired)

    def leave_out(self, where, reason, value=None, lo=None, hi=None, reps=None):
        """A configuration not judged (its repetitions ran beside a neighbour): listed
        in the target's table with the reason and, for information, its figures."""
        self.left_out.append((where, reason, value, lo, hi, reps))

    def crosses(self, p):
        """The point's [min, max] over its repetitions lies on both sides of the
        threshold."""
        lo, hi = p[4], p[5]
        return lo is not None and hi is not None and self.meets(lo) != self.meets(hi)

    def crossing(self):
        return [p for p in self.points if self.crosses(p)]

    def result(self):
        if self.status:
            return self.status
        if not self.points:
            return "DISTURBED" if self.left_out else "N/A"
        return "PASS" if all(p[2] for p in self.points) else "MISS"

    def worst(self):
        if not self.points:
            return None
        bad = [p for p in self.points if not p[2]] or self.points
        key = (lambda p: p[1]) if self.higher else (lambda p: -p[1])
        if self.unit == "pts":
            key = lambda p: -abs(p[1])  # noqa: E731
        return min(bad, key=key)

    def spread(self):
        """[configs met, median, best] over the configurations: on a noisy
        machine one outlier decides `worst`; these show whether it is one."""
        if not self.points or self.unit == "pts" or any(p[3] for p in self.points):
            return None
        vals = sorted(p[1] for p in self.points)
        k = len(vals)
        med = vals[k // 2] if k % 2 else (vals[k // 2 - 1] + vals[k // 2]) / 2
        best = vals[-1] if self.higher else vals[0]
        met = sum(1 for p in self.points if p[2])
        return [f"{met} of {k}", f"{fmt_ratio(med)}{self.unit}", f"{fmt_ratio(best)}{self.unit}"]

    def measured(self):
        if self.status and not self.points:
            return self.status
        w = self.worst()
        if not w:
            if self.left_out:
                k = len(self.left_out)
                return (f"{'all ' if k > 1 else ''}{k} config{'s' if k > 1 else ''} left out: "
                        f"{self.left_out[0][1]} ({self.left_out[0][0]})")
            return "no data"
        val = w[3] if w[3] else f"{fmt_ratio(w[1])}{self.unit}" + fmt_range(w[4], w[5])
        more = f"; {len(self.points)} configs" if len(self.points) > 1 else ""
        if self.crossing():
            more += f"; spread crosses the target in {len(self.crossing())}"
        if self.left_out:
            more += f"; {len(self.left_out)} left out (disturbed)"
        return f"{'worst ' if len(self.points) > 1 else ''}{val} ({w[0]}{more})"

    def detail_rows(self):
        """The target's table: every configuration judged (median, [min, max],
        repetitions, met or not, the spread flag) and every one left out."""
        rows = []
        for p in self.points:
            shown = p[3] if p[3] else f"{fmt_ratio(p[1])}{self.unit}"
            rng = fmt_range(p[4], p[5]).strip()
            rows.append([p[0], shown, rng, "" if p[6] is None else str(p[6]),
                         "yes" if p[2] else "NO",
                         "spread crosses the target" if self.crosses(p) else ""])
        for where, why, v, lo, hi, reps in self.left_out:
            rows.append([where, "" if v is None else f"{fmt_ratio(v)}{self.unit}",
                         fmt_range(lo, hi).strip(), "" if reps is None else str(reps),
                         "left out", why])
        return rows


def crossover(sparse, dense_of):
    """The density (%) where sparse_coo's time reaches dense's, interpolated
    linearly between the two measured densities around it. Returns
    (value, kind): kind '=' interpolated, '>=' sparse faster everywhere
    (value = the largest density), '<=' dense faster everywhere."""
    pts = []
    for r in sorted(sparse, key=lambda r: r.density):
        d = dense_of(r.density)
        if d is not None:
            pts.append((r.density, r.time_ns - d.time_ns))
    if len(pts) < 2:
        return None, None
    for (d0, f0), (d1, f1) in zip(pts, pts[1:]):
        if f0 < 0 <= f1:
            return d0 + (d1 - d0) * (-f0) / (f1 - f0), "="
    if all(f < 0 for _, f in pts):
        return pts[-1][0], ">="
    if all(f >= 0 for _, f in pts):
        return pts[0][0], "<="
    return None, None  # faster, then slower, then faster: no single crossover


class Rel:
    """A stand-in row for crossover(): a time relative to the other side's."""

    def __init__(self, density, time_ns):
        self.density, self.time_ns = density, time_ns


# The step each C path is paired with (perf/adagrad_bench.c, pair_of).
PAIR_OF = {"dense": "stream", "sparse_coo": "dense", "sparse_csr": "dense",
           "masked_dense": "dense", "hybrid_coo": "dense", "masked_sparse": "sparse_coo",
           "touch": "sparse_coo", "sparse_coo_dup": "sparse_coo"}


def time_over_pair(res, r):
    """(r's time over its pair's, paired): from r's pair_ratio (both steps timed
    interleaved) when recorded, else from the pair's own row of the run;
    (None, False) without one. Medians over the repetitions."""
    v, paired, _, _ = time_over_pair_range(res, r)
    return v, paired


def speedup_over_pair(res, r):
    """(the pair's time over r's, paired, min, max): time_over_pair inverted,
    with its range over the repetitions."""
    v, paired, lo, hi = time_over_pair_range(res, r)
    if not v:
        return None, False, None, None
    return 1.0 / v, paired, (1.0 / hi if hi else None), (1.0 / lo if lo else None)


def time_over_pair_range(res, r):
    """time_over_pair plus its [min, max] over the repetitions: from pair_ratio's
    range, or for two separate rows the extremes of their time ranges."""
    if r.pair_ratio():
        lo, hi = r.pair_range
        return (1.0 / r.pair_ratio(), True, 1.0 / hi if hi else None,
                1.0 / lo if lo else None)
    v, paired = _time_over_pair_rows(res, r)
    if not v:
        return None, False, None, None
    b = _pair_row(res, r)
    return v, paired, r.time_range[0] / b.time_range[1], r.time_range[1] / b.time_range[0]


def _pair_row(res, r):
    pair = PAIR_OF.get(r.path)
    if pair == "stream":
        return res.stream(r.dev, r.dtype, r.n, r.cache)
    if pair == "dense":
        return res.dense("c", r.dev, r.dtype, r.n, r.density, r.cache)
    return res.one("c", pair, r.dev, r.dtype, r.n, r.density, r.cache) if pair else None


def _time_over_pair_rows(res, r):
    b = _pair_row(res, r)
    return (r.time_ns / b.time_ns, False) if b else (None, False)


def sparse_crossover(res, sp, dev, dtype, n):
    """crossover() of sparse_coo rows sp against C dense: on paired ratios (the
    density where sparse/dense time, each sparse row's interleaved dense step
    over it, reaches 1) when every row has one, else on the dense rows."""
    if sp and all(r.pair_ratio() for r in sp):
        return crossover([Rel(r.density, 1.0 / r.pair_ratio()) for r in sp],
                         lambda den: Rel(den, 1.0))
    return crossover(sp, lambda den: res.dense("c", dev, dtype, n, den))


def dense_bw_target(t, dense_c, res, big_n):
    """C dense rows against the stream kernel of the same dev/dtype/n, judged at
    n >= big_n (else at the largest n present, said in the note)."""
    ns = sorted({r.n for r in dense_c if r.n})
    sel = [n for n in ns if n >= big_n] or ns[-1:]
    if ns and not [n for n in ns if n >= big_n]:
        t.note = (f"no n >= {fmt_n(big_n)} in this run (quick mode?): judged at the largest "
                  f"n present, n={fmt_n(sel[0])}, which may fit in cache")
    for dev, dtype, n in sorted({(r.dev, r.dtype, r.n) for r in dense_c if r.n in sel}):
        d = res.dense("c", dev, dtype, n)
        if d:  # stream time / dense time, the same bytes: the bandwidth fraction
            judge_c(t, res, d, combo(d))
    return t


def judge_c(t, res, r, where, ncpu=None):
    """Adds C row r to target t as its speedup over its pair (speedup_over_pair),
    or, for a lower-is-better target, its time over its pair's; left out when
    its repetitions ran beside a neighbour (Row.disturbed)."""
    v, paired, lo, hi = speedup_over_pair(res, r)
    if v and not t.higher:
        v, lo, hi = 1.0 / v, (1.0 / hi if hi else None), (1.0 / lo if lo else None)
    why = r.disturbed(ncpu or res.ncpu)
    if why:
        t.leave_out(where, why, v, lo, hi, r.reps)
    elif v:
        t.add(where, v, paired=paired, lo=lo, hi=hi, reps=r.reps)


def gpu_status(t, res):
    """'no device' when no cuda row ran (the reasons in the note)."""
    if t.points:
        return
    cuda_rows = [r for r in res.rows if r.dev == "cuda"]
    msgs = sorted({r.error for r in cuda_rows if r.error})
    if not cuda_rows or not [r for r in cuda_rows if not r.error]:
        t.status = "no device"
        if msgs and msgs != ["no device"]:
            t.note = "cuda rows: " + "; ".join(msgs)


def gpu_dense_target(res, t, peer):
    """t judged on the device's dense configurations: the peer's time (impl peer) over
    the C dense step's. Where the peer's every cuda row failed (torch refuses fused=True
    on CUDA) the target is N/A with torch's words, not 'no data'."""
    for r in res.find(family="adagrad", impl=peer, path="dense", dev="cuda", cache="warm"):
        c = res.dense("c", "cuda", r.dtype, r.n)
        if c:
            t.add(combo(r), r.time_ns / c.time_ns)
    gpu_status(t, res)
    failed = sorted({r.error for r in res.rows if r.family == "adagrad" and r.impl == peer
                     and r.dev == "cuda" and r.error and r.error != "no device"})
    if not t.points and not t.status and failed:
        t.status = "N/A"
        t.note = f"{peer} on cuda: " + "; ".join(failed)
    return t


def gpu_sparse_target(res, t, other):
    """t judged on the device's sparse_coo configurations: other's time (impl other)
    over the C fused step's on the same (dtype, n, density). The note says, where the
    device ran the touch kernel on the same entries (the step's loads and stores
    alone, perf/README.md), how both compare with it: what no sparse step, fused or
    not, can beat."""
    said = []
    for r in res.find(family="adagrad", impl=other, path="sparse_coo", dev="cuda",
                      cache="warm"):
        c = res.find(family="adagrad", impl="c", path="sparse_coo", dev="cuda",
                     dtype=r.dtype, n=r.n, density=r.density, cache="warm")
        if c:
            t.add(combo(r, True), r.time_ns / c[0].time_ns)
            vs = gpu_vs_touch(res, r, c[0])
            if vs:
                said.append(f"{combo(r, True)}: {vs}")
    gpu_status(t, res)
    if said:
        t.note += ("; " if t.note else "") + (
            "against the touch kernel on the same entries (param and state_sum read and "
            "written at each index as the step does, without its arithmetic; a time over "
            "it of k means k times the access pattern's own cost): " + ", ".join(said))
    return t


def gpu_vs_touch(res, peer, c):
    """'fused 1.02x (paired), cusparse 1.28x' (times over the touch kernel's) for a
    device sparse_coo configuration, or '' without a touch row there. The fused step
    is the touch row's pair (speedup_over_pair: paired where recorded)."""
    tr = res.find(family="touch", impl="c", dev="cuda", dtype=c.dtype, n=c.n,
                  density=c.density, cache="warm")
    if not tr or not tr[0].time_ns:
        return ""
    fused, paired, _, _ = speedup_over_pair(res, tr[0])
    if not fused:
        return ""
    return (f"fused {fmt_ratio(fused)}x{' (paired)' if paired else ''}, "
            f"{peer.impl} {fmt_ratio(peer.time_ns / tr[0].time_ns)}x")


def physics_note(t, res, rows, density):
    """Where a sparse-vs-dense target is missed on one of rows (the C sparse_coo
    rows it judged), what the prefetch-aware model (reports/model.py: the probes
    of the same run, never the sparse rows) predicts there: a prediction below the
    threshold means the machine's random-line cost forbids the target, not the
    kernel; one above it means the kernel falls short."""
    import model
    missed = {p[0]: p for p in t.points if not p[2]}
    said = []
    for r in rows:
        p = missed.get(combo(r))
        if not p:
            continue
        try:
            pr = model.predict(res, r.dev, r.dtype, r.n, [density])["ratio"].get(density)
        except model.ModelError as e:
            said.append(f"{p[0]}: no prediction ({e})")
            continue
        if pr:
            verdict = ("the model forbids it on this machine" if not t.meets(1.0 / pr)
                       else "the model allows it: the kernel falls short")
            said.append(f"{p[0]}: measured {fmt_ratio(p[1])}x, model {fmt_ratio(1.0 / pr)}x "
                        f"({verdict})")
    if said:
        t.note += ("; " if t.note else "") + ("where missed, the prefetch-aware model's "
                                              "prediction: " + "; ".join(said))


def compute_targets(res, torch_loaded, duels=None, facts=None):
    """The targets, judged on res (C and torch rows) and the duels (load_duels);
    facts: facts.json (its duel_notes say why a duel phase did not run)."""
    T = []
    duels = duels or []
    facts = facts or {}
    cpu_ok = [r for r in res.ok if r.is_cpu() and r.cache == "warm"]

    # 1. C dense >= 0.90 of the stream kernel (n >= 16M; else the largest n)
    T.append(dense_bw_target(
        Target("dense_bw", "C dense vs stream-kernel bandwidth",
               ">= 0.90 (n >= 16M, cpu, same threads)", True, 0.90),
        [r for r in cpu_ok if r.family == "adagrad" and r.impl == "c" and r.path == "dense"],
        res, BIG_N))

    # 2. sparse at 1% >= 5x faster than dense
    t = Target("sparse_1pct", "C sparse_coo at 1% vs C dense", ">= 5x faster", True, 5.0)
    sp1 = [r for r in cpu_ok if r.family == "adagrad" and r.impl == "c"
           and r.path == "sparse_coo" and r.density == 1.0]
    for r in sp1:
        judge_c(t, res, r, combo(r))
    physics_note(t, res, sp1, 1.0)
    T.append(t)

    # 3. measured crossover within 10 points of the model
    t = Target("crossover", "dense/sparse crossover density vs the byte model",
               "within 10 points (n >= 16M)", False, 10.0, unit="pts")
    # judged where the data does not fit in cache (n >= 16M when present): the
    # byte model counts DRAM traffic; in cache the compute decides
    keys = sorted({(r.dev, r.dtype, r.n) for r in cpu_ok if r.family == "adagrad"
                   and r.impl == "c" and r.path == "sparse_coo"})
    if any(n >= BIG_N for _, _, n in keys):
        keys = [k for k in keys if k[2] >= BIG_N]
    elif keys:
        t.note = ("no n >= 16M in this run (quick mode?): judged where the data may fit in "
                  "cache, which the byte model does not describe")
    for dev, dtype, n in keys:
        sp = res.find(family="adagrad", impl="c", path="sparse_coo", dev=dev, dtype=dtype,
                      n=n, cache="warm")
        why = [w for w in (r.disturbed(res.ncpu) for r in sp) if w]
        if why:
            t.leave_out(f"{dev} {dtype} n={fmt_n(n)}", f"{len(why)} of its {len(sp)} densities "
                        f"{why[0]}")
            continue
        models = [r.counter("model_crossover_density") for r in sp]
        models = [m for m in models if m is not None]
        x, kind = sparse_crossover(res, sp, dev, dtype, n)
        if x is None or not models:
            continue
        model = statistics.median(models)
        if kind == "=":
            diff, ok = x - model, abs(x - model) <= 10
            shown = f"{x:.3g}%"
        elif kind == ">=":
            diff, ok = max(0.0, x - model), model + 10 >= x
            shown = f">= {x:g}%"
        else:
            diff, ok = min(0.0, x - model), model - 10 <= x
            shown = f"<= {x:g}%"
        touch = res.find(family="touch", impl="c", dev=dev, dtype=dtype, n=n, cache="warm")
        rel = [(r.density, touch_vs_stream(res, r)) for r in touch]
        ax, akind = crossover([Rel(d, v) for d, v in rel if v], lambda den: Rel(den, 1.0))
        t.add(f"{dev} {dtype} n={fmt_n(n)}", diff, ok,
              f"measured {shown}, model {model:.3g}%"
              + (f", access pattern {'' if akind == '=' else akind + ' '}{ax:.3g}%"
                 if ax is not None else ""))
    if any("access pattern" in p[3] for p in t.points):
        t.note += ("; " if t.note else "") + ("access pattern: where the touch "
                  "kernel (sparse_coo's loads and stores without its arithmetic) becomes as "
                  "slow as the stream kernel, i.e. where the access pattern alone, not the "
                  "arithmetic, makes entry-by-entry updates lose to streaming")
    T.append(t)

    # 3b. the prefetch-aware model (reports/model.py, which imports this module:
    # imported here, not at the top): predicted crossover within 5 points
    import model
    T.append(model.model_target(res))

    # 4./5. masked paths vs their plain counterparts
    # (the pairs, PAIR_OF: masked_dense -> dense, masked_sparse -> sparse_coo)
    for tid, path, lim, title in (
            ("masked_dense", "masked_dense", 1.10, "C masked_dense vs C dense"),
            ("masked_sparse", "masked_sparse", 1.20, "C masked_sparse vs C sparse_coo")):
        t = Target(tid, title, f"<= {lim:.2f}x the time", False, lim)
        for r in cpu_ok:
            if r.family == "adagrad" and r.impl == "c" and r.path == path:
                judge_c(t, res, r, combo(r, True))
        T.append(t)

    # 6. vs the peers: from the duels (perf/duel.py: C and peer stepped alternately in
    # one process) where a duel matches the target, else from the separate runs
    T += peer_targets(res, torch_loaded, duels, facts)

    # 7. GPU: C dense >= 0.8 of the stream kernel on the device (n >= 256M)
    t = dense_bw_target(
        Target("gpu_bw", "GPU: C dense vs stream-kernel bandwidth", ">= 0.80 (n >= 256M, cuda)",
               True, 0.80),
        [r for r in res.ok if r.family == "adagrad" and r.impl == "c" and r.path == "dense"
         and r.dev == "cuda" and r.cache == "warm"], res, GPU_BIG_N)
    gpu_status(t, res)
    T.append(t)

    # 8. GPU: C dense >= 1.0x torch fused CUDA, and >= 1.0x torch foreach CUDA (what
    # Adagrad() runs there; torch 2.11 refuses fused=True on CUDA: the first H200 run)
    T.append(gpu_dense_target(res, Target(
        "gpu", "GPU: C dense vs torch fused CUDA", ">= 1.0x faster", True, 1.0), "torch_fused"))
    T.append(gpu_dense_target(res, Target(
        "gpu_foreach", "GPU: C dense vs torch foreach CUDA", ">= 1.0x faster", True, 1.0),
        "torch_foreach"))

    # 9. GPU: the fused sparse step (C sparse_coo, one kernel) >= 1.6x the cuSPARSE
    # gather/scatter pipeline (impl:cusparse, perf/kernels/adagrad_gs.cu) on the
    # same grad, in the same run
    T.append(gpu_sparse_target(res, Target(
        "gpu_gs", "GPU: C fused sparse_coo vs cuSPARSE gather/scatter", ">= 1.6x faster",
        True, 1.6), "cusparse"))
    # 10. GPU: C sparse_coo (the fused step) vs torch's sparse-gradient Adagrad on CUDA
    # (perf/torch_peers.py, the same configurations), separate runs of one job
    T.append(gpu_sparse_target(res, Target(
        "gpu_sparse", "GPU: C sparse_coo vs torch sparse CUDA", ">= 1.0x faster", True, 1.0),
        "torch_sparse"))
    return T


# The C-vs-peer targets: (tid, title, rule, threshold, c_paths, peer, select(duel) ->
# judged, select_row(torch row) -> judged or None where separate runs cannot judge it).
# Duel c_path "sparse_coo" is dim 1 and "hybrid_coo" dim = rows' length (perf/duel.py).
PEER_TARGETS = (
    ("vs_fused_big", "C dense vs torch fused (n >= 16M)", ">= 1x faster", 1.0,
     ("dense",), "torch_fused", lambda d: d.n >= BIG_N, lambda r: r.n >= BIG_N),
    ("vs_fused_1m", "C dense vs torch fused (n = 1M)", ">= 2x faster", 2.0,
     ("dense",), "torch_fused", lambda d: d.n == 1 << 20, lambda r: r.n == 1 << 20),
    ("vs_default", "C dense vs torch default", ">= 2x faster", 2.0,
     ("dense",), "torch_default", lambda d: True, lambda r: True),
    ("vs_sparse", "C sparse_coo vs torch sparse", ">= 8x faster", 8.0,
     ("sparse_coo",), "torch_sparse", lambda d: True, lambda r: True),
    ("vs_masked", "C masked_sparse vs torch MaskedTensor", ">= 300x faster", 300.0,
     ("masked_sparse",), "torch_masked", lambda d: True, lambda r: True),
    # set from the first measurement (perf/README.md, "The uncoalesced grad"): cpu1
    # 3.8x (f64 16M 0.1%) to 15x, separate runs on a loaded 2-core VM
    ("vs_sparse_dup", "C sparse_coo_dup vs torch sparse, the same uncoalesced grad",
     ">= 3x faster", 3.0, ("sparse_coo_dup",), "torch_sparse", lambda d: True, lambda r: True),
    ("vs_zeros_1", "C masked_sparse vs torch fused, zero-filled grad (1%)",
     ">= 5x faster", 5.0, ("masked_sparse",), "torch_fused_zeros",
     lambda d: d.density == 1.0, None),
    ("vs_zeros_100", "C masked_dense vs torch fused, zero-filled grad (100%)",
     ">= 0.95x faster", 0.95, ("masked_dense",), "torch_fused_zeros",
     lambda d: d.density == 100.0, None),
    ("vs_fbgemm_1", "C sparse vs FBGEMM exact (1%)", ">= 3x faster (dim 1 and 64)", 3.0,
     ("sparse_coo", "hybrid_coo"), "fbgemm_exact",
     lambda d: d.density == 1.0 and d.dim in (1, 64), None),
    ("vs_fbgemm_10", "C sparse vs FBGEMM exact (10%)", ">= 1.5x faster (dim 1 and 64)",
     1.5, ("sparse_coo", "hybrid_coo"), "fbgemm_exact",
     lambda d: d.density == 10.0 and d.dim in (1, 64), None),
)
# the torch_peers.py path of the C path (separate runs)
TORCH_PATH = {"dense": "dense", "sparse_coo": "sparse_coo", "masked_sparse": "masked_sparse",
              "sparse_coo_dup": "sparse_coo_dup"}


# Targets against a streaming peer: the bytes our path must move per element,
# over the dense step's 5 T (masked_dense also reads its mask byte).
STREAM_BOUND_PATHS = {"dense": lambda T: 1.0, "masked_dense": lambda T: (5 * T + 1) / (5 * T)}


def stream_bound_note(t, res, duels):
    """Where a dense-path duel misses its target, the most any kernel moving our
    path's bytes at the stream kernel's bandwidth (same run, dev, dtype, n) could
    reach against that peer: peer time / (stream time x bytes ratio). A bound below
    the threshold means the target asks for more than the memory system gives."""
    said = []
    for d in duels:
        f = STREAM_BOUND_PATHS.get(d.c_path)
        if not f or d.dtype not in SIZEOF or t.meets(d.ratio["median"]):
            continue
        st = res.stream("cpu1" if d.threads == 1 else f"cpu{d.threads}", d.dtype, d.n)
        if not st or not d.peer_ns.get("median"):
            continue
        bound = d.peer_ns["median"] / (st.time_ns * f(SIZEOF[d.dtype]))
        verdict = ("the target is beyond it" if not t.meets(bound)
                   else "below the bound: the kernel falls short")
        said.append(f"{d.where()}: measured {fmt_ratio(d.ratio['median'])}x, bound "
                    f"{fmt_ratio(bound)}x ({verdict})")
    if said:
        t.note += ("; " if t.note else "") + (
            "where missed, the most a kernel moving the same bytes at the stream kernel's "
            "bandwidth (this run) could reach: " + "; ".join(said))


def peer_targets(res, torch_loaded, duels, facts):
    """The C-vs-peer targets: judged on the duels that match (each duel's median
    ratio, [min, max] over its repetitions; a duel that ran beside a neighbour
    left out), else on the separate runs (torch_peers.py's rows against the C
    rows: not paired, said in the note), else N/A with the reason."""
    out = []
    notes = [n for n in facts.get("duel_notes", []) if isinstance(n, str)]
    for tid, title, rule, lim, cpaths, peer, sel, sel_row in PEER_TARGETS:
        t = Target(tid, title, rule, True, lim)
        mine = [d for d in duels if d.peer == peer and d.c_path in cpaths and d.is_cpu()
                and (d.error or sel(d))]
        ok = [d for d in mine if not d.error]
        if ok:
            t.source = "duels"
            for d in ok:
                r = d.ratio
                why = d.disturbed()
                if why:
                    t.leave_out(d.where(), why, r["median"], r.get("min"), r.get("max"),
                                len(d.reps))
                    continue
                t.add(d.where(), r["median"], paired=True, lo=r.get("min"), hi=r.get("max"),
                      reps=len(d.reps))
            errs = sorted({d.error for d in mine if d.error})
            if errs:
                t.note = "failed duels: " + "; ".join(errs)
            stream_bound_note(t, res, [d for d in ok if not d.disturbed()])
            out.append(t)
            continue
        if sel_row is not None and torch_loaded:
            t.source = "separate runs"
            t.note = "separate processes: not paired (no duel for this target)"
            for r in [r for r in res.ok if r.family == "adagrad" and r.impl == peer
                      and r.path == TORCH_PATH[cpaths[0]] and r.is_cpu() and r.cache == "warm"
                      and r.n and sel_row(r)]:
                if cpaths[0] == "dense":
                    c = res.dense("c", r.dev, r.dtype, r.n)
                else:
                    c = res.one("c", cpaths[0], r.dev, r.dtype, r.n, r.density)
                if not c:
                    continue
                where = combo(r, cpaths[0] != "dense")
                v, lo = r.time_ns / c.time_ns, r.time_range[0] / c.time_range[1]
                hi, reps = r.time_range[1] / c.time_range[0], min(r.reps, c.reps)
                why = c.disturbed(res.ncpu)
                if why:
                    t.leave_out(where, why, v, lo, hi, reps)
                    continue
                t.add(where, v, lo=lo, hi=hi, reps=reps)
            if not t.points and not t.left_out:
                t.note += "; no configuration of this run matches it"
            if tid == "vs_masked":
                skipped = [r for r in res.rows if r.impl == "torch_masked" and r.error]
                if skipped:
                    t.note += (f"; torch's MaskedTensor path is very slow: {len(skipped)} "
                               "configurations were not run (see the table)")
            out.append(t)
            continue
        t.status = "N/A"
        reasons = sorted({d.error for d in mine if d.error})
        if sel_row is not None and not torch_loaded:
            reasons.append("no torch peers in this run")
        reasons += [n for n in notes if ("FBGEMM" in n) == peer.startswith("fbgemm")
                    or n.startswith("duels not run")]
        if not reasons:
            reasons.append(f"no {peer} duel in this run's duel files" if duels else
                           "no duels in this run (perf/duel.py): only a duel measures this "
                           "peer")
        t.note = "; ".join(reasons)
        out.append(t)
    return out


# ---- duels (perf/duel.py) --------------------------------------------------------------

class Duel:
    """One duel of a duel.json file: C step and peer step timed alternately in one
    process, repeated (perf/duel.py; perf/README.md, "Duels")."""

    def __init__(self, src, raw):
        self.src, self.raw = src, raw
        self.name = raw["name"]
        self.c_path = str(raw.get("c_path", ""))
        self.peer = str(raw.get("peer", ""))
        self.same_math = raw.get("same_math", True) is not False
        self.dev = str(raw.get("dev", ""))
        self.threads = raw.get("threads") if isinstance(raw.get("threads"), int) else 1
        self.dtype = str(raw.get("dtype", ""))
        self.n = _int_or_none(raw.get("n")) or 0
        self.density = _float_or_none(raw.get("density"))
        self.dim = _int_or_none(raw.get("dim")) or 1
        self.verified = str(raw.get("verified") or "")
        self.error = raw.get("error") or None
        self.reps = raw.get("reps") if isinstance(raw.get("reps"), list) else []
        self.load = raw.get("load") if isinstance(raw.get("load"), dict) else {}

        def stat(k):
            v = raw.get(k)
            return v if isinstance(v, dict) else {}
        self.c_ns, self.peer_ns, self.ratio = stat("c_ns"), stat("peer_ns"), stat("ratio")
        # the ratio is judged on the median of the repetitions' own ratios (computed
        # here from "reps" when they carry one, else duel.py's summary)
        rs = [x.get("ratio") for x in self.reps if isinstance(x, dict)]
        rs = [v for v in rs if isinstance(v, (int, float)) and v > 0]
        if rs and not self.error:
            self.ratio = {"median": median(rs), "min": min(rs), "max": max(rs)}

    def is_cpu(self):
        return bool(re.fullmatch(r"cpu(\d+|N)", self.dev))

    def where(self):
        s = f"{self.dev} {self.dtype} n={fmt_n(self.n)}"
        if self.c_path != "dense" or (self.density is not None and self.density != 100):
            s += f" d={fmt_density(self.density)}%"
        if self.dim != 1 or self.c_path == "hybrid_coo":
            s += f" dim={self.dim}"
        return s

    def disturbed(self):
        """Why the duel's repetitions ran beside a neighbour, '' when they did not:
        its load summary (perf/machine_load.py) says disturbed, or oversubscribed
        for a multi-threaded duel."""
        ld = self.load
        why = str(ld.get("why") or "")
        if ld.get("disturbed"):
            kind = "disturbed"
        elif self.threads > 1 and ld.get("oversubscribed"):
            kind = "oversubscribed"
        else:
            return ""
        if not why:
            return f"{kind}: {self.threads} thread(s) beside other runnable tasks"
        return why if why.startswith(("disturbed", "oversubscribed")) else f"{kind}: {why}"


def load_duels(paths):
    """(contexts, duels) of one or more duel.json files, merged (a duel name in
    two files: the later one counts)."""
    ctxs, by_name = [], {}
    for path in paths or []:
        doc = load_json(path, "duel JSON")
        if not isinstance(doc, dict) or not isinstance(doc.get("duels"), list):
            raise RenderError(f"{path}: expected a JSON object with a 'duels' list "
                              "(perf/duel.py's output)")
        ctx = doc.get("context", {})
        if not isinstance(ctx, dict):
            raise RenderError(f"{path}: 'context' is not an object")
        ctxs.append((os.path.basename(path), ctx))
        for i, d in enumerate(doc["duels"]):
            where = f"{path}: duels[{i}]"
            if not isinstance(d, dict) or not isinstance(d.get("name"), str):
                raise RenderError(f"{where}: not an object with a 'name' string")
            if not d.get("error"):
                r = d.get("ratio")
                if not isinstance(r, dict) or not all(
                        isinstance(r.get(k), (int, float)) and r.get(k) > 0
                        for k in ("median", "min", "max")):
                    raise RenderError(f"{where} ({d['name']}): 'ratio' needs positive median, "
                                      "min and max (or the duel needs an 'error')")
            by_name[d["name"]] = Duel(path, d)
    return ctxs, list(by_name.values())


def load_line(ld):
    """perf/machine_load.py's describe(), for a summary read from JSON."""
    if not isinstance(ld, dict) or not ld.get("samples"):
        return "load: unknown"
    parts = [f"load1 {ld.get('load1_start')}->{ld.get('load1_end')}"]
    if ld.get("others_median") is not None:
        parts.append(f"other runnable {ld['others_median']:g} (max {ld.get('others_max')})")
    if ld.get("steal_pct") is not None:
        parts.append(f"steal {ld['steal_pct']:.1f}%")
    if ld.get("disturbed") or ld.get("oversubscribed"):
        parts.append("DISTURBED" if ld.get("disturbed") else "oversubscribed")
    return "load: " + ", ".join(parts)


def duel_rows(duels, same_math):
    out = []
    for d in sorted([d for d in duels if d.same_math == same_math],
                    key=lambda d: (d.peer, d.c_path, d.dev, d.dtype, d.n, d.density or 0,
                                   d.dim)):
        r = d.ratio
        ratio = (f"{fmt_ratio(r['median'])} [{fmt_ratio(r['min'])}, {fmt_ratio(r['max'])}]"
                 if not d.error else "")
        out.append([d.peer, d.c_path, d.dev, d.dtype, fmt_n(d.n), fmt_density(d.density),
                    str(d.dim), fmt_time(d.c_ns.get("median")) if not d.error else "",
                    fmt_time(d.peer_ns.get("median")) if not d.error else "", ratio,
                    str(len(d.reps)), d.error or d.verified,
                    load_line(d.load) + (f" ({d.disturbed()})" if d.disturbed() else "")])
    return out


def make_duel_plots(duels, tmpdir, plt):
    """The duel ratio (median, with [min, max] as error bars) vs density, one
    panel per peer, a line per (C path, dev, dtype, n, dim)."""
    ok = [d for d in duels if not d.error and d.density is not None and d.ratio]
    peers = sorted({d.peer for d in ok})
    if not peers:
        return []
    fig, axes = plt.subplots(1, len(peers), figsize=(5 * len(peers), 4), squeeze=False)
    for ax, peer in zip(axes[0], peers):
        sel = [d for d in ok if d.peer == peer]
        for key in sorted({(d.c_path, d.dev, d.dtype, d.n, d.dim) for d in sel}):
            pts = sorted((d.density, d.ratio["median"], d.ratio["min"], d.ratio["max"])
                         for d in sel if (d.c_path, d.dev, d.dtype, d.n, d.dim) == key)
            xs, ys = [p[0] for p in pts], [p[1] for p in pts]
            err = [[p[1] - p[2] for p in pts], [p[3] - p[1] for p in pts]]
            lab = f"{key[0]} {key[1]} {key[2]} n={fmt_n(key[3])}" + (
                f" dim={key[4]}" if key[4] != 1 else "")
            ax.errorbar(xs, ys, yerr=err, marker="o", ms=3, capsize=2, label=lab)
        ax.axhline(1.0, color="black", lw=1)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("density (%)")
        ax.set_ylabel("peer time / C time (median, [min, max])")
        ax.set_title(f"C vs {peer}")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=6)
    fig.tight_layout()
    fname = "duel_ratio_vs_density.png"
    fig.savefig(os.path.join(tmpdir, fname), dpi=90)
    plt.close(fig)
    return [(fname, "Duels: the peer's step time over C's (timed alternately in one "
                    "process), median of the repetitions with [min, max], vs density, "
                    "per peer")]


def load_phase_rows(facts, duel_ctxs):
    """The Machine load table: per phase (facts.json's phases, bench.py; the duel
    files' own phases) the load at its start and end."""
    out = []
    phases = [p for p in facts.get("phases", []) if isinstance(p, dict)]
    for f, ctx in duel_ctxs:
        phases += [dict(p, name=f"{f}: {p.get('name', '')}") for p in ctx.get("phases", [])
                   if isinstance(p, dict)]

    def smp(sm, k):
        return sm.get(k) if isinstance(sm, dict) and sm.get(k) is not None else None

    for p in phases:
        ld = p.get("load") if isinstance(p.get("load"), dict) else {}
        a, b = p.get("start"), p.get("end")
        others = [max(0, smp(x, "running") - 1) for x in (a, b) if smp(x, "running") is not None]
        st = ld.get("steal_pct")
        verdict = ("DISTURBED" if ld.get("disturbed") else
                   "oversubscribed" if ld.get("oversubscribed") else "no")
        out.append([str(p.get("name", "")), str(smp(a, "load1") if smp(a, "load1") is not None
                                                else ""),
                    str(smp(b, "load1") if smp(b, "load1") is not None else ""),
                    "" if st is None else f"{st:.1f}%",
                    " -> ".join(str(o) for o in others),
                    verdict + (f": {ld['why']}" if ld.get("why") else "")])
    return out


def touch_vs_stream(res, t):
    """Touch row t's time over the stream kernel's: chained from paired ratios
    (touch/sparse_coo x sparse_coo/dense x dense/stream, each timed interleaved)
    when they were recorded, else from the two rows' times."""
    sp = res.one("c", "sparse_coo", t.dev, t.dtype, t.n, t.density, t.cache)
    d = res.dense("c", t.dev, t.dtype, t.n, None, t.cache)
    if t.pair_ratio() and sp and sp.pair_ratio() and d and d.pair_ratio():
        return 1.0 / (t.pair_ratio() * sp.pair_ratio() * d.pair_ratio())
    st = res.stream(t.dev, t.dtype, t.n, t.cache)
    return t.time_ns / st.time_ns if st else None


def where_time_goes(res):
    """Rows of the 'where the sparse time goes' table: per C sparse_coo
    configuration (warm, n >= 16M when present) its time over dense's, the
    touch kernel's (same entries, no arithmetic) over the stream kernel's, and
    sparse_coo's over touch's (touch's pair_ratio: both interleaved)."""
    sp = [r for r in res.find(family="adagrad", impl="c", path="sparse_coo", cache="warm")
          if r.is_cpu()]
    if any(r.n and r.n >= BIG_N for r in sp):
        sp = [r for r in sp if r.n and r.n >= BIG_N]
    out = []
    for r in sorted(sp, key=lambda r: (r.dev, r.dtype, r.n or 0, r.density or 0)):
        touch = [x for x in res.find(family="touch", impl="c", dev=r.dev, dtype=r.dtype, n=r.n,
                                     cache="warm") if x.density == r.density]
        if not touch:
            continue
        t = touch[0]
        vs_dense, _ = time_over_pair(res, r)
        t_vs_stream = touch_vs_stream(res, t)
        sp_vs_t = 1.0 / time_over_pair(res, t)[0]
        out.append([r.dev, r.dtype, fmt_n(r.n), fmt_density(r.density), fmt_ratio(vs_dense),
                    fmt_ratio(t_vs_stream), fmt_ratio(sp_vs_t)])
    return out


def coalesce_rows(res):
    """Rows of 'The cost of coalescing' table: per C sparse_coo_dup configuration
    (warm; CPU and device) its index entries and time, its time over the C
    sparse_coo step's on its coalesced grad (pair_ratio: timed interleaved; else
    the sparse_coo row of the run), torch's sparse step on the same uncoalesced
    grad and C's speedup over it, and torch's own cost of coalescing (its
    uncoalesced step over its coalesced one, separate rows)."""
    out = []
    for r in sorted(res.find(family="adagrad", impl="c", path="sparse_coo_dup", cache="warm"),
                    key=lambda r: (r.dev, r.dtype, r.n or 0, r.density or 0)):
        over, paired = time_over_pair(res, r)
        t = res.one("torch_sparse", "sparse_coo_dup", r.dev, r.dtype, r.n, r.density)
        tc = res.one("torch_sparse", "sparse_coo", r.dev, r.dtype, r.n, r.density)
        e = r.counter("entries")
        out.append([r.dev, r.dtype, fmt_n(r.n), fmt_density(r.density),
                    f"{e:.0f}" if e else "", fmt_time(r.time_ns),
                    (fmt_ratio(over) + (" (paired)" if paired else "")) if over else "",
                    fmt_time(t.time_ns) if t else "", fmt_ratio(t.time_ns / r.time_ns) if t else "",
                    fmt_ratio(t.time_ns / tc.time_ns) if t and tc else ""])
    return out


def memory_rows(res):
    """Extra memory of the C sparse steps at the largest n, on the most threads."""
    rows = [r for r in res.ok if r.impl == "c" and r.path in SPARSE_PATHS and r.cache == "warm"
            and r.is_cpu() and (r.counter("extra_bytes") is not None
                                or r.counter("peak_rss_bytes") is not None)]
    if not rows:
        return []
    n = max(r.n or 0 for r in rows)
    dev = max((r.dev for r in rows if r.n == n), key=lambda d: int(d[3:]))
    out = []
    for r in sorted([r for r in rows if r.n == n and r.dev == dev],
                    key=lambda r: (r.path, r.dtype, r.density or 0)):
        eb, rss, nnz = r.counter("extra_bytes"), r.counter("peak_rss_bytes"), r.counter("nnz")
        per = f"{eb / nnz:.3g}" if eb is not None and nnz else ""
        out.append([r.path if r.family == "adagrad" else f"{r.family} {r.path}", r.dev, r.dtype,
                    fmt_n(r.n), fmt_density(r.density),
                    fmt_bytes(eb) if eb is not None else "", per,
                    fmt_bytes(rss) if rss is not None else ""])
    return out


# ---- SparseAdam and sparse SGD -------------------------------------------------------

def sparse_optim_rows(res):
    """Rows of the SparseAdam / sparse SGD table: per C configuration (warm)
    its time, the fraction of the stream kernel's bandwidth (byte model over
    time), the speedup over Adagrad's C dense step (paired when the row has
    pair_ratio), torch's time on the same configuration and C's speedup over
    it, and the model's crossover density against the optimizer's own dense
    step."""
    out = []
    rows = [r for r in res.ok if r.family in SPARSE_OPTS and r.impl == "c" and r.cache == "warm"]
    for r in sorted(rows, key=lambda r: (SPARSE_OPTS.index(r.family), r.path, r.dev, r.dtype,
                                         r.n or 0, r.density or 0)):
        bw = r.bandwidth()
        sbw = res.stream_bw(r.dev, r.dtype, r.n, r.cache)
        over_dense, paired = time_over_pair(res, r)
        t = [x for x in res.find(family=r.family, impl="torch_sparse", path=r.path, dev=r.dev,
                                 dtype=r.dtype, n=r.n, cache="warm") if x.density == r.density]
        tt = t[0].time_ns if t else None
        xo = r.counter("model_crossover_density")
        out.append([SPARSE_OPT_TITLES[r.family], r.path, r.dev, r.dtype, fmt_n(r.n),
                    fmt_density(r.density), fmt_time(r.time_ns),
                    fmt_ratio(bw / sbw) if bw and sbw else "",
                    (fmt_ratio(1.0 / over_dense) + (" (paired)" if paired else ""))
                    if over_dense else "",
                    fmt_time(tt) if tt else "", fmt_ratio(tt / r.time_ns) if tt else "",
                    f"{xo:.3g}" if xo is not None else ""])
    return out


def sparse_optim_summary(res):
    """Geometric means per (optimizer, path, dev) over the C rows: of-stream
    fraction, speedup over Adagrad dense, speedup over torch."""
    acc = {}
    for r in res.ok:
        if r.family not in SPARSE_OPTS or r.impl != "c" or r.cache != "warm":
            continue
        k = (r.family, r.path, r.dev, r.dtype)
        a = acc.setdefault(k, ([], [], []))
        bw, sbw = r.bandwidth(), res.stream_bw(r.dev, r.dtype, r.n, r.cache)
        if bw and sbw:
            a[0].append(bw / sbw)
        od, _ = time_over_pair(res, r)
        if od:
            a[1].append(1.0 / od)
        t = [x for x in res.find(family=r.family, impl="torch_sparse", path=r.path, dev=r.dev,
                                 dtype=r.dtype, n=r.n, cache="warm") if x.density == r.density]
        if t:
            a[2].append(t[0].time_ns / r.time_ns)

    def gm(v):
        return fmt_ratio(math.exp(statistics.fmean(math.log(x) for x in v))) if v else ""

    return [[SPARSE_OPT_TITLES[f], p, d, t, gm(a[0]), gm(a[1]), gm(a[2]), str(len(a[2]))]
            for (f, p, d, t), a in sorted(acc.items(), key=lambda kv: (
                SPARSE_OPTS.index(kv[0][0]), kv[0][1:]))]


def make_sparse_optim_plots(res, tmpdir, plt):
    """Time per step vs density of SparseAdam and sparse SGD (C solid, torch
    dashed, Adagrad's C dense step grey), one figure per (dev, dtype), one
    panel per n."""
    made = []
    rows = [r for r in res.ok if r.family in SPARSE_OPTS and r.cache == "warm"]
    for dev, dtype in sorted({(r.dev, r.dtype) for r in rows}):
        ns = sorted({r.n for r in rows if r.dev == dev and r.dtype == dtype and r.n})
        fig, axes = plt.subplots(1, len(ns), figsize=(5.5 * len(ns), 4.2), squeeze=False)
        for ax, n in zip(axes[0], ns):
            sel = [r for r in rows if r.dev == dev and r.dtype == dtype and r.n == n
                   and r.density is not None]
            for i, (fam, path, impl) in enumerate(sorted({(r.family, r.path, r.impl)
                                                          for r in sel})):
                pts = sorted((r.density, r.time_ns) for r in sel
                             if (r.family, r.path, r.impl) == (fam, path, impl))
                c = "C%d" % ((SPARSE_OPTS.index(fam) * 2 + (path == "hybrid_coo")) % 10)
                ax.plot([p[0] for p in pts], [p[1] for p in pts], "-" if impl == "c" else "--",
                        marker="o", ms=3, color=c, label=f"{impl} {fam} {path}")
            d = res.dense("c", dev, dtype, n)
            dens = [r.density for r in sel]
            if d and dens:
                ax.hlines(d.time_ns, min(dens), max(dens), colors="grey", linestyles=":",
                          label="c adagrad dense")
            ax.set_xscale("log")
            ax.set_yscale("log")
            ax.set_xlabel("density (% of elements / rows in the grad)")
            ax.set_ylabel("time per step (ns)")
            ax.set_title(f"SparseAdam / SGD {dev} {dtype} n={fmt_n(n)} (warm)")
            ax.grid(True, which="both", alpha=0.3)
        axes[0][-1].legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.02, 1))
        fig.tight_layout()
        fname = f"sparse_optim_time_vs_density_{dev}_{dtype}.png"
        fig.savefig(os.path.join(tmpdir, fname), dpi=90)
        plt.close(fig)
        made.append((fname, f"SparseAdam and sparse SGD, time per step vs density, {dev} "
                            f"{dtype}: C (solid), torch (dashed), Adagrad's C dense step "
                            "(grey dotted)"))
    return made


# ---- the table of all results ---------------------------------------------------------

def result_table(res):
    def sort_key(r):
        return (r.family != "stream", r.family, r.dev, r.dtype, r.n or 0, r.cache,
                r.path, r.impl != "c", r.impl, r.density if r.density is not None else -1)
    head = ["bench", "impl", "path", "dev", "dtype", "n", "density %", "cache", "time/step",
            "GB/s", "of stream", "vs C dense", "note"]
    rows = []
    for r in sorted(res.rows, key=sort_key):
        bw = r.bandwidth()
        sbw = res.stream_bw(r.dev, r.dtype, r.n, r.cache) if r.family != "stream" else None
        frac = bw / sbw if bw and sbw else None
        d = (res.dense("c", r.dev, r.dtype, r.n, r.density, r.cache)
             if r.family in ("adagrad",) + SPARSE_OPTS and not r.error else None)
        rel = r.time_ns / d.time_ns if d and d is not r else None
        note = r.error if r.error else r.label
        rows.append([r.family, r.impl, r.path if r.family != "stream" else "", r.dev, r.dtype,
                     fmt_n(r.n), fmt_density(r.density), r.cache, fmt_time(r.time_ns),
                     f"{bw / 1e9:.3g}" if bw else "", fmt_ratio(frac) if frac else "",
                     fmt_ratio(rel) if rel else "", note or ""])
    return head, rows


# ---- plots -------------------------------------------------------------------------------

def make_plots(res, tmpdir, duels=()):
    """PNG files written into tmpdir; returns [(file, caption)]. Needs matplotlib."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    made = []
    groups = sorted({(r.dev, r.dtype) for r in res.ok if r.family == "adagrad"})
    styles = {}
    cycle = (list(matplotlib.colormaps["tab10"].colors)
             + list(matplotlib.colormaps["Dark2"].colors))

    def color(key):
        if key not in styles:
            styles[key] = cycle[len(styles) % len(cycle)]
        return styles[key]

    for dev, dtype in groups:
        ns = sorted({r.n for r in res.ok if r.family == "adagrad" and r.dev == dev
                     and r.dtype == dtype and r.n})
        if not ns:
            continue
        fig, axes = plt.subplots(1, len(ns), figsize=(5.5 * len(ns), 4.2), squeeze=False)
        for ax, n in zip(axes[0], ns):
            rows = [r for r in res.ok if r.family in ("adagrad", "touch") and r.dev == dev
                    and r.dtype == dtype and r.n == n and r.cache == "warm"]
            dens = sorted({r.density for r in rows if r.density is not None})
            if not dens:
                continue
            lo, hi = min(dens), max(dens)
            series = sorted({(r.impl, r.path) for r in rows})
            for impl, path in series:
                pts = sorted((r.density, r.time_ns) for r in rows
                             if (r.impl, r.path) == (impl, path) and r.density is not None)
                ls = "--" if impl != "c" else ":" if path == "touch" else "-"
                lab = f"{impl} {path}"
                if len(pts) == 1 and path in ("dense", "masked_dense"):
                    ax.hlines(pts[0][1], lo, hi, colors=color(lab), linestyles=ls, label=lab)
                else:
                    ax.plot([p[0] for p in pts], [p[1] for p in pts], ls, marker="o",
                            ms=3, color=color(lab), label=lab)
            sbw = res.stream_bw(dev, dtype, n)
            if sbw:
                sp = sorted((r.density, r.model_bytes()) for r in rows
                            if r.impl == "c" and r.path == "sparse_coo" and r.model_bytes())
                if sp:
                    ax.plot([p[0] for p in sp], [p[1] / sbw * 1e9 for p in sp], ":",
                            color="black", label="byte model sparse_coo / stream BW")
                if dtype in SIZEOF:
                    ax.hlines(5 * SIZEOF[dtype] * n / sbw * 1e9, lo, hi, colors="grey",
                              linestyles=":", label="byte model dense / stream BW")
            sp = [r for r in rows if r.impl == "c" and r.path == "sparse_coo"]
            x, kind = sparse_crossover(res, sp, dev, dtype, n)
            if x is not None and kind == "=":
                ax.axvline(x, color="red", lw=1, alpha=0.6, label=f"crossover {x:.3g}%")
            models = [m for m in (r.counter("model_crossover_density") for r in sp)
                      if m is not None]
            if models:
                m = statistics.median(models)
                if m > 0:
                    ax.axvline(m, color="red", lw=1, ls=":", alpha=0.6,
                               label=f"model crossover {m:.3g}%")
            ax.set_xscale("log")
            ax.set_yscale("log")
            ax.set_xlabel("density (% of elements in the grad)")
            ax.set_ylabel("time per step (ns)")
            ax.set_title(f"{dev} {dtype} n={fmt_n(n)} (warm)")
            ax.grid(True, which="both", alpha=0.3)
        axes[0][-1].legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.02, 1))
        fig.tight_layout()
        fname = f"time_vs_density_{dev}_{dtype}.png"
        fig.savefig(os.path.join(tmpdir, fname), dpi=90)
        plt.close(fig)
        made.append((fname, f"Time per step vs density, {dev} {dtype}: C (solid; the touch "
                            "kernel dotted), torch (dashed), byte model / measured stream "
                            "bandwidth (black and grey dotted), crossover (red; paired when "
                            "the C rows carry pair_ratio)"))

    # fraction of the bandwidth limit, C paths, largest n, per dev (first dtype)
    c_rows = [r for r in res.ok if r.family == "adagrad" and r.impl == "c" and r.cache == "warm"]
    devs = sorted({r.dev for r in c_rows})
    if devs:
        fig, axes = plt.subplots(1, len(devs), figsize=(6 * len(devs), 4), squeeze=False)
        any_bar = False
        for ax, dev in zip(axes[0], devs):
            rows = [r for r in c_rows if r.dev == dev]
            dtype = "f32" if any(r.dtype == "f32" for r in rows) else rows[0].dtype
            n = max(r.n or 0 for r in rows if r.dtype == dtype)
            rows = [r for r in rows if r.dtype == dtype and r.n == n]
            sbw = res.stream_bw(dev, dtype, n)
            if not sbw:
                ax.set_title(f"{dev}: no stream result")
                continue
            paths = sorted({r.path for r in rows})
            dens = sorted({r.density for r in rows if r.density is not None})
            w = 0.8 / max(1, len(dens))
            for j, d in enumerate(dens):
                vals = []
                for p in paths:
                    r = res.one("c", p, dev, dtype, n, d)
                    bw = r.bandwidth() if r else None
                    vals.append(bw / sbw if bw else 0)
                ax.bar([i + j * w for i in range(len(paths))], vals, w, label=f"{d:g}%")
                any_bar = True
            ax.axhline(1.0, color="black", lw=1)
            ax.axhline(0.9, color="red", lw=1, ls="--", label="dense target 0.90")
            ax.set_xticks([i + w * (len(dens) - 1) / 2 for i in range(len(paths))])
            ax.set_xticklabels(paths, rotation=20, fontsize=8)
            ax.set_ylabel("model bytes/s / stream bytes/s")
            ax.set_title(f"fraction of bandwidth limit: {dev} {dtype} n={fmt_n(n)}")
            ax.legend(fontsize=7, title="density")
        fig.tight_layout()
        if any_bar:
            fname = "bandwidth_fraction.png"
            fig.savefig(os.path.join(tmpdir, fname), dpi=90)
            made.append((fname, "Fraction of the bandwidth limit per C path (byte model / "
                                "time, over the stream kernel's bandwidth)"))
        plt.close(fig)

    # speedup over torch per path (geometric mean over matching configurations)
    pairs = (("dense", "torch_fused", "dense"), ("dense", "torch_foreach", "dense"),
             ("dense", "torch_default", "dense"), ("sparse_coo", "torch_sparse", "sparse_coo"),
             ("hybrid_coo", "torch_sparse", "hybrid_coo"),
             ("sparse_coo_dup", "torch_sparse", "sparse_coo_dup"),
             ("masked_sparse", "torch_masked", "masked_sparse"))
    bars = {}
    for cpath, timpl, tpath in pairs:
        for r in res.find(family="adagrad", impl=timpl, path=tpath, cache="warm"):
            c = (res.dense("c", r.dev, r.dtype, r.n) if cpath == "dense"
                 else res.one("c", cpath, r.dev, r.dtype, r.n, r.density))
            if c:
                bars.setdefault((f"{cpath}\nvs {timpl}", r.dev), []).append(
                    r.time_ns / c.time_ns)
    if bars:
        labels = sorted({k[0] for k in bars}, key=lambda s: [p[0] + "\nvs " + p[1]
                                                              for p in pairs].index(s))
        devs = sorted({k[1] for k in bars})
        w = 0.8 / len(devs)
        fig, ax = plt.subplots(figsize=(max(6, 1.6 * len(labels)), 4.2))
        for j, dev in enumerate(devs):
            vals = [math.exp(statistics.fmean(math.log(v) for v in bars[(lab, dev)]))
                    if (lab, dev) in bars else 0 for lab in labels]
            ax.bar([i + j * w for i in range(len(labels))], vals, w, label=dev)
        ax.axhline(1.0, color="black", lw=1)
        ax.set_yscale("log")
        ax.set_xticks([i + w * (len(devs) - 1) / 2 for i in range(len(labels))])
        ax.set_xticklabels(labels, fontsize=7)
        ax.set_ylabel("speedup of C over torch (geomean)")
        ax.set_title("speedup over torch per path")
        ax.legend(fontsize=8)
        fig.tight_layout()
        fname = "speedup_vs_torch.png"
        fig.savefig(os.path.join(tmpdir, fname), dpi=90)
        plt.close(fig)
        made.append((fname, "Speedup of the C paths over torch's (geometric mean over the "
                            "configurations both ran; log scale)"))
    made += make_sparse_optim_plots(res, tmpdir, plt)
    made += make_duel_plots(duels, tmpdir, plt)
    return made


# ---- documents -------------------------------------------------------------------------

def build_blocks(args, c_ctx, t_ctx, res, targets, facts, plots, plot_note, duels=(),
                 duel_ctxs=(), model_blocks=()):
    B = []
    B.append(("h1", "mtcs benchmark report"))
    when = facts.get("date") or datetime.datetime.now(datetime.timezone.utc).strftime(
        "%Y-%m-%d %H:%M UTC")
    mode = facts.get("mode", "")
    B.append(("p", f"Generated {when}{' - ' + mode + ' mode' if mode else ''}. "
                   f"{len(res.rows)} results ({sum(1 for r in res.rows if r.src == 'c')} C, "
                   f"{sum(1 for r in res.rows if r.src == 'torch')} torch), "
                   f"{sum(1 for r in res.rows if r.error)} failed or skipped. "
                   "Timings are noisy on shared machines: compare ratios measured in one "
                   "run (DESIGN.md, Performance method)."))
    B.append(("h2", "Targets"))
    rows = []
    for t in targets:
        rows.append([t.title, t.rule, t.measured(), t.result()])
    B.append(("table", ["target", "goal", "measured", "status"], rows))
    notes = [f"{t.title}: {t.note}" for t in targets if t.note]
    c_reps = [r.reps for r in res.rows if r.src == "c" and not r.error]
    if c_reps:
        fewest = min(c_reps)
        notes.insert(0, f"Every figure is the median of its configuration's repetitions "
                        f"({fewest}{'' if fewest == max(c_reps) else '-' + str(max(c_reps))} "
                        f"per C configuration), with [min, max] where a ratio is judged; "
                        f"a target is judged on each configuration's median."
                        + ("" if fewest >= MIN_REPS else
                           f" Targets are NOT judged on >= {MIN_REPS} repetitions: "
                           f"some C configurations have only {fewest}."))
    crossing = [t for t in targets if t.crossing()]
    if crossing:
        notes.append("Spread crosses the target (the [min, max] over the repetitions lies on "
                     "both sides of the threshold): " + ", ".join(
                         f"{t.title}: {len(t.crossing())}" for t in crossing) + ".")
    left = [t for t in targets if t.left_out]
    if left:
        notes.append("Left out as disturbed (the repetitions ran beside a neighbour: "
                     "other runnable tasks plus our threads exceeded the cores, or CPU "
                     "steal; cpuN rows that were oversubscribed never count): " + ", ".join(
                         f"{t.title}: {len(t.left_out)}" for t in left)
                     + ". A target whose every configuration was left out is DISTURBED.")
    from_duels = [t.title for t in targets if t.source == "duels"]
    if from_duels:
        notes.append("From the duels (perf/duel.py: C's step and the peer's stepped "
                      "alternately in one process, each configuration the median of its "
                      "repetitions): " + ", ".join(from_duels) + ".")
    paired = [t for t in targets if t.paired]
    if paired:
        notes.append("Paired ratios (" + ", ".join(
            f"{t.title}: {t.paired} of {len(t.points)}" for t in paired) +
            "): the benchmark timed its pair's step (dense for the sparse and masked_dense "
            "paths, stream for dense, sparse_coo for masked_sparse and touch and, on its coalesced "
            "grad, for sparse_coo_dup) interleaved with its "
            "own on the same data, or the duel stepped C and the peer alternately in one "
            "process, so load from other tenants hits both alike.")
    if notes:
        B.append(("ul", notes))
    detail = [t for t in targets if t.points or t.left_out]
    if detail:
        B.append(("h3", "Targets: every configuration"))
        for t in detail:
            B.append(("p", f"{t.title} ({t.rule}): {t.result()}"
                           + (f", from the {t.source}" if t.source else "")))
            B.append(("table", ["configuration", "median", "[min, max]", "reps", "meets",
                                "note"], t.detail_rows()))
    spread = [[t.title] + t.spread() for t in targets if t.spread()]
    if spread:
        B.append(("p", "Spread over the configurations of each target (the status above "
                       "is judged on the worst one):"))
        B.append(("table", ["target", "configs meeting it", "median", "best"], spread))
    prof = where_time_goes(res)
    if prof:
        B.append(("h3", "Where the sparse time goes (C sparse_coo)"))
        B.append(("p", "Time ratios (below 1: faster). The touch kernel does sparse_coo's "
                       "loads and stores on the same entries without its arithmetic (s += v, "
                       "p += v k), so 'sparse / touch' near 1 means the step costs what its "
                       "access pattern costs, and 'touch / stream' is what that pattern costs "
                       "against streaming every element: the floor for a kernel that "
                       "gathers and scatters entry by entry, as sparse_coo's does."))
        B.append(("table", ["dev", "dtype", "n", "density %", "sparse / dense",
                            "touch / stream", "sparse / touch"], prof))
    co = coalesce_rows(res)
    if co:
        B.append(("h3", "The cost of coalescing (C sparse_coo_dup)"))
        B.append(("p", "An uncoalesced grad (sparse_coo's elements, each touched by several "
                       "entries, in a shuffled input order, as an embedding backward makes "
                       "it) stepped as torch does: coalesce, then the sparse step. C sorts "
                       "(index, payload) pairs stably and runs ONE fused pass that sums each "
                       "run of equal indices in input order and updates the element; no "
                       "coalesced grad is written (on the device: CUB's radix sort, then one "
                       "kernel with a thread per run). 'vs C sparse_coo': its time over C's "
                       "step on the coalesced grad (paired: timed interleaved on the same "
                       "data), the cost of coalescing. 'vs torch': torch's step on the same "
                       "uncoalesced grad over C's (separate runs); 'torch coalescing': "
                       "torch's uncoalesced step over its coalesced one."))
        B.append(("table", ["dev", "dtype", "n", "density %", "entries", "C time/step",
                            "vs C sparse_coo", "torch time/step", "vs torch",
                            "torch coalescing"], co))
    mem = memory_rows(res)
    B.append(("h3", "Extra memory of the sparse steps (C)"))
    if mem:
        B.append(("table", ["path", "dev", "dtype", "n", "density %", "extra bytes",
                            "extra bytes / nnz", "peak RSS"], mem))
    else:
        B.append(("p", "No extra_bytes / peak_rss_bytes counters in the C results."))
    so = sparse_optim_rows(res)
    if so:
        B.append(("h2", "Other optimizers with sparse gradients (SparseAdam, SGD)"))
        B.append(("p", "torch.optim.SparseAdam's lazy step and torch.optim.SGD's step with a "
                       "sparse gradient (without momentum; with momentum 0.9, the steady-state "
                       "step with the sparse momentum buffer on the grad's entries), C kernels "
                       "perf/kernels/sparse_optim_step.c, bit-identical to the reference ops "
                       "(checked on each case's first step). 'of stream': byte model over "
                       "time, over the stream kernel's bandwidth. 'vs C dense': speedup over "
                       "Adagrad's C dense step on the same param (paired: timed interleaved). "
                       "'vs torch': torch's time over C's (separate runs). 'model crossover': "
                       "the density where the path's bytes equal the optimizer's own dense "
                       "step (SparseAdam 7Tn, SGD 3Tn, with momentum 5Tn)."))
        B.append(("table", ["optimizer", "path", "dev", "dtype", "n", "density %", "C time/step",
                            "of stream", "vs C dense", "torch time/step", "vs torch",
                            "model crossover %"], so))
        B.append(("p", "Geometric means per optimizer, path, dev and dtype (over sizes and "
                       "densities; torch columns over the configurations torch ran):"))
        B.append(("table", ["optimizer", "path", "dev", "dtype", "of stream", "vs C dense",
                            "vs torch", "torch configs"], sparse_optim_summary(res)))
    if duels:
        B.append(("h2", "Duels"))
        B.append(("p", "C's step and the peer's timed alternately in one process "
                       "(perf/duel.py, C through ctypes), each repetition a round of "
                       "about equal time per side; ratio = peer step time / C step time "
                       "(above 1: C faster), median of the repetitions [min, max]. "
                       "'verified': the check of one step of each on identical copies "
                       "before timing."))
        head = ["peer", "C path", "dev", "dtype", "n", "density %", "dim", "C step",
                "peer step", "ratio [min, max]", "reps", "verified", "load"]
        same = duel_rows(duels, True)
        if same:
            B.append(("table", head, same))
        other = duel_rows(duels, False)
        if other:
            B.append(("h3", "Different math: one state value per row (FBGEMM rowwise)"))
            B.append(("p", "fbgemm_rowwise keeps one Adagrad state value per row (the mean "
                           "of the row's squared gradient), not one per element: a "
                           "different update, shown for scale, never judged in a target."))
            B.append(("table", head, other))
    load_rows = load_phase_rows(facts, duel_ctxs)
    if load_rows:
        B.append(("h2", "Machine load"))
        B.append(("p", "The machine's load at the start and end of every phase "
                       "(perf/machine_load.py): the 1-minute load average, CPU steal over "
                       "the phase, runnable tasks other than ours at each sample; disturbed "
                       "when a neighbour competed for the cores (or the hypervisor took "
                       "them), oversubscribed when our threads had fewer free cores."))
        B.append(("table", ["phase", "load1 start", "load1 end", "steal",
                            "other runnable", "disturbed"], load_rows))
    B.extend(model_blocks)
    B.append(("h2", "Plots"))
    if plots:
        for f, cap in plots:
            B.append(("img", f, cap))
    else:
        B.append(("p", plot_note))
    B.append(("h2", "All results"))
    B.append(("p", "time/step is the per-iteration mean (warm: repeated steps on the same "
                   "arrays; cold: caches flushed between steps). GB/s is measured bytes/s, "
                   "or the byte model over the time. 'of stream' is that over the stream "
                   "kernel's bandwidth at the same dev/dtype/n/cache; 'vs C dense' is the "
                   "time over C's dense step at the same configuration. Failed or skipped "
                   "benchmarks show their message."))
    head, rows = result_table(res)
    B.append(("table", head, rows))
    B.append(("h2", "Machine"))
    frows = [[k, str(v)] for k, v in facts.items() if not isinstance(v, (dict, list))]
    frows += [["duel note", n] for n in facts.get("duel_notes", []) if isinstance(n, str)]
    bw, row = stream_bandwidth_summary(res.rows)
    if bw and "memory_bandwidth" not in facts:
        frows.append(["memory_bandwidth", f"{bw / 1e9:.3g} GB/s (stream kernel, "
                                          f"{combo(row)} {row.cache})"])
    for label, ctx in (("C benchmark", c_ctx), ("torch peers", t_ctx)):
        if not ctx:
            continue
        for k, v in ctx.items():
            if k not in ("date", "executable", "caches", "load_avg") and \
                    not isinstance(v, (dict, list)):
                frows.append([f"{label}: {k}", str(v)])
        caches = ctx.get("caches")
        if isinstance(caches, list) and caches:
            desc = ", ".join(f"L{c.get('level')} {c.get('type', '')} {fmt_bytes(c.get('size'))}"
                             for c in caches if isinstance(c, dict)
                             and isinstance(c.get("size"), (int, float)))
            frows.append([f"{label}: caches", desc])
    B.append(("table", ["fact", "value"], frows))
    B.append(("p", "Raw results: "
                   + ", ".join(os.path.basename(p) for p in
                               [args.c, args.torch] + list(args.duel_json or []) if p) + "."))
    return B


def md_escape(s):
    return str(s).replace("|", "\\|").replace("\n", " ")


def to_markdown(blocks):
    out = []
    for b in blocks:
        kind = b[0]
        if kind in ("h1", "h2", "h3"):
            out.append("#" * int(kind[1]) + " " + b[1] + "\n")
        elif kind == "p":
            out.append(b[1] + "\n")
        elif kind == "ul":
            out.append("\n".join("- " + md_escape(x) for x in b[1]) + "\n")
        elif kind == "table":
            head, rows = b[1], b[2]
            out.append("| " + " | ".join(md_escape(h) for h in head) + " |")
            out.append("|" + "|".join("---" for _ in head) + "|")
            for r in rows:
                out.append("| " + " | ".join(md_escape(c) for c in r) + " |")
            out.append("")
        elif kind == "img":
            out.append(f"![{md_escape(b[2])}]({b[1]})\n")
    return "\n".join(out)


CSS = """body{font-family:system-ui,sans-serif;margin:2em;max-width:1400px;color:#222}
table{border-collapse:collapse;margin:1em 0;font-size:13px}
th,td{border:1px solid #ccc;padding:3px 8px;text-align:left}th{background:#f0f0f0}
td.PASS{background:#d8f5d8}td.MISS{background:#f8d0d0}td.DISTURBED{background:#f5ecc8}
img{max-width:100%}
figure{margin:1em 0}figcaption{font-size:13px;color:#555}"""


def to_html(blocks):
    e = html.escape
    out = ["<!DOCTYPE html>", "<html><head><meta charset='utf-8'>",
           "<title>mtcs benchmark report</title>", f"<style>{CSS}</style></head><body>"]
    for b in blocks:
        kind = b[0]
        if kind in ("h1", "h2", "h3"):
            out.append(f"<{kind}>{e(b[1])}</{kind}>")
        elif kind == "p":
            out.append(f"<p>{e(b[1])}</p>")
        elif kind == "ul":
            out.append("<ul>" + "".join(f"<li>{e(x)}</li>" for x in b[1]) + "</ul>")
        elif kind == "table":
            out.append("<table><tr>" + "".join(f"<th>{e(h)}</th>" for h in b[1]) + "</tr>")
            for r in b[2]:
                cells = []
                for c in r:
                    cls = f" class='{c}'" if c in ("PASS", "MISS", "DISTURBED") else ""
                    cells.append(f"<td{cls}>{e(str(c))}</td>")
                out.append("<tr>" + "".join(cells) + "</tr>")
            out.append("</table>")
        elif kind == "img":
            out.append(f"<figure><img src='{e(b[1])}' alt='{e(b[2])}'>"
                       f"<figcaption>{e(b[2])}</figcaption></figure>")
    out.append("</body></html>\n")
    return "\n".join(out)


# ---- main ------------------------------------------------------------------------------------

def summary_lines(targets):
    return [f"{t.result():9s} {t.title} {t.rule}: {t.measured()}" for t in targets]


def render(args):
    c_ctx, c_rows = load_bench(args.c, "c")
    t_ctx, t_rows = (load_bench(args.torch, "torch") if args.torch else ({}, []))
    facts = {}
    if args.facts:
        facts = load_json(args.facts, "facts JSON")
        if not isinstance(facts, dict):
            raise RenderError(f"{args.facts}: the facts JSON must be an object")
    duel_ctxs, duels = load_duels(args.duel_json)
    ncpu = facts.get("cores") if isinstance(facts.get("cores"), int) else None
    ncpu = ncpu or (c_ctx.get("num_cpus") if isinstance(c_ctx.get("num_cpus"), int) else None)
    res = Results(c_rows + t_rows, ncpu)
    targets = compute_targets(res, bool(args.torch), duels, facts)

    out = args.out
    try:
        os.makedirs(out, exist_ok=True)
    except OSError as e:
        raise RenderError(f"{out}: cannot create the output directory: {e.strerror or e}")
    tmp = tempfile.mkdtemp(prefix=".render.", dir=out)
    try:
        plots, plot_note, plt = [], "", None
        if args.no_plots:
            plot_note = "Plots not drawn (--no-plots)."
        else:
            try:
                import matplotlib  # noqa: F401
            except ImportError:
                plot_note = "Plots not drawn: matplotlib is not installed for this Python."
            else:
                plots = make_plots(res, tmp, duels)
                if not plots:
                    plot_note = "No data to plot."
                import matplotlib.pyplot as plt
        import model  # reports/model.py: its section, and its plot when plt is set
        mblocks = model.model_blocks(res, tmp, plt)
        blocks = build_blocks(args, c_ctx, t_ctx, res, targets, facts, plots, plot_note,
                              duels, duel_ctxs, mblocks)
        with open(os.path.join(tmp, "report.md"), "w", encoding="utf-8") as f:
            f.write(to_markdown(blocks))
        with open(os.path.join(tmp, "report.html"), "w", encoding="utf-8") as f:
            f.write(to_html(blocks))
        files = ([p[0] for p in plots] + [b[1] for b in mblocks if b[0] == "img"]
                 + ["report.md", "report.html"])
        for f in files:  # the reports last: they name the plots
            os.replace(os.path.join(tmp, f), os.path.join(out, f))
    except OSError as e:
        raise RenderError(f"{out}: cannot write the report: {e}")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return targets


def main(argv=None):
    ap = argparse.ArgumentParser(
        prog="render.py",
        description="Render mtcs benchmark JSON (C harness + torch peers + C-vs-peer duels) "
                    "as Markdown and HTML with PNG plots. Repetitions are reduced to their "
                    "median; targets are judged on medians, with [min, max] shown, spreads "
                    "that cross a threshold flagged, and configurations that ran beside a "
                    "neighbour left out (DISTURBED when all are).")
    ap.add_argument("--c", required=True, metavar="C_JSON", help="the C benchmark's JSON")
    ap.add_argument("--torch", metavar="TORCH_JSON", help="perf/torch_peers.py's JSON")
    ap.add_argument("--facts", metavar="FACTS_JSON", help="machine facts (reports/bench.py)")
    ap.add_argument("--duel-json", action="append", metavar="DUEL_JSON",
                    help="perf/duel.py's output (repeat for several files: merged); the "
                    "C-vs-peer targets are judged on its duels where they match")
    ap.add_argument("--out", required=True, metavar="DIR", help="output directory")
    ap.add_argument("--no-plots", action="store_true", help="do not draw the PNG plots")
    ap.add_argument("--quiet", action="store_true", help="do not print the target summary")
    args = ap.parse_args(argv)
    try:
        targets = render(args)
    except RenderError as e:
        print(f"render.py: error: {e}", file=sys.stderr)
        return EXIT_USAGE
    if not args.quiet:
        for line in summary_lines(targets):
            print(line)
        print(f"report: {os.path.join(args.out, 'report.md')}, "
              f"{os.path.join(args.out, 'report.html')}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

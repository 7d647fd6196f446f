#!/usr/bin/env python3
"""model.py - the prefetch-aware model of the C sparse_coo step (issue 15, "Model").

usage: model.py C_JSON [--dev cpu1] [--dtype f32] [--n 16777216]

Predicts, per (dev, dtype, n), the sparse_coo/dense time ratio at each measured
density and the crossover density from one run's probe rows (perf/kernels/probe.h,
`mtcs_bench --paths=probe`) and its stream/dense rows only - never from the
sparse_coo rows, which it is then compared with. perf/README.md, "Byte model",
explains it; in short, per 64-byte line position of the arrays (L = 64/T elements,
T the element size) and in units of one stream step's time per line position:

    q(d)  = 1 - (1 - d)^L                 lines of p (and s) holding an entry
    k(d)  = d L / q                       entries per such line
    S(d)  = q (u(1/q) + x(k)) + a d L     the sparse step
    D     = dense time / stream time      (dense's pair_ratio: timed interleaved)
    ratio = S(d) / D                      sparse time over dense time; crossover: = 1

u(g): the RANDOM probe's time per touched line (one entry on each line, lines drawn
at 1/g: the sparse pattern's line density; at g = 1 the GAP probe's gap 1, every
line), linear in log g between the probed gaps, constant beyond the ends. Each
probe times the stream step interleaved with its own (pair_ratio), so
u = (probe time / stream time) * (n / L) / lines_touched.
x(k): the cost of a line's entries beyond its first (their line is already in
cache, their indices and values are streamed): from the ENTRY probes at the same n
(k = 2, 4, 8, 16 entries on every line, paired with the stream step),
x(k) = U(k) - U(1), U(1) the gap probe's gap 1 (one entry on every line), linear in
k between the probed k. Without those rows x(k) = (k - 1)(c + b): c the in-cache
entry probe's time per entry (instructions only) and b = (8 + T) / 320, an entry's
index and value at stream bandwidth (the stream step moves 5 lines per line
position); the parts say which was used. The in-cache probe is reported either
way: the instruction share of x.
a: sparse_coo's arithmetic per entry, which the touch-kernel probes leave out: the
MATH probe (the sparse Adagrad step itself on every element of an in-cache array)
minus the in-cache ENTRY probe (the touch kernel on the same entries), per entry,
over the stream step's time per line position. Counted in full, as if it never
overlapped the misses; 0 (said in the parts) without those rows.

The GAP probe (one entry every g lines, regular) is not in S(d): it shows the
prefetch distance, reported in the parts: its time per line position, u_gap(g)/g,
stays near a stream pass while the hardware prefetchers fetch the skipped lines
anyway, and u_gap(g) levels off where each line is a separate miss.

Exposes predict(res, dev, dtype, n), model_target(res), model_blocks(res, tmpdir,
plt) for reports/render.py. Standard library only (matplotlib passed in as plt).
"""
import argparse
import math
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import render  # noqa: E402

THRESHOLD_PTS = 5.0  # the target: predicted crossover within 5 points of the measured


class ModelError(Exception):
    pass


def _probes(res, kind, dev, dtype, n=None):
    rows = [r for r in res.find(family="probe", impl="c", dev=dev, dtype=dtype, cache="warm")
            if r.kv.get("kind") == kind and (n is None or r.n == n)]
    out = []
    for r in rows:
        try:
            out.append((float(r.kv.get("gap")), r))
        except (TypeError, ValueError):
            continue
    return sorted(out, key=lambda x: x[0])


def _over_stream(res, r, dev, dtype, n):
    """r's time over the stream step's at (dev, dtype, n): from r's pair_ratio
    (probe and dense rows pair with the stream step) or else the stream row."""
    if r.pair_ratio():
        return 1.0 / r.pair_ratio(), True
    st = res.stream(dev, dtype, n)
    return (r.time_ns / st.time_ns, False) if st else (None, False)


def _interp_log(points, g):
    """Linear in log g between (g, value) points (sorted by g), constant beyond."""
    if g <= points[0][0]:
        return points[0][1]
    if g >= points[-1][0]:
        return points[-1][1]
    for (g0, v0), (g1, v1) in zip(points, points[1:]):
        if g0 <= g <= g1:
            w = (math.log(g) - math.log(g0)) / (math.log(g1) - math.log(g0))
            return v0 + w * (v1 - v0)
    return points[-1][1]


def _per_line(res, rows, dev, dtype, n, L):
    """[(gap, u)] for probe rows: time per touched line in stream-step time per
    line position; and whether every one came from a paired ratio."""
    pts, paired = [], True
    for g, r in rows:
        lines = r.counter("lines_touched")
        rel, p = _over_stream(res, r, dev, dtype, n)
        if not lines or rel is None:
            continue
        paired &= p
        pts.append((g, rel * (n / L) / lines))
    return pts, paired


def predict(res, dev, dtype, n, densities=None):
    """The model at (dev, dtype, n): {"ratio": {density %: predicted sparse/dense time},
    "crossover": density % where it reaches 1 (None if it never does in (0, 100]),
    "parts": the fitted parameters and where they come from}. densities default to
    the run's sparse_coo densities there (only their values are used). Raises
    ModelError naming what is missing."""
    if dtype not in render.SIZEOF:
        raise ModelError(f"model: unknown dtype {dtype!r}")
    T = render.SIZEOF[dtype]
    L = 64 // T
    where = f"{dev} {dtype} n={render.fmt_n(n)}"
    rnd, paired_r = _per_line(res, _probes(res, "random", dev, dtype, n), dev, dtype, n, L)
    if len(rnd) < 2:
        raise ModelError(f"model: {where}: fewer than 2 random-line probe rows "
                         "(run mtcs_bench with --paths=...,probe)")
    gap, _ = _per_line(res, _probes(res, "gap", dev, dtype, n), dev, dtype, n, L)
    if gap and gap[0][0] == 1 and rnd[0][0] > 1:
        rnd = [gap[0]] + rnd  # random lines at a mean gap of 1 are every line: gap 1
    st = res.stream(dev, dtype, n)
    if not st:
        raise ModelError(f"model: {where}: no stream row")
    b = (8.0 + T) / (5 * 64)
    c_cache = None
    per_pos = st.time_ns / (n / L)  # a stream step's time per line position
    # the in-cache entry probe: unpaired, smaller than every probed n (not another n's)
    in_cache = [r for g, r in _probes(res, "entry", dev, dtype)
                if r.n and r.n < n and not r.pair_ratio()]
    if in_cache and in_cache[0].counter("entries"):
        r = in_cache[0]
        c_cache = (r.time_ns / r.counter("entries")) / per_pos
    a, a_src = 0.0, "no math and in-cache entry probes: sparse_coo's arithmetic left out"
    math_rows = [r for g, r in _probes(res, "math", dev, dtype)]
    if math_rows and c_cache is not None and math_rows[0].counter("entries"):
        r = math_rows[0]
        a = max(0.0, (r.time_ns / r.counter("entries")) / per_pos - c_cache)
        a_src = (f"probe kind:math minus kind:entry, in cache (n={render.fmt_n(r.n)}), per "
                 "entry over the stream step's per line position")
    # entry probes at n: gap 1/k lines, every line touched: u is U(k) per line position
    full, _ = _per_line(res, _probes(res, "entry", dev, dtype, n), dev, dtype, n, L)
    u1 = _interp_log(rnd, 1.0)
    if full:
        # (gap 0: the first probe rows' name for every element, k = L)
        xs = [(1.0, 0.0)] + sorted((round(1.0 / g) if g > 0 else L, u - u1)
                                   for g, u in full if g < 1)
        x_src = (f"probe kind:entry at n={render.fmt_n(n)} (k entries on every line, paired): "
                 f"U(k) - U(1), U(1) = {u1:.3f}")
    elif c_cache is not None:
        xs = [(1.0, 0.0), (float(L), (L - 1) * (c_cache + b))]
        x_src = ("no entry probes at this n: (k - 1)(c + b), c the in-cache entry probe's "
                 "time per entry, b index and value at stream bandwidth")
    else:
        raise ModelError(f"model: {where}: no entry probe row (kind:entry)")

    def x_of(k):
        if k <= xs[0][0]:
            return xs[0][1]
        for (k0, v0), (k1, v1) in zip(xs, xs[1:]):
            if k0 <= k <= k1:
                return v0 + (k - k0) / (k1 - k0) * (v1 - v0)
        k0, v0 = xs[-2] if len(xs) > 1 else (0.0, 0.0)
        k1, v1 = xs[-1]
        return v1 + (k - k1) * (v1 - v0) / (k1 - k0)  # beyond the last: its slope
    dense = res.dense("c", dev, dtype, n)
    if not dense:
        raise ModelError(f"model: {where}: no C dense row")
    D, paired_d = _over_stream(res, dense, dev, dtype, n)

    def ratio(d_pct):
        d = d_pct / 100.0
        q = 1.0 - (1.0 - d) ** L
        if q <= 0:
            return 0.0
        s = q * (_interp_log(rnd, 1.0 / q) + x_of(d * L / q)) + a * d * L
        return s / D

    if densities is None:
        densities = sorted({r.density for r in res.find(
            family="adagrad", impl="c", path="sparse_coo", dev=dev, dtype=dtype, n=n,
            cache="warm") if r.density is not None})
    pred = {d: ratio(d) for d in densities}
    cross = None
    lo, hi = 1e-6, 100.0
    if ratio(hi) >= 1.0 > ratio(lo):
        for _ in range(60):
            mid = 0.5 * (lo + hi)
            lo, hi = (mid, hi) if ratio(mid) < 1.0 else (lo, mid)
        cross = 0.5 * (lo + hi)
    reach = None
    if gap and gap[0][0] == 1:
        # the widest gap whose time per line position is still >= 0.8 of gap 1's:
        # up to there the skipped lines cost about as much as touched ones
        base = gap[0][1]
        reach = max((g for g, u in gap if u / g >= 0.8 * base), default=None)
    parts = {
        "u_random": rnd, "u_gap": gap, "x_entries": xs, "a_math": a, "c_in_cache": c_cache,
        "b_entry": b,
        "dense_over_stream": D,
        "prefetch_reach_lines": reach,
        "sources": {
            "u_random": "probe kind:random rows, time per touched line over the stream step's "
                        "per line position (" + ("paired" if paired_r else "separate rows") + ")",
            "u_gap": "probe kind:gap rows, same units",
            "x_entries": x_src,
            "a_math": a_src,
            "c_in_cache": "probe kind:entry in cache (n=64K): time per entry, instructions "
                          "only (not in S(d) unless the fallback)",
            "b_entry": f"(8 + {T}) / 320: index and value bytes at stream bandwidth "
                       "(in S(d) only in the fallback)",
            "dense_over_stream": "C dense row's pair_ratio (stream interleaved)" if paired_d
                                 else "C dense row over the stream row",
        },
    }
    return {"ratio": pred, "crossover": cross, "parts": parts}


def _measured(res, dev, dtype, n):
    sp = res.find(family="adagrad", impl="c", path="sparse_coo", dev=dev, dtype=dtype, n=n,
                  cache="warm")
    meas = {}
    for r in sp:
        v, _ = render.time_over_pair(res, r)
        if v:
            meas[r.density] = v
    x, kind = render.sparse_crossover(res, sp, dev, dtype, n)
    return meas, x, kind


def _keys(res):
    keys = sorted({(r.dev, r.dtype, r.n) for r in res.ok if r.family == "adagrad"
                   and r.impl == "c" and r.path == "sparse_coo" and r.cache == "warm"
                   and r.is_cpu() and r.n})
    return [k for k in keys if _probes(res, "random", *k)]


def model_target(res):
    """render.Target: the predicted crossover within 5 points of the measured one,
    per dev/dtype at n >= 16M (else at the sizes present, said in the note). A
    configuration any of whose rows (probes, stream, dense, sparse_coo) ran beside a
    neighbour (render's Row.disturbed) is left out with the reason, not judged."""
    t = render.Target("model_crossover", "prefetch-aware model: predicted vs measured crossover",
                      f"within {THRESHOLD_PTS:g} points (n >= 16M)", False, THRESHOLD_PTS,
                      unit="pts")
    keys = _keys(res)
    if any(n >= render.BIG_N for _, _, n in keys):
        keys = [k for k in keys if k[2] >= render.BIG_N]
    elif keys:
        t.note = "no n >= 16M with probes in this run: judged in cache, where DRAM is not the limit"
    ncpu = getattr(res, "ncpu", None)
    for dev, dtype, n in keys:
        where = f"{dev} {dtype} n={render.fmt_n(n)}"
        # left out when a row it reads ran beside a neighbour (render's Row.disturbed)
        used = res.find(impl="c", dev=dev, dtype=dtype, n=n, cache="warm")
        used = [r for r in used if r.family in ("stream", "probe") or
                (r.family == "adagrad" and r.path in ("dense", "sparse_coo"))]
        why = [w for w in (r.disturbed(ncpu) if hasattr(r, "disturbed") else ""
                           for r in used) if w]
        if why:
            t.leave_out(where, f"{len(why)} of its {len(used)} rows (probes, stream, dense, "
                               f"sparse_coo) {why[0]}")
            continue
        try:
            p = predict(res, dev, dtype, n)
        except ModelError as e:
            t.add(where, float("nan"), False, str(e))
            continue
        _, x, kind = _measured(res, dev, dtype, n)
        pc = p["crossover"]
        if x is None:
            continue
        pcv = 100.0 if pc is None else pc
        shown = f"{x:.3g}%" if kind == "=" else f"{kind} {x:g}%"
        if kind == "=":
            diff = pcv - x
            ok = abs(diff) <= THRESHOLD_PTS
        elif kind == ">=":  # sparse faster at every measured density
            diff = min(0.0, pcv - x)
            ok = pcv + THRESHOLD_PTS >= x
        else:
            diff = max(0.0, pcv - x)
            ok = pcv - THRESHOLD_PTS <= x
        t.add(where, diff, ok,
              f"predicted {'> 100%' if pc is None else f'{pc:.3g}%'}, measured {shown}")
    return t


def model_blocks(res, tmpdir, plt):
    """Report blocks: per (dev, dtype, n) a table density / predicted / measured, the
    fitted parameters with their probe source, and (plt not None) a plot of predicted
    and measured sparse/dense time ratio against density."""
    keys = _keys(res)
    B = [("h2", "Prefetch-aware model of the sparse step")]
    if not keys:
        B.append(("p", "No probe rows in this run (mtcs_bench --paths=...,probe): no model."))
        return B
    B.append(("p", "Predicted from the probes of the same run (random-line, gap and entry "
                   "probes: perf/README.md, 'Byte model') and the stream/dense rows "
                   "only, then set against the measured C sparse_coo/dense time ratio "
                   "(paired). Ratios are sparse time over dense time: below 1 sparse wins."))
    rows, prow = [], []
    plots = []
    for dev, dtype, n in keys:
        where = f"{dev} {dtype} n={render.fmt_n(n)}"
        try:
            p = predict(res, dev, dtype, n)
        except ModelError as e:
            B.append(("p", str(e)))
            continue
        meas, x, kind = _measured(res, dev, dtype, n)
        for d in sorted(p["ratio"]):
            rows.append([dev, dtype, render.fmt_n(n), render.fmt_density(d),
                         render.fmt_ratio(p["ratio"][d]), render.fmt_ratio(meas.get(d))])
        pc = p["crossover"]
        rows.append([dev, dtype, render.fmt_n(n), "crossover",
                     "> 100%" if pc is None else f"{pc:.3g}%",
                     "" if x is None else (f"{x:.3g}%" if kind == "=" else f"{kind} {x:g}%")])
        pa = p["parts"]
        src = pa["sources"]
        prow.append([where, "u(g) random line", ", ".join(
            f"{g:g}: {u:.2f}" for g, u in pa["u_random"]), src["u_random"]])
        if pa["u_gap"]:
            prow.append([where, "u_gap(g) regular gap", ", ".join(
                f"{g:g}: {u:.2f}" for g, u in pa["u_gap"]), src["u_gap"]
                + (f"; skipped lines fetched up to a gap of {pa['prefetch_reach_lines']:g} "
                   "lines (time per line position >= 0.8 of gap 1's)"
                   if pa["prefetch_reach_lines"] else "")])
        prow.append([where, "x(k) extra entries per line", ", ".join(
            f"{k:g}: {v:.2f}" for k, v in pa["x_entries"]), src["x_entries"]])
        prow.append([where, "a arithmetic per entry", f"{pa['a_math']:.3f}", src["a_math"]])
        if pa["c_in_cache"] is not None:
            prow.append([where, "in-cache entry", f"{pa['c_in_cache']:.3f}",
                         src["c_in_cache"]])
        prow.append([where, "b per extra entry", f"{pa['b_entry']:.3f}", src["b_entry"]])
        prow.append([where, "D dense/stream", f"{pa['dense_over_stream']:.3f}",
                     src["dense_over_stream"]])
        if plt is not None:
            plots.append((dev, dtype, n, p, meas))
    B.append(("table", ["dev", "dtype", "n", "density %", "predicted sparse/dense",
                        "measured sparse/dense"], rows))
    B.append(("p", "Fitted parameters (units: one stream step's time per 64-byte line "
                   "position; u per touched line, x per line for its entries beyond the "
                   "first):"))
    B.append(("table", ["config", "parameter", "value", "source"], prow))
    if plots:
        fig, axes = plt.subplots(1, len(plots), figsize=(4.6 * len(plots), 4), squeeze=False)
        for ax, (dev, dtype, n, p, meas) in zip(axes[0], plots):
            ds = sorted(p["ratio"])
            ax.plot(ds, [p["ratio"][d] for d in ds], "-", marker="o", ms=3, label="predicted")
            md = sorted(meas)
            ax.plot(md, [meas[d] for d in md], "--", marker="s", ms=3, label="measured")
            ax.axhline(1.0, color="grey", lw=0.8, ls=":")
            ax.set_xscale("log")
            ax.set_yscale("log")
            ax.set_xlabel("density (%)")
            ax.set_ylabel("sparse_coo / dense time")
            ax.set_title(f"{dev} {dtype} n={render.fmt_n(n)}", fontsize=9)
            ax.grid(True, which="both", alpha=0.3)
        axes[0][0].legend(fontsize=8)
        fig.tight_layout()
        fname = "model_vs_measured.png"
        fig.savefig(os.path.join(tmpdir, fname), dpi=90)
        plt.close(fig)
        B.append(("img", fname, "prefetch-aware model: predicted (solid) and measured "
                                "(dashed, paired) sparse_coo/dense time against density"))
    return B


def main(argv=None):
    ap = argparse.ArgumentParser(
        description="Print the prefetch-aware model's prediction next to the measurement "
                    "for one mtcs_bench JSON run (needs probe, stream, dense and sparse_coo "
                    "rows of the same dev/dtype/n).")
    ap.add_argument("c_json", help="mtcs_bench --benchmark_out JSON")
    args = ap.parse_args(argv)
    try:
        _, rows = render.load_bench(args.c_json, "c")
    except render.RenderError as e:
        print(f"model.py: {e}", file=sys.stderr)
        return 2
    res = render.Results(rows)
    blocks = model_blocks(res, None, None)
    print(render.to_markdown(blocks))
    t = model_target(res)
    print(f"{t.title}: {t.result()} - {t.measured()}")
    for p in t.points:
        print(f"  {p[0]}: {p[1]:+.2f} pts {'ok' if p[2] else 'MISS'} ({p[3]})")
    for p in getattr(t, "left_out", []):
        print(f"  {p[0]}: left out, {p[1]}")
    return 0 if t.result() == "PASS" else 1


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""perf/cli_check.py - mtcs_bench's own options, its case selection and its
output, checked against what perf/README.md ("Running", "Names", the
probes' section) says they are (ctest perf.cli).

    python3 perf/cli_check.py <mtcs_bench> <openmp: 1|0>

Every expected list below is written out by hand from the rules of
perf/README.md, not produced by the program: the loop order (size, dtype,
optimizer, path, density, dev, cache; the probes after each (size, dtype)),
which optimizers run which paths, the --quick restrictions, the size rules
(sparse_csr: n a multiple of 1024, hybrid_coo: of 64), the no-device rows.

The environment is pinned so that the answers are the same on every
machine: OMP_NUM_THREADS=3 makes cpuN "cpu3" (a build without OpenMP has
one thread, and cpuN rows are left out: "<openmp>" says which build this
is), CUDA_VISIBLE_DEVICES= hides any GPU, so the device rows are those
listed without a device. Exit 0 when every check passed, 1 otherwise
(each failure named)."""
import os
import re
import sys
import time

from benchcheck import Checks

if len(sys.argv) != 3 or sys.argv[2] not in ("0", "1"):
    sys.exit("usage: cli_check.py <mtcs_bench> <openmp: 1|0>")
BENCH, OPENMP = sys.argv[1], sys.argv[2] == "1"
ENV = dict(os.environ, OMP_NUM_THREADS="3", CUDA_VISIBLE_DEVICES="")
C = Checks(BENCH, ENV, timeout=60)
run, check = C.run, C.check


def lines(text):
    """A hand-written list: one name a line, leading blanks and blank lines
    dropped; "cpuN" is cpu3 (OMP_NUM_THREADS=3), and its rows are left out
    in a build without OpenMP (one thread: cpuN would be cpu1 again)."""
    out = [ln.strip() for ln in text.strip().splitlines() if ln.strip()]
    if not OPENMP:
        return [ln for ln in out if "/dev:cpuN/" not in ln]
    return [ln.replace("/dev:cpuN/", "/dev:cpu3/") for ln in out]


def expect_list(args, want, what):
    rc, out, err = run(*args, "--list")
    got = out.splitlines()
    ok = rc == 0 and got == want
    if not ok:
        extra = [g for g in got if g not in want][:5]
        missing = [w for w in want if w not in got][:5]
        what += (f" (exit {rc}; {len(got)} names, want {len(want)}; unexpected {extra}; "
                 f"missing {missing}; stderr {err.strip()[:200]!r})")
    check(ok, f"--list {' '.join(args)}: {what}")
    return got


# ---- --help ----------------------------------------------------------------
for flag in ("--help", "-h"):
    rc, out, err = run(flag)
    opts = ["--quick", "--sizes=", "--dtypes=", "--paths=", "--opts=", "--densities=", "--devs=",
            "--caches=", "--no-pair", "--list", "--callgrind-probe="]
    check(rc == 0 and out.startswith("mtcs_bench - ") and all(o in out for o in opts)
          and err == "", f"{flag}: exit 0 and a usage naming every option on stdout")

# ---- bad options: exit 2, the option named, nothing run --------------------
BAD = ["--sizes=0", "--sizes=-4", "--sizes=12Q", "--sizes=1KK", "--sizes=",
       "--sizes=99999999999999999999", "--sizes=1.5M", "--dtypes=f16", "--dtypes=",
       "--dtypes=f32,f16", "--paths=bogus", "--paths=", "--paths=dense,bogus", "--opts=adam",
       "--opts=", "--opts=adagrad,adam", "--densities=0", "--densities=-1",
       "--densities=100.5", "--densities=nan", "--densities=5%", "--densities=",
       "--densities=1,0", "--devs=gpu", "--devs=", "--devs=cpu1,cpu2", "--caches=hot",
       "--caches=", "--frobnicate", "--quick=1", "--list=yes", "--no-pair=1", "--benchmarkX",
       "-q", "--callgrind-probe",
       # a value given twice would list its cases twice
       "--sizes=1K,1K", "--sizes=1K,1024", "--dtypes=f32,f32", "--paths=dense,dense",
       "--paths=probe,dense,probe", "--opts=sgd,sgd", "--densities=1,1.0", "--devs=cpu1,cpu1",
       "--caches=warm,warm",
       # every path, then one again (one past the paths' table)
       "--paths=stream,dense,sparse_coo,touch,sparse_csr,masked_dense,masked_sparse,"
       "hybrid_coo,sparse_coo_dup,dense",
       # more values than a list holds; a 2^63 size; a value longer than 511
       "--sizes=" + ",".join(str(k) for k in range(1, 18)), "--dtypes=f32,f64,f32",
       "--opts=adagrad,sparse_adam,sgd,sgd_momentum,adagrad", "--sizes=8589934592G",
       "--densities=" + "1" * 512]
for a in BAD:
    rc, out, err = run("--list", a)
    check(rc == 2 and f"bad option {a} (" in err and out == "",
          f"{a[:60]}: exit 2 (got {rc}), 'bad option {a[:60]}' on stderr (got "
          f"{err.strip()[:120]!r}), nothing listed")
# ... and the reason said
for a, why in (("--densities=0", "'0' is not a density"), ("--devs=gpu", "'gpu' is none of cpu1 cpuN cuda"),
               ("--sizes=1K,1024", "'1024' given twice"), ("--frobnicate", "not an option"),
               ("--sizes=" + ",".join(str(k) for k in range(1, 18)), "more than 16 values"),
               ("--paths=probe,probe", "'probe' given twice"), ("--opts=", "no value"),
               ("--paths=tensor", "'tensor' is not a path"), ("--sizes=8589934592G", "not a size"),
               ("--densities=" + "1" * 512, "longer than 511 characters")):
    rc, out, err = run("--list", a)  # --list: an option taken by mistake runs nothing
    check(rc == 2 and why in err, f"{a[:60]}: the reason '{why}' said (got {err.strip()[:160]!r})")

# Google Benchmark's flags pass through (--benchmark_*, --v)
for a in ("--benchmark_filter=x", "--v=1", "--benchmark_repetitions=2"):
    rc, out, err = run("--sizes=1K", "--paths=stream", "--devs=cpu1", "--dtypes=f32",
                       "--caches=warm", "--list", a)
    check(rc == 0 and out == "stream/impl:c/dev:cpu1/dtype:f32/n:1024/cache:warm\n",
          f"{a}: passed on to Google Benchmark (exit {rc}, stderr {err.strip()[:120]!r})")

# ---- the selection (--list) -------------------------------------------------
ONE = ["--devs=cpu1", "--caches=warm"]

# dense runs at density 100 whatever --densities says; no probe unless asked
expect_list(["--sizes=64K", "--dtypes=f32", "--paths=dense", "--opts=adagrad",
             "--densities=1", *ONE],
            ["adagrad/impl:c/path:dense/dev:cpu1/dtype:f32/n:65536/density:100/cache:warm"],
            "one dense case")

# order: size, dtype, optimizer, path, density, dev, cache (each as given, not
# sorted); stream and touch once, under the first optimizer, named by kernel
g = "/dev:cpu1/dtype:"
expect_list(["--sizes=2K,1K", "--dtypes=f64,f32", "--paths=touch,stream", "--opts=sgd,adagrad",
             "--densities=50,1", "--devs=cpu1", "--caches=cold,warm"], lines(f"""
    touch/impl:c{g}f64/n:2048/density:50/cache:cold
    touch/impl:c{g}f64/n:2048/density:50/cache:warm
    touch/impl:c{g}f64/n:2048/density:1/cache:cold
    touch/impl:c{g}f64/n:2048/density:1/cache:warm
    stream/impl:c{g}f64/n:2048/cache:cold
    stream/impl:c{g}f64/n:2048/cache:warm
    touch/impl:c{g}f32/n:2048/density:50/cache:cold
    touch/impl:c{g}f32/n:2048/density:50/cache:warm
    touch/impl:c{g}f32/n:2048/density:1/cache:cold
    touch/impl:c{g}f32/n:2048/density:1/cache:warm
    stream/impl:c{g}f32/n:2048/cache:cold
    stream/impl:c{g}f32/n:2048/cache:warm
    touch/impl:c{g}f64/n:1024/density:50/cache:cold
    touch/impl:c{g}f64/n:1024/density:50/cache:warm
    touch/impl:c{g}f64/n:1024/density:1/cache:cold
    touch/impl:c{g}f64/n:1024/density:1/cache:warm
    stream/impl:c{g}f64/n:1024/cache:cold
    stream/impl:c{g}f64/n:1024/cache:warm
    touch/impl:c{g}f32/n:1024/density:50/cache:cold
    touch/impl:c{g}f32/n:1024/density:50/cache:warm
    touch/impl:c{g}f32/n:1024/density:1/cache:cold
    touch/impl:c{g}f32/n:1024/density:1/cache:warm
    stream/impl:c{g}f32/n:1024/cache:cold
    stream/impl:c{g}f32/n:1024/cache:warm"""), "the loop order, stream and touch once")

# sparse_adam, sgd, sgd_momentum run sparse_coo and hybrid_coo only
t = "/dev:cpu1/dtype:f32/n:65536/density:10/cache:warm"
expect_list(["--sizes=64K", "--dtypes=f32", "--paths=dense,sparse_coo,hybrid_coo,touch,masked_dense",
             "--opts=sparse_adam,sgd_momentum", "--densities=10", *ONE], lines(f"""
    sparse_adam/impl:c/path:sparse_coo{t}
    sparse_adam/impl:c/path:hybrid_coo{t}
    touch/impl:c{t}
    sgd_momentum/impl:c/path:sparse_coo{t}
    sgd_momentum/impl:c/path:hybrid_coo{t}"""), "the other optimizers' paths")

# the size rules: sparse_csr wants n % 1024 == 0, hybrid_coo n % 64 == 0
t = "/dev:cpu1/dtype:f32/n:{}/density:100/cache:warm"
expect_list(["--sizes=1000,1024,1088", "--dtypes=f32", "--paths=sparse_csr,hybrid_coo,sparse_coo",
             "--opts=adagrad", "--densities=100", *ONE], lines(f"""
    adagrad/impl:c/path:sparse_coo{t.format(1000)}
    adagrad/impl:c/path:sparse_csr{t.format(1024)}
    adagrad/impl:c/path:hybrid_coo{t.format(1024)}
    adagrad/impl:c/path:sparse_coo{t.format(1024)}
    adagrad/impl:c/path:hybrid_coo{t.format(1088)}
    adagrad/impl:c/path:sparse_coo{t.format(1088)}"""), "sizes a path cannot take left out")

# a run of a selection that holds no case is refused (--list of it is empty)
rc, out, err = run("--paths=probe", "--caches=cold", "--sizes=1K")
check(rc == 2 and "the selection holds no case" in err and out == "",
      f"an empty selection run: exit {rc}, {err.strip()[-160:]!r}")
rc, out, err = run("--paths=sparse_csr", "--sizes=1000", "--list")
check(rc == 0 and out == "", f"an empty selection listed: exit {rc}, {out!r}")

# the defaults (perf/README.md's selection table): sizes 1M 16M 64M (--quick:
# 1M), dtypes f32 f64 (--quick: f32), devs cpu1 cpuN cuda, caches warm cold
# (the device warm only), every optimizer in the order adagrad, sparse_adam,
# sgd, sgd_momentum
t = "stream/impl:c/dev:cpu1/dtype:f32/n:{}/cache:warm"
expect_list(["--paths=stream", "--dtypes=f32", *ONE],
            [t.format(n) for n in (1048576, 16777216, 67108864)], "the default sizes")
expect_list(["--quick", "--paths=stream", *ONE], [t.format(1048576)], "--quick's size and dtype")
t = "stream/impl:c/dev:{}/dtype:{}/n:1024/cache:{}"
expect_list(["--paths=stream", "--sizes=1K"], lines("\n".join(
    t.format(dev, dt, cache) for dt in ("f32", "f64")
    for dev, cache in (("cpu1", "warm"), ("cpu1", "cold"), ("cpuN", "warm"), ("cpuN", "cold"),
                       ("cuda", "warm")))), "the default dtypes, devs and caches")
t = "/impl:c/path:sparse_coo/dev:cpu1/dtype:f32/n:1024/density:1/cache:warm"
expect_list(["--paths=sparse_coo", "--sizes=1K", "--dtypes=f32", "--densities=1", *ONE],
            [o + t for o in ("adagrad", "sparse_adam", "sgd", "sgd_momentum")],
            "the default optimizers")

# the last --paths holds (probes included)
expect_list(["--paths=probe", "--paths=stream", "--sizes=1K", "--dtypes=f32", *ONE],
            ["stream/impl:c/dev:cpu1/dtype:f32/n:1024/cache:warm"], "the last --paths")

# K, M, G are powers of 1024, either case; the largest G is 2^33 - 1
expect_list(["--sizes=1k,1m,1G,3,8589934591G", "--dtypes=f32", "--paths=stream", *ONE], lines("""
    stream/impl:c/dev:cpu1/dtype:f32/n:1024/cache:warm
    stream/impl:c/dev:cpu1/dtype:f32/n:1048576/cache:warm
    stream/impl:c/dev:cpu1/dtype:f32/n:1073741824/cache:warm
    stream/impl:c/dev:cpu1/dtype:f32/n:3/cache:warm
    stream/impl:c/dev:cpu1/dtype:f32/n:9223372035781033984/cache:warm"""), "size suffixes")

# --quick: cold for dense and stream only; the other optimizers on cpu1 only;
# sparse_coo_dup not on cpuN
t = "/dtype:f32/n:65536/density:{}/cache:{}"
quick_rows = lines(f"""
    adagrad/impl:c/path:dense/dev:cpu1{t.format(100, 'warm')}
    adagrad/impl:c/path:dense/dev:cpu1{t.format(100, 'cold')}
    adagrad/impl:c/path:dense/dev:cpuN{t.format(100, 'warm')}
    adagrad/impl:c/path:dense/dev:cpuN{t.format(100, 'cold')}
    adagrad/impl:c/path:sparse_coo/dev:cpu1{t.format(1, 'warm')}
    adagrad/impl:c/path:sparse_coo/dev:cpuN{t.format(1, 'warm')}
    adagrad/impl:c/path:sparse_coo_dup/dev:cpu1{t.format(1, 'warm')}
    sgd/impl:c/path:sparse_coo/dev:cpu1{t.format(1, 'warm')}""")
sel = ["--sizes=64K", "--dtypes=f32", "--paths=dense,sparse_coo,sparse_coo_dup",
       "--opts=adagrad,sgd", "--densities=1", "--devs=cpu1,cpuN"]
expect_list(["--quick", *sel, "--caches=warm,cold"], quick_rows, "--quick's restrictions")
# ... which the full matrix does not have
expect_list([*sel, "--caches=warm"], lines(f"""
    adagrad/impl:c/path:dense/dev:cpu1{t.format(100, 'warm')}
    adagrad/impl:c/path:dense/dev:cpuN{t.format(100, 'warm')}
    adagrad/impl:c/path:sparse_coo/dev:cpu1{t.format(1, 'warm')}
    adagrad/impl:c/path:sparse_coo/dev:cpuN{t.format(1, 'warm')}
    adagrad/impl:c/path:sparse_coo_dup/dev:cpu1{t.format(1, 'warm')}
    adagrad/impl:c/path:sparse_coo_dup/dev:cpuN{t.format(1, 'warm')}
    sgd/impl:c/path:sparse_coo/dev:cpu1{t.format(1, 'warm')}
    sgd/impl:c/path:sparse_coo/dev:cpuN{t.format(1, 'warm')}"""), "the full matrix's cpuN rows")

# sparse_coo_dup: up to 10% in the full default matrix, --densities as given,
# every quick density
t = "adagrad/impl:c/path:sparse_coo_dup/dev:cpu1/dtype:f32/n:65536/density:{}/cache:warm"
dup = ["--sizes=64K", "--dtypes=f32", "--paths=sparse_coo_dup", "--opts=adagrad", *ONE]
expect_list(dup, [t.format(d) for d in ("0.01", "0.1", "1", "10")], "sparse_coo_dup's default densities")
expect_list([*dup, "--densities=30,5"], [t.format(d) for d in ("30", "5")],
            "sparse_coo_dup at the densities given")
expect_list(["--quick", *dup], [t.format(d) for d in ("0.1", "1", "10", "100")],
            "sparse_coo_dup at --quick's densities")

# the device without a device: its stream and dense rows only, warm only;
# no other optimizer, no probe
t = "/dev:cuda/dtype:f32/n:65536"
expect_list(["--sizes=64K", "--dtypes=f32", "--paths=stream,dense,sparse_coo,touch,probe",
             "--opts=adagrad,sgd", "--densities=1", "--devs=cuda", "--caches=warm,cold"], lines(f"""
    stream/impl:c{t}/cache:warm
    adagrad/impl:c/path:dense{t}/density:100/cache:warm"""), "the device's rows without a device")

# the probes (perf/README.md, the prefetch-aware model): gap, random and
# entry at the size, the in-cache entry and math probes at 64K (every
# element: 1/16 of a line in f32, 1/8 in f64) with the first size probed
p = "probe/impl:c/kind:{}/dev:cpu1/dtype:{}/n:{}/gap:{}/cache:warm"
RANDOM = ("1.25", "1.5", "2", "3", "4", "6", "8", "12", "16", "32", "64", "128")


def probes(dtype, n, gaps, entries, in_cache):
    out = [p.format("gap", dtype, n, x) for x in gaps]
    out += [p.format("random", dtype, n, x) for x in RANDOM]
    out += [p.format("entry", dtype, n, x) for x in entries]
    if in_cache:
        out += [p.format("entry", dtype, 65536, entries[-1]), p.format("math", dtype, 65536, entries[-1])]
    return out


QUICK_GAPS = ("1", "4", "16", "64")
GAPS = ("1", "2", "3", "4", "6", "8", "12", "16", "32", "64")
E32, E64 = ("0.5", "0.25", "0.125", "0.0625"), ("0.5", "0.25", "0.125")
expect_list(["--quick", "--paths=probe", "--sizes=1M", "--dtypes=f32", *ONE],
            probes("f32", 1048576, QUICK_GAPS, E32, True), "--quick's probes (22)")
expect_list(["--paths=probe", "--sizes=1M", "--dtypes=f64", *ONE],
            probes("f64", 1048576, GAPS, E64, True), "the full probes in f64 (25 + 2)")
# 64K selected: it is the in-cache probes' size, they are not added
expect_list(["--quick", "--paths=probe", "--sizes=64K", "--dtypes=f32", *ONE],
            probes("f32", 65536, QUICK_GAPS, E32, False), "probes at 64K (20, none in cache)")
# a size of 16M or more selected: only those sizes are probed
expect_list(["--quick", "--paths=probe", "--sizes=1M,16M,32M", "--dtypes=f32", *ONE],
            probes("f32", 16777216, QUICK_GAPS, E32, True)
            + probes("f32", 33554432, QUICK_GAPS, E32, False), "probes at 16M and over only")
expect_list(["--paths=probe", "--sizes=1M", "--devs=cpu1", "--caches=cold"], [],
            "no probe in a cold cache")

# no --paths: every path in the documented order, then the probes
t = "/dev:cpu1/dtype:f32/n:65536/density:100/cache:warm"
expect_list(["--sizes=64K", "--dtypes=f32", "--opts=adagrad", "--densities=100", *ONE],
            [f"stream/impl:c/dev:cpu1/dtype:f32/n:65536/cache:warm",
             f"adagrad/impl:c/path:dense{t}", f"adagrad/impl:c/path:sparse_coo{t}",
             f"touch/impl:c{t}", f"adagrad/impl:c/path:sparse_csr{t}",
             f"adagrad/impl:c/path:masked_dense{t}", f"adagrad/impl:c/path:masked_sparse{t}",
             f"adagrad/impl:c/path:hybrid_coo{t}", f"adagrad/impl:c/path:sparse_coo_dup{t}"]
            + probes("f32", 65536, GAPS, E32, False), "the default paths")

# the whole --quick matrix, counted by hand: 1M f32, densities 0.1 1 10 100,
# cpu1 cpu3 and a device that is not there. adagrad: stream and dense 2 + 2
# (warm, cold) + 1 (cuda, warm) each = 10; sparse_coo, touch, sparse_csr,
# masked_dense, masked_sparse, hybrid_coo 4 densities x 2 devs = 48;
# sparse_coo_dup 4 (cpu1). sparse_adam, sgd, sgd_momentum: 2 paths x 4
# densities (cpu1) = 24. Probes: 22 a dev = 44. 130 in all; without
# OpenMP: 6 + 24 + 4 + 24 + 22 = 80.
rc, out, err = run("--quick", "--list")
n = len(out.splitlines())
check(rc == 0 and n == (130 if OPENMP else 80), f"--quick --list: {n} cases, want "
      f"{130 if OPENMP else 80}")

# ---- a run: the JSON's counters and context ---------------------------------
def bench_json(*args):
    """C.run_json on one thread, warm, f32, Adagrad, a short min time; the
    caller's options last: the last of an option given twice holds."""
    return C.run_json("--devs=cpu1", "--caches=warm", "--dtypes=f32", "--opts=adagrad",
                      "--benchmark_min_time=0.001", *args)


# sparse_coo at 100% of 1024: every element an entry; byte model (README,
# "Byte model"): entries (8 + 4) + p and s lines 4 * 4 * n * (1 - 0^16) =
# 12288 + 16384 = 28672; the check covers every element (n <= 16M)
rc, ctx, runs, err = bench_json("--sizes=1K", "--paths=sparse_coo", "--densities=100")
b = runs[0] if len(runs) == 1 else {}
name = "adagrad/impl:c/path:sparse_coo/dev:cpu1/dtype:f32/n:1024/density:100/cache:warm"
check(rc == 0 and b.get("name") == name, f"one sparse_coo run: exit {rc}, runs "
      f"{[r.get('name') for r in runs]}; stderr {err.strip()[-200:]!r}")
want = {"elements": 1024, "nnz": 1024, "entries": 1024, "threads": 1, "model_bytes": 28672,
        "extra_bytes": 0, "verified_elements": 1024, "verified_touched": 1024,
        "verified_all": 1}
for k, v in want.items():
    check(b.get(k) == v, f"sparse_coo run: counter {k} = {b.get(k)}, want {v}")
check(b.get("pair_steps", 0) >= 3 and b.get("pair_ratio", 0) > 0 and b.get("pair_time_ns", 0) > 0,
      f"sparse_coo run: its pair (dense) timed at least 3 times: {b.get('pair_steps')}")
check(0 < b.get("model_crossover_density", -1) <= 100,
      f"sparse_coo run: a crossover density in (0, 100]: {b.get('model_crossover_density')}")
check(b.get("error_occurred") is None and b.get("iterations", 0) >= 1, "sparse_coo run: no error")
check(ctx.get("mtcs_selection") == "full" and ctx.get("mtcs_cuda") == "no device"
      and ctx.get("mtcs_cuda_why") and "sparse_coo:dense" in ctx.get("mtcs_pairs", "")
      and "touch:sparse_coo" in ctx.get("mtcs_pairs", "")
      and ctx.get("mtcs_verify_all_max_n") == "16777216" and ctx.get("mtcs_threads_max")
      == ("3" if OPENMP else "1"), f"the context: {ctx}")
check(re.search(r"mtcs_bench: 1 cases in [0-9.]+ s, 0 failed verification", err) is not None,
      f"the summary line on stderr: {err.strip()[-200:]!r}")

# dense: 5 * 4 * 1024 = 20480 bytes, no crossover (nothing to cross);
# --no-pair: no pair counters, the context says so; --quick says so
rc, ctx, runs, err = bench_json("--sizes=1K", "--paths=dense", "--no-pair", "--quick")
b = runs[0] if len(runs) == 1 else {}
check(rc == 0 and b.get("model_bytes") == 20480 and "model_crossover_density" not in b
      and "pair_ratio" not in b and "pair_steps" not in b,
      f"dense --no-pair run: exit {rc}, {b}")
check(ctx.get("mtcs_pairs") == "none (--no-pair)" and ctx.get("mtcs_selection") == "quick",
      f"--no-pair --quick context: {ctx}")

# touch draws sparse_coo's entries (the same seed: the same access pattern),
# sparse_coo_dup its elements, 2 entries each (perf/README.md, Names and the
# uncoalesced grad); a masked_sparse grad is drawn on its own
rc, ctx, runs, err = bench_json("--sizes=64K",
                                "--paths=sparse_coo,touch,sparse_coo_dup,masked_sparse",
                                "--densities=1", "--no-pair")
by = {b["name"].split("/")[0] + "/" + b["name"].split("/")[2]: b for b in runs}
coo = by.get("adagrad/path:sparse_coo", {})
touch = by.get("touch/dev:cpu1", {})
dup = by.get("adagrad/path:sparse_coo_dup", {})
ms = by.get("adagrad/path:masked_sparse", {})
nnz = coo.get("nnz", 0)
check(rc == 0 and 0 < nnz < 65536 and touch.get("nnz") == nnz and touch.get("entries") == nnz
      and dup.get("nnz") == nnz and dup.get("entries") == 2 * nnz and ms.get("nnz", nnz) != nnz,
      f"touch and sparse_coo_dup on sparse_coo's elements, masked_sparse not: exit {rc}, nnz "
      f"{[(k, b.get('nnz'), b.get('entries')) for k, b in by.items()]}")

# each row's label is the ISA of the kernel it times: Adagrad's (the context's
# mtcs_isa), the other optimizers' their own (as --callgrind-probe says)
rc, ctx, runs, err = bench_json("--sizes=1K", "--paths=sparse_coo", "--densities=100",
                                "--no-pair", "--opts=adagrad,sgd")
labels = {b["name"].split("/")[0]: b.get("label") for b in runs}
isa = {}
for opt in ("adagrad", "sgd"):
    m = re.search(r" isa=(\S+)$", run(f"--callgrind-probe={opt}/sparse_coo:f32:1K:100")[1].strip())
    isa[opt] = m.group(1) if m else None
check(rc == 0 and labels.get("adagrad") == ctx.get("mtcs_isa") == isa["adagrad"]
      and labels.get("sgd") == isa["sgd"] and isa["sgd"],
      f"labels {labels}, context mtcs_isa {ctx.get('mtcs_isa')}, the probes' {isa}")

# a cold case after its warm one runs on the same data: its first step is
# not checked again, the progress line names the case that was
w = "adagrad/impl:c/path:dense/dev:cpu1/dtype:f32/n:1024/density:100/cache:"
rc, out, err = run("--sizes=1K", "--paths=dense", "--devs=cpu1", "--dtypes=f32", "--opts=adagrad",
                   "--caches=warm,cold", "--no-pair", "--benchmark_min_time=0.001")
check(rc == 0 and f"[1/2] {w}warm: verified 1024 elements (all), 1024 updated" in err
      and f"[2/2] {w}cold: verified by {w}warm " in err,
      f"the progress lines of a warm and a cold case: exit {rc}, {err.strip()[:400]!r}")

# a probe's first step is checked on every element; its progress line says
# how many entries on how many lines: at 64K f32 (16 elements a line, 4096
# lines) the gap-4 probe has element 0 of every 4th line, 1024 entries on
# 1024 lines; the entry probe at gap 0.5 two entries on every line, 8192 on
# 4096
q = "probe/impl:c/kind:{}/dev:cpu1/dtype:f32/n:65536/gap:{}/cache:warm: checked all 65536 elements, "
rc, out, err = run("--quick", "--paths=probe", "--sizes=64K", "--dtypes=f32", *ONE,
                   "--benchmark_filter=kind:(gap/.*/gap:4|entry/.*/gap:0.5)/",
                   "--benchmark_min_time=0.001")
check(rc == 0 and q.format("gap", 4) + "1024 entries on 1024 lines" in err
      and q.format("entry", 0.5) + "8192 entries on 4096 lines" in err,
      f"the probes' progress lines: exit {rc}, {[ln for ln in err.splitlines() if 'probe/' in ln]}")

# the in-cache probes (64K: the entry probe at every element, math) time no
# pair; a probe at the size does (its stream step on the same n); and no
# row's time per step exceeds the wall time of the whole run (a clock read
# the wrong way gives days)
t0 = time.monotonic()
rc, ctx, runs, err = bench_json("--quick", "--paths=probe", "--sizes=1M",
                                "--benchmark_filter=n:65536|kind:gap/.*/gap:64/")
wall = time.monotonic() - t0
rows = {b["name"]: b for b in runs}
p1 = "probe/impl:c/kind:{}/dev:cpu1/dtype:f32/n:{}/gap:{}/cache:warm"
in_cache = [rows.get(p1.format("entry", 65536, 0.0625)), rows.get(p1.format("math", 65536, 0.0625))]
gap = rows.get(p1.format("gap", 1048576, 64))
check(rc == 0 and len(rows) == 3 and gap and all(in_cache)
      and all("pair_ratio" not in r for r in in_cache) and gap.get("pair_steps", 0) >= 3,
      f"the probes' pairs: exit {rc}, rows {sorted(rows)}")
scale = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0}
check(all(0 < r["real_time"] * scale[r["time_unit"]] <= wall for r in rows.values()),
      f"a step's time within the run's {wall:.2f} s: "
      f"{[(r['real_time'], r['time_unit']) for r in rows.values()]}")

# the threads counter (after Google Benchmark's own "threads": 1 in each row,
# so the last of the two keys, which json.loads keeps) is the step's threads
rc, ctx, runs, err = bench_json("--sizes=1K", "--paths=dense", "--devs=cpu1,cpuN", "--no-pair")
thr = [b.get("threads") for b in runs]
check(rc == 0 and thr == ([1, 3] if OPENMP else [1]), f"the threads counters {thr}")

# repetitions: each repetition is a run of the case; the min time in effect
# is the one given, else 0.25 s (--quick 0.05 s) shared by the repetitions
rc, ctx, runs, err = bench_json("--sizes=1K", "--paths=stream", "--benchmark_repetitions=3")
check(rc == 0 and len(runs) == 3 and all(r.get("verified_elements") == 1024 for r in runs)
      and ctx.get("mtcs_min_time") == "0.001 (--benchmark_min_time)",
      f"--benchmark_repetitions=3: exit {rc}, {len(runs)} runs, {ctx.get('mtcs_min_time')}")
for args, want in ((["--benchmark_repetitions=5"], "0.05 (default: 0.25 s over 5 repetitions)"),
                   (["--quick", "--benchmark_repetitions=2"], "0.025 (default: 0.05 s over 2 repetitions)")):
    rc, ctx, runs, err = C.run_json("--sizes=1K", "--paths=stream", "--dtypes=f32", *ONE,
                                    "--no-pair", *args)
    got = ctx.get("mtcs_min_time")
    check(rc == 0 and got == want, f"{' '.join(args)}: mtcs_min_time {got!r}, want {want!r}")

# ---- --callgrind-probe: one step a spec, each described on stdout ------------
def probe_line(opt, path, dtype, n, dens, entries, specified):
    return (f"probe opt={opt} path={path} dtype={dtype} n={n} density={dens} entries={entries} "
            f"specified={specified} isa=")


rc, out, err = run("--callgrind-probe=dense:f32:1K:100,sparse_coo_dup:f64:2K:100,"
                   "sgd_momentum/hybrid_coo:f32:128:100")
got = out.splitlines()
# hybrid_coo at 100% of 128 = 2 rows of 64: 2 entries (rows), 128 specified values
want = [probe_line("adagrad", "dense", "f32", 1024, 100, 1024, 1024),
        probe_line("adagrad", "sparse_coo_dup", "f64", 2048, 100, 4096, 2048),
        probe_line("sgd_momentum", "hybrid_coo", "f32", 128, 100, 2, 128)]
check(rc == 0 and len(got) == 3 and all(g.startswith(w) for g, w in zip(got, want)),
      f"--callgrind-probe list: exit {rc}, {got}, want lines starting {want}; {err.strip()[:200]!r}")

for spec in ("dense:f16:1K:100", "dense:f32:0:100", "dense:f32:1K:0", "dense:f32:1K:101",
             "dense:f32:1K", "bogus:f32:1K:1", "sgd/dense:f32:1K:1", "adam/sparse_coo:f32:1K:1",
             "sparse_csr:f32:1000:1", "hybrid_coo:f32:1000:1", "dense:f32:1Q:1",
             "dense:f32:1K:1x", "dense:f32:1K:100:1", "dense:f32:1K:" + "1" * 130):
    rc, out, err = run(f"--callgrind-probe={spec}")
    check(rc == 2 and f"bad --callgrind-probe={spec} " in err and out == "",
          f"--callgrind-probe={spec[:40]}: exit 2 (got {rc}) and named ({err.strip()[:120]!r})")
# every spec is checked before any runs
rc, out, err = run("--callgrind-probe=dense:f32:1K:100,bogus:f32:1K:1")
check(rc == 2 and out == "" and "bad --callgrind-probe=bogus:f32:1K:1 " in err,
      f"a bad spec after a good one: exit 2 (got {rc}), nothing run (stdout {out.strip()[:80]!r})")
rc, out, err = run("--callgrind-probe=,")
check(rc == 2 and "no spec" in err, f"--callgrind-probe=,: exit 2 (got {rc}), 'no spec' ({err.strip()!r})")

C.finish("cli_check", "all passed")

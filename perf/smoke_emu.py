#!/usr/bin/env python3
"""perf/smoke_emu.py - mtcs_bench's device flow over the emulated device
(mtcs_bench_emu: the device steps built for the host), so that what a GPU
run of the benchmarks does before it times anything is checked in CI
(ctest perf.smoke_emu): the dev:cuda rows it lists, the upload and the
check of each case's first device step against the reference op, the
cuSPARSE pipeline's rows, the pairs on the device, and the context.
The emulation's times mean nothing and are not looked at.

    python3 perf/smoke_emu.py <mtcs_bench_emu>

Exit 0 when every check passed, 1 otherwise (each failure named)."""
import sys

from benchcheck import Checks

if len(sys.argv) != 2:
    sys.exit("usage: smoke_emu.py <mtcs_bench_emu>")
BENCH = sys.argv[1]
C = Checks(BENCH, timeout=240)
run, check = C.run, C.check


# The device's rows (perf/README.md, "The device"): Adagrad only, warm only,
# its paths stream, dense, sparse_coo (twice: the fused step impl:c and the
# cuSPARSE pipeline impl:cusparse), touch (the sparse step's access pattern,
# paired with the fused step), masked_dense, masked_sparse, sparse_coo_dup;
# no CSR, hybrid, probe or other optimizer. In the default path order, per
# dtype: 1 + 1 + 2 x 2 + 2 + 2 + 2 + 2 = 14.
SEL = ["--devs=cuda", "--sizes=64K", "--dtypes=f32,f64", "--densities=1,100",
       "--caches=warm,cold", "--copy-bytes=1M"]


def rows(dt):
    t = f"/dev:cuda/dtype:{dt}/n:65536"
    out = [f"stream/impl:c{t}/cache:warm", f"adagrad/impl:c/path:dense{t}/density:100/cache:warm"]
    for d in (1, 100):
        out += [f"adagrad/impl:c/path:sparse_coo{t}/density:{d}/cache:warm",
                f"adagrad/impl:cusparse/path:sparse_coo{t}/density:{d}/cache:warm"]
    out += [f"touch/impl:c{t}/density:{d}/cache:warm" for d in (1, 100)]
    for path in ("masked_dense", "masked_sparse", "sparse_coo_dup"):
        out += [f"adagrad/impl:c/path:{path}{t}/density:{d}/cache:warm" for d in (1, 100)]
    return out


WANT = rows("f32") + rows("f64")
rc, out, err = run(*SEL, "--list")
got = out.splitlines()
check(rc == 0 and got == WANT,
      f"--list of the device rows: exit {rc}, {len(got)} names, want {len(WANT)}; unexpected "
      f"{[g for g in got if g not in WANT][:4]}, missing {[w for w in WANT if w not in got][:4]}")

# the run: every row's first device step checked (every element: n <= 16M)
# and timed, none skipped
rc, ctx, rows, err = C.run_json(*SEL, "--benchmark_min_time=0.001")
by = {b["name"]: b for b in rows}
check(rc == 0 and sorted(by) == sorted(WANT),
      f"the run: exit {rc}, {len(by)} rows timed of {len(WANT)}; {err.strip()[-300:]!r}")
for name, b in by.items():
    check(b.get("error_occurred") is None and b.get("verified_elements") == 65536
          and b.get("verified_all") == 1 and b.get("elements") == 65536,
          f"{name}: checked on every element, no error: "
          f"{ {k: b.get(k) for k in ('error_message', 'verified_elements', 'verified_all')} }")
    # the pair runs on the device too: dense's is stream, sparse_coo's dense,
    # masked_dense's dense, masked_sparse's, touch's and sparse_coo_dup's sparse_coo
    want_pair = not name.startswith("stream/")
    check(("pair_steps" in b) == want_pair, f"{name}: a pair {'timed' if want_pair else 'none'}")
for dt in ("f32", "f64"):
    for d in (1, 100):
        t = f"/path:sparse_coo/dev:cuda/dtype:{dt}/n:65536/density:{d}/cache:warm"
        c, g = by.get("adagrad/impl:c" + t, {}), by.get("adagrad/impl:cusparse" + t, {})
        dup = by.get(f"adagrad/impl:c/path:sparse_coo_dup/dev:cuda/dtype:{dt}/n:65536/density:{d}"
                     "/cache:warm", {})
        # the pipeline runs on the fused step's grad; the dup grad on its elements,
        # 2 entries each, with a scratch on the device
        check(c.get("nnz") and g.get("nnz") == c.get("nnz") and dup.get("nnz") == c.get("nnz")
              and dup.get("entries") == 2 * c.get("nnz", 0) and dup.get("extra_bytes", 0) > 0,
              f"sparse_coo {dt} {d}%: fused {c.get('nnz')}, pipeline {g.get('nnz')}, dup "
              f"{dup.get('nnz')}/{dup.get('entries')} entries, scratch {dup.get('extra_bytes')}")
check(str(ctx.get("mtcs_cuda", "")).startswith("cuda-emu") and "mtcs_cuda_why" not in ctx
      and float(ctx.get("mtcs_cuda_copy_bytes_per_second", 0)) > 0
      and ctx.get("mtcs_cuda_copy_bytes") == "1048576",
      f"the context names the (emulated) device and its copy bandwidth at --copy-bytes: "
      f"{ {k: v for k, v in ctx.items() if k.startswith('mtcs_cuda')} }")
lines = [ln for ln in err.splitlines() if "/dev:cuda/" in ln and ln.startswith("[")]
check(len(lines) == len(WANT) and all("verified 65536 elements (all)" in ln for ln in lines),
      f"each device row's progress line says what it checked: {lines[:3]}")

# a device case after the CPU case on the same data is loaded and checked
# again (its device copy may hold another case's data), never "verified by"
rc, out, err = run("--devs=cpu1,cuda", "--sizes=64K", "--dtypes=f32", "--paths=masked_sparse",
                   "--densities=1", "--caches=warm", "--copy-bytes=1M", "--no-pair",
                   "--benchmark_min_time=0.001")
t = "adagrad/impl:c/path:masked_sparse/dev:{}/dtype:f32/n:65536/density:1/cache:warm"
check(rc == 0 and f"[1/2] {t.format('cpu1')}: verified 65536 elements" in err
      and f"[2/2] {t.format('cuda')}: verified 65536 elements" in err,
      f"the device row after the CPU row checked on its own: exit {rc}, "
      f"{[ln for ln in err.splitlines() if ln.startswith('[')]}")

# a dress rehearsal of the GPU bundle's bench.quick (spec/gpu-machine.md:
# `mtcs_bench --devs=cuda --quick`), with a 1 MiB copy and a short min time:
# 1M f32 at 0.1 1 10 100 %, stream and dense 1 row each, sparse_coo 4 x 2
# (fused, cuSPARSE), touch, masked_dense, masked_sparse, sparse_coo_dup 4
# each: 26 rows, every one checked on all its 1048576 elements
rc, ctx_q, rows_q, err = C.run_json("--devs=cuda", "--quick", "--copy-bytes=1M",
                                    "--benchmark_min_time=0.001")
check(rc == 0 and len(rows_q) == 26 and all(
    b.get("error_occurred") is None and b.get("verified_elements") == 1048576
    and b.get("verified_all") == 1 for b in rows_q),
    f"bench.quick's device rows: exit {rc}, {len(rows_q)} rows of 26, "
    f"{[b['name'] for b in rows_q if b.get('error_occurred') or b.get('verified_all') != 1][:3]}; "
    f"{err.strip()[-200:]!r}")

rc, out, err = run(*SEL, "--copy-bytes=1X", "--list")
check(rc == 2 and "bad option --copy-bytes=1X (" in err, f"--copy-bytes=1X refused: exit {rc}")

C.finish("smoke_emu", f"all passed ({len(WANT)} device rows checked)")

#!/usr/bin/env python3
"""bench.py - the driver behind `mtcs bench`: C benchmark, torch peers, report.

usage: bench.py --mtcs-bench PATH [--quick] [--out DIR] [--no-torch] [-- ARGS...]

  1. runs PATH (build/release/perf/mtcs_bench) with Google Benchmark JSON output
     to DIR/c.json, its console progress streamed to stderr; ARGS after `--` go
     to it (e.g. --benchmark_filter=stream, --benchmark_min_time=0.5s)
  2. runs perf/torch_peers.py on the same matrix (--c-json) -> DIR/torch.json,
     unless --no-torch or torch is not importable by this Python (said so)
  3. collects machine facts -> DIR/facts.json, and runs reports/render.py:
     DIR/report.md, DIR/report.html, DIR/*.png

DIR defaults to reports/out/<UTC timestamp>/ (git-ignored). It is built in a
temporary directory next to it and renamed at the end: a failed run leaves
nothing but an error message. Exit 0 when the report was written (whether the
targets PASS or MISS: see its summary), 1 when a phase failed, 2 on usage errors.
"""
import argparse
import datetime
import importlib.util
import json
import os
import platform
import re
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.dirname(HERE)
sys.path.insert(0, HERE)
import render  # noqa: E402  (reports/render.py: stream_bandwidth_summary, load_bench)

T0 = time.monotonic()


def progress(msg):
    print(f"[bench {time.monotonic() - T0:6.1f}s] {msg}", file=sys.stderr, flush=True)


class Failure(Exception):
    def __init__(self, msg, code=1):
        super().__init__(msg)
        self.code = code


def run_phase(what, cmd, stdout=None):
    """Run cmd, its output streamed (stdout to our stderr unless captured)."""
    progress(f"{what}: {' '.join(cmd)}")
    t = time.monotonic()
    try:
        p = subprocess.run(cmd, stdout=stdout if stdout else sys.stderr, stderr=sys.stderr,
                           text=True)
    except OSError as e:
        raise Failure(f"{what}: cannot run {cmd[0]}: {e.strerror or e}")
    progress(f"{what}: exit {p.returncode} after {time.monotonic() - t:.1f}s")
    return p


# ---- machine facts ---------------------------------------------------------------------------

def read_first(path, key):
    try:
        with open(path) as f:
            for line in f:
                if line.startswith(key):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return None


def cmd_out(cmd, timeout=20):
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return p.stdout.strip() if p.returncode == 0 and p.stdout.strip() else None


def cmake_cache(binary):
    """CMakeCache.txt entries of the build tree holding the binary."""
    d = os.path.dirname(os.path.abspath(binary))
    for _ in range(4):
        f = os.path.join(d, "CMakeCache.txt")
        if os.path.isfile(f):
            out = {}
            with open(f, errors="replace") as fh:
                for line in fh:
                    m = re.match(r"^([A-Za-z_0-9]+):[A-Z]+=(.*)$", line.rstrip("\n"))
                    if m:
                        out[m.group(1)] = m.group(2)
            return f, out
        d = os.path.dirname(d)
    return None, {}


def collect_facts(args, c_json, t_json, mode):
    facts = {"date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
             "mode": mode}
    facts["cpu"] = read_first("/proc/cpuinfo", "model name") or platform.processor() or "unknown"
    facts["cores"] = os.cpu_count() or 1
    mem = read_first("/proc/meminfo", "MemTotal")
    if mem and mem.split()[0].isdigit():
        facts["memory"] = f"{int(mem.split()[0]) / 2**20:.1f} GiB"
    try:
        c_ctx, c_rows = render.load_bench(c_json, "c")
    except render.RenderError:
        c_ctx, c_rows = {}, []
    bw, row = render.stream_bandwidth_summary(c_rows)
    facts["memory_bandwidth"] = (
        f"{bw / 1e9:.3g} GB/s (stream kernel: 3 reads + 2 writes per element, "
        f"{row.dev} {row.dtype} n={render.fmt_n(row.n)})" if bw else "not measured")
    gpu = cmd_out(["nvidia-smi", "--query-gpu=name,memory.total,driver_version",
                   "--format=csv,noheader"])
    facts["gpu"] = gpu.replace("\n", "; ") if gpu else "none"
    facts["os"] = platform.platform()
    # compiler and flags: the C context when it has them, else the CMake cache
    for k, v in c_ctx.items():
        if re.search(r"compiler|flags", k, re.I) and not isinstance(v, (dict, list)):
            facts[k] = v
    cache_file, cache = cmake_cache(args.mtcs_bench)
    if cache:
        btype = cache.get("CMAKE_BUILD_TYPE", "")
        cc = cache.get("CMAKE_C_COMPILER", "")
        facts.setdefault("c_compiler", (cc + " " + (cmd_out([cc, "--version"]) or "")
                                        .splitlines()[0]).strip() if cc else "unknown")
        flags = " ".join(x for x in (cache.get("CMAKE_C_FLAGS", ""),
                                     cache.get(f"CMAKE_C_FLAGS_{btype.upper()}", "")) if x)
        facts.setdefault("c_flags", f"{flags} ({btype or 'no build type'}; {cache_file})")
    facts["python"] = f"{platform.python_version()} ({sys.executable})"
    tctx = {}
    if t_json and os.path.exists(t_json):
        try:
            tctx, _ = render.load_bench(t_json, "torch")
        except render.RenderError:
            pass
    facts["torch"] = tctx.get("torch_version") or "not run"
    if importlib.util.find_spec("numpy"):
        import numpy
        facts["numpy"] = numpy.__version__
    gb = c_ctx.get("library_version")
    if not gb:
        v = cmd_out(["dpkg-query", "-W", "-f=${Version}", "libbenchmark-dev"])
        gb = f"{v} (Debian libbenchmark-dev)" if v else "unknown"
    facts["google_benchmark"] = gb
    facts["command"] = " ".join([os.path.basename(args.mtcs_bench)] + bench_args(args, "c.json"))
    return facts


def bench_args(args, out):
    a = [f"--benchmark_out={out}", "--benchmark_out_format=json"]
    if args.quick:
        a.append("--quick")
    return a + args.extra


# ---- main -------------------------------------------------------------------------------------

def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    extra = []
    if "--" in argv:
        i = argv.index("--")
        argv, extra = argv[:i], argv[i + 1:]
    ap = argparse.ArgumentParser(
        prog="bench.py", description="Run the mtcs benchmarks (C + torch peers) and render "
        "the report. What `mtcs bench` runs.")
    ap.add_argument("--mtcs-bench", required=True, metavar="PATH",
                    help="the C benchmark executable (build/release/perf/mtcs_bench)")
    ap.add_argument("--quick", action="store_true",
                    help="the small matrix (n=1M, 4 densities, f32): under 2 minutes")
    ap.add_argument("--out", metavar="DIR",
                    help="report directory (default reports/out/<UTC timestamp>); must not "
                    "exist or be empty")
    ap.add_argument("--no-torch", action="store_true", help="skip the torch peers")
    args = ap.parse_args(argv)
    args.extra = extra

    if not (os.path.isfile(args.mtcs_bench) and os.access(args.mtcs_bench, os.X_OK)):
        print(f"bench.py: error: {args.mtcs_bench}: no C benchmark executable there (build it: "
              "cmake --preset release && cmake --build --preset release; it needs Google "
              "Benchmark, libbenchmark-dev)", file=sys.stderr)
        return 2
    if args.out:
        out = os.path.abspath(args.out)
    else:
        stamp = datetime.datetime.now(datetime.timezone.utc).strftime("%Y%m%dT%H%M%SZ")
        out = os.path.join(SRC, "reports", "out", stamp)
    if os.path.exists(out) and (not os.path.isdir(out) or os.listdir(out)):
        print(f"bench.py: error: {out} already exists and is not an empty directory",
              file=sys.stderr)
        return 2
    parent = os.path.dirname(out)
    try:
        os.makedirs(parent, exist_ok=True)
        tmp = tempfile.mkdtemp(prefix=f".{os.path.basename(out)}.tmp-", dir=parent)
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o777 & ~umask)  # mkdtemp makes it 0700
    except OSError as e:
        print(f"bench.py: error: {parent}: cannot create the report directory: "
              f"{e.strerror or e}", file=sys.stderr)
        return 2

    mode = "quick" if args.quick else "full"
    ok = False
    try:
        progress(f"{mode} run; report in {out}")
        c_json = os.path.join(tmp, "c.json")
        p = run_phase("phase 1/3 C benchmark",
                      [os.path.abspath(args.mtcs_bench)] + bench_args(args, c_json))
        if p.returncode != 0:
            raise Failure(f"the C benchmark failed (exit {p.returncode})")
        if not os.path.isfile(c_json):
            raise Failure(f"the C benchmark wrote no {c_json}")
        try:
            _, rows = render.load_bench(c_json, "c")
        except render.RenderError as e:
            raise Failure(str(e))
        bad = [r for r in rows if r.error and r.dev != "cuda"]
        progress(f"phase 1/3 C benchmark: {len(rows)} results, {len(bad)} failed/skipped on cpu")

        t_json = os.path.join(tmp, "torch.json")
        if args.no_torch:
            progress("phase 2/3 torch peers: skipped (--no-torch)")
            t_json = None
        elif not importlib.util.find_spec("torch"):
            progress(f"phase 2/3 torch peers: skipped: torch is not importable by "
                     f"{sys.executable} (create the venv: .ci/setup.sh --full)")
            t_json = None
        else:
            cmd = [sys.executable, os.path.join(SRC, "perf", "torch_peers.py"), "--c-json",
                   c_json, "--out", t_json] + (["--quick"] if args.quick else [])
            p = run_phase("phase 2/3 torch peers", cmd)
            if p.returncode != 0:
                raise Failure(f"the torch peers failed (exit {p.returncode})")

        progress("phase 3/3 report: machine facts")
        facts = collect_facts(args, c_json, t_json, mode)
        with open(os.path.join(tmp, "facts.json"), "w") as f:
            json.dump(facts, f, indent=1)
            f.write("\n")
        cmd = [sys.executable, os.path.join(HERE, "render.py"), "--c", c_json,
               "--facts", os.path.join(tmp, "facts.json"), "--out", tmp]
        if t_json:
            cmd += ["--torch", t_json]
        p = run_phase("phase 3/3 report", cmd, stdout=subprocess.PIPE)
        if p.returncode != 0:
            raise Failure(f"render.py failed (exit {p.returncode})")
        summary = [line for line in p.stdout.splitlines() if not line.startswith("report:")]
        os.replace(tmp, out)
        ok = True
        print("\n".join(summary))
        print(f"report: {os.path.join(out, 'report.md')} (and report.html, *.png, raw JSON)")
        progress(f"done in {time.monotonic() - T0:.1f}s")
        return 0
    except Failure as e:
        print(f"bench.py: error: {e}; no report written", file=sys.stderr)
        return e.code
    except KeyboardInterrupt:
        print("bench.py: interrupted; no report written", file=sys.stderr)
        return 130
    finally:
        if not ok:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())

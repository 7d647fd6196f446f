#!/usr/bin/env python3
"""bench.py - the driver behind `mtcs bench`: C benchmark, torch peers, duels, report.

usage: bench.py --mtcs-bench PATH [--quick] [--out DIR] [--no-torch] [--reps N]
                [--interleave | --no-interleave] [--no-duel] [-- ARGS...]

  1. runs PATH (build/release/perf/mtcs_bench) with Google Benchmark JSON output
     to DIR/c.json, its console progress streamed to stderr, N repetitions
     (--benchmark_repetitions=N; mtcs_bench gives each 1/N of its minimum time)
     and, with --interleave (the default in quick mode), Google Benchmark's
     random interleaving of the repetitions; ARGS after `--` go to it (e.g.
     --benchmark_filter=stream, --benchmark_min_time=0.5)
  2. runs perf/torch_peers.py on the same matrix (--c-json) -> DIR/torch.json,
     unless --no-torch or torch is not importable by this Python (said so)
  3. runs perf/duel.py (C step and peer step timed alternately in one process,
     through <build>/perf/kernels/libmtcs_steps.so) with this Python for the
     torch peers -> DIR/duel-torch.json, and with <source>/.venv-fbgemm/bin/python
     for the FBGEMM peers -> DIR/duel-fbgemm.json when that venv exists (else
     the reason goes into facts.json and the report); --no-duel skips both
  4. collects machine facts -> DIR/facts.json (with the machine's load at the
     start and end of every phase, perf/machine_load.py), and runs
     reports/render.py: DIR/report.md, DIR/report.html, DIR/*.png

Targets are judged on the median of the repetitions; fewer than 5 (--reps) are
allowed, and the report then says its targets were not judged on >= 5.

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
sys.path.insert(0, os.path.join(SRC, "perf"))
import machine_load  # noqa: E402  (perf/machine_load.py: sample, summarize, describe)

MIN_REPS = 5  # targets are judged on at least this many repetitions
TORCH_PEERS = "torch_default,torch_fused,torch_sparse,torch_masked,torch_fused_zeros"
FBGEMM_PEERS = "fbgemm_exact,fbgemm_rowwise"

T0 = time.monotonic()


def progress(msg):
    print(f"[bench {time.monotonic() - T0:6.1f}s] {msg}", file=sys.stderr, flush=True)


class Failure(Exception):
    def __init__(self, msg, code=1):
        super().__init__(msg)
        self.code = code


def run_phase(what, cmd, stdout=None, phases=None, name=None, threads=1):
    """Run cmd, its output streamed (stdout to our stderr unless captured). With
    phases (a list), the machine's load at the phase's start and end is appended
    to it as {"name", "start", "end", "load"} (perf/machine_load.py; threads: the
    most threads the phase runs, for its oversubscribed verdict)."""
    progress(f"{what}: {' '.join(cmd)}")
    t = time.monotonic()
    start = machine_load.sample()
    try:
        p = subprocess.run(cmd, stdout=stdout if stdout else sys.stderr, stderr=sys.stderr,
                           text=True)
    except OSError as e:
        raise Failure(f"{what}: cannot run {cmd[0]}: {e.strerror or e}")
    end = machine_load.sample()
    if phases is not None:
        load = machine_load.summarize([start, end], threads)
        phases.append({"name": name or what, "start": start, "end": end, "load": load})
        progress(f"{what}: {machine_load.describe(load)}")
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
             "mode": mode, "repetitions": args.reps,
             "interleaved": "yes (Google Benchmark's random interleaving)" if args.interleave
             else "no (each case's repetitions back to back)"}
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
    if not any(x.startswith("--benchmark_repetitions") for x in args.extra):
        a.append(f"--benchmark_repetitions={args.reps}")
    if args.interleave and not any(x.startswith("--benchmark_enable_random_interleaving")
                                   for x in args.extra):
        a.append("--benchmark_enable_random_interleaving=true")
    return a + args.extra


def steps_lib(mtcs_bench):
    """libmtcs_steps.so of the build tree holding mtcs_bench (<build>/perf/kernels/)."""
    return os.path.join(os.path.dirname(os.path.abspath(mtcs_bench)), "kernels",
                        "libmtcs_steps.so")


def run_duels(args, tmp, phases, notes):
    """Phase 3: perf/duel.py with this Python (torch peers) and with the FBGEMM
    venv's (FBGEMM peers). Returns the duel JSON files written; a phase that is
    not run puts its reason into notes (facts.json's "duel_notes")."""
    out = []
    duel = os.path.join(SRC, "perf", "duel.py")
    lib = steps_lib(args.mtcs_bench)
    if args.no_duel:
        notes.append("duels not run (--no-duel): the C-vs-peer targets come from separate "
                     "processes")
        progress("phase 3/4 duels: skipped (--no-duel)")
        return out
    for what, why in ((duel, "perf/duel.py is missing from the source tree"),
                      (lib, "the C steps library is not built (it comes with the release "
                            "build: cmake --build --preset release)")):
        if not os.path.isfile(what):
            notes.append(f"duels not run: {why} ({what})")
            progress(f"phase 3/4 duels: skipped: {why} ({what})")
            return out
    common = ["--steps-lib", lib] + (["--quick"] if args.quick else [])
    ncpu = os.cpu_count() or 1
    fb_py = os.path.join(SRC, ".venv-fbgemm", "bin", "python")
    runs = []
    if args.no_torch:
        notes.append("torch duels not run (--no-torch)")
    elif not importlib.util.find_spec("torch"):
        notes.append(f"torch duels not run: torch is not importable by {sys.executable}")
    else:
        runs.append(("torch", sys.executable, TORCH_PEERS))
    if os.access(fb_py, os.X_OK):
        runs.append(("fbgemm", fb_py, FBGEMM_PEERS))
    else:
        notes.append(f"FBGEMM duels not run: no FBGEMM venv ({fb_py} is missing; "
                     ".ci/setup.sh --full creates it)")
    for tag, py, peers in runs:
        f = os.path.join(tmp, f"duel-{tag}.json")
        p = run_phase(f"phase 3/4 duels ({tag})",
                      [py, duel] + common + ["--peers", peers, "--out", f],
                      phases=phases, name=f"duel {tag}", threads=ncpu)
        if p.returncode != 0:
            raise Failure(f"the {tag} duels failed (exit {p.returncode})")
        if not os.path.isfile(f):
            raise Failure(f"the {tag} duels wrote no {f}")
        out.append(f)
    return out


def write_facts(tmp, facts):
    with open(os.path.join(tmp, "facts.json"), "w") as f:
        json.dump(facts, f, indent=1)
        f.write("\n")


# ---- main -------------------------------------------------------------------------------------

def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    extra = []
    if "--" in argv:
        i = argv.index("--")
        argv, extra = argv[:i], argv[i + 1:]
    ap = argparse.ArgumentParser(
        prog="bench.py", description="Run the mtcs benchmarks (C, torch peers, C-vs-peer "
        "duels) and render the report. What `mtcs bench` runs.")
    ap.add_argument("--mtcs-bench", required=True, metavar="PATH",
                    help="the C benchmark executable (build/release/perf/mtcs_bench)")
    ap.add_argument("--quick", action="store_true",
                    help="the small matrix (n=1M, 4 densities, f32): under 2 minutes")
    ap.add_argument("--out", metavar="DIR",
                    help="report directory (default reports/out/<UTC timestamp>); must not "
                    "exist or be empty")
    ap.add_argument("--no-torch", action="store_true", help="skip the torch peers")
    ap.add_argument("--reps", type=int, default=MIN_REPS, metavar="N",
                    help=f"repetitions of every C case (default {MIN_REPS}); the report "
                    "judges each configuration on the median; fewer than "
                    f"{MIN_REPS} are allowed, and the report then says its targets were "
                    f"not judged on >= {MIN_REPS}")
    g = ap.add_mutually_exclusive_group()
    g.add_argument("--interleave", dest="interleave", action="store_true", default=None,
                   help="interleave the repetitions of different cases in time (Google "
                   "Benchmark's random interleaving; default in quick mode): a "
                   "disturbance hits several cases a little, not one case wholly. Each "
                   "run of a case re-makes its data when the case before used another "
                   "size or dtype (the full matrix: seconds per run at 64M)")
    g.add_argument("--no-interleave", dest="interleave", action="store_false",
                   help="each case's repetitions back to back (default in the full matrix)")
    ap.add_argument("--no-duel", action="store_true",
                    help="skip the duels (perf/duel.py): C-vs-peer targets then come from "
                    "the separate runs, said so in the report")
    args = ap.parse_args(argv)
    args.extra = extra
    if args.reps < 1:
        ap.error(f"--reps {args.reps}: needs at least 1 repetition")
    if args.interleave is None:
        args.interleave = args.quick

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
    phases, duel_notes = [], []
    ncpu = os.cpu_count() or 1
    try:
        progress(f"{mode} run, {args.reps} repetitions"
                 f"{' interleaved' if args.interleave else ''}; report in {out}")
        c_json = os.path.join(tmp, "c.json")
        p = run_phase("phase 1/4 C benchmark",
                      [os.path.abspath(args.mtcs_bench)] + bench_args(args, c_json),
                      phases=phases, name="C benchmark", threads=ncpu)
        if p.returncode != 0:
            raise Failure(f"the C benchmark failed (exit {p.returncode})")
        if not os.path.isfile(c_json):
            raise Failure(f"the C benchmark wrote no {c_json}")
        try:
            _, rows = render.load_bench(c_json, "c")
        except render.RenderError as e:
            raise Failure(str(e))
        bad = [r for r in rows if r.error and r.dev != "cuda"]
        progress(f"phase 1/4 C benchmark: {len(rows)} results, {len(bad)} failed/skipped on cpu")

        t_json = os.path.join(tmp, "torch.json")
        if args.no_torch:
            progress("phase 2/4 torch peers: skipped (--no-torch)")
            t_json = None
        elif not importlib.util.find_spec("torch"):
            progress(f"phase 2/4 torch peers: skipped: torch is not importable by "
                     f"{sys.executable} (create the venv: .ci/setup.sh --full)")
            t_json = None
        else:
            cmd = [sys.executable, os.path.join(SRC, "perf", "torch_peers.py"), "--c-json",
                   c_json, "--out", t_json] + (["--quick"] if args.quick else [])
            p = run_phase("phase 2/4 torch peers", cmd, phases=phases, name="torch peers",
                          threads=ncpu)
            if p.returncode != 0:
                raise Failure(f"the torch peers failed (exit {p.returncode})")

        duels = run_duels(args, tmp, phases, duel_notes)

        progress("phase 4/4 report: machine facts")
        facts = collect_facts(args, c_json, t_json, mode)
        facts["duel_notes"] = duel_notes
        cmd = [sys.executable, os.path.join(HERE, "render.py"), "--c", c_json,
               "--facts", os.path.join(tmp, "facts.json"), "--out", tmp]
        if t_json:
            cmd += ["--torch", t_json]
        for d in duels:
            cmd += ["--duel-json", d]
        # the render phase's own load: sampled around it, written after it (render
        # reads facts.json's phases, so it shows this phase's start only)
        start = machine_load.sample()
        facts["phases"] = phases + [{"name": "render", "start": start, "end": None,
                                     "load": machine_load.summarize([start], 1)}]
        write_facts(tmp, facts)
        p = run_phase("phase 4/4 report", cmd, stdout=subprocess.PIPE)
        if p.returncode != 0:
            raise Failure(f"render.py failed (exit {p.returncode})")
        end = machine_load.sample()
        facts["phases"][-1].update(end=end, load=machine_load.summarize([start, end], 1))
        write_facts(tmp, facts)
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

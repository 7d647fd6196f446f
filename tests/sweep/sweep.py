#!/usr/bin/env python3
"""sweep.py - a source-mutation sweep: does the suite fail a wrong implementation?

The hand-written mutants (conformance/plugins/mutants/, tests/mutants.cmake)
each break one rule on purpose. This tool asks the opposite question, without
choosing the mistakes: it changes one token at a time of the implementation's
own source (a `<` into `<=`, `&&` into `||`, a `+` into `-`, a `1` into `0`,
a `!` dropped), rebuilds `mtcs` with that one change, runs every golden file
on the backend (default cuda-emu: the CUDA backend's kernels on the host,
with the CPU reference's host plans, so impl/common, impl/cuda and impl/cpu
are all under test) and records whether the suite failed it (KILLED), passed
it (SURVIVED), or the change did not compile (STILLBORN, not counted).
A survivor is either equivalent (no input can tell it apart: an initial value
that is always overwritten, a bound that the plan already guarantees) or a
gap in the goldens; the README next to this file says how to tell, and
records the last sweep.

    tests/sweep/sweep.py --sample 200 --seed 1         # 200 random sites
    tests/sweep/sweep.py --files 'impl/common/*.h' --list   # the sites only
    tests/sweep/sweep.py --judge --sample 40           # the runner's own code
    tests/sweep/sweep.py --perf --sample 80            # the steps the benchmarks time
    tests/sweep/sweep.py --self-test                   # the lexer and operators

--judge turns the question on the judge: it mutates the runner
(conformance/*.c: the comparison, the poison re-runs, expected errors, the
case loop) and a mutant is KILLED when the right implementation (the CPU
reference) fails a golden file or one of the runner's own ctest entries
fails, cli.mutants.* among them (every hand-written wrong implementation
must still fail, blaming its rule). A survivor is a change of the judge
that CI would not notice.

--perf asks it of the benchmarks: it mutates the fast steps they time
(perf/kernels/: the CPU steps, and the device steps built for the host
through the emulation) and the bench cases' verifier and byte model
(perf/adagrad_cases*.c), and a mutant is KILLED when their tests fail
(PERF_CTEST: bit for bit against the reference ops, the verifier refusing
wrong steps, the byte model's hand-derived values, the race check,
perf.smoke, perf.cli for the driver's options and selection, test_probe
for the probes, perf.duel_selftest for libmtcs_steps). mtcs does not link perf/, so no golden file runs.

It works on a copy: the tracked files of the checkout are copied to
WORK/src (default build/sweep/src) and built in WORK/build (Release, only
`mtcs`, no nvcc, no benchmarks, no plugins), so the checkout is never
touched. Results go to WORK/results.jsonl, one line per mutant, appended as
they come (an interrupted sweep resumes: done mutants are skipped) and
WORK/report.md. Python's standard library only.
"""
import argparse
import contextlib
import fnmatch
import hashlib
import io
import json
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, os.pardir, os.pardir))
DEFAULT_FILES = ("impl/common/*.h", "impl/cuda/*.cu", "impl/cpu/*.c")
# --judge: the runner itself (compare, poison, expected errors, the case
# loop, reports), judged by what CI runs against it
JUDGE_FILES = ("conformance/*.c",)
# --perf: the fast steps the benchmarks time (perf/kernels/: the CPU steps
# and the device steps, built for the host through the emulation) and the
# bench cases' verifier (perf/adagrad_cases*.c), judged by their own tests.
# probe.c (the model's probe kernels: a wrong probe is a wrong estimate, not
# a wrong step) and steps_abi.c (argument checks only, for perf/duel.py)
# are left out; name them with --files to sweep them anyway.
PERF_FILES = ("perf/kernels/adagrad_step.c", "perf/kernels/sparse_optim_step.c",
              "perf/kernels/*.cu", "perf/kernels/*.cuh", "perf/adagrad_cases*.c",
              "perf/kernels/probe.c", "perf/kernels/steps_abi.c", "perf/adagrad_bench.c")
MUTABLE_DIRS = ("impl", "conformance", "perf")
# the executables a --perf mutant is rebuilt into (their digests tell an
# INERT mutant), and the ctest entries it must get through: every step bit
# for bit equal to the reference op on the CPU (test_adagrad_step) and
# through the emulated device (test_cuda_adagrad_emu, the cuSPARSE
# gather/scatter pipeline included), the verifier refusing a wrong step
# (test_bench_verify, on the CPU and the emulated device), the byte model
# and size rules derived by hand (test_bench_model), the race check of the
# emulated launches (.race), and the benchmark's smoke run, which verifies
# every case's first step before timing it (perf.smoke), with every path
# and dtype among its cases (perf.smoke_cases) and every CPU case timed,
# none skipped (perf.smoke_runs), and mtcs_bench's options, selection and
# output as perf/README.md gives them (perf.cli), its device flow over the
# emulated device (perf.smoke_emu: mtcs_bench_emu); the prefetch model's probe
# patterns and steps (test_probe), and the flat C ABI the duels time
# (libmtcs_steps, perf.duel_selftest: its calls against numpy's step). A
# few seconds each.
PERF_TARGETS = ("test_adagrad_step", "test_bench_verify", "test_bench_model",
                "test_cuda_adagrad_emu",
                "test_bench_verify_emu", "test_cuda_adagrad_emu_race",
                "test_bench_verify_emu_race", "test_probe", "mtcs_bench", "mtcs_bench_emu",
                "mtcs_steps")
# their paths in the build
PERF_EXES = PERF_TARGETS[:-3] + ("perf/mtcs_bench", "perf/mtcs_bench_emu",
                                 "perf/kernels/libmtcs_steps.so")
PERF_CTEST = ["-R", r"^(unit\.(test_adagrad_step|test_bench_verify|test_bench_model|"
              r"test_cuda_adagrad_emu|test_bench_verify_emu)(\.race)?|unit\.test_probe|"
              r"perf\.smoke(_cases|_runs|_emu)?|perf\.cli|perf\.duel_selftest)$"]
# the ctest entries a judge mutant must get through: every unit and cli test
# of the runner but those of the emulation, the device, the Python adapters
# (venv), the Python tools that never run mtcs, cli.reseed (torch's draws),
# and unit.test_byteflip (28 s of corrupted golden files, the reader's test:
# run when golden_io.c is swept); cli.mutants.* among them (every wrong
# implementation must still fail, blaming its rule). About 60 s on 2 cores.
def judge_ctest(files):
    """The ctest arguments of a judge sweep of files: unit.test_byteflip
    only when the golden reader (golden_io.c) is among them."""
    skip = "sweep_selftest" if any(f.endswith("golden_io.c") for f in files) else \
        "sweep_selftest|test_byteflip"
    return ["-L", "unit", "-LE", "emulation|cuda|pyadapters|libdevice|race",
            "-E", "^cli\\.(variants_e2e|coverage_report|machine_load|model|verdicts|reseed)$"
            f"|^unit\\.({skip})$"]

# -- lexing C/CUDA C: the tokens a mutation may touch, with their offsets.
#    Comments, string and character literals and preprocessor lines (with
#    their continuations) are never mutated: a change there is not a change
#    of the computation (or is one of a macro, which one site cannot judge).
TOKEN_RE = re.compile(r"""
   (?P<ws>[ \t\r\f\v]+|\n)
  |(?P<comment>//[^\n]*|/\*.*?\*/)
  |(?P<string>"(?:\\.|[^"\\\n])*")
  |(?P<char>'(?:\\.|[^'\\\n])+')
  |(?P<num>(?:0[xX][0-9a-fA-F]+|\d+\.?\d*(?:[eE][+-]?\d+)?|\.\d+(?:[eE][+-]?\d+)?)[uUlLfF]*)
  |(?P<ident>[A-Za-z_]\w*)
  |(?P<op>->|\+\+|--|<<=|>>=|<<|>>|<=|>=|==|!=|&&|\|\||[-+*/%&|^]=|::|[-+*/%<>=!&|^~?:;,.(){}\[\]\#\\])
""", re.S | re.X)


def lex(text):
    """[(kind, value, offset)] of the code tokens of text, preprocessor
    lines left out. Raises ValueError at a character it cannot lex."""
    toks, pos, line_start = [], 0, True
    while pos < len(text):
        m = TOKEN_RE.match(text, pos)
        if not m:
            raise ValueError(f"cannot lex at offset {pos}: {text[pos:pos + 20]!r}")
        kind, val = m.lastgroup, m.group()
        pos = m.end()
        if kind == "ws":
            line_start = line_start or val == "\n"
            continue
        if kind == "comment":
            continue
        if kind == "op" and val == "#" and line_start:
            # a directive: up to the first newline not escaped by a backslash
            while True:
                nl = text.find("\n", pos)
                if nl < 0:
                    pos = len(text)
                    break
                pos = nl + 1
                if not text[:nl].rstrip(" \t\r").endswith("\\"):
                    break
            line_start = True
            continue
        line_start = False
        toks.append((kind, val, m.start()))
    return toks


# -- the mutation operators: (class, token value) -> replacements
ROR = {"<": "<=", "<=": "<", ">": ">=", ">=": ">", "==": "!=", "!=": "=="}
LCR = {"&&": "||", "||": "&&"}
AOR = {"+": "-", "-": "+", "+=": "-=", "-=": "+="}
OPERATORS = ("ror", "lcr", "aor", "not", "const")
# a binary + or - follows an operand; a unary one does not
OPERAND_END = ("ident", "num", "string", "char")
CASTS = ("static_cast", "reinterpret_cast", "const_cast", "dynamic_cast", "template")


def sites(text, operators=OPERATORS):
    """[(offset, old, new, class)] of every mutation of text."""
    toks = lex(text)
    out, angle = [], 0  # angle: open template brackets of a cast
    for k, (kind, val, off) in enumerate(toks):
        prev = toks[k - 1] if k else ("op", ";", -1)
        if kind == "op":
            if "ror" in operators and val in ROR:
                if val == "<" and prev[0] == "ident" and prev[1] in CASTS:
                    angle += 1
                    continue  # a C++ template argument list, not a comparison
                if val == ">" and angle:
                    angle -= 1
                    continue
                out.append((off, val, ROR[val], "ror"))
            elif "lcr" in operators and val in LCR:
                out.append((off, val, LCR[val], "lcr"))
            elif "aor" in operators and val in AOR:
                binary = prev[0] in OPERAND_END or prev[1] in (")", "]")
                if val in ("+=", "-=") or binary:
                    out.append((off, val, AOR[val], "aor"))
            elif "not" in operators and val == "!":
                out.append((off, val, "", "not"))
        elif kind == "num" and "const" in operators:
            m = re.fullmatch(r"(\d+)([uUlL]*)", val)
            if not m or (len(m.group(1)) > 1 and m.group(1).startswith("0")):
                continue  # hex, octal, floating: left alone
            n = int(m.group(1))
            if (k >= 3 and prev[1] == "[" and toks[k - 2][0] == "ident"
                    and toks[k - 3][0] == "ident"):
                continue  # the size in an array declaration (`double f[2]`)
            new = {0: "1", 1: "0"}.get(n, str(n + 1))
            out.append((off, val, new + m.group(2), "const"))
    return out


def line_col(text, off):
    line = text.count("\n", 0, off) + 1
    col = off - (text.rfind("\n", 0, off) + 1) + 1
    return line, col


def mutant_id(path, text, site):
    off, old, new, cls = site
    line, col = line_col(text, off)
    return f"{path}:{line}:{col}:{cls}:{old}->{new or '(dropped)'}"


def apply(text, site):
    off, old, new, _ = site
    assert text[off:off + len(old)] == old, (off, old)
    return text[:off] + new + text[off + len(old):]


# -- the copy, the build, a run

def sh(cmd, cwd=None, timeout=None, env=None):
    return subprocess.run(cmd, cwd=cwd, timeout=timeout, env=env, capture_output=True, text=True)


WHAT = {"impl": "mtcs only", "judge": "the runner and its tests",
        "perf": "the fast steps, the bench cases and their tests"}


def prepare(work, root, jobs, mode="impl"):
    """WORK/src: the tracked files of root; WORK/build: what mode's mutants
    are judged with, built from them (impl: mtcs; judge: everything the
    runner's tests need, the mutant plugins too; perf: PERF_TARGETS)."""
    src, build = os.path.join(work, "src"), os.path.join(work, "build")
    files = sh(["git", "ls-files", "-z"], cwd=root).stdout.split("\0")
    head = sh(["git", "rev-parse", "HEAD"], cwd=root).stdout.strip()
    dirty = sh(["git", "status", "--porcelain", "--untracked-files=no"], cwd=root).stdout.strip()
    # every run syncs the copy (an interrupted run may have left a mutant there)
    copied = 0
    for f in files:
        if not f:
            continue
        d = os.path.join(src, f)
        os.makedirs(os.path.dirname(d), exist_ok=True)
        if not same_bytes(os.path.join(root, f), d):
            # copyfile, not copy2: a restored file must look newer than the
            # objects a mutant of it left, or they are never rebuilt
            shutil.copyfile(os.path.join(root, f), d)
            copied += 1
    print(f"sweep: {src} holds the {len(files) - 1} tracked files ({copied} copied now)",
          flush=True)
    if not os.path.exists(os.path.join(build, "CMakeCache.txt")):
        print(f"sweep: configuring the sweep build (Release, {WHAT[mode]})", flush=True)
        gen = ["-G", "Ninja"] if shutil.which("ninja") else []
        r = sh(["cmake", "-S", src, "-B", build, *gen, "-DCMAKE_BUILD_TYPE=Release",
                "-DMT_WITH_CUDA=OFF", f"-DMT_WITH_BENCH={'ON' if mode == 'perf' else 'OFF'}",
                f"-DMT_WITH_MUTANTS={'ON' if mode == 'judge' else 'OFF'}",
                "-DMT_WITH_EMU_FAULTS=OFF", "-DMT_WITH_EMU_LIBDEVICE=OFF",
                f"-DMT_WITH_EMU_RACE={'ON' if mode == 'perf' else 'OFF'}"])
        if r.returncode:
            sys.exit(f"sweep: configure failed:\n{r.stdout[-3000:]}{r.stderr[-3000:]}")
    print(f"sweep: building {WHAT[mode]} (unmutated)", flush=True)
    r = build_mtcs(build, jobs, mode)
    if r.returncode:
        sys.exit(f"sweep: the unmutated build failed:\n{r.stdout[-3000:]}{r.stderr[-3000:]}")
    # a dirty tree is named by its diff too: results of one edit of the
    # tests are not taken for another's (a resumed sweep skips done mutants)
    diff = hashlib.sha256(sh(["git", "diff", "HEAD", "--binary"], cwd=root).stdout.encode())
    return src, build, head + (f"+dirty:{diff.hexdigest()[:12]}" if dirty else "")


def same_bytes(a, b):
    if not os.path.exists(b):
        return False
    with open(a, "rb") as fa, open(b, "rb") as fb:
        return fa.read() == fb.read()


def digest(build, mode="impl"):
    """One hash of the executables a mode's mutants are judged with."""
    h = hashlib.sha256()
    for exe in (PERF_EXES if mode == "perf" else ("mtcs",)):
        with open(os.path.join(build, exe), "rb") as f:
            h.update(f.read())
    return h.hexdigest()


def build_mtcs(build, jobs, mode="impl", timeout=1800):
    """mtcs; under --judge every target (the tests link the runner too);
    under --perf PERF_TARGETS."""
    target = {"impl": ["--target", "mtcs"], "judge": [],
              "perf": ["--target", *PERF_TARGETS]}[mode]
    return sh(["cmake", "--build", build, *target, "-j", str(jobs)], timeout=timeout)


def run_ctest(build, jobs, timeout, select):
    """The ctest entries select picks (judge_ctest, PERF_CTEST) in the sweep
    build: {"ctest: name": "Failed"} of each one that did not pass."""
    try:
        # a test runs in seconds unmutated; a mutant that hangs one is
        # killed by its timeout, so keep that short
        r = sh(["ctest", "--test-dir", build, *select, "-j", str(jobs),
                "--timeout", "90"], timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"ctest: (the whole run)": "TIMEOUT"}
    failed = ctest_failures(r.stdout)
    if r.returncode and not failed:
        failed["ctest: (ctest)"] = f"exit {r.returncode}: {(r.stderr or r.stdout)[-200:]}"
    if not re.search(r"tests passed", r.stdout):
        failed.setdefault("ctest: (ctest)", "no summary: " + (r.stderr or r.stdout)[-200:])
    return failed


def ctest_failures(out):
    """{"ctest: name": "Failed"} from ctest's output: its FAILED block only
    (the "did not run" block lists the SKIPs, exit 77, which are not
    failures)."""
    failed, in_failed = {}, False
    for ln in out.splitlines():
        if ln.startswith("The following tests"):
            in_failed = "FAILED" in ln
            continue
        m = re.match(r"\s*\d+ - (\S+) \((.+)\)\s*$", ln)
        if m and in_failed:
            failed[f"ctest: {m.group(1)}"] = m.group(2)
    return failed


def judge_suite(build, src, jobs, timeout, files=()):
    """A runner mutant: the right implementation (cpu) must still pass every
    golden file, and the runner's tests (wrong implementations must fail,
    corrupt files be refused, messages name the case) must pass."""
    v, failing, ex, rs = run_suite(build, runs_for("", src, ["cpu"]), timeout)
    t0 = time.time()
    failing.update(run_ctest(build, jobs, timeout, judge_ctest(files)))
    return ("KILLED" if failing else "SURVIVED"), failing, ex, rs + time.time() - t0


def perf_suite(build, jobs, timeout):
    """A mutant of the fast steps or of the bench cases: their tests
    (PERF_CTEST) must fail. The golden files are not run: mtcs does not
    link perf/."""
    t0 = time.time()
    failing = run_ctest(build, jobs, timeout, PERF_CTEST)
    return ("KILLED" if failing else "SURVIVED"), failing, [], time.time() - t0


def goldens(src):
    g = os.path.join(src, "golden")
    return sorted(os.path.join(g, f) for f in os.listdir(g) if f.endswith(".h5"))


def runs_for(path, src, backends):
    """The mtcs runs a mutant of path gets, as CI runs them (CMakeLists.txt's
    conformance.*): [(label, backend, profile, [golden files], env)]. Every
    backend gets the torch profile's files and numpy_ma.h5 (an npma* file:
    numpy_ma.h5 only); cuda-emu also sparse_blas.h5 with MTCS_CUSPARSE=0
    (the products it otherwise hands to the emulated cuSPARSE, on the
    backend's own kernels: CI's conformance.sparse_blas.cuda-emu.own). A
    file of impl/cuda is not run on cpu, which never executes it."""
    files = goldens(src)
    npma = [f for f in files if os.path.basename(f) == "numpy_ma.h5"]
    torch = [f for f in files if f not in npma]
    blas = [f for f in files if os.path.basename(f) == "sparse_blas.h5"]
    base = os.path.basename(path)
    runs = []
    for b in backends:
        if b == "cpu" and path.startswith("impl/cuda/"):
            continue
        if not base.startswith("npma"):
            runs.append((f"{b}", b, "torch", torch, None))
            if b.startswith("cuda") and blas:
                runs.append((f"{b}.own", b, "torch", blas, {"MTCS_CUSPARSE": "0"}))
        runs.append((f"{b}", b, "numpy_ma", npma, None))
    return runs


def run_suite(build, runs, timeout):
    """(verdict, failing case counts per file, example failing ids, seconds)."""
    mtcs = os.path.join(build, "mtcs")
    failing, examples, t0 = {}, [], time.time()
    rj = os.path.join(build, "sweep-report.json")
    for label, backend, profile, files, env in runs:
        prof = ["--exact-version"] if profile == "torch" else ["--profile", "numpy_ma"]
        cmd = [mtcs, "run", "--backend", backend, "--require-all", "--level", "strict", *prof,
               "--report-json", rj]
        for f in files:
            cmd += ["--golden", f]
        if os.path.exists(rj):
            os.unlink(rj)
        try:
            r = sh(cmd, timeout=timeout, env=dict(os.environ, **env) if env else None)
        except subprocess.TimeoutExpired:
            return "KILLED", {f"{label}: (the whole run)": "TIMEOUT"}, [], time.time() - t0
        if r.returncode not in (0, 1):
            return ("KILLED", {f"{label}: (mtcs)": f"exit {r.returncode}"},
                    [(r.stderr or r.stdout).strip()[-300:]], time.time() - t0)
        if r.returncode == 1:
            try:
                with open(rj) as fh:
                    rep = json.load(fh)
            except (OSError, ValueError):
                return "KILLED", {f"{label}: (mtcs)": "exit 1, no report"}, [], time.time() - t0
            n0 = len(failing)
            for c in rep["cases"]:
                if c["status"] not in ("PASS", "XFAIL"):
                    key = f"{label}: {os.path.basename(c['file'])}"
                    failing[key] = failing.get(key, 0) + 1
                    if len(examples) < 3:
                        examples.append(f"{label}: {c['id']} {c['status']}: {c['message'][:160]}")
            if len(failing) == n0:
                failing[f"{label}: (mtcs)"] = "exit 1: " + (r.stderr or r.stdout).strip()[-200:]
    return ("KILLED" if failing else "SURVIVED"), failing, examples, time.time() - t0


def path_match(path, pat):
    """fnmatch, but a `*` or `?` never crosses a `/` (`conformance/*.c` is not
    conformance/plugins/mutants/x.c)."""
    return (path.count("/") == pat.count("/") and
            all(fnmatch.fnmatchcase(a, b) for a, b in zip(path.split("/"), pat.split("/"))))


def collect(src, patterns, operators):
    """{relpath: (text, [site])} of the files matching patterns, in order."""
    out = {}
    for pat in patterns:
        hits = sorted(p for p in (os.path.relpath(os.path.join(dp, f), src)
                                  for top in MUTABLE_DIRS
                                  for dp, _, fs in os.walk(os.path.join(src, top))
                                  for f in fs) if path_match(p, pat))
        if not hits:
            sys.exit(f"sweep: --files {pat!r} matches no file under "
                     f"{' or '.join(d + '/' for d in MUTABLE_DIRS)}")
        for p in hits:
            if p not in out:
                text = open(os.path.join(src, p)).read()
                out[p] = (text, sites(text, operators))
    return out


VERDICTS = ("KILLED", "SURVIVED", "INERT", "STILLBORN")


def report(work, results, source):
    rows = list(results.values())
    n = {v: sum(1 for r in rows if r["verdict"] == v) for v in VERDICTS}
    counted = n["KILLED"] + n["SURVIVED"]
    per_file = {}
    for r in rows:
        per_file.setdefault(r["file"], dict.fromkeys(VERDICTS, 0))[r["verdict"]] += 1
    score = (f"score {100.0 * n['KILLED'] / counted:.1f}% of {counted}" if counted
             else "no mutant ran")
    lines = [f"# Mutation sweep ({source})", "",
             f"{len(rows)} mutants: {n['KILLED']} killed, {n['SURVIVED']} survived, "
             f"{n['INERT']} inert (the same executable: not counted), {n['STILLBORN']} "
             f"stillborn (did not compile: not counted); {score}",
             "", "| file | killed | survived | inert | stillborn |",
             "| --- | --- | --- | --- | --- |"]
    for f in sorted(per_file):
        c = per_file[f]
        lines.append(f"| {f} | " + " | ".join(str(c[v]) for v in VERDICTS) + " |")
    lines += ["", "## Survivors", ""]
    for r in sorted(rows, key=lambda r: r["id"]):
        if r["verdict"] == "SURVIVED":
            lines.append(f"- `{r['id']}`: `{r['line'].strip()}`")
    path = os.path.join(work, "report.md")
    with open(path + ".tmp", "w") as fh:
        fh.write("\n".join(lines) + "\n")
    os.replace(path + ".tmp", path)
    return path, n


def exit_of(argv):
    """(exit status, stderr) of main(argv), which is expected to refuse it."""
    err = io.StringIO()
    try:
        with contextlib.redirect_stderr(err):
            main(argv)
        code = 0
    except SystemExit as e:
        code = e.code
    return code, err.getvalue()


def self_test():
    """The lexer and the operators on a snippet with every trap in it."""
    text = ('#include <stdio.h>\n#define M(a) ((a) < 2 && \\\n  (a) > 0)\n'
            '/* a < b */ // c && d\n'
            'int f(int a, int b) { const char *s = "x < y"; char c = \'<\';\n'
            '  if (a <= b && !(a == 0)) return a + 1;\n'
            '  b += -a; return static_cast<int>(b) - 10 + 0x1f + 1.5; }\n'
            'void g(void) { double f[2]; f[1] = 0; }\n')
    got = [(line_col(text, s[0])[0], s[1], s[2], s[3]) for s in sites(text)]
    want = [(6, "<=", "<", "ror"), (6, "&&", "||", "lcr"), (6, "!", "", "not"),
            (6, "==", "!=", "ror"), (6, "0", "1", "const"), (6, "+", "-", "aor"),
            (6, "1", "0", "const"),
            (7, "+=", "-=", "aor"), (7, "-", "+", "aor"), (7, "10", "11", "const"),
            (7, "+", "-", "aor"), (7, "+", "-", "aor"), (8, "1", "0", "const"),
            (8, "0", "1", "const")]
    if got != want:
        print("self-test FAILED\n got:  " + "\n       ".join(map(str, got)) +
              "\n want: " + "\n       ".join(map(str, want)))
        return 1
    mutated = apply(text, sites(text)[0])
    if "if (a < b &&" not in mutated:
        print("self-test FAILED: apply")
        return 1
    if not path_match("conformance/compare.c", "conformance/*.c") or \
            path_match("conformance/plugins/mutants/x.c", "conformance/*.c"):
        print("self-test FAILED: path_match (a * must not cross a /)")
        return 1
    out = ("The following tests did not run:\n\t 12 - unit.test_cuda_x (Skipped)\n\n"
           "The following tests FAILED:\n\t125 - cli.mutants.0 (Failed)\n"
           "\t 83 - unit.test_compare (SEGFAULT)\nErrors while running CTest\n")
    if ctest_failures(out) != {"ctest: cli.mutants.0": "Failed",
                               "ctest: unit.test_compare": "SEGFAULT"}:
        print(f"self-test FAILED: ctest_failures gave {ctest_failures(out)}")
        return 1
    for argv, want in ((["--judge", "--backend", "cpu"], "--backend does not apply to --judge"),
                       (["--perf", "--backend", "cpu"], "--backend does not apply to --perf"),
                       (["--judge", "--perf"], "pick one")):
        code, said = exit_of(argv + ["--list"])
        if code != 2 or want not in said:
            print(f"self-test FAILED: {' '.join(argv)} gave exit {code!r}, {said!r}")
            return 1
    if not path_match("perf/adagrad_cases_cuda.c", "perf/adagrad_cases*.c") or \
            path_match("perf/kernels/probe.c", PERF_FILES[0]):
        print("self-test FAILED: PERF_FILES")
        return 1
    print(f"self-test passed: {len(got)} sites; comments, strings, characters, "
          "preprocessor lines (continued too), unary minus, template brackets, "
          "hex and floating literals and array sizes in declarations left alone; "
          "globs within one directory; ctest's FAILED block, not its SKIPs; "
          "--backend refused under --judge and --perf; --judge with --perf refused")
    return 0


def main(argv=None):
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)  # --list | head
    ap = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0],
        epilog="Reads nothing but the checkout; writes only under WORK. "
               "See tests/sweep/README.md for what a survivor means.",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--files", nargs="+", default=None, metavar="GLOB",
                    help="source files to mutate, globs relative to the root "
                         f"(default: {' '.join(DEFAULT_FILES)}; under --judge "
                         f"{' '.join(JUDGE_FILES)}; under --perf {' '.join(PERF_FILES)})")
    ap.add_argument("--judge", action="store_true",
                    help="sweep the runner, not an implementation: a mutant of the runner is "
                         "killed when the CPU reference fails a golden file or one of the "
                         "runner's ctest entries fails (cli.mutants.* among them: every wrong "
                         "implementation must still fail); builds everything, with the mutant "
                         "plugins, in WORK (default build/sweep-judge)")
    ap.add_argument("--perf", action="store_true",
                    help="sweep the fast steps the benchmarks time (perf/kernels/, the device "
                         "steps through the emulation), the bench cases' verifier and byte "
                         "model, the probes, the steps ABI and the driver mtcs_bench: a "
                         "mutant is killed when their tests fail (bit-for-bit against the "
                         "reference ops, the verifier, the race check, perf.smoke*, perf.cli, "
                         "test_probe, perf.duel_selftest); builds them with the benchmarks in "
                         "WORK (default build/sweep-perf)")
    ap.add_argument("--operators", default=",".join(OPERATORS),
                    help="mutation classes, comma-separated: ror (relational), lcr (&& ||), "
                         "aor (+ -), not (drop a !), const (0->1, 1->0, n->n+1); default all")
    ap.add_argument("--sample", type=int, default=0, metavar="N",
                    help="mutate N sites drawn at random (default 0: every site)")
    ap.add_argument("--seed", type=int, default=1, help="the draw's seed (default 1)")
    ap.add_argument("--only", metavar="ID", action="append", default=[],
                    help="run the mutant with this id (file:line:col:class:old->new); repeatable")
    ap.add_argument("--backend", default=None,
                    help="the backends every golden file runs on, comma-separated (default "
                         "cuda-emu,cpu: as CI runs them; cuda-emu also runs sparse_blas.h5 on "
                         "its own kernels, MTCS_CUSPARSE=0; cpu never runs impl/cuda); not "
                         "with --judge, which runs the CPU reference and the runner's tests, "
                         "nor with --perf, which runs the steps' tests")
    ap.add_argument("--work", default=None,
                    help="the copy, its build and the results (default build/sweep, "
                         "build/sweep-judge under --judge, build/sweep-perf under --perf)")
    ap.add_argument("--jobs", type=int, default=2, help="build jobs (default 2)")
    ap.add_argument("--timeout", type=int, default=600,
                    help="seconds one mutant's run of one profile may take (default 600)")
    ap.add_argument("--budget", type=float, default=0, metavar="MIN",
                    help="stop starting mutants after MIN minutes (default: no limit)")
    ap.add_argument("--list", action="store_true", help="print the drawn sites and stop")
    ap.add_argument("--self-test", action="store_true", help="check the lexer and operators")
    a = ap.parse_args(argv)
    if a.self_test:
        return self_test()
    ops = tuple(o for o in a.operators.split(",") if o)
    if a.judge and a.perf:
        ap.error("--judge and --perf are two sweeps: the runner's, the fast steps'; pick one")
    mode = "judge" if a.judge else "perf" if a.perf else "impl"
    if a.files is None:
        a.files = list({"judge": JUDGE_FILES, "perf": PERF_FILES, "impl": DEFAULT_FILES}[mode])
    if a.work is None:
        a.work = os.path.join(ROOT, "build", {"judge": "sweep-judge", "perf": "sweep-perf",
                                              "impl": "sweep"}[mode])
    if a.judge:
        if a.backend is not None:
            ap.error("--backend does not apply to --judge: a runner mutant is judged by the "
                     "CPU reference on every golden file and by the runner's ctest entries")
        a.backend = "judge:cpu"  # recorded with each result; the runs are judge_suite's
    elif a.perf:
        if a.backend is not None:
            ap.error("--backend does not apply to --perf: a mutant of the fast steps is "
                     "judged by their tests (the device steps through the emulation)")
        a.backend = "perf"  # recorded with each result; the runs are perf_suite's
    elif a.backend is None:
        a.backend = "cuda-emu,cpu"
    backends = [b for b in a.backend.split(",") if b]
    bad = [o for o in ops if o not in OPERATORS]
    if bad:
        ap.error(f"unknown operator class {bad[0]!r} (known: {', '.join(OPERATORS)})")
    work = os.path.abspath(a.work)
    os.makedirs(work, exist_ok=True)
    if a.list:
        src = ROOT
        cands = collect(src, a.files, ops)
    else:
        src, build, source = prepare(work, ROOT, a.jobs, mode)
        base = digest(build, mode)
        cands = collect(src, a.files, ops)

        def suite(path):
            if a.judge:
                return judge_suite(build, src, a.jobs, a.timeout, list(cands))
            if a.perf:
                return perf_suite(build, a.jobs, a.timeout)
            return run_suite(build, runs_for(path, src, backends), a.timeout)
        # the unmutated build must pass, or every mutant would look killed
        v, failing, ex, rs = suite("")
        if v != "SURVIVED":
            sys.exit(f"sweep: the unmutated build fails the suite on {a.backend} "
                     f"({failing}; {ex[:1]}): fix that first")
        what = "the steps' tests" if a.perf else f"every golden file on {a.backend}"
        print(f"sweep: the unmutated build passes {what} "
              f"({rs:.0f} s)", flush=True)
    allm = [(p, text, s) for p, (text, ss) in cands.items() for s in ss]
    ids = {mutant_id(p, text, s): (p, text, s) for p, text, s in allm}
    if a.only:
        missing = [i for i in a.only if i not in ids]
        if missing:
            sys.exit(f"sweep: no such mutant {missing[0]!r} (try --list)")
        chosen = [ids[i] for i in a.only]
    elif a.sample:
        chosen = random.Random(a.seed).sample(allm, min(a.sample, len(allm)))
    else:
        chosen = allm
    chosen.sort(key=lambda m: (m[0], m[2][0]))  # by file: one file's objects rebuilt per run
    print(f"sweep: {len(allm)} sites in {len(cands)} files; {len(chosen)} chosen", flush=True)
    if a.list:
        for p, text, s in chosen:
            print(mutant_id(p, text, s))
        return 0
    out = os.path.join(work, "results.jsonl")
    results = {}
    if os.path.exists(out):
        for ln in open(out):
            r = json.loads(ln)
            if r.get("source") == source and r.get("backend") == a.backend:
                results[r["id"]] = r
    t_start, last = time.time(), None
    with open(out, "a") as fh:
        for k, (p, text, s) in enumerate(chosen, 1):
            mid = mutant_id(p, text, s)
            if mid in results and (results[mid].get("tce") or
                                   results[mid]["verdict"] != "SURVIVED"):
                continue  # done (a survivor from before the inert check: again)
            if a.budget and time.time() - t_start > a.budget * 60:
                print(f"sweep: --budget {a.budget} min reached; {len(chosen) - k + 1} not run")
                break
            path = os.path.join(src, p)
            if last and last != p:
                restore(src, last, cands[last][0])
            last = p
            with open(path, "w") as f:
                f.write(apply(text, s))
            t0 = time.time()
            b = build_mtcs(build, a.jobs, mode)
            line = text.splitlines()[line_col(text, s[0])[0] - 1]
            rec = {"id": mid, "file": p, "class": s[3], "line": line, "source": source,
                   "backend": a.backend, "tce": True}
            if b.returncode:
                rec.update(verdict="STILLBORN", build_s=round(time.time() - t0, 1))
            elif digest(build, mode) == base:
                # the compiler made the same executable: the change is dead
                # code here (an inactive #if branch, a device-only path) or
                # provably the same computation; nothing to run
                rec.update(verdict="INERT", build_s=round(time.time() - t0, 1))
            else:
                bs = time.time() - t0
                v, failing, ex, rs = suite(p)
                rec.update(verdict=v, failing=failing, examples=ex, build_s=round(bs, 1),
                           run_s=round(rs, 1))
            results[mid] = rec
            fh.write(json.dumps(rec) + "\n")
            fh.flush()
            kills = ", ".join(f"{f} {c}" for f, c in rec.get("failing", {}).items())
            print(f"[{k}/{len(chosen)}] {mid}  {rec['verdict']}"
                  f"{'  (' + kills + ')' if kills else ''}  {time.time() - t0:.0f} s", flush=True)
    if last:
        restore(src, last, cands[last][0])
        build_mtcs(build, a.jobs, mode)
    path, n = report(work, {k: v for k, v in results.items()
                            if k in {mutant_id(p, t, s) for p, t, s in chosen}}, source)
    print(f"sweep: {n['KILLED']} killed, {n['SURVIVED']} survived, {n['INERT']} inert, "
          f"{n['STILLBORN']} stillborn; {path}")
    return 0


def restore(src, rel, text):
    """Put the original text of rel back, so that the next file's mutants
    build against an unmutated tree."""
    with open(os.path.join(src, rel), "w") as f:
        f.write(text)


if __name__ == "__main__":
    sys.exit(main())

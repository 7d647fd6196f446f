/* main.c - the `mtcs` command line: run, validate, list, ops, bench. */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "adapter.h"
#include "golden_guard.h"
#include "mt_core.h"
#include "poison.h"
#include "runner.h"

#ifndef MT_SOURCE_DIR
#define MT_SOURCE_DIR "."
#endif

static void usage(FILE *f) {
  fputs(
      "mtcs " MTCS_VERSION " - the mtcs conformance runner: checks an implementation of PyTorch's\n"
      "masked/sparse tensor semantics against golden HDF5 files generated from torch.\n"
      "\n"
      "usage:\n"
      "  mtcs run  [options]   run golden cases against a backend\n"
      "  mtcs validate --adapter \"COMMAND\" [options]\n"
      "                        run golden cases against an adapter process (a library mtcs\n"
      "                        cannot load: Python, another runtime); see mtcs validate --help\n"
      "  mtcs list [options]   list golden cases: id, op, rules, profile, call (forward, or\n"
      "                        backward: a gradient case), expect\n"
      "  mtcs ops              the op table of spec/include/mt/ops.def: id, name, family, rules\n"
      "  mtcs bench [options]  benchmark the Adagrad paths (C and torch) and render a report;\n"
      "                        see mtcs bench --help\n"
      "  mtcs help, --help     this text;  mtcs --version\n"
      "\n"
      "options (run, validate and list):\n"
      "  --golden FILE...   golden file(s) to read; repeatable (default: every *.h5 in the\n"
      "                     golden directory)\n"
      "  --golden-dir DIR   the golden directory (default: $MTCS_GOLDEN_DIR, else an\n"
      "                     installed mtcs's <prefix>/share/mtcs/golden, else\n"
      "                     " MT_SOURCE_DIR "/golden)\n"
      "  --filter GLOB      only case ids matching this fnmatch glob; repeatable (any matches);\n"
      "                     a filter that matches no case is an error (exit 2)\n"
      "  --backend B        cpu (default), cuda, cuda-emu (the CUDA backend's kernels run on\n"
      "                     the host: no GPU needed; spec/cuda-backend.md), or PATH.so: a\n"
      "                     plugin exporting mt_plugin_entry (spec/plugin-abi.md), built\n"
      "                     from spec/include/mt/mt.h alone\n"
      "  --profile P        the cases of profile P only: torch (torch's MaskedTensor rules),\n"
      "                     numpy_ma (numpy.ma's rules, goldens from numpy.ma), or all\n"
      "                     (run: default torch; list: default all); a backend without a\n"
      "                     kernel table for a profile reports its cases NOT_SUPPORTED;\n"
      "                     an unknown profile is an error\n"
      "options (run and validate):\n"
      "  --require-all      NOT_SUPPORTED and SKIP count as failures: every selected case must\n"
      "                     execute and pass (our own backends run with it)\n"
      "  --level L          semantic (default): compare masks and specified values only;\n"
      "                     masked-out output data is never compared (torch documents it\n"
      "                     as undefined). strict: also compare the data torch leaves under\n"
      "                     masked-out outputs where the case records it (RED-3's fills:\n"
      "                     sum 0, prod 1, amin +inf, mean NaN ...). Each rule of\n"
      "                     spec/SEMANTICS.md names its level; our backends run strict\n"
      "  --torch-version V  expect the results of torch V (e.g. 1.13.1; default: each golden\n"
      "                     file's own torch_version): a case's outputs@torch-V group or\n"
      "                     error@torch-V attribute where it has one, else its outputs;\n"
      "                     a result that matches another recorded version instead is\n"
      "                     EXPECTED_DIVERGENCE naming it. A V no file or case records is\n"
      "                     an error listing the known versions (exit 2)\n"
      "  --exact-version    a result that matches only another recorded torch version is\n"
      "                     FAIL, not EXPECTED_DIVERGENCE: hold the implementation to one\n"
      "                     torch (our backends and the mutants run with it)\n"
      "  --poison-runs N    re-run each case that has masked inputs N times (0-7, default 7)\n"
      "                     with its masked-out data set to NaN, +inf, -inf, +1e30, -1e30,\n"
      "                     -0.0 and a seeded random pattern, in that order; the masks and\n"
      "                     the specified outputs must not change (rule MASK-9)\n"
      "  --no-poison        the same as --poison-runs 0 (for speed or debugging)\n"
      "  --timeout S        each case runs in its own process; kill it after S seconds\n"
      "                     (TIMEOUT; default 10)\n"
      "  --batch N          cases per worker process (default 64; cuda and cuda-emu 1024, since\n"
      "                     each worker initialises CUDA afresh); a crash, a hang or a\n"
      "                     DEVICE_ERROR ends a worker and a fresh one takes the cases after it\n"
      "  --no-fork          run cases inside mtcs (for a debugger): no CRASH/TIMEOUT isolation\n"
      "  --report-json F    write a JSON report to F (atomically: nothing if the run aborts):\n"
      "                     every case with its status, rules and profile, each failure with\n"
      "                     the command that replays it; reports/coverage.py F --html P\n"
      "                     renders reports as a coverage page (README, Coverage report)\n"
      "  --junit F          write a JUnit XML report to F, one testsuite per golden file\n"
      "  --expect F         the expectations file: known failures, one per line,\n"
      "                       <case glob> <status> <expires YYYY-MM-DD> <owner> <reason>\n"
      "                     a case yielding the status it expects is XFAIL (not a failure;\n"
      "                     NOT_SUPPORTED then passes --require-all), one that passes is\n"
      "                     XPASS (a failure: remove the entry); an expired or malformed\n"
      "                     entry is an input error naming its line (exit 2), an entry that\n"
      "                     matches no case of the golden files fails the run\n"
      "  --repro-dir DIR    for each failing case write DIR/<id>.h5 (the case alone) and\n"
      "                     DIR/<id>.sh (the command that replays it)\n"
      "  -v, --verbose      print every case, not only the failures\n"
      "\n"
      "examples:\n"
      "  mtcs run                                      every golden file on the CPU backend\n"
      "  mtcs run --golden golden/reduce.h5 --filter 'sum.*' -v\n"
      "  mtcs run --backend build/release/plugins/example.so --junit junit.xml\n"
      "  mtcs run --backend cuda --require-all --report-json run.json --repro-dir repro/\n"
      "  mtcs run --filter 'amin.*' --no-poison       without the poison re-runs\n"
      "  mtcs list --filter '*.f64.*'\n"
      "  gdb --args mtcs run --no-fork --filter sum.masked.f32.all\n"
      "  mtcs bench --quick                            C + torch benchmarks and a report, < 2 min\n"
      "\n"
      "output:\n"
      "  FAIL, ERROR, CRASH and TIMEOUT cases are always printed with the case id, what differs\n"
      "  (output, first differing index, expected vs got), the tolerance, the rules and the torch\n"
      "  call; -v prints the others too. Progress goes to stderr (a running count on a terminal,\n"
      "  else a line per golden file). The last lines are a count per status and\n"
      "      N passed, N failed, N skipped\n"
      "  (passed = PASS + EXPECTED_DIVERGENCE, failed = FAIL + ERROR + CRASH + TIMEOUT,\n"
      "  skipped = NOT_SUPPORTED + SKIP; with --require-all skipped cases count as failed),\n"
      "  after a line with the executed / not supported / skipped counts.\n"
      "  Besides the golden outputs every executed case is checked for two rules of the\n"
      "  runner's own: CALL-1 (inputs unchanged, outputs share no memory with them) and\n"
      "  MASK-9 (poison invariance, above); their failures name that rule.\n"
      "\n"
      "case statuses:\n",
      f);
  for (int s = 0; s < MT_CS__COUNT; s++)
    fprintf(f, "  %-20s %s\n", mt_case_status_name((mt_case_status)s),
            mt_case_status_doc((mt_case_status)s));
  fputs(
      "  a run that stops early (an input error mid-run) is INCOMPLETE: exit 2, no reports.\n"
      "  mtcs validate: a run in which a case got no verdict from the adapter (CRASH,\n"
      "  TIMEOUT, protocol ERROR, not run) is INCOMPLETE too: exit 1, reports written.\n"
      "\n"
      "exit codes:\n"
      "  0   every executed case passed and at least one executed (NOT_SUPPORTED and SKIP\n"
      "      allowed unless --require-all)\n"
      "  1   some case is FAIL, ERROR, CRASH or TIMEOUT; an INCOMPLETE mtcs validate run\n"
      "  2   usage or input error: bad option, unreadable or corrupt golden file, unknown\n"
      "      backend, plugin that cannot be loaded or has another ABI version, a filter that\n"
      "      matches nothing, an unwritable report; also INCOMPLETE runs\n"
      "  77  nothing was executed: the backend cannot run here (cuda without a device, mtcs\n"
      "      built without CUDA), it supports none of the selected cases, or no case has the\n"
      "      profile; the reason is printed as \"SKIP: ...\" (with --require-all an executed-\n"
      "      nothing run on an available backend is a failure, exit 1)\n",
      f);
  fprintf(f,
      "\n"
      "environment:\n"
      "  MTCS_GOLDEN_DIR      the default --golden-dir\n"
      "  MTCS_CHECK_PARSE     always: parse every golden file in a child process first, even\n"
      "                       one a MANIFEST vouches for (spec/golden-format.md)\n"
      "  MTCS_CHECK_TIMEOUT   seconds that child may take (default %g)\n"
      "  MTCS_TODAY           the date --expect entries expire against (YYYY-MM-DD)\n"
      "  MTCS_CUSPARSE        0: cuda and cuda-emu compute sparse products with their own\n"
      "                       kernels instead of cuSPARSE (cuda-emu's cuSPARSE is its\n"
      "                       documented contract on the host, which checks every call;\n"
      "                       spec/cuda-backend.md)\n"
      "  MTCS_EMU_ORDER       cuda-emu's thread order: reverse (default), forward,\n"
      "                       shuffle:SEED (spec/cuda-backend.md, \"The emulation\")\n",
      MT_GOLDEN_CHECK_TIMEOUT_S);
}

static void validate_usage(FILE *f) {
  fputs(
      "mtcs validate - check a library mtcs cannot load as a plugin (a Python package, a\n"
      "library behind another runtime) through an adapter: a process that speaks the adapter\n"
      "protocol (spec/adapter-protocol.md, protocol 1) on its stdin and stdout.\n"
      "\n"
      "usage:\n"
      "  mtcs validate --adapter \"COMMAND\" [options]\n"
      "\n"
      "mtcs starts /bin/sh -c COMMAND once, in its own process group and in mtcs's working\n"
      "directory, with $MTCS_ADAPTER_DIR naming a temporary directory for the request and\n"
      "response files (removed at the end); the adapter's stderr is shown prefixed\n"
      "\"adapter: \". After the handshake (the hello names the library, its version and the\n"
      "profiles it answers) mtcs sends one request per golden case and per poison re-run\n"
      "(MASK-9) and judges the outputs exactly as it judges a plugin's: the same comparison,\n"
      "levels, torch versions, expectations and reports. The cases run in the mtcs process\n"
      "itself, one at a time; the adapter process is the isolation.\n"
      "\n"
      "options: every option of mtcs run (see mtcs --help) except --backend, --no-fork,\n"
      "--timeout and --batch, and:\n"
      "  --adapter CMD      the adapter command (required), e.g.\n"
      "                     \"python3 conformance/adapters/numpy_ma.py\"\n"
      "  --case-timeout S   seconds an adapter may take to answer one request (default 30);\n"
      "                     a later answer is TIMEOUT, the adapter is killed and restarted\n"
      "  --hello-timeout S  seconds an adapter may take to say hello (default 120: an\n"
      "                     adapter may import torch)\n"
      "\n"
      "what the adapter does wrong, and what the case gets:\n"
      "  exits or closes stdout before answering     CRASH (exit status or signal); restarted\n"
      "  no answer within --case-timeout             TIMEOUT; killed, restarted\n"
      "  an answer that is not a protocol line       ERROR \"adapter protocol: ...\"; killed,\n"
      "                                              restarted\n"
      "  OK but the response file is missing or      ERROR naming the file and the problem\n"
      "  malformed\n"
      "  a case of a profile its hello does not list NOT_SUPPORTED, not sent\n"
      "  Three failed starts in a row stop the run: the cases left are not run (SKIP).\n"
      "  A run in which any case got no verdict (CRASH, TIMEOUT, protocol ERROR, not run) is\n"
      "  INCOMPLETE: the summary says so (with the reasons), so does the JSON report\n"
      "  (\"incomplete\": true, \"incomplete_cases\", \"incomplete_reasons\"), and the exit\n"
      "  status is 1 whatever passed.\n"
      "\n"
      "examples:\n"
      "  mtcs validate --adapter \"python3 conformance/adapters/numpy_ma.py\" --profile numpy_ma\n"
      "  mtcs validate --adapter \"build/release/adapter_fixture honest\"\n"
      "        --golden golden/masked.h5 --require-all --level strict\n"
      "        (the C fixture adapter of the tests: the CPU reference behind the protocol)\n"
      "  mtcs validate --adapter \"build/release/adapter_fixture crash-at-3\" --filter 'neg.*'\n"
      "        (one CRASH, the adapter restarted, INCOMPLETE, exit 1)\n"
      "\n"
      "exit codes: 0 every executed case passed (none lost); 1 failures or INCOMPLETE; 2 usage\n"
      "or input error, an adapter that does not start or fails its handshake (no hello within\n"
      "--hello-timeout, garbage, another protocol version), before any case; 77 nothing\n"
      "executed.\n",
      f);
}

/* v as a finite number of seconds > 0 in *t: 0, else -1. */
static int seconds_of(const char *v, double *t) {
  char *end = NULL;
  errno = 0;
  *t = v ? strtod(v, &end) : NAN;
  return v && !errno && !*end && *t > 0 && isfinite(*t) ? 0 : -1;
}

static int usage_error(const char *cmd, const char *fmt, const char *arg) {
  fprintf(stderr, "mtcs%s%s: ", cmd ? " " : "", cmd ? cmd : "");
  fprintf(stderr, fmt, arg);
  fputs(" (see mtcs --help)\n", stderr);
  return MT_EXIT_USAGE;
}

static int cmd_ops(void) {
  printf("%-4s %-16s %-8s %s\n", "id", "name", "family", "rules");
  for (int id = 1; id < MT_OP__END; id++) {
    const char *name = mt_op_name((mt_op)id);
    if (!name) continue;
    printf("%-4d %-16s %-8s %s\n", id, name, mt_op_family((mt_op)id), mt_op_rules((mt_op)id));
  }
  return MT_EXIT_OK;
}

/* The value of option `opt` at argv[*i]: "--opt=value" or "--opt value". */
static const char *opt_value(int argc, char **argv, int *i, const char *opt, int *matched) {
  size_t n = strlen(opt);
  const char *a = argv[*i];
  *matched = 0;
  if (strncmp(a, opt, n) != 0) return NULL;
  if (a[n] == '=') {
    *matched = 1;
    return a + n + 1;
  }
  if (a[n] != 0) return NULL;
  *matched = 1;
  if (*i + 1 >= argc) return NULL;
  return argv[++*i];
}

/* ---- mtcs bench: exec the Python driver (reports/bench.py) ------------------ */

static void bench_usage(FILE *f) {
  fputs(
      "mtcs bench - benchmark the Adagrad paths (dense, sparse COO/CSR, hybrid, masked) of the\n"
      "C implementation against the stream kernel's bandwidth, a prefetch-aware model and its\n"
      "probes, torch's own optimizers and FBGEMM's sparse Adagrad, and render a report\n"
      "(DESIGN.md, Performance method). SparseAdam and SGD with sparse gradients run on the\n"
      "same sparse COO and hybrid grads, in a section of the report of their own.\n"
      "\n"
      "usage:\n"
      "  mtcs bench [--quick] [--out DIR] [--no-torch] [--no-duel] [--reps N]\n"
      "             [--interleave | --no-interleave] [--python PY] [-- ARGS...]\n"
      "\n"
      "It runs\n"
      "  PY " MT_SOURCE_DIR "/reports/bench.py --mtcs-bench <dir of mtcs>/perf/mtcs_bench ...\n"
      "which runs, each phase with the machine's load recorded at its start and end:\n"
      "  1. the C benchmark (Google Benchmark), N repetitions of every case -> c.json\n"
      "  2. perf/torch_peers.py on the same sizes (torch's absolute times) -> torch.json\n"
      "  3. perf/duel.py: our step and each peer's timed ALTERNATELY in one process\n"
      "     (torch's default, fused, sparse, MaskedTensor and fused-on-zeros steps with this\n"
      "     Python; FBGEMM's exact and rowwise sparse Adagrad with .venv-fbgemm's) ->\n"
      "     duel-torch.json, duel-fbgemm.json: the C-vs-peer targets are judged on these\n"
      "  4. reports/render.py -> report.md, report.html, PNG plots, facts.json\n"
      "Every figure is the median of the repetitions with [min, max]; a configuration\n"
      "measured beside a neighbour (other runnable tasks, CPU steal) is left out of its\n"
      "target and listed; a target with every configuration left out is DISTURBED.\n"
      "\n"
      "options:\n"
      "  --quick       the small matrix: n=1M, densities 0.1 1 10 100 %, f32, 1 and all\n"
      "                threads; a few minutes on 2 cores. Default: the full matrix (n up to\n"
      "                64M, 7 densities, f32 and f64, warm and cold cache; an hour or more)\n"
      "  --out DIR     the report directory; it must not exist or be empty (default\n"
      "                " MT_SOURCE_DIR "/reports/out/<UTC time>/). Built in a temporary\n"
      "                directory and renamed at the end: a failed run leaves nothing\n"
      "  --no-torch    skip the torch peers and the torch duels (skipped anyway, with a note,\n"
      "                when the Python has no torch; FBGEMM's duels still run)\n"
      "  --no-duel     skip the duels (C-vs-peer targets then come from separate runs,\n"
      "                and the report says they are not paired)\n"
      "  --reps N      repetitions of every C case and duel (default 5; targets are judged\n"
      "                on medians of >= 5)\n"
      "  --interleave, --no-interleave\n"
      "                shuffle the C cases' repetitions in time (Google Benchmark's random\n"
      "                interleaving; default on with --quick, off for the full matrix)\n"
      "  --python PY   the Python to run the driver with (default\n"
      "                " MT_SOURCE_DIR "/.venv/bin/python when it exists, else\n"
      "                python3 on $PATH); torch, numpy and matplotlib come\n"
      "                from its environment (.ci/setup.sh --full); without matplotlib the report\n"
      "                has no plots\n"
      "  -- ARGS...    the rest goes to mtcs_bench: Google Benchmark flags and its own\n"
      "                (--sizes=, --paths=, --densities=, ...: mtcs_bench --help)\n"
      "\n"
      "examples:\n"
      "  mtcs bench --quick                                   quick report in reports/out/<time>/\n"
      "  mtcs bench --out /tmp/r                              the full matrix\n"
      "  mtcs bench --quick --no-torch -- --benchmark_filter='stream|path:(dense|sparse_coo)/'\n"
      "  mtcs bench --quick --reps 9                          medians of 9 repetitions\n"
      "  mtcs bench --python /usr/bin/python3 --no-torch      no venv: tables only, no plots\n"
      "\n"
      "output:\n"
      "  progress on stderr (a line per phase, with the elapsed time and load, and the\n"
      "  benchmarks' own output); on stdout one line per target, PASS, MISS, DISTURBED, N/A\n"
      "  or \"no device\", e.g.\n"
      "      PASS      C sparse_coo at 1% vs C dense >= 5x faster: worst 8.6x (cpu1 f32 ...)\n"
      "  then the report's path. Timings are noisy on shared machines: compare ratios from one\n"
      "  run; for CI regression checks use instruction counts, never wall time.\n"
      "\n"
      "exit codes:\n"
      "  0   the report was written (whatever the targets say)\n"
      "  1   a phase failed: the C benchmark, a peer's correctness check, the renderer\n"
      "  2   usage error; mtcs_bench not built (it needs Google Benchmark: libbenchmark-dev);\n"
      "      no Python or no driver script; the output directory exists\n",
      f);
}

/* The first executable file `name` in $PATH, into buf. */
static int find_on_path(const char *name, char *buf, size_t size) {
  const char *path = getenv("PATH");
  if (!path || !*path) path = "/usr/local/bin:/usr/bin:/bin";
  while (*path) {
    size_t len = strcspn(path, ":");
    int n = snprintf(buf, size, "%.*s/%s", (int)len, len ? path : ".", name);
    if (n > 0 && (size_t)n < size && access(buf, X_OK) == 0) return 1;
    path += len + (path[len] == ':');
  }
  return 0;
}

static int cmd_bench(int argc, char **argv) {
  int quick = 0, no_torch = 0, no_duel = 0, interleave = -1, extra = argc;
  const char *out = NULL, *python = NULL, *reps = NULL;
  for (int i = 2; i < argc; i++) {
    const char *a = argv[i], *v;
    int m = 0;
    if (!strcmp(a, "--")) {
      extra = i + 1;
      break;
    } else if (!strcmp(a, "--quick")) {
      quick = 1;
    } else if (!strcmp(a, "--no-torch")) {
      no_torch = 1;
    } else if (!strcmp(a, "--no-duel")) {
      no_duel = 1;
    } else if (!strcmp(a, "--interleave") || !strcmp(a, "--no-interleave")) {
      interleave = !strcmp(a, "--interleave");
    } else if ((v = opt_value(argc, argv, &i, "--reps", &m)), m) {
      char *end = NULL;
      long r = v ? strtol(v, &end, 10) : 0;
      if (!v || !*v || *end || r < 1 || r > 1000)
        return usage_error("bench", "--reps needs a count from 1 to 1000, not '%s'", v ? v : "");
      reps = v;
    } else if ((v = opt_value(argc, argv, &i, "--out", &m)), m) {
      if (!v || !*v) return usage_error("bench", "%s needs a directory", "--out");
      out = v;
    } else if ((v = opt_value(argc, argv, &i, "--python", &m)), m) {
      if (!v || !*v) return usage_error("bench", "%s needs a Python executable", "--python");
      python = v;
    } else if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
      bench_usage(stdout);
      return MT_EXIT_OK;
    } else {
      return usage_error("bench",
                         a[0] == '-' ? "unknown option '%s' (Google Benchmark flags go after --)"
                                     : "unexpected argument '%s'",
                         a);
    }
  }

  /* mtcs_bench lives in the build tree next to mtcs: <dir of mtcs>/perf/mtcs_bench */
  char self[PATH_MAX], bench[PATH_MAX + 32], py[PATH_MAX];
  ssize_t len = readlink("/proc/self/exe", self, sizeof self - 1);
  if (len <= 0) {
    if (!realpath(argv[0], self)) {
      fprintf(stderr, "mtcs bench: cannot find the mtcs executable's directory: %s\n",
              strerror(errno));
      return MT_EXIT_USAGE;
    }
  } else {
    self[len] = 0;
  }
  char *slash = strrchr(self, '/');
  if (slash) *slash = 0;
  snprintf(bench, sizeof bench, "%s/perf/mtcs_bench", slash ? self : ".");
  if (access(bench, X_OK) != 0) {
    fprintf(stderr,
            "mtcs bench: %s: %s: the C benchmark is not built; it needs Google Benchmark\n"
            "  (apt-get install libbenchmark-dev; then cmake --preset release && cmake --build "
            "--preset release)\n",
            bench, strerror(errno));
    return MT_EXIT_USAGE;
  }
  const char *driver = MT_SOURCE_DIR "/reports/bench.py";
  if (access(driver, R_OK) != 0) {
    fprintf(stderr, "mtcs bench: %s: %s: the benchmark driver is missing from the source tree\n",
            driver, strerror(errno));
    return MT_EXIT_USAGE;
  }
  if (python && strchr(python, '/')) {
    if (access(python, X_OK) != 0) {
      fprintf(stderr, "mtcs bench: --python %s: %s\n", python, strerror(errno));
      return MT_EXIT_USAGE;
    }
    snprintf(py, sizeof py, "%s", python);
  } else if (python) {
    if (!find_on_path(python, py, sizeof py)) {
      fprintf(stderr, "mtcs bench: --python %s: not found on $PATH\n", python);
      return MT_EXIT_USAGE;
    }
  } else if (access(MT_SOURCE_DIR "/.venv/bin/python", X_OK) == 0) {
    snprintf(py, sizeof py, "%s", MT_SOURCE_DIR "/.venv/bin/python");
  } else if (!find_on_path("python3", py, sizeof py)) {
    fprintf(stderr, "mtcs bench: no Python: neither " MT_SOURCE_DIR
                    "/.venv/bin/python (.ci/setup.sh --full) nor python3 on $PATH; "
                    "name one with --python\n");
    return MT_EXIT_USAGE;
  }

  char **args = calloc((size_t)argc + 16, sizeof *args);
  if (!args) {
    fprintf(stderr, "mtcs: out of memory\n");
    return MT_EXIT_USAGE;
  }
  int n = 0;
  args[n++] = py;
  args[n++] = (char *)driver;
  args[n++] = "--mtcs-bench";
  args[n++] = bench;
  if (quick) args[n++] = "--quick";
  if (no_torch) args[n++] = "--no-torch";
  if (no_duel) args[n++] = "--no-duel";
  if (interleave >= 0) args[n++] = interleave ? "--interleave" : "--no-interleave";
  if (reps) {
    args[n++] = "--reps";
    args[n++] = (char *)reps;
  }
  if (out) {
    args[n++] = "--out";
    args[n++] = (char *)out;
  }
  if (extra < argc) {
    args[n++] = "--";
    for (int i = extra; i < argc; i++) args[n++] = argv[i];
  }
  args[n] = NULL;
  fflush(NULL);
  execv(py, args);
  fprintf(stderr, "mtcs bench: cannot run %s: %s\n", py, strerror(errno));
  free(args);
  return MT_EXIT_USAGE;
}

/* An installed mtcs (cmake --install: <prefix>/bin/mtcs) reads the goldens
 * installed beside it, <prefix>/share/mtcs/golden; 0 when this binary has
 * none there (a build tree: the source tree's golden/ then). */
static int installed_golden_dir(char *buf, size_t len) {
  char exe[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (n <= 0) return 0;
  exe[n] = 0;
  char *slash = strrchr(exe, '/');
  if (!slash) return 0;
  *slash = 0; /* <prefix>/bin */
  int w = snprintf(buf, len, "%s/../share/mtcs/golden", exe);
  if (w < 0 || (size_t)w >= len) return 0;
  struct stat st;
  return stat(buf, &st) == 0 && S_ISDIR(st.st_mode);
}

int main(int argc, char **argv) {
  if (argc < 2) {
    usage(stderr);
    return MT_EXIT_USAGE;
  }
  const char *cmd = argv[1];
  if (!strcmp(cmd, "help") || !strcmp(cmd, "--help") || !strcmp(cmd, "-h")) {
    usage(stdout);
    return MT_EXIT_OK;
  }
  if (!strcmp(cmd, "--version")) {
    printf("mtcs %s (golden format %d, plugin ABI %u)\n", MTCS_VERSION, MT_GOLDEN_FORMAT_VERSION,
           MT_ABI_VERSION);
    return MT_EXIT_OK;
  }
  if (!strcmp(cmd, "ops")) {
    if (argc > 2) return usage_error("ops", "unexpected argument '%s'", argv[2]);
    return cmd_ops();
  }
  if (!strcmp(cmd, "bench")) return cmd_bench(argc, argv);
  int is_run = !strcmp(cmd, "run"), is_list = !strcmp(cmd, "list");
  int is_validate = !strcmp(cmd, "validate");
  if (!is_run && !is_list && !is_validate) return usage_error(NULL, "unknown command '%s'", cmd);
  int is_exec = is_run || is_validate; /* runs cases */

  int rc = MT_EXIT_USAGE;
  const char **golden = calloc((size_t)argc, sizeof *golden);
  const char **filter = calloc((size_t)argc, sizeof *filter);
  if (!golden || !filter) {
    fprintf(stderr, "mtcs: out of memory\n");
    goto out;
  }
  const char *env_dir = getenv("MTCS_GOLDEN_DIR");
  char installed[PATH_MAX];
  mt_session_opts o = {
      .backend = "cpu",
      .golden = golden,
      .golden_dir = env_dir && env_dir[0]                          ? env_dir
                    : installed_golden_dir(installed, sizeof installed) ? installed
                                                                        : MT_SOURCE_DIR "/golden",
      .filter = filter,
      .profile = NULL, /* run: torch; list: every profile */
      .self = argv[0],
      .argc = argc,
      .argv = (const char *const *)argv,
      .run = {.timeout_s = 10.0, .no_fork = 0, .exec = {.poison_runs = MT_POISON__COUNT}},
      .out = stdout,
      .diag = stderr,
      .progress_tty = isatty(fileno(stderr)),
  };
#define BAD(...)                 \
  do {                           \
    rc = usage_error(__VA_ARGS__); \
    goto out;                    \
  } while (0)
  for (int i = 2; i < argc; i++) {
    const char *a = argv[i], *v;
    int m = 0;
#define OPT(name, run_only)                                                   \
  (v = opt_value(argc, argv, &i, name, &m), m && (!(run_only) || is_exec))
    if (is_validate && (OPT("--backend", 1) || OPT("--timeout", 1) || OPT("--batch", 1) ||
                        !strcmp(a, "--no-fork")))
      BAD(cmd, "%s is not an option of mtcs validate: the adapter is the implementation and its "
               "own process (--case-timeout limits a request)", a);
    if (is_validate && OPT("--adapter", 1)) {
      if (!v || !*v) BAD(cmd, "%s needs a command, e.g. --adapter \"python3 my_adapter.py\"",
                         "--adapter");
      o.adapter = v;
      continue;
    }
    if (is_validate && (OPT("--case-timeout", 1) || OPT("--hello-timeout", 1))) {
      int hello = !strncmp(a, "--hello-timeout", 15);
      double t;
      if (seconds_of(v, &t))
        BAD(cmd, hello ? "--hello-timeout needs a number of seconds > 0, not '%s'"
                       : "--case-timeout needs a number of seconds > 0, not '%s'", v ? v : "");
      *(hello ? &o.hello_timeout_s : &o.case_timeout_s) = t;
      continue;
    }
    if (OPT("--golden", 0)) {
      if (!v) BAD(cmd, "%s needs a file", "--golden");
      golden[o.n_golden++] = v;
      while (i + 1 < argc && argv[i + 1][0] != '-') golden[o.n_golden++] = argv[++i];
    } else if (OPT("--golden-dir", 0)) {
      if (!v) BAD(cmd, "%s needs a directory", "--golden-dir");
      o.golden_dir = v;
    } else if (OPT("--filter", 0)) {
      if (!v) BAD(cmd, "%s needs a glob", "--filter");
      filter[o.n_filter++] = v;
    } else if (OPT("--backend", 1)) {
      if (!v) BAD(cmd, "%s needs cpu, cuda or a plugin path", "--backend");
      o.backend = v;
    } else if (OPT("--profile", 0)) {
      if (!v) BAD(cmd, "%s needs a profile name", "--profile");
      if (!mt_profile_known(v) && strcmp(v, "all") != 0) {
        fprintf(stderr, "mtcs %s: unknown profile '%s' (expected one of: %s, all)\n", cmd, v,
                mt_profile_list());
        goto out;
      }
      o.profile = v;
    } else if (OPT("--level", 1)) {
      if (!v || mt_level_from_name(v, &o.run.exec.level) != 0) {
        fprintf(stderr, "mtcs %s: unknown level '%s' (expected one of: %s)\n", cmd, v ? v : "",
                mt_level_list());
        goto out;
      }
    } else if (OPT("--torch-version", 1)) {
      if (!v || !*v) BAD(cmd, "%s needs a torch version such as 1.13.1", "--torch-version");
      if (!strncmp(v, "torch-", 6)) v += 6; /* a label works too */
      char label[256];
      snprintf(label, sizeof label, "torch-%s", v);
      if (strlen(v) > 200 || !mt_golden_variant_label_valid(label))
        BAD(cmd, "--torch-version '%s' is not a torch version as torch.__version__ writes it "
                 "(e.g. 1.13.1, 2.4.0a0+git1234abc)", v);
      o.run.exec.torch_version = v;
    } else if (OPT("--poison-runs", 1)) {
      char *end = NULL;
      long n = v ? strtol(v, &end, 10) : -1;
      if (!v || !*v || *end || n < 0 || n > MT_POISON__COUNT)
        BAD(cmd, "--poison-runs needs a count from 0 to 7, not '%s'", v ? v : "");
      o.run.exec.poison_runs = (int)n;
    } else if (is_exec && !strcmp(a, "--no-poison")) {
      o.run.exec.poison_runs = 0;
    } else if (is_exec && !strcmp(a, "--exact-version")) {
      o.run.exec.exact_version = 1;
    } else if (is_exec && !strcmp(a, "--require-all")) {
      o.require_all = 1;
    } else if (OPT("--report-json", 1)) {
      if (!v) BAD(cmd, "%s needs a file", "--report-json");
      o.report_json = v;
    } else if (OPT("--expect", 1)) {
      if (!v) BAD(cmd, "%s needs a file", "--expect");
      o.expect = v;
    } else if (OPT("--junit", 1)) {
      if (!v) BAD(cmd, "%s needs a file", "--junit");
      o.junit = v;
    } else if (OPT("--repro-dir", 1)) {
      if (!v) BAD(cmd, "%s needs a directory", "--repro-dir");
      o.repro_dir = v;
    } else if (OPT("--timeout", 1)) {
      if (seconds_of(v, &o.run.timeout_s))
        BAD(cmd, "--timeout needs a number of seconds > 0, not '%s'", v ? v : "");
    } else if (OPT("--batch", 1)) {
      char *end = NULL;
      long n = v ? strtol(v, &end, 10) : -1;
      if (!v || !*v || *end || n < 1 || n > MT_BATCH_MAX)
        BAD(cmd, "--batch needs a count of cases from 1 to 65536, not '%s'", v ? v : "");
      o.batch = (int)n;
    } else if (is_run && !strcmp(a, "--no-fork")) {
      o.run.no_fork = 1;
    } else if (is_exec && (!strcmp(a, "-v") || !strcmp(a, "--verbose"))) {
      o.verbose = 1;
    } else if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
      if (is_validate)
        validate_usage(stdout);
      else
        usage(stdout);
      rc = MT_EXIT_OK;
      goto out;
    } else {
      BAD(cmd, a[0] == '-' ? "unknown option '%s'" : "unexpected argument '%s'", a);
    }
#undef OPT
  }
#undef BAD
  if (is_validate && !o.adapter) {
    rc = usage_error(cmd, "%s is required: the command that starts the adapter, e.g. "
                          "--adapter \"python3 conformance/adapters/numpy_ma.py\"", "--adapter");
    goto out;
  }
  rc = is_exec ? mt_session_run(&o) : mt_session_list(&o);
out:
  free(golden);
  free(filter);
  return rc;
}

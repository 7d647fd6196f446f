/* main.c - the `mtcs` command line: run, list, ops. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mt_core.h"
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
      "  mtcs list [options]   list golden cases: id, op, rules, expect\n"
      "  mtcs ops              the op table of spec/include/mt/ops.def: id, name, family, rules\n"
      "  mtcs help, --help     this text;  mtcs --version\n"
      "\n"
      "options (run and list):\n"
      "  --golden FILE...   golden file(s) to read; repeatable (default: every *.h5 in the\n"
      "                     golden directory)\n"
      "  --golden-dir DIR   the golden directory (default: $MTCS_GOLDEN_DIR, else\n"
      "                     " MT_SOURCE_DIR "/golden)\n"
      "  --filter GLOB      only case ids matching this fnmatch glob; repeatable (any matches);\n"
      "                     a filter that matches no case is an error (exit 2)\n"
      "options (run):\n"
      "  --backend B        cpu (default), cuda, or PATH.so: a plugin exporting mt_plugin_entry\n"
      "                     (spec/plugin-abi.md), built from spec/include/mt/mt.h alone\n"
      "  --profile P        run the cases of profile P (torch, numpy_ma; default torch);\n"
      "                     the others are SKIP\n"
      "  --timeout S        each case runs in its own process; kill it after S seconds\n"
      "                     (TIMEOUT; default 10)\n"
      "  --no-fork          run cases inside mtcs (for a debugger): no CRASH/TIMEOUT isolation\n"
      "  --report-json F    write a JSON report to F (atomically: nothing if the run aborts)\n"
      "  --junit F          write a JUnit XML report to F, one testsuite per golden file\n"
      "  --repro-dir DIR    for each failing case write DIR/<id>.h5 (the case alone) and\n"
      "                     DIR/<id>.sh (the command that replays it)\n"
      "  -v, --verbose      print every case, not only the failures\n"
      "\n"
      "examples:\n"
      "  mtcs run                                      every golden file on the CPU backend\n"
      "  mtcs run --golden golden/reduce.h5 --filter 'sum.*' -v\n"
      "  mtcs run --backend build/release/plugins/example.so --junit junit.xml\n"
      "  mtcs run --backend cuda --report-json run.json --repro-dir repro/\n"
      "  mtcs list --filter '*.f64.*'\n"
      "  gdb --args mtcs run --no-fork --filter sum.masked.f32.all\n"
      "\n"
      "output:\n"
      "  FAIL, ERROR, CRASH and TIMEOUT cases are always printed with the case id, what differs\n"
      "  (output, first differing index, expected vs got), the tolerance, the rules and the torch\n"
      "  call; -v prints the others too. Progress goes to stderr (a running count on a terminal,\n"
      "  else a line per golden file). The last lines are a count per status and\n"
      "      N passed, N failed, N skipped\n"
      "  (passed = PASS + EXPECTED_DIVERGENCE, failed = FAIL + ERROR + CRASH + TIMEOUT,\n"
      "  skipped = NOT_SUPPORTED + SKIP).\n"
      "\n"
      "case statuses:\n",
      f);
  for (int s = 0; s < MT_CS__COUNT; s++)
    fprintf(f, "  %-20s %s\n", mt_case_status_name((mt_case_status)s),
            mt_case_status_doc((mt_case_status)s));
  fputs(
      "  a run that stops early (an input error mid-run) is INCOMPLETE: exit 2, no reports.\n"
      "\n"
      "exit codes:\n"
      "  0   every case passed (NOT_SUPPORTED and SKIP allowed)\n"
      "  1   some case is FAIL, ERROR, CRASH or TIMEOUT\n"
      "  2   usage or input error: bad option, unreadable or corrupt golden file, unknown\n"
      "      backend, plugin that cannot be loaded or has another ABI version, a filter that\n"
      "      matches nothing, an unwritable report; also INCOMPLETE runs\n"
      "  77  the whole run was skipped: the backend cannot run here (cuda without a device,\n"
      "      mtcs built without CUDA); the reason is printed as \"SKIP: ...\"\n",
      f);
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
  int is_run = !strcmp(cmd, "run"), is_list = !strcmp(cmd, "list");
  if (!is_run && !is_list) return usage_error(NULL, "unknown command '%s'", cmd);

  int rc = MT_EXIT_USAGE;
  const char **golden = calloc((size_t)argc, sizeof *golden);
  const char **filter = calloc((size_t)argc, sizeof *filter);
  if (!golden || !filter) {
    fprintf(stderr, "mtcs: out of memory\n");
    goto out;
  }
  const char *env_dir = getenv("MTCS_GOLDEN_DIR");
  mt_session_opts o = {
      .backend = "cpu",
      .golden = golden,
      .golden_dir = env_dir && env_dir[0] ? env_dir : MT_SOURCE_DIR "/golden",
      .filter = filter,
      .profile = "torch",
      .self = argv[0],
      .run = {.timeout_s = 10.0, .no_fork = 0},
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
  (v = opt_value(argc, argv, &i, name, &m), m && (!(run_only) || is_run))
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
    } else if (OPT("--profile", 1)) {
      if (!v) BAD(cmd, "%s needs a profile name", "--profile");
      o.profile = v;
    } else if (OPT("--report-json", 1)) {
      if (!v) BAD(cmd, "%s needs a file", "--report-json");
      o.report_json = v;
    } else if (OPT("--junit", 1)) {
      if (!v) BAD(cmd, "%s needs a file", "--junit");
      o.junit = v;
    } else if (OPT("--repro-dir", 1)) {
      if (!v) BAD(cmd, "%s needs a directory", "--repro-dir");
      o.repro_dir = v;
    } else if (OPT("--timeout", 1)) {
      char *end = NULL;
      errno = 0;
      double t = v ? strtod(v, &end) : NAN;
      if (!v || errno || *end || !(t > 0) || !isfinite(t))
        BAD(cmd, "--timeout needs a number of seconds > 0, not '%s'", v ? v : "");
      o.run.timeout_s = t;
    } else if (is_run && !strcmp(a, "--no-fork")) {
      o.run.no_fork = 1;
    } else if (is_run && (!strcmp(a, "-v") || !strcmp(a, "--verbose"))) {
      o.verbose = 1;
    } else if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
      usage(stdout);
      rc = MT_EXIT_OK;
      goto out;
    } else {
      BAD(cmd, a[0] == '-' ? "unknown option '%s'" : "unexpected argument '%s'", a);
    }
#undef OPT
  }
#undef BAD
  rc = is_run ? mt_session_run(&o) : mt_session_list(&o);
out:
  free(golden);
  free(filter);
  return rc;
}

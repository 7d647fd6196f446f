/* runner.h - running golden cases against an implementation: case
 * statuses, backend resolution (cpu, cuda, plugin .so), per-case process
 * isolation with a timeout, and a whole run (`mtcs run`). */
#ifndef MT_CONF_RUNNER_H
#define MT_CONF_RUNNER_H

#include <stdio.h>

#include "golden_io.h"
#include "mt_core.h"

#ifdef __cplusplus
extern "C" {
#endif

#ifndef MTCS_VERSION
#define MTCS_VERSION "0.1.0"
#endif

/* ---- case statuses ----------------------------------------------------------- */
/* MT_CASE_STATUS(NAME, summary group, JUnit element, meaning) */
#define MT_CASE_STATUSES(X)                                                                      \
  X(PASS, PASSED, NULL, "the outputs match the golden outputs (or the expected error)")        \
  X(FAIL, FAILED, "failure", "the outputs differ, or a different error/no error was returned") \
  X(ERROR, FAILED, "error", "the implementation returned an error for a case that expects ok") \
  X(NOT_SUPPORTED, SKIPPED, "skipped", "the backend declares the op/dtype/layout unsupported")  \
  X(SKIP, SKIPPED, "skipped", "not run (op unknown to this mtcs, other profile)")               \
  X(CRASH, FAILED, "error", "the case's process died (signal or exit without a result)")        \
  X(TIMEOUT, FAILED, "error", "the case ran longer than --timeout and was killed")              \
  X(EXPECTED_DIVERGENCE, PASSED, NULL, "differs from outputs but matches outputs@torch-<v>")

typedef enum {
#define MT_X(name, group, junit, doc) MT_CS_##name,
  MT_CASE_STATUSES(MT_X)
#undef MT_X
  MT_CS__COUNT
} mt_case_status;

typedef enum { MT_GROUP_PASSED, MT_GROUP_FAILED, MT_GROUP_SKIPPED } mt_case_group;

const char *mt_case_status_name(mt_case_status s);  /* "NOT_SUPPORTED" */
const char *mt_case_status_doc(mt_case_status s);   /* one line for --help */
const char *mt_case_status_junit(mt_case_status s); /* "failure", "error", "skipped" or NULL */
mt_case_group mt_case_status_group(mt_case_status s);

#define MT_RESULT_MSG_LEN 2048

typedef struct mt_case_result {
  mt_case_status status;
  double seconds;
  char message[MT_RESULT_MSG_LEN]; /* why (empty for a plain PASS) */
} mt_case_result;

/* ---- backends --------------------------------------------------------------- */
typedef struct mt_backend {
  const mt_impl *impl;
  void *dl;       /* dlopen handle of a plugin, or NULL */
  char name[128]; /* "cpu", "cuda", or the plugin's name */
} mt_backend;

/* spec: "cpu", "cuda", or the path of a plugin shared library (holding a
 * '/' or ending in ".so"). Returns MT_OK when ready; MT_NOT_SUPPORTED when
 * the backend cannot run on this machine (the whole run is skipped; err
 * says why, e.g. "cuda backend: no CUDA device"); another status for a
 * usage error (unknown backend, a plugin that cannot be loaded or speaks
 * another ABI version). */
mt_status mt_backend_open(const char *spec, mt_backend *b, mt_error *err);
void mt_backend_close(mt_backend *b);

/* ---- cases ------------------------------------------------------------------- */
typedef struct mt_run_opts {
  double timeout_s; /* per case, forked mode only */
  int no_fork;      /* run in this process (for debuggers): no CRASH/TIMEOUT isolation */
} mt_run_opts;

/* Dispatches the (loaded) case to impl and judges the result, in this
 * process. Never prints. */
void mt_case_execute(const mt_impl *impl, const mt_golden_case *c, mt_case_result *r);
/* The same in a forked child with a timeout (unless o->no_fork): a child
 * killed by a signal is CRASH (naming the signal), one still running after
 * o->timeout_s is killed and TIMEOUT. r->seconds is the wall time. */
void mt_case_run(const mt_impl *impl, const mt_golden_case *c, const mt_run_opts *o,
                 mt_case_result *r);

/* ---- a whole run ----------------------------------------------------------- */
/* Exit codes of `mtcs`. */
#define MT_EXIT_OK 0
#define MT_EXIT_FAIL 1
#define MT_EXIT_USAGE 2
#define MT_EXIT_SKIP 77

typedef struct mt_session_opts {
  const char *backend;            /* default "cpu" */
  int n_golden;                   /* golden files; 0 = every *.h5 in golden_dir */
  const char *const *golden;
  const char *golden_dir;
  int n_filter;                   /* fnmatch globs on case ids (any matches) */
  const char *const *filter;
  const char *profile;            /* run cases of this profile; others SKIP (default "torch") */
  const char *report_json;        /* may be NULL */
  const char *junit;              /* may be NULL */
  const char *repro_dir;          /* may be NULL: one-case goldens of failures */
  const char *self;               /* argv[0], for repro commands */
  mt_run_opts run;
  int verbose;
  FILE *out;                      /* case lines and the summary (stdout) */
  FILE *diag;                     /* progress and errors (stderr) */
  int progress_tty;               /* diag is a terminal: a running count */
} mt_session_opts;

/* `mtcs run`: returns the exit code (MT_EXIT_*). */
int mt_session_run(const mt_session_opts *o);

/* `mtcs list`: case ids with op, rules, expect. Returns the exit code. */
int mt_session_list(const mt_session_opts *o);

/* The golden files a run reads: o->golden, or every *.h5 of o->golden_dir
 * sorted by name. *out is a NULL-free array of n strings (free each and
 * the array). MT_OK or an error naming the directory. */
mt_status mt_golden_paths(const mt_session_opts *o, char ***out, int *n, mt_error *err);

#ifdef __cplusplus
}
#endif
#endif /* MT_CONF_RUNNER_H */

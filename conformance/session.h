/* session.h - a whole run (`mtcs run`) and a listing (`mtcs list`): the
 * golden files to read, case selection (filters, profile), and the exit
 * codes. */
#ifndef MT_CONF_SESSION_H
#define MT_CONF_SESSION_H

#include <stdio.h>

#include "isolate.h"

#ifdef __cplusplus
extern "C" {
#endif

#ifndef MTCS_VERSION
#define MTCS_VERSION "0.1.0"
#endif

/* Exit codes of `mtcs`. */
#define MT_EXIT_OK 0
#define MT_EXIT_FAIL 1
#define MT_EXIT_USAGE 2
#define MT_EXIT_SKIP 77

/* The profiles a golden case can belong to (DESIGN.md "Profiles"). */
#define MT_PROFILES(X) X(torch) X(numpy_ma)
/* 1 when name is one of MT_PROFILES. */
int mt_profile_known(const char *name);
/* "torch, numpy_ma" */
const char *mt_profile_list(void);

typedef struct mt_session_opts {
  const char *backend;            /* default "cpu" */
  /* `mtcs validate`: the adapter command (adapter.h, spec/adapter-protocol.md);
   * backend and run.no_fork/timeout_s are then unused: the cases run in
   * this process, one request each to the adapter process. */
  const char *adapter;
  double hello_timeout_s;         /* <= 0: MT_ADAPTER_HELLO_TIMEOUT_S */
  double case_timeout_s;          /* <= 0: MT_ADAPTER_CASE_TIMEOUT_S */
  int n_golden;                   /* golden files; 0 = every *.h5 in golden_dir */
  const char *const *golden;
  const char *golden_dir;
  int n_filter;                   /* fnmatch globs on case ids (any matches) */
  const char *const *filter;
  const char *profile;            /* run the cases of this profile only (default "torch") */
  int require_all;                /* NOT_SUPPORTED and SKIP count as failures */
  const char *report_json;        /* may be NULL */
  const char *junit;              /* may be NULL */
  const char *repro_dir;          /* may be NULL: one-case goldens of failures */
  const char *expect;             /* may be NULL: the expectations file (expect.h) */
  const char *self;               /* argv[0], for repro commands */
  int argc;                       /* the command line, for the JSON report (argc 0: none) */
  const char *const *argv;
  mt_run_opts run;
  int batch;                      /* cases per worker process; 0: the backend's (backend.h) */
  int verbose;
  FILE *out;                      /* case lines and the summary (stdout) */
  FILE *diag;                     /* progress and errors (stderr) */
  int progress_tty;               /* diag is a terminal: a running count */
} mt_session_opts;

/* `mtcs run` (and `mtcs validate` when o->adapter is set): returns the exit
 * code (MT_EXIT_*): 0 when every executed case passed and at least one
 * executed; 1 on failures (with require_all also NOT_SUPPORTED and SKIP) and
 * on INCOMPLETE adapter runs (a case without a verdict); 77 when nothing
 * executed; 2 on input errors (an adapter that cannot start or fails its
 * handshake included). */
int mt_session_run(const mt_session_opts *o);

/* The torch versions n golden files record results of, sorted, no
 * duplicates: each file's torch_version and every case's outputs@/error@
 * label (without "torch-"). *out: n strings (free each and the array). */
mt_status mt_session_versions(const mt_golden_file *const *files, int n_files,
                              char ***out, int *n_out, mt_error *err);

/* `mtcs list`: case ids with op, profile, rules, expect. Returns the exit code. */
int mt_session_list(const mt_session_opts *o);

/* The golden files a run reads: o->golden, or every *.h5 of o->golden_dir
 * sorted by name. *out is a NULL-free array of n strings (free each and
 * the array). MT_OK or an error naming the directory. */
mt_status mt_golden_paths(const mt_session_opts *o, char ***out, int *n, mt_error *err);

#ifdef __cplusplus
}
#endif
#endif /* MT_CONF_SESSION_H */

/* report.h - run reports: JSON (machines) and JUnit XML (CI systems),
 * written atomically (a temporary file beside the target, renamed over it
 * at the end; a run that does not finish leaves no file behind).
 *
 * JSON:
 *   {"mtcs_version": "0.1.0", "backend": "cpu", "complete": true,
 *    "adapter": null, or for `mtcs validate` {"command", "name"} (name:
 *               "<name> <version>" of the hello, also the backend),
 *    "incomplete": bool (some selected case did not execute to a verdict:
 *               an adapter's CRASH, TIMEOUT or protocol ERROR, or not run
 *               after the adapter could not be restarted; complete is then
 *               false), "incomplete_cases": n, "not_run": n,
 *    "incomplete_reasons": ["<case id> (<run>): <STATUS>: <why>", ...],
 *    "golden": [{"file", "torch_version", "generator_sha256", "cases"}],
 *    "summary": {"PASS": n, "FAIL": n, ...every status...},
 *    "require_all": bool, "level": "semantic" | "strict",
 *    "torch_version": the version whose results were expected ("1.13.1";
 *                     --torch-version, else the files' own when they agree,
 *                     else null), "torch_version_requested": bool,
 *    "totals": {"passed": n, "failed": n, "skipped": n, "executed": n, "cases": n},
 *    "seconds": s,
 *    "profile": the run's --profile ("torch", "numpy_ma" or "all"),
 *    "command": the command line of the run, shell-quoted (argv as typed),
 *    "cases": [{"id", "file", "op", "family", "rules", "status", "message",
 *               "seconds", "profile", "repro_command", "repro_script"}]}
 * A case's "profile" is its golden case's; "repro_command" (a failure:
 * FAIL, ERROR, CRASH, TIMEOUT, XPASS; else null) is the shell command that
 * replays it alone (repro.h), "repro_script" the --repro-dir script that
 * holds it (null without --repro-dir).
 * JUnit: <testsuites> with one <testsuite> per golden file, a <testcase>
 * per case (classname "<file stem>.<op>"), <failure> for FAIL, <error> for
 * ERROR/CRASH/TIMEOUT, <skipped> for NOT_SUPPORTED/SKIP; properties backend,
 * mtcs_version, level, torch_version (the file's) and expected_torch_version
 * (--torch-version, else the file's); for mtcs validate also adapter (the
 * command) and, in an INCOMPLETE run, incomplete ("N cases without a
 * verdict"). */
#ifndef MT_CONF_REPORT_H
#define MT_CONF_REPORT_H

#include <stdio.h>

#include "mt_core.h"
#include "case.h"
#include "jsonline.h" /* mt_json_string */

#ifdef __cplusplus
extern "C" {
#endif

/* ---- atomic files ------------------------------------------------------------ */
typedef struct mt_afile {
  char *path; /* the target */
  char *tmp;  /* "<path>.tmp.XXXXXX" beside it */
  FILE *f;
} mt_afile;

/* Creates the temporary file now, so an unwritable target fails early. */
mt_status mt_afile_open(mt_afile *a, const char *path, mt_error *err);
/* Flushes, syncs, closes and renames over the target. */
mt_status mt_afile_commit(mt_afile *a, mt_error *err);
/* Closes and removes the temporary file (no-op when not open). */
void mt_afile_abort(mt_afile *a);

/* ---- the report model -------------------------------------------------------- */
typedef struct mt_report_case {
  int golden;           /* index into mt_report.golden */
  const char *id, *op, *family; /* borrowed; family may be NULL */
  char *rules;          /* owned copy: a result's own rule (MASK-9) dies with the result */
  mt_case_status status;
  char *message;        /* owned; may be NULL */
  double seconds;
  const char *profile;  /* borrowed; NULL: "torch" */
  char *repro_command;  /* owned; NULL: none (not a failure) */
  char *repro_script;   /* owned; NULL: no --repro-dir bundle */
} mt_report_case;

typedef struct mt_report_golden {
  const char *file, *torch_version, *generator_sha256; /* borrowed; may be NULL */
} mt_report_golden;

typedef struct mt_report {
  const char *backend;
  int complete;
  int require_all; /* NOT_SUPPORTED and SKIP count as failed (and as JUnit failures) */
  const char *level; /* "semantic" or "strict" (borrowed) */
  const char *torch_version; /* expected version (borrowed); NULL: the files' own differ */
  int torch_version_requested; /* given with --torch-version */
  const char *profile; /* the run's --profile (borrowed; NULL: "torch") */
  char *command;       /* the run's command line, shell-quoted (owned; may be NULL) */
  double seconds;
  int n_golden;
  mt_report_golden *golden; /* owned array */
  int n_cases, cap_cases;
  mt_report_case *cases;    /* owned array */
  int counts[MT_CS__COUNT];
  /* `mtcs validate` (adapter.h): the command and "<name> <version>";
   * NULL for `mtcs run` (borrowed) */
  const char *adapter_command, *adapter_name;
  /* cases that did not execute to a verdict (INCOMPLETE), of them not run */
  int incomplete_cases, not_run;
  int n_reasons;
  const char *const *reasons; /* why, one per lost request (borrowed) */
} mt_report;

mt_status mt_report_add_golden(mt_report *r, const char *file, const char *torch_version,
                               const char *generator_sha256, mt_error *err);
mt_status mt_report_add_case(mt_report *r, int golden, const char *id, const char *op,
                             const char *family, const char *rules, const mt_case_result *res,
                             mt_error *err);
/* Attaches to case k what the JSON report carries beside the result: its
 * profile (borrowed) and, for a failure, the command that replays it and
 * the repro script's path (copied; NULL: none). */
mt_status mt_report_describe_case(mt_report *r, int k, const char *profile,
                                  const char *repro_command, const char *repro_script,
                                  mt_error *err);
/* Records the run's command line (argv shell-quoted, joined by spaces). */
mt_status mt_report_set_command(mt_report *r, int argc, const char *const *argv, mt_error *err);
void mt_report_free(mt_report *r);

int mt_report_count_group(const mt_report *r, mt_case_group g);

/* The totals a run is judged by: executed = passed + the failures of
 * executed cases; under require_all the skipped count as failed too. */
typedef struct mt_report_totals {
  int passed, failed, skipped, executed, cases;
} mt_report_totals;
mt_report_totals mt_report_get_totals(const mt_report *r);
/* The JUnit element of a status in this report ("failure", "error",
 * "skipped" or NULL), require_all applied. */
const char *mt_report_junit(const mt_report *r, mt_case_status s);

/* Write the whole report to f; IO_ERROR when writing fails. */
mt_status mt_report_write_json(FILE *f, const mt_report *r, mt_error *err);
mt_status mt_report_write_junit(FILE *f, const mt_report *r, mt_error *err);

/* Escaping, exposed for tests. */
void mt_xml_text(FILE *f, const char *s);    /* escaped for text and attributes */
/* s as one shell word: as is when it holds only [A-Za-z0-9_./=:,+@%-] (and
 * is not empty), else in single quotes. */
void mt_sh_quote(FILE *f, const char *s);

#ifdef __cplusplus
}
#endif
#endif /* MT_CONF_REPORT_H */

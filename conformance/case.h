/* case.h - what running one golden case yields: the case statuses (an
 * X-macro table), their groups, and the result record. Shared by the
 * runner's pieces (execute, isolate, session, console) and the reports. */
#ifndef MT_CONF_CASE_H
#define MT_CONF_CASE_H

#include "mt_core.h"

#ifdef __cplusplus
extern "C" {
#endif

/* MT_CASE_STATUS(NAME, summary group, JUnit element, meaning) */
#define MT_CASE_STATUSES(X)                                                                      \
  X(PASS, PASSED, NULL, "the outputs match the golden outputs (or the expected error)")        \
  X(FAIL, FAILED, "failure", "the outputs differ, or a different error/no error was returned") \
  X(ERROR, FAILED, "error",                                                                     \
    "the implementation returned an error for a case that expects ok (validate:\n"             \
    "                       also an unreadable response, an adapter protocol error)")           \
  X(NOT_SUPPORTED, SKIPPED, "skipped", "the backend declares the op/dtype/layout unsupported")  \
  X(SKIP, SKIPPED, "skipped",                                                                   \
    "not run (op unknown to this mtcs; validate: the adapter could not be\n"                    \
    "                       restarted)")                                                         \
  X(CRASH, FAILED, "error",                                                                     \
    "the case's process died (signal or exit without a result; validate: the\n"                 \
    "                       adapter exited before answering)")                                   \
  X(TIMEOUT, FAILED, "error",                                                                   \
    "the case ran longer than --timeout and was killed (validate: no answer\n"                  \
    "                       within --case-timeout)")                                             \
  X(EXPECTED_DIVERGENCE, PASSED, NULL, "differs from the expected torch version's result (--torch-version) but matches\n                       another recorded version's (outputs, outputs@torch-<v>, error@torch-<v>)") \
  X(XFAIL, PASSED, NULL, "yields the status an --expect entry expects (a known failure)")          \
  X(XPASS, FAILED, "failure", "passes, but an --expect entry expects it to fail: remove the entry")

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
/* Whether the implementation was run on the case (PASS, FAIL, ERROR, CRASH,
 * TIMEOUT, EXPECTED_DIVERGENCE): what `executed` counts. */
int mt_case_status_executed(mt_case_status s);

/* Rules the runner itself checks on every case (spec/SEMANTICS.md). */
#define MT_RULE_POISON "MASK-9" /* masked-out input data never changes a specified result */
#define MT_RULE_CALL "CALL-1"   /* inputs stay unchanged; outputs share no memory with them */

#define MT_RESULT_MSG_LEN 2048

typedef struct mt_case_result {
  mt_case_status status;
  double seconds;
  char message[MT_RESULT_MSG_LEN]; /* why (empty for a plain PASS) */
  /* The rule a runner-level check blames for a failure (MT_RULE_POISON,
   * MT_RULE_CALL); empty: the case's own rules. */
  char rule[16];
  /* Some run of the case (the golden one or a poison re-run) returned
   * DEVICE_ERROR. A device's state after a fault is unknown (a CUDA context
   * that met an illegal address fails every later call of its process), so
   * a worker running a batch stops after reporting this case and a fresh
   * one takes the cases after it (isolate.c): a fault costs its own case,
   * not the rest of the batch. */
  int device_error;
} mt_case_result;

/* printf into r->message. */
void mt_case_setmsg(mt_case_result *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The rules a result is reported under: r->rule when set, else `rules`. */
const char *mt_case_blame(const mt_case_result *r, const char *rules);
double mt__now_s(void); /* CLOCK_MONOTONIC seconds */

#ifdef __cplusplus
}
#endif
#endif /* MT_CONF_CASE_H */

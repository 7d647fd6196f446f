/* isolate.h - one case in a forked child with a timeout (libuv-style test
 * isolation): a crash in the implementation becomes CRASH for that case,
 * a hang TIMEOUT, and the run goes on. */
#ifndef MT_CONF_ISOLATE_H
#define MT_CONF_ISOLATE_H

#include "execute.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct mt_run_opts {
  double timeout_s; /* per case, forked mode only */
  int no_fork;      /* run in this process (for debuggers): no CRASH/TIMEOUT isolation */
  mt_exec_opts exec;
} mt_run_opts;

/* mt_case_execute in a forked child with a timeout (unless o->no_fork):
 * mt_cases_run with this one case. A child killed by a signal is CRASH
 * (naming the signal), one still running after o->timeout_s is killed and
 * TIMEOUT. r->seconds is the case's run time (the wall time until it died,
 * for CRASH and TIMEOUT). */
void mt_case_run(const mt_impl *impl, const mt_golden_case *c, const mt_run_opts *o,
                 mt_case_result *r);

/* Runs n loaded cases, results[k] for cases[k], the way a worker pool does
 * it: one forked worker runs them in order and reports each result as it
 * finishes; a case that crashes its worker is CRASH, one that runs past
 * o->timeout_s is TIMEOUT (its worker killed), and a fresh worker takes the
 * cases after it. A fork per batch instead of per case: a case costs its
 * own run, not a process. o->no_fork runs them all in this process. */
void mt_cases_run(const mt_impl *impl, mt_golden_case *const *cases, int n, const mt_run_opts *o,
                  mt_case_result *results);

#ifdef __cplusplus
}
#endif
#endif /* MT_CONF_ISOLATE_H */

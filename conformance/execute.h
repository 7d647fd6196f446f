/* execute.h - running one (loaded) golden case in this process: dispatch to
 * the implementation, judge the outputs against the golden, then the
 * runner's own rules on the same case:
 *   CALL-1  the kernel left every input bit for bit unchanged (masked-out
 *           data included) and returned outputs that share no memory with
 *           its inputs or with each other;
 *   MASK-9  poison invariance: with the masked-out input data replaced by
 *           each poison (poison.h) the implementation returns the same
 *           status, the same masks and the same specified values (within
 *           the case's tolerance) as on the golden inputs.
 * A broken runner-level rule is a FAIL whose r->rule names it. */
#ifndef MT_CONF_EXECUTE_H
#define MT_CONF_EXECUTE_H

#include "case.h"
#include "golden_io.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct mt_exec_opts {
  int poison_runs; /* the first N poisons of MT_POISONS (0 = no re-runs) */
} mt_exec_opts;

/* Dispatches c to impl and judges the result, in this process. Never
 * prints. o may be NULL (no poison re-runs). */
void mt_case_execute(const mt_impl *impl, const mt_golden_case *c, const mt_exec_opts *o,
                     mt_case_result *r);

/* Whether the case has an input the poison re-runs can reach. */
int mt_case_has_poisonable_input(const mt_golden_case *c);

#ifdef __cplusplus
}
#endif
#endif /* MT_CONF_EXECUTE_H */

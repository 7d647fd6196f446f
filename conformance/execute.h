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

/* Conformance levels (spec/SEMANTICS.md "Levels"): semantic compares masks
 * and specified values only; strict also the data torch leaves under
 * masked-out outputs of cases marked check_masked_out (RED-3's fills). */
#define MT_LEVELS(X) X(semantic) X(strict)
typedef enum {
#define MT_X(name) MT_LEVEL_##name,
  MT_LEVELS(MT_X)
#undef MT_X
  MT_LEVEL__COUNT
} mt_level;
const char *mt_level_name(mt_level l);          /* "semantic" */
int mt_level_from_name(const char *name, mt_level *out); /* 0 = found */
const char *mt_level_list(void);                /* "semantic, strict" */

/* An implementation reached some other way than through an mt_impl's
 * kernels: an adapter process (adapter.h, spec/adapter-protocol.md).
 * invoke computes case c on the inputs call->in (c's own, or a poisoned
 * copy; run is "golden" or "poison:<label>") the way a kernel does: sets
 * call->n_out and call->out (freed by the caller through call->host) and
 * returns the implementation's status, err its message. When the
 * implementation gave no answer at all (it crashed, hung, broke the
 * protocol, returned an unreadable response) it sets *lost to MT_CS_CRASH,
 * MT_CS_TIMEOUT, MT_CS_ERROR or MT_CS_SKIP (not run) with err saying why:
 * the case takes that status unjudged. *lost is MT_CS_PASS otherwise. */
typedef struct mt_invoker {
  mt_status (*invoke)(void *ctx, const mt_golden_case *c, const char *run, mt_call *call,
                      mt_case_status *lost, mt_error *err);
  void *ctx;
} mt_invoker;

typedef struct mt_exec_opts {
  int poison_runs; /* the first N poisons of MT_POISONS (0 = no re-runs) */
  mt_level level;  /* default (0) semantic */
  /* The torch version whose results are expected ("1.13.1"): a case's
   * outputs@torch-<V> group or error@torch-<V> attribute where it has one,
   * else its outputs (or error). NULL: each file's own torch_version.
   * A result that matches another recorded version instead is
   * EXPECTED_DIVERGENCE, naming that version. */
  const char *torch_version;
  /* Nonzero (--exact-version): a result that matches only another recorded
   * version is FAIL, not EXPECTED_DIVERGENCE (our backends and the mutants
   * are held to one torch: a kernel that reproduces an older torch's
   * behaviour is wrong for the pinned one). */
  int exact_version;
  /* NULL: dispatch to the mt_impl's kernels; else every call (the first
   * and each poison re-run) goes through it, and the impl is unused. */
  const mt_invoker *invoker;
} mt_exec_opts;

/* Whether masked-out output data is compared for case c at level l. */
int mt_case_checks_masked_out(const mt_golden_case *c, mt_level l);

/* Dispatches c to impl (or o->invoker) and judges the result, in this
 * process. Never prints. o may be NULL (no poison re-runs). */
void mt_case_execute(const mt_impl *impl, const mt_golden_case *c, const mt_exec_opts *o,
                     mt_case_result *r);

/* The version a case's base expectation (outputs, expect, error_class)
 * belongs to: the file's torch_version, "?" when the file has none. */
const char *mt_case_base_version(const mt_golden_case *c);

/* Whether the case has an input the poison re-runs can reach. */
int mt_case_has_poisonable_input(const mt_golden_case *c);

#ifdef __cplusplus
}
#endif
#endif /* MT_CONF_EXECUTE_H */

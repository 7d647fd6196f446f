/* expect.h - the expectations file of `mtcs run --expect FILE`: the cases a
 * project knows it fails, so that it can adopt mtcs in CI before it passes
 * everything, and keep the list honest.
 *
 * One entry per line; `#` starts a comment; fields separated by spaces or
 * tabs, the reason is the rest of the line:
 *
 *   <case glob>  <status>  <expires YYYY-MM-DD>  <owner>  <reason ...>
 *   sum.masked.f16.*  FAIL  2027-03-31  alice  float16 sums accumulate in float32 here
 *
 * status: FAIL, ERROR, CRASH, TIMEOUT or NOT_SUPPORTED (what the case
 * yields today). A case takes the first entry whose glob matches its id:
 *   - it yields that status  -> XFAIL (expected: does not fail the run,
 *     and NOT_SUPPORTED then does not count against --require-all);
 *   - it passes              -> XPASS (fails the run: the entry is stale,
 *     remove it);
 *   - it yields another failing status -> that status, noting the entry.
 * An entry past its expiry date, or one that does not parse, is an input
 * error naming the file and line (exit 2): nothing runs. An entry whose
 * glob matches no case of the golden files read fails the run (a stale
 * entry must not hide anything; --filter does not make it stale).
 * Today's date is the UTC date, or $MTCS_TODAY (YYYY-MM-DD) for tests. */
#ifndef MT_CONF_EXPECT_H
#define MT_CONF_EXPECT_H

#include "case.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct mt_expect_entry {
  char *glob, *owner, *reason;
  mt_case_status status;
  char expires[11]; /* YYYY-MM-DD */
  int line;
  int used; /* cases that took this entry */
} mt_expect_entry;

typedef struct mt_expectations {
  const char *path;
  int n;
  mt_expect_entry *e;
} mt_expectations;

/* Reads and checks path (today: "YYYY-MM-DD"; NULL = the UTC date or
 * $MTCS_TODAY). INVALID_FORMAT naming "path:line" on a bad or expired entry. */
mt_status mt_expect_load(const char *path, const char *today, mt_expectations *x, mt_error *err);
void mt_expect_free(mt_expectations *x);

/* Applies the first entry matching id to r (see above). */
void mt_expect_apply(mt_expectations *x, const char *id, mt_case_result *r);

#ifdef __cplusplus
}
#endif
#endif /* MT_CONF_EXPECT_H */

/* console.h - what `mtcs run` prints: the running count on a terminal,
 * one block per failing case (every case with -v), the summary. */
#ifndef MT_CONF_CONSOLE_H
#define MT_CONF_CONSOLE_H

#include "report.h"
#include "session.h"

#ifdef __cplusplus
extern "C" {
#endif

void mt_console_progress_clear(const mt_session_opts *o);
/* "[12/277 4%] 2300 cases/s, ETA 1s, 1 failed  sum.masked.f32.all", cut to the
 * terminal's width. */
void mt_console_progress(const mt_session_opts *o, int k, int total, int failed, double elapsed_s,
                         const char *id);
/* "12s", "3m05s": an ETA or elapsed time for the progress line. */
const char *mt_console_duration(double s, char *buf, size_t len);
/* A failing case (a failure under o->require_all included): id, why, the
 * rules it is blamed on, tolerance, file, torch call, repro; with -v every
 * case. */
void mt_console_case(const mt_session_opts *o, const mt_golden_file *f, const mt_golden_case *c,
                     const mt_case_result *r, const char *repro);
/* The count per status, the executed/not supported/skipped line and the
 * closing "N passed, N failed, N skipped". */
void mt_console_summary(const mt_session_opts *o, const mt_report *rep);

#ifdef __cplusplus
}
#endif
#endif /* MT_CONF_CONSOLE_H */

/* console.c - progress, case lines and the summary of `mtcs run`; see
 * console.h. */
#include "console.h"

#include <stdio.h>
#include <sys/ioctl.h>

void mt_console_progress_clear(const mt_session_opts *o) {
  if (o->progress_tty) fputs("\r\033[K", o->diag);
}

const char *mt_console_duration(double s, char *buf, size_t len) {
  if (!(s >= 0) || s > 359999) s = 359999;
  long t = (long)(s + 0.5);
  if (t < 60)
    snprintf(buf, len, "%lds", t);
  else if (t < 3600)
    snprintf(buf, len, "%ldm%02lds", t / 60, t % 60);
  else
    snprintf(buf, len, "%ldh%02ldm", t / 3600, t / 60 % 60);
  return buf;
}

/* [k/total] pct, cases/s, ETA (from the rate so far), failures, the case id. */
void mt_console_progress(const mt_session_opts *o, int k, int total, int failed, double elapsed_s,
                         const char *id) {
  struct winsize ws;
  int width = ioctl(fileno(o->diag), TIOCGWINSZ, &ws) == 0 && ws.ws_col > 20 ? ws.ws_col : 80;
  char line[512], eta[32] = "?";
  double rate = k > 1 && elapsed_s > 0 ? (k - 1) / elapsed_s : 0;
  if (rate > 0) mt_console_duration((total - k + 1) / rate, eta, sizeof eta);
  snprintf(line, sizeof line, "[%d/%d %d%%] %.0f cases/s, ETA %s, %s%d failed  %s", k, total,
           total ? (int)(100.0 * (k - 1) / total) : 100, rate, eta, failed ? "\033[1m" : "",
           failed, id);
  int vis = width - 1 + (failed ? 4 : 0); /* the escape sequence takes no columns */
  if (vis > 0 && (size_t)vis < sizeof line) line[vis] = 0;
  fprintf(o->diag, "\r\033[K%s%s", line, failed ? "\033[0m" : "");
  fflush(o->diag);
}

void mt_console_case(const mt_session_opts *o, const mt_golden_file *f, const mt_golden_case *c,
                     const mt_case_result *r, const char *repro) {
  const char *name = mt_case_status_name(r->status);
  mt_case_group g = mt_case_status_group(r->status);
  if (g == MT_GROUP_FAILED || (o->require_all && g == MT_GROUP_SKIPPED)) {
    const char *rules = mt_case_blame(r, c->rules);
    mt_console_progress_clear(o);
    fprintf(o->out, "%s  %s\n", name, c->id);
    fprintf(o->out, "    %s%s\n", r->message,
            g == MT_GROUP_SKIPPED ? " (a failure under --require-all)" : "");
    fprintf(o->out, "    rules: %s; tolerance: %s%s; file: %s\n", rules[0] ? rules : "-",
            c->tolerance.text,
            mt_case_checks_masked_out(c, o->run.exec.level) ? "; masked-out data checked" : "",
            f->path);
    if (c->torch_call) fprintf(o->out, "    torch: %s\n", c->torch_call);
    if (repro && repro[0]) fprintf(o->out, "    repro: %s\n", repro);
  } else if (o->verbose) {
    mt_console_progress_clear(o);
    if (r->status == MT_CS_PASS || !r->message[0])
      fprintf(o->out, "%s  %s\n", name, c->id);
    else
      fprintf(o->out, "%s  %s  (%s)\n", name, c->id, r->message);
  }
  fflush(o->out); /* keep case lines and stderr progress in order */
}

void mt_console_summary(const mt_session_opts *o, const mt_report *rep) {
  FILE *out = o->out;
  mt_report_totals t = mt_report_get_totals(rep);
  fputs("status counts:", out);
  for (int s = 0; s < MT_CS__COUNT; s++)
    fprintf(out, "%s %s %d", s ? "," : "", mt_case_status_name((mt_case_status)s), rep->counts[s]);
  fputc('\n', out);
  int ed = rep->counts[MT_CS_EXPECTED_DIVERGENCE];
  if (ed)
    fprintf(out, "%d expected divergence%s (matched the result of another torch version than %s; "
                 "counted as passed)\n",
            ed, ed == 1 ? "" : "s", rep->torch_version ? rep->torch_version : "the files'");
  int xf = rep->counts[MT_CS_XFAIL], xp = rep->counts[MT_CS_XPASS];
  if (xf || xp)
    fprintf(out, "--expect: %d expected failure%s (XFAIL, counted as passed), %d unexpected "
                 "pass%s (XPASS, counted as failed)\n",
            xf, xf == 1 ? "" : "s", xp, xp == 1 ? "" : "es");
  fprintf(out, "executed %d of %d cases; not supported %d, skipped %d%s; level %s; poison "
               "re-runs: %d per case with masked inputs\n",
          t.executed, t.cases, rep->counts[MT_CS_NOT_SUPPORTED], rep->counts[MT_CS_SKIP],
          rep->require_all ? " (--require-all: counted as failed)" : "",
          mt_level_name(o->run.exec.level), o->run.exec.poison_runs);
  fprintf(out, "%d passed, %d failed, %d skipped\n", t.passed, t.failed, t.skipped);
  if (rep->incomplete_cases) {
    int lost = rep->incomplete_cases - rep->not_run;
    fprintf(out, "INCOMPLETE: %d of %d case%s did not execute to a verdict (%d lost to the "
                 "adapter: CRASH, TIMEOUT or protocol ERROR; %d not run)%s\n",
            rep->incomplete_cases, t.cases, t.cases == 1 ? "" : "s", lost, rep->not_run,
            rep->n_reasons ? "; first:" : "");
    for (int k = 0; k < rep->n_reasons && k < 5; k++)
      fprintf(out, "    %s\n", rep->reasons[k] ? rep->reasons[k] : "?");
    if (rep->n_reasons > 5)
      fprintf(out, "    ... and %d more (the JSON report lists all)\n", rep->n_reasons - 5);
  }
}

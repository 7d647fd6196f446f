/* session.c - whole runs and listings; see session.h. */
#include "session.h"
#include "expect.h"

#include <dirent.h>
#include <errno.h>
#include <fnmatch.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "adapter.h"
#include "backend.h"
#include "console.h"
#include "golden_guard.h"
#include "report.h"
#include "repro.h"

#define setmsg mt_case_setmsg
#define now_s mt__now_s

static const char *const profiles[] = {
#define MT_X(name) #name,
    MT_PROFILES(MT_X)
#undef MT_X
};

int mt_profile_known(const char *name) {
  for (size_t k = 0; name && k < sizeof profiles / sizeof profiles[0]; k++)
    if (!strcmp(name, profiles[k])) return 1;
  return 0;
}

const char *mt_profile_list(void) {
  return &(
#define MT_X(name) ", " #name
      MT_PROFILES(MT_X)
#undef MT_X
  )[2];
}

/* ---- golden file lists -------------------------------------------------------------- */

static int cmp_str(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

static void free_strs(char **v, int n) {
  for (int k = 0; k < n; k++) free(v[k]);
  free(v);
}

static char *str_dup(const char *s) {
  size_t n = strlen(s) + 1;
  char *p = malloc(n);
  if (p) memcpy(p, s, n);
  return p;
}

mt_status mt_golden_paths(const mt_session_opts *o, char ***out, int *n_out, mt_error *err) {
  char **v = NULL;
  int n = 0, cap = 0;
  *out = NULL;
  *n_out = 0;
  if (o->n_golden > 0) {
    if (!(v = calloc((size_t)o->n_golden, sizeof *v))) goto oom;
    for (n = 0; n < o->n_golden; n++)
      if (!(v[n] = str_dup(o->golden[n]))) goto oom;
    *out = v;
    *n_out = n;
    return MT_OK;
  }
  const char *dir = o->golden_dir ? o->golden_dir : "golden";
  DIR *d = opendir(dir);
  if (!d)
    return mt_err(err, MT_IO_ERROR, "cannot read the golden directory %s: %s", dir, strerror(errno));
  struct dirent *e;
  while ((e = readdir(d))) {
    size_t len = strlen(e->d_name);
    if (len < 4 || strcmp(e->d_name + len - 3, ".h5") != 0 || e->d_name[0] == '.') continue;
    if (n == cap) {
      cap = cap ? 2 * cap : 16;
      char **nv = realloc(v, (size_t)cap * sizeof *nv);
      if (!nv) {
        closedir(d);
        goto oom;
      }
      v = nv;
    }
    size_t plen = strlen(dir) + 1 + len + 1;
    if (!(v[n] = malloc(plen))) {
      closedir(d);
      goto oom;
    }
    snprintf(v[n++], plen, "%s/%s", dir, e->d_name);
  }
  closedir(d);
  if (n == 0) {
    free(v);
    return mt_err(err, MT_IO_ERROR,
                  "no golden files (*.h5) in %s (generate them with golden/generate.py, or name "
                  "files with --golden)",
                  dir);
  }
  qsort(v, (size_t)n, sizeof *v, cmp_str);
  *out = v;
  *n_out = n;
  return MT_OK;
oom:
  free_strs(v, n);
  return mt_err(err, MT_OUT_OF_MEMORY, "out of memory listing golden files");
}

/* ---- sessions ------------------------------------------------------------------------ */

typedef struct session {
  const mt_session_opts *o;
  int n_files;
  char **paths;
  mt_golden_file **files;
  char **selected; /* per file, per case: 1 when the filters and the profile match */
  int total;       /* selected cases */
  int other_profile; /* cases the filters match, of another profile */
} session;

static int filter_match(const mt_session_opts *o, const char *id) {
  if (o->n_filter == 0) return 1;
  for (int k = 0; k < o->n_filter; k++)
    if (fnmatch(o->filter[k], id, 0) == 0) return 1;
  return 0;
}

static void session_free(session *s) {
  for (int k = 0; k < s->n_files; k++) {
    if (s->files) mt_golden_close(s->files[k]);
    if (s->selected) free(s->selected[k]);
  }
  free(s->files);
  free(s->selected);
  free_strs(s->paths, s->n_files);
  memset(s, 0, sizeof *s);
}

/* Opens every golden file and applies the filters and the profile; prints
 * why and returns the exit code when the run cannot go on (an input error;
 * nothing selected), else -1. */
static int session_open(session *s, const mt_session_opts *o) {
  /* NULL or "all": every profile */
  const char *profile = o->profile && strcmp(o->profile, "all") != 0 ? o->profile : NULL;
  mt_error err = {0};
  memset(s, 0, sizeof *s);
  s->o = o;
  if (mt_golden_paths(o, &s->paths, &s->n_files, &err) != MT_OK) {
    fprintf(o->diag, "mtcs: %s\n", err.msg);
    return MT_EXIT_USAGE;
  }
  s->files = calloc((size_t)s->n_files, sizeof *s->files);
  s->selected = calloc((size_t)s->n_files, sizeof *s->selected);
  if (!s->files || !s->selected) {
    fprintf(o->diag, "mtcs: out of memory\n");
    return MT_EXIT_USAGE;
  }
  int n_cases = 0;
  for (int k = 0; k < s->n_files; k++) {
    /* MANIFEST's sha256 (golden directory), then a full parse in a child:
     * a file that crashes or hangs libhdf5 is an input error, never a signal */
    if (mt_golden_check(s->paths[k], o->n_golden == 0, o->golden_dir ? o->golden_dir : "golden",
                        &err) != MT_OK) {
      fprintf(o->diag, "mtcs: %s\n", err.msg);
      return MT_EXIT_USAGE;
    }
    if (k == 0 && err.msg[0]) fprintf(o->diag, "mtcs: warning: %s\n", err.msg);
    if (mt_golden_open(s->paths[k], &s->files[k], &err) != MT_OK) {
      fprintf(o->diag, "mtcs: %s\n", err.msg);
      return MT_EXIT_USAGE;
    }
    mt_golden_file *f = s->files[k];
    n_cases += f->n_cases;
    if (f->n_cases && !(s->selected[k] = calloc((size_t)f->n_cases, 1))) {
      fprintf(o->diag, "mtcs: out of memory\n");
      return MT_EXIT_USAGE;
    }
    for (int c = 0; c < f->n_cases; c++) {
      if (!filter_match(o, f->cases[c].id)) continue;
      if (profile && strcmp(f->cases[c].profile, profile) != 0) {
        s->other_profile++;
        continue;
      }
      s->selected[k][c] = 1;
      s->total++;
    }
  }
  if (s->total == 0 && s->other_profile) { /* nothing to execute: a skip, not an error */
    fprintf(o->out, "SKIP: no case of profile %s in %d golden file%s (%d case%s of other "
                    "profiles%s): nothing executed\n",
            profile, s->n_files, s->n_files == 1 ? "" : "s", s->other_profile,
            s->other_profile == 1 ? "" : "s", o->n_filter ? " match the filters" : "");
    return MT_EXIT_SKIP;
  }
  if (s->total == 0) {
    if (o->n_filter) {
      fprintf(o->diag, "mtcs: no case matches");
      for (int k = 0; k < o->n_filter; k++) fprintf(o->diag, " --filter '%s'", o->filter[k]);
      fprintf(o->diag, " (%d cases in %d golden file%s; see `mtcs list`)\n", n_cases, s->n_files,
              s->n_files == 1 ? "" : "s");
    } else {
      fprintf(o->diag, "mtcs: the golden files hold no cases: nothing to run\n");
    }
    return MT_EXIT_USAGE;
  }
  return -1;
}

/* ---- torch versions ---------------------------------------------------------------- */

static int strs_has(char **v, int n, const char *s) {
  for (int k = 0; k < n; k++)
    if (!strcmp(v[k], s)) return 1;
  return 0;
}

mt_status mt_session_versions(const mt_golden_file *const *files, int n_files, char ***out,
                              int *n_out, mt_error *err) {
  char **v = NULL;
  int n = 0, cap = 0;
  *out = NULL;
  *n_out = 0;
  for (int k = 0; k < n_files; k++) {
    const mt_golden_file *f = files[k];
    for (int c = -1; c < f->n_cases; c++) {
      int nl = c < 0 ? (f->meta.torch_version != NULL) : f->cases[c].n_labels;
      for (int l = 0; l < nl; l++) {
        /* labels are "torch-" + the version */
        const char *s = c < 0 ? f->meta.torch_version : f->cases[c].labels[l] + 6;
        if (strs_has(v, n, s)) continue;
        if (n == cap) {
          cap = cap ? 2 * cap : 8;
          char **nv = realloc(v, (size_t)cap * sizeof *nv);
          if (!nv) goto oom;
          v = nv;
        }
        if (!(v[n] = str_dup(s))) goto oom;
        n++;
      }
    }
  }
  qsort(v, (size_t)n, sizeof *v, cmp_str);
  *out = v;
  *n_out = n;
  return MT_OK;
oom:
  free_strs(v, n);
  return mt_err(err, MT_OUT_OF_MEMORY, "out of memory listing torch versions");
}

/* --torch-version V must be a version some file or case records: exit code
 * MT_EXIT_USAGE (printed why, with the known versions) or -1. *common: the
 * files' own version when they all agree (else NULL). */
static int check_torch_version(const session *s, const char *want, const char **common) {
  const mt_session_opts *o = s->o;
  mt_error err = {0};
  char **v = NULL;
  int n = 0, rc = -1;
  *common = NULL;
  for (int k = 0; k < s->n_files; k++) {
    const char *tv = s->files[k]->meta.torch_version;
    if (k == 0) *common = tv;
    else if (!tv || !*common || strcmp(tv, *common) != 0) *common = NULL;
  }
  if (!want) return -1;
  if (mt_session_versions((const mt_golden_file *const *)s->files, s->n_files, &v, &n, &err) !=
      MT_OK) {
    fprintf(o->diag, "mtcs: %s\n", err.msg);
    return MT_EXIT_USAGE;
  }
  if (!strs_has(v, n, want)) {
    fprintf(o->diag, "mtcs %s: --torch-version %s: no golden file or case records results of "
                     "torch %s; the %d golden file%s know: ",
            o->adapter ? "validate" : "run", want, want, s->n_files, s->n_files == 1 ? "" : "s");
    for (int k = 0; k < n; k++) fprintf(o->diag, "%s%s", k ? ", " : "", v[k]);
    fprintf(o->diag, "%s (see mtcs --help)\n", n ? "" : "(none)");
    rc = MT_EXIT_USAGE;
  }
  free_strs(v, n);
  return rc;
}

int mt_session_list(const mt_session_opts *o) {
  session s;
  int rc = session_open(&s, o);
  if (rc >= 0) goto out;
  int w_id = 2, w_op = 2, w_rules = 5;
  for (int k = 0; k < s.n_files; k++)
    for (int c = 0; c < s.files[k]->n_cases; c++) {
      if (!s.selected[k][c]) continue;
      const mt_golden_case *gc = &s.files[k]->cases[c];
      int a = (int)strlen(gc->id), b = (int)strlen(gc->op_name), d = (int)strlen(gc->rules);
      w_id = a > w_id ? a : w_id;
      w_op = b > w_op ? b : w_op;
      w_rules = d > w_rules ? d : w_rules;
    }
  fprintf(o->out, "%-*s  %-*s  %-*s  %-8s  %-8s  %s\n", w_id, "id", w_op, "op", w_rules, "rules",
          "profile", "call", "expect");
  for (int k = 0; k < s.n_files; k++)
    for (int c = 0; c < s.files[k]->n_cases; c++) {
      if (!s.selected[k][c]) continue;
      const mt_golden_case *gc = &s.files[k]->cases[c];
      fprintf(o->out, "%-*s  %-*s  %-*s  %-8s  %-8s  %s%s%s\n", w_id, gc->id, w_op, gc->op_name,
              w_rules, gc->rules, gc->profile ? gc->profile : "torch",
              gc->backward ? "backward" : "forward", gc->expect_error ? "error " : "ok",
              gc->expect_error ? gc->error_class : "",
              gc->op == MT_OP__NONE ? "  (op not in this mtcs)" : "");
    }
  fflush(o->out);
  fprintf(o->diag, "%d case%s in %d golden file%s\n", s.total, s.total == 1 ? "" : "s", s.n_files,
          s.n_files == 1 ? "" : "s");
  rc = MT_EXIT_OK;
out:
  session_free(&s);
  return rc;
}

/* Per golden file, when stderr is not a terminal: "<file>: 3 passed, ...". */
static void file_line(const mt_session_opts *o, const mt_golden_file *f, const int *before,
                      const mt_report *rep, double seconds) {
  int n[3] = {0}, ran = 0;
  for (int q = 0; q < MT_CS__COUNT; q++) {
    int d = rep->counts[q] - before[q];
    n[mt_case_status_group((mt_case_status)q)] += d;
    ran += d;
  }
  if (o->progress_tty || !ran) return;
  fprintf(o->diag, "%s: %d passed, %d failed, %d %s (%.2f s)\n", f->path, n[MT_GROUP_PASSED],
          n[MT_GROUP_FAILED], n[MT_GROUP_SKIPPED],
          o->require_all ? "not run (failures: --require-all)" : "skipped", seconds);
}

static int report_failed(const mt_report *rep) { return mt_report_get_totals(rep).failed; }

/* `mtcs validate`: starts the adapter (exit code 2 and why when it cannot
 * start or fails its handshake; -1 when it runs) and points the run's
 * exec options at it. */
static int adapter_open(const mt_session_opts *o, mt_adapter **ad, mt_run_opts *run) {
  mt_error err = {0};
  mt_adapter_opts ao = {o->adapter, o->hello_timeout_s, o->case_timeout_s, o->diag,
                        o->progress_tty};
  if (mt_adapter_open(&ao, ad, &err) != MT_OK) {
    fprintf(o->diag, "mtcs validate: the adapter did not start: %s\n", err.msg);
    return MT_EXIT_USAGE;
  }
  run->exec.invoker = mt_adapter_invoker(*ad);
  return -1;
}

/* The cases of one batch: through the adapter (in this process, one at a
 * time; *lost counts those without a verdict, *not_run those not sent), or
 * in a forked worker (isolate.h). */
static void run_batch(const mt_backend *be, mt_adapter *ad, mt_golden_case *const *cases, int n,
                      const mt_run_opts *run, mt_case_result *res, int *lost, int *not_run) {
  if (!ad) {
    mt_cases_run(be->impl, cases, n, run, res);
    return;
  }
  for (int k = 0; k < n; k++) {
    int before = mt_adapter_losses(ad);
    mt_case_execute(NULL, cases[k], &run->exec, &res[k]);
    if (mt_adapter_losses(ad) > before) {
      ++*lost;
      *not_run += res[k].status == MT_CS_SKIP;
    }
  }
}

int mt_session_run(const mt_session_opts *o) {
  int rc = MT_EXIT_USAGE, done = 0;
  mt_error err = {0};
  mt_afile json = {0}, junit = {0};
  mt_backend be = {0};
  mt_adapter *ad = NULL;
  const char **reasons = NULL;
  char gave_up_reason[MT_MSG_LEN + 128] = "";
  int lost = 0, not_run = 0, unsent = 0;
  mt_report rep = {0};
  mt_expectations expect = {0};
  session s = {0};
  struct { /* a batch's cases and results, batch_max of each */
    mt_golden_case **batch, **runnable;
    mt_case_result *res, **rres, *runres;
  } bufs = {0};
  double t0 = now_s(), t_shown = 0;
  mt_session_opts so = *o;
  if (!so.profile) so.profile = "torch";
  if (!mt_profile_known(so.profile) && strcmp(so.profile, "all") != 0) {
    fprintf(o->diag, "mtcs %s: unknown profile '%s' (expected one of: %s, all)\n",
            o->adapter ? "validate" : "run", so.profile,
            mt_profile_list());
    return MT_EXIT_USAGE;
  }
  o = &so;

  /* Outputs first: a report that cannot be written fails before any work
   * (probed now; the temporary file itself is made at the end, so that an
   * interrupted mtcs leaves nothing behind). */
  if (o->report_json && mt_afile_open(&json, o->report_json, &err) != MT_OK) goto input_error;
  mt_afile_abort(&json);
  if (o->junit && mt_afile_open(&junit, o->junit, &err) != MT_OK) goto input_error;
  mt_afile_abort(&junit);
  if (o->expect && mt_expect_load(o->expect, NULL, &expect, &err) != MT_OK) goto input_error;
  if (o->repro_dir) {
    struct stat sb;
    if (stat(o->repro_dir, &sb) != 0 || !S_ISDIR(sb.st_mode) || access(o->repro_dir, W_OK) != 0) {
      mt_err(&err, MT_IO_ERROR, "--repro-dir %s is not a writable directory", o->repro_dir);
      goto input_error;
    }
  }
  mt_status st = o->adapter ? MT_OK : mt_backend_open(o->backend, &be, &err);
  if (st == MT_NOT_SUPPORTED) {
    fprintf(o->out, "SKIP: %s\n", err.msg);
    rc = MT_EXIT_SKIP;
    goto out;
  }
  if (st != MT_OK) goto input_error;
  if ((rc = session_open(&s, o)) >= 0) goto out;
  const char *files_version = NULL;
  if ((rc = check_torch_version(&s, o->run.exec.torch_version, &files_version)) >= 0) goto out;
  mt_run_opts run = o->run;
  if (o->adapter && (rc = adapter_open(o, &ad, &run)) >= 0) goto out;
  const char *be_name = ad ? mt_adapter_name(ad) : be.name;
  rc = MT_EXIT_USAGE;
  const char *torch_v = o->run.exec.torch_version ? o->run.exec.torch_version : files_version;
  rep.torch_version = torch_v;
  rep.torch_version_requested = o->run.exec.torch_version != NULL;
  rep.backend = be_name;
  rep.adapter_command = o->adapter;
  rep.adapter_name = ad ? be_name : NULL;
  rep.require_all = o->require_all;
  rep.level = mt_level_name(o->run.exec.level);
  rep.profile = o->profile;
  if (o->argc > 0 && mt_report_set_command(&rep, o->argc, o->argv, &err) != MT_OK)
    goto input_error;
  for (int k = 0; k < s.n_files; k++)
    if (mt_report_add_golden(&rep, s.files[k]->path, s.files[k]->meta.torch_version,
                             s.files[k]->meta.generator_sha256, &err) != MT_OK)
      goto input_error;
  if (!o->progress_tty && ad)
    fprintf(o->diag, "mtcs %s: adapter %s (profiles %s; command: %s), case timeout %g s\n",
            MTCS_VERSION, be_name, mt_adapter_profiles(ad), o->adapter,
            o->case_timeout_s > 0 ? o->case_timeout_s : MT_ADAPTER_CASE_TIMEOUT_S);
  if (!o->progress_tty)
    fprintf(o->diag,
            "mtcs %s: backend %s, profile %s, level %s, torch %s%s, %d case%s in %d golden "
            "file%s%s%s%s; poison re-runs: %d\n",
            MTCS_VERSION, be_name, o->profile, mt_level_name(o->run.exec.level),
            torch_v ? torch_v : "of each file",
            o->run.exec.torch_version ? " (--torch-version)" : "", s.total,
            s.total == 1 ? "" : "s", s.n_files, s.n_files == 1 ? "" : "s",
            o->n_golden ? "" : " of ", o->n_golden ? "" : (o->golden_dir ? o->golden_dir : "golden"),
            o->require_all ? "; --require-all" : "", o->run.exec.poison_runs);
  if (!o->progress_tty && s.other_profile)
    fprintf(o->diag, "(%d case%s of other profiles not selected; --profile to run them)\n",
            s.other_profile, s.other_profile == 1 ? "" : "s");

  /* with an adapter, one case at a time: a request can take seconds */
  int batch_max = ad ? 1 : o->batch > 0 ? o->batch : be.batch; /* be open: batch set */
  if (!(bufs.batch = calloc((size_t)batch_max, sizeof *bufs.batch)) ||
      !(bufs.res = calloc((size_t)batch_max, sizeof *bufs.res)) ||
      !(bufs.runnable = calloc((size_t)batch_max, sizeof *bufs.runnable)) ||
      !(bufs.rres = calloc((size_t)batch_max, sizeof *bufs.rres)) ||
      !(bufs.runres = calloc((size_t)batch_max, sizeof *bufs.runres))) {
    mt_err(&err, MT_OUT_OF_MEMORY, "out of memory for a batch of %d cases (--batch)", batch_max);
    goto input_error;
  }
  mt_golden_case **batch = bufs.batch, **runnable = bufs.runnable;
  mt_case_result *res = bufs.res, **rres = bufs.rres, *runres = bufs.runres;
  for (int k = 0; k < s.n_files; k++) {
    mt_golden_file *f = s.files[k];
    int before[MT_CS__COUNT];
    memcpy(before, rep.counts, sizeof before);
    double tf = now_s();
    for (int ci = 0; ci < f->n_cases;) {
      /* a batch: up to batch_max selected cases loaded, run by one worker
       * process (isolate.h), reported, unloaded */
      int nb = 0, nrun = 0;
      for (; ci < f->n_cases && nb < batch_max; ci++)
        if (s.selected[k][ci]) batch[nb++] = &f->cases[ci];
      if (o->progress_tty && nb && (done == 0 || now_s() - t_shown >= 0.1)) {
        /* at most 10 updates a second: a terminal write per case costs */
        mt_console_progress(o, done + 1, s.total, report_failed(&rep), now_s() - t0,
                            batch[0]->id);
        t_shown = now_s();
      }
      for (int b = 0; b < nb; b++) {
        memset(&res[b], 0, sizeof res[b]);
        if (batch[b]->op == MT_OP__NONE) {
          res[b].status = MT_CS_SKIP;
          setmsg(&res[b], "op '%s' is not in this mtcs's op table (spec/include/mt/ops.def)",
                 batch[b]->op_name);
          continue;
        }
        const char *why = NULL;
        if (ad && mt_adapter_gave_up(ad, &why)) { /* the run has stopped: not sent */
          res[b].status = MT_CS_SKIP;
          setmsg(&res[b], "not run: the adapter failed %d starts in a row (last: %s)",
                 MT_ADAPTER_MAX_FAILED_STARTS, why);
          unsent++;
          continue;
        }
        if (mt_golden_load(f, batch[b], &err) != MT_OK) {
          for (int u = 0; u < b; u++) mt_golden_unload(batch[u]);
          goto input_error;
        }
        rres[nrun] = &res[b];
        runnable[nrun++] = batch[b];
      }
      run_batch(&be, ad, runnable, nrun, &run, runres, &lost, &not_run);
      for (int u = 0; u < nrun; u++) *rres[u] = runres[u];
      for (int b = 0; b < nb; b++) {
        mt_golden_case *c = batch[b];
        char repro[1024] = "";
        char *replay = NULL; /* the command that replays the case */
        if (c->op != MT_OP__NONE) {
          if (o->repro_dir && mt_case_status_group(res[b].status) == MT_GROUP_FAILED)
            mt_repro_write(o, f, c, &res[b], repro, sizeof repro, &replay);
          mt_golden_unload(c);
        }
        done++;
        if (o->expect) mt_expect_apply(&expect, c->id, &res[b]);
        /* a failure (after --expect) without a bundle: the golden file, filtered */
        int failed = mt_case_status_group(res[b].status) == MT_GROUP_FAILED;
        if (failed && !replay && !(replay = mt_repro_command(o, f->path, c, 1)))
          mt_err(&err, MT_OUT_OF_MEMORY, "out of memory");
        char script[PATH_MAX]; /* absolute: a report is read from anywhere */
        if (repro[0] && !realpath(repro, script)) snprintf(script, sizeof script, "%s", repro);
        if ((failed && !replay) ||
            mt_report_add_case(&rep, k, c->id, c->op_name, c->op ? mt_op_family(c->op) : NULL,
                               mt_case_blame(&res[b], c->rules), &res[b], &err) != MT_OK ||
            mt_report_describe_case(&rep, rep.n_cases - 1, c->profile, replay,
                                    repro[0] ? script : NULL, &err) != MT_OK) {
          free(replay);
          for (int u = b + 1; u < nb; u++)
            if (batch[u]->op != MT_OP__NONE) mt_golden_unload(batch[u]);
          goto input_error;
        }
        free(replay);
        mt_console_case(o, f, c, &res[b], repro);
      }
    }
    file_line(o, f, before, &rep, now_s() - tf);
  }
  mt_console_progress_clear(o);
  if (ad) { /* the adapter's last words before the summary */
    mt_adapter_stop(ad);
    const char *why = NULL;
    int nl = mt_adapter_losses(ad);
    if (mt_adapter_gave_up(ad, &why) && unsent)
      snprintf(gave_up_reason, sizeof gave_up_reason, "%d more case%s not run: the adapter "
               "failed %d starts in a row (last: %s)", unsent, unsent == 1 ? "" : "s",
               MT_ADAPTER_MAX_FAILED_STARTS, why);
    if (!(reasons = calloc((size_t)nl + 1, sizeof *reasons))) {
      mt_err(&err, MT_OUT_OF_MEMORY, "out of memory");
      goto input_error;
    }
    for (int k = 0; k < nl; k++) reasons[k] = mt_adapter_loss(ad, k);
    if (gave_up_reason[0]) reasons[nl++] = gave_up_reason;
    rep.reasons = reasons;
    rep.n_reasons = nl;
    rep.incomplete_cases = lost + unsent;
    rep.not_run = not_run + unsent;
  }
  rep.complete = 1;
  rep.seconds = now_s() - t0;
  mt_console_summary(o, &rep);
  mt_report_totals t = mt_report_get_totals(&rep);
  int stale = 0; /* an expectation that matches no case of the golden files read */
  for (int e = 0; o->expect && e < expect.n; e++) {
    int any = expect.e[e].used;
    for (int k = 0; k < s.n_files && !any; k++)
      for (int ci = 0; ci < s.files[k]->n_cases && !any; ci++)
        any = fnmatch(expect.e[e].glob, s.files[k]->cases[ci].id, 0) == 0;
    if (!any) {
      stale++;
      fprintf(o->out, "FAIL: %s:%d: the entry for '%s' matches no case of the golden files: "
                      "remove it\n", o->expect, expect.e[e].line, expect.e[e].glob);
    }
  }
  if (t.executed == 0 && !o->require_all && !rep.incomplete_cases)
    fprintf(o->out, "SKIP: no case executed (%d not supported by backend %s, %d skipped): "
                    "nothing was checked\n",
            rep.counts[MT_CS_NOT_SUPPORTED], be_name, rep.counts[MT_CS_SKIP]);
  fflush(o->out);
  if (o->report_json &&
      (mt_afile_open(&json, o->report_json, &err) != MT_OK ||
       mt_report_write_json(json.f, &rep, &err) != MT_OK || mt_afile_commit(&json, &err) != MT_OK)) {
    fprintf(o->diag, "mtcs: %s\n", err.msg);
    goto out;
  }
  if (o->junit &&
      (mt_afile_open(&junit, o->junit, &err) != MT_OK ||
       mt_report_write_junit(junit.f, &rep, &err) != MT_OK ||
       mt_afile_commit(&junit, &err) != MT_OK)) {
    fprintf(o->diag, "mtcs: %s\n", err.msg);
    goto out;
  }
  rc = t.failed || stale || rep.incomplete_cases ? MT_EXIT_FAIL
       : t.executed == 0                           ? MT_EXIT_SKIP
                                                   : MT_EXIT_OK;
  goto out;

input_error:
  fflush(o->out);
  mt_console_progress_clear(o);
  fprintf(o->diag, "mtcs: %s\n", err.msg);
  if (s.total)
    fprintf(o->diag, "INCOMPLETE: the run stopped after %d of %d cases; no report written\n", done,
            s.total);
  rc = MT_EXIT_USAGE;
out:
  mt_afile_abort(&json);
  mt_afile_abort(&junit);
  mt_report_free(&rep);
  mt_expect_free(&expect);
  session_free(&s);
  mt_backend_close(&be);
  mt_adapter_close(ad);
  free(reasons);
  free(bufs.batch);
  free(bufs.runnable);
  free(bufs.res);
  free(bufs.rres);
  free(bufs.runres);
  return rc;
}

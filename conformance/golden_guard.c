/* golden_guard.c - the MANIFEST check and the parse in a child process
 * that stand between a golden file and the runner (golden_guard.h). */
#include "golden_guard.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "forkrun.h"
#include "golden_io.h"
#include "sha256.h"

/* ---- 1. MANIFEST ------------------------------------------------------------------ */

static const char *base_name(const char *path) {
  const char *s = strrchr(path, '/');
  return s ? s + 1 : path;
}

static int is_hex64(const char *s) {
  if (strlen(s) != 64) return 0;
  for (; *s; s++)
    if (!((*s >= '0' && *s <= '9') || (*s >= 'a' && *s <= 'f') || (*s >= 'A' && *s <= 'F')))
      return 0;
  return 1;
}

mt_status mt_golden_manifest_check(const char *path, const char *golden_dir, int *checked,
                                   mt_error *err) {
  char mpath[4096], line[1024], want[65] = "", got[65];
  const char *name = base_name(path);
  int lineno = 0, found = 0;
  *checked = 0;
  snprintf(mpath, sizeof mpath, "%s/MANIFEST", golden_dir && golden_dir[0] ? golden_dir : ".");
  FILE *f = fopen(mpath, "r");
  if (!f) {
    if (errno == ENOENT) return MT_OK; /* a third party's directory: nothing to check against */
    return mt_err(err, MT_IO_ERROR, "cannot read %s: %s", mpath, strerror(errno));
  }
  while (fgets(line, sizeof line, f)) {
    char fname[512], hash[128], extra[8];
    long long count;
    lineno++;
    if (line[0] == '#' || strspn(line, " \t\r\n") == strlen(line)) continue;
    int nf = sscanf(line, "%511s %lld %127s %7s", fname, &count, hash, extra);
    if (nf != 3 || count < 0 || !is_hex64(hash)) {
      fclose(f);
      return mt_err(err, MT_INVALID_FORMAT,
                    "%s:%d: not a MANIFEST line '<file> <case count> <sha256>' (regenerate the "
                    "goldens with golden/generate.py)",
                    mpath, lineno);
    }
    if (strcmp(fname, name) == 0) {
      for (int k = 0; k < 64; k++) want[k] = (char)(hash[k] | 0x20); /* lowercase */
      want[64] = 0;
      found = 1;
    }
  }
  int bad = ferror(f);
  fclose(f);
  if (bad) return mt_err(err, MT_IO_ERROR, "cannot read %s: read error", mpath);
  if (!found)
    return mt_err(err, MT_INVALID_FORMAT,
                  "%s: not listed in %s, which every golden file of the golden directory must be "
                  "(regenerate with golden/generate.py, which writes MANIFEST, or name the file "
                  "with --golden to bypass the check)",
                  path, mpath);
  mt_status st = mt_sha256_file(path, got, err);
  if (st != MT_OK) return st;
  if (strcmp(got, want) != 0)
    return mt_err(err, MT_INVALID_FORMAT,
                  "%s: corrupt or changed file: its sha256 is %s, %s says %s (regenerate with "
                  "golden/generate.py, or name the file with --golden to bypass the check)",
                  path, got, mpath, want);
  *checked = 1;
  return MT_OK;
}

/* ---- 2. a full parse, here or in a child -------------------------------------------- */

mt_status mt_golden_parse_all(const char *path, int *n_cases, mt_error *err) {
  mt_golden_file *f = NULL;
  mt_status st = mt_golden_open(path, &f, err);
  if (n_cases) *n_cases = 0;
  if (st != MT_OK) return st;
  for (int k = 0; k < f->n_cases && st == MT_OK; k++) {
    st = mt_golden_load(f, &f->cases[k], err);
    mt_golden_unload(&f->cases[k]);
  }
  if (n_cases) *n_cases = f->n_cases;
  mt_golden_close(f);
  return st;
}

typedef struct report {
  int32_t status;
  int32_t n_cases;
  char msg[MT_MSG_LEN];
} report;

typedef struct parse_job {
  const char *path;
  mt_file_parse_fn parse;
} parse_job;

/* The child: parse, then the report. */
static int child_main(int fd, void *ctx) {
  const parse_job *job = ctx;
  struct rlimit no_core = {0, 0};
  setrlimit(RLIMIT_CORE, &no_core); /* a crash here is expected: no core files */
  report rep;
  mt_error e = {0};
  memset(&rep, 0, sizeof rep);
  int n = 0;
  rep.status = (int32_t)job->parse(job->path, &n, &e);
  rep.n_cases = n;
  if (rep.status != MT_OK) snprintf(rep.msg, sizeof rep.msg, "%s", e.msg);
  return mt_write_all(fd, &rep, sizeof rep) ? 3 : 0;
}

mt_status mt_parse_isolated(const char *path, mt_file_parse_fn parse, double timeout_s,
                            const char *limit_hint, int *crashed, int *count, mt_error *err) {
  report rep;
  mt_fork_result fr;
  parse_job job = {path, parse};
  if (crashed) *crashed = 0;
  if (count) *count = 0;
  if (mt_fork_run(child_main, &job, timeout_s, &rep, sizeof rep, &fr, err) != MT_OK)
    return mt_err_prefix(err, "%s: cannot check the file", path);
  if (fr.timed_out) {
    if (crashed) *crashed = -1;
    return mt_err(err, MT_INVALID_FORMAT,
                  "%s: corrupt file (reading it took more than %g s; the reader was killed; "
                  "%s)",
                  path, timeout_s, limit_hint);
  }
  if (fr.signal) {
    char buf[32];
    if (crashed) *crashed = fr.signal;
    return mt_err(err, MT_INVALID_FORMAT, "%s: corrupt file (the HDF5 library crashed reading it: %s)",
                  path, mt_signal_name(fr.signal, buf, sizeof buf));
  }
  if (fr.got < sizeof rep || fr.exit_code != 0) {
    if (crashed) *crashed = -2;
    return mt_err(err, MT_INVALID_FORMAT,
                  "%s: corrupt file (the process reading it exited with status %d and no report)",
                  path, fr.exit_code);
  }
  if (count) *count = rep.n_cases;
  if (rep.status != MT_OK) {
    rep.msg[sizeof rep.msg - 1] = 0;
    return mt_err(err, (mt_status)rep.status, "%s", rep.msg);
  }
  return MT_OK;
}

mt_status mt_golden_parse_isolated(const char *path, double timeout_s, int *crashed, int *n_cases,
                                   mt_error *err) {
  if (!(timeout_s > 0)) {
    const char *env = getenv("MTCS_CHECK_TIMEOUT");
    timeout_s = env && atof(env) > 0 ? atof(env) : MT_GOLDEN_CHECK_TIMEOUT_S;
  }
  return mt_parse_isolated(path, mt_golden_parse_all, timeout_s,
                           "MTCS_CHECK_TIMEOUT sets the limit", crashed, n_cases, err);
}

/* ---- both ---------------------------------------------------------------------------- */

/* The MANIFEST beside a file named with --golden vouches for it when it lists
 * the file with the file's own sha256. Anything else (no MANIFEST there, the
 * file not listed, another hash, an unreadable or malformed MANIFEST) vouches
 * for nothing and is no error: the file is parsed in the child like any other. */
static int manifest_beside_vouches(const char *path) {
  char d[4096];
  const char *slash = strrchr(path, '/');
  if (!slash)
    snprintf(d, sizeof d, ".");
  else if (slash == path)
    snprintf(d, sizeof d, "/");
  else
    snprintf(d, sizeof d, "%.*s", (int)(slash - path), path);
  int checked = 0;
  mt_error e = {0};
  return mt_golden_manifest_check(path, d, &checked, &e) == MT_OK && checked;
}

/* MTCS_CHECK_PARSE=always: 2 on every file, vouched for or not. */
static int parse_always(void) {
  const char *env = getenv("MTCS_CHECK_PARSE");
  return env && strcmp(env, "always") == 0;
}

mt_status mt_golden_check(const char *path, int from_golden_dir, const char *golden_dir,
                          mt_error *err) {
  mt_error local;
  if (!err) err = &local;
  err->status = MT_OK;
  err->msg[0] = 0;
  int checked = 1, vouched;
  mt_status st;
  if (from_golden_dir) {
    if ((st = mt_golden_manifest_check(path, golden_dir, &checked, err)) != MT_OK) return st;
    vouched = checked;
  } else {
    vouched = manifest_beside_vouches(path);
  }
  /* The bytes MANIFEST lists are the generator's, which CI reads in process
   * (conformance.*): no second parse. Any other file is parsed in a child. */
  if ((!vouched || parse_always()) &&
      (st = mt_golden_parse_isolated(path, 0, NULL, NULL, err)) != MT_OK)
    return st;
  if (!checked)
    snprintf(err->msg, sizeof err->msg,
             "%s/MANIFEST does not exist: the sha256 of the golden files is not checked",
             golden_dir && golden_dir[0] ? golden_dir : ".");
  return MT_OK;
}

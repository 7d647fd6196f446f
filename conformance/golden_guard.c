/* golden_guard.c - the MANIFEST check and the parse in a child process
 * that stand between a golden file and the runner (golden_guard.h). */
#define _GNU_SOURCE /* pipe2 */
#include "golden_guard.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

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

static const char *signal_name(int sig, char *buf, size_t len) {
  switch (sig) {
    case SIGSEGV: return "SIGSEGV";
    case SIGBUS: return "SIGBUS";
    case SIGABRT: return "SIGABRT";
    case SIGFPE: return "SIGFPE";
    case SIGILL: return "SIGILL";
    case SIGKILL: return "SIGKILL";
    case SIGTRAP: return "SIGTRAP";
    case SIGSYS: return "SIGSYS";
    case SIGXCPU: return "SIGXCPU";
    case SIGXFSZ: return "SIGXFSZ";
    case SIGPIPE: return "SIGPIPE";
    default: snprintf(buf, len, "signal %d", sig); return buf;
  }
}

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* The child: parse, report, _exit (no atexit handlers, no stdio flush: the
 * parent owns those). */
__attribute__((noreturn)) static void child_main(const char *path, int wfd) {
  struct rlimit no_core = {0, 0};
  setrlimit(RLIMIT_CORE, &no_core); /* a crash here is expected: no core files */
  report rep;
  mt_error e = {0};
  memset(&rep, 0, sizeof rep);
  int n = 0;
  rep.status = (int32_t)mt_golden_parse_all(path, &n, &e);
  rep.n_cases = n;
  if (rep.status != MT_OK) snprintf(rep.msg, sizeof rep.msg, "%s", e.msg);
  const char *p = (const char *)&rep;
  size_t left = sizeof rep;
  while (left > 0) {
    ssize_t w = write(wfd, p, left);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) _exit(3);
    p += w;
    left -= (size_t)w;
  }
  _exit(0);
}

mt_status mt_golden_parse_isolated(const char *path, double timeout_s, int *crashed, int *n_cases,
                                   mt_error *err) {
  int fds[2];
  report rep;
  size_t got = 0;
  int timed_out = 0, status = 0;
  if (crashed) *crashed = 0;
  if (n_cases) *n_cases = 0;
  if (!(timeout_s > 0)) {
    const char *env = getenv("MTCS_CHECK_TIMEOUT");
    timeout_s = env && atof(env) > 0 ? atof(env) : MT_GOLDEN_CHECK_TIMEOUT_S;
  }
  if (pipe2(fds, O_CLOEXEC) != 0)
    return mt_err(err, MT_IO_ERROR, "%s: cannot check the file: pipe: %s", path, strerror(errno));
  pid_t pid = fork();
  if (pid < 0) {
    int e = errno;
    close(fds[0]);
    close(fds[1]);
    return mt_err(err, MT_IO_ERROR, "%s: cannot check the file: fork: %s", path, strerror(e));
  }
  if (pid == 0) {
    close(fds[0]);
    child_main(path, fds[1]);
  }
  close(fds[1]);
  double deadline = now_s() + timeout_s;
  while (got < sizeof rep) {
    double left = deadline - now_s();
    if (left <= 0) {
      timed_out = 1;
      break;
    }
    struct pollfd pf = {.fd = fds[0], .events = POLLIN};
    int pr = poll(&pf, 1, (int)ceil(left * 1000.0));
    if (pr < 0 && errno == EINTR) continue;
    if (pr == 0) continue; /* the deadline check above ends it */
    if (pr < 0) break;
    ssize_t r = read(fds[0], (char *)&rep + got, sizeof rep - got);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) break; /* EOF: the child is gone */
    got += (size_t)r;
  }
  close(fds[0]);
  if (timed_out) kill(pid, SIGKILL);
  while (waitpid(pid, &status, 0) < 0)
    if (errno != EINTR) {
      status = 0;
      break;
    }
  if (timed_out) {
    if (crashed) *crashed = -1;
    return mt_err(err, MT_INVALID_FORMAT,
                  "%s: corrupt file (reading it took more than %g s; the reader was killed; "
                  "MTCS_CHECK_TIMEOUT sets the limit)",
                  path, timeout_s);
  }
  if (WIFSIGNALED(status)) {
    char buf[32];
    if (crashed) *crashed = WTERMSIG(status);
    return mt_err(err, MT_INVALID_FORMAT, "%s: corrupt file (the HDF5 library crashed reading it: %s)",
                  path, signal_name(WTERMSIG(status), buf, sizeof buf));
  }
  if (got < sizeof rep || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    if (crashed) *crashed = -2;
    return mt_err(err, MT_INVALID_FORMAT,
                  "%s: corrupt file (the process reading it exited with status %d and no report)",
                  path, WIFEXITED(status) ? WEXITSTATUS(status) : -1);
  }
  if (n_cases) *n_cases = rep.n_cases;
  if (rep.status != MT_OK) {
    rep.msg[sizeof rep.msg - 1] = 0;
    return mt_err(err, (mt_status)rep.status, "%s", rep.msg);
  }
  return MT_OK;
}

/* ---- both ---------------------------------------------------------------------------- */

mt_status mt_golden_check(const char *path, int from_golden_dir, const char *golden_dir,
                          mt_error *err) {
  mt_error local;
  if (!err) err = &local;
  err->status = MT_OK;
  err->msg[0] = 0;
  int checked = 1;
  mt_status st;
  if (from_golden_dir && (st = mt_golden_manifest_check(path, golden_dir, &checked, err)) != MT_OK)
    return st;
  if ((st = mt_golden_parse_isolated(path, 0, NULL, NULL, err)) != MT_OK) return st;
  if (!checked)
    snprintf(err->msg, sizeof err->msg,
             "%s/MANIFEST does not exist: the sha256 of the golden files is not checked",
             golden_dir && golden_dir[0] ? golden_dir : ".");
  return MT_OK;
}

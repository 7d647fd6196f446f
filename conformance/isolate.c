/* isolate.c - a case in a forked child with a timeout; see isolate.h. */
#include "isolate.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define setmsg mt_case_setmsg
#define now_s mt__now_s

#define MT_SIGNALS(X) \
  X(SIGSEGV) X(SIGABRT) X(SIGBUS) X(SIGFPE) X(SIGILL) X(SIGKILL) X(SIGTERM) X(SIGTRAP) \
  X(SIGSYS) X(SIGPIPE) X(SIGXCPU) X(SIGINT) X(SIGALRM)

static const char *signal_abbrev(int sig) {
#define MT_X(s) if (sig == s) return #s;
  MT_SIGNALS(MT_X)
#undef MT_X
  return "signal";
}

typedef struct wire {
  int32_t status;
  uint32_t len;
  double seconds;
  char rule[16]; /* mt_case_result.rule */
} wire;

static int write_all(int fd, const void *buf, size_t n) {
  const char *p = buf;
  while (n) {
    ssize_t w = write(fd, p, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return -1;
    p += w;
    n -= (size_t)w;
  }
  return 0;
}

static void child_run(int fd, const mt_impl *impl, const mt_golden_case *c,
                      const mt_run_opts *o) {
  mt_case_result r;
  mt_case_execute(impl, c, &o->exec, &r);
  wire w = {(int32_t)r.status, (uint32_t)strnlen(r.message, sizeof r.message - 1), r.seconds, ""};
  memcpy(w.rule, r.rule, sizeof w.rule);
  w.rule[sizeof w.rule - 1] = 0;
  int bad = write_all(fd, &w, sizeof w) || write_all(fd, r.message, w.len);
  close(fd);
  _exit(bad ? 3 : 0); /* no atexit handlers: the parent owns HDF5 and the reports */
}

void mt_case_run(const mt_impl *impl, const mt_golden_case *c, const mt_run_opts *o,
                 mt_case_result *r) {
  double t0 = now_s();
  if (o->no_fork) {
    mt_case_execute(impl, c, &o->exec, r);
    r->seconds = now_s() - t0;
    return;
  }
  memset(r, 0, sizeof *r);
  int fds[2];
  if (pipe(fds) != 0) {
    r->status = MT_CS_ERROR;
    setmsg(r, "cannot create a pipe for the case process: %s", strerror(errno));
    return;
  }
  fflush(NULL);
  pid_t pid = fork();
  if (pid < 0) {
    r->status = MT_CS_ERROR;
    setmsg(r, "cannot fork the case process: %s", strerror(errno));
    close(fds[0]);
    close(fds[1]);
    return;
  }
  if (pid == 0) {
    close(fds[0]);
    child_run(fds[1], impl, c, o);
  }
  close(fds[1]);
  /* Read the result until EOF or the deadline. */
  char buf[sizeof(wire) + MT_RESULT_MSG_LEN];
  size_t got = 0;
  int timed_out = 0;
  double deadline = t0 + (o->timeout_s > 0 ? o->timeout_s : 1e9);
  for (;;) {
    double left = deadline - now_s();
    if (left <= 0) {
      timed_out = 1;
      break;
    }
    struct pollfd p = {fds[0], POLLIN, 0};
    int pr = poll(&p, 1, left > 1e6 ? 1000000000 : (int)(left * 1000) + 1);
    if (pr < 0 && errno == EINTR) continue;
    if (pr < 0) break;
    if (pr == 0) continue; /* re-check the deadline */
    ssize_t n = read(fds[0], buf + got, sizeof buf - got);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break; /* EOF: the child finished or died */
    got += (size_t)n;
    if (got == sizeof buf) break;
  }
  close(fds[0]);
  int ws = 0;
  if (timed_out) {
    kill(pid, SIGKILL);
    while (waitpid(pid, &ws, 0) < 0 && errno == EINTR) {
    }
    r->status = MT_CS_TIMEOUT;
    setmsg(r, "no result after %g s: killed (raise --timeout, or --no-fork to debug)",
           o->timeout_s);
    r->seconds = now_s() - t0;
    return;
  }
  while (waitpid(pid, &ws, 0) < 0 && errno == EINTR) {
  }
  r->seconds = now_s() - t0;
  if (WIFSIGNALED(ws)) {
    int sig = WTERMSIG(ws);
    r->status = MT_CS_CRASH;
    setmsg(r, "the case process was killed by %s (signal %d: %s)%s", signal_abbrev(sig), sig,
           strsignal(sig), got >= sizeof(wire) ? " after reporting its result" : "");
    return;
  }
  wire w;
  if (got >= sizeof w) memcpy(&w, buf, sizeof w);
  if (got < sizeof w || w.len > MT_RESULT_MSG_LEN - 1 || got != sizeof w + w.len ||
      w.status < 0 || w.status >= MT_CS__COUNT || WEXITSTATUS(ws) != 0) {
    r->status = MT_CS_CRASH;
    setmsg(r, "the case process exited with status %d without reporting a result "
              "(did the kernel call exit(), or a sanitizer stop it? see its stderr)",
           WIFEXITED(ws) ? WEXITSTATUS(ws) : -1);
    return;
  }
  r->status = (mt_case_status)w.status;
  w.rule[sizeof w.rule - 1] = 0;
  memcpy(r->rule, w.rule, sizeof r->rule);
  memcpy(r->message, buf + sizeof w, w.len);
  r->message[w.len] = 0;
}

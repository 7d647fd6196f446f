/* forkrun.c - a function in a forked child under a deadline; see forkrun.h. */
#define _GNU_SOURCE /* pipe2 */
#include "forkrun.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "case.h"

#define MT_SIGNALS(X)                                                                     \
  X(SIGSEGV) X(SIGABRT) X(SIGBUS) X(SIGFPE) X(SIGILL) X(SIGKILL) X(SIGTERM) X(SIGTRAP)     \
  X(SIGSYS) X(SIGPIPE) X(SIGXCPU) X(SIGXFSZ) X(SIGINT) X(SIGALRM)

const char *mt_signal_name(int sig, char *buf, size_t len) {
#define MT_X(s) \
  if (sig == s) return #s;
  MT_SIGNALS(MT_X)
#undef MT_X
  snprintf(buf, len, "signal %d", sig);
  return buf;
}

int mt_write_all(int fd, const void *buf, size_t n) {
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

mt_status mt_fork_start(mt_child_fn fn, void *ctx, mt_child *child, mt_error *err) {
  int fds[2];
  child->pid = -1;
  child->fd = -1;
  if (pipe2(fds, O_CLOEXEC) != 0) return mt_err(err, MT_IO_ERROR, "pipe: %s", strerror(errno));
  fflush(NULL); /* nothing buffered is written twice */
  pid_t pid = fork();
  if (pid < 0) {
    int e = errno;
    close(fds[0]);
    close(fds[1]);
    return mt_err(err, MT_IO_ERROR, "fork: %s", strerror(e));
  }
  if (pid == 0) {
    close(fds[0]);
    int code = fn(fds[1], ctx);
    close(fds[1]);
    _exit(code);
  }
  close(fds[1]);
  child->pid = (int)pid;
  child->fd = fds[0];
  return MT_OK;
}

size_t mt_child_read(mt_child *child, void *buf, size_t n, double timeout_s, int *timed_out) {
  size_t got = 0;
  double deadline = mt__now_s() + timeout_s;
  *timed_out = 0;
  while (got < n && child->fd >= 0) {
    int wait_ms = -1;
    if (timeout_s > 0) {
      double left = deadline - mt__now_s();
      if (left <= 0) {
        *timed_out = 1;
        break;
      }
      wait_ms = left > 1e6 ? 1000000000 : (int)ceil(left * 1000.0);
    }
    struct pollfd pf = {.fd = child->fd, .events = POLLIN};
    int pr = poll(&pf, 1, wait_ms);
    if (pr < 0 && errno == EINTR) continue;
    if (pr < 0) break;
    if (pr == 0) continue; /* the deadline check above ends it */
    ssize_t r = read(child->fd, (char *)buf + got, n - got);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) break; /* EOF: the child finished or died */
    got += (size_t)r;
  }
  return got;
}

void mt_child_finish(mt_child *child, int kill_it, mt_fork_result *res) {
  res->signal = 0;
  res->exit_code = -1;
  if (child->fd >= 0) close(child->fd);
  child->fd = -1;
  if (child->pid <= 0) return;
  if (kill_it) kill(child->pid, SIGKILL);
  int ws = 0;
  while (waitpid(child->pid, &ws, 0) < 0)
    if (errno != EINTR) { /* not reapable: ended, how is unknown */
      child->pid = -1;
      return;
    }
  child->pid = -1;
  if (WIFSIGNALED(ws)) res->signal = WTERMSIG(ws); /* ours when kill_it and it was alive */
  if (WIFEXITED(ws)) res->exit_code = WEXITSTATUS(ws);
}

mt_status mt_fork_run(mt_child_fn fn, void *ctx, double timeout_s, void *buf, size_t cap,
                      mt_fork_result *res, mt_error *err) {
  mt_child child;
  memset(res, 0, sizeof *res);
  res->exit_code = -1;
  mt_status st = mt_fork_start(fn, ctx, &child, err);
  if (st != MT_OK) return st;
  res->got = mt_child_read(&child, buf, cap, timeout_s, &res->timed_out);
  mt_child_finish(&child, res->timed_out, res);
  if (res->timed_out) res->signal = 0; /* our SIGKILL */
  return MT_OK;
}

/* forkrun.h - a function run in a forked child under a deadline: the child
 * writes a report into a pipe, the parent reads it and learns how the child
 * ended (exited, killed by a signal, killed at the deadline). Case isolation
 * (isolate.c) and the reading of untrusted golden files (golden_guard.c)
 * both stand on it. */
#ifndef MT_CONF_FORKRUN_H
#define MT_CONF_FORKRUN_H

#include <stddef.h>

#include "mt_core.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Runs in the child: writes its report to fd; returns the child's exit code. */
typedef int (*mt_child_fn)(int fd, void *ctx);

typedef struct mt_fork_result {
  size_t got;    /* bytes of the report read */
  int timed_out; /* still running at the deadline: killed */
  int signal;    /* the signal that ended the child, 0 if none */
  int exit_code; /* the child's exit code when it exited, else -1 */
} mt_fork_result;

/* Forks; the child runs fn(fd, ctx) and _exits with its return value (no
 * atexit handlers, no stdio flush: the parent owns those). The parent reads
 * up to cap bytes into buf until EOF, a full buffer or timeout_s (<= 0: no
 * deadline), kills the child at the deadline and reaps it. IO_ERROR ("pipe:
 * ...", "fork: ...") when no child could be started. */
mt_status mt_fork_run(mt_child_fn fn, void *ctx, double timeout_s, void *buf, size_t cap,
                      mt_fork_result *res, mt_error *err);

/* The same as three steps, for a child that reports several records (a
 * worker running many cases): start it, read exactly n bytes at a time under
 * a deadline of your choosing, then finish (kill it if asked, reap it). */
typedef struct mt_child {
  int pid;
  int fd; /* the read end of the report pipe; -1 once closed */
} mt_child;
mt_status mt_fork_start(mt_child_fn fn, void *ctx, mt_child *child, mt_error *err);
/* Reads up to n bytes into buf until n are read, EOF, or timeout_s (<= 0:
 * no deadline) passes; returns the bytes read and sets *timed_out. */
size_t mt_child_read(mt_child *child, void *buf, size_t n, double timeout_s, int *timed_out);
/* Closes the pipe, kills the child when kill_it, reaps it and fills res:
 * signal (the one that ended it: the caller's own SIGKILL when kill_it found
 * it alive; a child that died first keeps its own signal) and exit_code
 * (got and timed_out are left as the caller set them). */
void mt_child_finish(mt_child *child, int kill_it, mt_fork_result *res);

/* Writes all n bytes (retrying on EINTR): 0, or -1. */
int mt_write_all(int fd, const void *buf, size_t n);

/* "SIGSEGV"; "signal N" (in buf) for a signal not in the table. */
const char *mt_signal_name(int sig, char *buf, size_t len);

#ifdef __cplusplus
}
#endif
#endif /* MT_CONF_FORKRUN_H */

/* isolate.c - a case in a forked child with a timeout; see isolate.h. */
#include "isolate.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "forkrun.h"

#define setmsg mt_case_setmsg
#define now_s mt__now_s

typedef struct wire {
  int32_t status;
  uint32_t len;
  double seconds;
  char rule[16]; /* mt_case_result.rule */
  int32_t device_error; /* mt_case_result.device_error: the worker stops after this case */
} wire;

/* A result as a wire record followed by its message: 0, or -1. */
static int send_result(int fd, const mt_case_result *r) {
  wire w = {(int32_t)r->status, (uint32_t)strnlen(r->message, sizeof r->message - 1), r->seconds,
            "", r->device_error != 0};
  memcpy(w.rule, r->rule, sizeof w.rule);
  w.rule[sizeof w.rule - 1] = 0;
  return mt_write_all(fd, &w, sizeof w) || mt_write_all(fd, r->message, w.len) ? -1 : 0;
}

/* A wire record and message (got bytes of buf) back into r: 0, or -1 when
 * they do not make one well-formed record. */
static int parse_result(const char *buf, size_t got, mt_case_result *r) {
  wire w;
  if (got < sizeof w) return -1;
  memcpy(&w, buf, sizeof w);
  if (w.len > MT_RESULT_MSG_LEN - 1 || got != sizeof w + w.len || w.status < 0 ||
      w.status >= MT_CS__COUNT)
    return -1;
  r->status = (mt_case_status)w.status;
  r->seconds = w.seconds;
  r->device_error = w.device_error != 0;
  w.rule[sizeof w.rule - 1] = 0;
  memcpy(r->rule, w.rule, sizeof r->rule);
  memcpy(r->message, buf + sizeof w, w.len);
  r->message[w.len] = 0;
  return 0;
}

void mt_case_run(const mt_impl *impl, const mt_golden_case *c, const mt_run_opts *o,
                 mt_case_result *r) {
  if (!o->no_fork) { /* a worker for this one case: the runner's own path */
    mt_golden_case *one = (mt_golden_case *)c; /* mt_cases_run only reads it */
    mt_cases_run(impl, &one, 1, o, r);
    return;
  }
  double t0 = now_s();
  mt_case_execute(impl, c, &o->exec, r);
  r->seconds = now_s() - t0;
}

/* ---- a worker for many cases ------------------------------------------------ */

typedef struct worker_ctx {
  const mt_impl *impl;
  mt_golden_case *const *cases;
  int first, n;
  const mt_run_opts *o;
} worker_ctx;

/* In the worker: cases first..n-1 in order, each result sent as it is known;
 * it stops after a case that met a DEVICE_ERROR (mt_case_result.device_error),
 * and its parent starts a fresh worker for the cases after it. */
static int worker_run(int fd, void *ctx) {
  const worker_ctx *x = ctx;
  for (int k = x->first; k < x->n; k++) {
    mt_case_result r;
    mt_case_execute(x->impl, x->cases[k], &x->o->exec, &r);
    if (send_result(fd, &r)) return 3;
    if (r.device_error) return 0;
  }
  return 0;
}

/* Why the worker stopped before reporting a case: r is that case's result. */
static void worker_died(const mt_fork_result *fr, int timed_out, double timeout_s, size_t got,
                        mt_case_result *r) {
  char name[32];
  if (timed_out) {
    r->status = MT_CS_TIMEOUT;
    setmsg(r, "no result after %g s: killed (raise --timeout, or --no-fork to debug)", timeout_s);
  } else if (fr->signal) {
    r->status = MT_CS_CRASH;
    setmsg(r, "the case process was killed by %s (signal %d: %s)",
           mt_signal_name(fr->signal, name, sizeof name), fr->signal, strsignal(fr->signal));
  } else {
    r->status = MT_CS_CRASH;
    setmsg(r, "the case process exited with status %d without reporting a result%s "
              "(did the kernel call exit(), or a sanitizer stop it? see its stderr)",
           fr->exit_code, got ? " (a partial one)" : "");
  }
}

void mt_cases_run(const mt_impl *impl, mt_golden_case *const *cases, int n, const mt_run_opts *o,
                  mt_case_result *results) {
  if (o->no_fork) {
    for (int k = 0; k < n; k++) mt_case_run(impl, cases[k], o, &results[k]);
    return;
  }
  char buf[sizeof(wire) + MT_RESULT_MSG_LEN];
  int k = 0;
  while (k < n) {
    worker_ctx x = {impl, cases, k, n, o};
    mt_child child;
    mt_error err = {0};
    memset(&results[k], 0, sizeof results[k]);
    if (mt_fork_start(worker_run, &x, &child, &err) != MT_OK) {
      for (; k < n; k++) {
        memset(&results[k], 0, sizeof results[k]);
        results[k].status = MT_CS_ERROR;
        setmsg(&results[k], "cannot start the case process: %s", err.msg);
      }
      return;
    }
    for (; k < n; k++) {
      mt_case_result *r = &results[k];
      memset(r, 0, sizeof *r);
      double t0 = now_s();
      int timed_out = 0;
      size_t got = mt_child_read(&child, buf, sizeof(wire), o->timeout_s, &timed_out);
      wire w;
      if (got == sizeof w) {
        memcpy(&w, buf, sizeof w);
        if (w.len <= MT_RESULT_MSG_LEN - 1)
          got += mt_child_read(&child, buf + sizeof w, w.len, o->timeout_s, &timed_out);
      }
      if (timed_out || parse_result(buf, got, r) != 0) {
        mt_fork_result fr = {0};
        /* a hung worker is killed; one that closed its pipe has ended (or is
         * ending: the kill cannot change how a dead process ended) */
        mt_child_finish(&child, 1, &fr);
        worker_died(&fr, timed_out, o->timeout_s, got, r);
        r->seconds = now_s() - t0;
        k++;
        break; /* a fresh worker for the cases after it */
      }
      if (r->device_error) { /* the worker has stopped (worker_run): a fresh one */
        k++;
        break;
      }
    }
    if (child.fd >= 0 || child.pid > 0) {
      mt_fork_result fr = {0};
      mt_child_finish(&child, 0, &fr);
    }
  }
}

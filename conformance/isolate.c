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
} wire;

typedef struct child_ctx {
  const mt_impl *impl;
  const mt_golden_case *c;
  const mt_run_opts *o;
} child_ctx;

/* In the child: the case, then its result as a wire record and the message. */
static int child_run(int fd, void *ctx) {
  const child_ctx *x = ctx;
  mt_case_result r;
  mt_case_execute(x->impl, x->c, &x->o->exec, &r);
  wire w = {(int32_t)r.status, (uint32_t)strnlen(r.message, sizeof r.message - 1), r.seconds, ""};
  memcpy(w.rule, r.rule, sizeof w.rule);
  w.rule[sizeof w.rule - 1] = 0;
  return mt_write_all(fd, &w, sizeof w) || mt_write_all(fd, r.message, w.len) ? 3 : 0;
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
  char buf[sizeof(wire) + MT_RESULT_MSG_LEN];
  child_ctx x = {impl, c, o};
  mt_fork_result fr;
  mt_error err = {0};
  if (mt_fork_run(child_run, &x, o->timeout_s, buf, sizeof buf, &fr, &err) != MT_OK) {
    r->status = MT_CS_ERROR;
    setmsg(r, "cannot start the case process: %s", err.msg);
    return;
  }
  r->seconds = now_s() - t0;
  if (fr.timed_out) {
    r->status = MT_CS_TIMEOUT;
    setmsg(r, "no result after %g s: killed (raise --timeout, or --no-fork to debug)",
           o->timeout_s);
    return;
  }
  if (fr.signal) {
    char name[32];
    r->status = MT_CS_CRASH;
    setmsg(r, "the case process was killed by %s (signal %d: %s)%s",
           mt_signal_name(fr.signal, name, sizeof name), fr.signal, strsignal(fr.signal),
           fr.got >= sizeof(wire) ? " after reporting its result" : "");
    return;
  }
  wire w;
  if (fr.got >= sizeof w) memcpy(&w, buf, sizeof w);
  if (fr.got < sizeof w || w.len > MT_RESULT_MSG_LEN - 1 || fr.got != sizeof w + w.len ||
      w.status < 0 || w.status >= MT_CS__COUNT || fr.exit_code != 0) {
    r->status = MT_CS_CRASH;
    setmsg(r, "the case process exited with status %d without reporting a result "
              "(did the kernel call exit(), or a sanitizer stop it? see its stderr)",
           fr.exit_code);
    return;
  }
  r->status = (mt_case_status)w.status;
  w.rule[sizeof w.rule - 1] = 0;
  memcpy(r->rule, w.rule, sizeof r->rule);
  memcpy(r->message, buf + sizeof w, w.len);
  r->message[w.len] = 0;
}

/* adapter.c - the adapter process and the protocol (spec/adapter-protocol.md);
 * see adapter.h. */
#define _GNU_SOURCE /* pipe2 */
#include "adapter.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "forkrun.h"
#include "golden_guard.h"
#include "golden_io.h"

#ifndef MTCS_VERSION
#define MTCS_VERSION "0.1.0"
#endif

#define now_s mt__now_s

/* ---- the adapter ------------------------------------------------------------------- */

#define MT_ADAPTER_ERR_LINE 4096

struct mt_adapter {
  mt_adapter_opts o;
  char *command;
  char dir[PATH_MAX]; /* the temporary directory */
  pid_t pid;          /* the adapter (its process group's leader); 0: not running */
  int exited;         /* pid has ended (a zombie until stop() reaps it) */
  int exit_code;      /* exited: its exit status, or -1 when a signal ended it */
  int exit_signal;    /* exited: the signal that ended it, or 0 */
  int in_fd, out_fd, err_fd;
  char *buf; /* stdout bytes not yet consumed (MT_ADAPTER_LINE_MAX + 1) */
  size_t len;
  int out_eof;
  char errline[MT_ADAPTER_ERR_LINE]; /* a partial stderr line */
  size_t errlen;
  char name[256];
  char profiles[512]; /* "numpy_ma, torch" */
  int backward;       /* the hello says "backward": true: it takes gradient cases */
  char **profile_v;
  int n_profiles;
  unsigned long seq; /* requests sent: file names */
  int failed_starts; /* in a row */
  int gave_up;
  char last_start_error[MT_MSG_LEN];
  int n_losses, cap_losses;
  char **losses;
  mt_invoker invoker;
  struct sigaction old_pipe;
  int pipe_saved;
};

const char *mt_adapter_name(const mt_adapter *a) { return a->name; }
const char *mt_adapter_profiles(const mt_adapter *a) { return a->profiles; }
int mt_adapter_losses(const mt_adapter *a) { return a->n_losses; }
const char *mt_adapter_loss(const mt_adapter *a, int k) {
  return k >= 0 && k < a->n_losses ? a->losses[k] : NULL;
}
int mt_adapter_gave_up(const mt_adapter *a, const char **why) {
  if (why) *why = a->last_start_error;
  return a->gave_up;
}
const mt_invoker *mt_adapter_invoker(mt_adapter *a) { return &a->invoker; }

int mt_adapter_has_profile(const mt_adapter *a, const char *p) {
  for (int k = 0; k < a->n_profiles; k++)
    if (!strcmp(a->profile_v[k], p ? p : "torch")) return 1;
  return 0;
}

static void add_loss(mt_adapter *a, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void add_loss(mt_adapter *a, const char *fmt, ...) {
  char msg[MT_MSG_LEN + 256];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  if (a->n_losses == a->cap_losses) {
    int cap = a->cap_losses ? 2 * a->cap_losses : 16;
    char **v = realloc(a->losses, (size_t)cap * sizeof *v);
    if (!v) { /* counted all the same, without its reason */
      a->n_losses++;
      return;
    }
    a->losses = v;
    a->cap_losses = cap;
  }
  size_t n = strlen(msg) + 1;
  char *s = malloc(n);
  if (s) memcpy(s, msg, n);
  a->losses[a->n_losses++] = s;
}

/* ---- stderr: forwarded line by line ----------------------------------------------------- */

static FILE *diag(const mt_adapter *a) { return a->o.diag ? a->o.diag : stderr; }

static void err_flush_line(mt_adapter *a) {
  if (!a->errlen) return;
  fprintf(diag(a), "%sadapter: %.*s\n", a->o.clear_line ? "\r\033[K" : "", (int)a->errlen,
          a->errline);
  fflush(diag(a));
  a->errlen = 0;
}

/* Reads what stderr has now (non-blocking); 0 at EOF or when nothing is left. */
static int err_pump(mt_adapter *a) {
  char chunk[4096];
  if (a->err_fd < 0) return 0;
  ssize_t n = read(a->err_fd, chunk, sizeof chunk);
  if (n < 0 && errno == EINTR) return 1;
  if (n <= 0) {
    if (n == 0 || (errno != EAGAIN && errno != EWOULDBLOCK)) {
      err_flush_line(a);
      close(a->err_fd);
      a->err_fd = -1;
    }
    return 0;
  }
  for (ssize_t k = 0; k < n; k++) {
    if (chunk[k] == '\n') {
      fprintf(diag(a), "%sadapter: %.*s\n", a->o.clear_line ? "\r\033[K" : "", (int)a->errlen,
              a->errline);
      a->errlen = 0;
      continue;
    }
    if (a->errlen == sizeof a->errline) err_flush_line(a); /* a very long line: in pieces */
    a->errline[a->errlen++] = chunk[k];
  }
  fflush(diag(a));
  return 1;
}

static void err_drain(mt_adapter *a) {
  while (err_pump(a)) {
  }
  err_flush_line(a);
}

/* ---- the process ------------------------------------------------------------------------- */

static void close_fd(int *fd) {
  if (*fd >= 0) close(*fd);
  *fd = -1;
}

/* Whether the adapter has ended (no wait). It is not reaped here: until
 * stop() reaps it, its pid is its process group's and no one else's, so
 * that the SIGKILL to the group cannot reach a process that took the pid
 * over. */
static int exited(mt_adapter *a) {
  if (a->exited) return 1;
  if (!a->pid) return 0;
  siginfo_t si;
  memset(&si, 0, sizeof si);
  if (waitid(P_PID, (id_t)a->pid, &si, WEXITED | WNOHANG | WNOWAIT) == 0) {
    if (si.si_pid != a->pid) return 0; /* still running */
    a->exited = 1;
    a->exit_code = si.si_code == CLD_EXITED ? si.si_status : -1;
    a->exit_signal = si.si_code == CLD_EXITED ? 0 : si.si_status;
    return 1;
  }
  if (errno == ECHILD) { /* not ours any more: count it as gone */
    a->exited = 1;
    a->exit_code = 0;
    a->exit_signal = 0;
    return 1;
  }
  return 0;
}

/* "exited with status 3", "was killed by SIGABRT" */
static const char *how_ended(const mt_adapter *a, char *buf, size_t len) {
  char sig[32];
  if (!a->exited)
    snprintf(buf, len, "is still running");
  else if (a->exit_signal)
    snprintf(buf, len, "was killed by %s", mt_signal_name(a->exit_signal, sig, sizeof sig));
  else if (a->exit_code > 128 && a->exit_code < 128 + 65)
    /* /bin/sh reports its command's death by signal N as status 128 + N */
    snprintf(buf, len, "exited with status %d (%s, as /bin/sh reports it)", a->exit_code,
             mt_signal_name(a->exit_code - 128, sig, sizeof sig));
  else
    snprintf(buf, len, "exited with status %d", a->exit_code);
  return buf;
}

/* Ends the adapter: with graceful, closes its stdin and gives it
 * MT_ADAPTER_EXIT_GRACE_S to exit first; then SIGKILL to its process group
 * (whatever it left behind goes too), reaps it, forwards the rest of its
 * stderr. */
static void stop(mt_adapter *a, int graceful) {
  if (!a->pid) return;
  close_fd(&a->in_fd);
  if (graceful) {
    double end = now_s() + MT_ADAPTER_EXIT_GRACE_S;
    while (!exited(a) && now_s() < end) {
      struct pollfd pf = {a->err_fd, POLLIN, 0};
      if (a->err_fd >= 0) {
        if (poll(&pf, 1, 20) > 0) err_pump(a);
      } else {
        poll(NULL, 0, 20);
      }
    }
  }
  /* the leader is alive or a zombie: the group is still the adapter's */
  kill(-a->pid, SIGKILL);
  int was_running = !exited(a), st = 0;
  if (was_running) kill(a->pid, SIGKILL); /* in case setpgid failed */
  while (waitpid(a->pid, &st, 0) < 0 && errno == EINTR) {
  }
  if (was_running) { /* killed by us */
    a->exited = 1;
    a->exit_code = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
    a->exit_signal = WIFSIGNALED(st) ? WTERMSIG(st) : 0;
  }
  err_drain(a);
  close_fd(&a->err_fd);
  close_fd(&a->out_fd);
  a->pid = 0;
  a->len = 0;
  a->out_eof = 0;
}

static int set_nonblock(int fd) {
  int fl = fcntl(fd, F_GETFL);
  return fl < 0 ? -1 : fcntl(fd, F_SETFL, fl | O_NONBLOCK);
}

/* Forks /bin/sh -c command in its own process group, pipes on 0, 1, 2. */
static mt_status spawn(mt_adapter *a, mt_error *err) {
  int in[2] = {-1, -1}, out[2] = {-1, -1}, er[2] = {-1, -1};
  if (pipe2(in, O_CLOEXEC) || pipe2(out, O_CLOEXEC) || pipe2(er, O_CLOEXEC)) {
    mt_err(err, MT_IO_ERROR, "cannot start the adapter: pipe: %s", strerror(errno));
    goto fail;
  }
  fflush(NULL); /* the child must not write our buffered output again */
  pid_t pid = fork();
  if (pid < 0) {
    mt_err(err, MT_IO_ERROR, "cannot start the adapter: fork: %s", strerror(errno));
    goto fail;
  }
  if (pid == 0) {
    setpgid(0, 0);
    signal(SIGPIPE, SIG_DFL); /* ignored in mtcs; an exec keeps SIG_IGN */
    if (dup2(in[0], 0) < 0 || dup2(out[1], 1) < 0 || dup2(er[1], 2) < 0) _exit(127);
    for (int fd = 3; fd < 1024; fd++) close(fd); /* nothing of mtcs's (golden files, ...) */
    setenv("MTCS_ADAPTER_DIR", a->dir, 1);
    execl("/bin/sh", "sh", "-c", a->command, (char *)NULL);
    _exit(127);
  }
  setpgid(pid, pid); /* also here: no race with the first kill */
  close(in[0]);
  close(out[1]);
  close(er[1]);
  a->pid = pid;
  a->exited = 0;
  a->exit_code = 0;
  a->exit_signal = 0;
  a->in_fd = in[1];
  a->out_fd = out[0];
  a->err_fd = er[0];
  a->len = 0;
  a->out_eof = 0;
  a->errlen = 0;
  set_nonblock(a->in_fd);
  set_nonblock(a->out_fd);
  set_nonblock(a->err_fd);
  return MT_OK;
fail:
  for (int k = 0; k < 2; k++) {
    if (in[k] >= 0) close(in[k]);
    if (out[k] >= 0) close(out[k]);
    if (er[k] >= 0) close(er[k]);
  }
  return err->status;
}

/* How a wait for the adapter ended. */
typedef enum { IO_OK, IO_GONE, IO_TIMEOUT, IO_TOO_LONG } io_result;

/* Waits up to `deadline` for stdout data or stderr; forwards stderr. */
static void wait_io(mt_adapter *a, double deadline, int want_out, int want_in) {
  struct pollfd pf[3];
  int n = 0, ie = -1;
  if (want_out && a->out_fd >= 0 && !a->out_eof) pf[n++] = (struct pollfd){a->out_fd, POLLIN, 0};
  if (want_in && a->in_fd >= 0) pf[n++] = (struct pollfd){a->in_fd, POLLOUT, 0};
  if (a->err_fd >= 0) {
    ie = n;
    pf[n++] = (struct pollfd){a->err_fd, POLLIN, 0};
  }
  double left = deadline - now_s();
  int ms = left <= 0 ? 0 : left > 0.1 ? 100 : (int)(left * 1000) + 1;
  if (poll(pf, (nfds_t)n, ms) > 0 && ie >= 0 && pf[ie].revents) err_pump(a);
}

/* Writes line (n bytes, '\n' included) before the deadline. */
static io_result write_line(mt_adapter *a, const char *line, size_t n, double deadline) {
  size_t off = 0;
  while (off < n) {
    if (a->in_fd < 0) return IO_GONE;
    ssize_t w = write(a->in_fd, line + off, n - off);
    if (w > 0) {
      off += (size_t)w;
      continue;
    }
    if (w < 0 && errno == EINTR) continue;
    if (w < 0 && errno != EAGAIN && errno != EWOULDBLOCK) return IO_GONE; /* EPIPE */
    if (now_s() >= deadline) return IO_TIMEOUT;
    if (exited(a)) return IO_GONE;
    wait_io(a, deadline, 0, 1);
  }
  return IO_OK;
}

/* Reads one line (without its '\n', NUL-terminated, in a->buf; *n its
 * length; consumed by the next call) before the deadline. */
static io_result read_line(mt_adapter *a, double deadline, size_t *line_len, size_t *consumed) {
  for (;;) {
    char *nl = a->len ? memchr(a->buf, '\n', a->len) : NULL;
    if (nl) {
      *line_len = (size_t)(nl - a->buf);
      *consumed = *line_len + 1;
      *nl = 0;
      return IO_OK;
    }
    if (a->len >= MT_ADAPTER_LINE_MAX) return IO_TOO_LONG;
    if (a->out_fd < 0 || a->out_eof) return IO_GONE;
    ssize_t r = read(a->out_fd, a->buf + a->len, MT_ADAPTER_LINE_MAX - a->len);
    if (r > 0) {
      a->len += (size_t)r;
      continue;
    }
    if (r == 0) {
      a->out_eof = 1;
      return IO_GONE;
    }
    if (errno == EINTR) continue;
    if (errno != EAGAIN && errno != EWOULDBLOCK) {
      a->out_eof = 1;
      return IO_GONE;
    }
    /* the process gone and nothing to read: it will not answer (a child it
     * left behind may hold stdout open) */
    if (exited(a)) {
      r = read(a->out_fd, a->buf + a->len, MT_ADAPTER_LINE_MAX - a->len);
      if (r > 0) {
        a->len += (size_t)r;
        continue;
      }
      return IO_GONE;
    }
    if (now_s() >= deadline) return IO_TIMEOUT;
    wait_io(a, deadline, 1, 0);
  }
}

/* Reads what stdout holds now, without waiting: anything there before a
 * request is sent is output nobody asked for. */
static void pump_out(mt_adapter *a) {
  while (a->out_fd >= 0 && !a->out_eof && a->len < MT_ADAPTER_LINE_MAX) {
    ssize_t r = read(a->out_fd, a->buf + a->len, MT_ADAPTER_LINE_MAX - a->len);
    if (r > 0) {
      a->len += (size_t)r;
    } else if (r == 0) {
      a->out_eof = 1;
    } else if (errno != EINTR) {
      break;
    }
  }
}

static void consume(mt_adapter *a, size_t n) {
  if (n > a->len) n = a->len;
  memmove(a->buf, a->buf + n, a->len - n);
  a->len -= n;
}

/* After IO_GONE: waits a moment for the adapter to exit so that the
 * message can say how it ended. */
static void settle(mt_adapter *a) {
  double end = now_s() + 1.0;
  while (!exited(a) && now_s() < end) poll(NULL, 0, 10);
}

/* A line for messages: at most 120 bytes, control characters as '?'. */
static void excerpt(const char *s, size_t n, char *out, size_t len) {
  size_t k = 0;
  for (size_t i = 0; i < n && k + 4 < len && i < 120; i++)
    out[k++] = (unsigned char)s[i] < 0x20 ? '?' : s[i];
  if (n > 120 && k + 4 < len) out[k++] = '.', out[k++] = '.', out[k++] = '.';
  out[k] = 0;
}

/* ---- the handshake ------------------------------------------------------------------------- */

static void profiles_free(mt_adapter *a) {
  for (int k = 0; k < a->n_profiles; k++) free(a->profile_v[k]);
  free(a->profile_v);
  a->profile_v = NULL;
  a->n_profiles = 0;
}

/* Checks a hello line; fills name and profiles. */
static mt_status hello_check(mt_adapter *a, const char *line, size_t n, mt_error *err) {
  mt_json_object h;
  char why[256], ex[160];
  mt_status st = MT_OK;
  if (mt_json_parse_flat(line, n, &h, why, sizeof why)) {
    excerpt(line, n, ex, sizeof ex);
    return mt_err(err, MT_INVALID_ARGUMENT, "the adapter's hello is not a JSON object (%s): '%s'",
                  why, ex);
  }
  const mt_json_field *proto = mt_json_get(&h, "protocol"), *prof = mt_json_get(&h, "profiles");
  const char *name = mt_json_get_str(&h, "name"), *version = mt_json_get_str(&h, "version");
  if (!proto || proto->type != MT_JSON_NUMBER) {
    st = mt_err(err, MT_INVALID_ARGUMENT, "the adapter's hello has no number \"protocol\"");
    goto out;
  }
  if (proto->num != MT_ADAPTER_PROTOCOL) {
    st = mt_err(err, MT_INVALID_ARGUMENT,
                "the adapter speaks protocol %g, this mtcs speaks protocol %d "
                "(spec/adapter-protocol.md)",
                proto->num, MT_ADAPTER_PROTOCOL);
    goto out;
  }
  if (!name || !name[0] || !version || !version[0]) {
    st = mt_err(err, MT_INVALID_ARGUMENT,
                "the adapter's hello lacks a non-empty string \"%s\" (the library under test)",
                !name || !name[0] ? "name" : "version");
    goto out;
  }
  if (!prof || prof->type != MT_JSON_STRINGS || prof->n == 0) {
    st = mt_err(err, MT_INVALID_ARGUMENT,
                "the adapter's hello lacks \"profiles\", a non-empty array of profile names");
    goto out;
  }
  char **v = calloc((size_t)prof->n, sizeof *v);
  if (!v) {
    st = mt_err(err, MT_OUT_OF_MEMORY, "adapter: out of memory");
    goto out;
  }
  profiles_free(a);
  a->profile_v = v;
  a->profiles[0] = 0;
  for (int k = 0; k < prof->n; k++) {
    size_t len = strlen(prof->v[k]) + 1;
    if (!(v[k] = malloc(len))) {
      st = mt_err(err, MT_OUT_OF_MEMORY, "adapter: out of memory");
      goto out;
    }
    memcpy(v[k], prof->v[k], len);
    a->n_profiles = k + 1;
    size_t used = strlen(a->profiles);
    snprintf(a->profiles + used, sizeof a->profiles - used, "%s%s", k ? ", " : "", v[k]);
  }
  snprintf(a->name, sizeof a->name, "%s %s", name, version);
  /* optional (spec/adapter-protocol.md, "Gradient requests"): absent = false */
  const mt_json_field *bw = mt_json_get(&h, "backward");
  if (bw && bw->type != MT_JSON_BOOL) {
    st = mt_err(err, MT_INVALID_ARGUMENT,
                "the adapter's hello has \"backward\" that is not true or false");
    goto out;
  }
  a->backward = bw && bw->num != 0;
out:
  mt_json_object_free(&h);
  return st;
}

/* Starts the adapter and does the handshake; on failure nothing is left
 * running and err says why. */
static mt_status start(mt_adapter *a, mt_error *err) {
  char hello[128], how[128];
  size_t n, used;
  mt_status st = spawn(a, err);
  if (st != MT_OK) return st;
  double deadline = now_s() + a->o.hello_timeout_s;
  int len = snprintf(hello, sizeof hello, "{\"mtcs\": \"%s\", \"protocol\": %d}\n", MTCS_VERSION,
                     MT_ADAPTER_PROTOCOL);
  io_result r = write_line(a, hello, (size_t)len, deadline);
  if (r == IO_OK) r = read_line(a, deadline, &n, &used);
  switch (r) {
    case IO_OK: st = hello_check(a, a->buf, n, err); break;
    case IO_TIMEOUT:
      st = mt_err(err, MT_INVALID_ARGUMENT,
                  "the adapter sent no hello within %g s "
                  "(--hello-timeout)",
                  a->o.hello_timeout_s);
      break;
    case IO_TOO_LONG:
      st = mt_err(err, MT_INVALID_ARGUMENT, "the adapter's hello is longer than %d bytes",
                  MT_ADAPTER_LINE_MAX);
      break;
    case IO_GONE:
      settle(a);
      st = mt_err(err, MT_INVALID_ARGUMENT, "the adapter %s before its hello (command: %s)",
                  a->exited ? how_ended(a, how, sizeof how) : "closed its stdin or stdout",
                  a->command);
      break;
  }
  if (st == MT_OK) {
    consume(a, used);
    if (a->len) {
      char ex[160];
      excerpt(a->buf, a->len, ex, sizeof ex);
      st = mt_err(err, MT_INVALID_ARGUMENT,
                  "the adapter sent more than one line for its hello: "
                  "'%s'",
                  ex);
    }
  }
  if (st != MT_OK) stop(a, 0);
  return st;
}

/* ---- requests --------------------------------------------------------------------------- */

/* A response file read and thrown away: how mt_parse_isolated checks it
 * in a child first, so that a file that crashes or hangs libhdf5 becomes an
 * error naming it, never a signal in mtcs. */
static mt_status parse_response(const char *path, int *n, mt_error *err) {
  mt_tensor **out = NULL;
  mt_status st = mt_golden_read_outputs(path, n, &out, err);
  for (int k = 0; k < *n; k++) mt_tensor_free(out[k]);
  free(out);
  return st;
}

static mt_status read_response(const mt_adapter *a, const char *path, mt_call *call,
                               mt_error *err) {
  int n = 0;
  mt_tensor **out = NULL;
  mt_status st = mt_parse_isolated(path, parse_response, a->o.case_timeout_s,
                                   "--case-timeout sets the limit", NULL, NULL, err);
  if (st != MT_OK || (st = mt_golden_read_outputs(path, &n, &out, err)) != MT_OK) return st;
  if (call->grad_out && n > call->n_in) { /* grads/<k> names no input of the case */
    for (int k = 0; k < n; k++) mt_tensor_free(out[k]);
    free(out);
    return mt_err(err, MT_INVALID_FORMAT, "%s: grads/%d, but the case has %d inputs", path,
                  n - 1, call->n_in);
  }
  /* a gradient response: one slot per input, NULL where it holds none */
  call->n_out = call->grad_out ? call->n_in : n;
  for (int k = 0; k < n; k++) call->out[k] = out[k];
  free(out);
  return MT_OK;
}

/* Starts the adapter when it is not running: up to
 * MT_ADAPTER_MAX_FAILED_STARTS tries in a row; 0 when it runs. */
static int ensure_running(mt_adapter *a) {
  while (!a->pid && !a->gave_up) {
    mt_error e = {0};
    if (start(a, &e) == MT_OK) {
      a->failed_starts = 0;
      return 0;
    }
    snprintf(a->last_start_error, sizeof a->last_start_error, "%s", e.msg);
    fprintf(diag(a), "mtcs: the adapter failed to start (%d of %d tries in a row): %s\n",
            a->failed_starts + 1, MT_ADAPTER_MAX_FAILED_STARTS, e.msg);
    if (++a->failed_starts >= MT_ADAPTER_MAX_FAILED_STARTS) a->gave_up = 1;
  }
  return a->pid ? 0 : -1;
}

/* One request line; the line must fit MT_ADAPTER_LINE_MAX. */
static int request_line(char *buf, size_t len, const mt_golden_case *c, const char *run,
                        const char *req, const char *resp) {
  const char *keys[6] = {"case", "op", "profile", "run", "request", "response"};
  const char *vals[6] = {c->id, c->op_name, c->profile ? c->profile : "torch", run, req, resp};
  size_t n = 0;
  buf[n++] = '{';
  for (int k = 0; k < 6; k++) {
    int w = snprintf(buf + n, len - n, "%s\"%s\": ", k ? ", " : "", keys[k]);
    if (w < 0 || (size_t)w >= len - n) return -1;
    n += (size_t)w;
    if ((w = mt_json_quote(buf + n, len - n, vals[k])) < 0) return -1;
    n += (size_t)w;
  }
  if (n + 3 > len) return -1;
  buf[n++] = '}';
  buf[n++] = '\n';
  buf[n] = 0;
  return (int)n;
}

static mt_status adapter_invoke(void *ctx, const mt_golden_case *c, const char *run, mt_call *call,
                                mt_case_status *lost, mt_error *err) {
  mt_adapter *a = ctx;
  mt_status st = MT_OK;
  char req[PATH_MAX + 32], resp[PATH_MAX + 32], how[128], ex[160];
  char *line = NULL;
  size_t n = 0, used = 0;
  mt_json_object ans = {0};
  int have_ans = 0;
  *lost = MT_CS_PASS;
  call->n_out = 0;
  if (!mt_adapter_has_profile(a, c->profile))
    return mt_err(err, MT_NOT_SUPPORTED,
                  "the adapter does not answer profile %s (its hello "
                  "lists %s): not sent",
                  c->profile ? c->profile : "torch", a->profiles);
  if (c->backward && !a->backward) /* spec/adapter-protocol.md, "Gradient requests" */
    return mt_err(err, MT_NOT_SUPPORTED,
                  "a gradient case, and the adapter's hello does not say \"backward\": "
                  "true: not sent");
  if (ensure_running(a) != 0) {
    *lost = MT_CS_SKIP;
    add_loss(a, "%s (%s): not run: the adapter could not be restarted", c->id, run);
    return mt_err(err, MT_IO_ERROR, "not run: the adapter failed %d starts in a row (last: %s)",
                  MT_ADAPTER_MAX_FAILED_STARTS, a->last_start_error);
  }
  a->seq++;
  snprintf(req, sizeof req, "%s/req-%lu.h5", a->dir, a->seq);
  snprintf(resp, sizeof resp, "%s/resp-%lu.h5", a->dir, a->seq);
  /* a gradient call: the upstream gradients follow the inputs (execute.c) */
  if ((st = mt_golden_write_request(req, c, call->n_in + call->n_grad_out, call->in, err)) !=
      MT_OK) {
    *lost = MT_CS_ERROR;
    mt_err_prefix(err, "the runner could not write the request");
    add_loss(a, "%s (%s): ERROR: %s", c->id, run, err->msg);
    goto out;
  }
  if (!(line = malloc(MT_ADAPTER_LINE_MAX + 1))) {
    *lost = MT_CS_ERROR;
    mt_err(err, MT_OUT_OF_MEMORY, "the runner ran out of memory");
    add_loss(a, "%s (%s): ERROR: %s", c->id, run, err->msg);
    goto out;
  }
  int len = request_line(line, MT_ADAPTER_LINE_MAX + 1, c, run, req, resp);
  if (len < 0) {
    *lost = MT_CS_ERROR;
    mt_err(err, MT_INVALID_ARGUMENT, "the request line is longer than %d bytes",
           MT_ADAPTER_LINE_MAX);
    add_loss(a, "%s (%s): ERROR: %s", c->id, run, err->msg);
    goto out;
  }
  double deadline = now_s() + a->o.case_timeout_s;
  pump_out(a);
  if (a->len) { /* written after its last answer: the stream cannot be trusted */
    *lost = MT_CS_ERROR;
    excerpt(a->buf, a->len, ex, sizeof ex);
    mt_err(err, MT_IO_ERROR,
           "adapter protocol: output nobody asked for, before the request "
           "(run %s) was sent: '%s'; the adapter was killed and is restarted",
           run, ex);
    stop(a, 0);
    goto no_verdict;
  }
  io_result r = write_line(a, line, (size_t)len, deadline);
  if (r == IO_OK) r = read_line(a, deadline, &n, &used);
  if (r == IO_GONE) {
    settle(a);
    *lost = MT_CS_CRASH;
    mt_err(err, MT_IO_ERROR,
           "the adapter %s before answering (run %s); it is restarted for "
           "the next request",
           a->exited ? how_ended(a, how, sizeof how) : "closed its stdin or stdout", run);
    stop(a, 0);
  } else if (r == IO_TIMEOUT) {
    *lost = MT_CS_TIMEOUT;
    mt_err(err, MT_IO_ERROR,
           "no answer within %g s (--case-timeout; run %s): the adapter was "
           "killed and is restarted for the next request",
           a->o.case_timeout_s, run);
    stop(a, 0);
  } else if (r == IO_TOO_LONG) {
    *lost = MT_CS_ERROR;
    mt_err(err, MT_IO_ERROR,
           "adapter protocol: the answer is longer than %d bytes (run %s); "
           "the adapter was killed and is restarted",
           MT_ADAPTER_LINE_MAX, run);
    stop(a, 0);
  } else {
    char why[256];
    mt_status ast;
    const char *status = NULL, *msg = NULL;
    if (mt_json_parse_flat(a->buf, n, &ans, why, sizeof why) == 0) {
      have_ans = 1;
      status = mt_json_get_str(&ans, "status");
      msg = mt_json_get_str(&ans, "message");
    }
    excerpt(a->buf, n, ex, sizeof ex);
    consume(a, used);
    if (!have_ans || !status || mt_status_from_name(status, &ast) != 0 || a->len) {
      char what[640];
      *lost = MT_CS_ERROR;
      if (!have_ans)
        snprintf(what, sizeof what, "the answer is not a JSON object (%s): '%s'", why, ex);
      else if (!status)
        snprintf(what, sizeof what, "the answer has no string \"status\": '%s'", ex);
      else if (a->len) {
        char more[160];
        char *nl = memchr(a->buf, '\n', a->len);
        excerpt(a->buf, nl ? (size_t)(nl - a->buf) : a->len, more, sizeof more);
        snprintf(what, sizeof what,
                 "more than one line in answer to one request: '%s', "
                 "then '%s'",
                 ex, more);
      } else
        snprintf(what, sizeof what,
                 "unknown status '%.60s' (a name of "
                 "spec/include/mt/status.def expected): '%s'",
                 status, ex);
      mt_err(err, MT_IO_ERROR,
             "adapter protocol: %s (run %s); the adapter was killed and is "
             "restarted",
             what, run);
      stop(a, 0);
    } else if (ast != MT_OK) {
      st = mt_err(err, ast, "%s", msg && msg[0] ? msg : mt_status_message(ast));
    } else if ((st = read_response(a, resp, call, err)) != MT_OK) {
      /* the implementation's verdict: ERROR naming the file (the adapter
       * is kept: its stream is fine) */
      *lost = MT_CS_ERROR;
      mt_err_prefix(err, "adapter response of run %s", run);
      goto out;
    }
  }
no_verdict:
  if (*lost != MT_CS_PASS) {
    add_loss(a, "%s (%s): %s: %s", c->id, run, mt_case_status_name(*lost), err->msg);
    st = err->status != MT_OK ? err->status : MT_IO_ERROR;
  }
out:
  if (have_ans) mt_json_object_free(&ans);
  free(line);
  unlink(req);
  unlink(resp);
  return st;
}

/* ---- open / close ----------------------------------------------------------------------- */

static void remove_dir(const char *dir) {
  DIR *d = opendir(dir);
  if (d) {
    struct dirent *e;
    while ((e = readdir(d))) {
      if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
      char p[PATH_MAX + 256];
      snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
      struct stat sb;
      if (lstat(p, &sb) == 0 && S_ISDIR(sb.st_mode))
        remove_dir(p);
      else
        unlink(p);
    }
    closedir(d);
  }
  rmdir(dir);
}

void mt_adapter_stop(mt_adapter *a) { stop(a, 1); }

void mt_adapter_close(mt_adapter *a) {
  if (!a) return;
  stop(a, 1);
  if (a->dir[0]) remove_dir(a->dir);
  if (a->pipe_saved) sigaction(SIGPIPE, &a->old_pipe, NULL);
  profiles_free(a);
  for (int k = 0; k < a->n_losses && k < a->cap_losses; k++) free(a->losses[k]);
  free(a->losses);
  free(a->buf);
  free(a->command);
  free(a);
}

mt_status mt_adapter_open(const mt_adapter_opts *o, mt_adapter **out, mt_error *err) {
  mt_status st = MT_OK;
  *out = NULL;
  if (!o->command || !o->command[0]) return mt_err(err, MT_INVALID_ARGUMENT, "no adapter command");
  mt_adapter *a = calloc(1, sizeof *a);
  if (!a) return mt_err(err, MT_OUT_OF_MEMORY, "adapter: out of memory");
  a->o = *o;
  if (!(a->o.hello_timeout_s > 0)) a->o.hello_timeout_s = MT_ADAPTER_HELLO_TIMEOUT_S;
  if (!(a->o.case_timeout_s > 0)) a->o.case_timeout_s = MT_ADAPTER_CASE_TIMEOUT_S;
  a->in_fd = a->out_fd = a->err_fd = -1;
  a->invoker.invoke = adapter_invoke;
  a->invoker.ctx = a;
  size_t cl = strlen(o->command) + 1;
  if (!(a->command = malloc(cl)) || !(a->buf = malloc(MT_ADAPTER_LINE_MAX + 1))) {
    st = mt_err(err, MT_OUT_OF_MEMORY, "adapter: out of memory");
    goto fail;
  }
  memcpy(a->command, o->command, cl);
  a->o.command = a->command;
  const char *tmp = getenv("TMPDIR");
  snprintf(a->dir, sizeof a->dir, "%s/mtcs-adapter-XXXXXX", tmp && tmp[0] ? tmp : "/tmp");
  if (!mkdtemp(a->dir)) {
    st = mt_err(err, MT_IO_ERROR, "cannot make the adapter's directory %s: %s", a->dir,
                strerror(errno));
    a->dir[0] = 0;
    goto fail;
  }
  struct sigaction ign;
  memset(&ign, 0, sizeof ign);
  ign.sa_handler = SIG_IGN;
  sigemptyset(&ign.sa_mask);
  if (sigaction(SIGPIPE, &ign, &a->old_pipe) == 0) a->pipe_saved = 1;
  if ((st = start(a, err)) != MT_OK) goto fail;
  *out = a;
  return MT_OK;
fail:
  mt_adapter_close(a);
  return st;
}

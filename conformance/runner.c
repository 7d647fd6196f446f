/* runner.c - case statuses, backends, isolated case runs and whole runs;
 * see runner.h. */
#include "runner.h"

#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fnmatch.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "report.h"

/* ---- statuses -------------------------------------------------------------------- */

static const struct {
  const char *name;
  mt_case_group group;
  const char *junit;
  const char *doc;
} case_statuses[MT_CS__COUNT] = {
#define MT_X(name, group, junit, doc) [MT_CS_##name] = {#name, MT_GROUP_##group, junit, doc},
    MT_CASE_STATUSES(MT_X)
#undef MT_X
};

static int status_ok(mt_case_status s) { return s >= 0 && s < MT_CS__COUNT; }
const char *mt_case_status_name(mt_case_status s) { return status_ok(s) ? case_statuses[s].name : "?"; }
const char *mt_case_status_doc(mt_case_status s) { return status_ok(s) ? case_statuses[s].doc : "?"; }
const char *mt_case_status_junit(mt_case_status s) {
  return status_ok(s) ? case_statuses[s].junit : "error";
}
mt_case_group mt_case_status_group(mt_case_status s) {
  return status_ok(s) ? case_statuses[s].group : MT_GROUP_FAILED;
}

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void setmsg(mt_case_result *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void setmsg(mt_case_result *r, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(r->message, sizeof r->message, fmt, ap);
  va_end(ap);
}

/* ---- backends -------------------------------------------------------------------- */

static int looks_like_path(const char *spec) {
  size_t n = strlen(spec);
  return strchr(spec, '/') != NULL || (n > 3 && strcmp(spec + n - 3, ".so") == 0);
}

static mt_status open_plugin(const char *spec, mt_backend *b, mt_error *err) {
  char path[4096];
  struct stat sb;
  snprintf(path, sizeof path, "%s%s", strchr(spec, '/') ? "" : "./", spec);
  if (stat(path, &sb) != 0)
    return mt_err(err, MT_INVALID_ARGUMENT, "plugin %s: %s", spec, strerror(errno));
  dlerror();
  if (!(b->dl = dlopen(path, RTLD_NOW | RTLD_LOCAL))) {
    const char *e = dlerror();
    return mt_err(err, MT_INVALID_ARGUMENT, "cannot load plugin %s: %s", spec, e ? e : "dlopen failed");
  }
  dlerror();
  void *sym = dlsym(b->dl, MT_PLUGIN_ENTRY);
  if (!sym) {
    const char *e = dlerror();
    return mt_err(err, MT_INVALID_ARGUMENT, "plugin %s does not export %s (%s)", spec,
                  MT_PLUGIN_ENTRY, e ? e : "symbol is NULL");
  }
  mt_plugin_entry_fn entry;
  memcpy(&entry, &sym, sizeof entry); /* object pointer -> function pointer, POSIX-style */
  const mt_impl *impl = entry(MT_ABI_VERSION);
  if (!impl)
    return mt_err(err, MT_INVALID_ARGUMENT,
                  "plugin %s: %s(%u) returned NULL: the plugin does not speak ABI version %u",
                  spec, MT_PLUGIN_ENTRY, MT_ABI_VERSION, MT_ABI_VERSION);
  if (impl->abi_version != MT_ABI_VERSION)
    return mt_err(err, MT_INVALID_ARGUMENT,
                  "plugin %s was built for ABI version %u, this mtcs speaks ABI version %u "
                  "(rebuild it against this spec/include/mt/mt.h)",
                  spec, impl->abi_version, MT_ABI_VERSION);
  size_t min = offsetof(mt_impl, kernels) + sizeof(void *);
  if (impl->struct_size < min)
    return mt_err(err, MT_INVALID_ARGUMENT,
                  "plugin %s: struct_size %u is smaller than the %zu bytes of an ABI %u mt_impl",
                  spec, impl->struct_size, min, MT_ABI_VERSION);
  if (impl->n_kernels > 0 && !impl->kernels)
    return mt_err(err, MT_INVALID_ARGUMENT, "plugin %s: n_kernels is %u but kernels is NULL", spec,
                  impl->n_kernels);
  b->impl = impl;
  if (impl->name && impl->name[0]) {
    snprintf(b->name, sizeof b->name, "%s", impl->name);
  } else {
    const char *base = strrchr(spec, '/');
    snprintf(b->name, sizeof b->name, "%s", base ? base + 1 : spec);
  }
  return MT_OK;
}

mt_status mt_backend_open(const char *spec, mt_backend *b, mt_error *err) {
  mt_status st = MT_OK;
  memset(b, 0, sizeof *b);
  if (!spec || !spec[0]) spec = "cpu";
  if (strcmp(spec, "cpu") == 0) {
    b->impl = mt_backend_cpu();
  } else if (strcmp(spec, "cuda") == 0) {
    if (!(b->impl = mt_backend_cuda()))
      return mt_err(err, MT_NOT_SUPPORTED, "cuda backend: mtcs was built without CUDA");
  } else if (looks_like_path(spec)) {
    if ((st = open_plugin(spec, b, err)) != MT_OK) {
      mt_backend_close(b);
      return st;
    }
  } else {
    return mt_err(err, MT_INVALID_ARGUMENT,
                  "unknown backend '%s' (expected cpu, cuda or the path of a plugin .so)", spec);
  }
  if (!b->name[0]) snprintf(b->name, sizeof b->name, "%s", b->impl->name ? b->impl->name : spec);
  char why[256] = "";
  if (b->impl->unavailable && b->impl->unavailable(why, sizeof why)) {
    why[sizeof why - 1] = 0;
    st = mt_err(err, MT_NOT_SUPPORTED, "%s backend: %s", b->name, why[0] ? why : "unavailable");
    mt_backend_close(b);
    return st;
  }
  return MT_OK;
}

void mt_backend_close(mt_backend *b) {
  if (b->dl) dlclose(b->dl);
  memset(b, 0, sizeof *b);
}

/* ---- one case ---------------------------------------------------------------------- */

static void free_outputs(mt_call *call) {
  if (call->n_out < 0 || call->n_out > MT_MAX_OUTPUTS) return;
  for (int k = 0; k < call->n_out; k++) call->host->free(call->out[k]);
  call->n_out = 0;
}

static void judge_error_case(const mt_golden_case *c, mt_status st, const mt_error *err,
                             mt_case_result *r) {
  const char *torch = c->torch_error ? c->torch_error : "?";
  if (st == MT_NOT_SUPPORTED) {
    r->status = MT_CS_NOT_SUPPORTED;
    setmsg(r, "%s", err->msg);
  } else if (st == MT_OK) {
    r->status = MT_CS_FAIL;
    setmsg(r, "expected error %s, got OK (torch raised %s)", c->error_class, torch);
  } else if (strcmp(mt_status_name(st), c->error_class) == 0) {
    r->status = MT_CS_PASS;
    setmsg(r, "%s as expected: %s", c->error_class, err->msg);
  } else {
    r->status = MT_CS_FAIL;
    setmsg(r, "expected error %s, got %s: %s (torch raised %s)", c->error_class,
           mt_status_name(st), err->msg, torch);
  }
}

static void judge_outputs(const mt_golden_case *c, const mt_call *call, mt_case_result *r) {
  mt_compare_opts co = {c->tolerance, c->check_masked_out};
  mt_error err = {0};
  char why[1024] = "", vwhy[1024];
  int equal = 0;
  if (mt_compare_outputs(c->n_out, c->out, call->n_out, (mt_tensor *const *)call->out, &co, &equal,
                         why, sizeof why, &err) != MT_OK) {
    r->status = MT_CS_ERROR;
    setmsg(r, "comparison could not be done: %s", err.msg);
    return;
  }
  if (equal) {
    r->status = MT_CS_PASS;
    return;
  }
  for (int k = 0; k < c->n_variants; k++) {
    const mt_golden_variant *v = &c->variants[k];
    int veq = 0;
    if (mt_compare_outputs(v->n_out, v->out, call->n_out, (mt_tensor *const *)call->out, &co, &veq,
                           vwhy, sizeof vwhy, &err) == MT_OK &&
        veq) {
      r->status = MT_CS_EXPECTED_DIVERGENCE;
      setmsg(r, "matches outputs@%s; differs from outputs: %s", v->label, why);
      return;
    }
  }
  r->status = MT_CS_FAIL;
  setmsg(r, "%s%s", why, c->n_variants ? " (no outputs@torch-* variant matches either)" : "");
}

void mt_case_execute(const mt_impl *impl, const mt_golden_case *c, mt_case_result *r) {
  memset(r, 0, sizeof *r);
  mt_error err = {0};
  mt_call call = {0};
  call.host = mt_host_default();
  call.op = c->op;
  call.n_in = c->n_in;
  call.in = (const mt_tensor *const *)c->in;
  call.kw = &c->kw;
  double t0 = now_s();
  mt_status st = mt_dispatch(impl, &call, &err);
  if (st != MT_OK && !err.msg[0]) snprintf(err.msg, sizeof err.msg, "%s", mt_status_message(st));
  if (st == MT_OK && (call.n_out < 0 || call.n_out > MT_MAX_OUTPUTS)) {
    r->status = MT_CS_FAIL;
    setmsg(r, "the kernel returned OK with n_out = %d (0..%d allowed)", call.n_out, MT_MAX_OUTPUTS);
  } else if (c->expect_error) {
    judge_error_case(c, st, &err, r);
  } else if (st == MT_NOT_SUPPORTED) {
    r->status = MT_CS_NOT_SUPPORTED;
    setmsg(r, "%s", err.msg);
  } else if (st != MT_OK) {
    r->status = MT_CS_ERROR;
    setmsg(r, "the implementation returned %s: %s", mt_status_name(st), err.msg);
  } else {
    judge_outputs(c, &call, r);
  }
  if (st == MT_OK) free_outputs(&call);
  r->seconds = now_s() - t0;
}

/* ---- isolation ---------------------------------------------------------------------- */

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

static void child_run(int fd, const mt_impl *impl, const mt_golden_case *c) {
  mt_case_result r;
  mt_case_execute(impl, c, &r);
  wire w = {(int32_t)r.status, (uint32_t)strnlen(r.message, sizeof r.message - 1), r.seconds};
  int bad = write_all(fd, &w, sizeof w) || write_all(fd, r.message, w.len);
  close(fd);
  _exit(bad ? 3 : 0); /* no atexit handlers: the parent owns HDF5 and the reports */
}

void mt_case_run(const mt_impl *impl, const mt_golden_case *c, const mt_run_opts *o,
                 mt_case_result *r) {
  double t0 = now_s();
  if (o->no_fork) {
    mt_case_execute(impl, c, r);
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
    child_run(fds[1], impl, c);
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
  memcpy(r->message, buf + sizeof w, w.len);
  r->message[w.len] = 0;
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
  char **selected; /* per file, per case: 1 when the filters match */
  int total;       /* selected cases */
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

/* Opens every golden file and applies the filters; prints why and returns
 * nonzero on an input error or when nothing is selected. */
static int session_open(session *s, const mt_session_opts *o) {
  mt_error err = {0};
  memset(s, 0, sizeof *s);
  s->o = o;
  if (mt_golden_paths(o, &s->paths, &s->n_files, &err) != MT_OK) {
    fprintf(o->diag, "mtcs: %s\n", err.msg);
    return -1;
  }
  s->files = calloc((size_t)s->n_files, sizeof *s->files);
  s->selected = calloc((size_t)s->n_files, sizeof *s->selected);
  if (!s->files || !s->selected) {
    fprintf(o->diag, "mtcs: out of memory\n");
    return -1;
  }
  int n_cases = 0;
  for (int k = 0; k < s->n_files; k++) {
    if (mt_golden_open(s->paths[k], &s->files[k], &err) != MT_OK) {
      fprintf(o->diag, "mtcs: %s\n", err.msg);
      return -1;
    }
    mt_golden_file *f = s->files[k];
    n_cases += f->n_cases;
    if (f->n_cases && !(s->selected[k] = calloc((size_t)f->n_cases, 1))) {
      fprintf(o->diag, "mtcs: out of memory\n");
      return -1;
    }
    for (int c = 0; c < f->n_cases; c++)
      if ((s->selected[k][c] = (char)filter_match(o, f->cases[c].id))) s->total++;
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
    return -1;
  }
  return 0;
}

int mt_session_list(const mt_session_opts *o) {
  session s;
  int rc = MT_EXIT_USAGE;
  if (session_open(&s, o) != 0) goto out;
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
  fprintf(o->out, "%-*s  %-*s  %-*s  %s\n", w_id, "id", w_op, "op", w_rules, "rules", "expect");
  for (int k = 0; k < s.n_files; k++)
    for (int c = 0; c < s.files[k]->n_cases; c++) {
      if (!s.selected[k][c]) continue;
      const mt_golden_case *gc = &s.files[k]->cases[c];
      fprintf(o->out, "%-*s  %-*s  %-*s  %s%s%s\n", w_id, gc->id, w_op, gc->op_name, w_rules,
              gc->rules, gc->expect_error ? "error " : "ok", gc->expect_error ? gc->error_class : "",
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

/* Shell-quotes s into f. */
static void sh_quote(FILE *f, const char *s) {
  fputc('\'', f);
  for (; *s; s++) {
    if (*s == '\'')
      fputs("'\\''", f);
    else
      fputc(*s, f);
  }
  fputc('\'', f);
}

/* A repro bundle: <dir>/<id>.h5 (the case alone) and <dir>/<id>.sh. */
static void write_repro(const mt_session_opts *o, const mt_golden_file *f, const mt_golden_case *c,
                        const mt_case_result *r, char *where, size_t where_len) {
  mt_error err = {0};
  mt_afile sh = {0};
  size_t n = strlen(o->repro_dir) + strlen(c->id) + 8;
  char *h5 = malloc(n), *shp = malloc(n);
  where[0] = 0;
  if (!h5 || !shp) goto out;
  snprintf(h5, n, "%s/%s.h5", o->repro_dir, c->id);
  snprintf(shp, n, "%s/%s.sh", o->repro_dir, c->id);
  if (mt_golden_write_case(h5, &f->meta, c, &err) != MT_OK) goto fail;
  if (mt_afile_open(&sh, shp, &err) != MT_OK) goto fail;
  /* absolute paths, so that the script runs from anywhere */
  char self[4096], abs_h5[4096], abs_be[4096];
  const char *be = o->backend ? o->backend : "cpu";
  if (!realpath("/proc/self/exe", self)) snprintf(self, sizeof self, "%s", o->self ? o->self : "mtcs");
  if (!realpath(h5, abs_h5)) snprintf(abs_h5, sizeof abs_h5, "%s", h5);
  if (!strchr(be, '/') || !realpath(be, abs_be)) snprintf(abs_be, sizeof abs_be, "%s", be);
  fprintf(sh.f, "#!/bin/sh\n# mtcs repro: %s %s (from %s)\n# %s\nexec ", mt_case_status_name(r->status),
          c->id, f->path, r->message);
  sh_quote(sh.f, self);
  fputs(" run --backend ", sh.f);
  sh_quote(sh.f, abs_be);
  fputs(" --golden ", sh.f);
  sh_quote(sh.f, abs_h5);
  fputs(" --no-fork -v \"$@\"\n", sh.f);
  if (mt_afile_commit(&sh, &err) != MT_OK) goto fail;
  chmod(shp, 0755);
  snprintf(where, where_len, "%s", shp);
  goto out;
fail:
  mt_afile_abort(&sh);
  fprintf(o->diag, "mtcs: warning: no repro bundle for %s: %s\n", c->id, err.msg);
out:
  free(h5);
  free(shp);
}

static void progress_clear(const mt_session_opts *o) {
  if (o->progress_tty) fputs("\r\033[K", o->diag);
}

/* "[12/277] 1 failed  sum.masked.f32.all", cut to the terminal's width. */
static void progress_show(const mt_session_opts *o, int k, int total, int failed, const char *id) {
  struct winsize ws;
  int width = ioctl(fileno(o->diag), TIOCGWINSZ, &ws) == 0 && ws.ws_col > 20 ? ws.ws_col : 80;
  char line[512];
  int n = snprintf(line, sizeof line, "[%d/%d] %s%d failed  %s", k, total,
                   failed ? "\033[1m" : "", failed, id);
  (void)n;
  int vis = width - 1 + (failed ? 4 : 0); /* the escape sequence takes no columns */
  if (vis > 0 && (size_t)vis < sizeof line) line[vis] = 0;
  fprintf(o->diag, "\r\033[K%s%s", line, failed ? "\033[0m" : "");
  fflush(o->diag);
}

static void print_case(const mt_session_opts *o, const mt_golden_file *f, const mt_golden_case *c,
                       const mt_case_result *r, const char *repro) {
  const char *name = mt_case_status_name(r->status);
  if (mt_case_status_group(r->status) == MT_GROUP_FAILED) {
    progress_clear(o);
    fprintf(o->out, "%s  %s\n", name, c->id);
    fprintf(o->out, "    %s\n", r->message);
    fprintf(o->out, "    rules: %s; tolerance: %s%s; file: %s\n", c->rules[0] ? c->rules : "-",
            c->tolerance.text, c->check_masked_out ? "; masked-out data checked" : "", f->path);
    if (c->torch_call) fprintf(o->out, "    torch: %s\n", c->torch_call);
    if (repro && repro[0]) fprintf(o->out, "    repro: %s\n", repro);
  } else if (o->verbose) {
    progress_clear(o);
    if (r->status == MT_CS_PASS || !r->message[0])
      fprintf(o->out, "%s  %s\n", name, c->id);
    else
      fprintf(o->out, "%s  %s  (%s)\n", name, c->id, r->message);
  }
  fflush(o->out); /* keep case lines and stderr progress in order */
}

static void print_summary(const mt_session_opts *o, const mt_report *rep) {
  FILE *out = o->out;
  fputs("status counts:", out);
  for (int s = 0; s < MT_CS__COUNT; s++)
    fprintf(out, "%s %s %d", s ? "," : "", mt_case_status_name((mt_case_status)s), rep->counts[s]);
  fputc('\n', out);
  int ed = rep->counts[MT_CS_EXPECTED_DIVERGENCE];
  if (ed)
    fprintf(out, "%d expected divergence%s (matched an outputs@torch-* variant; counted as passed)\n",
            ed, ed == 1 ? "" : "s");
  fprintf(out, "%d passed, %d failed, %d skipped\n", mt_report_count_group(rep, MT_GROUP_PASSED),
          mt_report_count_group(rep, MT_GROUP_FAILED), mt_report_count_group(rep, MT_GROUP_SKIPPED));
}

int mt_session_run(const mt_session_opts *o) {
  int rc = MT_EXIT_USAGE, done = 0;
  mt_error err = {0};
  mt_afile json = {0}, junit = {0};
  mt_backend be = {0};
  mt_report rep = {0};
  session s = {0};
  const char *profile = o->profile ? o->profile : "torch";
  double t0 = now_s();

  /* Outputs first: a report that cannot be written fails before any work
   * (probed now; the temporary file itself is made at the end, so that an
   * interrupted mtcs leaves nothing behind). */
  if (o->report_json && mt_afile_open(&json, o->report_json, &err) != MT_OK) goto input_error;
  mt_afile_abort(&json);
  if (o->junit && mt_afile_open(&junit, o->junit, &err) != MT_OK) goto input_error;
  mt_afile_abort(&junit);
  if (o->repro_dir) {
    struct stat sb;
    if (stat(o->repro_dir, &sb) != 0 || !S_ISDIR(sb.st_mode) || access(o->repro_dir, W_OK) != 0) {
      mt_err(&err, MT_IO_ERROR, "--repro-dir %s is not a writable directory", o->repro_dir);
      goto input_error;
    }
  }
  mt_status st = mt_backend_open(o->backend, &be, &err);
  if (st == MT_NOT_SUPPORTED) {
    fprintf(o->out, "SKIP: %s\n", err.msg);
    rc = MT_EXIT_SKIP;
    goto out;
  }
  if (st != MT_OK) goto input_error;
  if (session_open(&s, o) != 0) goto out;
  rep.backend = be.name;
  for (int k = 0; k < s.n_files; k++)
    if (mt_report_add_golden(&rep, s.files[k]->path, s.files[k]->meta.torch_version,
                             s.files[k]->meta.generator_sha256, &err) != MT_OK)
      goto input_error;
  if (!o->progress_tty)
    fprintf(o->diag, "mtcs %s: backend %s, %d case%s in %d golden file%s\n", MTCS_VERSION, be.name,
            s.total, s.total == 1 ? "" : "s", s.n_files, s.n_files == 1 ? "" : "s");

  for (int k = 0; k < s.n_files; k++) {
    mt_golden_file *f = s.files[k];
    int before[MT_CS__COUNT];
    memcpy(before, rep.counts, sizeof before);
    double tf = now_s();
    for (int ci = 0; ci < f->n_cases; ci++) {
      if (!s.selected[k][ci]) continue;
      mt_golden_case *c = &f->cases[ci];
      mt_case_result res = {0};
      char repro[1024] = "";
      if (o->progress_tty) progress_show(o, done + 1, s.total,
                                         mt_report_count_group(&rep, MT_GROUP_FAILED), c->id);
      if (c->op == MT_OP__NONE) {
        res.status = MT_CS_SKIP;
        setmsg(&res, "op '%s' is not in this mtcs's op table (spec/include/mt/ops.def)", c->op_name);
      } else if (strcmp(c->profile, profile) != 0) {
        res.status = MT_CS_SKIP;
        setmsg(&res, "profile %s (this run: --profile %s)", c->profile, profile);
      } else {
        if (mt_golden_load(f, c, &err) != MT_OK) goto input_error;
        mt_case_run(be.impl, c, &o->run, &res);
        if (o->repro_dir && mt_case_status_group(res.status) == MT_GROUP_FAILED)
          write_repro(o, f, c, &res, repro, sizeof repro);
        mt_golden_unload(c);
      }
      done++;
      if (mt_report_add_case(&rep, k, c->id, c->op_name, c->op ? mt_op_family(c->op) : NULL,
                             c->rules, &res, &err) != MT_OK)
        goto input_error;
      print_case(o, f, c, &res, repro);
    }
    int ran = 0;
    for (int q = 0; q < MT_CS__COUNT; q++) ran += rep.counts[q] - before[q];
    if (!o->progress_tty && ran) {
      int d[MT_CS__COUNT];
      for (int q = 0; q < MT_CS__COUNT; q++) d[q] = rep.counts[q] - before[q];
      int p = 0, fl = 0, sk = 0;
      for (int q = 0; q < MT_CS__COUNT; q++) {
        mt_case_group g = mt_case_status_group((mt_case_status)q);
        p += g == MT_GROUP_PASSED ? d[q] : 0;
        fl += g == MT_GROUP_FAILED ? d[q] : 0;
        sk += g == MT_GROUP_SKIPPED ? d[q] : 0;
      }
      fprintf(o->diag, "%s: %d passed, %d failed, %d skipped (%.2f s)\n", f->path, p, fl, sk,
              now_s() - tf);
    }
  }
  progress_clear(o);
  rep.complete = 1;
  rep.seconds = now_s() - t0;
  print_summary(o, &rep);
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
  rc = mt_report_count_group(&rep, MT_GROUP_FAILED) ? MT_EXIT_FAIL : MT_EXIT_OK;
  goto out;

input_error:
  fflush(o->out);
  progress_clear(o);
  fprintf(o->diag, "mtcs: %s\n", err.msg);
  if (s.total)
    fprintf(o->diag, "INCOMPLETE: the run stopped after %d of %d cases; no report written\n", done,
            s.total);
  rc = MT_EXIT_USAGE;
out:
  mt_afile_abort(&json);
  mt_afile_abort(&junit);
  mt_report_free(&rep);
  session_free(&s);
  mt_backend_close(&be);
  return rc;
}

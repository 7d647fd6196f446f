/* repro.c - repro bundles and replay commands; see repro.h. */
#include "repro.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "poison.h"
#include "report.h"

char *mt_repro_command(const mt_session_opts *o, const char *golden, const mt_golden_case *c,
                       int filter) {
  char self[PATH_MAX], abs_h5[PATH_MAX], abs_be[PATH_MAX];
  const char *be = o->backend ? o->backend : "cpu";
  if (!realpath("/proc/self/exe", self))
    snprintf(self, sizeof self, "%s", o->self ? o->self : "mtcs");
  if (!realpath(golden, abs_h5)) snprintf(abs_h5, sizeof abs_h5, "%s", golden);
  if (!strchr(be, '/') || !realpath(be, abs_be)) snprintf(abs_be, sizeof abs_be, "%s", be);
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  if (!f) return NULL;
  char cwd[PATH_MAX];
  if (o->adapter && getcwd(cwd, sizeof cwd)) {
    /* the adapter command runs in mtcs's working directory: there again */
    fputs("cd ", f);
    mt_sh_quote(f, cwd);
    fputs(" && ", f);
  }
  mt_sh_quote(f, self);
  if (o->adapter) {
    fputs(" validate --adapter ", f);
    mt_sh_quote(f, o->adapter);
    if (o->case_timeout_s > 0) fprintf(f, " --case-timeout %g", o->case_timeout_s);
  } else {
    fputs(" run --backend ", f);
    mt_sh_quote(f, abs_be);
  }
  fputs(" --golden ", f);
  mt_sh_quote(f, abs_h5);
  if (filter) {
    fputs(" --filter ", f);
    mt_sh_quote(f, c->id);
  }
  fputs(" --profile ", f);
  mt_sh_quote(f, c->profile ? c->profile : "torch");
  fprintf(f, " --level %s", mt_level_name(o->run.exec.level));
  if (o->run.exec.torch_version) {
    fputs(" --torch-version ", f);
    mt_sh_quote(f, o->run.exec.torch_version);
  }
  if (o->run.exec.exact_version) fputs(" --exact-version", f);
  if (o->run.exec.poison_runs != MT_POISON__COUNT)
    fprintf(f, " --poison-runs %d", o->run.exec.poison_runs);
  fputs(o->adapter ? " -v" : " --no-fork -v", f);
  if (fclose(f) != 0) {
    free(buf);
    return NULL;
  }
  return buf;
}

void mt_repro_write(const mt_session_opts *o, const mt_golden_file *f, const mt_golden_case *c,
                    const mt_case_result *r, char *where, size_t where_len, char **command) {
  mt_error err = {0};
  mt_afile sh = {0};
  char *cmd = NULL;
  size_t n = strlen(o->repro_dir) + strlen(c->id) + 8;
  char *h5 = malloc(n), *shp = malloc(n);
  where[0] = 0;
  if (command) *command = NULL;
  if (!h5 || !shp) goto oom;
  snprintf(h5, n, "%s/%s.h5", o->repro_dir, c->id);
  snprintf(shp, n, "%s/%s.sh", o->repro_dir, c->id);
  if (mt_golden_write_case(h5, &f->meta, c, &err) != MT_OK) goto fail;
  if (!(cmd = mt_repro_command(o, h5, c, 0))) goto oom;
  if (mt_afile_open(&sh, shp, &err) != MT_OK) goto fail;
  fprintf(sh.f, "#!/bin/sh\n# mtcs repro: %s %s (from %s)\n# ", mt_case_status_name(r->status),
          c->id, f->path);
  for (const char *m = r->message; *m; m++) /* one comment line, whatever the message holds */
    fputc(*m == '\n' || *m == '\r' ? ' ' : *m, sh.f);
  fprintf(sh.f, o->adapter ? "\n%s \"$@\"\n" : "\nexec %s \"$@\"\n", cmd);
  if (mt_afile_commit(&sh, &err) != MT_OK) goto fail;
  chmod(shp, 0755);
  snprintf(where, where_len, "%s", shp);
  if (command) *command = cmd, cmd = NULL;
  goto out;
oom:
  mt_err(&err, MT_OUT_OF_MEMORY, "out of memory");
fail:
  mt_afile_abort(&sh);
  fprintf(o->diag, "mtcs: warning: no repro bundle for %s: %s\n", c->id, err.msg);
out:
  free(cmd);
  free(h5);
  free(shp);
}

/* repro.c - repro bundles; see repro.h. */
#include "repro.h"

#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "report.h"

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


void mt_repro_write(const mt_session_opts *o, const mt_golden_file *f, const mt_golden_case *c,
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
  fprintf(sh.f, "#!/bin/sh\n# mtcs repro: %s %s (from %s)\n# %s\n", mt_case_status_name(r->status),
          c->id, f->path, r->message);
  char cwd[4096];
  if (o->adapter && getcwd(cwd, sizeof cwd)) {
    /* the adapter command runs in mtcs's working directory: there again */
    fputs("cd ", sh.f);
    sh_quote(sh.f, cwd);
    fputs(" || exit 2\n", sh.f);
  }
  fputs("exec ", sh.f);
  sh_quote(sh.f, self);
  if (o->adapter) {
    fputs(" validate --adapter ", sh.f);
    sh_quote(sh.f, o->adapter);
    if (o->case_timeout_s > 0) fprintf(sh.f, " --case-timeout %g", o->case_timeout_s);
  } else {
    fputs(" run --backend ", sh.f);
    sh_quote(sh.f, abs_be);
  }
  fputs(" --golden ", sh.f);
  sh_quote(sh.f, abs_h5);
  fputs(" --profile ", sh.f);
  sh_quote(sh.f, c->profile ? c->profile : "torch");
  fprintf(sh.f, " --level %s", mt_level_name(o->run.exec.level));
  if (o->run.exec.torch_version) {
    fputs(" --torch-version ", sh.f);
    sh_quote(sh.f, o->run.exec.torch_version);
  }
  fputs(o->adapter ? " -v \"$@\"\n" : " --no-fork -v \"$@\"\n", sh.f);
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

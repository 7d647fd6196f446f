/* report.c - JSON and JUnit XML reports, atomic files; see report.h. */
#include "report.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- atomic files ---------------------------------------------------------------- */

mt_status mt_afile_open(mt_afile *a, const char *path, mt_error *err) {
  memset(a, 0, sizeof *a);
  size_t n = strlen(path);
  a->path = malloc(n + 1);
  a->tmp = malloc(n + 16);
  if (!a->path || !a->tmp) {
    mt_afile_abort(a);
    return mt_err(err, MT_OUT_OF_MEMORY, "report %s: out of memory", path);
  }
  memcpy(a->path, path, n + 1);
  snprintf(a->tmp, n + 16, "%s.tmp.XXXXXX", path);
  int fd = mkstemp(a->tmp);
  if (fd < 0) {
    int e = errno;
    free(a->tmp);
    a->tmp = NULL;
    mt_afile_abort(a);
    return mt_err(err, MT_IO_ERROR, "cannot write report %s: %s", path, strerror(e));
  }
  if (!(a->f = fdopen(fd, "w"))) {
    int e = errno;
    close(fd);
    mt_afile_abort(a);
    return mt_err(err, MT_IO_ERROR, "cannot write report %s: %s", path, strerror(e));
  }
  return MT_OK;
}

mt_status mt_afile_commit(mt_afile *a, mt_error *err) {
  mt_status st = MT_OK;
  int bad = ferror(a->f) || fflush(a->f) != 0 || fsync(fileno(a->f)) != 0;
  int e = errno;
  if (fclose(a->f) != 0 && !bad) bad = 1, e = errno;
  a->f = NULL;
  /* mkstemp makes 0600; a report is an ordinary file */
  if (!bad) {
    mode_t um = umask(0);
    umask(um);
    if (chmod(a->tmp, 0666 & ~um) != 0) bad = 1, e = errno;
  }
  if (bad)
    st = mt_err(err, MT_IO_ERROR, "writing report %s: %s", a->path, strerror(e));
  else if (rename(a->tmp, a->path) != 0)
    st = mt_err(err, MT_IO_ERROR, "cannot rename %s to %s: %s", a->tmp, a->path, strerror(errno));
  if (st != MT_OK) unlink(a->tmp);
  free(a->tmp);
  free(a->path);
  a->tmp = a->path = NULL;
  return st;
}

void mt_afile_abort(mt_afile *a) {
  if (a->f) fclose(a->f);
  if (a->tmp) unlink(a->tmp);
  free(a->tmp);
  free(a->path);
  memset(a, 0, sizeof *a);
}

/* ---- the model ------------------------------------------------------------------------ */

mt_status mt_report_add_golden(mt_report *r, const char *file, const char *torch_version,
                               const char *generator_sha256, mt_error *err) {
  mt_report_golden *g = realloc(r->golden, (size_t)(r->n_golden + 1) * sizeof *g);
  if (!g) return mt_err(err, MT_OUT_OF_MEMORY, "report: out of memory");
  r->golden = g;
  g[r->n_golden++] = (mt_report_golden){file, torch_version, generator_sha256};
  return MT_OK;
}

mt_status mt_report_add_case(mt_report *r, int golden, const char *id, const char *op,
                             const char *family, const char *rules, const mt_case_result *res,
                             mt_error *err) {
  if (r->n_cases == r->cap_cases) {
    int cap = r->cap_cases ? 2 * r->cap_cases : 64;
    mt_report_case *c = realloc(r->cases, (size_t)cap * sizeof *c);
    if (!c) return mt_err(err, MT_OUT_OF_MEMORY, "report: out of memory");
    r->cases = c;
    r->cap_cases = cap;
  }
  char *msg = NULL, *rl = NULL;
  size_t nr = strlen(rules ? rules : "") + 1;
  if (!(rl = malloc(nr))) return mt_err(err, MT_OUT_OF_MEMORY, "report: out of memory");
  memcpy(rl, rules ? rules : "", nr);
  if (res->message[0]) {
    size_t n = strlen(res->message) + 1;
    if (!(msg = malloc(n))) {
      free(rl);
      return mt_err(err, MT_OUT_OF_MEMORY, "report: out of memory");
    }
    memcpy(msg, res->message, n);
  }
  r->cases[r->n_cases++] =
      (mt_report_case){.golden = golden, .id = id, .op = op, .family = family, .rules = rl,
                       .status = res->status, .message = msg, .seconds = res->seconds};
  if (res->status >= 0 && res->status < MT_CS__COUNT) r->counts[res->status]++;
  return MT_OK;
}

static char *dup_or_null(const char *s, int *oom) {
  if (!s) return NULL;
  size_t n = strlen(s) + 1;
  char *p = malloc(n);
  if (p)
    memcpy(p, s, n);
  else
    *oom = 1;
  return p;
}

mt_status mt_report_describe_case(mt_report *r, int k, const char *profile,
                                  const char *repro_command, const char *repro_script,
                                  mt_error *err) {
  if (k < 0 || k >= r->n_cases)
    return mt_err(err, MT_INVALID_ARGUMENT, "report: no case %d (%d cases)", k, r->n_cases);
  mt_report_case *c = &r->cases[k];
  int oom = 0;
  char *cmd = dup_or_null(repro_command, &oom), *script = dup_or_null(repro_script, &oom);
  if (oom) {
    free(cmd);
    free(script);
    return mt_err(err, MT_OUT_OF_MEMORY, "report: out of memory");
  }
  free(c->repro_command);
  free(c->repro_script);
  c->profile = profile;
  c->repro_command = cmd;
  c->repro_script = script;
  return MT_OK;
}

mt_status mt_report_set_command(mt_report *r, int argc, const char *const *argv, mt_error *err) {
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  if (!f) return mt_err(err, MT_OUT_OF_MEMORY, "report: out of memory");
  for (int k = 0; k < argc; k++) {
    if (k) fputc(' ', f);
    mt_sh_quote(f, argv[k]);
  }
  if (fclose(f) != 0) {
    free(buf);
    return mt_err(err, MT_OUT_OF_MEMORY, "report: out of memory");
  }
  free(r->command);
  r->command = buf;
  return MT_OK;
}

void mt_report_free(mt_report *r) {
  for (int k = 0; k < r->n_cases; k++) {
    free(r->cases[k].message);
    free(r->cases[k].rules);
    free(r->cases[k].repro_command);
    free(r->cases[k].repro_script);
  }
  free(r->command);
  free(r->cases);
  free(r->golden);
  memset(r, 0, sizeof *r);
}

int mt_report_count_group(const mt_report *r, mt_case_group g) {
  int n = 0;
  for (int s = 0; s < MT_CS__COUNT; s++)
    if (mt_case_status_group((mt_case_status)s) == g) n += r->counts[s];
  return n;
}

mt_report_totals mt_report_get_totals(const mt_report *r) {
  mt_report_totals t = {0};
  t.passed = mt_report_count_group(r, MT_GROUP_PASSED);
  t.failed = mt_report_count_group(r, MT_GROUP_FAILED);
  t.skipped = mt_report_count_group(r, MT_GROUP_SKIPPED);
  t.executed = t.passed + t.failed;
  t.cases = r->n_cases;
  if (r->require_all) {
    t.failed += t.skipped;
    t.skipped = 0;
  }
  return t;
}

const char *mt_report_junit(const mt_report *r, mt_case_status s) {
  const char *j = mt_case_status_junit(s);
  return r->require_all && j && !strcmp(j, "skipped") ? "failure" : j;
}

/* ---- JSON --------------------------------------------------------------------------- */

void mt_sh_quote(FILE *f, const char *s) {
  static const char plain[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_./=:,+@%-";
  if (*s && s[strspn(s, plain)] == 0) {
    fputs(s, f);
    return;
  }
  fputc('\'', f);
  for (; *s; s++) {
    if (*s == '\'')
      fputs("'\\''", f);
    else
      fputc(*s, f);
  }
  fputc('\'', f);
}

static void json_kv_str(FILE *f, const char *k, const char *v, int comma) {
  mt_json_string(f, k);
  fputs(": ", f);
  mt_json_string(f, v);
  if (comma) fputs(", ", f);
}

mt_status mt_report_write_json(FILE *f, const mt_report *r, mt_error *err) {
  fputs("{\n  ", f);
  json_kv_str(f, "mtcs_version", MTCS_VERSION, 1);
  json_kv_str(f, "backend", r->backend, 0);
  fprintf(f, ",\n  \"complete\": %s,\n  \"adapter\": ",
          r->complete && !r->incomplete_cases ? "true" : "false");
  if (r->adapter_command) {
    fputc('{', f);
    json_kv_str(f, "command", r->adapter_command, 1);
    json_kv_str(f, "name", r->adapter_name, 0);
    fputc('}', f);
  } else {
    fputs("null", f);
  }
  fprintf(f, ",\n  \"incomplete\": %s, \"incomplete_cases\": %d, \"not_run\": %d,\n"
             "  \"incomplete_reasons\": [",
          r->incomplete_cases ? "true" : "false", r->incomplete_cases, r->not_run);
  for (int k = 0; k < r->n_reasons; k++) {
    fputs(k ? ",\n    " : "\n    ", f);
    mt_json_string(f, r->reasons[k] ? r->reasons[k] : "(reason lost: out of memory)");
  }
  fprintf(f, "%s,\n  \"seconds\": %.6f,\n  \"golden\": [", r->n_reasons ? "\n  ]" : "]",
          r->seconds);
  for (int k = 0; k < r->n_golden; k++) {
    const mt_report_golden *g = &r->golden[k];
    int n = 0;
    for (int c = 0; c < r->n_cases; c++) n += r->cases[c].golden == k;
    fputs(k ? ",\n    {" : "\n    {", f);
    json_kv_str(f, "file", g->file, 1);
    json_kv_str(f, "torch_version", g->torch_version, 1);
    json_kv_str(f, "generator_sha256", g->generator_sha256, 1);
    fprintf(f, "\"cases\": %d}", n);
  }
  fputs(r->n_golden ? "\n  ],\n  \"summary\": {" : "],\n  \"summary\": {", f);
  for (int s = 0; s < MT_CS__COUNT; s++) {
    mt_json_string(f, mt_case_status_name((mt_case_status)s));
    fprintf(f, ": %d%s", r->counts[s], s + 1 < MT_CS__COUNT ? ", " : "");
  }
  mt_report_totals t = mt_report_get_totals(r);
  fprintf(f, "},\n  \"require_all\": %s,\n  ", r->require_all ? "true" : "false");
  json_kv_str(f, "level", r->level ? r->level : "semantic", 0);
  fputs(",\n  ", f);
  json_kv_str(f, "torch_version", r->torch_version, 0);
  fprintf(f, ",\n  \"torch_version_requested\": %s,\n  ",
          r->torch_version_requested ? "true" : "false");
  json_kv_str(f, "profile", r->profile ? r->profile : "torch", 1);
  json_kv_str(f, "command", r->command, 0);
  fputs(",\n", f);
  fprintf(f,
          "  \"totals\": {\"passed\": %d, \"failed\": %d, \"skipped\": %d, \"executed\": %d, "
          "\"cases\": %d},\n",
          t.passed, t.failed, t.skipped, t.executed, t.cases);
  fputs("  \"cases\": [", f);
  for (int k = 0; k < r->n_cases; k++) {
    const mt_report_case *c = &r->cases[k];
    fputs(k ? ",\n    {" : "\n    {", f);
    json_kv_str(f, "id", c->id, 1);
    json_kv_str(f, "file", c->golden >= 0 && c->golden < r->n_golden ? r->golden[c->golden].file
                                                                      : NULL, 1);
    json_kv_str(f, "op", c->op, 1);
    json_kv_str(f, "family", c->family, 1);
    json_kv_str(f, "rules", c->rules, 1);
    json_kv_str(f, "status", mt_case_status_name(c->status), 1);
    json_kv_str(f, "message", c->message ? c->message : "", 1);
    fprintf(f, "\"seconds\": %.6f, ", c->seconds);
    json_kv_str(f, "profile", c->profile ? c->profile : "torch", 1);
    json_kv_str(f, "repro_command", c->repro_command, 1);
    json_kv_str(f, "repro_script", c->repro_script, 0);
    fputc('}', f);
  }
  fputs(r->n_cases ? "\n  ]\n}\n" : "]\n}\n", f);
  if (ferror(f)) return mt_err(err, MT_IO_ERROR, "writing the JSON report failed");
  return MT_OK;
}

/* ---- JUnit XML ---------------------------------------------------------------------- */

void mt_xml_text(FILE *f, const char *s) {
  if (!s) return;
  for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
    switch (*p) {
      case '&': fputs("&amp;", f); break;
      case '<': fputs("&lt;", f); break;
      case '>': fputs("&gt;", f); break;
      case '"': fputs("&quot;", f); break;
      case '\'': fputs("&apos;", f); break;
      case '\n': fputs("&#10;", f); break;
      case '\t': fputc('\t', f); break;
      default:
        /* XML 1.0 has no other control characters */
        fputc(*p < 0x20 || *p == 0x7f ? '?' : *p, f);
    }
  }
}

/* "golden/reduce.h5" -> "reduce" */
static void file_stem(const char *path, char *out, size_t len) {
  const char *b = path ? strrchr(path, '/') : NULL;
  b = b ? b + 1 : (path ? path : "golden");
  snprintf(out, len, "%s", b);
  char *dot = strrchr(out, '.');
  if (dot && dot != out) *dot = 0;
}

mt_status mt_report_write_junit(FILE *f, const mt_report *r, mt_error *err) {
  int total[MT_CS__COUNT] = {0};
  memcpy(total, r->counts, sizeof total);
  int n_fail = 0, n_err = 0, n_skip = 0;
  for (int s = 0; s < MT_CS__COUNT; s++) {
    const char *j = mt_report_junit(r, (mt_case_status)s);
    if (!j) continue;
    if (!strcmp(j, "failure")) n_fail += total[s];
    if (!strcmp(j, "error")) n_err += total[s];
    if (!strcmp(j, "skipped")) n_skip += total[s];
  }
  fprintf(f,
          "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
          "<testsuites name=\"mtcs\" tests=\"%d\" failures=\"%d\" errors=\"%d\" skipped=\"%d\" "
          "time=\"%.6f\">\n",
          r->n_cases, n_fail, n_err, n_skip, r->seconds);
  for (int g = 0; g < r->n_golden; g++) {
    int t = 0, fl = 0, er = 0, sk = 0;
    double secs = 0;
    for (int k = 0; k < r->n_cases; k++) {
      const mt_report_case *c = &r->cases[k];
      if (c->golden != g) continue;
      const char *j = mt_report_junit(r, c->status);
      t++;
      secs += c->seconds;
      fl += j && !strcmp(j, "failure");
      er += j && !strcmp(j, "error");
      sk += j && !strcmp(j, "skipped");
    }
    char stem[256];
    file_stem(r->golden[g].file, stem, sizeof stem);
    fputs("  <testsuite name=\"", f);
    mt_xml_text(f, r->golden[g].file);
    fprintf(f, "\" tests=\"%d\" failures=\"%d\" errors=\"%d\" skipped=\"%d\" time=\"%.6f\">\n", t,
            fl, er, sk, secs);
    fputs("    <properties>\n      <property name=\"backend\" value=\"", f);
    mt_xml_text(f, r->backend);
    fputs("\"/>\n      <property name=\"mtcs_version\" value=\"" MTCS_VERSION "\"/>\n", f);
    fprintf(f, "      <property name=\"level\" value=\"%s\"/>\n", r->level ? r->level : "semantic");
    if (r->adapter_command) { /* mtcs validate */
      fputs("      <property name=\"adapter\" value=\"", f);
      mt_xml_text(f, r->adapter_command);
      fputs("\"/>\n", f);
    }
    if (r->incomplete_cases)
      fprintf(f, "      <property name=\"incomplete\" value=\"%d case%s without a verdict\"/>\n",
              r->incomplete_cases, r->incomplete_cases == 1 ? "" : "s");
    if (r->golden[g].torch_version) {
      fputs("      <property name=\"torch_version\" value=\"", f);
      mt_xml_text(f, r->golden[g].torch_version);
      fputs("\"/>\n", f);
    }
    /* the version whose results were expected (--torch-version, else the file's) */
    const char *expected = r->torch_version_requested ? r->torch_version : r->golden[g].torch_version;
    if (expected) {
      fputs("      <property name=\"expected_torch_version\" value=\"", f);
      mt_xml_text(f, expected);
      fputs("\"/>\n", f);
    }
    fputs("    </properties>\n", f);
    for (int k = 0; k < r->n_cases; k++) {
      const mt_report_case *c = &r->cases[k];
      if (c->golden != g) continue;
      fputs("    <testcase classname=\"", f);
      mt_xml_text(f, stem);
      fputc('.', f);
      mt_xml_text(f, c->op);
      fputs("\" name=\"", f);
      mt_xml_text(f, c->id);
      fprintf(f, "\" time=\"%.6f\"", c->seconds);
      const char *j = mt_report_junit(r, c->status);
      const char *status = mt_case_status_name(c->status);
      if (!j && !(c->message && c->message[0])) {
        fputs("/>\n", f);
        continue;
      }
      fputs(">\n", f);
      if (j && !strcmp(j, "skipped")) {
        fputs("      <skipped message=\"", f);
        fputs(status, f);
        if (c->message) fputs(": ", f), mt_xml_text(f, c->message);
        fputs("\"/>\n", f);
      } else if (j) {
        fprintf(f, "      <%s type=\"%s\" message=\"", j, status);
        mt_xml_text(f, c->message);
        fputs("\">", f);
        fprintf(f, "%s: ", status);
        mt_xml_text(f, c->message);
        fputs("\nrules: ", f);
        mt_xml_text(f, c->rules && c->rules[0] ? c->rules : "-");
        fprintf(f, "</%s>\n", j);
      } else { /* a pass with something to say (EXPECTED_DIVERGENCE) */
        fprintf(f, "      <system-out>%s: ", status);
        mt_xml_text(f, c->message);
        fputs("</system-out>\n", f);
      }
      fputs("    </testcase>\n", f);
    }
    fputs("  </testsuite>\n", f);
  }
  fputs("</testsuites>\n", f);
  if (ferror(f)) return mt_err(err, MT_IO_ERROR, "writing the JUnit report failed");
  return MT_OK;
}

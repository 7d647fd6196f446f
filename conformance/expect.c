/* expect.c - the expectations file (expect.h). */
#include "expect.h"

#include <ctype.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* the statuses an entry may expect: what a failing or unsupported case yields */
static int expectable(mt_case_status s) {
  return s == MT_CS_FAIL || s == MT_CS_ERROR || s == MT_CS_CRASH || s == MT_CS_TIMEOUT ||
         s == MT_CS_NOT_SUPPORTED;
}

static int status_from_name(const char *name, mt_case_status *out) {
  for (int s = 0; s < MT_CS__COUNT; s++)
    if (!strcmp(mt_case_status_name((mt_case_status)s), name)) {
      *out = (mt_case_status)s;
      return 0;
    }
  return -1;
}

/* "YYYY-MM-DD", a real calendar date */
static int date_valid(const char *d) {
  static const int days[12] = {31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  if (strlen(d) != 10 || d[4] != '-' || d[7] != '-') return 0;
  for (int i = 0; i < 10; i++)
    if (i != 4 && i != 7 && !isdigit((unsigned char)d[i])) return 0;
  int y = atoi(d), m = atoi(d + 5), day = atoi(d + 8);
  if (m < 1 || m > 12 || day < 1 || day > days[m - 1]) return 0;
  if (m == 2 && day == 29 && !(y % 4 == 0 && (y % 100 != 0 || y % 400 == 0))) return 0;
  return 1;
}

/* The next field of *p (spaces/tabs separate), NUL-terminated in place. */
static char *field(char **p) {
  char *s = *p;
  while (*s == ' ' || *s == '\t') s++;
  if (!*s) return NULL;
  char *e = s;
  while (*e && *e != ' ' && *e != '\t') e++;
  if (*e) *e++ = 0;
  *p = e;
  return s;
}

static mt_status bad(mt_error *err, const char *path, int line, const char *fmt, const char *a,
                     const char *b) {
  char msg[MT_MSG_LEN];
  snprintf(msg, sizeof msg, fmt, a ? a : "", b ? b : "");
  return mt_err(err, MT_INVALID_FORMAT, "%s:%d: %s", path, line, msg);
}

static mt_status parse_line(const char *path, int line, char *text, const char *today,
                            mt_expectations *x, mt_error *err) {
  char *p = text, *glob, *st, *exp, *owner;
  size_t n = strlen(text);
  while (n && (text[n - 1] == '\n' || text[n - 1] == '\r')) text[--n] = 0;
  char *c = text;
  while (*c == ' ' || *c == '\t') c++;
  if (!*c || *c == '#') return MT_OK;
  glob = field(&p);
  st = field(&p);
  exp = field(&p);
  owner = field(&p);
  while (*p == ' ' || *p == '\t') p++;
  const char *form = " (expected: <case glob> <status> <expires YYYY-MM-DD> <owner> <reason>)";
  if (!st || !exp || !owner || !*p)
    return bad(err, path, line, "%s%s", !st ? "no status" : !exp ? "no expiry date"
                                        : !owner ? "no owner" : "no reason", form);
  mt_expect_entry e = {0};
  e.line = line;
  if (status_from_name(st, &e.status) != 0 || !expectable(e.status))
    return bad(err, path, line,
               "status '%s' is not one an entry can expect%s (FAIL, ERROR, CRASH, TIMEOUT, "
               "NOT_SUPPORTED)", st, "");
  if (!date_valid(exp)) return bad(err, path, line, "expiry '%s' is not a date YYYY-MM-DD%s", exp, "");
  if (strcmp(exp, today) < 0)
    return bad(err, path, line, "the entry for '%s' expired on %s: fix the cases or renew it", glob,
               exp);
  for (int k = 0; k < x->n; k++)
    if (!strcmp(x->e[k].glob, glob)) {
      char other[16];
      snprintf(other, sizeof other, "%d", x->e[k].line);
      return bad(err, path, line, "glob '%s' repeats line %s (one entry per glob)", glob, other);
    }
  memcpy(e.expires, exp, 11);
  e.glob = strdup(glob);
  e.owner = strdup(owner);
  e.reason = strdup(p);
  mt_expect_entry *grown = realloc(x->e, (size_t)(x->n + 1) * sizeof *grown);
  if (!e.glob || !e.owner || !e.reason || !grown) {
    free(e.glob);
    free(e.owner);
    free(e.reason);
    if (grown) x->e = grown;
    return mt_err(err, MT_OUT_OF_MEMORY, "%s:%d: out of memory", path, line);
  }
  x->e = grown;
  x->e[x->n++] = e;
  return MT_OK;
}

mt_status mt_expect_load(const char *path, const char *today, mt_expectations *x, mt_error *err) {
  char day[16];
  mt_status st = MT_OK;
  memset(x, 0, sizeof *x);
  x->path = path;
  if (!today) today = getenv("MTCS_TODAY");
  if (today && *today) {
    if (!date_valid(today))
      return mt_err(err, MT_INVALID_ARGUMENT, "MTCS_TODAY = '%s' is not a date YYYY-MM-DD", today);
  } else {
    time_t now = time(NULL);
    struct tm tm;
    gmtime_r(&now, &tm);
    strftime(day, sizeof day, "%Y-%m-%d", &tm);
    today = day;
  }
  FILE *f = fopen(path, "r");
  if (!f) return mt_err(err, MT_INVALID_ARGUMENT, "--expect %s: cannot open it", path);
  char *buf = NULL;
  size_t cap = 0;
  int line = 0;
  while (getline(&buf, &cap, f) >= 0 && st == MT_OK) st = parse_line(path, ++line, buf, today, x, err);
  if (st == MT_OK && ferror(f)) st = mt_err(err, MT_INVALID_FORMAT, "%s: read error", path);
  free(buf);
  fclose(f);
  if (st != MT_OK) mt_expect_free(x);
  return st;
}

void mt_expect_free(mt_expectations *x) {
  for (int k = 0; k < x->n; k++) {
    free(x->e[k].glob);
    free(x->e[k].owner);
    free(x->e[k].reason);
  }
  free(x->e);
  x->e = NULL;
  x->n = 0;
}

void mt_expect_apply(mt_expectations *x, const char *id, mt_case_result *r) {
  if (!x) return;
  for (int k = 0; k < x->n; k++) {
    mt_expect_entry *e = &x->e[k];
    if (fnmatch(e->glob, id, 0) != 0) continue;
    e->used++;
    char was[MT_RESULT_MSG_LEN];
    snprintf(was, sizeof was, "%s", r->message);
    const char *want = mt_case_status_name(e->status);
    if (r->status == e->status) {
      r->status = MT_CS_XFAIL;
      mt_case_setmsg(r, "%s as %s:%d expects (%s: %s)%s%s", want, x->path, e->line, e->owner,
                     e->reason, was[0] ? ": " : "", was);
    } else if (mt_case_status_group(r->status) == MT_GROUP_PASSED) {
      r->status = MT_CS_XPASS;
      mt_case_setmsg(r, "passes, but %s:%d expects %s (%s: %s): remove the entry", x->path,
                     e->line, want, e->owner, e->reason);
    } else {
      mt_case_setmsg(r, "%s%s(%s:%d expects %s, not %s)", was, was[0] ? " " : "", x->path,
                     e->line, want, mt_case_status_name(r->status));
    }
    return;
  }
}

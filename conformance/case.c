/* case.c - the case status table and result helpers; see case.h. */
#include "case.h"

#include <stdarg.h>
#include <stdio.h>
#include <time.h>

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
int mt_case_status_executed(mt_case_status s) {
  return mt_case_status_group(s) != MT_GROUP_SKIPPED;
}

void mt_case_setmsg(mt_case_result *r, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(r->message, sizeof r->message, fmt, ap);
  va_end(ap);
}

const char *mt_case_blame(const mt_case_result *r, const char *rules) {
  return r->rule[0] ? r->rule : rules;
}

double mt__now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* error.c - filling mt_error: a status plus a message that names the field
 * and the value. */
#include <stdio.h>
#include <string.h>

#include "mt_core.h"

mt_status mt_err(mt_error *err, mt_status s, const char *fmt, ...) {
  if (!err) return s;
  err->status = s;
  if (!fmt) {
    snprintf(err->msg, sizeof err->msg, "%s", mt_status_message(s));
    return s;
  }
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(err->msg, sizeof err->msg, fmt, ap);
  va_end(ap);
  return s;
}

mt_status mt_err_prefix(mt_error *err, const char *fmt, ...) {
  if (!err) return MT_OK;
  char prefix[MT_MSG_LEN], old[MT_MSG_LEN], both[2 * MT_MSG_LEN + 4];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(prefix, sizeof prefix, fmt, ap);
  va_end(ap);
  memcpy(old, err->msg, sizeof old);
  old[sizeof old - 1] = '\0';
  snprintf(both, sizeof both, "%s: %s", prefix, old);
  snprintf(err->msg, sizeof err->msg, "%.*s", (int)sizeof err->msg - 1, both);
  return err->status;
}

/* kwargs.c - the kernels' check of a call's keyword arguments against the
 * op's schema (spec/include/mt/kwargs.def), so that a misspelt or mistyped
 * kwarg is refused instead of silently running with the default. */
#include "mt/kwargs.h"

#include "mt_core.h"

mt_status mt__kw_check(mt_op op, const mt_kwargs *kw, mt_error *err) {
  const char *bad = "";
  char why[MT_MSG_LEN - 64];
  if (!mt_kw_validate(op, kw, &bad, why, sizeof why)) return MT_OK;
  const char *name = mt_op_name(op);
  if (!bad[0]) return mt_err(err, MT_INVALID_ARGUMENT, "%s: kwargs: %s", name ? name : "?", why);
  return mt_err(err, MT_INVALID_ARGUMENT, "%s: kwargs/%s: %s", name ? name : "?", bad, why);
}

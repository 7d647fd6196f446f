/* names.c - names of statuses, ops, dtypes and layouts, generated from the
 * X-macro tables of spec/include/mt/ so that no switch repeats them. */
#include <string.h>

#include "mt_core.h"

static const struct {
  const char *name, *msg;
} status_table[MT_STATUS__COUNT] = {
#define MT_STATUS(n, code, m) [code] = {#n, m},
#include "mt/status.def"
#undef MT_STATUS
};

static const struct {
  const char *name, *family, *rules;
} op_table[MT_OP__END] = {
#define MT_OP(id, n, fam, r) [id] = {#n, #fam, r},
#include "mt/ops.def"
#undef MT_OP
};

static const struct {
  const char *name;
  size_t size;
} dtype_table[MT_DTYPE__COUNT] = {
#define MT_X(n, sz, str) [MT_##n] = {str, sz},
    MT_DTYPES(MT_X)
#undef MT_X
};

static const char *const kind_table[MT_KIND__COUNT] = {
#define MT_X(n, str) [MT_KIND_##n] = str,
    MT_KINDS(MT_X)
#undef MT_X
};

const char *mt_status_name(mt_status s) {
  return ((unsigned)s < MT_STATUS__COUNT && status_table[s].name) ? status_table[s].name : "?";
}

const char *mt_status_message(mt_status s) {
  return ((unsigned)s < MT_STATUS__COUNT && status_table[s].msg) ? status_table[s].msg
                                                                   : "unknown status";
}

int mt_status_from_name(const char *name, mt_status *out) {
  for (int s = 0; name && s < MT_STATUS__COUNT; s++)
    if (status_table[s].name && strcmp(status_table[s].name, name) == 0) {
      *out = (mt_status)s;
      return 0;
    }
  return -1;
}

const char *mt_op_name(mt_op op) {
  return ((unsigned)op < MT_OP__END) ? op_table[op].name : NULL;
}

const char *mt_op_family(mt_op op) {
  return ((unsigned)op < MT_OP__END) ? op_table[op].family : NULL;
}

const char *mt_op_rules(mt_op op) {
  return ((unsigned)op < MT_OP__END) ? op_table[op].rules : NULL;
}

int mt_op_from_name(const char *name, mt_op *out) {
  for (int op = 1; name && op < MT_OP__END; op++)
    if (op_table[op].name && strcmp(op_table[op].name, name) == 0) {
      *out = (mt_op)op;
      return 0;
    }
  return -1;
}

const char *mt_dtype_name(mt_dtype d) {
  return ((unsigned)d < MT_DTYPE__COUNT) ? dtype_table[d].name : "?";
}

size_t mt_dtype_size(mt_dtype d) { return ((unsigned)d < MT_DTYPE__COUNT) ? dtype_table[d].size : 0; }

int mt_dtype_from_name(const char *name, mt_dtype *out) {
  for (int d = 0; name && d < MT_DTYPE__COUNT; d++)
    if (strcmp(dtype_table[d].name, name) == 0) {
      *out = (mt_dtype)d;
      return 0;
    }
  return -1;
}

int mt_dtype_is_float(mt_dtype d) {
  return d == MT_float32 || d == MT_float64 || d == MT_float16 || d == MT_bfloat16;
}

const char *mt_kind_name(mt_kind k) { return ((unsigned)k < MT_KIND__COUNT) ? kind_table[k] : "?"; }

int mt_kind_from_name(const char *name, mt_kind *out) {
  for (int k = 0; name && k < MT_KIND__COUNT; k++)
    if (strcmp(kind_table[k], name) == 0) {
      *out = (mt_kind)k;
      return 0;
    }
  return -1;
}

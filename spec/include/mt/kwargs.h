/* kwargs.h - the keyword-argument schema of every op (kwargs.def) and one
 * check of a call's kwargs against it, shared by the golden loader, our
 * kernels and any plugin that wants it. C standard library and mt.h only,
 * header-only: a plugin built from spec/ alone can include it.
 *
 * What each schema type accepts (spec/golden-format.md "Keyword
 * arguments"):
 *   BOOL   MT_KW_BOOL holding 0 or 1
 *   INT    MT_KW_INT
 *   FLOAT  MT_KW_FLOAT, MT_KW_INT (a Python int where torch wants a float)
 *   DIMS   MT_KW_INT, MT_KW_INTS (an int or a tuple of ints)
 *   DTYPE  MT_KW_STR naming an mtcs dtype ("float64"; a torch.dtype)
 *   FLOATS MT_KW_FLOATS, MT_KW_INTS (a tuple of floats: betas=(0.9, 0.999))
 *   FLOAT_TENSOR  MT_KW_FLOAT, MT_KW_INT, MT_KW_FLOATS (a float, or a 1-d
 *          float Tensor given as the tuple of its elements: SparseAdam's lr)
 *   LAYOUT MT_KW_STR naming a torch.layout without its "torch." prefix:
 *          "strided", "sparse_coo", "sparse_csr", "sparse_csc", "sparse_bsr",
 *          "sparse_bsc" (to_sparse's layout=)
 * A kwarg that is not in the op's schema, or a value of a type the schema
 * does not accept, is refused; so is a name given twice. */
#ifndef MT_KWARGS_H
#define MT_KWARGS_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mt/mt.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
  MT_KWS_BOOL,
  MT_KWS_INT,
  MT_KWS_FLOAT,
  MT_KWS_DIMS, /* an int or a tuple of ints */
  MT_KWS_DTYPE, /* a string naming a dtype: "float32" ... "bool" (a torch.dtype) */
  MT_KWS_FLOATS, /* a tuple of floats */
  MT_KWS_FLOAT_TENSOR, /* a float, or a 1-d float Tensor as the tuple of its elements */
  MT_KWS_LAYOUT /* a string naming a torch.layout: "sparse_csr" (appended) */
} mt_kw_schema_type;

/* One line of kwargs.def. */
typedef struct mt_kw_schema {
  mt_op op;
  const char *name; /* torch's keyword name */
  mt_kw_schema_type type;
  const char *doc;
} mt_kw_schema;

/* Every line of kwargs.def, in file order; *n = their count. */
static inline const mt_kw_schema *mt_kw_schema_all(int *n) {
  static const mt_kw_schema table[] = {
#define MT_KWARG(op, name, type, doc) {MT_OP_##op, #name, MT_KWS_##type, doc},
#include "mt/kwargs.def"
#undef MT_KWARG
  };
  *n = (int)(sizeof table / sizeof table[0]);
  return table;
}

/* The schema line of op's kwarg `name`, or NULL: op does not take it. */
static inline const mt_kw_schema *mt_kw_schema_find(mt_op op, const char *name) {
  int n;
  const mt_kw_schema *t = mt_kw_schema_all(&n);
  for (int k = 0; name && k < n; k++)
    if (t[k].op == op && strcmp(t[k].name, name) == 0) return &t[k];
  return NULL;
}

/* "a float", "an int or a tuple of ints": what a schema type wants. */
static inline const char *mt_kw_schema_type_name(mt_kw_schema_type t) {
  switch (t) {
    case MT_KWS_BOOL: return "a bool";
    case MT_KWS_INT: return "an int";
    case MT_KWS_FLOAT: return "a float";
    case MT_KWS_DIMS: return "an int or a tuple of ints";
    case MT_KWS_DTYPE: return "a dtype name";
    case MT_KWS_FLOATS: return "a tuple of floats";
    case MT_KWS_FLOAT_TENSOR: return "a float or a tuple of floats (a 1-d Tensor)";
    case MT_KWS_LAYOUT: return "a layout name";
  }
  return "?";
}

/* "a string": what a kwarg value is. */
static inline const char *mt_kw_type_name(mt_kw_type t) {
  switch (t) {
    case MT_KW_BOOL: return "a bool";
    case MT_KW_INT: return "an int";
    case MT_KW_FLOAT: return "a float";
    case MT_KW_STR: return "a string";
    case MT_KW_INTS: return "a tuple of ints";
    case MT_KW_FLOATS: return "a tuple of floats";
  }
  return "a value of unknown type";
}

/* 1 when a value of type t is accepted where the schema wants s. */
static inline int mt_kw_schema_accepts(mt_kw_schema_type s, mt_kw_type t) {
  switch (s) {
    case MT_KWS_BOOL: return t == MT_KW_BOOL;
    case MT_KWS_INT: return t == MT_KW_INT;
    case MT_KWS_FLOAT: return t == MT_KW_FLOAT || t == MT_KW_INT;
    case MT_KWS_DIMS: return t == MT_KW_INT || t == MT_KW_INTS;
    case MT_KWS_DTYPE: return t == MT_KW_STR;
    case MT_KWS_FLOATS: return t == MT_KW_FLOATS || t == MT_KW_INTS;
    case MT_KWS_FLOAT_TENSOR: return t == MT_KW_FLOAT || t == MT_KW_INT || t == MT_KW_FLOATS;
    case MT_KWS_LAYOUT: return t == MT_KW_STR;
  }
  return 0;
}

/* The op's name (ops.def), "?" for an id that is not there. */
static inline const char *mt_kw__op_name(mt_op op) {
  switch (op) {
#define MT_OP(id, name, family, rules) \
  case MT_OP_##name:                   \
    return #name;
#include "mt/ops.def"
#undef MT_OP
    default: return "?";
  }
}

/* The value as Python writes it: True, 3, 0.1, nan, '0.1', (0, 2), (1,). */
static inline const char *mt_kw_repr(const mt_kwarg *a, char *buf, size_t len) {
  size_t o = 0;
  if (!len) return buf;
  buf[0] = 0;
#define MT_KW__PUT(...)                                                       \
  do {                                                                        \
    if (o < len) {                                                            \
      int mt__w = snprintf(buf + o, len - o, __VA_ARGS__);                    \
      o = mt__w < 0 ? len : o + (size_t)mt__w;                                \
    }                                                                         \
  } while (0)
  switch (a->type) {
    case MT_KW_BOOL:
      if (a->i == 0 || a->i == 1)
        MT_KW__PUT("%s", a->i ? "True" : "False");
      else
        MT_KW__PUT("%lld", (long long)a->i);
      break;
    case MT_KW_INT: MT_KW__PUT("%lld", (long long)a->i); break;
    case MT_KW_FLOAT: {
      double f = a->f;
      if (f != f) {
        MT_KW__PUT("nan");
      } else if (f - f != 0.0) {
        MT_KW__PUT("%sinf", f < 0 ? "-" : "");
      } else { /* the shortest that reads back, as Python's repr */
        char t[40];
        for (int p = 1; p <= 17; p++) {
          snprintf(t, sizeof t, "%.*g", p, f);
          if (strtod(t, NULL) == f) break;
        }
        MT_KW__PUT("%s%s", t, strpbrk(t, ".e") ? "" : ".0");
      }
      break;
    }
    case MT_KW_STR: {
      const char *s = a->s ? a->s : "";
      int n = (int)strlen(s);
      MT_KW__PUT("'%.*s%s'", n > 40 ? 40 : n, s, n > 40 ? "..." : "");
      break;
    }
    case MT_KW_INTS:
      if (a->n < 0 || (a->n > 0 && !a->ints)) {
        MT_KW__PUT("<%d ints, no elements>", a->n);
        break;
      }
      MT_KW__PUT("(");
      for (int k = 0; k < a->n && k < 8; k++)
        MT_KW__PUT("%s%lld", k ? ", " : "", (long long)a->ints[k]);
      MT_KW__PUT("%s)", a->n == 1 ? "," : a->n > 8 ? ", ..." : "");
      break;
    case MT_KW_FLOATS:
      if (a->n < 0 || (a->n > 0 && !a->floats)) {
        MT_KW__PUT("<%d floats, no elements>", a->n);
        break;
      }
      MT_KW__PUT("(");
      for (int k = 0; k < a->n && k < 8; k++) {
        mt_kwarg one = {.type = MT_KW_FLOAT, .f = a->floats[k]};
        char t[48];
        MT_KW__PUT("%s%s", k ? ", " : "", mt_kw_repr(&one, t, sizeof t));
      }
      MT_KW__PUT("%s)", a->n == 1 ? "," : a->n > 8 ? ", ..." : "");
      break;
    default: MT_KW__PUT("type %d", (int)a->type); break;
  }
#undef MT_KW__PUT
  return buf;
}

/* The dtype a DTYPE kwarg names (its golden name: "float32", "int64",
 * "bool" ...) into *out (may be NULL); 0 on success, 1 for anything else. */
static inline int mt_kw_dtype_parse(const char *s, mt_dtype *out) {
  static const char *const names[] = {
#define MT_X(name, size, str) str,
      MT_DTYPES(MT_X)
#undef MT_X
  };
  for (int d = 0; s && d < (int)MT_DTYPE__COUNT; d++)
    if (strcmp(s, names[d]) == 0) {
      if (out) *out = (mt_dtype)d;
      return 0;
    }
  return 1;
}

/* The layout a LAYOUT kwarg names ("strided", "sparse_coo", "sparse_csr",
 * "sparse_csc", "sparse_bsr", "sparse_bsc": torch.layout without "torch.")
 * into *out (may be NULL; strided is MT_KIND_DENSE); 0 on success, 1 for
 * anything else. */
static inline int mt_kw_layout_parse(const char *s, mt_kind *out) {
  static const struct {
    const char *name;
    mt_kind kind;
  } layouts[] = {{"strided", MT_KIND_DENSE},    {"sparse_coo", MT_KIND_COO},
                 {"sparse_csr", MT_KIND_CSR},   {"sparse_csc", MT_KIND_CSC},
                 {"sparse_bsr", MT_KIND_BSR},   {"sparse_bsc", MT_KIND_BSC}};
  for (size_t k = 0; s && k < sizeof layouts / sizeof layouts[0]; k++)
    if (strcmp(s, layouts[k].name) == 0) {
      if (out) *out = layouts[k].kind;
      return 0;
    }
  return 1;
}

/* Checks kw against op's schema. Returns 0 when every kwarg is one the op
 * takes, with a value of a type it accepts. Otherwise returns 1 with
 * *bad_name the offending kwarg's name and `why` the reason, e.g.
 *   lr:  "expected a float, got a string ('0.1')"
 *   lrr: "unknown keyword argument for adagrad_dense (accepted: lr, lr_decay,
 *         weight_decay, eps, maximize, step)"
 * (the caller puts the place in front: "kwargs/lr: expected ..."). */
static inline int mt_kw_validate(mt_op op, const mt_kwargs *kw, const char **bad_name, char *why,
                                 size_t why_len) {
  char v[96];
  *bad_name = "";
  if (why_len) why[0] = 0;
  if (!kw || kw->n == 0) return 0;
  if (kw->n < 0 || !kw->items) {
    snprintf(why, why_len, "malformed kwargs (n = %d, items %s)", kw->n,
             kw->items ? "set" : "NULL");
    return 1;
  }
  for (int k = 0; k < kw->n; k++) {
    const mt_kwarg *a = &kw->items[k];
    if (!a->name) {
      *bad_name = "?";
      snprintf(why, why_len, "keyword argument %d has no name", k);
      return 1;
    }
    *bad_name = a->name;
    for (int j = 0; j < k; j++)
      if (kw->items[j].name && strcmp(kw->items[j].name, a->name) == 0) {
        snprintf(why, why_len, "keyword argument given more than once");
        return 1;
      }
    const mt_kw_schema *s = mt_kw_schema_find(op, a->name);
    if (!s) {
      int n, m = 0, o;
      const mt_kw_schema *t = mt_kw_schema_all(&n);
      o = snprintf(why, why_len, "unknown keyword argument for %s (", mt_kw__op_name(op));
      for (int q = 0; q < n; q++) {
        if (t[q].op != op) continue;
        if (o >= 0 && (size_t)o < why_len)
          o += snprintf(why + o, why_len - (size_t)o, "%s%s", m++ ? ", " : "accepted: ",
                        t[q].name);
      }
      if (o >= 0 && (size_t)o < why_len)
        snprintf(why + o, why_len - (size_t)o, "%s)", m ? "" : "it takes none");
      return 1;
    }
    if (!mt_kw_schema_accepts(s->type, a->type) ||
        (a->type == MT_KW_INTS && (a->n < 0 || (a->n > 0 && !a->ints))) ||
        (a->type == MT_KW_FLOATS && (a->n < 0 || (a->n > 0 && !a->floats)))) {
      snprintf(why, why_len, "expected %s, got %s (%s)", mt_kw_schema_type_name(s->type),
               mt_kw_type_name(a->type), mt_kw_repr(a, v, sizeof v));
      return 1;
    }
    if ((s->type == MT_KWS_DTYPE && mt_kw_dtype_parse(a->s, NULL) != 0) ||
        (s->type == MT_KWS_LAYOUT && mt_kw_layout_parse(a->s, NULL) != 0)) {
      snprintf(why, why_len, "expected %s, got %s (%s)", mt_kw_schema_type_name(s->type),
               mt_kw_type_name(a->type), mt_kw_repr(a, v, sizeof v));
      return 1;
    }
    if (a->type == MT_KW_BOOL && a->i != 0 && a->i != 1) {
      snprintf(why, why_len, "expected a bool (0 or 1), got %lld", (long long)a->i);
      return 1;
    }
  }
  *bad_name = "";
  return 0;
}

#ifdef __cplusplus
}
#endif
#endif /* MT_KWARGS_H */

/* jsonline.h - one flat JSON object per line: the reader and the string
 * quoting the adapter protocol needs (spec/adapter-protocol.md), no more. */
#ifndef MT_CONF_JSONLINE_H
#define MT_CONF_JSONLINE_H

#include <stddef.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The reader the protocol needs, no more: one object whose values are
 * strings, numbers, true/false/null or arrays of strings. */
#define MT_JSON_MAX_FIELDS 32
typedef enum {
  MT_JSON_STRING,
  MT_JSON_NUMBER,
  MT_JSON_BOOL,
  MT_JSON_NULL,
  MT_JSON_STRINGS
} mt_json_type;
typedef struct mt_json_field {
  char *name;
  mt_json_type type;
  char *s;    /* STRING (UTF-8, no NUL inside) */
  double num; /* NUMBER; BOOL 0 or 1 */
  int n;      /* STRINGS: count */
  char **v;   /* STRINGS */
} mt_json_field;
typedef struct mt_json_object {
  int n;
  mt_json_field f[MT_JSON_MAX_FIELDS];
} mt_json_object;

/* Parses text[0..len) (one object; white space around it allowed). 0, or
 * -1 with why ("expected ':' after key \"status\" at byte 9") and o empty. */
int mt_json_parse_flat(const char *text, size_t len, mt_json_object *o, char *why, size_t why_len);
void mt_json_object_free(mt_json_object *o);
/* The field called name, or NULL. */
const mt_json_field *mt_json_get(const mt_json_object *o, const char *name);
/* The string value of name, NULL when absent or not a string. */
const char *mt_json_get_str(const mt_json_object *o, const char *name);
/* s as a JSON string, with quotes and escapes, into f; NULL -> null. */
void mt_json_string(FILE *f, const char *s);
/* The same into buf; returns the length
 * written, or -1 when it does not fit. */
int mt_json_quote(char *buf, size_t len, const char *s);

#ifdef __cplusplus
}
#endif
#endif /* MT_CONF_JSONLINE_H */

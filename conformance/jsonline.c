/* jsonline.c - one flat JSON object per line; see jsonline.h. */
#include "jsonline.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct jp {
  const char *s;
  size_t len, i;
  char *why;
  size_t why_len;
} jp;

static int jfail(jp *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int jfail(jp *p, const char *fmt, ...) {
  char msg[200];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  if (p->why && p->why_len) snprintf(p->why, p->why_len, "%s at byte %zu", msg, p->i);
  return -1;
}

static void jws(jp *p) {
  while (p->i < p->len &&
         (p->s[p->i] == ' ' || p->s[p->i] == '\t' || p->s[p->i] == '\n' || p->s[p->i] == '\r'))
    p->i++;
}

static int hex4(jp *p, unsigned *out) {
  unsigned v = 0;
  if (p->i + 4 > p->len) return jfail(p, "truncated \\u escape");
  for (int k = 0; k < 4; k++) {
    char ch = p->s[p->i++];
    v <<= 4;
    if (ch >= '0' && ch <= '9')
      v |= (unsigned)(ch - '0');
    else if (ch >= 'a' && ch <= 'f')
      v |= (unsigned)(ch - 'a' + 10);
    else if (ch >= 'A' && ch <= 'F')
      v |= (unsigned)(ch - 'A' + 10);
    else
      return jfail(p, "bad \\u escape");
  }
  *out = v;
  return 0;
}

static size_t utf8_put(char *o, unsigned cp) {
  if (cp < 0x80) {
    o[0] = (char)cp;
    return 1;
  }
  if (cp < 0x800) {
    o[0] = (char)(0xc0 | (cp >> 6));
    o[1] = (char)(0x80 | (cp & 0x3f));
    return 2;
  }
  if (cp < 0x10000) {
    o[0] = (char)(0xe0 | (cp >> 12));
    o[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
    o[2] = (char)(0x80 | (cp & 0x3f));
    return 3;
  }
  o[0] = (char)(0xf0 | (cp >> 18));
  o[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
  o[2] = (char)(0x80 | ((cp >> 6) & 0x3f));
  o[3] = (char)(0x80 | (cp & 0x3f));
  return 4;
}

/* A string at p->i (on its opening quote) into a new buffer. */
static int jstring(jp *p, char **out) {
  *out = NULL;
  if (p->i >= p->len || p->s[p->i] != '"') return jfail(p, "expected a string");
  p->i++;
  size_t start = p->i, cap = 0;
  /* the decoded string is never longer than the encoded one */
  for (size_t j = start; j < p->len && p->s[j] != '"'; j++, cap++)
    if (p->s[j] == '\\') j++, cap++;
  char *o = malloc(cap + 1);
  if (!o) return jfail(p, "out of memory");
  size_t n = 0;
  for (;;) {
    if (p->i >= p->len) {
      free(o);
      return jfail(p, "unterminated string");
    }
    unsigned char ch = (unsigned char)p->s[p->i++];
    if (ch == '"') break;
    if (ch < 0x20) {
      free(o);
      return jfail(p, "control character 0x%02x in a string", ch);
    }
    if (ch != '\\') {
      o[n++] = (char)ch;
      continue;
    }
    if (p->i >= p->len) {
      free(o);
      return jfail(p, "unterminated escape");
    }
    char e = p->s[p->i++];
    unsigned cp = 0;
    switch (e) {
      case '"': o[n++] = '"'; break;
      case '\\': o[n++] = '\\'; break;
      case '/': o[n++] = '/'; break;
      case 'b': o[n++] = '\b'; break;
      case 'f': o[n++] = '\f'; break;
      case 'n': o[n++] = '\n'; break;
      case 'r': o[n++] = '\r'; break;
      case 't': o[n++] = '\t'; break;
      case 'u':
        if (hex4(p, &cp)) goto bad;
        if (cp >= 0xd800 && cp < 0xdc00) { /* a surrogate pair */
          unsigned lo = 0;
          if (p->i + 2 > p->len || p->s[p->i] != '\\' || p->s[p->i + 1] != 'u') {
            jfail(p, "lone surrogate in a \\u escape");
            goto bad;
          }
          p->i += 2;
          if (hex4(p, &lo)) goto bad;
          if (lo < 0xdc00 || lo > 0xdfff) {
            jfail(p, "bad surrogate pair in a \\u escape");
            goto bad;
          }
          cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
        } else if (cp >= 0xdc00 && cp < 0xe000) {
          jfail(p, "lone surrogate in a \\u escape");
          goto bad;
        }
        if (cp == 0) {
          jfail(p, "\\u0000 in a string");
          goto bad;
        }
        n += utf8_put(o + n, cp); /* at most 4 bytes for the 6 or 12 read */
        break;
      default: jfail(p, "bad escape '\\%c'", e); goto bad;
    }
  }
  o[n] = 0;
  *out = o;
  return 0;
bad:
  free(o);
  return -1;
}

static int jnumber(jp *p, double *out) {
  size_t i = p->i, start = i;
  if (i < p->len && p->s[i] == '-') i++;
  if (i >= p->len || p->s[i] < '0' || p->s[i] > '9') return jfail(p, "bad number");
  if (p->s[i] == '0')
    i++;
  else
    while (i < p->len && p->s[i] >= '0' && p->s[i] <= '9') i++;
  if (i < p->len && p->s[i] == '.') {
    i++;
    if (i >= p->len || p->s[i] < '0' || p->s[i] > '9') return jfail(p, "bad number");
    while (i < p->len && p->s[i] >= '0' && p->s[i] <= '9') i++;
  }
  if (i < p->len && (p->s[i] == 'e' || p->s[i] == 'E')) {
    i++;
    if (i < p->len && (p->s[i] == '+' || p->s[i] == '-')) i++;
    if (i >= p->len || p->s[i] < '0' || p->s[i] > '9') return jfail(p, "bad number");
    while (i < p->len && p->s[i] >= '0' && p->s[i] <= '9') i++;
  }
  char tmp[64];
  if (i - start >= sizeof tmp) return jfail(p, "number too long");
  memcpy(tmp, p->s + start, i - start);
  tmp[i - start] = 0;
  *out = strtod(tmp, NULL);
  p->i = i;
  return 0;
}

static int jword(jp *p, const char *w) {
  size_t n = strlen(w);
  if (p->i + n <= p->len && memcmp(p->s + p->i, w, n) == 0) {
    p->i += n;
    return 1;
  }
  return 0;
}

static void field_free(mt_json_field *f) {
  free(f->name);
  free(f->s);
  for (int k = 0; k < f->n; k++) free(f->v[k]);
  free(f->v);
  memset(f, 0, sizeof *f);
}

void mt_json_object_free(mt_json_object *o) {
  for (int k = 0; k < o->n; k++) field_free(&o->f[k]);
  o->n = 0;
}

static int jvalue(jp *p, mt_json_field *f) {
  jws(p);
  if (p->i >= p->len) return jfail(p, "expected a value");
  char ch = p->s[p->i];
  if (ch == '"') {
    f->type = MT_JSON_STRING;
    return jstring(p, &f->s);
  }
  if (ch == '-' || (ch >= '0' && ch <= '9')) {
    f->type = MT_JSON_NUMBER;
    return jnumber(p, &f->num);
  }
  if (jword(p, "true") || jword(p, "false")) {
    f->type = MT_JSON_BOOL;
    f->num = ch == 't';
    return 0;
  }
  if (jword(p, "null")) {
    f->type = MT_JSON_NULL;
    return 0;
  }
  if (ch == '[') {
    f->type = MT_JSON_STRINGS;
    p->i++;
    jws(p);
    if (p->i < p->len && p->s[p->i] == ']') {
      p->i++;
      return 0;
    }
    for (;;) {
      jws(p);
      char *s = NULL;
      if (p->i < p->len && p->s[p->i] != '"')
        return jfail(p, "only arrays of strings are understood");
      if (jstring(p, &s)) return -1;
      char **v = realloc(f->v, (size_t)(f->n + 1) * sizeof *v);
      if (!v) {
        free(s);
        return jfail(p, "out of memory");
      }
      f->v = v;
      f->v[f->n++] = s;
      jws(p);
      if (p->i < p->len && p->s[p->i] == ',') {
        p->i++;
        continue;
      }
      if (p->i < p->len && p->s[p->i] == ']') {
        p->i++;
        return 0;
      }
      return jfail(p, "expected ',' or ']' in an array");
    }
  }
  if (ch == '{') return jfail(p, "nested objects are not understood");
  return jfail(p, "unexpected character '%c'", ch);
}

int mt_json_parse_flat(const char *text, size_t len, mt_json_object *o, char *why, size_t why_len) {
  jp p = {text, len, 0, why, why_len};
  memset(o, 0, sizeof *o);
  if (why && why_len) why[0] = 0;
  jws(&p);
  if (p.i >= p.len || p.s[p.i] != '{') {
    jfail(&p, "expected '{'");
    goto bad;
  }
  p.i++;
  jws(&p);
  if (p.i < p.len && p.s[p.i] == '}') {
    p.i++;
    goto end;
  }
  for (;;) {
    jws(&p);
    if (o->n == MT_JSON_MAX_FIELDS) {
      jfail(&p, "more than %d keys", MT_JSON_MAX_FIELDS);
      goto bad;
    }
    mt_json_field *f = &o->f[o->n];
    memset(f, 0, sizeof *f);
    if (jstring(&p, &f->name)) goto bad_field;
    for (int k = 0; k < o->n; k++)
      if (!strcmp(o->f[k].name, f->name)) {
        jfail(&p, "key \"%.60s\" repeated", f->name);
        goto bad_field;
      }
    jws(&p);
    if (p.i >= p.len || p.s[p.i] != ':') {
      jfail(&p, "expected ':' after key \"%.60s\"", f->name);
      goto bad_field;
    }
    p.i++;
    if (jvalue(&p, f)) goto bad_field;
    o->n++;
    jws(&p);
    if (p.i < p.len && p.s[p.i] == ',') {
      p.i++;
      continue;
    }
    if (p.i < p.len && p.s[p.i] == '}') {
      p.i++;
      break;
    }
    jfail(&p, "expected ',' or '}' after the value of \"%.60s\"", f->name);
    goto bad;
  }
end:
  jws(&p);
  if (p.i != p.len) {
    jfail(&p, "text after the object");
    goto bad;
  }
  return 0;
bad_field:
  field_free(&o->f[o->n]);
bad:
  mt_json_object_free(o);
  return -1;
}

const mt_json_field *mt_json_get(const mt_json_object *o, const char *name) {
  for (int k = 0; k < o->n; k++)
    if (!strcmp(o->f[k].name, name)) return &o->f[k];
  return NULL;
}

const char *mt_json_get_str(const mt_json_object *o, const char *name) {
  const mt_json_field *f = mt_json_get(o, name);
  return f && f->type == MT_JSON_STRING ? f->s : NULL;
}

void mt_json_string(FILE *f, const char *s) {
  if (!s) {
    fputs("null", f);
    return;
  }
  fputc('"', f);
  for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
    switch (*p) {
      case '"': fputs("\\\"", f); break;
      case '\\': fputs("\\\\", f); break;
      case '\n': fputs("\\n", f); break;
      case '\r': fputs("\\r", f); break;
      case '\t': fputs("\\t", f); break;
      default:
        if (*p < 0x20 || *p == 0x7f)
          fprintf(f, "\\u%04x", *p);
        else
          fputc(*p, f);
    }
  }
  fputc('"', f);
}


int mt_json_quote(char *buf, size_t len, const char *s) {
  char *q = NULL;
  size_t n = 0;
  FILE *f = open_memstream(&q, &n);
  if (!f) return -1;
  mt_json_string(f, s);
  if (fclose(f) != 0 || n + 1 > len) {
    free(q);
    return -1;
  }
  memcpy(buf, q, n + 1);
  free(q);
  return (int)n;
}


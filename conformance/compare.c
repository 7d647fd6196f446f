/* compare.c - tolerances and output comparison; see compare.h. */
#include "compare.h"

#include <errno.h>
#include <float.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- tolerances ------------------------------------------------------------ */

static const struct {
  const char *prefix;
  int takes_arg;
} tol_table[MT_TOL__COUNT] = {
#define MT_X(name, str, arg) [MT_TOL_##name] = {str, arg},
    MT_TOLERANCES(MT_X)
#undef MT_X
};

mt_status mt_tolerance_parse(const char *s, mt_tolerance *out, mt_error *err) {
  if (!s) return mt_err(err, MT_INVALID_FORMAT, "no tolerance given");
  memset(out, 0, sizeof *out);
  snprintf(out->text, sizeof out->text, "%s", s);
  const char *colon = strchr(s, ':');
  size_t plen = colon ? (size_t)(colon - s) : strlen(s);
  for (int k = 0; k < MT_TOL__COUNT; k++) {
    if (strlen(tol_table[k].prefix) != plen || strncmp(s, tol_table[k].prefix, plen) != 0)
      continue;
    out->kind = (mt_tol_kind)k;
    if (!tol_table[k].takes_arg) {
      if (colon)
        return mt_err(err, MT_INVALID_FORMAT, "tolerance '%s': '%s' takes no argument", s,
                      tol_table[k].prefix);
      return MT_OK;
    }
    if (!colon || !colon[1])
      return mt_err(err, MT_INVALID_FORMAT,
                    "tolerance '%s': '%s' needs a number, e.g. '%s:4'", s,
                    tol_table[k].prefix, tol_table[k].prefix);
    char *end = NULL;
    errno = 0;
    double x = strtod(colon + 1, &end);
    if (errno || *end || !isfinite(x) || x < 0)
      return mt_err(err, MT_INVALID_FORMAT,
                    "tolerance '%s': '%s' is not a finite number >= 0", s, colon + 1);
    out->x = x;
    return MT_OK;
  }
  return mt_err(err, MT_INVALID_FORMAT,
                "unknown tolerance '%s' (expected exact, ulp:N, abs:X or rel:X)", s);
}

static double half_ulp(double x) {
  uint16_t h = (uint16_t)(mt_float_to_half((float)fabs(x)) & 0x7fffu);
  if (h >= 0x7bffu) /* the largest finite half (65504) and beyond: spacing below it */
    return (double)mt_half_to_float(0x7bffu) - (double)mt_half_to_float(0x7bfeu);
  return (double)mt_half_to_float((uint16_t)(h + 1)) - (double)mt_half_to_float(h);
}

/* bfloat16: float32's exponent range with 8 significant bits. */
static double bf16_ulp(double x) {
  uint16_t b = (uint16_t)(mt_float_to_bfloat16((float)fabs(x)) & 0x7fffu);
  if (b >= 0x7f7fu) /* the largest finite bfloat16 (~3.39e38) and beyond: spacing below it */
    return (double)mt_bfloat16_to_float(0x7f7fu) - (double)mt_bfloat16_to_float(0x7f7eu);
  return (double)mt_bfloat16_to_float((uint16_t)(b + 1)) - (double)mt_bfloat16_to_float(b);
}

double mt_ulp(double x, mt_dtype dtype) {
  if (isnan(x)) return NAN;
  x = fabs(x);
  switch (dtype) {
    case MT_float64: {
      if (isinf(x)) return INFINITY;
      double up = nextafter(x, INFINITY);
      return isinf(up) ? x - nextafter(x, 0.0) : up - x;
    }
    case MT_float32: {
      float xf = (float)x;
      if (isinf(xf)) return INFINITY;
      float up = nextafterf(xf, INFINITY);
      return isinf(up) ? (double)xf - (double)nextafterf(xf, 0.0f) : (double)up - (double)xf;
    }
    case MT_float16:
      if (isinf(x)) return INFINITY;
      return half_ulp(x);
    case MT_bfloat16:
      if (isinf(x)) return INFINITY;
      return bf16_ulp(x);
    default:
      return 1.0;
  }
}

int mt_elem_match(double e, double g, const mt_tolerance *tol, mt_dtype dtype) {
  if (!mt_dtype_is_float(dtype)) return e == g; /* integers and bools: exactly, any tolerance */
  if (isnan(e) || isnan(g)) return isnan(e) && isnan(g);
  if (isinf(e) || isinf(g)) return e == g;
  if (e == 0 && g == 0) /* a golden ±0 under exact/ulp:N: the sign is part of the value */
    return (tol->kind != MT_TOL_EXACT && tol->kind != MT_TOL_ULP) || !signbit(e) == !signbit(g);
  if (e == g) return 1;
  double d = fabs(g - e);
  switch (tol->kind) {
    case MT_TOL_EXACT: return 0;
    case MT_TOL_ULP: return d <= tol->x * mt_ulp(e, dtype);
    case MT_TOL_ABS: return d <= tol->x;
    case MT_TOL_REL: return d <= tol->x * fabs(e);
    default: return 0;
  }
}

/* ---- messages ---------------------------------------------------------------- */

static void whyf(char *why, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void whyf(char *why, size_t len, const char *fmt, ...) {
  if (!why || !len) return;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(why, len, fmt, ap);
  va_end(ap);
}

/* A float value, with the digits that tell its dtype's neighbours apart. */
static void fmt_value(double v, mt_dtype dt, char *buf, size_t len) {
  snprintf(buf, len, dt == MT_float64 ? "%.17g" : "%.9g", v);
}

/* An integer or bool value, exactly. */
static void fmt_int(int64_t v, mt_dtype dt, char *buf, size_t len) {
  if (dt == MT_bool)
    snprintf(buf, len, "%s", v != 0 ? "true" : "false");
  else
    snprintf(buf, len, "%" PRId64, v);
}

/* "[i0, i1, ...]" from a list of coordinates. */
static void fmt_coords(const int64_t *c, int n, char *buf, size_t len) {
  size_t pos = 0;
  pos += (size_t)snprintf(buf, len, "[");
  for (int d = 0; d < n && pos < len; d++)
    pos += (size_t)snprintf(buf + pos, len - pos, "%s%" PRId64, d ? ", " : "", c[d]);
  if (pos < len) snprintf(buf + pos, len - pos, "]");
}

/* Row-major unravel of a linear index. */
static void unravel(int64_t i, int ndim, const int64_t *shape, int64_t *coords) {
  for (int d = ndim - 1; d >= 0; d--) {
    int64_t s = shape[d] > 0 ? shape[d] : 1;
    coords[d] = i % s;
    i /= s;
  }
}

/* How the position of flat element i of a values buffer is named. */
typedef enum { POS_DENSE, POS_COO, POS_COMPRESSED } pos_mode;
typedef struct pos_ctx {
  pos_mode mode;
  const mt_tensor *t; /* the (coalesced) tensor whose values are compared */
} pos_ctx;

static void fmt_pos(const pos_ctx *p, int64_t i, char *buf, size_t len) {
  int64_t c[MT_MAX_DIMS] = {0};
  const mt_tensor *t = p->t;
  switch (p->mode) {
    case POS_DENSE:
      unravel(i, t->ndim, t->shape, c);
      break;
    case POS_COO: {
      int64_t row = mt_coo_row_numel(t);
      int64_t k = row > 0 ? i / row : 0, j = row > 0 ? i % row : 0;
      for (int d = 0; d < t->sparse_dim; d++) c[d] = t->indices[(int64_t)d * t->nnz + k];
      unravel(j, t->ndim - t->sparse_dim, t->shape + t->sparse_dim, c + t->sparse_dim);
      break;
    }
    case POS_COMPRESSED: { /* flat value i: entry, then cell of the block, then dense */
      mt_cgeom g;
      if (!mt_cgeom_of(t, &g) || g.entry <= 0) break;
      int64_t e = i / g.entry, within = i % g.entry, b = g.nnz ? e / g.nnz : 0,
              k = g.nnz ? e % g.nnz : 0, cell = within / g.dense, slot = 0;
      const int64_t *crow = t->crow_indices + b * (g.ncomp + 1);
      while (slot < g.ncomp && crow[slot + 1] <= k) slot++;
      int64_t plain = t->col_indices[b * g.nnz + k];
      int64_t br = g.by_col ? plain : slot, bc = g.by_col ? slot : plain;
      unravel(b, g.nb, t->shape, c);
      c[g.nb] = br * g.bh + cell / g.bw;
      c[g.nb + 1] = bc * g.bw + cell % g.bw;
      unravel(within % g.dense, t->ndim - g.nb - 2, t->shape + g.nb + 2, c + g.nb + 2);
      break;
    }
  }
  fmt_coords(c, t->ndim, buf, len);
}

/* ---- element loops -------------------------------------------------------- */

/* Values of two contiguous buffers of n elements; where `mask` (contiguous
 * bool, may be NULL = everywhere) is true. */
static void compare_values(const char *what, const void *ebuf, const void *gbuf, mt_dtype dt,
                           int64_t n, const uint8_t *mask, const mt_compare_opts *o,
                           const pos_ctx *pos, int *equal, char *why, size_t why_len) {
  /* integers and bools exactly, as int64: through a double an int64 beyond
   * 2^53 would match its neighbours (INT64_MIN + 1 would pass for amax's
   * fill INT64_MIN) */
  const int exact_int = !mt_dtype_is_float(dt);
  int64_t n_cmp = 0, n_diff = 0, first = -1, ie = 0, ig = 0;
  double fe = 0, fg = 0;
  for (int64_t i = 0; i < n; i++) {
    if (mask && !mask[i]) continue;
    n_cmp++;
    if (exact_int) {
      int64_t a = mt_get_i64(ebuf, dt, i), b = mt_get_i64(gbuf, dt, i);
      if (a == b) continue;
      if (n_diff++ == 0) first = i, ie = a, ig = b;
      continue;
    }
    double e = mt_get_f64(ebuf, dt, i), g = mt_get_f64(gbuf, dt, i);
    if (mt_elem_match(e, g, &o->tol, dt)) continue;
    if (n_diff++ == 0) first = i, fe = e, fg = g;
  }
  if (!n_diff) {
    *equal = 1;
    return;
  }
  *equal = 0;
  char at[160], es[48], gs[48], diff[64] = "";
  fmt_pos(pos, first, at, sizeof at);
  if (exact_int) {
    fmt_int(ie, dt, es, sizeof es);
    fmt_int(ig, dt, gs, sizeof gs);
  } else {
    fmt_value(fe, dt, es, sizeof es);
    fmt_value(fg, dt, gs, sizeof gs);
    if (isfinite(fe) && isfinite(fg)) snprintf(diff, sizeof diff, "diff %.3g, ", fabs(fg - fe));
  }
  whyf(why, why_len,
       "%s%s: expected %s, got %s (%stolerance %s); %" PRId64 " of %" PRId64
       " compared elements differ%s",
       what, at, es, gs, diff, o->tol.text, n_diff, n_cmp,
       mask && !o->check_masked_out ? " (masked-out positions not compared)" : "");
}

static void compare_exact_i64(const char *what, const int64_t *e, const int64_t *g, int64_t n,
                              int *equal, char *why, size_t why_len) {
  for (int64_t i = 0; i < n; i++) {
    if (e[i] == g[i]) continue;
    *equal = 0;
    whyf(why, why_len, "%s[%" PRId64 "]: expected %" PRId64 ", got %" PRId64, what, i, e[i], g[i]);
    return;
  }
  *equal = 1;
}

/* ---- per layout --------------------------------------------------------- */

static int same_shape(const mt_tensor *e, const mt_tensor *g, char *why, size_t why_len) {
  if (e->ndim == g->ndim && memcmp(e->shape, g->shape, (size_t)e->ndim * sizeof e->shape[0]) == 0)
    return 1;
  char es[128], gs[128];
  mt_shape_str(e->ndim, e->shape, es, sizeof es);
  mt_shape_str(g->ndim, g->shape, gs, sizeof gs);
  whyf(why, why_len, "shape %s, expected %s", gs, es);
  return 0;
}

/* Dense copies of e and g (any layout but MASKED, or MASKED data), then
 * the values; `mask` restricts the comparison. */
static mt_status compare_densified(const char *what, const mt_tensor *e, const mt_tensor *g,
                                   const uint8_t *mask, const mt_compare_opts *o, int *equal,
                                   char *why, size_t why_len, mt_error *err) {
  mt_status st = MT_OK;
  mt_tensor *ed = NULL, *gd = NULL;
  if ((st = mt_to_dense(e, &ed, err)) != MT_OK) goto out;
  if ((st = mt_to_dense(g, &gd, err)) != MT_OK) {
    mt_err_prefix(err, "densifying the result");
    goto out;
  }
  pos_ctx pos = {POS_DENSE, ed};
  compare_values(what, ed->values, gd->values, ed->dtype, mt_numel(ed), mask, o, &pos, equal, why,
                 why_len);
out:
  mt_tensor_free(ed);
  mt_tensor_free(gd);
  return st;
}

/* SP-6 (check_structure): the COO result as torch stores it: the
 * coalesced flag, nnz, every index in stored order, then the values entry
 * by entry (duplicates not summed). */
static void compare_coo_stored(const mt_tensor *e, const mt_tensor *g, const mt_compare_opts *o,
                               int *equal, char *why, size_t why_len) {
  *equal = 0;
  if ((e->coalesced != 0) != (g->coalesced != 0)) {
    whyf(why, why_len, "is_coalesced() %s, expected %s (the case checks the structure)",
         g->coalesced ? "True" : "False", e->coalesced ? "True" : "False");
    return;
  }
  if (e->nnz != g->nnz) {
    whyf(why, why_len, "stores %" PRId64 " entries, expected %" PRId64
         " (the case checks the structure: an uncoalesced result keeps its duplicates)",
         g->nnz, e->nnz);
    return;
  }
  compare_exact_i64("indices (stored order)", e->indices, g->indices,
                    (int64_t)e->sparse_dim * e->nnz, equal, why, why_len);
  if (!*equal) return;
  pos_ctx pos = {POS_COO, e};
  compare_values("values", e->values, g->values, e->dtype, e->nnz * mt_coo_row_numel(e), NULL, o,
                 &pos, equal, why, why_len);
}

static mt_status compare_coo(const mt_tensor *e, const mt_tensor *g, const mt_compare_opts *o,
                             int *equal, char *why, size_t why_len, mt_error *err) {
  mt_status st = MT_OK;
  mt_tensor *ec = NULL, *gc = NULL;
  *equal = 0;
  if (e->sparse_dim != g->sparse_dim) {
    whyf(why, why_len, "sparse_dim %d, expected %d", g->sparse_dim, e->sparse_dim);
    return MT_OK;
  }
  if (o->check_structure) {
    compare_coo_stored(e, g, o, equal, why, why_len);
    return MT_OK;
  }
  if ((st = mt_coo_coalesce(e, &ec, err)) != MT_OK) goto out;
  if ((st = mt_coo_coalesce(g, &gc, err)) != MT_OK) {
    mt_err_prefix(err, "coalescing the result");
    goto out;
  }
  if (ec->nnz != gc->nnz) {
    whyf(why, why_len, "nnz after coalescing %" PRId64 ", expected %" PRId64, gc->nnz, ec->nnz);
    goto out;
  }
  for (int64_t k = 0; k < ec->nnz; k++) {
    for (int d = 0; d < ec->sparse_dim; d++) {
      int64_t ei = ec->indices[(int64_t)d * ec->nnz + k], gi = gc->indices[(int64_t)d * gc->nnz + k];
      if (ei == gi) continue;
      int64_t ev[MT_MAX_DIMS], gv[MT_MAX_DIMS];
      for (int q = 0; q < ec->sparse_dim; q++) {
        ev[q] = ec->indices[(int64_t)q * ec->nnz + k];
        gv[q] = gc->indices[(int64_t)q * gc->nnz + k];
      }
      char es[128], gs[128];
      fmt_coords(ev, ec->sparse_dim, es, sizeof es);
      fmt_coords(gv, gc->sparse_dim, gs, sizeof gs);
      whyf(why, why_len,
           "indices of coalesced entry %" PRId64 ": expected %s, got %s (specified elements differ)",
           k, es, gs);
      goto out;
    }
  }
  pos_ctx pos = {POS_COO, ec};
  compare_values("values", ec->values, gc->values, ec->dtype, ec->nnz * mt_coo_row_numel(ec), NULL,
                 o, &pos, equal, why, why_len);
out:
  mt_tensor_free(ec);
  mt_tensor_free(gc);
  return st;
}

/* CSR, CSC, BSR, BSC: the structure exactly (torch's compressed tensors
 * have one storage per pattern: indices sorted, unique), then the values. */
static void compare_compressed(const mt_tensor *e, const mt_tensor *g, const mt_compare_opts *o,
                               int *equal, char *why, size_t why_len) {
  mt_cgeom eg, gg;
  *equal = 0;
  if (!mt_cgeom_of(e, &eg) || !mt_cgeom_of(g, &gg)) {
    whyf(why, why_len, "inconsistent %s geometry", mt_kind_name(e->kind));
    return;
  }
  if (e->dense_dim != g->dense_dim) {
    whyf(why, why_len, "dense_dim %d, expected %d", g->dense_dim, e->dense_dim);
    return;
  }
  if (eg.bh != gg.bh || eg.bw != gg.bw) {
    whyf(why, why_len, "blocksize (%" PRId64 ", %" PRId64 "), expected (%" PRId64 ", %" PRId64 ")",
         gg.bh, gg.bw, eg.bh, eg.bw);
    return;
  }
  if (e->nnz != g->nnz) {
    whyf(why, why_len, "nnz %" PRId64 ", expected %" PRId64, g->nnz, e->nnz);
    return;
  }
  compare_exact_i64(mt_compressed_name(e->kind), e->crow_indices, g->crow_indices,
                    eg.batches * (eg.ncomp + 1), equal, why, why_len);
  if (!*equal) return;
  compare_exact_i64(mt_plain_name(e->kind), e->col_indices, g->col_indices, eg.batches * e->nnz,
                    equal, why, why_len);
  if (!*equal) return;
  pos_ctx pos = {POS_COMPRESSED, e};
  compare_values("values", e->values, g->values, e->dtype, eg.batches * e->nnz * eg.entry, NULL, o,
                 &pos, equal, why, why_len);
}

static mt_status compare_masked(const mt_tensor *e, const mt_tensor *g, const mt_compare_opts *o,
                                int *equal, char *why, size_t why_len, mt_error *err) {
  mt_status st = MT_OK;
  mt_tensor *em = NULL, *gm = NULL;
  *equal = 0;
  if (e->data->kind != g->data->kind) {
    whyf(why, why_len, "masked storage is %s, expected %s", mt_kind_name(g->data->kind),
         mt_kind_name(e->data->kind));
    return MT_OK;
  }
  if ((st = mt_to_dense(e->mask, &em, err)) != MT_OK) goto out;
  if ((st = mt_to_dense(g->mask, &gm, err)) != MT_OK) {
    mt_err_prefix(err, "densifying the result's mask");
    goto out;
  }
  const uint8_t *ebits = em->values, *gbits = gm->values;
  int64_t n = mt_numel(em), n_diff = 0, first = -1;
  for (int64_t i = 0; i < n; i++)
    if ((ebits[i] != 0) != (gbits[i] != 0) && n_diff++ == 0) first = i;
  if (n_diff) {
    char at[160];
    pos_ctx pos = {POS_DENSE, em};
    fmt_pos(&pos, first, at, sizeof at);
    whyf(why, why_len, "mask%s: expected %s, got %s; %" PRId64 " of %" PRId64 " mask elements differ",
         at, ebits[first] ? "true" : "false", gbits[first] ? "true" : "false", n_diff, n);
    goto out;
  }
  st = compare_densified("data", e->data, g->data, o->check_masked_out ? NULL : ebits, o, equal,
                         why, why_len, err);
out:
  mt_tensor_free(em);
  mt_tensor_free(gm);
  return st;
}

mt_status mt_compare_tensor(const mt_tensor *e, const mt_tensor *g, const mt_compare_opts *o,
                            int *equal, char *why, size_t why_len, mt_error *err) {
  *equal = 0;
  if (why && why_len) why[0] = 0;
  if (!g) {
    whyf(why, why_len, "is NULL");
    return MT_OK;
  }
  mt_error verr = {0};
  if (mt_tensor_validate(g, "result", &verr) != MT_OK) {
    whyf(why, why_len, "is not a valid tensor: %s", verr.msg);
    return MT_OK;
  }
  if (e->kind != g->kind) {
    whyf(why, why_len, "kind %s, expected %s", mt_kind_name(g->kind), mt_kind_name(e->kind));
    return MT_OK;
  }
  mt_dtype edt = e->kind == MT_KIND_MASKED ? e->data->dtype : e->dtype;
  mt_dtype gdt = g->kind == MT_KIND_MASKED ? g->data->dtype : g->dtype;
  if (edt != gdt) {
    whyf(why, why_len, "dtype %s, expected %s", mt_dtype_name(gdt), mt_dtype_name(edt));
    return MT_OK;
  }
  const mt_tensor *es = e->kind == MT_KIND_MASKED ? e->data : e;
  const mt_tensor *gs = g->kind == MT_KIND_MASKED ? g->data : g;
  if (!same_shape(es, gs, why, why_len)) return MT_OK;
  switch (e->kind) {
    case MT_KIND_MASKED: return compare_masked(e, g, o, equal, why, why_len, err);
    case MT_KIND_COO: return compare_coo(e, g, o, equal, why, why_len, err);
    case MT_KIND_CSR:
    case MT_KIND_CSC:
    case MT_KIND_BSR:
    case MT_KIND_BSC: compare_compressed(e, g, o, equal, why, why_len); return MT_OK;
    default: return compare_densified("values", e, g, NULL, o, equal, why, why_len, err);
  }
}

mt_status mt_compare_outputs(int n_e, mt_tensor *const *e, int n_g, mt_tensor *const *g,
                             const mt_compare_opts *o, int *equal, char *why, size_t why_len,
                             mt_error *err) {
  *equal = 0;
  if (why && why_len) why[0] = 0;
  if (n_e != n_g) {
    whyf(why, why_len, "%d outputs, expected %d", n_g, n_e);
    return MT_OK;
  }
  const char *noun = o && o->noun ? o->noun : "output";
  for (int k = 0; k < n_e; k++) {
    char sub[768] = "";
    if (!e[k] || !g[k]) { /* a gradient case: no gradient for input k */
      if (e[k])
        whyf(why, why_len, "%s %d: expected a gradient (%s), got none", noun, k,
             mt_kind_name(e[k]->kind));
      else if (g[k])
        whyf(why, why_len, "%s %d: torch gives this input no gradient, got a %s tensor", noun,
             k, mt_kind_name(g[k]->kind));
      if (e[k] || g[k]) {
        *equal = 0; /* an earlier gradient may have compared equal */
        return MT_OK;
      }
      continue;
    }
    mt_status st = mt_compare_tensor(e[k], g[k], o, equal, sub, sizeof sub, err);
    if (st != MT_OK) return mt_err_prefix(err, "%s %d", noun, k);
    if (!*equal) {
      whyf(why, why_len, "%s %d: %s", noun, k, sub);
      return MT_OK;
    }
  }
  *equal = 1;
  return MT_OK;
}

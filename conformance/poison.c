/* poison.c - masked-out data replaced by adversarial values; see poison.h. */
#include "poison.h"

#include <math.h>
#include <string.h>

static const struct {
  const char *label;
  double f;
  int end;
} poisons[MT_POISON__COUNT] = {
#define MT_X(name, label, f, i) [MT_POISON_##name] = {label, f, i},
    MT_POISONS(MT_X)
#undef MT_X
};

const char *mt_poison_label(mt_poison p) {
  return p >= 0 && p < MT_POISON__COUNT ? poisons[p].label : "?";
}

uint64_t mt_poison_seed(const char *id) {
  uint64_t h = 1469598103934665603ull;
  for (; id && *id; id++) h = (h ^ (uint8_t)*id) * 1099511628211ull;
  return h;
}

static uint64_t splitmix64(uint64_t *s) {
  uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

/* One element of the RANDOM pattern: a special value or an ordinary one of
 * random sign and magnitude (1e-3 .. 1e3). */
static double random_float(uint64_t *s) {
  uint64_t r = splitmix64(s);
  switch (r % 8) {
    case 0: return NAN;
    case 1: return INFINITY;
    case 2: return -INFINITY;
    case 3: return (r & 256) ? 1e30 : -1e30;
    case 4: return -0.0;
    default: {
      double u = (double)(r >> 11) * 0x1.0p-53; /* [0, 1) */
      return ((r & 512) ? -1.0 : 1.0) * pow(10.0, 6.0 * u - 3.0);
    }
  }
}

/* Writes poison p into element i of buf (dtype dt). Integers get the end of
 * their range the poison stands for (bool: 1 for max, 0 otherwise). */
static void put(void *buf, mt_dtype dt, int64_t i, mt_poison p, uint64_t *s) {
  if (mt_dtype_is_float(dt)) {
    double v = p == MT_POISON_RANDOM ? random_float(s) : poisons[p].f;
    if (dt == MT_float16 && isfinite(v) && fabs(v) > 65504.0) v = v > 0 ? 65504.0 : -65504.0;
    /* bfloat16 has float32's range: +-1e30 rounds to nearest even through
     * float (0x714a, 1.0002556e30), as torch's fill does (mtgen/poison.py) */
    mt_set_f64(buf, dt, i, v);
    return;
  }
  size_t size = mt_dtype_size(dt);
  int end = poisons[p].end;
  uint64_t bits;
  if (dt == MT_bool) {
    bits = p == MT_POISON_RANDOM ? splitmix64(s) & 1u : (uint64_t)(end > 0);
  } else if (p == MT_POISON_RANDOM) {
    bits = splitmix64(s);
  } else {
    int is_unsigned = dt == MT_uint8;
    uint64_t top = (uint64_t)1 << (8 * size - 1); /* the sign bit */
    uint64_t max = is_unsigned ? (top << 1) - 1 : top - 1;
    uint64_t min = is_unsigned ? 0 : top;
    bits = end > 0 ? max : end < 0 ? min : 0;
  }
  memcpy((char *)buf + (size_t)i * size, &bits, size); /* the low bytes (little-endian) */
}

static int coo_same_indices(const mt_tensor *a, const mt_tensor *b) {
  return a->nnz == b->nnz && a->sparse_dim == b->sparse_dim &&
         (a->nnz == 0 ||
          memcmp(a->indices, b->indices, (size_t)(a->sparse_dim * a->nnz) * sizeof(int64_t)) == 0);
}

/* CSR data and mask of one structure: the mask's values say which stored
 * data values are masked out. */
static int csr_same_structure(const mt_tensor *a, const mt_tensor *b) {
  return a->kind == MT_KIND_CSR && b->kind == MT_KIND_CSR && a->nnz == b->nnz &&
         a->shape[0] == b->shape[0] &&
         memcmp(a->crow_indices, b->crow_indices, (size_t)(a->shape[0] + 1) * sizeof(int64_t)) ==
             0 &&
         (a->nnz == 0 || memcmp(a->col_indices, b->col_indices, (size_t)a->nnz * sizeof(int64_t)) == 0);
}

int mt_poison_applies(const mt_tensor *t) {
  if (!t || t->kind != MT_KIND_MASKED || !t->data || !t->mask) return 0;
  const mt_tensor *d = t->data, *m = t->mask;
  if (csr_same_structure(d, m)) {
    for (int64_t i = 0; i < m->nnz; i++)
      if (mt_get_f64(m->values, m->dtype, i) == 0) return 1;
    return 0;
  }
  if (d->kind == MT_KIND_DENSE && m->kind == MT_KIND_DENSE) {
    int64_t n = mt_numel(m);
    for (int64_t i = 0; i < n; i++)
      if (mt_dense_get(m, i) == 0) return 1;
    return 0;
  }
  if (d->kind == MT_KIND_COO && m->kind == MT_KIND_COO && coo_same_indices(d, m)) {
    int64_t n = m->nnz * mt_coo_row_numel(m);
    for (int64_t i = 0; i < n; i++)
      if (mt_get_f64(m->values, m->dtype, i) == 0) return 1;
  }
  return 0;
}

mt_status mt_poison_copy(const mt_tensor *t, mt_poison p, uint64_t seed, mt_tensor **out,
                         mt_error *err) {
  mt_status st = mt_tensor_clone(t, out, err); /* contiguous: linear index = offset */
  if (st != MT_OK) return st;
  mt_tensor *d = (*out)->data, *m = (*out)->mask;
  uint64_t s = seed ^ (uint64_t)p * 0x9e3779b97f4a7c15ull;
  int64_t n = d->kind == MT_KIND_COO   ? d->nnz * mt_coo_row_numel(d)
              : d->kind == MT_KIND_CSR ? d->nnz
                                       : mt_numel(d);
  if (d->kind == MT_KIND_COO && !coo_same_indices(d, m)) return MT_OK; /* unreachable data */
  if (d->kind == MT_KIND_CSR && !csr_same_structure(d, m)) return MT_OK;
  for (int64_t i = 0; i < n; i++)
    if (mt_get_f64(m->values, m->dtype, i) == 0) put(d->values, d->dtype, i, p, &s);
  return MT_OK;
}

/* mask's element for t's row-major linear index i under broadcasting (mask's
 * trailing dims against t's, size-1 dims repeat); -1 when mask does not
 * broadcast to t's shape. */
static int mask_at(const mt_tensor *t, const mt_tensor *mask, int64_t i) {
  int64_t off = 0;
  for (int d = t->ndim - 1, md = mask->ndim - 1; d >= 0; d--, md--) {
    int64_t n = t->shape[d], idx = n > 0 ? i % n : 0;
    i = n > 0 ? i / n : 0;
    if (md < 0) continue;
    int64_t mn = mask->shape[md];
    if (mn != n && mn != 1) return -1;
    off += (mn == 1 ? 0 : idx) * mask->strides[md];
  }
  return mt_get_f64(mask->values, mask->dtype, off) != 0;
}

static int broadcasts(const mt_tensor *t, const mt_tensor *mask) {
  if (!t || !mask || t->kind != MT_KIND_DENSE || mask->kind != MT_KIND_DENSE ||
      mask->dtype != MT_bool || mask->ndim > t->ndim)
    return 0;
  for (int d = t->ndim - 1, md = mask->ndim - 1; md >= 0; d--, md--)
    if (mask->shape[md] != t->shape[d] && mask->shape[md] != 1) return 0;
  return 1;
}

int mt_poison_applies_where(const mt_tensor *t, const mt_tensor *mask) {
  if (!broadcasts(t, mask)) return 0;
  int64_t n = mt_numel(t);
  for (int64_t i = 0; i < n; i++)
    if (mask_at(t, mask, i) == 0) return 1;
  return 0;
}

mt_status mt_poison_copy_where(const mt_tensor *t, const mt_tensor *mask, mt_poison p,
                               uint64_t seed, mt_tensor **out, mt_error *err) {
  if (!broadcasts(t, mask))
    return mt_err(err, MT_INVALID_ARGUMENT,
                  "input_masks: the mask is not a dense bool tensor that broadcasts to the input");
  mt_status st = mt_tensor_clone(t, out, err); /* contiguous: linear index = offset */
  if (st != MT_OK) return st;
  uint64_t s = seed ^ (uint64_t)p * 0x9e3779b97f4a7c15ull;
  int64_t n = mt_numel(t);
  for (int64_t i = 0; i < n; i++)
    if (mask_at(t, mask, i) == 0) put((*out)->values, t->dtype, i, p, &s);
  return MT_OK;
}

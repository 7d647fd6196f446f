/* reduce_math.h - the per-element math of the reduce family (RED-1 ..
 * RED-7), shared by the CPU reference (impl/cpu/reduce.c, which plans each
 * call: dims, dtypes, refusals, layouts) and the CUDA kernels
 * (impl/cuda/reduce.cu): the accumulator of one output element, how an
 * element folds into it and how it finishes, and one whole output element
 * (mt_red_out), which visits its input elements in row-major order, so the
 * first index wins ties and every sum has the same order on any backend. */
#ifndef MT_REDUCE_MATH_H
#define MT_REDUCE_MATH_H

#include "common/mt_hd.h"

typedef enum {
  RK_SUM, RK_MEAN, RK_PROD, RK_MIN, RK_MAX, RK_ARGMIN, RK_ARGMAX, RK_ALL, RK_VAR, RK_STD, RK_NORM
} mt_red_kind;

/* One call, planned on the host. The input is contiguous (row-major),
 * data and mask alike. */
typedef struct mt_red_par {
  mt_red_kind kind;
  mt_dtype idt;  /* the input's dtype */
  mt_dtype dt;   /* the dtype reduced in (dtype= converts first) */
  mt_dtype odt;  /* the output's dtype */
  mt_dtype cdt;  /* var/std's compute dtype */
  int ndim;
  int64_t shape[MT_MAX_DIMS];
  int red[MT_MAX_DIMS]; /* 1: reduced */
  int64_t n_red;        /* input elements per output element */
  int stored_count;     /* SP-3: mean/var/std count the stored values, not the specified */
} mt_red_par;

/* One output element's state. */
typedef struct {
  double f;    /* float accumulator (var/std: the sum, then the mean) */
  int64_t i;   /* integer accumulator (wrapping), all's flag */
  int64_t n;   /* masked-in elements */
  int64_t idx; /* argmin/argmax: the best index so far, -1 = none */
  double m2;   /* var/std: the sum of squared deviations */
} mt_red_acc;

MT_HD int64_t mt__red_int_max(mt_dtype d) {
  return d == MT_int8 ? INT8_MAX : d == MT_int32 ? INT32_MAX : INT64_MAX;
}
MT_HD int64_t mt__red_int_min(mt_dtype d) {
  return d == MT_int8 ? INT8_MIN : d == MT_int32 ? INT32_MIN : INT64_MIN;
}

/* The identity every masked-out element takes (RED-3). */
MT_HD void mt_red_init(mt_red_kind k, mt_dtype dt, mt_red_acc *a) {
  int fl = mt_hd_is_float(dt);
  a->f = 0;
  a->i = 0;
  a->n = 0;
  a->m2 = 0;
  a->idx = -1;
  switch (k) {
  case RK_PROD: a->f = 1.0; a->i = 1; break;
  case RK_MIN: case RK_ARGMIN: a->f = INFINITY; a->i = fl ? 0 : mt__red_int_max(dt); break;
  case RK_MAX: case RK_ARGMAX: a->f = -INFINITY; a->i = fl ? 0 : mt__red_int_min(dt); break;
  case RK_ALL: a->i = 1; break;
  default: break;
  }
}

/* argmin/argmax: does (fv, iv) beat the best so far? NaN is the extreme;
 * ties keep the first (torch.argmin/argmax). */
MT_HD int mt__red_arg_better(mt_red_kind k, int fl, const mt_red_acc *a, double fv, int64_t iv) {
  if (a->idx < 0) return 1;
  if (fl) {
    if (isnan(a->f)) return 0;
    if (isnan(fv)) return 1;
    return k == RK_ARGMAX ? fv > a->f : fv < a->f;
  }
  return k == RK_ARGMAX ? iv > a->i : iv < a->i;
}

/* Folds element (fv, iv) at reduction index pos into a (masked-in, except
 * for argmin/argmax, which see the fill at masked-out positions). */
MT_HD void mt_red_add(mt_red_kind k, mt_dtype dt, mt_red_acc *a, double fv, int64_t iv,
                      int64_t pos) {
  int fl = mt_hd_is_float(dt);
  switch (k) {
  case RK_SUM: case RK_MEAN:
    a->f += fv;
    a->i = (int64_t)((uint64_t)a->i + (uint64_t)iv);
    break;
  case RK_PROD: /* torch multiplies float16 in float16, rounding each step */
    a->f = dt == MT_float16 ? mt_hd_round(dt, a->f * fv) : a->f * fv;
    a->i = (int64_t)((uint64_t)a->i * (uint64_t)iv);
    break;
  case RK_MIN:
    if (fl) a->f = (isnan(a->f) || isnan(fv)) ? NAN : (fv < a->f ? fv : a->f);
    else if (iv < a->i) a->i = iv;
    break;
  case RK_MAX:
    if (fl) a->f = (isnan(a->f) || isnan(fv)) ? NAN : (fv > a->f ? fv : a->f);
    else if (iv > a->i) a->i = iv;
    break;
  case RK_ARGMIN: case RK_ARGMAX:
    if (mt__red_arg_better(k, fl, a, fv, iv)) {
      a->f = fv;
      a->i = iv;
      a->idx = pos;
    }
    break;
  case RK_ALL: a->i = a->i && (fl ? fv != 0.0 : iv != 0); break;
  case RK_VAR: case RK_STD: a->f += fv; break;
  case RK_NORM: break;
  }
}

/* Stores output element o from its accumulator. */
MT_HD void mt_red_finish(mt_red_kind k, mt_dtype dt, mt_dtype odt, const mt_red_acc *a, void *buf,
                         int64_t o) {
  int fl = mt_hd_is_float(dt);
  switch (k) {
  case RK_SUM: case RK_PROD: case RK_MIN: case RK_MAX:
    if (fl) mt_hd_set_f64(buf, odt, o, a->f);
    else mt_hd_sti(buf, odt, o, a->i);
    break;
  case RK_MEAN: /* total rounded to the dtype, / count in the dtype: 0/0 = NaN */
    mt_hd_set_f64(buf, odt, o, mt_hd_round(dt, a->f) / (double)a->n);
    break;
  case RK_ARGMIN: case RK_ARGMAX: mt_hd_sti(buf, odt, o, a->idx < 0 ? 0 : a->idx); break;
  case RK_ALL: mt_hd_sti(buf, odt, o, a->i); break;
  case RK_VAR: case RK_STD: {
    double total = mt_hd_round(odt, a->m2);
    double cnt = a->n - 1 > 0 ? (double)(a->n - 1) : 0.0; /* max(count - correction, 0) */
    double v = mt_hd_round(odt, total / cnt);
    mt_hd_set_f64(buf, odt, o, k == RK_STD ? sqrt(v) : v);
    break;
  }
  case RK_NORM: break;
  }
}

/* The value of element i as (double, exact int64). */
MT_HD void mt_red_load(const void *vals, mt_dtype dt, int64_t i, double *fv, int64_t *iv) {
  if (mt_hd_is_float(dt)) {
    *fv = mt_hd_get_f64(vals, dt, i);
    *iv = 0;
  } else {
    *iv = mt_hd_ldi(vals, dt, i);
    *fv = (double)*iv;
  }
}

/* (fv, iv) of dtype `from` converted to `to`, as torch's `.to(dtype)`:
 * floats round, floats to integers truncate toward zero and wrap to the
 * width (every double in [-2^63, 2^63) converts exactly, as torch does; NaN,
 * inf and values beyond int64 give 0 here: undefined in torch, x86 gives
 * INT64_MIN),
 * integers wrap, anything to bool is `!= 0`. */
MT_HD void mt_red_convert(mt_dtype from, mt_dtype to, double *fv, int64_t *iv) {
  if (from == to) return;
  if (mt_hd_is_float(to)) {
    *fv = mt_hd_round(to, mt_hd_is_float(from) ? *fv : (double)*iv);
    *iv = 0;
    return;
  }
  int64_t v;
  if (to == MT_bool)
    v = mt_hd_is_float(from) ? *fv != 0.0 : *iv != 0;
  else if (mt_hd_is_float(from))
    v = (*fv >= -9223372036854775808.0 && *fv < 9223372036854775808.0) ? (int64_t)*fv : 0;
  else
    v = *iv;
  mt_hd_slot tmp;
  mt_hd_sti(&tmp, to, 0, v);
  *iv = mt_hd_ldi(&tmp, to, 0);
  *fv = (double)*iv;
}

/* Input index of reduction position r of the output whose first input
 * element is base: r counts the reduced dims' coordinates row-major. */
MT_HD int64_t mt__red_index(const mt_red_par *p, const int64_t *st, int64_t base, int64_t r) {
  int64_t i = base;
  for (int d = p->ndim - 1; d >= 0; d--) {
    if (!p->red[d]) continue;
    i += (r % p->shape[d]) * st[d];
    r /= p->shape[d];
  }
  return i;
}

/* Output element o (row-major over the kept dims): its value into out and
 * any(mask) over its elements into mask_out (RED-2). The reduction index
 * of argmin/argmax is r: the coordinate along the one reduced dim, or the
 * flat index when every dim is reduced. */
MT_HD void mt_red_out(const mt_red_par *p, const void *data, const uint8_t *mask, void *out,
                      uint8_t *mask_out, int64_t o) {
  mt_red_kind k = p->kind;
  int is_var = k == RK_VAR || k == RK_STD, is_arg = k == RK_ARGMIN || k == RK_ARGMAX;
  int64_t st[MT_MAX_DIMS], s = 1, base = 0, rem = o, spec = 0;
  for (int d = p->ndim - 1; d >= 0; d--) {
    st[d] = s;
    s *= p->shape[d];
  }
  for (int d = p->ndim - 1; d >= 0; d--) {
    if (p->red[d]) continue;
    base += (rem % p->shape[d]) * st[d];
    rem /= p->shape[d];
  }
  mt_red_acc a;
  mt_red_init(k, p->dt, &a);
  for (int64_t r = 0; r < p->n_red; r++) {
    int64_t i = mt__red_index(p, st, base, r), iv;
    int in = mask[i] != 0;
    double fv;
    spec += in;
    if (!in && !is_arg) continue; /* RED-3: masked out = identity */
    if (in) {
      mt_red_load(data, p->idt, i, &fv, &iv);
      mt_red_convert(p->idt, p->dt, &fv, &iv); /* RED-7: dtype= converts first */
      a.n++;
    } else { /* RED-4: argmin/argmax see the fill, never the data */
      fv = k == RK_ARGMIN ? INFINITY : -INFINITY;
      iv = k == RK_ARGMIN ? mt__red_int_max(p->dt) : mt__red_int_min(p->dt);
    }
    if (is_var) fv = mt_hd_round(p->cdt, fv); /* torch sums integers as float32 */
    mt_red_add(k, p->dt, &a, fv, iv, r);
  }
  if (p->stored_count && (k == RK_MEAN || is_var)) a.n = p->n_red; /* SP-3 */
  if (is_var) { /* RED-5: mean = sum / count, then the squared deviations */
    a.f = mt_hd_round(p->cdt, mt_hd_round(p->cdt, a.f) / (double)a.n);
    for (int64_t r = 0; r < p->n_red; r++) {
      int64_t i = mt__red_index(p, st, base, r), iv;
      if (!mask[i]) continue;
      double fv;
      mt_red_load(data, p->idt, i, &fv, &iv);
      double x = mt_hd_round(p->cdt, mt_hd_round(p->cdt, fv) - a.f);
      a.m2 += mt_hd_round(p->cdt, x * x);
    }
  }
  mt_red_finish(k, p->dt, p->odt, &a, out, o);
  mask_out[o] = spec > 0;
}

#endif /* MT_REDUCE_MATH_H */

/* grad_structure_math.h - the math of the structure ops' backward
 * (impl/cpu/grad_structure.c, grad_masked.c plan each call; CUDA:
 * impl/cuda/grad_structure.cu): one gradient element (mt_gsc_elem) from
 * the upstream gradient's elements the host plan lists for it, in the
 * order the CPU reference's scatter visited them (increasing upstream
 * index, piece by piece): their sum, rounded once to the gradient's dtype;
 * specified when the list is not empty (GRAD-1), 0 elsewhere. The sum
 * starts from 0.0 where torch's backward reduces (add: expand's sum_to,
 * overlapping unfold windows, a broadcast where operand), so -0.0 terms
 * give +0.0, and from the first term where it copies (a view, a slice, a
 * piece of cat, a gather), so a lone -0.0 stays -0.0. */
#ifndef MT_GRAD_STRUCTURE_MATH_H
#define MT_GRAD_STRUCTURE_MATH_H

#include "common/mt_hd.h"

/* One gradient, planned on the host. */
typedef struct mt_gsc_par {
  int64_t n;      /* gradient elements */
  int64_t n_src;  /* upstream gradient values (as doubles) */
  mt_dtype dtype; /* the gradient's */
  int add;        /* 1: sum from 0.0 (torch reduces), 0: from the first (it copies) */
} mt_gsc_par;

/* Element i: upstream values vals[src[t]] for t in off[i] .. off[i + 1] - 1. */
MT_HD void mt_gsc_elem(const mt_gsc_par *p, const double *vals, const int64_t *off,
                       const int64_t *src, void *data, uint8_t *mask, int64_t i) {
  int64_t a = off[i], b = off[i + 1];
  double acc = 0.0;
  for (int64_t t = a; t < b; t++) acc = p->add || t > a ? acc + vals[src[t]] : vals[src[t]];
  mt_hd_set_f64(data, p->dtype, i, b > a ? acc : 0.0);
  mask[i] = (uint8_t)(b > a);
}

#endif /* MT_GRAD_STRUCTURE_MATH_H */

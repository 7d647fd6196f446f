/* npma_structure_math.h - the per-element math of the numpy_ma profile's
 * structure and masked families that the torch structure kernels do not
 * already move (those run on the exec through mt__structure_run), shared
 * by the CPU reference (impl/cpu/npma_structure.c, npma_masked.c: the host
 * plans) and the CUDA kernels (impl/cuda/npma_structure.cu):
 * np.ma.where's data and mask (NPMA-19, mt_npw_elem), masked_tensor's data
 * copy and mask test and to_tensor's filled (NPMA-1, mt_npk_elem). */
#ifndef MT_NPMA_STRUCTURE_MATH_H
#define MT_NPMA_STRUCTURE_MATH_H

#include "common/npma_binary_math.h"

/* the families' ops (impl/cpu/npma_ops.def's lines of npma_structure.c and
 * npma_masked.c): the CUDA table's slots */
#define NPMA_STRUCTURE_OPS(X)                                                              \
  X(select) X(slice) X(index) X(transpose) X(t) X(view) X(reshape) X(unsqueeze) X(clone)   \
  X(ones_like) X(cat) X(stack) X(where)
#define NPMA_MASKED_OPS(X) X(masked_tensor) X(to_tensor)

/* np.ma.where(cond, x, y), planned on the host: the three operands with
 * their broadcast strides (mt_npb_opnd), the result dtype rt */
typedef struct mt_npw_par {
  mt_dtype rt;
  mt_npb_opnd c, x, y;
} mt_npw_par;

/* NPMA-19: element i: data np.where(cond.filled(False), x, y), masked
 * where cond is or the branch taken is (masks NULL: all specified) */
MT_HD void mt_npw_elem(const mt_npw_par *p, const void *c, const uint8_t *mc, const void *x,
                       const uint8_t *mx, const void *y, const uint8_t *my, void *out,
                       uint8_t *mask_out, int64_t i) {
  int64_t ic = mt_npb_idx(&p->c, i), ix = mt_npb_idx(&p->x, i), iy = mt_npb_idx(&p->y, i);
  int cs = !mc || mc[ic];
  int cf = cs && mt_hd_ldi(c, p->c.dt, ic) != 0; /* cond.filled(False) */
  const void *w = cf ? x : y;
  const uint8_t *mw = cf ? mx : my;
  mt_dtype wd = cf ? p->x.dt : p->y.dt;
  int64_t iw = cf ? ix : iy;
  if (mt_hd_is_float(p->rt))
    mt_hd_set_f64(out, p->rt, i, mt_hd_get_f64(w, wd, iw));
  else
    mt_hd_sti(out, p->rt, i, mt_hd_ldi(w, wd, iw));
  mask_out[i] = (uint8_t)(cs && (!mw || mw[iw]));
}

/* NPK_FLAGS: masked_fn's mask input broadcast to the input's shape as
 * flags (npma_masked_fn.c: NPMA-17's np.broadcast_to(m, x.shape)) */
enum { NPK_MASKED_TENSOR, NPK_TO_TENSOR, NPK_FLAGS };

/* masked_tensor / to_tensor, planned on the host */
typedef struct mt_npk_par {
  int kind;          /* NPK_* */
  mt_dtype dt;       /* the data's dtype (the result's) */
  int64_t es;        /* its size in bytes */
  mt_dtype mdt;      /* masked_tensor: the mask's dtype */
  int64_t nm;        /* masked_tensor: the mask's size (1: every element) */
  double v;          /* to_tensor: the fill value */
  int64_t vi;        /* to_tensor: the fill value of an integer dtype */
  mt_npb_opnd m;     /* NPK_FLAGS: the mask operand (its broadcast strides) */
} mt_npk_par;

/* Element i: masked_tensor's data (a copy) and mask (nonzero = specified,
 * NaN too); to_tensor's m.filled(value) (mask_out unused); NPK_FLAGS's
 * flag out[i] (one byte; data and mask_out unused). */
MT_HD void mt_npk_elem(const mt_npk_par *p, const void *data, const void *mask, void *out,
                       uint8_t *mask_out, int64_t i) {
  if (p->kind == NPK_FLAGS) {
    ((uint8_t *)out)[i] = (uint8_t)(mt_hd_ldi(mask, p->m.dt, mt_npb_idx(&p->m, i)) != 0);
    return;
  }
  size_t es = (size_t)p->es;
  const unsigned char *src = (const unsigned char *)data + (size_t)i * es;
  unsigned char *dst = (unsigned char *)out + (size_t)i * es;
  if (p->kind == NPK_MASKED_TENSOR) {
    for (size_t b = 0; b < es; b++) dst[b] = src[b];
    int64_t k = p->nm == 1 ? 0 : i;
    mask_out[i] = (uint8_t)(mt_hd_is_float(p->mdt) ? mt_hd_get_f64(mask, p->mdt, k) != 0.0
                                                   : mt_hd_ldi(mask, p->mdt, k) != 0);
    return;
  }
  if (((const uint8_t *)mask)[i]) {
    for (size_t b = 0; b < es; b++) dst[b] = src[b];
  } else if (mt_hd_is_float(p->dt)) {
    mt_hd_set_f64(out, p->dt, i, p->v);
  } else {
    mt_hd_sti(out, p->dt, i, p->vi);
  }
}

#endif /* MT_NPMA_STRUCTURE_MATH_H */

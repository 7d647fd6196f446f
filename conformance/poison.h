/* poison.h - adversarial values for masked-out input data (rule MASK-9,
 * DESIGN.md "Poison invariance"). The runner re-runs every case that has a
 * masked input with the masked-out data replaced by each poison in turn and
 * requires the specified outputs and the masks to stay the same. */
#ifndef MT_CONF_POISON_H
#define MT_CONF_POISON_H

#include <stdint.h>

#include "mt_core.h"

#ifdef __cplusplus
extern "C" {
#endif

/* MT_POISON(NAME, "label", value for float dtypes, which end of an integer
 * dtype's range: +1 max, -1 min, 0 zero). RANDOM draws per element. */
#define MT_POISONS(X)                  \
  X(NAN, "nan", NAN, 1)                \
  X(POS_INF, "+inf", INFINITY, 1)      \
  X(NEG_INF, "-inf", -INFINITY, -1)    \
  X(POS_BIG, "+1e30", 1e30, 1)         \
  X(NEG_BIG, "-1e30", -1e30, -1)       \
  X(NEG_ZERO, "-0.0", -0.0, 0)         \
  X(RANDOM, "random", 0.0, 0)

typedef enum {
#define MT_X(name, label, f, i) MT_POISON_##name,
  MT_POISONS(MT_X)
#undef MT_X
  MT_POISON__COUNT
} mt_poison;

const char *mt_poison_label(mt_poison p);

/* Whether t (an input) is a masked tensor with at least one masked-out
 * element whose data the poison can reach (dense storage, or COO/CSR
 * storage whose data and mask hold the same indices). */
int mt_poison_applies(const mt_tensor *t);

/* A deep copy of the masked tensor t with every masked-out data element set
 * to poison p (RANDOM: a pattern of NaN, infinities, huge, -0.0 and
 * ordinary values drawn from `seed`). */
mt_status mt_poison_copy(const mt_tensor *t, mt_poison p, uint64_t seed, mt_tensor **out,
                         mt_error *err);

/* A plain input whose specified elements another input names (a case's
 * `input_masks`, e.g. torch.masked.sum(input, mask=mask)): 1 when t is a
 * dense tensor, mask a dense bool tensor that broadcasts to t's shape and
 * at least one element of t is masked out. */
int mt_poison_applies_where(const mt_tensor *t, const mt_tensor *mask);

/* A deep copy of dense t with poison p wherever mask (broadcast to t's
 * shape) is false. */
mt_status mt_poison_copy_where(const mt_tensor *t, const mt_tensor *mask, mt_poison p,
                               uint64_t seed, mt_tensor **out, mt_error *err);

/* A stable 64-bit seed from a case id (FNV-1a). */
uint64_t mt_poison_seed(const char *case_id);

#ifdef __cplusplus
}
#endif
#endif /* MT_CONF_POISON_H */

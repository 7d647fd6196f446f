/* npma_slots.h - designated initializers [id] = mt_npma_<op> for every op of
 * the reference backend's numpy_ma profile (impl/cpu/npma_ops.def; see
 * npma_mutant.h). No include guard: it is an initializer list. */
#define MT_NPMA_OP(name, rules) [MT_OP_##name] = mt_npma_##name,
#include "cpu/npma_ops.def"
#undef MT_NPMA_OP

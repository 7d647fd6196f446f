/* cpu_slots.h - designated initializers [id] = mt_cpu_<op> for every op
 * (see mutant.h). No include guard: it is an initializer list. */
#define MT_OP(id, name, family, rules) [id] = mt_cpu_##name,
#include "mt/ops.def"
#undef MT_OP

/* grad_slots.h - designated initializers [id] = mt_cpu_grad_<op> for every
 * backward kernel of impl/cpu/grad_ops.def (see mutant.h). No include
 * guard: it is an initializer list. */
#define MT_GRAD_OP(name) [MT_OP_##name] = mt_cpu_grad_##name,
#include "cpu/grad_ops.def"
#undef MT_GRAD_OP

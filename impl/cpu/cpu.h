/* cpu.h - the reference CPU backend: one kernel per op of ops.def, named
 * mt_cpu_<op>, defined in the file of its family (impl/cpu/<family>.c).
 * A missing kernel is a link error. */
#ifndef MT_CPU_H
#define MT_CPU_H
#include "mt_core.h"

#define MT_OP(id, name, family, rules) mt_status mt_cpu_##name(mt_call *call, mt_error *err);
#include "mt/ops.def"
#undef MT_OP

/* backward kernels (mt_impl.backward): mt_cpu_grad_<op>, in grad_<family>.c */
#define MT_GRAD_OP(name) mt_status mt_cpu_grad_##name(mt_call *call, mt_error *err);
#include "grad_ops.def"
#undef MT_GRAD_OP

#endif

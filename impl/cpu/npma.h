/* npma.h - the reference backend's numpy_ma profile: one kernel
 * mt_npma_<op> per line MT_NPMA_OP(op, "rules") of npma_ops.def, defined in
 * impl/cpu/npma_<family>.c (shared helpers: npma_util.h).
 * A listed op without a kernel is a link error. */
#ifndef MT_NPMA_H
#define MT_NPMA_H
#include "mt_core.h"

#define MT_NPMA_OP(name, rules) mt_status mt_npma_##name(mt_call *call, mt_error *err);
#include "npma_ops.def"
#undef MT_NPMA_OP

#endif

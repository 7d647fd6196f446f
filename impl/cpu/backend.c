/* backend.c - the CPU kernel table, built from ops.def. */
#include "cpu.h"

static const mt_kernel_fn cpu_kernels[MT_OP__END] = {
#define MT_OP(id, name, family, rules) [id] = mt_cpu_##name,
#include "mt/ops.def"
#undef MT_OP
};

static const mt_impl cpu_impl = {
    .abi_version = MT_ABI_VERSION,
    .struct_size = sizeof(mt_impl),
    .name = "cpu",
    .supports = NULL,
    .unavailable = NULL,
    .n_kernels = MT_OP__END,
    .kernels = cpu_kernels,
};

const mt_impl *mt_backend_cpu(void) { return &cpu_impl; }

/* backend.c - the CPU kernel tables: profile torch from ops.def, profile
 * numpy_ma from npma_ops.def (MT_NPMA_OP(name, rules): the rules are for
 * tests/golden_coverage.py and readers; the table needs the name only), and
 * the backward kernels from grad_ops.def. */
#include "cpu.h"
#include "npma.h"

static const mt_kernel_fn cpu_kernels[MT_OP__END] = {
#define MT_OP(id, name, family, rules) [id] = mt_cpu_##name,
#include "mt/ops.def"
#undef MT_OP
};

static const mt_kernel_fn npma_kernels[MT_OP__END] = {
#define MT_NPMA_OP(name, rules) [MT_OP_##name] = mt_npma_##name,
#include "npma_ops.def"
#undef MT_NPMA_OP
};

static const mt_kernel_fn cpu_backward[MT_OP__END] = {
#define MT_GRAD_OP(name) [MT_OP_##name] = mt_cpu_grad_##name,
#include "grad_ops.def"
#undef MT_GRAD_OP
};

static const mt_profile_kernels cpu_profiles[] = {
    {"numpy_ma", MT_OP__END, npma_kernels},
};

static const mt_impl cpu_impl = {
    .abi_version = MT_ABI_VERSION,
    .struct_size = sizeof(mt_impl),
    .name = "cpu",
    .supports = NULL,
    .unavailable = NULL,
    .n_kernels = MT_OP__END,
    .kernels = cpu_kernels,
    .n_profiles = sizeof cpu_profiles / sizeof cpu_profiles[0],
    .profiles = cpu_profiles,
    .n_backward = MT_OP__END,
    .backward = cpu_backward,
};

const mt_impl *mt_backend_cpu(void) { return &cpu_impl; }

// Every public header of mtcs from C++ (a C++ plugin builds against them).
#include <mt/compressed.h>
#include <mt/kwargs.h>
#include <mt/mt.h>

extern "C" const mt_impl *mt_plugin_entry(uint32_t abi_version);

static const mt_kernel_fn kernels[MT_OP__END] = {};
static const mt_impl impl = {MT_ABI_VERSION, sizeof(mt_impl), "cxx", nullptr, nullptr,
                             MT_OP__END,     kernels,          0,     nullptr, MT_OP__END,
                             kernels};

extern "C" const mt_impl *mt_plugin_entry(uint32_t abi_version) {
  mt_cgeom g;
  mt_tensor t{};
  (void)mt_cgeom_of(&t, &g);
  return abi_version == MT_ABI_VERSION ? &impl : nullptr;
}

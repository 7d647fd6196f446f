/* cuda_emu_plugin.c - the CUDA backend's emulation as a plugin (its entry
 * point only), so that tests/cuda_emu_faults.cmake can load the builds with
 * an injected device fault through `mtcs run --backend <.so>`. */
#include "mt_core.h"

const mt_impl *mt_plugin_entry(uint32_t abi_version) {
  return abi_version == MT_ABI_VERSION ? mt_backend_cuda_emu() : NULL;
}

/* npma_mutant.h - mutants of the numpy_ma profile (spec/SEMANTICS.md
 * NPMA-*): the reference CPU backend whose numpy_ma kernel table has one
 * kernel broken on purpose (mutant.h explains mutants). A numpy_ma mutant
 * defines its broken kernels, then
 *   static const mt_kernel_fn npma[MT_OP__END] = {
 *   #include "npma_slots.h"          every numpy_ma op -> mt_npma_<op>
 *     [MT_OP_log] = mutant_log,      the override (later initializer wins)
 *   };
 *   MT_NPMA_MUTANT_ENTRY("name", npma)
 * and gets one line `name=RULE@numpy_ma` in the MUTANTS table of
 * tests/mutants.cmake, which runs it with `--profile numpy_ma` on the cases
 * of the ops it overrides. Its torch table is the reference's (cpu_slots.h). */
#ifndef MT_NPMA_MUTANT_H
#define MT_NPMA_MUTANT_H
#include "cpu/npma.h"
#include "mutant.h"

static const mt_kernel_fn mt__npma_mutant_torch[MT_OP__END] = {
#include "cpu_slots.h"
};

#define MT_NPMA_MUTANT_ENTRY(NAME, NPMA_KERNELS)                                         \
  static const mt_profile_kernels mutant_profiles[] = {                                  \
      {"numpy_ma", MT_OP__END, NPMA_KERNELS}};                                           \
  static const mt_impl mutant_impl = {                                                   \
      MT_ABI_VERSION, sizeof(mt_impl), "mutant:" NAME, NULL, NULL, MT_OP__END,           \
      mt__npma_mutant_torch, 1, mutant_profiles, 0, NULL};                                \
  const mt_impl *mt_plugin_entry(uint32_t abi_version);                                  \
  const mt_impl *mt_plugin_entry(uint32_t abi_version) {                                 \
    return abi_version == MT_ABI_VERSION ? &mutant_impl : NULL;                          \
  }
#endif

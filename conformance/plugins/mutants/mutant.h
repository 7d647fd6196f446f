/* mutant.h - mutant plugins: the reference CPU backend with one rule broken
 * on purpose, the way a real library plausibly gets it wrong (often the
 * numpy.ma way). tests/mutants.cmake checks that `mtcs run` fails each one,
 * and only on cases tagged with the rule it breaks: proof that the suite
 * catches the mistake and blames the right rule.
 *
 * A mutant file defines its broken kernels, then
 *   static const mt_kernel_fn kernels[MT_OP__END] = {
 *   #include "cpu_slots.h"          every op -> mt_cpu_<op>
 *     [MT_OP_log] = mutant_log,     the override (later initializer wins)
 *   };
 *   MT_MUTANT_ENTRY("name", kernels)
 * Unlike plugins/example.c, mutants link libmtcore (they reuse its kernels). */
#ifndef MT_MUTANT_H
#define MT_MUTANT_H
#include "cpu/cpu.h"

#define MT_MUTANT_ENTRY(NAME, KERNELS)                                               \
  static const mt_impl mutant_impl = {                                               \
      MT_ABI_VERSION, sizeof(mt_impl), "mutant:" NAME, NULL, NULL, MT_OP__END, KERNELS}; \
  const mt_impl *mt_plugin_entry(uint32_t abi_version);                              \
  const mt_impl *mt_plugin_entry(uint32_t abi_version) {                             \
    return abi_version == MT_ABI_VERSION ? &mutant_impl : NULL;                      \
  }

/* Elementwise access to a masked output with dense storage; 0 if it is not. */
static inline int mt__mutant_dense_masked(const mt_tensor *t) {
  return t && t->kind == MT_KIND_MASKED && t->data->kind == MT_KIND_DENSE &&
         t->mask->kind == MT_KIND_DENSE && mt_is_contiguous(t->data) && mt_is_contiguous(t->mask);
}
#endif

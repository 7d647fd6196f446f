/* test_emu_order.c - the CUDA emulation runs each grid's threads last to
 * first (impl/cuda/cuda_compat.h, MTC_FOR), the opposite of the CPU
 * reference's loops, so that a kernel whose result depends on the order of
 * its threads (a race on a GPU) cannot pass by following the CPU's order.
 * The goldens cannot see every such result: BIN-5's error index is not in
 * torch's message. Here: floor_divide of int32 masked tensors, every
 * element specified, divisors [1, 3, 0, 2, 0] (hand-derived: zeros at
 * elements 2 and 4) must name element 2 on the CPU and on cuda-emu, whose
 * kernel finds it by an atomic min over the threads that meet a zero
 * (fault 10 of tests/cuda_emu_faults.cmake, "the first writer wins", names
 * element 4 under the reverse order and fails here: ctest's
 * unit.test_emu_order.fault10 runs this test on that plugin, named by
 * MT_TEST_EMU_PLUGIN, and passes only when it fails). Fault 11, the mirror
 * ("the last writer wins"), names element 2 in the reverse order and passes
 * there; unit.test_emu_order.fault11 runs it with MTCS_EMU_ORDER=forward,
 * where it names element 4 and must fail. */
#include <dlfcn.h>
#include <stdlib.h>

#include "cpu_fixtures.h"
#include "mt_test.h"

/* cuda-emu, or the plugin MT_TEST_EMU_PLUGIN names (NULL: it does not load) */
static const mt_impl *emu(void) {
  const char *so = getenv("MT_TEST_EMU_PLUGIN");
  if (!so || !*so) return mt_backend_cuda_emu();
  void *h = dlopen(so, RTLD_NOW | RTLD_LOCAL);
  const mt_impl *(*entry)(uint32_t) = h ? (const mt_impl *(*)(uint32_t))dlsym(h, "mt_plugin_entry") : NULL;
  if (!entry) fprintf(stderr, "  %s: %s\n", so, dlerror());
  return entry ? entry(MT_ABI_VERSION) : NULL;
}

TEST(the_first_zero_divisor_is_named_whatever_the_thread_order) {
  const mt_impl *impls[] = {mt_backend_cpu(), emu()};
  CHECK(impls[1] != NULL);
  for (int m = 0; m < 2 && impls[m]; m++) {
    mt_tensor *a = masked(dense(MT_int32, 1, SHAPE(5), VALS(7, 8, 9, 10, 11)),
                          bools(1, SHAPE(5), BITS(1, 1, 1, 1, 1)));
    mt_tensor *b = masked(dense(MT_int32, 1, SHAPE(5), VALS(1, 3, 0, 2, 0)),
                          bools(1, SHAPE(5), BITS(1, 1, 1, 1, 1)));
    const mt_tensor *in[] = {a, b};
    mt_call c;
    mt_error e;
    CHECK_STATUS(run(impls[m]->kernels[MT_OP_floor_divide], &c, &e, 2, in, NULL),
                 MT_INVALID_ARGUMENT);
    CHECK_HAS(e.msg, "ZeroDivisionError (integer division by a zero divisor at result element 2)");
    done(&c, (mt_tensor *[]){a, b}, 2);
  }
}

MT_TEST_MAIN(T(the_first_zero_divisor_is_named_whatever_the_thread_order))

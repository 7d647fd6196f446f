/* test_cusparse_load.c - the CUDA backend loads cuSPARSE at run time
 * (impl/cuda/cusparse_lib.cu, dlopen): every function it calls must resolve
 * by name in the library the toolkit ships, or the first sparse product on
 * a GPU would fail with "has no <function>". No device is needed to check
 * that, so CI checks it wherever the build has CUDA and the loader finds
 * libcusparse; SKIP (77) where the build has no CUDA or the library is not
 * on the loader's path. */
#include <stdio.h>
#include <string.h>

#ifndef MT_HAVE_CUDA
int main(void) {
  printf("SKIP: not built with CUDA (nvcc was not found at configure time)\n");
  return 77;
}
#else

int mt_cuda_cusparse_probe(char *why, size_t why_len); /* impl/cuda/cuda_compat.h */

int main(void) {
  char why[512];
  int rc = mt_cuda_cusparse_probe(why, sizeof why);
  if (rc != 0 && strstr(why, "cannot load")) {
    printf("SKIP: %s\n", why);
    return 77;
  }
  printf("%s: %s\n", rc == 0 ? "ok" : "FAIL", why);
  return rc == 0 ? 0 : 1;
}
#endif

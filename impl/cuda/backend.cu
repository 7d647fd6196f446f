/* backend.cu - the CUDA backend's table (skeleton).
 *
 * Builds wherever nvcc is found. No kernel is registered yet, so every op
 * reports NOT_SUPPORTED; on a machine without a GPU unavailable() says so
 * and the runner reports SKIP (ctest exit 77). Kernels land one family per
 * file (impl/cuda/<family>.cu) and take their slot in cuda_kernels below. */
#include <cuda_runtime.h>
#include <stdio.h>

#include "mt_core.h"

static const mt_kernel_fn cuda_kernels[MT_OP__END] = {NULL};

static int cuda_unavailable(char *why, size_t why_len) {
  int n = 0;
  cudaError_t e = cudaGetDeviceCount(&n);
  if (e != cudaSuccess) {
    snprintf(why, why_len, "no CUDA device (%s)", cudaGetErrorString(e));
    return 1;
  }
  if (n == 0) {
    snprintf(why, why_len, "no CUDA device");
    return 1;
  }
  return 0;
}

static const mt_impl cuda_impl = {
    MT_ABI_VERSION, (uint32_t)sizeof(mt_impl), "cuda", NULL, cuda_unavailable,
    (uint32_t)MT_OP__END, cuda_kernels, 0, NULL, 0, NULL,
};

extern "C" const mt_impl *mt_backend_cuda(void) { return &cuda_impl; }

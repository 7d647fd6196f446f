/* cuda_emu_runtime.h - what the benchmarks' device kernels (adagrad_step.cu,
 * adagrad_gs.cu) use of CUDA, so that the same sources build twice:
 *
 *  - with nvcc: CUDA's own runtime (and cuSPARSE where the file includes
 *    it); MT_KLAUNCH(k, grid, block, args...) is k<<<grid, block>>>(args...);
 *  - as the emulation (MT_CUDA_EMU, any C++ compiler: the library
 *    mtfast_emu, test unit.test_cuda_adagrad_emu): device memory is host
 *    memory, a kernel a host function, and MT_KLAUNCH calls it once for
 *    every (block, thread) of the grid, last to first, with blockIdx, threadIdx,
 *    gridDim and blockDim set, so each kernel's own grid-stride indexing and
 *    launch shape run in CI; sqrt and fma are the host's (correctly rounded,
 *    like the device's with --prec-sqrt=true and fma()); the few cuSPARSE
 *    calls of adagrad_gs.cu are host loops on impl/cuda/cusparse_emu.h's
 *    handle and vectors; CUB's radix sort of the
 *    uncoalesced step a host std::stable_sort; events read the host clock.
 *
 * Device memory is told from host memory (a table of the live allocations):
 * a launch handed a host pointer fails with an illegal address, a copy
 * whose kind names the wrong side with invalid value. Races between the
 * threads of a launch are checked by a second build (MT_CUDA_EMU_RACE,
 * below). What the emulation cannot check (device-only faults, the real
 * cuSPARSE and CUB) is for the GPU run of test_cuda_adagrad. impl/cuda/cuda_compat.h is the conformance backend's
 * counterpart (that one hides the launch shape; these kernels keep theirs). */
#ifndef MT_CUDA_EMU_RUNTIME_H
#define MT_CUDA_EMU_RUNTIME_H

#ifndef MT_CUDA_EMU

#include <cuda_runtime.h>
#define MT_KLAUNCH(kern, grid, block, ...) kern<<<(grid), (block)>>>(__VA_ARGS__)

#else /* the emulation */

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <iterator>
#include <map>
#include <type_traits>

#include "cuda/cub_emu.h"
#include "cuda/cusparse_emu.h"

/* sqrt(float) and fma(float, float, float) as CUDA's overloads: sqrtf, fmaf */
using std::fma;
using std::sqrt;

#define __global__
#define __device__
#define __host__

/* ---- errors ------------------------------------------------------------- */
typedef enum cudaError {
  cudaSuccess = 0,
  cudaErrorInvalidValue = 1,
  cudaErrorMemoryAllocation = 2,
  cudaErrorInvalidConfiguration = 9,
  cudaErrorIllegalAddress = 700,
  cudaErrorLaunchFailure = 719,
  cudaErrorInvalidResourceHandle = 400,
} cudaError_t;

/* the error of the last launch, as cudaGetLastError returns and resets it */
inline cudaError_t mt_emu_last_error = cudaSuccess;

static inline const char *cudaGetErrorString(cudaError_t e) {
  switch (e) {
  case cudaSuccess: return "no error";
  case cudaErrorInvalidValue: return "invalid argument";
  case cudaErrorMemoryAllocation: return "out of memory";
  case cudaErrorInvalidConfiguration: return "invalid configuration argument";
  case cudaErrorIllegalAddress: return "an illegal memory access was encountered";
  case cudaErrorLaunchFailure: return "unspecified launch failure";
  case cudaErrorInvalidResourceHandle: return "invalid resource handle";
  }
  return "unknown error";
}
static inline cudaError_t cudaGetLastError(void) {
  cudaError_t e = mt_emu_last_error;
  mt_emu_last_error = cudaSuccess;
  return e;
}
/* every launch has run to its end when MT_KLAUNCH returns */
static inline cudaError_t cudaDeviceSynchronize(void) { return cudaSuccess; }

/* ---- the device --------------------------------------------------------- */
typedef struct cudaDeviceProp {
  char name[256];
  size_t totalGlobalMem;
  int multiProcessorCount, l2CacheSize, major, minor;
} cudaDeviceProp;

static inline cudaError_t cudaGetDeviceCount(int *n) {
  *n = 1;
  return cudaSuccess;
}
static inline cudaError_t cudaGetDeviceProperties(cudaDeviceProp *pr, int dev) {
  if (dev != 0) return cudaErrorInvalidValue;
  memset(pr, 0, sizeof *pr);
  strcpy(pr->name, "cuda-emu (host emulation)");
  pr->totalGlobalMem = (size_t)1 << 30;
  pr->multiProcessorCount = 1;
  return cudaSuccess;
}

/* ---- memory: host memory ------------------------------------------------ */
enum cudaMemcpyKind {
  cudaMemcpyHostToHost = 0,
  cudaMemcpyHostToDevice = 1,
  cudaMemcpyDeviceToHost = 2,
  cudaMemcpyDeviceToDevice = 3,
  cudaMemcpyDefault = 4
};

/* The live emulated device allocations (base -> bytes), so that a launch
 * and a copy can tell device memory from host memory as a GPU does: a host
 * pointer handed to a kernel, which the emulation could read, is the
 * launch's cudaErrorIllegalAddress here too (the emulation's bookkeeping,
 * like mt_emu_last_error). */
inline std::map<uintptr_t, size_t> mt_emu_allocs;
/* p in a live allocation, one past its end included (an empty buffer) */
static inline bool mt_emu_is_dev(const void *p) {
  std::map<uintptr_t, size_t>::const_iterator it = mt_emu_allocs.upper_bound((uintptr_t)p);
  if (it == mt_emu_allocs.begin()) return false;
  --it;
  return (uintptr_t)p - it->first <= it->second;
}
template <typename T> static inline bool mt_emu_host_arg(const T &) { return false; }
template <typename T> static inline bool mt_emu_host_arg(T *p) { return p && !mt_emu_is_dev(p); }
/* true when an argument is a pointer outside every allocation */
template <typename... A> static inline bool mt_emu_host_args(const A &...a) {
  bool any = false, each[] = {false, (any = any || mt_emu_host_arg(a))...};
  (void)each;
  return any;
}

/* Device memory is pages of its own (mmap), out of the host code's reach
 * (PROT_NONE) except while a kernel, a copy or an emulated library call
 * runs (an mt_emu_reach in scope): host code that reads device memory,
 * which would crash on a GPU, crashes here too. */
static inline size_t mt_emu_pages(size_t bytes) {
  size_t pg = (size_t)sysconf(_SC_PAGESIZE);
  return ((bytes ? bytes : 1) + pg - 1) / pg * pg;
}
/* An allocation's pages end where a guard page begins that is never in
 * reach: the buffer is placed as late in its pages as CUDA's 256-byte
 * alignment allows, so a kernel that reads or writes past its end (beyond
 * that rounding) faults, as compute-sanitizer would report it on a GPU.
 * lead: the bytes before the buffer in its first page. */
static inline size_t mt_emu_lead(size_t bytes) {
  return mt_emu_pages(bytes) - (bytes + 255) / 256 * 256;
}
struct mt_emu_reach {
  static void all(int prot) {
    for (std::map<uintptr_t, size_t>::const_iterator it = mt_emu_allocs.begin();
         it != mt_emu_allocs.end(); ++it)
      mprotect((void *)(it->first - mt_emu_lead(it->second)), mt_emu_pages(it->second), prot);
  }
  mt_emu_reach() { all(PROT_READ | PROT_WRITE); }
  ~mt_emu_reach() { all(PROT_NONE); }
};

/* filled with 0xff (every float NaN, every index -1), so that an element no
 * upload or kernel wrote cannot pass for a right one */
static inline cudaError_t cudaMalloc(void **p, size_t bytes) {
  size_t pages = mt_emu_pages(bytes), pg = (size_t)sysconf(_SC_PAGESIZE);
  char *m = (char *)mmap(NULL, pages + pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
                         -1, 0);
  *p = NULL;
  if (m == (char *)MAP_FAILED) return cudaErrorMemoryAllocation;
  memset(m, 0xff, pages);
  mprotect(m, pages + pg, PROT_NONE);
  *p = m + mt_emu_lead(bytes);
  mt_emu_allocs[(uintptr_t)*p] = bytes;
  return cudaSuccess;
}
template <typename T> static inline cudaError_t cudaMalloc(T **p, size_t bytes) {
  return cudaMalloc((void **)p, bytes);
}
static inline cudaError_t cudaFree(void *p) {
  if (!p) return cudaSuccess;
  std::map<uintptr_t, size_t>::iterator it = mt_emu_allocs.find((uintptr_t)p);
  if (it == mt_emu_allocs.end()) return cudaErrorInvalidValue;
  munmap((char *)p - mt_emu_lead(it->second),
         mt_emu_pages(it->second) + (size_t)sysconf(_SC_PAGESIZE));
  mt_emu_allocs.erase(it);
  return cudaSuccess;
}
/* each side of the copy where its kind says: device memory wholly inside one
 * allocation, host memory outside all (cudaMemcpyDefault: either) */
static inline bool mt_emu_side_ok(const void *p, size_t bytes, bool dev) {
  return dev ? mt_emu_is_dev(p) && mt_emu_is_dev((const char *)p + bytes) : !mt_emu_is_dev(p);
}
static inline cudaError_t cudaMemcpy(void *dst, const void *src, size_t bytes,
                                     enum cudaMemcpyKind kind) {
  if (bytes && (!dst || !src)) return cudaErrorInvalidValue;
  if (bytes && kind != cudaMemcpyDefault &&
      (!mt_emu_side_ok(dst, bytes, kind == cudaMemcpyHostToDevice || kind == cudaMemcpyDeviceToDevice) ||
       !mt_emu_side_ok(src, bytes, kind == cudaMemcpyDeviceToHost || kind == cudaMemcpyDeviceToDevice)))
    return cudaErrorInvalidValue;
  mt_emu_reach r;
  if (bytes) memmove(dst, src, bytes);
  return cudaSuccess;
}
static inline cudaError_t cudaMemset(void *dst, int v, size_t bytes) {
  if (bytes && (!dst || !mt_emu_side_ok(dst, bytes, true))) return cudaErrorInvalidValue;
  mt_emu_reach r;
  if (bytes) memset(dst, v, bytes);
  return cudaSuccess;
}

/* ---- events: the host's monotonic clock --------------------------------- */
typedef struct mt_emu_event {
  double t; /* seconds */
  int recorded;
} *cudaEvent_t;
typedef void *cudaStream_t;

static inline cudaError_t cudaEventCreate(cudaEvent_t *e) {
  *e = (cudaEvent_t)calloc(1, sizeof **e);
  return *e ? cudaSuccess : cudaErrorMemoryAllocation;
}
static inline cudaError_t cudaEventDestroy(cudaEvent_t e) {
  free(e);
  return cudaSuccess;
}
static inline cudaError_t cudaEventRecord(cudaEvent_t e, cudaStream_t s) {
  struct timespec ts;
  (void)s;
  if (!e) return cudaErrorInvalidResourceHandle;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  e->t = (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
  e->recorded = 1;
  return cudaSuccess;
}
static inline cudaError_t cudaEventRecord(cudaEvent_t e, int s) {
  (void)s;
  return cudaEventRecord(e, (cudaStream_t)NULL);
}
static inline cudaError_t cudaEventSynchronize(cudaEvent_t e) {
  return e ? cudaSuccess : cudaErrorInvalidResourceHandle;
}
static inline cudaError_t cudaEventElapsedTime(float *ms, cudaEvent_t a, cudaEvent_t b) {
  if (!a || !b || !a->recorded || !b->recorded) return cudaErrorInvalidResourceHandle;
  *ms = (float)((b->t - a->t) * 1e3);
  return cudaSuccess;
}

/* ---- the race check (tests/race/README.md) -------------------------------- */
/* Built with MT_CUDA_EMU_RACE and the instrumentation (mtfast_emu_race): a
 * launch registers every live allocation, each (block, thread) says it runs
 * (its index in the grid), and a race between two of them is said on
 * stderr and is the launch's error (unspecified launch failure), so that
 * the step reports it. */
#ifdef MT_CUDA_EMU_RACE
#include <stdio.h>

#include "race/race.h"
/* each allocation's pages, the bytes before and after the buffer in them
 * (its alignment's slack, which no guard page covers) guards */
static inline void mt_emu_race_begin(const char *kernel) {
  mt_race_begin(kernel);
  for (std::map<uintptr_t, size_t>::const_iterator it = mt_emu_allocs.begin();
       it != mt_emu_allocs.end(); ++it) {
    const char *p = (const char *)it->first, *m = p - mt_emu_lead(it->second);
    size_t pages = mt_emu_pages(it->second);
    mt_race_range(m, pages);
    mt_race_guard(m, (size_t)(p - m));
    mt_race_guard(p + it->second, pages - (size_t)(p - m) - it->second);
  }
}
static inline void mt_emu_race_end(void) {
  mt_race_found f;
  char who[48], whom[48];
  mt_race_end();
  if (!mt_race_take(&f)) return;
  /* the allocation: the f.range-th registered, in the table's order */
  size_t bytes = std::next(mt_emu_allocs.begin(), f.range)->second, lead = mt_emu_lead(bytes);
  if (f.guard)
    fprintf(stderr, "race check: %s: %s %s byte %zu %s a %zu-byte device allocation (tests/race/: "
            "on a GPU that memory is another buffer's)\n", f.kernel,
            mt_race_who(f.thread, who, sizeof who), f.does,
            f.offset < lead ? lead - f.offset : f.offset - lead - bytes + 1,
            f.offset < lead ? "before the start of" : "past the end of", bytes);
  else
    fprintf(stderr, "race check: %s: %s %s byte %zu of a %zu-byte device allocation, which %s %s "
            "(tests/race/: on a GPU the result depends on their timing)\n", f.kernel,
            mt_race_who(f.thread, who, sizeof who), f.does, f.offset - lead, bytes,
            mt_race_who(f.other, whom, sizeof whom), f.did);
  mt_emu_last_error = cudaErrorLaunchFailure;
}
#define MT_EMU_RACE_BEGIN(kernel) mt_emu_race_begin(kernel)
#define MT_EMU_RACE_THREAD(t) mt_race_thread(t)
#define MT_EMU_RACE_END() mt_emu_race_end()
#else
#define MT_EMU_RACE_BEGIN(kernel) ((void)0)
#define MT_EMU_RACE_THREAD(t) ((void)0)
#define MT_EMU_RACE_END() ((void)0)
#endif

/* ---- the grid ------------------------------------------------------------ */
struct mt_emu_dim {
  unsigned x, y, z;
};
inline mt_emu_dim blockIdx, threadIdx, gridDim, blockDim;

/* A launch: CUDA's limits on its shape checked (a grid of 0 blocks or more
 * than 1024 threads a block fails as on the device, at cudaGetLastError),
 * then the kernel called for every block, and in it every thread, last to
 * first (the opposite of the CPU kernels' order: a result that depends on
 * the order of the threads fails).
 * The arguments are evaluated once per thread (they are expressions of the
 * caller's scalars). */
#define MT_KLAUNCH(kern, grid, block, ...)                                                         \
  do {                                                                                             \
    unsigned mt_g_ = (unsigned)(grid), mt_b_ = (unsigned)(block);                                  \
    if (mt_g_ == 0 || mt_b_ == 0 || mt_b_ > 1024) {                                                \
      mt_emu_last_error = cudaErrorInvalidConfiguration;                                           \
      break;                                                                                       \
    }                                                                                              \
    if (mt_emu_host_args(__VA_ARGS__)) {                                                           \
      mt_emu_last_error = cudaErrorIllegalAddress;                                                 \
      break;                                                                                       \
    }                                                                                              \
    mt_emu_reach mt_r_;                                                                            \
    gridDim = mt_emu_dim{mt_g_, 1, 1}, blockDim = mt_emu_dim{mt_b_, 1, 1};                         \
    MT_EMU_RACE_BEGIN(#kern);                                                                      \
    for (unsigned mt_bi_ = mt_g_; mt_bi_-- > 0;) /* last to first, as impl/cuda's emulation */      \
      for (unsigned mt_ti_ = mt_b_; mt_ti_-- > 0;) {                                               \
        blockIdx = mt_emu_dim{mt_bi_, 0, 0}, threadIdx = mt_emu_dim{mt_ti_, 0, 0};                 \
        MT_EMU_RACE_THREAD((int64_t)mt_bi_ * mt_b_ + mt_ti_);                                      \
        kern(__VA_ARGS__);                                                                         \
      }                                                                                            \
    MT_EMU_RACE_END();                                                                             \
  } while (0)

/* ---- cuSPARSE: the calls adagrad_gs.cu makes ----------------------------- */
/* The handle, statuses, types and dense vectors are the conformance
 * backend's emulated cuSPARSE (impl/cuda/cusparse_emu.h, no memory hook:
 * the gather and scatter below take this runtime's reach themselves); the
 * sparse vectors and the gather/scatter are this file's. */
typedef struct mt_emu_spvec {
  int64_t size, nnz;
  void *idx, *vals;
  cusparseIndexType_t it;
  cusparseIndexBase_t base;
  cudaDataType vt;
} *cusparseSpVecDescr_t;

static inline cusparseStatus_t cusparseCreateSpVec(cusparseSpVecDescr_t *d, int64_t size,
                                                   int64_t nnz, void *idx, void *vals,
                                                   cusparseIndexType_t it,
                                                   cusparseIndexBase_t base, cudaDataType vt) {
  *d = NULL;
  if (size < 0 || nnz < 0 || nnz > size || (nnz > 0 && (!idx || !vals)))
    return CUSPARSE_STATUS_INVALID_VALUE;
  *d = (cusparseSpVecDescr_t)calloc(1, sizeof **d);
  if (!*d) return CUSPARSE_STATUS_ALLOC_FAILED;
  **d = mt_emu_spvec{size, nnz, idx, vals, it, base, vt};
  return CUSPARSE_STATUS_SUCCESS;
}
static inline cusparseStatus_t cusparseDestroySpVec(cusparseSpVecDescr_t d) {
  free(d);
  return CUSPARSE_STATUS_SUCCESS;
}

/* the k-th entry's position in the dense vector, or -1 when out of range */
static inline int64_t mt_emu_sp_at(const mt_emu_spvec *sp, int64_t k) {
  int64_t j = mt_csp_emu_idx(sp->idx, sp->it, k) - (sp->base == CUSPARSE_INDEX_BASE_ONE);
  return j >= 0 && j < sp->size ? j : -1;
}
static inline cusparseStatus_t mt_emu_sp_check(cusparseHandle_t h, const mt_emu_spvec *sp,
                                               const mt_csp_emu_dnvec *dn) {
  MT_CSP_EMU_TRY(mt_csp_emu_live(h));
  if (!sp || !dn || sp->size != dn->size || sp->vt != dn->vt) return CUSPARSE_STATUS_INVALID_VALUE;
  /* the library runs on the device: a host array there would fault */
  if (mt_emu_host_args(sp->idx, sp->vals, dn->vals)) return CUSPARSE_STATUS_INVALID_VALUE;
  for (int64_t k = 0; k < sp->nnz; k++)
    if (mt_emu_sp_at(sp, k) < 0) return CUSPARSE_STATUS_INVALID_VALUE;
  return CUSPARSE_STATUS_SUCCESS;
}
/* sp.vals[k] = dn[idx[k]] */
static inline cusparseStatus_t cusparseGather(cusparseHandle_t h, cusparseDnVecDescr_t dn,
                                              cusparseSpVecDescr_t sp) {
  mt_emu_reach r; /* the library on device memory */
  cusparseStatus_t st = mt_emu_sp_check(h, sp, dn);
  if (st != CUSPARSE_STATUS_SUCCESS) return st;
  size_t es = mt_csp_emu_vsz(sp->vt); /* dn's type, which its descriptor checked */
  for (int64_t k = 0; k < sp->nnz; k++)
    memcpy((char *)sp->vals + (size_t)k * es, (const char *)dn->vals + (size_t)mt_emu_sp_at(sp, k) * es,
           es);
  return CUSPARSE_STATUS_SUCCESS;
}
/* dn[idx[k]] = sp.vals[k] */
static inline cusparseStatus_t cusparseScatter(cusparseHandle_t h, cusparseSpVecDescr_t sp,
                                               cusparseDnVecDescr_t dn) {
  mt_emu_reach r; /* the library on device memory */
  cusparseStatus_t st = mt_emu_sp_check(h, sp, dn);
  if (st != CUSPARSE_STATUS_SUCCESS) return st;
  size_t es = mt_csp_emu_vsz(sp->vt); /* dn's type, which its descriptor checked */
  for (int64_t k = 0; k < sp->nnz; k++)
    memcpy((char *)dn->vals + (size_t)mt_emu_sp_at(sp, k) * es, (const char *)sp->vals + (size_t)k * es,
           es);
  return CUSPARSE_STATUS_SUCCESS;
}

/* ---- CUB: the radix sort adagrad_step.cu's uncoalesced step makes -------- */
/* CUB's DeviceRadixSort::SortPairs on the host: impl/cuda/cub_emu.h's
 * contract (a STABLE sort by the key bits [begin_bit, end_bit); a call with
 * d_temp_storage NULL only sets temp_storage_bytes), which the conformance
 * backend's emulation (impl/cuda/device.cu) runs too. */
namespace cub {
struct DeviceRadixSort {
  template <typename K, typename V, typename N>
  static cudaError_t SortPairs(void *d_temp_storage, size_t &temp_storage_bytes, const K *keys_in,
                               K *keys_out, const V *vals_in, V *vals_out, N num_items,
                               int begin_bit = 0, int end_bit = (int)sizeof(K) * 8,
                               cudaStream_t stream = 0) {
    (void)stream;
    mt_emu_reach r;
    return mt_emu_sort_pairs(d_temp_storage, temp_storage_bytes, keys_in, keys_out, vals_in,
                             vals_out, (int64_t)num_items, begin_bit, end_bit)
               ? cudaErrorInvalidValue
               : cudaSuccess;
  }
};
} // namespace cub

#endif /* MT_CUDA_EMU */

#endif /* MT_CUDA_EMU_RUNTIME_H */

/* cuda_compat.h - what the CUDA backend's family files (impl/cuda/<family>.cu) use
 * instead of CUDA's API directly, so that the same source builds twice:
 *
 *  - for the device (nvcc): MTC_KERNEL is __global__, MTC_FOR a grid-stride
 *    loop, MTC_LAUNCH a <<<blocks, threads>>> launch followed by a check;
 *  - as the emulation (MT_CUDA_EMU, any C++ compiler, the backend
 *    "cuda-emu"): a kernel is a host function whose MTC_FOR visits every
 *    index, last to first (MTCS_EMU_ORDER: below), and device memory is
 *    host memory (its own pages, checked: below and device.cu).
 *
 * The emulation runs the kernels' own indexing, arena layout and transfers
 * against the goldens in CI, where no GPU is; races between the threads of
 * a launch are checked by a second build of it (MT_CUDA_EMU_RACE, below);
 * what it cannot check (device-only faults) is for a GPU run; a host pointer
 * handed to a kernel it does catch (MTC_PLAIN_ARG, below;
 * spec/cuda-backend.md "The emulation").
 *
 * Kernels are one thread per output element (or per output row) with the
 * per-element math of impl/common/<family>_math.h, so the order of every
 * sum is the CPU reference's and the goldens' tolerances need no widening.
 * Arguments reach a kernel by value (a parameter struct, device pointers). */
#ifndef MT_CUDA_COMPAT_H
#define MT_CUDA_COMPAT_H

#include <stddef.h>
#include <stdint.h>

#include "common/exec.h"
#include "mt_core.h"

#ifdef MT_CUDA_EMU
#define MTC(name) mt_cuemu_##name /* the emulation's symbols */
#else
#define MTC(name) mt_cuda_##name
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* The backend's compute hooks (table.c): what the family files hand to
 * the CPU reference's host plans. */
extern const mt_exec MTC(exec);

/* ---- device memory: one arena per call (spec/cuda-backend.md) ------------ */
typedef struct mtc_arena {
  char *base;        /* device memory (host memory in the emulation) */
  size_t size, used; /* bytes */
  const char *what;  /* the family, for messages: "unary" */
  /* another device allocation this call's kernels may take pointers into
   * (cuSPARSE's SpGEMM result), NULL: none; the emulation's pointer checks
   * accept it (below) */
  const struct mtc_arena *also;
#ifdef MT_CUDA_EMU
  /* the emulation's guards after the first MTC_EMU_GUARDS buffers (device.cu) */
#define MTC_EMU_GUARDS 64
  size_t guard_at[MTC_EMU_GUARDS], guard_len[MTC_EMU_GUARDS];
  int n_guards;
  int overrun; /* more taken than the arena holds */
#endif
} mtc_arena;

/* Room for n elements of size bytes, rounded up to the arena's alignment;
 * *total += that. 0, or -1 when it overflows (the caller reports
 * OUT_OF_MEMORY). */
int MTC(arena_add)(size_t *total, int64_t n, size_t size);
/* One device allocation of size bytes, filled with 0xff (every float NaN,
 * every integer -1) so that an element a kernel forgets to write cannot
 * pass for a right one. OUT_OF_MEMORY / DEVICE_ERROR with CUDA's message. */
mt_status MTC(arena_open)(mtc_arena *a, size_t size, const char *what, mt_error *err);
/* The next n * size bytes of the arena (as arena_add counted them). */
void *MTC(arena_take)(mtc_arena *a, int64_t n, size_t size);
void MTC(arena_close)(mtc_arena *a); /* a zeroed arena is fine */
mt_status MTC(upload)(const mtc_arena *a, void *dev, const void *host, size_t bytes, mt_error *err);
mt_status MTC(download)(const mtc_arena *a, void *host, const void *dev, size_t bytes,
                        mt_error *err);
/* After a launch: the launch's error, then the kernel's (synchronises). */
mt_status MTC(launched)(const mtc_arena *a, const char *kernel, mt_error *err);
/* Blocks for n threads (MTC_THREADS each), capped: MTC_FOR strides. */
unsigned MTC(blocks)(int64_t n);
/* mt_impl.unavailable: probes the device in a child process, so the
 * runner's own process never initialises CUDA (its forked case workers
 * could not use it then). NULL in the emulation. */
int MTC(unavailable)(char *why, size_t why_len);

#ifdef MT_CUDA_EMU
/* The emulation: 1 when p is in a's allocation or one chained to it (also),
 * one past the end included; its transfers and launches check with it. */
int MTC(emu_in)(const mtc_arena *a, const void *p);
/* The emulation: device memory (a's allocation and those chained to it) is
 * out of the host code's reach, except between emu_reach(a, 1) and
 * emu_reach(a, 0): around a kernel, a transfer, an emulated library call. */
void MTC(emu_reach)(const mtc_arena *a, int on);
#endif

/* ---- sorting (device.cu) ------------------------------------------------ */
/* The bits a key in [0, max_key] needs, at least 1: the sort's end_bit. */
int MTC(key_bits)(int64_t max_key);
/* The scratch bytes sort_pairs needs for n pairs (*bytes; no launch). */
mt_status MTC(sort_bytes)(const mtc_arena *a, int64_t n, int end_bit, size_t *bytes,
                          mt_error *err);
/* (kout, vout) = the n pairs (kin, vin) sorted STABLY by the key bits
 * [0, end_bit) (keys >= 0): CUB's DeviceRadixSort::SortPairs on the device,
 * its host contract in the emulation (cub_emu.h). tmp: sort_bytes's bytes
 * of the arena. Synchronises; DEVICE_ERROR with CUDA's message. */
mt_status MTC(sort_pairs)(const mtc_arena *a, void *tmp, size_t tmp_bytes, const int64_t *kin,
                          int64_t *kout, const int64_t *vin, int64_t *vout, int64_t n,
                          int end_bit, mt_error *err);

/* ---- cuSPARSE (cusparse_lib.cu) ---------------------------------------- */
/* 0 when the environment says MTCS_CUSPARSE=0: the products cuSPARSE
 * would compute run on the backend's own kernels instead. */
int MTC(cusparse_on)(void);
/* 0 when cuSPARSE loads and every function csr_mm calls resolves (no
 * device needed), else 1; why says which (tests/test_cusparse_load.c). */
int MTC(cusparse_probe)(char *why, size_t why_len);
/* c = A b on the device, float32 or float64: A m x k CSR (rptr m + 1,
 * col and val nnz, 32-bit indices, zero-based), b k x n and c m x n dense
 * column-major; cusparseSpMV when n == 1, else cusparseSpMM (CSR_ALG1:
 * deterministic). m, k, n > 0. Synchronises; DEVICE_ERROR / OUT_OF_MEMORY
 * with cuSPARSE's message, a load failure naming the library. */
mt_status MTC(csr_mm)(const mtc_arena *a, mt_dtype dt, int64_t m, int64_t k, int64_t n,
                      int64_t nnz, const int32_t *rptr, const int32_t *col, const void *val,
                      const void *b, void *c, mt_error *err);
/* c = A B on the device, float32 or float64: A m x k and B k x n CSR
 * matrices of 32-bit indices (sorted, unique columns per row), through
 * cusparseSpGEMM (ALG1: deterministic); its C scattered into c, m x n dense
 * column-major, zero where C stores nothing. m, k, n > 0. */
mt_status MTC(csr_spgemm)(const mtc_arena *a, mt_dtype dt, int64_t m, int64_t k, int64_t n,
                          int64_t nnz_a, const int32_t *ar, const int32_t *ac, const void *av,
                          int64_t nnz_b, const int32_t *br, const int32_t *bc, const void *bv,
                          void *c, mt_error *err);

#ifdef __cplusplus
}
#endif

#define MTC_THREADS 256

#ifdef MT_CUDA_EMU
#define MTC_KERNEL static
/* The order a grid's threads run in, from MTCS_EMU_ORDER: unset or
 * "reverse", last to first, the opposite of the CPU reference's loops, so
 * that a kernel whose result depends on the order of its threads (a race
 * on a GPU, where no order holds) cannot pass by following the CPU's order
 * (fault 10 of tests/cuda_emu_faults.cmake); "forward", first to last;
 * "shuffle:SEED", the permutation k -> (a k + b) mod n of the seed (a a
 * prime that does not divide n): a dependence on a later thread, which the
 * reverse order hides, shows there. Another value is every call's
 * INVALID_ARGUMENT (arena_open). MTC(emu_order)(n, &b) returns a (-1:
 * reverse) and sets b, once per loop; mtc_emu_at maps the k-th thread run
 * to its index. */
#ifdef __cplusplus
extern "C" {
#endif
int64_t MTC(emu_order)(int64_t n, int64_t *b);
#ifdef __cplusplus
}
#endif
/* The race check (tests/race/README.md; the plugin cuda_emu_race): each
 * launch registers its arena's memory, each thread of MTC_FOR says it runs
 * (MT_RACE_EVERY before and after the loop: code there runs in every
 * thread of a GPU's grid), and the kernels' loads and stores, instrumented,
 * are checked for two threads touching one byte; launched() reports the
 * first such pair as the case's DEVICE_ERROR. */
#ifdef MT_CUDA_EMU_RACE
#include "race/race.h"
#ifdef __cplusplus
extern "C" {
#endif
void MTC(emu_race_begin)(const mtc_arena *a, const char *kernel);
#ifdef __cplusplus
}
#endif
#define MTC_RACE_BEGIN(a, kernel) MTC(emu_race_begin)((a), (kernel))
#define MTC_RACE_THREAD(i) mt_race_thread(i)
#define MTC_RACE_END() mt_race_end()
#else
#define MTC_RACE_BEGIN(a, kernel) ((void)0)
#define MTC_RACE_THREAD(i) ((void)0)
#define MTC_RACE_END() ((void)0)
#endif
static inline int64_t mtc_emu_at(int64_t k, int64_t n, int64_t a, int64_t b) {
  if (a < 0) return n - 1 - k;
  return (int64_t)(((unsigned __int128)(uint64_t)a * (uint64_t)k + (uint64_t)b) % (uint64_t)n);
}
#if MT_CUDA_EMU_FAULT == 1 /* tests/cuda_emu_faults.cmake: a grid one thread short */
#define MTC_FOR(i, n) for (int64_t i = (int64_t)(n) - 2; i >= 0; i--)
#elif MT_CUDA_EMU_FAULT == 9 /* one thread too many: a kernel without its bounds check */
#define MTC_FOR(i, n) for (int64_t i = (int64_t)(n); i >= 0; i--)
#else
#define MTC_FOR(i, n)                                                                       \
  for (int64_t i##_n_ = (int64_t)(n), i##_b_ = 0, i##_a_ = MTC(emu_order)(i##_n_, &i##_b_),  \
               i##_k_ = 0, i = 0;                                                           \
       i##_k_ < i##_n_ ? ((i = mtc_emu_at(i##_k_, i##_n_, i##_a_, i##_b_)), MTC_RACE_THREAD(i), 1) \
                       : (MTC_RACE_THREAD(MT_RACE_EVERY), 0);                               \
       i##_k_++)
#endif
/* A launch first checks that every pointer the kernel takes (see MTC_PLAIN_ARG)
 * is device memory of the call, as a GPU needs: a host pointer, which the
 * emulation could read, is the case's DEVICE_ERROR here too. */
#define MTC_LAUNCH(arena, kern, n, ...)                                      \
  (MTC(emu_args)((arena), #kern, mtc_emu_args((arena), __VA_ARGS__), err) \
       ? MT_DEVICE_ERROR                                                    \
       : (MTC(emu_reach)((arena), 1), MTC_RACE_BEGIN((arena), #kern), kern(__VA_ARGS__), \
          MTC_RACE_END(), MTC(emu_reach)((arena), 0), MTC(launched)((arena), #kern, err)))
#if MT_CUDA_EMU_FAULT == 10 /* tests/cuda_emu_faults.cmake: the first writer wins, a race */
#define MTC_ATOMIC_MIN_U64(ptr, v) \
  do {                             \
    if (*(ptr) == UINT64_MAX) *(ptr) = (v); \
  } while (0)
#elif MT_CUDA_EMU_FAULT == 11 /* the last writer wins: a race the reverse order hides */
#define MTC_ATOMIC_MIN_U64(ptr, v) \
  do {                             \
    *(ptr) = (v);                  \
  } while (0)
#elif defined(MT_CUDA_EMU_RACE) /* an atomic access, which the race check tells apart */
#define MTC_ATOMIC_MIN_U64(ptr, v) mt_race_atomic_min_u64((uint64_t *)(ptr), (uint64_t)(v))
#else
#define MTC_ATOMIC_MIN_U64(ptr, v) \
  do {                             \
    if ((v) < *(ptr)) *(ptr) = (v); \
  } while (0)
#endif
#else
#define MTC_KERNEL static __global__
#define MTC_FOR(i, n)                                                              \
  for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < (int64_t)(n); \
       i += (int64_t)blockDim.x * gridDim.x)
#define MTC_LAUNCH(arena, kern, n, ...) \
  (kern<<<MTC(blocks)(n), MTC_THREADS>>>(__VA_ARGS__), MTC(launched)((arena), #kern, err))
#define MTC_ATOMIC_MIN_U64(ptr, v) atomicMin((unsigned long long *)(ptr), (unsigned long long)(v))
#endif

/* ---- what a kernel takes by value: the emulation checks its pointers ------
 * A kernel's arguments are numbers, device pointers and structs of them.
 * Every struct a kernel takes is declared next to the kernel, once:
 *   MTC_PLAIN_ARG(mt_un_par);                 it holds no pointer
 *   MTC_PTR_ARG(mfg_bufs, 48, v.x[0], ...);   its pointers, v the struct (and
 *                                             its size, so that a field added
 *                                             later fails to compile until it
 *                                             is listed)
 *   MTC_PTR_ARRAY_ARG(xs_t, 24, p);           its one field, an array of them
 * The emulation then checks each pointer at each launch (device.cu,
 * MTC(emu_args)); an undeclared struct does not compile there. On the
 * device both are empty declarations. */
#if defined(MT_CUDA_EMU) && defined(__cplusplus)
#include <type_traits>
typedef struct mtc_emu_chk {
  const mtc_arena *a;
  int arg;          /* the argument being checked, from 1 */
  int bad;          /* the first argument with a pointer outside the call's memory, 0: none */
} mtc_emu_chk;
static inline void mtc_emu_ptr(mtc_emu_chk &c, const void *p) {
  if (!c.bad && p && !MTC(emu_in)(c.a, p)) c.bad = c.arg;
}
template <typename T> struct mtc_emu_plain : std::false_type {};
template <typename T> static inline void mtc_emu_arg(mtc_emu_chk &, const T &) {
  static_assert(std::is_arithmetic<T>::value || std::is_enum<T>::value || mtc_emu_plain<T>::value,
                "a struct a kernel takes by value: declare it MTC_PLAIN_ARG (no pointer in it) "
                "or MTC_PTR_ARG (its pointers), impl/cuda/cuda_compat.h");
}
template <typename T> static inline void mtc_emu_arg(mtc_emu_chk &c, T *p) { mtc_emu_ptr(c, p); }
/* 0, or the first argument (from 1) holding a pointer that is not the call's device memory */
template <typename... A> static inline int mtc_emu_args(const mtc_arena *a, const A &...args) {
  mtc_emu_chk c = {a, 0, 0};
  int each[] = {0, (c.arg++, mtc_emu_arg(c, args), 0)...};
  (void)each;
  return c.bad;
}
#define MTC_PLAIN_ARG(T) \
  template <> struct mtc_emu_plain<T> : std::true_type {}
#define MTC_PTR_ARRAY_ARG(T, bytes, field)                                          \
  static_assert(sizeof(T) == (bytes), #T " changed: list its pointers again");     \
  static inline void mtc_emu_arg(mtc_emu_chk &c, const T &v) {                      \
    for (size_t i = 0; i < sizeof v.field / sizeof v.field[0]; i++)                 \
      mtc_emu_ptr(c, v.field[i]);                                                   \
  }                                                                                 \
  static_assert(true, "")
#define MTC_PTR_ARG(T, bytes, ...)                                                  \
  static_assert(sizeof(T) == (bytes), #T " changed: list its pointers again");     \
  static inline void mtc_emu_arg(mtc_emu_chk &c, const T &v) {                      \
    const void *ps[] = {__VA_ARGS__};                                               \
    for (size_t i = 0; i < sizeof ps / sizeof ps[0]; i++) mtc_emu_ptr(c, ps[i]);    \
  }                                                                                 \
  static_assert(true, "")
/* the launch's check: bad != 0 sets err (DEVICE_ERROR naming the kernel and argument) */
extern "C" int MTC(emu_args)(const mtc_arena *a, const char *kernel, int bad, mt_error *err);
#else
#define MTC_PLAIN_ARG(T) static_assert(true, #T)
#define MTC_PTR_ARG(T, bytes, ...) static_assert(sizeof(T) == (bytes), #T " changed")
#define MTC_PTR_ARRAY_ARG(T, bytes, field) static_assert(sizeof(T) == (bytes), #T " changed")
#endif

#endif /* MT_CUDA_COMPAT_H */

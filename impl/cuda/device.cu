/* device.cu - the CUDA backend's device memory, launch checks and device
 * probe (cuda_compat.h); in the emulation (MT_CUDA_EMU) the same calls on
 * host memory. Every CUDA failure becomes a status with CUDA's message
 * (spec/cuda-backend.md "Contract"), never an abort. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_compat.h"

#ifndef MT_CUDA_EMU
#include <cub/device/device_radix_sort.cuh>
#include <cuda_runtime.h>
#include <sys/wait.h>
#include <unistd.h>
#else
#include <errno.h>
#include <sys/mman.h>
#include <unistd.h>

#include "cub_emu.h"
#endif

#define ALIGN ((size_t)256)

/* The emulation follows each buffer with a guard (GUARD bytes, and the
 * buffer's own rounding up to ALIGN), filled with a canary that no
 * element of the 0xff poison or of a result is expected to repeat; every
 * launch and library call ends with the guards checked (emu_guards): a
 * kernel that writes past its buffer, which on a GPU would land in the
 * next buffer of the same allocation where no memcheck sees it, is the
 * case's DEVICE_ERROR here. */
#ifdef MT_CUDA_EMU
#define GUARD ALIGN
#define CANARY 0xa5
#else
#define GUARD ((size_t)0)
#endif

extern "C" int MTC(arena_add)(size_t *total, int64_t n, size_t size) {
  if (n < 0 || (n > 0 && (uint64_t)n > (SIZE_MAX - ALIGN - GUARD) / size)) return -1;
  size_t b = ((size_t)n * size + ALIGN - 1) / ALIGN * ALIGN + GUARD;
  if (*total > SIZE_MAX - b) return -1;
  *total += b;
  return 0;
}

extern "C" void *MTC(arena_take)(mtc_arena *a, int64_t n, size_t size) {
  size_t b = ((size_t)n * size + ALIGN - 1) / ALIGN * ALIGN + GUARD;
  char *p = a->base + a->used;
  a->used += b;
#ifdef MT_CUDA_EMU
  if (a->used > a->size) { /* more taken than arena_add counted: reported at the next check */
    a->overrun = 1;
    return p;
  }
  if (a->n_guards < MTC_EMU_GUARDS) {
    size_t at = (size_t)(p - a->base) + (size_t)n * size;
    a->guard_at[a->n_guards] = at;
    a->guard_len[a->n_guards++] = b - (size_t)n * size;
    MTC(emu_reach)(a, 1);
    memset(a->base + at, CANARY, b - (size_t)n * size);
    MTC(emu_reach)(a, 0);
  }
#endif
  return p;
}

extern "C" unsigned MTC(blocks)(int64_t n) {
  int64_t b = (n + MTC_THREADS - 1) / MTC_THREADS;
  return b < 1 ? 1u : b > 65535 ? 65535u : (unsigned)b;
}

extern "C" int MTC(key_bits)(int64_t max_key) {
  int b = 1;
  while (b < 63 && (max_key >> b) > 0) b++;
  return b;
}

#ifdef MT_CUDA_EMU

extern "C" mt_status MTC(sort_bytes)(const mtc_arena *a, int64_t n, int end_bit, size_t *bytes,
                                     mt_error *err) {
  (void)a, (void)end_bit, (void)err;
  mt_emu_sort_pairs<int64_t, int64_t>(NULL, *bytes, NULL, NULL, NULL, NULL, n, 0, 64);
  return MT_OK;
}
extern "C" mt_status MTC(sort_pairs)(const mtc_arena *a, void *tmp, size_t tmp_bytes,
                                     const int64_t *kin, int64_t *kout, const int64_t *vin,
                                     int64_t *vout, int64_t n, int end_bit, mt_error *err) {
  if (n > 0 && MTC(emu_args)(a, "radix sort", mtc_emu_args(a, tmp, kin, kout, vin, vout), err))
    return MT_DEVICE_ERROR;
  MTC(emu_reach)(a, 1);
  int bad = mt_emu_sort_pairs(tmp, tmp_bytes, kin, kout, vin, vout, n, 0, end_bit);
  MTC(emu_reach)(a, 0);
  if (bad)
    return mt_err(err, MT_DEVICE_ERROR, "%s: emulated radix sort of %lld pairs, %d key bits, "
                  "%zu bytes of storage: invalid argument", a->what, (long long)n, end_bit,
                  tmp_bytes);
  return MTC(launched)(a, "radix sort", err);
}

/* The emulation's device memory is pages of its own (mmap), out of the
 * host code's reach (PROT_NONE) except while a kernel, a transfer or an
 * emulated library call runs on it (emu_reach): host code that reads or
 * writes device memory, which works here and crashes on a GPU, crashes here
 * too (the runner's case process isolates it: CRASH). */
static size_t emu_pages(size_t size) {
  size_t pg = (size_t)sysconf(_SC_PAGESIZE);
  return (size + pg - 1) / pg * pg;
}
extern "C" void MTC(emu_reach)(const mtc_arena *a, int on) {
  for (; a; a = a->also)
    if (a->base) mprotect(a->base, emu_pages(a->size), on ? PROT_READ | PROT_WRITE : PROT_NONE);
}

/* MTCS_EMU_ORDER (cuda_compat.h, MTC_FOR): 0 reverse (unset too), 1
 * forward, 2 shuffle with *seed; -1 another value. */
static int emu_order_mode(uint64_t *seed) {
  const char *v = getenv("MTCS_EMU_ORDER");
  char *end = NULL;
  *seed = 0;
  if (!v || !*v || !strcmp(v, "reverse")) return 0;
  if (!strcmp(v, "forward")) return 1;
  if (!strcmp(v, "shuffle")) return 2;
  if (!strncmp(v, "shuffle:", 8) && v[8] >= '0' && v[8] <= '9') {
    errno = 0;
    *seed = strtoull(v + 8, &end, 10);
    if (errno == 0 && *end == '\0') return 2;
  }
  return -1;
}
extern "C" int64_t MTC(emu_order)(int64_t n, int64_t *b) {
  uint64_t seed;
  int mode = emu_order_mode(&seed);
  *b = 0;
  if (mode <= 0 || n <= 0) return -1; /* reverse (and a bad value, refused earlier) */
  if (mode == 1) return 1;
  /* primes above 2^31: none divides an n below it; the next one otherwise */
  static const uint64_t primes[] = {2147483659u, 2654435761u, 4294967291u, 1000000000039u};
  uint64_t pick = seed % 4, a = primes[pick];
  for (int t = 0; t < 4 && (uint64_t)n % a == 0; t++) a = primes[(pick + 1 + t) % 4];
  *b = (int64_t)((seed * 0x9E3779B97F4A7C15ull + 0x2545F4914F6CDD1Dull) % (uint64_t)n);
  return (int64_t)(a % (uint64_t)n ? a % (uint64_t)n : 1);
}

extern "C" mt_status MTC(arena_open)(mtc_arena *a, size_t size, const char *what, mt_error *err) {
  uint64_t seed;
  memset(a, 0, sizeof *a);
  a->what = what;
  if (emu_order_mode(&seed) < 0)
    return mt_err(err, MT_INVALID_ARGUMENT,
                  "%s: MTCS_EMU_ORDER='%s': expected reverse (the default), forward, shuffle "
                  "or shuffle:SEED (digits)",
                  what, getenv("MTCS_EMU_ORDER"));
  if (size == 0) return MT_OK;
#if MT_CUDA_EMU_FAULT == 4 /* tests/cuda_emu_faults.cmake: the device out of memory */
  return mt_err(err, MT_OUT_OF_MEMORY, "%s: emulated cudaMalloc of %zu bytes: out of memory (fault 4)",
                what, size);
#endif
  void *p = mmap(NULL, emu_pages(size), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED)
    return mt_err(err, MT_OUT_OF_MEMORY, "%s: emulated cudaMalloc of %zu bytes failed", what, size);
  memset(p, 0xff, size);
  a->base = (char *)p;
  a->size = size;
  MTC(emu_reach)(a, 0);
  return MT_OK;
}
extern "C" void MTC(arena_close)(mtc_arena *a) {
  if (a->base) munmap(a->base, emu_pages(a->size));
  memset(a, 0, sizeof *a);
}
/* p inside a's allocation or one chained to it (also); one past the end
 * counts (an empty buffer taken last) */
extern "C" int MTC(emu_in)(const mtc_arena *a, const void *p) {
  for (; a; a = a->also)
    if (a->base && (const char *)p >= a->base && (const char *)p <= a->base + a->size) return 1;
  return 0;
}
extern "C" int MTC(emu_args)(const mtc_arena *a, const char *kernel, int bad, mt_error *err) {
  if (!bad) return 0;
  mt_err(err, MT_DEVICE_ERROR, "%s: %s: argument %d points outside the call's device memory "
         "(a host pointer handed to a kernel: a GPU would fault; the emulation's check)",
         a->what, kernel, bad);
  return 1;
}
/* a transfer's device range inside the call's memory, its host side outside it (the
 * arguments swapped, or a device-to-device copy, would fail or misbehave on a GPU) */
static mt_status emu_xfer(const mtc_arena *a, const char *dir, const void *dev, const void *host,
                          size_t bytes, mt_error *err) {
  if (!bytes) return MT_OK;
  if (!MTC(emu_in)(a, dev) || !MTC(emu_in)(a, (const char *)dev + bytes))
    return mt_err(err, MT_DEVICE_ERROR, "%s: emulated cudaMemcpy %s of %zu bytes: the device "
                  "side is not (wholly) the call's device memory", a->what, dir, bytes);
  if (MTC(emu_in)(a, host))
    return mt_err(err, MT_DEVICE_ERROR, "%s: emulated cudaMemcpy %s of %zu bytes: the host "
                  "side is device memory", a->what, dir, bytes);
  return MT_OK;
}
extern "C" mt_status MTC(upload)(const mtc_arena *a, void *dev, const void *host, size_t bytes,
                                 mt_error *err) {
  mt_status st = emu_xfer(a, "host to device", dev, host, bytes, err);
  if (st != MT_OK) return st;
#if MT_CUDA_EMU_FAULT == 2 /* tests/cuda_emu_faults.cmake: an upload forgotten */
  (void)dev, (void)host, (void)bytes;
#else
  MTC(emu_reach)(a, 1);
  if (bytes) memcpy(dev, host, bytes);
  MTC(emu_reach)(a, 0);
#endif
  return MT_OK;
}
extern "C" mt_status MTC(download)(const mtc_arena *a, void *host, const void *dev, size_t bytes,
                                   mt_error *err) {
  mt_status st = emu_xfer(a, "device to host", dev, host, bytes, err);
  if (st != MT_OK) return st;
  MTC(emu_reach)(a, 1);
  if (bytes) memcpy(host, dev, bytes);
  MTC(emu_reach)(a, 0);
  return MT_OK;
}
/* every guard of a (and of those chained to it) intact, else DEVICE_ERROR
 * naming what ran last and the buffer it overran */
static mt_status emu_guards(const mtc_arena *a, const char *kernel, mt_error *err) {
  mt_status st = MT_OK;
  MTC(emu_reach)(a, 1);
  for (const mtc_arena *x = a; x && st == MT_OK; x = x->also) {
    if (x->overrun) {
      st = mt_err(err, MT_DEVICE_ERROR, "%s: more buffers taken from the device allocation "
                  "than its size counted (%zu of %zu bytes; the emulation's check)", x->what,
                  x->used, x->size);
      break;
    }
    for (int g = 0; g < x->n_guards && st == MT_OK; g++)
      for (size_t i = 0; i < x->guard_len[g]; i++)
        if ((unsigned char)x->base[x->guard_at[g] + i] != CANARY) {
          st = mt_err(err, MT_DEVICE_ERROR, "%s: %s wrote past the end of device buffer %d "
                      "(byte %zu after it; the emulation's guard: on a GPU the write lands in "
                      "the next buffer)", x->what, kernel, g, i + 1);
          break;
        }
  }
  MTC(emu_reach)(a, 0);
  return st;
}
#ifdef MT_CUDA_EMU_RACE
/* The race check (cuda_compat.h, tests/race/): a launch's device memory is
 * its arena and those chained to it. */
extern "C" void MTC(emu_race_begin)(const mtc_arena *a, const char *kernel) {
  mt_race_begin(kernel);
  for (; a; a = a->also) { /* and the guards after its buffers: a read there is past an end */
    mt_race_range(a->base, a->size);
    for (int g = 0; g < a->n_guards; g++) mt_race_guard(a->base + a->guard_at[g], a->guard_len[g]);
  }
}
/* the buffer of a holding byte off: the g-th taken, its guard after it */
static int emu_buffer_of(const mtc_arena *a, size_t off, size_t *in) {
  size_t start = 0;
  for (int g = 0; g < a->n_guards; g++) {
    if (off < a->guard_at[g] + a->guard_len[g]) {
      *in = off - start;
      return g;
    }
    start = a->guard_at[g] + a->guard_len[g];
  }
  *in = off;
  return -1;
}
/* the last launch's first race, as the case's DEVICE_ERROR */
static mt_status emu_race(const mtc_arena *a, mt_error *err) {
  mt_race_found f;
  char who[48], whom[48];
  size_t in = 0;
  if (!mt_race_take(&f)) return MT_OK;
  for (int r = 0; r < f.range && a; r++) a = a->also;
  int g = a ? emu_buffer_of(a, f.offset, &in) : -1;
  if (f.guard && g >= 0) { /* between buffer g's end and buffer g + 1's start */
    size_t next = a->guard_at[g] + a->guard_len[g];
    return mt_err(err, MT_DEVICE_ERROR, "%s: %s: %s %s byte %zu past the end of device buffer "
                  "%d, %zu before the start of buffer %d (the emulation's guard, tests/race/: "
                  "on a GPU that memory is another buffer's, and no memcheck sees it)", a->what,
                  f.kernel, mt_race_who(f.thread, who, sizeof who), f.does,
                  f.offset - a->guard_at[g] + 1, g, next - f.offset, g + 1);
  }
  return mt_err(err, MT_DEVICE_ERROR, "%s: %s: a race between the threads of one launch: %s "
                "%s byte %zu of device buffer %d, which %s %s (the emulation's race check, "
                "tests/race/: on a GPU the result depends on their timing)",
                a ? a->what : "?", f.kernel, mt_race_who(f.thread, who, sizeof who), f.does, in,
                g, mt_race_who(f.other, whom, sizeof whom), f.did);
}
#endif
extern "C" mt_status MTC(launched)(const mtc_arena *a, const char *kernel, mt_error *err) {
#if MT_CUDA_EMU_FAULT == 5 /* tests/cuda_emu_faults.cmake: every launch fails */
  (void)emu_guards;
  return mt_err(err, MT_DEVICE_ERROR, "%s: %s: emulated launch failure (fault 5)", a->what, kernel);
#else
  mt_status st = emu_guards(a, kernel, err);
#ifdef MT_CUDA_EMU_RACE
  if (st == MT_OK) st = emu_race(a, err);
#endif
  return st;
#endif
}
extern "C" int MTC(unavailable)(char *why, size_t why_len) {
  (void)why, (void)why_len;
  return 0;
}

#else /* the device */

static mt_status cuda_fail(const mtc_arena *a, cudaError_t e, const char *call, mt_error *err) {
  return mt_err(err, e == cudaErrorMemoryAllocation ? MT_OUT_OF_MEMORY : MT_DEVICE_ERROR,
                "%s: %s: %s (%s)", a->what, call, cudaGetErrorString(e), cudaGetErrorName(e));
}

extern "C" mt_status MTC(arena_open)(mtc_arena *a, size_t size, const char *what, mt_error *err) {
  memset(a, 0, sizeof *a);
  a->what = what;
  if (size == 0) return MT_OK;
  void *p = NULL;
  cudaError_t e = cudaMalloc(&p, size);
  if (e != cudaSuccess) {
    char call[64];
    snprintf(call, sizeof call, "cudaMalloc of %zu bytes", size);
    return cuda_fail(a, e, call, err);
  }
  a->base = (char *)p;
  a->size = size;
  if ((e = cudaMemset(p, 0xff, size)) != cudaSuccess) {
    mt_status st = cuda_fail(a, e, "cudaMemset", err);
    MTC(arena_close)(a);
    return st;
  }
  return MT_OK;
}
extern "C" void MTC(arena_close)(mtc_arena *a) {
  if (a->base) cudaFree(a->base);
  memset(a, 0, sizeof *a);
}
extern "C" mt_status MTC(upload)(const mtc_arena *a, void *dev, const void *host, size_t bytes,
                                 mt_error *err) {
  if (!bytes) return MT_OK;
  cudaError_t e = cudaMemcpy(dev, host, bytes, cudaMemcpyHostToDevice);
  return e == cudaSuccess ? MT_OK : cuda_fail(a, e, "cudaMemcpy host to device", err);
}
extern "C" mt_status MTC(download)(const mtc_arena *a, void *host, const void *dev, size_t bytes,
                                   mt_error *err) {
  if (!bytes) return MT_OK;
  cudaError_t e = cudaMemcpy(host, dev, bytes, cudaMemcpyDeviceToHost);
  return e == cudaSuccess ? MT_OK : cuda_fail(a, e, "cudaMemcpy device to host", err);
}
extern "C" mt_status MTC(launched)(const mtc_arena *a, const char *kernel, mt_error *err) {
  char call[96];
  cudaError_t e = cudaGetLastError();
  if (e != cudaSuccess) {
    snprintf(call, sizeof call, "launch of %s", kernel);
    return cuda_fail(a, e, call, err);
  }
  if ((e = cudaDeviceSynchronize()) != cudaSuccess) {
    snprintf(call, sizeof call, "%s", kernel);
    return cuda_fail(a, e, call, err);
  }
  return MT_OK;
}

extern "C" mt_status MTC(sort_bytes)(const mtc_arena *a, int64_t n, int end_bit, size_t *bytes,
                                     mt_error *err) {
  *bytes = 0;
  cudaError_t e = cub::DeviceRadixSort::SortPairs(NULL, *bytes, (const int64_t *)NULL,
                                                  (int64_t *)NULL, (const int64_t *)NULL,
                                                  (int64_t *)NULL, n, 0, end_bit);
  return e == cudaSuccess ? MT_OK : cuda_fail(a, e, "radix sort (its storage size)", err);
}
extern "C" mt_status MTC(sort_pairs)(const mtc_arena *a, void *tmp, size_t tmp_bytes,
                                     const int64_t *kin, int64_t *kout, const int64_t *vin,
                                     int64_t *vout, int64_t n, int end_bit, mt_error *err) {
  cudaError_t e = cub::DeviceRadixSort::SortPairs(tmp, tmp_bytes, kin, kout, vin, vout, n, 0,
                                                  end_bit);
  if (e != cudaSuccess) return cuda_fail(a, e, "radix sort", err);
  return MTC(launched)(a, "radix sort", err);
}

/* What the probe child reports. */
typedef struct {
  int err; /* cudaError_t */
  int count;
  char msg[160];
} probe_msg;

static void probe_here(probe_msg *m) {
  memset(m, 0, sizeof *m);
  cudaError_t e = cudaGetDeviceCount(&m->count);
  m->err = (int)e;
  if (e != cudaSuccess) snprintf(m->msg, sizeof m->msg, "%s", cudaGetErrorString(e));
}

extern "C" int MTC(unavailable)(char *why, size_t why_len) {
  probe_msg m;
  int fds[2] = {-1, -1};
  pid_t pid = -1;
  if (pipe(fds) == 0) pid = fork();
  else fds[0] = fds[1] = -1;
  if (pid == 0) {
    close(fds[0]);
    probe_here(&m);
    ssize_t w = write(fds[1], &m, sizeof m);
    _exit(w == (ssize_t)sizeof m ? 0 : 1);
  }
  if (pid < 0) { /* no child: probe here (this process's forks then lose CUDA) */
    if (pid == -1 && fds[0] >= 0) {
      close(fds[0]);
      close(fds[1]);
    }
    probe_here(&m);
  } else {
    close(fds[1]);
    size_t got = 0;
    while (got < sizeof m) {
      ssize_t r = read(fds[0], (char *)&m + got, sizeof m - got);
      if (r <= 0) break;
      got += (size_t)r;
    }
    close(fds[0]);
    int status = 0;
    waitpid(pid, &status, 0);
    if (got != sizeof m) {
      snprintf(why, why_len, "the CUDA device probe process died before answering");
      return 1;
    }
  }
  if (m.err != (int)cudaSuccess) {
    snprintf(why, why_len, "no CUDA device (%s)", m.msg);
    return 1;
  }
  if (m.count == 0) {
    snprintf(why, why_len, "no CUDA device");
    return 1;
  }
  return 0;
}

#endif

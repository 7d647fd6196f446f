/* race.h - the emulation's race check (tests/race/README.md).
 *
 * On a GPU the threads of one launch run in no defined order, so two of
 * them that touch the same byte of device memory, one of them writing and
 * not both through an atomic, race: a lost update of a `+=`, a read that
 * sees the other's write or not. The emulation runs the threads one after
 * the other, where such a kernel gives a right answer in every order that
 * a serial run can take. So the emulated sources are compiled a second time
 * with GCC's ThreadSanitizer instrumentation (-fsanitize=thread
 * at compile time only: every load and store calls __tsan_readN /
 * __tsan_writeN), and race.c, not ThreadSanitizer's runtime, implements
 * those calls, as the Linux kernel's KCSAN does: between mt_race_begin and
 * mt_race_end (one launch) every access to a registered range of device
 * memory is recorded per byte with the emulated thread that made it
 * (mt_race_thread), and the first pair of threads that conflict is kept
 * for mt_race_take. Accesses outside a launch, and outside the registered
 * ranges (the stack, the kernel's arguments, host memory), are ignored. */
#ifndef MT_RACE_H
#define MT_RACE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The thread index of code a kernel runs outside its per-thread loop: on
 * a GPU every thread of the grid runs it. */
#define MT_RACE_EVERY ((int64_t)-1)

/* A launch of kernel (a static string) starts: nothing registered, the
 * running thread MT_RACE_EVERY. */
void mt_race_begin(const char *kernel);
/* The launch's device memory includes [base, base + len): its accesses are
 * checked. At most MT_RACE_RANGES ranges; more are ignored. */
#define MT_RACE_RANGES 16
void mt_race_range(const void *base, size_t len);
/* [p, p + len) of a registered range belongs to no buffer (the emulation's
 * guard after one): any access to it in this launch is reported, a read
 * as well as a write (one element past the end of an input, read before a
 * bounds check, is another buffer's on a GPU, and no memcheck sees it). */
void mt_race_guard(const void *p, size_t len);
/* The emulated thread now running: its index in the grid, or
 * MT_RACE_EVERY. */
void mt_race_thread(int64_t t);
/* The launch has ended: accesses are no longer recorded. */
void mt_race_end(void);
/* *p = min(*p, v) as CUDA's atomicMin: an atomic access, which races only
 * with a plain access of another thread. */
void mt_race_atomic_min_u64(uint64_t *p, uint64_t v);

/* The first race of the last launch: thread `thread` made access `does`
 * ("writes", "reads", "updates atomically") to byte `offset` of range
 * `range` (the order of mt_race_range), which thread `other` had made
 * access `did` to ("wrote", "read", "updated atomically"); or, when
 * `guard`, byte `offset` is a guard's (mt_race_guard; other and did
 * unset). */
typedef struct mt_race_found {
  const char *kernel, *does, *did;
  int range, guard;
  size_t offset;
  int64_t thread, other;
} mt_race_found;
/* 1 and *f when the last launch raced (and forgets it), else 0. */
int mt_race_take(mt_race_found *f);
/* "thread 3" or "every thread" (MT_RACE_EVERY) into buf */
const char *mt_race_who(int64_t t, char *buf, size_t len);

#ifdef __cplusplus
}
#endif

#endif /* MT_RACE_H */

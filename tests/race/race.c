/* race.c - the emulation's race check: the calls that ThreadSanitizer's
 * instrumentation makes, implemented here instead of by its runtime
 * (race.h; tests/race/README.md). This file itself is compiled without the
 * instrumentation.
 *
 * Each byte of a registered range has a cell: the launch (epoch) it was
 * last touched in, and the thread that wrote it, that read it and that
 * updated it atomically in that launch (NONE, one thread, or SOME: more
 * than one). A cell of an older launch is untouched. Two accesses of one
 * launch conflict when they come from different threads, touch the same
 * byte, at least one writes, and not both are atomic. A byte of a guard
 * (mt_race_guard: between the buffers of an arena) is any access's error.
 *
 * The instrumentation's calls carry no context, only the address; the
 * state they update is therefore this file's, one per OS thread (the
 * emulation runs a launch on the thread that called it): the one mutable
 * state of the suite outside an object, and only in this test plugin. */
#include "race/race.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { NONE = 0, EVERY = -1, SOME = -2, GUARD = -3 /* w of a guard's byte */ };
#define MAX_THREAD ((int64_t)INT32_MAX - 2) /* threads beyond are not checked */

typedef struct cell {
  uint32_t epoch;
  int32_t w, r, at; /* NONE, EVERY, SOME, or thread + 1 */
} cell;

typedef struct range {
  uintptr_t base;
  size_t len, cap; /* cap: cells allocated */
  cell *cells;
} range;

typedef struct state {
  int active;     /* inside a launch */
  int skip;       /* the running thread is beyond MAX_THREAD */
  int32_t thread; /* the running thread, encoded */
  uint32_t epoch;
  int n;
  range r[MT_RACE_RANGES];
  int found;
  mt_race_found f;
  const char *kernel;
} state;

static _Thread_local state S;

static int64_t decode(int32_t c) {
  return c == EVERY ? MT_RACE_EVERY : c == SOME ? (int64_t)-2 : (int64_t)c - 1;
}

/* x conflicts with the running thread's access: made by another thread
 * (every thread conflicts with every thread) */
static int other(int32_t x, int32_t t) {
  return x != NONE && (x != t || t == EVERY);
}

static void report(int ri, size_t off, const char *does, const char *did, int32_t who) {
  if (S.found) return;
  S.found = 1;
  S.f.guard = who == GUARD;
  S.f.kernel = S.kernel;
  S.f.does = does;
  S.f.did = did;
  S.f.range = ri;
  S.f.offset = off;
  S.f.thread = decode(S.thread);
  S.f.other = decode(who);
}

enum { READ, WRITE, ATOMIC };

static void touch(const void *addr, size_t n, int kind) {
  if (!S.active || S.skip) return;
  uintptr_t a = (uintptr_t)addr;
  for (int ri = 0; ri < S.n; ri++) {
    range *R = &S.r[ri];
    if (a + n <= R->base || a >= R->base + R->len) continue;
    size_t lo = a < R->base ? 0 : a - R->base;
    size_t hi = a + n - R->base < R->len ? a + n - R->base : R->len;
    int32_t t = S.thread;
    for (size_t o = lo; o < hi; o++) {
      cell *c = &R->cells[o];
      if (c->epoch != S.epoch) {
        c->epoch = S.epoch;
        c->w = c->r = c->at = NONE;
      }
      if (c->w == GUARD) {
        report(ri, o, kind == READ ? "reads" : kind == WRITE ? "writes" : "updates atomically",
               NULL, GUARD);
        continue;
      }
      if (kind == READ) {
        if (other(c->w, t)) report(ri, o, "reads", "wrote", c->w);
        else if (other(c->at, t)) report(ri, o, "reads", "updated atomically", c->at);
        c->r = c->r == NONE || c->r == t ? t : SOME;
      } else if (kind == WRITE) {
        if (t == EVERY) report(ri, o, "writes", "writes", EVERY);
        else if (other(c->w, t)) report(ri, o, "writes", "wrote", c->w);
        else if (other(c->r, t)) report(ri, o, "writes", "read", c->r);
        else if (other(c->at, t)) report(ri, o, "writes", "updated atomically", c->at);
        c->w = t;
      } else {
        if (other(c->w, t)) report(ri, o, "updates atomically", "wrote", c->w);
        else if (other(c->r, t)) report(ri, o, "updates atomically", "read", c->r);
        c->at = c->at == NONE || c->at == t ? t : SOME;
      }
    }
  }
}

void mt_race_begin(const char *kernel) {
  S.active = 1;
  S.skip = 0;
  S.thread = EVERY;
  S.epoch++;
  S.n = 0;
  S.found = 0;
  S.kernel = kernel;
}

void mt_race_range(const void *base, size_t len) {
  if (S.n >= MT_RACE_RANGES) return;
  range *R = &S.r[S.n];
  if (!base) len = 0; /* an empty range still takes its index: reports count calls */
  if (R->cap < len) {
    cell *c = (cell *)calloc(len, sizeof *c);
    if (!c) { /* the check cannot run: say so, as a failed launch would */
      fprintf(stderr, "race check: cannot allocate %zu cells for %s\n", len, S.kernel);
      abort();
    }
    free(R->cells);
    R->cells = c;
    R->cap = len;
  }
  R->base = (uintptr_t)base;
  R->len = len;
  S.n++;
}

void mt_race_guard(const void *p, size_t len) {
  uintptr_t a = (uintptr_t)p;
  for (int ri = 0; ri < S.n; ri++) {
    range *R = &S.r[ri];
    if (a < R->base || a >= R->base + R->len) continue;
    size_t lo = a - R->base, hi = lo + len < R->len ? lo + len : R->len;
    for (size_t o = lo; o < hi; o++) {
      R->cells[o].epoch = S.epoch;
      R->cells[o].w = GUARD;
      R->cells[o].r = R->cells[o].at = NONE;
    }
  }
}

void mt_race_thread(int64_t t) {
  S.skip = t > MAX_THREAD;
  S.thread = t < 0 ? EVERY : (int32_t)(t + 1);
}

void mt_race_end(void) {
  S.active = 0;
}

void mt_race_atomic_min_u64(uint64_t *p, uint64_t v) {
  touch(p, sizeof *p, ATOMIC);
  if (v < *p) *p = v;
}

int mt_race_take(mt_race_found *f) {
  if (!S.found) return 0;
  *f = S.f;
  S.found = 0;
  return 1;
}

const char *mt_race_who(int64_t t, char *buf, size_t len) {
  if (t == MT_RACE_EVERY) snprintf(buf, len, "every thread");
  else if (t < 0) snprintf(buf, len, "more than one other thread");
  else snprintf(buf, len, "thread %lld", (long long)t);
  return buf;
}

/* ---- the instrumentation's calls ------------------------------------------ */
#define MT_TSAN_SIZED(n)                                                             \
  void __tsan_read##n(void *p) { touch(p, n, READ); }                                \
  void __tsan_write##n(void *p) { touch(p, n, WRITE); }                              \
  void __tsan_unaligned_read##n(void *p) { touch(p, n, READ); }                      \
  void __tsan_unaligned_write##n(void *p) { touch(p, n, WRITE); }                    \
  void __tsan_volatile_read##n(void *p) { touch(p, n, READ); }                       \
  void __tsan_volatile_write##n(void *p) { touch(p, n, WRITE); }
/* the declarations the definitions need under -Wmissing-prototypes */
#define MT_TSAN_DECL(n)                                                              \
  void __tsan_read##n(void *p);                                                      \
  void __tsan_write##n(void *p);                                                     \
  void __tsan_unaligned_read##n(void *p);                                            \
  void __tsan_unaligned_write##n(void *p);                                           \
  void __tsan_volatile_read##n(void *p);                                             \
  void __tsan_volatile_write##n(void *p);
MT_TSAN_DECL(1)
MT_TSAN_DECL(2)
MT_TSAN_DECL(4)
MT_TSAN_DECL(8)
MT_TSAN_DECL(16)
void __tsan_read_range(void *p, unsigned long n);
void __tsan_write_range(void *p, unsigned long n);
void __tsan_init(void);
void __tsan_func_entry(void *pc);
void __tsan_func_exit(void);
void __tsan_vptr_update(void **vp, void *v);
void __tsan_vptr_read(void **vp);

MT_TSAN_SIZED(1)
MT_TSAN_SIZED(2)
MT_TSAN_SIZED(4)
MT_TSAN_SIZED(8)
MT_TSAN_SIZED(16)
void __tsan_read_range(void *p, unsigned long n) { touch(p, n, READ); }
void __tsan_write_range(void *p, unsigned long n) { touch(p, n, WRITE); }
void __tsan_init(void) {}
void __tsan_func_entry(void *pc) { (void)pc; }
void __tsan_func_exit(void) {}
void __tsan_vptr_update(void **vp, void *v) { (void)vp, (void)v; }
void __tsan_vptr_read(void **vp) { (void)vp; }

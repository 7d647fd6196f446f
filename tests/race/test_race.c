/* test_race.c - the race check's runtime (race.c) and the instrumentation
 * that feeds it (probe.cc, compiled with the race check's flags): each rule
 * of race.h on accesses made directly, then kernels that race and kernels
 * that do not, as the compiler instruments them. Every expected verdict is
 * derived by hand from the rule named in the test. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "mt_test.h"
#include "race/probe.h"
#include "race/race.h"

/* the instrumentation's calls (race.c defines them) */
void __tsan_read8(void *p);
void __tsan_write8(void *p);
void __tsan_write4(void *p);
void __tsan_read1(void *p);

static double dev[64];

static void launch(const char *kernel) {
  mt_race_begin(kernel);
  mt_race_range(dev, sizeof dev);
}

TEST(a_thread_may_read_and_write_its_own_bytes) {
  mt_race_found f;
  launch("own");
  for (int64_t t = 0; t < 8; t++) {
    mt_race_thread(t);
    __tsan_read8(&dev[t]);
    __tsan_write8(&dev[t]);
    __tsan_read8(&dev[t]);
  }
  mt_race_end();
  CHECK_EQ_INT(mt_race_take(&f), 0);
}

TEST(two_threads_writing_one_byte_race) {
  mt_race_found f;
  char who[48];
  launch("waw");
  mt_race_thread(3);
  __tsan_write8(&dev[5]);
  mt_race_thread(7);
  __tsan_write4((char *)&dev[5] + 4); /* bytes 44..47 of the range: bytes 4..7 of dev[5] */
  mt_race_end();
  CHECK_EQ_INT(mt_race_take(&f), 1);
  CHECK(!strcmp(f.kernel, "waw"));
  CHECK(!strcmp(f.does, "writes") && !strcmp(f.did, "wrote"));
  CHECK_EQ_INT(f.thread, 7);
  CHECK_EQ_INT(f.other, 3);
  CHECK_EQ_INT(f.range, 0);
  CHECK_EQ_INT(f.offset, 44);
  CHECK_HAS(mt_race_who(f.other, who, sizeof who), "thread 3");
  CHECK_EQ_INT(mt_race_take(&f), 0); /* taken once */
}

TEST(a_read_of_another_threads_write_races_in_either_order) {
  mt_race_found f;
  launch("raw");
  mt_race_thread(1);
  __tsan_write8(&dev[0]);
  mt_race_thread(2);
  __tsan_read8(&dev[0]);
  mt_race_end();
  CHECK_EQ_INT(mt_race_take(&f), 1);
  CHECK(!strcmp(f.does, "reads") && !strcmp(f.did, "wrote"));
  launch("war");
  mt_race_thread(2);
  __tsan_read8(&dev[0]);
  mt_race_thread(1);
  __tsan_write8(&dev[0]);
  mt_race_end();
  CHECK_EQ_INT(mt_race_take(&f), 1);
  CHECK(!strcmp(f.does, "writes") && !strcmp(f.did, "read"));
  CHECK_EQ_INT(f.thread, 1);
  CHECK_EQ_INT(f.other, 2);
}

TEST(many_readers_do_not_race_and_a_writer_after_them_does) {
  mt_race_found f;
  launch("readers");
  for (int64_t t = 0; t < 4; t++) {
    mt_race_thread(t);
    __tsan_read1(&dev[9]);
  }
  mt_race_end();
  CHECK_EQ_INT(mt_race_take(&f), 0);
  launch("readers then a writer"); /* thread 0 read it too: "more than one other" */
  for (int64_t t = 0; t < 4; t++) {
    mt_race_thread(t);
    __tsan_read1(&dev[9]);
  }
  mt_race_thread(0);
  __tsan_write8(&dev[9]);
  mt_race_end();
  CHECK_EQ_INT(mt_race_take(&f), 1);
  CHECK(f.other < 0 && f.other != MT_RACE_EVERY);
}

TEST(atomics_race_only_with_plain_accesses_of_other_threads) {
  mt_race_found f;
  uint64_t *u = (uint64_t *)&dev[20];
  launch("atomic min");
  *u = UINT64_MAX;
  for (int64_t t = 5; t >= 0; t--) {
    mt_race_thread(t);
    mt_race_atomic_min_u64(u, (uint64_t)(t + 10));
  }
  mt_race_end();
  CHECK_EQ_INT(mt_race_take(&f), 0);
  CHECK_EQ_INT(*u, 10);
  launch("atomic then a plain read");
  mt_race_thread(0);
  mt_race_atomic_min_u64(u, 1);
  mt_race_thread(1);
  __tsan_read8(u);
  mt_race_end();
  CHECK_EQ_INT(mt_race_take(&f), 1);
  CHECK(!strcmp(f.does, "reads") && !strcmp(f.did, "updated atomically"));
  launch("a plain write then an atomic");
  mt_race_thread(4);
  __tsan_write8(u);
  mt_race_thread(2);
  mt_race_atomic_min_u64(u, 1);
  mt_race_end();
  CHECK_EQ_INT(mt_race_take(&f), 1);
  CHECK(!strcmp(f.does, "updates atomically") && !strcmp(f.did, "wrote"));
}

TEST(a_write_outside_the_threads_loop_is_every_threads_race) {
  mt_race_found f;
  char who[48];
  launch("every");
  __tsan_read8(&dev[1]); /* reading there is fine: every thread reads the same */
  CHECK_EQ_INT(mt_race_take(&f), 0);
  __tsan_write8(&dev[2]);
  mt_race_end();
  CHECK_EQ_INT(mt_race_take(&f), 1);
  CHECK_EQ_INT(f.thread, MT_RACE_EVERY);
  CHECK_HAS(mt_race_who(f.thread, who, sizeof who), "every thread");
}

TEST(only_a_launchs_registered_memory_is_checked) {
  mt_race_found f;
  double host[2];
  launch("elsewhere");
  mt_race_thread(0);
  __tsan_write8(&host[0]);
  mt_race_thread(1);
  __tsan_write8(&host[0]); /* not device memory: the stack, an argument */
  mt_race_end();
  mt_race_thread(0);
  __tsan_write8(&dev[0]);
  mt_race_thread(1);
  __tsan_write8(&dev[0]); /* after the launch: host code */
  CHECK_EQ_INT(mt_race_take(&f), 0);
  launch("first");
  mt_race_thread(0);
  __tsan_write8(&dev[0]);
  mt_race_end();
  launch("second"); /* a new launch: thread 1 may write what thread 0 wrote before */
  mt_race_thread(1);
  __tsan_write8(&dev[0]);
  mt_race_end();
  CHECK_EQ_INT(mt_race_take(&f), 0);
}

TEST(a_report_names_its_range_by_registration_even_after_an_empty_one) {
  mt_race_found f;
  mt_race_begin("ranges");
  mt_race_range(NULL, 0); /* an arena of no bytes (emulation: base NULL) */
  mt_race_range(dev, sizeof dev);
  mt_race_thread(0);
  __tsan_write8(&dev[3]);
  mt_race_thread(1);
  __tsan_write8(&dev[3]);
  mt_race_end();
  CHECK_EQ_INT(mt_race_take(&f), 1);
  CHECK_EQ_INT(f.range, 1);
  CHECK_EQ_INT(f.offset, 24);
}

TEST(any_access_to_a_guard_is_reported) {
  mt_race_found f;
  launch("guarded");
  mt_race_guard(&dev[10], 16); /* dev[10] and dev[11]: between two buffers */
  mt_race_thread(0);
  __tsan_read8(&dev[9]);
  __tsan_read8(&dev[12]);
  CHECK_EQ_INT(mt_race_take(&f), 0);
  mt_race_thread(1);
  __tsan_read1((char *)&dev[11] + 7); /* a read alone: the canary check misses it */
  mt_race_end();
  CHECK_EQ_INT(mt_race_take(&f), 1);
  CHECK_EQ_INT(f.guard, 1);
  CHECK(!strcmp(f.does, "reads"));
  CHECK_EQ_INT(f.offset, 11 * 8 + 7);
  CHECK_EQ_INT(f.thread, 1);
  launch("unguarded"); /* the marks are the launch's */
  mt_race_thread(1);
  __tsan_read8(&dev[10]);
  mt_race_end();
  CHECK_EQ_INT(mt_race_take(&f), 0);
}

TEST(the_instrumented_kernels_race_where_a_gpu_would) {
  mt_race_found f;
  double in[8] = {1, 2, 3, 4, 5, 6, 7, 8};
  memcpy(dev, in, sizeof in);
  launch("map");
  mt_probe_map(dev + 8, dev, 8);
  mt_race_end();
  CHECK_EQ_INT(mt_race_take(&f), 0);
  CHECK_NEAR(dev[15], 16, 0);
  launch("sum"); /* out[0] += in[i]: threads 1.. read what thread 0 wrote */
  dev[16] = 0;
  mt_probe_sum(dev + 16, dev, 8);
  mt_race_end();
  CHECK_EQ_INT(mt_race_take(&f), 1);
  CHECK(!strcmp(f.kernel, "sum"));
  CHECK_EQ_INT(f.offset, 16 * 8);
  CHECK_EQ_INT(f.thread, 1);
  CHECK_EQ_INT(f.other, 0);
  CHECK_NEAR(dev[16], 36, 0); /* serially the sum is right: only the check sees it */
  launch("shift in place"); /* thread 0 reads dev[1], which thread 1 writes */
  mt_probe_shift((float *)dev, (const float *)dev, 16);
  mt_race_end();
  CHECK_EQ_INT(mt_race_take(&f), 1);
  CHECK(!strcmp(f.does, "writes") && !strcmp(f.did, "read"));
  launch("flag");
  mt_probe_flag((uint8_t *)dev, (uint8_t *)&dev[40], 8);
  mt_race_end();
  CHECK_EQ_INT(mt_race_take(&f), 1);
  CHECK_EQ_INT(f.offset, 40 * 8);
  launch("every");
  mt_probe_every((int64_t *)dev, 8);
  mt_race_end();
  CHECK_EQ_INT(mt_race_take(&f), 1);
  CHECK_EQ_INT(f.thread, MT_RACE_EVERY);
  launch("copy"); /* 32-byte structs, each thread its own: no race */
  mt_probe_copy((struct mt_probe_s *)&dev[32], (const struct mt_probe_s *)dev, 4);
  mt_race_end();
  CHECK_EQ_INT(mt_race_take(&f), 0);
  launch("overlapping copy"); /* thread 0 writes dev[2..5], which thread 1 reads */
  mt_probe_copy((struct mt_probe_s *)&dev[2], (const struct mt_probe_s *)dev, 2);
  mt_race_end();
  CHECK_EQ_INT(mt_race_take(&f), 1);
}

MT_TEST_MAIN(T(a_thread_may_read_and_write_its_own_bytes), T(two_threads_writing_one_byte_race),
             T(a_read_of_another_threads_write_races_in_either_order),
             T(many_readers_do_not_race_and_a_writer_after_them_does),
             T(atomics_race_only_with_plain_accesses_of_other_threads),
             T(a_write_outside_the_threads_loop_is_every_threads_race),
             T(only_a_launchs_registered_memory_is_checked),
             T(a_report_names_its_range_by_registration_even_after_an_empty_one),
             T(any_access_to_a_guard_is_reported),
             T(the_instrumented_kernels_race_where_a_gpu_would))

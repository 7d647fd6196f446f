/* test_emu_memory.c - the CUDA emulation's memory checks (impl/cuda/device.cu
 * under MT_CUDA_EMU): a transfer's device side must lie wholly in the call's
 * arena (or one chained to it through `also`, as cuSPARSE's SpGEMM result
 * is) and its host side outside it, as cudaMemcpy on a GPU needs; an
 * emulated kernel may read any host memory, so without these checks such
 * a mistake would pass CI and fail only on a device. Device memory is out
 * of the host code's reach between transfers and launches (a read of it
 * crashes, as on a GPU), and a guard follows each buffer. The launch-side check
 * (a host pointer handed to a kernel) is C++ (cuda_compat.h) and is proven
 * by fault 7 of cli.cuda_emu_faults. */
#define MT_CUDA_EMU 1
#include <stdint.h>
#include <string.h>

#include "cuda/cuda_compat.h"
#include "mt_test.h"
#include "read_faults.h"

TEST(transfers_stay_inside_the_call_s_device_memory) {
  mtc_arena a, b;
  mt_error e;
  char host[64];
  memset(host, 7, sizeof host);
  CHECK(mt_cuemu_arena_open(&a, 256, "test", &e) == MT_OK);
  CHECK(mt_cuemu_arena_open(&b, 256, "test", &e) == MT_OK);
  if (!a.base || !b.base) return;
  /* inside: fine, both ways; an empty transfer anywhere is no transfer */
  CHECK(mt_cuemu_upload(&a, a.base + 192, host, 64, &e) == MT_OK);
  CHECK(mt_cuemu_download(&a, host, a.base + 192, 64, &e) == MT_OK);
  CHECK(mt_cuemu_upload(&a, host, host, 0, &e) == MT_OK);
  /* past the end by one byte */
  CHECK(mt_cuemu_upload(&a, a.base + 193, host, 64, &e) == MT_DEVICE_ERROR);
  CHECK(strstr(e.msg, "not (wholly) the call's device memory") != NULL);
  /* the arguments swapped: the device side is host memory, the host side device memory */
  CHECK(mt_cuemu_download(&a, a.base, host, 64, &e) == MT_DEVICE_ERROR);
  CHECK(mt_cuemu_upload(&a, host, a.base, 64, &e) == MT_DEVICE_ERROR);
  /* another call's allocation is not this call's ... */
  CHECK(mt_cuemu_upload(&a, b.base, host, 64, &e) == MT_DEVICE_ERROR);
  /* ... unless chained to it */
  a.also = &b;
  CHECK(mt_cuemu_upload(&a, b.base, host, 64, &e) == MT_OK);
  CHECK(mt_cuemu_emu_in(&a, b.base + 256) == 1 && mt_cuemu_emu_in(&a, host) == 0);
  a.also = NULL;
  mt_cuemu_arena_close(&a);
  mt_cuemu_arena_close(&b);
}

/* Host code may not read device memory (a GPU's host would fault): outside
 * a transfer or launch the arena is unmapped for the host; upload and
 * download still reach it; emu_reach opens it for a launch's duration. */
TEST(host_code_cannot_read_device_memory) {
  mtc_arena a;
  mt_error e;
  char host[8] = {1, 2, 3, 4, 5, 6, 7, 8}, back[8] = {0};
  CHECK(mt_cuemu_arena_open(&a, 64, "test", &e) == MT_OK);
  if (!a.base) return;
  CHECK(mt_read_faults(a.base));
  CHECK(mt_cuemu_upload(&a, a.base, host, 8, &e) == MT_OK);
  CHECK(mt_cuemu_download(&a, back, a.base, 8, &e) == MT_OK);
  CHECK(memcmp(host, back, 8) == 0);
  CHECK(mt_read_faults(a.base)); /* closed again after the transfers */
  mt_cuemu_emu_reach(&a, 1);
  CHECK(!mt_read_faults(a.base) && a.base[7] == 8);
  mt_cuemu_emu_reach(&a, 0);
  CHECK(mt_read_faults(a.base));
  mt_cuemu_arena_close(&a);
}

/* Each buffer taken is followed by a guard that every launch's check
 * (launched) reads: a write one byte past buffer 0 (10 int64s: 80 bytes,
 * its guard from byte 80) is a DEVICE_ERROR naming the kernel and the
 * buffer; writing all of it is not. Taking more than arena_add counted is
 * reported too. */
TEST(writes_past_a_buffer_are_caught) {
  mtc_arena a;
  mt_error e;
  size_t total = 0;
  CHECK(mt_cuemu_arena_add(&total, 10, 8) == 0 && mt_cuemu_arena_add(&total, 3, 4) == 0);
  CHECK(mt_cuemu_arena_open(&a, total, "test", &e) == MT_OK);
  if (!a.base) return;
  char *b0 = (char *)mt_cuemu_arena_take(&a, 10, 8);
  char *b1 = (char *)mt_cuemu_arena_take(&a, 3, 4);
  CHECK(b1 > b0 + 80);
  mt_cuemu_emu_reach(&a, 1);
  memset(b0, 0, 80); /* all of buffer 0: fine */
  mt_cuemu_emu_reach(&a, 0);
  CHECK(mt_cuemu_launched(&a, "k", &e) == MT_OK);
  mt_cuemu_emu_reach(&a, 1);
  b0[80] = 0; /* one past */
  mt_cuemu_emu_reach(&a, 0);
  CHECK(mt_cuemu_launched(&a, "k", &e) == MT_DEVICE_ERROR);
  CHECK(strstr(e.msg, "k wrote past the end of device buffer 0 (byte 1 after it") != NULL);
  mt_cuemu_arena_close(&a);
  CHECK(mt_cuemu_arena_open(&a, total, "test", &e) == MT_OK);
  mt_cuemu_arena_take(&a, 10, 8);
  mt_cuemu_arena_take(&a, 3, 4);
  mt_cuemu_arena_take(&a, 1, 1); /* not counted */
  CHECK(mt_cuemu_launched(&a, "k", &e) == MT_DEVICE_ERROR);
  CHECK(strstr(e.msg, "more buffers taken") != NULL);
  mt_cuemu_arena_close(&a);
}

MT_TEST_MAIN(T(transfers_stay_inside_the_call_s_device_memory),
             T(host_code_cannot_read_device_memory), T(writes_past_a_buffer_are_caught))

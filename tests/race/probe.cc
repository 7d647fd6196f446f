/* probe.cc - kernels in the emulation's shape (one host function, a loop
 * over the threads saying which one runs), compiled with the race check's
 * instrumentation flags (CMakeLists.txt, mt_race_flags) for test_race.c:
 * the compiler must reach race.c's calls for the loads and stores it emits
 * (a double, a float, a byte, an int64, a struct's copy), or the race check
 * sees nothing. */
#include "race/probe.h"
#include "race/race.h"

void mt_probe_map(double *out, const double *in, int64_t n) {
  for (int64_t i = 0; i < n; i++) {
    mt_race_thread(i);
    out[i] = in[i] * 2;
  }
  mt_race_thread(MT_RACE_EVERY);
}
void mt_probe_sum(double *out, const double *in, int64_t n) {
  for (int64_t i = 0; i < n; i++) {
    mt_race_thread(i);
    out[0] += in[i];
  }
  mt_race_thread(MT_RACE_EVERY);
}
void mt_probe_shift(float *out, const float *in, int64_t n) {
  for (int64_t i = 0; i + 1 < n; i++) {
    mt_race_thread(i);
    out[i] = in[i + 1];
  }
  mt_race_thread(MT_RACE_EVERY);
}
void mt_probe_flag(uint8_t *b, uint8_t *flag, int64_t n) {
  for (int64_t i = 0; i < n; i++) {
    mt_race_thread(i);
    b[i] = 1;
    flag[0] = 1;
  }
  mt_race_thread(MT_RACE_EVERY);
}
void mt_probe_every(int64_t *out, int64_t n) {
  out[0] = n; /* every thread of a GPU's grid runs this store */
  for (int64_t i = 1; i < n; i++) {
    mt_race_thread(i);
    out[i] = i;
  }
  mt_race_thread(MT_RACE_EVERY);
}
void mt_probe_copy(mt_probe_s *out, const mt_probe_s *in, int64_t n) {
  for (int64_t i = 0; i < n; i++) {
    mt_race_thread(i);
    out[i] = in[i];
  }
  mt_race_thread(MT_RACE_EVERY);
}

/* probe.h - probe.cc's kernels, for test_race.c (each runs its emulated
 * threads in order, saying which one runs: mt_race_thread). */
#ifndef MT_RACE_PROBE_H
#define MT_RACE_PROBE_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif
/* out[i] = in[i] * 2: no race; out[0] += in[i]: every thread updates out[0] */
void mt_probe_map(double *out, const double *in, int64_t n);
void mt_probe_sum(double *out, const double *in, int64_t n);
/* out[i] = in[i + 1]: thread i reads what thread i + 1 writes when in == out */
void mt_probe_shift(float *out, const float *in, int64_t n);
/* b[i] = 1 for each i, then every thread writes flag[0] = 1 (a "benign" race) */
void mt_probe_flag(uint8_t *b, uint8_t *flag, int64_t n);
/* outside the per-thread loop: the code every thread of a grid runs */
void mt_probe_every(int64_t *out, int64_t n);
/* a 32-byte struct copied by each thread i to out[i] from in[i] */
struct mt_probe_s {
  double v[4];
};
void mt_probe_copy(struct mt_probe_s *out, const struct mt_probe_s *in, int64_t n);
#ifdef __cplusplus
}
#endif

#endif /* MT_RACE_PROBE_H */

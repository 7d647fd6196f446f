/* test_exact_flags.c - libmtcore is built with flags that keep the
 * arithmetic the reference writes (impl/exact_canary.c): the float rounding
 * of `f64 ? x : (double)(float)x`, which GCC 12.2's SLP vectorizer drops.
 * Expected values: 0.1 and 0.3 rounded to float are 0x1.99999ap-4 and
 * 0x1.333334p-2 (their nearest binary32 values), exactly representable in
 * double; with f64 set they stay 0.1 and 0.3. */
#include "mt_core.h"
#include "mt_test.h"

void mt__exact_canary(int f64, double x, double y, double out[2]);

TEST(float_arm_rounds) {
  volatile double x = 0.1, y = 0.3;
  double out[2];
  mt__exact_canary(0, x, y, out);
  CHECK(out[0] == 0x1.99999ap-4);
  CHECK(out[1] == 0x1.333334p-2);
}

TEST(double_arm_keeps) {
  volatile double x = 0.1, y = 0.3;
  double out[2];
  mt__exact_canary(1, x, y, out);
  CHECK(out[0] == 0.1);
  CHECK(out[1] == 0.3);
}

MT_TEST_MAIN(T(float_arm_rounds), T(double_arm_keeps))

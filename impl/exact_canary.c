/* exact_canary.c - a canary for the flags the reference is compiled with
 * (tests/test_exact_flags.c). GCC 12.2's SLP vectorizer, at -O2 and up,
 * turns the two selects below into one vector select and drops the float
 * rounding of the (double)(float) arm: the reference would silently compute
 * in double where torch rounds to float. CMakeLists.txt's MT_EXACT turns
 * that pass off for GCC; this function, built with libmtcore's flags, shows
 * whether the build still has the bug. (Found by the optim port: SparseAdam's
 * exp_avg moved by one ulp.) */
#include "mt_core.h"

typedef struct {
  double a, b;
} pair;

__attribute__((noinline)) static pair round_pair(int f64, double x, double y) {
  pair p;
  p.a = f64 ? x : (double)(float)x;
  p.b = f64 ? y : (double)(float)y;
  return p;
}

void mt__exact_canary(int f64, double x, double y, double out[2]) {
  pair p = round_pair(f64, x, y);
  out[0] = p.a;
  out[1] = p.b;
}

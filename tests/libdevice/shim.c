/* shim.c - x86 definitions of the NVVM intrinsics that CUDA's libdevice
 * calls (to_x86.py renames llvm.nvvm.X.Y to shim_X_Y), so that libdevice's
 * own double and float math runs on the host (tests/libdevice/README.md).
 * The rounding-mode forms set the host's rounding mode around the one
 * operation; the approximate units (rcp/rsqrt .f64: the high word, ex2 /
 * lg2 .f32) cannot be bit-exact to the hardware, which documents only
 * their error bounds: libdevice's double functions use rcp/rsqrt as seeds
 * that Newton steps refine, float functions built on ex2/lg2.approx may
 * differ from the device in their last bit. */
#include <fenv.h>
#include <math.h>
#include <stdint.h>
#include <string.h>


static double d_of(uint64_t u) { double d; memcpy(&d, &u, 8); return d; }
static uint64_t u_of(double d) { uint64_t u; memcpy(&u, &d, 8); return u; }
static float ftz(float x) { return (fpclassify(x) == FP_SUBNORMAL) ? copysignf(0.0f, x) : x; }

int shim_nvvm_reflect(const char *name) {
  if (!strcmp(name, "__CUDA_ARCH")) return 900;
  if (!strcmp(name, "__CUDA_PREC_SQRT")) return 1;
  return 0; /* __CUDA_FTZ: --ftz=false */
}
double shim_fma_rn_d(double a, double b, double c) { return fma(a, b, c); }
float shim_fma_rn_f(float a, float b, float c) { return fmaf(a, b, c); }
float shim_fma_rn_ftz_f(float a, float b, float c) { return ftz(fmaf(ftz(a), ftz(b), ftz(c))); }
static float fma_mode(float a, float b, float c, int mode) {
  int old = fegetround();
  fesetround(mode);
  volatile float r = fmaf(a, b, c);
  fesetround(old);
  return r;
}
float shim_fma_rz_f(float a, float b, float c) { return fma_mode(a, b, c, FE_TOWARDZERO); }
float shim_fma_rz_ftz_f(float a, float b, float c) { return ftz(fma_mode(ftz(a), ftz(b), ftz(c), FE_TOWARDZERO)); }
float shim_fma_rm_f(float a, float b, float c) { return fma_mode(a, b, c, FE_DOWNWARD); }
float shim_fma_rm_ftz_f(float a, float b, float c) { return ftz(fma_mode(ftz(a), ftz(b), ftz(c), FE_DOWNWARD)); }
double shim_add_rn_d(double a, double b) { return a + b; }
float shim_add_rn_f(float a, float b) { return a + b; }
float shim_add_rn_ftz_f(float a, float b) { return ftz(ftz(a) + ftz(b)); }
double shim_add_rz_d(double a, double b) {
  int old = fegetround();
  fesetround(FE_TOWARDZERO);
  volatile double r = a + b;
  fesetround(old);
  return r;
}
float shim_add_rz_f(float a, float b) { return fma_mode(a, 1.0f, b, FE_TOWARDZERO); }
float shim_add_rz_ftz_f(float a, float b) { return ftz(fma_mode(ftz(a), 1.0f, ftz(b), FE_TOWARDZERO)); }
double shim_mul_rn_d(double a, double b) { return a * b; }
float shim_mul_rn_f(float a, float b) { return a * b; }
float shim_mul_rn_ftz_f(float a, float b) { return ftz(ftz(a) * ftz(b)); }
float shim_div_rn_f(float a, float b) { return a / b; }
float shim_div_rn_ftz_f(float a, float b) { return ftz(ftz(a) / ftz(b)); }
float shim_div_approx_f(float a, float b) { return a / b; }
float shim_div_approx_ftz_f(float a, float b) { return ftz(ftz(a) / ftz(b)); }
double shim_ceil_d(double a) { return ceil(a); }
float shim_ceil_f(float a) { return ceilf(a); }
float shim_ceil_ftz_f(float a) { return ceilf(ftz(a)); }
double shim_floor_d(double a) { return floor(a); }
float shim_floor_f(float a) { return floorf(a); }
float shim_floor_ftz_f(float a) { return floorf(ftz(a)); }
double shim_trunc_d(double a) { return trunc(a); }
float shim_trunc_f(float a) { return truncf(a); }
double shim_round_d(double a) { return nearbyint(a); } /* cvt.rni: ties to even */
float shim_round_f(float a) { return nearbyintf(a); }
double shim_fabs_d(double a) { return fabs(a); }
float shim_fabs_f(float a) { return fabsf(a); }
float shim_fabs_ftz_f(float a) { return fabsf(ftz(a)); }
double shim_fmax_d(double a, double b) { return fmax(a, b); }
float shim_fmax_f(float a, float b) { return fmaxf(a, b); }
float shim_fmax_ftz_f(float a, float b) { return ftz(fmaxf(ftz(a), ftz(b))); }
double shim_fmin_d(double a, double b) { return fmin(a, b); }
float shim_fmin_f(float a, float b) { return fminf(a, b); }
float shim_fmin_ftz_f(float a, float b) { return ftz(fminf(ftz(a), ftz(b))); }
int shim_d2i_hi(double a) { return (int)(uint32_t)(u_of(a) >> 32); }
int shim_d2i_lo(double a) { return (int)(uint32_t)u_of(a); }
double shim_lohi_i2d(int lo, int hi) { return d_of(((uint64_t)(uint32_t)hi << 32) | (uint32_t)lo); }
static int sat_i32(double r) {
  if (r != r) return 0;
  if (r >= 2147483647.0) return 2147483647;
  if (r <= -2147483648.0) return -2147483647 - 1;
  return (int)r;
}
int shim_d2i_rn(double a) { return sat_i32(nearbyint(a)); }
int shim_f2i_rn(float a) { return sat_i32(nearbyint((double)a)); }
int shim_f2i_rn_ftz(float a) { return sat_i32(nearbyint((double)ftz(a))); }
int shim_f2i_rz(float a) { return sat_i32(trunc((double)a)); }
/* the approximate units: the hardware's bits are not documented; these are
 * within their documented error (rcp/rsqrt .f64: the high word only) */
double shim_rcp_approx_ftz_d(double a) { return d_of(u_of(1.0 / a) & 0xffffffff00000000ull); }
double shim_rsqrt_approx_d(double a) { return d_of(u_of(1.0 / sqrt(a)) & 0xffffffff00000000ull); }
float shim_rsqrt_approx_f(float a) { return (float)(1.0 / sqrt((double)a)); }
float shim_rsqrt_approx_ftz_f(float a) { return ftz((float)(1.0 / sqrt((double)ftz(a)))); }
float shim_sqrt_approx_f(float a) { return sqrtf(a); }
float shim_sqrt_approx_ftz_f(float a) { return ftz(sqrtf(ftz(a))); }
double shim_sqrt_rn_d(double a) { return sqrt(a); }
float shim_sqrt_rn_f(float a) { return sqrtf(a); }
float shim_sqrt_rn_ftz_f(float a) { return ftz(sqrtf(ftz(a))); }
float shim_ex2_approx_f(float a) { return (float)exp2((double)a); }
float shim_ex2_approx_ftz_f(float a) { return ftz((float)exp2((double)ftz(a))); }
float shim_lg2_approx_f(float a) { return (float)log2((double)a); }
float shim_lg2_approx_ftz_f(float a) { return ftz((float)log2((double)ftz(a))); }
float shim_saturate_f(float a) { return a != a ? 0.0f : a < 0 ? 0.0f : a > 1 ? 1.0f : a; }
float shim_saturate_ftz_f(float a) { return shim_saturate_f(ftz(a)); }

/* grad_ew_ops.h - the ops whose backward is the elementwise engine
 * (impl/cpu/grad_ew.c): GU_OPS(X) and GB_OPS(X), X(op, base op). impl/cpu's
 * grad_unary.c and grad_binary.c make the CPU reference's backward kernels
 * from them, impl/cuda the CUDA backend's backward slots. */
#ifndef MT_GRAD_EW_OPS_H
#define MT_GRAD_EW_OPS_H

/* X(op, base) */
#define GU_OPS(X)                                                                              \
  X(abs, abs) X(absolute, abs) X(acos, acos) X(arccos, acos) X(acosh, acosh)                   \
  X(arccosh, acosh) X(angle, angle) X(asin, asin) X(arcsin, asin) X(asinh, asinh)              \
  X(arcsinh, asinh) X(atan, atan) X(arctan, atan) X(atanh, atanh) X(arctanh, atanh)            \
  X(ceil, ceil) X(clamp, clamp) X(clip, clamp) X(conj_physical, conj_physical) X(cos, cos)     \
  X(cosh, cosh) X(deg2rad, deg2rad) X(digamma, digamma) X(erf, erf) X(erfc, erfc)              \
  X(erfinv, erfinv) X(exp, exp) X(exp2, exp2) X(expm1, expm1) X(fix, trunc) X(floor, floor)    \
  X(frac, frac) X(lgamma, lgamma) X(log, log) X(log10, log10) X(log1p, log1p) X(log2, log2)    \
  X(logit, logit) X(i0, i0) X(nan_to_num, nan_to_num) X(neg, neg) X(negative, neg)             \
  X(positive, positive) X(pow, pow) X(rad2deg, rad2deg) X(reciprocal, reciprocal)              \
  X(round, round) X(rsqrt, rsqrt) X(sigmoid, sigmoid) X(sign, sign) X(sgn, sgn) X(sin, sin)    \
  X(sinc, sinc) X(sinh, sinh) X(sqrt, sqrt) X(square, square) X(tan, tan) X(tanh, tanh)        \
  X(trunc, trunc)

/* X(op, base) */
#define GB_OPS(X)                                                                              \
  X(add, add) X(sub, sub) X(subtract, sub) X(mul, mul) X(multiply, mul) X(div, div)            \
  X(divide, div) X(true_divide, div) X(logaddexp, logaddexp) X(fmod, fmod)                     \
  X(remainder, remainder) X(atan2, atan2) X(arctan2, atan2) X(floor_divide, floor_divide)      \
  X(fmax, fmax) X(fmin, fmin) X(logaddexp2, logaddexp2) X(maximum, maximum)                    \
  X(minimum, minimum) X(nextafter, nextafter)

#endif /* MT_GRAD_EW_OPS_H */

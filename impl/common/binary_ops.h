/* binary_ops.h - the binary family's op list: BINARY_OPS(X), X(name, code,
 * accepted computation dtypes, result kind, torch's kernel name), and
 * INPLACE_OPS(X), X(name, out-of-place base). impl/cpu/binary.c plans
 * from them; impl/cuda/binary.cu and impl/cuda/table.c make the CUDA
 * backend's kernel slots from the names. */
#ifndef MT_BINARY_OPS_H
#define MT_BINARY_OPS_H

/* name, code, accepted, result, torch's kernel name (for its refusal) */
#define BINARY_OPS(X)                                            \
  X(add, K_ADD, A_ALL, R_SAME, "add_cpu")                        \
  X(sub, K_SUB, A_FLOAT | A_INT, R_SAME, "sub_cpu")              \
  X(subtract, K_SUB, A_FLOAT | A_INT, R_SAME, "sub_cpu")         \
  X(mul, K_MUL, A_ALL, R_SAME, "mul_cpu")                        \
  X(multiply, K_MUL, A_ALL, R_SAME, "mul_cpu")                   \
  X(div, K_DIV, A_ALL, R_FLOAT, "div_true_cpu")                  \
  X(divide, K_DIV, A_ALL, R_FLOAT, "div_true_cpu")               \
  X(true_divide, K_DIV, A_ALL, R_FLOAT, "div_true_cpu")          \
  X(atan2, K_ATAN2, A_ALL, R_FLOAT, "atan2_cpu")                 \
  X(arctan2, K_ATAN2, A_ALL, R_FLOAT, "atan2_cpu")               \
  X(bitwise_and, K_AND, A_INT | A_BOOL, R_SAME, "bitwise_and_cpu") \
  X(bitwise_or, K_OR, A_INT | A_BOOL, R_SAME, "bitwise_or_cpu")  \
  X(bitwise_xor, K_XOR, A_INT | A_BOOL, R_SAME, "bitwise_xor_cpu") \
  X(bitwise_left_shift, K_SHL, A_INT, R_SAME, "lshift_cpu")      \
  X(bitwise_right_shift, K_SHR, A_INT, R_SAME, "rshift_cpu")     \
  X(floor_divide, K_FLOORDIV, A_FLOAT | A_INT, R_SAME, "div_floor_cpu") \
  X(fmod, K_FMOD, A_FLOAT | A_INT, R_SAME, "fmod_cpu")           \
  X(remainder, K_REM, A_FLOAT | A_INT, R_SAME, "remainder_cpu")  \
  X(logaddexp, K_LAE, A_FLOAT, R_SAME, "logaddexp_cpu")          \
  X(logaddexp2, K_LAE2, A_FLOAT, R_SAME, "logaddexp2_cpu")       \
  X(nextafter, K_NEXT, A_FLOAT, R_SAME, "nextafter_cpu")         \
  X(eq, K_EQ, A_ALL, R_BOOL, "eq_cpu")                           \
  X(ne, K_NE, A_ALL, R_BOOL, "ne_cpu")                           \
  X(not_equal, K_NE, A_ALL, R_BOOL, "ne_cpu")                    \
  X(le, K_LE, A_ALL, R_BOOL, "le_cpu")                           \
  X(less_equal, K_LE, A_ALL, R_BOOL, "le_cpu")                   \
  X(ge, K_GE, A_ALL, R_BOOL, "ge_cpu")                           \
  X(greater_equal, K_GE, A_ALL, R_BOOL, "ge_cpu")                \
  X(gt, K_GT, A_ALL, R_BOOL, "gt_cpu")                           \
  X(greater, K_GT, A_ALL, R_BOOL, "gt_cpu")                      \
  X(lt, K_LT, A_ALL, R_BOOL, "lt_cpu")                           \
  X(less, K_LT, A_ALL, R_BOOL, "lt_cpu")                         \
  X(maximum, K_MAX, A_ALL, R_SAME, "maximum_cpu")                \
  X(minimum, K_MIN, A_ALL, R_SAME, "minimum_cpu")                \
  X(fmax, K_FMAX, A_ALL, R_SAME, "fmax_cpu")                     \
  X(fmin, K_FMIN, A_ALL, R_SAME, "fmin_cpu")


#define INPLACE_OPS(X)                                                                    \
  X(add_, add) X(sub_, sub) X(subtract_, subtract) X(mul_, mul) X(multiply_, multiply)    \
  X(div_, div) X(divide_, divide) X(true_divide_, true_divide) X(atan2_, atan2)           \
  X(arctan2_, arctan2) X(bitwise_and_, bitwise_and) X(bitwise_or_, bitwise_or)            \
  X(bitwise_xor_, bitwise_xor) X(bitwise_left_shift_, bitwise_left_shift)                 \
  X(bitwise_right_shift_, bitwise_right_shift) X(floor_divide_, floor_divide)             \
  X(fmod_, fmod) X(remainder_, remainder) X(nextafter_, nextafter) X(eq_, eq) X(ne_, ne)  \
  X(not_equal_, not_equal) X(le_, le) X(less_equal_, less_equal) X(ge_, ge)               \
  X(greater_equal_, greater_equal) X(gt_, gt) X(greater_, greater) X(lt_, lt) X(less_, less)

#endif /* MT_BINARY_OPS_H */

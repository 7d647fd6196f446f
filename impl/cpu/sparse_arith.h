/* sparse_arith.h - sparse additions shared by sparse_optim.c and
 * binary_sparse.c (internal; see sparse_arith.c). */
#ifndef MT_CPU_SPARSE_ARITH_H
#define MT_CPU_SPARSE_ARITH_H

#include "cpu_util.h"

/* A Python number in a tensor op (add/sub/mul): cast to the op's compute
 * type, float for float32 and the half types, double for float64. */
static inline double mt__cpu_op_scalar(mt_dtype dt, double v) {
  return dt == MT_float64 ? v : (double)(float)v;
}

/* dense d += alpha * s (s COO of d's dtype and shape), torch's dense +
 * sparse add (sparse_arith.c says which products are rounded). */
void mt__cpu_dense_add_coo(mt_tensor *d, double alpha, const mt_tensor *s);

/* *t = t + alpha * s, both COO of one dtype and shape: torch's merge
 * (sparse_arith.c); *t is freed through h and replaced by the result.
 * name: the op in messages (float16/bool have no kernel, DTYPE_MISMATCH). */
mt_status mt__cpu_coo_add(const mt_host *h, const char *name, mt_tensor **t, double alpha,
                          const mt_tensor *s, mt_error *err);

#endif /* MT_CPU_SPARSE_ARITH_H */

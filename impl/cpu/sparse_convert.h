/* sparse_convert.h - the plain (not masked) forms of the structure ops
 * to_dense, to_sparse and to_sparse_csr (impl/cpu/structure.c sends every
 * input that is not a masked tensor here; SPC-*, impl/cpu/sparse_convert.c). */
#ifndef MT_CPU_SPARSE_CONVERT_H
#define MT_CPU_SPARSE_CONVERT_H
#include "cpu.h"

mt_status mt__spc_to_dense(mt_call *call, mt_error *err);
mt_status mt__spc_to_sparse(mt_call *call, mt_error *err);
mt_status mt__spc_to_sparse_csr(mt_call *call, mt_error *err);

#endif

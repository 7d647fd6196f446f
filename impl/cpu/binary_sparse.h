/* binary_sparse.h - plain (not masked) sparse operands of the binary family
 * (internal; binary.c dispatches to it, binary_sparse.c has the rules). */
#ifndef MT_CPU_BINARY_SPARSE_H
#define MT_CPU_BINARY_SPARSE_H

#include "common/exec.h"
#include "cpu.h"

/* 1 when no operand of the call is masked and one is COO or CSR. */
int mt__cpu_binary_is_plain_sparse(const mt_call *call);

/* add/sub/mul/div and add_/sub_/mul_/div_ on plain sparse operands
 * (SPP-2 .. SPP-6), the values computed on ex; NOT_SUPPORTED for the
 * family's other ops. */
mt_status mt__cpu_binary_sparse(mt_call *call, mt_op op, const mt_exec *ex, mt_error *err);

#endif /* MT_CPU_BINARY_SPARSE_H */

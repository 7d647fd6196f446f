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

/* *t = t + alpha * s, both COO of one dtype and shape (torch's sparse +
 * sparse add, shared with SGD's step: SGD-1): one two-pointer merge over
 * both entry lists in their stored order, whatever their coalesced flags;
 * equal linear indices give one entry t + alpha * s (a fused multiply-add),
 * an entry of s alone is alpha * s (rounded; copied when alpha is 1). On
 * unsorted input the merge keeps walking, as torch's does. The result is
 * flagged coalesced only when both inputs are. An empty s gives t as it is,
 * an empty t alpha * s with s's indices and flag; otherwise float16 and
 * bool are refused as torch's "cadd_sparse". The host plans the merged
 * entries, the values come from ex; *t is freed through h and replaced. */
mt_status mt__sps_coo_add(const mt_host *h, const mt_exec *ex, const char *name, mt_tensor **t,
                          double alpha, const mt_tensor *s, mt_error *err);

#endif /* MT_CPU_BINARY_SPARSE_H */

/* adagrad_cases_cuda.h - the device side of a benchmark case (dev:cuda):
 * the case's data on the GPU, the timed device step, and its check against
 * the reference op (bc_verify, as on the CPU). Paths on the device: stream,
 * dense, sparse_coo, masked_dense, masked_sparse, sparse_coo_dup (the
 * uncoalesced step: radix sort + one fused kernel); the COO ones also through
 * the cuSPARSE gather/scatter pipeline (the fused step's baseline). Without a CUDA build every
 * call reports "no device" with the reason. */
#ifndef MTB_ADAGRAD_CASES_CUDA_H
#define MTB_ADAGRAD_CASES_CUDA_H

#include "adagrad_cases.h"

/* Device copies: the base (p, s, dense g) and one grad (indices, values,
 * mask), uploaded from the host structs; the timer for the steps. */
typedef struct bc_dev bc_dev;

/* 0 when a device is usable (info: its facts), -1 when not (info: why). */
int bc_dev_probe(char *info, size_t len);
/* Does the device run this path? */
int bc_dev_path_ok(bc_path path);

/* *d = NULL first; uploads b (when d holds another base) and g (when d
 * holds another grad). 0 = ok, -1 with why. */
int bc_dev_load(bc_dev **d, const bc_base *b, const bc_grad *g, char *why, size_t len);
void bc_dev_free(bc_dev *d);

/* One step of g's path (or `path`, for a paired step: its grad arrays are
 * g's) on the device, timed with events: *seconds. gs: the COO paths
 * (sparse_coo, masked_sparse) through the cuSPARSE gather/scatter pipeline
 * (mt_cuda_adagrad_coo_gs, impl:cusparse rows) instead of the fused step. */
mt_status bc_dev_step(bc_dev *d, bc_path path, int gs, double *seconds, mt_error *err);

/* The device's first step of the case, verified as bc_check verifies the
 * CPU's: its current param and state_sum copied back, the expected values
 * from them (bc_expect_make: the reference op on every updated element,
 * the others unchanged), one device step on the whole problem, the result
 * copied back and compared bit for bit (bc_verify). 0 = same; -1 with the
 * first differing element in why. *v: what was compared. */
int bc_dev_check(bc_dev *d, const bc_base *b, const bc_grad *g, int gs, bc_verified *v,
                 char *why, size_t len);

/* Device bytes the loaded grad's step allocates beyond its inputs (the
 * sort's buffers of sparse_coo_dup; 0 otherwise). */
int64_t bc_dev_extra_bytes(const bc_dev *d);

/* Device-to-device memcpy bandwidth (read + write bytes per second) over
 * `bytes`, or 0 when it cannot be measured. */
double bc_dev_copy_bandwidth(size_t bytes);

#endif /* MTB_ADAGRAD_CASES_CUDA_H */

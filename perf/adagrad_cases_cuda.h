/* adagrad_cases_cuda.h - the device side of a benchmark case (dev:cuda):
 * the case's data on the GPU, the timed device step, and its check against
 * the CPU fast kernel (itself checked against the reference op by
 * bc_check). Paths on the device: stream, dense, sparse_coo, masked_dense,
 * masked_sparse. Without a CUDA build every call reports "no device" with
 * the reason. */
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
 * g's) on the device, timed with events: *seconds. */
mt_status bc_dev_step(bc_dev *d, bc_path path, double *seconds, mt_error *err);

/* One device step compared bit for bit with the CPU fast kernel on the
 * prefix sub-problem (bc_prefix) of the device's current state. 0 = same;
 * -1 with the first differing element in why. *checked = elements. */
int bc_dev_check(bc_dev *d, const bc_base *b, const bc_grad *g, int64_t *checked, char *why,
                 size_t len);

/* Device-to-device memcpy bandwidth (read + write bytes per second) over
 * `bytes`, or 0 when it cannot be measured. */
double bc_dev_copy_bandwidth(size_t bytes);

#endif /* MTB_ADAGRAD_CASES_CUDA_H */

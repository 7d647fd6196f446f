/* mul_sparse_dense_densifies.c - breaks SPP-4: mul(S, D) of a COO tensor
 * and a dense one returns the dense product (zeros where S stores
 * nothing), the way a library that routes every sparse-dense op through a
 * dense kernel does; torch keeps S's structure and returns COO. */
#include "mutant.h"

static mt_status mutant_mul(mt_call *call, mt_error *err) {
  mt_status st = mt_cpu_mul(call, err);
  if (st != MT_OK || call->n_in < 2 || !call->in[0] || !call->in[1]) return st;
  const mt_tensor *a = call->in[0], *b = call->in[1];
  int mixed = (a->kind == MT_KIND_COO && b->kind == MT_KIND_DENSE && b->ndim > 0) ||
              (b->kind == MT_KIND_COO && a->kind == MT_KIND_DENSE && a->ndim > 0);
  if (!mixed || call->out[0]->kind != MT_KIND_COO) return st;
  const mt_host *h = call->host ? call->host : mt_host_default();
  mt_tensor *d = NULL, *hd = NULL;
  if ((st = mt_to_dense(call->out[0], &d, err)) != MT_OK) return st;
  st = mt_tensor_clone_host(h, d, &hd, err);
  mt_tensor_free(d);
  if (st != MT_OK) return st;
  h->free(call->out[0]);
  call->out[0] = hd;
  return MT_OK;
}

static const mt_kernel_fn kernels[MT_OP__END] = {
#include "cpu_slots.h"
    [MT_OP_mul] = mutant_mul,
};
MT_MUTANT_ENTRY("mul_sparse_dense_densifies", kernels)

/* dispatch.c - calling a kernel through a (possibly foreign, possibly older)
 * implementation table, SQLite-style: only the fields inside struct_size and
 * the slots below n_kernels are read. */
#include <stddef.h>

#include "mt_core.h"

#define MT_IMPL_HAS(impl, field) \
  ((impl)->struct_size >= offsetof(mt_impl, field) + sizeof((impl)->field))

mt_status mt_dispatch(const mt_impl *impl, mt_call *call, mt_error *err) {
  const char *name = mt_op_name(call->op);
  if (!impl) return mt_err(err, MT_INVALID_ARGUMENT, "dispatch: no implementation table");
  if (!name || call->op == MT_OP__NONE)
    return mt_err(err, MT_INVALID_ARGUMENT, "dispatch: op id %d is unknown", (int)call->op);
  if (impl->abi_version != MT_ABI_VERSION)
    return mt_err(err, MT_INVALID_ARGUMENT,
                  "dispatch: implementation was built for ABI %u, this runner speaks %u",
                  impl->abi_version, MT_ABI_VERSION);
  if (!MT_IMPL_HAS(impl, kernels) || !impl->kernels || (uint32_t)call->op >= impl->n_kernels ||
      !impl->kernels[call->op])
    return mt_err(err, MT_NOT_SUPPORTED, "%s: no kernel for op %s",
                  MT_IMPL_HAS(impl, name) && impl->name ? impl->name : "backend", name);
  if (MT_IMPL_HAS(impl, supports) && impl->supports &&
      !impl->supports(call->op, call->in, call->n_in))
    return mt_err(err, MT_NOT_SUPPORTED, "%s: op %s not supported for these inputs",
                  impl->name ? impl->name : "backend", name);
  if (!call->host) call->host = mt_host_default();
  call->n_out = 0;
  for (int k = 0; k < MT_MAX_OUTPUTS; k++) call->out[k] = NULL;
  if (err) {
    err->status = MT_OK;
    err->msg[0] = '\0';
  }
  mt_status st = impl->kernels[call->op](call, err);
  if (st != MT_OK) {
    if (err && err->status != st) { /* the kernel forgot to fill err */
      if (!err->msg[0]) mt_err(err, st, NULL);
      err->status = st;
    }
    return st;
  }
  /* n_out is the caller's to check: a kernel that returns a bad count gave a
   * wrong answer, which the runner reports as FAIL. */
  return MT_OK;
}

#ifndef MT_HAVE_CUDA
const mt_impl *mt_backend_cuda(void) { return NULL; }
#endif

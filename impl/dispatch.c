/* dispatch.c - calling a kernel through a (possibly foreign, possibly older)
 * implementation table, SQLite-style: only the fields inside struct_size and
 * the slots below n_kernels are read. */
#include <stddef.h>
#include <string.h>

#include "mt_core.h"

#define MT_IMPL_HAS(impl, field) \
  ((impl)->struct_size >= offsetof(mt_impl, field) + sizeof((impl)->field))

/* The kernel table of profile (NULL or "torch": impl->kernels); NULL when
 * impl lists no table for it. */
static const mt_kernel_fn *profile_table(const mt_impl *impl, const char *profile, uint32_t *n) {
  if (!profile || strcmp(profile, "torch") == 0) {
    *n = MT_IMPL_HAS(impl, kernels) ? impl->n_kernels : 0;
    return MT_IMPL_HAS(impl, kernels) ? impl->kernels : NULL;
  }
  if (!MT_IMPL_HAS(impl, profiles) || !impl->profiles) return NULL;
  for (uint32_t k = 0; k < impl->n_profiles; k++) {
    const mt_profile_kernels *p = &impl->profiles[k];
    if (p->profile && strcmp(p->profile, profile) == 0) {
      *n = p->n_kernels;
      return p->kernels;
    }
  }
  return NULL;
}

mt_status mt_dispatch(const mt_impl *impl, mt_call *call, mt_error *err) {
  return mt_dispatch_profile(impl, NULL, call, err);
}

mt_status mt_dispatch_profile(const mt_impl *impl, const char *profile, mt_call *call,
                              mt_error *err) {
  const char *name = mt_op_name(call->op);
  if (!impl) return mt_err(err, MT_INVALID_ARGUMENT, "dispatch: no implementation table");
  if (!name || call->op == MT_OP__NONE)
    return mt_err(err, MT_INVALID_ARGUMENT, "dispatch: op id %d is unknown", (int)call->op);
  if (impl->abi_version != MT_ABI_VERSION)
    return mt_err(err, MT_INVALID_ARGUMENT,
                  "dispatch: implementation was built for ABI %u, this runner speaks %u",
                  impl->abi_version, MT_ABI_VERSION);
  const char *iname = MT_IMPL_HAS(impl, name) && impl->name ? impl->name : "backend";
  uint32_t n_kernels = 0;
  const mt_kernel_fn *kernels;
  int backward = call->grad_out != NULL;
  if (backward) { /* golden format 3's gradient cases: the backward table, torch profile */
    if (profile && strcmp(profile, "torch") != 0)
      return mt_err(err, MT_NOT_SUPPORTED, "%s: no backward kernels in profile %s", iname,
                    profile);
    kernels = MT_IMPL_HAS(impl, backward) ? impl->backward : NULL;
    n_kernels = kernels ? impl->n_backward : 0;
    if (!kernels || (uint32_t)call->op >= n_kernels || !kernels[call->op])
      return mt_err(err, MT_NOT_SUPPORTED, "%s: no backward kernel for op %s", iname, name);
  } else {
    kernels = profile_table(impl, profile, &n_kernels);
  }
  if (!kernels && profile && strcmp(profile, "torch") != 0)
    return mt_err(err, MT_NOT_SUPPORTED, "%s: profile %s is not implemented (no kernel table)",
                  iname, profile);
  if (!kernels || (uint32_t)call->op >= n_kernels || !kernels[call->op])
    return mt_err(err, MT_NOT_SUPPORTED, "%s: no kernel for op %s%s%s", iname, name,
                  profile ? " in profile " : "", profile ? profile : "");
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
  mt_status st = kernels[call->op](call, err);
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

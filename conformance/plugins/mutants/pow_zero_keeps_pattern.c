/* pow_zero_keeps_pattern.c - breaks SPP-1: pow(S, 0) of a plain COO/CSR
 * tensor maps the stored values to 1 and keeps the pattern, the
 * "f(stored values)" shortcut that forgets 0 ** 0 = 1 at every position S
 * does not store; torch refuses it ("cannot raise to zeroth power on
 * sparse tensor; it would make the result tensor dense"). */
#include "mutant.h"

static mt_status mutant_pow(mt_call *call, mt_error *err) {
  const mt_tensor *x = call->n_in > 1 ? call->in[0] : NULL,
                  *e = call->n_in > 1 ? call->in[1] : NULL;
  if (!x || !e || (x->kind != MT_KIND_COO && x->kind != MT_KIND_CSR) || e->kind != MT_KIND_SCALAR ||
      mt_get_f64(e->values, e->dtype, 0) != 0.0)
    return mt_cpu_pow(call, err);
  const mt_host *h = call->host ? call->host : mt_host_default();
  mt_tensor *out = NULL;
  mt_status st = mt_tensor_clone_host(h, x, &out, err);
  if (st != MT_OK) return st;
  int64_t n = x->kind == MT_KIND_COO ? out->nnz * mt_coo_row_numel(out) : out->nnz;
  for (int64_t i = 0; i < n; i++) mt_set_f64(out->values, out->dtype, i, 1.0);
  call->out[0] = out;
  call->n_out = 1;
  return MT_OK;
}

static const mt_kernel_fn kernels[MT_OP__END] = {
#include "cpu_slots.h"
    [MT_OP_pow] = mutant_pow,
};
MT_MUTANT_ENTRY("pow_zero_keeps_pattern", kernels)

/* sadam_eps_zero_accepted.c - breaks SADAM-4: eps = 0 is accepted (the
 * check written `eps >= 0`, as Adagrad's is), where SparseAdam requires
 * `0.0 < eps` and raises "Invalid epsilon value: 0.0". */
#include "mutant.h"

static mt_status mutant_sparse_adam(mt_call *call, mt_error *err) {
  const mt_kwarg *eps = mt_kw_find(call->kw, "eps");
  if (!eps || eps->type == MT_KW_FLOATS || eps->f != 0.0) return mt_cpu_sparse_adam(call, err);
  return mt__mutant_call_kw(call, err, mt_cpu_sparse_adam, "eps", 1e-300, 0);
}

static const mt_kernel_fn kernels[MT_OP__END] = {
#include "cpu_slots.h"
    [MT_OP_sparse_adam] = mutant_sparse_adam,
};
MT_MUTANT_ENTRY("sadam_eps_zero_accepted", kernels)

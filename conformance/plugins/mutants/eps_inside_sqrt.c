/* eps_inside_sqrt.c - breaks ADA-1: the dense Adagrad step puts eps inside
 * the square root, std = sqrt(state_sum + eps), as optax's scale_by_rss and
 * several hand-written Adagrads do, where torch adds it outside:
 * sqrt(state_sum) + eps. Visible where state_sum is small against eps, and
 * in float64 at every element (sqrt(s + eps) - sqrt(s) = eps / 2sqrt(s)). */
#include "mutant.h"

static mt_status mutant_adagrad_dense(mt_call *call, mt_error *err) {
  mt_status st = mt_cpu_adagrad_dense(call, err);
  if (st != MT_OK || call->n_out != 3) return st;
  const mt_tensor *p0 = call->in[0], *g = call->in[1];
  mt_tensor *p = call->out[0], *s = call->out[1], *sd = call->out[2];
  mt_dtype dt = p->dtype;
  double nclr = mt__mutant_r(dt, -mt__mutant_clr(call));
  double eps = mt__mutant_r(dt, mt_kw_float(call->kw, "eps", 1e-10));
  double wd = mt__mutant_r(dt, mt_kw_float(call->kw, "weight_decay", 0.0));
  int maximize = mt_kw_float(call->kw, "maximize", 0.0) != 0.0;
  for (int64_t i = 0; i < mt_numel(p); i++) {
    double pi = mt_dense_get(p0, i), gi = mt_dense_get(g, i);
    if (maximize) gi = -gi;
    if (wd != 0.0) gi = mt__mutant_r(dt, fma(wd, pi, gi));
    double std = mt__mutant_r(dt, sqrt(mt__mutant_r(dt, mt_get_f64(s->values, dt, i) + eps)));
    mt_set_f64(sd->values, dt, i, std);
    mt_set_f64(p->values, dt, i, pi + mt__mutant_r(dt, mt__mutant_r(dt, nclr * gi) / std));
  }
  return MT_OK;
}

static const mt_kernel_fn kernels[MT_OP__END] = {
#include "cpu_slots.h"
    [MT_OP_adagrad_dense] = mutant_adagrad_dense,
};
MT_MUTANT_ENTRY("eps_inside_sqrt", kernels)

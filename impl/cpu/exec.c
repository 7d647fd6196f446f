/* exec.c - the CPU reference's compute hooks (common/exec.h): the shared
 * per-element math in a loop. */
#include "common/binary_math.h"
#include "common/exec.h"
#include "common/reduce_math.h"
#include "common/unary_math.h"
#include "common/optim_math.h"
#include "common/sparse_optim_math.h"

static mt_status cpu_unary(const struct mt_un_par *p, const void *in, void *out, int64_t n,
                           mt_error *err) {
  (void)err; /* no value can fail the call */
  for (int64_t k = 0; k < n; k++) mt_un_elem(p, in, out, k);
  return MT_OK;
}

/* stops at the first specified zero integer divisor: the call fails there */
static mt_status cpu_binary(const struct mt_bin_par *p, const struct mt_bin_loop *l,
                            const void *va, int64_t na, const void *vb, int64_t nb,
                            const uint8_t *mask, int64_t nm, void *out, uint8_t *mask_out,
                            int64_t *zero_div_at, mt_error *err) {
  (void)na, (void)nb, (void)nm, (void)err;
  *zero_div_at = -1;
  for (int64_t i = 0; i < l->n; i++)
    if (mt_bin_elem(p, l, va, vb, mask, out, mask_out, i)) {
      *zero_div_at = i;
      break;
    }
  return MT_OK;
}

static mt_status cpu_reduce(const struct mt_red_par *p, const void *data, const uint8_t *mask,
                           int64_t n_in, void *out, uint8_t *mask_out, int64_t n_out,
                           mt_error *err) {
  (void)n_in, (void)err;
  for (int64_t o = 0; o < n_out; o++) mt_red_out(p, data, mask, out, mask_out, o);
  return MT_OK;
}

static mt_status cpu_adagrad(const struct mt_ada_par *p, const struct mt_ada_bufs *b,
                             mt_error *err) {
  (void)err;
  if (p->path == ADA_INT_COO)
    for (int64_t i = 0; i < b->n; i++)
      mt_ada_int_init(p, i, b->param_in, b->state_in, (float *)b->param, b->state);
  int64_t n = mt_ada_threads(p, b);
  for (int64_t i = 0; i < n; i++)
    mt_ada_elem(p, b->param, b->state, b->std, b->param_in, b->state_in, b->grad, b->mask, b->lin,
                b->src, i);
  return MT_OK;
}

static mt_status cpu_sparse_adam(const struct mt_sadam_par *p, const void *grad,
                                 const int64_t *lin, void *param, void *exp_avg, void *exp_avg_sq,
                                 mt_error *err) {
  (void)err;
  for (int64_t e = 0; e < p->nnz * p->row; e++)
    mt_sadam_elem(p, e, grad, lin, param, exp_avg, exp_avg_sq);
  return MT_OK;
}

static mt_status cpu_sgd(const struct mt_sgd_par *p, const struct mt_sgd_bufs *b, mt_error *err) {
  (void)err;
  int64_t n = mt_sgd_threads(p, b);
  for (int64_t e = 0; e < n; e++) mt_sgd_elem(p, e, b->t, b->x, b->s, b->lin, b->first, b->order);
  return MT_OK;
}

const mt_exec mt_cpu_exec = {
    .name = "cpu",
    .unary = cpu_unary,
    .binary = cpu_binary,
    .reduce = cpu_reduce,
    .adagrad = cpu_adagrad,
    .sparse_adam = cpu_sparse_adam,
    .sgd = cpu_sgd,
};

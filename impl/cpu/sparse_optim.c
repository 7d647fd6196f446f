/* sparse_optim.c - CPU kernels of the sparse_optim family: sparse_adam,
 * torch.optim.SparseAdam's step (torch/optim/_functional.py sparse_adam).
 *
 * Inputs [param, grad, exp_avg, exp_avg_sq]: a dense param, its COO
 * gradient (any sparse_dim: hybrid values are embedding rows), the two
 * moment buffers (dense, param's dtype and shape: torch's state). Kwargs lr
 * (1e-3; a 1-d Tensor lr as the tuple of its elements), betas ((0.9,
 * 0.999)), eps (1e-8), maximize (false), step (1: this step's 1-based
 * count). Outputs [param, exp_avg, exp_avg_sq], updated copies.
 *
 * SADAM-4  SparseAdam.__init__'s checks, in its order: Tensor lr size, lr,
 *          eps, betas[0], betas[1] -> INVALID_ARGUMENT with its message.
 * SADAM-5  a sparse param, then what `param.grad = grad` refuses (another
 *          dtype, a CSR grad, another size), then a dense grad (step()),
 *          then an integer or bool param (torch's arithmetic on it).
 * SADAM-3  an empty gradient (nnz = 0 once coalesced) changes nothing.
 * SADAM-1  only the coalesced gradient's entries move, stored zeros
 *          included; duplicates are summed first; maximize negates it.
 * SADAM-2  the arithmetic, in torch's order, each tensor op rounded to the
 *          param dtype (float16/bfloat16 are computed in float, as torch
 *          does, then rounded); Python-number operands are cast to the op's
 *          compute type (float for every dtype but float64), the step size
 *          is a Python float (double). Each line cites the torch expression
 *          it mirrors. */
#include <math.h>

#include "cpu_util.h"

static const char *const NAME = "sparse_adam";

typedef struct {
  double lr, beta1, beta2, eps, step;
  int maximize;
  int lr_tensor; /* lr came as a Tensor: a float32 0-d tensor in torch */
} sadam_hp;

/* ---- SADAM-4: hyper-parameters ------------------------------------------ */

static mt_status parse_hp(const mt_kwargs *kw, sadam_hp *hp, mt_error *err) {
  char b[48];
  const mt_kwarg *lr = mt_kw_find(kw, "lr"), *betas = mt_kw_find(kw, "betas");
  *hp = (sadam_hp){.lr = 1e-3, .beta1 = 0.9, .beta2 = 0.999, .eps = 1e-8, .step = 1.0};
  if (lr && lr->type == MT_KW_FLOATS) { /* a Tensor lr: it must hold one element */
    if (lr->n != 1)
      return mt_err(err, MT_INVALID_ARGUMENT, "%s: Tensor lr must be 1-element (got %d elements)",
                    NAME, lr->n);
    /* torch.tensor([lr]) has the default dtype, float32: lr.item() is the
     * float32 nearest to the number written */
    hp->lr = (double)(float)lr->floats[0];
    hp->lr_tensor = 1;
  } else if (lr) {
    hp->lr = lr->f;
  }
  if (betas) {
    if (betas->n != 2)
      return mt_err(err, MT_INVALID_ARGUMENT, "%s: betas must be a pair (beta1, beta2), got %d values",
                    NAME, betas->n);
    hp->beta1 = betas->type == MT_KW_INTS ? (double)betas->ints[0] : betas->floats[0];
    hp->beta2 = betas->type == MT_KW_INTS ? (double)betas->ints[1] : betas->floats[1];
  }
  hp->eps = mt_kw_float(kw, "eps", 1e-8);
  hp->maximize = mt_kw_float(kw, "maximize", 0.0) != 0.0;
  hp->step = mt_kw_float(kw, "step", 1.0);
  /* `not 0.0 < x`: NaN is invalid too */
  if (!(0.0 < hp->lr))
    return mt_err(err, MT_INVALID_ARGUMENT, "%s: Invalid learning rate: %s", NAME,
                  mt__cpu_pyfloat(hp->lr, b, sizeof b));
  if (!(0.0 < hp->eps))
    return mt_err(err, MT_INVALID_ARGUMENT, "%s: Invalid epsilon value: %s", NAME,
                  mt__cpu_pyfloat(hp->eps, b, sizeof b));
  if (!(0.0 <= hp->beta1 && hp->beta1 < 1.0))
    return mt_err(err, MT_INVALID_ARGUMENT, "%s: Invalid beta parameter at index 0: %s", NAME,
                  mt__cpu_pyfloat(hp->beta1, b, sizeof b));
  if (!(0.0 <= hp->beta2 && hp->beta2 < 1.0))
    return mt_err(err, MT_INVALID_ARGUMENT, "%s: Invalid beta parameter at index 1: %s", NAME,
                  mt__cpu_pyfloat(hp->beta2, b, sizeof b));
  if (!(hp->step >= 1.0))
    return mt_err(err, MT_INVALID_ARGUMENT,
                  "%s: step must be the 1-based count of this step, got %s", NAME,
                  mt__cpu_pyfloat(hp->step, b, sizeof b));
  return MT_OK;
}

/* ---- SADAM-5: layouts, dtypes and shapes -------------------------------- */

static mt_status check_inputs(const mt_tensor *const in[4], mt_error *err) {
  static const char *const role[4] = {"param", "grad", "exp_avg", "exp_avg_sq"};
  const mt_tensor *param = in[0], *grad = in[1];
  char sa[64], sb[64];
  if (param->kind != MT_KIND_DENSE)
    return mt_err(err, MT_LAYOUT_MISMATCH,
                  "%s: Sparse params at indices [[0, 0]]: SparseAdam requires dense parameter "
                  "tensors (inputs/0 has kind %s)",
                  NAME, mt_kind_name(param->kind));
  /* `param.grad = grad`: dtype, then layout (a CSR grad), then size */
  if (grad->dtype != param->dtype)
    return mt_err(err, MT_DTYPE_MISMATCH,
                  "%s: attempting to assign a gradient with dtype %s to a tensor of dtype %s", NAME,
                  mt_dtype_name(grad->dtype), mt_dtype_name(param->dtype));
  if (grad->kind != MT_KIND_DENSE && grad->kind != MT_KIND_COO)
    return mt_err(err, MT_LAYOUT_MISMATCH,
                  "%s: attempting to assign a gradient to a tensor that has data of a different "
                  "type (inputs/1 has kind %s)",
                  NAME, mt_kind_name(grad->kind));
  if (!mt_shape_equal(grad, param))
    return mt_err(err, MT_SHAPE_MISMATCH,
                  "%s: attempting to assign a gradient of size %s to a tensor of size %s", NAME,
                  mt_shape_str(grad->ndim, grad->shape, sa, sizeof sa),
                  mt_shape_str(param->ndim, param->shape, sb, sizeof sb));
  /* the state: always zeros_like(param) in torch, so ours must match it */
  for (int k = 2; k < 4; k++) {
    if (in[k]->kind != MT_KIND_DENSE)
      return mt_err(err, MT_LAYOUT_MISMATCH, "%s: inputs/%d (%s) must be a dense tensor, got kind %s",
                    NAME, k, role[k], mt_kind_name(in[k]->kind));
    if (in[k]->dtype != param->dtype)
      return mt_err(err, MT_DTYPE_MISMATCH, "%s: inputs/%d (%s) has dtype %s, param has dtype %s",
                    NAME, k, role[k], mt_dtype_name(in[k]->dtype), mt_dtype_name(param->dtype));
    if (!mt_shape_equal(in[k], param))
      return mt_err(err, MT_SHAPE_MISMATCH, "%s: inputs/%d (%s) has shape %s, param has shape %s",
                    NAME, k, role[k], mt_shape_str(in[k]->ndim, in[k]->shape, sa, sizeof sa),
                    mt_shape_str(param->ndim, param->shape, sb, sizeof sb));
  }
  if (grad->kind == MT_KIND_DENSE)
    return mt_err(err, MT_LAYOUT_MISMATCH,
                  "%s: SparseAdam does not support dense gradients, please consider Adam instead",
                  NAME);
  return MT_OK;
}

/* SADAM-5, reached only with a non-empty gradient (torch skips an empty one
 * before any arithmetic). */
static mt_status check_float(mt_dtype dt, mt_error *err) {
  if (dt == MT_bool)
    return mt_err(err, MT_DTYPE_MISMATCH,
                  "%s: Subtraction, the `-` operator, with two bool tensors is not supported", NAME);
  if (!mt_dtype_is_float(dt))
    return mt_err(err, MT_DTYPE_MISMATCH,
                  "%s: result type Float can't be cast to the desired output type %s", NAME,
                  mt_dtype_name(dt));
  return MT_OK;
}

/* ---- SADAM-1/2: the update ---------------------------------------------- */

/* A tensor op's result rounded to the dtype (float16 via float, as torch). */
#define R(x) mt__cpu_round(dt, (x))

static void update(mt_dtype dt, const sadam_hp *hp, const mt_tensor *g, void *p, void *m,
                   void *v) {
  /* Python numbers in a tensor op: cast to the op's compute type (float
   * for float32 and the half types, double for float64) */
  double c1, c2, eps_s, nstep;
  double bc1 = 1.0 - pow(hp->beta1, hp->step); /* bias_correction1 = 1 - beta1**step */
  double bc2 = 1.0 - pow(hp->beta2, hp->step); /* bias_correction2 = 1 - beta2**step */
  /* step_size = lr * math.sqrt(bc2) / bc1: Python floats (double); with a
   * Tensor lr (`_to_scalar` keeps it a 0-d float32 tensor) each op is a
   * float32 tensor op with the Python float cast to float */
  double step_size = hp->lr * sqrt(bc2) / bc1;
  if (hp->lr_tensor)
    step_size = (double)(float)((double)(float)(hp->lr * (double)(float)sqrt(bc2)) /
                                (double)(float)bc1);
  if (dt == MT_float64) {
    c1 = 1.0 - hp->beta1;
    c2 = 1.0 - hp->beta2;
    eps_s = hp->eps;
    nstep = -step_size; /* a float32 step_size widens exactly */
  } else {
    c1 = (double)(float)(1.0 - hp->beta1);
    c2 = (double)(float)(1.0 - hp->beta2);
    eps_s = (double)(float)hp->eps;
    nstep = (double)(float)-step_size;
  }
  int64_t row = mt_coo_row_numel(g);
  for (int64_t k = 0; k < g->nnz; k++) {
    int64_t base = mt_coo_linear(g, k) * row;
    for (int64_t j = 0; j < row; j++) {
      int64_t i = base + j;
      /* grad = -grad if maximize (negation is exact: before or after
       * coalescing gives the same values) */
      double gv = mt__cpu_ld(g->values, dt, k * row + j);
      if (hp->maximize) gv = -gv;
      double m_old = mt__cpu_ld(m, dt, i), v_old = mt__cpu_ld(v, dt, i);
      /* exp_avg_update_values = grad_values.sub(old_exp_avg_values).mul_(1 - beta1) */
      double mu = R(R(gv - m_old) * c1);
      /* exp_avg.add_(make_sparse(exp_avg_update_values)) */
      mt__cpu_st(m, dt, i, m_old + mu);
      /* exp_avg_sq_update_values = grad_values.pow(2).sub_(old).mul_(1 - beta2) */
      double vu = R(R(R(gv * gv) - v_old) * c2);
      /* exp_avg_sq.add_(make_sparse(exp_avg_sq_update_values)) */
      mt__cpu_st(v, dt, i, v_old + vu);
      /* numer = exp_avg_update_values.add_(old_exp_avg_values) */
      double numer = R(mu + m_old);
      /* denom = exp_avg_sq_update_values.add_(old).sqrt_().add_(eps) */
      double denom = R(R(sqrt(R(vu + v_old))) + eps_s);
      /* param.add_(make_sparse(-step_size * numer.div_(denom))) */
      double upd = R(R(numer / denom) * nstep);
      mt__cpu_st(p, dt, i, mt__cpu_ld(p, dt, i) + upd);
    }
  }
}
#undef R

mt_status mt_cpu_sparse_adam(mt_call *call, mt_error *err) {
  const mt_host *h = mt__cpu_host(call);
  const mt_tensor *in[4], *g = NULL;
  mt_tensor *gtmp = NULL;
  sadam_hp hp;
  char what[32];
  mt_status st;

  mt__cpu_begin(call);
  if ((st = mt__kw_check(MT_OP_sparse_adam, call->kw, err)) != MT_OK) return st;
  for (int k = 0; k < 4; k++) {
    if ((st = mt__cpu_input(call, k, NAME, &in[k], err)) != MT_OK) return st;
    if ((st = mt_tensor_validate(in[k], mt__cpu_in_name(k, what, sizeof what), err)) != MT_OK)
      return st;
  }
  if ((st = parse_hp(call->kw, &hp, err)) != MT_OK) return st;
  if ((st = check_inputs(in, err)) != MT_OK) return st;
  mt_dtype dt = in[0]->dtype;
  /* grad = grad.coalesce(): the update is non-linear, duplicates are summed */
  if ((st = mt__cpu_coalesced(in[1], &g, &gtmp, err)) != MT_OK) goto out;
  /* SADAM-3: `if grad_values.numel() == 0: continue` -- before any arithmetic */
  if (g->nnz * mt_coo_row_numel(g) > 0 && (st = check_float(dt, err)) != MT_OK)
    goto out;
  for (int k = 0; k < 3; k++)
    if ((st = mt__cpu_copy(h, in[k == 0 ? 0 : k + 1], &call->out[k], err)) != MT_OK) goto out;
  if (g->nnz * mt_coo_row_numel(g) > 0)
    update(dt, &hp, g, call->out[0]->values, call->out[1]->values, call->out[2]->values);
  call->n_out = 3;
out:
  mt_tensor_free(gtmp);
  if (st != MT_OK) mt__cpu_drop_outputs(call);
  return st;
}

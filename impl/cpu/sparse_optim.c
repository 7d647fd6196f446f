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
 *          it mirrors.
 *
 * This file is the family's host plan (checks, torch's messages,
 * coalescing, the entry bookkeeping of the sparse adds, outputs); the
 * arithmetic is common/sparse_optim_math.h's, run through an mt_exec
 * (common/exec.h): the CPU's loops here, the CUDA kernels of
 * impl/cuda/sparse_optim.cu there (mt__sparse_optim_run). */
#include <math.h>

#include "common/exec.h"
#include "common/sparse_optim_math.h"
#include "cpu_util.h"
#include "binary_sparse.h"

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


/* Runs the update (SADAM-1/2) of the coalesced gradient g (non-empty) on
 * p, m, v (n elements each) on ex: the scalars here, as torch casts them,
 * each element in common/sparse_optim_math.h's mt_sadam_elem. */
static mt_status update(const mt_exec *ex, mt_dtype dt, const sadam_hp *hp, const mt_tensor *g,
                        void *p, void *m, void *v, int64_t n, mt_error *err) {
  double bc1 = 1.0 - pow(hp->beta1, hp->step); /* bias_correction1 = 1 - beta1**step */
  double bc2 = 1.0 - pow(hp->beta2, hp->step); /* bias_correction2 = 1 - beta2**step */
  /* step_size = lr * math.sqrt(bc2) / bc1: Python floats (double); with a
   * Tensor lr (`_to_scalar` keeps it a 0-d float32 tensor) each op is a
   * float32 tensor op with the Python float cast to float */
  double step_size = hp->lr * sqrt(bc2) / bc1;
  if (hp->lr_tensor)
    step_size = (double)(float)((double)(float)(hp->lr * (double)(float)sqrt(bc2)) /
                                (double)(float)bc1);
  mt_sadam_par q = {
      .dt = dt,
      .maximize = hp->maximize,
      .c1 = 1.0 - hp->beta1,
      .c2 = 1.0 - hp->beta2,
      .eps_s = hp->eps,
      .nstep = -step_size, /* a float32 step_size casts exactly */
      .row = mt_coo_row_numel(g),
      .n = n,
      .nnz = g->nnz,
  };
  /* The Python numbers cast to the op's compute type (mt__cpu_op_scalar),
   * one branch for all four: GCC 12.2 at -O3 miscompiles two adjacent
   * fields each set by `dt == MT_float64 ? v : (double)(float)v` (its SLP
   * vectorizer drops the float rounding: c1 came out 1 - 0.9 in double). */
  if (dt != MT_float64) {
    q.c1 = (double)(float)q.c1;
    q.c2 = (double)(float)q.c2;
    q.eps_s = (double)(float)q.eps_s;
    q.nstep = (double)(float)q.nstep;
  }
  int64_t *lin = NULL;
  mt_status st;
  if (!ex->sparse_adam)
    return mt_err(err, MT_NOT_SUPPORTED, "%s: the %s backend has no sparse_optim kernels", NAME,
                  ex->name);
  if (!(lin = malloc(sizeof *lin * (size_t)g->nnz)))
    return mt_err(err, MT_OUT_OF_MEMORY, "%s: out of memory for %lld COO entries", NAME,
                  (long long)g->nnz);
  for (int64_t k = 0; k < g->nnz; k++) lin[k] = mt_coo_linear(g, k);
  if ((st = ex->sparse_adam(&q, g->values, lin, p, m, v, err)) != MT_OK)
    mt_err_prefix(err, "%s", NAME);
  free(lin);
  return st;
}

static mt_status sparse_adam(mt_call *call, const mt_exec *ex, mt_error *err) {
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
  if ((st = mt__exec_coalesced(ex, in[1], &g, &gtmp, err)) != MT_OK) goto out;
  /* SADAM-3: `if grad_values.numel() == 0: continue` -- before any arithmetic */
  if (g->nnz * mt_coo_row_numel(g) > 0 && (st = check_float(dt, err)) != MT_OK)
    goto out;
  for (int k = 0; k < 3; k++)
    if ((st = mt__cpu_copy(h, in[k == 0 ? 0 : k + 1], &call->out[k], err)) != MT_OK) goto out;
  if (g->nnz * mt_coo_row_numel(g) > 0 &&
      (st = update(ex, dt, &hp, g, call->out[0]->values, call->out[1]->values,
                   call->out[2]->values, mt_numel(in[0]), err)) != MT_OK)
    goto out;
  call->n_out = 3;
out:
  mt_tensor_free(gtmp);
  if (st != MT_OK) mt__cpu_drop_outputs(call);
  return st;
}

/* ==== sgd: torch.optim.SGD's single-tensor step ============================
 *
 * Inputs [param, grad] (the first step: no momentum buffer yet) or [param,
 * grad, momentum_buffer]; grad and buffer dense or COO. Kwargs lr (1e-3),
 * momentum, dampening, weight_decay (0), nesterov, maximize (false).
 * Outputs [param], plus [momentum_buffer] when momentum != 0, in the layout
 * torch leaves it (a sparse gradient makes a sparse buffer).
 *
 * SGD-4  SGD.__init__'s checks in its order (lr, momentum, weight_decay,
 *        nesterov); the dtypes torch's arithmetic refuses.
 * SGD-3  sparse + dense is refused wherever torch computes it
 *        (`grad.add(param)` for weight decay, a sparse buffer plus a dense
 *        gradient, a sparse Nesterov gradient plus a dense buffer).
 * SGD-2  momentum: buf = grad the first step, then buf * momentum + (1 -
 *        dampening) * grad; Nesterov adds momentum * buf to the gradient.
 *        sparse + sparse concatenates the entries (uncoalesced).
 * SGD-1  param += -lr * grad: dense + dense is a fused multiply-add with
 *        alpha in the compute type; dense + sparse adds entry by entry in
 *        stored order with alpha cast to the tensor dtype (an integer param
 *        truncates -lr: 0 for |lr| < 1). */

static const char *const SGD = "sgd";

typedef struct {
  double lr, momentum, dampening, weight_decay;
  int nesterov, maximize;
} sgd_hp;

static mt_status sgd_parse(const mt_kwargs *kw, sgd_hp *hp, mt_error *err) {
  char b[48];
  hp->lr = mt_kw_float(kw, "lr", 1e-3);
  hp->momentum = mt_kw_float(kw, "momentum", 0.0);
  hp->dampening = mt_kw_float(kw, "dampening", 0.0);
  hp->weight_decay = mt_kw_float(kw, "weight_decay", 0.0);
  hp->nesterov = mt_kw_float(kw, "nesterov", 0.0) != 0.0;
  hp->maximize = mt_kw_float(kw, "maximize", 0.0) != 0.0;
  /* `if lr < 0.0` (NaN passes, as in torch) */
  if (hp->lr < 0.0)
    return mt_err(err, MT_INVALID_ARGUMENT, "%s: Invalid learning rate: %s", SGD,
                  mt__cpu_pyfloat(hp->lr, b, sizeof b));
  if (hp->momentum < 0.0)
    return mt_err(err, MT_INVALID_ARGUMENT, "%s: Invalid momentum value: %s", SGD,
                  mt__cpu_pyfloat(hp->momentum, b, sizeof b));
  if (hp->weight_decay < 0.0)
    return mt_err(err, MT_INVALID_ARGUMENT, "%s: Invalid weight_decay value: %s", SGD,
                  mt__cpu_pyfloat(hp->weight_decay, b, sizeof b));
  if (hp->nesterov && (hp->momentum <= 0.0 || hp->dampening != 0.0))
    return mt_err(err, MT_INVALID_ARGUMENT,
                  "%s: Nesterov momentum requires a momentum and zero dampening", SGD);
  return MT_OK;
}

static mt_status sparse_plus_dense(mt_error *err) {
  return mt_err(err, MT_LAYOUT_MISMATCH,
                "%s: add(sparse, dense) is not supported. Use add(dense, sparse) instead.", SGD);
}


/* Runs one planned op of SGD's arithmetic on ex. */
static mt_status sgd_run(const mt_exec *ex, const mt_sgd_par *p, const mt_sgd_bufs *b,
                         mt_error *err) {
  mt_status st;
  if (!ex->sgd)
    return mt_err(err, MT_NOT_SUPPORTED, "%s: the %s backend has no sparse_optim kernels", SGD,
                  ex->name);
  if (mt_sgd_threads(p, b) == 0) return MT_OK;
  if ((st = ex->sgd(p, b, err)) != MT_OK) return mt_err_prefix(err, "%s", SGD);
  return MT_OK;
}

/* The n values of t (dense or COO) times a, in place. */
static mt_status scale_values(const mt_exec *ex, mt_tensor *t, int64_t n, double a, mt_error *err) {
  mt_sgd_par p = {.code = SGD_SCALE, .dt = t->dtype, .a = a, .nt = n};
  mt_sgd_bufs b = {.t = t->values, .nt = n};
  return sgd_run(ex, &p, &b, err);
}

/* t = t * s, rounded (dense or COO values). torch's in-place mul_ of a COO
 * tensor by a number clears its coalesced flag (so the momentum buffer
 * is uncoalesced from the second step on, and sparse + sparse then
 * concatenates); its negation (maximize) keeps the flag. */
static mt_status scale(const mt_exec *ex, mt_tensor *t, double s, mt_error *err) {
  int64_t n = t->kind == MT_KIND_COO ? t->nnz * mt_coo_row_numel(t) : mt_numel(t);
  mt_status st = scale_values(ex, t, n, mt__cpu_op_scalar(t->dtype, s), err);
  if (st == MT_OK && t->kind == MT_KIND_COO && s != -1.0) t->coalesced = 0;
  return st;
}

/* dense d += alpha * x (x dense, same shape): torch's add(x, alpha). float
 * and double: one fused multiply-add, alpha in the compute type.
 * float16/bfloat16: alpha cast to the dtype, the product rounded to it,
 * then the sum (300 random cases each, bit for bit). */
static mt_status dense_axpy(const mt_exec *ex, mt_tensor *d, double alpha, const mt_tensor *x,
                            mt_error *err) {
  mt_dtype dt = d->dtype;
  int fused = dt == MT_float32 || dt == MT_float64;
  int64_t n = mt_numel(d);
  mt_sgd_par p = {.code = SGD_AXPY,
                  .dt = dt,
                  .a = fused ? mt__cpu_op_scalar(dt, alpha) : mt__cpu_round(dt, alpha),
                  .fused = fused,
                  .nt = n,
                  .nx = n};
  mt_sgd_bufs b = {.t = d->values, .x = x->values, .nt = n, .nx = n};
  return sgd_run(ex, &p, &b, err);
}

/* A COO entry's dense linear index and its place in stored order. */
typedef struct {
  int64_t lin, k;
} sgd_entry;

static int entry_cmp(const void *pa, const void *pb) {
  const sgd_entry *a = pa, *b = pb;
  if (a->lin != b->lin) return a->lin < b->lin ? -1 : 1;
  return a->k < b->k ? -1 : a->k > b->k;
}

/* The destinations of s's entries (index bookkeeping for SGD_ADD_COO and
 * SGD_INT_ADD): b->nd distinct dense linear indices (b->lin), destination
 * d's entries order[first[d] .. first[d + 1]) in stored order. The arrays
 * are the caller's to free (lin, first, order). */
static mt_status group_entries(const mt_tensor *s, mt_sgd_bufs *b, int64_t **lin, int64_t **first,
                               int64_t **order, mt_error *err) {
  int64_t nnz = s->nnz, nd = 0;
  size_t cnt = (size_t)(nnz ? nnz : 1);
  sgd_entry *e = malloc(sizeof *e * cnt);
  *lin = malloc(sizeof **lin * cnt);
  *first = malloc(sizeof **first * (cnt + 1));
  *order = malloc(sizeof **order * cnt);
  if (!e || !*lin || !*first || !*order) {
    free(e);
    return mt_err(err, MT_OUT_OF_MEMORY, "%s: out of memory for %lld COO entries", SGD,
                  (long long)nnz);
  }
  for (int64_t k = 0; k < nnz; k++) e[k] = (sgd_entry){mt_coo_linear(s, k), k};
  qsort(e, (size_t)nnz, sizeof *e, entry_cmp);
  for (int64_t k = 0; k < nnz; k++) {
    if (k == 0 || e[k].lin != e[k - 1].lin) {
      (*lin)[nd] = e[k].lin;
      (*first)[nd++] = k;
    }
    (*order)[k] = e[k].k;
  }
  (*first)[nd] = nnz;
  free(e);
  b->lin = *lin;
  b->first = *first;
  b->order = *order;
  b->nd = nd;
  b->nnz = nnz;
  b->x = s->values;
  b->nx = nnz * mt_coo_row_numel(s);
  return MT_OK;
}

/* dense d += alpha * s (s COO of d's dtype and shape): torch's dense +
 * sparse add, entry by entry in stored order (duplicates are not summed
 * first), alpha cast to the dtype (`r[i] += value.to<scalar_t>() * v`).
 * Whether the product is rounded before the sum depends on torch's path: a
 * coalesced gradient without dense dims rounds it; an uncoalesced or
 * hybrid one is one fused multiply-add (float and double). float16/bfloat16
 * always round both. */
static mt_status dense_add_coo(const mt_exec *ex, mt_tensor *d, double alpha, const mt_tensor *s,
                               mt_error *err) {
  mt_dtype dt = d->dtype;
  int64_t *lin = NULL, *first = NULL, *order = NULL;
  mt_sgd_bufs b = {.t = d->values, .nt = mt_numel(d)};
  mt_status st;
  if ((st = group_entries(s, &b, &lin, &first, &order, err)) == MT_OK) {
    mt_sgd_par p = {
        .code = SGD_ADD_COO,
        .dt = dt,
        .a = mt__cpu_round(dt, alpha),
        .fused = (dt == MT_float32 || dt == MT_float64) && (!s->coalesced || s->ndim > s->sparse_dim),
        .row = mt_coo_row_numel(s),
        .nt = b.nt,
        .nx = b.nx,
        .nnz = b.nnz};
    st = sgd_run(ex, &p, &b, err);
  }
  free(lin);
  free(first);
  free(order);
  return st;
}


/* *t = t + alpha * s for the layouts torch's `t.add_(s, alpha)` meets:
 * dense + dense, dense + COO, COO + COO; COO + dense is refused (SGD-3),
 * and so is float16 COO + COO of two non-empty operands (torch's CPU
 * kernel has none; coo_add). */
static mt_status add_any(const mt_exec *ex, const mt_host *h, mt_tensor **t, double alpha,
                         const mt_tensor *s, mt_error *err) {
  if ((*t)->kind == MT_KIND_DENSE && s->kind == MT_KIND_DENSE)
    return dense_axpy(ex, *t, alpha, s, err);
  if ((*t)->kind == MT_KIND_DENSE) return dense_add_coo(ex, *t, alpha, s, err);
  if (s->kind == MT_KIND_DENSE) return sparse_plus_dense(err);
  return mt__sps_coo_add(h, ex, SGD, t, alpha, s, err);
}

/* SGD-1 for an integer or bool param: only `param.add_(sparse, alpha=-lr)`
 * runs without error, alpha cast to the dtype (c10's checked conversion). */
static mt_status sgd_integer(mt_call *call, const mt_exec *ex, const sgd_hp *hp,
                             const mt_tensor *grad, mt_error *err) {
  const mt_host *h = mt__cpu_host(call);
  const mt_tensor *param = call->in[0];
  mt_dtype dt = param->dtype;
  if (grad->kind == MT_KIND_DENSE)
    return mt_err(err, MT_DTYPE_MISMATCH,
                  "%s: For integral input tensors, argument alpha must not be a floating point "
                  "number.",
                  SGD);
  if (hp->momentum != 0.0 || hp->weight_decay != 0.0 || hp->maximize)
    return mt_err(err, MT_NOT_SUPPORTED,
                  "%s: an integer param with momentum, weight_decay or maximize is not implemented "
                  "by the CPU backend",
                  SGD);
  double alpha = -hp->lr;
  int64_t ai;
  if (dt == MT_bool) {
    ai = alpha != 0.0;
  } else {
    /* c10's checked conversion: outside [lowest, max] overflows (so any
     * negative alpha for uint8) */
    double lo = dt == MT_uint8 ? 0 : dt == MT_int8 ? -128 : dt == MT_int32 ? -2147483648.0 : -9.2e18;
    double hi = dt == MT_uint8 ? 255 : dt == MT_int8 ? 127 : dt == MT_int32 ? 2147483647.0 : 9.2e18;
    if (!(alpha >= lo && alpha <= hi))
      return mt_err(err, MT_INVALID_ARGUMENT,
                    "%s: value cannot be converted to type %s without overflow (alpha = -lr = %g)",
                    SGD, dt == MT_uint8 ? "uint8_t" : mt_dtype_name(dt), alpha);
    ai = (int64_t)alpha; /* truncation toward zero */
  }
  mt_status st = mt__cpu_copy(h, param, &call->out[0], err);
  if (st != MT_OK) return st;
  /* p[i] += ai * v (bool: p[i] || (ai && v)) for each entry in stored order */
  int64_t *lin = NULL, *first = NULL, *order = NULL;
  mt_sgd_bufs b = {.t = call->out[0]->values, .nt = mt_numel(param)};
  if ((st = group_entries(grad, &b, &lin, &first, &order, err)) == MT_OK) {
    mt_sgd_par p = {.code = SGD_INT_ADD,
                    .dt = dt,
                    .ai = ai,
                    .row = mt_coo_row_numel(grad),
                    .nt = b.nt,
                    .nx = b.nx,
                    .nnz = b.nnz};
    st = sgd_run(ex, &p, &b, err);
  }
  free(lin);
  free(first);
  free(order);
  if (st != MT_OK) {
    mt__cpu_drop_outputs(call);
    return st;
  }
  call->n_out = 1;
  return MT_OK;
}

static mt_status sgd(mt_call *call, const mt_exec *ex, mt_error *err) {
  const mt_host *h = mt__cpu_host(call);
  const mt_tensor *in[3] = {NULL, NULL, NULL};
  mt_tensor *g = NULL, *buf = NULL;
  char what[32], sa[64], sb[64];
  sgd_hp hp;
  mt_status st;

  mt__cpu_begin(call);
  if ((st = mt__kw_check(MT_OP_sgd, call->kw, err)) != MT_OK) return st;
  if (call->n_in > 3)
    return mt_err(err, MT_INVALID_ARGUMENT, "%s: expected 2 or 3 inputs, got %d", SGD, call->n_in);
  for (int k = 0; k < call->n_in; k++) {
    if ((st = mt__cpu_input(call, k, SGD, &in[k], err)) != MT_OK) return st;
    if ((st = mt_tensor_validate(in[k], mt__cpu_in_name(k, what, sizeof what), err)) != MT_OK)
      return st;
  }
  if (!in[1]) return mt__cpu_input(call, 1, SGD, &in[1], err);
  if ((st = sgd_parse(call->kw, &hp, err)) != MT_OK) return st;
  const mt_tensor *param = in[0];
  mt_dtype dt = param->dtype;
  /* SGD-5: a COO param takes COO gradients only (every update is then a
   * sparse + sparse add); `param.grad = dense` is refused below */
  if (param->kind != MT_KIND_DENSE &&
      (param->kind != MT_KIND_COO || !mt_dtype_is_float(dt)))
    return mt_err(err, MT_NOT_SUPPORTED,
                  "%s: a %s %s param is not implemented by the CPU backend (dense params, and "
                  "float COO params)", SGD, mt_dtype_name(dt), mt_kind_name(param->kind));
  /* `param.grad = grad` (and the buffer, which torch made itself) */
  for (int k = 1; k < 3 && in[k]; k++) {
    if (in[k]->dtype != dt)
      return mt_err(err, MT_DTYPE_MISMATCH, "%s: inputs/%d has dtype %s, param has dtype %s", SGD,
                    k, mt_dtype_name(in[k]->dtype), mt_dtype_name(dt));
    if ((in[k]->kind != MT_KIND_DENSE && in[k]->kind != MT_KIND_COO) ||
        (param->kind == MT_KIND_COO && in[k]->kind != MT_KIND_COO))
      return mt_err(err, MT_LAYOUT_MISMATCH,
                    "%s: attempting to assign a gradient to a tensor that has data of a different "
                    "type (inputs/%d has kind %s)",
                    SGD, k, mt_kind_name(in[k]->kind));
    if (!mt_shape_equal(in[k], param))
      return mt_err(err, MT_SHAPE_MISMATCH, "%s: inputs/%d has size %s, param has size %s", SGD, k,
                    mt_shape_str(in[k]->ndim, in[k]->shape, sa, sizeof sa),
                    mt_shape_str(param->ndim, param->shape, sb, sizeof sb));
  }
  if (!mt_dtype_is_float(dt)) return sgd_integer(call, ex, &hp, in[1], err);

  /* grad = grads[i] if not maximize else -grads[i] (a copy we may change) */
  if ((st = mt__cpu_copy(h, in[1], &g, err)) != MT_OK) goto out;
  if (hp.maximize && (st = scale(ex, g, -1.0, err)) != MT_OK) goto out; /* exact */
  /* grad = grad.add(param, alpha=weight_decay) */
  if (hp.weight_decay != 0.0 && (st = add_any(ex, h, &g, hp.weight_decay, param, err)) != MT_OK)
    goto out;
  if (hp.momentum != 0.0) {
    if (!in[2]) { /* buf = grad.detach().clone() */
      if ((st = mt__cpu_copy(h, g, &buf, err)) != MT_OK) goto out;
    } else { /* buf.mul_(momentum).add_(grad, alpha=1 - dampening) */
      if ((st = mt__cpu_copy(h, in[2], &buf, err)) != MT_OK) goto out;
      if ((st = scale(ex, buf, hp.momentum, err)) != MT_OK) goto out;
      if ((st = add_any(ex, h, &buf, 1.0 - hp.dampening, g, err)) != MT_OK) goto out;
    }
    if (hp.nesterov) { /* grad = grad.add(buf, alpha=momentum) */
      if ((st = add_any(ex, h, &g, hp.momentum, buf, err)) != MT_OK) goto out;
    } else { /* grad = buf */
      h->free(g);
      g = NULL;
      if ((st = mt__cpu_copy(h, buf, &g, err)) != MT_OK) goto out;
    }
  }
  /* param.add_(grad, alpha=-lr) */
  if ((st = mt__cpu_copy(h, param, &call->out[0], err)) != MT_OK) goto out;
  if ((st = add_any(ex, h, &call->out[0], -hp.lr, g, err)) != MT_OK) goto out;
  call->n_out = 1;
  if (buf) {
    call->out[1] = buf;
    buf = NULL;
    call->n_out = 2;
  }
out:
  if (g) h->free(g);
  if (buf) h->free(buf);
  if (st != MT_OK) mt__cpu_drop_outputs(call);
  return st;
}

/* ---- the CPU reference's kernels, and the family's on another backend ----- */

mt_status mt_cpu_sparse_adam(mt_call *call, mt_error *err) {
  return sparse_adam(call, &mt_cpu_exec, err);
}
mt_status mt_cpu_sgd(mt_call *call, mt_error *err) { return sgd(call, &mt_cpu_exec, err); }

mt_status mt__sparse_optim_run(mt_call *call, mt_op op, const mt_exec *ex, mt_error *err) {
  switch (op) {
  case MT_OP_sparse_adam: return sparse_adam(call, ex, err);
  case MT_OP_sgd: return sgd(call, ex, err);
  default: return mt_err(err, MT_NOT_SUPPORTED, "%s: not a sparse_optim op", mt_op_name(op));
  }
}

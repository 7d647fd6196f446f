/* optim.c - CPU kernels of the optim family: the three Adagrad paths.
 *
 * Inputs [param, grad, state_sum], kwargs lr (0.01), lr_decay (0),
 * weight_decay (0), eps (1e-10), maximize (false), step (1: this step's
 * 1-based count); outputs [param, state_sum, std], std in the path's own
 * layout so that the eps placement is observable (ADA-6).
 *
 * ADA-5  lr, lr_decay, weight_decay, eps < 0 (or NaN) -> INVALID_ARGUMENT
 *        with torch.optim.Adagrad's message, checked in its order.
 * ADA-1  adagrad_dense: torch.optim.Adagrad's single-tensor dense path;
 *        clr = lr / (1 + (step - 1) * lr_decay), in double (a Python
 *        float), in every path; maximize negates the gradient first.
 * ADA-2  adagrad_sparse: its `_make_sparse` path for a COO gradient.
 * ADA-3  adagrad_masked: the MaskedTensor tutorial's path.
 * ADA-4  the tutorial's numbers, reproduced by all three paths.
 * ADA-7  float16: every op in float, rounded to half (the *_half loops);
 *        integer/bool params: dense and sparse refuse (DTYPE_MISMATCH), the
 *        masked path refuses uint8 and computes the others (masked_int):
 *        integer state_sum, float32 std and param.
 *
 * Every operation is done in the tensor dtype (float for float32) in
 * torch's order, each line below citing the torch expression it mirrors.
 * Where torch's kernels differ in rounding, so do we: torch's dense
 * add(x, alpha=a) is a fused multiply-add (fmaf), its dense + sparse add is
 * a separate multiply and add, and addcdiv computes (value * t1) / t2.
 *
 * This file is the family's host plan (checks, torch's messages,
 * coalescing, which COO entries are kept, output layouts); one element's
 * update of each path is common/optim_math.h's, run through an mt_exec
 * (common/exec.h): the CPU's loops here, the CUDA kernels of
 * impl/cuda/optim.cu there (mt__optim_run). */
#include <inttypes.h>

#include "common/exec.h"
#include "common/optim_math.h"
#include "cpu_util.h"

/* ---- hyper-parameters (ADA-1, ADA-5) ------------------------------------ */

typedef struct {
  double lr, lr_decay, weight_decay, eps, step, clr;
  int maximize;
} hparams;

static mt_status parse_hparams(const char *name, const mt_kwargs *kw, hparams *hp, mt_error *err) {
  char b[48];
  hp->lr = mt_kw_float(kw, "lr", 0.01);
  hp->lr_decay = mt_kw_float(kw, "lr_decay", 0.0);
  hp->weight_decay = mt_kw_float(kw, "weight_decay", 0.0);
  hp->eps = mt_kw_float(kw, "eps", 1e-10);
  hp->maximize = mt_kw_float(kw, "maximize", 0.0) != 0.0;
  hp->step = mt_kw_float(kw, "step", 1.0);
  /* ADA-5: torch.optim.Adagrad.__init__'s checks, in its order
   * (`not 0.0 <= x`, so NaN is invalid too). */
  if (!(0.0 <= hp->lr))
    return mt_err(err, MT_INVALID_ARGUMENT, "%s: Invalid learning rate: %s", name,
                  mt__cpu_pyfloat(hp->lr, b, sizeof b));
  if (!(0.0 <= hp->lr_decay))
    return mt_err(err, MT_INVALID_ARGUMENT, "%s: Invalid lr_decay value: %s", name,
                  mt__cpu_pyfloat(hp->lr_decay, b, sizeof b));
  if (!(0.0 <= hp->weight_decay))
    return mt_err(err, MT_INVALID_ARGUMENT, "%s: Invalid weight_decay value: %s", name,
                  mt__cpu_pyfloat(hp->weight_decay, b, sizeof b));
  if (!(0.0 <= hp->eps))
    return mt_err(err, MT_INVALID_ARGUMENT, "%s: Invalid epsilon value: %s", name,
                  mt__cpu_pyfloat(hp->eps, b, sizeof b));
  if (!(hp->step >= 1.0))
    return mt_err(err, MT_INVALID_ARGUMENT,
                  "%s: step must be the 1-based count of this step, got %s", name,
                  mt__cpu_pyfloat(hp->step, b, sizeof b));
  /* ADA-1: clr = lr / (1 + (step - 1) * lr_decay) */
  hp->clr = hp->lr / (1.0 + (hp->step - 1.0) * hp->lr_decay);
  return MT_OK;
}

/* ---- float16 workspaces (ADA-7) ------------------------------------------ */

/* Float copies of the param and state_sum outputs (n elements), of the grad
 * values (ng) and room for std (nsd): the half loops run on them. */
typedef struct {
  float *p, *s, *g, *sd;
  mt_dtype dt; /* float16 or bfloat16 */
} ada_f16;

static void f16_free(ada_f16 *w) {
  free(w->p);
  free(w->s);
  free(w->g);
  free(w->sd);
  memset(w, 0, sizeof *w);
}

static mt_status f16_open(ada_f16 *w, const mt_call *call, const void *gvals, int64_t n, int64_t ng,
                          int64_t nsd, mt_error *err) {
  mt_dtype dt = call->out[0]->dtype;
  w->p = malloc(sizeof *w->p * (size_t)(n ? n : 1));
  w->s = malloc(sizeof *w->s * (size_t)(n ? n : 1));
  w->g = malloc(sizeof *w->g * (size_t)(ng ? ng : 1));
  w->sd = malloc(sizeof *w->sd * (size_t)(nsd ? nsd : 1));
  if (!w->p || !w->s || !w->g || !w->sd) {
    f16_free(w);
    return mt_err(err, MT_OUT_OF_MEMORY, "adagrad: out of memory for %lld %s elements",
                  (long long)n, mt_dtype_name(dt));
  }
  w->dt = dt;
  for (int64_t i = 0; i < n; i++) {
    w->p[i] = (float)mt__cpu_ld(call->out[0]->values, dt, i);
    w->s[i] = (float)mt__cpu_ld(call->out[1]->values, dt, i);
  }
  for (int64_t i = 0; i < ng; i++) w->g[i] = (float)mt__cpu_ld(gvals, dt, i);
  return MT_OK;
}

/* The half results back into the outputs (every value is already one). */
static void f16_close(ada_f16 *w, mt_call *call, void *sdvals, int64_t n, int64_t nsd) {
  for (int64_t i = 0; i < n; i++) {
    mt__cpu_st(call->out[0]->values, w->dt, i, w->p[i]);
    mt__cpu_st(call->out[1]->values, w->dt, i, w->s[i]);
  }
  for (int64_t i = 0; i < nsd; i++) mt__cpu_st(sdvals, w->dt, i, w->sd[i]);
  f16_free(w);
}

/* ---- shared input handling ----------------------------------------------- */

typedef struct {
  const mt_tensor *param, *grad, *state_sum;
  mt_dtype dt;
  hparams hp;
} ada_args;

/* ADA-7: torch's refusal of an integer or bool param. The dense and
 * sparse paths write the float update into the integer param ("result type
 * Float can't be cast to the desired output type Long"; bool: no
 * addcmul/add kernel); the masked path refuses uint8 (MaskedTensor holds no
 * uint8). */
static mt_status ada_int_refusal(const char *name, const ada_args *a, mt_error *err) {
  const char *ty = a->dt == MT_int64 ? "Long" : a->dt == MT_int32 ? "Int" : a->dt == MT_int8 ? "Char"
                   : a->dt == MT_uint8 ? "Byte" : "Bool";
  if (a->dt == MT_uint8 && strcmp(name, "adagrad_masked") == 0)
    return mt_err(err, MT_DTYPE_MISMATCH, "%s: torch.uint8 is not supported in MaskedTensor", name);
  if (a->dt == MT_bool)
    return mt_err(err, MT_DTYPE_MISMATCH, "%s: inputs/0 (param) has dtype bool: no %s kernel for "
                  "'Bool'", name, strcmp(name, "adagrad_dense") == 0 ? "addcmul" : "add");
  return mt_err(err, MT_DTYPE_MISMATCH,
                "%s: result type Float can't be cast to the desired output type %s (inputs/0 "
                "(param) has dtype %s)",
                name, ty, mt_dtype_name(a->dt));
}

/* Inputs, validation and hyper-parameters common to the three paths; the
 * grad's layout is checked by each path. */
static mt_status ada_args_get(mt_call *call, const char *name, ada_args *a, mt_error *err) {
  const mt_tensor *in[3];
  char what[32], sa[64], sb[64];
  mt_status st;
  static const char *const role[3] = {"param", "grad", "state_sum"};
  for (int k = 0; k < 3; k++) {
    if ((st = mt__cpu_input(call, k, name, &in[k], err)) != MT_OK) return st;
    if ((st = mt_tensor_validate(in[k], mt__cpu_in_name(k, what, sizeof what), err)) != MT_OK)
      return st;
  }
  a->param = in[0];
  a->grad = in[1];
  a->state_sum = in[2];
  if ((st = parse_hparams(name, call->kw, &a->hp, err)) != MT_OK) return st;
  for (int k = 0; k < 3; k += 2)
    if (in[k]->kind != MT_KIND_DENSE)
      return mt_err(err, MT_LAYOUT_MISMATCH,
                    "%s: inputs/%d (%s) must be a dense tensor, got kind %s", name, k, role[k],
                    mt_kind_name(in[k]->kind));
  a->dt = a->param->dtype;
  /* ADA-7: integer and bool params; the masked path takes them but uint8 */
  if (!mt__cpu_is_float(a->dt) && (strcmp(name, "adagrad_masked") != 0 || a->dt == MT_uint8))
    return ada_int_refusal(name, a, err);
  /* ADA-7: the masked path builds a MaskedTensor, which refuses bfloat16 */
  if (a->dt == MT_bfloat16 && strcmp(name, "adagrad_masked") == 0)
    return mt_err(err, MT_DTYPE_MISMATCH, "%s: torch.bfloat16 is not supported in MaskedTensor.",
                  name);
  for (int k = 1; k < 3; k++) {
    mt_dtype d = in[k]->kind == MT_KIND_MASKED ? in[k]->data->dtype : in[k]->dtype;
    if (d != a->dt)
      return mt_err(err, MT_DTYPE_MISMATCH, "%s: inputs/%d (%s) has dtype %s, param has dtype %s",
                    name, k, role[k], mt_dtype_name(d), mt_dtype_name(a->dt));
    if (!mt_shape_equal(in[k], a->param))
      return mt_err(err, MT_SHAPE_MISMATCH, "%s: inputs/%d (%s) has shape %s, param has shape %s",
                    name, k, role[k], mt_shape_str(in[k]->ndim, in[k]->shape, sa, sizeof sa),
                    mt_shape_str(a->param->ndim, a->param->shape, sb, sizeof sb));
  }
  return MT_OK;
}

/* Outputs 0 and 1: contiguous copies of param and state_sum to update. */
static mt_status ada_outputs(mt_call *call, const ada_args *a, mt_error *err) {
  const mt_host *h = mt__cpu_host(call);
  mt_status st;
  if ((st = mt__cpu_copy(h, a->param, &call->out[0], err)) != MT_OK) return st;
  if ((st = mt__cpu_copy(h, a->state_sum, &call->out[1], err)) != MT_OK) return st;
  return MT_OK;
}

/* Dense linear index of each COO entry (sparse dims). */
static mt_status coo_linear_all(const mt_tensor *g, int64_t **lin, mt_error *err) {
  *lin = malloc(sizeof **lin * (size_t)(g->nnz ? g->nnz : 1));
  if (!*lin)
    return mt_err(err, MT_OUT_OF_MEMORY, "out of memory for %lld COO entries", (long long)g->nnz);
  for (int64_t k = 0; k < g->nnz; k++) (*lin)[k] = mt_coo_linear(g, k);
  return MT_OK;
}

/* ---- the compute (common/exec.h) --------------------------------------- */

/* The planned path p of the call's arguments a. */
static mt_ada_par ada_par(mt_ada_path path, const ada_args *a, int64_t row, int64_t nnz) {
  mt_ada_par p;
  memset(&p, 0, sizeof p);
  p.path = path;
  p.kind = a->dt == MT_float64 ? ADA_DOUBLE
           : a->dt == MT_float16 ? ADA_HALF
           : a->dt == MT_bfloat16 ? ADA_BF16
                                  : ADA_FLOAT;
  p.dt = a->dt;
  p.sdt = a->dt == MT_bool ? MT_int64 : a->dt;
  p.nclr = -a->hp.clr;
  p.wd = a->hp.weight_decay;
  p.eps = a->hp.eps;
  p.use_wd = a->hp.weight_decay != 0.0; /* torch: `if weight_decay != 0` */
  p.maximize = a->hp.maximize;
  p.row = row;
  p.n = mt_numel(a->param);
  p.nnz = nnz;
  return p;
}

/* Runs the planned step on ex. */
static mt_status ada_run(const mt_exec *ex, const char *name, const mt_ada_par *p,
                         const mt_ada_bufs *b, mt_error *err) {
  mt_status st;
  if (!ex->adagrad)
    return mt_err(err, MT_NOT_SUPPORTED, "%s: the %s backend has no optim kernels", name,
                  ex->name);
  if (b->n == 0) return MT_OK;
  if ((st = ex->adagrad(p, b, err)) != MT_OK) return mt_err_prefix(err, "%s", name);
  return MT_OK;
}

/* A float path over the outputs param/state (call->out[0], [1]) updated in
 * place, std written to sdvals (nsd elements), grad values gvals (ng):
 * float16/bfloat16 (ADA-7) on float workspaces, converted on the host
 * (exactly, both ways: the results are values of the dtype already). */
static mt_status ada_float_run(const mt_exec *ex, mt_call *call, const char *name,
                               const mt_ada_par *p, mt_ada_bufs *b, const void *gvals, void *sdvals,
                               int64_t nsd, mt_error *err) {
  mt_status st;
  if (p->kind == ADA_HALF || p->kind == ADA_BF16) {
    ada_f16 w = {0};
    if ((st = f16_open(&w, call, gvals, b->n, b->ng, nsd, err)) != MT_OK) return st;
    b->param = w.p;
    b->state = w.s;
    b->std = w.sd;
    b->grad = w.g;
    if ((st = ada_run(ex, name, p, b, err)) != MT_OK) {
      f16_free(&w);
      return st;
    }
    f16_close(&w, call, sdvals, b->n, nsd);
    return MT_OK;
  }
  b->param = call->out[0]->values;
  b->state = call->out[1]->values;
  b->std = sdvals;
  b->grad = gvals;
  return ada_run(ex, name, p, b, err);
}

/* The kept entries of a coalesced COO grad (keep NULL: all): their dense
 * linear indices (*klin) and their entries in g (*ksrc, NULL when all are
 * kept), *n_keep of them. */
static mt_status kept_entries(const mt_tensor *g, const uint8_t *keep, int64_t **klin,
                              int64_t **ksrc, int64_t *n_keep, mt_error *err) {
  int64_t n = 0;
  *ksrc = NULL;
  if (!keep) {
    *n_keep = g->nnz;
    return coo_linear_all(g, klin, err);
  }
  for (int64_t k = 0; k < g->nnz; k++) n += keep[k] != 0;
  *klin = malloc(sizeof **klin * (size_t)(n ? n : 1));
  *ksrc = malloc(sizeof **ksrc * (size_t)(n ? n : 1));
  if (!*klin || !*ksrc) {
    free(*klin);
    free(*ksrc);
    *klin = *ksrc = NULL;
    return mt_err(err, MT_OUT_OF_MEMORY, "out of memory for %lld COO entries", (long long)n);
  }
  for (int64_t k = 0, w = 0; k < g->nnz; k++) {
    if (!keep[k]) continue;
    (*klin)[w] = mt_coo_linear(g, k);
    (*ksrc)[w++] = k;
  }
  *n_keep = n;
  return MT_OK;
}

/* ---- ADA-1: adagrad_dense ----------------------------------------------- */

static mt_status adagrad_dense(mt_call *call, const mt_exec *ex, mt_error *err) {
  static const char *name = "adagrad_dense";
  const mt_host *h = mt__cpu_host(call);
  ada_args a;
  const mt_tensor *g;
  mt_tensor *gtmp = NULL;
  mt_status st;

  mt__cpu_begin(call);
  if ((st = mt__kw_check(MT_OP_adagrad_dense, call->kw, err)) != MT_OK) return st;
  if ((st = ada_args_get(call, name, &a, err)) != MT_OK) return st;
  if (a.grad->kind != MT_KIND_DENSE)
    return mt_err(err, MT_LAYOUT_MISMATCH,
                  "%s: inputs/1 (grad) must be a dense tensor, got kind %s", name,
                  mt_kind_name(a.grad->kind));
  if ((st = mt__cpu_contig(a.grad, &g, &gtmp, err)) != MT_OK) goto out;
  if ((st = ada_outputs(call, &a, err)) != MT_OK) goto out;
  if ((st = h->dense_new(a.dt, a.param->ndim, a.param->shape, &call->out[2], err)) != MT_OK)
    goto out;
  int64_t n = mt_numel(a.param);
  mt_ada_par p = ada_par(ADA_DENSE, &a, 1, 0);
  mt_ada_bufs b = {.n = n, .ng = n};
  if ((st = ada_float_run(ex, call, name, &p, &b, g->values, call->out[2]->values, n, err)) !=
      MT_OK)
    goto out;
  call->n_out = 3;
out:
  mt_tensor_free(gtmp);
  if (st != MT_OK) mt__cpu_drop_outputs(call);
  return st;
}

/* ---- ADA-2: adagrad_sparse ---------------------------------------------- */

static mt_status adagrad_sparse(mt_call *call, const mt_exec *ex, mt_error *err) {
  static const char *name = "adagrad_sparse";
  const mt_host *h = mt__cpu_host(call);
  ada_args a;
  const mt_tensor *g;
  mt_tensor *gtmp = NULL, *std = NULL;
  int64_t *lin = NULL, *src = NULL, n_keep = 0;
  mt_status st;

  mt__cpu_begin(call);
  if ((st = mt__kw_check(MT_OP_adagrad_sparse, call->kw, err)) != MT_OK) return st;
  if ((st = ada_args_get(call, name, &a, err)) != MT_OK) return st;
  if (a.grad->kind != MT_KIND_COO)
    return mt_err(err, MT_LAYOUT_MISMATCH,
                  "%s: inputs/1 (grad) must be a sparse COO tensor, got kind %s", name,
                  mt_kind_name(a.grad->kind));
  /* ADA-2: torch refuses weight decay with a sparse gradient. */
  if (a.hp.weight_decay != 0.0)
    return mt_err(err, MT_INVALID_ARGUMENT,
                  "%s: weight_decay option is not compatible with sparse gradients", name);
  /* grad = grad.coalesce(): the update is non-linear, duplicates are summed */
  if ((st = mt__exec_coalesced(ex, a.grad, &g, &gtmp, err)) != MT_OK) goto out;
  if ((st = kept_entries(g, NULL, &lin, &src, &n_keep, err)) != MT_OK) goto out;
  if ((st = ada_outputs(call, &a, err)) != MT_OK) goto out;
  /* std: COO over the coalesced grad's indices */
  if ((st = h->coo_new(a.dt, g->ndim, g->shape, g->sparse_dim, g->nnz, &std, err)) != MT_OK)
    goto out;
  call->out[2] = std;
  if (g->nnz)
    memcpy(std->indices, g->indices, sizeof(int64_t) * (size_t)g->sparse_dim * (size_t)g->nnz);
  std->coalesced = 1;
  int64_t row = mt_coo_row_numel(g), nv = g->nnz * row;
  mt_ada_par p = ada_par(ADA_COO, &a, row, g->nnz);
  mt_ada_bufs b = {.lin = lin, .src = src, .n = mt_numel(a.param), .ng = nv, .nu = n_keep};
  if ((st = ada_float_run(ex, call, name, &p, &b, g->values, std->values, nv, err)) != MT_OK)
    goto out;
  call->n_out = 3;
out:
  free(lin);
  free(src);
  mt_tensor_free(gtmp);
  if (st != MT_OK) mt__cpu_drop_outputs(call);
  return st;
}

/* ---- ADA-3: adagrad_masked ---------------------------------------------- */

/* The masked path over COO storage: g is the coalesced gradient data,
 * keep[k] its mask per entry. std is a masked tensor with COO data and a
 * COO mask over the kept entries. */
static mt_status masked_coo(mt_call *call, const mt_exec *ex, const ada_args *a,
                            const mt_tensor *g, const uint8_t *keep, mt_error *err) {
  const mt_host *h = mt__cpu_host(call);
  mt_tensor *sdata = NULL, *smask = NULL;
  int64_t *lin = NULL, *src = NULL, n_keep = 0;
  mt_status st;
  if ((st = kept_entries(g, keep, &lin, &src, &n_keep, err)) != MT_OK) goto out;
  if ((st = ada_outputs(call, a, err)) != MT_OK) goto out;
  if ((st = h->coo_new(a->dt, g->ndim, g->shape, g->sparse_dim, n_keep, &sdata, err)) != MT_OK)
    goto out;
  if ((st = h->coo_new(MT_bool, g->ndim, g->shape, g->sparse_dim, n_keep, &smask, err)) != MT_OK)
    goto out;
  for (int64_t w = 0; w < n_keep; w++) {
    for (int d = 0; d < g->sparse_dim; d++) {
      sdata->indices[d * n_keep + w] = g->indices[d * g->nnz + src[w]];
      smask->indices[d * n_keep + w] = g->indices[d * g->nnz + src[w]];
    }
    ((uint8_t *)smask->values)[w] = 1;
  }
  sdata->coalesced = smask->coalesced = 1;
  int64_t row = mt_coo_row_numel(g);
  mt_ada_par p = ada_par(ADA_COO, a, row, g->nnz);
  mt_ada_bufs b = {.lin = lin, .src = src, .n = mt_numel(a->param), .ng = g->nnz * row,
                   .nu = n_keep};
  if ((st = ada_float_run(ex, call, "adagrad_masked", &p, &b, g->values, sdata->values,
                          n_keep * row, err)) != MT_OK)
    goto out;
  st = h->masked_new(sdata, smask, &call->out[2], err);
  sdata = smask = NULL; /* owned by masked_new, also on failure */
out:
  free(lin);
  free(src);
  if (sdata) h->free(sdata);
  if (smask) h->free(smask);
  return st;
}

/* ADA-7: the masked path of an integer or bool param (common/optim_math.h's
 * mt_ada_int_*: integer state_sum, float32 std and param). g/gk: the
 * coalesced COO grad data and which entries are kept, or (g NULL) the
 * dense-storage view mv. */
static mt_status masked_int(mt_call *call, const mt_exec *ex, const ada_args *a,
                            const mt_tensor *g, const uint8_t *gk, const mt__cpu_mview *mv,
                            mt_error *err) {
  static const char *name = "adagrad_masked";
  const mt_host *h = mt__cpu_host(call);
  mt_dtype sdt = a->dt == MT_bool ? MT_int64 : a->dt;
  const mt_tensor *pv = NULL, *sv = NULL;
  mt_tensor *ptmp = NULL, *stmp = NULL, *sdata = NULL, *smask = NULL;
  int64_t n = mt_numel(a->param), *lin = NULL, *src = NULL, n_keep = 0;
  mt_status st;
  if (a->hp.maximize && a->dt == MT_bool)
    return mt_err(err, MT_DTYPE_MISMATCH,
                  "%s: Negation, the `-` operator, on a bool tensor is not supported (maximize "
                  "with a bool grad)",
                  name);
  if ((st = mt__cpu_contig(a->param, &pv, &ptmp, err)) != MT_OK) goto out;
  if ((st = mt__cpu_contig(a->state_sum, &sv, &stmp, err)) != MT_OK) goto out;
  if ((st = h->dense_new(MT_float32, a->param->ndim, a->param->shape, &call->out[0], err)) != MT_OK)
    goto out;
  if ((st = h->dense_new(sdt, a->param->ndim, a->param->shape, &call->out[1], err)) != MT_OK)
    goto out;
  mt_ada_bufs b = {.param = call->out[0]->values, .state = call->out[1]->values,
                   .param_in = pv->values, .state_in = sv->values, .n = n};
  if (g) {
    if ((st = kept_entries(g, gk, &lin, &src, &n_keep, err)) != MT_OK) goto out;
    if ((st = h->coo_new(MT_float32, g->ndim, g->shape, g->sparse_dim, n_keep, &sdata, err)) !=
        MT_OK)
      goto out;
    if ((st = h->coo_new(MT_bool, g->ndim, g->shape, g->sparse_dim, n_keep, &smask, err)) != MT_OK)
      goto out;
    sdata->coalesced = smask->coalesced = 1;
    for (int64_t w = 0; w < n_keep; w++) {
      for (int d = 0; d < g->sparse_dim; d++)
        sdata->indices[d * n_keep + w] = smask->indices[d * n_keep + w] =
            g->indices[d * g->nnz + src[w]];
      ((uint8_t *)smask->values)[w] = 1;
    }
    mt_ada_par p = ada_par(ADA_INT_COO, a, 1, g->nnz); /* ADA-8: no dense dims */
    b.std = sdata->values;
    b.grad = g->values;
    b.lin = lin;
    b.src = src;
    b.ng = g->nnz;
    b.nu = n_keep;
    if ((st = ada_run(ex, name, &p, &b, err)) != MT_OK) goto out;
    st = h->masked_new(sdata, smask, &call->out[2], err);
    sdata = smask = NULL; /* owned by masked_new, also on failure */
    goto out;
  }
  mt_tensor *dd = NULL, *dm = NULL;
  if ((st = mt__cpu_new_masked_dense(h, MT_float32, a->param->ndim, a->param->shape, &call->out[2],
                                     &dd, &dm, err)) != MT_OK)
    goto out;
  if (n) memcpy(dm->values, mv->mask->values, (size_t)n);
  mt_ada_par p = ada_par(ADA_INT_DENSE, a, 1, 0);
  b.std = dd->values;
  b.grad = mv->data->values;
  b.mask = mv->mask->values;
  st = ada_run(ex, name, &p, &b, err);
out:
  free(lin);
  free(src);
  if (sdata) h->free(sdata);
  if (smask) h->free(smask);
  mt_tensor_free(ptmp);
  mt_tensor_free(stmp);
  return st;
}

static mt_status adagrad_masked(mt_call *call, const mt_exec *ex, mt_error *err) {
  static const char *name = "adagrad_masked";
  const mt_host *h = mt__cpu_host(call);
  ada_args a;
  const mt_tensor *g = NULL, *gm = NULL;
  mt_tensor *gtmp = NULL, *gmtmp = NULL, *sdata = NULL, *smask = NULL;
  mt__cpu_mview mv = {0};
  uint8_t *keep = NULL;
  mt_status st;

  mt__cpu_begin(call);
  if ((st = mt__kw_check(MT_OP_adagrad_masked, call->kw, err)) != MT_OK) return st;
  if ((st = ada_args_get(call, name, &a, err)) != MT_OK) return st;
  if (a.grad->kind != MT_KIND_MASKED && a.grad->kind != MT_KIND_COO)
    return mt_err(err, MT_LAYOUT_MISMATCH,
                  "%s: inputs/1 (grad) must be a masked tensor or a sparse COO tensor, got kind %s",
                  name, mt_kind_name(a.grad->kind));
  /* ADA-3: the tutorial's masked path has no weight decay. */
  if (a.hp.weight_decay != 0.0)
    return mt_err(err, MT_INVALID_ARGUMENT,
                  "%s: weight_decay is not supported by the MaskedTensor Adagrad path (got %g)",
                  name, a.hp.weight_decay);

  if (a.grad->kind == MT_KIND_COO) {
    /* The tutorial: mask = (grad.to_dense() != 0).to_sparse(), so the
     * coalesced grad's explicitly stored zeros are masked out. */
    if (a.grad->dense_dim != 0) { /* ADA-8: that mask has no dense dims */
      st = mt_err(err, MT_LAYOUT_MISMATCH,
                  "%s: mask.dense_dim() must match input.dense_dim(): 0 vs %d (the tutorial's mask "
                  "(grad.to_dense() != 0).to_sparse() of a hybrid grad)",
                  name, a.grad->dense_dim);
      goto out;
    }
    if ((st = mt__exec_coalesced(ex, a.grad, &g, &gtmp, err)) != MT_OK) goto out;
    keep = malloc((size_t)(g->nnz ? g->nnz : 1));
    if (!keep) {
      st = mt_err(err, MT_OUT_OF_MEMORY, "%s: out of memory", name);
      goto out;
    }
    for (int64_t k = 0; k < g->nnz; k++) keep[k] = mt__cpu_ld(g->values, a.dt, k) != 0.0;
    st = mt__cpu_is_float(a.dt) ? masked_coo(call, ex, &a, g, keep, err)
                                : masked_int(call, ex, &a, g, keep, NULL, err);
    goto out;
  }
  if (a.grad->data->kind == MT_KIND_COO) {
    /* COO storage: data and mask share coalesced indices; the mask values
     * say which entries are specified. */
    if ((st = mt__exec_coalesced(ex, a.grad->data, &g, &gtmp, err)) != MT_OK) goto out;
    if ((st = mt__exec_coalesced(ex, a.grad->mask, &gm, &gmtmp, err)) != MT_OK) goto out;
    if (!mt__cpu_coo_same_indices(g, gm)) {
      /* torch's masked_tensor accepts data of 0 entries with a mask of 1
       * (MASK-1: torch.eq of their indices broadcasts); the masked path's
       * first op then fails in where's bitwise_not, which sparse lacks */
      st = mt_err(err, MT_LAYOUT_MISMATCH,
                  "%s: inputs/1 (grad) data and mask store other COO indices (%" PRId64
                  " and %" PRId64 " entries): torch's masked ops refuse them (Could not run "
                  "'aten::bitwise_not' on SparseCPU)", name, g->nnz, gm->nnz);
      goto out;
    }
    if (g->dense_dim != 0) {
      st = mt_err(err, MT_INVALID_ARGUMENT,
                  "%s: inputs/1 (grad) data and mask must have no dense dims", name);
      goto out;
    }
    st = mt__cpu_is_float(a.dt)
             ? masked_coo(call, ex, &a, g, (const uint8_t *)gm->values, err)
             : masked_int(call, ex, &a, g, (const uint8_t *)gm->values, NULL, err);
    goto out;
  }
  if (a.grad->data->kind != MT_KIND_DENSE) {
    st = mt_err(err, MT_NOT_SUPPORTED, "%s: %s storage is not supported by the CPU backend", name,
                mt_kind_name(a.grad->data->kind));
    goto out;
  }
  /* Dense storage: std is a dense-storage masked tensor with grad's mask. */
  if ((st = mt__cpu_mview_open(a.grad, &mv, err)) != MT_OK) goto out;
  if (!mt__cpu_is_float(a.dt)) {
    st = masked_int(call, ex, &a, NULL, NULL, &mv, err);
    goto out;
  }
  if ((st = ada_outputs(call, &a, err)) != MT_OK) goto out;
  if ((st = mt__cpu_new_masked_dense(h, a.dt, a.param->ndim, a.param->shape, &call->out[2], &sdata,
                                     &smask, err)) != MT_OK)
    goto out;
  int64_t n = mt_numel(a.param);
  if (n) memcpy(smask->values, mv.mask->values, (size_t)n);
  mt_ada_par p = ada_par(ADA_MASKED_DENSE, &a, 1, 0);
  mt_ada_bufs b = {.mask = mv.mask->values, .n = n, .ng = n};
  st = ada_float_run(ex, call, name, &p, &b, mv.data->values, sdata->values, n, err);
out:
  if (st == MT_OK) call->n_out = 3;
  mt__cpu_mview_close(&mv);
  mt_tensor_free(gtmp);
  mt_tensor_free(gmtmp);
  free(keep);
  if (st != MT_OK) mt__cpu_drop_outputs(call);
  return st;
}

/* ---- the CPU reference's kernels, and the family's on another backend ----- */

mt_status mt_cpu_adagrad_dense(mt_call *call, mt_error *err) {
  return adagrad_dense(call, &mt_cpu_exec, err);
}
mt_status mt_cpu_adagrad_sparse(mt_call *call, mt_error *err) {
  return adagrad_sparse(call, &mt_cpu_exec, err);
}
mt_status mt_cpu_adagrad_masked(mt_call *call, mt_error *err) {
  return adagrad_masked(call, &mt_cpu_exec, err);
}

mt_status mt__optim_run(mt_call *call, mt_op op, const mt_exec *ex, mt_error *err) {
  switch (op) {
  case MT_OP_adagrad_dense: return adagrad_dense(call, ex, err);
  case MT_OP_adagrad_sparse: return adagrad_sparse(call, ex, err);
  case MT_OP_adagrad_masked: return adagrad_masked(call, ex, err);
  default: return mt_err(err, MT_NOT_SUPPORTED, "%s: not an optim op", mt_op_name(op));
  }
}

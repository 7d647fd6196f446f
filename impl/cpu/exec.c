/* exec.c - the CPU reference's compute hooks (common/exec.h): the shared
 * per-element math in a loop. */
#include <stdlib.h>

#include "common/binary_math.h"
#include "common/exec.h"
#include "common/grad_ew_math.h"
#include "common/grad_masked_fn_math.h"
#include "common/grad_reduce_math.h"
#include "common/grad_sparse_math.h"
#include "common/grad_structure_math.h"
#include "common/masked_fn_math.h"
#include "common/optim_math.h"
#include "common/reduce_math.h"
#include "common/sparse_optim_math.h"
#include "common/unary_math.h"
#include "common/sparse_convert_math.h"
#include "common/npma_unary_math.h"
#include "common/npma_binary_math.h"
#include "common/npma_reduce_math.h"
#include "common/npma_masked_fn_math.h"
#include "common/npma_structure_math.h"
#include "cpu_util.h"

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

static mt_status cpu_grad_ew(const struct mt_ew_par *p, const double *const *x,
                            const int64_t *xn, const double *gx, const uint8_t *gm, int64_t ng,
                            void *const *data, uint8_t *const *mask, mt_error *err) {
  (void)ng, (void)err;
  for (int k = 0; k < p->n_in; k++)
    if (p->grad[k])
      for (int64_t j = 0; j < xn[k]; j++) mt_ew_elem(p, k, x, gx, gm, data[k], mask[k], j);
  return MT_OK;
}

/* fills every input element, then runs the slices in order; stops at the
 * first fully masked slice of an integer median: the call fails there */
static mt_status cpu_masked_fn(const struct mt_mfn_par *p, const void *x, const void *mask,
                               int64_t n_mask, void *out, int64_t n_out, int64_t *bad_slice,
                               mt_error *err) {
  size_t n = (size_t)(p->n_in ? p->n_in : 1);
  double *xd = malloc(sizeof *xd * n), *td = malloc(sizeof *td * n);
  int64_t *xi = malloc(sizeof *xi * n), *ti = malloc(sizeof *ti * n);
  uint8_t *mk = malloc(n);
  mt_status st = MT_OK;
  (void)n_mask, (void)n_out;
  *bad_slice = -1;
  if (!xd || !td || !xi || !ti || !mk) {
    st = mt_err(err, MT_OUT_OF_MEMORY, "out of memory for %lld elements", (long long)p->n_in);
    goto out;
  }
  for (int64_t i = 0; i < p->n_in; i++) mt_mfn_fill(p, x, mask, xd, xi, mk, i);
  for (int64_t so = 0; so < p->n_slices; so++)
    if (mt_mfn_slice_out(p, xd, xi, mk, td, ti, out, so)) {
      *bad_slice = so;
      break;
    }
out:
  free(xd);
  free(td);
  free(xi);
  free(ti);
  free(mk);
  return st;
}

static mt_status cpu_masked_logaddexp(const struct mt_mfn_lae_par *p, const void *x, int64_t nx,
                                      const void *y, int64_t ny, const void *mx, int64_t nmx,
                                      const void *my, int64_t nmy, void *out, int64_t n,
                                      mt_error *err) {
  (void)nx, (void)ny, (void)nmx, (void)nmy, (void)err;
  for (int64_t i = 0; i < n; i++) mt_mfn_lae_out(p, x, y, mx, my, out, i);
  return MT_OK;
}

static mt_status cpu_masked_fn_sparse(const struct mt_mfn_sp_par *p, const void *vals,
                                      const int64_t *off, const int64_t *src,
                                      const int64_t *ent_off, const int64_t *ent_grp, void *out,
                                      mt_error *err) {
  (void)err;
  for (int64_t i = 0; i < p->n_out; i++) mt_mfn_sp_out(p, vals, off, src, ent_off, ent_grp, out, i);
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
  for (int64_t e = 0; e < n; e++) mt_sgd_elem(p, e, b->t, b->x, b->lin, b->first, b->order);
  return MT_OK;
}

static mt_status cpu_grad_reduce(const struct mt_gr_par *p, const double *x, const uint8_t *spec,
                                 const double *g, const int64_t *off, const int64_t *idx,
                                 void *data, uint8_t *mask, mt_error *err) {
  (void)err;
  for (int64_t o = 0; o < p->n_out; o++) mt_gr_group(p, x, spec, g, off, idx, data, mask, o);
  return MT_OK;
}

static mt_status cpu_grad_masked_fn(const struct mt_mfg_par *p, const double *const *x,
                                    const uint8_t *const *in, const double *go, int64_t n_go,
                                    const int64_t *off, const int64_t *idx, double *const *g,
                                    mt_error *err) {
  (void)n_go, (void)err;
  for (int64_t o = 0; o < p->n_grp; o++) mt_mfg_group(p, x, in, go, off, idx, g, o);
  return MT_OK;
}

static mt_status cpu_grad_scatter(const struct mt_gsc_par *p, const double *vals,
                                  const int64_t *off, const int64_t *src, void *data,
                                  uint8_t *mask, mt_error *err) {
  (void)err;
  for (int64_t i = 0; i < p->n; i++) mt_gsc_elem(p, vals, off, src, data, mask, i);
  return MT_OK;
}

static mt_status cpu_nonzero(mt_dtype dt, const void *x, int64_t n, int64_t run, uint8_t *flags,
                             mt_error *err) {
  (void)err;
  for (int64_t c = 0; c < n; c++) flags[c] = mt_spc_nonzero(dt, x, run, c);
  return MT_OK;
}

static mt_status cpu_convert(mt_dtype in, const void *x, int64_t n_x, const int64_t *off,
                             mt_dtype out, void *y, int64_t n, mt_error *err) {
  (void)n_x, (void)err;
  for (int64_t i = 0; i < n; i++) mt_spc_convert(in, x, off[i], out, y, i);
  return MT_OK;
}

static mt_status cpu_grad_sparse(const struct mt_gsp_par *p, const struct mt_gsp_bufs *b,
                                 double *g, mt_error *err) {
  (void)err;
  for (int64_t i = 0; i < p->n; i++) mt_gsp_elem(p, b, g, i);
  return MT_OK;
}

static mt_status cpu_npma_unary(const struct mt_npu_par *p, const void *in, const uint8_t *mask,
                                void *out, uint8_t *mask_out, int64_t n, mt_error *err) {
  (void)err;
  for (int64_t i = 0; i < n; i++) mt_npu_elem(p, in, mask, out, mask_out, i);
  return MT_OK;
}

static mt_status cpu_npma_binary(const struct mt_npb_par *p, const void *a, int64_t na,
                                 const uint8_t *ma, const void *b, int64_t nb, const uint8_t *mb,
                                 void *out, uint8_t *mask_out, int64_t n, mt_error *err) {
  (void)na, (void)nb, (void)err;
  for (int64_t i = 0; i < n; i++) mt_npb_elem(p, a, ma, b, mb, out, mask_out, i);
  return MT_OK;
}

static mt_status cpu_npma_reduce(const struct mt_npr_par *p, const void *x, const uint8_t *mask,
                                 int64_t n, const int64_t *off, const int64_t *idx, int64_t n_grp,
                                 void *out, uint8_t *mask_out, mt_error *err) {
  (void)n, (void)err;
  for (int64_t o = 0; o < n_grp; o++) mt_npr_out(p, x, mask, off, idx, out, mask_out, o);
  return MT_OK;
}

static mt_status cpu_npma_masked_fn(const struct mt_npm_par *p, const void *x,
                                    const uint8_t *mask, int64_t n, void *out, uint8_t *mask_out,
                                    int64_t n_slices, mt_error *err) {
  double *scratch = NULL;
  if (p->kind == NPM_MEDIAN && !(scratch = malloc(sizeof *scratch * (size_t)(n ? n : 1))))
    return mt_err(err, MT_OUT_OF_MEMORY, "out of memory for %lld elements", (long long)n);
  for (int64_t s = 0; s < n_slices; s++) mt_npm_slice(p, x, mask, out, mask_out, scratch, s);
  free(scratch);
  return MT_OK;
}

static mt_status cpu_npma_where(const struct mt_npw_par *p, const void *c, int64_t nc,
                                const uint8_t *mc, const void *x, int64_t nx, const uint8_t *mx,
                                const void *y, int64_t ny, const uint8_t *my, void *out,
                                uint8_t *mask_out, int64_t n, mt_error *err) {
  (void)nc, (void)nx, (void)ny, (void)err;
  for (int64_t i = 0; i < n; i++) mt_npw_elem(p, c, mc, x, mx, y, my, out, mask_out, i);
  return MT_OK;
}

static mt_status cpu_npma_masked(const struct mt_npk_par *p, const void *data, const void *mask,
                                 int64_t mask_bytes, void *out, uint8_t *mask_out, int64_t n,
                                 mt_error *err) {
  (void)mask_bytes, (void)err;
  for (int64_t i = 0; i < n; i++) mt_npk_elem(p, data, mask, out, mask_out, i);
  return MT_OK;
}

const mt_exec mt_cpu_exec = {
    .name = "cpu",
    .coalesce = mt_coo_coalesce,
    .unary = cpu_unary,
    .binary = cpu_binary,
    .reduce = cpu_reduce,
    .grad_ew = cpu_grad_ew,
    .masked_fn = cpu_masked_fn,
    .masked_logaddexp = cpu_masked_logaddexp,
    .masked_fn_sparse = cpu_masked_fn_sparse,
    .adagrad = cpu_adagrad,
    .sparse_adam = cpu_sparse_adam,
    .sgd = cpu_sgd,
    .grad_reduce = cpu_grad_reduce,
    .grad_masked_fn = cpu_grad_masked_fn,
    .grad_scatter = cpu_grad_scatter,
    .sparse_blas = mt__cpu_sparse_blas_exec,
    .sparse_softmax = mt__cpu_sparse_softmax_exec,
    .nonzero = cpu_nonzero,
    .convert = cpu_convert,
    .sparse_vals = mt__cpu_sparse_vals_exec,
    .grad_sparse = cpu_grad_sparse,
    .npma_unary = cpu_npma_unary,
    .npma_binary = cpu_npma_binary,
    .npma_reduce = cpu_npma_reduce,
    .npma_masked_fn = cpu_npma_masked_fn,
    .npma_where = cpu_npma_where,
    .npma_masked = cpu_npma_masked,
};

mt_status mt__exec_coalesced(const mt_exec *ex, const mt_tensor *coo, const mt_tensor **view,
                             mt_tensor **tmp, mt_error *err) {
  *tmp = NULL;
  *view = coo;
  if (coo->coalesced) return MT_OK;
  if (!ex->coalesce)
    return mt_err(err, MT_NOT_SUPPORTED, "the %s backend cannot coalesce a COO tensor", ex->name);
  mt_status st = ex->coalesce(coo, tmp, err);
  *view = *tmp;
  if (st != MT_OK || ex == &mt_cpu_exec || !*tmp ||
      mt_tensor_validate(*tmp, "coalesced", NULL) == MT_OK)
    return st;
  mt_tensor_free(*tmp);
  *tmp = NULL;
  *view = NULL;
  return mt_err(err, MT_DEVICE_ERROR, "coalesce: the %s backend's coalesced copy is malformed",
                ex->name);
}

mt_status mt__exec_values_gap(mt_call *call, const mt_exec *ex, mt_status st, const char *op,
                              const char *what, mt_error *err) {
  if (st != MT_OK) return st; /* the host plan's refusal: torch's error */
  mt__cpu_drop_outputs(call);   /* values computed on the host: never a result of ex */
  return mt_err(err, MT_NOT_SUPPORTED, "%s: %s: the %s backend has no kernels for it yet", op,
                what, ex->name);
}

/* sparse_blas.cu - the sparse_blas family on the device: every product
 * (mm, sparse_mm, spmm, addmm, sparse_addmm, smm, sspaddmm, hspmm, bmm,
 * linear, matmul, addmv, sparse_sampled_addmm) on COO, CSR, CSC, BSR and
 * BSC operands. The host plan (torch's checks and messages, the sparse
 * operand's cells as per-row term lists in stored order, the dense
 * operand's element offsets, a sparse B's duplicates per element, the
 * result's structure and which accumulator and input element each result
 * value takes) is impl/cpu/sparse_blas.c's (mt__sparse_blas_run); this file
 * is its compute. Two forms:
 *  - a float32/float64 product with a dense B (mm, addmm, addmv, bmm,
 *    linear, ... with a strided second operand): cuSPARSE (cusparse_lib.cu,
 *    SpMM, or SpMV for one column) on the terms as a CSR matrix and B
 *    gathered column-major, then one thread per result value for alpha,
 *    beta and C (common/sparse_blas_math.h, "the cuSPARSE form"); its own
 *    summation order stays within these ops' order-free golden tolerances;
 *  - everything else (integers, float16/bfloat16, a sparse B, or
 *    MTCS_CUSPARSE=0): one thread per result value (mt_spb_out) walks its
 *    accumulator row's terms in the CPU's order. */
#include <stdlib.h>
#include <string.h>

#include "common/exec.h"
#include "common/sparse_blas_math.h"
#include "common/sparse_blas_ops.h"
#include "cuda_compat.h"

MTC_KERNEL void spb_kernel(mt_spb_par p, mt_spb_bufs b, int64_t n) {
  MTC_FOR(o, n) mt_spb_out(&p, &b, o);
}
MTC_KERNEL void spb_gather_a(mt_spb_par p, mt_spb_bufs b, const int64_t *perm,
                             const int64_t *tptr, int64_t nu, void *av) {
  MTC_FOR(u, nu) mt_spb_gather_a(&p, &b, perm, tptr, u, av);
}
MTC_KERNEL void spb_gather_b(mt_spb_par p, mt_spb_bufs b, int64_t k, void *bcm) {
  MTC_FOR(e, b.nbo) mt_spb_gather_b(&p, &b, k, e, bcm);
}
MTC_KERNEL void spb_store(mt_spb_par p, mt_spb_bufs b, const void *acc) {
  MTC_FOR(o, p.n_out) mt_spb_out_cm(&p, &b, acc, o);
}

/* The CSR cuSPARSE gets, planned on the host from the terms (index
 * bookkeeping): perm, the terms sorted by (row, B row, stored order); its nu
 * stored values, one per run of equal (row, B row): column col[u], terms
 * perm[tptr[u] .. tptr[u + 1]); row offsets rptr. */
typedef struct {
  int64_t *perm, *tptr, *col, *rptr, nu;
} csr_host;

typedef struct {
  int64_t row, col, t;
} csr_key;

static int csr_key_cmp(const void *x, const void *y) {
  const csr_key *a = (const csr_key *)x, *b = (const csr_key *)y;
  if (a->row != b->row) return a->row < b->row ? -1 : 1;
  if (a->col != b->col) return a->col < b->col ? -1 : 1;
  return a->t < b->t ? -1 : a->t > b->t;
}

static void csr_host_free(csr_host *h) {
  free(h->perm), free(h->tptr), free(h->col), free(h->rptr);
  memset(h, 0, sizeof *h);
}

static mt_status csr_plan(const mt_spb_par *p, const mt_spb_bufs *b, csr_host *h, mt_error *err) {
  int64_t nt = b->nt, m = p->m;
  csr_key *keys = (csr_key *)malloc((size_t)nt * sizeof *keys);
  memset(h, 0, sizeof *h);
  h->perm = (int64_t *)malloc((size_t)nt * sizeof(int64_t));
  h->tptr = (int64_t *)malloc((size_t)(nt + 1) * sizeof(int64_t));
  h->col = (int64_t *)malloc((size_t)nt * sizeof(int64_t));
  h->rptr = (int64_t *)calloc((size_t)(m + 1), sizeof(int64_t));
  if (!keys || !h->perm || !h->tptr || !h->col || !h->rptr) {
    free(keys);
    csr_host_free(h);
    return mt_err(err, MT_OUT_OF_MEMORY, "sparse_blas: the CSR plan of %lld terms",
                  (long long)nt);
  }
  for (int64_t r = 0; r < m; r++)
    for (int64_t t = b->rptr[r]; t < b->rptr[r + 1]; t++) keys[t] = (csr_key){r, b->tb[t], t};
  qsort(keys, (size_t)nt, sizeof *keys, csr_key_cmp);
  for (int64_t i = 0; i < nt; i++) {
    h->perm[i] = keys[i].t;
    if (i == 0 || keys[i].row != keys[i - 1].row || keys[i].col != keys[i - 1].col) {
      h->tptr[h->nu] = i;
      h->col[h->nu++] = keys[i].col;
      h->rptr[keys[i].row + 1]++;
    }
  }
  h->tptr[h->nu] = nt;
  for (int64_t r = 0; r < m; r++) h->rptr[r + 1] += h->rptr[r];
  free(keys);
  return MT_OK;
}

/* The cuSPARSE form applies: float32/float64, a dense B, a product with
 * something to sum (cuSPARSE takes no empty dimension). */
static int use_cusparse(const mt_spb_par *p, const mt_spb_bufs *b) {
  return !p->is_int && !p->b_sum && (p->dt == MT_float32 || p->dt == MT_float64) && p->m > 0 &&
         p->n > 0 && b->nbo > 0 && b->nt > 0 && MTC(cusparse_on)();
}

/* One call on the device: the cuSPARSE form when h (its CSR) is given,
 * else the own kernel. */
static mt_status spb_device(const mt_spb_par *p, const mt_spb_bufs *b, const csr_host *h,
                            mt_error *err) {
  size_t es = mt_dtype_size(p->dt), total = 0, i8 = sizeof(int64_t);
  int64_t no = p->n_out, nr = p->m + 1, nbp = p->b_sum ? b->nbe + 1 : 0;
  int64_t nc = b->c ? b->nc : 0;
  /* the cuSPARSE form's CSR (perm, tptr, col, row offsets, values), B
   * column-major (k rows) and the accumulator */
  int64_t nperm = h ? b->nt : 0, nu = h ? h->nu : 0, ntp = h ? nu + 1 : 0, ncr = h ? nr : 0;
  int64_t nbcm = h ? b->nbo : 0, nacc = h ? p->m * p->n : 0, k = h ? b->nbo / p->n : 0;
  mtc_arena a;
  mt_status st;
  if (MTC(arena_add)(&total, b->na, es) || MTC(arena_add)(&total, b->nb, es) ||
      MTC(arena_add)(&total, nc, es) || MTC(arena_add)(&total, nr, i8) ||
      MTC(arena_add)(&total, b->nt, i8) || MTC(arena_add)(&total, b->nt, i8) ||
      MTC(arena_add)(&total, nbp, i8) || MTC(arena_add)(&total, b->nbo, i8) ||
      MTC(arena_add)(&total, no, i8) || MTC(arena_add)(&total, no, i8) ||
      MTC(arena_add)(&total, no, es) || MTC(arena_add)(&total, nperm, i8) ||
      MTC(arena_add)(&total, ntp, i8) || MTC(arena_add)(&total, nu, i8) ||
      MTC(arena_add)(&total, ncr, i8) || MTC(arena_add)(&total, nu, es) ||
      MTC(arena_add)(&total, nbcm, es) || MTC(arena_add)(&total, nacc, es))
    return mt_err(err, MT_OUT_OF_MEMORY, "sparse_blas: %lld results do not fit one device buffer",
                  (long long)no);
  if ((st = MTC(arena_open)(&a, total, "sparse_blas", err)) != MT_OK) return st;
  mt_spb_bufs d = *b;
  d.a = MTC(arena_take)(&a, b->na, es);
  d.b = MTC(arena_take)(&a, b->nb, es);
  d.c = nc ? MTC(arena_take)(&a, nc, es) : NULL;
  d.rptr = (const int64_t *)MTC(arena_take)(&a, nr, i8);
  d.ta = (const int64_t *)MTC(arena_take)(&a, b->nt, i8);
  d.tb = (const int64_t *)MTC(arena_take)(&a, b->nt, i8);
  d.bptr = nbp ? (const int64_t *)MTC(arena_take)(&a, nbp, i8) : NULL;
  d.boff = (const int64_t *)MTC(arena_take)(&a, b->nbo, i8);
  d.oq = (const int64_t *)MTC(arena_take)(&a, no, i8);
  d.oc = (const int64_t *)MTC(arena_take)(&a, no, i8);
  d.out = MTC(arena_take)(&a, no, es);
  int64_t *perm = (int64_t *)MTC(arena_take)(&a, nperm, i8);
  int64_t *tptr = (int64_t *)MTC(arena_take)(&a, ntp, i8);
  int64_t *col = (int64_t *)MTC(arena_take)(&a, nu, i8);
  int64_t *crp = (int64_t *)MTC(arena_take)(&a, ncr, i8);
  void *av = MTC(arena_take)(&a, nu, es), *bcm = MTC(arena_take)(&a, nbcm, es);
  void *acc = MTC(arena_take)(&a, nacc, es);
  if ((st = MTC(upload)(&a, (void *)d.a, b->a, (size_t)b->na * es, err)) != MT_OK ||
      (st = MTC(upload)(&a, (void *)d.b, b->b, (size_t)b->nb * es, err)) != MT_OK ||
      (nc && (st = MTC(upload)(&a, (void *)d.c, b->c, (size_t)nc * es, err)) != MT_OK) ||
      (st = MTC(upload)(&a, (void *)d.rptr, b->rptr, (size_t)nr * i8, err)) != MT_OK ||
      (st = MTC(upload)(&a, (void *)d.ta, b->ta, (size_t)b->nt * i8, err)) != MT_OK ||
      (st = MTC(upload)(&a, (void *)d.tb, b->tb, (size_t)b->nt * i8, err)) != MT_OK ||
      (nbp && (st = MTC(upload)(&a, (void *)d.bptr, b->bptr, (size_t)nbp * i8, err)) != MT_OK) ||
      (st = MTC(upload)(&a, (void *)d.boff, b->boff, (size_t)b->nbo * i8, err)) != MT_OK ||
      (st = MTC(upload)(&a, (void *)d.oq, b->oq, (size_t)no * i8, err)) != MT_OK ||
      (st = MTC(upload)(&a, (void *)d.oc, b->oc, (size_t)no * i8, err)) != MT_OK)
    goto out;
  if (h) {
    if ((st = MTC(upload)(&a, perm, h->perm, (size_t)nperm * i8, err)) != MT_OK ||
        (st = MTC(upload)(&a, tptr, h->tptr, (size_t)ntp * i8, err)) != MT_OK ||
        (st = MTC(upload)(&a, col, h->col, (size_t)nu * i8, err)) != MT_OK ||
        (st = MTC(upload)(&a, crp, h->rptr, (size_t)ncr * i8, err)) != MT_OK ||
        (st = MTC_LAUNCH(&a, spb_gather_a, nu, *p, d, perm, tptr, nu, av)) != MT_OK ||
        (st = MTC_LAUNCH(&a, spb_gather_b, b->nbo, *p, d, k, bcm)) != MT_OK ||
        (st = MTC(csr_mm)(&a, p->dt, p->m, k, p->n, nu, crp, col, av, bcm, acc, err)) != MT_OK ||
        (st = MTC_LAUNCH(&a, spb_store, no, *p, d, acc)) != MT_OK)
      goto out;
  } else if ((st = MTC_LAUNCH(&a, spb_kernel, no, *p, d, no)) != MT_OK) {
    goto out;
  }
  st = MTC(download)(&a, b->out, d.out, (size_t)no * es, err);
out:
  MTC(arena_close)(&a);
  return st;
}

extern "C" mt_status MTC(sparse_blas_exec)(const struct mt_spb_par *p,
                                           const struct mt_spb_bufs *b, mt_error *err) {
  csr_host h;
  mt_status st;
  memset(&h, 0, sizeof h);
  if (!p->n_out) return MT_OK;
  if (!use_cusparse(p, b)) return spb_device(p, b, NULL, err);
  if ((st = csr_plan(p, b, &h, err)) != MT_OK) return st;
  st = spb_device(p, b, &h, err);
  csr_host_free(&h);
  return st;
}

#define SPB_OP(name)                                                   \
  extern "C" mt_status MTC(name)(mt_call * call, mt_error * err) {     \
    return mt__sparse_blas_run(call, MT_OP_##name, &MTC(exec), err);   \
  }
SPB_OPS(SPB_OP)

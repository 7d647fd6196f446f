/* sparse_blas.cu - the sparse_blas family on the device: every product
 * (mm, sparse_mm, spmm, addmm, sparse_addmm, smm, sspaddmm, hspmm, bmm,
 * linear, matmul, addmv, sparse_sampled_addmm) on COO, CSR, CSC, BSR and
 * BSC operands. The host plan (torch's checks and messages, the sparse
 * operand's cells as per-row term lists in stored order, the dense
 * operand's element offsets, a sparse B's duplicates per element, the
 * result's structure and which accumulator and input element each result
 * value takes) is impl/cpu/sparse_blas.c's (mt__sparse_blas_run); this file
 * is its compute. Two forms:
 *  - a float32/float64 product: cuSPARSE (cusparse_lib.cu) on the terms
 *    as a CSR matrix (sorted, unique columns per row), times B gathered
 *    column-major (SpMM, or SpMV for one column) or B's stored elements as
 *    a CSR (SpGEMM, its C scattered into a dense accumulator), then one
 *    thread per result value for alpha, beta and C (common/
 *    sparse_blas_math.h, "the cuSPARSE form"); its own summation order
 *    stays within these ops' order-free golden tolerances;
 *  - everything else (integers, float16/bfloat16, empty products, sizes
 *    past SpGEMM's 32-bit indices, or MTCS_CUSPARSE=0): one thread per
 *    result value (mt_spb_out) walks its accumulator row's terms in the
 *    CPU's order. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/exec.h"
#include "common/sparse_blas_math.h"
#include "common/sparse_blas_ops.h"
#include "cuda_compat.h"

/* what the kernels take by value (cuda_compat.h, MTC_PLAIN_ARG) */
MTC_PLAIN_ARG(mt_spb_par);
MTC_PTR_ARG(mt_spb_bufs, 136, v.a, v.b, v.c, v.rptr, v.ta, v.tb, v.bptr, v.boff, v.oq, v.oc,
            v.out);

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
MTC_KERNEL void spb_gather_bs(mt_spb_par p, mt_spb_bufs b, const int64_t *bel, int64_t nbv,
                              void *bv) {
  MTC_FOR(v, nbv) mt_spb_gather_bs(&p, &b, bel, v, bv);
}
MTC_KERNEL void spb_store(mt_spb_par p, mt_spb_bufs b, const void *acc) {
  MTC_FOR(o, p.n_out) mt_spb_out_cm(&p, &b, acc, o);
}

/* Which form a call takes. */
typedef enum { SPB_OWN, SPB_SPMM, SPB_SPGEMM } spb_form;

/* The matrices cuSPARSE gets, planned on the host (index bookkeeping).
 * A: perm, the terms sorted by (row, B row, stored order); its nu stored
 * values, one per run of equal (row, B row): terms perm[tptr[u] ..
 * tptr[u + 1]). A sparse B (SpGEMM): its nbv stored elements bel[v]
 * (e = row * n + col, the elements with a duplicate list, row-major), row
 * offsets brp (kb + 1). cuSPARSE gets 32-bit indices, as torch hands
 * SpGEMM, every algorithm takes them (spb_form_of checks that they fit):
 * a32 (A's m + 1 row offsets, then its nu columns, the B rows) and b32
 * (brp, then the columns). */
typedef struct {
  spb_form form;
  int64_t *perm, *tptr, nu;
  int64_t *bel, *brp, nbv, kb;
  int32_t *a32, *b32;
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
  free(h->perm), free(h->tptr);
  free(h->bel), free(h->brp), free(h->a32), free(h->b32);
  memset(h, 0, sizeof *h);
}

static mt_status csr_oom(csr_host *h, int64_t nt, mt_error *err) {
  csr_host_free(h);
  return mt_err(err, MT_OUT_OF_MEMORY, "sparse_blas: the CSR plan of %lld terms", (long long)nt);
}

/* A sparse B's stored elements as a CSR (kb rows), its indices in 32 bits
 * (b32). */
static mt_status csr_plan_b(const mt_spb_par *p, const mt_spb_bufs *b, csr_host *h,
                            mt_error *err) {
  int64_t n = p->n, nbe = b->nbe;
  h->kb = nbe / n;
  h->nbv = 0;
  for (int64_t e = 0; e < nbe; e++) h->nbv += b->bptr[e] < b->bptr[e + 1];
  h->bel = (int64_t *)malloc((size_t)(h->nbv + 1) * sizeof(int64_t));
  h->brp = (int64_t *)calloc((size_t)(h->kb + 1), sizeof(int64_t));
  h->b32 = (int32_t *)malloc((size_t)(h->kb + 1 + h->nbv) * sizeof(int32_t));
  if (!h->bel || !h->brp || !h->b32) return csr_oom(h, b->nt, err);
  for (int64_t e = 0, v = 0; e < nbe; e++)
    if (b->bptr[e] < b->bptr[e + 1]) {
      h->b32[h->kb + 1 + v] = (int32_t)(e % n);
      h->bel[v++] = e;
      h->brp[e / n + 1]++;
    }
  for (int64_t r = 0; r < h->kb; r++) h->brp[r + 1] += h->brp[r];
  for (int64_t r = 0; r <= h->kb; r++) h->b32[r] = (int32_t)h->brp[r];
  return MT_OK;
}

static mt_status csr_plan(const mt_spb_par *p, const mt_spb_bufs *b, csr_host *h, mt_error *err) {
  int64_t nt = b->nt, m = p->m;
  csr_key *keys = (csr_key *)malloc((size_t)nt * sizeof *keys);
  h->perm = (int64_t *)malloc((size_t)nt * sizeof(int64_t));
  h->tptr = (int64_t *)malloc((size_t)(nt + 1) * sizeof(int64_t));
  /* the row offsets (counted, then summed), then up to nt columns */
  h->a32 = (int32_t *)calloc((size_t)(m + 1 + nt), sizeof(int32_t));
  if (!keys || !h->perm || !h->tptr || !h->a32) {
    free(keys);
    return csr_oom(h, nt, err);
  }
  int32_t *rptr = h->a32, *col = h->a32 + m + 1;
  for (int64_t r = 0; r < m; r++)
    for (int64_t t = b->rptr[r]; t < b->rptr[r + 1]; t++) keys[t] = (csr_key){r, b->tb[t], t};
  qsort(keys, (size_t)nt, sizeof *keys, csr_key_cmp);
  for (int64_t i = 0; i < nt; i++) {
    h->perm[i] = keys[i].t;
    if (i == 0 || keys[i].row != keys[i - 1].row || keys[i].col != keys[i - 1].col) {
      h->tptr[h->nu] = i;
      col[h->nu++] = (int32_t)keys[i].col;
      rptr[keys[i].row + 1]++;
    }
  }
  h->tptr[h->nu] = nt;
  for (int64_t r = 0; r < m; r++) rptr[r + 1] += rptr[r];
  free(keys);
  return h->form == SPB_SPGEMM ? csr_plan_b(p, b, h, err) : MT_OK;
}

/* The form a call takes: cuSPARSE for float32/float64 products with
 * something to sum (cuSPARSE takes no empty matrix) whose sizes fit its
 * 32-bit indices, SpMM for a dense B, SpGEMM for a sparse one that stores
 * an element; else the own kernel. */
static spb_form spb_form_of(const mt_spb_par *p, const mt_spb_bufs *b) {
  int64_t lim = INT32_MAX;
  if (p->is_int || (p->dt != MT_float32 && p->dt != MT_float64) || p->m <= 0 || p->n <= 0 ||
      b->nt <= 0 || !MTC(cusparse_on)() || p->m >= lim || p->n >= lim || b->nt >= lim)
    return SPB_OWN;
  /* a dense B: k = nbo / n rows; a sparse B stores an element iff its
   * duplicate lists hold an offset */
  if (!p->b_sum) return b->nbo > 0 && b->nbo / p->n < lim ? SPB_SPMM : SPB_OWN;
  return b->nbo > 0 && b->nbe < lim ? SPB_SPGEMM : SPB_OWN; /* kb = nbe / n fits too */
}

/* One call on the device: the form h->form (h NULL: the own kernel). */
static mt_status spb_device(const mt_spb_par *p, const mt_spb_bufs *b, const csr_host *h,
                            mt_error *err) {
  size_t es = mt_dtype_size(p->dt), total = 0, i8 = sizeof(int64_t), i4 = sizeof(int32_t);
  int64_t no = p->n_out, nr = p->m + 1, nbp = p->b_sum ? b->nbe + 1 : 0;
  int64_t nc = b->c ? b->nc : 0;
  /* the own kernel's term lists (rptr, tb); cuSPARSE's forms read h's CSR instead */
  int64_t nr_own = h ? 0 : nr, nt_own = h ? 0 : b->nt;
  int spmm = h && h->form == SPB_SPMM, spgemm = h && h->form == SPB_SPGEMM;
  /* cuSPARSE's A (perm, tptr, the 32-bit indices), its values; SpMM: B
   * column-major (k rows); SpGEMM: B's stored elements, 32-bit indices and
   * values; the accumulator */
  int64_t nu = h ? h->nu : 0, nperm = h ? b->nt : 0, ntp = h ? nu + 1 : 0;
  int64_t na32 = h ? nr + nu : 0;
  int64_t nbv = spgemm ? h->nbv : 0, nb32 = spgemm ? h->kb + 1 + nbv : 0;
  int64_t nbcm = spmm ? b->nbo : 0, nacc = h ? p->m * p->n : 0, k = spmm ? b->nbo / p->n : 0;
  mtc_arena a;
  mt_status st;
  if (MTC(arena_add)(&total, b->na, es) || MTC(arena_add)(&total, b->nb, es) ||
      MTC(arena_add)(&total, nc, es) || MTC(arena_add)(&total, nr_own, i8) ||
      MTC(arena_add)(&total, b->nt, i8) || MTC(arena_add)(&total, nt_own, i8) ||
      MTC(arena_add)(&total, nbp, i8) || MTC(arena_add)(&total, b->nbo, i8) ||
      MTC(arena_add)(&total, no, i8) || MTC(arena_add)(&total, no, i8) ||
      MTC(arena_add)(&total, no, es) || MTC(arena_add)(&total, nperm, i8) ||
      MTC(arena_add)(&total, ntp, i8) || MTC(arena_add)(&total, na32, i4) ||
      MTC(arena_add)(&total, nu, es) || MTC(arena_add)(&total, nbv, i8) ||
      MTC(arena_add)(&total, nb32, i4) || MTC(arena_add)(&total, nbv, es) ||
      MTC(arena_add)(&total, nbcm, es) || MTC(arena_add)(&total, nacc, es))
    return mt_err(err, MT_OUT_OF_MEMORY, "sparse_blas: %lld results do not fit one device buffer",
                  (long long)no);
  if ((st = MTC(arena_open)(&a, total, "sparse_blas", err)) != MT_OK) return st;
  mt_spb_bufs d = *b;
  d.a = MTC(arena_take)(&a, b->na, es);
  d.b = MTC(arena_take)(&a, b->nb, es);
  d.c = nc ? MTC(arena_take)(&a, nc, es) : NULL;
  d.rptr = h ? NULL : (const int64_t *)MTC(arena_take)(&a, nr_own, i8);
  d.ta = (const int64_t *)MTC(arena_take)(&a, b->nt, i8);
  d.tb = h ? NULL : (const int64_t *)MTC(arena_take)(&a, nt_own, i8);
  d.bptr = nbp ? (const int64_t *)MTC(arena_take)(&a, nbp, i8) : NULL;
  d.boff = (const int64_t *)MTC(arena_take)(&a, b->nbo, i8);
  d.oq = (const int64_t *)MTC(arena_take)(&a, no, i8);
  d.oc = (const int64_t *)MTC(arena_take)(&a, no, i8);
  d.out = MTC(arena_take)(&a, no, es);
  int64_t *perm = (int64_t *)MTC(arena_take)(&a, nperm, i8);
  int64_t *tptr = (int64_t *)MTC(arena_take)(&a, ntp, i8);
  int32_t *a32 = (int32_t *)MTC(arena_take)(&a, na32, i4);
  void *av = MTC(arena_take)(&a, nu, es);
  int64_t *bel = (int64_t *)MTC(arena_take)(&a, nbv, i8);
  int32_t *b32 = (int32_t *)MTC(arena_take)(&a, nb32, i4);
  void *bv = MTC(arena_take)(&a, nbv, es), *bcm = MTC(arena_take)(&a, nbcm, es);
  void *acc = MTC(arena_take)(&a, nacc, es);
  if ((st = MTC(upload)(&a, (void *)d.a, b->a, (size_t)b->na * es, err)) != MT_OK ||
      (st = MTC(upload)(&a, (void *)d.b, b->b, (size_t)b->nb * es, err)) != MT_OK ||
      (nc && (st = MTC(upload)(&a, (void *)d.c, b->c, (size_t)nc * es, err)) != MT_OK) ||
      (!h && (st = MTC(upload)(&a, (void *)d.rptr, b->rptr, (size_t)nr * i8, err)) != MT_OK) ||
      (st = MTC(upload)(&a, (void *)d.ta, b->ta, (size_t)b->nt * i8, err)) != MT_OK ||
      (!h && (st = MTC(upload)(&a, (void *)d.tb, b->tb, (size_t)b->nt * i8, err)) != MT_OK) ||
      (nbp && (st = MTC(upload)(&a, (void *)d.bptr, b->bptr, (size_t)nbp * i8, err)) != MT_OK) ||
      (st = MTC(upload)(&a, (void *)d.boff, b->boff, (size_t)b->nbo * i8, err)) != MT_OK ||
      (st = MTC(upload)(&a, (void *)d.oq, b->oq, (size_t)no * i8, err)) != MT_OK ||
      (st = MTC(upload)(&a, (void *)d.oc, b->oc, (size_t)no * i8, err)) != MT_OK)
    goto out;
  if (!h) {
    if ((st = MTC_LAUNCH(&a, spb_kernel, no, *p, d, no)) != MT_OK) goto out;
  } else {
    if ((st = MTC(upload)(&a, perm, h->perm, (size_t)nperm * i8, err)) != MT_OK ||
        (st = MTC(upload)(&a, tptr, h->tptr, (size_t)ntp * i8, err)) != MT_OK ||
        (st = MTC(upload)(&a, a32, h->a32, (size_t)na32 * i4, err)) != MT_OK ||
        (st = MTC(upload)(&a, bel, h->bel, (size_t)nbv * i8, err)) != MT_OK ||
        (st = MTC(upload)(&a, b32, h->b32, (size_t)nb32 * i4, err)) != MT_OK ||
        (st = MTC_LAUNCH(&a, spb_gather_a, nu, *p, d, perm, tptr, nu, av)) != MT_OK)
      goto out;
    if (spmm && ((st = MTC_LAUNCH(&a, spb_gather_b, b->nbo, *p, d, k, bcm)) != MT_OK ||
                 (st = MTC(csr_mm)(&a, p->dt, p->m, k, p->n, nu, a32, a32 + nr, av, bcm, acc, err)) !=
                     MT_OK))
      goto out;
    if (spgemm &&
        ((st = MTC_LAUNCH(&a, spb_gather_bs, nbv, *p, d, bel, nbv, bv)) != MT_OK ||
         (st = MTC(csr_spgemm)(&a, p->dt, p->m, h->kb, p->n, nu, a32, a32 + nr, av, nbv, b32,
                               b32 + h->kb + 1, bv, acc, err)) != MT_OK))
      goto out;
    if ((st = MTC_LAUNCH(&a, spb_store, no, *p, d, acc)) != MT_OK) goto out;
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
  if ((h.form = spb_form_of(p, b)) == SPB_OWN) return spb_device(p, b, NULL, err);
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

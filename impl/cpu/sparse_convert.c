/* sparse_convert.c - CPU kernels of the sparse_convert family: plain sparse
 * conversions, accessors and constructors (spec/SEMANTICS.md SPC-1 ..
 * SPC-11), and the plain forms of to_dense, to_sparse, to_sparse_csr.
 *
 * Every conversion goes through one engine: the input's stored elements as
 * a list of entries (batch, row, col, pointer to the element's dense
 * values), then one builder per result layout:
 *   dense  -> entries: the elements (cells of `dense` values) with a
 *             nonzero value (SPC-1);
 *   COO    -> entries: the coalesced entries, stored zeros included (SPC-2);
 *   CSR/CSC/BSR/BSC -> entries: every cell of every stored block, zeros
 *             inside a block included (SPC-2).
 * The compressed builder groups entries into blocks (bh x bw; 1 x 1 for
 * CSR and CSC), sorted by batch, compressed index, plain index (SPC-4); a
 * block is stored when an entry falls in it. Results are allocated through
 * the call's host; temporaries are freed on every path (goto out).
 *
 * torch's refusals (SPC-5, SPC-8, SPC-9, SPC-10) give the status its
 * golden records, with torch's message where one exists.
 *
 * Values move on an mt_exec (common/exec.h): the index structure (entries,
 * sorting, compressed and plain indices) is host bookkeeping; every value
 * of a result is a copy planned here (which input element each output
 * element is, or a zero) and run by the exec's gather (the CPU copies it
 * here); which cells of a dense input are stored (SPC-1) is the exec's
 * nonzero hook; a COO input is coalesced by the exec. */
#include "sparse_convert.h"

#include <math.h>

#include "common/exec.h"
#include "cpu_util.h"
#include "mt/kwargs.h"

/* torch's names of the layouts, as its messages spell them */
static const char *torch_layout(mt_kind k) {
  switch (k) {
  case MT_KIND_DENSE: return "Strided";
  case MT_KIND_COO: return "Sparse";
  case MT_KIND_CSR: return "SparseCsr";
  case MT_KIND_CSC: return "SparseCsc";
  case MT_KIND_BSR: return "SparseBsr";
  case MT_KIND_BSC: return "SparseBsc";
  default: return mt_kind_name(k);
  }
}

/* Plain dense or sparse input i, validated. */
static mt_status plain_input(const mt_call *call, int i, const char *op, const mt_tensor **t,
                             mt_error *err) {
  char what[32];
  mt_status st = mt__cpu_input(call, i, op, t, err);
  if (st != MT_OK) return st;
  mt_kind k = (*t)->kind;
  if (k == MT_KIND_MASKED) /* torch.masked has no handler for these ops (SPC-5, SPC-8) */
    return mt_err(err, MT_LAYOUT_MISMATCH,
                  "%s: inputs/%d is a MaskedTensor: all __torch_dispatch__ handlers returned "
                  "NotImplemented", op, i);
  if (k == MT_KIND_SCALAR)
    return mt_err(err, MT_NOT_SUPPORTED, "%s: inputs/%d has kind %s; expected a plain tensor", op,
                  i, mt_kind_name(k));
  if ((st = mt_tensor_validate(*t, mt__cpu_in_name(i, what, sizeof what), err)) != MT_OK) {
    mt_err_prefix(err, "%s", op); /* keeps st: err may be NULL (mt_err_prefix gives MT_OK then) */
    return st;
  }
  return MT_OK;
}

/* ---- value copies on the exec ---------------------------------------------- */

/* A copy plan: output element i is element off[i] of the plan's source
 * (src[i] 0) or a zero (src[i] 1: every dtype's zero is all zero bytes). */
typedef struct {
  int *src;
  int64_t *off;
  int64_t n;
} spc_plan;

static const unsigned char spc_zero[16];

static void plan_free(spc_plan *p) {
  free(p->src);
  free(p->off);
  p->src = NULL;
  p->off = NULL;
}

/* n entries, each a zero */
static mt_status plan_alloc(spc_plan *p, int64_t n, mt_error *err) {
  p->n = n;
  p->src = malloc((size_t)(n > 0 ? n : 1) * sizeof *p->src);
  p->off = calloc((size_t)(n > 0 ? n : 1), sizeof *p->off);
  if (!p->src || !p->off) {
    plan_free(p);
    return mt_err(err, MT_OUT_OF_MEMORY, "sparse conversion: a copy plan of %lld values",
                  (long long)n);
  }
  for (int64_t i = 0; i < n; i++) p->src[i] = 1;
  return MT_OK;
}

static void plan_set(spc_plan *p, int64_t i, int64_t off) {
  p->src[i] = 0;
  p->off[i] = off;
}

/* dst (p->n elements of es bytes) from the plan over base (len elements):
 * ex's gather, a device copy (the CPU reference copies here) */
static mt_status plan_run(const mt_exec *ex, const spc_plan *p, const void *base, int64_t len,
                          size_t es, void *dst, mt_error *err) {
  if (p->n == 0) return MT_OK;
  if (ex == &mt_cpu_exec) {
    for (int64_t i = 0; i < p->n; i++)
      memcpy((char *)dst + (size_t)i * es,
             p->src[i] ? (const void *)spc_zero : (const char *)base + (size_t)p->off[i] * es, es);
    return MT_OK;
  }
  if (!ex->gather)
    return mt_err(err, MT_NOT_SUPPORTED, "sparse conversion: the %s backend has no gather kernel",
                  ex->name);
  if (len <= 0 || !base) base = spc_zero, len = 1; /* no entry reads it */
  const void *srcs[2] = {base, spc_zero};
  int64_t lens[2] = {len, 1};
  return ex->gather(p->src, p->off, p->n, 2, srcs, lens, es, dst, err);
}

/* dst = the n elements of src (a copy on ex) */
static mt_status copy_values(const mt_exec *ex, const void *src, int64_t n, size_t es, void *dst,
                             mt_error *err) {
  spc_plan p = {0};
  mt_status st;
  if (n == 0) return MT_OK;
  if (ex == &mt_cpu_exec) {
    memcpy(dst, src, (size_t)n * es);
    return MT_OK;
  }
  if ((st = plan_alloc(&p, n, err)) != MT_OK) return st;
  for (int64_t i = 0; i < n; i++) plan_set(&p, i, i);
  st = plan_run(ex, &p, src, n, es, dst, err);
  plan_free(&p);
  return st;
}

/* The element offsets of a dense tensor's elements in row-major order
 * (its strides) into p's entries at .. at + numel - 1; *len: the extent. */
static void plan_strided(spc_plan *p, int64_t at, const mt_tensor *t, int64_t *len) {
  int64_t n = mt_numel(t), idx[MT_MAX_DIMS] = {0};
  *len = 0;
  for (int64_t i = 0; i < n; i++) {
    int64_t off = 0;
    for (int d = 0; d < t->ndim; d++) off += idx[d] * t->strides[d];
    plan_set(p, at + i, off);
    if (off + 1 > *len) *len = off + 1;
    for (int d = t->ndim - 1; d >= 0; d--) {
      if (++idx[d] < t->shape[d]) break;
      idx[d] = 0;
    }
  }
}

/* A contiguous view of t (mt__cpu_contig), its copy made on ex. */
static mt_status spc_contig(const mt_exec *ex, const mt_tensor *t, const mt_tensor **view,
                            mt_tensor **tmp, mt_error *err) {
  spc_plan p = {0};
  int64_t len = 0;
  mt_status st;
  if (ex == &mt_cpu_exec || t->kind != MT_KIND_DENSE || mt_is_contiguous(t))
    return mt__cpu_contig(t, view, tmp, err);
  *tmp = NULL;
  *view = NULL;
  if ((st = plan_alloc(&p, mt_numel(t), err)) != MT_OK) return st;
  plan_strided(&p, 0, t, &len);
  if ((st = mt_dense_new(t->dtype, t->ndim, t->shape, tmp, err)) == MT_OK)
    st = plan_run(ex, &p, t->values, len, mt_dtype_size(t->dtype), (*tmp)->values, err);
  plan_free(&p);
  if (st != MT_OK) {
    mt_tensor_free(*tmp);
    *tmp = NULL;
    return st;
  }
  *view = *tmp;
  return MT_OK;
}

/* *flags (n bytes, free()): cell c of the contiguous x (run elements from
 * c * run) holds a nonzero (SPC-1), computed by ex */
static mt_status nonzero_flags(const mt_exec *ex, const mt_tensor *x, int64_t n, int64_t run,
                               uint8_t **flags, mt_error *err) {
  *flags = calloc((size_t)(n > 0 ? n : 1), 1);
  if (!*flags)
    return mt_err(err, MT_OUT_OF_MEMORY, "sparse conversion: %lld cells", (long long)n);
  if (n == 0 || run == 0) return MT_OK;
  if (!ex->nonzero)
    return mt_err(err, MT_NOT_SUPPORTED, "sparse conversion: the %s backend has no nonzero kernel",
                  ex->name);
  return ex->nonzero(x->dtype, x->values, n, run, *flags, err);
}

/* A copy of a COO tensor (its coalesced flag kept), allocated by h: the
 * indices copied on the host, the values on ex. */
static mt_status copy_coo(const mt_host *h, const mt_exec *ex, const mt_tensor *x,
                          mt_tensor **out, mt_error *err) {
  mt_status st = h->coo_new(x->dtype, x->ndim, x->shape, x->sparse_dim, x->nnz, out, err);
  if (st != MT_OK) return st;
  if (x->nnz)
    memcpy((*out)->indices, x->indices, (size_t)(x->sparse_dim * x->nnz) * sizeof(int64_t));
  if ((st = copy_values(ex, x->values, x->nnz * mt_coo_row_numel(x), mt_dtype_size(x->dtype),
                        (*out)->values, err)) != MT_OK) {
    h->free(*out);
    *out = NULL;
    return st;
  }
  (*out)->coalesced = x->coalesced;
  return MT_OK;
}

/* ---- entries ------------------------------------------------------------- */

typedef struct {
  int64_t b, r, c; /* batch (flat), row, col (elements) */
  int64_t at;      /* the element's `dense` values: from element `at` of the source's values */
} spc_entry;

typedef struct {
  spc_entry *e;
  int64_t n, cap;
} spc_list;

static mt_status list_push(spc_list *l, int64_t b, int64_t r, int64_t c, int64_t at,
                           mt_error *err) {
  if (l->n == l->cap) {
    int64_t cap = l->cap ? 2 * l->cap : 64;
    spc_entry *e = realloc(l->e, (size_t)cap * sizeof *e);
    if (!e) return mt_err(err, MT_OUT_OF_MEMORY, "sparse conversion: cannot hold %lld entries",
                          (long long)cap);
    l->e = e;
    l->cap = cap;
  }
  l->e[l->n++] = (spc_entry){b, r, c, at};
  return MT_OK;
}

/* A dense (contiguous) tensor of nb batch dims, 2 sparse dims, dd dense
 * dims, cut in bh x bw blocks (1 x 1: elements): every cell of each block
 * that holds a nonzero (SPC-1: an element is stored when one of its `dense`
 * values is nonzero, NaN too, -0.0 not; ex's nonzero flags), the block's
 * zeros (-0.0 too) as the dense holds them. */
static mt_status entries_from_dense(const mt_exec *ex, const mt_tensor *x, int nb, int dd,
                                    int64_t bh, int64_t bw, spc_list *l, mt_error *err) {
  int64_t batches = mt_shape_numel(nb, x->shape), rows = x->shape[nb], cols = x->shape[nb + 1];
  int64_t dense = mt_shape_numel(dd, x->shape + nb + 2);
  uint8_t *nz = NULL;
  mt_status st;
  if ((st = nonzero_flags(ex, x, batches * rows * cols, dense, &nz, err)) != MT_OK) goto out;
#define SPC_CELL(b, r, c) (((b) * rows + (r)) * cols + (c))
  for (int64_t b = 0; b < batches; b++)
    for (int64_t br = 0; br < rows / bh; br++)
      for (int64_t bc = 0; bc < cols / bw; bc++) {
        int any = 0;
        for (int64_t u = 0; u < bh && !any; u++)
          for (int64_t v = 0; v < bw && !any; v++)
            any = nz[SPC_CELL(b, br * bh + u, bc * bw + v)] != 0;
        for (int64_t u = 0; any && u < bh; u++)
          for (int64_t v = 0; v < bw; v++) {
            int64_t r = br * bh + u, c = bc * bw + v;
            if ((st = list_push(l, b, r, c, SPC_CELL(b, r, c) * dense, err)) != MT_OK) goto out;
          }
      }
#undef SPC_CELL
out:
  free(nz);
  return st;
}

/* A coalesced COO tensor of sparse_dim 2: every entry (stored zeros too). */
static mt_status entries_from_coo(const mt_tensor *x, spc_list *l, mt_error *err) {
  int64_t row = mt_coo_row_numel(x);
  mt_status st;
  for (int64_t k = 0; k < x->nnz; k++)
    if ((st = list_push(l, 0, x->indices[k], x->indices[x->nnz + k], k * row, err)) != MT_OK)
      return st;
  return MT_OK;
}

/* A compressed tensor: every cell of every stored block, in storage order
 * (batch, compressed slot, entry, cell row-major). */
static mt_status entries_from_compressed(const mt_tensor *x, spc_list *l, mt_error *err) {
  mt_cgeom g = {0};
  mt_status st;
  if (!mt_cgeom_of(x, &g))
    return mt_err(err, MT_INVALID_ARGUMENT, "sparse conversion: a malformed %s input",
                  mt_kind_name(x->kind));
  for (int64_t b = 0; b < g.batches; b++)
    MT_CGEOM_FOR_EACH_CELL(x, &g, b, r, c, at)
      if ((st = list_push(l, b, r, c, at, err)) != MT_OK) return st;
  return MT_OK;
}

/* ---- the compressed builder (SPC-4) -------------------------------------- */

typedef struct {
  int64_t b, comp, plain, r, c;
  int64_t at;
} spc_key;

static int key_cmp(const void *pa, const void *pb) {
  const spc_key *a = pa, *b = pb;
  int64_t x[5] = {a->b, a->comp, a->plain, a->r, a->c},
          y[5] = {b->b, b->comp, b->plain, b->r, b->c};
  for (int k = 0; k < 5; k++)
    if (x[k] != y[k]) return x[k] < y[k] ? -1 : 1;
  return 0;
}

/* A compressed result of kind (bh x bw blocks; 1 x 1 for CSR/CSC) holding
 * the entries of l (their values in base, len elements; copied on ex):
 * blocks sorted by batch, compressed, plain index. */
static mt_status build_compressed(const mt_host *h, const mt_exec *ex, mt_kind kind, mt_dtype dt,
                                  int ndim, const int64_t *shape, int dd, int64_t bh, int64_t bw,
                                  const spc_list *l, const void *base, int64_t len,
                                  mt_tensor **out, mt_error *err) {
  mt_status st = MT_OK;
  spc_plan plan = {0};
  spc_key *keys = NULL;
  int64_t *per_batch = NULL;
  int nb = ndim - 2 - dd;
  int by_col = kind == MT_KIND_CSC || kind == MT_KIND_BSC;
  int64_t batches = mt_shape_numel(nb, shape), dense = mt_shape_numel(dd, shape + nb + 2);
  size_t es = mt_dtype_size(dt);
  *out = NULL;
  keys = malloc((size_t)(l->n ? l->n : 1) * sizeof *keys);
  per_batch = calloc((size_t)(batches ? batches : 1), sizeof *per_batch);
  if (!keys || !per_batch) {
    st = mt_err(err, MT_OUT_OF_MEMORY, "sparse conversion: cannot sort %lld entries",
                (long long)l->n);
    goto out;
  }
  for (int64_t k = 0; k < l->n; k++) {
    const spc_entry *e = &l->e[k];
    int64_t br = e->r / bh, bc = e->c / bw;
    keys[k] = (spc_key){e->b, by_col ? bc : br, by_col ? br : bc, e->r, e->c, e->at};
  }
  qsort(keys, (size_t)l->n, sizeof *keys, key_cmp);
  for (int64_t k = 0; k < l->n; k++)
    if (k == 0 || keys[k].b != keys[k - 1].b || keys[k].comp != keys[k - 1].comp ||
        keys[k].plain != keys[k - 1].plain)
      per_batch[keys[k].b]++;
  int64_t nnz = batches ? per_batch[0] : 0;
  for (int64_t b = 1; b < batches; b++)
    if (per_batch[b] != nnz) {
      st = mt_err(err, MT_INVALID_ARGUMENT,
                  "Expect the same number of specified elements per batch. (batch 0 has %lld, "
                  "batch %lld has %lld)",
                  (long long)nnz, (long long)b, (long long)per_batch[b]);
      goto out;
    }
  int64_t blocksize[2] = {bh, bw};
  if ((st = h->compressed_new(kind, dt, ndim, shape, dd,
                              mt_kind_is_blocked(kind) ? blocksize : NULL, nnz, out, err)) != MT_OK)
    goto out;
  mt_cgeom g = {0};
  mt_cgeom_of(*out, &g);
  if ((st = plan_alloc(&plan, batches * nnz * g.entry, err)) != MT_OK) goto out;
  for (int64_t k = 0, slot = -1; k < l->n; k++) {
    const spc_key *q = &keys[k];
    if (k == 0 || q->b != keys[k - 1].b) slot = -1;
    if (k == 0 || q->b != keys[k - 1].b || q->comp != keys[k - 1].comp ||
        q->plain != keys[k - 1].plain) {
      slot++;
      (*out)->crow_indices[q->b * (g.ncomp + 1) + q->comp + 1]++;
      (*out)->col_indices[q->b * nnz + slot] = q->plain;
    }
    int64_t u = q->r % bh, v = q->c % bw;
    for (int64_t j = 0; j < dense; j++)
      plan_set(&plan, (q->b * nnz + slot) * g.entry + (u * bw + v) * dense + j, q->at + j);
  }
  if ((st = plan_run(ex, &plan, base, len, es, (*out)->values, err)) != MT_OK) goto out;
  for (int64_t b = 0; b < batches; b++)
    for (int64_t i = 0; i < g.ncomp; i++)
      (*out)->crow_indices[b * (g.ncomp + 1) + i + 1] +=
          (*out)->crow_indices[b * (g.ncomp + 1) + i];
out:
  plan_free(&plan);
  free(keys);
  free(per_batch);
  if (st != MT_OK && *out) {
    h->free(*out);
    *out = NULL;
  }
  return st;
}

/* ---- COO results (SPC-1, SPC-3) ------------------------------------------- */

/* SPC-1: a dense (contiguous) tensor with sparse_dim sparse dims: the
 * positions whose value row holds a nonzero (ex's flags), row-major,
 * coalesced; the rows copied on ex. */
static mt_status dense_to_coo(const mt_host *h, const mt_exec *ex, const mt_tensor *x, int sd,
                              mt_tensor **out, mt_error *err) {
  int64_t npos = mt_shape_numel(sd, x->shape), row = mt_shape_numel(x->ndim - sd, x->shape + sd);
  int64_t nnz = 0;
  uint8_t *nz = NULL;
  spc_plan plan = {0};
  mt_status st;
  *out = NULL;
  if ((st = nonzero_flags(ex, x, npos, row, &nz, err)) != MT_OK) goto out;
  for (int64_t p = 0; p < npos; p++) nnz += nz[p] != 0; /* a flag read as a bool */
  if ((st = h->coo_new(x->dtype, x->ndim, x->shape, sd, nnz, out, err)) != MT_OK) goto out;
  if ((st = plan_alloc(&plan, nnz * row, err)) != MT_OK) goto out;
  for (int64_t p = 0, k = 0; p < npos; p++) {
    if (!nz[p]) continue;
    int64_t rem = p;
    for (int d = sd - 1; d >= 0; d--) {
      (*out)->indices[d * nnz + k] = rem % x->shape[d];
      rem /= x->shape[d];
    }
    for (int64_t j = 0; j < row; j++) plan_set(&plan, k * row + j, p * row + j);
    k++;
  }
  if ((st = plan_run(ex, &plan, x->values, mt_numel(x), mt_dtype_size(x->dtype), (*out)->values,
                     err)) != MT_OK)
    goto out;
  (*out)->coalesced = 1;
out:
  free(nz);
  plan_free(&plan);
  if (st != MT_OK && *out) {
    h->free(*out);
    *out = NULL;
  }
  return st;
}

/* SPC-3: a compressed tensor as COO: every cell of every stored block in
 * storage order; coalesced only from CSR (row-major order). */
static mt_status compressed_to_coo(const mt_host *h, const mt_exec *ex, const mt_tensor *x,
                                   mt_tensor **out, mt_error *err) {
  spc_list l = {0};
  spc_plan plan = {0};
  mt_status st;
  mt_cgeom g = {0};
  size_t es = mt_dtype_size(x->dtype);
  *out = NULL;
  if ((st = entries_from_compressed(x, &l, err)) != MT_OK) goto out;
  mt_cgeom_of(x, &g);
  int sd = g.nb + 2;
  if ((st = h->coo_new(x->dtype, x->ndim, x->shape, sd, l.n, out, err)) != MT_OK) goto out;
  if ((st = plan_alloc(&plan, l.n * g.dense, err)) != MT_OK) goto out;
  for (int64_t k = 0; k < l.n; k++) {
    const spc_entry *e = &l.e[k];
    int64_t rem = e->b;
    for (int d = g.nb - 1; d >= 0; d--) {
      (*out)->indices[d * l.n + k] = rem % x->shape[d];
      rem /= x->shape[d];
    }
    (*out)->indices[g.nb * l.n + k] = e->r;
    (*out)->indices[(g.nb + 1) * l.n + k] = e->c;
    for (int64_t j = 0; j < g.dense; j++) plan_set(&plan, k * g.dense + j, e->at + j);
  }
  if ((st = plan_run(ex, &plan, x->values, g.batches * g.nnz * g.entry, es, (*out)->values,
                     err)) != MT_OK)
    goto out;
  /* torch's flag: true from CSR, from BSR with one-row blocks (both row-major)
   * and from at most one stored block; false otherwise, though no index
   * repeats (SPC-3) */
  (*out)->coalesced = x->kind == MT_KIND_CSR || (x->kind == MT_KIND_BSR && g.bh == 1) ||
                      g.batches * g.nnz <= 1;
out:
  free(l.e);
  plan_free(&plan);
  if (st != MT_OK && *out) {
    h->free(*out);
    *out = NULL;
  }
  return st;
}

/* ---- dense results (SPC-11) ----------------------------------------------- */

/* Output element i of a sparse tensor's dense form from stored element off
 * of values (dtype): torch adds the stored values into zeros, so a stored
 * -0.0 comes out +0.0 (the plan's zero) */
static void plan_stored(spc_plan *p, int64_t i, const void *values, mt_dtype dtype, int64_t off) {
  double v = mt_get_f64(values, dtype, off);
  if (!(v == 0.0 && signbit(v))) plan_set(p, i, off);
}

/* The dense form of plain x (SPC-11; mt_to_dense's) as a copy plan *p
 * over *base (*len elements): a dense tensor's own elements (its strides),
 * a COO tensor's coalesced values (duplicates summed by ex: *tmp, free it
 * with mt_tensor_free), a compressed tensor's values; absent cells, and
 * stored -0.0 (plan_stored), +0.0. */
static mt_status dense_plan(const mt_exec *ex, const mt_tensor *x, spc_plan *p,
                            const void **base, int64_t *len, mt_tensor **tmp, mt_error *err) {
  mt_status st;
  *tmp = NULL;
  *base = x->values;
  *len = 0;
  if ((st = plan_alloc(p, mt_numel(x), err)) != MT_OK) return st;
  if (x->kind == MT_KIND_DENSE) {
    plan_strided(p, 0, x, len);
    return MT_OK;
  }
  if (x->kind == MT_KIND_COO) {
    const mt_tensor *c;
    if ((st = mt__exec_coalesced(ex, x, &c, tmp, err)) != MT_OK) {
      plan_free(p);
      return st;
    }
    int64_t row = mt_coo_row_numel(c);
    for (int64_t k = 0; k < c->nnz; k++)
      for (int64_t j = 0, lin = mt_coo_linear(c, k); j < row; j++)
        plan_stored(p, lin * row + j, c->values, c->dtype, k * row + j);
    *base = c->values;
    *len = c->nnz * row;
    return MT_OK;
  }
  mt_cgeom g = {0};
  if (!mt_kind_is_compressed(x->kind) || !mt_cgeom_of(x, &g)) {
    plan_free(p);
    return mt_err(err, MT_INVALID_ARGUMENT, "to_dense: a malformed %s input",
                  mt_kind_name(x->kind));
  }
  for (int64_t b = 0; b < g.batches; b++)
    MT_CGEOM_FOR_EACH_CELL(x, &g, b, r, c, at)
      for (int64_t j = 0; j < g.dense; j++)
        plan_stored(p, ((b * g.rows + r) * g.cols + c) * g.dense + j, x->values, x->dtype, at + j);
  *len = g.batches * g.nnz * g.entry;
  return MT_OK;
}

/* A dense contiguous copy of any plain layout (COO duplicates summed),
 * allocated by h, its values copied on ex. */
static mt_status densify(const mt_host *h, const mt_exec *ex, const mt_tensor *x,
                         mt_tensor **out, mt_error *err) {
  spc_plan p = {0};
  mt_tensor *tmp = NULL;
  const void *base;
  int64_t len;
  mt_status st;
  *out = NULL;
  if ((st = dense_plan(ex, x, &p, &base, &len, &tmp, err)) != MT_OK) return st;
  if ((st = h->dense_new(x->dtype, x->ndim, x->shape, out, err)) == MT_OK &&
      (st = plan_run(ex, &p, base, len, mt_dtype_size(x->dtype), (*out)->values, err)) != MT_OK) {
    h->free(*out);
    *out = NULL;
  }
  plan_free(&p);
  mt_tensor_free(tmp);
  return st;
}

static mt_status to_dense_out(mt_call *call, const mt_exec *ex, const mt_tensor *x,
                              mt_error *err) {
  mt_status st = densify(mt__cpu_host(call), ex, x, &call->out[0], err);
  if (st == MT_OK) call->n_out = 1;
  return st;
}

/* ---- conversions (SPC-1 .. SPC-5) ----------------------------------------- */

typedef struct {
  mt_kind target;
  int has_sparse_dim, has_dense_dim, has_blocksize;
  int64_t sparse_dim, dense_dim, bh, bw;
} spc_args;

static mt_status read_blocksize(const char *op, const mt_kwargs *kw, spc_args *a, mt_error *err) {
  const mt_kwarg *bs = mt_kw_find(kw, "blocksize");
  if (!bs) return MT_OK;
  if (bs->type != MT_KW_INTS || bs->n != 2 || bs->ints[0] < 1 || bs->ints[1] < 1)
    return mt_err(err, MT_INVALID_ARGUMENT, "%s: blocksize must be a pair of positive ints", op);
  a->has_blocksize = 1;
  a->bh = bs->ints[0];
  a->bw = bs->ints[1];
  return MT_OK;
}

/* COO result (SPC-1, SPC-3). */
static mt_status convert_to_coo(mt_call *call, const char *op, const mt_tensor *x,
                                const spc_args *a, const mt_exec *ex, mt_error *err) {
  const mt_host *h = mt__cpu_host(call);
  mt_status st;
  if (a->has_blocksize)
    return mt_err(err, MT_INVALID_ARGUMENT,
                  "%s: conversion from %s to Sparse with blocksize argument given is not supported",
                  op, torch_layout(x->kind));
  if (x->kind == MT_KIND_DENSE) {
    int64_t sd = x->ndim;
    if (a->has_sparse_dim) sd = a->sparse_dim;
    else if (a->has_dense_dim) {
      if (a->dense_dim < 0 || a->dense_dim > x->ndim)
        return mt_err(err, MT_INVALID_ARGUMENT,
                      "%s: dense_dim argument must be in [0,%d] range, but %lld is given", op,
                      x->ndim, (long long)a->dense_dim);
      sd = x->ndim - a->dense_dim;
    }
    if (sd < 0 || sd > x->ndim)
      return mt_err(err, MT_INVALID_ARGUMENT,
                    "%s: sparse_dim argument must be in [0,%d] range, but %lld is given", op,
                    x->ndim, (long long)sd);
    if (sd == 0 && x->ndim > 0)
      return mt_err(err, MT_INVALID_ARGUMENT,
                    "%s: sparse_dim argument must be in >0 when self.dim()>0", op);
    const mt_tensor *v;
    mt_tensor *tmp = NULL;
    if ((st = spc_contig(ex, x, &v, &tmp, err)) == MT_OK)
      st = dense_to_coo(h, ex, v, (int)sd, &call->out[0], err);
    mt_tensor_free(tmp);
    if (st == MT_OK) call->n_out = 1;
    return st;
  }
  if (a->has_dense_dim)
    return mt_err(err, MT_INVALID_ARGUMENT,
                  "%s: conversion from %s to Sparse with dense_dim argument given is not supported",
                  op, torch_layout(x->kind));
  if (x->kind == MT_KIND_COO) {
    if (a->has_sparse_dim && a->sparse_dim != x->sparse_dim)
      return mt_err(err, MT_INVALID_ARGUMENT,
                    "%s: conversion from Sparse to Sparse with sparse_dim argument "
                    "!=self.sparse_dim() is not supported (%lld != %d)",
                    op, (long long)a->sparse_dim, x->sparse_dim);
    /* SPC-3: the tensor itself (a copy), its coalesced flag kept */
    st = copy_coo(h, ex, x, &call->out[0], err);
    if (st == MT_OK) call->n_out = 1;
    return st;
  }
  if (a->has_sparse_dim && a->sparse_dim != 2)
    return mt_err(err, MT_INVALID_ARGUMENT,
                  "%s: conversion from %s to Sparse with sparse_dim argument !=2 is not supported",
                  op, torch_layout(x->kind));
  st = compressed_to_coo(h, ex, x, &call->out[0], err);
  if (st == MT_OK) call->n_out = 1;
  return st;
}

/* Compressed result (SPC-1, SPC-2, SPC-4, SPC-5). */
static mt_status convert_to_compressed(mt_call *call, const char *op, const mt_tensor *x,
                                       const spc_args *a, const mt_exec *ex, mt_error *err) {
  const mt_host *h = mt__cpu_host(call);
  const char *tl = torch_layout(a->target);
  int blocked = mt_kind_is_blocked(a->target);
  int64_t bh = blocked ? a->bh : 1, bw = blocked ? a->bw : 1;
  spc_list l = {0};
  mt_tensor *tmp = NULL;
  const mt_tensor *v = NULL;
  mt_status st = MT_OK;
  int nb = 0, dd = 0;
  if (blocked && !a->has_blocksize)
    return mt_err(err, MT_INVALID_ARGUMENT,
                  "%s: conversion from %s to %s without blocksize argument given is not supported",
                  op, torch_layout(x->kind), tl);
  if (!blocked && a->has_blocksize)
    return mt_err(err, MT_INVALID_ARGUMENT,
                  "%s: conversion from %s to %s with blocksize argument given is not supported", op,
                  torch_layout(x->kind), tl);
  if (x->kind == MT_KIND_DENSE) {
    if (x->ndim < 2) /* torch selects dim 1 of the tensor viewed as [n, 1] */
      return mt_err(err, MT_INDEX_OUT_OF_RANGE,
                    "%s: select(): index 1 out of range for a %d-d tensor (to %s needs 2 dims)",
                    op, x->ndim, tl);
    dd = a->has_dense_dim ? (int)a->dense_dim : 0;
    if (blocked && dd > x->ndim - 2) /* torch's blocked path indexes dim -(dd + 2) first */
      return mt_err(err, MT_INDEX_OUT_OF_RANGE,
                    "%s: Dimension out of range (expected to be in range of [%d, %d], but got %d)",
                    op, -x->ndim, x->ndim - 1, -(dd + 2));
    if (a->dense_dim < 0 || dd > x->ndim - 2)
      return mt_err(err, MT_INVALID_ARGUMENT,
                    "%s: dense_dim argument must be in [0,%d] range, but %lld is given", op,
                    x->ndim - 2, (long long)a->dense_dim);
    nb = x->ndim - 2 - dd;
  } else {
    if (a->has_dense_dim)
      return mt_err(err, MT_INVALID_ARGUMENT,
                    "%s: conversion from %s to %s with dense_dim argument given is not supported",
                    op, torch_layout(x->kind), tl);
    if (x->kind == MT_KIND_COO) {
      if (x->sparse_dim != 2)
        return mt_err(err, MT_INVALID_ARGUMENT,
                      "%s: conversion from Sparse to %s for input tensors with sparse_dim()!=2 is "
                      "not supported (sparse_dim %d)",
                      op, tl, x->sparse_dim);
      dd = x->ndim - 2;
    } else {
      dd = x->dense_dim;
      nb = x->ndim - 2 - dd;
      if (mt_kind_is_blocked(x->kind) && !blocked)
        return mt_err(err, MT_LAYOUT_MISMATCH,
                      "%s: expected SparseCsr or SparseCsc layout but got %s", op,
                      torch_layout(x->kind));
      if (mt_kind_is_blocked(x->kind) && (x->blocksize[0] != bh || x->blocksize[1] != bw))
        return mt_err(err, MT_INVALID_ARGUMENT,
                      "%s: conversion from %s to %s with blocksize changed from [%lld, %lld] to "
                      "[%lld, %lld] is not supported",
                      op, torch_layout(x->kind), tl, (long long)x->blocksize[0],
                      (long long)x->blocksize[1], (long long)bh, (long long)bw);
      if (!mt_kind_is_blocked(x->kind) && blocked && nb > 0)
        return mt_err(err, MT_INVALID_ARGUMENT,
                      "%s: conversion from %s to %s for batched inputs is not supported", op,
                      torch_layout(x->kind), tl);
    }
  }
  int64_t rows = x->shape[nb], cols = x->shape[nb + 1];
  if (rows % bh || cols % bw)
    return mt_err(err, MT_INVALID_ARGUMENT,
                  "%s: tensor sparse size (%lld,%lld) must be divisible by given blocksize "
                  "(%lld,%lld)",
                  op, (long long)rows, (long long)cols, (long long)bh, (long long)bw);
  const void *base = x->values;
  int64_t len = 0;
  if (x->kind == MT_KIND_DENSE) {
    if ((st = spc_contig(ex, x, &v, &tmp, err)) != MT_OK) goto out;
    st = entries_from_dense(ex, v, nb, dd, bh, bw, &l, err);
    base = v->values;
    len = mt_numel(v);
  } else if (x->kind == MT_KIND_COO) {
    /* SPC-2: summed first */
    if ((st = mt__exec_coalesced(ex, x, &v, &tmp, err)) != MT_OK) goto out;
    st = entries_from_coo(v, &l, err);
    base = v->values;
    len = v->nnz * mt_coo_row_numel(v);
  } else {
    mt_cgeom g = {0};
    st = entries_from_compressed(x, &l, err);
    mt_cgeom_of(x, &g);
    len = g.batches * g.nnz * g.entry;
  }
  if (st != MT_OK) goto out;
  if ((st = build_compressed(h, ex, a->target, x->dtype, x->ndim, x->shape, dd, bh, bw, &l, base,
                             len, &call->out[0], err)) == MT_OK)
    call->n_out = 1;
out:
  free(l.e);
  mt_tensor_free(tmp);
  return st;
}

/* Every conversion op: target = the op's layout (to_sparse: its layout=). */
static mt_status convert(mt_call *call, mt_op opid, mt_kind target, const mt_exec *ex,
                         mt_error *err) {
  const char *op = mt_op_name(opid);
  const mt_tensor *x;
  spc_args a = {.target = target};
  mt_status st;
  mt__cpu_begin(call);
  if ((st = mt__kw_check(opid, call->kw, err)) != MT_OK) return st;
  if (opid == MT_OP_to_sparse_coo && call->n_in > 0 && call->in && call->in[0] &&
      call->in[0]->kind == MT_KIND_MASKED)
    /* torch.masked: to_sparse_coo is to_sparse (STR-6) */
    return mt__structure_run(call, MT_OP_to_sparse, ex, err);
  if ((st = plain_input(call, 0, op, &x, err)) != MT_OK) return st;
  const mt_kwarg *lay = mt_kw_find(call->kw, "layout"), *sd = mt_kw_find(call->kw, "sparse_dim"),
                 *dd = mt_kw_find(call->kw, "dense_dim");
  if (lay && sd)
    return mt_err(err, MT_INVALID_ARGUMENT,
                  "%s: to_sparse() takes 0 positional arguments but 1 was given (sparse_dim "
                  "with layout=)", op);
  if (lay) mt_kw_layout_parse(lay->s, &a.target);
  if (sd) a.has_sparse_dim = 1, a.sparse_dim = sd->i;
  if (dd) a.has_dense_dim = 1, a.dense_dim = dd->i;
  if ((st = read_blocksize(op, call->kw, &a, err)) != MT_OK) return st;
  if (a.target == MT_KIND_DENSE) return to_dense_out(call, ex, x, err);
  if (a.target == MT_KIND_COO) return convert_to_coo(call, op, x, &a, ex, err);
  return convert_to_compressed(call, op, x, &a, ex, err);
}

mt_status mt_cpu_to_sparse_coo(mt_call *c, mt_error *e) {
  return convert(c, MT_OP_to_sparse_coo, MT_KIND_COO, &mt_cpu_exec, e);
}
mt_status mt_cpu_to_sparse_csc(mt_call *c, mt_error *e) {
  return convert(c, MT_OP_to_sparse_csc, MT_KIND_CSC, &mt_cpu_exec, e);
}
mt_status mt_cpu_to_sparse_bsr(mt_call *c, mt_error *e) {
  return convert(c, MT_OP_to_sparse_bsr, MT_KIND_BSR, &mt_cpu_exec, e);
}
mt_status mt_cpu_to_sparse_bsc(mt_call *c, mt_error *e) {
  return convert(c, MT_OP_to_sparse_bsc, MT_KIND_BSC, &mt_cpu_exec, e);
}
mt_status mt__spc_to_sparse(mt_call *c, const mt_exec *ex, mt_error *e) {
  return convert(c, MT_OP_to_sparse, MT_KIND_COO, ex, e);
}
mt_status mt__spc_to_sparse_csr(mt_call *c, const mt_exec *ex, mt_error *e) {
  return convert(c, MT_OP_to_sparse_csr, MT_KIND_CSR, ex, e);
}

/* SPC-11: to_dense of every layout (COO duplicates summed). */
mt_status mt__spc_to_dense(mt_call *call, const mt_exec *ex, mt_error *err) {
  const mt_tensor *x;
  mt_status st;
  mt__cpu_begin(call);
  if ((st = mt__kw_check(MT_OP_to_dense, call->kw, err)) != MT_OK) return st;
  if ((st = plain_input(call, 0, "to_dense", &x, err)) != MT_OK) return st;
  return to_dense_out(call, ex, x, err);
}

mt_status mt__spc_densify(const mt_host *h, const mt_exec *ex, const mt_tensor *x,
                          mt_tensor **out, mt_error *err) {
  return densify(h, ex, x, out, err);
}

/* ---- coalesce (SPC-6) ------------------------------------------------------ */

static mt_status coalesce(mt_call *call, const mt_exec *ex, mt_error *err) {
  const mt_tensor *x, *v;
  mt_tensor *tmp = NULL;
  mt_status st;
  mt__cpu_begin(call);
  if ((st = mt__kw_check(MT_OP_coalesce, call->kw, err)) != MT_OK) return st;
  if ((st = plain_input(call, 0, "coalesce", &x, err)) != MT_OK) return st;
  if (x->kind != MT_KIND_COO)
    return mt_err(err, MT_LAYOUT_MISMATCH,
                  "coalesce: coalesce expected sparse coordinate tensor layout but got %s",
                  torch_layout(x->kind));
  if ((st = mt__exec_coalesced(ex, x, &v, &tmp, err)) == MT_OK &&
      (st = copy_coo(mt__cpu_host(call), ex, v, &call->out[0], err)) == MT_OK)
    call->n_out = 1;
  mt_tensor_free(tmp);
  return st;
}
mt_status mt_cpu_coalesce(mt_call *call, mt_error *err) {
  return coalesce(call, &mt_cpu_exec, err);
}

/* ---- sparse_mask (SPC-7) ---------------------------------------------------- */

/* SPC-7, a compressed self: its blocks that the mask (same layout, same
 * blocksize) also stores, with self's values: an intersection. */
static mt_status compressed_intersection(mt_call *call, const mt_exec *ex, const mt_tensor *x,
                                         const mt_tensor *m, mt_error *err) {
  mt_cgeom gx = {0}, gm = {0};
  spc_list lx = {0}, lm = {0}, keep = {0};
  uint8_t *in_mask = NULL;
  mt_status st = MT_OK;
  if (m->kind != x->kind)
    return mt_err(err, MT_LAYOUT_MISMATCH,
                  "sparse_mask: sparse_mask_sparse_compressed expects mask to have sparse "
                  "compressed layout %s like self, got %s", torch_layout(x->kind),
                  torch_layout(m->kind));
  if (!mt_cgeom_of(x, &gx) || !mt_cgeom_of(m, &gm) || gx.bh != gm.bh || gx.bw != gm.bw ||
      gx.batches != gm.batches || x->dense_dim != m->dense_dim)
    return mt_err(err, MT_INVALID_ARGUMENT,
                  "sparse_mask: self and mask differ in blocksize, batch or dense dims");
  int64_t nblocks = gx.batches * gx.ncomp * gx.nplain;
  in_mask = calloc((size_t)(nblocks ? nblocks : 1), 1);
  if (!in_mask)
    return mt_err(err, MT_OUT_OF_MEMORY, "sparse_mask: %lld blocks", (long long)nblocks);
  if ((st = entries_from_compressed(m, &lm, err)) != MT_OK) goto out;
  if ((st = entries_from_compressed(x, &lx, err)) != MT_OK) goto out;
#define SPC_BLOCK(e) \
  (((e)->b * gx.ncomp + (gx.by_col ? (e)->c / gx.bw : (e)->r / gx.bh)) * gx.nplain + \
   (gx.by_col ? (e)->r / gx.bh : (e)->c / gx.bw))
  for (int64_t k = 0; k < lm.n; k++) in_mask[SPC_BLOCK(&lm.e[k])] = 1;
  for (int64_t k = 0; k < lx.n; k++)
    if (in_mask[SPC_BLOCK(&lx.e[k])] &&
        (st = list_push(&keep, lx.e[k].b, lx.e[k].r, lx.e[k].c, lx.e[k].at, err)) != MT_OK)
      goto out;
#undef SPC_BLOCK
  if ((st = build_compressed(mt__cpu_host(call), ex, x->kind, x->dtype, x->ndim, x->shape,
                             x->dense_dim, gx.bh, gx.bw, &keep, x->values,
                             gx.batches * gx.nnz * gx.entry, &call->out[0], err)) == MT_OK)
    call->n_out = 1;
out:
  free(in_mask);
  free(lx.e);
  free(lm.e);
  free(keep.e);
  return st;
}

/* x.sparse_mask(mask): mask's structure as stored (its indices, its
 * coalesced flag, its blocks), x's values there (x coalesced first). */
static mt_status sparse_mask(mt_call *call, const mt_exec *ex, mt_error *err) {
  static const char *op = "sparse_mask";
  const mt_host *h = mt__cpu_host(call);
  const mt_tensor *x, *m;
  mt_tensor *xd = NULL, *o = NULL;
  spc_plan dp = {0}, plan = {0};
  const void *base = NULL;
  int64_t len = 0;
  spc_list l = {0};
  char a[96], b[96];
  mt_status st;
  mt__cpu_begin(call);
  if ((st = mt__kw_check(MT_OP_sparse_mask, call->kw, err)) != MT_OK) return st;
  if ((st = plain_input(call, 0, op, &x, err)) != MT_OK) return st;
  if ((st = plain_input(call, 1, op, &m, err)) != MT_OK) return st;
  if (m->kind == MT_KIND_DENSE)
    return mt_err(err, MT_LAYOUT_MISMATCH,
                  "%s: Could not run 'aten::sparse_mask' with arguments from the 'CPU' backend "
                  "(a dense mask)", op);
  if (m->kind == MT_KIND_COO && mt_kind_is_compressed(x->kind))
    return mt_err(err, MT_LAYOUT_MISMATCH,
                  "%s: sparse_mask_sparse_compressed expects mask to have sparse compressed "
                  "layout, got Sparse", op);
  if (m->ndim != x->ndim || !mt_shape_equal(m, x))
    return mt_err(err, MT_SHAPE_MISMATCH, "%s: the mask's shape %s differs from self's %s", op,
                  mt_shape_str(m->ndim, m->shape, a, sizeof a),
                  mt_shape_str(x->ndim, x->shape, b, sizeof b));
  if (mt_kind_is_compressed(x->kind)) {
    st = compressed_intersection(call, ex, x, m, err);
    goto out;
  }
  if (x->kind == MT_KIND_COO && mt_kind_is_compressed(m->kind) && !mt_dtype_is_float(x->dtype)) {
    /* torch computes this pair through a float multiply by the mask */
    st = mt_err(err, MT_DTYPE_MISMATCH,
                "%s: Can't convert result type Float to output %s (a %s COO self with a %s mask)",
                op, mt_dtype_name(x->dtype), mt_dtype_name(x->dtype), mt_kind_name(m->kind));
    goto out;
  }
  if (x->kind == MT_KIND_COO && m->kind == MT_KIND_COO && x->sparse_dim != m->sparse_dim) {
    st = mt_err(err, MT_INVALID_ARGUMENT,
                "%s: the number of sparse dimensions in `self` should match that of the `mask`. "
                "Got `self.sparse_dim() == %d` != `mask.sparse_dim() == %d`.",
                op, x->sparse_dim, m->sparse_dim);
    goto out;
  }
  /* x densified (dp: each dense element's source in x's values, or a
   * zero), then the mask's elements picked from it: one copy plan */
  if ((st = dense_plan(ex, x, &dp, &base, &len, &xd, err)) != MT_OK) goto out;
  size_t es = mt_dtype_size(x->dtype);
  if (m->kind == MT_KIND_COO) {
    int64_t row = mt_coo_row_numel(m);
    if ((st = h->coo_new(x->dtype, m->ndim, m->shape, m->sparse_dim, m->nnz, &o, err)) != MT_OK)
      goto out;
    if (m->nnz) memcpy(o->indices, m->indices, (size_t)(m->sparse_dim * m->nnz) * sizeof(int64_t));
    if ((st = plan_alloc(&plan, m->nnz * row, err)) != MT_OK) goto out;
    for (int64_t k = 0; k < m->nnz; k++)
      for (int64_t j = 0, d = mt_coo_linear(m, k) * row; j < row; j++) {
        plan.src[k * row + j] = dp.src[d + j];
        plan.off[k * row + j] = dp.off[d + j];
      }
    o->coalesced = m->coalesced;
  } else {
    mt_cgeom g = {0};
    if ((st = entries_from_compressed(m, &l, err)) != MT_OK) goto out;
    mt_cgeom_of(m, &g);
    if ((st = mt__cpu_compressed_like(h, m, x->dtype, &o, err)) != MT_OK) goto out;
    if ((st = plan_alloc(&plan, l.n * g.dense, err)) != MT_OK) goto out;
    /* entries come in storage order: entry k is cell k of the values */
    for (int64_t k = 0; k < l.n; k++) {
      const spc_entry *e = &l.e[k];
      for (int64_t j = 0, d = ((e->b * g.rows + e->r) * g.cols + e->c) * g.dense; j < g.dense;
           j++) {
        plan.src[k * g.dense + j] = dp.src[d + j];
        plan.off[k * g.dense + j] = dp.off[d + j];
      }
    }
  }
  if ((st = plan_run(ex, &plan, base, len, es, o->values, err)) != MT_OK) goto out;
  call->out[0] = o;
  call->n_out = 1;
  o = NULL;
out:
  free(l.e);
  plan_free(&dp);
  plan_free(&plan);
  mt_tensor_free(xd);
  if (o) h->free(o);
  return st;
}
mt_status mt_cpu_sparse_mask(mt_call *call, mt_error *err) {
  return sparse_mask(call, &mt_cpu_exec, err);
}

/* ---- accessors (SPC-8) ------------------------------------------------------ */

/* A dense result of dtype dt and shape (ndim, shape) holding the elements
 * of src, copied on ex. */
static mt_status dense_out(mt_call *call, const mt_exec *ex, mt_dtype dt, int ndim,
                           const int64_t *shape, const void *src, mt_error *err) {
  const mt_host *h = mt__cpu_host(call);
  mt_status st = h->dense_new(dt, ndim, shape, &call->out[0], err);
  if (st != MT_OK) return st;
  if ((st = copy_values(ex, src, mt_shape_numel(ndim, shape), mt_dtype_size(dt),
                        call->out[0]->values, err)) != MT_OK) {
    h->free(call->out[0]);
    call->out[0] = NULL;
    return st;
  }
  call->n_out = 1;
  return MT_OK;
}

typedef enum { ACC_VALUES, ACC_INDICES, ACC_RAW_INDICES, ACC_RAW_VALUES, ACC_CROW, ACC_COL,
               ACC_CCOL, ACC_ROW } spc_acc;

static mt_status accessor(mt_call *call, mt_op opid, spc_acc what, const mt_exec *ex,
                          mt_error *err) {
  const char *op = mt_op_name(opid);
  const mt_tensor *x;
  int64_t shape[MT_MAX_DIMS];
  mt_status st;
  mt__cpu_begin(call);
  if ((st = mt__kw_check(opid, call->kw, err)) != MT_OK) return st;
  if ((st = plain_input(call, 0, op, &x, err)) != MT_OK) return st;
  mt_kind k = x->kind;
  if (what == ACC_VALUES || what == ACC_INDICES || what == ACC_RAW_INDICES ||
      what == ACC_RAW_VALUES) {
    int idx = what == ACC_INDICES || what == ACC_RAW_INDICES;
    int raw = what == ACC_RAW_INDICES || what == ACC_RAW_VALUES;
    if (k == MT_KIND_COO) {
      if (!raw && !x->coalesced)
        return mt_err(err, MT_LAYOUT_MISMATCH,
                      "%s: Cannot get %s on an uncoalesced tensor, please call .coalesce() first",
                      op, idx ? "indices" : "values");
      if (idx) {
        shape[0] = x->sparse_dim;
        shape[1] = x->nnz;
        return dense_out(call, ex, MT_int64, 2, shape, x->indices, err);
      }
      if (1 + x->ndim - x->sparse_dim > MT_MAX_DIMS)
        return mt_err(err, MT_NOT_SUPPORTED, "%s: values would have %d dims (at most %d)", op,
                      1 + x->ndim - x->sparse_dim, MT_MAX_DIMS);
      shape[0] = x->nnz;
      for (int d = x->sparse_dim; d < x->ndim; d++) shape[1 + d - x->sparse_dim] = x->shape[d];
      return dense_out(call, ex, x->dtype, 1 + x->ndim - x->sparse_dim, shape, x->values, err);
    }
    if (what == ACC_VALUES && mt_kind_is_compressed(k)) {
      mt_cgeom g = {0};
      mt_cgeom_of(x, &g);
      if (x->ndim - 1 + (mt_kind_is_blocked(k) ? 2 : 0) > MT_MAX_DIMS)
        return mt_err(err, MT_NOT_SUPPORTED, "%s: values would have %d dims (at most %d)", op,
                      x->ndim + 1, MT_MAX_DIMS);
      int n = 0;
      for (int d = 0; d < g.nb; d++) shape[n++] = x->shape[d];
      shape[n++] = x->nnz;
      if (mt_kind_is_blocked(k)) shape[n++] = g.bh, shape[n++] = g.bw;
      for (int d = g.nb + 2; d < x->ndim; d++) shape[n++] = x->shape[d];
      return dense_out(call, ex, x->dtype, n, shape, x->values, err);
    }
    if (raw)
      return mt_err(err, MT_LAYOUT_MISMATCH,
                    "%s: Could not run 'aten::%s' with arguments from the '%s' backend", op, op,
                    k == MT_KIND_DENSE ? "CPU" : "SparseCsrCPU");
    return mt_err(err, MT_LAYOUT_MISMATCH, "%s: %s expected sparse %stensor layout but got %s", op,
                  op, idx ? "coordinate " : "", torch_layout(k));
  }
  /* compressed index accessors: crow/col of CSR and BSR, ccol/row of CSC and BSC */
  int want_col_layout = what == ACC_CCOL || what == ACC_ROW;
  int ok = want_col_layout ? (k == MT_KIND_CSC || k == MT_KIND_BSC)
                           : (k == MT_KIND_CSR || k == MT_KIND_BSR);
  if (!ok)
    return mt_err(err, MT_LAYOUT_MISMATCH,
                  "%s: %s expected sparse %s compressed tensor layout but got %s", op, op,
                  want_col_layout ? "column" : "row", torch_layout(k));
  mt_cgeom g = {0};
  mt_cgeom_of(x, &g);
  for (int d = 0; d < g.nb; d++) shape[d] = x->shape[d];
  int comp = what == ACC_CROW || what == ACC_CCOL;
  shape[g.nb] = comp ? g.ncomp + 1 : x->nnz;
  return dense_out(call, ex, MT_int64, g.nb + 1, shape, comp ? x->crow_indices : x->col_indices, err);
}

mt_status mt_cpu_values(mt_call *c, mt_error *e) {
  return accessor(c, MT_OP_values, ACC_VALUES, &mt_cpu_exec, e);
}
mt_status mt_cpu_indices(mt_call *c, mt_error *e) {
  return accessor(c, MT_OP_indices, ACC_INDICES, &mt_cpu_exec, e);
}
mt_status mt_cpu__indices(mt_call *c, mt_error *e) {
  return accessor(c, MT_OP__indices, ACC_RAW_INDICES, &mt_cpu_exec, e);
}
mt_status mt_cpu__values(mt_call *c, mt_error *e) {
  return accessor(c, MT_OP__values, ACC_RAW_VALUES, &mt_cpu_exec, e);
}
mt_status mt_cpu_crow_indices(mt_call *c, mt_error *e) {
  return accessor(c, MT_OP_crow_indices, ACC_CROW, &mt_cpu_exec, e);
}
mt_status mt_cpu_col_indices(mt_call *c, mt_error *e) {
  return accessor(c, MT_OP_col_indices, ACC_COL, &mt_cpu_exec, e);
}
mt_status mt_cpu_ccol_indices(mt_call *c, mt_error *e) {
  return accessor(c, MT_OP_ccol_indices, ACC_CCOL, &mt_cpu_exec, e);
}
mt_status mt_cpu_row_indices(mt_call *c, mt_error *e) {
  return accessor(c, MT_OP_row_indices, ACC_ROW, &mt_cpu_exec, e);
}

/* ---- constructors (SPC-9, SPC-10) ------------------------------------------- */

/* An index tensor: dense, integer (int32/int64; torch converts others). */
static mt_status index_input(const mt_call *call, int i, const char *op, const mt_tensor **t,
                             const mt_tensor **view, mt_tensor **tmp, mt_error *err) {
  mt_status st = plain_input(call, i, op, t, err);
  if (st != MT_OK) return st;
  if ((*t)->kind != MT_KIND_DENSE)
    return mt_err(err, MT_INVALID_ARGUMENT, "%s: inputs/%d must be a dense index tensor, got %s",
                  op, i, mt_kind_name((*t)->kind));
  return mt__cpu_contig(*t, view, tmp, err);
}

static int64_t idx_at(const mt_tensor *t, int64_t i) { return mt__cpu_ldi(t->values, t->dtype, i); }

/* SPC-9: torch.sparse_coo_tensor(indices, values, size, is_coalesced=,
 * check_invariants=True). */
static mt_status sparse_coo_tensor(mt_call *call, const mt_exec *ex, mt_error *err) {
  static const char *op = "sparse_coo_tensor";
  const mt_host *h = mt__cpu_host(call);
  const mt_tensor *ind = NULL, *iv = NULL, *val = NULL, *vv = NULL;
  mt_tensor *itmp = NULL, *vtmp = NULL, *o = NULL;
  int64_t shape[MT_MAX_DIMS];
  char sh[96];
  mt_status st;
  mt__cpu_begin(call);
  if ((st = mt__kw_check(MT_OP_sparse_coo_tensor, call->kw, err)) != MT_OK) return st;
  if ((st = index_input(call, 0, op, &ind, &iv, &itmp, err)) != MT_OK) goto out;
  if ((st = plain_input(call, 1, op, &val, err)) != MT_OK) goto out;
  if ((st = spc_contig(ex, val, &vv, &vtmp, err)) != MT_OK) goto out;
  if (!mt__cpu_is_int(ind->dtype)) { /* torch casts float indices; no case does */
    st = mt_err(err, MT_NOT_SUPPORTED, "%s: indices of dtype %s (the CPU backend takes integer "
                "indices)", op, mt_dtype_name(ind->dtype));
    goto out;
  }
  if (ind->ndim != 2) {
    st = mt_err(err, MT_INVALID_ARGUMENT, "%s: indices must be sparse_dim x nnz, but got: %s", op,
                mt_shape_str(ind->ndim, ind->shape, sh, sizeof sh));
    goto out;
  }
  int sd = (int)ind->shape[0], dd = vv->ndim - 1;
  int64_t nnz = ind->shape[1];
  if (vv->ndim < 1 || vv->shape[0] != nnz) {
    st = mt_err(err, MT_INVALID_ARGUMENT,
                "%s: indices and values must have same nnz, but got nnz from indices: %lld, nnz "
                "from values: %lld", op, (long long)nnz, (long long)(vv->ndim ? vv->shape[0] : 1));
    goto out;
  }
  const mt_kwarg *size = mt_kw_find(call->kw, "size");
  int ndim = sd + dd;
  if (size) {
    int n = size->type == MT_KW_INTS ? size->n : 1;
    if (n != ndim || n > MT_MAX_DIMS) {
      st = mt_err(err, MT_INVALID_ARGUMENT,
                  "%s: 'len(size) == sparse_dim + dense_dim' is not satisfied: len(size) = %d, "
                  "sparse_dim = %d, dense_dim = %d", op, n, sd, dd);
      goto out;
    }
    for (int d = 0; d < n; d++) shape[d] = size->type == MT_KW_INTS ? size->ints[d] : size->i;
    for (int d = 0; d < dd; d++)
      if (shape[sd + d] != vv->shape[1 + d]) {
        st = mt_err(err, MT_INVALID_ARGUMENT,
                    "%s: dense dim %d of size is %lld, values have %lld", op, sd + d,
                    (long long)shape[sd + d], (long long)vv->shape[1 + d]);
        goto out;
      }
  } else { /* inferred: max index + 1 per sparse dim */
    if (ndim > MT_MAX_DIMS) {
      st = mt_err(err, MT_INVALID_ARGUMENT, "%s: %d dims", op, ndim);
      goto out;
    }
    for (int d = 0; d < sd; d++) {
      shape[d] = 0;
      for (int64_t k = 0; k < nnz; k++)
        if (idx_at(iv, d * nnz + k) + 1 > shape[d]) shape[d] = idx_at(iv, d * nnz + k) + 1;
    }
    for (int d = 0; d < dd; d++) shape[sd + d] = vv->shape[1 + d];
  }
  for (int d = 0; d < sd; d++)
    for (int64_t k = 0; k < nnz; k++) {
      int64_t i = idx_at(iv, d * nnz + k);
      if (i < 0) {
        st = mt_err(err, MT_INDEX_OUT_OF_RANGE,
                    "%s: found negative index %lld for dim %d (indices[%d][%lld])", op,
                    (long long)i, d, d, (long long)k);
        goto out;
      }
      if (i >= shape[d]) {
        st = mt_err(err, MT_INDEX_OUT_OF_RANGE,
                    "%s: size is inconsistent with indices: for dim %d, size is %lld but found "
                    "index %lld (indices[%d][%lld])",
                    op, d, (long long)shape[d], (long long)i, d, (long long)k);
        goto out;
      }
    }
  if ((st = h->coo_new(vv->dtype, ndim, shape, sd, nnz, &o, err)) != MT_OK) goto out;
  for (int64_t q = 0; q < (int64_t)sd * nnz; q++) o->indices[q] = idx_at(iv, q);
  if ((st = copy_values(ex, vv->values, mt_numel(vv), mt_dtype_size(vv->dtype), o->values,
                        err)) != MT_OK)
    goto out;
  const mt_kwarg *ic = mt_kw_find(call->kw, "is_coalesced");
  o->coalesced = ic ? (int)ic->i : nnz <= 1;
  if (ic && ic->i)
    for (int64_t k = 1; k < nnz; k++)
      if (mt_coo_linear(o, k) <= mt_coo_linear(o, k - 1)) {
        st = mt_err(err, MT_INVALID_ARGUMENT,
                    "%s: cannot set is_coalesced to true if indices correspond to uncoalesced COO "
                    "tensor (entry %lld is not after entry %lld)",
                    op, (long long)k, (long long)(k - 1));
        goto out;
      }
  call->out[0] = o;
  call->n_out = 1;
  o = NULL;
out:
  mt_tensor_free(itmp);
  mt_tensor_free(vtmp);
  if (o) h->free(o);
  return st;
}
mt_status mt_cpu_sparse_coo_tensor(mt_call *call, mt_error *err) {
  return sparse_coo_tensor(call, &mt_cpu_exec, err);
}

/* SPC-10: torch.sparse_{csr,csc,bsr,bsc}_tensor(compressed, plain, values,
 * size, check_invariants=True), torch's checks in its order. */
static mt_status compressed_ctor(mt_call *call, mt_op opid, mt_kind kind, const mt_exec *ex,
                                 mt_error *err) {
  const char *op = mt_op_name(opid);
  const mt_host *h = mt__cpu_host(call);
  const char *cn = mt_compressed_name(kind), *pn = mt_plain_name(kind);
  const mt_tensor *ci = NULL, *cv = NULL, *pi = NULL, *pv = NULL, *val = NULL, *vv = NULL;
  mt_tensor *ctmp = NULL, *ptmp = NULL, *vtmp = NULL, *o = NULL;
  int64_t shape[MT_MAX_DIMS];
  int blocked = mt_kind_is_blocked(kind), by_col = kind == MT_KIND_CSC || kind == MT_KIND_BSC;
  mt_status st;
  mt__cpu_begin(call);
  if ((st = mt__kw_check(opid, call->kw, err)) != MT_OK) return st;
  if ((st = index_input(call, 0, op, &ci, &cv, &ctmp, err)) != MT_OK) goto out;
  if ((st = index_input(call, 1, op, &pi, &pv, &ptmp, err)) != MT_OK) goto out;
  if ((st = plain_input(call, 2, op, &val, err)) != MT_OK) goto out;
  if ((st = spc_contig(ex, val, &vv, &vtmp, err)) != MT_OK) goto out;
  if (ci->dtype != pi->dtype || (ci->dtype != MT_int64 && ci->dtype != MT_int32)) {
    st = mt_err(err, MT_INVALID_ARGUMENT,
                "%s: %s and %s must have the same dtype, int32 or int64, got %s and %s", op, cn,
                pn, mt_dtype_name(ci->dtype), mt_dtype_name(pi->dtype));
    goto out;
  }
  if (ci->ndim != pi->ndim || ci->ndim < 1) {
    st = mt_err(err, MT_INVALID_ARGUMENT,
                "%s: %s and %s dimensionalities must be equal but got %d and %d, respectively", op,
                cn, pn, ci->ndim, pi->ndim);
    goto out;
  }
  int nb = ci->ndim - 1, base = blocked ? 2 : 0;
  if (vv->ndim <= nb + base) {
    st = mt_err(err, MT_INVALID_ARGUMENT,
                "%s: values must have dimensionality > sum of batch and block dimensionalities "
                "(=%d + %d) but got %d", op, nb, base, vv->ndim);
    goto out;
  }
  int dd = vv->ndim - nb - 1 - base;
  const mt_kwarg *size = mt_kw_find(call->kw, "size");
  int n = size ? (size->type == MT_KW_INTS ? size->n : 1) : -1;
  if (!size) {
    st = mt_err(err, MT_NOT_SUPPORTED, "%s: a size is required by the CPU backend", op);
    goto out;
  }
  if (n != nb + 2 + dd || n > MT_MAX_DIMS) {
    st = mt_err(err, MT_INVALID_ARGUMENT,
                "%s: tensor dimensionality must be sum of batch, base, and dense "
                "dimensionalities (=%d + 2 + %d) but got %d", op, nb, dd, n);
    goto out;
  }
  for (int d = 0; d < n; d++) shape[d] = size->type == MT_KW_INTS ? size->ints[d] : size->i;
  int64_t bs[2] = {blocked ? vv->shape[nb + 1] : 1, blocked ? vv->shape[nb + 2] : 1};
  for (int q = 0; q < 2; q++)
    if (bs[q] < 1 || shape[nb + q] % bs[q]) {
      st = mt_err(err, MT_INVALID_ARGUMENT,
                  "%s: tensor shape[%d] (=%lld) must be divisible with blocksize[%d] (=%lld) as "
                  "defined by values shape",
                  op, nb + q, (long long)shape[nb + q], q, (long long)bs[q]);
      goto out;
    }
  for (int d = 0; d < nb; d++)
    if (ci->shape[d] != shape[d] || pi->shape[d] != shape[d] || vv->shape[d] != shape[d]) {
      st = mt_err(err, MT_INVALID_ARGUMENT, "%s: batch dim %d of %s, %s or values is not %lld", op,
                  d, cn, pn, (long long)shape[d]);
      goto out;
    }
  for (int d = 0; d < dd; d++)
    if (vv->shape[nb + 1 + base + d] != shape[nb + 2 + d]) {
      st = mt_err(err, MT_INVALID_ARGUMENT, "%s: dense dim %d of values is not %lld", op, d,
                  (long long)shape[nb + 2 + d]);
      goto out;
    }
  int64_t ncomp = by_col ? shape[nb + 1] / bs[1] : shape[nb] / bs[0];
  int64_t nplain = by_col ? shape[nb] / bs[0] : shape[nb + 1] / bs[1];
  int64_t nnz = vv->shape[nb];
  if (ci->shape[nb] != ncomp + 1) {
    st = mt_err(
        err, MT_INVALID_ARGUMENT,
        "%s: %s.shape[-1] must be equal to the number of %s + 1 (=%lld), but got %lld", op, cn,
        by_col ? (blocked ? "column blocks" : "columns") : (blocked ? "row blocks" : "rows"),
        (long long)(ncomp + 1), (long long)ci->shape[nb]);
    goto out;
  }
  if (pi->shape[nb] != nnz) {
    st = mt_err(err, MT_INVALID_ARGUMENT,
                "%s: %s.shape[-1] must be equal to nnz (=%lld) as defined by values.shape[%d], "
                "but got %lld", op, pn, (long long)nnz, nb, (long long)pi->shape[nb]);
    goto out;
  }
  int64_t batches = mt_shape_numel(nb, shape);
  for (int64_t b = 0; b < batches; b++) {
    int64_t c0 = idx_at(cv, b * (ncomp + 1)), cl = idx_at(cv, b * (ncomp + 1) + ncomp);
    if (c0 != 0) {
      st = mt_err(err, MT_INVALID_ARGUMENT,
                  "%s: `%s[..., 0] == 0` is not satisfied (batch %lld: %lld)", op, cn,
                  (long long)b, (long long)c0);
      goto out;
    }
    if (cl != nnz) {
      st = mt_err(err, MT_INVALID_ARGUMENT,
                  "%s: `%s[..., -1] == nnz` is not satisfied (batch %lld: %lld, nnz %lld)", op, cn,
                  (long long)b, (long long)cl, (long long)nnz);
      goto out;
    }
    for (int64_t i = 0; i < ncomp; i++) {
      int64_t lo = idx_at(cv, b * (ncomp + 1) + i), hi = idx_at(cv, b * (ncomp + 1) + i + 1);
      if (hi < lo) {
        st = mt_err(err, MT_INVALID_ARGUMENT,
                    "%s: %s[%lld] = %lld is less than %s[%lld] = %lld (batch %lld): must not "
                    "decrease", op, cn, (long long)(i + 1), (long long)hi, cn, (long long)i,
                    (long long)lo, (long long)b);
        goto out;
      }
    }
    for (int64_t k = 0; k < nnz; k++) {
      int64_t p = idx_at(pv, b * nnz + k);
      if (p < 0 || p >= nplain) {
        st = mt_err(err, MT_INDEX_OUT_OF_RANGE,
                    "%s: `0 <= %s < %s` is not satisfied: %s[%lld] = %lld (batch %lld), limit "
                    "%lld", op, pn, by_col ? "nrows" : "ncols", pn, (long long)k, (long long)p,
                    (long long)b, (long long)nplain);
        goto out;
      }
    }
    for (int64_t i = 0; i < ncomp; i++) {
      int64_t lo = idx_at(cv, b * (ncomp + 1) + i), hi = idx_at(cv, b * (ncomp + 1) + i + 1);
      for (int64_t k = lo + 1; k < hi; k++)
        if (idx_at(pv, b * nnz + k) <= idx_at(pv, b * nnz + k - 1)) {
          st = mt_err(err, MT_INVALID_ARGUMENT,
                      "%s: %s in slot %lld are not sorted and distinct: %s[%lld] = %lld after "
                      "%lld (batch %lld)", op, pn, (long long)i, pn, (long long)k,
                      (long long)idx_at(pv, b * nnz + k), (long long)idx_at(pv, b * nnz + k - 1),
                      (long long)b);
          goto out;
        }
    }
  }
  if ((st = h->compressed_new(kind, vv->dtype, n, shape, dd, blocked ? bs : NULL, nnz, &o, err)) !=
      MT_OK)
    goto out;
  for (int64_t q = 0; q < batches * (ncomp + 1); q++) o->crow_indices[q] = idx_at(cv, q);
  for (int64_t q = 0; q < batches * nnz; q++) o->col_indices[q] = idx_at(pv, q);
  if ((st = copy_values(ex, vv->values, mt_numel(vv), mt_dtype_size(vv->dtype), o->values,
                        err)) != MT_OK)
    goto out;
  call->out[0] = o;
  call->n_out = 1;
  o = NULL;
out:
  mt_tensor_free(ctmp);
  mt_tensor_free(ptmp);
  mt_tensor_free(vtmp);
  if (o) h->free(o);
  return st;
}

mt_status mt_cpu_sparse_csr_tensor(mt_call *c, mt_error *e) {
  return compressed_ctor(c, MT_OP_sparse_csr_tensor, MT_KIND_CSR, &mt_cpu_exec, e);
}
mt_status mt_cpu_sparse_csc_tensor(mt_call *c, mt_error *e) {
  return compressed_ctor(c, MT_OP_sparse_csc_tensor, MT_KIND_CSC, &mt_cpu_exec, e);
}
mt_status mt_cpu_sparse_bsr_tensor(mt_call *c, mt_error *e) {
  return compressed_ctor(c, MT_OP_sparse_bsr_tensor, MT_KIND_BSR, &mt_cpu_exec, e);
}
mt_status mt_cpu_sparse_bsc_tensor(mt_call *c, mt_error *e) {
  return compressed_ctor(c, MT_OP_sparse_bsc_tensor, MT_KIND_BSC, &mt_cpu_exec, e);
}

/* ---- the family's kernels (common/sparse_convert_ops.h) --------------------- */

/* The family's kernels with their values copied on ex (its gather), the
 * stored cells of a dense input found by ex (its nonzero hook) and COO
 * inputs coalesced by ex: the CUDA backend's slots. */
mt_status mt__sparse_convert_run(mt_call *call, mt_op op, const mt_exec *ex, mt_error *err) {
  switch (op) {
  case MT_OP_to_sparse_coo: return convert(call, op, MT_KIND_COO, ex, err);
  case MT_OP_to_sparse_csc: return convert(call, op, MT_KIND_CSC, ex, err);
  case MT_OP_to_sparse_bsr: return convert(call, op, MT_KIND_BSR, ex, err);
  case MT_OP_to_sparse_bsc: return convert(call, op, MT_KIND_BSC, ex, err);
  case MT_OP_coalesce: return coalesce(call, ex, err);
  case MT_OP_sparse_mask: return sparse_mask(call, ex, err);
  case MT_OP_values: return accessor(call, op, ACC_VALUES, ex, err);
  case MT_OP_indices: return accessor(call, op, ACC_INDICES, ex, err);
  case MT_OP__indices: return accessor(call, op, ACC_RAW_INDICES, ex, err);
  case MT_OP__values: return accessor(call, op, ACC_RAW_VALUES, ex, err);
  case MT_OP_crow_indices: return accessor(call, op, ACC_CROW, ex, err);
  case MT_OP_col_indices: return accessor(call, op, ACC_COL, ex, err);
  case MT_OP_ccol_indices: return accessor(call, op, ACC_CCOL, ex, err);
  case MT_OP_row_indices: return accessor(call, op, ACC_ROW, ex, err);
  case MT_OP_sparse_coo_tensor: return sparse_coo_tensor(call, ex, err);
  case MT_OP_sparse_csr_tensor: return compressed_ctor(call, op, MT_KIND_CSR, ex, err);
  case MT_OP_sparse_csc_tensor: return compressed_ctor(call, op, MT_KIND_CSC, ex, err);
  case MT_OP_sparse_bsr_tensor: return compressed_ctor(call, op, MT_KIND_BSR, ex, err);
  case MT_OP_sparse_bsc_tensor: return compressed_ctor(call, op, MT_KIND_BSC, ex, err);
  default: return mt_err(err, MT_NOT_SUPPORTED, "%s: not a sparse_convert op", mt_op_name(op));
  }
}

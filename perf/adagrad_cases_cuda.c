/* adagrad_cases_cuda.c - see adagrad_cases_cuda.h. */
#include "adagrad_cases_cuda.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int bc_dev_path_ok(bc_path path) {
  return path == BC_STREAM || path == BC_DENSE || path == BC_SPARSE_COO || path == BC_TOUCH ||
         path == BC_MASKED_DENSE || path == BC_MASKED_SPARSE || path == BC_SPARSE_COO_DUP;
}

/* MT_CUDA_EMU: the device flow over the emulated kernels (perf/kernels/
 * cuda_emu_runtime.h, mtfast_emu; library mtbcases_emu) */
#if !defined(MT_HAVE_CUDA) && !defined(MT_CUDA_EMU)

int bc_dev_probe(char *info, size_t len) {
  snprintf(info, len, "not built with CUDA (nvcc was not found at configure time)");
  return -1;
}
int bc_dev_load(bc_dev **d, const bc_base *b, const bc_grad *g, char *why, size_t len) {
  (void)d, (void)b, (void)g;
  return bc_dev_probe(why, len);
}
void bc_dev_free(bc_dev *d) { (void)d; }
mt_status bc_dev_step(bc_dev *d, bc_path path, int gs, double *seconds, mt_error *err) {
  (void)d, (void)path, (void)gs;
  *seconds = 0;
  return mt_err(err, MT_NOT_SUPPORTED, "not built with CUDA");
}
int bc_dev_check(bc_dev *d, const bc_base *b, const bc_grad *g, int gs, bc_verified *v,
                 char *why, size_t len) {
  (void)d, (void)b, (void)g, (void)gs;
  memset(v, 0, sizeof *v);
  return bc_dev_probe(why, len);
}
double bc_dev_copy_bandwidth(size_t bytes) {
  (void)bytes;
  return 0;
}
int64_t bc_dev_extra_bytes(const bc_dev *d) {
  (void)d;
  return 0;
}

#else /* MT_HAVE_CUDA or MT_CUDA_EMU */

#include "adagrad_cuda.h"

struct bc_dev {
  const bc_base *base; /* whose arrays are on the device */
  const bc_grad *grad;
  int64_t base_n, grad_entries, grad_specified;
  int f64;
  bc_path grad_path;
  double grad_density;
  void *p, *s, *g;   /* n elements each */
  int64_t *idx;      /* COO entries */
  void *vals;
  uint8_t *mask;     /* masked_dense */
  int64_t *uidx;     /* sparse_coo_dup: the coalesced grad (the paired sparse_coo step's) */
  void *cvals;
  mt_cuda_dup *dup;  /* sparse_coo_dup: the sort's buffers */
  mt_cuda_gs *gs;    /* the cuSPARSE pipeline on p, s, idx (made at its first step) */
  mt_cuda_timer *timer;
};

int bc_dev_probe(char *info, size_t len) { return mt_cuda_probe(info, len); }

/* (always before free_base: the pipeline holds p and s too) */
static void free_grad(bc_dev *d) {
  mt_cuda_gs_free(d->gs);
  d->gs = NULL;
  mt_cuda_free(d->idx);
  mt_cuda_free(d->vals);
  mt_cuda_free(d->mask);
  mt_cuda_free(d->uidx);
  mt_cuda_free(d->cvals);
  mt_cuda_dup_free(d->dup);
  d->idx = NULL, d->vals = NULL, d->mask = NULL, d->uidx = NULL, d->cvals = NULL, d->dup = NULL;
  d->grad = NULL;
}

static void free_base(bc_dev *d) {
  mt_cuda_free(d->p);
  mt_cuda_free(d->s);
  mt_cuda_free(d->g);
  d->p = d->s = d->g = NULL;
  d->base = NULL;
}

void bc_dev_free(bc_dev *d) {
  if (!d) return;
  free_grad(d);
  free_base(d);
  mt_cuda_timer_free(d->timer);
  free(d);
}

/* the same struct may be refilled with other contents: compare values too */
static int same_base(const bc_dev *d, const bc_base *b) {
  return d->base == b && d->base_n == b->n && d->f64 == b->f64;
}
static int same_grad(const bc_dev *d, const bc_grad *g) {
  return d->grad == g && d->grad_path == g->path && d->grad_density == g->density &&
         d->grad_entries == g->entries;
}

int bc_dev_load(bc_dev **dp, const bc_base *b, const bc_grad *g, char *why, size_t len) {
  mt_error err = {0};
  size_t es = b->f64 ? 8 : 4, n = (size_t)b->n;
  if (!bc_dev_path_ok(g->path)) {
    snprintf(why, len, "path %s does not run on the device", bc_path_name(g->path));
    return -1;
  }
  if (!*dp) {
    if (!(*dp = calloc(1, sizeof **dp))) {
      snprintf(why, len, "out of memory");
      return -1;
    }
    if (mt_cuda_timer_new(&(*dp)->timer, &err) != MT_OK) goto fail;
  }
  bc_dev *d = *dp;
  if (!same_base(d, b)) {
    free_grad(d);
    free_base(d);
    if (mt_cuda_malloc(&d->p, n * es, &err) || mt_cuda_malloc(&d->s, n * es, &err) ||
        mt_cuda_malloc(&d->g, n * es, &err) || mt_cuda_upload(d->p, b->p, n * es, &err) ||
        mt_cuda_upload(d->s, b->s, n * es, &err) || mt_cuda_upload(d->g, b->g, n * es, &err))
      goto fail;
    d->base = b, d->base_n = b->n, d->f64 = b->f64;
  }
  if (!same_grad(d, g)) {
    free_grad(d);
    size_t e = (size_t)g->entries;
    if (g->path == BC_SPARSE_COO || g->path == BC_MASKED_SPARSE || g->path == BC_TOUCH ||
        g->path == BC_SPARSE_COO_DUP) {
      if (mt_cuda_malloc((void **)&d->idx, e * 8, &err) || mt_cuda_malloc(&d->vals, e * es, &err) ||
          mt_cuda_upload(d->idx, g->idx, e * 8, &err) ||
          mt_cuda_upload(d->vals, g->vals, e * es, &err))
        goto fail;
    }
    if (g->path == BC_SPARSE_COO_DUP) {
      size_t u = (size_t)g->specified;
      if (mt_cuda_malloc((void **)&d->uidx, u * 8, &err) ||
          mt_cuda_malloc(&d->cvals, u * es, &err) ||
          mt_cuda_upload(d->uidx, g->uidx, u * 8, &err) ||
          mt_cuda_upload(d->cvals, g->cvals, u * es, &err) ||
          mt_cuda_dup_new(&d->dup, b->n, g->entries, &err))
        goto fail;
    } else if (g->path == BC_MASKED_DENSE) {
      if (mt_cuda_malloc((void **)&d->mask, n, &err) || mt_cuda_upload(d->mask, g->mask, n, &err))
        goto fail;
    }
    d->grad = g, d->grad_path = g->path, d->grad_density = g->density;
    d->grad_entries = g->entries, d->grad_specified = g->specified;
  }
  return 0;
fail:
  snprintf(why, len, "%.400s", err.msg);
  if (*dp) {
    free_grad(*dp);
    free_base(*dp);
  }
  return -1;
}

/* The step of `path` on explicit device arrays (n elements, entries); gs:
 * the COO paths through the cuSPARSE gather/scatter pipeline instead. */
static mt_status dev_step_on(bc_dev *d, bc_path path, int gs, void *p, void *s, int64_t n,
                             int64_t entries, mt_error *err) {
  mt_adagrad_hparams hp = bc_hparams(1);
  int f64 = d->f64;
  if (gs) {
    if (path != BC_SPARSE_COO && path != BC_MASKED_SPARSE)
      return mt_err(err, MT_NOT_SUPPORTED, "bench: path %s has no cuSPARSE pipeline",
                    bc_path_name(path));
    if (!d->idx) return mt_err(err, MT_INVALID_ARGUMENT, "bench: no COO grad on the device");
    mt_status st;
    if (!d->gs && (st = mt_cuda_gs_new(&d->gs, p, s, n, d->idx, entries, f64, err)) != MT_OK)
      return st;
    return mt_cuda_adagrad_coo_gs(d->gs, d->vals, path == BC_MASKED_SPARSE, &hp, err);
  }
  switch (path) {
  case BC_STREAM:
    return f64 ? mt_cuda_stream_f64(p, s, d->g, n, BC_STREAM_K, err)
               : mt_cuda_stream_f32(p, s, d->g, n, (float)BC_STREAM_K, err);
  case BC_DENSE:
    return f64 ? mt_cuda_adagrad_dense_f64(p, s, d->g, n, &hp, err)
               : mt_cuda_adagrad_dense_f32(p, s, d->g, n, &hp, err);
  case BC_MASKED_DENSE:
    return f64 ? mt_cuda_adagrad_masked_dense_f64(p, s, d->g, d->mask, n, &hp, err)
               : mt_cuda_adagrad_masked_dense_f32(p, s, d->g, d->mask, n, &hp, err);
  case BC_SPARSE_COO:
  case BC_MASKED_SPARSE: {
    int masked = path == BC_MASKED_SPARSE;
    const int64_t *idx = d->idx;
    const void *vals = d->vals;
    if (d->grad_path == BC_SPARSE_COO_DUP) /* the pair of sparse_coo_dup: its coalesced grad */
      idx = d->uidx, vals = d->cvals, entries = d->grad_specified;
    if (!idx) return mt_err(err, MT_INVALID_ARGUMENT, "bench: no COO grad on the device");
    return f64 ? mt_cuda_adagrad_coo_f64(p, s, idx, vals, entries, masked, &hp, err)
               : mt_cuda_adagrad_coo_f32(p, s, idx, vals, entries, masked, &hp, err);
  }
  case BC_TOUCH:
    if (!d->idx) return mt_err(err, MT_INVALID_ARGUMENT, "bench: no COO grad on the device");
    return f64 ? mt_cuda_touch_f64(p, s, d->idx, d->vals, entries, BC_STREAM_K, err)
               : mt_cuda_touch_f32(p, s, d->idx, d->vals, entries, (float)BC_STREAM_K, err);
  case BC_SPARSE_COO_DUP:
    if (!d->dup)
      return mt_err(err, MT_INVALID_ARGUMENT, "bench: no sparse_coo_dup grad on the device");
    return f64 ? mt_cuda_adagrad_coo_dup_f64(p, s, d->idx, d->vals, entries, 0, d->dup, &hp, err)
               : mt_cuda_adagrad_coo_dup_f32(p, s, d->idx, d->vals, entries, 0, d->dup, &hp, err);
  default:
    return mt_err(err, MT_NOT_SUPPORTED, "bench: path %s does not run on the device",
                  bc_path_name(path));
  }
}

mt_status bc_dev_step(bc_dev *d, bc_path path, int gs, double *seconds, mt_error *err) {
  *seconds = 0;
  mt_cuda_timer_start(d->timer);
  mt_status st = dev_step_on(d, path, gs, d->p, d->s, d->base_n, d->grad_entries, err);
  if (st != MT_OK) return st;
  return mt_cuda_timer_stop(d->timer, seconds, err);
}

int bc_dev_check(bc_dev *d, const bc_base *b, const bc_grad *g, int gs, bc_verified *v,
                 char *why, size_t len) {
  mt_error err = {0};
  size_t bytes = (size_t)b->n * (b->f64 ? 8 : 4);
  bc_expect e;
  memset(&e, 0, sizeof e);
  memset(v, 0, sizeof *v);
  int rc = -1;
  char *hp = malloc(bytes), *hs = malloc(bytes);
  if (!hp || !hs) {
    snprintf(why, len, "device check: out of memory for a host copy of %zu bytes", 2 * bytes);
    goto out;
  }
  /* the device's current state (it has stepped since the upload), the
   * expected values from it, one step of the whole problem, the result */
  if (mt_cuda_download(hp, d->p, bytes, &err) || mt_cuda_download(hs, d->s, bytes, &err)) goto fail;
  if (bc_expect_make(&e, hp, hs, b, g, BC_VERIFY_ALL_N, BC_VERIFY_SEED ^ (uint64_t)b->n, why, len))
    goto out;
  double sec;
  if (bc_dev_step(d, g->path, gs, &sec, &err) != MT_OK || mt_cuda_sync(&err) != MT_OK ||
      mt_cuda_download(hp, d->p, bytes, &err) || mt_cuda_download(hs, d->s, bytes, &err))
    goto fail;
  char what[64];
  snprintf(what, sizeof what, "device %s%s", bc_path_name(g->path), gs ? " (cuSPARSE)" : "");
  rc = bc_verify(&e, hp, hs, what, why, len);
  bc_expect_summary(&e, v);
  goto out;
fail:
  snprintf(why, len, "device check: %.400s", err.msg);
out:
  bc_expect_free(&e);
  free(hp);
  free(hs);
  return rc;
}

int64_t bc_dev_extra_bytes(const bc_dev *d) { return d ? mt_cuda_dup_bytes(d->dup) : 0; }

double bc_dev_copy_bandwidth(size_t bytes) {
  double bw = 0;
  mt_error err = {0};
  return mt_cuda_copy_bandwidth(bytes, 5, &bw, &err) == MT_OK ? bw : 0;
}

#endif /* MT_HAVE_CUDA or MT_CUDA_EMU */

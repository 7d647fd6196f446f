/* golden_write.c - writing one-case golden files (format version
 * MT_GOLDEN_FORMAT_VERSION): repro bundles (`mtcs run --repro-dir`), and the
 * request and response files of the adapter protocol
 * (spec/adapter-protocol.md). See golden_io.h. */
#include "golden_io.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <hdf5.h>

#include "h5util.h"

/* ---- writing ----------------------------------------------------------------------------- */

typedef struct wr {
  const char *path;
  mt_error *err;
} wr;

static mt_status wr_fail(const wr *w, const char *what) {
  char h5[200];
  mt__h5_error_text(h5, sizeof h5);
  return mt_err(w->err, MT_IO_ERROR, "writing %s: %s%s%s%s", w->path, what, h5[0] ? " (HDF5: " : "",
                h5, h5[0] ? ")" : "");
}

static herr_t put_attr(hid_t obj, const char *name, hid_t type, hid_t space, const void *buf) {
  hid_t a = H5Acreate2(obj, name, type, space, H5P_DEFAULT, H5P_DEFAULT);
  if (a < 0) return -1;
  herr_t e = H5Awrite(a, type, buf);
  H5Aclose(a);
  return e;
}

static herr_t attr_put_str(hid_t obj, const char *name, const char *val) {
  if (!val) return 0;
  hid_t t = H5Tcopy(H5T_C_S1), s = H5Screate(H5S_SCALAR);
  herr_t e = -1;
  if (t >= 0 && s >= 0 && H5Tset_size(t, H5T_VARIABLE) >= 0 && H5Tset_cset(t, H5T_CSET_UTF8) >= 0)
    e = put_attr(obj, name, t, s, &val);
  if (t >= 0) H5Tclose(t);
  if (s >= 0) H5Sclose(s);
  return e;
}

static herr_t attr_put_i64(hid_t obj, const char *name, int64_t v) {
  hid_t s = H5Screate(H5S_SCALAR);
  herr_t e = s < 0 ? -1 : put_attr(obj, name, H5T_STD_I64LE, s, &v);
  if (s >= 0) H5Sclose(s);
  return e;
}

static herr_t attr_put_f64(hid_t obj, const char *name, double v) {
  hid_t s = H5Screate(H5S_SCALAR);
  herr_t e = s < 0 ? -1 : put_attr(obj, name, H5T_IEEE_F64LE, s, &v);
  if (s >= 0) H5Sclose(s);
  return e;
}

static herr_t attr_put_bool_enum(hid_t obj, const char *name, int v) {
  hid_t t = mt__h5_enum_bool_type(), s = H5Screate(H5S_SCALAR);
  uint8_t b = v ? 1 : 0;
  herr_t e = (t < 0 || s < 0) ? -1 : put_attr(obj, name, t, s, &b);
  if (t >= 0) H5Tclose(t);
  if (s >= 0) H5Sclose(s);
  return e;
}

static herr_t attr_put_i64s(hid_t obj, const char *name, const int64_t *v, int n) {
  hsize_t dims[1] = {(hsize_t)n};
  hid_t s = H5Screate_simple(1, dims, NULL);
  herr_t e = s < 0 ? -1 : put_attr(obj, name, H5T_STD_I64LE, s, n ? (const void *)v : (const void *)"");
  if (s >= 0) H5Sclose(s);
  return e;
}

static herr_t attr_put_f64s(hid_t obj, const char *name, const double *v, int n) {
  hsize_t dims[1] = {(hsize_t)n};
  hid_t s = H5Screate_simple(1, dims, NULL);
  herr_t e = s < 0 ? -1 : put_attr(obj, name, H5T_IEEE_F64LE, s, n ? (const void *)v : (const void *)"");
  if (s >= 0) H5Sclose(s);
  return e;
}

/* The file type for dtype (a copy: close it); bool as uint8. */
static hid_t file_type(mt_dtype dt) {
  switch (dt) {
    case MT_float32: return H5Tcopy(H5T_IEEE_F32LE);
    case MT_float64: return H5Tcopy(H5T_IEEE_F64LE);
    case MT_float16: {
      hid_t t = mt__h5_half_type();
      if (t >= 0 && H5Tset_order(t, H5T_ORDER_LE) < 0) {
        H5Tclose(t);
        return -1;
      }
      return t;
    }
    case MT_bfloat16: return H5Tcopy(H5T_IEEE_F32LE); /* widened, exact */
    case MT_int64: return H5Tcopy(H5T_STD_I64LE);
    case MT_int32: return H5Tcopy(H5T_STD_I32LE);
    case MT_int8: return H5Tcopy(H5T_STD_I8LE);
    case MT_uint8:
    case MT_bool: return H5Tcopy(H5T_STD_U8LE);
    default: return -1;
  }
}

static herr_t put_dataset(hid_t g, const char *name, mt_dtype dt, int rank, const int64_t *dims64,
                          const void *buf) {
  hsize_t dims[MT_MAX_DIMS];
  for (int d = 0; d < rank; d++) dims[d] = (hsize_t)dims64[d];
  hid_t s = rank ? H5Screate_simple(rank, dims, NULL) : H5Screate(H5S_SCALAR);
  hid_t ft = file_type(dt), mt = mt__h5_mem_type(dt), d = -1;
  herr_t e = -1;
  float *wide = NULL;
  if (s >= 0 && ft >= 0 && mt >= 0 &&
      (d = H5Dcreate2(g, name, ft, s, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT)) >= 0) {
    int64_t n = 1;
    for (int k = 0; k < rank; k++) n *= dims64[k];
    const void *src = buf;
    if (n && dt == MT_bfloat16) { /* stored widened to float32 (exact) */
      if ((wide = malloc((size_t)n * sizeof *wide)) != NULL) mt__h5_bf16_widen(buf, wide, n);
      src = wide;
    }
    e = !n ? 0 : !src ? -1 : H5Dwrite(d, mt, H5S_ALL, H5S_ALL, H5P_DEFAULT, src);
  }
  free(wide);
  if (d >= 0) H5Dclose(d);
  if (mt >= 0) H5Tclose(mt);
  if (ft >= 0) H5Tclose(ft);
  if (s >= 0) H5Sclose(s);
  return e;
}

static mt_status write_tensor(const wr *w, hid_t parent, const char *name, const mt_tensor *t) {
  mt_status st = MT_OK;
  mt_tensor *c = NULL;
  hid_t g = H5Gcreate2(parent, name, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  if (g < 0) return wr_fail(w, name);
  mt_dtype dt = t->kind == MT_KIND_MASKED ? t->data->dtype : t->dtype;
  const mt_tensor *shape_of = t->kind == MT_KIND_MASKED ? t->data : t;
  if (attr_put_str(g, "kind", mt_kind_name(t->kind)) < 0 ||
      attr_put_str(g, "dtype", mt_dtype_name(dt)) < 0 ||
      attr_put_i64s(g, "shape", shape_of->shape, shape_of->ndim) < 0) {
    st = wr_fail(w, name);
    goto out;
  }
  switch (t->kind) {
    case MT_KIND_MASKED:
      if ((st = write_tensor(w, g, "data", t->data)) != MT_OK) goto out;
      st = write_tensor(w, g, "mask", t->mask);
      break;
    case MT_KIND_DENSE:
      if (!mt_is_contiguous(t)) {
        if ((st = mt_tensor_clone(t, &c, w->err)) != MT_OK) goto out;
        t = c;
      }
      if (put_dataset(g, "values", dt, t->ndim, t->shape, t->values) < 0) st = wr_fail(w, name);
      break;
    case MT_KIND_SCALAR:
      if (put_dataset(g, "value", dt, 0, NULL, t->values) < 0) st = wr_fail(w, name);
      break;
    case MT_KIND_COO: {
      int64_t idims[2] = {t->sparse_dim, t->nnz}, vdims[MT_MAX_DIMS + 1];
      vdims[0] = t->nnz;
      for (int d = t->sparse_dim; d < t->ndim; d++) vdims[1 + d - t->sparse_dim] = t->shape[d];
      if (attr_put_bool_enum(g, "coalesced", t->coalesced) < 0 ||
          put_dataset(g, "indices", MT_int64, 2, idims, t->indices) < 0 ||
          put_dataset(g, "values", dt, 1 + t->ndim - t->sparse_dim, vdims, t->values) < 0)
        st = wr_fail(w, name);
      break;
    }
    case MT_KIND_CSR:
    case MT_KIND_CSC:
    case MT_KIND_BSR:
    case MT_KIND_BSC: {
      /* [batch..., n] index arrays, values [batch..., nnz, (bh, bw), dense...] */
      mt_cgeom cg;
      int64_t cdims[MT_MAX_DIMS], pdims[MT_MAX_DIMS], vdims[MT_MAX_DIMS + 1];
      if (!mt_cgeom_of(t, &cg)) {
        st = mt_err(w->err, MT_INVALID_ARGUMENT, "writing %s: %s: %s tensor of inconsistent "
                    "geometry", w->path, name, mt_kind_name(t->kind));
        break;
      }
      int nv = 0;
      for (int d = 0; d < cg.nb; d++) cdims[d] = pdims[d] = vdims[nv++] = t->shape[d];
      cdims[cg.nb] = cg.ncomp + 1;
      pdims[cg.nb] = vdims[nv++] = t->nnz;
      if (mt_kind_is_blocked(t->kind)) {
        vdims[nv++] = cg.bh;
        vdims[nv++] = cg.bw;
      }
      for (int d = cg.nb + 2; d < t->ndim; d++) vdims[nv++] = t->shape[d];
      int64_t dd = t->dense_dim;
      if ((dd && attr_put_i64(g, "dense_dim", dd) < 0) ||
          (mt_kind_is_blocked(t->kind) && attr_put_i64s(g, "blocksize", t->blocksize, 2) < 0) ||
          put_dataset(g, mt_compressed_name(t->kind), MT_int64, cg.nb + 1, cdims,
                      t->crow_indices) < 0 ||
          put_dataset(g, mt_plain_name(t->kind), MT_int64, cg.nb + 1, pdims, t->col_indices) < 0 ||
          put_dataset(g, "values", dt, nv, vdims, t->values) < 0)
        st = wr_fail(w, name);
      break;
    }
    default:
      st = mt_err(w->err, MT_INVALID_ARGUMENT, "writing %s: %s: unknown kind %d", w->path, name,
                  (int)t->kind);
  }
out:
  mt_tensor_free(c);
  H5Gclose(g);
  return st;
}

static mt_status write_list(const wr *w, hid_t cg, const char *name, int n,
                            const mt_tensor *const *v) {
  mt_status st = MT_OK;
  hid_t g = H5Gcreate2(cg, name, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  if (g < 0) return wr_fail(w, name);
  for (int k = 0; k < n && st == MT_OK; k++) {
    char nm[16];
    snprintf(nm, sizeof nm, "%d", k);
    st = write_tensor(w, g, nm, v[k]);
  }
  H5Gclose(g);
  return st;
}

static herr_t write_kwarg(hid_t g, const mt_kwarg *kw) {
  switch (kw->type) {
    case MT_KW_BOOL: return attr_put_bool_enum(g, kw->name, kw->i != 0);
    case MT_KW_INT: return attr_put_i64(g, kw->name, kw->i);
    case MT_KW_FLOAT: return attr_put_f64(g, kw->name, kw->f);
    case MT_KW_STR: return attr_put_str(g, kw->name, kw->s ? kw->s : "");
    case MT_KW_INTS: return attr_put_i64s(g, kw->name, kw->ints, kw->n);
    case MT_KW_FLOATS: return attr_put_f64s(g, kw->name, kw->floats, kw->n);
  }
  return -1;
}

/* A case's inputs: in[0..n-1] as inputs/ or, for a gradient case (format
 * 3), the forward inputs as inputs/, the rest as grad_outputs/ and the
 * attribute backward = 1. */
static mt_status write_inputs(const wr *w, hid_t g, const mt_golden_case *c, int n,
                              const mt_tensor *const *in) {
  mt_status st;
  int n_fwd = c->backward ? c->n_fwd_in : n;
  if (c->backward && (n_fwd > n || attr_put_i64(g, "backward", 1) < 0))
    return n_fwd > n ? mt_err(w->err, MT_INVALID_ARGUMENT, "writing %s: %d inputs, the "
                              "gradient case has %d", w->path, n, n_fwd)
                     : wr_fail(w, "backward");
  if ((st = write_list(w, g, "inputs", n_fwd, in)) != MT_OK || !c->backward) return st;
  return write_list(w, g, "grad_outputs", n - n_fwd, in + n_fwd);
}

/* grads/<k> for the non-NULL v[k] (a gradient case's, or a gradient
 * response's): only the inputs that get a gradient. */
static mt_status write_grads(const wr *w, hid_t cg, int n, const mt_tensor *const *v) {
  mt_status st = MT_OK;
  hid_t g = H5Gcreate2(cg, "grads", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  if (g < 0) return wr_fail(w, "grads");
  for (int k = 0; k < n && st == MT_OK; k++) {
    char nm[16];
    snprintf(nm, sizeof nm, "%d", k);
    if (v[k]) st = write_tensor(w, g, nm, v[k]);
  }
  H5Gclose(g);
  return st;
}

/* What a file holds: a whole case (repro), a request (the case without
 * outputs and expectation, with given inputs) or a response (outputs at the
 * root, no case). */
typedef enum { BODY_CASE, BODY_REQUEST, BODY_RESPONSE, BODY_GRADS } body_kind;

typedef struct body {
  body_kind kind;
  const mt_golden_meta *meta;     /* BODY_CASE; may be NULL */
  const mt_golden_case *c;        /* BODY_CASE, BODY_REQUEST */
  int n;                          /* BODY_REQUEST: inputs; BODY_RESPONSE: outputs */
  const mt_tensor *const *t;
} body;

static mt_status write_body(const wr *w, hid_t file, const body *b) {
  mt_status st = MT_OK;
  hid_t cases = -1, g = -1, kw = -1;
  const mt_golden_meta *meta = b->kind == BODY_CASE ? b->meta : NULL;
  const mt_golden_case *c = b->c;
  int whole = b->kind == BODY_CASE;
  if (b->kind == BODY_RESPONSE) return write_list(w, file, "outputs", b->n, b->t);
  if (b->kind == BODY_GRADS) return write_grads(w, file, b->n, b->t);
  if (attr_put_str(file, "format", MT_GOLDEN_FORMAT) < 0 ||
      attr_put_i64(file, "format_version", MT_GOLDEN_FORMAT_VERSION) < 0 ||
      (meta && (attr_put_str(file, "generator", meta->generator) < 0 ||
                attr_put_str(file, "generator_sha256", meta->generator_sha256) < 0 ||
                attr_put_str(file, "torch_version", meta->torch_version) < 0 ||
                attr_put_str(file, "numpy_version", meta->numpy_version) < 0 ||
                attr_put_str(file, "created_utc", meta->created_utc) < 0))) {
    st = wr_fail(w, "root attributes");
    goto out;
  }
  if ((cases = H5Gcreate2(file, "cases", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT)) < 0 ||
      (g = H5Gcreate2(cases, c->id, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT)) < 0) {
    st = wr_fail(w, c->id);
    goto out;
  }
  if (attr_put_str(g, "op", c->op_name) < 0 || attr_put_str(g, "profile", c->profile) < 0 ||
      attr_put_str(g, "rules", c->rules) < 0 ||
      attr_put_str(g, "tolerance", c->tolerance_str) < 0) {
    st = wr_fail(w, "case attributes");
    goto out;
  }
  if (!whole) { /* a request: the inputs and kwargs, nothing that tells the answer */
    if ((st = write_inputs(w, g, c, b->n, b->t)) != MT_OK) goto out;
    goto kwargs;
  }
  if (attr_put_str(g, "expect", c->expect_error ? "error" : "ok") < 0 ||
      attr_put_str(g, "error_class", c->error_class) < 0 ||
      attr_put_str(g, "torch_error", c->torch_error) < 0 ||
      attr_put_str(g, "torch_call", c->torch_call) < 0 || attr_put_str(g, "poison", c->poison) < 0 ||
      (c->check_masked_out && attr_put_i64(g, "check_masked_out", 1) < 0) ||
      (c->check_structure && attr_put_i64(g, "check_structure", 1) < 0)) {
    st = wr_fail(w, "case attributes");
    goto out;
  }
  char im[MT_GOLDEN_MAX_INPUTS * 8] = "";
  for (int k = 0; k < MT_GOLDEN_MAX_INPUTS; k++)
    if (c->input_mask_of[k] > 0)
      snprintf(im + strlen(im), sizeof im - strlen(im), "%s%d:%d", im[0] ? "," : "", k,
               c->input_mask_of[k] - 1);
  if (im[0] && attr_put_str(g, "input_masks", im) < 0) {
    st = wr_fail(w, "case attributes");
    goto out;
  }
  if ((st = write_inputs(w, g, c, c->n_in, (const mt_tensor *const *)c->in)) != MT_OK)
    goto out;
kwargs:
  if ((kw = H5Gcreate2(g, "kwargs", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT)) < 0) {
    st = wr_fail(w, "kwargs");
    goto out;
  }
  for (int k = 0; k < c->kw.n; k++)
    if (write_kwarg(kw, &c->kw.items[k]) < 0) {
      st = wr_fail(w, c->kw.items[k].name);
      goto out;
    }
  if (!whole) goto out;
  if (c->backward) {
    st = write_grads(w, g, c->n_out, (const mt_tensor *const *)c->out);
    goto out;
  }
  if ((st = write_list(w, g, "outputs", c->n_out, (const mt_tensor *const *)c->out)) != MT_OK)
    goto out;
  for (int k = 0; k < c->n_variants; k++) {
    char nm[256];
    snprintf(nm, sizeof nm, "outputs@%s", c->variants[k].label);
    if ((st = write_list(w, g, nm, c->variants[k].n_out,
                         (const mt_tensor *const *)c->variants[k].out)) != MT_OK)
      goto out;
  }
  for (int k = 0; k < c->n_error_variants; k++) {
    char nm[256];
    snprintf(nm, sizeof nm, "error@%s", c->error_variants[k].label);
    if (attr_put_str(g, nm, c->error_variants[k].error_class) < 0) {
      st = wr_fail(w, nm);
      goto out;
    }
  }
out:
  if (kw >= 0) H5Gclose(kw);
  if (g >= 0) H5Gclose(g);
  if (cases >= 0) H5Gclose(cases);
  return st;
}

static mt_status write_file(const char *path, const body *b, mt_error *err) {
  mt_status st = MT_OK;
  mt_error local;
  if (!err) err = &local;
  wr w = {path, err};
  hid_t fapl = -1, file = -1;
  size_t n = strlen(path);
  char *tmp = malloc(n + 16);
  if (!tmp) return mt_err(err, MT_OUT_OF_MEMORY, "writing %s: out of memory", path);
  snprintf(tmp, n + 16, "%s.tmp.XXXXXX", path);
  int fd = mkstemp(tmp);
  if (fd < 0) {
    st = mt_err(err, MT_IO_ERROR, "cannot create %s: %s", tmp, strerror(errno));
    free(tmp);
    return st;
  }
  close(fd);
  mt__h5_quiet();
  if ((fapl = H5Pcreate(H5P_FILE_ACCESS)) < 0 ||
      H5Pset_libver_bounds(fapl, H5F_LIBVER_V110, H5F_LIBVER_V110) < 0 ||
      (file = H5Fcreate(tmp, H5F_ACC_TRUNC, H5P_DEFAULT, fapl)) < 0) {
    st = wr_fail(&w, "cannot create the file");
    goto out;
  }
  st = write_body(&w, file, b);
  if (H5Fclose(file) < 0 && st == MT_OK) st = wr_fail(&w, "closing the file");
  file = -1;
  if (st == MT_OK) { /* mkstemp made it 0600; a golden file is an ordinary file */
    mode_t um = umask(0);
    umask(um);
    chmod(tmp, 0666 & ~um);
  }
  if (st == MT_OK && rename(tmp, path) != 0)
    st = mt_err(err, MT_IO_ERROR, "cannot rename %s to %s: %s", tmp, path, strerror(errno));
out:
  if (file >= 0) H5Fclose(file);
  if (fapl >= 0) H5Pclose(fapl);
  if (st != MT_OK) unlink(tmp);
  free(tmp);
  return st;
}

mt_status mt_golden_write_case(const char *path, const mt_golden_meta *meta,
                               const mt_golden_case *c, mt_error *err) {
  body b = {BODY_CASE, meta, c, 0, NULL};
  return write_file(path, &b, err);
}

mt_status mt_golden_write_request(const char *path, const mt_golden_case *c, int n_in,
                                  const mt_tensor *const *in, mt_error *err) {
  body b = {BODY_REQUEST, NULL, c, n_in, in};
  return write_file(path, &b, err);
}

mt_status mt_golden_write_outputs(const char *path, int n, const mt_tensor *const *out,
                                  mt_error *err) {
  body b = {BODY_RESPONSE, NULL, NULL, n, out};
  return write_file(path, &b, err);
}

mt_status mt_golden_write_grads(const char *path, int n, const mt_tensor *const *grads,
                                mt_error *err) {
  body b = {BODY_GRADS, NULL, NULL, n, grads};
  return write_file(path, &b, err);
}

/* test_golden_io.c - reading golden files (conformance/golden_io.c).
 *
 * The files are written here with the HDF5 C API in the styles a conforming
 * writer may use (h5py's variable-length UTF-8 strings and enum bools,
 * fixed-length strings, int32 format_version, uint8 bools, null or
 * zero-size dataspaces for an empty shape, float16 data), then read back.
 * Broken files (random bytes, a truncated copy, another format_version, a
 * missing dataset, an invalid COO input, a wrong element count) must each
 * give a clear status and message. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <hdf5.h>

#include "compare.h"
#include "golden_io.h"
#include "session.h"
#include "mt_core.h"
#include "mt_test.h"

/* ---- a scratch directory per test ---------------------------------------------- */

typedef struct scratch {
  char dir[512];
  char files[16][600];
  int n;
} scratch;

static const char *scratch_path(scratch *s, const char *name) {
  if (!s->dir[0]) {
    snprintf(s->dir, sizeof s->dir, "%s/test_golden_io.XXXXXX", MT_BINARY_DIR);
    if (!mkdtemp(s->dir)) {
      snprintf(s->dir, sizeof s->dir, "/tmp/test_golden_io.XXXXXX");
      if (!mkdtemp(s->dir)) abort();
    }
  }
  char path[sizeof s->files[0]];
  snprintf(path, sizeof path, "%s/%s", s->dir, name);
  memcpy(s->files[s->n], path, sizeof path);
  return s->files[s->n++];
}

/* MT_TEST_KEEP=1 keeps the files (to look at them with h5dump or mtcs). */
static void scratch_done(scratch *s) {
  if (getenv("MT_TEST_KEEP")) {
    fprintf(stderr, "  kept %s\n", s->dir);
    return;
  }
  for (int k = 0; k < s->n; k++) unlink(s->files[k]);
  if (s->dir[0]) rmdir(s->dir);
}

/* ---- HDF5 writing helpers ---------------------------------------------------------- */

static void a_put(hid_t o, const char *name, hid_t type, hid_t space, const void *v) {
  hid_t a = H5Acreate2(o, name, type, space, H5P_DEFAULT, H5P_DEFAULT);
  H5Awrite(a, type, v);
  H5Aclose(a);
}

static void a_vstr(hid_t o, const char *name, const char *v) { /* h5py style */
  hid_t t = H5Tcopy(H5T_C_S1), s = H5Screate(H5S_SCALAR);
  H5Tset_size(t, H5T_VARIABLE);
  H5Tset_cset(t, H5T_CSET_UTF8);
  a_put(o, name, t, s, &v);
  H5Tclose(t);
  H5Sclose(s);
}

static void a_fstr(hid_t o, const char *name, const char *v, H5T_str_t pad) { /* numpy 'S' */
  hid_t t = H5Tcopy(H5T_C_S1), s = H5Screate(H5S_SCALAR);
  size_t n = strlen(v) + 3; /* room for padding */
  char *buf = calloc(1, n);
  memcpy(buf, v, strlen(v));
  if (pad == H5T_STR_SPACEPAD) memset(buf + strlen(v), ' ', n - strlen(v));
  H5Tset_size(t, n);
  H5Tset_strpad(t, pad);
  a_put(o, name, t, s, buf);
  free(buf);
  H5Tclose(t);
  H5Sclose(s);
}

static void a_int(hid_t o, const char *name, hid_t type, int64_t v) {
  hid_t s = H5Screate(H5S_SCALAR), a = H5Acreate2(o, name, type, s, H5P_DEFAULT, H5P_DEFAULT);
  H5Awrite(a, H5T_NATIVE_INT64, &v);
  H5Aclose(a);
  H5Sclose(s);
}

static void a_f64(hid_t o, const char *name, double v) {
  hid_t s = H5Screate(H5S_SCALAR);
  a_put(o, name, H5T_IEEE_F64LE, s, &v);
  H5Sclose(s);
}

static hid_t enum_bool(void) { /* h5py's numpy bool: int8 enum FALSE/TRUE */
  hid_t t = H5Tenum_create(H5T_STD_I8LE);
  int8_t f = 0, tr = 1;
  H5Tenum_insert(t, "FALSE", &f);
  H5Tenum_insert(t, "TRUE", &tr);
  return t;
}

static void a_ebool(hid_t o, const char *name, int v) {
  hid_t t = enum_bool(), s = H5Screate(H5S_SCALAR);
  int8_t b = (int8_t)v;
  a_put(o, name, t, s, &b);
  H5Tclose(t);
  H5Sclose(s);
}

typedef enum { SHAPE_SIMPLE, SHAPE_NULL } shape_style;

static void a_ints(hid_t o, const char *name, const int64_t *v, int n, shape_style st) {
  hsize_t d[1] = {(hsize_t)n};
  hid_t s = st == SHAPE_NULL ? H5Screate(H5S_NULL) : H5Screate_simple(1, d, NULL);
  hid_t a = H5Acreate2(o, name, H5T_STD_I64LE, s, H5P_DEFAULT, H5P_DEFAULT);
  if (n) H5Awrite(a, H5T_NATIVE_INT64, v);
  H5Aclose(a);
  H5Sclose(s);
}

static void a_f64s(hid_t o, const char *name, const double *v, int n) {
  hsize_t d[1] = {(hsize_t)n};
  hid_t s = H5Screate_simple(1, d, NULL);
  hid_t a = H5Acreate2(o, name, H5T_IEEE_F64LE, s, H5P_DEFAULT, H5P_DEFAULT);
  if (n) H5Awrite(a, H5T_NATIVE_DOUBLE, v);
  H5Aclose(a);
  H5Sclose(s);
}

static void ds_put(hid_t g, const char *name, hid_t ftype, hid_t mtype, int rank,
                   const hsize_t *dims, const void *v) {
  hid_t s = rank ? H5Screate_simple(rank, dims, NULL) : H5Screate(H5S_SCALAR);
  hid_t d = H5Dcreate2(g, name, ftype, s, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  H5Dwrite(d, mtype, H5S_ALL, H5S_ALL, H5P_DEFAULT, v);
  H5Dclose(d);
  H5Sclose(s);
}

static hid_t grp(hid_t p, const char *name) {
  return H5Gcreate2(p, name, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
}

static void tensor_attrs(hid_t g, const char *kind, const char *dtype, const int64_t *shape,
                         int ndim, shape_style st) {
  a_vstr(g, "kind", kind);
  a_vstr(g, "dtype", dtype);
  a_ints(g, "shape", shape, ndim, st);
}

/* ---- the test file ------------------------------------------------------------------- */

typedef struct file_opts {
  int format_version;     /* 1 normally */
  int drop_values;        /* inputs/0/data/values missing */
  int coo_bad_index;      /* the COO input of case 2 has column 9 of 4 */
  int short_values;       /* case 2 output 0 has 11 elements for [3, 4] */
  const char *tolerance;  /* case 1 tolerance */
  int bad_bool;           /* a mask element of 2: 1 at element 4, 2 at element 0 */
  int absurd_shape;       /* case 2 output 0 shape [2^40, 2^40] */
  int kwargs_dataset;     /* case 1's (optional) kwargs a dataset, not a group */
  int drop_mask;          /* case 1's masked input has no mask group */
  int nested_masked;      /* case 1's masked input's data (1) or mask (2) is itself masked */
  int no_kind;            /* case 1's masked input's data has no kind attribute */
} file_opts;

static const file_opts DEFAULT_OPTS = {1, 0, 0, 0, "ulp:2", 0, 0, 0, 0, 0, 0};

/* Case "neg.masked.f32.basic": input 0 masked [2, 3] (data float32, mask
 * uint8 bool), no kwargs, output 0 masked, a variant outputs@torch-2.1.
 * Case "sum.coo.f16.edge": input 0 COO float64 [3, 4] (2 entries), input 1
 * a 0-d dense float64 with a null-dataspace shape, input 2 a scalar int64;
 * output 0 dense float16 [3, 4] (int32 expect, enum bool mask elsewhere);
 * expects error? no: ok. Case "future_op.scalar.f64.kwargs": an op not in
 * ops.def with kwargs of every type. Case "add.err": expect error. */
static void write_file(const char *path, const file_opts *o) {
  hid_t f = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  a_fstr(f, "format", "mtcs-golden", H5T_STR_NULLPAD);       /* fixed-length */
  a_int(f, "format_version", H5T_STD_I32LE, o->format_version); /* int32 */
  a_vstr(f, "generator", "test_golden_io.c");
  a_fstr(f, "torch_version", "2.5.1", H5T_STR_SPACEPAD);
  a_vstr(f, "generator_sha256", "abc123");
  hid_t cases = grp(f, "cases");

  /* ---- case 1 ---- */
  hid_t c = grp(cases, "neg.masked.f32.basic");
  a_vstr(c, "op", "neg");
  a_fstr(c, "rules", "MASK-4", H5T_STR_NULLTERM);
  a_vstr(c, "tolerance", o->tolerance);
  a_vstr(c, "expect", "ok");
  a_vstr(c, "torch_call", "torch.neg(m)");
  a_int(c, "check_masked_out", H5T_STD_U8LE, 1); /* bool as uint8 */
  int64_t s23[2] = {2, 3};
  hsize_t d23[2] = {2, 3};
  float data[6] = {1, -2, 3, 4, 5, 6}, neg[6] = {-1, 2, -3, -4, -5, -6};
  uint8_t mask[6] = {1, 0, 1, 1, 0, 1};
  if (o->bad_bool) mask[o->bad_bool == 2 ? 0 : 4] = 2;
  hid_t in = grp(c, "inputs"), t = grp(in, "0");
  tensor_attrs(t, "masked", "float32", s23, 2, SHAPE_SIMPLE);
  hid_t dg = grp(t, "data"), mg = grp(t, o->drop_mask ? "not_the_mask" : "mask");
  /* nested_masked: data (1) or mask (2) a masked tensor of dense data and mask */
  for (int part = 1; part <= 2; part++) {
    hid_t pg = part == 1 ? dg : mg;
    const char *dt = part == 1 ? "float32" : "bool";
    if (o->nested_masked == part) {
      tensor_attrs(pg, "masked", dt, s23, 2, SHAPE_SIMPLE);
      hid_t ndg = grp(pg, "data"), nmg = grp(pg, "mask");
      tensor_attrs(ndg, "dense", dt, s23, 2, SHAPE_SIMPLE);
      if (part == 1) ds_put(ndg, "values", H5T_IEEE_F32LE, H5T_NATIVE_FLOAT, 2, d23, data);
      else ds_put(ndg, "values", H5T_STD_U8LE, H5T_NATIVE_UINT8, 2, d23, mask);
      tensor_attrs(nmg, "dense", "bool", s23, 2, SHAPE_SIMPLE);
      ds_put(nmg, "values", H5T_STD_U8LE, H5T_NATIVE_UINT8, 2, d23, mask);
      H5Gclose(ndg), H5Gclose(nmg);
    } else if (part == 1) {
      if (o->no_kind) { /* tensor_attrs without its "kind" */
        a_vstr(dg, "dtype", "float32");
        a_ints(dg, "shape", s23, 2, SHAPE_SIMPLE);
      } else {
        tensor_attrs(dg, "dense", "float32", s23, 2, SHAPE_SIMPLE);
      }
      if (!o->drop_values) ds_put(dg, "values", H5T_IEEE_F32LE, H5T_NATIVE_FLOAT, 2, d23, data);
    } else {
      tensor_attrs(mg, "dense", "bool", s23, 2, SHAPE_SIMPLE);
      ds_put(mg, "values", H5T_STD_U8LE, H5T_NATIVE_UINT8, 2, d23, mask);
    }
  }
  H5Gclose(dg), H5Gclose(mg), H5Gclose(t), H5Gclose(in);
  if (o->kwargs_dataset) {
    hsize_t d1[1] = {1};
    uint8_t one = 1;
    ds_put(c, "kwargs", H5T_STD_U8LE, H5T_NATIVE_UINT8, 1, d1, &one);
  } else {
    H5Gclose(grp(c, "kwargs")); /* neg takes none */
  }
  for (int v = 0; v < 2; v++) {
    hid_t out = grp(c, v ? "outputs@torch-2.1" : "outputs"), ot = grp(out, "0");
    tensor_attrs(ot, "masked", "float32", s23, 2, SHAPE_SIMPLE);
    hid_t od = grp(ot, "data"), om = grp(ot, "mask");
    tensor_attrs(od, "dense", "float32", s23, 2, SHAPE_SIMPLE);
    ds_put(od, "values", H5T_IEEE_F32LE, H5T_NATIVE_FLOAT, 2, d23, v ? data : neg);
    tensor_attrs(om, "dense", "bool", s23, 2, SHAPE_SIMPLE);
    hid_t eb = enum_bool(); /* h5py style bool dataset */
    int8_t m8[6];
    for (int k = 0; k < 6; k++) m8[k] = (int8_t)(mask[k] ? 1 : 0);
    ds_put(om, "values", eb, eb, 2, d23, m8);
    H5Tclose(eb);
    H5Gclose(od), H5Gclose(om), H5Gclose(ot), H5Gclose(out);
  }
  H5Gclose(c);

  /* ---- case 2 ---- */
  c = grp(cases, "sum.coo.f16.edge");
  a_fstr(c, "op", "sum", H5T_STR_SPACEPAD);
  a_vstr(c, "tolerance", "exact");
  in = grp(c, "inputs");
  t = grp(in, "0");
  int64_t s34[2] = {3, 4};
  tensor_attrs(t, "coo", "float64", s34, 2, SHAPE_SIMPLE);
  a_ebool(t, "coalesced", 1);
  int64_t idx[4] = {0, 2, 1, o->coo_bad_index ? 9 : 3}; /* (0,1) (2,3) */
  hsize_t di[2] = {2, 2}, dv[1] = {2};
  double vals[2] = {1.5, -2.5};
  ds_put(t, "indices", H5T_STD_I64LE, H5T_NATIVE_INT64, 2, di, idx);
  ds_put(t, "values", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, 1, dv, vals);
  H5Gclose(t);
  t = grp(in, "1"); /* 0-d dense, shape attribute with a null dataspace */
  tensor_attrs(t, "dense", "float64", NULL, 0, SHAPE_NULL);
  double zd = 7.25;
  ds_put(t, "values", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, 0, NULL, &zd);
  H5Gclose(t);
  t = grp(in, "2"); /* a Python int, zero-size simple shape */
  tensor_attrs(t, "scalar", "int64", NULL, 0, SHAPE_SIMPLE);
  int64_t sv = -3;
  ds_put(t, "value", H5T_STD_I32LE, H5T_NATIVE_INT64, 0, NULL, &sv); /* stored narrower */
  H5Gclose(t);
  H5Gclose(in);
  hid_t out = grp(c, "outputs"), ot = grp(out, "0");
  int64_t absurd[2] = {(int64_t)1 << 40, (int64_t)1 << 40};
  tensor_attrs(ot, "dense", "float16", o->absurd_shape ? absurd : s34, 2, SHAPE_SIMPLE);
  float h[12];
  for (int k = 0; k < 12; k++) h[k] = 0.5f * (float)k - 1.0f; /* -1, -0.5, 0, ..., 4.5 */
  hsize_t d12[1] = {o->short_values ? 11 : 12};
  hid_t half = H5Tcopy(H5T_IEEE_F32LE); /* IEEE binary16, as h5py writes float16 */
  H5Tset_fields(half, 15, 10, 5, 0, 10);
  H5Tset_size(half, 2);
  H5Tset_ebias(half, 15);
  ds_put(ot, "values", half, H5T_NATIVE_FLOAT, 1, d12, h); /* flat [12]: count is what counts */
  H5Tclose(half);
  H5Gclose(ot), H5Gclose(out), H5Gclose(c);

  /* ---- case 4: an op this mtcs does not know, kwargs of every type (a
   * future op's kwargs are read as they are: only known ops are checked) ---- */
  c = grp(cases, "future_op.scalar.f64.kwargs");
  a_vstr(c, "op", "future_op");
  for (int v = 0; v < 2; v++) {
    hid_t l = grp(c, v ? "outputs" : "inputs");
    t = grp(l, "0");
    tensor_attrs(t, "scalar", "float64", NULL, 0, SHAPE_NULL);
    ds_put(t, "value", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, 0, NULL, &zd);
    H5Gclose(t), H5Gclose(l);
  }
  hid_t kw = grp(c, "kwargs");
  a_ebool(kw, "keepdim", 1);                 /* -> BOOL */
  a_int(kw, "dim", H5T_STD_I32BE, -1);       /* big-endian int32 -> INT */
  a_f64(kw, "alpha", 2.5);                   /* -> FLOAT */
  a_vstr(kw, "mode", "mean");                /* -> STR */
  int64_t dims[2] = {0, 1};
  a_ints(kw, "dims", dims, 2, SHAPE_SIMPLE); /* -> INTS */
  a_int(kw, "flag", H5T_STD_U8LE, 0);        /* uint8 0/1 -> BOOL */
  const double betas[2] = {0.9, 0.999};
  a_f64s(kw, "betas", betas, 2);             /* -> FLOATS */
  H5Gclose(kw), H5Gclose(c);

  /* ---- case 3 ---- */
  c = grp(cases, "add.err");
  a_vstr(c, "op", "add");
  a_vstr(c, "expect", "error");
  a_vstr(c, "error_class", "MASK_MISMATCH");
  a_vstr(c, "torch_error", "ValueError: masks must match");
  in = grp(c, "inputs");
  t = grp(in, "0");
  tensor_attrs(t, "scalar", "bool", NULL, 0, SHAPE_NULL);
  uint8_t tr = 1;
  ds_put(t, "value", H5T_STD_U8LE, H5T_NATIVE_UINT8, 0, NULL, &tr);
  H5Gclose(t), H5Gclose(in), H5Gclose(c);

  H5Gclose(cases);
  H5Fclose(f);
}

static mt_golden_case *find_case(mt_golden_file *f, const char *id) {
  for (int k = 0; k < f->n_cases; k++)
    if (!strcmp(f->cases[k].id, id)) return &f->cases[k];
  return NULL;
}

/* ---- reading ------------------------------------------------------------------------ */

TEST(reads_root_and_case_attributes_in_every_string_and_int_style) {
  scratch s = {0};
  const char *p = scratch_path(&s, "good.h5");
  write_file(p, &DEFAULT_OPTS);
  mt_golden_file *f = NULL;
  mt_error err = {0};
  CHECK_STATUS(mt_golden_open(p, &f, &err), MT_OK);
  if (!f) {
    fprintf(stderr, "  %s\n", err.msg);
    *mt__failed = 1;
    scratch_done(&s);
    return;
  }
  CHECK(!strcmp(f->meta.format, "mtcs-golden")); /* fixed-length, NULLPAD */
  CHECK_EQ_INT(f->meta.format_version, 1);       /* int32 */
  CHECK(!strcmp(f->meta.torch_version, "2.5.1")); /* SPACEPAD trimmed */
  CHECK(!strcmp(f->meta.generator_sha256, "abc123"));
  CHECK(f->meta.numpy_version == NULL);
  CHECK_EQ_INT(f->n_cases, 4);
  CHECK(!strcmp(f->cases[0].id, "add.err")); /* name order */
  mt_golden_case *c = find_case(f, "neg.masked.f32.basic");
  CHECK(c && c->op == MT_OP_neg && !strcmp(c->rules, "MASK-4"));
  CHECK(c && c->tolerance.kind == MT_TOL_ULP && c->tolerance.x == 2);
  CHECK(c && c->check_masked_out == 1 && !c->expect_error);
  CHECK(c && !strcmp(c->profile, "torch")); /* default */
  c = find_case(f, "sum.coo.f16.edge");
  CHECK(c && c->op == MT_OP_sum && !strcmp(c->rules, "") && c->tolerance.kind == MT_TOL_EXACT);
  c = find_case(f, "add.err");
  CHECK(c && c->expect_error && !strcmp(c->error_class, "MASK_MISMATCH"));
  CHECK(c && !strcmp(c->torch_error, "ValueError: masks must match"));
  mt_golden_close(f);
  scratch_done(&s);
}

TEST(loads_masked_tensors_kwargs_and_output_variants) {
  scratch s = {0};
  const char *p = scratch_path(&s, "good.h5");
  write_file(p, &DEFAULT_OPTS);
  mt_golden_file *f = NULL;
  mt_error err = {0};
  CHECK_STATUS(mt_golden_open(p, &f, &err), MT_OK);
  mt_golden_case *c = f ? find_case(f, "neg.masked.f32.basic") : NULL;
  CHECK(c != NULL);
  if (!c) goto out;
  CHECK_STATUS(mt_golden_load(f, c, &err), MT_OK);
  if (!c->loaded) {
    fprintf(stderr, "  %s\n", err.msg);
    goto out;
  }
  CHECK_EQ_INT(c->n_in, 1);
  const mt_tensor *m = c->in[0];
  CHECK(m->kind == MT_KIND_MASKED && m->data->dtype == MT_float32 && m->mask->dtype == MT_bool);
  CHECK(m->data->ndim == 2 && m->data->shape[0] == 2 && m->data->shape[1] == 3);
  CHECK(((float *)m->data->values)[1] == -2.0f && ((float *)m->data->values)[5] == 6.0f);
  CHECK(((uint8_t *)m->mask->values)[1] == 0 && ((uint8_t *)m->mask->values)[2] == 1);
  CHECK_EQ_INT(c->kw.n, 0);
  mt_golden_case *fc = find_case(f, "future_op.scalar.f64.kwargs");
  CHECK(fc && fc->op == MT_OP__NONE);
  if (!fc || mt_golden_load(f, fc, &err) != MT_OK) {
    fprintf(stderr, "  %s\n", err.msg);
    *mt__failed = 1;
    goto out;
  }
  /* kwargs, in name order: alpha betas dim dims flag keepdim mode */
  CHECK_EQ_INT(fc->kw.n, 7);
  const mt_kwarg *k;
  CHECK((k = mt_kw_find(&fc->kw, "keepdim")) && k->type == MT_KW_BOOL && k->i == 1 && k->f == 1);
  CHECK((k = mt_kw_find(&fc->kw, "dim")) && k->type == MT_KW_INT && k->i == -1 && k->f == -1);
  CHECK((k = mt_kw_find(&fc->kw, "alpha")) && k->type == MT_KW_FLOAT && k->f == 2.5);
  CHECK((k = mt_kw_find(&fc->kw, "mode")) && k->type == MT_KW_STR && !strcmp(k->s, "mean"));
  CHECK((k = mt_kw_find(&fc->kw, "dims")) && k->type == MT_KW_INTS && k->n == 2 &&
        k->ints[0] == 0 && k->ints[1] == 1);
  CHECK((k = mt_kw_find(&fc->kw, "flag")) && k->type == MT_KW_BOOL && k->i == 0);
  CHECK((k = mt_kw_find(&fc->kw, "betas")) && k->type == MT_KW_FLOATS && k->n == 2 &&
        k->floats[0] == 0.9 && k->floats[1] == 0.999);
  CHECK_EQ_INT(c->n_out, 1);
  CHECK(((float *)c->out[0]->data->values)[0] == -1.0f);
  CHECK(((uint8_t *)c->out[0]->mask->values)[4] == 0); /* enum bool FALSE */
  CHECK(((uint8_t *)c->out[0]->mask->values)[5] == 1); /* enum bool TRUE */
  CHECK_EQ_INT(c->n_variants, 1);
  CHECK(c->n_variants == 1 && !strcmp(c->variants[0].label, "torch-2.1") &&
        c->variants[0].n_out == 1 && ((float *)c->variants[0].out[0]->data->values)[0] == 1.0f);
  mt_golden_unload(c);
  CHECK(!c->loaded && c->n_in == 0 && c->kw.n == 0);
out:
  mt_golden_close(f);
  scratch_done(&s);
}

TEST(loads_coo_zero_dim_scalar_and_float16_as_half_bits) {
  scratch s = {0};
  const char *p = scratch_path(&s, "good.h5");
  write_file(p, &DEFAULT_OPTS);
  mt_golden_file *f = NULL;
  mt_error err = {0};
  CHECK_STATUS(mt_golden_open(p, &f, &err), MT_OK);
  mt_golden_case *c = f ? find_case(f, "sum.coo.f16.edge") : NULL;
  if (!c || mt_golden_load(f, c, &err) != MT_OK) {
    fprintf(stderr, "  %s\n", err.msg);
    *mt__failed = 1;
    goto out;
  }
  CHECK_EQ_INT(c->n_in, 3);
  const mt_tensor *coo = c->in[0];
  CHECK(coo->kind == MT_KIND_COO && coo->sparse_dim == 2 && coo->nnz == 2 && coo->coalesced == 1);
  CHECK(coo->indices[0] == 0 && coo->indices[1] == 2 && coo->indices[2] == 1 &&
        coo->indices[3] == 3);
  CHECK(((double *)coo->values)[1] == -2.5);
  const mt_tensor *z = c->in[1]; /* null dataspace shape -> 0-d */
  CHECK(z->kind == MT_KIND_DENSE && z->ndim == 0 && ((double *)z->values)[0] == 7.25);
  const mt_tensor *sc = c->in[2];
  CHECK(sc->kind == MT_KIND_SCALAR && sc->dtype == MT_int64 && *(int64_t *)sc->values == -3);
  const mt_tensor *h = c->out[0];
  CHECK(h->kind == MT_KIND_DENSE && h->dtype == MT_float16 && h->ndim == 2);
  const uint16_t *bits = h->values;
  CHECK_EQ_INT(bits[0], 0xbc00);  /* -1.0 */
  CHECK_EQ_INT(bits[1], 0xb800);  /* -0.5 */
  CHECK_EQ_INT(bits[2], 0x0000);  /* 0.0 */
  CHECK_EQ_INT(bits[4], 0x3c00);  /* 1.0 */
  CHECK_EQ_INT(bits[11], 0x4480); /* 4.5 = 1.125 * 2^2: exp 17 -> 0x4400, mantissa 0x080 */
  c = find_case(f, "add.err");
  CHECK_STATUS(mt_golden_load(f, c, &err), MT_OK); /* an error case needs no outputs */
  CHECK(c->n_out == 0 && c->in[0]->dtype == MT_bool && *(uint8_t *)c->in[0]->values == 1);
out:
  mt_golden_close(f);
  scratch_done(&s);
}

/* ---- broken files --------------------------------------------------------------------- */

static mt_status open_and_load_all(const char *path, mt_error *err) {
  mt_golden_file *f = NULL;
  mt_status st = mt_golden_open(path, &f, err);
  for (int k = 0; st == MT_OK && k < f->n_cases; k++) st = mt_golden_load(f, &f->cases[k], err);
  mt_golden_close(f);
  return st;
}

TEST(random_bytes_are_not_an_hdf5_file) {
  scratch s = {0};
  const char *p = scratch_path(&s, "random.h5");
  FILE *fp = fopen(p, "wb");
  uint32_t x = 12345;
  for (int k = 0; k < 4096; k++) {
    x = x * 1664525u + 1013904223u; /* LCG */
    fputc((int)(x >> 24), fp);
  }
  fclose(fp);
  mt_error err = {0};
  CHECK_STATUS(open_and_load_all(p, &err), MT_INVALID_FORMAT);
  CHECK_HAS(err.msg, p);
  CHECK_HAS(err.msg, "not an HDF5 file");
  scratch_done(&s);
}

TEST(truncated_file_is_a_clear_error) {
  scratch s = {0};
  const char *p = scratch_path(&s, "good.h5"), *q = scratch_path(&s, "truncated.h5");
  write_file(p, &DEFAULT_OPTS);
  FILE *in = fopen(p, "rb"), *out = fopen(q, "wb");
  fseek(in, 0, SEEK_END);
  long n = ftell(in);
  fseek(in, 0, SEEK_SET);
  for (long k = 0; k < n / 2; k++) fputc(fgetc(in), out);
  fclose(in);
  fclose(out);
  mt_error err = {0};
  mt_status st = open_and_load_all(q, &err);
  CHECK(st == MT_INVALID_FORMAT || st == MT_IO_ERROR);
  CHECK_HAS(err.msg, q);
  scratch_done(&s);
}

TEST(missing_and_unreadable_files_name_the_path) {
  mt_error err = {0};
  mt_golden_file *f = NULL;
  CHECK_STATUS(mt_golden_open("/nonexistent/golden/x.h5", &f, &err), MT_IO_ERROR);
  CHECK_HAS(err.msg, "/nonexistent/golden/x.h5");
  CHECK_HAS(err.msg, "No such file");
  CHECK(f == NULL);
  CHECK_STATUS(mt_golden_open("/", &f, &err), MT_IO_ERROR);
  CHECK_HAS(err.msg, "is a directory");
}

TEST(other_format_version_is_refused_with_both_versions) {
  scratch s = {0};
  const char *p = scratch_path(&s, "v4.h5");
  file_opts o = DEFAULT_OPTS;
  o.format_version = 4; /* a version after ours */
  write_file(p, &o);
  mt_error err = {0};
  CHECK_STATUS(open_and_load_all(p, &err), MT_INVALID_FORMAT);
  CHECK_HAS(err.msg, "unsupported format_version 4 (this mtcs reads 1 to 3)");
  CHECK_HAS(err.msg, p);
  o.format_version = 0; /* and one before the first */
  write_file(p, &o);
  CHECK_STATUS(open_and_load_all(p, &err), MT_INVALID_FORMAT);
  CHECK_HAS(err.msg, "unsupported format_version 0 (this mtcs reads 1 to 3)");
  o.format_version = 3; /* ours, and 1 (the default) is read too */
  write_file(p, &o);
  CHECK_STATUS(open_and_load_all(p, &err), MT_OK);
  scratch_done(&s);
}

TEST(hdf5_file_that_is_not_a_golden_file) {
  scratch s = {0};
  const char *p = scratch_path(&s, "other.h5");
  hid_t f = H5Fcreate(p, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  H5Fclose(f);
  mt_error err = {0};
  CHECK_STATUS(open_and_load_all(p, &err), MT_INVALID_FORMAT);
  CHECK_HAS(err.msg, "not an mtcs golden file");
  scratch_done(&s);
}

TEST(missing_values_dataset_names_case_and_path) {
  scratch s = {0};
  const char *p = scratch_path(&s, "novalues.h5");
  file_opts o = DEFAULT_OPTS;
  o.drop_values = 1;
  write_file(p, &o);
  mt_error err = {0};
  CHECK_STATUS(open_and_load_all(p, &err), MT_INVALID_FORMAT);
  CHECK_HAS(err.msg, "case neg.masked.f32.basic");
  CHECK_HAS(err.msg, "inputs/0/data/values: missing dataset");
  scratch_done(&s);
}

/* An optional object of the wrong kind is an error, not an absent object:
 * a case whose kwargs group is a dataset would otherwise run without its
 * kwargs. */
TEST(optional_group_that_is_a_dataset_names_case_and_path) {
  scratch s = {0};
  const char *p = scratch_path(&s, "kwargsds.h5");
  file_opts o = DEFAULT_OPTS;
  o.kwargs_dataset = 1;
  write_file(p, &o);
  mt_error err = {0};
  CHECK_STATUS(open_and_load_all(p, &err), MT_INVALID_FORMAT);
  CHECK_HAS(err.msg, "case neg.masked.f32.basic");
  CHECK_HAS(err.msg, "kwargs: is not a group");
  scratch_done(&s);
}

/* A masked tensor's mask group is required, every tensor group names its
 * kind, and neither the data nor the mask of a masked tensor may be a
 * masked tensor itself. */
TEST(masked_tensor_without_mask_or_kind_or_nested_is_refused) {
  scratch s = {0};
  const char *p = scratch_path(&s, "masked_bad.h5");
  file_opts o = DEFAULT_OPTS;
  o.drop_mask = 1;
  write_file(p, &o);
  mt_error err = {0};
  CHECK_STATUS(open_and_load_all(p, &err), MT_INVALID_FORMAT);
  CHECK_HAS(err.msg, "case neg.masked.f32.basic");
  CHECK_HAS(err.msg, "inputs/0/mask: missing group");
  o = DEFAULT_OPTS;
  o.nested_masked = 1;
  write_file(p, &o);
  CHECK_STATUS(open_and_load_all(p, &err), MT_INVALID_FORMAT);
  CHECK_HAS(err.msg, "inputs/0/data: a masked tensor inside a masked tensor");
  o.nested_masked = 2; /* the mask likewise */
  write_file(p, &o);
  CHECK_STATUS(open_and_load_all(p, &err), MT_INVALID_FORMAT);
  CHECK_HAS(err.msg, "inputs/0/mask: a masked tensor inside a masked tensor");
  o = DEFAULT_OPTS; /* every tensor names its kind */
  o.no_kind = 1;
  write_file(p, &o);
  CHECK_STATUS(open_and_load_all(p, &err), MT_INVALID_FORMAT);
  CHECK_HAS(err.msg, "inputs/0/data");
  CHECK_HAS(err.msg, "kind");
  scratch_done(&s);
}

TEST(invalid_coo_input_is_an_error_naming_the_case) {
  scratch s = {0};
  const char *p = scratch_path(&s, "badcoo.h5");
  file_opts o = DEFAULT_OPTS;
  o.coo_bad_index = 1;
  write_file(p, &o);
  mt_error err = {0};
  mt_status st = open_and_load_all(p, &err);
  CHECK(st != MT_OK);
  CHECK_HAS(err.msg, p);
  CHECK_HAS(err.msg, "case sum.coo.f16.edge");
  CHECK_HAS(err.msg, "inputs/0");
  scratch_done(&s);
}

TEST(element_count_mismatch_names_dataset_count_and_shape) {
  scratch s = {0};
  const char *p = scratch_path(&s, "short.h5");
  file_opts o = DEFAULT_OPTS;
  o.short_values = 1;
  write_file(p, &o);
  mt_error err = {0};
  CHECK_STATUS(open_and_load_all(p, &err), MT_INVALID_FORMAT);
  CHECK_HAS(err.msg, "case sum.coo.f16.edge: outputs/0/values: dataset has 11 elements, "
                     "shape [3, 4] needs 12");
  scratch_done(&s);
}

TEST(absurd_shape_is_refused_before_allocating) {
  scratch s = {0};
  const char *p = scratch_path(&s, "absurd.h5");
  file_opts o = DEFAULT_OPTS;
  o.absurd_shape = 1;
  write_file(p, &o);
  mt_error err = {0};
  CHECK_STATUS(open_and_load_all(p, &err), MT_INVALID_FORMAT);
  CHECK_HAS(err.msg, "outputs/0");
  CHECK_HAS(err.msg, "absurd size");
  scratch_done(&s);
}

TEST(unknown_tolerance_is_an_input_error_naming_the_case) {
  scratch s = {0};
  const char *p = scratch_path(&s, "tol.h5");
  file_opts o = DEFAULT_OPTS;
  o.tolerance = "fuzzy";
  write_file(p, &o);
  mt_error err = {0};
  CHECK_STATUS(open_and_load_all(p, &err), MT_INVALID_FORMAT);
  CHECK_HAS(err.msg, "case neg.masked.f32.basic");
  CHECK_HAS(err.msg, "unknown tolerance 'fuzzy'");
  scratch_done(&s);
}

TEST(bool_element_other_than_0_or_1_is_refused) {
  scratch s = {0};
  const char *p = scratch_path(&s, "bool2.h5");
  file_opts o = DEFAULT_OPTS;
  o.bad_bool = 1;
  write_file(p, &o);
  mt_error err = {0};
  CHECK_STATUS(open_and_load_all(p, &err), MT_INVALID_FORMAT);
  CHECK_HAS(err.msg, "inputs/0/mask/values: element 4 = 2 is not a bool");
  o.bad_bool = 2; /* the first element: every one is checked */
  write_file(p, &o);
  CHECK_STATUS(open_and_load_all(p, &err), MT_INVALID_FORMAT);
  CHECK_HAS(err.msg, "inputs/0/mask/values: element 0 = 2 is not a bool");
  scratch_done(&s);
}

/* ---- bfloat16: stored widened to float32 ------------------------------------------------ */

/* A one-case file "neg.dense.bf16.x" of op neg: input 0 and output 0 dense
 * bfloat16 [4] stored as float32 (golden-format.md, "Dtype rules"); with
 * bad == 1, input 0's element 1 is 1 + 2^-10 (float32 0x3f802000), which is
 * not a bfloat16 (8 significant bits: the nearest ones are 1 and 1 + 2^-7);
 * with bad == 2, input 0 is a float64 dataset whose element 1 is 1 + 2^-30,
 * not even a float32 (HDF5 would round it to 1.0 if read as float). */
static void write_bf16(const char *path, int bad) {
  hid_t f = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  a_vstr(f, "format", "mtcs-golden");
  a_int(f, "format_version", H5T_STD_I64LE, 1);
  hid_t cases = grp(f, "cases"), c = grp(cases, "neg.dense.bf16.x");
  a_vstr(c, "op", "neg");
  a_vstr(c, "expect", "ok");
  a_vstr(c, "tolerance", "exact");
  /* 1.0 = 0x3f800000, -2.5 = -1.25 * 2^1 = 0xc0200000, 2^-7 = 0x3c000000,
   * the largest finite bfloat16 (2 - 2^-7) 2^127 = 0x7f7f0000 */
  float in[4] = {1.0f, -2.5f, 0x1p-7f, 0x1.fep127f}, out[4];
  if (bad == 1) in[1] = 1.0f + 0x1p-10f;
  double in64[4] = {1.0, 1.0 + 0x1p-30, 0x1p-7, 0x1.fep127};
  for (int k = 0; k < 4; k++) out[k] = -in[k];
  int64_t s4[1] = {4};
  hsize_t d4[1] = {4};
  for (int v = 0; v < 2; v++) {
    hid_t l = grp(c, v ? "outputs" : "inputs"), t = grp(l, "0");
    tensor_attrs(t, "dense", "bfloat16", s4, 1, SHAPE_SIMPLE);
    if (bad == 2 && !v)
      ds_put(t, "values", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, 1, d4, in64);
    else
      ds_put(t, "values", H5T_IEEE_F32LE, H5T_NATIVE_FLOAT, 1, d4, v ? out : in);
    H5Gclose(t), H5Gclose(l);
  }
  H5Gclose(grp(c, "kwargs"));
  H5Gclose(c), H5Gclose(cases);
  H5Fclose(f);
}

TEST(bfloat16_dataset_is_float32_read_as_upper_bits_and_written_back_widened) {
  scratch s = {0};
  const char *p = scratch_path(&s, "bf16.h5"), *q = scratch_path(&s, "bf16_one.h5");
  write_bf16(p, 0);
  mt_golden_file *f = NULL, *g = NULL;
  mt_error err = {0};
  CHECK_STATUS(mt_golden_open(p, &f, &err), MT_OK);
  if (!f || mt_golden_load(f, &f->cases[0], &err) != MT_OK) {
    fprintf(stderr, "  %s\n", err.msg);
    *mt__failed = 1;
    goto out;
  }
  const mt_tensor *x = f->cases[0].in[0];
  CHECK(x->kind == MT_KIND_DENSE && x->dtype == MT_bfloat16 && mt_dtype_size(x->dtype) == 2);
  const uint16_t *b = x->values; /* the upper 16 bits of the float32 patterns above */
  CHECK_EQ_INT(b[0], 0x3f80);
  CHECK_EQ_INT(b[1], 0xc020);
  CHECK_EQ_INT(b[2], 0x3c00);
  CHECK_EQ_INT(b[3], 0x7f7f);
  CHECK_EQ_INT(((const uint16_t *)f->cases[0].out[0]->values)[3], 0xff7f); /* -max */
  /* the writer widens back to float32: the copy reads back bit for bit */
  CHECK_STATUS(mt_golden_write_case(q, &f->meta, &f->cases[0], &err), MT_OK);
  CHECK_STATUS(mt_golden_open(q, &g, &err), MT_OK);
  if (!g) goto out;
  CHECK_STATUS(mt_golden_load(g, &g->cases[0], &err), MT_OK);
  CHECK(g->cases[0].in[0]->dtype == MT_bfloat16 &&
        memcmp(g->cases[0].in[0]->values, b, 4 * sizeof *b) == 0);
  hid_t h = H5Fopen(q, H5F_ACC_RDONLY, H5P_DEFAULT);
  hid_t d = H5Dopen2(h, "/cases/neg.dense.bf16.x/inputs/0/values", H5P_DEFAULT);
  hid_t t = H5Dget_type(d);
  CHECK(H5Tget_class(t) == H5T_FLOAT && H5Tget_size(t) == 4); /* float32 in the file */
  H5Tclose(t), H5Dclose(d), H5Fclose(h);
out:
  mt_golden_close(g);
  mt_golden_close(f);
  scratch_done(&s);
}

TEST(bfloat16_dataset_value_that_is_not_a_bfloat16_is_refused_naming_case_and_element) {
  scratch s = {0};
  const char *p = scratch_path(&s, "bf16_bad.h5");
  write_bf16(p, 1);
  mt_error err = {0};
  CHECK_STATUS(open_and_load_all(p, &err), MT_INVALID_FORMAT);
  CHECK_HAS(err.msg, "neg.dense.bf16.x");
  /* 1 + 2^-10 = 1.0009765625, float32 bits 0x3f802000: low 16 bits 0x2000 */
  CHECK_HAS(err.msg, "inputs/0/values: element 1 = 1.0009765625 is not a bfloat16");
  /* read as it is stored: 1 + 2^-30 in a float64 dataset is refused, not
   * rounded to float32's 1.0 first (%.17g of 1 + 9.3132257e-10) */
  write_bf16(p, 2);
  CHECK_STATUS(open_and_load_all(p, &err), MT_INVALID_FORMAT);
  CHECK_HAS(err.msg, "inputs/0/values: element 1 = 1.0000000009313226 is not a bfloat16");
  scratch_done(&s);
}

/* ---- strict inputs: kwargs against the op's schema, variant labels ------------------------ */

/* A one-case file: case `id` of op `op` (inputs/0 and outputs/0 a scalar
 * 1.0), kwargs written by put(), expect ok, or error of error_class when
 * not NULL; with variant != NULL also a group outputs@<variant>. */
static void write_one(const char *path, const char *id, const char *op, void (*put)(hid_t kw),
                      const char *error_class, const char *variant) {
  hid_t f = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  a_vstr(f, "format", "mtcs-golden");
  a_int(f, "format_version", H5T_STD_I64LE, 1);
  hid_t cases = grp(f, "cases"), c = grp(cases, id);
  a_vstr(c, "op", op);
  a_vstr(c, "expect", error_class ? "error" : "ok");
  if (error_class) a_vstr(c, "error_class", error_class);
  double one = 1.0;
  char vname[128];
  snprintf(vname, sizeof vname, "outputs@%s", variant ? variant : "");
  const char *lists[3] = {"inputs", error_class ? NULL : "outputs", variant ? vname : NULL};
  for (int v = 0; v < 3; v++) {
    if (!lists[v]) continue;
    hid_t l = grp(c, lists[v]), t = grp(l, "0");
    tensor_attrs(t, "scalar", "float64", NULL, 0, SHAPE_NULL);
    ds_put(t, "value", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, 0, NULL, &one);
    H5Gclose(t), H5Gclose(l);
  }
  hid_t kw = grp(c, "kwargs");
  if (put) put(kw);
  H5Gclose(kw), H5Gclose(c), H5Gclose(cases);
  H5Fclose(f);
}

/* Loads the one case of path: its status, the message in err, and (when
 * kw != NULL and it loaded) a copy of kwarg `name` in *kw. */
static mt_status load_one(const char *path, mt_error *err, const char *name, mt_kwarg *kw) {
  mt_golden_file *f = NULL;
  mt_status st = mt_golden_open(path, &f, err);
  if (st == MT_OK && (st = mt_golden_load(f, &f->cases[0], err)) == MT_OK && kw) {
    const mt_kwarg *a = mt_kw_find(&f->cases[0].kw, name);
    memset(kw, 0, sizeof *kw);
    if (a) {
      *kw = *a;
      kw->name = NULL, kw->s = NULL, kw->ints = NULL; /* freed with the file */
    } else {
      kw->type = (mt_kw_type)-1;
    }
  }
  mt_golden_close(f);
  return st;
}

static void kw_lr_string(hid_t kw) { a_vstr(kw, "lr", "0.1"); }
static void kw_lrr(hid_t kw) {
  a_f64(kw, "lr", 0.1);
  a_f64(kw, "lrr", 0.1);
}
static void kw_step_float(hid_t kw) { a_f64(kw, "step", 1.0); }
static void kw_maximize_2(hid_t kw) { a_int(kw, "maximize", H5T_STD_I64LE, 2); }
static void kw_maximize_enum(hid_t kw) { a_ebool(kw, "maximize", 1); }
static void kw_maximize_int64(hid_t kw) { a_int(kw, "maximize", H5T_STD_I64LE, 1); }
static void kw_lr_int(hid_t kw) { a_int(kw, "lr", H5T_STD_I64LE, 1); }
static void kw_lr_bool(hid_t kw) { a_ebool(kw, "lr", 1); }
static void kw_step_uint8(hid_t kw) { a_int(kw, "step", H5T_STD_U8LE, 1); }
static void kw_keepdim_uint8(hid_t kw) { a_int(kw, "keepdim", H5T_STD_U8LE, 0); }
static void kw_keepdim_float(hid_t kw) { a_f64(kw, "keepdim", 1.0); }
static void kw_dim_tuple(hid_t kw) {
  int64_t d[2] = {0, 2};
  a_ints(kw, "dim", d, 2, SHAPE_SIMPLE);
}
static void kw_dim_string(hid_t kw) { a_vstr(kw, "dim", "1"); }
static void kw_alpha(hid_t kw) { a_f64(kw, "alpha", 2.0); }

TEST(kwarg_of_the_wrong_type_names_file_case_and_kwarg) {
  scratch s = {0};
  const char *p = scratch_path(&s, "lr_string.h5");
  write_one(p, "adagrad_dense.dense.f32.random", "adagrad_dense", kw_lr_string, NULL, NULL);
  mt_error err = {0};
  CHECK_STATUS(load_one(p, &err, NULL, NULL), MT_INVALID_FORMAT);
  CHECK_HAS(err.msg, p);
  CHECK_HAS(err.msg, ": case adagrad_dense.dense.f32.random: kwargs/lr: expected a float, got a "
                     "string ('0.1')");
  scratch_done(&s);
}

TEST(unknown_kwarg_is_refused_listing_the_accepted_ones) {
  scratch s = {0};
  const char *p = scratch_path(&s, "lrr.h5");
  write_one(p, "adagrad_dense.dense.f32.random", "adagrad_dense", kw_lrr, NULL, NULL);
  mt_error err = {0};
  CHECK_STATUS(load_one(p, &err, NULL, NULL), MT_INVALID_FORMAT);
  CHECK_HAS(err.msg, ": case adagrad_dense.dense.f32.random: kwargs/lrr: unknown keyword argument "
                     "for adagrad_dense (accepted: lr, lr_decay, weight_decay, eps, maximize, "
                     "step)");
  write_one(p, "neg.masked.f32.alpha", "neg", kw_alpha, NULL, NULL);
  CHECK_STATUS(load_one(p, &err, NULL, NULL), MT_INVALID_FORMAT);
  CHECK_HAS(err.msg, "kwargs/alpha: unknown keyword argument for neg (it takes none)");
  scratch_done(&s);
}

TEST(each_kwarg_type_accepts_what_the_format_allows_and_nothing_else) {
  static const struct {
    const char *op;
    void (*put)(hid_t);
    const char *name;
    mt_kw_type want; /* when it loads */
    int64_t i;
    const char *refused; /* NULL = loads */
  } rows[] = {
      /* float: a float or an int (Python takes an int for a float) */
      {"adagrad_dense", kw_lr_int, "lr", MT_KW_INT, 1, NULL},
      {"adagrad_dense", kw_lr_bool, "lr", 0, 0, "kwargs/lr: expected a float, got a bool (True)"},
      /* bool: h5py's enum, or any integer holding 0 or 1 */
      {"adagrad_dense", kw_maximize_enum, "maximize", MT_KW_BOOL, 1, NULL},
      {"adagrad_dense", kw_maximize_int64, "maximize", MT_KW_BOOL, 1, NULL},
      {"sum", kw_keepdim_uint8, "keepdim", MT_KW_BOOL, 0, NULL},
      {"adagrad_dense", kw_maximize_2, "maximize", 0, 0,
       "kwargs/maximize: expected a bool, got an int (2)"},
      {"sum", kw_keepdim_float, "keepdim", 0, 0, "kwargs/keepdim: expected a bool, got a float (1.0)"},
      /* int: an integer of any width (a uint8 1 is an int here, not a bool) */
      {"adagrad_dense", kw_step_uint8, "step", MT_KW_INT, 1, NULL},
      {"adagrad_dense", kw_step_float, "step", 0, 0, "kwargs/step: expected an int, got a float (1.0)"},
      /* dims: an int or a tuple of ints; prod takes one dim */
      {"sum", kw_dim_tuple, "dim", MT_KW_INTS, 0, NULL},
      {"sum", kw_dim_string, "dim", 0, 0,
       "kwargs/dim: expected an int or a tuple of ints, got a string ('1')"},
      {"prod", kw_dim_tuple, "dim", 0, 0, "kwargs/dim: expected an int, got a tuple of ints ((0, 2))"},
  };
  scratch s = {0};
  const char *p = scratch_path(&s, "types.h5");
  for (size_t k = 0; k < sizeof rows / sizeof rows[0]; k++) {
    char id[64];
    snprintf(id, sizeof id, "%s.dense.f64.row%zu", rows[k].op, k);
    write_one(p, id, rows[k].op, rows[k].put, NULL, NULL);
    mt_error err = {0};
    mt_kwarg a;
    mt_status st = load_one(p, &err, rows[k].name, &a);
    if (rows[k].refused) {
      CHECK_STATUS(st, MT_INVALID_FORMAT);
      CHECK_HAS(err.msg, id);
      CHECK_HAS(err.msg, rows[k].refused);
    } else {
      CHECK_STATUS(st, MT_OK);
      if (st != MT_OK) {
        fprintf(stderr, "  row %zu: %s\n", k, err.msg);
        continue;
      }
      CHECK_EQ_INT(a.type, rows[k].want);
      if (a.type == MT_KW_BOOL || a.type == MT_KW_INT) {
        CHECK_EQ_INT(a.i, rows[k].i);
        CHECK(a.f == (double)rows[k].i); /* mt_kw_float reads it */
      }
    }
  }
  scratch_done(&s);
}

TEST(invalid_argument_error_cases_carry_refused_kwargs_to_the_kernel) {
  /* torch refuses an unexpected kwarg or a tuple dim for prod with a
   * TypeError: such a case is expressible, and the kernel must refuse. */
  scratch s = {0};
  const char *p = scratch_path(&s, "err.h5");
  mt_error err = {0};
  write_one(p, "adagrad_dense.dense.f32.lrr", "adagrad_dense", kw_lrr, "INVALID_ARGUMENT", NULL);
  CHECK_STATUS(load_one(p, &err, NULL, NULL), MT_OK);
  write_one(p, "prod.masked.f32.dims", "prod", kw_dim_tuple, "INVALID_ARGUMENT", NULL);
  CHECK_STATUS(load_one(p, &err, NULL, NULL), MT_OK);
  write_one(p, "adagrad_dense.dense.f32.lr_str", "adagrad_dense", kw_lr_string, "INVALID_ARGUMENT",
            NULL);
  CHECK_STATUS(load_one(p, &err, NULL, NULL), MT_OK);
  /* any other error class: the kwargs are checked */
  write_one(p, "adagrad_dense.dense.f32.lrr", "adagrad_dense", kw_lrr, "MASK_MISMATCH", NULL);
  CHECK_STATUS(load_one(p, &err, NULL, NULL), MT_INVALID_FORMAT);
  CHECK_HAS(err.msg, "kwargs/lrr: unknown keyword argument");
  scratch_done(&s);
}

TEST(variant_label_grammar_accepts_torch_versions_only) {
  static const char *good[] = {"torch-2",
                               "torch-2.1",
                               "torch-2.4.1",
                               "torch-2.15.0+cu132",
                               "torch-2.4.0a0+git1234abc",
                               "torch-2.5.0rc1",
                               "torch-2.6.0.dev20241112+cpu",
                               "torch-1.13.1.post2",
                               "torch-2.3.0b1.dev5+rocm6.0",
                               "torch-2.9.1+cu129", /* every digit and letter of a local part */
                               "torch-2.4.0+git9fz"};
  static const char *bad[] = {"",         "torch-",      "torch",        "2.4.1",
                              "v2",       "torch-2.",    "torch-2..1",   "torch-.1",
                              "torch-x",  "torch-2.4 ",  "Torch-2.4",    "torch-2.4+",
                              "torch-2.4+cu.", "torch-2.4+CU121", "torch-2.4rc", "torch-2.4.dev",
                              "torch-2.4-1", "numpy-1.26.4", "torch-2.4.1/x", "torch_2.4"};
  for (size_t k = 0; k < sizeof good / sizeof good[0]; k++)
    if (!mt_golden_variant_label_valid(good[k])) {
      fprintf(stderr, "  '%s' refused\n", good[k]);
      *mt__failed = 1;
    }
  for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++)
    if (mt_golden_variant_label_valid(bad[k])) {
      fprintf(stderr, "  '%s' accepted\n", bad[k]);
      *mt__failed = 1;
    }
}

TEST(variant_label_that_is_not_a_torch_version_is_an_input_error) {
  scratch s = {0};
  const char *p = scratch_path(&s, "label.h5");
  mt_error err = {0};
  write_one(p, "neg.scalar.f64.v", "neg", NULL, NULL, "v2");
  CHECK_STATUS(load_one(p, &err, NULL, NULL), MT_INVALID_FORMAT);
  CHECK_HAS(err.msg, p);
  CHECK_HAS(err.msg, ": case neg.scalar.f64.v: outputs@v2: output variant label 'v2' does not "
                     "name a torch version");
  write_one(p, "neg.scalar.f64.v", "neg", NULL, NULL, "torch-2.4.0a0+git1234abc");
  CHECK_STATUS(load_one(p, &err, NULL, NULL), MT_OK);
  scratch_done(&s);
}

/* ---- writing ------------------------------------------------------------------------------ */

TEST(one_case_file_round_trips) {
  scratch s = {0};
  const char *p = scratch_path(&s, "good.h5"), *q = scratch_path(&s, "one.h5");
  write_file(p, &DEFAULT_OPTS);
  mt_golden_file *f = NULL, *g = NULL;
  mt_error err = {0};
  CHECK_STATUS(mt_golden_open(p, &f, &err), MT_OK);
  if (!f) goto out;
  static const char *ids[] = {"neg.masked.f32.basic", "sum.coo.f16.edge",
                              "future_op.scalar.f64.kwargs"};
  for (int k = 0; k < 3; k++) {
    mt_golden_case *c = find_case(f, ids[k]);
    CHECK_STATUS(mt_golden_load(f, c, &err), MT_OK);
    CHECK_STATUS(mt_golden_write_case(q, &f->meta, c, &err), MT_OK);
    CHECK_STATUS(mt_golden_open(q, &g, &err), MT_OK);
    if (!g) {
      fprintf(stderr, "  %s\n", err.msg);
      break;
    }
    CHECK_EQ_INT(g->n_cases, 1);
    CHECK(!strcmp(g->meta.torch_version, "2.5.1"));
    mt_golden_case *d = &g->cases[0];
    CHECK(!strcmp(d->id, c->id) && d->op == c->op && !strcmp(d->tolerance_str, c->tolerance_str));
    CHECK(d->check_masked_out == c->check_masked_out);
    CHECK_STATUS(mt_golden_load(g, d, &err), MT_OK);
    mt_compare_opts o = {{MT_TOL_EXACT, 0, "exact"}, 1, 0, NULL};
    int eq = 0;
    char why[512] = "";
    CHECK_STATUS(mt_compare_outputs(c->n_in, c->in, d->n_in, d->in, &o, &eq, why, sizeof why, &err),
                 MT_OK);
    CHECK(eq);
    CHECK_STATUS(
        mt_compare_outputs(c->n_out, c->out, d->n_out, d->out, &o, &eq, why, sizeof why, &err),
        MT_OK);
    CHECK(eq);
    CHECK_EQ_INT(d->kw.n, c->kw.n);
    CHECK_EQ_INT(d->n_variants, c->n_variants);
    for (int q2 = 0; q2 < c->kw.n; q2++) {
      const mt_kwarg *a = &c->kw.items[q2], *b = mt_kw_find(&d->kw, a->name);
      CHECK(b && b->type == a->type && b->i == a->i && b->f == a->f);
    }
    mt_golden_close(g);
    g = NULL;
  }
out:
  mt_golden_close(f);
  scratch_done(&s);
}

/* a compressed tensor of kind k, dtype float32, with the given geometry and
 * index arrays; values 1, 2, 3, ... */
static mt_tensor *compressed(mt_kind k, int ndim, const int64_t *shape, int dense_dim,
                             const int64_t *bs, int64_t nnz, const int64_t *comp, int64_t ncomp,
                             const int64_t *plain, int64_t nplain) {
  mt_tensor *t = NULL;
  mt_cgeom g;
  if (mt_compressed_new(k, MT_float32, ndim, shape, dense_dim, bs, nnz, &t, NULL) != MT_OK ||
      !mt_cgeom_of(t, &g))
    return t;
  memcpy(t->crow_indices, comp, (size_t)ncomp * sizeof *comp);
  memcpy(t->col_indices, plain, (size_t)nplain * sizeof *plain);
  for (int64_t i = 0; i < g.batches * nnz * g.entry; i++) ((float *)t->values)[i] = (float)(i + 1);
  return t;
}

TEST(compressed_kinds_round_trip_through_the_writer_and_reader) {
  scratch s = {0};
  const char *p = scratch_path(&s, "good.h5"), *q = scratch_path(&s, "one.h5");
  write_file(p, &DEFAULT_OPTS);
  mt_golden_file *f = NULL, *g = NULL;
  mt_error err = {0};
  CHECK_STATUS(mt_golden_open(p, &f, &err), MT_OK);
  mt_golden_case *c = f ? find_case(f, "neg.masked.f32.basic") : NULL;
  CHECK(c != NULL);
  if (!c) goto out;
  CHECK_STATUS(mt_golden_load(f, c, &err), MT_OK);
  /* batched BSR [2, 4, 4] blocks (2, 2), one block per batch; hybrid CSC
   * [3, 2, 2] (dense_dim 1) with entries (0,0), (2,0), (1,1); BSC [2, 6]
   * blocks (2, 3), block column 1 holds block row 0 */
  int64_t bsr_shape[3] = {2, 4, 4}, bs22[2] = {2, 2}, csc_shape[3] = {3, 2, 2},
          bsc_shape[2] = {2, 6}, bs23[2] = {2, 3};
  mt_tensor *mine[3] = {
      compressed(MT_KIND_BSR, 3, bsr_shape, 0, bs22, 1, (const int64_t[]){0, 0, 1, 0, 1, 1}, 6,
                 (const int64_t[]){0, 1}, 2),
      compressed(MT_KIND_CSC, 3, csc_shape, 1, NULL, 3, (const int64_t[]){0, 2, 3}, 3,
                 (const int64_t[]){0, 2, 1}, 3),
      compressed(MT_KIND_BSC, 2, bsc_shape, 0, bs23, 1, (const int64_t[]){0, 0, 1}, 3,
                 (const int64_t[]){0}, 1)};
  for (int k = 0; k < 3; k++) CHECK_STATUS(mt_tensor_validate(mine[k], "mine", &err), MT_OK);
  mt_tensor **saved = c->in;
  int saved_n = c->n_in;
  c->in = mine;
  c->n_in = 3;
  mt_status wst = mt_golden_write_case(q, &f->meta, c, &err);
  c->in = saved;
  c->n_in = saved_n;
  CHECK_STATUS(wst, MT_OK);
  CHECK_STATUS(mt_golden_open(q, &g, &err), MT_OK);
  if (g) {
    mt_golden_case *d = &g->cases[0];
    CHECK_STATUS(mt_golden_load(g, d, &err), MT_OK);
    CHECK_EQ_INT(d->n_in, 3);
    mt_compare_opts o = {{MT_TOL_EXACT, 0, "exact"}, 0, 1, NULL};
    int eq = 0;
    char why[512] = "";
    CHECK_STATUS(mt_compare_outputs(3, mine, d->n_in, d->in, &o, &eq, why, sizeof why, &err),
                 MT_OK);
    if (!eq) fprintf(stderr, "  %s\n", why);
    CHECK(eq);
    CHECK(d->n_in == 3 && d->in[0]->kind == MT_KIND_BSR && d->in[0]->blocksize[1] == 2 &&
          d->in[1]->kind == MT_KIND_CSC && d->in[1]->dense_dim == 1 &&
          d->in[2]->kind == MT_KIND_BSC && d->in[2]->blocksize[1] == 3);
  }
  for (int k = 0; k < 3; k++) mt_tensor_free(mine[k]);
out:
  mt_golden_close(g);
  mt_golden_close(f);
  scratch_done(&s);
}

TEST(version_labels_and_error_variants_are_header_and_round_trip) {
  scratch s = {0};
  const char *p = scratch_path(&s, "good.h5"), *q = scratch_path(&s, "one.h5");
  write_file(p, &DEFAULT_OPTS);
  mt_golden_file *f = NULL, *g = NULL;
  mt_error err = {0};
  CHECK_STATUS(mt_golden_open(p, &f, &err), MT_OK);
  mt_golden_case *c = f ? find_case(f, "neg.masked.f32.basic") : NULL;
  CHECK(c != NULL);
  if (!c) goto out;
  /* known at open, before any load: --torch-version checks against them */
  CHECK(!c->loaded && c->n_labels == 1 && !strcmp(c->labels[0], "torch-2.1"));
  CHECK(c->file_torch_version && !strcmp(c->file_torch_version, "2.5.1"));
  CHECK_EQ_INT(c->n_error_variants, 0);
  CHECK_STATUS(mt_golden_load(f, c, &err), MT_OK);
  mt_golden_error_variant ev = {"torch-1.13.1", "SHAPE_MISMATCH"};
  c->error_variants = &ev;
  c->n_error_variants = 1;
  CHECK_STATUS(mt_golden_write_case(q, &f->meta, c, &err), MT_OK);
  c->error_variants = NULL; /* the case does not own ev */
  c->n_error_variants = 0;
  CHECK_STATUS(mt_golden_open(q, &g, &err), MT_OK);
  if (!g) goto out;
  mt_golden_case *d = &g->cases[0];
  CHECK_EQ_INT(d->n_error_variants, 1);
  CHECK(d->n_error_variants == 1 && !strcmp(d->error_variants[0].label, "torch-1.13.1") &&
        !strcmp(d->error_variants[0].error_class, "SHAPE_MISMATCH"));
  CHECK_EQ_INT(d->n_labels, 2);
  CHECK(d->n_labels == 2 && !strcmp(d->labels[0], "torch-2.1") &&
        !strcmp(d->labels[1], "torch-1.13.1"));
  char **v = NULL;
  int n = 0;
  const mt_golden_file *files[2] = {f, g};
  CHECK_STATUS(mt_session_versions(files, 2, &v, &n, &err), MT_OK);
  CHECK_EQ_INT(n, 3); /* sorted, no duplicates */
  CHECK(n == 3 && !strcmp(v[0], "1.13.1") && !strcmp(v[1], "2.1") && !strcmp(v[2], "2.5.1"));
  for (int k = 0; k < n; k++) free(v[k]);
  free(v);
out:
  mt_golden_close(g);
  mt_golden_close(f);
  scratch_done(&s);
}

MT_TEST_MAIN(T(reads_root_and_case_attributes_in_every_string_and_int_style),
             T(loads_masked_tensors_kwargs_and_output_variants),
             T(loads_coo_zero_dim_scalar_and_float16_as_half_bits),
             T(random_bytes_are_not_an_hdf5_file), T(truncated_file_is_a_clear_error),
             T(missing_and_unreadable_files_name_the_path),
             T(other_format_version_is_refused_with_both_versions),
             T(hdf5_file_that_is_not_a_golden_file), T(missing_values_dataset_names_case_and_path),
             T(optional_group_that_is_a_dataset_names_case_and_path),
             T(masked_tensor_without_mask_or_kind_or_nested_is_refused),
             T(invalid_coo_input_is_an_error_naming_the_case),
             T(element_count_mismatch_names_dataset_count_and_shape),
             T(absurd_shape_is_refused_before_allocating),
             T(unknown_tolerance_is_an_input_error_naming_the_case),
             T(bool_element_other_than_0_or_1_is_refused),
             T(bfloat16_dataset_is_float32_read_as_upper_bits_and_written_back_widened),
             T(bfloat16_dataset_value_that_is_not_a_bfloat16_is_refused_naming_case_and_element),
             T(kwarg_of_the_wrong_type_names_file_case_and_kwarg),
             T(unknown_kwarg_is_refused_listing_the_accepted_ones),
             T(each_kwarg_type_accepts_what_the_format_allows_and_nothing_else),
             T(invalid_argument_error_cases_carry_refused_kwargs_to_the_kernel),
             T(variant_label_grammar_accepts_torch_versions_only),
             T(version_labels_and_error_variants_are_header_and_round_trip),
             T(variant_label_that_is_not_a_torch_version_is_an_input_error),
             T(one_case_file_round_trips),
             T(compressed_kinds_round_trip_through_the_writer_and_reader))

/* test_kwargs.c - the kwarg schema (spec/include/mt/kwargs.def, kwargs.h)
 * and the CPU kernels' check against it (impl/kwargs.c, mt__kw_check):
 * every kernel refuses, first thing, a kwarg its op does not take or a value
 * of a type the op does not accept, naming the op and the kwarg; the loader's
 * side is in test_golden_io.c. */
#include <math.h>
#include <stdlib.h>

#include "cpu_fixtures.h"
#include "mt/kwargs.h"
#include "mt_test.h"

static mt_kwarg kw_str(const char *name, const char *s) {
  return (mt_kwarg){.name = name, .type = MT_KW_STR, .s = s};
}

/* mt_kw_validate's verdict on kv[0..n-1] for op: "" when accepted, else
 * "<name>: <why>". */
static const char *verdict(mt_op op, int n, const mt_kwarg *kv, char *buf, size_t len) {
  mt_kwargs kw = {n, kv};
  const char *bad = NULL;
  char why[400];
  buf[0] = 0;
  if (mt_kw_validate(op, &kw, &bad, why, sizeof why)) snprintf(buf, len, "%s: %s", bad, why);
  return buf;
}

/* ---- the schema ------------------------------------------------------------------ */

TEST(schema_gives_each_op_its_torch_kwargs_and_types) {
  const mt_kw_schema *s;
  CHECK((s = mt_kw_schema_find(MT_OP_sum, "dim")) && s->type == MT_KWS_DIMS);
  CHECK((s = mt_kw_schema_find(MT_OP_amax, "keepdim")) && s->type == MT_KWS_BOOL);
  CHECK((s = mt_kw_schema_find(MT_OP_prod, "dim")) && s->type == MT_KWS_INT); /* no tuple */
  CHECK((s = mt_kw_schema_find(MT_OP_adagrad_sparse, "eps")) && s->type == MT_KWS_FLOAT);
  CHECK((s = mt_kw_schema_find(MT_OP_adagrad_masked, "step")) && s->type == MT_KWS_INT);
  CHECK((s = mt_kw_schema_find(MT_OP_adagrad_dense, "maximize")) && s->type == MT_KWS_BOOL);
  CHECK(mt_kw_schema_find(MT_OP_neg, "dim") == NULL);
  /* add's alpha: the plain sparse path takes it (SPP-2); binary.c still
   * refuses it on masked operands, as torch.masked does (BIN-7) */
  CHECK((s = mt_kw_schema_find(MT_OP_add, "alpha")) && s->type == MT_KWS_FLOAT);
  CHECK(mt_kw_schema_find(MT_OP_mul, "alpha") == NULL);
  CHECK(mt_kw_schema_find(MT_OP_sum, "lr") == NULL);
  CHECK(mt_kw_schema_find(MT_OP_sum, NULL) == NULL);
  /* every line names an op of ops.def (else kwargs.h would not compile), has
   * a doc, and appears once */
  int n;
  const mt_kw_schema *t = mt_kw_schema_all(&n);
  CHECK(n >= 28);
  for (int k = 0; k < n; k++) {
    CHECK(t[k].op > MT_OP__NONE && t[k].op < MT_OP__END && t[k].doc[0]);
    for (int j = 0; j < k; j++) CHECK(!(t[j].op == t[k].op && !strcmp(t[j].name, t[k].name)));
  }
}

TEST(float_takes_an_int_bool_and_int_take_only_their_own_type) {
  char b[512];
  const int64_t d02[] = {0, 2};
  /* accepted */
  CHECK(!verdict(MT_OP_adagrad_dense, 1, (mt_kwarg[]){kw_int("lr", 1)}, b, sizeof b)[0]);
  CHECK(!verdict(MT_OP_adagrad_dense, 6,
                 (mt_kwarg[]){kw_float("lr", 0.1), kw_float("lr_decay", 0), kw_int("eps", 0),
                              kw_float("weight_decay", 0), kw_bool("maximize", 0),
                              kw_int("step", 3)},
                 b, sizeof b)[0]);
  CHECK(!verdict(MT_OP_sum, 2, (mt_kwarg[]){kw_ints("dim", 2, d02), kw_bool("keepdim", 1)}, b,
                 sizeof b)[0]);
  CHECK(!verdict(MT_OP_sum, 1, (mt_kwarg[]){kw_ints("dim", 0, NULL)}, b, sizeof b)[0]);
  CHECK(!verdict(MT_OP_prod, 1, (mt_kwarg[]){kw_int("dim", -1)}, b, sizeof b)[0]);
  CHECK(!verdict(MT_OP_neg, 0, NULL, b, sizeof b)[0]);
  CHECK(!mt_kw_validate(MT_OP_neg, NULL, &(const char *){NULL}, b, sizeof b));
  /* refused, with Python's spelling of the value */
  CHECK_HAS(verdict(MT_OP_adagrad_dense, 1, (mt_kwarg[]){kw_str("lr", "0.1")}, b, sizeof b),
            "lr: expected a float, got a string ('0.1')");
  CHECK_HAS(verdict(MT_OP_adagrad_dense, 1, (mt_kwarg[]){kw_bool("lr", 1)}, b, sizeof b),
            "lr: expected a float, got a bool (True)");
  CHECK_HAS(verdict(MT_OP_adagrad_dense, 1, (mt_kwarg[]){kw_float("step", 2)}, b, sizeof b),
            "step: expected an int, got a float (2.0)");
  CHECK_HAS(verdict(MT_OP_adagrad_dense, 1, (mt_kwarg[]){kw_bool("step", 1)}, b, sizeof b),
            "step: expected an int, got a bool (True)");
  CHECK_HAS(verdict(MT_OP_adagrad_dense, 1, (mt_kwarg[]){kw_int("maximize", 1)}, b, sizeof b),
            "maximize: expected a bool, got an int (1)");
  CHECK_HAS(verdict(MT_OP_adagrad_dense, 1, (mt_kwarg[]){kw_bool("maximize", 2)}, b, sizeof b),
            "maximize: expected a bool (0 or 1), got 2");
  CHECK_HAS(verdict(MT_OP_sum, 1, (mt_kwarg[]){kw_float("dim", 1)}, b, sizeof b),
            "dim: expected an int or a tuple of ints, got a float (1.0)");
  CHECK_HAS(verdict(MT_OP_prod, 1, (mt_kwarg[]){kw_ints("dim", 2, d02)}, b, sizeof b),
            "dim: expected an int, got a tuple of ints ((0, 2))");
  CHECK_HAS(verdict(MT_OP_prod, 1, (mt_kwarg[]){kw_ints("dim", 1, d02)}, b, sizeof b),
            "got a tuple of ints ((0,))");
  CHECK(!verdict(MT_OP_adagrad_dense, 1, (mt_kwarg[]){kw_float("lr", NAN)}, b, sizeof b)[0]);
  CHECK_HAS(verdict(MT_OP_adagrad_dense, 1, (mt_kwarg[]){kw_float("step", -INFINITY)}, b, sizeof b),
            "got a float (-inf)");
  CHECK_HAS(verdict(MT_OP_adagrad_dense, 1, (mt_kwarg[]){kw_float("step", 1e-10)}, b, sizeof b),
            "got a float (1e-10)");
  CHECK_HAS(verdict(MT_OP_adagrad_dense, 1, (mt_kwarg[]){kw_float("step", 0.1)}, b, sizeof b),
            "got a float (0.1)");
}

TEST(unknown_repeated_and_malformed_kwargs_are_refused) {
  char b[512];
  CHECK_HAS(verdict(MT_OP_adagrad_dense, 2, (mt_kwarg[]){kw_float("lr", 0.1), kw_float("lrr", 1)},
                    b, sizeof b),
            "lrr: unknown keyword argument for adagrad_dense (accepted: lr, lr_decay, "
            "weight_decay, eps, maximize, step)");
  CHECK_HAS(verdict(MT_OP_sum, 1, (mt_kwarg[]){kw_bool("keep_dim", 1)}, b, sizeof b),
            "keep_dim: unknown keyword argument for sum (accepted: dim, keepdim, dtype)");
  CHECK_HAS(verdict(MT_OP_mul, 1, (mt_kwarg[]){kw_float("alpha", 2)}, b, sizeof b),
            "alpha: unknown keyword argument for mul (it takes none)");
  CHECK_HAS(verdict(MT_OP_sum, 2, (mt_kwarg[]){kw_int("dim", 0), kw_int("dim", 1)}, b, sizeof b),
            "dim: keyword argument given more than once");
  CHECK_HAS(verdict(MT_OP_sum, 1, (mt_kwarg[]){{.name = NULL, .type = MT_KW_INT}}, b, sizeof b),
            "has no name");
  CHECK_HAS(verdict(MT_OP_sum, 1, (mt_kwarg[]){kw_ints("dim", 2, NULL)}, b, sizeof b),
            "dim: expected an int or a tuple of ints");
  mt_kwargs broken = {2, NULL};
  const char *bad = NULL;
  char why[200];
  CHECK(mt_kw_validate(MT_OP_sum, &broken, &bad, why, sizeof why) == 1);
  CHECK_HAS(why, "malformed kwargs");
  /* a long string is cut in the message */
  char longs[200];
  memset(longs, 'x', sizeof longs - 1);
  longs[sizeof longs - 1] = 0;
  CHECK_HAS(verdict(MT_OP_sum, 1, (mt_kwarg[]){kw_str("dim", longs)}, b, sizeof b),
            "xxxxxxxx...')");
}

/* ---- the kernels ----------------------------------------------------------------- */

/* Every CPU kernel, called with no inputs and one kwarg its op does not
 * take, refuses it before anything else, naming the op and the kwarg. A new
 * kernel that forgets mt__kw_check fails here. */
TEST(every_cpu_kernel_refuses_a_kwarg_its_op_does_not_take) {
  const mt_impl *cpu = mt_backend_cpu();
  mt_kwarg kv[] = {kw_float("bogus", 1)};
  mt_kwargs kw = {1, kv};
#define MT_OP(id, name, family, rules)                                                       \
  {                                                                                          \
    mt_call c;                                                                               \
    mt_error e;                                                                              \
    CHECK_STATUS(run(cpu->kernels[id], &c, &e, 0, NULL, &kw), MT_INVALID_ARGUMENT);          \
    CHECK_HAS(e.msg, #name ": kwargs/bogus: unknown keyword argument for " #name " (");      \
    CHECK_EQ_INT(c.n_out, 0);                                                                \
  }
#include "mt/ops.def"
#undef MT_OP
}

/* For every line of kwargs.def: the op's kernel refuses that kwarg given as
 * a string, saying what it expected. */
TEST(every_cpu_kernel_refuses_each_of_its_kwargs_given_as_a_string) {
  const mt_impl *cpu = mt_backend_cpu();
  int n;
  const mt_kw_schema *t = mt_kw_schema_all(&n);
  for (int k = 0; k < n; k++) {
    mt_kwarg kv[] = {kw_str(t[k].name, "1")};
    mt_kwargs kw = {1, kv};
    mt_call c;
    mt_error e;
    char want[200];
    snprintf(want, sizeof want, "%s: kwargs/%s: expected %s, got a string ('1')",
             mt_op_name(t[k].op), t[k].name, mt_kw_schema_type_name(t[k].type));
    CHECK_STATUS(run(cpu->kernels[t[k].op], &c, &e, 0, NULL, &kw), MT_INVALID_ARGUMENT);
    CHECK_HAS(e.msg, want);
  }
}

TEST(sum_with_a_float_dim_is_invalid_argument_not_a_sum_over_all_dims) {
  /* before: mt_kw_find found dim but not as an int, the kernel said so; a
   * misspelt keepdim was ignored and the result had the wrong shape */
  mt_tensor *m = masked(dense(MT_float64, 2, SHAPE(2, 3), VALS(1, 2, 3, 4, 5, 6)),
                        bools(2, SHAPE(2, 3), BITS(1, 1, 1, 1, 1, 1)));
  const mt_tensor *in[] = {m};
  mt_call c;
  mt_error e;
  mt_kwarg k1[] = {kw_float("dim", 1)};
  mt_kwargs kw1 = {1, k1};
  CHECK_STATUS(run(mt_cpu_sum, &c, &e, 1, in, &kw1), MT_INVALID_ARGUMENT);
  CHECK_HAS(e.msg, "sum: kwargs/dim: expected an int or a tuple of ints, got a float (1.0)");
  mt_kwarg k2[] = {kw_int("dim", 1), kw_bool("keep_dim", 1)};
  mt_kwargs kw2 = {2, k2};
  CHECK_STATUS(run(mt_cpu_sum, &c, &e, 1, in, &kw2), MT_INVALID_ARGUMENT);
  CHECK_HAS(e.msg, "sum: kwargs/keep_dim: unknown keyword argument for sum (accepted: dim, "
                   "keepdim, dtype)");
  CHECK_EQ_INT(c.n_out, 0);
  mt_kwarg k3[] = {kw_int("dim", 1), kw_bool("keepdim", 1)};
  mt_kwargs kw3 = {2, k3};
  CHECK_STATUS(run(mt_cpu_sum, &c, &e, 1, in, &kw3), MT_OK);
  CHECK(c.n_out == 1 && c.out[0]->data->ndim == 2 && c.out[0]->data->shape[1] == 1);
  done(&c, (mt_tensor *[]){m}, 1);
}

TEST(adagrad_with_a_string_lr_is_invalid_argument_and_an_int_lr_is_a_float) {
  /* lr='0.1' used to run with the default lr 0.01 */
  mt_tensor *p = dense(MT_float32, 1, SHAPE(2), VALS(1, 2)),
            *g = dense(MT_float32, 1, SHAPE(2), VALS(1, -1)),
            *s = dense(MT_float32, 1, SHAPE(2), VALS(0, 0));
  const mt_tensor *in[] = {p, g, s};
  mt_call c;
  mt_error e;
  static const mt_kernel_fn fns[] = {mt_cpu_adagrad_dense, mt_cpu_adagrad_sparse,
                                     mt_cpu_adagrad_masked};
  static const char *const names[] = {"adagrad_dense", "adagrad_sparse", "adagrad_masked"};
  for (int k = 0; k < 3; k++) {
    mt_kwarg kv[] = {kw_str("lr", "0.1")};
    mt_kwargs kw = {1, kv};
    char want[128];
    CHECK_STATUS(run(fns[k], &c, &e, 3, in, &kw), MT_INVALID_ARGUMENT);
    snprintf(want, sizeof want, "%s: kwargs/lr: expected a float, got a string ('0.1')",
             names[k]);
    CHECK_HAS(e.msg, want);
    CHECK_EQ_INT(c.n_out, 0);
  }
  /* lr=1 (a Python int) is lr=1.0: param 1 - 1 * 1 / (sqrt(1) + eps) = 0 */
  mt_kwarg ki[] = {kw_int("lr", 1), kw_float("eps", 0)};
  mt_kwargs kwi = {2, ki};
  CHECK_STATUS(run(mt_cpu_adagrad_dense, &c, &e, 3, in, &kwi), MT_OK);
  CHECK(c.n_out == 3 && at(c.out[0], 0) == 0.0 && at(c.out[0], 1) == 3.0);
  done(&c, (mt_tensor *[]){p, g, s}, 3);
}

/* FLOATS (betas) and FLOAT_TENSOR (SparseAdam's lr): what each accepts,
 * and tuples of floats printed as Python does. */
TEST(floats_and_float_tensor_take_tuples_of_floats) {
  char b[512];
  const double beta[] = {0.9, 0.999}, one[] = {0.05}, nanv[] = {NAN, -INFINITY};
  const int64_t zz[] = {0, 0};
  mt_kwarg fl = {.name = "betas", .type = MT_KW_FLOATS, .n = 2, .floats = beta};
  CHECK(!verdict(MT_OP_sparse_adam, 1, &fl, b, sizeof b)[0]);
  CHECK(!verdict(MT_OP_sparse_adam, 1, (mt_kwarg[]){kw_ints("betas", 2, zz)}, b, sizeof b)[0]);
  CHECK_HAS(verdict(MT_OP_sparse_adam, 1, (mt_kwarg[]){kw_float("betas", 0.9)}, b, sizeof b),
            "betas: expected a tuple of floats, got a float (0.9)");
  /* lr: a float, an int, or a Tensor's elements; not a string */
  mt_kwarg lr1 = {.name = "lr", .type = MT_KW_FLOATS, .n = 1, .floats = one};
  CHECK(!verdict(MT_OP_sparse_adam, 1, &lr1, b, sizeof b)[0]);
  CHECK(!verdict(MT_OP_sparse_adam, 1, (mt_kwarg[]){kw_float("lr", 0.1)}, b, sizeof b)[0]);
  CHECK_HAS(verdict(MT_OP_sparse_adam, 1, (mt_kwarg[]){kw_str("lr", "0.1")}, b, sizeof b),
            "lr: expected a float or a tuple of floats (a 1-d Tensor), got a string");
  /* FLOAT refuses a tuple of floats: Adagrad's lr is a number only */
  mt_kwarg ada = {.name = "lr", .type = MT_KW_FLOATS, .n = 1, .floats = one};
  CHECK_HAS(verdict(MT_OP_adagrad_dense, 1, &ada, b, sizeof b),
            "lr: expected a float, got a tuple of floats ((0.05,))");
  mt_kwarg odd = {.name = "betas", .type = MT_KW_FLOATS, .n = 2, .floats = nanv};
  CHECK_HAS(mt_kw_repr(&fl, b, sizeof b), "(0.9, 0.999)");
  CHECK_HAS(mt_kw_repr(&odd, b, sizeof b), "(nan, -inf)");
  mt_kwarg broken = {.name = "betas", .type = MT_KW_FLOATS, .n = 2, .floats = NULL};
  CHECK_HAS(verdict(MT_OP_sparse_adam, 1, &broken, b, sizeof b), "no elements");
}

/* to_sparse(layout=...): a LAYOUT kwarg is a string naming a torch.layout
 * without "torch." (kwargs.h mt_kw_layout_parse); other strings and other
 * types are refused. */
TEST(layout_takes_only_the_names_of_torch_layouts) {
  char b[512];
  mt_kind k = MT_KIND_MASKED;
  mt_kwarg csr = {.name = "layout", .type = MT_KW_STR, .s = "sparse_csr"};
  mt_kwarg bad = {.name = "layout", .type = MT_KW_STR, .s = "torch.sparse_csr"};
  CHECK(!verdict(MT_OP_to_sparse, 1, &csr, b, sizeof b)[0]);
  CHECK_HAS(verdict(MT_OP_to_sparse, 1, &bad, b, sizeof b), "expected a layout name");
  CHECK_HAS(verdict(MT_OP_to_sparse, 1, (mt_kwarg[]){kw_int("layout", 1)}, b, sizeof b),
            "expected a layout name, got an int");
  CHECK(mt_kw_layout_parse("strided", &k) == 0 && k == MT_KIND_DENSE);
  CHECK(mt_kw_layout_parse("sparse_bsc", &k) == 0 && k == MT_KIND_BSC);
  CHECK(mt_kw_layout_parse("bsc", NULL) == 1);
}

MT_TEST_MAIN(T(schema_gives_each_op_its_torch_kwargs_and_types),
             T(floats_and_float_tensor_take_tuples_of_floats),
             T(float_takes_an_int_bool_and_int_take_only_their_own_type),
             T(unknown_repeated_and_malformed_kwargs_are_refused),
             T(every_cpu_kernel_refuses_a_kwarg_its_op_does_not_take),
             T(every_cpu_kernel_refuses_each_of_its_kwargs_given_as_a_string),
             T(sum_with_a_float_dim_is_invalid_argument_not_a_sum_over_all_dims),
             T(adagrad_with_a_string_lr_is_invalid_argument_and_an_int_lr_is_a_float),
             T(layout_takes_only_the_names_of_torch_layouts))

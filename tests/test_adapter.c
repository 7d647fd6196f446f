/* test_adapter.c - the pieces of the adapter protocol (conformance/adapter.h,
 * spec/adapter-protocol.md) that need no process: the flat JSON reader and
 * writer, and the request and response files (golden_io.h). The protocol
 * end to end, with the fixture adapter, is tests/adapter_protocol.cmake. */
#include <hdf5.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "adapter.h"
#include "golden_io.h"
#include "mt_test.h"

static int parse(const char *s, mt_json_object *o, char *why) {
  return mt_json_parse_flat(s, strlen(s), o, why, 256);
}

TEST(json_reads_a_hello) {
  mt_json_object o;
  char why[256];
  const char *s =
      " {\"protocol\": 1, \"name\": \"numpy.ma\", \"version\": \"2.4.0\",\n"
      "  \"profiles\": [\"numpy_ma\", \"torch\"], \"backward\": false, \"x\": null} ";
  CHECK_EQ_INT(parse(s, &o, why), 0);
  CHECK_EQ_INT(o.n, 6);
  const mt_json_field *p = mt_json_get(&o, "protocol"), *pr = mt_json_get(&o, "profiles");
  CHECK(p && p->type == MT_JSON_NUMBER && p->num == 1);
  CHECK(mt_json_get_str(&o, "name") && !strcmp(mt_json_get_str(&o, "name"), "numpy.ma"));
  CHECK(pr && pr->type == MT_JSON_STRINGS && pr->n == 2 && !strcmp(pr->v[1], "torch"));
  CHECK(mt_json_get(&o, "backward")->type == MT_JSON_BOOL && mt_json_get(&o, "backward")->num == 0);
  CHECK(mt_json_get(&o, "x")->type == MT_JSON_NULL);
  CHECK(mt_json_get_str(&o, "protocol") == NULL); /* a number, not a string */
  CHECK(mt_json_get(&o, "absent") == NULL);
  mt_json_object_free(&o);
}

/* RFC 8259 escapes; the UTF-8 bytes by hand: U+00E9 = C3 A9, U+1F600 = F0 9F 98 80. */
TEST(json_decodes_escapes_to_utf8) {
  mt_json_object o;
  char why[256];
  CHECK_EQ_INT(parse("{\"m\": \"a\\\"b\\\\c\\/d\\n\\t\\u00e9\\ud83d\\ude00\", \"n\": -1.5e3, "
                     "\"e\": [], \"z\": 0}",
                     &o, why),
               0);
  CHECK(!strcmp(mt_json_get_str(&o, "m"), "a\"b\\c/d\n\t\xc3\xa9\xf0\x9f\x98\x80"));
  CHECK(mt_json_get(&o, "n")->num == -1500.0);
  CHECK(mt_json_get(&o, "e")->type == MT_JSON_STRINGS && mt_json_get(&o, "e")->n == 0);
  mt_json_object_free(&o);
  CHECK_EQ_INT(parse("{}", &o, why), 0);
  CHECK_EQ_INT(o.n, 0);
}

TEST(json_refuses_what_is_not_one_flat_object) {
  static const struct {
    const char *text, *why;
  } bad[] = {
      {"this is not JSON", "expected '{' at byte 0"},
      {"", "expected '{'"},
      {"[1]", "expected '{'"},
      {"{\"a\": 1} x", "text after the object"},
      {"{\"a\": 1, \"a\": 2}", "key \"a\" repeated"},
      {"{\"a\": {\"b\": 1}}", "nested objects"},
      {"{\"a\": [1, 2]}", "only arrays of strings"},
      {"{\"a\": \"x\ty\"}", "control character 0x09"},
      {"{\"a\": \"\\ud800\"}", "lone surrogate"},
      {"{\"a\": \"\\u0000\"}", "\\u0000"},
      {"{\"a\": \"open", "unterminated string"},
      {"{\"a\" 1}", "expected ':' after key \"a\""},
      {"{\"a\": 01}", "expected ',' or '}'"},
      {"{\"a\": tru}", "unexpected character 't'"},
      {"{\"a\": 1,}", "expected a string"},
      {"{\"a\": \"\\q\"}", "bad escape"},
      /* a bad string inside an array stops the parse there too */
      {"{\"a\": [\"x\", \"\\q\"]}", "bad escape '\\q' at byte 15"},
      {"{\"a\": [\"\\ud800\"], \"b\": 1}", "lone surrogate"},
  };
  for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
    mt_json_object o;
    char why[256] = "";
    CHECK_EQ_INT(parse(bad[k].text, &o, why), -1);
    CHECK_HAS(why, bad[k].why);
    CHECK_EQ_INT(o.n, 0);
  }
}

TEST(json_quote_round_trips_through_the_reader) {
  const char *s = "say \"hi\"\\\n\x01\x7f caf\xc3\xa9";
  char q[128], line[160];
  CHECK(mt_json_quote(q, sizeof q, s) > 0);
  CHECK(!strcmp(q, "\"say \\\"hi\\\"\\\\\\n\\u0001\\u007f caf\xc3\xa9\""));
  snprintf(line, sizeof line, "{\"s\": %s}", q);
  mt_json_object o;
  char why[256];
  CHECK_EQ_INT(parse(line, &o, why), 0);
  CHECK(mt_json_get_str(&o, "s") && !strcmp(mt_json_get_str(&o, "s"), s));
  mt_json_object_free(&o);
  CHECK_EQ_INT(mt_json_quote(q, 4, "abcdef"), -1); /* does not fit */
}

/* ---- request and response files ----------------------------------------------------- */

static int has_attr(hid_t g, const char *name) { return H5Aexists(g, name) > 0; }

/* A request holds the case's inputs and kwargs and nothing of its answer;
 * the reader for requests reads it back bit for bit. */
TEST(request_file_holds_inputs_and_no_answer) {
  mt_error err = {0};
  mt_golden_file *f = NULL, *rf = NULL;
  char path[] = "/tmp/mtcs-test-adapter-XXXXXX";
  int fd = mkstemp(path);
  CHECK(fd >= 0);
  close(fd);
  CHECK_STATUS(mt_golden_open(MT_SOURCE_DIR "/golden/masked.h5", &f, &err), MT_OK);
  if (!f) return;
  mt_golden_case *c = NULL;
  for (int k = 0; k < f->n_cases; k++)
    if (!strcmp(f->cases[k].id, "to_tensor.masked.f32.fill_7_5")) c = &f->cases[k];
  CHECK(c != NULL);
  if (!c) goto out;
  CHECK_STATUS(mt_golden_load(f, c, &err), MT_OK);
  CHECK_STATUS(mt_golden_write_request(path, c, c->n_in, (const mt_tensor *const *)c->in, &err),
               MT_OK);
  hid_t h = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
  CHECK(h >= 0);
  char grp[256];
  snprintf(grp, sizeof grp, "/cases/%s", c->id);
  hid_t g = H5Gopen2(h, grp, H5P_DEFAULT);
  CHECK(g >= 0);
  CHECK(has_attr(g, "op") && has_attr(g, "profile") && has_attr(g, "rules") &&
        has_attr(g, "tolerance"));
  CHECK(!has_attr(g, "expect") && !has_attr(g, "error_class") && !has_attr(g, "torch_error") &&
        !has_attr(g, "torch_call"));
  CHECK(H5Lexists(g, "inputs", H5P_DEFAULT) > 0 && H5Lexists(g, "kwargs", H5P_DEFAULT) > 0);
  CHECK(H5Lexists(g, "outputs", H5P_DEFAULT) == 0);
  H5Gclose(g);
  H5Fclose(h);
  CHECK_STATUS(mt_golden_open(path, &rf, &err), MT_OK);
  if (rf) {
    CHECK_EQ_INT(rf->n_cases, 1);
    CHECK_STATUS(mt_golden_load_inputs(rf, &rf->cases[0], &err), MT_OK);
    CHECK_EQ_INT(rf->cases[0].n_in, c->n_in);
    CHECK_EQ_INT(rf->cases[0].n_out, 0);
    CHECK_EQ_INT(rf->cases[0].kw.n, c->kw.n);
    /* a request is not a golden case: the full loader wants outputs */
    mt_golden_unload(&rf->cases[0]);
    CHECK_STATUS(mt_golden_load(rf, &rf->cases[0], &err), MT_INVALID_FORMAT);
    mt_golden_close(rf);
  }
  /* a response: the outputs at the root, read back */
  int n = 0;
  mt_tensor **out = NULL;
  CHECK_STATUS(mt_golden_write_outputs(path, c->n_out, (const mt_tensor *const *)c->out, &err),
               MT_OK);
  CHECK_STATUS(mt_golden_read_outputs(path, &n, &out, &err), MT_OK);
  CHECK_EQ_INT(n, c->n_out);
  for (int k = 0; k < n; k++) {
    CHECK(out[k]->kind == c->out[k]->kind && mt_shape_equal(out[k], c->out[k]));
    mt_tensor_free(out[k]);
  }
  free(out);
out:
  unlink(path);
  mt_golden_close(f);
}

TEST(response_errors_name_the_file) {
  mt_error err = {0};
  int n = 0;
  mt_tensor **out = NULL;
  char path[] = "/tmp/mtcs-test-adapter-XXXXXX";
  int fd = mkstemp(path);
  CHECK(fd >= 0);
  CHECK(write(fd, "not hdf5\n", 9) == 9);
  close(fd);
  CHECK_STATUS(mt_golden_read_outputs(path, &n, &out, &err), MT_INVALID_FORMAT);
  CHECK_HAS(err.msg, path);
  CHECK_HAS(err.msg, "not an HDF5 file");
  /* an HDF5 file without outputs */
  hid_t h = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  CHECK(h >= 0);
  H5Fclose(h);
  CHECK_STATUS(mt_golden_read_outputs(path, &n, &out, &err), MT_INVALID_FORMAT);
  CHECK_HAS(err.msg, path);
  CHECK_HAS(err.msg, "outputs");
  /* an empty outputs group */
  CHECK_STATUS(mt_golden_write_outputs(path, 0, NULL, &err), MT_OK);
  CHECK_STATUS(mt_golden_read_outputs(path, &n, &out, &err), MT_INVALID_FORMAT);
  CHECK_HAS(err.msg, "outputs: is empty");
  unlink(path);
  CHECK_STATUS(mt_golden_read_outputs(path, &n, &out, &err), MT_IO_ERROR);
  CHECK_HAS(err.msg, "No such file");
  CHECK(n == 0 && out == NULL);
}

MT_TEST_MAIN({"json_reads_a_hello", json_reads_a_hello},
             {"json_decodes_escapes_to_utf8", json_decodes_escapes_to_utf8},
             {"json_refuses_what_is_not_one_flat_object", json_refuses_what_is_not_one_flat_object},
             {"json_quote_round_trips_through_the_reader",
              json_quote_round_trips_through_the_reader},
             {"request_file_holds_inputs_and_no_answer", request_file_holds_inputs_and_no_answer},
             {"response_errors_name_the_file", response_errors_name_the_file})

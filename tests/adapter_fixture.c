/* adapter_fixture.c - a C adapter for the tests of `mtcs validate`
 * (tests/adapter_protocol.cmake). It speaks the adapter protocol
 * (spec/adapter-protocol.md, protocol 1) and computes every request with the
 * CPU reference backend, so that the honest fixture passes exactly what
 * `mtcs run --backend cpu` passes; every other mode misbehaves on purpose:
 *
 *   adapter_fixture MODE [PROFILES]
 *
 *   honest            computes every request
 *   lie               perturbs one output value of every answer
 *   lie-under-poison  the same, only for poison re-runs (run != "golden")
 *   crash-at-N        abort()s on the N-th request
 *   crash-for-good-at-N  the same, and every restart then exits before its
 *                     hello (mtcs gives up after three failed starts)
 *   hang-at-N         never answers the N-th request
 *   garbage-at-N      answers the N-th request with a line that is not JSON
 *   flood-at-N        answers the N-th request with a line of 100,000 bytes
 *   chatty-at-N       answers the N-th request with a second line after the
 *                     answer (in the same write)
 *   no-response-file  answers OK without writing the response file
 *   bad-output        answers OK with a malformed tensor (3 elements promised,
 *                     2 stored)
 *   wrong-protocol    says hello in protocol 2
 *   silent-hello      never says hello
 *   die-at-start      exits with status 3 before its hello
 *
 * PROFILES: the hello's profiles, comma-separated (default torch,numpy_ma).
 * The -at-N modes misbehave once per run: a marker file in $MTCS_ADAPTER_DIR
 * (the run's directory, which outlives restarts) keeps the restarted
 * fixture honest, so the cases after the broken one pass. The fixture says
 * what it does on stderr (mtcs shows it prefixed "adapter: "). */
#include <errno.h>
#include <hdf5.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "adapter.h"
#include "golden_io.h"
#include "mt_core.h"

typedef enum {
  HONEST,
  LIE,
  LIE_UNDER_POISON,
  CRASH_AT,
  CRASH_FOR_GOOD_AT,
  HANG_AT,
  GARBAGE_AT,
  CHATTY_AT,
  FLOOD_AT,
  NO_RESPONSE_FILE,
  BAD_OUTPUT,
  WRONG_PROTOCOL,
  SILENT_HELLO,
  DIE_AT_START
} mode;

static const struct {
  const char *name;
  mode m;
  int at; /* takes -N */
} modes[] = {
    {"honest", HONEST, 0},
    {"lie", LIE, 0},
    {"lie-under-poison", LIE_UNDER_POISON, 0},
    {"crash-at", CRASH_AT, 1},
    {"crash-for-good-at", CRASH_FOR_GOOD_AT, 1},
    {"hang-at", HANG_AT, 1},
    {"garbage-at", GARBAGE_AT, 1},
    {"chatty-at", CHATTY_AT, 1},
    {"flood-at", FLOOD_AT, 1},
    {"no-response-file", NO_RESPONSE_FILE, 0},
    {"bad-output", BAD_OUTPUT, 0},
    {"wrong-protocol", WRONG_PROTOCOL, 0},
    {"silent-hello", SILENT_HELLO, 0},
    {"die-at-start", DIE_AT_START, 0},
};

static int usage(void) {
  fputs(
      "usage: adapter_fixture MODE [PROFILES] (MODE: honest, lie, lie-under-poison, "
      "crash-at-N, crash-for-good-at-N, hang-at-N, garbage-at-N, chatty-at-N, flood-at-N, "
      "no-response-file, "
      "bad-output, wrong-protocol, silent-hello, die-at-start; PROFILES: the hello's, "
      "comma-separated, default torch,numpy_ma); run by mtcs validate --adapter\n",
      stderr);
  return 2;
}

/* One output value changed so that any comparison sees it: the first mask
 * element of a masked tensor (masks are compared exactly), else the first
 * stored value (0 becomes 1, anything else 0). 0 when t has none. */
static int perturb(mt_tensor *t) {
  if (t->kind == MT_KIND_MASKED) return perturb(t->mask) || perturb(t->data);
  int64_t n = t->kind == MT_KIND_DENSE || t->kind == MT_KIND_SCALAR ? mt_numel(t) : t->nnz;
  if (n <= 0 || !t->values) return 0;
  double v = mt_get_f64(t->values, t->dtype, 0);
  mt_set_f64(t->values, t->dtype, 0, v == 0 ? 1.0 : 0.0);
  return 1;
}

/* outputs/0: a dense float32 tensor of shape [3] with 2 values. */
static int write_bad_output(const char *path) {
  hid_t f = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT), g = -1, o = -1;
  int bad = f < 0;
  if (!bad)
    bad = (g = H5Gcreate2(f, "outputs", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT)) < 0 ||
          (o = H5Gcreate2(g, "0", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT)) < 0;
  const char *strs[2][2] = {{"kind", "dense"}, {"dtype", "float32"}};
  for (int k = 0; k < 2 && !bad; k++) {
    hid_t t = H5Tcopy(H5T_C_S1), s = H5Screate(H5S_SCALAR);
    H5Tset_size(t, strlen(strs[k][1]));
    hid_t a = H5Acreate2(o, strs[k][0], t, s, H5P_DEFAULT, H5P_DEFAULT);
    bad = a < 0 || H5Awrite(a, t, strs[k][1]) < 0;
    if (a >= 0) H5Aclose(a);
    H5Tclose(t);
    H5Sclose(s);
  }
  int64_t shape[1] = {3};
  float vals[2] = {1, 2};
  hsize_t one = 1, two = 2;
  if (!bad) {
    hid_t s = H5Screate_simple(1, &one, NULL);
    hid_t a = H5Acreate2(o, "shape", H5T_STD_I64LE, s, H5P_DEFAULT, H5P_DEFAULT);
    bad = a < 0 || H5Awrite(a, H5T_NATIVE_INT64, shape) < 0;
    if (a >= 0) H5Aclose(a);
    H5Sclose(s);
  }
  if (!bad) {
    hid_t s = H5Screate_simple(1, &two, NULL);
    hid_t d = H5Dcreate2(o, "values", H5T_IEEE_F32LE, s, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    bad = d < 0 || H5Dwrite(d, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, vals) < 0;
    if (d >= 0) H5Dclose(d);
    H5Sclose(s);
  }
  if (o >= 0) H5Gclose(o);
  if (g >= 0) H5Gclose(g);
  if (f >= 0) H5Fclose(f);
  return bad ? -1 : 0;
}

/* Whether this run's -at-N misbehaviour has happened (a marker file in
 * $MTCS_ADAPTER_DIR); mark: record that it happens now. */
static int misbehaved(int mark) {
  const char *dir = getenv("MTCS_ADAPTER_DIR");
  char path[4096];
  if (!dir) return 0;
  snprintf(path, sizeof path, "%s/fixture-misbehaved", dir);
  if (access(path, F_OK) == 0) return 1;
  FILE *f = mark ? fopen(path, "w") : NULL;
  if (f) fclose(f);
  return 0;
}

/* The answer line, then `extra` (a second line, or NULL) in the same write. */
static void answer(const char *status, const char *message, const char *extra) {
  char q[4096];
  if (message && mt_json_quote(q, sizeof q, message) >= 0)
    printf("{\"status\": \"%s\", \"message\": %s}\n", status, q);
  else
    printf("{\"status\": \"%s\"}\n", status);
  if (extra) puts(extra);
  fflush(stdout);
}

/* Computes one request; answers it (and writes `extra` after the answer). */
static void serve(mode m, const char *run, const char *req, const char *resp, const char *extra) {
  mt_golden_file *f = NULL;
  mt_error err = {0};
  mt_call call = {0};
  mt_status st = mt_golden_open(req, &f, &err);
  if (st == MT_OK && f->n_cases != 1)
    st = mt_err(&err, MT_INVALID_ARGUMENT, "%s: %d cases, a request holds one", req, f->n_cases);
  mt_golden_case *c = st == MT_OK ? &f->cases[0] : NULL;
  if (st == MT_OK) st = mt_golden_load_inputs(f, c, &err);
  if (st == MT_OK && c->op == MT_OP__NONE)
    st = mt_err(&err, MT_NOT_SUPPORTED, "op %s is not in this fixture's op table", c->op_name);
  if (st == MT_OK) {
    call.host = mt_host_default();
    call.op = c->op;
    call.n_in = c->backward ? c->n_fwd_in : c->n_in;
    call.in = (const mt_tensor *const *)c->in;
    call.kw = &c->kw;
    if (c->backward) { /* a gradient request: the upstream gradients follow the inputs */
      call.n_grad_out = c->n_grad_out;
      call.grad_out = call.in + c->n_fwd_in;
    }
    st = mt_dispatch_profile(mt_backend_cpu(), c->profile, &call, &err);
    if (st != MT_OK) call.n_out = 0;
  }
  if (st == MT_OK) {
    int lie = m == LIE || (m == LIE_UNDER_POISON && strcmp(run, "golden") != 0);
    for (int k = 0; lie && k < call.n_out; k++)
      if (call.out[k] && perturb(call.out[k])) break;
    mt_error werr = {0};
    if (m == NO_RESPONSE_FILE) {
      fprintf(stderr, "fixture: answering OK without writing %s\n", resp);
      answer("OK", NULL, extra);
    } else if (m == BAD_OUTPUT) {
      if (write_bad_output(resp) != 0) fprintf(stderr, "fixture: cannot write %s\n", resp);
      answer("OK", NULL, extra);
    } else if ((c->backward ? mt_golden_write_grads : mt_golden_write_outputs)(
                   resp, call.n_out, (const mt_tensor *const *)call.out, &werr) != MT_OK) {
      fprintf(stderr, "fixture: %s\n", werr.msg);
      answer("IO_ERROR", werr.msg, extra);
    } else {
      answer("OK", NULL, extra);
    }
  } else {
    answer(mt_status_name(st), err.msg[0] ? err.msg : mt_status_message(st), extra);
  }
  for (int k = 0; k < call.n_out; k++) mt_tensor_free(call.out[k]);
  mt_golden_close(f);
}

int main(int argc, char **argv) {
  mode m = HONEST;
  long at = 0;
  int found = 0;
  if (argc != 2 && argc != 3) return usage();
  for (size_t k = 0; k < sizeof modes / sizeof modes[0] && !found; k++) {
    size_t n = strlen(modes[k].name);
    if (strncmp(argv[1], modes[k].name, n) != 0) continue;
    if (!modes[k].at && argv[1][n] == 0) found = 1;
    if (modes[k].at && argv[1][n] == '-') {
      char *end = NULL;
      at = strtol(argv[1] + n + 1, &end, 10);
      found = at > 0 && *end == 0;
    }
    m = modes[k].m;
  }
  if (!found) return usage();
  const char *dir = getenv("MTCS_ADAPTER_DIR");
  fprintf(stderr, "fixture %s: started (pid %d, MTCS_ADAPTER_DIR %s)\n", argv[1], (int)getpid(),
          dir ? dir : "unset");
  if (m == DIE_AT_START || (m == CRASH_FOR_GOOD_AT && misbehaved(0))) {
    fprintf(stderr, "fixture: exiting before the hello\n");
    return 3;
  }
  char profiles[512] = "\"torch\", \"numpy_ma\"";
  if (argc == 3) { /* "a,b" -> "\"a\", \"b\"" */
    size_t n = 0;
    for (const char *p = argv[2]; *p && n + 8 < sizeof profiles; p++) {
      if (p == argv[2]) profiles[n++] = '"';
      if (*p == ',') {
        memcpy(profiles + n, "\", \"", 4);
        n += 4;
      } else {
        profiles[n++] = *p;
      }
    }
    profiles[n++] = '"';
    profiles[n] = 0;
  }
  H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
  char *line = NULL;
  size_t cap = 0;
  ssize_t len = getline(&line, &cap, stdin);
  if (len <= 0) {
    free(line);
    return 0;
  }
  mt_json_object o;
  char why[256];
  if (mt_json_parse_flat(line, (size_t)len, &o, why, sizeof why) != 0) {
    fprintf(stderr, "fixture: mtcs's hello is not JSON: %s\n", why);
    free(line);
    return 4;
  }
  const mt_json_field *proto = mt_json_get(&o, "protocol");
  if (!proto || proto->type != MT_JSON_NUMBER || proto->num != 1)
    fprintf(stderr, "fixture: mtcs speaks another protocol than 1\n");
  mt_json_object_free(&o);
  if (m == SILENT_HELLO) {
    fprintf(stderr, "fixture: not saying hello\n");
    for (;;) pause();
  }
  printf(
      "{\"protocol\": %d, \"name\": \"mtcs-fixture\", \"version\": \"1.0-%s\", "
      "\"profiles\": [%s], \"backward\": true}\n",
      m == WRONG_PROTOCOL ? 2 : 1, argv[1], profiles);
  fflush(stdout);
  for (long n = 1; (len = getline(&line, &cap, stdin)) > 0; n++) {
    if (mt_json_parse_flat(line, (size_t)len, &o, why, sizeof why) != 0) {
      fprintf(stderr, "fixture: request %ld is not JSON: %s\n", n, why);
      answer("INVALID_ARGUMENT", "the request line is not JSON", NULL);
      continue;
    }
    const char *id = mt_json_get_str(&o, "case"), *run = mt_json_get_str(&o, "run");
    const char *req = mt_json_get_str(&o, "request"), *resp = mt_json_get_str(&o, "response");
    if (!id || !run || !req || !resp) {
      fprintf(stderr, "fixture: request %ld lacks case, run, request or response\n", n);
      answer("INVALID_ARGUMENT", "the request lacks a field", NULL);
    } else if (n == at && !misbehaved(1)) {
      fprintf(stderr, "fixture: misbehaving on request %ld (%s, %s) as told: %s\n", n, id, run,
              argv[1]);
      if (m == CRASH_AT || m == CRASH_FOR_GOOD_AT) abort();
      if (m == HANG_AT)
        for (;;) pause();
      if (m == FLOOD_AT) { /* more than the protocol's 64 KiB: mtcs stops reading and kills */
        for (int k = 0; k < 100000; k++) putchar('x');
        putchar('\n');
        fflush(stdout);
      } else if (m == CHATTY_AT) {
        serve(m, run, req, resp, "{\"status\": \"OK\", \"message\": \"and one more thing\"}");
      } else {
        puts("this is not JSON");
        fflush(stdout);
      }
    } else {
      serve(m, run, req, resp, NULL);
    }
    mt_json_object_free(&o);
  }
  free(line);
  return 0;
}

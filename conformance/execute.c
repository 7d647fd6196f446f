/* execute.c - one case in this process: dispatch, judge, CALL-1 and the
 * MASK-9 poison re-runs; see execute.h. */
#include "execute.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "compare.h"
#include "poison.h"

#define setmsg mt_case_setmsg

static void free_outputs(mt_call *call) {
  if (call->n_out < 0 || call->n_out > MT_MAX_OUTPUTS) return;
  for (int k = 0; k < call->n_out; k++) call->host->free(call->out[k]);
  call->n_out = 0;
}

static void fail_rule(mt_case_result *r, const char *rule) {
  r->status = MT_CS_FAIL;
  snprintf(r->rule, sizeof r->rule, "%s", rule);
}

static const char *const level_names[MT_LEVEL__COUNT] = {
#define MT_X(name) #name,
    MT_LEVELS(MT_X)
#undef MT_X
};

const char *mt_level_name(mt_level l) {
  return (unsigned)l < MT_LEVEL__COUNT ? level_names[l] : "?";
}

int mt_level_from_name(const char *name, mt_level *out) {
  for (int l = 0; name && l < MT_LEVEL__COUNT; l++)
    if (strcmp(level_names[l], name) == 0) {
      *out = (mt_level)l;
      return 0;
    }
  return -1;
}

const char *mt_level_list(void) {
  return "semantic, strict";
}

int mt_case_checks_masked_out(const mt_golden_case *c, mt_level l) {
  return c->check_masked_out && l == MT_LEVEL_strict;
}

/* ---- judging: the expected version's result, or another recorded one ---------------- */

const char *mt_case_base_version(const mt_golden_case *c) {
  return c->file_torch_version && c->file_torch_version[0] ? c->file_torch_version : "?";
}

/* One recorded result of a case: the base (outputs / expect=error) or a
 * variant (outputs@label, error@label). */
typedef struct expectation {
  const char *label; /* NULL: the base */
  int is_error;
  const char *error_class;
  int n_out;
  mt_tensor *const *out;
} expectation;

#define MT_MAX_EXPECTATIONS (1 + 2 * MT_GOLDEN_MAX_VARIANTS)

/* Every recorded result of c, the base first; returns the count. */
static int expectations(const mt_golden_case *c, expectation *e) {
  int n = 0;
  e[n++] = (expectation){NULL, c->expect_error, c->error_class, c->n_out,
                         (mt_tensor *const *)c->out};
  for (int k = 0; k < c->n_variants && k < MT_GOLDEN_MAX_VARIANTS; k++)
    e[n++] = (expectation){c->variants[k].label, 0, NULL, c->variants[k].n_out,
                           (mt_tensor *const *)c->variants[k].out};
  for (int k = 0; k < c->n_error_variants && k < MT_GOLDEN_MAX_VARIANTS; k++)
    e[n++] = (expectation){c->error_variants[k].label, 1, c->error_variants[k].error_class, 0,
                           NULL};
  return n;
}

/* Index of the expectation of torch version v (NULL: the file's own). */
static int expected_index(const mt_golden_case *c, const expectation *e, int n, const char *v) {
  if (!v) return 0;
  for (int k = 1; k < n; k++)
    if (!strcmp(e[k].label + 6, v)) return k; /* label = "torch-" version */
  return 0;
}

/* "outputs@torch-1.13.1 (torch 1.13.1)", "outputs (torch 2.15.0, the file's)" */
static void describe(const mt_golden_case *c, const expectation *e, char *buf, size_t len) {
  if (!e->label)
    snprintf(buf, len, "%s (torch %s, the file's version)", e->is_error ? "the error" : "outputs",
             mt_case_base_version(c));
  else
    snprintf(buf, len, "%s@%s (torch %s)", e->is_error ? "error" : "outputs", e->label,
             e->label + 6);
}

/* Whether the implementation's result (st, call) is e's: 1 yes, 0 no,
 * -1 the comparison could not be done (err). why: the first difference. */
static int matches(const expectation *e, mt_status st, const mt_call *call,
                   const mt_compare_opts *co, char *why, size_t len, mt_error *err) {
  int equal = 0;
  if (e->is_error) {
    if (st == MT_OK)
      snprintf(why, len, "expected error %s, got OK", e->error_class);
    else if (strcmp(mt_status_name(st), e->error_class) != 0)
      snprintf(why, len, "expected error %s, got %s", e->error_class, mt_status_name(st));
    else
      return 1;
    return 0;
  }
  if (st != MT_OK) {
    snprintf(why, len, "expected outputs, got %s", mt_status_name(st));
    return 0;
  }
  if (mt_compare_outputs(e->n_out, e->out, call->n_out, (mt_tensor *const *)call->out, co, &equal,
                         why, len, err) != MT_OK)
    return -1;
  return equal;
}

/* Judges the implementation's status st and outputs (call, when st is OK;
 * err its message otherwise) against torch version o->torch_version. */
static void judge(const mt_golden_case *c, mt_status st, const mt_error *kerr,
                  const mt_call *call, const mt_exec_opts *o, mt_case_result *r) {
  expectation e[MT_MAX_EXPECTATIONS];
  int n = expectations(c, e);
  int t = expected_index(c, e, n, o ? o->torch_version : NULL);
  mt_compare_opts co = {c->tolerance, mt_case_checks_masked_out(c, o ? o->level : MT_LEVEL_semantic),
                        c->check_structure, c->backward ? "grad" : NULL};
  mt_error err = {0};
  char why[1024] = "", vwhy[1024], what[256], other[256];
  const char *torch = c->torch_error ? c->torch_error : "?";
  if (st == MT_NOT_SUPPORTED) {
    r->status = MT_CS_NOT_SUPPORTED;
    setmsg(r, "%s", kerr->msg);
    return;
  }
  int m = matches(&e[t], st, call, &co, why, sizeof why, &err);
  if (m < 0) {
    r->status = MT_CS_ERROR;
    setmsg(r, "comparison could not be done: %s", err.msg);
    return;
  }
  if (m) {
    r->status = MT_CS_PASS;
    if (e[t].is_error) setmsg(r, "%s as expected: %s", e[t].error_class, kerr->msg);
    return;
  }
  describe(c, &e[t], what, sizeof what);
  for (int k = 0; k < n; k++) {
    if (k == t || matches(&e[k], st, call, &co, vwhy, sizeof vwhy, &err) != 1) continue;
    describe(c, &e[k], other, sizeof other);
    if (o && o->exact_version) {
      r->status = MT_CS_FAIL;
      setmsg(r, "matches %s, not %s, the expectation of torch %s (--exact-version): %s", other,
             what, e[t].label ? e[t].label + 6 : mt_case_base_version(c), why);
      return;
    }
    r->status = MT_CS_EXPECTED_DIVERGENCE;
    if (e[k].label && !e[t].label) /* the message older runners gave */
      setmsg(r, "matches %s; differs from outputs: %s", other, why);
    else
      setmsg(r, "matches %s; differs from %s, the expectation of torch %s: %s", other, what,
             e[t].label ? e[t].label + 6 : mt_case_base_version(c), why);
    return;
  }
  if (e[t].is_error) {
    r->status = MT_CS_FAIL;
    if (st == MT_OK)
      setmsg(r, "expected error %s, got OK (%s%s)", e[t].error_class,
             e[t].label ? "recorded as " : "torch raised ", e[t].label ? what : torch);
    else
      setmsg(r, "expected error %s, got %s: %s (%s%s)", e[t].error_class, mt_status_name(st),
             kerr->msg, e[t].label ? "recorded as " : "torch raised ", e[t].label ? what : torch);
  } else if (st != MT_OK) {
    r->status = MT_CS_ERROR;
    setmsg(r, "the implementation returned %s: %s", mt_status_name(st), kerr->msg);
  } else {
    r->status = MT_CS_FAIL;
    setmsg(r, "%s%s", why, n > 1 ? " (no outputs@torch-* variant matches either)" : "");
  }
}

/* ---- CALL-1: inputs unchanged ------------------------------------------------ */

/* Bytes of element i of a buffer of dtype dt. */
static const void *elem(const void *buf, mt_dtype dt, int64_t i) {
  return (const char *)buf + (size_t)i * mt_dtype_size(dt);
}

/* Whether `now` holds the same bits as `was` (a contiguous deep copy of the
 * same tensor before the call); `where` names the first difference. */
static int same_bits(const mt_tensor *was, const mt_tensor *now, char *where, size_t len) {
  size_t es = mt_dtype_size(was->dtype);
  switch (was->kind) {
    case MT_KIND_MASKED:
      if (!same_bits(was->data, now->data, where, len)) {
        char sub[192];
        snprintf(sub, sizeof sub, "%s", where);
        snprintf(where, len, "data %s", sub);
        return 0;
      }
      if (!same_bits(was->mask, now->mask, where, len)) {
        char sub[192];
        snprintf(sub, sizeof sub, "%s", where);
        snprintf(where, len, "mask %s", sub);
        return 0;
      }
      return 1;
    case MT_KIND_DENSE:
    case MT_KIND_SCALAR: {
      int64_t n = mt_numel(was);
      for (int64_t i = 0; i < n; i++) {
        const void *a = elem(was->values, was->dtype, i);
        const void *b = elem(now->values, now->dtype,
                             now->kind == MT_KIND_DENSE ? mt_dense_offset(now, i) : i);
        if (memcmp(a, b, es) != 0) {
          snprintf(where, len, "element %" PRId64 " (was %.9g, now %.9g)", i,
                   mt_get_f64(a, was->dtype, 0), mt_get_f64(b, was->dtype, 0));
          return 0;
        }
      }
      return 1;
    }
    case MT_KIND_COO:
      if (memcmp(was->indices, now->indices, (size_t)(was->sparse_dim * was->nnz) * 8) != 0) {
        snprintf(where, len, "indices");
        return 0;
      }
      if (memcmp(was->values, now->values, (size_t)(was->nnz * mt_coo_row_numel(was)) * es)) {
        snprintf(where, len, "values");
        return 0;
      }
      return 1;
    case MT_KIND_CSR:
    case MT_KIND_CSC:
    case MT_KIND_BSR:
    case MT_KIND_BSC: {
      mt_cgeom g;
      if (!mt_cgeom_of(was, &g)) return 1;
      if (memcmp(was->crow_indices, now->crow_indices, (size_t)(g.batches * (g.ncomp + 1)) * 8) ||
          memcmp(was->col_indices, now->col_indices, (size_t)(g.batches * was->nnz) * 8)) {
        snprintf(where, len, "indices");
        return 0;
      }
      if (memcmp(was->values, now->values, (size_t)(g.batches * was->nnz * g.entry) * es)) {
        snprintf(where, len, "values");
        return 0;
      }
      return 1;
    }
    default:
      return 1;
  }
}

/* ---- CALL-1: no shared memory ---------------------------------------------------- */

typedef struct span {
  const char *lo, *hi; /* [lo, hi) */
  const char *what;
} span;

#define MT_MAX_SPANS 16

static void add_span(span *s, int *n, const void *p, int64_t bytes, const char *what) {
  if (!p || bytes <= 0 || *n >= MT_MAX_SPANS) return;
  s[*n].lo = p;
  s[*n].hi = (const char *)p + bytes;
  s[(*n)++].what = what;
}

/* The memory a tensor view covers. */
static void spans_of(const mt_tensor *t, span *s, int *n) {
  size_t es = mt_dtype_size(t->dtype);
  switch (t->kind) {
    case MT_KIND_MASKED:
      spans_of(t->data, s, n);
      spans_of(t->mask, s, n);
      break;
    case MT_KIND_DENSE: {
      int64_t numel = mt_numel(t), extent = numel > 0 ? 1 : 0;
      for (int d = 0; d < t->ndim && numel > 0; d++) extent += (t->shape[d] - 1) * t->strides[d];
      add_span(s, n, t->values, extent * (int64_t)es, "values");
      break;
    }
    case MT_KIND_SCALAR: add_span(s, n, t->values, (int64_t)es, "value"); break;
    case MT_KIND_COO:
      add_span(s, n, t->indices, (int64_t)t->sparse_dim * t->nnz * 8, "indices");
      add_span(s, n, t->values, t->nnz * mt_coo_row_numel(t) * (int64_t)es, "values");
      break;
    case MT_KIND_CSR:
    case MT_KIND_CSC:
    case MT_KIND_BSR:
    case MT_KIND_BSC: {
      mt_cgeom g;
      if (!mt_cgeom_of(t, &g)) break;
      add_span(s, n, t->crow_indices, g.batches * (g.ncomp + 1) * 8, mt_compressed_name(t->kind));
      add_span(s, n, t->col_indices, g.batches * t->nnz * 8, mt_plain_name(t->kind));
      add_span(s, n, t->values, g.batches * t->nnz * g.entry * (int64_t)es, "values");
      break;
    }
    default: break;
  }
}

static int overlap(const mt_tensor *a, const mt_tensor *b, const char **wa, const char **wb) {
  span sa[MT_MAX_SPANS], sb[MT_MAX_SPANS];
  int na = 0, nb = 0;
  if (a == b) {
    *wa = *wb = "tensor";
    return 1;
  }
  spans_of(a, sa, &na);
  spans_of(b, sb, &nb);
  for (int i = 0; i < na; i++)
    for (int j = 0; j < nb; j++)
      if (sa[i].lo < sb[j].hi && sb[j].lo < sa[i].hi) {
        *wa = sa[i].what;
        *wb = sb[j].what;
        return 1;
      }
  return 0;
}

/* Whether output k shares memory with an input or another output. */
static int output_aliases(const mt_golden_case *c, const mt_call *call, int k) {
  const char *wa, *wb;
  for (int j = 0; j < c->n_in; j++)
    if (overlap(call->out[k], c->in[j], &wa, &wb)) return 1;
  for (int j = 0; j < call->n_out; j++)
    if (j != k && call->out[j] && overlap(call->out[k], call->out[j], &wa, &wb)) return 1;
  return 0;
}

/* Frees the outputs that share no memory (the others belong to an input or
 * to another output: freeing them would be a double free). */
static void free_unaliased_outputs(const mt_golden_case *c, mt_call *call) {
  int alias[MT_MAX_OUTPUTS]; /* decided for all before any is freed */
  for (int k = 0; k < call->n_out; k++) alias[k] = call->out[k] && output_aliases(c, call, k);
  for (int k = 0; k < call->n_out; k++)
    if (!alias[k]) call->host->free(call->out[k]);
  call->n_out = 0;
}

/* CALL-1 after a call: 0 when kept, else r is the FAIL. `snap` holds deep
 * copies of the inputs taken before the call. */
static int call_rule_broken(const mt_golden_case *c, mt_tensor *const *snap, const mt_call *call,
                            int outputs_valid, mt_case_result *r) {
  char where[256];
  for (int k = 0; k < c->n_in; k++) {
    if (!snap[k] || same_bits(snap[k], c->in[k], where, sizeof where)) continue;
    fail_rule(r, MT_RULE_CALL);
    setmsg(r, "the implementation modified input %d (%s): inputs are read-only (CALL-1)", k,
           where);
    return 1;
  }
  for (int k = 0; outputs_valid && k < call->n_out; k++) {
    const char *wa, *wb;
    if (!call->out[k]) continue;
    for (int j = 0; j < c->n_in; j++) {
      if (!overlap(call->out[k], c->in[j], &wa, &wb)) continue;
      fail_rule(r, MT_RULE_CALL);
      setmsg(r, "output %d (%s) shares memory with input %d (%s): outputs must be new tensors "
                "(CALL-1)", k, wa, j, wb);
      return 1;
    }
    for (int j = 0; j < k; j++) {
      if (!call->out[j] || !overlap(call->out[k], call->out[j], &wa, &wb)) continue;
      fail_rule(r, MT_RULE_CALL);
      setmsg(r, "output %d (%s) shares memory with output %d (%s) (CALL-1)", k, wa, j, wb);
      return 1;
    }
  }
  return 0;
}

/* ---- the call: a kernel, or an invoker ---------------------------------------------- */

/* c's call on inputs in[0..c->n_in-1] (c's own or poisoned copies): a
 * gradient case's call holds the forward inputs as in/n_in and the
 * upstream gradients that follow them as grad_out (golden_io.h). */
static void setup_call(const mt_golden_case *c, const mt_tensor *const *in, mt_call *call) {
  memset(call, 0, sizeof *call);
  call->host = mt_host_default();
  call->op = c->op;
  call->n_in = c->backward ? c->n_fwd_in : c->n_in;
  call->in = in;
  call->kw = &c->kw;
  if (c->backward) {
    call->n_grad_out = c->n_grad_out;
    call->grad_out = in + c->n_fwd_in;
  }
}

static mt_status invoke(const mt_impl *impl, const mt_exec_opts *o, const mt_golden_case *c,
                        const char *run, mt_call *call, mt_case_status *lost, mt_case_result *r,
                        mt_error *err) {
  *lost = MT_CS_PASS;
  mt_status st = o && o->invoker
                     ? o->invoker->invoke(o->invoker->ctx, c, run, call, lost, err)
                     : mt_dispatch_profile(impl, c->profile, call, err);
  if (st == MT_DEVICE_ERROR) r->device_error = 1; /* the worker retires after this case */
  return st;
}

/* ---- MASK-9: poison re-runs ------------------------------------------------------ */

/* The mask input of plain input k (the case's input_masks), or NULL. */
static const mt_tensor *mask_of(const mt_golden_case *c, int k) {
  int j = k < MT_GOLDEN_MAX_INPUTS ? c->input_mask_of[k] - 1 : -1;
  return j >= 0 && j != k && j < c->n_in ? c->in[j] : NULL;
}

static int poisonable(const mt_golden_case *c, int k) {
  const mt_tensor *m = mask_of(c, k);
  return m ? mt_poison_applies_where(c->in[k], m) : mt_poison_applies(c->in[k]);
}

int mt_case_has_poisonable_input(const mt_golden_case *c) {
  for (int k = 0; k < c->n_in; k++)
    if (poisonable(c, k)) return 1;
  return 0;
}

/* Re-runs c with poison p in every reachable masked-out input element and
 * compares with the first run (first_st; first: its outputs when OK). */
static mt_status poison_run(const mt_impl *impl, const mt_exec_opts *o, const mt_golden_case *c,
                            mt_poison p, mt_status first_st, const mt_call *first,
                            mt_case_result *r, mt_error *err) {
  mt_status st = MT_OK;
  mt_tensor *pin[MT_GOLDEN_MAX_INPUTS] = {0};
  mt_call call = {0};
  mt_error kerr = {0};
  uint64_t seed = mt_poison_seed(c->id);
  for (int k = 0; k < c->n_in; k++) {
    if (!poisonable(c, k)) continue;
    const mt_tensor *m = mask_of(c, k);
    st = m ? mt_poison_copy_where(c->in[k], m, p, seed, &pin[k], err)
           : mt_poison_copy(c->in[k], p, seed, &pin[k], err);
    if (st != MT_OK) goto out;
  }
  const mt_tensor *in[MT_GOLDEN_MAX_INPUTS];
  for (int k = 0; k < c->n_in; k++) in[k] = pin[k] ? pin[k] : c->in[k];
  setup_call(c, in, &call);
  const char *label = mt_poison_label(p);
  char run[32];
  mt_case_status lost;
  snprintf(run, sizeof run, "poison:%s", label);
  mt_status pst = invoke(impl, o, c, run, &call, &lost, r, &kerr);
  if (lost != MT_CS_PASS) {
    r->status = lost;
    r->rule[0] = 0;
    setmsg(r, "poison re-run %s (masked-out input data = %s): %s", run, label, kerr.msg);
    goto out;
  }
  if (pst != first_st) {
    fail_rule(r, MT_RULE_POISON);
    setmsg(r, "poison invariance (MASK-9): with masked-out input data = %s the implementation "
              "returned %s%s%s, on the golden inputs %s",
           label, mt_status_name(pst), pst != MT_OK ? ": " : "", pst != MT_OK ? kerr.msg : "",
           mt_status_name(first_st));
  } else if (pst == MT_OK) {
    mt_compare_opts co = {c->tolerance, 0, c->check_structure, c->backward ? "grad" : NULL};
    char why[1024] = "";
    int equal = 0;
    if (call.n_out < 0 || call.n_out > MT_MAX_OUTPUTS) {
      fail_rule(r, MT_RULE_POISON);
      setmsg(r, "poison invariance (MASK-9): with masked-out input data = %s the kernel "
                "returned n_out = %d", label, call.n_out);
      call.n_out = 0;
    } else if ((st = mt_compare_outputs(first->n_out, (mt_tensor *const *)first->out,
                                        call.n_out, (mt_tensor *const *)call.out, &co, &equal,
                                        why, sizeof why, err)) != MT_OK) {
      mt_err_prefix(err, "poison run %s", label);
    } else if (!equal) {
      fail_rule(r, MT_RULE_POISON);
      setmsg(r, "poison invariance (MASK-9): with masked-out input data = %s, %s (expected: "
                "this implementation's result on the golden inputs)", label, why);
    }
  }
  if (pst == MT_OK) free_outputs(&call);
out:
  for (int k = 0; k < c->n_in; k++) mt_tensor_free(pin[k]);
  return st;
}

/* ---- the case ------------------------------------------------------------------------ */

void mt_case_execute(const mt_impl *impl, const mt_golden_case *c, const mt_exec_opts *o,
                     mt_case_result *r) {
  memset(r, 0, sizeof *r);
  mt_error err = {0};
  mt_call call = {0};
  mt_tensor *snap[MT_GOLDEN_MAX_INPUTS] = {0};
  double t0 = mt__now_s();
  for (int k = 0; k < c->n_in && k < MT_GOLDEN_MAX_INPUTS; k++)
    if (mt_tensor_clone(c->in[k], &snap[k], &err) != MT_OK) {
      r->status = MT_CS_ERROR;
      setmsg(r, "the runner could not copy input %d: %s", k, err.msg);
      goto out;
    }
  setup_call(c, (const mt_tensor *const *)c->in, &call);
  mt_case_status lost;
  mt_status st = invoke(impl, o, c, "golden", &call, &lost, r, &err);
  if (lost != MT_CS_PASS) { /* no answer: the case takes the invoker's status, unjudged */
    r->status = lost;
    setmsg(r, "%s", err.msg);
    goto out;
  }
  if (st != MT_OK && !err.msg[0]) snprintf(err.msg, sizeof err.msg, "%s", mt_status_message(st));
  int n_out_ok = call.n_out >= 0 && call.n_out <= MT_MAX_OUTPUTS;
  if (call_rule_broken(c, snap, &call, st == MT_OK && n_out_ok, r)) {
    /* judged: CALL-1 */
  } else if (st == MT_OK && !n_out_ok) {
    r->status = MT_CS_FAIL;
    setmsg(r, "the kernel returned OK with n_out = %d (0..%d allowed)", call.n_out, MT_MAX_OUTPUTS);
  } else {
    judge(c, st, &err, &call, o, r);
  }
  int passed = r->status == MT_CS_PASS || r->status == MT_CS_EXPECTED_DIVERGENCE;
  int runs = o ? o->poison_runs : 0;
  for (int p = 0; passed && p < runs && p < MT_POISON__COUNT; p++) {
    mt_error perr = {0};
    if (p == 0 && !mt_case_has_poisonable_input(c)) break;
    if (poison_run(impl, o, c, (mt_poison)p, st, &call, r, &perr) != MT_OK) {
      r->status = MT_CS_ERROR;
      setmsg(r, "the runner could not do the poison re-run: %s", perr.msg);
    }
    passed = r->status == MT_CS_PASS || r->status == MT_CS_EXPECTED_DIVERGENCE;
  }
  if (st == MT_OK && n_out_ok) free_unaliased_outputs(c, &call);
out:
  for (int k = 0; k < c->n_in && k < MT_GOLDEN_MAX_INPUTS; k++) mt_tensor_free(snap[k]);
  r->seconds = mt__now_s() - t0;
}

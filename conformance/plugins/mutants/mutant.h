/* mutant.h - mutant plugins: the reference CPU backend with one rule broken
 * on purpose, the way a real library plausibly gets it wrong (often the
 * numpy.ma way). tests/mutants.cmake checks that `mtcs run` fails each one,
 * and only on cases that blame the rule it breaks (or MASK-9, the runner's
 * poison invariance, for a mutant that lets masked-out data through; CALL-1
 * mutants are caught by the runner's own CALL-1 check): proof that the
 * suite catches the mistake and blames the right rule.
 *
 * A mutant file starts with a comment: the rule it breaks, how, and which
 * library does or could do that. It defines its broken kernels, then
 *   static const mt_kernel_fn kernels[MT_OP__END] = {
 *   #include "cpu_slots.h"          every op -> mt_cpu_<op>
 *     [MT_OP_log] = mutant_log,     the override (later initializer wins)
 *   };
 *   MT_MUTANT_ENTRY("name", kernels)
 * and gets one line `name=RULE` in the MUTANTS table of tests/mutants.cmake.
 * The test runs a mutant only on the cases of the ops it overrides, read
 * from its `[MT_OP_<op>] =` lines: name every override that way.
 * Break ONE rule: when an op's cases carry different rules by form (RED-1
 * all-reduce vs RED-2 over dims, MASK-6 masked/masked vs MASK-7 with a
 * plain operand), break one form only.
 * Unlike plugins/example.c, mutants link libmtcore (they reuse its kernels:
 * wrap mt_cpu_<op> and fix up its result, or rerun it on changed inputs or
 * kwargs with the helpers below). */
#ifndef MT_MUTANT_H
#define MT_MUTANT_H
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cpu/cpu.h"

/* The reference tables: every forward kernel (cpu_slots.h) and every
 * backward kernel of impl/cpu/grad_ops.def (grad_slots.h). */
__attribute__((unused)) static const mt_kernel_fn mt__mutant_ref_forward[MT_OP__END] = {
#include "cpu_slots.h"
};
__attribute__((unused)) static const mt_kernel_fn mt__mutant_ref_backward[MT_OP__END] = {
#include "grad_slots.h"
};

/* A mutant of forward kernels (its backward kernels are the reference's),
 * or, MT_MUTANT_GRAD_ENTRY, of backward kernels (gradient cases, GRAD-*;
 * its forward kernels are the reference's). */
#define MT_MUTANT_ENTRY_BOTH(NAME, KERNELS, BACKWARD)                                      \
  static const mt_impl mutant_impl = {MT_ABI_VERSION, sizeof(mt_impl), "mutant:" NAME,    \
                                      NULL, NULL, MT_OP__END, KERNELS, 0, NULL,          \
                                      MT_OP__END, BACKWARD};                              \
  const mt_impl *mt_plugin_entry(uint32_t abi_version);                                   \
  const mt_impl *mt_plugin_entry(uint32_t abi_version) {                                  \
    return abi_version == MT_ABI_VERSION ? &mutant_impl : NULL;                           \
  }
#define MT_MUTANT_ENTRY(NAME, KERNELS) MT_MUTANT_ENTRY_BOTH(NAME, KERNELS, mt__mutant_ref_backward)
#define MT_MUTANT_GRAD_ENTRY(NAME, BACKWARD) \
  MT_MUTANT_ENTRY_BOTH(NAME, mt__mutant_ref_forward, BACKWARD)

/* Elementwise access to a masked output with dense storage; 0 if it is not. */
static inline int mt__mutant_dense_masked(const mt_tensor *t) {
  return t && t->kind == MT_KIND_MASKED && t->data->kind == MT_KIND_DENSE &&
         t->mask->kind == MT_KIND_DENSE && mt_is_contiguous(t->data) && mt_is_contiguous(t->mask);
}

/* The call again with input i replaced by t (the caller's inputs restored
 * afterwards); kernels never keep a pointer to their inputs. */
static inline mt_status mt__mutant_call_in(mt_call *call, mt_error *err, mt_kernel_fn real, int i,
                                           const mt_tensor *t) {
  const mt_tensor *in[8];
  if (call->n_in > 8 || i >= call->n_in) return real(call, err);
  for (int k = 0; k < call->n_in; k++) in[k] = call->in[k];
  in[i] = t;
  const mt_tensor *const *orig = call->in;
  call->in = in;
  mt_status st = real(call, err);
  call->in = orig;
  return st;
}

/* The call again with kwarg `name` replaced by a FLOAT (INT/BOOL read the
 * same through mt_kw_float/mt_kw_int) of value v, added when absent; with
 * drop != 0 the kwarg is removed instead. */
static inline mt_status mt__mutant_call_kw(mt_call *call, mt_error *err, mt_kernel_fn real,
                                           const char *name, double v, int drop) {
  mt_kwarg items[32];
  mt_kwargs kw = {0, items};
  const mt_kwargs *orig = call->kw;
  int n_orig = orig ? orig->n : 0;
  if (n_orig >= 31) return real(call, err);
  const mt_kwarg *old = mt_kw_find(orig, name);
  for (int k = 0; k < n_orig; k++)
    if (strcmp(orig->items[k].name, name) != 0) items[kw.n++] = orig->items[k];
  if (!drop) {
    mt_kwarg a = {.name = name, .type = MT_KW_FLOAT, .i = (int64_t)v, .f = v};
    if (old && (old->type == MT_KW_INT || old->type == MT_KW_BOOL)) a.type = old->type;
    items[kw.n++] = a;
  }
  call->kw = &kw;
  mt_status st = real(call, err);
  call->kw = orig;
  return st;
}

/* Reductions computed from a transformed input: runs `real` on the masked
 * input 0 as given (A), and on a copy whose every element (value, mask) went
 * through tf (B); the result has A's mask, B's data where A's mask is true
 * and A's data (torch's fill) elsewhere. So a mutant changes which elements
 * a reduction reads, or how, while keeping the right output mask and fills.
 * Dense-storage contiguous masked inputs only; others go to `real`. */
typedef void (*mt__mutant_tf)(double *v, uint8_t *m);
static inline mt_status mt__mutant_reduce_tf(mt_call *call, mt_error *err, mt_kernel_fn real,
                                             mt__mutant_tf tf) {
  const mt_tensor *x = call->n_in > 0 ? call->in[0] : NULL;
  if (!mt__mutant_dense_masked(x) || (x->data->dtype != MT_float32 && x->data->dtype != MT_float64))
    return real(call, err);
  const mt_host *h = call->host ? call->host : mt_host_default();
  mt_status st = real(call, err);
  if (st != MT_OK || !mt__mutant_dense_masked(call->out[0])) return st;
  mt_tensor *a = call->out[0], *d = NULL, *m = NULL;
  if ((st = mt_tensor_clone(x->data, &d, err)) != MT_OK) return st;
  if ((st = mt_tensor_clone(x->mask, &m, err)) != MT_OK) {
    mt_tensor_free(d);
    return st;
  }
  for (int64_t i = 0; i < mt_numel(x); i++) {
    double v = mt_get_f64(d->values, d->dtype, i);
    tf(&v, (uint8_t *)m->values + i);
    mt_set_f64(d->values, d->dtype, i, v);
  }
  mt_tensor view = *x;
  view.data = d;
  view.mask = m;
  view.owner = NULL;
  mt_tensor *keep[MT_MAX_OUTPUTS];
  int n_keep = call->n_out;
  for (int k = 0; k < MT_MAX_OUTPUTS; k++) keep[k] = call->out[k];
  st = mt__mutant_call_in(call, err, real, 0, &view);
  if (st == MT_OK && mt__mutant_dense_masked(call->out[0])) {
    mt_tensor *b = call->out[0];
    const uint8_t *am = a->mask->values;
    for (int64_t i = 0; i < mt_numel(a->data); i++)
      if (am[i]) mt_set_f64(a->data->values, a->data->dtype, i, mt_get_f64(b->data->values, b->data->dtype, i));
  }
  for (int k = 0; k < call->n_out; k++) h->free(call->out[k]);
  for (int k = 0; k < MT_MAX_OUTPUTS; k++) call->out[k] = keep[k];
  call->n_out = n_keep;
  mt_tensor_free(d);
  mt_tensor_free(m);
  if (st != MT_OK) { /* the transformed run failed: hand back nothing */
    for (int k = 0; k < n_keep; k++) h->free(call->out[k]);
    call->n_out = 0;
    for (int k = 0; k < MT_MAX_OUTPUTS; k++) call->out[k] = NULL;
  }
  return st;
}

/* 1 for an RED-1 form call (no `dim`, or dim=()). */
static inline int mt__mutant_all_reduce(const mt_call *call) {
  const mt_kwarg *a = mt_kw_find(call->kw, "dim");
  return !a || (a->type == MT_KW_INTS && a->n == 0);
}
/* 1 when a reduction call that returned OK was an all-reduce of a
 * dense-storage masked input x into a dense-storage masked output. */
static inline int mt__mutant_all_dense(const mt_call *call, const mt_tensor *x) {
  return mt__mutant_all_reduce(call) && mt__mutant_dense_masked(x) && call->n_out == 1 &&
         mt__mutant_dense_masked(call->out[0]) && mt_numel(call->out[0]->data) == 1;
}
/* Adagrad's clr = lr / (1 + (step - 1) * lr_decay) from the call's kwargs
 * (torch's defaults), as the reference computes it (ADA-1). */
static inline double mt__mutant_clr(const mt_call *call) {
  double lr = mt_kw_float(call->kw, "lr", 0.01), lr_decay = mt_kw_float(call->kw, "lr_decay", 0.0);
  return lr / (1.0 + (mt_kw_float(call->kw, "step", 1.0) - 1.0) * lr_decay);
}
/* v rounded to dtype d: applied after each operation, double arithmetic on
 * float32 values gives float32's results. */
static inline double mt__mutant_r(mt_dtype d, double v) { return d == MT_float32 ? (double)(float)v : v; }
#endif

/* steps_abi.c - libmtcs_steps.so: a flat C ABI over the fast Adagrad steps
 * (adagrad_step.h), for perf/cstep.py (ctypes) and perf/duel.py, which time
 * our step and a peer's (torch, FBGEMM) alternately in one process.
 *
 * Nothing here computes: every entry point checks its pointers, builds the
 * hparams (clr = lr: step 1, no lr_decay, no weight decay, not maximize,
 * ISA AUTO) and calls the mtfast kernel mtcs_bench times, the same objects
 * linked in (mtfast and mtcore are built position-independent for this).
 *
 * Return value: 0 (MT_OK) or an mt_status code; then `msg` (when not NULL
 * and msg_len > 0) holds the kernel's message, NUL-terminated and truncated
 * to msg_len. Nothing prints or aborts. No global mutable state.
 *
 * ABI version 1: the functions below with exactly these signatures. */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "adagrad_step.h"

#define MTCS_STEPS_ABI_VERSION 1

#define MT__EXPORT __attribute__((visibility("default")))

MT__EXPORT int mtcs_steps_abi_version(void) { return MTCS_STEPS_ABI_VERSION; }

/* The code path AUTO picks on this CPU: "avx512", "avx2" or "base". */
MT__EXPORT const char *mtcs_steps_isa(void) { return mt_adagrad_isa_name(MT_ADAGRAD_ISA_AUTO); }

/* Threads a step uses for `nthreads` (<= 0: all OpenMP threads; 1 without OpenMP). */
MT__EXPORT int mtcs_steps_threads(int nthreads) { return mt_adagrad_threads(nthreads); }

/* "INVALID_ARGUMENT" for 4; "?" for an unknown code. */
MT__EXPORT const char *mtcs_steps_status_name(int status) {
  return mt_status_name((mt_status)status);
}

static void hparams(mt_adagrad_hparams *hp, double lr, double eps, int nthreads) {
  *hp = (mt_adagrad_hparams){.clr = mt_adagrad_clr(lr, 0.0, 1.0), .eps = eps,
                             .weight_decay = 0.0, .maximize = 0, .nthreads = nthreads,
                             .isa = MT_ADAGRAD_ISA_AUTO};
}

/* Copies err's message to the caller's buffer; returns st. */
static int finish(mt_status st, const mt_error *err, char *msg, size_t msg_len) {
  if (msg && msg_len > 0) {
    if (st == MT_OK)
      msg[0] = '\0';
    else
      snprintf(msg, msg_len, "%s", err->msg[0] ? err->msg : mt_status_name(st));
  }
  return (int)st;
}

/* NULL pointers are refused with the argument's name (n or nnz 0 needs none). */
static mt_status need(const char *fn, const char *arg, const void *ptr, int64_t count,
                      mt_error *err) {
  if (!ptr && count > 0)
    return mt_err(err, MT_INVALID_ARGUMENT, "%s: %s is NULL with %lld elements", fn, arg,
                  (long long)count);
  return MT_OK;
}

#define MT__ABI(T, SFX)                                                                           \
  MT__EXPORT int mtcs_steps_adagrad_dense_##SFX(T *p, T *s, const T *g, int64_t n, double lr,      \
                                                 double eps, int nthreads, char *msg,             \
                                                 size_t msg_len) {                                 \
    const char *fn = "mtcs_steps_adagrad_dense_" #SFX;                                            \
    mt_error err = {0};                                                                            \
    mt_adagrad_hparams hp;                                                                         \
    mt_status st = MT_OK;                                                                          \
    if ((st = need(fn, "p", p, n, &err)) != MT_OK) goto out;                                       \
    if ((st = need(fn, "s", s, n, &err)) != MT_OK) goto out;                                       \
    if ((st = need(fn, "g", g, n, &err)) != MT_OK) goto out;                                       \
    hparams(&hp, lr, eps, nthreads);                                                               \
    st = mt_adagrad_step_dense_##SFX(p, s, g, n, &hp, &err);                                       \
  out:                                                                                             \
    return finish(st, &err, msg, msg_len);                                                         \
  }                                                                                                \
  MT__EXPORT int mtcs_steps_adagrad_coo_##SFX(T *p, T *s, const int64_t *idx, const T *vals,       \
                                               int64_t nnz, int64_t row, double lr, double eps,    \
                                               int nthreads, char *msg, size_t msg_len) {          \
    const char *fn = "mtcs_steps_adagrad_coo_" #SFX;                                              \
    mt_error err = {0};                                                                            \
    mt_adagrad_hparams hp;                                                                         \
    mt_status st = MT_OK;                                                                          \
    if ((st = need(fn, "p", p, nnz, &err)) != MT_OK) goto out;                                     \
    if ((st = need(fn, "s", s, nnz, &err)) != MT_OK) goto out;                                     \
    if ((st = need(fn, "idx", idx, nnz, &err)) != MT_OK) goto out;                                 \
    if ((st = need(fn, "vals", vals, nnz, &err)) != MT_OK) goto out;                               \
    hparams(&hp, lr, eps, nthreads);                                                               \
    st = mt_adagrad_step_coo_##SFX(p, s, idx, vals, nnz, row, &hp, &err);                          \
  out:                                                                                             \
    return finish(st, &err, msg, msg_len);                                                         \
  }                                                                                                \
  MT__EXPORT int mtcs_steps_adagrad_masked_dense_##SFX(T *p, T *s, const T *g,                     \
                                                        const uint8_t *mask, int64_t n,            \
                                                        double lr, double eps, int nthreads,       \
                                                        char *msg, size_t msg_len) {               \
    const char *fn = "mtcs_steps_adagrad_masked_dense_" #SFX;                                     \
    mt_error err = {0};                                                                            \
    mt_adagrad_hparams hp;                                                                         \
    mt_status st = MT_OK;                                                                          \
    if ((st = need(fn, "p", p, n, &err)) != MT_OK) goto out;                                       \
    if ((st = need(fn, "s", s, n, &err)) != MT_OK) goto out;                                       \
    if ((st = need(fn, "g", g, n, &err)) != MT_OK) goto out;                                       \
    if ((st = need(fn, "mask", mask, n, &err)) != MT_OK) goto out;                                 \
    hparams(&hp, lr, eps, nthreads);                                                               \
    st = mt_adagrad_step_masked_dense_##SFX(p, s, g, mask, n, &hp, &err);                          \
  out:                                                                                             \
    return finish(st, &err, msg, msg_len);                                                         \
  }                                                                                                \
  MT__EXPORT int mtcs_steps_adagrad_masked_coo_##SFX(T *p, T *s, const int64_t *idx,               \
                                                      const T *vals, int64_t nnz, double lr,       \
                                                      double eps, int nthreads, char *msg,         \
                                                      size_t msg_len) {                            \
    const char *fn = "mtcs_steps_adagrad_masked_coo_" #SFX;                                       \
    mt_error err = {0};                                                                            \
    mt_adagrad_hparams hp;                                                                         \
    mt_status st = MT_OK;                                                                          \
    if ((st = need(fn, "p", p, nnz, &err)) != MT_OK) goto out;                                     \
    if ((st = need(fn, "s", s, nnz, &err)) != MT_OK) goto out;                                     \
    if ((st = need(fn, "idx", idx, nnz, &err)) != MT_OK) goto out;                                 \
    if ((st = need(fn, "vals", vals, nnz, &err)) != MT_OK) goto out;                               \
    hparams(&hp, lr, eps, nthreads);                                                               \
    st = mt_adagrad_step_masked_coo_##SFX(p, s, idx, vals, nnz, &hp, &err);                        \
  out:                                                                                             \
    return finish(st, &err, msg, msg_len);                                                         \
  }

MT__ABI(float, f32)
MT__ABI(double, f64)

/* backend.h - resolving `--backend`: the CPU reference, the CUDA backend, or
 * a plugin shared library (spec/plugin-abi.md), with its ABI checks. */
#ifndef MT_CONF_BACKEND_H
#define MT_CONF_BACKEND_H

#include "mt_core.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct mt_backend {
  const mt_impl *impl;
  void *dl;       /* dlopen handle of a plugin, or NULL */
  char name[128]; /* "cpu", "cuda", or the plugin's name */
  /* Cases per worker process unless --batch says otherwise (session.c):
   * MT_BATCH_DEFAULT; MT_BATCH_DEVICE for cuda and cuda-emu, whose workers
   * each initialise CUDA afresh (a context costs far more than a fork). */
  int batch;
} mt_backend;

#define MT_BATCH_DEFAULT 64   /* a fork: about a millisecond; a case: tens of microseconds */
#define MT_BATCH_DEVICE 1024  /* a CUDA context: tenths of a second to seconds */
#define MT_BATCH_MAX 65536  /* --batch's limit (main.c's message says it) */

/* spec: "cpu", "cuda", or the path of a plugin shared library (holding a
 * '/' or ending in ".so"). Returns MT_OK when ready; MT_NOT_SUPPORTED when
 * the backend cannot run on this machine (the whole run is skipped; err
 * says why, e.g. "cuda backend: no CUDA device"); another status for a
 * usage error (unknown backend, a plugin that cannot be loaded or speaks
 * another ABI version). */
mt_status mt_backend_open(const char *spec, mt_backend *b, mt_error *err);
void mt_backend_close(mt_backend *b);

#ifdef __cplusplus
}
#endif
#endif /* MT_CONF_BACKEND_H */

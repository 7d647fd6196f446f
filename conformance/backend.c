/* backend.c - backends: cpu, cuda and plugins; see backend.h. */
#include "backend.h"

#include <dlfcn.h>
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

static int looks_like_path(const char *spec) {
  size_t n = strlen(spec);
  return strchr(spec, '/') != NULL || (n > 3 && strcmp(spec + n - 3, ".so") == 0);
}

static mt_status open_plugin(const char *spec, mt_backend *b, mt_error *err) {
  char path[4096];
  struct stat sb;
  snprintf(path, sizeof path, "%s%s", strchr(spec, '/') ? "" : "./", spec);
  if (stat(path, &sb) != 0)
    return mt_err(err, MT_INVALID_ARGUMENT, "plugin %s: %s", spec, strerror(errno));
  dlerror();
  if (!(b->dl = dlopen(path, RTLD_NOW | RTLD_LOCAL))) {
    const char *e = dlerror();
    return mt_err(err, MT_INVALID_ARGUMENT, "cannot load plugin %s: %s", spec, e ? e : "dlopen failed");
  }
  dlerror();
  void *sym = dlsym(b->dl, MT_PLUGIN_ENTRY);
  if (!sym) {
    const char *e = dlerror();
    return mt_err(err, MT_INVALID_ARGUMENT, "plugin %s does not export %s (%s)", spec,
                  MT_PLUGIN_ENTRY, e ? e : "symbol is NULL");
  }
  mt_plugin_entry_fn entry;
  memcpy(&entry, &sym, sizeof entry); /* object pointer -> function pointer, POSIX-style */
  const mt_impl *impl = entry(MT_ABI_VERSION);
  if (!impl)
    return mt_err(err, MT_INVALID_ARGUMENT,
                  "plugin %s: %s(%u) returned NULL: the plugin does not speak ABI version %u",
                  spec, MT_PLUGIN_ENTRY, MT_ABI_VERSION, MT_ABI_VERSION);
  if (impl->abi_version != MT_ABI_VERSION)
    return mt_err(err, MT_INVALID_ARGUMENT,
                  "plugin %s was built for ABI version %u, this mtcs speaks ABI version %u "
                  "(rebuild it against this spec/include/mt/mt.h)",
                  spec, impl->abi_version, MT_ABI_VERSION);
  size_t min = offsetof(mt_impl, kernels) + sizeof(void *);
  if (impl->struct_size < min)
    return mt_err(err, MT_INVALID_ARGUMENT,
                  "plugin %s: struct_size %u is smaller than the %zu bytes of an ABI %u mt_impl",
                  spec, impl->struct_size, min, MT_ABI_VERSION);
  if (impl->n_kernels > 0 && !impl->kernels)
    return mt_err(err, MT_INVALID_ARGUMENT, "plugin %s: n_kernels is %u but kernels is NULL", spec,
                  impl->n_kernels);
  b->impl = impl;
  if (impl->name && impl->name[0]) {
    snprintf(b->name, sizeof b->name, "%s", impl->name);
  } else {
    const char *base = strrchr(spec, '/');
    snprintf(b->name, sizeof b->name, "%s", base ? base + 1 : spec);
  }
  return MT_OK;
}

mt_status mt_backend_open(const char *spec, mt_backend *b, mt_error *err) {
  mt_status st = MT_OK;
  memset(b, 0, sizeof *b);
  b->batch = MT_BATCH_DEFAULT;
  if (!spec || !spec[0]) spec = "cpu";
  if (strcmp(spec, "cpu") == 0) {
    b->impl = mt_backend_cpu();
  } else if (strcmp(spec, "cuda") == 0) {
    if (!(b->impl = mt_backend_cuda()))
      return mt_err(err, MT_NOT_SUPPORTED, "cuda backend: mtcs was built without CUDA");
    b->batch = MT_BATCH_DEVICE;
  } else if (strcmp(spec, "cuda-emu") == 0) {
    b->impl = mt_backend_cuda_emu();
    b->batch = MT_BATCH_DEVICE; /* the cuda backend's batching, run where CI runs */
  } else if (looks_like_path(spec)) {
    if ((st = open_plugin(spec, b, err)) != MT_OK) {
      mt_backend_close(b);
      return st;
    }
  } else {
    return mt_err(err, MT_INVALID_ARGUMENT,
                  "unknown backend '%s' (expected cpu, cuda, cuda-emu or the path of a plugin .so)", spec);
  }
  if (!b->name[0]) snprintf(b->name, sizeof b->name, "%s", b->impl->name ? b->impl->name : spec);
  char why[256] = "";
  if (b->impl->unavailable && b->impl->unavailable(why, sizeof why)) {
    why[sizeof why - 1] = 0;
    st = mt_err(err, MT_NOT_SUPPORTED, "%s backend: %s", b->name, why[0] ? why : "unavailable");
    mt_backend_close(b);
    return st;
  }
  return MT_OK;
}

void mt_backend_close(mt_backend *b) {
  if (b->dl) dlclose(b->dl);
  memset(b, 0, sizeof *b);
}

/*
** sk_cuda_loader.c — finds, loads and initializes the CUDA module once
** Invariant: after the first attempt, `state` is LOADED or FAILED for good,
** and `reason` says why it failed (not built, cannot load, no driver, no device).
*/
#define _GNU_SOURCE /* dladdr */
#include "sk_cuda.h"
#include "sk_error.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { UNTRIED, LOADED, FAILED };
static int state = UNTRIED;
static char reason[1600];
static const SkCudaApi *api;

static SkMemoryPressureFn pressure_fn;
static void *pressure_ud;

void sk_set_memory_pressure_handler(SkMemoryPressureFn fn, void *ud) { pressure_fn = fn; pressure_ud = ud; }
void sk_memory_pressure(void) { if (pressure_fn) pressure_fn(pressure_ud); }

/* The module's path: SK_CUDA_MODULE when set (the emulated module of `make cuda-emu`, a
** module built elsewhere), else cuda.so in the folder of the library holding this code. */
static int module_path(char *buf, size_t n) {
  const char *env = getenv("SK_CUDA_MODULE");
  if (env && *env) return snprintf(buf, n, "%s", env) < (int)n ? 0 : -1;
  Dl_info info;
  if (!dladdr((void *)module_path, &info) || !info.dli_fname) return -1;
  const char *slash = strrchr(info.dli_fname, '/');
  size_t dir = slash ? (size_t)(slash - info.dli_fname) : 0;
  return snprintf(buf, n, "%.*s%scuda.so", (int)dir, info.dli_fname, slash ? "/" : "") < (int)n ? 0 : -1;
}

static void load(void) {
  char path[1024];
  state = FAILED;
  if (module_path(path, sizeof path)) { snprintf(reason, sizeof reason, "cannot locate sk's CUDA module"); return; }
  if (access(path, F_OK) != 0) {
    const char *env = getenv("SK_CUDA_MODULE");
    if (env && *env) snprintf(reason, sizeof reason, "SK_CUDA_MODULE names %s, which does not exist", path);
    else snprintf(reason, sizeof reason, "not built (nvcc was not found when sk was built; %s is missing)", path);
    return;
  }
  /* the module resolves sk's symbols in the core: make them global first */
  Dl_info self;
  if (dladdr((void *)load, &self)) dlopen(self.dli_fname, RTLD_NOW | RTLD_NOLOAD | RTLD_GLOBAL);
  void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!h) { snprintf(reason, sizeof reason, "cannot load %s: %s", path, dlerror()); return; }
  const SkCudaApi *(*entry)(void) = (const SkCudaApi *(*)(void))dlsym(h, "sk_cuda_module");
  const SkCudaApi *a = entry ? entry() : NULL;
  if (!a || a->version != SK_CUDA_API_VERSION) { snprintf(reason, sizeof reason, "%s is not a matching sk CUDA module", path); return; }
  if (a->init()) { snprintf(reason, sizeof reason, "%s", sk_error_message()); return; }
  api = a;
  state = LOADED;
}

const SkCudaApi *sk_cuda(void) {
  if (state == UNTRIED) load();
  if (state == LOADED) return api;
  sk_error("CUDA is not available: %s", reason);
  return NULL;
}

int sk_cuda_ready(void) {
  const SkCudaApi *a = sk_cuda();
  return a ? a->device_count() : -1;
}

int sk_cuda_is_available(void) {
  if (state == UNTRIED) load();
  return state == LOADED;
}

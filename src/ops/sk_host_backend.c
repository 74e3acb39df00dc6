/*
** sk_host_backend.c — host-memory backends: sk's allocator, memcpy copies, counters
** Each is a backend record (sk_backend.h) whose hooks' ud is its HostState,
** made here and freed by the release hook when the device type goes.
*/
#include "sk_host_backend.h"
#include "sk_backend.h"
#include "sk_error.h"

#include <stdlib.h>
#include <string.h>

typedef struct HostState {
  SkCopyObserver observe;
  void *ud;
  SkHostBackendStats stats;
} HostState;

static void *host_alloc(void *ud, size_t n, SkDevice d) {
  (void)d;
  HostState *h = ud;
  void *p = sk_cpu_alloc(n);
  if (p) h->stats.allocated += n;
  return p;
}

static void host_free(void *ud, void *p, size_t n, SkDevice d) {
  (void)d;
  HostState *h = ud;
  h->stats.allocated -= n;
  sk_cpu_free(p, n);
}

static int host_copy(HostState *h, int dir, void *dst, const void *src, size_t n) {
  if (n) memcpy(dst, src, n);
  if (dir == SK_COPY_TO_CPU) h->stats.copied_to_cpu += n;
  if (dir == SK_COPY_FROM_CPU) h->stats.copied_from_cpu += n;
  if (h->observe) h->observe(h->ud, dir, n);
  return 0;
}
static int copy_to_cpu(void *ud, void *dst, const void *src, size_t n, SkDevice d) { (void)d; return host_copy(ud, SK_COPY_TO_CPU, dst, src, n); }
static int copy_from_cpu(void *ud, void *dst, const void *src, size_t n, SkDevice d) { (void)d; return host_copy(ud, SK_COPY_FROM_CPU, dst, src, n); }
static int copy_same(void *ud, void *dst, const void *src, size_t n, SkDevice d) { (void)d; return host_copy(ud, SK_COPY_WITHIN, dst, src, n); }

int sk_host_backend_register(const char *name, int cpu_fallback, SkCopyObserver observe, void *ud, int *type_out) {
  HostState *h = calloc(1, sizeof *h);
  if (!h) return sk_error("out of memory registering backend '%s'", name);
  h->observe = observe;
  h->ud = ud;
  SkBackend b = {name,
                 {.alloc = host_alloc, .free = host_free, .copy_from_cpu = copy_from_cpu, .copy_to_cpu = copy_to_cpu,
                  .copy_same = copy_same, .release = free, .ud = h},
                 cpu_fallback ? SK_BACKEND_FALLBACK_CPU : SK_BACKEND_FALLBACK_NONE};
  if (sk_backend_register(&b, type_out)) { free(h); return -1; }
  return 0;
}

/* The state of a host backend, or NULL with an error. */
static HostState *state_of(int type) {
  const SkDeviceType *t = sk_device_type(type);
  if (!t || t->hooks.alloc != host_alloc) return sk_error("device type %d is not a host backend", type), NULL;
  return t->hooks.ud;
}

int sk_host_backend_unregister(int type) {
  HostState *h = state_of(type);
  if (!h) return -1;
  if (h->stats.allocated)
    return sk_error("backend '%s' still has %zu bytes of tensors alive", sk_device_type(type)->name, h->stats.allocated);
  return sk_backend_unregister(type);
}

int sk_host_backend_stats(int type, SkHostBackendStats *out) {
  HostState *h = state_of(type);
  if (!h) return -1;
  *out = h->stats;
  return 0;
}

/*
** sk_device.c — the device registry, parsing and the device guard
** Invariant: slot i of the registry is device type i; built-in types
** never move; custom types take the first free slot from FIRST_CUSTOM.
*/
#include "sk_device.h"
#include "sk_error.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void *cpu_alloc(void *ud, size_t n, SkDevice d) { (void)ud; (void)d; return sk_cpu_alloc(n); }
static void cpu_free(void *ud, void *p, size_t n, SkDevice d) { (void)ud; (void)d; sk_cpu_free(p, n); }
static int cpu_copy(void *ud, void *dst, const void *src, size_t n, SkDevice d) {
  (void)ud; (void)d;
  if (n) memcpy(dst, src, n);
  return 0;
}

/* The compiled-in rows: CPU's hooks are static; a backend in a module (CUDA) fills its own when it loads. */
#define SK_DEVICE_HOOKS_CPU \
  {.alloc = cpu_alloc, .free = cpu_free, .copy_from_cpu = cpu_copy, .copy_to_cpu = cpu_copy, .copy_same = cpu_copy}
#define SK_DEVICE_HOOKS_CUDA {.device_memory = 1} /* device memory, before the module loads too */
static SkDeviceType registry[SK_DEVICE_MAX_TYPES] = {
#define SK_X_DEVICE(e, name) [SK_DEVICE_##e] = {name, 1, 1, SK_DEVICE_HOOKS_##e, NULL},
  SK_COMPILED_BACKENDS(SK_X_DEVICE)
#undef SK_X_DEVICE
  [SK_DEVICE_META] = {"meta", 0, 1, {0}, NULL},
};

const SkDeviceType *sk_device_type(int type) {
  if (type < 0 || type >= SK_DEVICE_MAX_TYPES || !registry[type].registered) return NULL;
  return &registry[type];
}

int sk_device_register(const char *name, const SkDeviceHooks *hooks, int *type_out) {
  size_t len = strlen(name);
  if (len == 0 || len >= sizeof registry[0].name)
    return sk_error("backend name '%s' must have 1 to %zu characters", name, sizeof registry[0].name - 1);
  for (size_t i = 0; i < len; i++)
    if (!((name[i] >= 'a' && name[i] <= 'z') || (name[i] >= '0' && name[i] <= '9') || name[i] == '_'))
      return sk_error("backend name '%s' must use lowercase letters, digits and '_'", name);
  int free_slot = -1;
  for (int i = 0; i < SK_DEVICE_MAX_TYPES; i++) {
    if (registry[i].registered && strcmp(registry[i].name, name) == 0)
      return sk_error("backend '%s' is already registered", name);
    if (i >= SK_DEVICE_FIRST_CUSTOM && !registry[i].registered && free_slot < 0) free_slot = i;
  }
  if (free_slot < 0) return sk_error("cannot register backend '%s': all %d custom backend slots are taken",
                                     name, SK_DEVICE_MAX_TYPES - SK_DEVICE_FIRST_CUSTOM);
  SkDeviceType *t = &registry[free_slot];
  memset(t, 0, sizeof *t);
  memcpy(t->name, name, len + 1);
  t->has_data = 1;
  t->registered = 1;
  t->hooks = *hooks;
  *type_out = free_slot;
  return 0;
}

int sk_device_unregister(int type) {
  if (type < SK_DEVICE_FIRST_CUSTOM || type >= SK_DEVICE_MAX_TYPES || !registry[type].registered)
    return sk_error("device type %d is not a registered custom backend", type);
  if (registry[type].hooks.release) registry[type].hooks.release(registry[type].hooks.ud);
  memset(&registry[type], 0, sizeof registry[type]);
  return 0;
}

int sk_device_set_hooks(int type, const SkDeviceHooks *hooks) {
  if (!sk_device_type(type)) return sk_error("unknown device type %d", type);
  registry[type].hooks = *hooks;
  return 0;
}

int sk_device_set_ready(int type, int (*ready)(void)) {
  if (!sk_device_type(type)) return sk_error("unknown device type %d", type);
  registry[type].ready = ready;
  return 0;
}

int sk_device_parse(const char *s, SkDevice *out) {
  const char *colon = strchr(s, ':');
  size_t len = colon ? (size_t)(colon - s) : strlen(s);
  long index = 0;
  if (colon) {
    char *end;
    index = strtol(colon + 1, &end, 10);
    if (end == colon + 1 || *end || index < 0 || index > 1023)
      return sk_error("invalid device '%s': the index after ':' must be a non-negative integer", s);
  }
  for (int i = 0; i < SK_DEVICE_MAX_TYPES; i++) {
    if (registry[i].registered && strlen(registry[i].name) == len && strncmp(registry[i].name, s, len) == 0) {
      if (colon && i == SK_DEVICE_CPU && index != 0)
        return sk_error("invalid device '%s': cpu has only device 0", s);
      if (registry[i].ready) { /* a backend loaded on first use (CUDA) */
        int n = registry[i].ready();
        if (n < 0) return -1;
        if (index >= n)
          return sk_error("invalid device '%s': there %s %d %s device%s", s, n == 1 ? "is" : "are", n, registry[i].name,
                          n == 1 ? "" : "s");
      }
      *out = sk_device(i, (int)index);
      return 0;
    }
  }
  return sk_error("unknown device '%s' (expected cpu, cuda, cuda:N, meta or a registered backend)", s);
}

void sk_device_format(SkDevice d, char *buf, size_t n) {
  const SkDeviceType *t = sk_device_type(d.type);
  const char *name = t ? t->name : "?";
  if (d.type == SK_DEVICE_CPU || d.type == SK_DEVICE_META) snprintf(buf, n, "%s", name);
  else snprintf(buf, n, "%s:%d", name, d.index);
}

int sk_device_host_addressable_slow(SkDevice d) {
  const SkDeviceType *t = sk_device_type(d.type);
  return t && t->has_data && !t->hooks.device_memory;
}

void *sk_device_alloc(SkDevice d, size_t nbytes) {
  if (d.type == SK_DEVICE_CPU) return sk_cpu_alloc(nbytes);
  const SkDeviceType *t = sk_device_type(d.type);
  if (!t) return sk_error("unknown device type %d", d.type), NULL;
  if (!t->has_data) return NULL;
  if (!t->hooks.alloc) return sk_error("device '%s' has no allocator (is its backend loaded?)", t->name), NULL;
  return t->hooks.alloc(t->hooks.ud, nbytes, d);
}

void sk_device_free(SkDevice d, void *ptr, size_t nbytes) {
  if (!ptr) return;
  if (d.type == SK_DEVICE_CPU) { sk_cpu_free(ptr, nbytes); return; }
  const SkDeviceType *t = sk_device_type(d.type);
  if (t && t->hooks.free) t->hooks.free(t->hooks.ud, ptr, nbytes, d);
}

int sk_device_guard_enter(SkDeviceGuard *g, SkDevice d) {
  const SkDeviceType *t = sk_device_type(d.type);
  g->active = 0;
  if (!t || !t->hooks.set_device) return 0;
  if (t->hooks.set_device(t->hooks.ud, d.index, &g->previous)) return -1;
  g->type = d.type;
  g->active = 1;
  return 0;
}

void sk_device_guard_exit(SkDeviceGuard *g) {
  if (!g->active) return;
  const SkDeviceType *t = sk_device_type(g->type);
  int ignored;
  if (t && t->hooks.set_device) t->hooks.set_device(t->hooks.ud, g->previous, &ignored);
  g->active = 0;
}

/*
** sk_host_backend.c — host-memory backends: allocator, copies, empty
** Invariant: slot[type - SK_DEVICE_FIRST_CUSTOM] is live exactly while the
** device type is registered through this file; its empty kernel's
** registration id is kept so unregistering removes it.
*/
#include "sk_host_backend.h"
#include "sk_cpu_fallback.h"
#include "sk_error.h"
#include "sk_kernels.h"
#include "sk_ops.h"

#include <stdlib.h>
#include <string.h>

typedef struct HostSlot {
  int live, empty_reg, fill_reg;
  SkCopyObserver observe;
  void *ud;
  SkHostBackendStats stats;
} HostSlot;

static HostSlot slots[SK_DEVICE_MAX_TYPES - SK_DEVICE_FIRST_CUSTOM];

static void *host_alloc(void *ud, size_t n, SkDevice d) {
  (void)d;
  HostSlot *h = ud;
  void *p = sk_cpu_alloc(n);
  if (p) h->stats.allocated += n;
  return p;
}

static void host_free(void *ud, void *p, size_t n, SkDevice d) {
  (void)d;
  HostSlot *h = ud;
  h->stats.allocated -= n;
  sk_cpu_free(p, n);
}

static int host_copy(HostSlot *h, int dir, void *dst, const void *src, size_t n) {
  if (n) memcpy(dst, src, n);
  if (dir == SK_COPY_TO_CPU) h->stats.copied_to_cpu += n;
  if (dir == SK_COPY_FROM_CPU) h->stats.copied_from_cpu += n;
  if (h->observe) h->observe(h->ud, dir, n);
  return 0;
}
static int copy_to_cpu(void *ud, void *dst, const void *src, size_t n, SkDevice d) { (void)d; return host_copy(ud, SK_COPY_TO_CPU, dst, src, n); }
static int copy_from_cpu(void *ud, void *dst, const void *src, size_t n, SkDevice d) { (void)d; return host_copy(ud, SK_COPY_FROM_CPU, dst, src, n); }
static int copy_same(void *ud, void *dst, const void *src, size_t n, SkDevice d) { (void)d; return host_copy(ud, SK_COPY_WITHIN, dst, src, n); }

/* empty.memory_format for every host backend: sizes checked by the core. */
static int host_empty(SkTensor **result, SkIntList size, int dtype, int layout, SkDevice device, int pin_memory, int memory_format) {
  (void)layout; (void)pin_memory;
  if (memory_format > 0) return sk_error("argument 'memory_format': only contiguous_format is supported");
  for (int i = 0; i < size.n; i++)
    if (size.data[i] < 0) return sk_error("negative dimension %lld in argument 'size'", (long long)size.data[i]);
  *result = sk_tensor_empty(size.n, size.data, dtype >= 0 ? (SkDType)dtype : SK_DTYPE_FLOAT32, device);
  return *result ? 0 : -1;
}

int sk_host_backend_register(const char *name, SkCopyObserver observe, void *ud, int *type_out) {
  SkDeviceHooks hooks = {host_alloc, host_free, copy_from_cpu, copy_to_cpu, copy_same, NULL, NULL, NULL, 0};
  /* the slot is known only after registration: register, then point the hooks at it */
  int type;
  if (sk_device_register(name, &hooks, &type)) return -1;
  HostSlot *h = &slots[type - SK_DEVICE_FIRST_CUSTOM];
  memset(h, 0, sizeof *h);
  hooks.ud = h;
  sk_device_set_hooks(type, &hooks);
  h->observe = observe;
  h->ud = ud;
  SkKernel k = {(void *)host_empty, NULL, NULL, "host backend", 0};
  int key = sk_device_key(sk_device(type, 0));
  h->empty_reg = sk_op_register(sk_op_empty_memory_format, key, &k, NULL);
  /* the data is host memory: the CPU's fill_ serves, so zeros/ones/full work from the start; its
  ** registered entry, not the bare kernel, so the written-tensor checks and the version bump come too */
  const SkKernel *cpu = &sk_op_fill__Scalar->table[SK_KEY_CPU];
  SkKernel fill = {cpu->unboxed, cpu->boxed, cpu->ctx, "host backend", 0};
  h->fill_reg = h->empty_reg < 0 ? -1 : sk_op_register(sk_op_fill__Scalar, key, &fill, NULL);
  if (h->fill_reg < 0) {
    if (h->empty_reg > 0) sk_op_deregister(sk_op_empty_memory_format, h->empty_reg);
    sk_device_unregister(type);
    return -1;
  }
  h->live = 1;
  *type_out = type;
  return 0;
}

static HostSlot *slot_of(int type) {
  if (type < SK_DEVICE_FIRST_CUSTOM || type >= SK_DEVICE_MAX_TYPES || !slots[type - SK_DEVICE_FIRST_CUSTOM].live) return NULL;
  return &slots[type - SK_DEVICE_FIRST_CUSTOM];
}

int sk_host_backend_unregister(int type) {
  HostSlot *h = slot_of(type);
  if (!h) return sk_error("device type %d is not a host backend", type);
  const char *name = sk_device_type(type)->name;
  if (h->stats.allocated) return sk_error("backend '%s' still has %zu bytes of tensors alive", name, h->stats.allocated);
  int own = 2; /* empty and fill_ */
  if (sk_key_registrations(sk_device_key(sk_device(type, 0))) > own)
    return sk_error("backend '%s' still has kernels or a fallback registered (close the libraries that registered them)", name);
  sk_op_deregister(sk_op_empty_memory_format, h->empty_reg);
  sk_op_deregister(sk_op_fill__Scalar, h->fill_reg);
  h->live = 0;
  sk_cpu_fallback_forget_key(sk_device_key(sk_device(type, 0)));
  return sk_device_unregister(type);
}

int sk_host_backend_stats(int type, SkHostBackendStats *out) {
  HostSlot *h = slot_of(type);
  if (!h) return sk_error("device type %d is not a host backend", type);
  *out = h->stats;
  return 0;
}

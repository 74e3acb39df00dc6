/*
** sk_backend.c — registering a backend record (sk_backend.h)
** Invariant: own[type] is live exactly while the record of device type `type`
** is registered; it keeps the ids of what the registration added, so that
** unregistering removes those and refuses while anything else remains.
*/
#include "sk_backend.h"
#include "sk_cpu_fallback.h"
#include "sk_error.h"
#include "sk_kernels.h"
#include "sk_ops.h"

#include <string.h>

typedef struct Own { int live, fallback, empty, fill; } Own; /* registration ids; 0 = none */
static Own own[SK_DEVICE_MAX_TYPES];

/* The compiled-in type named `name`, or -1. */
static int compiled_type(const char *name) {
  for (int t = 0; t < SK_DEVICE_META; t++)
    if (strcmp(sk_device_type(t)->name, name) == 0) return t;
  return -1;
}

static void undo(int type, Own *o) {
  if (o->fill > 0) sk_op_deregister(sk_op_fill__Scalar, o->fill);
  if (o->empty > 0) sk_op_deregister(sk_op_empty_memory_format, o->empty);
  if (o->fallback > 0) sk_fallback_deregister(o->fallback);
  sk_cpu_fallback_forget_key(sk_device_key(sk_device(type, 0)));
  memset(o, 0, sizeof *o);
}

int sk_backend_register(const SkBackend *b, int *type_out) {
  int type = compiled_type(b->name);
  if (type == SK_DEVICE_CPU || (type >= 0 && own[type].live))
    return sk_error("backend '%s' is already registered", b->name);
  SkDeviceHooks before = type >= 0 ? sk_device_type(type)->hooks : b->hooks; /* a compiled-in row's, to restore */
  if (type >= 0 ? sk_device_set_hooks(type, &b->hooks) : sk_device_register(b->name, &b->hooks, &type)) return -1;
  int key = sk_device_key(sk_device(type, 0));
  Own o = {1, 0, 0, 0};
  int rc = 0;
  if (b->fallback == SK_BACKEND_FALLBACK_CPU) rc = (o.fallback = sk_cpu_fallback_register(key)) < 0;
  if (!rc) {
    /* The CPU's empty serves every backend: it allocates on the device it is given, through that
    ** device's hooks. A compiled-in backend gets it too (CUDA has no empty of its own): without it,
    ** empty would reach the CPU fallback, whose move to the device calls empty again. */
    SkKernel empty = {(void *)sk_cpu_empty, NULL, NULL, "sk_backend", 0};
    rc = (o.empty = sk_op_register(sk_op_empty_memory_format, key, &empty, NULL)) < 0;
  }
  if (!rc && type >= SK_DEVICE_FIRST_CUSTOM && !b->hooks.device_memory) {
    /* the CPU's registered entry, not the bare kernel: the written-tensor checks and the version bump come too */
    const SkKernel *cpu = &sk_op_fill__Scalar->table[SK_KEY_CPU];
    SkKernel fill = {cpu->unboxed, cpu->boxed, cpu->ctx, "sk_backend", 0};
    rc = (o.fill = sk_op_register(sk_op_fill__Scalar, key, &fill, NULL)) < 0;
  }
  if (rc) {
    undo(type, &o);
    if (type >= SK_DEVICE_FIRST_CUSTOM) before.release = NULL; /* the caller still owns hooks.ud */
    sk_device_set_hooks(type, &before);
    if (type >= SK_DEVICE_FIRST_CUSTOM) sk_device_unregister(type);
    return -1;
  }
  own[type] = o;
  *type_out = type;
  return 0;
}

int sk_backend_unregister(int type) {
  if (type < SK_DEVICE_FIRST_CUSTOM || type >= SK_DEVICE_MAX_TYPES || !own[type].live)
    return sk_error("device type %d is not a registered run-time backend", type);
  Own *o = &own[type];
  int mine = (o->fallback > 0) + (o->empty > 0) + (o->fill > 0);
  if (sk_key_registrations(sk_device_key(sk_device(type, 0))) > mine)
    return sk_error("backend '%s' still has kernels or a fallback registered (close the libraries that registered them)",
                    sk_device_type(type)->name);
  undo(type, o);
  return sk_device_unregister(type);
}

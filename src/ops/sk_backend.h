/*
** sk_backend.h — a backend is one record: its device, its hooks and its fallback policy
** Registering the record makes everything the dispatcher needs from it:
**   - the device type (a compiled-in row of SK_COMPILED_BACKENDS gets its hooks;
**     any other name takes a run-time slot) and so its dispatch key;
**   - the fallback its policy names, for ops it has no kernel of;
**   - an `empty` kernel (the factories and `to` allocate through the hooks), and
**     for a run-time backend whose data is host memory the CPU's `fill_`, so zeros,
**     ones and full work before it has a kernel of its own. A compiled-in
**     backend's other kernels come from codegen.
** Registration is all or nothing; unregistering undoes it.
*/
#ifndef SK_BACKEND_H
#define SK_BACKEND_H

#include "sk_device.h"

/* What an op without a kernel for the backend does. */
typedef enum {
  SK_BACKEND_FALLBACK_NONE, /* it raises "no kernel for '<op>' on backend '<name>'" */
  SK_BACKEND_FALLBACK_CPU,  /* it runs on the CPU through sk_cpu_fallback, counted per op */
} SkBackendFallback;

typedef struct SkBackend {
  const char *name;           /* the device name: "cuda", "npu" */
  SkDeviceHooks hooks;        /* allocator, copies, device guard; hooks.device_memory: the CPU cannot address the data */
  SkBackendFallback fallback;
} SkBackend;

/* Registers b; *type_out is its device type (its key: sk_device_key(sk_device(type, 0))).
** On failure nothing of b is kept and hooks.release is not called: hooks.ud stays the caller's. */
int sk_backend_register(const SkBackend *b, int *type_out);
/* Undoes sk_backend_register for a run-time backend; refused while kernels or
** fallbacks registered by others remain on its key. */
int sk_backend_unregister(int type);

#endif

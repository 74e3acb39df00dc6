/*
** sk_device.h — device types, their allocators and copy hooks
** A device is (type, index). The compiled-in types are the rows of
** SK_COMPILED_BACKENDS, then meta (no data: its allocator hands out no
** memory); run-time backends take the SK_MAX_RUNTIME_BACKENDS slots after.
** The core knows nothing of dispatch: keys are the dispatcher's (sk_dispatch.h).
*/
#ifndef SK_DEVICE_H
#define SK_DEVICE_H

#include <stddef.h>
#include <stdint.h>

/* The compiled-in backends with data, one row each: X(ENUM_SUFFIX, "device name").
** Adding one: a row here, a row in lua/codegen/backends.lua, its kernels. CPU stays first. */
#define SK_COMPILED_BACKENDS(X) X(CPU, "cpu") X(CUDA, "cuda")
#define SK_MAX_RUNTIME_BACKENDS 8

enum {
#define SK_X_DEVICE(e, name) SK_DEVICE_##e,
  SK_COMPILED_BACKENDS(SK_X_DEVICE)
#undef SK_X_DEVICE
  SK_DEVICE_META, SK_DEVICE_FIRST_CUSTOM, SK_DEVICE_MAX_TYPES = SK_DEVICE_FIRST_CUSTOM + SK_MAX_RUNTIME_BACKENDS
};

typedef struct SkDevice { int16_t type, index; } SkDevice;

static inline SkDevice sk_device(int type, int index) { SkDevice d; d.type = (int16_t)type; d.index = (int16_t)index; return d; }
static inline int sk_device_eq(SkDevice a, SkDevice b) { return a.type == b.type && a.index == b.index; }
#define SK_CPU sk_device(SK_DEVICE_CPU, 0)
#define SK_META sk_device(SK_DEVICE_META, 0)

struct SkTensor; /* sk_tensor.h */

/* What a backend provides. Copies move bytes of contiguous buffers. */
typedef struct SkDeviceHooks {
  void *(*alloc)(void *ud, size_t nbytes, SkDevice d);        /* NULL + sk_error on failure */
  void (*free)(void *ud, void *ptr, size_t nbytes, SkDevice d);
  int (*copy_from_cpu)(void *ud, void *dst, const void *src, size_t n, SkDevice d);
  int (*copy_to_cpu)(void *ud, void *dst, const void *src, size_t n, SkDevice d);
  int (*copy_same)(void *ud, void *dst, const void *src, size_t n, SkDevice d);
  int (*set_device)(void *ud, int index, int *previous);        /* device guard; NULL = none */
  void (*release)(void *ud);                                   /* on unregister */
  void *ud;
  int device_memory;   /* 1: the CPU cannot address the data (CUDA); 0: host memory */
  /* dst = src (broadcast, converted) for two tensors of one device of the type, any strides and
  ** dtypes, after copy_'s checks; NULL: such copies go through the CPU. */
  int (*copy_tensor)(void *ud, struct SkTensor *dst, const struct SkTensor *src);
} SkDeviceHooks;

/* 1 when CPU code may read and write the data of tensors on d directly. */
int sk_device_host_addressable_slow(SkDevice d);
static inline int sk_device_host_addressable(SkDevice d) {
  return d.type == SK_DEVICE_CPU ? 1 : d.type == SK_DEVICE_META ? 0 : sk_device_host_addressable_slow(d);
}

typedef struct SkDeviceType {
  char name[32];
  int has_data;     /* 0 for meta */
  int registered;
  SkDeviceHooks hooks;
  /* Run before a device of the type is named (a module loaded on demand): the
  ** number of devices, or -1 with the reason as the error; NULL = ready, any index. */
  int (*ready)(void);
} SkDeviceType;

const SkDeviceType *sk_device_type(int type); /* NULL when not registered */
int sk_device_register(const char *name, const SkDeviceHooks *hooks, int *type_out);
int sk_device_unregister(int type);
/* Hooks for a compiled-in type (cuda's ready hook is the module loader; the rest come when it loads). */
int sk_device_set_hooks(int type, const SkDeviceHooks *hooks);
int sk_device_set_ready(int type, int (*ready)(void));
/* "cpu", "meta", "cuda", "cuda:1", "npu:0" -> device; error names the string. */
int sk_device_parse(const char *s, SkDevice *out);
/* Writes "cpu", "cuda:0", ... */
void sk_device_format(SkDevice d, char *buf, size_t n);

/* Allocation on a device; CPU memory comes from the caching allocator. */
void *sk_device_alloc(SkDevice d, size_t nbytes);
void sk_device_free(SkDevice d, void *ptr, size_t nbytes);

/* {==== CPU caching allocator ==== */
void *sk_cpu_alloc(size_t nbytes);
void sk_cpu_free(void *ptr, size_t nbytes);
size_t sk_cpu_cached_bytes(void);
void sk_cpu_empty_cache(void);
/* What sk_cpu_alloc has done since the process started (storages of up to 64 bytes never reach
** it: tensors keep those inline). allocated: bytes handed out now; num_allocs counts every block
** handed out, num_cache_hits those the cache served; num_ooms the requests that failed. */
typedef struct SkCpuMemoryStats {
  uint64_t allocated, peak_allocated, cached, num_allocs, num_frees, num_cache_hits, num_ooms;
} SkCpuMemoryStats;
void sk_cpu_memory_stats(SkCpuMemoryStats *out);
/* }==== */

/* Device guard: switches the current device for the scope, if the type has one. */
typedef struct SkDeviceGuard { int type, previous, active; } SkDeviceGuard;
int sk_device_guard_enter(SkDeviceGuard *g, SkDevice d);
void sk_device_guard_exit(SkDeviceGuard *g);

#endif

/*
** sk_device.h — device types, their allocators and copy hooks
** A device is (type, index). Types 0..2 are built in (cpu, cuda, meta);
** more are registered at run time, each with a dispatch key of its own.
** Meta has no data: its allocator hands out no memory.
*/
#ifndef SK_DEVICE_H
#define SK_DEVICE_H

#include <stddef.h>
#include <stdint.h>

enum { SK_DEVICE_CPU, SK_DEVICE_CUDA, SK_DEVICE_META, SK_DEVICE_FIRST_CUSTOM, SK_DEVICE_MAX_TYPES = SK_DEVICE_FIRST_CUSTOM + 8 };

typedef struct SkDevice { int16_t type, index; } SkDevice;

static inline SkDevice sk_device(int type, int index) { SkDevice d; d.type = (int16_t)type; d.index = (int16_t)index; return d; }
static inline int sk_device_eq(SkDevice a, SkDevice b) { return a.type == b.type && a.index == b.index; }
#define SK_CPU sk_device(SK_DEVICE_CPU, 0)
#define SK_META sk_device(SK_DEVICE_META, 0)

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
} SkDeviceHooks;

/* 1 when CPU code may read and write the data of tensors on d directly. */
int sk_device_host_addressable_slow(SkDevice d);
static inline int sk_device_host_addressable(SkDevice d) {
  return d.type == SK_DEVICE_CPU ? 1 : d.type == SK_DEVICE_META ? 0 : sk_device_host_addressable_slow(d);
}

typedef struct SkDeviceType {
  char name[32];
  int key;          /* dispatch key of its tensors */
  int has_data;     /* 0 for meta */
  int registered;
  SkDeviceHooks hooks;
} SkDeviceType;

const SkDeviceType *sk_device_type(int type); /* NULL when not registered */
int sk_device_register(const char *name, const SkDeviceHooks *hooks, int *type_out);
int sk_device_unregister(int type);
/* Hooks for a built-in type (cuda is filled when its module loads). */
int sk_device_set_hooks(int type, const SkDeviceHooks *hooks);
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
/* }==== */

/* Device guard: switches the current device for the scope, if the type has one. */
typedef struct SkDeviceGuard { int type, previous, active; } SkDeviceGuard;
int sk_device_guard_enter(SkDeviceGuard *g, SkDevice d);
void sk_device_guard_exit(SkDeviceGuard *g);

#endif

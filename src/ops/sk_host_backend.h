/*
** sk_host_backend.h — backends whose tensors live in host memory managed by sk
** Each is a backend record (sk_backend.h) whose hooks allocate from the CPU's
** caching allocator and copy with memcpy, counting bytes; the record gives it
** `empty` and `fill_`, so factories and `to` work before it has a kernel.
*/
#ifndef SK_HOST_BACKEND_H
#define SK_HOST_BACKEND_H

#include <stddef.h>

enum { SK_COPY_TO_CPU, SK_COPY_FROM_CPU, SK_COPY_WITHIN };
/* Told of every copy the backend makes (NULL for none). */
typedef void (*SkCopyObserver)(void *ud, int direction, size_t nbytes);

typedef struct SkHostBackendStats { size_t allocated, copied_to_cpu, copied_from_cpu; } SkHostBackendStats;

/* cpu_fallback: ops without a kernel run on the CPU (SK_BACKEND_FALLBACK_CPU), else they raise. */
int sk_host_backend_register(const char *name, int cpu_fallback, SkCopyObserver observe, void *ud, int *type_out);
int sk_host_backend_unregister(int type);
int sk_host_backend_stats(int type, SkHostBackendStats *out);

#endif

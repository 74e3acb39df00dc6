/*
** sk_host_backend.h — backends whose tensors live in host memory managed by sk
** Registering one makes a device type and dispatch key, an allocator and
** copies (memcpy) to and from the CPU, and `empty` and `fill_` kernels for
** its key, so factories and `to` work before it has any kernel of its own.
*/
#ifndef SK_HOST_BACKEND_H
#define SK_HOST_BACKEND_H

#include <stddef.h>

enum { SK_COPY_TO_CPU, SK_COPY_FROM_CPU, SK_COPY_WITHIN };
/* Told of every copy the backend makes (NULL for none). */
typedef void (*SkCopyObserver)(void *ud, int direction, size_t nbytes);

typedef struct SkHostBackendStats { size_t allocated, copied_to_cpu, copied_from_cpu; } SkHostBackendStats;

int sk_host_backend_register(const char *name, SkCopyObserver observe, void *ud, int *type_out);
int sk_host_backend_unregister(int type);
int sk_host_backend_stats(int type, SkHostBackendStats *out);

#endif

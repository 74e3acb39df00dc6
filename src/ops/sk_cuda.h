/*
** sk_cuda.h — the core's view of the CUDA module
** The core never links CUDA: the CUDA part is build/sk/cuda.so (installed
** next to core.so), loaded the first time a CUDA device is asked for. It
** exports `const SkCudaApi *sk_cuda_module(void)`; its init registers the
** device type's hooks and the CUDA kernels with the dispatcher.
*/
#ifndef SK_CUDA_H
#define SK_CUDA_H

#include <stddef.h>
#include <stdint.h>

typedef struct SkCudaMemoryStats {
  uint64_t allocated, reserved, cached, peak_allocated, num_allocs, num_cache_hits, num_ooms;
} SkCudaMemoryStats;

#define SK_CUDA_API_VERSION 1

typedef struct SkCudaApi {
  int version;
  int (*init)(void);                    /* -1 with the reason (no driver, no device) as the error */
  int (*device_count)(void);
  int (*synchronize)(int device);       /* -1 for every device */
  void (*empty_cache)(void);
  int (*memory_stats)(int device, SkCudaMemoryStats *out);
} SkCudaApi;

/* The loaded and initialized module, or NULL with "CUDA is not available: <reason>". */
const SkCudaApi *sk_cuda(void);
/* The cuda device type's ready hook (sk_device_set_ready): loads the module; the device count or -1. */
int sk_cuda_ready(void);
/* 1 when CUDA works here; never sets an error. */
int sk_cuda_is_available(void);

/* Called by an allocator that ran out of memory before its one retry (the binding collects garbage). */
typedef void (*SkMemoryPressureFn)(void *ud);
void sk_set_memory_pressure_handler(SkMemoryPressureFn fn, void *ud);
void sk_memory_pressure(void);

#endif

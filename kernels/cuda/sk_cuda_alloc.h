/*
** sk_cuda_alloc.h — the CUDA caching allocator
** Blocks come from cudaMalloc'ed segments; a freed block returns to a pool
** (merged with free neighbours of its segment) and serves the next request
** it fits, split when much larger. empty_cache gives whole free segments
** back. On out of memory: memory pressure (Lua collects garbage), empty
** the cache, retry once, then fail with a clear error.
*/
#ifndef SK_CUDA_ALLOC_H
#define SK_CUDA_ALLOC_H

#include "sk_cuda.h"

void *sk_cuda_alloc(int device, size_t nbytes);
void sk_cuda_free(int device, void *ptr);
void sk_cuda_alloc_empty_cache(void);
int sk_cuda_alloc_stats(int device, SkCudaMemoryStats *out);

#endif
